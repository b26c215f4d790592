//===- Session.cpp - Loading and calling captured programs ----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Session.h"

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Backend/CPU/DiskCache.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Runtime/Aliasing.h"
#include "kiln/Runtime/Repro.h"
#include "kiln/Runtime/Specialize.h"
#include "kiln/Support/Logging.h"
#include "kiln/Support/PipelineParsing.h"
#include "kiln/Support/ThreadDiagnostics.h"
#include "kiln/Support/Trace.h"
#include "kiln/Transforms/Passes.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <mutex>

using namespace mlir;
using kiln::interp::DType;
using kiln::interp::Tensor;

namespace kiln::runtime {

/// The entry that ran each program's last call, per thread (see
/// lastEntryOfThread in Session.h).
static thread_local llvm::DenseMap<const ProgramStats *, int64_t>
    lastEntries;

static void setLastEntryOfThread(const ProgramStats *stats, int64_t index) {
  lastEntries[stats] = index;
}

int64_t lastEntryOfThread(const ProgramStats *stats) {
  auto it = lastEntries.find(stats);
  return it == lastEntries.end() ? -1 : it->second;
}

//===----------------------------------------------------------------------===//
// Views and tensors
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> tensorFromView(const ArgView &view) {
  if (!view.isTensor) {
    if (interp::isFloatDType(view.dtype))
      return Tensor::scalar(view.dtype, view.floatValue);
    return Tensor::scalarInt(view.dtype, view.intValue);
  }
  llvm::Expected<Tensor> created = Tensor::create(view.dtype, view.shape);
  if (!created)
    return created.takeError();
  Tensor &t = *created;
  size_t elem = interp::dtypeSize(view.dtype);
  int64_t n = t.numel();
  if (n == 0)
    return created;
  bool contiguous = true;
  if (!view.strides.empty()) {
    int64_t expected = 1;
    for (int64_t d = (int64_t)view.shape.size() - 1; d >= 0; --d) {
      if (view.shape[d] != 1 && view.strides[d] != expected)
        contiguous = false;
      expected *= view.shape[d];
    }
  }
  auto *dst = static_cast<uint8_t *>(t.mutableData());
  auto *src = static_cast<const uint8_t *>(view.data);
  if (contiguous) {
    std::memcpy(dst, src, n * elem);
    return created;
  }
  // Rows along the innermost dim are copied whole when it has stride 1
  // (a view of rows, a column slice); element by element otherwise.
  int64_t rank = view.shape.size();
  int64_t run = rank && view.stride(rank - 1) == 1 ? view.shape[rank - 1] : 1;
  int64_t outerRank = run > 1 ? rank - 1 : rank;
  SmallVector<int64_t> idx(outerRank, 0);
  for (int64_t i = 0; i < n; i += run) {
    int64_t off = 0;
    for (int64_t d = 0; d < outerRank; ++d)
      off += idx[d] * view.stride(d);
    // Strides may be negative: a signed byte offset (off * elem in size_t
    // would wrap the pointer around the address space, which is UB).
    std::memcpy(dst + i * elem, src + off * (int64_t)elem, run * elem);
    for (int64_t d = outerRank - 1; d >= 0; --d) {
      if (++idx[d] < view.shape[d])
        break;
      idx[d] = 0;
    }
  }
  return created;
}

/// Whether `view` can be passed where `type` is expected (dtype, rank, static
/// dims), without touching its data.
static bool viewMatchesType(const ArgView &view, Type type) {
  std::string why;
  return view.isTensor == isa<RankedTensorType>(type) &&
         interp::matchesType(view.dtype, view.shape, type, why);
}

ArgView viewOf(const Tensor &t, bool isTensor) {
  ArgView v;
  v.isTensor = isTensor;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.data = t.data();
  if (!isTensor) {
    if (t.isFloat())
      v.floatValue = t.getF(0);
    else
      v.intValue = t.getI(0);
  }
  return v;
}

//===----------------------------------------------------------------------===//
// Running a program
//===----------------------------------------------------------------------===//

namespace {

/// True when `op` runs inside a graph (for kg.is_compiling at run time).
bool insideGraph(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (isa<kg::GraphOp>(p))
      return true;
    if (auto fn = dyn_cast<func::FuncOp>(p))
      return fn->hasAttr(kg::kGraphFunctionAttr);
  }
  return false;
}

/// Compiled graph functions of an entry (cpu backend), by name.
using KernelMap = llvm::StringMap<std::unique_ptr<cpu::CPUExecutable>>;

/// Runs `program` in the interpreter, with the kg ops given meaning by the
/// runtime: graphs call their compiled kernel when `kernels` has one (the
/// "cpu" backend), else run their bodies in the interpreter (the "eager"
/// backend), breaks run on the host, host calls go to the registered
/// callbacks.
/// check_accuracy: the first element where a compiled graph's result
/// differs from the interpreter's beyond the tolerance of its dtype (NaN-aware;
/// shapes and dtypes must agree), as a message; empty when they agree.
std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

std::string compareResults(ArrayRef<Tensor> compiled,
                           ArrayRef<Tensor> reference) {
  if (compiled.size() != reference.size())
    return "it returned " + std::to_string(compiled.size()) +
           " results, the interpreter " + std::to_string(reference.size());
  for (auto [i, pair] : llvm::enumerate(llvm::zip(compiled, reference))) {
    const Tensor &c = std::get<0>(pair);
    const Tensor &r = std::get<1>(pair);
    std::string which = "result #" + std::to_string(i);
    if (c.dtype() != r.dtype() || c.shape() != r.shape())
      return which + " has dtype " + interp::dtypeName(c.dtype()).str() +
             " and shape " + shapeText(c.shape()) +
             ", the interpreter's " + interp::dtypeName(r.dtype()).str() +
             " and " + shapeText(r.shape());
    // Tolerances of the dtype (f16/bf16 compute in f32 on the CPU).
    double rtol = 1e-4, atol = 1e-5;
    if (r.dtype() == DType::F16 || r.dtype() == DType::BF16)
      rtol = atol = 1e-2;
    else if (r.dtype() == DType::F64)
      rtol = 1e-9, atol = 1e-12;
    else if (!r.isFloat())
      rtol = atol = 0;
    for (int64_t k = 0; k < r.numel(); ++k) {
      double x = c.getF(k), y = r.getF(k);
      bool bad = std::isnan(x) || std::isnan(y)
                     ? std::isnan(x) != std::isnan(y)
                 : std::isinf(x) || std::isinf(y)
                     ? x != y
                     : std::fabs(x - y) > atol + rtol * std::fabs(y);
      if (bad) {
        std::string msg;
        llvm::raw_string_ostream os(msg);
        os << which << " differs at flat index " << k << ": compiled "
           << llvm::format("%g", x) << ", interpreter " << llvm::format("%g", y)
           << " (rtol " << llvm::format("%g", rtol) << ", atol "
           << llvm::format("%g", atol) << ")";
        return msg;
      }
    }
  }
  return "";
}

/// Constant arguments (the session option constant_args): what the runtime
/// keeps is valid for one epoch; any change of constant memory anywhere in
/// the process (a new address, a program's first call, the option set
/// again) starts the next one and drops libkiln_onednn's packed weights.
static std::atomic<uint64_t> constantEpoch{1};
static void constantMemoryChanged() {
  ++constantEpoch;
  cpu::dropConstantPacks();
}

/// The results of an entry's kg.constant_graph ops (kiln-hoist-constants),
/// computed on the first call of an epoch and read by later calls.
struct ConstantMemo {
  std::mutex mutex;
  uint64_t epoch = 0;
  llvm::DenseMap<Operation *, SmallVector<Tensor>> results;
};

/// What one call knows about constant memory: the ranges compiled code may
/// treat as constant (constant arguments read in place, kept results), and
/// the kept results it used (a program result sharing their memory is
/// copied before the caller gets it).
struct CallConstants {
  ConstantMemo *memo = nullptr;
  uint64_t epoch = 0;
  SmallVector<std::pair<const void *, int64_t>> memory;
  SmallVector<Tensor> kept;
  uint64_t runs = 0, reuses = 0;
  void keep(ArrayRef<Tensor> tensors) {
    for (const Tensor &t : tensors) {
      kept.push_back(t);
      if (!t.isNull() && !t.isRef() && t.numel())
        memory.push_back({t.data(), (int64_t)t.byteSize()});
    }
  }
};

FailureOr<SmallVector<Tensor>>
runProgram(ModuleOp module, kg::ProgramOp program, ArrayRef<Tensor> args,
           const llvm::StringMap<HostCallback> &callbacks,
           const KernelMap *kernels, uint64_t *kernelCalls,
           bool checkAccuracy, CallConstants &constants) {
  interp::Interpreter interp(module);
  auto noop = [](Operation &, ArrayRef<Tensor>, SmallVectorImpl<Tensor> &,
                 interp::Interpreter &) { return success(); };
  for (StringRef guard :
       {"kg.guard_tensor", "kg.guard_value", "kg.guard_backend",
        "kg.guard_identity", "kg.guard_shape_relation"})
    interp.setHandler(guard, noop);
  auto runGraph = [kernels, kernelCalls, checkAccuracy, &constants](
                      Operation &op, ArrayRef<Tensor> operands,
                      SmallVectorImpl<Tensor> &results,
                      interp::Interpreter &in) -> LogicalResult {
    auto graph = cast<kg::GraphOp>(op);
    // A compiled graph treats its ref operands as distinct buffers (its
    // value form loads each, computes, and stores each back): one tensor
    // passed for two of them (a caller's tied refs, see Aliasing.h) would
    // lose all but the last store (`a.add_(1); b.mul_(2)` on ones gave 2,
    // not 4). Such a call runs the graph in the interpreter, which writes
    // through one buffer.
    auto refsShareStorage = [&] {
      SmallVector<const Tensor *> refs;
      for (const Tensor &t : operands)
        if (t.isRef())
          refs.push_back(&t);
      for (auto [i, x] : llvm::enumerate(refs))
        for (const Tensor *y : ArrayRef(refs).drop_front(i + 1))
          if (x->sharesStorage(*y))
            return true;
      return false;
    };
    if (kernels && graph.isOutlined() && !refsShareStorage()) {
      auto it = kernels->find(graph.getCallee());
      if (it != kernels->end()) {
        std::string error;
        // Ref operands (mutated inputs) go as they are: the compiled
        // value form takes their contents and CPUExecutable::call writes
        // their final contents back (kiln::buildValueForm).
        cpu::ConstantMemoryScope constantScope(constants.memory);
        FailureOr<SmallVector<Tensor>> r = it->second->call(operands, error);
        if (failed(r))
          // Not op.emitError: its note would print the whole kg.graph.
          return mlir::emitError(op.getLoc(), "compiled graph @")
                 << graph.getCallee() << " failed: " << error;
        results = std::move(*r);
        ++*kernelCalls;
        if (checkAccuracy) {
          // As TORCHDYNAMO_REPRO_LEVEL=4: the graph again in the
          // interpreter, on the same inputs.
          FailureOr<SmallVector<Tensor>> ref =
              in.call(graph.getCallee(), operands);
          if (failed(ref))
            return failure();
          std::string diff = compareResults(results, *ref);
          if (!diff.empty())
            return mlir::emitError(op.getLoc(), "compiled graph @")
                   << graph.getCallee()
                   << " disagrees with the interpreter (check_accuracy): "
                   << diff;
        }
        return success();
      }
    }
    // (Names built only while a trace records: this runs on every call.)
    trace::Scope scope(!trace::enabled() ? std::string()
                       : graph.isOutlined()
                           ? ("@" + graph.getCallee() + " (interpreter)").str()
                           : "inline graph (interpreter)",
                       "run");
    FailureOr<SmallVector<Tensor>> r =
        graph.isOutlined() ? in.call(graph.getCallee(), operands)
                           : in.runBlock(graph.getBody().front(), operands);
    if (failed(r))
      return failure();
    results = std::move(*r);
    return success();
  };
  interp.setHandler("kg.graph", [runGraph, &constants](
                                    Operation &op, ArrayRef<Tensor> operands,
                                    SmallVectorImpl<Tensor> &results,
                                    interp::Interpreter &in) -> LogicalResult {
    ConstantMemo *memo = constants.memo;
    if (!memo || !op.hasAttr(kConstantGraphAttr))
      return runGraph(op, operands, results, in);
    // A constant graph: its results of this epoch, or computed now and
    // kept (two threads may both compute them; either result is right).
    {
      std::lock_guard<std::mutex> lock(memo->mutex);
      if (memo->epoch == constants.epoch) {
        auto it = memo->results.find(&op);
        if (it != memo->results.end()) {
          results.assign(it->second.begin(), it->second.end());
          constants.keep(results);
          ++constants.reuses;
          return success();
        }
      }
    }
    if (failed(runGraph(op, operands, results, in)))
      return failure();
    constants.keep(results);
    ++constants.runs;
    std::lock_guard<std::mutex> lock(memo->mutex);
    if (constants.epoch < memo->epoch)
      return success(); // a later epoch's call kept its own already
    if (memo->epoch != constants.epoch) {
      memo->results.clear();
      memo->epoch = constants.epoch;
    }
    memo->results[&op].assign(results.begin(), results.end());
    return success();
  });
  interp.setHandler("kg.break", [](Operation &op, ArrayRef<Tensor>,
                                   SmallVectorImpl<Tensor> &results,
                                   interp::Interpreter &in) -> LogicalResult {
    FailureOr<SmallVector<Tensor>> r =
        in.runBlock(cast<kg::BreakOp>(op).getBody().front(), {});
    if (failed(r))
      return failure();
    results = std::move(*r);
    return success();
  });
  interp.setHandler(
      "kg.host_call",
      [&callbacks](Operation &op, ArrayRef<Tensor> operands,
                   SmallVectorImpl<Tensor> &results,
                   interp::Interpreter &) -> LogicalResult {
        auto call = cast<kg::HostCallOp>(op);
        auto it = callbacks.find(call.getCallee());
        if (it == callbacks.end())
          return op.emitError("no host callback is registered as '")
                 << call.getCallee() << "'";
        std::string error;
        if (failed(it->second(operands, results, error)))
          return op.emitError("host callback '")
                 << call.getCallee() << "' failed: " << error;
        if (results.size() != op.getNumResults())
          return op.emitError("host callback '")
                 << call.getCallee() << "' returned " << results.size()
                 << " values, expected " << op.getNumResults();
        return success();
      });
  auto passThrough = [](Operation &op, ArrayRef<Tensor> operands,
                        SmallVectorImpl<Tensor> &results,
                        interp::Interpreter &) {
    results.push_back(operands[0]);
    return success();
  };
  interp.setHandler("kg.to_host", passThrough);
  interp.setHandler("kg.from_host", passThrough);
  interp.setHandler("kg.is_compiling",
                    [](Operation &op, ArrayRef<Tensor>,
                       SmallVectorImpl<Tensor> &results, interp::Interpreter &) {
                      results.push_back(
                          Tensor::scalarInt(DType::I1, insideGraph(&op)));
                      return success();
                    });
  return interp.call(program, args);
}

/// Collects the context's diagnostics into a string while alive.
/// Takes this thread's diagnostics only (calls on other threads have their
/// own collectors); `compiling` also takes those of the pass manager's
/// worker threads (kiln/Support/ThreadDiagnostics.h).
struct DiagnosticCollector {
  DiagnosticCollector(MLIRContext *ctx, std::string &out,
                      bool compiling = true)
      : handler(ctx, [&out](Diagnostic &d) {
          llvm::raw_string_ostream os(out);
          if (!out.empty())
            os << "\n";
          Location loc = d.getLocation();
          if (auto fl = dyn_cast<FileLineColLoc>(loc))
            os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
               << fl.getColumn() << ": ";
          os << d.str();
          for (Diagnostic &note : d.getNotes())
            os << " (note: " << note.str() << ")";
        }, /*takeUnowned=*/compiling) {}
  ThreadDiagnosticHandler handler;
};

/// Times each pass into a stats map.
struct PassTimer : public PassInstrumentation {
  explicit PassTimer(std::map<std::string, double> &seconds)
      : seconds(seconds) {}
  void runBeforePass(Pass *, Operation *) override {
    starts.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *) override { stop(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { stop(pass); }
  void stop(Pass *pass) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             starts.back())
                   .count();
    starts.pop_back();
    StringRef name = pass->getArgument();
    seconds[name.empty() ? pass->getName().str() : name.str()] += s;
  }
  std::map<std::string, double> &seconds;
  std::vector<std::chrono::steady_clock::time_point> starts;
};

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

} // namespace

