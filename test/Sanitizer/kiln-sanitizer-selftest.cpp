//===- kiln-sanitizer-selftest.cpp - A sanitizer finding on purpose -------===//
//
// Part of Kiln. Built only in sanitizer builds (test/Sanitizer): starts as
// Kiln's tools do (llvm::InitLLVM, whose stack-dump handler catches SIGABRT,
// then kiln::installToolFatalErrorHandlers) and then makes the finding its
// argument names, so the tests can check that a sanitizer report ends a
// tool promptly, with the report (docs/debugging.md, "Sanitizer builds").
//
//   kiln-sanitizer-selftest race   a data race (ThreadSanitizer)
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ToolErrors.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <thread>

// Written by two threads with nothing ordering the writes. noinline and
// volatile keep -O1 from merging or dropping them.
static volatile int racy;

[[gnu::noinline]] static void writeRacy(int value) { racy = value; }

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  kiln::installToolFatalErrorHandlers("kiln-sanitizer-selftest");
  if (argc != 2 || std::strcmp(argv[1], "race") != 0) {
    llvm::errs() << "usage: kiln-sanitizer-selftest race\n";
    return 1;
  }
  std::thread other([] { writeRacy(1); });
  writeRacy(2);
  other.join();
  llvm::errs() << "kiln-sanitizer-selftest: no report\n";
  return 0;
}
