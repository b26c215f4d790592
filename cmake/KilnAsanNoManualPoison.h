/* Force-included (-include) into every Kiln C++ source of an ASan build
 * (KILN_SANITIZE with address, CMakeLists.txt; docs/debugging.md "Sanitizer
 * builds") and into the instrumented C++ code of a fuzz build (KILN_FUZZ:
 * the harnesses and the libraries in KILN_FUZZ_INSTRUMENT).
 *
 * LLVM's headers poison and unpoison memory by hand when the including code
 * is compiled with ASan (llvm/Support/Compiler.h: BumpPtrAllocator poisons a
 * new slab and unpoisons each allocation, Recycler poisons what it
 * recycles). That is right only when all of LLVM is instrumented. Kiln's
 * libMLIR.so/libLLVM.so are not: a slab that Kiln's instrumented inline
 * BumpPtrAllocator code starts is poisoned, libMLIR's uninstrumented copy of
 * the same inline code then hands out pieces of it without unpoisoning them,
 * and Kiln's next read of such an object (a type MLIR's parser uniqued into
 * the context's allocator) is reported as use-after-poison: a false report.
 * Here the declarations come first (the header's include guard keeps
 * Compiler.h from including them again) and the two calls become no-ops in
 * Kiln's code, so only MLIR-independent ASan checks remain (heap and stack
 * overflows, use after free, leaks). Kiln's own code poisons nothing.
 */
#ifndef KILN_ASAN_NO_MANUAL_POISON_H
#define KILN_ASAN_NO_MANUAL_POISON_H
#include <sanitizer/asan_interface.h>
#undef __asan_poison_memory_region
#undef __asan_unpoison_memory_region
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
#endif
