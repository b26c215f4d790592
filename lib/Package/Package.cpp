//===- Package.cpp - Deployable compiled packages -------------------------===//
//
// Part of Kiln. See kiln/Package/Package.h and docs/packages.md.
//
// writePackage: the entries (kg.programs become func.funcs) are compiled
// together by the CPU backend into one object (PIC, calls of the runtime's
// allocator); a second object holds the manifest; the linker makes a shared
// object of both, exporting only the manifest function and the entries'
// packed C interfaces; the result replaces the output file atomically.
//
//===----------------------------------------------------------------------===//

#include "kiln/Package/Package.h"
#include "kiln/Backend/CPU/ObjectSymbols.h"
#include "kiln/Backend/CPU/RuntimeErrors.h"
#include "kiln/Backend/NVPTX/NVPTXBackend.h"
#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Interpreter/Tensor.h"
#include "kiln/Support/OutputFiles.h"
#include "kiln/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::package;

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

static std::string where(Location loc) {
  return kiln::formatLocationStack(loc).front();
}

/// The spec of a ranked tensor type (dims from the type: static sizes, `?`
/// unnamed); fails for other types.
static LogicalResult specOf(Type type, TensorSpec &spec) {
  auto tt = dyn_cast<RankedTensorType>(type);
  std::optional<interp::DType> dt =
      tt && !tt.getElementType().isIndex()
          ? interp::dtypeFromType(tt.getElementType())
          : std::nullopt;
  if (!dt)
    return failure();
  spec.dtype = interp::dtypeName(*dt).str();
  for (int64_t d : tt.getShape()) {
    spec.dims.push_back(ShapedType::isDynamic(d) ? TensorSpec::kDynamic : d);
    spec.symbols.push_back("");
  }
  return success();
}

static LogicalResult typeError(StringRef entry, const char *what, unsigned i,
                               Type type, std::string &error) {
  llvm::raw_string_ostream os(error);
  os << "a package takes and returns ranked tensors of f32, f64, f16, bf16, "
        "i64, i32, i16, i8, ui8 or i1; "
     << what << " #" << i << " of @" << entry << " is " << type;
  return failure();
}

