//===- Passes.cpp - kiln-nvptx: the pipeline and its pass drivers ---------===//
//
// Part of Kiln. The `kiln-nvptx` pipeline (docs/gpu.md): the front half of
// kiln-cpu (reserved symbols, lowering to linalg, the backend contract,
// splats as fills), linalg elementwise fusion, bufferization, parallel
// loops, kiln-nvptx-map-to-gpu (kernels and device buffers), kernel
// outlining, the deallocation pipeline, then MLIR's NVVM lowering (the
// stages of gpu-lower-to-nvvm-pipeline) to a gpu.binary of PTX or a cubin
// and host code in the LLVM dialect calling the mgpu* runtime functions.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

namespace kiln {
#define GEN_PASS_DEF_KILNNVPTXMAPTOGPUPASS
#define GEN_PASS_DEF_KILNNVPTXMAPREDUCTIONSPASS
#define GEN_PASS_DEF_KILNNVPTXMATMULSTOCUBLASPASS
#define GEN_PASS_DEF_KILNNVPTXDEALLOCSTOGPUPASS
#define GEN_PASS_DEF_KILNNVPTXCLONESTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The launch options of the kiln-nvptx passes, checked.
LogicalResult checkLaunchOptions(Operation *op, StringRef pass,
                                 int64_t blockSize, int64_t maxBlocks) {
  if (blockSize > 0 && blockSize <= 1024 && maxBlocks > 0)
    return success();
  return op->emitError() << pass
                         << ": block-size must be in [1, 1024] and "
                            "max-blocks positive, not "
                         << blockSize << " and " << maxBlocks;
}

struct MapToGPU : public kiln::impl::KilnNVPTXMapToGPUPassBase<MapToGPU> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLaunchOptions(getOperation(), getArgument(), blockSize,
                                  maxBlocks)))
      return signalPassFailure();
    if (failed(kiln::nvptx::mapToGPU(getOperation(), blockSize, maxBlocks)))
      signalPassFailure();
  }
};

struct MapReductions
    : public kiln::impl::KilnNVPTXMapReductionsPassBase<MapReductions> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    kiln::nvptx::registerCollectiveEffects(registry);
  }
  void runOnOperation() override {
    if (failed(checkLaunchOptions(getOperation(), getArgument(), blockSize,
                                  maxBlocks)))
      return signalPassFailure();
    kiln::nvptx::mapRowReductions(getOperation(), blockSize, maxBlocks,
                                  minReduced);
  }
};

struct MatmulsToCublas
    : public kiln::impl::KilnNVPTXMatmulsToCublasPassBase<MatmulsToCublas> {
  using Base::Base;
  void runOnOperation() override {
    kiln::nvptx::matmulsToCublas(getOperation());
  }
};

struct ClonesToGPU
    : public kiln::impl::KilnNVPTXClonesToGPUPassBase<ClonesToGPU> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLaunchOptions(getOperation(), getArgument(), blockSize,
                                  maxBlocks)))
      return signalPassFailure();
    if (failed(kiln::nvptx::clonesToGPU(getOperation(), blockSize, maxBlocks)))
      signalPassFailure();
  }
};

struct DeallocsToGPU
    : public kiln::impl::KilnNVPTXDeallocsToGPUPassBase<DeallocsToGPU> {
  using Base::Base;
  void runOnOperation() override { kiln::nvptx::deallocsToGPU(getOperation()); }
};

/// kiln::nvptx::linkSpecialLibrary as a pass of the pipeline (not
/// registered on its own).
struct LinkSpecialLibrary
    : public PassWrapper<LinkSpecialLibrary, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LinkSpecialLibrary)
  explicit LinkSpecialLibrary(std::string path) : path(std::move(path)) {}
  StringRef getArgument() const override {
    return "kiln-nvptx-link-special-library";
  }
  void runOnOperation() override {
    kiln::nvptx::linkSpecialLibrary(getOperation(), path);
  }
  std::string path;
};

/// sm_<digits>[a|f].
bool validChip(StringRef chip) {
  if (!chip.consume_front("sm_") || chip.empty())
    return false;
  if (chip.ends_with("a") || chip.ends_with("f"))
    chip = chip.drop_back();
  return chip.size() >= 2 && llvm::all_of(chip, llvm::isDigit);
}

