//===- kiln-reduce.cpp - Minify a program that a test finds interesting ---===//
//
// Part of Kiln. The minifier (docs/debugging.md): given a module and a test
// command that exits 0 when a file still shows the problem ("interesting":
// kiln-opt crashes on it, kiln-cpu rejects it, the CPU backend and the
// interpreter disagree on it, ...), finds a small function that still does.
// It works on one func.func (the entry): values of removed ops become
// arguments of the function, so every candidate is a valid program the test
// can run with random inputs. Steps, repeated until none helps:
//   * keep one result only (each in turn);
//   * return an earlier value instead (the ops after it die);
//   * cut a prefix of the body (its values used later become arguments),
//     the longest one the test keeps interesting (bisection);
//   * cut each remaining op on its own;
// then drop unused arguments. Each candidate is written to a temporary file
// and the test runs on it. Tests:
//   * a user's script (`--test=TEST`: `TEST [TEST-ARG...] FILE` exits 0);
//   * `--crash=PIPELINE`: kiln-opt running PIPELINE on it dies from a signal,
//     or prints a message that `--match` (default: what LLVM, MLIR and
//     Kiln print for internal errors) finds;
//   * `--accuracy` / `--accuracy-pipeline=PIPELINE`: on seeded random inputs,
//     the CPU backend's results (or the interpreter's on PIPELINE's output)
//     differ from the interpreter's on the candidate beyond --rtol/--atol.
// The steps and the inputs are deterministic: the same input reduces to the
// same program.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Reduce/Reductions.h"
#include "kiln/Support/NPY.h"
#include "kiln/Support/OutputFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Reducer/Passes.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "kiln/Support/ToolErrors.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("kiln-reduce options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    testCommand("test",
                cl::desc("The interestingness test: an executable run as "
                         "`TEST [TEST-ARG...] FILE`; exit status 0 means FILE "
                         "still shows the problem"),
                cl::cat(category));
static cl::opt<std::string> crashPipeline(
    "crash", cl::value_desc("pipeline"),
    cl::desc("Built-in test: kiln-opt running this pass pipeline on the "
             "candidate crashes (dies from a signal) or prints what --match "
             "finds"),
    cl::cat(category));
static cl::opt<std::string> crashMatch(
    "match", cl::value_desc("regex"),
    cl::desc("--crash: a regular expression over kiln-opt's output that "
             "also makes a candidate interesting (default: LLVM's fatal "
             "errors, an assertion, a failed verification, a stack dump)"),
    cl::init("LLVM ERROR|fatal error in LLVM/MLIR|Assertion .* failed|"
             "failed to verify|PLEASE submit a bug report|Stack dump"),
    cl::cat(category));
static cl::opt<bool> accuracyCPU(
    "accuracy",
    cl::desc("Built-in test: the CPU backend's results differ from the "
             "interpreter's on seeded random inputs"),
    cl::cat(category));
static cl::opt<std::string> accuracyPipeline(
    "accuracy-pipeline", cl::value_desc("pipeline"),
    cl::desc("Built-in test: the interpreter's results on the output of this "
             "pass pipeline differ from its results on the candidate"),
    cl::cat(category));
static cl::opt<unsigned> accuracySeed("seed",
                                      cl::desc("--accuracy: seed of the "
                                               "random inputs"),
                                      cl::init(0), cl::cat(category));
static cl::opt<double> relTol("rtol",
                            cl::desc("--accuracy: relative tolerance"),
                            cl::init(1e-4), cl::cat(category));
static cl::opt<double> absTol("atol",
                            cl::desc("--accuracy: absolute tolerance"),
                            cl::init(1e-5), cl::cat(category));
