# RUN: %python %s
# REQUIRES: numpy
# The test helpers' fork servers (kiln-run/kiln-opt --fork-server,
# test/lib/tool_server.py): a run through a server is the same as a plain
# process: results, exit codes, stderr, stdout, the request's environment,
# working directory and stdin; a malformed request ends the server with
# exit code 2; a working directory that cannot be entered is exit code 125.

import os
import subprocess
import tempfile

import numpy as np
import tool_server
from kiln_testing import KILN_OPT, KILN_RUN, Suite

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-fork-server-test-")
mod = os.path.join(tmp, "m.mlir")
with open(mod, "w") as f:
    f.write("""func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %r = kt.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
""")
x = np.array([0.5, -1.0, 2.0], np.float32)
np.save(os.path.join(tmp, "x.npy"), x)


def both(args, **kw):
    tool_server.ENABLED = True
    served = tool_server.tool_run(args, **kw)
    tool_server.ENABLED = False
    plain = tool_server.tool_run(args, **kw)
    tool_server.ENABLED = True
    return served, plain


def same(label, args, **kw):
    a, b = both(args, **kw)
    s.record(label + " exit code", a.returncode == b.returncode,
             "served %d, plain %d" % (a.returncode, b.returncode))
    s.record(label + " stdout", a.stdout == b.stdout,
             "served %r, plain %r" % (a.stdout, b.stdout))
    s.record(label + " stderr", a.stderr == b.stderr,
             "served %r, plain %r" % (a.stderr, b.stderr))
    return a


# A run, its results written relative to the request's working directory.
for d in ["out-served", "out-plain"]:
    os.makedirs(os.path.join(tmp, d))
tool_server.ENABLED = True
r = tool_server.tool_run([KILN_RUN, "m.mlir", "--input=x.npy",
                          "--output-dir=out-served"], cwd=tmp)
s.record("served run", r.returncode == 0, r.stderr)
got = np.load(os.path.join(tmp, "out-served", "result0.npy"))
s.record("served result", np.allclose(got, np.exp(x.astype(np.float64)),
                                      rtol=1e-6), str(got))
# Errors: a missing input, an unknown option, a bad file: same code and text.
same("missing input", [KILN_RUN, mod])
same("unknown option", [KILN_RUN, mod, "--no-such-option"])
same("bad file", [KILN_RUN, os.path.join(tmp, "absent.mlir")])
same("help", [KILN_RUN, "--help"])
# The request's environment reaches the run (KILN_LOGS turns logs on).
env = dict(os.environ, KILN_LOGS="+graph")
a = same("environment", [KILN_RUN, mod, "--input=" + os.path.join(tmp, "x.npy"),
                         "--output-dir=" + os.path.join(tmp, "out-plain")],
         env=env)
# stdin: kiln-opt reads the module from '-'.
a = same("stdin", [KILN_OPT, "-", "--mlir-print-op-generic"],
         input=open(mod).read())
s.record("stdin printed", '"kt.exp"' in a.stdout, a.stdout)
# The raw protocol: a request's answer is its exit code.
r = subprocess.run([KILN_RUN, "--fork-server"], capture_output=True,
                   text=True, input="%s\n\n%s\n%s\n1\n--version\n1\nKILN_X=1\n" % (
                       tmp, os.path.join(tmp, "o"), os.path.join(tmp, "e")))
s.record("version request", r.returncode == 0 and r.stdout == "0\n",
         "%d %r %r" % (r.returncode, r.stdout, r.stderr))
r = subprocess.run([KILN_RUN, "--fork-server"], capture_output=True,
                   text=True, input="%s\n\nout\nerr\nnot-a-count\n" % tmp)
s.record("malformed request", r.returncode == 2 and
         "malformed request" in r.stderr, "%d %r" % (r.returncode, r.stderr))
r = subprocess.run([KILN_RUN, "--fork-server"], capture_output=True,
                   text=True, input="/no/such/dir\n\no\ne\n0\n0\n")
s.record("bad working directory", r.stdout == "125\n", r.stdout)
s.finish()
