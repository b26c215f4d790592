//===- OutputFiles.cpp - Writing a set of files all or nothing ------------===//
//
// Part of Kiln. See kiln/Support/OutputFiles.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <mutex>
#include <pthread.h>
#include <random>

using namespace llvm;

namespace kiln {

static Error fileError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

namespace {
/// Blocks the signals whose handler removes temporaries (llvm's interrupt
/// signals, and SIGQUIT) while a temporary is created and registered, or
/// while a commit renames: the handler then sees a consistent state.
class SignalBlocker {
public:
  SignalBlocker() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGUSR2, SIGQUIT})
      sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old);
  }
  ~SignalBlocker() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }

private:
  sigset_t old;
};

/// `n` random lowercase hex digits.
std::string randomSuffix(unsigned n) {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += "0123456789abcdef"[rng() % 16];
  return s;
}

/// Creates `<path><infix><random>` exclusively (the name is taken literally:
/// unlike sys::fs::createUniqueFile, a `%` in `path` is no pattern) and
/// registers it for removal on signals. Returns its name in `name`.
std::error_code createTemporary(StringRef path, StringRef infix, int &fd,
                                std::string &name) {
  std::error_code ec;
  for (int attempt = 0; attempt < 128; ++attempt) {
    name = (path + infix + randomSuffix(6)).str();
    SignalBlocker blocked;
    ec = sys::fs::openFileForWrite(name, fd, sys::fs::CD_CreateNew,
                                   sys::fs::OF_None);
    if (!ec) {
      sys::RemoveFileOnSignal(name);
      return ec;
    }
    if (ec != std::errc::file_exists)
      return ec;
  }
  return ec;
}

void removeTemporary(const std::string &name) {
  sys::fs::remove(name);
  sys::DontRemoveFileOnSignal(name);
}
} // namespace

OutputFileSet::~OutputFileSet() { discard(); }

void OutputFileSet::discard() {
  for (Entry &e : entries)
    if (!e.temp.empty())
      removeTemporary(e.temp);
  entries.clear();
  for (auto it = createdDirs.rbegin(); it != createdDirs.rend(); ++it)
    sys::fs::remove(*it); // fails, harmlessly, unless empty
  createdDirs.clear();
}

Error OutputFileSet::createDirectories(StringRef dir) {
  // The missing directories, innermost first.
  SmallVector<std::string> missing;
  for (StringRef d = dir; !d.empty() && !sys::fs::exists(d);
       d = sys::path::parent_path(d))
    missing.push_back(d.str());
  if (std::error_code ec = sys::fs::create_directories(dir))
    return fileError("cannot create output directory '" + dir +
                     "': " + ec.message());
  if (!sys::fs::is_directory(dir))
    return fileError("cannot create output directory '" + dir +
                     "': a file of that name exists");
  createdDirs.insert(createdDirs.end(), missing.rbegin(), missing.rend());
  return Error::success();
}

Error OutputFileSet::add(StringRef pathIn,
                         function_ref<void(raw_ostream &)> write) {
  // Through a symlink, the file it names is replaced (as writing through
  // the link would change it), not the link.
  SmallString<256> path(pathIn);
  if (sys::fs::is_symlink_file(pathIn)) {
    SmallString<256> real;
    if (!sys::fs::real_path(pathIn, real))
      path = real;
  }
  sys::fs::file_status st;
  if (!sys::fs::status(path, st) &&
      st.type() != sys::fs::file_type::regular_file &&
      st.type() != sys::fs::file_type::directory_file) {
    // /dev/null, a FIFO, a terminal: written in place by commit().
    Entry e{path.str().str(), "", ""};
    raw_string_ostream os(e.contents);
    write(os);
    os.flush();
    entries.push_back(std::move(e));
    return Error::success();
  }

  int fd;
  std::string temp;
  if (std::error_code ec = createTemporary(path, ".tmp-", fd, temp))
    return fileError("cannot create a file next to '" + pathIn +
                     "': " + ec.message());
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  write(os);
  os.close();
  if (os.has_error()) {
    std::string msg = os.error().message();
    os.clear_error();
    removeTemporary(temp);
    return fileError("cannot write '" + pathIn + "': " + msg);
  }
  entries.push_back({path.str().str(), temp, ""});
  return Error::success();
}

Error OutputFileSet::commit() {
  auto fail = [&](const Twine &msg) {
    discard();
    return fileError(msg);
  };
  // What would make a rename fail, checked before anything changes.
  for (Entry &e : entries)
    if (!e.temp.empty() && sys::fs::is_directory(e.path))
      return fail("cannot write '" + e.path + "': it is a directory");
  // Paths written in place (nothing to undo there). Opening a FIFO blocks
  // until a reader comes: signals stay deliverable meanwhile.
  for (Entry &e : entries) {
    if (!e.temp.empty())
      continue;
    std::error_code ec;
    raw_fd_ostream os(e.path, ec, sys::fs::OF_None);
    if (!ec) {
      os << e.contents;
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
    if (ec)
      return fail("cannot write '" + e.path + "': " + ec.message());
  }
  // The renames, with the signals that remove temporaries blocked. An
  // existing file keeps its permissions, and a hard link to it lets a
  // failing rename later in the set put it back.
  SignalBlocker blocked;
  std::vector<std::string> backups(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry &e = entries[i];
    if (e.temp.empty())
      continue;
    sys::fs::file_status st;
    if (!sys::fs::status(e.path, st) &&
        st.type() == sys::fs::file_type::regular_file) {
      sys::fs::setPermissions(e.temp, st.permissions());
      for (int attempt = 0; attempt < 128; ++attempt) {
        std::string name = e.path + ".old-" + randomSuffix(6);
        std::error_code ec = sys::fs::create_hard_link(e.path, name);
        if (!ec)
          backups[i] = name;
        if (ec != std::errc::file_exists)
          break;
      }
    }
    if (std::error_code ec = sys::fs::rename(e.temp, e.path)) {
      for (size_t j = 0; j < i; ++j) {
        if (entries[j].temp.empty())
          continue;
        if (!backups[j].empty())
          sys::fs::rename(backups[j], entries[j].path);
        else
          sys::fs::remove(entries[j].path);
        sys::DontRemoveFileOnSignal(entries[j].temp);
        entries[j].temp.clear();
      }
      if (!backups[i].empty())
        sys::fs::remove(backups[i]);
      return fail("cannot write '" + e.path + "': " + ec.message());
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!backups[i].empty())
      sys::fs::remove(backups[i]);
    if (!entries[i].temp.empty())
      sys::DontRemoveFileOnSignal(entries[i].temp);
  }
  entries.clear();
  createdDirs.clear();
  return Error::success();
}

Error writeFileAtomically(StringRef path,
                          function_ref<void(raw_ostream &)> write) {
  OutputFileSet files;
  if (Error e = files.add(path, write))
    return e;
  return files.commit();
}

} // namespace kiln
