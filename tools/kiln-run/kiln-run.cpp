//===- kiln-run.cpp - Run a function of a .mlir file ----------------------===//
//
// Part of Kiln.
//
//   kiln-run FILE.mlir --entry=NAME [--input=X.npy]... [--random-inputs
//            --seed=N] [--output-dir=DIR] [--print]
//
// A kg.program entry runs through a runtime session: --call=A.npy,B.npy makes
// one call (repeatable, so recompiles, cache hits and the cache limit show),
// with the session options --backend, --pipeline, --cache-size-limit,
// --frozen, --dynamic, --mark-dynamic/--mark-static=ARG:DIM, and --stats.
//
// Inputs are .npy files in argument order; results are written as
// DIR/result0.npy, result1.npy, ... only once every result is computed, all
// or nothing (kiln/Support/OutputFiles.h). Every failure ends with one line
// on stderr, `kiln-run: error: ...`, naming what was wrong (diagnostics come
// before it), and exit code 1; no existing file is changed then.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/BufferPool.h"
#include "kiln/Backend/CPU/DiskCache.h"
#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Runtime/Session.h"
#include "kiln/Transforms/Transforms.h"
#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Support/NPY.h"
#include "kiln/Support/OutputFiles.h"
#include "kiln/Support/TensorFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "kiln/Support/ToolErrors.h"
#include "kiln/Support/ForkServer.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "kiln/Support/Logging.h"
#include "kiln/Support/SplitMix64.h"
#include "kiln/Support/Trace.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::interp;
namespace cl = llvm::cl;

// Option values: LLVM's parsers print a bad value's message straight to
// stderr, which would come after nothing and before no contract line; these
// record it instead, and main() reports it through fail().
static std::string badOptionValue;

template <typename T> struct UnsignedParser : cl::parser<T> {
  using cl::parser<T>::parser;
  bool parse(cl::Option &o, StringRef, StringRef arg, T &value) {
    if (!arg.getAsInteger(0, value))
      return false;
    if (badOptionValue.empty())
      badOptionValue = ("invalid value '" + arg + "' for --" + o.ArgStr +
                        ": expected a non-negative integer")
                           .str();
    return true;
  }
};

struct BoolParser : cl::parser<bool> {
  using cl::parser<bool>::parser;
  bool parse(cl::Option &o, StringRef, StringRef arg, bool &value) {
    if (arg.empty() || arg == "true" || arg == "TRUE" || arg == "True" ||
        arg == "1") {
      value = true;
      return false;
    }
    if (arg == "false" || arg == "FALSE" || arg == "False" || arg == "0") {
      value = false;
      return false;
    }
    if (badOptionValue.empty())
      badOptionValue = ("invalid value '" + arg + "' for --" + o.ArgStr +
                        ": expected true or false")
                           .str();
    return true;
  }
};

/// Kiln's options: the only ones --help shows (LLVM's are behind
/// --help-hidden).
static cl::OptionCategory kilnRunCategory("kiln-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::cat(kilnRunCategory), cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    entry("entry", cl::cat(kilnRunCategory), cl::desc("Function to run (default: the only function)"),
          cl::value_desc("name"));
static cl::list<std::string> inputs("input",
                                    cl::cat(kilnRunCategory), cl::desc("A .npy input, in argument order"),
                                    cl::value_desc("path"));
static cl::opt<bool, false, BoolParser> randomInputs(
    "random-inputs",
    cl::cat(kilnRunCategory), cl::desc("Make inputs: floats ~ N(0,1), ints in [0,10), bools 50/50"));
static cl::opt<unsigned long long, false,
                     UnsignedParser<unsigned long long>>
    seed("seed", cl::cat(kilnRunCategory), cl::desc("Seed of --random-inputs"),
                              cl::init(0));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::cat(kilnRunCategory), cl::desc("Write results as DIR/result<i>.npy (and random inputs "
                       "as DIR/input<i>.npy)"),
              cl::value_desc("dir"));
static cl::opt<bool, false, BoolParser> printResults("print",
                                  cl::cat(kilnRunCategory), cl::desc("Print each result as text"));

// kg.program entries.
static cl::list<std::string>
    calls("call",
          cl::cat(kilnRunCategory), cl::desc("One call of a kg.program entry: comma-separated .npy "
                   "inputs (repeat for several calls in one session)"),
          cl::value_desc("a.npy,b.npy"));
static cl::opt<std::string> backend(
    "backend",
    cl::cat(kilnRunCategory), cl::desc("interpreter (default; also eager) or cpu (kiln-cpu pipeline + "
             "JIT): for a kg.program, the session backend that runs its "
             "graphs"),
    cl::init("eager"));
static cl::opt<std::string> cpuFallback(
    "cpu-fallback",
    cl::cat(kilnRunCategory), cl::desc("kg.program on the cpu backend, a graph with an op kiln-cpu "
             "cannot lower: error (default) or eager (warn, interpret it)"),
    cl::init("error"));
// --backend=cpu (func.func entries).
static cl::opt<unsigned, false, UnsignedParser<unsigned>>
    cpuThreads("cpu-threads",
               cl::cat(kilnRunCategory), cl::desc("--backend=cpu: threads of the generated code and "
                        "OpenBLAS (0: all cores)"),
               cl::init(0));
static cl::opt<std::string>
    cpuMatmul("matmul",
              cl::cat(kilnRunCategory), cl::desc("--backend=cpu: matmul implementation (auto, "
                       "openblas or generated)"),
              cl::init("auto"));
static cl::opt<std::string>
    cpuSgemm("sgemm",
             cl::cat(kilnRunCategory), cl::desc("--backend=cpu: library of f32 products "
                      "that go to a BLAS call (auto: oneDNN's sgemm where "
                      "libkiln_onednn is built, else OpenBLAS; openblas; onednn)"),
             cl::init("auto"));
static cl::opt<std::string>
    cpuConv("conv",
            cl::cat(kilnRunCategory), cl::desc("--backend=cpu: convolution implementation (auto, "
                     "im2col, direct or onednn)"),
            cl::init("auto"));
static cl::opt<bool, false, BoolParser> cpuConvChannelsLast(
    "conv-channels-last", cl::cat(kilnRunCategory),
    cl::desc("--backend=cpu (func.func entries): channels-last activations "
             "between oneDNN convs (kiln-cpu{conv-channels-last=true}, the "
             "default; false turns kiln-cpu-conv-channels-last off)"),
    cl::init(true));
static cl::opt<bool, false, BoolParser> cpuFastExp(
    "cpu-fast-exp", cl::cat(kilnRunCategory),
    cl::desc("--backend=cpu: f32 exp as Kiln's AVX-512 form (vscalefps) "
             "where the host has AVX-512F (kiln-cpu{fast-exp=true}, the "
             "default; false: MLIR's polynomial approximation)"),
    cl::init(true));