static cl::list<std::string>
    testArgs("test-arg", cl::desc("An argument passed to the test before the "
                                  "file (repeat for several)"),
             cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("The func.func to reduce (default: the only function "
                       "with a body that nothing calls)"),
              cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: "
                                                     "standard output)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<unsigned>
    timeoutSeconds("timeout", cl::desc("Seconds one run of the test may take "
                                       "(0: no limit); a run that takes longer "
                                       "is not interesting"),
                   cl::init(300), cl::cat(category));
static cl::opt<bool> reduceTypes(
    "reduce-types",
    cl::desc("Shrink the arguments' types (static dims to 1 or halved, dims "
             "dropped, dynamic dims made static, f64/f32 narrowed) while the "
             "body's types re-infer and the problem stays (default: on)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> reduceValues(
    "reduce-values",
    cl::desc("Replace op results by an argument of their type or a zeros/ones "
             "splat kt.constant when that removes ops (default: on)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> mlirReductionTree(
    "mlir-reduction-tree",
    cl::desc("Also run MLIR's reduction-tree pass (with the kt dialect's "
             "reduction patterns) after Kiln's first round; kiln-reduce is "
             "its interestingness test"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> mlirTester(
    "mlir-tester", cl::ReallyHidden,
    cl::desc("Internal: run the test once on the input and exit 1 when it is "
             "interesting, 0 when not (MLIR Tester's convention)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> verbose("verbose",
                             cl::desc("Print each step that helped to stderr"),
                             cl::cat(category));

namespace {

/// One candidate: which ops of the entry's body stay (by index) and which of
/// its return operands (by index) are returned; `ret` may also name an op
/// result to return instead (an earlier value).
struct Candidate {
  std::vector<bool> keep;
  std::vector<unsigned> results;
  std::optional<std::pair<unsigned, unsigned>> earlier; ///< op, result
  /// Arguments that nothing uses are removed.
  bool dropUnusedArgs = false;
};

class Reducer {
public:
  Reducer(ModuleOp original, FunctionOpInterface entry, StringRef tempPath)
      : original(original), entryName(entry.getName().str()),
        tempPath(tempPath.str()) {
    for (Operation &op : entry.getFunctionBody().front().without_terminator())
      ops.push_back(&op);
    current.keep.assign(ops.size(), true);
    Operation *ret = entry.getFunctionBody().front().getTerminator();
    for (unsigned i = 0; i < ret->getNumOperands(); ++i)
      current.results.push_back(i);
  }

  /// The module of `c`, or null when it does not verify. `alive` (if
  /// given) says which ops of the body are still there (not dead).
  OwningOpRef<ModuleOp> build(const Candidate &c,
                              std::vector<bool> *alive = nullptr) {
    OwningOpRef<ModuleOp> module = original.clone();
    auto fn = cast<FunctionOpInterface>(module->lookupSymbol(entryName));
    Block &body = fn.getFunctionBody().front();
    SmallVector<Operation *> cloned;
    for (Operation &op : body.without_terminator())
      cloned.push_back(&op);
    // func.return or kg.return: its operands are replaced.
    Operation *ret = body.getTerminator();
    SmallVector<Value> returned;
    if (c.earlier)
      returned.push_back(cloned[c.earlier->first]->getResult(
          c.earlier->second));
    else
      for (unsigned i : c.results)
        returned.push_back(ret->getOperand(i));
    ret->setOperands(returned);
    Operation *newRet = ret;
    // Removed ops: their results that kept code uses become arguments.
    for (unsigned i = cloned.size(); i-- > 0;) {
      if (c.keep[i])
        continue;
      Operation *op = cloned[i];
      for (Value r : op->getResults()) {
        if (r.use_empty())
          continue;
        BlockArgument arg = body.addArgument(r.getType(), op->getLoc());
        r.replaceAllUsesWith(arg);
      }
      op->erase();
    }
    // Dead code: ops whose results are unused and that have no effects.
    // (Last first: erasing an op can only make earlier ops dead.)
    SmallVector<Operation *> rest;
    for (Operation &op : body.without_terminator())
      rest.push_back(&op);
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (Operation *op : llvm::reverse(rest))
      if (isOpTriviallyDead(op)) {
        erased.insert(op);
        op->erase();
      }
    if (alive) {
      alive->assign(cloned.size(), false);
      for (unsigned i = 0; i < cloned.size(); ++i)
        (*alive)[i] = c.keep[i] && !erased.contains(cloned[i]);
    }
    if (c.dropUnusedArgs) {
      llvm::BitVector unused(body.getNumArguments());
      for (BlockArgument a : body.getArguments())
        unused[a.getArgNumber()] = a.use_empty();
      body.eraseArguments(unused);
    }
    SmallVector<Type> inputs(body.getArgumentTypes());
    SmallVector<Type> outputs;
    for (Value v : newRet->getOperands()) // (cut values are arguments now)
      outputs.push_back(v.getType());
    fn.setType(FunctionType::get(fn.getContext(), inputs, outputs));
    // Argument attributes no longer line up with the arguments.
    fn.removeArgAttrsAttr();
    fn.removeResAttrsAttr();
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

  /// Whether the test finds `module` interesting.
  bool interesting(ModuleOp module) {
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(tempPath, ec);
      if (ec)
        return false;
      module.print(os);
    }
    ++runs;
    return test(tempPath, entryName);
  }
  /// The test: true when the file `path` (entry `entry`) is interesting.
  std::function<bool(StringRef path, StringRef entry)> test;

  bool tryCandidate(const Candidate &c, StringRef what) {
    std::vector<bool> alive;
    OwningOpRef<ModuleOp> m = build(c, &alive);
    if (!m)
      return false;
    // A candidate that prints like the current program (the value returned
    // already, no argument unused) is no step: not tested.
    std::string text, now;
    llvm::raw_string_ostream(text) << *m;
    if (OwningOpRef<ModuleOp> same = build(current))
      llvm::raw_string_ostream(now) << *same;
    if (text == now || !interesting(*m))
      return false;
    current = c;
    current.keep = alive;
    if (verbose)
      llvm::errs() << "kiln-reduce: " << what << ": " << liveOps(*m)
                   << " ops left\n";
    return true;
  }

  static unsigned liveOps(ModuleOp m) {
    unsigned n = 0;
    m.walk([&](Operation *op) {
      n += !isa<ModuleOp>(op) && !isa<FunctionOpInterface>(op);
    });
    return n;
  }

  /// Keeps one result when there are several.
  bool reduceResults() {
    if (current.earlier || current.results.size() <= 1)
      return false;
    for (unsigned r : current.results) {
      Candidate c = current;
      c.results = {r};
      if (tryCandidate(c, "one result"))
        return true;
    }
    return false;
  }

  /// Returns the value of an earlier op instead (the earliest that works,
  /// by bisection over the ops with results).
  bool reduceToEarlierValue() {
    SmallVector<std::pair<unsigned, unsigned>> values;
    for (unsigned i = 0; i < ops.size(); ++i)
      if (current.keep[i])
        for (unsigned r = 0; r < ops[i]->getNumResults(); ++r)
          values.push_back({i, r});
    if (current.earlier)
      values.erase(llvm::find(values, *current.earlier), values.end());
    bool progress = false;
    size_t lo = 0, hi = values.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      Candidate c = current;
      c.earlier = values[mid];
      if (tryCandidate(c, "earlier result")) {
        progress = true;
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return progress;
  }

  /// Cuts the longest prefix of the kept ops that the test allows.
  bool cutPrefix() {
    SmallVector<unsigned> kept;
    for (unsigned i = 0; i < ops.size(); ++i)
      if (current.keep[i])
        kept.push_back(i);
    bool progress = false;
    size_t lo = 0, hi = kept.size(); // a cut of `lo` ops works
    while (lo < hi) {
      size_t mid = lo + (hi - lo + 1) / 2;
      Candidate c = current;
      for (size_t k = 0; k < mid; ++k)
        c.keep[kept[k]] = false;
      if (tryCandidate(c, "prefix cut")) {
        progress = true;
        lo = mid;
        for (size_t k = 0; k < mid; ++k)
          current.keep[kept[k]] = false;
      } else {
        hi = mid - 1;
      }
    }
    return progress;
  }

  /// Cuts each kept op on its own, last first.
  bool cutEach() {
    bool progress = false;
    for (unsigned i = ops.size(); i-- > 0;) {
      if (!current.keep[i])
        continue;
      Candidate c = current;
      c.keep[i] = false;
      if (tryCandidate(c, "op cut"))
        progress = true;
    }
    return progress;
  }

  OwningOpRef<ModuleOp> run() {
    while (true) {
      bool progress = reduceResults();
      progress |= reduceToEarlierValue();
      progress |= cutPrefix();
      progress |= cutEach();
      if (!progress)
        break;
    }
    Candidate c = current;
    c.dropUnusedArgs = true;
    tryCandidate(c, "unused arguments dropped");
    return build(current);
  }

  unsigned runs = 0;

private:
  ModuleOp original;
  std::string entryName;
  std::string tempPath;
  std::vector<Operation *> ops;
  Candidate current;
};

} // namespace

//===----------------------------------------------------------------------===//
// The tests
//===----------------------------------------------------------------------===//

/// Runs `argv` with stdout and stderr into `outPath` (if not empty); the
/// exit status, -2 for a crash (a signal), -1 when it could not run or ran
/// past --timeout.
static int runTool(ArrayRef<StringRef> argv, StringRef outPath) {
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt,
                                          std::nullopt};
  if (!outPath.empty())
    redirects[1] = redirects[2] = outPath;
  std::string error;
  bool failedToRun = false;
  int rc = llvm::sys::ExecuteAndWait(argv.front(), argv, std::nullopt,
                                     redirects, timeoutSeconds, 0, &error,
                                     &failedToRun);
  return failedToRun ? -1 : rc;
}

/// A Kiln tool next to this executable, else in PATH.
static std::string siblingTool(StringRef name, const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&siblingTool));
  SmallString<256> path(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(path, name);
  if (llvm::sys::fs::can_execute(path))
    return path.str().str();
  if (auto found = llvm::sys::findProgramByName(name))
    return *found;
  return "";
}

/// Whether two result sets differ beyond the tolerances (NaN equals NaN,
/// infinities must match; shapes and dtypes must agree).
static bool resultsDiffer(StringRef dirA, StringRef dirB) {
  for (unsigned i = 0;; ++i) {
    std::string name = "result" + std::to_string(i) + ".npy";
    SmallString<256> a(dirA), b(dirB);
    llvm::sys::path::append(a, name);
    llvm::sys::path::append(b, name);
    bool hasA = llvm::sys::fs::exists(a), hasB = llvm::sys::fs::exists(b);
    if (!hasA && !hasB)
      return false;
    if (hasA != hasB)
      return true;
    llvm::Expected<kiln::interp::Tensor> ta = kiln::readNPY(a);
    llvm::Expected<kiln::interp::Tensor> tb = kiln::readNPY(b);
    if (!ta || !tb) {
      llvm::consumeError(ta.takeError());
      llvm::consumeError(tb.takeError());
      return true;
    }
    if (ta->dtype() != tb->dtype() || ta->shape() != tb->shape())
      return true;
    for (int64_t k = 0; k < ta->numel(); ++k) {
      double x = ta->getF(k), y = tb->getF(k);
      if (std::isnan(x) || std::isnan(y)) {
        if (std::isnan(x) != std::isnan(y))
          return true;
        continue;
      }
      if (std::isinf(x) || std::isinf(y)) {
        if (x != y)
          return true;
        continue;
      }
      if (std::fabs(x - y) > absTol + relTol * std::fabs(x))
        return true;
    }
  }
}

namespace {
/// Scratch files of the built-in tests, removed at exit.
struct Scratch {
  SmallString<128> dir;
  std::string path(StringRef name) const {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  ~Scratch() {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }
};
} // namespace

/// --crash: kiln-opt with the pipeline dies from a signal, or its output
/// matches --match.
static bool crashTest(StringRef kilnOpt, const Scratch &scratch,
                      const llvm::Regex &match, StringRef path) {
  std::string out = scratch.path("crash.txt");
  std::string pipeline = "--pass-pipeline=builtin.module(" + crashPipeline +
                         ")";
  int rc = runTool({kilnOpt, path, pipeline, "-o", "/dev/null"}, out);
  if (rc == -2)
    return true;
  if (rc == 0 || rc == -1)
    return false;
  auto text = llvm::MemoryBuffer::getFile(out);
  return text && match.match((*text)->getBuffer());
}

/// --accuracy / --accuracy-pipeline: the reference (interpreter on `path`)
/// and the other run both succeed and their results differ.
static bool accuracyTest(StringRef kilnOpt, StringRef kilnRun,
                         const Scratch &scratch, StringRef path,
                         StringRef entry) {
  std::string ref = scratch.path("ref"), other = scratch.path("other");
  llvm::sys::fs::remove_directories(ref);
  llvm::sys::fs::remove_directories(other);
  std::string log = scratch.path("run.txt");
  std::string seed = "--seed=" + std::to_string(accuracySeed);
  std::string entryArg = "--entry=" + entry.str();
  auto run = [&](StringRef file, StringRef dir, StringRef backend) {
    std::string outDir = "--output-dir=" + dir.str();
    std::string be = "--backend=" + backend.str();
    return runTool({kilnRun, file, entryArg, "--random-inputs", seed, be,
                    outDir},
                   log) == 0;
  };
  if (!run(path, ref, "interpreter"))
    return false;
  if (accuracyPipeline.empty())
    return run(path, other, "cpu") && resultsDiffer(ref, other);
  std::string transformed = scratch.path("transformed.mlir");
  std::string pipeline =
      "--pass-pipeline=builtin.module(" + accuracyPipeline + ")";
  if (runTool({kilnOpt, path, pipeline, "-o", transformed}, log) != 0)
    return false;
  return run(transformed, other, "interpreter") && resultsDiffer(ref, other);
}

/// The entry: --entry, else the only function (a func.func or a
/// kg.program) with a body that no symbol use refers to.
static FunctionOpInterface findEntry(ModuleOp module, std::string &error) {
  if (!entryName.empty()) {
    auto fn =
        dyn_cast_or_null<FunctionOpInterface>(module.lookupSymbol(entryName));
    if (!fn || fn.isExternal() || !isa<func::FuncOp, kiln::kg::ProgramOp>(fn)) {
      error =
          "no func.func or kg.program with a body named '" + entryName + "'";
      return nullptr;
    }
    return fn;
  }
  FunctionOpInterface found;
  for (Operation &op : module.getOps()) {
    if (!isa<func::FuncOp, kiln::kg::ProgramOp>(op))
      continue;
    auto fn = cast<FunctionOpInterface>(op);
    if (fn.isExternal() || !SymbolTable::symbolKnownUseEmpty(fn, module))
      continue;
    if (found) {
      error = "several functions could be the one to reduce (@" +
              found.getName().str() + ", @" + fn.getName().str() +
              "): name it with --entry";
      return nullptr;
    }
    found = fn;
  }
  if (!found)
    error = "no func.func or kg.program with a body that nothing calls";
  return found;
}

//===----------------------------------------------------------------------===//
// Kiln's value and type reductions (kiln/Reduce/Reductions.h)
//===----------------------------------------------------------------------===//

namespace {
/// Tries rewrites of the entry of a reduced module, each on a copy that must
/// verify and be smaller, and keeps those the test finds interesting.
class Shrinker {
public:
  Shrinker(StringRef entry, std::function<bool(ModuleOp)> interesting)
      : entry(entry.str()), interesting(std::move(interesting)) {}

  /// Replaces an op result by an argument of its type, a zeros splat or a
  /// ones splat, where that leaves fewer ops, or as many ops and fewer
  /// arguments (dead ops and unused arguments are removed; first op first,
  /// after each success from the start again).
  bool reduceValues(OwningOpRef<ModuleOp> &current) {
    bool progress = false;
    for (unsigned i = 0;; ++i) {
      auto fn = current->lookupSymbol<func::FuncOp>(entry);
      Block &body = fn.getBody().front();
      if (i >= body.getOperations().size() - 1)
        break;
      Operation *op = &*std::next(body.begin(), i);
      if (op->hasTrait<OpTrait::ConstantLike>())
        continue;
      bool changed = false;
      for (unsigned r = 0; r < op->getNumResults() && !changed; ++r) {
        Value v = op->getResult(r);
        if (v.use_empty())
          continue;
        std::optional<unsigned> arg;
        for (BlockArgument a : body.getArguments())
          if (a.getType() == v.getType()) {
            arg = a.getArgNumber();
            break;
          }
        std::string name = op->getName().getStringRef().str();
        auto replace = [&](std::function<Value(func::FuncOp)> with) {
          return [&, with](func::FuncOp f) -> LogicalResult {
            Operation *o = &*std::next(f.getBody().front().begin(), i);
            Value w = with(f);
            if (!w)
              return failure();
            o->getResult(r).replaceAllUsesWith(w);
            kiln::reduce::eraseDeadOps(f);
            kiln::reduce::eraseUnusedArguments(f);
            return success();
          };
        };
        auto splat = [&](double x) {
          return [=](func::FuncOp f) {
            OpBuilder b(&f.getBody().front(), f.getBody().front().begin());
            return kiln::reduce::createSplatConstant(b, f.getLoc(), v.getType(),
                                                     x);
          };
        };
        if (arg)
          changed = tryRewrite(current, replace([&](func::FuncOp f) -> Value {
                                 return f.getArgument(*arg);
                               }),
                               name + " result replaced by argument " +
                                   std::to_string(*arg),
                               /*fewerOps=*/true);
        if (!changed)
          changed = tryRewrite(current, replace(splat(0.0)),
                               name + " result replaced by zeros", true);
        if (!changed)
          changed = tryRewrite(current, replace(splat(1.0)),
                               name + " result replaced by ones", true);
      }
      if (changed) {
        progress = true;
        i = -1u; // from the start again
      }
    }
    return progress;
  }

  /// Gives the arguments smaller types (kiln::reduce::typeCandidates, the
  /// first that works; then the candidates of the new types again).
  bool reduceTypes(OwningOpRef<ModuleOp> &current) {
    bool progress = false;
    while (true) {
      auto fn = current->lookupSymbol<func::FuncOp>(entry);
      uint64_t bits = kiln::reduce::argumentBits(fn);
      bool changed = false;
      for (kiln::reduce::TypeCandidate &c : kiln::reduce::typeCandidates(fn)) {
        changed = tryRewrite(
            current,
            [&](func::FuncOp f) -> LogicalResult {
              if (failed(kiln::reduce::retypeArguments(f, c.argTypes)))
                return failure();
              return success(kiln::reduce::argumentBits(f) < bits);
            },
            c.what, /*fewerOps=*/false);
        if (changed)
          break;
      }
      if (!changed)
        return progress;
      progress = true;
    }
  }

private:
  bool tryRewrite(OwningOpRef<ModuleOp> &current,
                  llvm::function_ref<LogicalResult(func::FuncOp)> rewrite,
                  StringRef what, bool fewerOps) {
    OwningOpRef<ModuleOp> c = current->clone();
    auto fn = c->lookupSymbol<func::FuncOp>(entry);
    if (failed(rewrite(fn)) || failed(verify(*c)))
      return false;
    // (ops, arguments) must get smaller, in that order.
    auto size = [&](ModuleOp m) {
      auto f = m.lookupSymbol<func::FuncOp>(entry);
      return std::make_pair(kiln::reduce::countOps(m), f.getNumArguments());
    };
    if (fewerOps && size(*c) >= size(*current))
      return false;
    if (!interesting(*c))
      return false;
    current = std::move(c);
    if (verbose)
      llvm::errs() << "kiln-reduce: " << what << ": "
                   << kiln::reduce::countOps(*current) << " ops left\n";
    return true;
  }

  std::string entry;
  std::function<bool(ModuleOp)> interesting;
};
} // namespace

/// MLIR's reduction-tree pass over `module`, with the patterns of the
/// dialects' DialectReductionPatternInterface (the kt dialect's:
/// kiln/Reduce/Reductions.h). Its test is this executable in --mlir-tester
/// mode with the same test options.
static LogicalResult runMLIRReductionTree(ModuleOp module, const char *argv0,
                                          StringRef entry) {
  ReductionTreePassOptions options;
  options.testerName = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runMLIRReductionTree));
  auto &args = options.testerArgs;
  args.push_back("--mlir-tester");
  args.push_back("--entry=" + entry.str());
  args.push_back("--timeout=" + std::to_string(timeoutSeconds));
  if (!testCommand.empty()) {
    args.push_back("--test=" + testCommand);
    for (const std::string &a : testArgs)
      args.push_back("--test-arg=" + a);
  } else if (!crashPipeline.empty()) {
    args.push_back("--crash=" + crashPipeline);
    args.push_back("--match=" + crashMatch);
  } else {
    if (accuracyCPU)
      args.push_back("--accuracy");
    else
      args.push_back("--accuracy-pipeline=" + accuracyPipeline);
    args.push_back("--seed=" + std::to_string(accuracySeed));
    std::string tol;
    llvm::raw_string_ostream(tol) << "--rtol=" << relTol.getValue();
    args.push_back(tol);
    tol.clear();
    llvm::raw_string_ostream(tol) << "--atol=" << absTol.getValue();
    args.push_back(tol);
  }
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(createReductionTreePass(options));
  return pm.run(module);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  kiln::installToolFatalErrorHandlers("kiln-reduce");
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Kiln minifier: reduces a func.func while a test command (exit status "
      "0) still finds it interesting. See docs/debugging.md.\n");
  // (--mlir-tester: an input it cannot test is not interesting: exit 0.)
  auto fail = [](const Twine &msg) {
    llvm::errs() << "kiln-reduce: error: " << msg << "\n";
    return mlirTester ? 0 : 1;
  };

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<kiln::kt::KTDialect, kiln::kg::KGDialect>();
  kiln::reduce::registerReductionPatternInterfaces(registry);
  MLIRContext context(registry);
  context.allowUnregisteredDialects(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");
  unsigned modes = !testCommand.empty() + !crashPipeline.empty() +
                   accuracyCPU + !accuracyPipeline.empty();
  if (modes != 1)
    return fail("give exactly one test: --test=SCRIPT, --crash=PIPELINE, "
                "--accuracy or --accuracy-pipeline=PIPELINE");
  if (!testCommand.empty()) {
    // A name with a slash is a path; a bare name is looked up in PATH.
    if (StringRef(testCommand).contains('/')) {
      if (llvm::sys::fs::is_directory(testCommand) ||
          !llvm::sys::fs::can_execute(testCommand))
        return fail("the test '" + testCommand + "' is not an executable");
    } else if (auto found = llvm::sys::findProgramByName(testCommand)) {
      testCommand = *found;
    } else {
      return fail("the test '" + testCommand +
                  "' is not an executable in PATH");
    }
  }
  if (!(relTol >= 0) || !(absTol >= 0))
    return fail("--rtol and --atol must be non-negative numbers");
  llvm::Regex match(crashMatch);
  if (std::string why; !match.isValid(why))
    return fail("invalid --match regular expression '" + crashMatch +
                "': " + why);
  std::string kilnOpt = siblingTool("kiln-opt", argv[0]);
  std::string kilnRun = siblingTool("kiln-run", argv[0]);
  if ((!crashPipeline.empty() || !accuracyPipeline.empty()) && kilnOpt.empty())
    return fail("kiln-opt is neither next to kiln-reduce nor in PATH");
  if ((accuracyCPU || !accuracyPipeline.empty()) && kilnRun.empty())
    return fail("kiln-run is neither next to kiln-reduce nor in PATH");
  std::string error;
  FunctionOpInterface entry = findEntry(*module, error);
  if (!entry)
    return fail(error);
  // A function the module uses (a graph function of a kg.program after
  // kiln-outline-graphs, a callee) is reduced on its own: its signature
  // changes. The new module holds it, public, and the functions it calls.
  if (!SymbolTable::symbolKnownUseEmpty(entry, *module)) {
    llvm::errs() << "kiln-reduce: @" << entry.getName()
                 << " is used by the module; reducing it on its own (the "
                    "rest of the module is dropped)\n";
    OpBuilder b(&context);
    OwningOpRef<ModuleOp> alone = ModuleOp::create(module->getLoc());
    b.setInsertionPointToEnd(alone->getBody());
    SmallVector<func::FuncOp> todo = {cast<func::FuncOp>(entry)};
    llvm::SmallPtrSet<Operation *, 8> copied;
    while (!todo.empty()) {
      func::FuncOp fn = todo.pop_back_val();
      if (!copied.insert(fn).second)
        continue;
      b.clone(*fn);
      fn.walk([&](func::CallOp call) {
        if (auto callee = module->lookupSymbol<func::FuncOp>(call.getCallee()))
          todo.push_back(callee);
      });
    }
    module = std::move(alone);
    entry = module->lookupSymbol<func::FuncOp>(entry.getName());
    SymbolTable::setSymbolVisibility(entry, SymbolTable::Visibility::Public);
    entry->removeAttr("kg.graph_function");
    if (failed(verify(*module)))
      return fail("@" + entry.getName().str() +
                  " does not verify on its own (it refers to symbols other "
                  "than functions)");
  }

  SmallString<128> temp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "kiln-reduce", "mlir", fd, temp))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeTemp(temp);

  Scratch scratch;
  if (testCommand.empty())
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            "kiln-reduce", scratch.dir))
      return fail("cannot create a temporary directory: " + ec.message());
  std::function<bool(StringRef path, StringRef entry)> test;
  std::string what;
  if (!testCommand.empty()) {
    test = [&](StringRef path, StringRef) {
      SmallVector<StringRef> args = {testCommand};
      for (const std::string &a : testArgs)
        args.push_back(a);
      args.push_back(path);
      return runTool(args, "") == 0;
    };
    what = "'" + testCommand + "' does not exit with 0 on it";
  } else if (!crashPipeline.empty()) {
    test = [&](StringRef path, StringRef) {
      return crashTest(kilnOpt, scratch, match, path);
    };
    what = "kiln-opt with '" + crashPipeline +
           "' neither crashes on it nor prints what --match finds";
  } else {
    test = [&](StringRef path, StringRef entry) {
      return accuracyTest(kilnOpt, kilnRun, scratch, path, entry);
    };
    what = accuracyPipeline.empty()
               ? std::string("the CPU backend and the interpreter agree on "
                             "it (or one of them fails)")
               : "the interpreter gives the same results after '" +
                     accuracyPipeline + "' (or a run fails)";
  }
  // --mlir-tester: MLIR's reduction-tree pass runs kiln-reduce on each of
  // its candidates (it verified them) to ask the test: 1 is interesting.
  if (mlirTester)
    return test(inputFile, entry.getName()) ? 1 : 0;

  // From here on, candidates that do not verify are only rejected: their
  // diagnostics are not the user's business.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  std::string entrySym = entry.getName().str();
  // Kiln's value and type reductions work on a func.func; a kg.program is
  // reduced by the op steps (graphs, breaks, guards and host ops cut, one
  // graph kept).
  bool isProgram = isa<kiln::kg::ProgramOp>(entry);
  unsigned runs = 0;
  auto interesting = [&](ModuleOp m) {
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(temp, ec);
      if (ec)
        return false;
      m.print(os);
    }
    ++runs;
    return test(temp, entrySym);
  };
  if (!interesting(*module))
    return fail("the input is not interesting: " + what);
  unsigned before = kiln::reduce::countOps(*module);

  // Rounds: Kiln's op steps (Reducer), [MLIR's reduction tree, once], then
  // Kiln's value and type reductions on the result; again while those
  // help. Every accepted candidate is smaller by (ops, argument bits), so
  // the rounds end.
  OwningOpRef<ModuleOp> current = module->clone();
  bool treeDone = false;
  while (true) {
    {
      auto fn = cast<FunctionOpInterface>(current->lookupSymbol(entrySym));
      Reducer reducer(*current, fn, temp);
      reducer.test = test;
      OwningOpRef<ModuleOp> reduced = reducer.run();
      runs += reducer.runs;
      if (!reduced)
        return fail("internal error: the reduced module does not verify");
      current = std::move(reduced);
    }
    if (mlirReductionTree && !treeDone) {
      treeDone = true;
      if (failed(runMLIRReductionTree(*current, argv[0], entrySym)))
        return fail("MLIR's reduction-tree pass failed");
      if (verbose)
        llvm::errs() << "kiln-reduce: MLIR's reduction tree: "
                     << kiln::reduce::countOps(*current) << " ops left\n";
    }
    Shrinker shrinker(entrySym, interesting);
    bool progress =
        !isProgram && reduceValues && shrinker.reduceValues(current);
    progress |= !isProgram && reduceTypes && shrinker.reduceTypes(current);
    if (!progress)
      break;
  }
  OwningOpRef<ModuleOp> reduced = std::move(current);
  llvm::errs() << "kiln-reduce: " << before << " -> "
               << kiln::reduce::countOps(*reduced) << " ops, " << runs
               << " test runs\n";
  if (outputFile == "-") {
    reduced->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (llvm::Error e = kiln::writeFileAtomically(
          outputFile, [&](llvm::raw_ostream &os) {
            reduced->print(os);
            os << "\n";
          }))
    return fail(llvm::toString(std::move(e)));
  return 0;
}