//===----------------------------------------------------------------------===//
// The cpu backend
//===----------------------------------------------------------------------===//

/// Whether the last top-level element of `pipeline` is `kiln-cpu` or
/// `kiln-cpu{...}`; if so, `host` gets the elements before it (kiln-eager
/// when there are none) and `graph` that last element.
static bool splitCPUPipeline(StringRef pipeline, std::string &host,
                             std::string &graph) {
  int depth = 0;
  size_t lastComma = StringRef::npos;
  for (size_t i = 0; i < pipeline.size(); ++i) {
    char c = pipeline[i];
    if (c == '{' || c == '(')
      ++depth;
    else if (c == '}' || c == ')')
      --depth;
    else if (c == ',' && depth == 0)
      lastComma = i;
  }
  StringRef last = lastComma == StringRef::npos
                       ? pipeline
                       : pipeline.substr(lastComma + 1);
  last = last.trim();
  if (!last.consume_front("kiln-cpu") ||
      !(last.empty() || last.starts_with("{")))
    return false;
  graph = (lastComma == StringRef::npos ? pipeline
                                        : pipeline.substr(lastComma + 1))
              .trim()
              .str();
  host = lastComma == StringRef::npos
             ? "kiln-eager"
             : pipeline.substr(0, lastComma).trim().str();
  return true;
}


