"""The OpenMP thread policy of compiled CPU code (docs/codegen.md, "Buffers
and threads"): each thread that calls compiled code forks its parallel
regions with libomp's blocktime set to KILN_OMP_BLOCKTIME ms (unset: the
pool's KMP_BLOCKTIME=0 as before), unless the user set KMP_BLOCKTIME.
Checked by asking libomp itself (kmp_get_blocktime, a per-thread setting)
in a child process, on the calling thread and on a second calling
thread."""

import json
import os
import subprocess
import sys

import pytest

DEFAULT_MS = 0

CHILD = r"""
import ctypes, json, threading
import torch, kiln

def f(x):
    return torch.tanh(x) * 2 + 1

c = kiln.compile(f, backend="cpu")
x = torch.randn(64, 64)
torch.testing.assert_close(c(x), f(x))
omp = ctypes.CDLL([l.split()[-1] for l in open("/proc/self/maps")
                   if "/libomp" in l][0])
out = {"main": omp.kmp_get_blocktime()}

def other():
    before = omp.kmp_get_blocktime()
    torch.testing.assert_close(c(x + 1), f(x + 1))
    out["thread_before"] = before
    out["thread"] = omp.kmp_get_blocktime()

t = threading.Thread(target=other)
t.start()
t.join()
print("RESULT " + json.dumps(out))
"""


def _run(env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("KMP_BLOCKTIME", "KILN_OMP_BLOCKTIME",
                        "OMP_WAIT_POLICY")}
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", CHILD], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):]), p.stderr


def test_calling_threads_get_the_default_blocktime():
    r, _ = _run({})
    assert r["main"] == DEFAULT_MS and r["thread"] == DEFAULT_MS


def test_a_new_calling_thread_gets_the_policy_on_its_first_call():
    # A new thread starts with the process default (Kiln's KMP_BLOCKTIME=0
    # for the pool) and gets the policy on its first call.
    r, _ = _run({"KILN_OMP_BLOCKTIME": "3"})
    assert r["thread_before"] == 0
    assert r["main"] == 3 and r["thread"] == 3


@pytest.mark.parametrize("ms,passive", [(0, False), (7, False), (7, True)])
def test_kiln_omp_blocktime_sets_it(ms, passive):
    # OMP_WAIT_POLICY=passive (libomp: blocktime 0) does not stop it: the
    # policy is Kiln's, for its own pool.
    r, _ = _run(dict({"KILN_OMP_BLOCKTIME": str(ms)},
                     **({"OMP_WAIT_POLICY": "passive"} if passive else {})))
    assert r["main"] == ms and r["thread"] == ms


def test_user_kmp_blocktime_wins():
    # With OMP_WAIT_POLICY=passive too (models_bench's heap-passive): the
    # user's libomp setting is kept, Kiln's is not applied.
    r, _ = _run({"KMP_BLOCKTIME": "5", "KILN_OMP_BLOCKTIME": "9"})
    assert r["main"] == 5 and r["thread"] == 5


def test_bad_kiln_omp_blocktime_warns_and_is_ignored():
    r, err = _run({"KILN_OMP_BLOCKTIME": "lots"})
    assert r["main"] == DEFAULT_MS
    assert "KILN_OMP_BLOCKTIME='lots' is not a number of ms" in err
