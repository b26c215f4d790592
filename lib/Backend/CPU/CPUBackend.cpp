//===- CPUBackend.cpp - JIT-compiled CPU code for kt functions ------------===//
//
// Part of Kiln. kiln-cpu on a clone of the module, then the ExecutionEngine
// (host target machine, -O3). Calls go through the `_mlir_ciface_` wrapper
// of the entry: its first argument points at the result descriptors (one
// struct {allocated, aligned, offset, sizes[R], strides[R]} per result, all
// 8-byte words), then one pointer per argument descriptor. Results are
// owned by the caller (the deallocation pipeline clones returned buffers it
// does not own), so they are copied out and freed here. Compiled modules
// are kept in a process-wide cache (key: SHA-256 of the compiled functions,
// the entries and the pipeline string) and in the disk cache across
// processes (DiskCache.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Backend/CPU/BufferPool.h"
#include "kiln/Backend/CPU/DiskCache.h"
#include "kiln/Backend/CPU/ObjectSymbols.h"
#include "kiln/Backend/CPU/ParallelCodegen.h"
#include "kiln/Backend/CPU/RuntimeErrors.h"
#include "kiln/Support/ThreadDiagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Conversion/CPU/CPUCodegen.h"
#include "kiln/Support/Logging.h"
#include "kiln/Support/PipelineParsing.h"
#include "kiln/Support/Trace.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "kiln/Transforms/Functionalize.h"
#include "kiln/Transforms/Transforms.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SHA256.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace kiln;
using namespace kiln::cpu;
using interp::DType;
using interp::Tensor;

void kiln::cpu::registerCPUBackendDialects(DialectRegistry &registry) {
  // The pipeline's dialects and their external models (bufferization,
  // convert-to-llvm interfaces, ...).
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

CPUExecutable::~CPUExecutable() = default;

/// Machine code in a JIT: a module compiled here (the ExecutionEngine), or
/// an object read from the disk cache and linked by an LLJIT set up as the
/// ExecutionEngine sets up its own (RuntimeDyld, section memory manager,
/// the process's symbols, the runtime-error and buffer-pool symbols).
struct kiln::cpu::CompiledCode {
  std::shared_ptr<ExecutionEngine> engine;
  std::unique_ptr<llvm::orc::LLJIT> jit;

  /// The packed wrapper `_mlir_<symbol>`.
  llvm::Expected<void (*)(void **)> lookupPacked(StringRef symbol) const {
    if (engine)
      return engine->lookupPacked(symbol);
    auto addr = jit->lookup(("_mlir_" + symbol).str());
    if (!addr)
      return addr.takeError();
    return addr->toPtr<void (*)(void **)>();
  }
};

namespace {
/// Bounded, least recently used first out. An evicted engine lives on in
/// the executables that hold it; the cache only stops keeping it. Without
/// a bound, a process that compiles new functions (new shapes, reloaded
/// modules) kept every engine it ever made (~1 MB for a small function).
struct KernelCache {
  std::mutex mutex;
  struct Entry {
    std::shared_ptr<CompiledCode> code;
    std::shared_ptr<const std::vector<std::string>> runtimeErrors;
    std::list<std::string>::iterator lru;
  };
  llvm::StringMap<Entry> engines;
  /// Keys, most recently used first.
  std::list<std::string> lru;
  size_t capacity = capacityFromEnv();
  KernelCacheStats stats;

  static size_t capacityFromEnv() {
    if (const char *s = std::getenv("KILN_CPU_KERNEL_CACHE_ENTRIES")) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(s, &end, 10);
      if (end != s && *end == '\0')
        return (size_t)v;
    }
    return kDefaultKernelCacheEntries;
  }
  /// The entry of `key`, now the most recently used; null if none. Hold
  /// `mutex`.
  Entry *lookup(llvm::StringRef key) {
    auto it = engines.find(key);
    if (it == engines.end())
      return nullptr;
    lru.splice(lru.begin(), lru, it->second.lru);
    return &it->second;
  }
  /// Keeps `entry` for `key` and evicts past the capacity. Hold `mutex`.
  void insert(llvm::StringRef key, Entry entry) {
    if (capacity == 0)
      return;
    if (Entry *old = lookup(key)) {
      old->code = std::move(entry.code);
      old->runtimeErrors = std::move(entry.runtimeErrors);
      return;
    }
    lru.push_front(key.str());
    entry.lru = lru.begin();
    engines[key] = std::move(entry);
    evictPastCapacity();
  }
  /// Drops the least recently used entries that do not fit. Hold `mutex`.
  void evictPastCapacity() {
    while (engines.size() > capacity) {
      engines.erase(lru.back());
      lru.pop_back();
      ++stats.evictions;
    }
  }
};
// Never destroyed: engines must outlive nothing at exit (libomp and LLVM's
// own shutdown run in unspecified order with static destructors).
KernelCache &kernelCache() {
  static KernelCache *cache = new KernelCache;
  return *cache;
}
} // namespace

KernelCacheStats kiln::cpu::kernelCacheStats() {
  KernelCache &c = kernelCache();
  std::lock_guard<std::mutex> lock(c.mutex);
  KernelCacheStats s = c.stats;
  s.entries = c.engines.size();
  s.capacity = c.capacity;
  return s;
}

void kiln::cpu::clearKernelCache() {
  KernelCache &c = kernelCache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.engines.clear();
  c.lru.clear();
}

void kiln::cpu::setKernelCacheCapacity(size_t entries) {
  KernelCache &c = kernelCache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.capacity = entries;
  c.evictPastCapacity();
}

std::string kiln::cpu::pipelineString(const CompileOptions &o) {
  return "kiln-cpu{optimize=" + std::string(o.optimize ? "true" : "false") +
         " threads=" + std::to_string(o.threads) + " matmul=" + o.matmul +
         " sgemm=" + o.sgemm +
         " conv=" + o.conv + " fuse=" + std::string(o.fuse ? "true" : "false") +
         (o.convChannelsLast ? "" : " conv-channels-last=false") +
         (o.fastExp ? "" : " fast-exp=false") + "}";
}

/// OpenBLAS is loaded only into processes that run code calling it
/// (ensureOpenBLAS): loading it starts its worker threads, whose buffers are
/// mmapped at start; under a low `ulimit -v` a worker retries its failing
/// mmap forever and the process hangs at exit joining it. A program without
/// products never loads it.
static std::mutex blasMutex;
/// The thread count the last compile asked for (0: OpenBLAS's default).
static unsigned blasThreadsRequested = 0;
/// openblas_set_num_threads once OpenBLAS is loaded.
static void (*blasSetThreads)(int) = nullptr;
static unsigned blasThreadsSet = 0;
static bool blasLoaded = false;

/// Applies the requested thread count (blasMutex held).
static void applyBLASThreads() {
  if (blasSetThreads && blasThreadsRequested &&
      blasThreadsRequested != blasThreadsSet) {
    blasSetThreads((int)blasThreadsRequested);
    blasThreadsSet = blasThreadsRequested;
  }
}

/// OpenBLAS's thread count follows the pipeline's (applied now if OpenBLAS
/// is loaded, else when it is).
static void setBLASThreads(unsigned threads) {
  std::lock_guard<std::mutex> lock(blasMutex); // sessions on other threads compile too
  if (threads)
    blasThreadsRequested = threads;
  applyBLASThreads();
}