/// Compiles the graph functions called by `program` (outlining inline graphs
/// first) with `pipeline` into one JIT module. Graph functions with no
/// results and no ref arguments have nothing to compute and stay in the
/// interpreter; a graph with ref arguments is compiled in its value form
/// (CPUExecutable: kiln::buildValueForm), kept under the graph's name. When the
/// compile fails and `fallback` is set, each graph is compiled on its own and
/// the ones that fail run in the interpreter, with a warning each.
static FailureOr<std::unique_ptr<KernelMap>>
compileGraphs(ModuleOp module, kg::ProgramOp &program, StringRef pipeline,
              const std::string &cacheDir, bool fallback, const std::function<void(StringRef)> &warn,
              ProgramStats &stats, std::string &error) {
  StringRef name = program.getSymName();
  bool hasInline = false;
  program.walk([&](kg::GraphOp g) { hasInline |= !g.isOutlined(); });
  if (hasInline) {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    pm.addPass(createKilnOutlineGraphsPass());
    DiagnosticCollector diags(module.getContext(), error);
    if (failed(pm.run(module))) {
      error = "outlining the graphs of @" + name.str() + " failed: " + error;
      return failure();
    }
    program = module.lookupSymbol<kg::ProgramOp>(name);
  }
  std::vector<std::string> graphs;
  llvm::StringSet<> seen;
  program.walk([&](kg::GraphOp g) {
    auto fn = module.lookupSymbol<func::FuncOp>(g.getCallee());
    if (!fn || !seen.insert(g.getCallee()).second)
      return;
    bool refs = llvm::any_of(fn.getArgumentTypes(), [](Type t) {
      return isa<kt::RefType>(t);
    });
    if (!fn.getNumResults() && !refs)
      return;
    graphs.push_back(g.getCallee().str());
  });
  auto kernels = std::make_unique<KernelMap>();
  if (graphs.empty())
    return kernels;
  cpu::CompileTimes times;
  auto compile = [&](ArrayRef<std::string> fns, std::string &err) {
    cpu::CompileTimes t;
    auto exes = cpu::CPUExecutable::compileAll(module, fns, pipeline, err, &t,
                                               cacheDir);
    times.pipeline += t.pipeline;
    times.jit += t.jit;
    stats.diskCacheHits += t.diskHit;
    stats.diskCacheMisses += t.diskMiss;
    stats.diskCacheBytesRead += t.diskBytesRead;
    stats.diskCacheBytesWritten += t.diskBytesWritten;
    if (succeeded(exes))
      for (auto [fn, exe] : llvm::zip(fns, *exes))
        (*kernels)[fn] = std::move(exe);
    return succeeded(exes);
  };
  std::string err;
  bool ok = compile(graphs, err);
  if (!ok && !fallback) {
    error = "compiling @" + name.str() + " for the cpu backend failed: " + err;
    return failure();
  }
  if (!ok)
    for (const std::string &g : graphs) {
      std::string one;
      if (!compile({g}, one)) {
        ++stats.cpuGraphsInterpreted;
        warn("@" + name.str() + ": graph @" + g +
             " runs in the interpreter (cpu_fallback = eager): " + one);
      }
    }
  stats.cpuGraphsCompiled += kernels->size();
  stats.compileSeconds["kiln-cpu"] += times.pipeline;
  stats.compileSeconds["jit"] += times.jit;
  return kernels;
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

struct Session::Impl {
  struct Entry {
    OwningOpRef<ModuleOp> module;
    kg::ProgramOp program;
    CompiledGuards guards;
    /// cpu backend: the compiled graph functions (graphs not here run in
    /// the interpreter).
    std::unique_ptr<KernelMap> kernels;
    /// The results of its kg.constant_graph ops (constant_args).
    std::shared_ptr<ConstantMemo> memo = std::make_shared<ConstantMemo>();
  };
  struct ProgramState {
    /// Shared: a running call keeps its entry alive.
    std::vector<std::shared_ptr<Entry>> entries;
    ProgramStats stats;
    /// Per argument and dim: the size first seen, and whether it changed.
    std::vector<SmallVector<int64_t>> firstSizes;
    std::vector<SmallVector<bool>> changed;
    /// (arg, dim) -> true for mark_dynamic, false for mark_static.
    std::map<std::pair<unsigned, unsigned>, bool> marks;
    /// The program in the loaded module (looked up on the first call).
    kg::ProgramOp original;
    /// The most general entry (every dim dynamic), made on the first fallback
    /// the loaded program cannot take itself; not counted in the cache.
    std::shared_ptr<Entry> fallback;
    /// The constant arguments' addresses (and indices) at the last call
    /// (constant_args).
    std::vector<std::pair<const void *, int64_t>> constantAddresses;
    bool constantsSeen = false;
  };

  explicit Impl(DialectRegistry &registry) : context(registry) {
    context.loadAllAvailableDialects();
  }

  MLIRContext context;
  /// Guards everything below and the Session's options and callbacks
  /// (recursive: warning and miss callbacks run with it held and may query
  /// the session).
  std::recursive_mutex mutex;
  /// Shared: a running call keeps the module it runs on alive.
  std::shared_ptr<OwningOpRef<ModuleOp>> module;
  /// Copied on write: a running call keeps the map it started with.
  std::shared_ptr<const llvm::StringMap<HostCallback>> callbacks =
      std::make_shared<llvm::StringMap<HostCallback>>();
  /// Hashed by name: looked up on every call. Shared: a running call keeps
  /// its program's state.
  llvm::StringMap<std::shared_ptr<ProgramState>> programs;

  /// The state of `program` (made on first use). Hold `mutex`.
  std::shared_ptr<ProgramState> stateOf(StringRef program) {
    auto &state = programs[program];
    if (!state)
      state = std::make_shared<ProgramState>();
    return state;
  }
};

static DialectRegistry makeRegistry() {
  DialectRegistry registry;
  registry.insert<kt::KTDialect, kg::KGDialect, func::FuncDialect,
                  arith::ArithDialect, scf::SCFDialect, tensor::TensorDialect>();
  interp::registerInterpreterInterfaces(registry);
  // kiln-cpu's and the JIT's dialects too, all loaded when the session is
  // made (~7 ms): loading a dialect into a context that other threads use
  // (a call running while setOption("backend", "cpu") loaded them) is a
  // data race in MLIR; after construction the session's dialects never
  // change.
  cpu::registerCPUBackendDialects(registry);
  return registry;
}

Session::Session() {
  static std::once_flag registerPasses;
  std::call_once(registerPasses, [] {
    mlir::registerTransformsPasses();
    kiln::registerKilnPasses(); // kiln-* passes and the kiln-eager pipeline
    kiln::registerKilnConversionPasses();
    kiln::registerKilnCPUPipeline();
  });
  DialectRegistry registry = makeRegistry();
  impl = std::make_unique<Impl>(registry);
  warn = [](StringRef msg) { llvm::errs() << "kiln: warning: " << msg << "\n"; };
  if (const char *dir = std::getenv("KILN_REPRO_DIR"))
    opts.reproDir = dir;
  opts.cacheDir = cpu::diskCacheDirectory(std::nullopt);
  if (const char *v = std::getenv("KILN_CHECK_ACCURACY"))
    opts.checkAccuracy = *v && StringRef(v) != "0";
}

Session::~Session() = default;

MLIRContext *Session::getContext() { return &impl->context; }

std::recursive_mutex &Session::mutex() const { return impl->mutex; }

void Session::setMissCallback(MissCallback callback) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  onMiss = std::move(callback);
}