static cl::opt<bool, false, BoolParser>
    cpuOptimize("cpu-optimize",
                cl::cat(kilnRunCategory), cl::desc("--backend=cpu: tile, vectorize and thread (false: "
                         "scalar single-threaded code)"),
                cl::init(true));
static cl::opt<bool, false, BoolParser>
    cpuFuse("cpu-fuse",
            cl::cat(kilnRunCategory), cl::desc("--backend=cpu (func.func entries): run kiln-fuse and "
                     "kiln-form-kernels first (kiln-cpu{fuse=true}, the "
                     "default; --cpu-fuse=false turns them off)"),
            cl::init(true));
static cl::opt<unsigned, false, UnsignedParser<unsigned>>
    repeat("repeat",
           cl::cat(kilnRunCategory), cl::desc("Call a func.func entry N times and print the median, "
                    "min and max call time (compile excluded)"),
           cl::init(0));
static cl::opt<std::string>
    emitObject("emit-object",
               cl::cat(kilnRunCategory), cl::desc("--backend=cpu: also write the compiled code as an "
                        "ELF object file"),
               cl::value_desc("file.o"));
static cl::opt<std::string> cacheDir(
    "cache-dir", cl::cat(kilnRunCategory), cl::value_desc("dir"),
    cl::desc("--backend=cpu: directory of the compiled-code disk cache "
             "(replaces KILN_CACHE_DIR; empty or 'off': no disk cache)"));
static cl::opt<std::string> constantArgs(
    "constant-args", cl::cat(kilnRunCategory), cl::value_desc("i,j,..."),
    cl::desc("kg.program arguments (indices) that stay constant between "
             "calls (--repeat): what depends on them alone runs once "
             "(session option constant_args; docs/runtime.md)"));
static cl::opt<std::string>
    pipeline("pipeline", cl::cat(kilnRunCategory), cl::desc("Pass pipeline run on each new cache entry"),
             cl::init("kiln-eager"));
static cl::opt<unsigned, false, UnsignedParser<unsigned>>
    cacheSizeLimit("cache-size-limit",
                   cl::cat(kilnRunCategory), cl::desc("Entries per program before it stops recompiling"),
                   cl::init(8));
static cl::opt<bool, false, BoolParser> frozen("frozen",
                            cl::cat(kilnRunCategory), cl::desc("Never compile; misses run the fallback"));
static cl::opt<std::string>
    dynamicMode("dynamic", cl::cat(kilnRunCategory), cl::desc("auto (default), static or dynamic"),
                cl::init("auto"));
static cl::list<std::string> markDynamic("mark-dynamic",
                                         cl::cat(kilnRunCategory), cl::desc("ARG:DIM made dynamic"));
static cl::list<std::string> markStatic("mark-static",
                                        cl::cat(kilnRunCategory), cl::desc("ARG:DIM kept static"));
// `--stats` is LLVM's statistics flag too; main() maps it to this option.
static cl::opt<bool, false, BoolParser> printStats("program-stats",
                                cl::cat(kilnRunCategory), cl::desc("Print the session statistics "
                                         "(also --stats)"));
static cl::opt<bool, false, BoolParser> printEntries("print-entries",
                                  cl::cat(kilnRunCategory), cl::desc("Print each cache entry's program"));
static cl::opt<std::string> logsSpec(
    "kiln-logs", cl::cat(kilnRunCategory), cl::value_desc("topics"),
    cl::desc("Log what Kiln decides, as KILN_LOGS (which it replaces): a "
             "comma list of graph_breaks, recompiles, guards, graph, fusion, "
             "partition, codegen, perf, all; +name verbose, -name off (see "
             "docs/debugging.md)"));
static cl::opt<std::string> traceFile(
    "kiln-trace", cl::cat(kilnRunCategory), cl::value_desc("file.json"),
    cl::desc("Write a Chrome trace (Perfetto, chrome://tracing) of compile "
             "phases and kernel runs, as KILN_TRACE"));
static cl::opt<std::string> batchFile(
    "batch",
    cl::cat(kilnRunCategory), cl::desc("Run many func.func entries of the module in one process: one "
             "line per run, tab-separated: ENTRY, OUTDIR, then the input "
             ".npy paths, or random:SEED for the inputs --random-inputs "
             "--seed=SEED makes. With --backend=cpu every entry that lowers "
             "is compiled together (one kiln-cpu run, one JIT module)"),
    cl::value_desc("spec"));

/// The innermost source frame of `loc` (`file:line:col`, or the name of a
/// NameLoc without a file location, as importers write them), or
/// "kiln-run" when it has none.
static std::string locString(Location loc) {
  std::string s = kiln::formatLocationStack(loc).front();
  return s == "<unknown>" ? "kiln-run" : s;
}

/// The CPU compile options of the command line (--cpu-threads, --matmul,
/// --conv, --cpu-optimize, --cpu-fuse, --cpu-fast-exp), for a single run and
/// for --batch.
/// Returns the error for a bad value ("" when they are valid).
static std::string cpuCompileOptions(cpu::CompileOptions &copts) {
  copts.threads = cpuThreads;
  copts.matmul = cpuMatmul;
  copts.sgemm = cpuSgemm;
  copts.conv = cpuConv;
  copts.optimize = cpuOptimize;
  copts.fuse = cpuFuse;
  copts.convChannelsLast = cpuConvChannelsLast;
  copts.fastExp = cpuFastExp;
  if (cpuMatmul != "auto" && cpuMatmul != "openblas" &&
      cpuMatmul != "generated")
    return "--matmul must be auto, openblas or generated, not '" +
           cpuMatmul + "'";
  if (cpuSgemm != "auto" && cpuSgemm != "openblas" && cpuSgemm != "onednn")
    return "--sgemm must be auto, openblas or onednn, not '" + cpuSgemm +
           "'";
  if (cpuConv != "auto" && cpuConv != "im2col" && cpuConv != "direct" &&
      cpuConv != "onednn")
    return "--conv must be auto, im2col, direct or onednn, not '" + cpuConv +
           "'";
  return "";
}

/// Reports a failure. The lines of `msg` after its first (diagnostics, a
/// pipeline parser's context and caret) are printed first, then the one line
/// `kiln-run: error: <first line>`: the last line of every failure names it.
static int fail(const llvm::Twine &msg) {
  std::string text = msg.str();
  auto [first, rest] = StringRef(text).split('\n');
  rest = rest.rtrim("\n");
  if (!rest.empty())
    llvm::errs() << rest << "\n";
  first = first.rtrim();
  if (first.ends_with(":"))
    first = first.drop_back();
  llvm::errs() << "kiln-run: error: " << first << "\n";
  return 1;
}

using kiln::SplitMix64; // --random-inputs: the same values on every platform

