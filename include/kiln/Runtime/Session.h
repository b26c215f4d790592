//===- Session.h - Loading and calling captured programs --------*- C++ -*-===//
//
// Part of Kiln. A session loads a module of kg.programs and calls them: it
// keeps a cache per program of entries (compiled guards -> specialized,
// compiled program), recompiles on a miss (static shapes first, then
// automatic dynamic dims), stops recompiling at cache_size_limit, runs graph
// breaks through registered host callbacks, and records statistics.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SESSION_H
#define KILN_RUNTIME_SESSION_H

#include "kiln/Interpreter/Tensor.h"
#include "kiln/Runtime/Guards.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace kiln::runtime {

/// How dims become dynamic when a program is recompiled.
enum class DynamicMode {
  Auto,    ///< static first; a dim whose size changed becomes dynamic
  Static,  ///< never dynamic (every new size recompiles)
  Dynamic, ///< every dim dynamic from the first compile
};

struct SessionOptions {
  /// Backend that runs graphs: "eager" (the interpreter) or "cpu" (each
  /// graph function of an entry compiled by kiln-cpu and the JIT when the
  /// entry is made). Part of every entry's guards (BACKEND_MATCH).
  std::string backend = "eager";
  /// Pass pipeline run on each specialized program (textual, as for
  /// kiln-opt --pass-pipeline without the builtin.module wrapper): Kiln's
  /// passes and pipelines and MLIR's generic ones. The default is the
  /// capture-level pipeline of the eager backend. A pipeline whose last
  /// element is `kiln-cpu` or `kiln-cpu{...}` selects the cpu backend: the
  /// elements before it run on the program (kiln-eager when there are none)
  /// and `kiln-cpu{...}` compiles its graph functions.
  std::string pipeline = "kiln-eager";
  /// cpu backend, a graph function that kiln-cpu cannot compile (an op with
  /// no CPU lowering): "error" fails the call naming the op and its
  /// location; "eager" warns and runs that graph in the interpreter.
  std::string cpuFallback = "error";
  /// Entries per program before it stops recompiling.
  unsigned cacheSizeLimit = 8;
  /// Never compile: a miss runs the fallback (after warm-up).
  bool frozen = false;
  DynamicMode dynamic = DynamicMode::Auto;
  /// Where a failed call leaves a reproducer (kiln/Runtime/Repro.h); empty:
  /// none. Starts as KILN_REPRO_DIR.
  std::string reproDir;
  /// cpu backend: run each compiled graph again in the interpreter and fail
  /// the call when the results differ beyond the dtype's tolerance (as
  /// TORCHDYNAMO_REPRO_LEVEL=4; slow). Starts as KILN_CHECK_ACCURACY=1.
  bool checkAccuracy = false;
  /// cpu backend: the directory of the compiled-code disk cache
  /// (kiln/Backend/CPU/DiskCache.h); empty: none. Starts as KILN_CACHE_DIR
  /// or its default ($XDG_CACHE_HOME/kiln, ~/.cache/kiln); setOption's
  /// "off" or "" turns it off.
  std::string cacheDir;
  /// Program arguments (indices) whose contents the caller promises not to
  /// change between calls, as PyTorch's freezing assumes of parameters:
  /// compiled code may keep what it derives from them (convolution weights
  /// packed once into oneDNN's layout). Kiln drops what it kept when such
  /// an argument's address changes, on a program's first call, and when
  /// this option is set again (how a caller says contents changed). Refs
  /// and arguments the runtime copies (strided ones) never count.
  std::vector<unsigned> constantArgs;
};

/// A host callback for kg.host_call: inputs to outputs; on failure set
/// `error` and return failure.
using HostCallback = std::function<mlir::LogicalResult(
    llvm::ArrayRef<interp::Tensor> inputs,
    llvm::SmallVectorImpl<interp::Tensor> &outputs, std::string &error)>;

/// Called on a cache miss instead of specializing the loaded program: returns
/// the text of a module holding a kg.program of that name for these inputs
/// (how a frontend re-captures), or fails with `error`.
using MissCallback = std::function<mlir::LogicalResult(
    llvm::StringRef program, llvm::ArrayRef<ArgView> args,
    llvm::StringRef reason, std::string &moduleText, std::string &error)>;

struct ProgramStats {
  uint64_t calls = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t compiles = 0;
  /// Calls run by the fallback (cache limit reached, or frozen).
  uint64_t fallbacks = 0;
  /// Guard failures that caused a recompile (or a fallback), in order.
  std::vector<std::string> recompileReasons;
  /// Seconds spent per compile phase ("specialize", each pass by argument,
  /// "compile-guards"), summed over compiles.
  std::map<std::string, double> compileSeconds;
  double totalCompileSeconds = 0;
  /// cpu backend: graph functions compiled (summed over entries), graphs
  /// left to the interpreter by cpu_fallback = eager, and calls of compiled
  /// graphs.
  uint64_t cpuGraphsCompiled = 0;
  uint64_t cpuGraphsInterpreted = 0;
  uint64_t cpuGraphCalls = 0;
  /// constant_args: kg.constant_graph runs (a new constant epoch, or the
  /// first call) and reuses of their kept results.
  uint64_t constantGraphRuns = 0, constantGraphReuses = 0;
  /// cpu backend: compiles whose code the disk cache gave (hits) or did not
  /// have (misses: compiled and stored); this process's bytes read from and
  /// written to it by this program's compiles.
  uint64_t diskCacheHits = 0, diskCacheMisses = 0;
  uint64_t diskCacheBytesRead = 0, diskCacheBytesWritten = 0;
  bool limitWarned = false;
  /// The cache entry (index in compile order, as entryIR) that ran the last
  /// call; -1 when the fallback ran it, it failed, or before the first call.
  /// A client whose entries differ in how results map back (one capture per
  /// entry) reads it to interpret the results.
  int64_t lastEntry = -1;
};

