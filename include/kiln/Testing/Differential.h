//===- Differential.h - Interpreter vs CPU backend on one program -*- C++ -*-===//
//
// Part of Kiln. Runs a generated program (ProgramGenerator.h) in the
// reference interpreter and on the CPU backend on the same seeded inputs and
// compares the results (sameTensor). Used by the differential fuzzer
// (fuzz/kiln-fuzz-diff.cpp) and by `kiln-fuzz-gen --cpu` (normal build), so a
// finding reproduces without the fuzz build.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTING_DIFFERENTIAL_H
#define KILN_TESTING_DIFFERENTIAL_H

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Testing/ProgramGenerator.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <string>

namespace kiln::testing {

/// The dialects and interfaces generated programs need: kt, kg, func,
/// arith, scf, tensor, the interpreter's kernels and the CPU backend's.
void registerTestingDialects(mlir::DialectRegistry &registry);

enum class Outcome {
  Match,            ///< both ran, same results
  Invalid,          ///< the program does not parse or verify (a generator bug)
  InterpreterError, ///< the interpreter failed on a valid program
  Unsupported,      ///< the CPU backend refused to compile it, with an error
  Mismatch,         ///< the CPU call failed, or its results differ
  /// A program with a size-0 dim (GeneratedProgram::hasZeroDim) failed in
  /// the interpreter and on the CPU backend (at compile or call time): a
  /// run-time error both report, not a finding (without the CPU backend:
  /// the interpreter's error alone). The CPU backend succeeding where the
  /// interpreter fails is a Mismatch.
  BothFailed,
};
llvm::StringRef outcomeName(Outcome o);

struct DiffOptions {
  uint64_t seed = 0;      ///< of makeInputs
  bool cpu = true;        ///< false: parse, verify and interpret only
  cpu::CompileOptions compile;
};

/// What a kiln-fuzz-diff input means: byte 0 is the input seed (bits 0-5),
/// GeneratorOptions::zeroDims (bit 6, since rl23; before, bit 6 was part of
/// the seed) and `optimize=false` (bit 7); the rest are the generator's
/// bytes. The harness and `kiln-fuzz-gen --fuzz-input` share it, so a
/// reproducer runs the same in the normal build.
struct DiffCase {
  GeneratedProgram program;
  DiffOptions options;
};
DiffCase diffCaseFromFuzzInput(llvm::ArrayRef<uint8_t> bytes);

/// Checks `program` in `context`; `message` gets the diagnostics and, for a
/// mismatch, which result and element differ.
Outcome checkProgram(mlir::MLIRContext &context,
                     const GeneratedProgram &program,
                     const DiffOptions &options, std::string &message);

} // namespace kiln::testing

#endif // KILN_TESTING_DIFFERENTIAL_H