/// A random input for an argument of `type`; on failure `why` says why
/// (after the argument's name: "has a dynamic dim; ...", "tensor<...>: cannot
/// allocate N bytes ...").
static FailureOr<Tensor> randomTensor(Type type, SplitMix64 &rng,
                                      std::string &why) {
  if (auto rt = dyn_cast<kt::RefType>(type))
    type = rt.getTensorType(); // A ref argument takes a tensor's input.
  Type elem = type;
  SmallVector<int64_t> shape;
  if (auto tt = dyn_cast<RankedTensorType>(type)) {
    elem = tt.getElementType();
    for (int64_t d : tt.getShape()) {
      if (ShapedType::isDynamic(d)) {
        why = "has a dynamic dim; pass --input files instead";
        return failure();
      }
      shape.push_back(d);
    }
  }
  std::optional<DType> dt = dtypeFromType(elem);
  if (!dt) {
    // Name the type (a complex<f32> tensor, an index, a vector, ...).
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "has an unsupported type " << type;
    if (isa<ComplexType>(elem))
      os << " (complex dtypes are not supported: kt has no complex element "
            "types, docs/adding-ops.md)";
    why = os.str();
    return failure();
  }
  llvm::Expected<Tensor> created = Tensor::create(*dt, shape);
  if (!created) {
    why = "(random input): " + llvm::toString(created.takeError());
    return failure();
  }
  Tensor &t = *created;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (*dt == DType::I1)
      t.setI(i, rng.next() & 1);
    else if (isFloatDType(*dt))
      t.setF(i, rng.normal());
    else
      t.setI(i, rng.next() % 10);
  }
  return t;
}

/// Reads the .npy file at `path` as an input for an argument of `argType`.
/// NumPy has no bfloat16: f32 data is accepted (and rounded) for a bf16
/// argument.
static llvm::Expected<Tensor> readInput(StringRef path, Type argType) {
  llvm::Expected<Tensor> t = readNPY(path);
  if (!t)
    return t;
  Type elem = argType;
  if (auto st = dyn_cast<ShapedType>(argType))
    elem = st.getElementType();
  else if (auto rt = dyn_cast<kt::RefType>(argType))
    elem = rt.getElementType();
  if (elem.isBF16() && t->dtype() == DType::F32)
    return t->convertTo(DType::BF16);
  return t;
}

/// The files of one run (or one call of a kg.program) under `dir`:
/// DIR/result<i>.npy, DIR/input<i>.npy (random inputs) and DIR/arg<i>.npy
/// (the final contents of ref argument i), added to `files` (written as
/// temporaries; the caller commits the whole set once everything is written).
static LogicalResult
addOutputFiles(OutputFileSet &files, StringRef dir, ArrayRef<Tensor> results,
               ArrayRef<Tensor> randomArgs,
               ArrayRef<std::pair<unsigned, Tensor>> refArgs) {
  if (dir.empty())
    return success();
  if (llvm::Error e = files.createDirectories(dir)) {
    fail(llvm::toString(std::move(e)));
    return failure();
  }
  auto add = [&](const llvm::Twine &name, const Tensor &t) -> bool {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (llvm::Error e = files.add(
            path, [&](llvm::raw_ostream &os) { writeNPY(os, t); })) {
      fail(llvm::toString(std::move(e)));
      return false;
    }
    return true;
  };
  for (auto [i, t] : llvm::enumerate(results))
    if (!add("result" + llvm::Twine(i) + ".npy", t))
      return failure();
  for (auto [i, t] : llvm::enumerate(randomArgs))
    if (!add("input" + llvm::Twine(i) + ".npy", t))
      return failure();
  for (auto &[i, t] : refArgs)
    if (!add("arg" + llvm::Twine(i) + ".npy", t))
      return failure();
  return success();
}

/// Prints the results and the final contents of the ref arguments (after the
/// output files were committed).
static void printOutputs(ArrayRef<Tensor> results, TypeRange types,
                         ArrayRef<std::pair<unsigned, Tensor>> refArgs,
                         ArrayRef<Type> argTypes, StringRef header) {
  if (!printResults)
    return;
  if (!header.empty())
    llvm::outs() << header << "\n";
  for (auto [i, t] : llvm::enumerate(results)) {
    llvm::outs() << "result" << i << ": ";
    if (i < types.size())
      llvm::outs() << types[i];
    llvm::outs() << "\n";
    printTensorValues(llvm::outs(), t);
    llvm::outs() << "\n";
  }
  for (auto &[i, t] : refArgs) {
    llvm::outs() << "arg" << i << " (mutated): " << argTypes[i] << "\n";
    printTensorValues(llvm::outs(), t);
    llvm::outs() << "\n";
  }
}

/// Commits `files`; on failure reports it.
static LogicalResult commitOutputs(OutputFileSet &files) {
  if (llvm::Error e = files.commit()) {
    fail(llvm::toString(std::move(e)));
    return failure();
  }
  return success();
}

/// Whether a program argument of type `t` takes a tensor (a tensor, or a
/// `!kt.ref`: a mutable tensor).
static bool isTensorArg(Type t) { return isa<ShapedType, kt::RefType>(t); }

/// A copy of `t`'s contents (a ref argument's state after a call); on
/// failure reports it, naming `what`.
static FailureOr<Tensor> copyOf(const Tensor &t, const llvm::Twine &what) {
  llvm::Expected<Tensor> c = t.clone();
  if (!c) {
    fail(what + ": " + llvm::toString(c.takeError()));
    return failure();
  }
  return std::move(*c);
}

/// The identity of the file at `path` (device and inode, so `x.npy`,
/// `./x.npy` and a link to it are one file); the path itself when it cannot
/// be determined.
static std::string fileKey(StringRef path) {
  llvm::sys::fs::UniqueID id;
  if (llvm::sys::fs::getUniqueID(path, id))
    return ("path:" + path).str();
  return "id:" + std::to_string(id.getDevice()) + ":" +
         std::to_string(id.getFile());
}

/// The argument indices of --constant-args (the session checks the list).
static llvm::SmallDenseSet<unsigned> constantArgIndices() {
  llvm::SmallDenseSet<unsigned> out;
  SmallVector<StringRef> parts;
  StringRef(constantArgs).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    unsigned v;
    if (!part.trim().getAsInteger(10, v))
      out.insert(v);
  }
  return out;
}

