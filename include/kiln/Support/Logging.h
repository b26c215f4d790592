//===- Logging.h - KILN_LOGS: topic logs, as TORCH_LOGS ---------*- C++ -*-===//
//
// Part of Kiln. What the compiler and the runtime decide, printed when a user
// asks for it by topic, as PyTorch's TORCH_LOGS:
//
//   KILN_LOGS=recompiles,+guards        kiln-run --logs=graph_breaks,fusion
//
// Topics (docs/debugging.md, "Logs"): graph_breaks, recompiles, guards,
// graph, fusion, partition, codegen, perf, and `all`. A name alone logs the
// topic; `+name` logs it verbosely (more detail per message); `-name` turns
// it off (useful after `all`). Later items override earlier ones.
//
// The settings are process-wide: the first query reads KILN_LOGS (a bad
// value is reported once on stderr and ignored); `configure` replaces them
// (the tools' --logs, the C API's kilnSetLogs). Messages go to stderr, to
// the file KILN_LOGS_FILE names (appended), or to a sink the embedder sets;
// every line starts with `[kiln:<topic>] `.
//
// Cost when off: one relaxed atomic load per query.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_LOGGING_H
#define KILN_SUPPORT_LOGGING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <functional>
#include <optional>
#include <string>

namespace kiln::logs {

enum class Topic : unsigned {
  GraphBreaks, ///< each graph break of a program compiled: reason, location
  Recompiles,  ///< each recompile (cache miss) with the guard that failed
  Guards,      ///< the guards of each new cache entry
  Graph,       ///< the program of each new cache entry, as compiled
  Fusion,      ///< kiln-fuse's groups (+: each rejected merge and why)
  Partition,   ///< kiln-partition's saved values, their bytes, recomputed ops
  Codegen,     ///< kernels compiled per graph, kernel-cache hits
  Perf,        ///< time per compile phase
};
constexpr unsigned kNumTopics = 8;

enum class Level : int {
  Off = 0,
  Info = 1,    ///< `name`
  Verbose = 2, ///< `+name`
};

/// The topic's name in KILN_LOGS ("graph_breaks", ...).
llvm::StringRef topicName(Topic topic);
/// The topic named `name`, if any.
std::optional<Topic> topicNamed(llvm::StringRef name);

/// Per-topic levels of a spec ("recompiles,+guards,all,-perf"), or an error
/// naming the bad item and listing the valid names. Items are separated by
/// commas (spaces ignored); an empty spec turns everything off.
struct Settings {
  Level levels[kNumTopics] = {};
};
std::optional<Settings> parseSpec(llvm::StringRef spec, std::string &error);

/// Replaces the process's settings by `spec` (the environment is then not
/// read). Fails, changing nothing, on a bad spec.
bool configure(llvm::StringRef spec, std::string &error);
/// The settings as a spec (e.g. "recompiles,+guards"; "" when all off).
std::string currentSpec();

/// The level of `topic` (reads KILN_LOGS on first use).
Level level(Topic topic);
inline bool enabled(Topic topic, Level at = Level::Info) {
  return level(topic) >= at;
}

/// Writes `message` (one or more lines) for `topic`, each line prefixed with
/// `[kiln:<topic>] `. Safe from any thread; messages are not interleaved.
void log(Topic topic, const llvm::Twine &message);

/// Where messages go instead of stderr/KILN_LOGS_FILE: the sink gets the
/// topic's name and the message without prefix; null restores the default.
using Sink = std::function<void(llvm::StringRef topic, llvm::StringRef text)>;
void setSink(Sink sink);

} // namespace kiln::logs

#endif // KILN_SUPPORT_LOGGING_H
