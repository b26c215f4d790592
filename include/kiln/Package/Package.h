//===- Package.h - Deployable compiled packages -----------------*- C++ -*-===//
//
// Part of Kiln. A package is one shared object per compiled program that
// runs without the compiler: the host code of its entries (the CPU backend's
// object file, linked into a .so by ld.lld or the system linker) and a
// manifest, a JSON document that the function
//
//   const char *kiln_package_manifest(void);
//
// of the package returns: the format and Kiln versions, the target, the
// pipeline string, the entries with their argument / result signatures
// (dtypes, static and symbolic dims) and guards, the run-time error message
// templates of the compiled checks, and the libraries the code needs
// (libomp, OpenBLAS, libm). libkiln_rt (runtime/include/kiln_rt.h) loads and
// runs packages; docs/packages.md describes the format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PACKAGE_PACKAGE_H
#define KILN_PACKAGE_PACKAGE_H

#include "kiln/Backend/CPU/CPUBackend.h"
#include "kiln/Backend/NVPTX/NVPTXBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace kiln::package {

/// The version of the package format (the manifest's `format_version`);
/// equal to KILN_RT_PACKAGE_FORMAT_VERSION of runtime/include/kiln_rt.h.
inline constexpr int kFormatVersion = 1;

struct PackageOptions {
  /// The func.func or kg.program entries (empty: the module's only
  /// kg.program, else its only public func.func with a body).
  std::vector<std::string> entries;
  /// "cpu" (host code, kiln-cpu) or "cuda" (kiln-nvptx: host code that
  /// launches embedded kernels through libkiln_rt's mgpu* functions).
  std::string device = "cpu";
  /// kiln-cpu's options (objectFile, packageObject and useCache are set by
  /// writePackage).
  cpu::CompileOptions cpu;
  /// kiln-nvptx's options, for device "cuda".
  nvptx::CodeOptions gpu;
  /// The linker (empty: ld.lld-22, ld.lld, then ld from PATH).
  std::string linker;
};

/// Compiles the entries of `module` (unchanged) and writes the package to
/// `outPath`, replacing it only when everything succeeded (no partial file
/// is left on failure). On failure `error` says why.
mlir::LogicalResult writePackage(mlir::ModuleOp module,
                                 const PackageOptions &options,
                                 llvm::StringRef outPath, std::string &error);

/// One argument or result of an entry in the manifest.
struct TensorSpec {
  std::string name;  ///< arguments: the source name
  std::string dtype; ///< f32, f64, f16, bf16, i64, i32, i16, i8, ui8, i1
  /// Per dim: a size (>= 0), or kDynamic with `symbols[d]` naming it ("s0":
  /// equal to every other use of s0) or empty (any size).
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  static constexpr int64_t kDynamic = -1;
};

struct EntrySpec {
  std::string name;
  std::string kind; ///< "func" or "program"
  std::vector<TensorSpec> args, results;
  /// kg.guard_shape_relation's relations ("s0 == s1", "s0 >= 2").
  std::vector<std::string> shapeRelations;
};

/// The entries of `module` to package (`names`; empty: see PackageOptions)
/// and their signatures and guards. Each kg.program among them is replaced
/// in `module` by a func.func of the same name and signature that runs its
/// graphs in order (inline graphs inlined, outlined ones called); its tensor
/// guards and shape relations go to its EntrySpec (a func.func's come from
/// its types). A program with host code (kg.break, kg.host_call,
/// kg.to_host, host control flow, ...), host scalar or !kt.ref arguments,
/// or a guard that a package cannot check (kg.guard_value,
/// kg.guard_identity, a device other than `device`) is an error naming the op and
/// its location.
mlir::FailureOr<std::vector<EntrySpec>>
prepareEntries(mlir::ModuleOp module, llvm::ArrayRef<std::string> names,
               std::string &error, llvm::StringRef device = "cpu");

} // namespace kiln::package

#endif // KILN_PACKAGE_PACKAGE_H
