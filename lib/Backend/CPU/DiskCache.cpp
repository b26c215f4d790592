//===- DiskCache.cpp - Compiled CPU code kept on disk across runs ---------===//
//
// Part of Kiln. See DiskCache.h and docs/codegen.md ("Disk cache").
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/DiskCache.h"
#include "kiln/Support/Logging.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

using namespace kiln;
using namespace kiln::cpu;
namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'O', 'D', 'E'};
constexpr char kSuffix[] = ".kcode";

/// The fixed header of an entry file (host byte order: an entry is only
/// ever read on the machine kind that wrote it, the key includes the
/// triple).
struct Header {
  char magic[8];
  uint32_t format;
  uint32_t headerSize;
  char key[64];
  uint64_t payloadSize;
  uint8_t payloadSha256[32];
};
static_assert(sizeof(Header) == 8 + 4 + 4 + 64 + 8 + 32, "no padding");

struct State {
  std::mutex mutex;
  DiskCacheStats stats;
  /// Directories a write failed in: no cache there for this process.
  llvm::StringSet<> disabled;
};
State &state() {
  static State *s = new State; // never destroyed (used at exit by JIT users)
  return *s;
}

void log(const llvm::Twine &message) {
  if (logs::enabled(logs::Topic::Codegen))
    logs::log(logs::Topic::Codegen, message);
}

/// The compiler's build: size and modification time of the file holding
/// this code (a rebuilt compiler may generate other code for the same IR;
/// its entries are not reused). Cheap: one stat per process.
std::string buildIdentity() {
  static const std::string id = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&diskCacheKey), &info) ||
        !info.dli_fname)
      return std::string("unknown-build");
    struct stat st;
    if (stat(info.dli_fname, &st) != 0)
      return std::string("unknown-build");
    return std::string(info.dli_fname) + " " + std::to_string(st.st_size) +
           " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

/// What identifies the host and the compiler in every key.
const std::string &hostAndCompiler() {
  static const std::string text = [] {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "format " << kDiskCacheFormatVersion << "\n";
    os << "triple " << llvm::sys::getProcessTriple() << "\n";
    os << "cpu " << llvm::sys::getHostCPUName() << "\n";
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> on;
    for (auto &f : features)
      on.push_back((f.second ? "+" : "-") + f.first().str());
    llvm::sort(on);
    os << "features " << llvm::join(on, ",") << "\n";
    os << "llvm " << LLVM_VERSION_STRING << "\n";
    // KILN_CACHE_KILN_VERSION stands in for Kiln's version (tests of the
    // key; docs/codegen.md).
    const char *v = std::getenv("KILN_CACHE_KILN_VERSION");
    os << "kiln " << (v && *v ? v : KILN_VERSION) << "\n";
    os << "build " << buildIdentity() << "\n";
    return s;
  }();
  return text;
}

std::string sha256Hex(llvm::StringRef data) {
  auto h = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(data.data()), data.size()));
  return llvm::toHex(h, /*LowerCase=*/true);
}

void appendU32(std::string &out, uint32_t v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(v));
}
void appendU64(std::string &out, uint64_t v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(v));
}

/// Reads the payload; false when it is malformed.
bool parsePayload(llvm::StringRef p, DiskCacheEntry &entry) {
  size_t at = 0;
  auto u32 = [&](uint32_t &v) {
    if (p.size() - at < sizeof(v))
      return false;
    std::memcpy(&v, p.data() + at, sizeof(v));
    at += sizeof(v);
    return true;
  };
  auto u64 = [&](uint64_t &v) {
    if (p.size() - at < sizeof(v))
      return false;
    std::memcpy(&v, p.data() + at, sizeof(v));
    at += sizeof(v);
    return true;
  };
  uint32_t n;
  if (!u32(n))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len;
    if (!u32(len) || p.size() - at < len)
      return false;
    entry.runtimeErrors.push_back(p.substr(at, len).str());
    at += len;
  }
  uint32_t count;
  if (!u32(entry.kernels) || !u32(entry.kernelSites) || !u32(count) ||
      count == 0)
    return false;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t size;
    if (!u64(size) || size == 0 || p.size() - at < size)
      return false;
    entry.objects.push_back(p.substr(at, size).str());
    at += size;
  }
  return at == p.size();
}