void Session::setWarningHandler(std::function<void(StringRef)> handler) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  warn = std::move(handler);
}

OwningOpRef<ModuleOp> parseModuleText(MLIRContext &context, StringRef text,
                                      StringRef bufferName) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// Parses `text` (named `bufferName` in locations) into a module; on
/// failure `error` says why (the collected diagnostics, else a fallback).
static OwningOpRef<ModuleOp> parseModuleText(MLIRContext &context,
                                             StringRef text,
                                             StringRef bufferName,
                                             std::string &error) {
  OwningOpRef<ModuleOp> module =
      kiln::runtime::parseModuleText(context, text, bufferName);
  if (!module && error.empty())
    error = "cannot parse '" + bufferName.str() + "'";
  return module;
}

LogicalResult Session::loadModule(StringRef text, StringRef bufferName,
                                  std::string &error) {
  error.clear();
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  DiagnosticCollector diags(&impl->context, error);
  OwningOpRef<ModuleOp> module =
      parseModuleText(impl->context, text, bufferName, error);
  if (!module)
    return failure();
  impl->module = std::make_shared<OwningOpRef<ModuleOp>>(std::move(module));
  impl->programs.clear();
  return success();
}

LogicalResult Session::transformModule(StringRef text, StringRef bufferName,
                                       StringRef pipeline, std::string &out,
                                       std::string &error) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  error.clear();
  out.clear();
  DiagnosticCollector diags(&impl->context, error);
  OwningOpRef<ModuleOp> module =
      parseModuleText(impl->context, text, bufferName, error);
  if (!module)
    return failure();
  StringRef passes = pipeline.trim();
  if (passes.consume_front("builtin.module(")) {
    if (!passes.consume_back(")")) {
      error = "invalid pipeline '" + pipeline.str() + "': unbalanced '('";
      return failure();
    }
  }
  PassManager pm(&impl->context, ModuleOp::getOperationName());
  std::string msg;
  if (failed(kiln::parsePipelineCatchingFatalErrors(passes, pm, msg))) {
    error = "invalid pipeline '" + pipeline.str() + "': " + msg;
    return failure();
  }
  if (failed(pm.run(*module))) {
    if (error.empty())
      error = "pipeline '" + pipeline.str() + "' failed";
    return failure();
  }
  llvm::raw_string_ostream printed(out);
  module->print(printed, OpPrintingFlags().enableDebugInfo());
  return success();
}

