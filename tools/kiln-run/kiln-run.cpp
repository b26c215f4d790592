//===- kiln-run.cpp - Run a function of a .mlir file ----------------------===//
//
// Part of Kiln.
//
//   kiln-run FILE.mlir --entry=NAME [--input=X.npy]... [--random-inputs
//            --seed=N] [--output-dir=DIR] [--print]
//
// Inputs are .npy files in argument order; results are written as
// DIR/result0.npy, result1.npy, ... only once every result is computed (each
// file atomically). Every failure ends with one line on stderr naming what was
// wrong, and exit code 1; nothing is written then.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Support/NPY.h"
#include "kiln/Support/TensorFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::interp;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    entry("entry", cl::desc("Function to run (default: the only function)"),
          cl::value_desc("name"));
static cl::list<std::string> inputs("input",
                                    cl::desc("A .npy input, in argument order"),
                                    cl::value_desc("path"));
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Make inputs: floats ~ N(0,1), ints in [0,10), bools 50/50"));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write results as DIR/result<i>.npy (and random inputs "
                       "as DIR/input<i>.npy)"),
              cl::value_desc("dir"));
static cl::opt<bool> printResults("print",
                                  cl::desc("Print each result as text"));

static std::string locString(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto fl = dyn_cast<FileLineColLoc>(loc)) {
    os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
       << fl.getColumn();
    return s;
  }
  if (auto nl = dyn_cast<NameLoc>(loc))
    return locString(nl.getChildLoc());
  if (auto cs = dyn_cast<CallSiteLoc>(loc))
    return locString(cs.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return locString(fused.getLocations().front());
  return "kiln-run";
}

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "kiln-run: error: " << msg << "\n";
  return 1;
}

namespace {
/// splitmix64: a small, fully specified generator, so --random-inputs gives
/// the same values on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  double normal() {
    double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2 * M_PI * u2);
  }
};
} // namespace

static FailureOr<Tensor> randomTensor(Type type, SplitMix64 &rng,
                                      std::string &why) {
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
    why = "has an unsupported type";
    return failure();
  }
  Tensor t(*dt, shape);
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

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Kiln: run a function in the "
                                          "reference interpreter\n");

  DialectRegistry registry;
  registry.insert<kt::KTDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  registerInterpreterInterfaces(registry);
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

  func::FuncOp fn;
  if (entry.empty()) {
    SmallVector<func::FuncOp> fns;
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal())
        fns.push_back(f);
    if (fns.size() != 1)
      return fail("'" + inputFile + "' has " + llvm::Twine(fns.size()) +
                  " functions; name one with --entry");
    fn = fns.front();
  } else {
    fn = module->lookupSymbol<func::FuncOp>(entry);
    if (!fn)
      return fail("no function named '" + entry + "' in '" + inputFile + "'");
  }

  unsigned numArgs = fn.getNumArguments();
  SmallVector<Tensor> args;
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
      llvm::Expected<Tensor> t = readNPY(inputs[i]);
      if (!t)
        return fail("input #" + llvm::Twine(i) + ": " +
                    llvm::toString(t.takeError()));
      Type argType = fn.getArgumentTypes()[i];
      Type elem = argType;
      if (auto st = dyn_cast<ShapedType>(argType))
        elem = st.getElementType();
      // NumPy has no bfloat16: accept f32 data for a bf16 argument.
      if (elem.isBF16() && t->dtype() == DType::F32)
        *t = t->convertTo(DType::BF16);
      std::string why;
      if (!matchesType(*t, argType, why))
        return fail("input #" + llvm::Twine(i) + " ('" + inputs[i] +
                    "') does not match argument #" + llvm::Twine(i) + " of @" +
                    fn.getName() + ": " + why);
      args.push_back(*t);
    }
  }

  Interpreter interp(*module);
  FailureOr<SmallVector<Tensor>> results = interp.call(fn, args);
  if (failed(results))
    return fail("running @" + fn.getName() + " failed");

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create output directory '" + outputDir +
                  "': " + ec.message());
    auto writeAll = [&](StringRef prefix, ArrayRef<Tensor> ts) -> bool {
      for (auto [i, t] : llvm::enumerate(ts)) {
        SmallString<256> path(outputDir);
        llvm::sys::path::append(path, prefix + llvm::Twine(i) + ".npy");
        if (llvm::Error e = writeNPY(path, t)) {
          fail(llvm::toString(std::move(e)));
          return false;
        }
      }
      return true;
    };
    if (!writeAll("result", *results))
      return 1;
    if (randomInputs && !writeAll("input", args))
      return 1;
  }

  if (printResults) {
    for (auto [i, t] : llvm::enumerate(*results)) {
      llvm::outs() << "result" << i << ": " << fn.getResultTypes()[i] << "\n";
      printTensorValues(llvm::outs(), t);
      llvm::outs() << "\n";
    }
  }
  llvm::outs().flush();
  return hadError ? 1 : 0;
}