/// The entry (as ProgramStats::lastEntry) that ran the calling thread's last
/// call of the program whose stats are `stats`; -1 if that call failed or
/// ran the fallback, or this thread has not called it. With calls from many
/// threads, `lastEntry` is the last call to finish on any thread; this is
/// the one to read right after a call.
int64_t lastEntryOfThread(const ProgramStats *stats);

/// Threads: `call`, `lookup` and the queries may be used from many threads
/// at once. A call holds the session's lock while it looks up its entry and
/// while it compiles (one compile at a time per session), never while the
/// program runs: calls of compiled code, the interpreter and host callbacks
/// of different calls run in parallel, and each call reports only its own
/// errors. The other functions take the lock too; a module loaded while
/// calls run replaces the one later calls see (running ones finish on
/// theirs). Pointers returned by `stats` are valid while `mutex()` is held.
class Session {
public:
  Session();
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Loads (replacing any previous module and clearing every cache) the
  /// module in `text`. Errors carry locations.
  mlir::LogicalResult loadModule(llvm::StringRef text,
                                 llvm::StringRef bufferName,
                                 std::string &error);
  mlir::LogicalResult loadModuleFile(llvm::StringRef path, std::string &error);

  SessionOptions &options() { return opts; }
  /// Sets an option by name: backend (eager/cpu; interpreter is eager),
  /// pipeline, cache_size_limit, frozen (true/false), dynamic
  /// (auto/static/dynamic), cpu_fallback (error/eager), repro_dir (a
  /// directory; "" for none), check_accuracy (true/false).
  mlir::LogicalResult setOption(llvm::StringRef key, llvm::StringRef value,
                                std::string &error);

  void registerHostCallback(llvm::StringRef name, HostCallback callback);
  void setMissCallback(MissCallback callback);
  /// Where warnings go (default: stderr). Called with the session's lock
  /// held (it may call the session's query functions).
  void setWarningHandler(std::function<void(llvm::StringRef)> handler);

  /// torch._dynamo.mark_dynamic / mark_static for one dim of one argument.
  void markDynamic(llvm::StringRef program, unsigned arg, unsigned dim);
  void markStatic(llvm::StringRef program, unsigned arg, unsigned dim);

  /// Calls `program`: guards, (re)compile on a miss, run.
  mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
  call(llvm::StringRef program, llvm::ArrayRef<ArgView> args,
       std::string &error);

  /// The cache entry `args` would hit, or -1 (guard evaluation only; used
  /// by the dispatch benchmark).
  int lookup(llvm::StringRef program, llvm::ArrayRef<ArgView> args);

  /// Statistics of `program` (null if never called); read them holding
  /// `mutex()` when other threads call the session.
  const ProgramStats *stats(llvm::StringRef program) const;
  /// Names of the programs called so far.
  std::vector<std::string> calledPrograms() const;
  /// The specialized IR of each cache entry of `program`.
  std::vector<std::string> entryIR(llvm::StringRef program) const;

  mlir::MLIRContext *getContext();

  /// Parses (and verifies) the module in `text`, runs the pass `pipeline`
  /// on it ("a,b{opt=v}" or "builtin.module(a,b)"; any registered pass or
  /// pipeline: kiln-autodiff, kiln-partition, ...) and prints the result,
  /// locations included, into `out`. Independent of the loaded module and
  /// the caches. Errors carry locations.
  mlir::LogicalResult transformModule(llvm::StringRef text,
                                      llvm::StringRef bufferName,
                                      llvm::StringRef pipeline,
                                      std::string &out, std::string &error);

  /// The session's lock (recursive), for callers that read `stats` or
  /// `options` while other threads call.
  std::recursive_mutex &mutex() const;

private:
  mlir::FailureOr<llvm::SmallVector<interp::Tensor>>
  callImpl(llvm::StringRef program, llvm::ArrayRef<ArgView> args,
           std::string &error);
  /// Writes a reproducer of a failed call when repro_dir is set (at most
  /// kMaxRepros per session), and names it in `error`.
  void writeReproOf(llvm::StringRef program, llvm::ArrayRef<ArgView> args,
                    std::string &error);
  static constexpr unsigned kMaxRepros = 16;
  unsigned reprosWritten = 0;

  struct Impl;
  std::unique_ptr<Impl> impl;
  SessionOptions opts;
  MissCallback onMiss;
  std::function<void(llvm::StringRef)> warn;
};

/// Converts a tensor view (any strides) into a contiguous interpreter tensor,
/// or a scalar view into a rank-0 tensor. Fails (the message names the
/// tensor and its size) when the copy cannot be allocated.
llvm::Expected<interp::Tensor> tensorFromView(const ArgView &view);

/// A view of an interpreter tensor (no copy).
ArgView viewOf(const interp::Tensor &t, bool isTensor = true);

/// Parses (and verifies) module text that comes from outside, named
/// `bufferName` in locations; diagnostics go to the context's handlers.
/// The text is copied into a buffer of its own first (NUL-terminated, as
/// MLIR's lexer expects): parseSourceString parses the caller's bytes in
/// place, and text from an embedder need not be NUL-terminated and may be
/// empty with NULL data (a KilnStringRef), which crashes MLIR's parser (a
/// buffer starting at NULL looks like its code-completion marker). Every
/// parse of such text goes through here.
mlir::OwningOpRef<mlir::ModuleOp> parseModuleText(mlir::MLIRContext &context,
                                                  llvm::StringRef text,
                                                  llvm::StringRef bufferName);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_SESSION_H