/// Reads the inputs of one call of `program` ("a.npy,b.npy"); rank-0 files
/// give scalar arguments. A ref argument's file is read once per path:
/// `refState` keeps its buffer, which later calls naming the same path get
/// (with every update earlier calls made: the optimizer state persists).
/// So is a --constant-args argument's (one buffer, as a caller that keeps
/// its weights passes them).
static FailureOr<SmallVector<Tensor>>
readCallInputs(kg::ProgramOp program, ArrayRef<std::string> paths,
               unsigned callIndex, llvm::StringMap<Tensor> &refState) {
  static const llvm::SmallDenseSet<unsigned> constant = constantArgIndices();
  ArrayRef<Type> types = program.getArgumentTypes();
  if (paths.size() != types.size()) {
    fail("call #" + llvm::Twine(callIndex) + ": @" + program.getSymName() +
         " takes " + llvm::Twine(types.size()) + " arguments but " +
         llvm::Twine(paths.size()) + " inputs were given");
    return failure();
  }
  SmallVector<Tensor> tensors;
  for (auto [i, path] : llvm::enumerate(paths)) {
    bool isRef = isa<kt::RefType>(types[i]) || constant.contains(i);
    std::string key = fileKey(path);
    if (isRef) {
      auto it = refState.find(key);
      if (it != refState.end()) {
        tensors.push_back(it->second);
        continue;
      }
    }
    llvm::Expected<Tensor> t = readInput(path, types[i]);
    if (!t) {
      fail("call #" + llvm::Twine(callIndex) + " input #" + llvm::Twine(i) +
           ": " + llvm::toString(t.takeError()));
      return failure();
    }
    if (!isTensorArg(types[i]) && t->rank() != 0) {
      fail("call #" + llvm::Twine(callIndex) + " input #" + llvm::Twine(i) +
           " ('" + path + "'): argument '" + program.getArgSourceName(i) +
           "' is a scalar; pass a rank-0 array");
      return failure();
    }
    if (isRef)
      refState[key] = *t;
    tensors.push_back(*t);
  }
  return tensors;
}

static FailureOr<std::pair<unsigned, unsigned>> parseArgDim(StringRef text) {
  auto [a, d] = text.split(':');
  unsigned arg, dim;
  if (a.getAsInteger(10, arg) || d.getAsInteger(10, dim)) {
    fail("expected ARG:DIM (two integers), got '" + text + "'");
    return failure();
  }
  return std::make_pair(arg, dim);
}

/// "disk cache: ..." of this process (--stats, --backend=cpu).
static void printDiskCacheStats(const std::optional<std::string> &setting) {
  std::string dir = cpu::diskCacheDirectory(setting);
  cpu::DiskCacheStats d = cpu::diskCacheStats();
  llvm::outs() << "disk cache: " << d.hits << " hits, " << d.misses
               << " misses, " << d.corrupt << " corrupt, " << d.stores
               << " stores, " << d.evictions << " evictions, " << d.bytesRead
               << " bytes read, " << d.bytesWritten << " bytes written ("
               << (dir.empty() ? std::string("off") : dir) << ")\n";
}

static void printProgramStats(StringRef name, const runtime::ProgramStats &s,
                              bool cpu) {
  auto &os = llvm::outs();
  os << "stats @" << name << ":\n";
  os << "  calls: " << s.calls << "\n";
  os << "  cache hits: " << s.hits << "\n";
  os << "  cache misses: " << s.misses << "\n";
  os << "  compiles: " << s.compiles << "\n";
  os << "  fallbacks: " << s.fallbacks << "\n";
  if (cpu) {
    os << "  cpu graphs compiled: " << s.cpuGraphsCompiled << "\n";
    os << "  cpu graphs interpreted: " << s.cpuGraphsInterpreted << "\n";
    os << "  cpu graph calls: " << s.cpuGraphCalls << "\n";
    os << "  disk cache: " << s.diskCacheHits << " hits, "
       << s.diskCacheMisses << " misses, " << s.diskCacheBytesRead
       << " bytes read, " << s.diskCacheBytesWritten << " bytes written\n";
  }
  if (s.constantGraphRuns || s.constantGraphReuses)
    os << "  constant graphs: " << s.constantGraphRuns << " runs, "
       << s.constantGraphReuses << " reused\n";
  os << "  recompile reasons: " << s.recompileReasons.size() << "\n";
  for (auto [i, r] : llvm::enumerate(s.recompileReasons))
    os << "    " << i + 1 << ". " << r << "\n";
  os << "  compile time: " << llvm::format("%.6f", s.totalCompileSeconds)
     << " s\n";
  for (auto &[phase, secs] : s.compileSeconds)
    os << "    " << phase << ": " << llvm::format("%.6f", secs) << " s\n";
}