/// Loads OpenBLAS into the process (once), for code that calls it.
static void ensureOpenBLAS() {
  std::lock_guard<std::mutex> lock(blasMutex);
  if (blasLoaded)
    return;
  blasLoaded = true;
  llvm::sys::DynamicLibrary::LoadLibraryPermanently(KILN_OPENBLAS_LIB);
  blasSetThreads = reinterpret_cast<void (*)(int)>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
          "openblas_set_num_threads"));
  applyBLASThreads();
}

/// Loads libkiln_onednn (oneDNN convolutions) into the process (once), for
/// code that calls it. It links libomp ahead of libdnnl, and libomp is
/// already loaded (loadRuntimeLibraries): oneDNN's OpenMP calls bind to
/// libomp, the compiled code's runtime (docs/codegen.md, "Convolution").
static void ensureOneDNN() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef KILN_ONEDNN_LIB
    std::string err;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(KILN_ONEDNN_LIB,
                                                          &err))
      llvm::errs() << "kiln: cannot load " << KILN_ONEDNN_LIB << ": " << err
                   << "\n";
#endif
  });
}

/// libkiln_onednn's entry point named `name`, once it is loaded (else
/// null); `slot` keeps it after the first successful lookup.
template <typename F>
static F oneDNNEntry(std::atomic<F> &slot, const char *name) {
  if (F f = slot.load(std::memory_order_acquire))
    return f;
  F f = reinterpret_cast<F>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name));
  if (f)
    slot.store(f, std::memory_order_release);
  return f;
}

using SetConstantMemory = void (*)(const void *const *, const int64_t *,
                                   int64_t);
static std::atomic<SetConstantMemory> setConstantMemory{nullptr};

cpu::ConstantMemoryScope::ConstantMemoryScope(
    ArrayRef<std::pair<const void *, int64_t>> ranges) {
  if (ranges.empty())
    return;
  SetConstantMemory set =
      oneDNNEntry(setConstantMemory, "kiln_onednn_set_constant_memory");
  if (!set)
    return;
  SmallVector<const void *> begin;
  SmallVector<int64_t> bytes;
  for (auto [b, n] : ranges) {
    begin.push_back(b);
    bytes.push_back(n);
  }
  set(begin.data(), bytes.data(), (int64_t)ranges.size());
  active = true;
}

cpu::ConstantMemoryScope::~ConstantMemoryScope() {
  if (active)
    setConstantMemory.load()(nullptr, nullptr, 0);
}

void cpu::dropConstantPacks() {
  static std::atomic<void (*)()> drop{nullptr};
  if (auto f = oneDNNEntry(drop, "kiln_onednn_drop_constant_packs"))
    f();
}

cpu::ConstantPackStats cpu::constantPackStats() {
  static std::atomic<void (*)(int64_t *, int64_t *, int64_t *)> get{nullptr};
  ConstantPackStats s;
  if (auto f = oneDNNEntry(get, "kiln_onednn_pack_stats"))
    f(&s.made, &s.hits, &s.bytes);
  return s;
}

/// Whether the lowered (LLVM dialect) module calls OpenBLAS / libkiln_onednn.
static bool callsBLAS(ModuleOp module) {
  bool found = false;
  module.walk([&](LLVM::LLVMFuncOp f) {
    if (f.isExternal() && isBLASSymbol(f.getName()))
      found = true;
  });
  return found;
}
static bool callsOneDNN(ModuleOp module) {
  bool found = false;
  module.walk([&](LLVM::LLVMFuncOp f) {
    if (f.isExternal() && isOneDNNSymbol(f.getName()))
      found = true;
  });
  return found;
}

/// Whether an object file (a disk cache entry) calls OpenBLAS: any
/// undefined cblas_* / openblas_* symbol. An object that cannot be read
/// counts as calling it (the link then finds what it needs).
static bool objectCallsBLAS(StringRef object) {
  bool calls = false;
  if (llvm::Error e = cpu::forEachObjectSymbol(
          llvm::MemoryBufferRef(object, "kiln-disk-cache"),
          [&](StringRef name, uint32_t flags) {
            calls |= (flags & llvm::object::SymbolRef::SF_Undefined) &&
                     cpu::isBLASSymbol(name);
          })) {
    llvm::consumeError(std::move(e));
    return true;
  }
  return calls;
}

/// Whether an object file calls libkiln_onednn (as objectCallsBLAS).
static bool objectCallsOneDNN(StringRef object) {
  bool calls = false;
  if (llvm::Error e = cpu::forEachObjectSymbol(
          llvm::MemoryBufferRef(object, "kiln-disk-cache"),
          [&](StringRef name, uint32_t flags) {
            calls |= (flags & llvm::object::SymbolRef::SF_Undefined) &&
                     cpu::isOneDNNSymbol(name);
          })) {
    llvm::consumeError(std::move(e));
    return true;
  }
  return calls;
}

/// "file:line:col" of a location (callee of a call site, first of a fused
/// location), else its printed form.
/// Where a diagnostic of the pipeline is: the innermost source frame of the
/// op's location (`file:line:col`, or the name of a NameLoc without one,
/// as importers write them; kiln::formatLocationStack).
/// "@a, @b" for diagnostics, logs and traces.
static std::string entryList(ArrayRef<std::string> entries) {
  std::string names;
  for (const std::string &entry : entries)
    names += (names.empty() ? "@" : ", @") + entry;
  return names;
}

static std::string locString(Location loc) {
  return kiln::formatLocationStack(loc).front();
}

/// Fails, naming the value, when a tensor type in `module` has static dims
/// whose size in bytes exceeds INT64_MAX: no such tensor can exist, and
/// compiled code would compute its allocation size modulo 2^64 (a small
/// block that the code then writes far past).
/// Drops Kiln's own argument and result attributes (`kg.requires_grad`,
/// ...) from the functions to compile: they mean nothing to LLVM, and its
/// translation warned about each one, printing the whole function (kiln-run
/// on a graph function of a dumped `KILN_LOGS=+graph` module).
static void dropKilnArgAttrs(ModuleOp module) {
  auto isKilns = [](NamedAttribute a) {
    StringRef n = a.getName().strref();
    return n.starts_with("kg.") || n.starts_with("kt.");
  };
  module.walk([&](func::FuncOp fn) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (DictionaryAttr d = fn.getArgAttrDict(i))
        for (NamedAttribute a : llvm::to_vector(d.getValue()))
          if (isKilns(a))
            fn.removeArgAttr(i, a.getName());
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      if (DictionaryAttr d = fn.getResultAttrDict(i))
        for (NamedAttribute a : llvm::to_vector(d.getValue()))
          if (isKilns(a))
            fn.removeResultAttr(i, a.getName());
  });
}

