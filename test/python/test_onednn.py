"""Convolutions through oneDNN in the kiln package (backend="cpu" with the
pipeline option `kiln-cpu{conv=onednn}`, and conv=auto): conv2d modules of
odd shapes against PyTorch eager, a conv net, and concurrent calls of one
compiled module from several threads (libkiln_onednn's primitive cache is
shared). Skipped where the build has no libkiln_onednn."""

import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln
from helpers import run_in_threads

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("KILN_BUILD_DIR",
                       os.path.join(os.path.dirname(os.path.dirname(HERE)), "build"))
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(BUILD, "lib", "libkiln_onednn.so.0")),
    reason="this build has no libkiln_onednn (libdnnl-dev)")

ONEDNN = {"pipeline": "kiln-aot-eager,kiln-cpu{conv=onednn threads=2}"}


@pytest.mark.parametrize("cin,cout,k,stride,padding,dilation,groups,bias,shape", [
    (3, 8, 3, 1, 1, 1, 1, True, (1, 3, 11, 9)),
    (8, 16, (3, 5), (2, 1), (1, 2), (1, 2), 1, False, (3, 8, 15, 12)),
    (8, 8, 3, 1, 1, 1, 8, True, (2, 8, 7, 10)),      # depthwise
    (4, 12, 3, 2, 1, 1, 4, False, (2, 4, 9, 9)),     # depthwise, multiplier 3
    (6, 9, 3, 1, 0, 2, 3, True, (1, 6, 12, 13)),     # groups 3, dilation 2
    (16, 24, 1, 1, 0, 1, 1, False, (2, 16, 5, 7)),   # 1x1
    (3, 16, 7, 2, 3, 1, 1, False, (1, 3, 32, 30)),   # a resnet stem
])
def test_conv2d_matches_eager(cin, cout, k, stride, padding, dilation, groups, bias, shape):
    torch.manual_seed(0)
    m = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation,
                  groups=groups, bias=bias).eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        want = m(x)
        for options in (ONEDNN, None):  # forced, and conv=auto
            got = kiln.compile(m, backend="cpu", options=options)(x)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(16)

    def forward(self, x):
        h = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(h)) + x)


def test_block_from_several_threads():
    torch.manual_seed(1)
    m = Block().eval()
    xs = [torch.randn(2, 16, 12, 12) for _ in range(4)]
    with torch.no_grad():
        want = [m(x) for x in xs]
        c = kiln.compile(m, backend="cpu", options=ONEDNN)
        torch.testing.assert_close(c(xs[0]), want[0], rtol=1e-4, atol=1e-4)

        def work(i):
            for _ in range(5):
                torch.testing.assert_close(c(xs[i]), want[i], rtol=1e-4,
                                           atol=1e-4)
        run_in_threads(work, 4)


@pytest.mark.parametrize("cin,cout,k,stride,padding,dilation,groups,bias,shape", [
    (3, 8, 3, 1, 1, 1, 1, True, (1, 3, 11, 9)),        # batch 1
    (8, 16, 3, 2, 1, 1, 1, False, (3, 8, 15, 12)),     # stride 2, odd sizes
    (8, 16, (3, 5), (2, 1), (1, 2), (1, 2), 1, True, (2, 8, 15, 12)),
    (6, 9, 3, 1, 0, 2, 3, True, (2, 6, 12, 13)),       # groups 3, dilation 2
    (8, 8, 3, 1, 1, 1, 8, True, (2, 8, 7, 10)),        # depthwise
    (6, 12, 3, 2, 1, 1, 6, False, (1, 6, 13, 11)),     # depthwise s2, x2, batch 1
    (5, 5, 3, 1, 2, 2, 5, True, (3, 5, 12, 9)),        # depthwise dilation 2
    # depthwise stride 2 (mobilenet's downsampling): the input gradient
    # runs whole on libkiln_onednn's transposed depthwise loops
    (7, 7, 3, 2, 1, 1, 7, False, (2, 7, 14, 13)),      # depthwise s2
    (17, 17, 3, 2, 0, 1, 17, True, (1, 17, 11, 12)),   # s2 p0, batch 1
    (16, 24, 1, 1, 0, 1, 1, False, (2, 16, 5, 7)),     # 1x1
    (16, 24, 1, 2, 0, 1, 1, False, (2, 16, 9, 7)),     # 1x1 stride 2
    (3, 16, 7, 2, 3, 1, 1, False, (2, 3, 32, 30)),     # a resnet stem
    (4, 6, 3, 3, 2, 2, 2, False, (1, 4, 17, 16)),      # stride 3 > dilation
])
def test_conv2d_gradients_match_autograd(cin, cout, k, stride, padding,
                                         dilation, groups, bias, shape):
    # The input, weight and bias gradients of a training step on the cpu
    # backend (conv=onednn and auto): the weight gradient's convolution
    # (lib/Autodiff/Conv.cpp) runs as oneDNN's backward-weights primitive
    # where libkiln_onednn recognizes its shape (kernel larger than output,
    # ungrouped), the input gradient as a conv_transpose2d.
    torch.manual_seed(0)
    m = nn.Conv2d(cin, cout, k, stride=stride, padding=padding,
                  dilation=dilation, groups=groups, bias=bias)
    x = torch.randn(*shape)
    g = torch.randn_like(m(x))
    xr = x.clone().requires_grad_()
    m.zero_grad()
    (m(xr) * g).sum().backward()
    want = [xr.grad] + [p.grad.clone() for p in m.parameters()]
    for options in (ONEDNN, None):
        c = kiln.compile(m, backend="cpu", options=options)
        xk = x.clone().requires_grad_()
        m.zero_grad()
        (c(xk) * g).sum().backward()
        got = [xk.grad] + [p.grad for p in m.parameters()]
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stride,dilation,mult,shape", [
    (1, 1, 1, (2, 6, 9, 11)),
    (2, 1, 2, (1, 4, 13, 12)),
    (1, 2, 1, (3, 5, 10, 10)),
])
def test_depthwise_gradients_f64_match_autograd(stride, dilation, mult, shape):
    # f64 depthwise convs stay generated code (libkiln_onednn is f32 only):
    # the same training step in float64 against torch.autograd.
    torch.manual_seed(1)
    c = shape[1]
    m = nn.Conv2d(c, c * mult, 3, stride=stride, padding=1,
                  dilation=dilation, groups=c).double()
    x = torch.randn(*shape, dtype=torch.float64)
    g = torch.randn_like(m(x))
    xr = x.clone().requires_grad_()
    m.zero_grad()
    (m(xr) * g).sum().backward()
    want = [xr.grad] + [p.grad.clone() for p in m.parameters()]
    k = kiln.compile(m, backend="cpu")
    xk = x.clone().requires_grad_()
    m.zero_grad()
    (k(xk) * g).sum().backward()
    got = [xk.grad] + [p.grad for p in m.parameters()]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


