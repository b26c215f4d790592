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

/// What the checks of kg programs ran (kiln-fuzz-gen's summary), summed
/// over programs.
struct DiffCounts {
  unsigned programs = 0;     ///< kg programs checked
  unsigned calls = 0;        ///< session calls (per backend)
  unsigned dynamic = 0;      ///< sessions with dynamic = dynamic
  unsigned dynamicSqueeze = 0; ///< refused: a squeeze of a `?` dim of size 1
  unsigned stridedRefs = 0;  ///< programs called with strided refs
  unsigned tiedRefs = 0;     ///< programs called with one tensor for 2 refs
  unsigned tiedChecked = 0;  ///< of those, compared with the tied program
  unsigned overlappingRefs = 0; ///< called with two refs overlapping partly
  unsigned refAsPlain = 0;   ///< called with a ref's tensor as a plain arg
  unsigned refused = 0;      ///< aliasing calls both backends refused
};

struct DiffOptions {
  uint64_t seed = 0;      ///< of makeInputs
  bool cpu = true;        ///< false: parse, verify and interpret only
  cpu::CompileOptions compile;
  DiffCounts *counts = nullptr; ///< if set, kg program checks add to it
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
///
/// A kg program (GeneratedProgram::isProgram, version 3) runs as users run
/// one: through a runtime session (kiln::runtime::Session, what the C API
/// and kiln-run drive), one with the eager backend (the interpreter) and
/// one with the cpu backend (every other program with dynamic = dynamic in
/// both), each called twice per layout (the second call
/// starts from the refs the first left, and hits the cache entry): every
/// argument its own row-major buffer; refs strided (every other element of
/// a buffer; column-major); one tensor for two refs of one dtype and shape
/// (the eager call also compared with the program whose graphs take the
/// first ref for both, in a fresh session); two refs of one dtype that
/// overlap partly (the second starts at the first's middle element); a
/// ref's tensor passed for a plain argument too. Bytes of a buffer outside
/// every argument's view must stay untouched. Compared: results, every argument's
/// contents after the call, and what the graph breaks' host calls saw.
/// Both calls failing is a match for an aliasing call (a refusal), else
/// BothFailed; one failing is a Mismatch.
Outcome checkProgram(mlir::MLIRContext &context,
                     const GeneratedProgram &program,
                     const DiffOptions &options, std::string &message);

} // namespace kiln::testing

#endif // KILN_TESTING_DIFFERENTIAL_H