/// Runs a kg.program entry through a runtime session.
static int runProgram(kg::ProgramOp program) {
  runtime::Session session;
  std::string error;
  if (failed(session.loadModuleFile(inputFile, error)))
    return fail(error);
  auto setOpt = [&](StringRef key, StringRef value) {
    if (failed(session.setOption(key, value, error))) {
      fail(error);
      return false;
    }
    return true;
  };
  // --pipeline=kiln-cpu{...} selects the cpu backend; an explicit
  // --backend=eager/interpreter with it is a conflict (setOption says so).
  if (!setOpt("pipeline", pipeline) ||
      (backend.getNumOccurrences() && !setOpt("backend", backend)) ||
      !setOpt("cpu_fallback", cpuFallback) ||
      !setOpt("cache_size_limit", std::to_string(cacheSizeLimit)) ||
      !setOpt("frozen", frozen ? "true" : "false") ||
      !setOpt("dynamic", dynamicMode) ||
      (cacheDir.getNumOccurrences() && !setOpt("cache_dir", cacheDir)) ||
      (constantArgs.getNumOccurrences() &&
       !setOpt("constant_args", constantArgs)))
    return 1;
  StringRef name = program.getSymName();
  for (auto [list, isDynamic] :
       {std::make_pair(&markDynamic, true), std::make_pair(&markStatic, false)})
    for (const std::string &m : *list) {
      FailureOr<std::pair<unsigned, unsigned>> ad = parseArgDim(m);
      if (failed(ad))
        return 1;
      // A mark of an argument that does not exist would do nothing.
      if (ad->first >= program.getArgumentTypes().size() ||
          !isTensorArg(program.getArgumentTypes()[ad->first]))
        return fail("--mark-" + llvm::Twine(isDynamic ? "dynamic" : "static") +
                    "=" + m + ": @" + name + " has no tensor argument #" +
                    llvm::Twine(ad->first));
      if (isDynamic)
        session.markDynamic(name, ad->first, ad->second);
      else
        session.markStatic(name, ad->first, ad->second);
    }
  // Built-in host callback: print(x, ...) prints its inputs.
  session.registerHostCallback(
      "print", [](ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &,
                  std::string &) {
        for (const Tensor &t : in) {
          llvm::outs() << "print: ";
          printTensorValues(llvm::outs(), t);
          llvm::outs() << "\n";
        }
        return success();
      });

  // The calls: --call lists, else one call from --input / --random-inputs.
  SmallVector<SmallVector<Tensor>> callArgs;
  llvm::StringMap<Tensor> refState;
  if (!calls.empty()) {
    if (!inputs.empty() || randomInputs)
      return fail("--call cannot be combined with --input or --random-inputs");
    for (auto [k, c] : llvm::enumerate(calls)) {
      SmallVector<StringRef> parts;
      StringRef(c).split(parts, ',', -1, /*KeepEmpty=*/false);
      SmallVector<std::string> paths(parts.begin(), parts.end());
      FailureOr<SmallVector<Tensor>> t =
          readCallInputs(program, paths, k, refState);
      if (failed(t))
        return 1;
      callArgs.push_back(*t);
    }
  } else if (randomInputs) {
    SplitMix64 rng{seed};
    SmallVector<Tensor> args;
    for (auto [i, type] : llvm::enumerate(program.getArgumentTypes())) {
      std::string why;
      FailureOr<Tensor> t = randomTensor(type, rng, why);
      if (failed(t))
        return fail("argument '" + program.getArgSourceName(i) + "' of @" +
                    name + " " + why);
      args.push_back(*t);
    }
    callArgs.push_back(args);
  } else {
    FailureOr<SmallVector<Tensor>> t =
        readCallInputs(program, SmallVector<std::string>(inputs.begin(),
                                                         inputs.end()),
                       0, refState);
    if (failed(t))
      return 1;
    callArgs.push_back(*t);
  }

  // Random inputs as the call received them (a ref argument's buffer is
  // updated in place by the call).
  SmallVector<Tensor> randomArgs;
  if (randomInputs)
    for (auto [i, t] : llvm::enumerate(callArgs.front())) {
      FailureOr<Tensor> c =
          copyOf(t, "argument '" + program.getArgSourceName(i) + "' of @" +
                        name + " (random input)");
      if (failed(c))
        return 1;
      randomArgs.push_back(std::move(*c));
    }

  // Run every call; write and print once all have succeeded. A ref
  // argument's buffer is written back by the session after each call; its
  // contents then are kept for the output (arg<i>).
  SmallVector<SmallVector<Tensor>> allResults;
  SmallVector<SmallVector<std::pair<unsigned, Tensor>>> allRefs;
  for (auto [k, args] : llvm::enumerate(callArgs)) {
    SmallVector<runtime::ArgView> views;
    for (auto [i, t] : llvm::enumerate(args))
      views.push_back(
          runtime::viewOf(t, isTensorArg(program.getArgumentTypes()[i])));
    FailureOr<SmallVector<Tensor>> results = session.call(name, views, error);
    if (failed(results)) {
      llvm::errs() << error << "\n";
      return fail("call #" + llvm::Twine(k) + " of @" + name + " failed");
    }
    allResults.push_back(*results);
    allRefs.emplace_back();
    for (auto [i, type] : llvm::enumerate(program.getArgumentTypes()))
      if (isa<kt::RefType>(type)) {
        FailureOr<Tensor> c =
            copyOf(args[i], "call #" + llvm::Twine(k) + " of @" + name +
                                ": the contents of argument #" +
                                llvm::Twine(i));
        if (failed(c))
          return 1;
        allRefs.back().push_back({(unsigned)i, std::move(*c)});
      }
  }
  // Every file of every call first (temporaries), then all renamed at once;
  // printed after that.
  OutputFileSet files;
  SmallVector<SmallVector<Type>> allTypes;
  for (auto [k, results] : llvm::enumerate(allResults)) {
    std::string dir = outputDir;
    if (allResults.size() > 1 && !dir.empty()) {
      SmallString<256> sub(dir);
      llvm::sys::path::append(sub, "call" + llvm::Twine(k));
      dir = sub.str().str();
    }
    // The types of this call's results (an entry may be specialized to
    // other shapes and dtypes than the loaded program declares).
    SmallVector<Type> types;
    for (auto [i, t] : llvm::enumerate(results)) {
      Type declared = i < program.getResultTypes().size()
                          ? program.getResultTypes()[i]
                          : Type();
      if (declared && !isa<ShapedType>(declared))
        types.push_back(declared);
      else
        types.push_back(RankedTensorType::get(
            t.shape(), dtypeToType(t.dtype(), program.getContext())));
    }
    allTypes.push_back(std::move(types));
    // The contents of each ref argument after this call come after the
    // results.
    if (failed(addOutputFiles(files, dir, results,
                              randomInputs ? ArrayRef<Tensor>(randomArgs)
                                           : ArrayRef<Tensor>(),
                              allRefs[k])))
      return 1;
  }
  if (failed(commitOutputs(files)))
    return 1;
  for (auto [k, results] : llvm::enumerate(allResults))
    printOutputs(results, allTypes[k], allRefs[k], program.getArgumentTypes(),
                 allResults.size() > 1 ? "call " + std::to_string(k) + ":"
                                       : std::string());
  if (printEntries)
    for (auto [i, ir] : llvm::enumerate(session.entryIR(name)))
      llvm::outs() << "entry " << i << ":\n" << ir << "\n";
  if (printStats)
    if (const runtime::ProgramStats *st = session.stats(name))
      printProgramStats(name, *st, session.options().backend == "cpu");
  llvm::outs().flush();
  return 0;
}

//===----------------------------------------------------------------------===//
// --batch: many func.func entries in one process
//===----------------------------------------------------------------------===//

namespace {
struct BatchRun {
  std::string entry, outDir;
  SmallVector<std::string> inputs;
};
} // namespace

/// Writes `text` to DIR/NAME (creating DIR).
static void writeText(StringRef dir, StringRef name, StringRef text) {
  llvm::sys::fs::create_directories(dir);
  SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec)
    os << text << "\n";
}

/// The kt ops of `fn` and of the functions it references, by name.
static void collectKTOps(ModuleOp module, func::FuncOp fn,
                         llvm::StringSet<> &visited, std::set<std::string> &ops) {
  if (!visited.insert(fn.getName()).second)
    return;
  fn.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "kt")
      ops.insert(op->getName().getStringRef().str());
    for (NamedAttribute attr : op->getAttrs())
      attr.getValue().walk([&](SymbolRefAttr ref) {
        if (auto callee = module.lookupSymbol<func::FuncOp>(
                ref.getRootReference()))
          collectKTOps(module, callee, visited, ops);
      });
  });
}

