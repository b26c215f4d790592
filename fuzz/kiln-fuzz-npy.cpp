//===- kiln-fuzz-npy.cpp - libFuzzer harness: the .npy reader -------------===//
//
// Part of Kiln (docs/debugging.md, "Fuzzing"). Arbitrary bytes go to
// kiln::parseNPY (kiln/Support/NPY.h). A file it accepts must write back
// (writeNPY) and read again as the same tensor; a file it rejects must say
// why. Crashes, sanitizer reports and these checks are findings.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/NPY.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace kiln;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<interp::Tensor> t = parseNPY(bytes);
  if (!t) {
    std::string message = llvm::toString(t.takeError());
    if (message.empty()) {
      fprintf(stderr, "parseNPY failed without a message\n");
      abort();
    }
    return 0;
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  writeNPY(os, *t);
  os.flush();
  llvm::Expected<interp::Tensor> back = parseNPY(out);
  if (!back) {
    fprintf(stderr, "writeNPY's output does not read back: %s\n",
            llvm::toString(back.takeError()).c_str());
    abort();
  }
  if (back->dtype() != t->dtype() || back->shape() != t->shape() ||
      back->byteSize() != t->byteSize() ||
      (t->byteSize() && memcmp(back->data(), t->data(), t->byteSize()))) {
    fprintf(stderr, "writeNPY + parseNPY changed the tensor\n");
    abort();
  }
  return 0;
}
