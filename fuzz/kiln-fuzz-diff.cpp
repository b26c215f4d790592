//===- kiln-fuzz-diff.cpp - libFuzzer harness: interpreter vs CPU ---------===//
//
// Part of Kiln (docs/debugging.md, "Fuzzing"). Differential: the bytes
// describe a small valid program (kiln/Testing/ProgramGenerator.h; byte 0
// picks the input seed, size-0 dims and whether the CPU code is optimized;
// see diffCaseFromFuzzInput), which runs in
// the reference interpreter and on the CPU backend (kiln-cpu + JIT, no
// kernel cache) on the same seeded inputs. Findings: a crash, a program that
// does not verify or fails in the interpreter (a generator or interpreter
// bug), a CPU call that fails or whose results differ beyond tolerance
// (NaN-aware). A program the CPU backend refuses with an error is skipped,
// and so is one with a size-0 dim that fails on both backends. A kg program
// (generator version 3, the default) runs through two runtime sessions,
// eager and cpu backend, with row-major, strided and aliasing ref
// arguments; its refs' final contents are compared too (checkProgram).
// Reproduce a finding in the normal build with
// `kiln-fuzz-gen --fuzz-input=CRASH` (same program, seed and options).
//
//===----------------------------------------------------------------------===//

#include "kiln/Testing/Differential.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace kiln::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerTestingDialects(*r);
    return r;
  }();
  DiffCase c = diffCaseFromFuzzInput(llvm::ArrayRef(data, size));
  const GeneratedProgram &program = c.program;
  const DiffOptions &options = c.options;
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  std::string message;
  Outcome outcome = checkProgram(context, program, options, message);
  if (outcome == Outcome::Match || outcome == Outcome::Unsupported ||
      outcome == Outcome::BothFailed)
    return 0;
  fprintf(stderr, "kiln-fuzz-diff: %s (input seed %u, optimize=%d)\n%s\n%s",
          outcomeName(outcome).str().c_str(), unsigned(options.seed),
          int(options.compile.optimize), program.text.c_str(),
          message.c_str());
  abort();
}
