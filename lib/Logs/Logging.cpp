//===- Logging.cpp - KILN_LOGS --------------------------------------------===//
//
// Part of Kiln. See kiln/Support/Logging.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/Logging.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace kiln::logs;
using llvm::StringRef;

static const char *const kTopicNames[kNumTopics] = {
    "graph_breaks", "recompiles", "guards", "graph",
    "fusion",       "partition",  "codegen", "perf"};

StringRef kiln::logs::topicName(Topic topic) {
  return kTopicNames[static_cast<unsigned>(topic)];
}

std::optional<Topic> kiln::logs::topicNamed(StringRef name) {
  for (unsigned i = 0; i < kNumTopics; ++i)
    if (name == kTopicNames[i])
      return static_cast<Topic>(i);
  return std::nullopt;
}

static std::string validNames() {
  std::string s;
  for (const char *n : kTopicNames)
    s += std::string(s.empty() ? "" : ", ") + n;
  return s + ", all (each may be prefixed with + for verbose or - for off)";
}

std::optional<Settings> kiln::logs::parseSpec(StringRef spec,
                                              std::string &error) {
  Settings settings;
  llvm::SmallVector<StringRef> items;
  spec.split(items, ',');
  for (StringRef raw : items) {
    StringRef item = raw.trim();
    if (item.empty())
      continue;
    Level at = Level::Info;
    if (item.consume_front("+"))
      at = Level::Verbose;
    else if (item.consume_front("-"))
      at = Level::Off;
    item = item.trim();
    if (item == "all") {
      for (Level &l : settings.levels)
        l = at;
      continue;
    }
    std::optional<Topic> topic = topicNamed(item);
    if (!topic) {
      error = "unknown log topic '" + item.str() + "' in '" + spec.str() +
              "'; valid: " + validNames();
      return std::nullopt;
    }
    settings.levels[static_cast<unsigned>(*topic)] = at;
  }
  return settings;
}

namespace {
struct State {
  std::atomic<int> levels[kNumTopics];
  std::mutex mutex; // sink and output
  Sink sink;
  FILE *file = nullptr; // KILN_LOGS_FILE, else stderr

  State() {
    for (auto &l : levels)
      l.store(0, std::memory_order_relaxed);
    if (const char *spec = std::getenv("KILN_LOGS")) {
      std::string error;
      if (std::optional<Settings> s = parseSpec(spec, error))
        set(*s);
      else
        std::fprintf(stderr, "kiln: KILN_LOGS ignored: %s\n", error.c_str());
    }
    if (const char *path = std::getenv("KILN_LOGS_FILE"); path && *path) {
      file = std::fopen(path, "a");
      if (!file)
        std::fprintf(stderr,
                     "kiln: cannot open KILN_LOGS_FILE '%s'; logging to "
                     "stderr\n",
                     path);
    }
  }
  void set(const Settings &s) {
    for (unsigned i = 0; i < kNumTopics; ++i)
      levels[i].store(static_cast<int>(s.levels[i]),
                      std::memory_order_relaxed);
  }
};

// Never destroyed: logs may be written from static destructors and from
// threads that outlive main.
State &state() {
  static State *s = new State();
  return *s;
}
} // namespace

bool kiln::logs::configure(StringRef spec, std::string &error) {
  std::optional<Settings> s = parseSpec(spec, error);
  if (!s)
    return false;
  state().set(*s);
  return true;
}

std::string kiln::logs::currentSpec() {
  std::string spec;
  for (unsigned i = 0; i < kNumTopics; ++i) {
    Level l = level(static_cast<Topic>(i));
    if (l == Level::Off)
      continue;
    spec += (spec.empty() ? "" : ",");
    spec += (l == Level::Verbose ? "+" : "");
    spec += kTopicNames[i];
  }
  return spec;
}

Level kiln::logs::level(Topic topic) {
  return static_cast<Level>(
      state().levels[static_cast<unsigned>(topic)].load(
          std::memory_order_relaxed));
}

void kiln::logs::log(Topic topic, const llvm::Twine &message) {
  State &s = state();
  llvm::SmallString<256> text;
  StringRef msg = message.toStringRef(text);
  while (msg.ends_with("\n"))
    msg = msg.drop_back();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.sink) {
    // Called without the lock: a sink may log or reset the sink.
    Sink sink = s.sink;
    lock.unlock();
    sink(topicName(topic), msg);
    return;
  }
  std::string out;
  llvm::SmallVector<StringRef> lines;
  msg.split(lines, '\n');
  for (StringRef line : lines)
    out += "[kiln:" + topicName(topic).str() + "] " + line.str() + "\n";
  FILE *f = s.file ? s.file : stderr;
  std::fwrite(out.data(), 1, out.size(), f);
  std::fflush(f);
}

void kiln::logs::setSink(Sink sink) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sink = std::move(sink);
}