/// Runs each line of --batch. Per run, DIR gets result<i>.npy, or error.txt
/// (the run failed: compile or call), or skipped.txt (cpu backend: the kt
/// ops left after kiln-lower-to-linalg{allow-partial}, i.e. without a CPU
/// lowering, one per line). Results of each run are written as soon as it
/// has run, in the order of the spec. Exit code 0 unless the spec itself is
/// unusable.
static int runBatch(ModuleOp module) {
  auto buf = llvm::MemoryBuffer::getFile(batchFile);
  if (!buf)
    return fail("cannot read --batch file '" + batchFile +
                "': " + buf.getError().message());
  std::vector<BatchRun> runs;
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    SmallVector<StringRef> fields;
    line.rtrim("\r").split(fields, '\t');
    if (fields.size() < 2)
      return fail("--batch line '" + line +
                  "': expected ENTRY<tab>OUTDIR[<tab>INPUT...]");
    BatchRun r{fields[0].str(), fields[1].str(), {}};
    for (StringRef in : ArrayRef<StringRef>(fields).drop_front(2))
      r.inputs.push_back(in.str());
    runs.push_back(std::move(r));
  }
  bool cpu = backend == "cpu";
  if (!cpu && backend != "interpreter" && backend != "eager")
    return fail("unknown --backend '" + backend +
                "' for --batch (interpreter or cpu)");

  MLIRContext *ctx = module.getContext();
  // Per-run diagnostics go to a string while it compiles or runs.
  std::string diags;
  auto collect = [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diags);
    os << locString(d.getLocation()) << ": " << d.str();
    for (Diagnostic &note : d.getNotes())
      os << " (note: " << note.str() << ")";
    os << "\n";
    return success();
  };
  ScopedDiagnosticHandler handler(ctx, collect);

  // Which entries exist (and, on cpu, which lower).
  std::vector<bool> runnable(runs.size(), true);
  for (auto [i, r] : llvm::enumerate(runs)) {
    auto fn = module.lookupSymbol<func::FuncOp>(r.entry);
    if (!fn || fn.isExternal()) {
      writeText(r.outDir, "error.txt", "no function named '" + r.entry + "'");
      runnable[i] = false;
    }
  }
  llvm::StringMap<std::shared_ptr<cpu::CPUExecutable>> exes;
  if (cpu) {
    OwningOpRef<ModuleOp> lowered(cast<ModuleOp>(module->clone()));
    PassManager pm(ctx);
    KilnLowerToLinalgPassOptions partial;
    partial.allowPartial = true;
    pm.addPass(createKilnLowerToLinalgPass(partial));
    diags.clear();
    bool loweredOk = succeeded(pm.run(*lowered));
    std::vector<std::string> names;
    llvm::StringSet<> named;
    for (auto [i, r] : llvm::enumerate(runs)) {
      if (!runnable[i])
        continue;
      if (loweredOk) {
        llvm::StringSet<> visited;
        std::set<std::string> left;
        collectKTOps(*lowered, lowered->lookupSymbol<func::FuncOp>(r.entry),
                     visited, left);
        if (!left.empty()) {
          writeText(r.outDir, "skipped.txt", llvm::join(left, "\n"));
          runnable[i] = false;
          continue;
        }
      }
      if (named.insert(r.entry).second)
        names.push_back(r.entry);
    }
    lowered = nullptr;
    // All together; if that fails, one by one (to name the failing ones).
    // The compile options of a single run (--matmul, --conv, --cpu-fuse,
    // --cpu-optimize, --cpu-threads) apply to the batch too.
    cpu::CompileOptions copts;
    if (std::string bad = cpuCompileOptions(copts); !bad.empty())
      return fail(bad);
    std::string error;
    diags.clear();
    auto all = cpu::CPUExecutable::compileAll(
        module, names, cpu::pipelineString(copts), error);
    if (succeeded(all)) {
      for (auto [name, exe] : llvm::zip(names, *all))
        exes[name] = std::move(exe);
    } else {
      for (const std::string &name : names) {
        std::string one;
        diags.clear();
        auto exe = cpu::CPUExecutable::compile(module, name, one,
                                               /*times=*/nullptr, copts);
        if (succeeded(exe))
          exes[name] = std::move(*exe);
        else
          for (auto [i, r] : llvm::enumerate(runs))
            if (r.entry == name && runnable[i]) {
              writeText(r.outDir, "error.txt", "compile: " + one);
              runnable[i] = false;
            }
      }
    }
  }

  Interpreter interp(module);
  for (auto [i, r] : llvm::enumerate(runs)) {
    if (!runnable[i])
      continue;
    auto fn = module.lookupSymbol<func::FuncOp>(r.entry);
    std::string error;
    SmallVector<Tensor> args;
    // `random:SEED`: the inputs --random-inputs --seed=SEED makes.
    uint64_t randomSeed = 0;
    bool random = r.inputs.size() == 1 &&
                  StringRef(r.inputs[0]).starts_with("random:");
    if (random &&
        StringRef(r.inputs[0]).drop_front(7).getAsInteger(10, randomSeed))
      error = "input '" + r.inputs[0] + "': expected random:SEED (an integer)";
    if (random) {
      SplitMix64 rng{randomSeed};
      for (unsigned k = 0; error.empty() && k < fn.getNumArguments(); ++k) {
        std::string why;
        FailureOr<Tensor> t = randomTensor(fn.getArgumentTypes()[k], rng, why);
        if (failed(t))
          error = "argument #" + std::to_string(k) + " of @" + r.entry + " " +
                  why;
        else
          args.push_back(*t);
      }
    } else if (r.inputs.size() != fn.getNumArguments())
      error = "@" + r.entry + " takes " + std::to_string(fn.getNumArguments()) +
              " arguments but " + std::to_string(r.inputs.size()) +
              " inputs were given";
    for (unsigned k = 0; !random && error.empty() && k < r.inputs.size(); ++k) {
      Type argType = fn.getArgumentTypes()[k];
      llvm::Expected<Tensor> t = readInput(r.inputs[k], argType);
      if (!t) {
        error = "input #" + std::to_string(k) + ": " +
                llvm::toString(t.takeError());
        break;
      }
      std::string why;
      if (!matchesType(*t, argType, why))
        error = "input #" + std::to_string(k) + " does not match: " + why;
      args.push_back(*t);
    }
    FailureOr<SmallVector<Tensor>> results = failure();
    diags.clear();
    if (error.empty()) {
      if (cpu) {
        results = exes[r.entry]->call(args, error);
      } else {
        results = interp.call(fn, args);
        if (failed(results))
          error = diags.empty() ? "running @" + r.entry + " failed" : diags;
      }
    }
    if (failed(results)) {
      writeText(r.outDir, "error.txt", error);
      continue;
    }
    // This run's results, all or nothing.
    OutputFileSet files;
    if (failed(addOutputFiles(files, r.outDir, *results, {}, {})) ||
        failed(commitOutputs(files)))
      return 1;
  }
  llvm::outs().flush();
  return 0;
}

static int runMain(int argc, char **argv);

static int toolMain(int argc, char **argv);

int main(int argc, char **argv) {
  // `kiln-run --fork-server`: the test suite's server of forked runs
  // (kiln/Support/ForkServer.h).
  int serverExit = 0;
  if (kiln::serveForkedRuns(argc, argv, toolMain, serverExit))
    return serverExit;
  return toolMain(argc, argv);
}

static int toolMain(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  kiln::installToolFatalErrorHandlers("kiln-run");
  int rc = runMain(argc, argv);
  // The trace holds everything this run did; a trace that cannot be
  // written fails the run.
  std::string traceError;
  if (!trace::flush(traceError)) {
    llvm::errs() << "error: " << traceError << "\n";
    return rc ? rc : 1;
  }
  return rc;
}

