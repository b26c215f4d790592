//===- Passes.h - Kiln conversion passes and the kiln-cpu pipeline -*- C++
//-*-===//
//
// Part of Kiln. Declarations of the passes in Conversion/Passes.td and of the
// `kiln-cpu` pipeline built from them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Conversion/Passes.h.inc"

/// Options of the `kiln-cpu` pipeline.
struct KilnCPUPipelineOptions
    : public mlir::PassPipelineOptions<KilnCPUPipelineOptions> {
  Option<bool> allowPartial{
      *this, "allow-partial",
      llvm::cl::desc("Lower what can be lowered and stop after "
                     "kiln-lower-to-linalg (no verify, no LLVM)"),
      llvm::cl::init(false)};
};

/// Appends `kiln-cpu` to `pm` (a module pass manager): kiln-lower-to-linalg,
/// kiln-verify-no-kt, then the scalar CPU pipeline (bufferization,
/// deallocation, loops, LLVM). No fusion, tiling, vectorization or threads
/// yet.
void buildKilnCPUPipeline(mlir::OpPassManager &pm,
                          const KilnCPUPipelineOptions &options);

/// Registers the `kiln-cpu` pipeline (the passes: registerKilnConversionPasses
/// below, generated).
void registerKilnCPUPipeline();

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace kiln

#endif // KILN_CONVERSION_PASSES_H
