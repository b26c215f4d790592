//===- KilnRt.cpp - libkiln_rt: load and run Kiln packages ----------------===//
//
// Part of Kiln's compiled-code runtime (runtime/; plain C++17, no LLVM or
// MLIR). The C API of runtime/include/kiln_rt.h; the package format is in
// docs/packages.md.
//
// Loading reads the manifest from the package's `.kiln_manifest` section
// (the ELF file is parsed here, bounds-checked, before anything is mapped:
// a truncated file, a file that is not a package or a package of another
// format version is an error, not a crash), loads the libraries the manifest
// lists with RTLD_GLOBAL, then dlopens the package. The package's code calls
// kiln_rt_malloc / kiln_rt_free / kiln_cpu_runtime_error / memrefCopy,
// which this library defines: it makes itself RTLD_GLOBAL first, so that
// the package's undefined symbols resolve to it whoever loaded it (ctypes
// loads libraries RTLD_LOCAL).
//
// Calls go through the entry's packed C interface `_mlir__mlir_ciface_<e>`
// (args: a pointer to the result descriptors, then one pointer per argument
// descriptor; a descriptor is {allocated, aligned, offset, sizes[R],
// strides[R]} in 8-byte words), within a CallContext (per-call run-time
// error state, failed-allocation exit: kiln/rt/*.h), as the JIT backend
// calls its code.
//
// CUDA packages (manifest target device "cuda", from kiln-compile
// --backend=nvptx) hold host code that launches their embedded kernels
// through the mgpu* functions of runtime/cuda, compiled into this library
// when cuda.h was found at build time (KILN_RT_CUDA): their arguments and
// results are kDLCUDA tensors of device 0, the driver is dlopen'ed on first
// use, and driver errors become this library's errors.
//
//===----------------------------------------------------------------------===//

#include "kiln_rt.h"

#include "Json.h"
#include "kiln/rt/BufferPool.h"
#include "kiln/rt/CallContext.h"

#include <dlfcn.h>

#ifdef KILN_RT_CUDA
#include "kiln_cuda_rt.h"
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

using namespace kiln;

namespace {

thread_local std::string lastError;

int failWith(std::string message) {
  lastError = std::move(message);
  return KILN_RT_ERROR;
}

struct Spec {
  std::string name;
  std::string dtypeName;
  DLDataType dtype{};
  std::vector<int64_t> shape; // -1: dynamic
  std::vector<std::string> dimNames;
  std::vector<const char *> dimNamePtrs;
};

struct Relation {
  std::string text, lhs, op, rhs;
};

struct Entry {
  std::string name, symbol;
  void (*fn)(void **) = nullptr;
  std::vector<Spec> args, results;
  std::vector<Relation> relations;
};

} // namespace

struct KilnRtPackage {
  std::string path;
  void *handle = nullptr;
  std::string manifest;
  std::vector<Entry> entries;
  std::vector<std::string> runtimeErrors;
  bool cuda = false; ///< a CUDA package (device tensors in and out)
  ~KilnRtPackage() {
    if (handle)
      dlclose(handle);
  }
};

