//===- CPUBackend.h - JIT-compiled CPU code for kt functions ----*- C++ -*-===//
//
// Part of Kiln. Compiles a function of kt ops with the `kiln-cpu` pipeline
// and the MLIR ExecutionEngine (LLVM -O3, host CPU), and calls it on host
// tensors through memref descriptors (`_mlir_ciface_<entry>`).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_CPUBACKEND_H
#define KILN_BACKEND_CPU_CPUBACKEND_H

#include "kiln/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln::cpu {

/// The JIT holding a compiled module's machine code (CPUBackend.cpp).
struct CompiledCode;

/// Seconds spent compiling.
struct CompileTimes {
  double pipeline = 0; ///< kiln-cpu: kt -> LLVM dialect
  double jit = 0;      ///< LLVM IR translation, -O3, machine code
  bool cached = false; ///< the kernel came from the compiled-kernel cache
  /// The code came from the disk cache (DiskCache.h; `jit` is then the time
  /// to read and link it), or was looked up there and not found (compiled,
  /// then stored).
  bool diskHit = false, diskMiss = false;
  uint64_t diskBytesRead = 0, diskBytesWritten = 0;
  /// `pipeline` by phase (wall time of the module-level passes): kiln-fuse;
  /// kiln-cpu-outline-kernels; lowering to linalg, tiling and vectorization
  /// (every pass before bufferization); bufferization (empty-tensor
  /// elimination through convert-bufferization-to-memref); lowering to the
  /// LLVM dialect (the rest).
  double fuse = 0, outline = 0, lower = 0, bufferize = 0, toLLVMDialect = 0;
  /// `jit` by phase: translation to LLVM IR (and JIT setup), the LLVM -O3
  /// pipeline, and machine code generation (the JIT materializes the code
  /// inside compile, not lazily at the first call).
  double translate = 0, llvmOpt = 0, codegen = 0;
  /// Kernel functions compiled (kiln-cpu-outline-kernels), and the call
  /// sites of kernels in the compiled functions: sites - kernels calls
  /// reuse a kernel compiled once.
  unsigned kernels = 0, kernelSites = 0;
};

/// How to compile. The fields are the `kiln-cpu` pipeline options and part
/// of the compiled-kernel cache key.
struct CompileOptions {
  unsigned threads = 0;         ///< 0: all cores
  std::string matmul = "auto";  ///< auto, openblas or generated
  /// f32 BLAS products: auto (oneDNN's sgemm where libkiln_onednn is
  /// built), openblas or onednn.
  std::string sgemm = "auto";
  std::string conv = "auto";    ///< auto, im2col, direct or onednn
  bool optimize = true;         ///< false: scalar, single-threaded code
  bool fuse = true;             ///< kiln-fuse + kiln-form-kernels first
  /// kiln-cpu-conv-channels-last (channels-last activations between oneDNN
  /// convs); in the pipeline string only when false.
  bool convChannelsLast = true;
  /// f32 exp as the AVX-512 form where the host has AVX-512F (kiln-cpu
  /// fast-exp); in the pipeline string only when false.
  bool fastExp = true;
  /// If not empty: also write the machine code as an ELF object file here
  /// (the entry and its `_mlir_ciface_` wrapper are global symbols).
  std::string objectFile;
  /// With objectFile: an object for a shared library (a package,
  /// kiln/Package/Package.h): position-independent code, small code model,
  /// and calls of the compiled-code runtime's allocator (kiln_rt_malloc /
  /// kiln_rt_free / kiln_rt_aligned_alloc, kiln/rt/BufferPool.h) instead of
  /// malloc / free / aligned_alloc, as the JIT'd code does, so that
  /// libkiln_rt's pool and failed-allocation handling hold for it too.
  bool packageObject = false;
  /// Look up / store the kernel in the process-wide cache (and the disk
  /// cache).
  bool useCache = true;
  /// The disk cache's directory (DiskCache.h; not part of any key): unset
  /// for KILN_CACHE_DIR or its default, empty or "off" for none.
  std::optional<std::string> cacheDir;
};