static LogicalResult checkStaticSizes(ModuleOp module, std::string &error) {
  auto tooLarge = [](Type type) {
    auto tt = dyn_cast<RankedTensorType>(type);
    if (!tt || !tt.hasStaticShape())
      return false;
    Type elem = tt.getElementType();
    // index (and anything else): 8 bytes.
    size_t bytes =
        elem.isIntOrFloat() ? (elem.getIntOrFloatBitWidth() + 7) / 8 : 8;
    return !interp::tensorSize(tt.getShape(), bytes).has_value();
  };
  WalkResult walked = module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (tooLarge(arg.getType())) {
            llvm::raw_string_ostream os(error);
            os << locString(arg.getLoc()) << ": argument #" << arg.getArgNumber()
               << " of '" << op->getName() << "' is " << arg.getType()
               << ", which has more than 2^63 - 1 bytes";
            return WalkResult::interrupt();
          }
    for (OpResult r : op->getResults())
      if (tooLarge(r.getType())) {
        llvm::raw_string_ostream os(error);
        os << locString(op->getLoc()) << ": result #" << r.getResultNumber()
           << " of '" << op->getName() << "' is " << r.getType()
           << ", which has more than 2^63 - 1 bytes";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

bool kiln::cpu::perfJitdumpRequested() {
  const char *v = std::getenv("KILN_PERF_JITDUMP");
  return v && *v && StringRef(v) != "0";
}

static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

namespace {
/// Wall time of kiln-cpu's module-level passes (nested pipelines count as
/// one pass of their parent), by phase (CompileTimes).
class PhaseTimer : public PassInstrumentation {
public:
  PhaseTimer(ModuleOp module, CompileTimes &times)
      : module(module), times(times) {}
  void runBeforePass(Pass *pass, Operation *op) override {
    if (op != module.getOperation())
      return;
    StringRef arg = pass->getArgument();
    if (arg == "eliminate-empty-tensors")
      inBufferization = true;
    if (arg == "kiln-fuse")
      current = &times.fuse;
    else if (arg == "kiln-cpu-outline-kernels")
      current = &times.outline;
    else if (inBufferization)
      current = &times.bufferize;
    else if (afterBufferization)
      current = &times.toLLVMDialect;
    else
      current = &times.lower;
    if (arg == "convert-bufferization-to-memref") {
      inBufferization = false;
      afterBufferization = true;
    }
    start = std::chrono::steady_clock::now();
  }
  void runAfterPass(Pass *pass, Operation *op) override { stop(op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override { stop(op); }

private:
  void stop(Operation *op) {
    if (op == module.getOperation() && current)
      *current += secondsSince(start);
  }
  ModuleOp module;
  CompileTimes &times;
  double *current = nullptr;
  bool inBufferization = false, afterBufferization = false;
  std::chrono::steady_clock::time_point start;
};
} // namespace

FailureOr<std::unique_ptr<CPUExecutable>>
CPUExecutable::compile(ModuleOp module, StringRef entry, std::string &error,
                       CompileTimes *times, const CompileOptions &options) {
  auto all = compileEntries(module, {entry.str()}, error, times, options);
  if (failed(all))
    return failure();
  return std::move(all->front());
}

FailureOr<SmallVector<std::unique_ptr<CPUExecutable>>>
CPUExecutable::compileEntries(ModuleOp module, ArrayRef<std::string> entries,
                              std::string &error, CompileTimes *times,
                              const CompileOptions &options) {
  unsigned threads = options.threads;
  if (!threads)
    threads = std::max(1u, std::thread::hardware_concurrency());
  setBLASThreadsOnLoad(options.optimize ? threads : 1);
  return compileImpl(module, entries, pipelineString(options), error, times,
                     options.objectFile, options.useCache, &options,
                     options.packageObject, options.cacheDir);
}

FailureOr<SmallVector<std::unique_ptr<CPUExecutable>>>
CPUExecutable::compileAll(ModuleOp module, ArrayRef<std::string> entries,
                          StringRef pipeline, std::string &error,
                          CompileTimes *times,
                          const std::optional<std::string> &cacheDir) {
  return compileImpl(module, entries, pipeline, error, times, "",
                     /*useCache=*/true, /*options=*/nullptr,
                     /*runtimeAllocator=*/false, cacheDir);
}

void CPUExecutable::setBLASThreadsOnLoad(unsigned threads) {
  loadRuntimeLibraries();
  setBLASThreads(threads);
}

/// KILN_OMP_BLOCKTIME (ms, 0 to 1000), or -1 when it is unset or not such a
/// number (with a warning): libomp's own setting (KMP_BLOCKTIME=0) is left
/// exactly as it was.
static int kilnOpenMPBlocktime() {
  const char *v = std::getenv("KILN_OMP_BLOCKTIME");
  if (!v || !*v)
    return -1;
  char *end = nullptr;
  long ms = std::strtol(v, &end, 10);
  if (*end || ms < 0 || ms > 1000) {
    llvm::errs() << "kiln: KILN_OMP_BLOCKTIME='" << v
                 << "' is not a number of ms in [0, 1000]; ignored\n";
    return -1;
  }
  return (int)ms;
}

void CPUExecutable::loadRuntimeLibraries() {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // libomp (threads of the generated code) in the process, for the JIT's
    // symbol lookups; OpenBLAS (matmuls marked "openblas") is loaded later,
    // by the compiles whose code calls it (ensureOpenBLAS).
    //
    // Both keep their idle workers spinning after a parallel region (libomp
    // 200 ms, OpenBLAS ~2^28 cycles). Kiln alternates between the two pools
    // on the same cores, so a spinning pool steals the cores of the one that
    // has work: idle workers of both sleep at once instead (measured in
    // docs/codegen.md). Settings the user made in the environment win; both
    // libraries read them when they start, i.e. below.
    //
    // But a training step is hundreds of kernel calls back to back, each a
    // parallel region: with a zero blocktime every one wakes the sleeping
    // workers with a futex (the mobilenet_v2 step's largest kernel-side
    // share, docs/codegen.md "Buffers and threads"). The threads that call
    // compiled code can fork their regions with a short blocktime instead,
    // KILN_OMP_BLOCKTIME ms, set per thread at run time
    // (rt::setOpenMPBlocktime): workers then spin through the gaps between
    // kernels of a step. Unset by default (the pool's 0 stays): measured,
    // 1-5 ms helped mobilenet_v2's step on a quiet machine (~12%) and cost
    // 15-40% on convnets when the cores were oversubscribed. A user's
    // KMP_BLOCKTIME wins (Kiln then sets nothing).
    bool userBlocktime = std::getenv("KMP_BLOCKTIME") != nullptr;
    setenv("KMP_BLOCKTIME", "0", /*overwrite=*/0);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
    // libomp starts Kiln's OMPT tool when it initializes: calls of
    // compiled code then run concurrently (kiln/Backend/CPU/RuntimeErrors.h).
    prepareOpenMPTool();
    llvm::sys::DynamicLibrary::LoadLibraryPermanently(KILN_OMP_LIB);
    initializeOpenMP();
    if (!userBlocktime)
      rt::setOpenMPBlocktime(kilnOpenMPBlocktime());
    // OpenBLAS: only for code that calls it (ensureOpenBLAS).
  });
}

/// Erases the packed wrappers `_mlir_<f>` that ExecutionEngine::create made
/// for the functions `f` of `m` and that are not in `needed` (see
/// compileImpl). A wrapper is recognized by its shape, not only its name: an
/// unused definition `void _mlir_<f>(ptr)` whose `f` is a definition of `m`.
static void dropUnusedPackedWrappers(llvm::Module &m,
                                     const llvm::StringSet<> &needed) {
  SmallVector<llvm::Function *> dead;
  for (llvm::Function &f : m) {
    StringRef name = f.getName();
    if (f.isDeclaration() || !name.starts_with("_mlir_") ||
        needed.contains(name) || !f.getReturnType()->isVoidTy() ||
        f.arg_size() != 1 || !f.getArg(0)->getType()->isPointerTy() ||
        !f.use_empty())
      continue;
    llvm::Function *wrapped = m.getFunction(name.drop_front(6));
    if (wrapped && !wrapped->isDeclaration())
      dead.push_back(&f);
  }
  for (llvm::Function *f : dead)
    f->eraseFromParent();
}

/// Points the module's calls of malloc / free / aligned_alloc at the
/// compiled-code runtime's allocator (kiln/rt/BufferPool.h), by name: the
/// declarations are renamed, so an object file references kiln_rt_malloc
/// etc. (CompileOptions::packageObject). The JIT resolves both
/// names to the same functions (registerBufferPoolSymbols).
static void renameAllocatorCalls(llvm::Module &m) {
  static const std::pair<const char *, const char *> names[] = {
      {"malloc", "kiln_rt_malloc"},
      {"free", "kiln_rt_free"},
      {"aligned_alloc", "kiln_rt_aligned_alloc"}};
  for (auto [libc, rt] : names) {
    llvm::Function *f = m.getFunction(libc);
    if (!f || !f->isDeclaration())
      continue;
    if (llvm::Function *existing = m.getFunction(rt)) {
      f->replaceAllUsesWith(existing);
      f->eraseFromParent();
    } else {
      f->setName(rt);
    }
  }
}

/// LLVM's -O3 module pipeline (as mlir::makeOptimizingTransformer(3, 0)),
/// without CalledValuePropagationPass. That pass finds the possible callees
/// of indirect calls (compiled code makes none; OpenMP's outlined regions go
/// to libomp as pointers) and its solver is quadratic in a function's
/// arguments: the C interface wrapper of an entry with 1001 memref arguments
/// (a model's weights: ~6000 scalars in the call of the entry) spent 3.1 s
/// of the 3.3 s of -O3 in it.
void kiln::cpu::optimizeHostModule(llvm::Module &m,
                                   llvm::TargetMachine *machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  // Functions marked optnone (the glue callers of outlined kernels,
  // kiln-cpu-outline-kernels) are skipped as LLVM's OptNoneInstrumentation
  // skips them; that instrumentation is part of StandardInstrumentations,
  // which this pipeline does not register.
  callbacks.registerShouldRunOptionalPassCallback(
      [](StringRef pass, llvm::Any ir) {
        if (pass == "CalledValuePropagationPass")
          return false;
        const llvm::Function *f = nullptr;
        if (const auto *fn = llvm::any_cast<const llvm::Function *>(&ir))
          f = *fn;
        else if (const auto *loop = llvm::any_cast<const llvm::Loop *>(&ir))
          f = (*loop)->getHeader()->getParent();
        return !(f && f->hasOptNone());
      });
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(machine, tuning, std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

static llvm::Error optimizeO3(llvm::Module &m, llvm::TargetMachine *machine) {
  kiln::cpu::optimizeHostModule(m, machine);
  return llvm::Error::success();
}

std::unique_ptr<llvm::TargetMachine>
kiln::cpu::hostTargetMachine(bool pic, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmb) {
    error = "cannot detect the host target: " + llvm::toString(tmb.takeError());
    return nullptr;
  }
  tmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (pic) {
    tmb->setRelocationModel(llvm::Reloc::PIC_);
    tmb->setCodeModel(llvm::CodeModel::Small);
  }
  auto tm = tmb->createTargetMachine();
  if (!tm) {
    error = "cannot create a target machine: " + llvm::toString(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

LogicalResult kiln::cpu::emitObjectFile(llvm::Module &module,
                                        llvm::TargetMachine &machine,
                                        StringRef path, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(module);
  os.flush();
  if (os.has_error()) {
    error = "cannot write '" + path.str() + "': " + os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}

/// Resolves the packed wrapper of each executable's entry in its code (the
/// JIT generates the machine code at the first lookup).
LogicalResult CPUExecutable::resolveEntries(
    ArrayRef<std::unique_ptr<CPUExecutable>> exes, std::string &error) {
  for (auto &exe : exes) {
    auto f = exe->code->lookupPacked(exe->symbol);
    if (!f) {
      error = "JIT lookup of " + exe->symbol +
              " failed: " + llvm::toString(f.takeError());
      return failure();
    }
    exe->packed = *f;
  }
  return success();
}

/// Links objects (of the disk cache, compiled in an earlier process, or of
/// compileToObjects) into a new JIT.
static std::shared_ptr<CompiledCode>
codeFromObjects(ArrayRef<std::string> objects, std::string &error) {
  static std::once_flag runnerUtils;
  std::call_once(runnerUtils, [] {
    // What ExecutionEngineOptions::sharedLibPaths loads for the compiled
    // path (memref copies of strided views).
    llvm::sys::DynamicLibrary::LoadLibraryPermanently(KILN_MLIR_C_RUNNER_UTILS);
  });
  auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmb) {
    error = llvm::toString(tmb.takeError());
    return nullptr;
  }
  auto dl = tmb->getDefaultDataLayoutForTarget();
  if (!dl) {
    error = llvm::toString(dl.takeError());
    return nullptr;
  }
  bool perf = perfJitdumpRequested();
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*tmb))
          .setDataLayout(*dl)
          .setObjectLinkingLayerCreator(
              [perf](llvm::orc::ExecutionSession &session)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                auto layer =
                    std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                        session, [](const llvm::MemoryBuffer &) {
                          return std::make_unique<llvm::SectionMemoryManager>();
                        });
                // As the ExecutionEngine: GDB's listener always, perf's
                // when asked.
                if (auto *gdb =
                        llvm::JITEventListener::createGDBRegistrationListener())
                  layer->registerJITEventListener(*gdb);
                if (perf)
                  if (auto *l =
                          llvm::JITEventListener::createPerfJITEventListener())
                    layer->registerJITEventListener(*l);
                return layer;
              })
          .create();
  if (!jit) {
    error = llvm::toString(jit.takeError());
    return nullptr;
  }
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      dl->getGlobalPrefix());
  if (!process) {
    error = llvm::toString(process.takeError());
    return nullptr;
  }
  main.addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(), *dl);
  llvm::orc::SymbolMap symbols = runtimeErrorSymbols(interner);
  for (auto &kv : bufferPoolSymbols(interner))
    symbols.insert(kv);
  if (llvm::Error e = main.define(llvm::orc::absoluteSymbols(symbols))) {
    error = llvm::toString(std::move(e));
    return nullptr;
  }
  for (const std::string &object : objects)
    if (llvm::Error e = (*jit)->addObjectFile(
            llvm::MemoryBuffer::getMemBufferCopy(object, "kiln-object"))) {
      error = llvm::toString(std::move(e));
      return nullptr;
    }
  auto code = std::make_shared<CompiledCode>();
  code->jit = std::move(*jit);
  return code;
}