/// The program as a func.func (see prepareEntries), replacing it in its
/// module.
static LogicalResult programToFunction(kg::ProgramOp program, EntrySpec &spec,
                                       StringRef device, std::string &error) {
  std::string name = program.getSymName().str();
  auto fail = [&](Operation *op, const Twine &why) {
    error = (where(op->getLoc()) + ": kg.program @" + name +
             " cannot be packaged: " + why)
                .str();
    return failure();
  };
  for (auto [i, t] : llvm::enumerate(program.getArgumentTypes())) {
    TensorSpec s;
    if (failed(specOf(t, s)))
      return fail(program, "argument '" + program.getArgSourceName(i) +
                               "' is not a ranked tensor of a supported "
                               "dtype (a package takes tensors only)");
    s.name = program.getArgSourceName(i);
    spec.args.push_back(std::move(s));
  }
  for (auto [i, t] : llvm::enumerate(program.getResultTypes())) {
    TensorSpec s;
    if (failed(specOf(t, s)))
      return typeError(name, "result", i, t, error);
    spec.results.push_back(std::move(s));
  }
  Block &body = program.getBody().front();
  for (Operation &op : body) {
    if (auto g = dyn_cast<kg::GuardTensorOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(g.getInput());
      if (!arg || arg.getOwner() != &body)
        return fail(&op, "the guarded value is not a program argument");
      if (g.getDevice() != device)
        return fail(&op, "the guard wants device '" + g.getDevice() +
                             "'; " + (device == "cpu" ? "CPU" : "CUDA") +
                             " packages take " + device + " tensors");
      TensorSpec &s = spec.args[arg.getArgNumber()];
      ArrayAttr shape = g.getShape();
      if (shape.size() != s.dims.size())
        return fail(&op, "the guard's shape has another rank than the "
                         "argument");
      for (auto [d, a] : llvm::enumerate(shape)) {
        if (auto i = dyn_cast<IntegerAttr>(a)) {
          s.dims[d] = i.getInt();
          s.symbols[d].clear();
        } else if (auto str = dyn_cast<StringAttr>(a)) {
          s.dims[d] = TensorSpec::kDynamic;
          s.symbols[d] = str.str();
        }
      }
      continue;
    }
    if (auto r = dyn_cast<kg::GuardShapeRelationOp>(op)) {
      spec.shapeRelations.push_back(r.getRelation().str());
      continue;
    }
    if (isa<kg::GuardBackendOp>(op))
      continue; // the package is its backend
    if (isa<kg::GuardValueOp, kg::GuardIdentityOp>(op))
      return fail(&op, "'" + op.getName().getStringRef() +
                           "' guards host values or tensor identity, which "
                           "a package does not check");
    if (isa<kg::GraphOp, kg::ReturnOp>(op))
      continue;
    return fail(&op, "'" + op.getName().getStringRef() +
                         "' is host code (graph breaks, host calls and host "
                         "control flow are not packaged; a package holds "
                         "programs whose body is guards and graphs)");
  }

  OpBuilder b(program);
  auto fn = func::FuncOp::create(b, program.getLoc(), name + ".kiln.pkg",
                                 program.getFunctionType());
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  for (auto [from, to] : llvm::zip(body.getArguments(), entry->getArguments()))
    map.map(from, to);
  b.setInsertionPointToEnd(entry);
  for (Operation &op : body) {
    if (auto g = dyn_cast<kg::GraphOp>(op)) {
      SmallVector<Value> inputs;
      for (Value v : g.getInputs())
        inputs.push_back(map.lookup(v));
      if (g.isOutlined()) {
        auto call = func::CallOp::create(b, g.getLoc(), g.getCallee(),
                                         g.getResultTypes(), inputs);
        map.map(g.getResults(), call.getResults());
        continue;
      }
      Block &gb = g.getBody().front();
      IRMapping inner;
      for (auto [from, to] : llvm::zip(gb.getArguments(), inputs))
        inner.map(from, to);
      for (Operation &gop : gb) {
        if (auto y = dyn_cast<kg::YieldOp>(gop)) {
          for (auto [res, v] : llvm::zip(g.getResults(), y.getOperands()))
            map.map(res, inner.lookup(v));
          continue;
        }
        b.clone(gop, inner);
      }
    } else if (auto r = dyn_cast<kg::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (Value v : r.getOperands())
        results.push_back(map.lookup(v));
      func::ReturnOp::create(b, r.getLoc(), results);
    }
  }
  program.erase();
  fn.setSymName(name);
  return success();
}