/// Turns the cache off in `dir` for this process, with one warning.
void disable(llvm::StringRef dir, const llvm::Twine &why) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.disabled.insert(dir).second)
    return;
  llvm::errs() << "kiln: warning: the compiled-code cache in '" << dir
               << "' is off for this process: " << why << "\n";
}

bool isDisabled(llvm::StringRef dir) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.disabled.contains(dir);
}

/// Removes the least recently used entries while the directory holds more
/// than the cap (and temporary files of writers that died an hour ago).
void evict(llvm::StringRef dir) {
  uint64_t cap = diskCacheMaxBytes();
  struct File {
    fs::path path;
    uint64_t size;
    fs::file_time_type time;
  };
  std::vector<File> files;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir.str(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path &p = it->path();
    std::string name = p.filename().string();
    std::error_code e2;
    if (name.find(".tmp-") != std::string::npos) {
      auto t = fs::last_write_time(p, e2);
      if (!e2 && now - t > std::chrono::hours(1))
        fs::remove(p, e2);
      continue;
    }
    if (!llvm::StringRef(name).ends_with(kSuffix))
      continue;
    uint64_t size = fs::file_size(p, e2);
    if (e2)
      continue; // removed by another process meanwhile
    auto t = fs::last_write_time(p, e2);
    if (e2)
      continue;
    files.push_back({p, size, t});
    total += size;
  }
  if (total <= cap)
    return;
  llvm::sort(files, [](const File &a, const File &b) { return a.time < b.time; });
  unsigned removed = 0;
  for (const File &f : files) {
    if (total <= cap)
      break;
    std::error_code e2;
    if (fs::remove(f.path, e2)) {
      ++removed;
      log("disk cache: evicted " + f.path.filename().string() + " (" +
          llvm::Twine(f.size) + " bytes, least recently used)");
    }
    total -= f.size; // gone either way (another process may have removed it)
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats.evictions += removed;
}
} // namespace

std::string
kiln::cpu::diskCacheDirectory(const std::optional<std::string> &setting) {
  auto off = [](llvm::StringRef v) { return v.empty() || v == "off"; };
  if (setting)
    return off(*setting) ? std::string() : *setting;
  if (const char *v = std::getenv("KILN_CACHE_DIR"))
    return off(v) ? std::string() : std::string(v);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kiln";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kiln";
  return std::string();
}

uint64_t kiln::cpu::diskCacheMaxBytes() {
  if (const char *s = std::getenv("KILN_CACHE_MAX_MB")) {
    // A non-negative number, fractions allowed (0.05: 52428 bytes).
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(s, &end);
    if (end != s && *end == '\0' && errno == 0 && v >= 0 && v == v)
      return v >= 1.6e13 ? UINT64_MAX : (uint64_t)(v * 1024 * 1024);
  }
  return kDefaultDiskCacheMaxMB * 1024 * 1024;
}

DiskCacheStats kiln::cpu::diskCacheStats() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.stats;
}

std::string kiln::cpu::diskCacheKey(llvm::StringRef moduleKeyText) {
  return sha256Hex(hostAndCompiler() + "module\n" + moduleKeyText.str());
}

std::string kiln::cpu::diskCacheEntryPath(llvm::StringRef dir,
                                          llvm::StringRef key) {
  return (dir + "/" + key + kSuffix).str();
}

