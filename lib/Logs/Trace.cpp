//===- Trace.cpp - Chrome traces of compiles and runs ---------------------===//
//
// Part of Kiln. See kiln/Support/Trace.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/Trace.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

using namespace kiln;
using llvm::StringRef;

namespace {
struct Event {
  std::string name, category;
  uint64_t start, duration;
  unsigned thread;
  std::vector<std::pair<std::string, std::string>> args;
};

constexpr size_t kMaxEvents = 1000000;

struct State {
  std::atomic<bool> on{false};
  std::mutex mutex;
  std::string path;
  std::vector<Event> events;
  uint64_t dropped = 0;
  bool atExitRegistered = false;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();

  void init() {
    const char *env = std::getenv("KILN_TRACE");
    if (!env || !*env)
      return;
    std::string error;
    if (!trace::open(env, error))
      std::fprintf(stderr, "kiln: KILN_TRACE ignored: %s\n", error.c_str());
  }
};

State &rawState() {
  // Never destroyed: the at-exit flush and late threads use it.
  static State *s = new State();
  return *s;
}

State &state() {
  static bool initialized = (rawState().init(), true);
  (void)initialized;
  return rawState();
}

unsigned threadNumber() {
  static std::atomic<unsigned> next{1};
  thread_local unsigned id = next.fetch_add(1);
  return id;
}

void flushAtExit() {
  std::string error;
  if (!trace::flush(error))
    std::fprintf(stderr, "kiln: %s\n", error.c_str());
}

/// Whether a file can be created next to `path` (and `path` is not a
/// directory).
bool checkWritable(StringRef path, std::string &error) {
  if (llvm::sys::fs::is_directory(path)) {
    error = "cannot write the trace '" + path.str() + "': it is a directory";
    return false;
  }
  llvm::SmallString<256> tmp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%", fd, tmp)) {
    error = "cannot write the trace '" + path.str() + "': " + ec.message();
    return false;
  }
  ::close(fd);
  llvm::sys::fs::remove(tmp);
  return true;
}
} // namespace

bool trace::enabled() {
  return state().on.load(std::memory_order_relaxed);
}

bool trace::open(StringRef path, std::string &error) {
  State &s = rawState();
  if (path.empty()) {
    error = "the trace file name is empty";
    return false;
  }
  if (!checkWritable(path, error))
    return false;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.path = path.str();
  if (!s.atExitRegistered) {
    s.atExitRegistered = true;
    std::atexit(flushAtExit);
  }
  s.on.store(true, std::memory_order_relaxed);
  return true;
}

uint64_t trace::nowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now() - rawState().epoch)
      .count();
}

void trace::record(StringRef name, StringRef category, uint64_t startMicros,
                   uint64_t durationMicros,
                   std::vector<std::pair<std::string, std::string>> args) {
  State &s = state();
  if (!s.on.load(std::memory_order_relaxed))
    return;
  unsigned thread = threadNumber();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.events.size() >= kMaxEvents) {
    ++s.dropped;
    return;
  }
  s.events.push_back(Event{name.str(), category.str(), startMicros,
                           durationMicros, thread, std::move(args)});
}

bool trace::flush(std::string &error) {
  State &s = rawState();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.path.empty())
    return true;
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    llvm::json::OStream j(os);
    int pid = ::getpid();
    j.object([&] {
      j.attributeArray("traceEvents", [&] {
        for (const Event &e : s.events)
          j.object([&] {
            j.attribute("name", e.name);
            j.attribute("cat", e.category);
            j.attribute("ph", "X");
            j.attribute("ts", (int64_t)e.start);
            j.attribute("dur", (int64_t)e.duration);
            j.attribute("pid", pid);
            j.attribute("tid", (int64_t)e.thread);
            if (!e.args.empty())
              j.attributeObject("args", [&] {
                for (auto &[k, v] : e.args)
                  j.attribute(k, v);
              });
          });
      });
      j.attribute("displayTimeUnit", "ms");
      j.attributeObject("otherData", [&] {
        j.attribute("producer", "kiln");
        j.attribute("dropped_events", (int64_t)s.dropped);
      });
    });
  }
  llvm::SmallString<256> tmp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          s.path + ".tmp-%%%%%%", fd, tmp)) {
    error = "cannot write the trace '" + s.path + "': " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << text;
    out.close();
    if (out.has_error()) {
      error = "cannot write the trace '" + s.path + "': " +
              out.error().message();
      out.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, s.path)) {
    llvm::sys::fs::remove(tmp);
    error = "cannot write the trace '" + s.path + "': " + ec.message();
    return false;
  }
  return true;
}

trace::Scope::Scope(StringRef name, StringRef category) : on(enabled()) {
  if (!on)
    return;
  this->name = name.str();
  this->category = category.str();
  start = nowMicros();
}

trace::Scope::~Scope() {
  if (on)
    record(name, category, start, nowMicros() - start, std::move(args));
}

void trace::Scope::arg(StringRef key, StringRef value) {
  if (on)
    args.emplace_back(key.str(), value.str());
}

namespace {
/// Records each pass run as a "compile" event.
class TraceInstrumentation : public mlir::PassInstrumentation {
public:
  void runBeforePass(mlir::Pass *, mlir::Operation *) override {
    starts().push_back(trace::nowMicros());
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    stop(pass, op, false);
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override {
    stop(pass, op, true);
  }

private:
  // Per thread: passes nest (pipelines run their passes), and nested
  // pipelines on functions run on the pass manager's worker threads.
  static std::vector<uint64_t> &starts() {
    thread_local std::vector<uint64_t> s;
    return s;
  }
  void stop(mlir::Pass *pass, mlir::Operation *op, bool failed) {
    auto &s = starts();
    if (s.empty())
      return;
    uint64_t start = s.back();
    s.pop_back();
    StringRef arg = pass->getArgument();
    std::vector<std::pair<std::string, std::string>> args;
    args.emplace_back("op", op->getName().getStringRef().str());
    if (auto sym = op->getAttrOfType<mlir::StringAttr>(
            mlir::SymbolTable::getSymbolAttrName()))
      args.emplace_back("symbol", sym.getValue().str());
    if (failed)
      args.emplace_back("failed", "true");
    trace::record(arg.empty() ? pass->getName() : arg, "compile", start,
                  trace::nowMicros() - start, std::move(args));
  }
};
} // namespace

void trace::instrument(mlir::PassManager &pm) {
  if (enabled())
    pm.addInstrumentation(std::make_unique<TraceInstrumentation>());
}