/// The object the engine (created with enableObjectDump) compiled, through
/// a temporary file (ExecutionEngine::dumpToObjectFile); empty on failure.
static std::string objectOfEngine(ExecutionEngine &engine) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("kiln-code", "o", fd, path))
    return std::string();
  ::close(fd);
  engine.dumpToObjectFile(path);
  std::string object;
  if (auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false))
    object = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(path);
  return object;
}

FailureOr<SmallVector<std::unique_ptr<CPUExecutable>>>
CPUExecutable::compileImpl(ModuleOp module, ArrayRef<std::string> entries,
                           StringRef pipeline, std::string &error,
                           CompileTimes *times, StringRef objectFile,
                           bool useCache, const CompileOptions *options,
                           bool runtimeAllocator,
                           const std::optional<std::string> &cacheDir) {
  loadRuntimeLibraries();
  MLIRContext *ctx = module.getContext();
  SmallVector<std::unique_ptr<CPUExecutable>> exes;

  // A clone holding only the entries and the functions they reference
  // (kg.programs are host code; other functions are not compiled).
  OwningOpRef<ModuleOp> clone(cast<ModuleOp>(module->clone()));
  if (failed(pruneToEntries(*clone, entries, error)))
    return failure();
  if (failed(checkStaticSizes(*clone, error)))
    return failure();
  dropKilnArgAttrs(*clone);

  // Entries with refs (ref arguments: inputs written in place; or local
  // kt.alloc_ref buffers) compile in their value form (kiln::buildValueForm:
  // the body functionalized, the refs' values in, their new values as extra
  // results); `call` writes those back into the refs.
  llvm::StringMap<std::pair<SmallVector<bool>, SmallVector<unsigned>>>
      refForms;
  for (const std::string &entry : entries) {
    auto fn = clone->lookupSymbol<func::FuncOp>(entry);
    auto isRefType = [](Type t) { return isa<kt::RefType>(t); };
    bool refs = fn && llvm::any_of(fn.getArgumentTypes(), isRefType);
    if (fn && !refs)
      fn.walk([&](Operation *op) {
        refs |= llvm::any_of(op->getResultTypes(), isRefType);
      });
    if (!refs)
      continue;
    SmallVector<bool> isRef;
    for (Type t : fn.getArgumentTypes())
      isRef.push_back(isa<kt::RefType>(t));
    SmallVector<unsigned> stored;
    std::string diags;
    FailureOr<func::FuncOp> form = failure();
    {
      llvm::raw_string_ostream os(diags);
      ThreadDiagnosticHandler handler(
          ctx,
          [&](Diagnostic &d) {
            os << locString(d.getLocation()) << ": " << d << "\n";
          },
          /*takeUnowned=*/true);
      form = buildValueForm(fn, entry + "__values", stored);
    }
    if (failed(form)) {
      // As kiln-cpu's own failures: the op's location and message.
      error = "kiln-cpu failed on @" + entry + ":\n" + diags;
      while (!error.empty() && error.back() == '\n')
        error.pop_back();
      return failure();
    }
    // A graph whose writes leave every ref as it was (`x.copy_(x)`) and
    // that has no results of its own has a value form without results,
    // which cannot be called: it returns its first ref's value instead,
    // written back unchanged.
    unsigned a = llvm::find(isRef, true) - isRef.begin();
    if (form->getNumResults() == 0 && a < isRef.size()) {
      Operation *ret = form->getBody().front().getTerminator();
      ret->insertOperands(0, form->getArgument(a));
      form->setFunctionType(FunctionType::get(
          ctx, form->getArgumentTypes(), {form->getArgument(a).getType()}));
      stored.push_back(a);
    }
    form->setVisibility(fn.getVisibility());
    fn.erase();
    form->setSymName(entry);
    refForms[entry] = {std::move(isRef), std::move(stored)};
  }

  for (const std::string &entry : entries) {
    std::unique_ptr<CPUExecutable> exe(new CPUExecutable());
    auto refForm = refForms.find(entry);
    if (refForm != refForms.end()) {
      exe->refArgs = refForm->second.first;
      exe->storedArgs = refForm->second.second;
    }
    auto fn = clone->lookupSymbol<func::FuncOp>(entry);
    auto sigOf = [&](Type t, const char *what, unsigned i,
                     Sig &sig) -> LogicalResult {
      auto tt = dyn_cast<RankedTensorType>(t);
      std::optional<DType> dt =
          tt ? interp::dtypeFromType(tt.getElementType()) : std::nullopt;
      if (!dt || tt.getElementType().isIndex()) {
        error = ("the CPU backend takes ranked tensors of f32, f64, f16, "
                 "bf16, i64, i32, i16, i8, ui8 or i1; " +
                 Twine(what) + " #" + Twine(i) + " of @" + entry + " is ")
                    .str();
        llvm::raw_string_ostream os(error);
        os << t;
        return failure();
      }
      sig.dtype = *dt;
      sig.shape.assign(tt.getShape().begin(), tt.getShape().end());
      return success();
    };
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      Sig s;
      if (failed(sigOf(t, "argument", i, s)))
        return failure();
      exe->argSigs.push_back(s);
    }
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
      Sig s;
      if (failed(sigOf(t, "result", i, s)))
        return failure();
      exe->resultSigs.push_back(s);
    }
    if (exe->resultSigs.empty()) {
      error = "@" + entry + " has no results";
      return failure();
    }
    fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    exe->symbol = "_mlir_ciface_" + entry;
    exes.push_back(std::move(exe));
  }

  // The compiled-kernel cache: same functions, entries and pipeline, same
  // machine code. Locations are part of the key: the run-time error
  // templates kept with the code name the ops' locations (the same
  // function at another line must not report the first one's).
  std::string key, text;
  useCache = useCache && objectFile.empty();
  if (useCache) {
    llvm::raw_string_ostream os(text);
    clone->print(os, OpPrintingFlags().enableDebugInfo(true));
    for (const std::string &entry : entries)
      os << "\n" << entry;
    os << "\n" << pipeline;
    std::array<uint8_t, 32> hash = llvm::SHA256::hash(
        llvm::ArrayRef<uint8_t>((const uint8_t *)text.data(), text.size()));
    key = llvm::toHex(hash);
    KernelCache &c = kernelCache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (KernelCache::Entry *hit = c.lookup(key)) {
      ++c.stats.hits;
      if (logs::enabled(logs::Topic::Codegen))
        logs::log(logs::Topic::Codegen,
                  "kernel cache hit for " + entryList(entries) +
                      " (compiled code reused)");
      for (auto &exe : exes) {
        exe->code = hit->code;
        exe->runtimeErrors = hit->runtimeErrors;
      }
      if (failed(resolveEntries(exes, error)))
        return failure();
      if (times) {
        *times = CompileTimes();
        times->cached = true;
      }
      return exes;
    }
    ++c.stats.misses;
  }

  // The disk cache: the machine code of an earlier process.
  std::string diskDir = useCache ? diskCacheDirectory(cacheDir) : "";
  std::string diskKey;
  if (!diskDir.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    trace::Scope diskScope("disk cache " + entryList(entries), "compile");
    diskKey = diskCacheKey(text);
    if (std::optional<DiskCacheEntry> hit = diskCacheLoad(diskDir, diskKey)) {
      std::string linkError;
      if (llvm::any_of(hit->objects, objectCallsBLAS))
        ensureOpenBLAS();
      if (llvm::any_of(hit->objects, objectCallsOneDNN))
        ensureOneDNN();
      std::shared_ptr<CompiledCode> code =
          codeFromObjects(hit->objects, linkError);
      auto messages = std::make_shared<const std::vector<std::string>>(
          std::move(hit->runtimeErrors));
      for (auto &exe : exes) {
        exe->code = code;
        exe->runtimeErrors = messages;
      }
      if (code && succeeded(resolveEntries(exes, linkError))) {
        {
          KernelCache &c = kernelCache();
          std::lock_guard<std::mutex> lock(c.mutex);
          c.insert(key, {code, messages, {}});
        }
        if (times) {
          *times = CompileTimes();
          times->diskHit = true;
          times->diskBytesRead = hit->fileBytes;
          times->kernels = hit->kernels;
          times->kernelSites = hit->kernelSites;
          times->jit = secondsSince(t0);
        }
        if (logs::enabled(logs::Topic::Codegen)) {
          std::string msg;
          llvm::raw_string_ostream os(msg);
          os << "loaded " << entryList(entries) << " from the disk cache: "
             << hit->kernels << " kernel function(s), "
             << llvm::format("%.3f", secondsSince(t0)) << " s";
          logs::log(logs::Topic::Codegen, msg);
        }
        return exes;
      }
      // Valid entry whose code does not link here (e.g. a symbol the
      // process lacks): compile, and overwrite it.
      if (logs::enabled(logs::Topic::Codegen))
        logs::log(logs::Topic::Codegen,
                  "disk cache entry " + StringRef(diskKey).take_front(16) +
                      " could not be linked (" + linkError +
                      "): compiling again");
      for (auto &exe : exes) {
        exe->code = nullptr;
        exe->packed = nullptr;
      }
    }
  }

  // kiln-cpu (or `pipeline`). Diagnostics go to `error`.
  auto t0 = std::chrono::steady_clock::now();
  trace::Scope compileScope("kiln-cpu " + entryList(entries), "compile");
  {
    std::string diags;
    llvm::raw_string_ostream os(diags);
    // This thread's (and the pass manager's workers') diagnostics only:
    // other threads may be running calls of the same context.
    ThreadDiagnosticHandler handler(
        ctx,
        [&](Diagnostic &d) {
          os << locString(d.getLocation()) << ": " << d << "\n";
        },
        /*takeUnowned=*/true);
    PassManager pm(ctx);
    if (options) {
      // The options' kiln-cpu (`pipeline` is its string, for the cache key).
      KilnCPUPipelineOptions pipeOpts;
      pipeOpts.optimize = options->optimize;
      pipeOpts.threads = options->threads;
      pipeOpts.matmul = options->matmul;
      pipeOpts.sgemm = options->sgemm;
      pipeOpts.conv = options->conv;
      pipeOpts.fuse = options->fuse;
      pipeOpts.convChannelsLast = options->convChannelsLast;
      pipeOpts.fastExp = options->fastExp;
      buildKilnCPUPipeline(pm, pipeOpts);
    } else if (pipeline.empty()) {
      buildKilnCPUPipeline(pm, KilnCPUPipelineOptions());
    } else if (std::string why;
               failed(parsePipelineCatchingFatalErrors(pipeline, pm, why))) {
      error = "invalid CPU pipeline '" + pipeline.str() + "': " + why;
      return failure();
    }
    if (times) {
      *times = CompileTimes();
      pm.addInstrumentation(std::make_unique<PhaseTimer>(*clone, *times));
    }
    trace::instrument(pm);
    LogicalResult ran = pm.run(*clone);
    if (times)
      times->pipeline = secondsSince(t0);
    if (failed(ran)) {
      error = "kiln-cpu failed on " + entryList(entries) + ":\n" + diags;
      while (!error.empty() && error.back() == '\n')
        error.pop_back();
      return failure();
    }
  }

  // OpenBLAS only when the code calls it.
  if (callsBLAS(*clone))
    ensureOpenBLAS();
  if (callsOneDNN(*clone))
    ensureOneDNN();

  // JIT for the host CPU.
  t0 = std::chrono::steady_clock::now();
  uint64_t jitStart = trace::nowMicros();
  auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmb) {
    error = "cannot detect the host target: " + llvm::toString(tmb.takeError());
    return failure();
  }
  tmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (runtimeAllocator && !objectFile.empty()) {
    // A package's object goes into a shared library (the JIT links PIC
    // code of the small model as well).
    tmb->setRelocationModel(llvm::Reloc::PIC_);
    tmb->setCodeModel(llvm::CodeModel::Small);
  }
  auto tm = tmb->createTargetMachine();
  if (!tm) {
    error = "cannot create a target machine: " + llvm::toString(tm.takeError());
    return failure();
  }
  // Kernel functions compiled, and their call sites.
  // (Counted on every compile now that they choose the codegen threads:
  // one set of kernel names, not a symbol lookup per call.)
  unsigned kernels = 0, kernelSites = 0;
  {
    llvm::StringSet<> kernelNames;
    clone->walk([&](LLVM::LLVMFuncOp f) {
      if (f->hasAttr(kKernelFunctionAttr)) {
        ++kernels;
        kernelNames.insert(f.getName());
      }
    });
    clone->walk([&](LLVM::CallOp call) {
      if (auto callee = call.getCallee(); callee && kernelNames.contains(*callee))
        ++kernelSites;
    });
  }
  if (times) {
    times->kernels = kernels;
    times->kernelSites = kernelSites;
  }
  // The compiled code and the module's run-time error templates given to
  // every executable, whose entries are then resolved (null on failure).
  auto attach = [&](const std::shared_ptr<CompiledCode> &code)
      -> std::shared_ptr<const std::vector<std::string>> {
    auto messages = std::make_shared<const std::vector<std::string>>(
        runtimeErrorMessages(*clone));
    for (auto &exe : exes) {
      exe->code = code;
      exe->runtimeErrors = messages;
    }
    if (failed(resolveEntries(exes, error)))
      return nullptr;
    return messages;
  };
  // The end of either path below: the kernel cache, the disk cache (the
  // objects, asked for only when it is on), the time and the codegen log.
  auto keep = [&](const std::shared_ptr<CompiledCode> &code,
                  const std::shared_ptr<const std::vector<std::string>> &messages,
                  llvm::function_ref<std::vector<std::string>()> objects,
                  StringRef how) {
    if (useCache) {
      KernelCache &c = kernelCache();
      std::lock_guard<std::mutex> lock(c.mutex);
      c.insert(key, {code, messages, {}});
    }
    if (!diskKey.empty()) {
      DiskCacheEntry entry;
      entry.runtimeErrors = *messages;
      entry.objects = objects();
      entry.kernels = kernels;
      entry.kernelSites = kernelSites;
      uint64_t written =
          entry.objects.empty() ? 0 : diskCacheStore(diskDir, diskKey, entry);
      if (times) {
        times->diskMiss = true;
        times->diskBytesWritten = written;
      }
    }
    if (times)
      times->jit = secondsSince(t0);
    if (logs::enabled(logs::Topic::Codegen)) {
      std::string msg;
      llvm::raw_string_ostream os(msg);
      os << "compiled " << entryList(entries) << " for the cpu: " << kernels
         << " kernel function(s), " << how
         << llvm::format("%.3f", secondsSince(t0)) << " s in LLVM";
      if (logs::enabled(logs::Topic::Codegen, logs::Level::Verbose))
        clone->walk([&](LLVM::LLVMFuncOp f) {
          if (f->hasAttr(kKernelFunctionAttr))
            os << "\n  " << f.getName();
        });
      logs::log(logs::Topic::Codegen, msg);
    }
  };

  // Many kernel functions: machine code on several threads
  // (ParallelCodegen.h), linked like the disk cache's objects. Packages
  // (`objectFile`) need one object: the ExecutionEngine below.
  if (unsigned parts = objectFile.empty()
                           ? codegenParts(kernels, options ? options->threads : 0)
                           : 1;
      parts > 1) {
    SmallVector<std::string> packedNames;
    for (auto &exe : exes)
      packedNames.push_back(exe->symbol);
    ObjectsTimes objectTimes;
    std::vector<std::string> objects = compileToObjects(
        *clone, packedNames, parts,
        [&](llvm::Module &m) {
          if (runtimeAllocator)
            renameAllocatorCalls(m);
        },
        objectTimes, error);
    if (objects.empty())
      return failure();
    auto tLink = std::chrono::steady_clock::now();
    std::string linkError;
    std::shared_ptr<CompiledCode> code = codeFromObjects(objects, linkError);
    if (!code) {
      error = "JIT linking failed: " + linkError;
      return failure();
    }
    auto messages = attach(code);
    if (!messages)
      return failure();
    trace::record("LLVM translate + -O3 + machine code (" +
                      std::to_string(objects.size()) + " threads)",
                  "compile", jitStart, trace::nowMicros() - jitStart);
    if (times) {
      times->translate = objectTimes.translate;
      times->llvmOpt = objectTimes.llvmOpt;
      times->codegen = objectTimes.codegen + secondsSince(tLink);
    }
    keep(code, messages, [&] { return std::move(objects); },
         "machine code on " + std::to_string(parts) + " threads, ");
    return exes;
  }

  // `transformer` is a function_ref: keep the std::function alive. The
  // -O3 pipeline is timed on its own (llvmOpt).
  double optSeconds = 0;
  llvm::TargetMachine *machine = tm->get();
  std::function<llvm::Error(llvm::Module *)> o3 =
      [machine](llvm::Module *m) { return optimizeO3(*m, machine); };
  // ExecutionEngine::create gives every function with external linkage a
  // packed wrapper `_mlir_<name>(void **)` (before the transformer runs).
  // Only the wrappers of the entries' C interfaces are ever looked up. The
  // others cost most of the machine-code generation: the wrapper of an
  // entry's own function calls it with every memref descriptor field as a
  // scalar argument (11 per rank-4 memref: thousands for a CNN's weights),
  // i.e. one basic block of thousands of loads and outgoing stack-argument
  // stores, on which the SelectionDAG's store merging / alias checks are
  // quadratic (issue 13: resnet50, 27 s of 45 s in `_mlir_<entry>` alone).
  // Drop them before -O3 so neither the optimizer nor codegen sees them.
  llvm::StringSet<> packedNeeded;
  for (auto &exe : exes)
    packedNeeded.insert("_mlir_" + exe->symbol);
  std::function<llvm::Error(llvm::Module *)> optimize =
      [&o3, &optSeconds, &packedNeeded, runtimeAllocator](llvm::Module *m) {
        auto t = std::chrono::steady_clock::now();
        dropUnusedPackedWrappers(*m, packedNeeded);
        if (runtimeAllocator)
          renameAllocatorCalls(*m);
        llvm::Error e = o3(m);
        optSeconds += secondsSince(t);
        return e;
      };
  ExecutionEngineOptions opts;
  opts.transformer = optimize;
  SmallVector<StringRef> libs = {KILN_MLIR_C_RUNNER_UTILS};
  opts.sharedLibPaths = libs;
  opts.enableObjectDump = !objectFile.empty() || !diskKey.empty();
  // LLVM's listeners: perf's writes a jitdump file (and a `.debug/jit`
  // directory) for every engine, so only when asked; GDB's registers the code
  // in memory only.
  opts.enablePerfNotificationListener = perfJitdumpRequested();
  auto engine = ExecutionEngine::create(*clone, opts, std::move(*tm));
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return failure();
  }
  double createSeconds = secondsSince(t0), optAtCreate = optSeconds;
  trace::record("LLVM translate + -O3", "compile", jitStart,
                trace::nowMicros() - jitStart);
  auto code = std::make_shared<CompiledCode>();
  code->engine = std::shared_ptr<ExecutionEngine>(std::move(*engine));
  ExecutionEngine *shared = code->engine.get();
  registerRuntimeErrorSymbol(*shared);
  registerBufferPoolSymbols(*shared);
  // Machine code now, inside the timed compile: the JIT would otherwise
  // generate it at the first lookup, i.e. in the first call.
  auto tCodegen = std::chrono::steady_clock::now();
  uint64_t codegenStart = trace::nowMicros();
  for (auto &exe : exes)
    if (auto f = shared->lookupPacked(exe->symbol); !f) {
      error = "JIT lookup failed: " + llvm::toString(f.takeError());
      return failure();
    }
  double lookupSeconds = secondsSince(tCodegen);
  trace::record("machine code", "compile", codegenStart,
                trace::nowMicros() - codegenStart);
  if (times) {
    times->llvmOpt = optSeconds;
    times->translate = std::max(0.0, createSeconds - optAtCreate);
    times->codegen =
        std::max(0.0, lookupSeconds - (optSeconds - optAtCreate));
  }
  auto messages = attach(code);
  if (!messages)
    return failure();
  if (!objectFile.empty()) {
    // The object is produced when the code is materialized (first lookup).
    if (auto f = shared->lookupPacked(exes.front()->symbol); !f) {
      error = "JIT lookup failed: " + llvm::toString(f.takeError());
      return failure();
    }
    shared->dumpToObjectFile(objectFile);
  }
  keep(code, messages,
       [&] {
         std::vector<std::string> objects;
         if (std::string object = objectOfEngine(*shared); !object.empty())
           objects.push_back(std::move(object));
         return objects;
       },
       "");
  return exes;
}

