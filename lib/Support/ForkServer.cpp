//===- ForkServer.cpp - A tool as a server of forked runs -----------------===//
//
// Part of Kiln. See ForkServer.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ForkServer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// One line of stdin without its newline; false at end of input.
bool readLine(std::string &line) {
  line.clear();
  int c;
  while ((c = std::getchar()) != EOF) {
    if (c == '\n')
      return true;
    line.push_back(static_cast<char>(c));
  }
  return !line.empty();
}

bool readCount(std::size_t &n) {
  std::string line;
  if (!readLine(line) || line.empty())
    return false;
  char *end = nullptr;
  unsigned long long v = std::strtoull(line.c_str(), &end, 10);
  if (*end != '\0' || v > 1000000)
    return false;
  n = static_cast<std::size_t>(v);
  return true;
}

bool readLines(std::size_t n, std::vector<std::string> &out) {
  out.resize(n);
  for (std::string &s : out)
    if (!readLine(s))
      return false;
  return true;
}

/// Writes the whole string to fd 1 (not through stdio: a forked child must
/// not inherit buffered answers).
void answer(const std::string &text) {
  const char *p = text.data();
  std::size_t left = text.size();
  while (left) {
    ssize_t w = ::write(1, p, left);
    if (w <= 0)
      std::_Exit(1);
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

[[noreturn]] void childFails(const char *what, const std::string &path) {
  std::string msg = std::string("fork server: cannot ") + what + " '" + path +
                    "': " + std::strerror(errno) + "\n";
  (void)!::write(2, msg.data(), msg.size());
  std::_Exit(125);
}

} // namespace

bool kiln::serveForkedRuns(int argc, char **argv, ToolMain toolMain,
                           int &exitCode) {
  if (argc != 2 || std::strcmp(argv[1], "--fork-server") != 0)
    return false;
  exitCode = 0;
  std::string cwd, inPath, outPath, errPath;
  std::vector<std::string> args, env;
  std::size_t n = 0;
  while (readLine(cwd)) {
    if (!readLine(inPath) || !readLine(outPath) || !readLine(errPath) ||
        !readCount(n) ||
        !readLines(n, args) || !readCount(n) || !readLines(n, env)) {
      std::fprintf(stderr, "fork server: malformed request\n");
      exitCode = 2;
      return true;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      answer("-255\n");
      continue;
    }
    if (pid == 0) {
      if (::chdir(cwd.c_str()) != 0)
        childFails("enter", cwd);
      if (inPath.empty())
        inPath = "/dev/null";
      int in = ::open(inPath.c_str(), O_RDONLY);
      if (in < 0)
        childFails("read", inPath);
      int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0)
        childFails("write", outPath);
      int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err < 0)
        childFails("write", errPath);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::close(in);
      ::close(out);
      ::close(err);
      ::clearenv();
      for (std::string &e : env)
        ::putenv(::strdup(e.c_str()));
      std::vector<char *> childArgv;
      childArgv.push_back(argv[0]);
      for (std::string &a : args)
        childArgv.push_back(::strdup(a.c_str()));
      childArgv.push_back(nullptr);
      std::exit(toolMain(static_cast<int>(childArgv.size() - 1),
                         childArgv.data()));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
    int code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? -WTERMSIG(status)
                                     : -255;
    answer(std::to_string(code) + "\n");
  }
  return true;
}