/// +ptx<digits>.
bool validFeatures(StringRef features) {
  return features.consume_front("+ptx") && !features.empty() &&
         llvm::all_of(features, llvm::isDigit);
}

/// The NVPTX backend's own table of processors and features: a chip or PTX
/// version of the right form that LLVM does not know (sm_99, +ptx99) would
/// otherwise be written into the PTX as given (`.target sm_99`) or dropped
/// for the default (`.version 8.0`), and only ptxas, or the driver at load
/// time, would object.
const llvm::MCSubtargetInfo *nvptxSubtargetInfo() {
  static std::unique_ptr<llvm::MCSubtargetInfo> info = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    llvm::Triple triple("nvptx64-nvidia-cuda");
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    return std::unique_ptr<llvm::MCSubtargetInfo>(
        target ? target->createMCSubtargetInfo(triple, "", "") : nullptr);
  }();
  return info.get();
}

/// The names of `table`'s entries that start with `prefix`, in order, for
/// an error message ("sm_50, sm_52, ...").
template <typename Table>
std::string knownNames(Table table, StringRef prefix) {
  std::string names;
  for (const auto &entry : table) {
    StringRef key = entry.Key;
    if (!key.starts_with(prefix))
      continue;
    if (!names.empty())
      names += ", ";
    names += key;
  }
  return names;
}

} // namespace

LogicalResult
kiln::verifyKilnNVPTXPipelineOptions(const KilnNVPTXPipelineOptions &options,
                                     std::string &error) {
  if (!validChip(options.chip)) {
    error = "chip must be sm_<major><minor> with an optional a or f (sm_80, "
            "sm_90a), not '" + options.chip + "'";
    return failure();
  }
  if (!validFeatures(options.features)) {
    error = "features must be +ptx<version> (+ptx80), not '" +
            options.features + "'";
    return failure();
  }
  if (const llvm::MCSubtargetInfo *info = nvptxSubtargetInfo()) {
    if (!info->isCPUStringValid(options.chip)) {
      error = "chip '" + options.chip +
              "' is not a CUDA architecture LLVM's NVPTX backend knows; "
              "known: " +
              knownNames(info->getAllProcessorDescriptions(), "sm_");
      return failure();
    }
    StringRef ptx = StringRef(options.features).drop_front();
    if (!llvm::any_of(info->getAllProcessorFeatures(),
                      [&](const auto &f) { return ptx == f.Key; })) {
      error = "features '" + options.features +
              "' names a PTX version LLVM's NVPTX backend does not know; "
              "known: " +
              knownNames(info->getAllProcessorFeatures(), "ptx");
      return failure();
    }
  }
  if (options.emit != "isa" && options.emit != "bin") {
    error = "emit must be isa (PTX) or bin (cubin), not '" + options.emit + "'";
    return failure();
  }
  if (options.matmul != "cublas" && options.matmul != "kernel") {
    error = "matmul must be cublas (cuBLAS calls through the runtime) or "
            "kernel (generated kernels), not '" + options.matmul + "'";
    return failure();
  }
  if (options.blockSize == 0 || options.blockSize > 1024) {
    error = "block-size must be in [1, 1024], not " +
            std::to_string(options.blockSize.getValue());
    return failure();
  }
  if (options.maxBlocks == 0) {
    error = "max-blocks must be positive";
    return failure();
  }
  std::string special = kiln::nvptx::specialDeviceLibrary();
  if (!special.empty() && !llvm::sys::fs::is_regular_file(special)) {
    error = "KILN_SPECIAL_DEVICE_BC names '" + special +
            "', which is not a file (the device build of the special "
            "functions, kiln_special_device.bc; 'off' for none)";
    return failure();
  }
  return success();
}