std::optional<DiskCacheEntry> kiln::cpu::diskCacheLoad(llvm::StringRef dir,
                                                       llvm::StringRef key) {
  State &s = state();
  auto miss = [&]() -> std::optional<DiskCacheEntry> {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.stats.misses;
    return std::nullopt;
  };
  if (isDisabled(dir))
    return miss();
  std::string path = diskCacheEntryPath(dir, key);
  std::string prefix = key.take_front(16).str();
  auto corrupt = [&](const llvm::Twine &why) -> std::optional<DiskCacheEntry> {
    log("disk cache: corrupt entry " + path + " (" + why +
        "): not loaded, compiling again");
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      ++s.stats.corrupt;
    }
    return miss();
  };
  // Only a regular file no larger than the cap can be an entry (a
  // directory, a FIFO or a link to a device is never read).
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    log("disk cache miss " + prefix + " (" + path + ")");
    return miss();
  }
  if (!S_ISREG(st.st_mode))
    return corrupt("not a regular file");
  if ((uint64_t)st.st_size > diskCacheMaxBytes())
    return corrupt(llvm::Twine(st.st_size) +
                   " bytes, more than KILN_CACHE_MAX_MB");
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      log("disk cache miss " + prefix + " (" + path + ")");
      return miss();
    }
    data.assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
    if (in.bad()) {
      log("disk cache miss " + prefix + ": cannot read " + path);
      return miss();
    }
  }
  Header h;
  if (data.size() < sizeof(Header))
    return corrupt("truncated header: " + llvm::Twine(data.size()) +
                   " bytes");
  std::memcpy(&h, data.data(), sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    return corrupt("bad magic");
  if (h.format != kDiskCacheFormatVersion || h.headerSize != sizeof(Header))
    return corrupt("format version " + llvm::Twine(h.format) + ", expected " +
                   llvm::Twine(kDiskCacheFormatVersion));
  if (llvm::StringRef(h.key, sizeof(h.key)) != key)
    return corrupt("the header names another key");
  if (h.payloadSize != data.size() - sizeof(Header))
    return corrupt("payload of " + llvm::Twine(data.size() - sizeof(Header)) +
                   " bytes, the header says " + llvm::Twine(h.payloadSize));
  llvm::StringRef payload(data.data() + sizeof(Header), h.payloadSize);
  auto sum = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(payload.data()), payload.size()));
  if (std::memcmp(sum.data(), h.payloadSha256, sizeof(h.payloadSha256)) != 0)
    return corrupt("checksum mismatch");
  DiskCacheEntry entry;
  if (!parsePayload(payload, entry))
    return corrupt("malformed payload");
  entry.fileBytes = data.size();
  // Least recently used: a hit refreshes the entry's time.
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.stats.hits;
    s.stats.bytesRead += data.size();
  }
  log("disk cache hit " + prefix + " (" + llvm::Twine(data.size()) +
      " bytes, " + path + ")");
  return entry;
}

uint64_t kiln::cpu::diskCacheStore(llvm::StringRef dir, llvm::StringRef key,
                                   const DiskCacheEntry &entry) {
  if (isDisabled(dir) || key.size() != 64)
    return 0;
  std::string payload;
  appendU32(payload, entry.runtimeErrors.size());
  for (const std::string &m : entry.runtimeErrors) {
    appendU32(payload, m.size());
    payload += m;
  }
  appendU32(payload, entry.kernels);
  appendU32(payload, entry.kernelSites);
  appendU32(payload, entry.objects.size());
  for (const std::string &object : entry.objects) {
    appendU64(payload, object.size());
    payload += object;
  }

  Header h;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format = kDiskCacheFormatVersion;
  h.headerSize = sizeof(Header);
  std::memcpy(h.key, key.data(), sizeof(h.key));
  h.payloadSize = payload.size();
  auto sum = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(payload.data()), payload.size()));
  std::memcpy(h.payloadSha256, sum.data(), sizeof(h.payloadSha256));
  uint64_t bytes = sizeof(Header) + payload.size();
  std::string prefix = key.take_front(16).str();
  if (bytes > diskCacheMaxBytes()) {
    log("disk cache: " + prefix + " not stored: " + llvm::Twine(bytes) +
        " bytes exceed KILN_CACHE_MAX_MB");
    evict(dir); // the cap may have shrunk
    return 0;
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    disable(dir, "cannot create the directory: " + ec.message());
    return 0;
  }
  // A unique temporary file in the same directory, renamed over the entry:
  // readers see the old file or the new one, never a partial write.
  int fd = -1;
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          dir + "/" + prefix + ".tmp-%%%%%%%%%%%%", fd, tmp)) {
    disable(dir, "cannot write in it: " + ec.message());
    return 0;
  }
  bool ok;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(reinterpret_cast<const char *>(&h), sizeof(h));
    os << payload;
    os.close();
    ok = !os.has_error();
    if (!ok) {
      std::string why = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      disable(dir, "writing " + tmp + " failed: " + why);
      return 0;
    }
  }
  std::string path = diskCacheEntryPath(dir, key);
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    disable(dir, "renaming " + tmp + " failed: " + ec.message());
    return 0;
  }
  {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.stats.stores;
    s.stats.bytesWritten += bytes;
  }
  log("disk cache store " + prefix + " (" + llvm::Twine(bytes) + " bytes, " +
      path + ")");
  evict(dir);
  return bytes;
}