FailureOr<std::vector<EntrySpec>>
kiln::package::prepareEntries(ModuleOp module, ArrayRef<std::string> names,
                              std::string &error, StringRef device) {
  std::vector<std::string> chosen(names.begin(), names.end());
  if (chosen.empty()) {
    auto programs = llvm::to_vector(module.getOps<kg::ProgramOp>());
    SmallVector<func::FuncOp> funcs;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal() && f.isPublic() && !f->hasAttr("kg.graph_function"))
        funcs.push_back(f);
    if (programs.size() == 1)
      chosen.push_back(programs.front().getSymName().str());
    else if (programs.empty() && funcs.size() == 1)
      chosen.push_back(funcs.front().getName().str());
    else {
      error = "name the entries to package (--entry): the module has " +
              std::to_string(programs.size()) + " kg.program(s) and " +
              std::to_string(funcs.size()) + " public function(s)";
      return failure();
    }
  }
  std::vector<EntrySpec> specs;
  std::set<std::string> seen;
  for (const std::string &name : chosen) {
    if (!seen.insert(name).second) {
      error = "entry '" + name + "' is named twice";
      return failure();
    }
    Operation *op = module.lookupSymbol(name);
    EntrySpec spec;
    spec.name = name;
    if (auto program = dyn_cast_or_null<kg::ProgramOp>(op)) {
      spec.kind = "program";
      if (failed(programToFunction(program, spec, device, error)))
        return failure();
    } else if (auto fn = dyn_cast_or_null<func::FuncOp>(op);
               fn && !fn.isExternal()) {
      spec.kind = "func";
      for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
        TensorSpec s;
        if (failed(specOf(t, s)))
          return typeError(name, "argument", i, t, error);
        s.name = "arg" + std::to_string(i);
        spec.args.push_back(std::move(s));
      }
      for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
        TensorSpec s;
        if (failed(specOf(t, s)))
          return typeError(name, "result", i, t, error);
        spec.results.push_back(std::move(s));
      }
    } else {
      error = "no function with a body or kg.program named '" + name + "'";
      return failure();
    }
    if (spec.results.empty()) {
      error = "@" + name + " has no results";
      return failure();
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

namespace {
/// A library the compiled code needs at run time, found by its undefined
/// symbols.
struct NeededLibrary {
  const char *name;     ///< SONAME, what the loader dlopens
  std::string path;     ///< where it was when the package was made
  const char *provides; ///< for error messages
};
} // namespace

/// The libraries the object's undefined symbols come from. Symbols the
/// runtime (libkiln_rt) defines need nothing; anything else is libc/libm.
static LogicalResult neededLibraries(StringRef objectPath,
                                     std::vector<NeededLibrary> &out,
                                     std::set<std::string> &defined,
                                     std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(objectPath);
  if (!buffer) {
    error = "cannot read the compiled object: " + buffer.getError().message();
    return failure();
  }
  bool omp = false, blas = false, onednn = false, libm = false;
  if (llvm::Error e = cpu::forEachObjectSymbol(
          (*buffer)->getMemBufferRef(), [&](StringRef name, uint32_t flags) {
            if (!(flags & llvm::object::SymbolRef::SF_Undefined)) {
              if (flags & llvm::object::SymbolRef::SF_Global)
                defined.insert(name.str());
              return;
            }
            if (name.empty())
              return;
            if (cpu::isOpenMPSymbol(name))
              omp = true;
            else if (cpu::isBLASSymbol(name))
              blas = true;
            else if (cpu::isOneDNNSymbol(name))
              onednn = true;
            else if (name.starts_with("kiln_") || name == "memrefCopy" ||
                     name.starts_with("mgpu"))
              return; // libkiln_rt (mgpu*: its CUDA runtime)
            else
              libm = true;
          })) {
    error = "cannot read the compiled object: " + llvm::toString(std::move(e));
    return failure();
  }
  if (omp)
    out.push_back({"libomp.so.5", KILN_OMP_LIB_PATH,
                   "OpenMP threads of the compiled code"});
  if (blas)
    out.push_back({"libopenblas.so.0", KILN_OPENBLAS_LIB_PATH,
                   "OpenBLAS matmuls"});
  if (onednn)
    out.push_back({"libkiln_onednn.so.0", KILN_ONEDNN_LIB_PATH,
                   "oneDNN convolutions (conv=onednn)"});
  if (libm)
    out.push_back({"libm.so.6", "", "the C math library"});
  for (NeededLibrary &lib : out) {
    // The real file behind a development symlink (libomp.so -> .so.5).
    llvm::SmallString<256> real;
    if (!lib.path.empty() && !llvm::sys::fs::real_path(lib.path, real))
      lib.path = real.str().str();
  }
  return success();
}

static llvm::json::Value specJson(const TensorSpec &s, bool withName) {
  llvm::json::Array dims;
  for (auto [d, sym] : llvm::zip(s.dims, s.symbols)) {
    if (d != TensorSpec::kDynamic)
      dims.push_back(d);
    else
      dims.push_back(sym.empty() ? "?" : sym);
  }
  llvm::json::Object o{{"dtype", s.dtype}, {"shape", std::move(dims)}};
  if (withName)
    o["name"] = s.name;
  return std::move(o);
}

/// The manifest JSON (docs/packages.md).
static std::string
manifestJson(ArrayRef<EntrySpec> specs, llvm::json::Object target,
             StringRef pipeline, int64_t blasThreads,
             ArrayRef<std::string> runtimeErrors,
             ArrayRef<NeededLibrary> libs) {
  llvm::json::Array entries;
  for (const EntrySpec &e : specs) {
    llvm::json::Array args, results, relations;
    for (const TensorSpec &s : e.args)
      args.push_back(specJson(s, true));
    for (const TensorSpec &s : e.results)
      results.push_back(specJson(s, false));
    for (const std::string &r : e.shapeRelations)
      relations.push_back(r);
    entries.push_back(llvm::json::Object{
        {"name", e.name},
        {"kind", e.kind},
        {"symbol", "_mlir__mlir_ciface_" + e.name},
        {"args", std::move(args)},
        {"results", std::move(results)},
        {"shape_relations", std::move(relations)}});
  }
  llvm::json::Array needed;
  for (const NeededLibrary &l : libs)
    needed.push_back(llvm::json::Object{
        {"name", l.name}, {"path", l.path}, {"provides", l.provides}});
  llvm::json::Array errors;
  for (const std::string &m : runtimeErrors)
    errors.push_back(m);
  llvm::json::Object root{
      {"format", "kiln-package"},
      {"format_version", kFormatVersion},
      {"kiln_version", KILN_VERSION},
      {"target", std::move(target)},
      {"pipeline", pipeline},
      {"blas_threads", blasThreads},
      {"entries", std::move(entries)},
      {"runtime_errors", std::move(errors)},
      {"needed_libraries", std::move(needed)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)));
  return text;
}