/// The process-wide compiled-kernel cache (key: the printed func.func ops
/// of the module, the entry and the options). A hit reuses the machine
/// code: no pipeline, no JIT.
/// It keeps at most `capacity` compiled modules, least recently used first
/// out (environment KILN_CPU_KERNEL_CACHE_ENTRIES, default
/// kDefaultKernelCacheEntries; 0 keeps none). Executables keep their code
/// after it leaves the cache.
inline constexpr size_t kDefaultKernelCacheEntries = 64;
struct KernelCacheStats {
  unsigned hits = 0, misses = 0, entries = 0, evictions = 0;
  size_t capacity = 0;
};
KernelCacheStats kernelCacheStats();
void clearKernelCache();
/// Sets the capacity (evicting what no longer fits).
void setKernelCacheCapacity(size_t entries);

/// Memory the caller promises not to change between calls (the session
/// option `constant_args`, PyTorch's freezing): while a ConstantMemoryScope
/// lives, calls of compiled code on this thread may keep what they derive
/// from weights inside it (libkiln_onednn packs such convolution weights
/// into oneDNN's blocked layout once instead of per call).
/// dropConstantPacks() must follow any change of that memory (the runtime
/// calls it when a constant argument's address changes, and for a
/// program's first call). Both are no-ops when libkiln_onednn is not loaded.
class ConstantMemoryScope {
public:
  /// Ranges {begin, bytes}.
  explicit ConstantMemoryScope(
      llvm::ArrayRef<std::pair<const void *, int64_t>> ranges);
  ~ConstantMemoryScope();
  ConstantMemoryScope(const ConstantMemoryScope &) = delete;
  ConstantMemoryScope &operator=(const ConstantMemoryScope &) = delete;

private:
  bool active = false;
};
void dropConstantPacks();
/// libkiln_onednn's packs: made, reused, bytes held (zeros when not loaded).
struct ConstantPackStats {
  int64_t made = 0, hits = 0, bytes = 0;
};
ConstantPackStats constantPackStats();

/// Whether JIT'd code is announced to perf: `KILN_PERF_JITDUMP` set to
/// anything but empty or `0`. perf's listener writes a `jit-<pid>.dump` file
/// in `.debug/jit/...` under `$JITDUMPDIR`, else the temporary directory, so
/// by default it is off and compiling writes nothing outside the caches.
bool perfJitdumpRequested();

/// The `kiln-cpu` pipeline string of these options (what `compile` runs).
std::string pipelineString(const CompileOptions &options);

/// Registers what the JIT needs in a context (LLVM IR translations).
void registerCPUBackendDialects(mlir::DialectRegistry &registry);

// Host code generation, shared by the JIT, packages and the GPU backend's
// host code.

/// A target machine for the host CPU (its features); `pic`: position-
/// independent code of the small code model, for shared objects. Null with
/// `error` set when the host cannot be targeted.
std::unique_ptr<llvm::TargetMachine> hostTargetMachine(bool pic,
                                                       std::string &error);

/// LLVM's -O3 module pipeline for `machine` (without
/// CalledValuePropagationPass, quadratic in a function's arguments).
void optimizeHostModule(llvm::Module &module, llvm::TargetMachine *machine);

/// Writes `module` as an object file of `machine` at `path`.
mlir::LogicalResult emitObjectFile(llvm::Module &module,
                                   llvm::TargetMachine &machine,
                                   llvm::StringRef path, std::string &error);

/// A compiled entry function. Arguments and results are ranked tensors of
/// f32, f64, f16, bf16, i64, i32 or i1 (any rank, `?` dims allowed).
class CPUExecutable {
public:
  ~CPUExecutable();

  /// Compiles `entry` of `module`: a clone of the module (its func.func ops)
  /// goes through `kiln-cpu` and the ExecutionEngine; `module` is unchanged.
  /// The context must have registerCPUBackendDialects' registrations.
  static mlir::FailureOr<std::unique_ptr<CPUExecutable>>
  compile(mlir::ModuleOp module, llvm::StringRef entry, std::string &error,
          CompileTimes *times = nullptr,
          const CompileOptions &options = CompileOptions());