# A child process (the wait policy is process-wide and read once): import
# torch first, as users do, so that libgomp is loaded and libdnnl's GOMP_*
# bind to it; run a oneDNN conv through kiln a few times and sample, right
# after each call, whether any thread but the caller is running (an idle
# OpenMP worker spinning). Prints the libkiln_onednn state and the share of
# samples that saw a running thread.
_SPIN_CHILD = r"""
import ctypes, json, os, time
import torch
import torch.nn as nn
import kiln
torch.set_num_threads(2)
m = nn.Conv2d(16, 16, 3, padding=1).eval()
x = torch.randn(4, 16, 32, 32)
me = os.getpid()
def running():
    for t in os.listdir("/proc/self/task"):
        if int(t) == me:
            continue
        try:
            with open("/proc/self/task/%s/stat" % t) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "R":
                    return True
        except OSError:
            pass
    return False
with torch.no_grad():
    c = kiln.compile(m, backend="cpu", options={
        "pipeline": "kiln-aot-eager,kiln-cpu{conv=onednn threads=2}"})
    torch.testing.assert_close(c(x), m(x), rtol=1e-4, atol=1e-4)
    time.sleep(0.1)
    seen = total = 0
    for _ in range(8):
        c(x)
        for _ in range(6):
            time.sleep(0.001)
            seen += running()
            total += 1
        time.sleep(0.05)
lib = ctypes.CDLL("libkiln_onednn.so.0", mode=os.RTLD_NOLOAD)
print("RESULT " + json.dumps({"state": lib.kiln_onednn_openmp_state(),
                              "running": seen / total}))
"""


def _spin_child(extra_env):
    import json
    import subprocess
    import sys
    env = dict(os.environ)
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "LD_PRELOAD"):
        env.pop(k, None)
    env.update(extra_env)
    p = subprocess.run([sys.executable, "-c", _SPIN_CHILD], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise AssertionError("child failed (%d): %s" % (p.returncode,
                                                    p.stderr[-2000:]))


def test_gnu_openmp_workers_sleep_after_onednn_calls():
    # After `import torch`, libdnnl runs on libgomp, whose idle workers
    # spun 15-20 ms after every oneDNN call against the compiled kernels'
    # libomp workers (docs/codegen.md). libkiln_onednn now makes them
    # sleep (state 3): a spinning worker was seen in ~90% of the samples
    # before, and must be in few now.
    r = _spin_child({})
    assert r["state"] == 3, r
    assert r["running"] <= 0.25, r


def test_gnu_openmp_user_wait_policy_is_kept():
    # A wait policy the user set is theirs (state 2), results unchanged.
    r = _spin_child({"GOMP_SPINCOUNT": "300000"})
    assert r["state"] == 2, r
    r = _spin_child({"OMP_WAIT_POLICY": "passive"})
    assert r["state"] == 2, r
    assert r["running"] <= 0.25, r
