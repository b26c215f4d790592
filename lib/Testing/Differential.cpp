//===- Differential.cpp - Interpreter vs CPU backend on one program -------===//
//
// Part of Kiln. See kiln/Testing/Differential.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Testing/Differential.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::testing;

void kiln::testing::registerTestingDialects(DialectRegistry &registry) {
  registry.insert<kt::KTDialect, kg::KGDialect, func::FuncDialect,
                  arith::ArithDialect, scf::SCFDialect, tensor::TensorDialect>();
  interp::registerInterpreterInterfaces(registry);
  cpu::registerCPUBackendDialects(registry);
}

llvm::StringRef kiln::testing::outcomeName(Outcome o) {
  switch (o) {
  case Outcome::Match: return "match";
  case Outcome::Invalid: return "invalid program";
  case Outcome::InterpreterError: return "interpreter error";
  case Outcome::Unsupported: return "unsupported by the CPU backend";
  case Outcome::Mismatch: return "mismatch";
  case Outcome::BothFailed: return "both failed (a size-0 dim)";
  }
  return "?";
}

DiffCase kiln::testing::diffCaseFromFuzzInput(llvm::ArrayRef<uint8_t> bytes) {
  DiffCase c;
  uint8_t first = bytes.empty() ? 0 : bytes.front();
  GeneratorOptions gen;
  gen.zeroDims = first & 0x40;
  c.program = generateProgram(bytes.drop_front(bytes.empty() ? 0 : 1), gen);
  c.options.seed = first & 0x3f;
  c.options.compile.optimize = !(first & 0x80);
  c.options.compile.threads = 1;
  c.options.compile.useCache = false;
  return c;
}

Outcome kiln::testing::checkProgram(MLIRContext &context,
                                    const GeneratedProgram &program,
                                    const DiffOptions &options,
                                    std::string &message) {
  llvm::raw_string_ostream os(message);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(program.text, &context);
  if (!module)
    return Outcome::Invalid;

  llvm::Expected<llvm::SmallVector<interp::Tensor>> inputs =
      makeInputs(program, options.seed);
  if (!inputs) {
    os << llvm::toString(inputs.takeError()) << "\n";
    return Outcome::InterpreterError;
  }
  interp::Interpreter interpreter(*module);
  FailureOr<llvm::SmallVector<interp::Tensor>> want =
      interpreter.call(program.entry, *inputs);
  // With a size-0 dim a run-time error is valid (an empty reduction without
  // identity, an index into an empty dim), when the CPU backend reports one
  // too; otherwise the interpreter failing is a finding.
  bool mayFail = program.hasZeroDim;
  if (failed(want) && !mayFail)
    return Outcome::InterpreterError;
  if (!options.cpu)
    return failed(want) ? Outcome::BothFailed : Outcome::Match;

  std::string error;
  auto exe = cpu::CPUExecutable::compile(*module, program.entry, error,
                                         nullptr, options.compile);
  if (failed(exe)) {
    os << error << "\n";
    return failed(want) ? Outcome::BothFailed : Outcome::Unsupported;
  }
  FailureOr<llvm::SmallVector<interp::Tensor>> got = (*exe)->call(*inputs, error);
  if (failed(want)) {
    if (failed(got)) {
      os << "the CPU call failed too: " << error << "\n";
      return Outcome::BothFailed;
    }
    os << "the interpreter failed, the CPU call succeeded\n";
    return Outcome::Mismatch;
  }
  if (failed(got)) {
    os << "the CPU call failed: " << error << "\n";
    return Outcome::Mismatch;
  }
  if (got->size() != want->size()) {
    os << got->size() << " results on the CPU, " << want->size()
       << " in the interpreter\n";
    return Outcome::Mismatch;
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(*want, *got))) {
    std::string why;
    double scale = i < program.tolerance.size() ? program.tolerance[i] : 1.0;
    if (!sameTensor(std::get<0>(pair), std::get<1>(pair), why, scale)) {
      os << "result " << i << " (interpreter vs cpu): " << why << "\n";
      return Outcome::Mismatch;
    }
  }
  return Outcome::Match;
}