  /// compile() of several entries, compiled together (one pipeline run, one
  /// JIT module, one object file); result i is `entries[i]`.
  static mlir::FailureOr<llvm::SmallVector<std::unique_ptr<CPUExecutable>>>
  compileEntries(mlir::ModuleOp module, llvm::ArrayRef<std::string> entries,
                 std::string &error, CompileTimes *times,
                 const CompileOptions &options);

  /// Compiles several entries of `module` together: one clone holding the
  /// entries and the functions they reference, one run of `pipeline` (a
  /// textual module pipeline ending in LLVM, e.g. "kiln-cpu{...}"; empty for
  /// kiln-cpu with default options), one JIT module. The executables share
  /// the JIT (it lives while any of them does); result i is `entries[i]`.
  /// `cacheDir` as CompileOptions::cacheDir.
  static mlir::FailureOr<llvm::SmallVector<std::unique_ptr<CPUExecutable>>>
  compileAll(mlir::ModuleOp module, llvm::ArrayRef<std::string> entries,
             llvm::StringRef pipeline, std::string &error,
             CompileTimes *times = nullptr,
             const std::optional<std::string> &cacheDir = std::nullopt);

  /// Calls the entry. A ref argument (`!kt.ref`: a ref tensor, or a plain
  /// tensor whose buffer is written) passes its current value to the
  /// compiled value form and receives the value the entry stores into it.
  /// Inputs are checked against the argument types; results
  /// (buffers the compiled code allocated) are copied into new tensors and
  /// freed. Thread-safe: calls on several threads run at the same time, and
  /// each reports only its own run-time errors (RuntimeErrors.h).
  mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
  call(llvm::ArrayRef<interp::Tensor> args, std::string &error) const;

  /// The message templates of the run-time checks of the compiled module
  /// (RuntimeErrors.h), indexed by the id compiled code reports.
  const std::vector<std::string> &runtimeErrorTemplates() const {
    return *runtimeErrors;
  }

  /// Seconds the compiled code ran in the last `call` (the entry itself,
  /// including the result allocations it makes; not the copy-out).
  /// With calls on several threads: one of the last calls.
  double lastKernelSeconds() const {
    return kernelSeconds.load(std::memory_order_relaxed);
  }

private:
  CPUExecutable() = default;
  static mlir::FailureOr<llvm::SmallVector<std::unique_ptr<CPUExecutable>>>
  compileImpl(mlir::ModuleOp module, llvm::ArrayRef<std::string> entries,
              llvm::StringRef pipeline, std::string &error,
              CompileTimes *times, llvm::StringRef objectFile, bool useCache,
              const CompileOptions *options, bool runtimeAllocator,
              const std::optional<std::string> &cacheDir);
  static void loadRuntimeLibraries();
  static mlir::LogicalResult
  resolveEntries(llvm::ArrayRef<std::unique_ptr<CPUExecutable>> exes,
                 std::string &error);
  static void setBLASThreadsOnLoad(unsigned threads);
  mutable std::atomic<double> kernelSeconds{0};
  /// The JIT holding the machine code (shared by the executables of one
  /// compile and the kernel cache), and the packed wrapper of the entry.
  std::shared_ptr<CompiledCode> code;
  void (*packed)(void **) = nullptr;
  std::string symbol;
  struct Sig {
    interp::DType dtype;
    llvm::SmallVector<int64_t> shape; // kDynamic for `?`
  };
  llvm::SmallVector<Sig> argSigs, resultSigs;
  /// An entry with ref arguments: which arguments are refs, and those whose
  /// new values the value form returns after the entry's results.
  llvm::SmallVector<bool> refArgs;
  llvm::SmallVector<unsigned> storedArgs;
  /// call() of the compiled (value) signature.
  mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
  callValues(llvm::ArrayRef<interp::Tensor> args, std::string &error) const;
  /// Message templates of the run-time checks (RuntimeErrors.h).
  std::shared_ptr<const std::vector<std::string>> runtimeErrors;
};

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_CPUBACKEND_H
