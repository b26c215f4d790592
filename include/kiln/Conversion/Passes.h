//===- Passes.h - Kiln conversion passes and the kiln-cpu pipeline -*- C++
//-*-===//
//
// Part of Kiln. Declarations of the passes in Conversion/Passes.td and of the
// `kiln-cpu` pipeline built from them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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
  Option<bool> optimize{
      *this, "optimize",
      llvm::cl::desc("Tile, vectorize, thread and call OpenBLAS (false: the "
                     "scalar single-threaded pipeline)"),
      llvm::cl::init(true)};
  Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Threads of the generated code and OpenBLAS (0: all "
                     "cores)"),
      llvm::cl::init(0)};
  Option<std::string> matmul{
      *this, "matmul",
      llvm::cl::desc("Matmul implementation: auto, openblas or generated"),
      llvm::cl::init("auto")};
  Option<std::string> conv{
      *this, "conv",
      llvm::cl::desc("Convolution implementation: auto, im2col (patch copy "
                     "+ matmul) or direct"),
      llvm::cl::init("auto")};
  Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width in bits (0: the host's)"),
      llvm::cl::init(0)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Group ops into kernels (kiln-fuse) and form one "
                     "scf.forall per group (kiln-form-kernels)"),
      llvm::cl::init(true)};
  Option<bool> outline{
      *this, "outline",
      llvm::cl::desc("Move each kernel into a func.func of its own before "
                     "lowering (kiln-cpu-outline-kernels); identical kernels "
                     "are compiled once"),
      llvm::cl::init(true)};
};

/// Appends `kiln-cpu` to `pm` (a module pass manager): kiln-lower-to-linalg,
/// kiln-verify-no-kt, kiln-cpu-conv-im2col, kiln-select-matmul,
/// kiln-cpu-tile-vectorize, bufferization, kiln-matmul-to-blas,
/// kiln-cpu-lower-vectors, OpenMP, LLVM
/// (docs/codegen.md).
void buildKilnCPUPipeline(mlir::OpPassManager &pm,
                          const KilnCPUPipelineOptions &options);

/// Registers the `kiln-cpu` pipeline (the passes: registerKilnConversionPasses
/// below, generated).
void registerKilnCPUPipeline();

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace kiln

#endif // KILN_CONVERSION_PASSES_H
