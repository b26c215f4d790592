//===- OutputFiles.h - Writing a set of files all or nothing ----*- C++ -*-===//
//
// Part of Kiln. The tools' outputs (kiln-run's result<i>.npy, arg<i>.npy,
// input<i>.npy, call<k>/...; kiln-opt's -o file) are written so that a run
// that fails leaves every existing file as it was:
//
//   * each file's contents go to a new temporary next to it
//     (`<path>.tmp-XXXXXX`, created exclusively; the user's part of the name
//     is taken literally, `%` included);
//   * once every temporary is complete, `commit` renames them onto their
//     paths, after checking that none of the paths is a directory. If a
//     rename still fails, the renames before it are undone (the files they
//     replaced were kept as hard links) as far as POSIX allows;
//   * temporaries are removed when anything fails, when the set is destroyed
//     without a commit, and on SIGINT/SIGTERM/SIGHUP (llvm's
//     RemoveFileOnSignal: an unlink from a list the handler walks). The
//     renames of a commit run with those signals blocked, so a signal sees
//     either no renamed file or all of them.
//
// A path that exists and is neither a regular file nor a directory (/dev/null,
// a FIFO, a terminal) cannot be replaced by a rename: its contents are kept
// in memory and written to it in place by `commit`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_OUTPUTFILES_H
#define KILN_SUPPORT_OUTPUTFILES_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln {

class OutputFileSet {
public:
  OutputFileSet() = default;
  OutputFileSet(const OutputFileSet &) = delete;
  OutputFileSet &operator=(const OutputFileSet &) = delete;
  /// Removes every temporary not yet committed.
  ~OutputFileSet();

  /// Creates `dir` and its missing parents; those it created are removed
  /// again (when empty) if the set is discarded instead of committed.
  llvm::Error createDirectories(llvm::StringRef dir);

  /// Writes the contents of `path` (what `write` prints) to a new temporary
  /// next to it. Fails, naming `path`, when the temporary cannot be created
  /// or written (a missing directory, no permission, a full disk); nothing is
  /// left behind then.
  llvm::Error add(llvm::StringRef path,
                  llvm::function_ref<void(llvm::raw_ostream &)> write);

  /// Renames every temporary onto its path (all or nothing, see above) and
  /// empties the set.
  llvm::Error commit();

  /// Removes every temporary (and the directories the set created) and
  /// empties the set.
  void discard();

private:
  struct Entry {
    std::string path;
    /// The temporary; empty for a path written in place (`contents`).
    std::string temp;
    std::string contents;
  };
  std::vector<Entry> entries;
  /// Directories createDirectories made, parents first.
  std::vector<std::string> createdDirs;
};

/// Writes one file all or nothing: an OutputFileSet of one entry.
llvm::Error writeFileAtomically(
    llvm::StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write);

} // namespace kiln

#endif // KILN_SUPPORT_OUTPUTFILES_H