static int runMain(int argc, char **argv) {
  SmallVector<const char *> argvCopy(argv, argv + argc);
  for (const char *&a : argvCopy)
    if (StringRef(a) == "--stats" || StringRef(a) == "-stats")
      a = "--program-stats";
  // Option errors (an unknown option, "-3" for an unsigned one, a missing
  // input file) end with the contract's error line too: LLVM's messages are
  // collected and reported through fail().
  std::string optionErrors;
  llvm::raw_string_ostream optionErrorStream(optionErrors);
  // --help lists kiln-run's options (and --help, --version); the options
  // LLVM and MLIR register in every tool stay usable, listed by
  // --help-hidden / --help-list-hidden. (cl::HideUnrelatedOptions would hide
  // them from --help-hidden too.)
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!llvm::is_contained(option->Categories, &kilnRunCategory) &&
        name != "help" && name != "help-list" && name != "version" &&
        option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  if (!cl::ParseCommandLineOptions(
          argvCopy.size(), argvCopy.data(),
          "Kiln: run a func.func or a captured kg.program of an MLIR file on "
          ".npy or random inputs,\nin the reference interpreter (default) or "
          "compiled for this CPU (--backend=cpu);\nwrite, print or time the "
          "results. See docs/kiln-run.md.\n",
          &optionErrorStream)) {
    // "kiln-run: for the --x option: ..." (each line starts with the
    // program name): the first line is the error, the others follow it.
    if (!badOptionValue.empty())
      return fail(badOptionValue);
    std::string prefix = llvm::sys::path::filename(argv[0]).str() + ": ";
    auto [first, rest] = StringRef(optionErrors).split('\n');
    first.consume_front(prefix);
    return fail(first + (rest.trim().empty() ? "" : "\n") + rest.rtrim());
  }

  if (logsSpec.getNumOccurrences()) {
    std::string error;
    if (!logs::configure(logsSpec, error))
      return fail("--kiln-logs: " + error);
  }
  if (traceFile.getNumOccurrences()) {
    std::string error;
    if (!trace::open(traceFile, error))
      return fail("--kiln-trace: " + error);
  }

  DialectRegistry registry;
  registry.insert<kt::KTDialect, kg::KGDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  registerInterpreterInterfaces(registry);
  cpu::registerCPUBackendDialects(registry);
  MLIRContext context(registry);

  // One line per diagnostic: "file:line:col: error: message".
  bool hadError = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      hadError = true;
    const char *kind = diag.getSeverity() == DiagnosticSeverity::Error ? "error"
                       : diag.getSeverity() == DiagnosticSeverity::Warning
                           ? "warning"
                           : "note";
    llvm::errs() << locString(diag.getLocation()) << ": " << kind << ": "
                 << diag.str();
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << " (note: " << note.str() << ")";
    llvm::errs() << "\n";
    return success();
  });

  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail("cannot read '" + inputFile + "': " + errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("invalid IR in '" + inputFile + "'");

  if (!batchFile.empty())
    return runBatch(*module);

  // The entry: a func.func (run in the interpreter) or a kg.program (run
  // through a runtime session).
  Operation *entryOp = nullptr;
  if (entry.empty()) {
    SmallVector<Operation *> candidates;
    for (auto p : module->getOps<kg::ProgramOp>())
      candidates.push_back(p);
    if (candidates.empty())
      for (auto f : module->getOps<func::FuncOp>())
        if (!f.isExternal())
          candidates.push_back(f);
    if (candidates.size() != 1)
      return fail("'" + inputFile + "' has " + llvm::Twine(candidates.size()) +
                  " entry candidates; name one with --entry");
    entryOp = candidates.front();
  } else {
    entryOp = module->lookupSymbol(entry);
    if (!entryOp || !isa<func::FuncOp, kg::ProgramOp>(entryOp))
      return fail("no function or kg.program named '" + entry + "' in '" +
                  inputFile + "'");
  }
  if (auto program = dyn_cast<kg::ProgramOp>(entryOp))
    return runProgram(program);
  if (!calls.empty())
    return fail("--call applies to kg.program entries; use --input for a "
                "func.func");
  auto fn = cast<func::FuncOp>(entryOp);
  // The runtime session's options mean nothing for a func.func; given
  // anyway they would be silently ignored (--pipeline=no-such-pass ran).
  for (cl::Option *o : {static_cast<cl::Option *>(&pipeline),
                        static_cast<cl::Option *>(&cacheSizeLimit),
                        static_cast<cl::Option *>(&frozen),
                        static_cast<cl::Option *>(&dynamicMode),
                        static_cast<cl::Option *>(std::addressof(markDynamic)),
                        static_cast<cl::Option *>(std::addressof(markStatic)),
                        static_cast<cl::Option *>(&printEntries)})
    if (o->getNumOccurrences())
      return fail("--" + o->ArgStr + " applies to kg.program entries; @" +
                  fn.getName() + " is a func.func (see --backend)");

  unsigned numArgs = fn.getNumArguments();
  SmallVector<Tensor> args, savedInputs;
  if (randomInputs) {
    if (!inputs.empty())
      return fail("--random-inputs and --input cannot be combined");
    SplitMix64 rng{seed};
    for (unsigned i = 0; i < numArgs; ++i) {
      std::string why;
      FailureOr<Tensor> t = randomTensor(fn.getArgumentTypes()[i], rng, why);
      if (failed(t))
        return fail("argument #" + llvm::Twine(i) + " of @" + fn.getName() +
                    " " + why);
      args.push_back(*t);
    }
  } else {
    if (inputs.size() != numArgs)
      return fail("@" + fn.getName() + " takes " + llvm::Twine(numArgs) +
                  " arguments but " + llvm::Twine(inputs.size()) +
                  " --input files were given");
    for (unsigned i = 0; i < numArgs; ++i) {
      Type argType = fn.getArgumentTypes()[i];
      llvm::Expected<Tensor> t = readInput(inputs[i], argType);
      if (!t)
        return fail("input #" + llvm::Twine(i) + ": " +
                    llvm::toString(t.takeError()));
      std::string why;
      if (!matchesType(*t, argType, why))
        return fail("input #" + llvm::Twine(i) + " ('" + inputs[i] +
                    "') does not match argument #" + llvm::Twine(i) + " of @" +
                    fn.getName() + ": " + why);
      args.push_back(*t);
    }
  }

  // Ref arguments (mutated inputs): the interpreter writes into the argument
  // buffers; keep copies of random inputs so that input<i>.npy holds the
  // values the function received.
  // One file named for several ref arguments is one buffer they all alias
  // (the same tensor passed twice), so a write through one is seen by the
  // others; a plain tensor argument always gets the file's contents.
  SmallVector<unsigned> refArgs;
  llvm::StringMap<unsigned> refByFile;
  for (unsigned i = 0; i < numArgs; ++i)
    if (isa<kt::RefType>(fn.getArgumentTypes()[i])) {
      refArgs.push_back(i);
      savedInputs.push_back(args[i]);
      if (!randomInputs) {
        auto [it, inserted] = refByFile.try_emplace(fileKey(inputs[i]), i);
        if (!inserted) {
          unsigned first = it->second;
          std::string why;
          if (!matchesType(args[first], fn.getArgumentTypes()[i], why))
            return fail("input #" + llvm::Twine(i) + " ('" + inputs[i] +
                        "') is the buffer of ref argument #" +
                        llvm::Twine(first) + ", which argument #" +
                        llvm::Twine(i) + " cannot alias: " + why);
          args[i] = args[first];
          continue;
        }
      }
      FailureOr<Tensor> copy =
          copyOf(args[i], "argument #" + llvm::Twine(i) + " of @" +
                              fn.getName() + " (a copy of the ref's input)");
      if (failed(copy))
        return 1;
      args[i] = std::move(*copy); // the buffer the call mutates
    } else {
      savedInputs.push_back(args[i]);
    }

  FailureOr<SmallVector<Tensor>> results = failure();
  // --repeat: times of calls 2..N+1 (the first call warms up).
  SmallVector<double> callTimes, kernelTimes;
  auto timed = [&](auto &&callOnce) -> bool {
    for (unsigned i = 0; i < repeat + (repeat ? 1 : 0) || i == 0; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      results = callOnce();
      double dt = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      if (failed(results))
        return false;
      if (i > 0)
        callTimes.push_back(dt);
    }
    return true;
  };
  if (backend == "cpu") {
    std::string error;
    cpu::CompileTimes times;
    cpu::CompileOptions copts;
    if (std::string bad = cpuCompileOptions(copts); !bad.empty())
      return fail(bad);
    copts.objectFile = emitObject;
    if (cacheDir.getNumOccurrences())
      copts.cacheDir = cacheDir;
    auto exe = cpu::CPUExecutable::compile(*module, fn.getName(), error,
                                           &times, copts);
    if (failed(exe))
      return fail(error);
    if (printStats) {
      llvm::outs() << "compile time: kiln-cpu "
                   << llvm::format("%.6f", times.pipeline) << " s, jit "
                   << llvm::format("%.6f", times.jit) << " s"
                   << (times.diskHit ? " (code loaded from the disk cache)"
                                     : "")
                   << "\n";
      llvm::outs() << "compile phases: fuse "
                   << llvm::format("%.6f", times.fuse) << " s, outline "
                   << llvm::format("%.6f", times.outline) << " s, lower "
                   << llvm::format("%.6f", times.lower) << " s, bufferize "
                   << llvm::format("%.6f", times.bufferize)
                   << " s, llvm-dialect "
                   << llvm::format("%.6f", times.toLLVMDialect)
                   << " s, translate "
                   << llvm::format("%.6f", times.translate) << " s, llvm-opt "
                   << llvm::format("%.6f", times.llvmOpt) << " s, codegen "
                   << llvm::format("%.6f", times.codegen) << " s\n";
      llvm::outs() << "kernels: " << times.kernels << " compiled, "
                   << (times.kernelSites > times.kernels
                           ? times.kernelSites - times.kernels
                           : 0)
                   << " reused (" << times.kernelSites << " call sites)\n";
      llvm::outs() << "pipeline: " << cpu::pipelineString(copts) << "\n";
    }
    if (!emitObject.empty() && printStats)
      llvm::outs() << "object file: " << emitObject << "\n";
    if (!timed([&] {
          auto r = (*exe)->call(args, error);
          kernelTimes.push_back((*exe)->lastKernelSeconds());
          return r;
        }))
      return fail("running @" + fn.getName() + " on the CPU backend failed: " +
                  error);
    if (printStats) {
      // A second compile of the same module and options: a cache hit.
      if (emitObject.empty()) {
        cpu::CompileTimes again;
        auto exe2 = cpu::CPUExecutable::compile(*module, fn.getName(), error,
                                                &again, copts);
        if (failed(exe2))
          return fail(error);
      }
      cpu::KernelCacheStats cs = cpu::kernelCacheStats();
      llvm::outs() << "kernel cache: " << cs.hits << " hits, " << cs.misses
                   << " misses, " << cs.entries << " entries\n";
      printDiskCacheStats(copts.cacheDir);
      cpu::BufferPoolStats ps = cpu::bufferPoolStats();
      llvm::outs() << "buffer pool: " << ps.hits << " hits, " << ps.misses
                   << " misses, " << llvm::format("%.1f", ps.cachedBytes / 1048576.0)
                   << " MiB cached\n";
    }
  } else if (backend == "interpreter" || backend == "eager") {
    Interpreter interp(*module);
    if (!timed([&] { return interp.call(fn, args); }))
      return fail("running @" + fn.getName() + " failed");
  } else {
    return fail("unknown --backend '" + backend +
                "' for a func.func entry (interpreter or cpu)");
  }
  auto printTimes = [](StringRef what, ArrayRef<double> times) {
    SmallVector<double> sorted(times);
    llvm::sort(sorted);
    double median = sorted.size() % 2
                        ? sorted[sorted.size() / 2]
                        : (sorted[sorted.size() / 2 - 1] +
                           sorted[sorted.size() / 2]) /
                              2;
    llvm::outs() << what << ": median " << llvm::format("%.6f", median)
                 << " s, min " << llvm::format("%.6f", sorted.front())
                 << " s, max " << llvm::format("%.6f", sorted.back())
                 << " s over " << sorted.size() << " calls\n";
  };
  if (!callTimes.empty()) {
    printTimes("call time", callTimes);
    // The compiled code alone (the first, warm-up call excluded).
    if (kernelTimes.size() > 1)
      printTimes("kernel time", ArrayRef<double>(kernelTimes).drop_front());
  }

  // A returned ref prints (and is written as) its contents.
  for (auto [i, r] : llvm::enumerate(*results)) {
    llvm::Expected<Tensor> loaded = r.loadRef();
    if (!loaded)
      return fail("result #" + llvm::Twine(i) + " of @" + fn.getName() + ": " +
                  llvm::toString(loaded.takeError()));
    r = std::move(*loaded);
  }
  if (hadError)
    return fail("running @" + fn.getName() + " reported errors");
  // The final contents of each ref argument come after the results.
  SmallVector<std::pair<unsigned, Tensor>> finalRefs;
  for (unsigned i : refArgs)
    finalRefs.push_back({i, args[i]});
  OutputFileSet files;
  if (failed(addOutputFiles(files, outputDir, *results,
                            randomInputs ? ArrayRef<Tensor>(savedInputs)
                                         : ArrayRef<Tensor>(),
                            finalRefs)) ||
      failed(commitOutputs(files)))
    return 1;
  printOutputs(*results, fn.getResultTypes(), finalRefs, fn.getArgumentTypes(),
               /*header=*/"");
  llvm::outs().flush();
  return 0;
}