LogicalResult Session::loadModuleFile(StringRef path, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read '" + path.str() + "': " + buf.getError().message();
    return failure();
  }
  return loadModule((*buf)->getBuffer(), path, error);
}

LogicalResult Session::setOption(StringRef key, StringRef value,
                                 std::string &error) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  if (key == "backend") {
    if (value != "eager" && value != "interpreter" && value != "cpu") {
      error = "unknown backend '" + value.str() +
              "' (available: eager, interpreter, cpu)";
      return failure();
    }
    std::string host, graph;
    if (value != "cpu" && splitCPUPipeline(opts.pipeline, host, graph)) {
      error = "backend '" + value.str() + "' conflicts with pipeline '" +
              opts.pipeline + "', which selects the cpu backend";
      return failure();
    }
    opts.backend = value == "cpu" ? "cpu" : "eager";
  } else if (key == "cpu_fallback") {
    if (value != "error" && value != "eager") {
      error = "cpu_fallback must be error or eager, got '" + value.str() + "'";
      return failure();
    }
    opts.cpuFallback = value.str();
  } else if (key == "pipeline") {
    // Validate now, so a typo fails here and not at the first call.
    PassManager pm(&impl->context, ModuleOp::getOperationName());
    std::string msg;
    if (!value.empty() &&
        failed(kiln::parsePipelineCatchingFatalErrors(value, pm, msg))) {
      error = "invalid pipeline '" + value.str() + "': " + msg;
      return failure();
    }
    opts.pipeline = value.str();
    std::string host, graph;
    if (splitCPUPipeline(opts.pipeline, host, graph)) {
      opts.backend = "cpu";
    }
  } else if (key == "cache_size_limit") {
    unsigned v;
    if (value.getAsInteger(10, v) || v == 0) {
      error = "cache_size_limit must be a positive integer, got '" +
              value.str() + "'";
      return failure();
    }
    opts.cacheSizeLimit = v;
  } else if (key == "frozen") {
    if (value != "true" && value != "false") {
      error = "frozen must be true or false, got '" + value.str() + "'";
      return failure();
    }
    opts.frozen = value == "true";
  } else if (key == "constant_args") {
    std::vector<unsigned> indices;
    SmallVector<StringRef> parts;
    value.split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts) {
      unsigned v;
      if (part.trim().getAsInteger(10, v)) {
        error = "constant_args must be a comma-separated list of argument "
                "indices, got '" +
                value.str() + "'";
        return failure();
      }
      indices.push_back(v);
    }
    opts.constantArgs = std::move(indices);
    // Setting it (again) says the contents may have changed.
    constantMemoryChanged();
  } else if (key == "dynamic") {
    if (value == "auto")
      opts.dynamic = DynamicMode::Auto;
    else if (value == "static")
      opts.dynamic = DynamicMode::Static;
    else if (value == "dynamic")
      opts.dynamic = DynamicMode::Dynamic;
    else {
      error = "dynamic must be auto, static or dynamic, got '" + value.str() +
              "'";
      return failure();
    }
  } else if (key == "repro_dir") {
    opts.reproDir = value.str();
  } else if (key == "cache_dir") {
    opts.cacheDir = cpu::diskCacheDirectory(value.str());
  } else if (key == "check_accuracy") {
    if (value != "true" && value != "false") {
      error = "check_accuracy must be true or false, got '" + value.str() +
              "'";
      return failure();
    }
    opts.checkAccuracy = value == "true";
  } else {
    error = "unknown option '" + key.str() +
            "' (options: backend, pipeline, cache_size_limit, frozen, "
            "dynamic, cpu_fallback, repro_dir, check_accuracy, cache_dir, "
            "constant_args)";
    return failure();
  }
  return success();
}

void Session::registerHostCallback(StringRef name, HostCallback callback) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  auto copy = std::make_shared<llvm::StringMap<HostCallback>>(*impl->callbacks);
  (*copy)[name] = std::move(callback);
  impl->callbacks = std::move(copy);
}

void Session::markDynamic(StringRef program, unsigned arg, unsigned dim) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  impl->stateOf(program)->marks[{arg, dim}] = true;
}

void Session::markStatic(StringRef program, unsigned arg, unsigned dim) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  impl->stateOf(program)->marks[{arg, dim}] = false;
}

const ProgramStats *Session::stats(StringRef program) const {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  auto it = impl->programs.find(program);
  return it == impl->programs.end() ? nullptr : &it->second->stats;
}

std::vector<std::string> Session::calledPrograms() const {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  std::vector<std::string> names;
  for (auto &entry : impl->programs)
    if (entry.second->stats.calls)
      names.push_back(entry.first().str());
  llvm::sort(names);
  return names;
}

std::vector<std::string> Session::entryIR(StringRef program) const {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  std::vector<std::string> out;
  auto it = impl->programs.find(program);
  if (it == impl->programs.end())
    return out;
  for (auto &entry : it->second->entries) {
    std::string s;
    llvm::raw_string_ostream os(s);
    entry->program->print(os);
    // The entry's functions too (outlined graphs are specialized with it), so
    // the text is a complete module.
    for (auto fn : entry->module->getOps<func::FuncOp>()) {
      os << "\n";
      fn->print(os);
    }
    out.push_back(s);
  }
  return out;
}

int Session::lookup(StringRef program, ArrayRef<ArgView> args) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  auto it = impl->programs.find(program);
  if (it == impl->programs.end())
    return -1;
  auto &entries = it->second->entries;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i]->guards.check(args, opts.backend))
      return (int)i;
  return -1;
}

/// KILN_LOGS=recompiles: the miss of a program that has entries; with
/// +recompiles, why each entry rejected the call.
template <typename Entries>
static void logRecompile(StringRef name, const Entries &entries,
                         ArrayRef<ArgView> args, StringRef backend,
                         StringRef reason) {
  if (!logs::enabled(logs::Topic::Recompiles))
    return;
  std::string msg;
  llvm::raw_string_ostream os(msg);
  os << "Recompiling @" << name << " (" << entries.size()
     << (entries.size() == 1 ? " cache entry" : " cache entries")
     << "), triggered by: " << reason;
  if (logs::enabled(logs::Topic::Recompiles, logs::Level::Verbose))
    for (auto [i, e] : llvm::enumerate(entries))
      os << "\n  entry " << i << ": "
         << e->guards.failureReason(args, backend);
  logs::log(logs::Topic::Recompiles, msg);
}

/// KILN_LOGS=graph_breaks: the breaks of a program compiled for the first
/// time (as TorchDynamo logs them when it captures the frame).
static void logGraphBreaks(kg::ProgramOp program) {
  if (!logs::enabled(logs::Topic::GraphBreaks))
    return;
  unsigned n = 0;
  std::string msg;
  llvm::raw_string_ostream os(msg);
  forEachGraphBreak(program, [&](Operation *op, StringRef reason) {
    // The user's frames, innermost first (as explain() prints them).
    SmallVector<std::string> stack = formatLocationStack(op->getLoc());
    os << (n++ ? "\n" : "") << "Graph break in @" << program.getSymName()
       << " at " << stack.front() << ": " << reason;
    for (size_t i = 1; i < stack.size(); ++i)
      os << "\n  from " << stack[i];
  });
  if (n)
    logs::log(logs::Topic::GraphBreaks, msg);
}

