"""Runs kiln-run / kiln-opt through their fork servers.

A test that runs a tool hundreds of times spends most of its time loading
and relocating libMLIR and libLLVM (~0.1 s per process). `tool_run(args)`
takes the same arguments as `subprocess.run(args, capture_output=True,
text=True)` for `kiln-run` and `kiln-opt` and returns the same
CompletedProcess, but the run is a fork of a server process that loaded the
tool once (`TOOL --fork-server`, kiln/Support/ForkServer.h): a fresh process
as far as the run can tell (its own options, environment, working
directory, exit code and signals).

KILN_TEST_FORK_SERVER=0 in the environment runs plain processes instead.
Any other program, a run with a timeout, or an argument or environment
entry containing a newline runs as a plain process.
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import threading

ENABLED = os.environ.get("KILN_TEST_FORK_SERVER", "1") != "0"
_SERVED = ("kiln-run", "kiln-opt")
_servers = {}


class _Server:
    def __init__(self, tool):
        self.proc = subprocess.Popen(
            [tool, "--fork-server"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            bufsize=1)
        self.tmp = tempfile.mkdtemp(prefix="kiln-fork-server-")

    def run(self, args, env, cwd, input):
        out = os.path.join(self.tmp, "stdout")
        err = os.path.join(self.tmp, "stderr")
        inp = ""
        if input is not None:
            inp = os.path.join(self.tmp, "stdin")
            with open(inp, "w") as f:
                f.write(input)
        lines = [cwd, inp, out, err, str(len(args) - 1)] + list(args[1:])
        entries = ["%s=%s" % kv for kv in env.items()]
        lines += [str(len(entries))] + entries
        self.proc.stdin.write("\n".join(lines) + "\n")
        self.proc.stdin.flush()
        status = self.proc.stdout.readline()
        if not status:
            raise OSError("fork server ended")
        with open(out, errors="replace") as f:
            stdout = f.read()
        with open(err, errors="replace") as f:
            stderr = f.read()
        return subprocess.CompletedProcess(args, int(status), stdout, stderr)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


@atexit.register
def _close_all():
    for s in list(_servers.values()):
        s.close()
    _servers.clear()


def _plain(args, env, cwd, input, timeout=None):
    return subprocess.run(args, capture_output=True, text=True, env=env,
                          cwd=cwd, input=input, timeout=timeout)


def tool_run(args, env=None, cwd=None, input=None, timeout=None,
             capture_output=True, text=True):
    """subprocess.run(args, capture_output=True, text=True, env=env,
    cwd=cwd, input=input, timeout=timeout), through a fork server for
    kiln-run / kiln-opt (a run with a timeout is a plain process)."""
    assert capture_output and text, "tool_run always captures text"
    args = [str(a) for a in args]
    tool = args[0]
    if (not ENABLED or timeout is not None
            or os.path.basename(tool) not in _SERVED):
        return _plain(args, env, cwd, input, timeout)
    env_map = dict(os.environ if env is None else env)
    cwd = os.path.abspath(cwd or os.getcwd())
    fields = args + [cwd] + list(env_map.keys()) + list(env_map.values())
    if input is not None and not isinstance(input, str):
        return _plain(args, env, cwd, input)
    if any("\n" in f or "\r" in f for f in fields):
        return _plain(args, env, cwd, input)
    # One server per tool and thread: a server runs one request at a time.
    key = (tool, threading.get_ident())
    server = _servers.get(key)
    try:
        if server is None:
            server = _servers[key] = _Server(tool)
        return server.run(args, env_map, cwd, input)
    except (OSError, ValueError):
        # The server is gone (or never started): a plain process for this
        # run; the next run starts a new server.
        if server is not None:
            server.close()
        _servers.pop(key, None)
        return _plain(args, env, cwd, input)
