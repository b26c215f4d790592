/*===-- kiln_rt.h - Load and run Kiln packages (libkiln_rt) -------*- C -*-===*\
|*                                                                            *|
|* Part of Kiln's compiled-code runtime (runtime/). libkiln_rt.so loads the   *|
|* packages `kiln-compile` writes (one shared object per compiled program,    *|
|* with its manifest), checks the guards of an entry and runs it on DLPack    *|
|* tensors. It is plain C++17 over the C library: it builds with CMake and a  *|
|* C++ compiler, without LLVM, MLIR or the rest of Kiln (docs/packages.md).   *|
|*                                                                            *|
|* Conventions:                                                               *|
|*  - functions returning int return KILN_RT_OK (0) on success and            *|
|*    KILN_RT_ERROR otherwise; functions returning a pointer return NULL on   *|
|*    failure. After a failure kiln_rt_last_error() is the message (per       *|
|*    thread, valid until the thread's next call into libkiln_rt).            *|
|*  - arguments are borrowed DLTensors (never owned or modified); results are *|
|*    DLManagedTensors the caller owns: call their deleter once.             *|
|*  - a package and its entries may be used from several threads at once.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RT_H
#define KILN_RT_H

#include "kiln-c/DLPack.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API's version: the major changes with incompatible changes (it is the
 * SONAME's number, libkiln_rt.so.0). */
#define KILN_RT_API_VERSION_MAJOR 0
#define KILN_RT_API_VERSION_MINOR 1
/* The package format this library loads (the manifest's format_version). */
#define KILN_RT_PACKAGE_FORMAT_VERSION 1

#define KILN_RT_OK 0
#define KILN_RT_ERROR 1

/* KILN_RT_API_VERSION_MAJOR * 1000 + KILN_RT_API_VERSION_MINOR of the
 * loaded library. */
int kiln_rt_api_version(void);
/* The package format version the loaded library reads. */
int kiln_rt_package_format_version(void);

/* The message of this thread's last failure ("" if none). */
const char *kiln_rt_last_error(void);

typedef struct KilnRtPackage KilnRtPackage;

/* Loads the package at `path`: checks that it is a Kiln package of a format
 * version this library reads, loads the libraries its manifest lists
 * (libomp, OpenBLAS, libm: by name, else from the folders of the
 * KILN_RT_LIBRARY_PATH environment variable, else from where they were when
 * the package was made), then the package itself. NULL on failure. */
KilnRtPackage *kiln_rt_package_load(const char *path);
/* Unloads a package (NULL is ignored). Results already returned stay valid. */
void kiln_rt_package_free(KilnRtPackage *package);

/* The manifest (JSON, docs/packages.md); owned by the package. */
const char *kiln_rt_package_manifest(const KilnRtPackage *package);

/* The entries: 0 .. count-1; kiln_rt_package_find_entry gives the index of
 * a name, or -1 (with an error) when there is none. */
int kiln_rt_package_num_entries(const KilnRtPackage *package);
const char *kiln_rt_entry_name(const KilnRtPackage *package, int entry);
int kiln_rt_package_find_entry(const KilnRtPackage *package, const char *name);

/* One argument or result of an entry's signature. `shape` has `ndim`
 * entries: a size, or -1 for a dynamic dim; `dim_names` (may be NULL per
 * dim) names a symbolic dim ("s0": equal wherever s0 appears). Owned by the
 * package. */
typedef struct {
  const char *name; /* arguments: the source name; results: "" */
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape;
  const char *const *dim_names;
} KilnRtTensorSpec;

int kiln_rt_entry_num_args(const KilnRtPackage *package, int entry);
int kiln_rt_entry_num_results(const KilnRtPackage *package, int entry);
int kiln_rt_entry_arg(const KilnRtPackage *package, int entry, int index,
                      KilnRtTensorSpec *out);
int kiln_rt_entry_result(const KilnRtPackage *package, int entry, int index,
                         KilnRtTensorSpec *out);

/* Checks `args` against the entry's guards: count, device (kDLCPU
 * for CPU packages, kDLCUDA device 0 for CUDA ones), dtype, rank, static dims, symbolic dims
 * and shape relations. KILN_RT_ERROR with a message naming the argument on
 * a mismatch. */
int kiln_rt_check_args(const KilnRtPackage *package, int entry,
                       const DLTensor *const *args, int num_args);

/* Runs the entry: checks the guards (as kiln_rt_check_args), calls the
 * compiled code and stores `num_results` (the entry's result count) new
 * tensors in `results`. A run-time error of the compiled code (an index out
 * of range, ...) or a failed allocation is KILN_RT_ERROR with the message;
 * no results are returned then. Arguments with strides that are not compact
 * row-major are copied first. */
int kiln_rt_run(const KilnRtPackage *package, int entry,
                const DLTensor *const *args, int num_args,
                DLManagedTensor **results, int num_results);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RT_H */