/// Writes the contiguous `value` into `dst` (same dtype and shape): through
/// its layout for a ref, into its buffer for a plain tensor.
static void writeBack(Tensor dst, const Tensor &value) {
  size_t es = interp::dtypeSize(dst.dtype());
  auto *out = static_cast<uint8_t *>(dst.mutableData());
  const auto *in = static_cast<const uint8_t *>(value.data());
  if (!dst.isRef()) {
    if (value.numel())
      std::memcpy(out, in, value.numel() * es);
    return;
  }
  ArrayRef<int64_t> shape = dst.shape(), strides = dst.refStrides();
  int64_t n = value.numel();
  if (n == 0)
    return;
  // A row-major ref (size-1 dims with any stride): one copy. Before, every
  // ref was written back element by element (one 4-byte memcpy and a
  // stride walk per element: most of an optimizer step's call time,
  // docs/python.md "Benchmark: bench/optimizer_bench.py").
  int64_t rank = shape.size();
  if (interp::isRowMajor(shape, strides)) {
    std::memcpy(out + dst.refOffset() * es, in, n * es);
    return;
  }
  // Otherwise rows of the innermost dim: one copy each when its stride is
  // 1, element by element through the strides else.
  int64_t inner = rank ? shape[rank - 1] : 1;
  bool unit = rank && strides[rank - 1] == 1;
  int64_t rows = inner ? n / inner : 0;
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = dst.refOffset();
    for (int64_t d = 0; d + 1 < rank; ++d)
      at += idx[d] * strides[d];
    const uint8_t *src = in + r * inner * es;
    if (unit) {
      std::memcpy(out + at * es, src, inner * es);
    } else {
      int64_t st = rank ? strides[rank - 1] : 0;
      for (int64_t k = 0; k < inner; ++k)
        std::memcpy(out + (at + k * st) * es, src + k * es, es);
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

FailureOr<SmallVector<Tensor>> CPUExecutable::call(ArrayRef<Tensor> args,
                                                   std::string &error) const {
  if (refArgs.empty() || args.size() != refArgs.size())
    return callValues(args, error);
  // The value form: the refs' current values in, their new values out.
  SmallVector<Tensor> values;
  for (auto [i, t] : llvm::enumerate(args)) {
    if (!refArgs[i] || !t.isRef()) {
      values.push_back(t);
      continue;
    }
    // A row-major ref is read where it is (compiled code never writes its
    // inputs: lowered functions' arguments are not writable, so bufferization
    // copies before writing), and every write-back below runs after the
    // kernel has returned. Others are copied out through their layout.
    if (Tensor view = t.rowMajorRefContents(); !view.isNull()) {
      values.push_back(std::move(view));
      continue;
    }
    llvm::Expected<Tensor> v = t.loadRef();
    if (!v) {
      error = llvm::toString(v.takeError());
      return failure();
    }
    values.push_back(std::move(*v));
  }
  FailureOr<SmallVector<Tensor>> r = callValues(values, error);
  if (failed(r))
    return failure();
  size_t n = r->size() - storedArgs.size();
  for (auto [i, arg] : llvm::enumerate(storedArgs))
    writeBack(args[arg], (*r)[n + i]);
  r->resize(n);
  return r;
}

FailureOr<SmallVector<Tensor>>
CPUExecutable::callValues(ArrayRef<Tensor> args, std::string &error) const {
  if (args.size() != argSigs.size()) {
    error = "expected " + std::to_string(argSigs.size()) + " arguments, got " +
            std::to_string(args.size());
    return failure();
  }
  // Argument descriptors: {allocated, aligned, offset, sizes, strides}.
  SmallVector<SmallVector<int64_t>> descs;
  for (auto [i, t] : llvm::enumerate(args)) {
    const Sig &s = argSigs[i];
    bool ok = t.dtype() == s.dtype && t.rank() == (int64_t)s.shape.size();
    for (int64_t d = 0; ok && d < t.rank(); ++d)
      ok = ShapedType::isDynamic(s.shape[d]) || s.shape[d] == t.dim(d);
    if (!ok) {
      error = "argument #" + std::to_string(i) + " has dtype " +
              interp::dtypeName(t.dtype()).str() + " and shape [";
      for (int64_t d = 0; d < t.rank(); ++d)
        error += (d ? "," : "") + std::to_string(t.dim(d));
      error += "], which the compiled signature does not accept";
      return failure();
    }
    SmallVector<int64_t> desc;
    auto ptr = reinterpret_cast<int64_t>(t.numel() ? t.data() : nullptr);
    desc.push_back(ptr);
    desc.push_back(ptr);
    desc.push_back(0);
    for (int64_t d : t.shape())
      desc.push_back(d);
    for (int64_t st : interp::contiguousStrides(t.shape()))
      desc.push_back(st);
    descs.push_back(std::move(desc));
  }
  size_t resultWords = 0;
  for (const Sig &s : resultSigs)
    resultWords += 3 + 2 * s.shape.size();
  SmallVector<int64_t> results(resultWords, 0);

  void *resultPtr = results.data();
  SmallVector<void *> descPtrs;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  SmallVector<void *> packed = {&resultPtr};
  for (void *&p : descPtrs)
    packed.push_back(&p);
  // This call's error report and allocations (other threads' calls have
  // their own).
  CallContext context;
  CallScope scope(context);
  trace::Scope traceScope(
      trace::enabled()
          ? "@" + StringRef(symbol).drop_front(strlen("_mlir_ciface_")).str()
          : std::string(),
      "kernel");
  auto tCall = std::chrono::steady_clock::now();
  if (std::optional<std::string> e =
          invokeCompiled(context, this->packed, packed.data())) {
    // A run-time error reported before the failed allocation comes first
    // (the allocation may have been sized from the unchecked value).
    std::optional<std::string> reported =
        takeRuntimeError(context, *runtimeErrors);
    error = reported ? std::move(*reported) : std::move(*e);
    return failure();
  }
  kernelSeconds.store(secondsSince(tCall), std::memory_order_relaxed);

  // Contiguous results are adopted by their tensors (no copy): each
  // distinct allocation is freed once, when the last tensor over it goes
  // away. Other layouts are copied out and their allocation freed here.
  struct Allocation {
    void *ptr;
    ~Allocation() { poolFree(ptr); }
  };
  llvm::DenseMap<void *, std::shared_ptr<Allocation>> owners;
  auto ownerOf = [&](void *allocated) {
    std::shared_ptr<Allocation> &o = owners[allocated];
    if (!o)
      o = std::shared_ptr<Allocation>(new Allocation{allocated});
    return o;
  };
  // How far the adopted results reach into each allocation (bytes from
  // its start): ASan builds poison the block past that
  // (rt::poolPoisonTail), so an embedder's write one element past a result
  // is reported, not only one past the code's 64-byte alignment padding.
  llvm::DenseMap<void *, size_t> adoptedExtent;
  SmallVector<Tensor> out;
  size_t w = 0;
  std::string copyError;
  for (auto [r, s] : llvm::enumerate(resultSigs)) {
    int64_t rank = s.shape.size();
    void *allocated = reinterpret_cast<void *>(results[w]);
    auto *aligned = reinterpret_cast<uint8_t *>(results[w + 1]);
    int64_t offset = results[w + 2];
    SmallVector<int64_t> sizes(results.begin() + w + 3,
                               results.begin() + w + 3 + rank);
    SmallVector<int64_t> strides(results.begin() + w + 3 + rank,
                                 results.begin() + w + 3 + 2 * rank);
    w += 3 + 2 * rank;
    size_t esz = interp::dtypeSize(s.dtype);
    int64_t n = interp::numElements(sizes);
    std::shared_ptr<Allocation> owner =
        allocated ? ownerOf(allocated) : nullptr;
    if (n > 0 && owner && strides == interp::contiguousStrides(sizes)) {
      uint8_t *data = aligned + offset * esz;
      if constexpr (rt::kPoolPoisoning) {
        size_t &extent = adoptedExtent[allocated];
        extent = std::max(extent, size_t(data + n * esz -
                                         static_cast<uint8_t *>(allocated)));
      }
      out.push_back(Tensor::adopt(s.dtype, sizes, data, [owner] {}));
      continue;
    }
    llvm::Expected<Tensor> created = Tensor::create(s.dtype, sizes);
    if (!created) {
      // Go on: every allocation is still freed below.
      if (copyError.empty())
        copyError = "result #" + std::to_string(r) + ": " +
                    llvm::toString(created.takeError());
      else
        llvm::consumeError(created.takeError());
      continue;
    }
    Tensor &t = *created;
    if (n > 0) {
      const uint8_t *base = aligned + offset * esz;
      auto *dst = static_cast<uint8_t *>(t.mutableData());
      SmallVector<int64_t> index(rank, 0);
      for (int64_t k = 0; k < n; ++k) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d)
          off += index[d] * strides[d];
        // Signed byte offset: a layout may have negative strides.
        std::memcpy(dst + k * esz, base + off * (int64_t)esz, esz);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++index[d] < sizes[d])
            break;
          index[d] = 0;
        }
      }
    }
    out.push_back(std::move(t));
  }
  for (auto [allocated, extent] : adoptedExtent)
    rt::poolPoisonTail(allocated, extent);
  owners.clear(); // allocations only copied from are freed now
  if (std::optional<std::string> e = takeRuntimeError(context, *runtimeErrors)) {
    error = std::move(*e);
    return failure();
  }
  if (!copyError.empty()) {
    error = std::move(copyError);
    return failure();
  }
  return out;
}