/// An object defining `const char *kiln_package_manifest(void)` (the JSON,
/// NUL-terminated, in section `.kiln_manifest`) and
/// `int kiln_package_format_version(void)`.
static LogicalResult writeManifestObject(StringRef json, StringRef path,
                                         std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm =
      cpu::hostTargetMachine(/*pic=*/true, error);
  if (!tm)
    return failure();
  llvm::LLVMContext ctx;
  llvm::Module m("kiln_package_manifest", ctx);
  m.setDataLayout(tm->createDataLayout());
  m.setTargetTriple(tm->getTargetTriple());
  auto *data = llvm::ConstantDataArray::getString(ctx, json, /*AddNull=*/true);
  auto *gv = new llvm::GlobalVariable(m, data->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage, data,
                                      "kiln.package.manifest");
  // Its own section: libkiln_rt (and readelf / objcopy) read the manifest
  // from the file without loading the package.
  gv->setSection(".kiln_manifest");
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(ptrTy, false),
                                    llvm::GlobalValue::ExternalLinkage,
                                    "kiln_package_manifest", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(gv);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *ver = llvm::Function::Create(llvm::FunctionType::get(i32, false),
                                     llvm::GlobalValue::ExternalLinkage,
                                     "kiln_package_format_version", m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", ver));
  b.CreateRet(llvm::ConstantInt::get(i32, kFormatVersion));

  return cpu::emitObjectFile(m, *tm, path, error);
}

/// The linker to run: `requested` (a name on PATH or a path), else
/// ld.lld-22, ld.lld, ld.
static LogicalResult findLinker(StringRef requested, std::string &linker,
                                std::string &error) {
  if (!requested.empty()) {
    if (requested.contains('/')) {
      if (llvm::sys::fs::can_execute(requested)) {
        linker = requested.str();
        return success();
      }
    } else if (auto p = llvm::sys::findProgramByName(requested)) {
      linker = *p;
      return success();
    }
    error = "linker '" + requested.str() + "' not found";
    return failure();
  }
  for (const char *name : {"ld.lld-22", "ld.lld", "ld"})
    if (auto p = llvm::sys::findProgramByName(name)) {
      linker = *p;
      return success();
    }
  error = "no linker found (ld.lld-22, ld.lld or ld on PATH; --linker names "
          "one)";
  return failure();
}

namespace {
/// A temporary directory removed with its files.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
  std::string file(StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
};
} // namespace

LogicalResult kiln::package::writePackage(ModuleOp module,
                                          const PackageOptions &options,
                                          StringRef outPath,
                                          std::string &error) {
  std::string linker;
  if (failed(findLinker(options.linker, linker, error)))
    return failure();
  OwningOpRef<ModuleOp> clone(cast<ModuleOp>(module->clone()));
  if (options.device != "cpu" && options.device != "cuda") {
    error = "packages are for device cpu or cuda, not '" + options.device + "'";
    return failure();
  }
  if (options.device == "cuda" &&
      failed(nvptx::verifyOptions(options.gpu, error))) {
    error = "kiln-nvptx: " + error;
    return failure();
  }
  auto specs = prepareEntries(*clone, options.entries, error, options.device);
  if (failed(specs))
    return failure();

  TempDir tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          "kiln-compile", tmp.path)) {
    error = "cannot create a temporary directory: " + ec.message();
    return failure();
  }
  std::string codeObj = tmp.file("code.o"), manifestObj = tmp.file("manifest.o"),
              script = tmp.file("exports.map"), linked = tmp.file("package.so"),
              linkLog = tmp.file("link.log");

  std::vector<std::string> names;
  for (const EntrySpec &s : *specs)
    names.push_back(s.name);
  std::string pipeline;
  int64_t blasThreads = 1;
  std::vector<std::string> runtimeErrors;
  llvm::json::Object target;
  if (options.device == "cuda") {
    unsigned kernels = 0;
    if (failed(nvptx::compileObject(*clone, names, options.gpu, codeObj, error,
                                    &kernels)))
      return failure();
    pipeline = nvptx::pipelineString(options.gpu);
    // The run-time checks' messages (reported by the host code, also for
    // checks inside kernels: their device error record).
    runtimeErrors = cpu::runtimeErrorMessages(*clone);
    target = llvm::json::Object{{"device", "cuda"},
                                {"chip", options.gpu.chip},
                                {"ptx_features", options.gpu.features},
                                {"kernel_format", options.gpu.emit == "bin"
                                                      ? "cubin"
                                                      : "ptx"},
                                {"kernels", (int64_t)kernels}};
  } else {
    cpu::CompileOptions copts = options.cpu;
    copts.objectFile = codeObj;
    copts.packageObject = true;
    copts.useCache = false;
    auto exes = cpu::CPUExecutable::compileEntries(*clone, names, error,
                                                   nullptr, copts);
    if (failed(exes))
      return failure();
    pipeline = cpu::pipelineString(copts);
    blasThreads = copts.optimize ? (int64_t)copts.threads : 1;
    runtimeErrors = exes->front()->runtimeErrorTemplates();
    target = llvm::json::Object{{"device", "cpu"}};
  }
  std::vector<NeededLibrary> libs;
  std::set<std::string> defined;
  if (failed(neededLibraries(codeObj, libs, defined, error)))
    return failure();
  for (const EntrySpec &s : *specs)
    if (!defined.count("_mlir__mlir_ciface_" + s.name)) {
      error = "the compiled object has no entry point for @" + s.name +
              " (_mlir__mlir_ciface_" + s.name + ")";
      return failure();
    }
  // The host code's machine (for both devices: GPU packages hold host code).
  target["triple"] = llvm::sys::getProcessTriple();
  target["cpu"] = llvm::sys::getHostCPUName().str();
  std::string json = manifestJson(*specs, std::move(target), pipeline,
                                  blasThreads, runtimeErrors, libs);
  if (failed(writeManifestObject(json, manifestObj, error)))
    return failure();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script, ec);
    if (ec) {
      error = "cannot write '" + script + "': " + ec.message();
      return failure();
    }
    // Only the manifest and the entries' packed interfaces are exported;
    // the kernels and the rest stay local (no clash between packages or
    // with the process's symbols).
    os << "{\n  global:\n    kiln_package_manifest;\n"
          "    kiln_package_format_version;\n";
    for (const EntrySpec &s : *specs)
      os << "    \"_mlir__mlir_ciface_" << s.name << "\";\n";
    os << "  local: *;\n};\n";
  }
  std::string soname = llvm::sys::path::filename(outPath).str();
  SmallVector<std::string> args = {linker,      "-shared",
                                   "-o",        linked,
                                   "-soname",   soname,
                                   "--version-script=" + script,
                                   "-z",        "noexecstack",
                                   "-z",        "now",
                                   codeObj,     manifestObj};
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(linkLog),
                                          StringRef(linkLog)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(linker, argRefs, std::nullopt, redirects,
                                     0, 0, &execError);
  if (rc != 0) {
    std::string log;
    if (auto buf = llvm::MemoryBuffer::getFile(linkLog))
      log = (*buf)->getBuffer().rtrim().str();
    error = "linking the package with '" + linker + "' failed" +
            (execError.empty() ? "" : ": " + execError) +
            (log.empty() ? "" : ":\n" + log);
    return failure();
  }
  auto buf = llvm::MemoryBuffer::getFile(linked);
  if (!buf) {
    error = "cannot read the linked package: " + buf.getError().message();
    return failure();
  }
  if (llvm::Error e = writeFileAtomically(outPath, [&](llvm::raw_ostream &os) {
        os << (*buf)->getBuffer();
      })) {
    error = llvm::toString(std::move(e));
    return failure();
  }
  return success();
}