namespace {

bool dtypeOf(const std::string &name, DLDataType &dt) {
  static const std::map<std::string, DLDataType> table = {
      {"f32", {kDLFloat, 32, 1}}, {"f64", {kDLFloat, 64, 1}},
      {"f16", {kDLFloat, 16, 1}}, {"bf16", {kDLBfloat, 16, 1}},
      {"i64", {kDLInt, 64, 1}},   {"i32", {kDLInt, 32, 1}},
      {"i16", {kDLInt, 16, 1}},   {"i8", {kDLInt, 8, 1}},
      {"ui8", {kDLUInt, 8, 1}},   {"i1", {kDLBool, 8, 1}}};
  auto it = table.find(name);
  if (it == table.end())
    return false;
  dt = it->second;
  return true;
}

std::string dtypeString(DLDataType dt) {
  const char *kind = dt.code == kDLFloat    ? "float"
                     : dt.code == kDLBfloat ? "bfloat"
                     : dt.code == kDLInt    ? "int"
                     : dt.code == kDLUInt   ? "uint"
                     : dt.code == kDLBool   ? "bool"
                                            : nullptr;
  std::string s = kind ? std::string(kind)
                       : "code " + std::to_string((int)dt.code) + " ";
  s += std::to_string((int)dt.bits);
  if (dt.lanes != 1)
    s += "x" + std::to_string((int)dt.lanes);
  return s;
}

std::string shapeString(const int64_t *shape, int ndim) {
  std::string s = "[";
  for (int d = 0; d < ndim; ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

std::string specShape(const Spec &s) {
  std::string out = "[";
  for (size_t d = 0; d < s.shape.size(); ++d) {
    out += d ? ", " : "";
    if (s.shape[d] >= 0)
      out += std::to_string(s.shape[d]);
    else
      out += s.dimNames[d].empty() ? "?" : s.dimNames[d];
  }
  return out + "]";
}

//===----------------------------------------------------------------------===//
// Reading the manifest from the ELF file.
//===----------------------------------------------------------------------===//

template <typename T> bool readAt(const std::string &f, uint64_t off, T &out) {
  if (off > f.size() || f.size() - off < sizeof(T))
    return false;
  std::memcpy(&out, f.data() + off, sizeof(T));
  return true;
}

/// The contents of section `.kiln_manifest` of an ELF64 little-endian shared
/// object.
bool manifestSection(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    lastError = "cannot open package '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string f = buf.str();
  auto notPackage = [&](const std::string &why) {
    lastError = "'" + path + "' is not a Kiln package: " + why;
    return false;
  };
  if (f.size() < 4 || f.compare(0, 4, "\x7f" "ELF") != 0)
    return notPackage("not an ELF file");
  if (f.size() < 64)
    return notPackage("truncated ELF header (" + std::to_string(f.size()) +
                      " bytes)");
  if (f[4] != 2 || f[5] != 1)
    return notPackage("not a 64-bit little-endian ELF file");
  uint16_t type, shentsize, shnum, shstrndx;
  uint64_t shoff;
  readAt(f, 16, type);
  readAt(f, 40, shoff);
  readAt(f, 58, shentsize);
  readAt(f, 60, shnum);
  readAt(f, 62, shstrndx);
  if (type != 3 /*ET_DYN*/)
    return notPackage("not a shared object");
  auto truncated = [&] {
    return notPackage("truncated or malformed file (section headers past "
                      "its end, " +
                      std::to_string(f.size()) + " bytes)");
  };
  if (shentsize < 64 || shnum == 0 || shstrndx >= shnum ||
      shoff > f.size() || (f.size() - shoff) / shentsize < shnum)
    return truncated();
  auto section = [&](unsigned i, uint32_t &name, uint32_t &stype,
                     uint64_t &off, uint64_t &size) {
    uint64_t h = shoff + (uint64_t)i * shentsize;
    return readAt(f, h, name) && readAt(f, h + 4, stype) &&
           readAt(f, h + 24, off) && readAt(f, h + 32, size);
  };
  uint32_t n, t;
  uint64_t strOff, strSize;
  if (!section(shstrndx, n, t, strOff, strSize) || strOff > f.size() ||
      f.size() - strOff < strSize)
    return truncated();
  for (unsigned i = 0; i < shnum; ++i) {
    uint64_t off, size;
    if (!section(i, n, t, off, size))
      return truncated();
    if (n >= strSize)
      continue;
    const char *name = f.data() + strOff + n;
    size_t maxLen = strSize - n;
    if (strnlen(name, maxLen) == maxLen ||
        std::strcmp(name, ".kiln_manifest") != 0)
      continue;
    if (t == 8 /*SHT_NOBITS*/ || off > f.size() || f.size() - off < size)
      return truncated();
    out.assign(f.data() + off, size);
    while (!out.empty() && out.back() == '\0')
      out.pop_back();
    return true;
  }
  return notPackage("no .kiln_manifest section (a shared object that "
                    "kiln-compile did not write?)");
}

//===----------------------------------------------------------------------===//
// The manifest.
//===----------------------------------------------------------------------===//

bool parseSpec(const rt::json::Value &v, bool isArg, Spec &s,
               std::string &error) {
  const rt::json::Value *dtype = v.get("dtype"), *shape = v.get("shape"),
                        *name = v.get("name");
  if (!dtype || dtype->kind != rt::json::Value::String || !shape ||
      shape->kind != rt::json::Value::Array) {
    error = "a signature lacks its dtype or shape";
    return false;
  }
  s.dtypeName = dtype->s;
  if (!dtypeOf(dtype->s, s.dtype)) {
    error = "unknown dtype '" + dtype->s + "'";
    return false;
  }
  if (isArg && name && name->kind == rt::json::Value::String)
    s.name = name->s;
  for (const rt::json::Value &d : shape->array) {
    if (d.kind == rt::json::Value::Int && d.i >= 0) {
      s.shape.push_back(d.i);
      s.dimNames.emplace_back();
    } else if (d.kind == rt::json::Value::String) {
      s.shape.push_back(-1);
      s.dimNames.push_back(d.s == "?" ? "" : d.s);
    } else {
      error = "a dim is neither a size nor a name";
      return false;
    }
  }
  for (const std::string &n : s.dimNames)
    s.dimNamePtrs.push_back(n.empty() ? nullptr : n.c_str());
  return true;
}

bool parseRelation(const std::string &text, Relation &r) {
  static const char *ops[] = {"==", "!=", "<=", ">=", "<", ">"};
  for (const char *op : ops) {
    size_t at = text.find(op);
    if (at == std::string::npos)
      continue;
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    r.text = text;
    r.op = op;
    r.lhs = trim(text.substr(0, at));
    r.rhs = trim(text.substr(at + std::strlen(op)));
    return !r.lhs.empty() && !r.rhs.empty();
  }
  return false;
}

bool parseManifest(KilnRtPackage &pkg, rt::json::Value &root,
                   std::string &error) {
  if (!rt::json::parse(pkg.manifest, root, error)) {
    error = "its manifest is not valid JSON (" + error + ")";
    return false;
  }
  const rt::json::Value *format = root.get("format"),
                        *version = root.get("format_version");
  if (!format || format->kind != rt::json::Value::String ||
      format->s != "kiln-package") {
    error = "its manifest is not a kiln-package manifest";
    return false;
  }
  if (!version || version->kind != rt::json::Value::Int) {
    error = "its manifest has no format_version";
    return false;
  }
  if (version->i != KILN_RT_PACKAGE_FORMAT_VERSION) {
    error = "it has package format version " + std::to_string(version->i) +
            ", and this libkiln_rt reads version " +
            std::to_string(KILN_RT_PACKAGE_FORMAT_VERSION) +
            " (rebuild the package with a matching kiln-compile, or use a "
            "matching libkiln_rt)";
    return false;
  }
  const rt::json::Value *target = root.get("target");
  const rt::json::Value *device = target ? target->get("device") : nullptr;
  if (!device || device->kind != rt::json::Value::String ||
      (device->s != "cpu" && device->s != "cuda")) {
    error = "it is for device '" +
            (device && device->kind == rt::json::Value::String ? device->s
                                                                : "?") +
            "'; this libkiln_rt runs cpu and cuda packages";
    return false;
  }
  pkg.cuda = device->s == "cuda";
#ifndef KILN_RT_CUDA
  if (pkg.cuda) {
    error = "it is a CUDA package, and this libkiln_rt was built without "
            "CUDA support (cuda.h was not found when it was built: set "
            "CUDA_HOME and rebuild it)";
    return false;
  }
#endif
  if (const rt::json::Value *errs = root.get("runtime_errors"))
    for (const rt::json::Value &m : errs->array)
      pkg.runtimeErrors.push_back(m.s);
  const rt::json::Value *entries = root.get("entries");
  if (!entries || entries->kind != rt::json::Value::Array ||
      entries->array.empty()) {
    error = "its manifest lists no entries";
    return false;
  }
  for (const rt::json::Value &e : entries->array) {
    Entry entry;
    const rt::json::Value *name = e.get("name"), *symbol = e.get("symbol"),
                          *args = e.get("args"), *results = e.get("results");
    if (!name || name->kind != rt::json::Value::String || !symbol ||
        symbol->kind != rt::json::Value::String || !args ||
        args->kind != rt::json::Value::Array || !results ||
        results->kind != rt::json::Value::Array) {
      error = "an entry of its manifest lacks name, symbol, args or results";
      return false;
    }
    entry.name = name->s;
    entry.symbol = symbol->s;
    for (const rt::json::Value &a : args->array) {
      entry.args.emplace_back();
      if (!parseSpec(a, true, entry.args.back(), error))
        return false;
      if (entry.args.back().name.empty())
        entry.args.back().name = "arg" + std::to_string(entry.args.size() - 1);
    }
    for (const rt::json::Value &r : results->array) {
      entry.results.emplace_back();
      if (!parseSpec(r, false, entry.results.back(), error))
        return false;
    }
    if (const rt::json::Value *rels = e.get("shape_relations"))
      for (const rt::json::Value &r : rels->array) {
        Relation rel;
        if (!parseRelation(r.s, rel)) {
          error = "bad shape relation '" + r.s + "'";
          return false;
        }
        entry.relations.push_back(std::move(rel));
      }
    pkg.entries.push_back(std::move(entry));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Libraries.
//===----------------------------------------------------------------------===//

/// This library in the global scope: the packages' undefined symbols
/// (kiln_rt_malloc, ...) and libomp's ompt_start_tool resolve to it.
void makeSelfGlobal() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&kiln_rt_package_load), &info) &&
        info.dli_fname)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  });
}