LogicalResult
kiln::buildKilnNVPTXPipeline(OpPassManager &pm,
                             const KilnNVPTXPipelineOptions &options) {
  // Front half: as kiln-cpu.
  pm.addPass(createKilnCPURenameReservedSymbolsPass());
  pm.addPass(createKilnLowerToLinalgPass());
  // kt.fusion groups in the input (kiln-fuse's output) become scf.forall
  // kernels as on the CPU; they are parallel loops below.
  pm.addPass(createKilnFormKernelsPass());
  pm.addPass(createKilnVerifyNoKTPass());
  pm.addPass(createKilnCPUVerifySupportedPass());
  pm.addPass(createKilnCPUSplatsToFillsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.fuse) {
    // Launches are expensive: elementwise producers go into their
    // consumers (one kernel per fused group), with kiln-cpu's control: a
    // producer read broadcast (a row's 1/sum, 1/sqrt(var + eps)) stays a
    // small kernel of its own instead of being recomputed, with f64
    // divisions and square roots, for every element of the row.
    pm.addNestedPass<func::FuncOp>(createKilnCPUFuseElementwisePass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  pm.addPass(createKilnCPUSplatsToFillsPass());
  addBufferizationPasses(pm, /*alignment=*/128);
  pm.addPass(createForallToParallelLoopPass());
  if (options.matmul == "cublas")
    pm.addPass(createKilnNVPTXMatmulsToCublasPass());
  if (options.blockReduce) {
    KilnNVPTXMapReductionsPassOptions reduce;
    reduce.blockSize = options.blockSize;
    reduce.maxBlocks = options.maxBlocks;
    pm.addNestedPass<func::FuncOp>(createKilnNVPTXMapReductionsPass(reduce));
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // Kernels and device buffers (one gpu.func per kernel after the
  // deallocation pipeline).
  KilnNVPTXMapToGPUPassOptions map;
  map.blockSize = options.blockSize;
  map.maxBlocks = options.maxBlocks;
  pm.addNestedPass<func::FuncOp>(createKilnNVPTXMapToGPUPass(map));
  // Deallocation (host side; the kernels allocate nothing).
  addDeallocationPasses(pm, /*earlyDealloc=*/false);
  // The clones it makes of returned buffers the function does not own are
  // device buffers too.
  KilnNVPTXClonesToGPUPassOptions clones;
  clones.blockSize = options.blockSize;
  clones.maxBlocks = options.maxBlocks;
  pm.addNestedPass<func::FuncOp>(createKilnNVPTXClonesToGPUPass(clones));
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createKilnNVPTXDeallocsToGPUPass());
  pm.addPass(createGpuKernelOutliningPass());
  // gpu-to-llvm lowers gpu.alloc / dealloc / memcpy only in their async
  // form: the host's GPU ops go on a stream, in order (waited for before
  // the function returns).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // NVVM: the stages of upstream's gpu-lower-to-nvvm-pipeline, after
  // arith-expand (the grid sizes' ceildivsi has no LLVM lowering).
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // The device build of the runtime's special functions (kt.special,
  // kt.zeta), linked into the binaries that call them.
  std::string special = kiln::nvptx::specialDeviceLibrary();
  if (!special.empty())
    pm.addPass(std::make_unique<LinkSpecialLibrary>(special));
  pm.addPass(createLowerAffinePass());
  // Host functions only: convert-gpu-to-nvvm lowers the kernels' arith
  // itself (arith.remf to libdevice's fmod, not llvm.frem).
  pm.addNestedPass<LLVM::LLVMFuncOp>(createArithToLLVMConversionPass());
  pm.addNestedPass<LLVM::LLVMFuncOp>(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.emit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // A user function named like a library function (@exp, @remainder) was
  // renamed to kiln.user.<name>; its C interface gets the user's name back.
  pm.addPass(createKilnCPURestoreInterfaceNamesPass());
  return success();
}

void kiln::registerKilnNVPTXPipeline() {
  registerPassPipeline(
      "kiln-nvptx",
      "backend for NVIDIA GPUs: kt -> linalg -> bufferization -> kernels "
      "(gpu.launch, grid-stride loops) -> NVVM -> PTX or cubin in a "
      "gpu.binary, host code calling the mgpu* runtime (docs/gpu.md)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        KilnNVPTXPipelineOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(checkModulePipelineAnchor(pm, "kiln-nvptx", errorHandler)))
          return failure();
        std::string error;
        if (failed(verifyKilnNVPTXPipelineOptions(options, error)))
          return errorHandler("kiln-nvptx: " + error);
        return buildKilnNVPTXPipeline(pm, options);
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(KilnNVPTXPipelineOptions());
      });
}
