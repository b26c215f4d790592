//===- ForkServer.h - A tool as a server of forked runs ---------*- C++ -*-===//
//
// Part of Kiln. `kiln-run --fork-server` and `kiln-opt --fork-server` (the
// only argument) serve runs of the tool: each request names a working
// directory, files for the run's stdin, stdout and stderr, the argument
// list and the environment; the server forks, the child runs the tool's main on them
// exactly as a fresh process would (its options parsed afresh, LLVM's signal
// handlers installed, its exit code its own) and the server answers with the
// exit status. The process pays for loading and relocating libMLIR and
// libLLVM once instead of per run: ~0.1 s per short run, most of a test that
// runs a tool hundreds of times (test/lib/tool_server.py's tool_run, which
// falls back to plain processes with KILN_TEST_FORK_SERVER=0).
//
// Protocol on stdin (one field per line, so no field may contain a
// newline): cwd, stdin path (empty: /dev/null), stdout path, stderr path,
// N, N arguments (argv[1..]),
// M, M environment entries (KEY=VALUE). The answer on stdout is one line:
// the exit code, or -SIGNAL when the run was killed by a signal (as
// Python's subprocess reports it). The server ends at end of input.
//
// A debugging aid for the test suite, not for users: the server must stay
// single-threaded (it runs nothing of the tool itself) so that fork is
// sound.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_FORKSERVER_H
#define KILN_SUPPORT_FORKSERVER_H

namespace kiln {

/// The tool's main: called in each forked child with the request's
/// arguments (argv[0] is the server's).
using ToolMain = int (*)(int argc, char **argv);

/// When argv is {tool, "--fork-server"}: serves requests until the end of
/// stdin and returns true with the server's exit code in `exitCode`.
/// Otherwise returns false and does nothing.
bool serveForkedRuns(int argc, char **argv, ToolMain toolMain,
                     int &exitCode);

} // namespace kiln

#endif // KILN_SUPPORT_FORKSERVER_H
