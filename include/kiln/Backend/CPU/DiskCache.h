//===- DiskCache.h - Compiled CPU code kept on disk across runs -*- C++ -*-===//
//
// Part of Kiln. The persistent cache of the CPU backend (docs/codegen.md,
// "Disk cache"): one file per compiled module, named by a SHA-256 key over
// what decides its machine code (the functions as the in-memory kernel cache
// keys them, the entries, the pipeline string, the target triple, host CPU
// and features, LLVM's and Kiln's versions, the build of the compiler and
// the entry format). A file holds a header (magic, format version, key,
// payload size, SHA-256 of the payload) and a payload: the run-time error
// templates, kernel counts and the relocatable objects the JIT produced.
//
// Writes go to a temporary file in the directory, renamed over the entry
// (atomic; concurrent writers of one key each rename a complete file). A
// file whose header, key, size or checksum does not match is never used: it
// is reported under KILN_LOGS=codegen and the module is compiled again
// (overwriting it). The directory is capped (KILN_CACHE_MAX_MB), least
// recently used (file modification time, refreshed on each hit) out first.
// A directory that cannot be created or written turns the cache off for the
// process with one warning on stderr.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_CPU_DISKCACHE_H
#define KILN_BACKEND_CPU_DISKCACHE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cpu {

/// Bumped whenever the entry layout or what a payload means changes.
inline constexpr uint32_t kDiskCacheFormatVersion = 2;
inline constexpr uint64_t kDefaultDiskCacheMaxMB = 1024;

/// The cache directory for a setting: `setting` if given, else
/// KILN_CACHE_DIR if set, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln.
/// An empty result (the setting or KILN_CACHE_DIR empty or "off", or no
/// home) means no disk cache.
std::string diskCacheDirectory(const std::optional<std::string> &setting);

/// The cap in bytes: KILN_CACHE_MAX_MB (a non-negative number of MiB,
/// fractions allowed), else kDefaultDiskCacheMaxMB.
uint64_t diskCacheMaxBytes();

/// Counters of this process.
struct DiskCacheStats {
  uint64_t hits = 0, misses = 0;
  /// Entries found but rejected (bad header, key, size or checksum).
  uint64_t corrupt = 0;
  uint64_t stores = 0, evictions = 0;
  uint64_t bytesRead = 0, bytesWritten = 0;
};
DiskCacheStats diskCacheStats();

/// What an entry holds.
struct DiskCacheEntry {
  std::vector<std::string> runtimeErrors;
  uint32_t kernels = 0, kernelSites = 0;
  /// The relocatable objects the JIT links (one, or one per thread of
  /// ParallelCodegen.h).
  std::vector<std::string> objects;
  /// diskCacheLoad: the size of the file read.
  uint64_t fileBytes = 0;
};

/// The entry key (64 hex digits) of a module whose in-memory cache key text
/// is `moduleKeyText`: SHA-256 over it, the host (triple, CPU, features),
/// LLVM's and Kiln's versions, the compiler's build and the format version.
std::string diskCacheKey(llvm::StringRef moduleKeyText);

/// The entry of `key` in `dir` if one is there and valid (counted as a hit,
/// its time refreshed); nullopt otherwise (a miss; a corrupt entry is also
/// logged under codegen).
std::optional<DiskCacheEntry> diskCacheLoad(llvm::StringRef dir,
                                            llvm::StringRef key);

/// Writes the entry of `key` atomically, then evicts past the cap. Failures
/// are not errors: the first one in a directory warns on stderr and turns
/// the cache off for that directory.
/// Returns the bytes written (0: not stored).
uint64_t diskCacheStore(llvm::StringRef dir, llvm::StringRef key,
                        const DiskCacheEntry &entry);

/// The path of the entry of `key` in `dir` (tests, logs).
std::string diskCacheEntryPath(llvm::StringRef dir, llvm::StringRef key);

} // namespace kiln::cpu

#endif // KILN_BACKEND_CPU_DISKCACHE_H
