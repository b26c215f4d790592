//===- ReservedSymbols.cpp - User symbols vs. the runtime's ---------------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. The lowering declares
// external functions by name (libm through convert-math-to-libm and LLVM's
// libcalls, `kiln_cpu_runtime_error`, `cblas_sgemm`, `malloc`/`free`,
// `memrefCopy`, ...) and reuses a symbol of that name if the module has
// one, so a user function `@exp` would be called in place of libm's `exp`
// (an invalid call, or a wrong one). Such user symbols are renamed before
// the lowering; the C interface wrapper keeps the user's name.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

/// C99 <math.h> functions (each also with the `f` and `l` suffix).
static const char *const kMathFunctions[] = {
    "acos",   "acosh",     "asin",       "asinh",     "atan",   "atan2",
    "atanh",  "cbrt",      "ceil",       "copysign",  "cos",    "cosh",
    "erf",    "erfc",      "exp",        "exp10",     "exp2",   "expm1",
    "fabs",   "fdim",      "floor",      "fma",       "fmax",   "fmin",
    "fmod",   "frexp",     "hypot",      "ilogb",     "ldexp",  "lgamma",
    "llrint", "llround",   "log",        "log10",     "log1p",  "log2",
    "logb",   "lrint",     "lround",     "modf",      "nan",    "nearbyint",
    "nextafter", "nexttoward", "pow",    "remainder", "remquo", "rint",
    "round",  "roundeven", "scalbln",    "scalbn",    "sin",    "sincos",
    "sinh",   "sqrt",      "tan",        "tanh",      "tgamma", "trunc"};

/// Other C library functions compiled code (or LLVM's lowering of
/// intrinsics and assertions) may call.
static const char *const kCFunctions[] = {
    "malloc", "calloc", "realloc", "free",    "aligned_alloc",
    "posix_memalign",   "memcpy",  "memmove", "memset",
    "memcmp", "abort",  "exit",    "puts",    "putchar",
    "printf", "fprintf", "memrefCopy"};

/// Prefixes of runtime libraries' symbols: Kiln's (libkiln_onednn's
/// `kiln_onednn_*` included), OpenBLAS, OpenMP
/// (`omp_*`, `__kmpc_*`), compiler-rt and other reserved C names (`__*`),
/// MLIR's C interface wrappers (`_mlir_ciface_*`), LLVM intrinsics.
static const char *const kPrefixes[] = {
    "kiln_cpu_", "kiln_onednn_", "cblas_", "openblas_", "omp_",
    "__",        "_mlir_",       "llvm."};

bool kiln::cpu::isReservedSymbol(StringRef name) {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> s;
    for (const char *f : kMathFunctions) {
      s.insert(f);
      s.insert((Twine(f) + "f").str());
      s.insert((Twine(f) + "l").str());
    }
    for (const char *f : kCFunctions)
      s.insert(f);
    return s;
  }();
  if (names.contains(name))
    return true;
  return llvm::any_of(kPrefixes,
                      [&](const char *p) { return name.starts_with(p); });
}

unsigned kiln::cpu::renameReservedSymbols(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  SmallVector<NamedAttribute> renames;
  if (auto old = module->getAttrOfType<DictionaryAttr>(kRenamedSymbolsAttr))
    renames.append(old.begin(), old.end());
  unsigned n = 0;
  for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
    auto sym = dyn_cast<SymbolOpInterface>(op);
    if (!sym || sym.isDeclaration() || !isReservedSymbol(sym.getName()))
      continue;
    StringRef name = sym.getName();
    std::string base = ("kiln.user." + name).str(), candidate = base;
    for (unsigned i = 1; symbols.lookup(candidate); ++i)
      candidate = base + "." + std::to_string(i);
    renames.push_back(NamedAttribute(StringAttr::get(ctx, candidate),
                                     StringAttr::get(ctx, name)));
    if (failed(symbols.rename(sym, StringAttr::get(ctx, candidate))))
      continue;
    ++n;
  }
  if (n)
    module->setAttr(kRenamedSymbolsAttr, DictionaryAttr::get(ctx, renames));
  return n;
}

void kiln::cpu::restoreInterfaceNames(ModuleOp module) {
  auto renames = module->getAttrOfType<DictionaryAttr>(kRenamedSymbolsAttr);
  if (!renames)
    return;
  SymbolTable symbols(module);
  for (NamedAttribute r : renames) {
    std::string wrapper = ("_mlir_ciface_" + r.getName().getValue()).str();
    if (Operation *fn = symbols.lookup(wrapper)) {
      StringRef user = cast<StringAttr>(r.getValue()).getValue();
      (void)symbols.rename(
          fn, StringAttr::get(module.getContext(), "_mlir_ciface_" + user));
    }
  }
  module->removeAttr(kRenamedSymbolsAttr);
}
