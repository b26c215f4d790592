//===- kiln-fuzz-parse.cpp - libFuzzer harness: parse + verify ------------===//
//
// Part of Kiln (docs/debugging.md, "Fuzzing"). Arbitrary bytes are parsed as
// a module (kt, kg, func, arith, scf, tensor registered) and verified. A
// module that parses and verifies must print and parse again (custom
// assembly formats round-trip). Crashes, sanitizer reports and a failed
// round trip are findings; parse and verifier errors are expected.
//
//===----------------------------------------------------------------------===//

#include "kiln/Testing/Differential.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    kiln::testing::registerTestingDialects(*r);
    return r;
  }();
  // A fresh context per input: nothing one input leaves behind (uniqued
  // types, attributes) changes how the next one goes.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream(diagnostics) << diag << "\n";
    return success();
  });
  // A NUL-terminated copy: MLIR's parser reads the byte after the buffer
  // (as the tools' files and kiln::runtime::parseModuleText give it).
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  os.flush();
  diagnostics.clear();
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(printed, &context);
  if (!again) {
    fprintf(stderr,
            "a module that verifies does not parse again after printing:\n%s\n"
            "-- printed --\n%s\n",
            diagnostics.c_str(), printed.c_str());
    abort();
  }
  return 0;
}