std::mutex libraryMutex;

/// Loads `name` (RTLD_GLOBAL): from the KILN_RT_LIBRARY_PATH folders, by
/// name (the dynamic linker's search, or already loaded), then `fallback`.
void *loadLibrary(const std::string &name, const std::string &fallback,
                  std::string &error) {
  std::vector<std::string> tries;
  if (const char *dirs = std::getenv("KILN_RT_LIBRARY_PATH")) {
    std::string all(dirs);
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos)
        end = all.size();
      if (end > start)
        tries.push_back(all.substr(start, end - start) + "/" + name);
      start = end + 1;
    }
  }
  tries.push_back(name);
  if (!fallback.empty())
    tries.push_back(fallback);
  std::string errors;
  for (const std::string &t : tries) {
    if (void *h = dlopen(t.c_str(), RTLD_NOW | RTLD_GLOBAL))
      return h;
    const char *e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : t.c_str());
  }
  error = errors;
  return nullptr;
}

bool loadNeededLibraries(const rt::json::Value &root, const std::string &path,
                         std::string &error) {
  const rt::json::Value *libs = root.get("needed_libraries");
  if (!libs)
    return true;
  std::lock_guard<std::mutex> lock(libraryMutex);
  for (const rt::json::Value &lib : libs->array) {
    const rt::json::Value *name = lib.get("name"), *fallback = lib.get("path"),
                          *provides = lib.get("provides");
    if (!name || name->kind != rt::json::Value::String)
      continue;
    bool isOmp = name->s.rfind("libomp", 0) == 0;
    static bool ompStarted = false;
    if (isOmp && !ompStarted) {
      // As the JIT backend (lib/Backend/CPU): idle libomp and OpenBLAS
      // workers sleep at once; the user's settings win. libomp starts
      // Kiln's OMPT tool, so calls on several threads run concurrently.
      setenv("KMP_BLOCKTIME", "0", /*overwrite=*/0);
      setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
      rt::prepareOpenMPTool();
    }
    std::string why;
    void *h = loadLibrary(name->s, fallback ? fallback->s : "", why);
    if (!h) {
      error = "package '" + path + "' needs " + name->s + " (" +
              (provides ? provides->s : std::string("?")) +
              "), which cannot be loaded: " + why +
              ". Install it, or name its folder in KILN_RT_LIBRARY_PATH";
      return false;
    }
    if (isOmp && !ompStarted) {
      rt::initializeOpenMP();
      ompStarted = true;
    }
    if (name->s.find("openblas") != std::string::npos) {
      using SetFn = void (*)(int);
      if (auto set = reinterpret_cast<SetFn>(
              dlsym(h, "openblas_set_num_threads"))) {
        const rt::json::Value *t = root.get("blas_threads");
        int64_t threads = t && t->kind == rt::json::Value::Int ? t->i : 0;
        if (threads <= 0)
          threads = std::max(1u, std::thread::hardware_concurrency());
        set((int)threads);
      }
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Calls.
//===----------------------------------------------------------------------===//

bool validEntry(const KilnRtPackage *pkg, int entry) {
  if (!pkg) {
    lastError = "the package is NULL";
    return false;
  }
  if (entry < 0 || entry >= (int)pkg->entries.size()) {
    lastError = "entry index " + std::to_string(entry) +
                " is out of range (the package has " +
                std::to_string(pkg->entries.size()) + " entries)";
    return false;
  }
  return true;
}

int64_t numElements(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d)
    n *= shape[d];
  return n;
}

std::vector<int64_t> compactStrides(const int64_t *shape, int ndim) {
  std::vector<int64_t> s(ndim, 1);
  for (int d = ndim - 2; d >= 0; --d)
    s[d] = s[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  return s;
}

/// Whether `t`'s strides are compact row-major (dims of size 1 aside).
bool isCompact(const DLTensor &t) {
  if (!t.strides)
    return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected)
      return false;
    expected *= t.shape[d];
  }
  return true;
}

/// Copies a strided view (element strides, possibly negative) to compact
/// row-major `dst`.
void copyStrided(const char *base, const int64_t *shape,
                 const int64_t *strides, int ndim, size_t esz, char *dst) {
  int64_t n = numElements(shape, ndim);
  std::vector<int64_t> index(ndim, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int d = 0; d < ndim; ++d)
      off += index[d] * strides[d];
    std::memcpy(dst + k * esz, base + off * (int64_t)esz, esz);
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

int checkArgs(const KilnRtPackage *pkg, int entryIndex,
              const DLTensor *const *args, int numArgs) {
  if (!validEntry(pkg, entryIndex))
    return KILN_RT_ERROR;
  const Entry &e = pkg->entries[entryIndex];
  std::string where = "@" + e.name + ": ";
  if (numArgs != (int)e.args.size())
    return failWith(where + "expected " + std::to_string(e.args.size()) +
                    " arguments, got " + std::to_string(numArgs));
  if (numArgs > 0 && !args)
    return failWith(where + "the argument array is NULL");
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  for (int i = 0; i < numArgs; ++i) {
    const Spec &s = e.args[i];
    std::string arg = where + "argument '" + s.name + "' (#" +
                      std::to_string(i) + ")";
    const DLTensor *t = args[i];
    if (!t)
      return failWith(arg + " is NULL");
    if (pkg->cuda) {
      if (t->device.device_type != kDLCUDA)
        return failWith(arg + " is " +
                        (t->device.device_type == kDLCPU
                             ? std::string("a CPU tensor (kDLCPU)")
                             : "on device type " +
                                   std::to_string((int)t->device.device_type)) +
                        ": this is a CUDA package, it takes CUDA tensors "
                        "(kDLCUDA)");
      if (t->device.device_id != 0)
        return failWith(arg + " is on CUDA device " +
                        std::to_string(t->device.device_id) +
                        "; CUDA packages run on device 0 only (yet)");
    } else if (t->device.device_type == kDLCUDA) {
      return failWith(arg + " is a CUDA tensor (kDLCUDA): this is a CPU "
                            "package (compile it with kiln-compile "
                            "--backend=nvptx for the GPU)");
    } else if (t->device.device_type != kDLCPU) {
      return failWith(arg + " is on device type " +
                      std::to_string((int)t->device.device_type) +
                      "; only CPU tensors (kDLCPU) are supported");
    }
    if (t->dtype.code != s.dtype.code || t->dtype.bits != s.dtype.bits ||
        t->dtype.lanes != s.dtype.lanes)
      return failWith(arg + " has dtype " + dtypeString(t->dtype) +
                      ", expected " + s.dtypeName + " (" +
                      dtypeString(s.dtype) + ")");
    if (t->ndim < 0 || (t->ndim > 0 && !t->shape))
      return failWith(arg + " has a bad descriptor (ndim " +
                      std::to_string(t->ndim) + ", shape " +
                      (t->shape ? "set" : "NULL") + ")");
    if (t->ndim != (int)s.shape.size())
      return failWith(arg + " has rank " + std::to_string(t->ndim) +
                      " (shape " + shapeString(t->shape, t->ndim) +
                      "), expected rank " + std::to_string(s.shape.size()) +
                      " (shape " + specShape(s) + ")");
    for (int d = 0; d < t->ndim; ++d) {
      int64_t size = t->shape[d];
      if (size < 0)
        return failWith(arg + " has a negative size in dim " +
                        std::to_string(d));
      if (s.shape[d] >= 0 && size != s.shape[d])
        return failWith(arg + " has shape " + shapeString(t->shape, t->ndim) +
                        ", expected " + specShape(s) + " (size " +
                        std::to_string(size) + " in dim " + std::to_string(d) +
                        ", expected " + std::to_string(s.shape[d]) + ")");
      if (!s.dimNames[d].empty()) {
        auto [it, inserted] = symbols.try_emplace(
            s.dimNames[d], size,
            "argument '" + s.name + "' dim " + std::to_string(d));
        if (!inserted && it->second.first != size)
          return failWith(arg + " has size " + std::to_string(size) +
                          " in dim " + std::to_string(d) + ", which is " +
                          s.dimNames[d] + ", and " + s.dimNames[d] + " is " +
                          std::to_string(it->second.first) + " (" +
                          it->second.second + ")");
      }
    }
    if (!t->data && numElements(t->shape, t->ndim) > 0)
      return failWith(arg + " has no data (NULL) but " +
                      std::to_string(numElements(t->shape, t->ndim)) +
                      " elements");
  }
  for (const Relation &r : e.relations) {
    auto value = [&](const std::string &side, int64_t &v) {
      auto it = symbols.find(side);
      if (it != symbols.end()) {
        v = it->second.first;
        return true;
      }
      char *end = nullptr;
      v = std::strtoll(side.c_str(), &end, 10);
      return end && *end == '\0' && !side.empty();
    };
    int64_t a, b;
    if (!value(r.lhs, a) || !value(r.rhs, b))
      return failWith(where + "shape relation '" + r.text +
                      "' names a dim no argument has");
    bool ok = r.op == "==" ? a == b
              : r.op == "!=" ? a != b
              : r.op == "<"  ? a < b
              : r.op == "<=" ? a <= b
              : r.op == ">"  ? a > b
                             : a >= b;
    if (!ok)
      return failWith(where + "shape relation '" + r.text + "' does not hold (" +
                      r.lhs + " = " + std::to_string(a) + ", " + r.rhs +
                      " = " + std::to_string(b) + ")");
  }
  return KILN_RT_OK;
}

/// The memory behind results: freed when the last tensor over it goes.
enum class Memory { Pooled, Malloc, Device };
struct Allocation {
  void *ptr;
  /// From the compiled code (kiln_rt_malloc), std::malloc, or the device
  /// (mgpuMemAlloc in a CUDA package's host code).
  Memory memory;
  Allocation(const Allocation &) = delete;
  Allocation &operator=(const Allocation &) = delete;
  ~Allocation() {
    switch (memory) {
    case Memory::Pooled:
      rt::poolFree(ptr);
      break;
    case Memory::Malloc:
      std::free(ptr);
      break;
    case Memory::Device:
#ifdef KILN_RT_CUDA
      mgpuMemFree(ptr, nullptr);
#endif
      break;
    }
  }
};

struct ResultHolder {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
  std::shared_ptr<Allocation> owner;
};

void deleteResult(DLManagedTensor *self) {
  delete static_cast<ResultHolder *>(self->manager_ctx);
}

size_t elementSize(DLDataType dt) { return (dt.bits * dt.lanes + 7) / 8; }

} // namespace

//===----------------------------------------------------------------------===//
// The C API.
//===----------------------------------------------------------------------===//

extern "C" {

int kiln_rt_api_version(void) {
  return KILN_RT_API_VERSION_MAJOR * 1000 + KILN_RT_API_VERSION_MINOR;
}

int kiln_rt_package_format_version(void) {
  return KILN_RT_PACKAGE_FORMAT_VERSION;
}

const char *kiln_rt_last_error(void) { return lastError.c_str(); }

KilnRtPackage *kiln_rt_package_load(const char *path) {
  if (!path) {
    lastError = "the package path is NULL";
    return nullptr;
  }
  auto pkg = std::make_unique<KilnRtPackage>();
  pkg->path = path;
  if (!manifestSection(pkg->path, pkg->manifest))
    return nullptr;
  rt::json::Value root;
  std::string error;
  if (!parseManifest(*pkg, root, error)) {
    lastError = "cannot load package '" + pkg->path + "': " + error;
    return nullptr;
  }
  makeSelfGlobal();
  if (!loadNeededLibraries(root, pkg->path, error)) {
    lastError = error;
    return nullptr;
  }
  // A path without a slash would be looked up in the library path: load
  // the file that was read.
  std::string file = pkg->path;
  if (file.find('/') == std::string::npos)
    file = "./" + file;
#ifdef KILN_RT_CUDA
  // The package's constructors load its kernels (mgpuModuleLoad*): the
  // driver must be there, and their errors are the load's.
  if (pkg->cuda) {
    kilnCudaClearError();
    if (!kilnCudaDriverAvailable()) {
      const char *why = kilnCudaGetError();
      lastError = "cannot load CUDA package '" + pkg->path + "': " +
                  (why ? why : "no CUDA driver");
      kilnCudaClearError();
      return nullptr;
    }
  }
#endif
  pkg->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!pkg->handle) {
    const char *e = dlerror();
    lastError = "cannot load package '" + pkg->path + "': " +
                (e ? e : "dlopen failed");
    return nullptr;
  }
#ifdef KILN_RT_CUDA
  if (pkg->cuda) {
    if (const char *why = kilnCudaGetError()) {
      lastError = "cannot load CUDA package '" + pkg->path +
                  "': loading its kernels failed: " + why;
      kilnCudaClearError();
      return nullptr;
    }
  }
#endif
  if (!dlsym(pkg->handle, "kiln_package_manifest")) {
    lastError = "'" + pkg->path + "' is not a Kiln package: it has no "
                "kiln_package_manifest function";
    return nullptr;
  }
  for (Entry &e : pkg->entries) {
    e.fn = reinterpret_cast<void (*)(void **)>(
        dlsym(pkg->handle, e.symbol.c_str()));
    if (!e.fn) {
      lastError = "cannot load package '" + pkg->path + "': entry @" +
                  e.name + " has no symbol " + e.symbol;
      return nullptr;
    }
  }
  lastError.clear();
  return pkg.release();
}

void kiln_rt_package_free(KilnRtPackage *package) { delete package; }

const char *kiln_rt_package_manifest(const KilnRtPackage *package) {
  return package ? package->manifest.c_str() : nullptr;
}

int kiln_rt_package_num_entries(const KilnRtPackage *package) {
  return package ? (int)package->entries.size() : 0;
}

const char *kiln_rt_entry_name(const KilnRtPackage *package, int entry) {
  if (!validEntry(package, entry))
    return nullptr;
  return package->entries[entry].name.c_str();
}

int kiln_rt_package_find_entry(const KilnRtPackage *package,
                               const char *name) {
  if (!package || !name) {
    lastError = "the package or the name is NULL";
    return -1;
  }
  for (size_t i = 0; i < package->entries.size(); ++i)
    if (package->entries[i].name == name)
      return (int)i;
  std::string names;
  for (const Entry &e : package->entries)
    names += (names.empty() ? "" : ", ") + e.name;
  lastError = "package '" + package->path + "' has no entry '" + name +
              "' (entries: " + names + ")";
  return -1;
}

int kiln_rt_entry_num_args(const KilnRtPackage *package, int entry) {
  return validEntry(package, entry) ? (int)package->entries[entry].args.size()
                                    : -1;
}

int kiln_rt_entry_num_results(const KilnRtPackage *package, int entry) {
  return validEntry(package, entry)
             ? (int)package->entries[entry].results.size()
             : -1;
}

static int specOut(const std::vector<Spec> &specs, int index, const char *what,
                   KilnRtTensorSpec *out) {
  if (index < 0 || index >= (int)specs.size())
    return failWith(std::string(what) + " index " + std::to_string(index) +
                    " is out of range (" + std::to_string(specs.size()) + ")");
  if (!out)
    return failWith("the output spec is NULL");
  const Spec &s = specs[index];
  out->name = s.name.c_str();
  out->dtype = s.dtype;
  out->ndim = (int32_t)s.shape.size();
  out->shape = s.shape.data();
  out->dim_names = s.dimNamePtrs.data();
  return KILN_RT_OK;
}

int kiln_rt_entry_arg(const KilnRtPackage *package, int entry, int index,
                      KilnRtTensorSpec *out) {
  if (!validEntry(package, entry))
    return KILN_RT_ERROR;
  return specOut(package->entries[entry].args, index, "argument", out);
}

int kiln_rt_entry_result(const KilnRtPackage *package, int entry, int index,
                         KilnRtTensorSpec *out) {
  if (!validEntry(package, entry))
    return KILN_RT_ERROR;
  return specOut(package->entries[entry].results, index, "result", out);
}

int kiln_rt_check_args(const KilnRtPackage *package, int entry,
                       const DLTensor *const *args, int num_args) {
  return checkArgs(package, entry, args, num_args);
}

int kiln_rt_run(const KilnRtPackage *package, int entryIndex,
                const DLTensor *const *args, int num_args,
                DLManagedTensor **results, int num_results) {
  if (checkArgs(package, entryIndex, args, num_args) != KILN_RT_OK)
    return KILN_RT_ERROR;
  const Entry &e = package->entries[entryIndex];
  if (num_results != (int)e.results.size())
    return failWith("@" + e.name + " has " + std::to_string(e.results.size()) +
                    " results; the caller expects " +
                    std::to_string(num_results));
  if (!results)
    return failWith("the result array is NULL");

  // Argument descriptors; compact copies of strided arguments.
  std::vector<std::vector<int64_t>> descs(num_args);
  std::vector<std::unique_ptr<char[]>> copies;
  for (int i = 0; i < num_args; ++i) {
    const DLTensor &t = *args[i];
    char *data = static_cast<char *>(t.data);
    if (data)
      data += t.byte_offset;
    int64_t n = numElements(t.shape, t.ndim);
    if (n > 0 && !isCompact(t) && package->cuda)
      return failWith("@" + e.name + ": argument '" + e.args[i].name +
                      "' is a strided CUDA tensor; CUDA packages take "
                      "contiguous tensors (call .contiguous() first)");
    if (n > 0 && !isCompact(t)) {
      size_t esz = elementSize(t.dtype);
      std::unique_ptr<char[]> copy(new (std::nothrow) char[n * esz]);
      if (!copy)
        return failWith("@" + e.name + ": cannot allocate a compact copy of "
                        "argument '" + e.args[i].name + "'");
      copyStrided(data, t.shape, t.strides, t.ndim, esz, copy.get());
      data = copy.get();
      copies.push_back(std::move(copy));
    }
    auto ptr = reinterpret_cast<int64_t>(n > 0 ? data : nullptr);
    std::vector<int64_t> &d = descs[i];
    d = {ptr, ptr, 0};
    d.insert(d.end(), t.shape, t.shape + t.ndim);
    std::vector<int64_t> st = compactStrides(t.shape, t.ndim);
    d.insert(d.end(), st.begin(), st.end());
  }
  size_t words = 0;
  for (const Spec &s : e.results)
    words += 3 + 2 * s.shape.size();
  std::vector<int64_t> out(words, 0);
  void *outPtr = out.data();
  std::vector<void *> descPtrs;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  std::vector<void *> packed = {&outPtr};
  for (void *&p : descPtrs)
    packed.push_back(&p);

  rt::CallContext context;
  std::string message;
#ifdef KILN_RT_CUDA
  // The kernels run on streams of their own: work queued on the caller's
  // streams (the arguments' producers) finishes first.
  if (package->cuda) {
    kilnCudaClearError();
    kilnCudaSynchronize();
  }
#endif
  {
    rt::CallScope scope(context);
    if (std::optional<std::string> failed =
            rt::invokeCompiled(context, e.fn, packed.data())) {
      // A run-time error reported before the failed allocation comes first.
      if (!rt::takeFormattedError(context, package->runtimeErrors.data(),
                                  package->runtimeErrors.size(), message))
        message = *failed;
      return failWith(message);
    }
  }
  bool reported = rt::takeFormattedError(
      context, package->runtimeErrors.data(), package->runtimeErrors.size(),
      message);
#ifdef KILN_RT_CUDA
  if (package->cuda && !reported) {
    if (const char *why = kilnCudaGetError()) {
      message = "@" + e.name + ": CUDA error: " + why;
      reported = true;
      // Frees below work again (mgpu* calls do nothing while an error is
      // pending).
      kilnCudaClearError();
    }
  }
#endif

  // Results: compact ones are adopted (one owner per allocation), others
  // copied out.
  std::unordered_map<void *, std::shared_ptr<Allocation>> owners;
  std::vector<std::unique_ptr<ResultHolder>> holders;
  size_t w = 0;
  bool allocFailed = false;
  for (const Spec &s : e.results) {
    int rank = (int)s.shape.size();
    void *allocated = reinterpret_cast<void *>(out[w]);
    char *aligned = reinterpret_cast<char *>(out[w + 1]);
    int64_t offset = out[w + 2];
    const int64_t *sizes = &out[w + 3];
    const int64_t *strides = &out[w + 3 + rank];
    w += 3 + 2 * rank;
    std::shared_ptr<Allocation> owner;
    if (allocated) {
      std::shared_ptr<Allocation> &o = owners[allocated];
      if (!o)
        o = std::shared_ptr<Allocation>(new Allocation{allocated, package->cuda ? Memory::Device : Memory::Pooled});
      owner = o;
    }
    if (reported || allocFailed)
      continue;
    auto h = std::make_unique<ResultHolder>();
    h->shape.assign(sizes, sizes + rank);
    h->strides = compactStrides(sizes, rank);
    size_t esz = elementSize(s.dtype);
    int64_t n = numElements(sizes, rank);
    bool compact = true;
    {
      int64_t expected = 1;
      for (int d = rank - 1; d >= 0; --d) {
        if (sizes[d] != 1 && strides[d] != expected)
          compact = false;
        expected *= sizes[d];
      }
    }
    char *data = aligned ? aligned + offset * (int64_t)esz : nullptr;
    if (package->cuda && n > 0 && (!owner || !compact)) {
      // Device memory cannot be copied here; function results have
      // identity layouts, so this is a compiler bug, not a user error.
      message = "@" + e.name + ": result " + std::to_string(holders.size()) +
                " is not a compact device buffer of its own";
      reported = true;
      continue;
    }
    if (n > 0 && owner && compact) {
      h->owner = owner;
    } else if (package->cuda) {
      h->owner = owner; // empty: no elements, no copy on the host
    } else {
      void *copy = std::malloc(std::max<size_t>(n * esz, 1));
      if (!copy) {
        allocFailed = true;
        continue;
      }
      if (n > 0)
        copyStrided(data, sizes, strides, rank, esz,
                    static_cast<char *>(copy));
      h->owner = std::shared_ptr<Allocation>(new Allocation{copy, Memory::Malloc});
      data = static_cast<char *>(copy);
    }
    DLTensor &t = h->managed.dl_tensor;
    t.data = data;
    t.device = {package->cuda ? kDLCUDA : kDLCPU, 0};
    t.ndim = rank;
    t.dtype = s.dtype;
    t.shape = h->shape.data();
    t.strides = h->strides.data();
    t.byte_offset = 0;
    h->managed.manager_ctx = h.get();
    h->managed.deleter = deleteResult;
    holders.push_back(std::move(h));
  }
  owners.clear();
  if (reported)
    return failWith(message);
  if (allocFailed)
    return failWith("@" + e.name + ": out of memory copying a result");
  for (int r = 0; r < num_results; ++r)
    results[r] = &holders[r].release()->managed;
  lastError.clear();
  return KILN_RT_OK;
}

} // extern "C"
