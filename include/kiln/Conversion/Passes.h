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
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Conversion/Passes.h.inc"

/// What `buffer-deallocation-simplification` would cost on `f`: the sum
/// over its `bufferization.dealloc` ops of memrefs x (memrefs + retained)
/// (kiln-dealloc-simplification skips functions above its max-cost).
uint64_t deallocSimplificationCost(mlir::func::FuncOp f);

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
  Option<std::string> sgemm{
      *this, "sgemm",
      llvm::cl::desc("f32 products chosen for a BLAS call: auto (oneDNN's "
                     "sgemm where libkiln_onednn is built, else OpenBLAS), "
                     "openblas or onednn"),
      llvm::cl::init("auto")};
  Option<std::string> conv{
      *this, "conv",
      llvm::cl::desc("Convolution implementation: auto, im2col (patch copy "
                     "+ matmul), direct or onednn (f32 convs as oneDNN calls)"),
      llvm::cl::init("auto")};
  Option<bool> convChannelsLast{
      *this, "conv-channels-last",
      llvm::cl::desc("Channels-last activations between oneDNN convs "
                     "(kiln-cpu-conv-channels-last; with optimize, outline "
                     "and conv=auto|onednn where libkiln_onednn is built)"),
      llvm::cl::init(true)};
  Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width in bits (0: the host's)"),
      llvm::cl::init(0)};
  Option<bool> fastExp{
      *this, "fast-exp",
      llvm::cl::desc("f32 exp as Kiln's 14-op AVX-512 form (vscalefps) "
                     "where the host has AVX-512F (kiln-cpu-lower-vectors "
                     "fast-exp=auto); false: MLIR's polynomial "
                     "approximation everywhere"),
      llvm::cl::init(true)};
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
  Option<std::string> testMiscompile{
      *this, "test-miscompile",
      llvm::cl::desc("Test only: OP:WITH replaces each OP by a WITH op of "
                     "the same operands (a planted wrong answer, for "
                     "check_accuracy and kiln-reduce --accuracy tests)"),
      llvm::cl::init("")};
};

/// Appends `kiln-cpu` to `pm` (a module pass manager): kiln-lower-to-linalg,
/// kiln-verify-no-kt, kiln-cpu-conv-im2col, kiln-select-matmul,
/// kiln-cpu-tile-vectorize, bufferization, kiln-matmul-to-blas,
/// kiln-cpu-lower-vectors, OpenMP, LLVM
/// (docs/codegen.md).
void buildKilnCPUPipeline(mlir::OpPassManager &pm,
                          const KilnCPUPipelineOptions &options);

/// The bufferization stage of kiln-cpu and kiln-nvptx: empty-tensor
/// elimination, empty tensors as allocations, one-shot-bufferize over
/// function boundaries with identity layouts and `alignment`-byte buffers.
void addBufferizationPasses(mlir::OpPassManager &pm, unsigned alignment);
/// The passes of MLIR's buffer-deallocation-pipeline (ownership-based),
/// with kiln-cpu-early-dealloc after the ownership pass if `earlyDealloc`.
void addDeallocationPasses(mlir::OpPassManager &pm, bool earlyDealloc);

/// Registers the `kiln-cpu` pipeline (the passes: registerKilnConversionPasses
/// below, generated).
void registerKilnCPUPipeline();

/// Options of `kiln-nvptx` (docs/gpu.md).
struct KilnNVPTXPipelineOptions
    : public mlir::PassPipelineOptions<KilnNVPTXPipelineOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU architecture: sm_<major><minor>[a], e.g. sm_80, "
                     "sm_90a"),
      llvm::cl::init("sm_90a")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features, e.g. +ptx80 (the PTX ISA version; sm_90 "
                     "needs 7.8 or newer)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> emit{
      *this, "emit",
      llvm::cl::desc("What the gpu.binary holds: isa (PTX text) or bin "
                     "(a cubin, assembled by ptxas from the CUDA toolkit)"),
      llvm::cl::init("isa")};
  Option<unsigned> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generated kernels"),
      llvm::cl::init(256)};
  Option<unsigned> maxBlocks{
      *this, "max-blocks",
      llvm::cl::desc("Most blocks of a kernel's grid (threads loop over the "
                     "rest: grid-stride loops)"),
      llvm::cl::init(65535)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse elementwise producers into their consumers "
                     "(linalg elementwise fusion) before mapping to the GPU"),
      llvm::cl::init(true)};
  Option<std::string> matmul{
      *this, "matmul",
      llvm::cl::desc("matmul / batch_matmul: cublas (calls of cuBLAS through "
                     "the runtime, f32/f64) or kernel (generated kernels)"),
      llvm::cl::init("cublas")};
  Option<bool> blockReduce{
      *this, "block-reduce",
      llvm::cl::desc("Row reductions as a block per row (warp shuffles and "
                     "shared memory; kiln-nvptx-map-reductions) instead of a "
                     "thread per output"),
      llvm::cl::init(true)};
};

/// The `kiln-nvptx` pipeline: kt -> linalg -> bufferization -> parallel
/// loops -> gpu.launch -> NVVM -> PTX in a gpu.binary, and host code in
/// the LLVM dialect that calls MLIR's mgpu* runtime functions. Fails (with
/// a diagnostic) on invalid options.
/// Checks kiln-nvptx's options (chip, features, emit, block-size,
/// max-blocks); `error` names the bad one.
mlir::LogicalResult
verifyKilnNVPTXPipelineOptions(const KilnNVPTXPipelineOptions &options,
                               std::string &error);

mlir::LogicalResult buildKilnNVPTXPipeline(mlir::OpPassManager &pm,
                                           const KilnNVPTXPipelineOptions &o);
void registerKilnNVPTXPipeline();

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace kiln

#endif // KILN_CONVERSION_PASSES_H