/// KILN_LOGS=guards, graph, codegen, perf for a new entry.
static void logNewEntry(StringRef name, int64_t index, ModuleOp module,
                        kg::ProgramOp program, const CompiledGuards &guards,
                        const llvm::StringMap<
                            std::unique_ptr<cpu::CPUExecutable>> *kernels,
                        double seconds,
                        const std::map<std::string, double> &before,
                        const std::map<std::string, double> &after) {
  using logs::Topic;
  std::string entry = ("@" + name + " entry " + Twine(index)).str();
  if (logs::enabled(Topic::Guards))
    logs::log(Topic::Guards, "GUARDS " + entry + ":\n" + guards.describe());
  if (logs::enabled(Topic::Graph)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (logs::enabled(Topic::Graph, logs::Level::Verbose))
      module.print(os);
    else
      program.print(os);
    logs::log(Topic::Graph, "GRAPH " + entry + ":\n" + text);
  }
  if (kernels && logs::enabled(Topic::Codegen)) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << entry << ": " << kernels->size()
       << " graph function(s) compiled for the cpu backend";
    SmallVector<StringRef> names;
    for (const auto &k : *kernels)
      names.push_back(k.getKey());
    llvm::sort(names);
    for (StringRef n : names)
      os << "\n  @" << n;
    logs::log(Topic::Codegen, msg);
  }
  if (logs::enabled(Topic::Perf)) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << entry << " compiled in " << llvm::format("%.3f", seconds) << " s";
    for (const auto &[phase, total] : after) {
      auto it = before.find(phase);
      double d = total - (it == before.end() ? 0.0 : it->second);
      if (d >= 0.0005 || logs::enabled(Topic::Perf, logs::Level::Verbose))
        os << "\n  " << phase << ": " << llvm::format("%.3f", d) << " s";
    }
    logs::log(Topic::Perf, msg);
  }
}

FailureOr<SmallVector<Tensor>> Session::call(StringRef name,
                                             ArrayRef<ArgView> args,
                                             std::string &error) {
  FailureOr<SmallVector<Tensor>> results = callImpl(name, args, error);
  if (failed(results))
    writeReproOf(name, args, error);
  return results;
}

void Session::writeReproOf(StringRef name, ArrayRef<ArgView> args,
                           std::string &error) {
  std::lock_guard<std::recursive_mutex> lock(impl->mutex);
  if (opts.reproDir.empty() || !impl->module ||
      !(*impl->module)->lookupSymbol<kg::ProgramOp>(name))
    return;
  if (reprosWritten >= kMaxRepros) {
    if (reprosWritten++ == kMaxRepros)
      warn(("no more reproducers written in " + opts.reproDir + " (" +
            Twine(kMaxRepros) + " per session)")
               .str());
    return;
  }
  ++reprosWritten;
  llvm::Expected<std::string> dir = writeRepro(
      opts.reproDir, **impl->module, name, args, opts, error);
  if (!dir) {
    warn(("cannot write a reproducer of the failed call of @" + name + ": " +
          llvm::toString(dir.takeError()))
             .str());
    return;
  }
  error += "\n(a reproducer of this failure is in " + *dir + ": run " +
           *dir + "/repro.sh)";
}

