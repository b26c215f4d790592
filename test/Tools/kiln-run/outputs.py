# RUN: %python %s
# REQUIRES: numpy
# Tests that kiln-run writes its output files all or nothing
# (docs/kiln-run.md): a run that fails while writing (a result name that is a
# directory, a call directory that cannot be created after the files of the
# call before it were written, a file size limit that the second result
# exceeds) leaves every existing file as it was and no temporary behind; so
# does SIGTERM or SIGINT while the results are written; `%` in the output
# directory is taken literally.

import glob
import os
import resource
import signal
import subprocess
import tempfile
import time

import numpy as np
from kiln_testing import KILN_RUN, Suite

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-run-outputs-")


def path(*names):
    return os.path.join(tmp, *names)


# Two results: a small one first, then one of 400 KB.
with open(path("two.mlir"), "w") as f:
    f.write("""
func.func @two(%a: tensor<4xf32>, %b: tensor<100000xf32>) -> (tensor<4xf32>, tensor<100000xf32>) {
  %0 = kt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.add %b, %b : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<100000xf32>
  return %0, %1 : tensor<4xf32>, tensor<100000xf32>
}
""")
with open(path("prog.mlir"), "w") as f:
    f.write("""
kg.program @p(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = kg.graph @p_g0(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a0: tensor<4xf32>):
    %0 = kt.add %a0, %a0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
""")
np.save(path("a.npy"), np.arange(4, dtype=np.float32))
two = [path("two.mlir"), "--random-inputs"]


def run(args, **kw):
    return subprocess.run([KILN_RUN] + args, capture_output=True, text=True,
                          timeout=120, **kw)


def old_dir(name, files):
    """A directory holding `files` ({name: bytes}; None: a directory)."""
    d = path(name)
    os.makedirs(d)
    for f, data in files.items():
        p = os.path.join(d, f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if data is None:
            os.makedirs(p)
        else:
            with open(p, "wb") as fh:
                fh.write(data)
    return d


def unchanged(d, files):
    """Whether `d` holds exactly `files` as they were, and nothing else."""
    have = {}
    for root, dirs, names in os.walk(d):
        for n in dirs + names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            if os.path.isdir(p):
                if not os.listdir(p):
                    have[rel] = None
            else:
                with open(p, "rb") as fh:
                    have[rel] = fh.read()
    want = {k: v for k, v in files.items()}
    return have == want, have


def expect_failure(label, args, d, files, needle, **kw):
    p = run(args + ["--output-dir=" + d], **kw)
    lines = p.stderr.splitlines()
    same, have = unchanged(d, files)
    # Only the error: no LLVM stack dump before it (a signal the caller
    # ignores, SIGXFSZ below, is not a crash).
    ok = (p.returncode == 1 and lines and
          lines[-1].startswith("kiln-run: error: ") and needle in lines[-1]
          and "Stack dump" not in p.stderr and "PLEASE submit" not in p.stderr
          and same)
    s.record(label, ok, "rc=%d stderr=%r files=%r" % (p.returncode,
                                                       p.stderr[-600:], have))


# A result name that is a directory: checked before any file is replaced.
files = {"result0.npy": b"old0", "result1.npy": None}
expect_failure("result name is a directory", two,
               old_dir("isdir", files), files,
               "cannot write '%s': it is a directory" %
               path("isdir", "result1.npy"))

# Several calls of a program: call1/ cannot be created (a file has its
# name) after the files of call 0 were written: call0's old files stay.
files = {"call0/result0.npy": b"old call 0", "call1": b"a file"}
expect_failure("second call's directory fails",
               [path("prog.mlir"), "--call=" + path("a.npy"),
                "--call=" + path("a.npy")], old_dir("calls", files), files,
               "cannot create output directory '%s': a file of that name "
               "exists" % path("calls", "call1"))

# A file size limit that result0 (small) fits and result1 (400 KB) does
# not: the write of the second temporary fails after the first succeeded.
def limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))


files = {"result0.npy": b"old0", "result1.npy": b"old1"}
expect_failure("second write fails", two, old_dir("fsize", files), files,
               "cannot write '%s': File too large" %
               path("fsize", "result1.npy"),
               preexec_fn=limit_file_size)

# A signal while the results are written. result0.npy is a FIFO: it is
# written in place when the set is committed, and opening it blocks until a
# reader comes, so the run holds result1's complete temporary until the
# signal arrives.
for sig in [signal.SIGTERM, signal.SIGINT]:
    d = path("signal-%d" % sig)
    os.makedirs(d)
    os.mkfifo(os.path.join(d, "result0.npy"))
    with open(os.path.join(d, "result1.npy"), "wb") as fh:
        fh.write(b"old1")
    # The signal's default action (lit's workers ignore SIGINT).
    p = subprocess.Popen([KILN_RUN] + two + ["--output-dir=" + d],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    deadline = time.time() + 60
    temps = []
    while time.time() < deadline and p.poll() is None and not temps:
        temps = glob.glob(os.path.join(d, "result1.npy.tmp-*"))
        time.sleep(0.01)
    if temps:
        time.sleep(0.2)  # the write of the temporary has finished, or not
    p.send_signal(sig)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    with open(os.path.join(d, "result1.npy"), "rb") as fh:
        kept = fh.read() == b"old1"
    left = sorted(os.listdir(d))
    s.record("%s while writing" % signal.Signals(sig).name,
             bool(temps) and p.returncode == -sig and kept and
             left == ["result0.npy", "result1.npy"],
             "saw temps=%r rc=%r left=%r" % (temps, p.returncode, left))

# The same runs succeed into a directory whose name has '%' in it, and write
# exactly their files.
d = path("out%d%%x")
p = run(two + ["--seed=3", "--output-dir=" + d])
ok = p.returncode == 0 and sorted(os.listdir(d)) == [
    "input0.npy", "input1.npy", "result0.npy", "result1.npy"]
if ok:
    ld = lambda n: np.load(os.path.join(d, n))
    ok = (np.array_equal(ld("result0.npy"), 2 * ld("input0.npy")) and
          np.array_equal(ld("result1.npy"), 2 * ld("input1.npy")))
s.record("'%' in the output directory", ok, p.stderr)

# An existing result is replaced (with its permissions), a symlink's target
# is written through the link.
d = path("replace")
os.makedirs(d)
with open(os.path.join(d, "result0.npy"), "wb") as fh:
    fh.write(b"old0")
os.chmod(os.path.join(d, "result0.npy"), 0o640)
with open(path("target.npy"), "wb") as fh:
    fh.write(b"old1")
os.symlink(path("target.npy"), os.path.join(d, "result1.npy"))
p = run(two + ["--seed=3", "--output-dir=" + d])
ok = (p.returncode == 0 and
      os.stat(os.path.join(d, "result0.npy")).st_mode & 0o777 == 0o640 and
      os.path.islink(os.path.join(d, "result1.npy")) and
      np.load(path("target.npy")).shape == (100000,) and
      np.load(os.path.join(d, "result0.npy")).shape == (4,))
s.record("replace a file and through a symlink", ok, p.stderr)

s.finish()