FailureOr<SmallVector<Tensor>> Session::callImpl(StringRef name,
                                                 ArrayRef<ArgView> args,
                                                 std::string &error) {
  error.clear();
  // Held while looking up the entry and while compiling; released while the
  // program runs (see Session.h).
  std::unique_lock<std::recursive_mutex> lock(impl->mutex);
  if (!impl->module) {
    error = "no module loaded";
    return failure();
  }
  // Kept alive by this call, whatever other threads load meanwhile.
  std::shared_ptr<OwningOpRef<ModuleOp>> loaded = impl->module;
  std::shared_ptr<Impl::ProgramState> statePtr =
      impl->stateOf(name);
  Impl::ProgramState &state = *statePtr;
  if (!state.original)
    state.original = (*loaded)->lookupSymbol<kg::ProgramOp>(name);
  kg::ProgramOp original = state.original;
  if (!original) {
    impl->programs.erase(name);
    error = "no kg.program named '" + name.str() + "' in the module";
    return failure();
  }
  ProgramStats &stats = state.stats;
  ++stats.calls;

  // Which arguments share memory (see Aliasing.h): ref arguments that do run
  // on one buffer; a plain tensor sharing memory with a ref is refused.
  SmallVector<bool> isRef;
  std::vector<std::string> argNames;
  for (auto [i, type] : llvm::enumerate(original.getArgumentTypes())) {
    isRef.push_back(isa<kt::RefType>(type));
    argNames.push_back(original.getArgSourceName(i));
  }
  ArgAliasing aliasing;
  if (args.size() == isRef.size()) {
    if (failed(analyzeAliasing(args, isRef, argNames, aliasing, error)))
      return failure();
  } else {
    for (unsigned i = 0; i < args.size(); ++i) {
      aliasing.leader.push_back(i);
      aliasing.identical.push_back(true);
    }
  }

  // Runs without the lock; `keep` (the entry, or null for the loaded
  // module) stays alive until the run ends.
  auto run = [&](std::shared_ptr<Impl::Entry> keep, ModuleOp module,
                 kg::ProgramOp program,
                 const KernelMap *kernels) -> FailureOr<SmallVector<Tensor>> {
    std::shared_ptr<const llvm::StringMap<HostCallback>> callbacks =
        impl->callbacks;
    bool checkAccuracy = opts.checkAccuracy;
    std::vector<unsigned> constantArgs = opts.constantArgs;
    // Row-major ref arguments run in the caller's memory (bindArguments),
    // except when a failed call writes a reproducer: that one must see the
    // call's inputs, so refs are copied and written back only on success.
    bool borrowRefs = opts.reproDir.empty();
    lock.unlock();
    trace::Scope scope(
        trace::enabled() ? ("call @" + name).str() : std::string(), "run");
    SmallVector<bool> refs;
    for (Type type : program.getArgumentTypes())
      refs.push_back(isa<kt::RefType>(type));
    SmallVector<bool> borrowed;
    FailureOr<SmallVector<Tensor>> bound = bindArguments(
        args, aliasing, refs, program.getSymName(), borrowed, error,
        borrowRefs);
    if (failed(bound))
      return failure();
    SmallVector<Tensor> &tensors = *bound;
    // constant_args: the memory of those the program reads in place; a
    // program's first call, or one with another address, starts a new
    // constant epoch.
    CallConstants constants;
    if (!constantArgs.empty()) {
      SmallVector<std::pair<const void *, int64_t>> addresses;
      for (unsigned i : constantArgs) {
        if (i >= args.size() || refs[i])
          continue;
        addresses.push_back({args[i].data, (int64_t)i});
        if (borrowed[i] && tensors[i].numel())
          constants.memory.push_back(
              {tensors[i].data(), (int64_t)tensors[i].byteSize()});
      }
      std::lock_guard<std::recursive_mutex> relock(impl->mutex);
      if (!state.constantsSeen ||
          !llvm::equal(addresses, state.constantAddresses)) {
        constantMemoryChanged();
        state.constantAddresses.assign(addresses.begin(), addresses.end());
        state.constantsSeen = true;
      }
      constants.memo = keep ? keep->memo.get() : nullptr;
      constants.epoch = constantEpoch.load();
    }
    uint64_t kernelCalls = 0;
    FailureOr<SmallVector<Tensor>> results = [&] {
      DiagnosticCollector diags(&impl->context, error, /*compiling=*/false);
      return runProgram(module, program, tensors, *callbacks, kernels,
                        &kernelCalls, checkAccuracy, constants);
    }();
    if (kernelCalls || constants.runs || constants.reuses) {
      std::lock_guard<std::recursive_mutex> relock(impl->mutex);
      stats.cpuGraphCalls += kernelCalls;
      stats.constantGraphRuns += constants.runs;
      stats.constantGraphReuses += constants.reuses;
    }
    if (failed(results))
      return results;
    // A result over a borrowed argument's memory (returned as it is, or
    // reshaped, by the interpreter) gets its own copy.
    if (failed(detachFromBorrowed(*results, tensors, borrowed, error)))
      return failure();
    // Nor may a caller get kept results' memory.
    if (!constants.kept.empty()) {
      SmallVector<bool> all(constants.kept.size(), true);
      if (failed(detachFromBorrowed(*results, constants.kept, all, error)))
        return failure();
    }
    // Ref arguments (mutated inputs, e.g. parameters an optimizer step
    // updates): the interpreter wrote into the copies; write them back into
    // the caller's buffers, in place (borrowed refs were written there
    // directly).
    writeBackRefs(tensors, args, refs, borrowed);
    return results;
  };

  // Hot path: the first entry whose guards hold.
  // Which entry ran is recorded for the calling thread (lastEntryOfThread)
  // and, under the lock, in the stats (the last call to finish).
  auto noteEntry = [&](int64_t index) {
    setLastEntryOfThread(&stats, index);
    std::lock_guard<std::recursive_mutex> relock(impl->mutex);
    stats.lastEntry = index;
  };
  noteEntry(-1);
  for (auto [index, entry] : llvm::enumerate(state.entries))
    if (entry->guards.check(args, opts.backend)) {
      ++stats.hits;
      FailureOr<SmallVector<Tensor>> results =
          run(entry, *entry->module, entry->program, entry->kernels.get());
      if (succeeded(results))
        noteEntry(index);
      return results;
    }

  ++stats.misses;
  std::string reason;
  if (!state.entries.empty())
    reason = state.entries.back()->guards.failureReason(args, opts.backend);
  if (!reason.empty())
    stats.recompileReasons.push_back(reason);
  if (!state.entries.empty())
    logRecompile(name, state.entries, args, opts.backend, reason);

  // Automatic dynamic: remember sizes; a dim that changed becomes dynamic.
  unsigned numArgs = args.size();
  state.firstSizes.resize(numArgs);
  state.changed.resize(numArgs);
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!args[i].isTensor)
      continue;
    auto &first = state.firstSizes[i];
    auto &changed = state.changed[i];
    if (first.size() != args[i].shape.size()) {
      // First call, or a rank change: start again from static dims.
      first.assign(args[i].shape.begin(), args[i].shape.end());
      changed.assign(first.size(), false);
      continue;
    }
    for (unsigned d = 0; d < first.size(); ++d)
      if (first[d] != args[i].shape[d])
        changed[d] = true;
  }

  bool limitReached = state.entries.size() >= opts.cacheSizeLimit;
  if (opts.frozen || limitReached) {
    if (limitReached && !opts.frozen && !stats.limitWarned) {
      stats.limitWarned = true;
      std::string msg;
      llvm::raw_string_ostream os(msg);
      os << "@" << name << " reached cache_size_limit ("
         << opts.cacheSizeLimit
         << "); it will not be recompiled and runs in the interpreter from "
            "now on. Recompile reasons:";
      for (auto [i, r] : llvm::enumerate(stats.recompileReasons))
        os << "\n  " << i + 1 << ". " << r;
      if (logs::enabled(logs::Topic::Recompiles))
        logs::log(logs::Topic::Recompiles, msg);
      warn(msg);
    }
    ++stats.fallbacks;
    // Fallback: the loaded program itself when it takes these inputs, else
    // the most general entry (every dim dynamic), made once and reused while
    // its guards hold.
    bool accepts = original.getArgumentTypes().size() == numArgs;
    for (unsigned i = 0; accepts && i < numArgs; ++i)
      accepts = viewMatchesType(args[i], original.getArgumentTypes()[i]);
    if (accepts)
      return run(nullptr, **loaded, original, nullptr);
    if (!state.fallback || !state.fallback->guards.check(args, opts.backend)) {
      OwningOpRef<ModuleOp> clone = (*loaded)->clone();
      auto program = clone->lookupSymbol<kg::ProgramOp>(name);
      SmallVector<SmallVector<bool>> allDynamic;
      for (const ArgView &a : args)
        allDynamic.emplace_back(a.shape.size(), true);
      if (failed(specializeProgram(program, args, allDynamic, opts.backend,
                                   error)))
        return failure();
      FailureOr<CompiledGuards> guards =
          CompiledGuards::compile(program, args, error);
      if (failed(guards))
        return failure();
      state.fallback = std::make_shared<Impl::Entry>(
          Impl::Entry{std::move(clone), program, std::move(*guards), nullptr});
    }
    std::shared_ptr<Impl::Entry> fallback = state.fallback;
    return run(fallback, *fallback->module, fallback->program, nullptr);
  }

  // Compile a new entry.
  auto start = std::chrono::steady_clock::now();
  trace::Scope compileScope(("compile @" + name).str(), "compile");
  compileScope.arg("entry", std::to_string(state.entries.size()));
  if (!reason.empty())
    compileScope.arg("reason", reason);
  std::map<std::string, double> secondsBefore = stats.compileSeconds;
  if (state.entries.empty())
    logGraphBreaks(original);
  OwningOpRef<ModuleOp> entryModule;
  if (onMiss) {
    std::string text, missError;
    if (failed(onMiss(name, args, reason, text, missError))) {
      error = "on-miss callback failed for @" + name.str() + ": " + missError;
      return failure();
    }
    DiagnosticCollector diags(&impl->context, error);
    entryModule = kiln::runtime::parseModuleText(impl->context, text,
                                                 "on-miss:" + name.str());
    if (!entryModule) {
      error = "on-miss callback returned invalid IR for @" + name.str() +
              ": " + error;
      return failure();
    }
  } else {
    entryModule = (*loaded)->clone();
  }
  auto program = entryModule->lookupSymbol<kg::ProgramOp>(name);
  if (!program) {
    error = "the module for the new entry has no kg.program @" + name.str();
    return failure();
  }

  // Which dims are dynamic.
  SmallVector<SmallVector<bool>> dynamicDims(numArgs);
  llvm::DenseMap<unsigned, kg::GuardTensorOp> guards;
  for (auto g : original.getBody().front().getOps<kg::GuardTensorOp>())
    guards[cast<BlockArgument>(g.getInput()).getArgNumber()] = g;
  // Symbolic dims of a kg.guard_shape_relation these inputs violate stay
  // static in the new entry (the relation is dropped there): a dynamic entry
  // would reject the very inputs it was compiled for.
  llvm::StringMap<SmallVector<std::pair<unsigned, unsigned>>> symbolDims;
  for (auto [i, g] : guards)
    for (auto [d, e] : llvm::enumerate(g.getShape()))
      if (auto sym = dyn_cast<StringAttr>(e))
        if (i < numArgs && args[i].isTensor && d < args[i].shape.size())
          symbolDims[sym.getValue()].push_back({i, (unsigned)d});
  std::set<std::pair<unsigned, unsigned>> forcedStatic;
  // So do dims that share a symbol but differ in size in this call.
  for (auto &[sym, dims] : symbolDims)
    for (auto [a, d] : dims)
      if (args[a].shape[d] != args[dims.front().first].shape[dims.front().second])
        forcedStatic.insert(dims.begin(), dims.end());
  for (auto rel : original.getBody().front().getOps<kg::GuardShapeRelationOp>()) {
    std::string parseError;
    std::optional<kg::ShapeRelation> r =
        kg::parseShapeRelation(rel.getRelation(), parseError);
    if (!r)
      continue;
    SmallVector<std::pair<unsigned, unsigned>> involved;
    auto value = [&](const kg::ShapeRelation::Term &t, int64_t &v) {
      auto *name = std::get_if<std::string>(&t);
      if (!name) {
        v = std::get<int64_t>(t);
        return true;
      }
      auto it = symbolDims.find(*name);
      if (it == symbolDims.end())
        return false;
      auto [a, d] = it->second.front();
      v = args[a].shape[d];
      involved.append(it->second.begin(), it->second.end());
      return true;
    };
    int64_t l, rv;
    if (value(r->lhs, l) && value(r->rhs, rv) && !r->holds(l, rv))
      forcedStatic.insert(involved.begin(), involved.end());
  }
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!args[i].isTensor)
      continue;
    for (unsigned d = 0; d < args[i].shape.size(); ++d) {
      bool dyn;
      auto mark = state.marks.find({i, d});
      if (forcedStatic.count({i, d}))
        dyn = false;
      else if (mark != state.marks.end())
        dyn = mark->second;
      else if (opts.dynamic == DynamicMode::Static)
        dyn = false;
      else if (opts.dynamic == DynamicMode::Dynamic)
        dyn = true;
      else {
        kg::GuardTensorOp g = guards.lookup(i);
        bool symbolic = g && d < g.getShape().size() &&
                        isa<StringAttr>(g.getShape()[d]);
        dyn = symbolic || state.changed[i][d];
      }
      dynamicDims[i].push_back(dyn);
    }
  }
  // An argument that is the same tensor as another is specialized like it
  // (its uses become the other's below).
  for (unsigned i = 0; i < numArgs && i < aliasing.leader.size(); ++i)
    if (aliasing.leader[i] != i && aliasing.identical[i])
      dynamicDims[i] = dynamicDims[aliasing.leader[i]];
  if (failed(specializeProgram(program, args, dynamicDims, opts.backend,
                               error)))
    return failure();
  if (failed(specializeForAliasing(program, aliasing, error))) {
    error = "cannot compile @" + name.str() + " for these inputs: " + error;
    return failure();
  }
  stats.compileSeconds["specialize"] += secondsSince(start);

  // The cpu backend: the host part of the pipeline runs on the program,
  // then its graph functions are compiled.
  std::string hostPipeline = opts.pipeline, graphPipeline;
  bool cpuBackend = opts.backend == "cpu";
  if (cpuBackend && !splitCPUPipeline(opts.pipeline, hostPipeline,
                                      graphPipeline))
    graphPipeline = "kiln-cpu";
  if (!hostPipeline.empty()) {
    PassManager pm(&impl->context, ModuleOp::getOperationName());
    std::string msg;
    if (failed(kiln::parsePipelineCatchingFatalErrors(hostPipeline, pm, msg))) {
      error = "invalid pipeline '" + hostPipeline + "': " + msg;
      return failure();
    }
    pm.addInstrumentation(std::make_unique<PassTimer>(stats.compileSeconds));
    trace::instrument(pm);
    DiagnosticCollector diags(&impl->context, error);
    if (failed(pm.run(*entryModule))) {
      error = "compiling @" + name.str() + " failed: " + error;
      return failure();
    }
    program = entryModule->lookupSymbol<kg::ProgramOp>(name);
  }
  if (!opts.constantArgs.empty()) {
    auto hoistStart = std::chrono::steady_clock::now();
    SymbolTable symbols(*entryModule);
    if (failed(hoistConstantGraphs(program, opts.constantArgs, symbols))) {
      error = "compiling @" + name.str() + " failed: " + error;
      return failure();
    }
    stats.compileSeconds["kiln-hoist-constants"] += secondsSince(hoistStart);
  }
  std::unique_ptr<KernelMap> kernels;
  if (cpuBackend) {
    FailureOr<std::unique_ptr<KernelMap>> k =
        compileGraphs(*entryModule, program, graphPipeline, opts.cacheDir,
                      opts.cpuFallback == "eager", warn, stats, error);
    if (failed(k))
      return failure();
    kernels = std::move(*k);
  }

  auto guardStart = std::chrono::steady_clock::now();
  FailureOr<CompiledGuards> compiled =
      CompiledGuards::compile(program, args, error);
  if (failed(compiled))
    return failure();
  stats.compileSeconds["compile-guards"] += secondsSince(guardStart);
  if (!compiled->check(args, opts.backend)) {
    error = "internal error: the new entry's guards reject the inputs it was "
            "compiled for: " +
            compiled->failureReason(args, opts.backend);
    return failure();
  }
  ++stats.compiles;
  double seconds = secondsSince(start);
  stats.totalCompileSeconds += seconds;
  auto entry = std::make_shared<Impl::Entry>(
      Impl::Entry{std::move(entryModule), program, std::move(*compiled),
                  std::move(kernels)});
  state.entries.push_back(entry);
  int64_t index = state.entries.size() - 1;
  logNewEntry(name, index, *entry->module, entry->program, entry->guards,
              entry->kernels.get(), seconds, secondsBefore,
              stats.compileSeconds);
  FailureOr<SmallVector<Tensor>> results =
      run(entry, *entry->module, entry->program, entry->kernels.get());
  if (succeeded(results))
    noteEntry(index);
  return results;
}

} // namespace kiln::runtime
