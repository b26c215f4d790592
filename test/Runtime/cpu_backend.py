# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the runtime's cpu backend (kiln-run --backend=cpu / --pipeline=kiln-cpu
# on kg.program entries): every graph function of an entry is compiled by
# kiln-cpu and the JIT when the entry is made and called on each hit (no
# recompilation on a hit), the BACKEND_MATCH guard, compile times in the
# stats, the error for a graph with an op that has no CPU lowering (and
# cpu_fallback = eager), and model-like programs (examples/block.mlir, an MLP,
# attention with a graph break) on both backends against PyTorch in float64.

import os
import re
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import Suite, TOLERANCES, close
from runtime_helpers import entries, reasons, run_calls, stat

s = Suite(__file__)
_record = s.record
# Outputs of runs with a million-element print are long: keep messages short.
s.record = lambda label, ok, msg="": _record(label, ok, str(msg)[-3000:])
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOY = os.path.join(ROOT, "examples", "toy_example.mlir")
F = torch.nn.functional


def sdpa_causal(q, k, v):
    """scaled_dot_product_attention(q, k, v, is_causal=True) (torch 1.13 has
    no F.scaled_dot_product_attention)."""
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def toy_example(a, b):
    a = torch.from_numpy(a).double()
    b = torch.from_numpy(b).double()
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return (x * b).numpy()


def pair(n, negative):
    a = s.randn(n)
    b = s.uniform(0.5, 2.0, n)
    return [a, -b if negative else b]


def check_calls(label, r, calls, ref, tol=TOLERANCES["f32"]):
    if r.rc != 0:
        s.record(label, False, repr(r))
        return
    for k, (call, res) in enumerate(zip(calls, r.results)):
        want = ref(*call)
        want = want if isinstance(want, list) else [want]
        if len(res) != len(want):
            s.record("%s call %d" % (label, k), False, "%d results" % len(res))
            continue
        for i, (g, w) in enumerate(zip(res, want)):
            ok, msg = close(g, w, *tol)
            s.record("%s call %d result %d" % (label, k, i), ok, msg)


# -- the toy example: both branches, odd and dynamic sizes, hits ------------
big = pair(1000003, False)
for opt in ["--backend=cpu", "--pipeline=kiln-cpu",
            "--pipeline=kiln-eager,canonicalize,kiln-cpu"]:
    calls = [pair(10, False), pair(10, True), pair(7, False), pair(13, True),
             big if opt == "--backend=cpu" else pair(100, False),
             pair(10, True), pair(0, False)]
    r = run_calls(TOY, calls, "--stats", "--print-entries", opt)
    check_calls("toy %s" % opt, r, calls, toy_example)
    # 10 (static entry), 7 (dynamic entry); every later size hits one of them.
    s.record("toy %s: two compiles, five hits" % opt,
             stat(r, "compiles") == 2 and stat(r, "cache hits") == 5, repr(r))
    # Three graph functions per entry, compiled once each; two graphs run
    # per call, all compiled.
    s.record("toy %s: graphs compiled once per entry" % opt,
             stat(r, "cpu graphs compiled") == 6 and
             stat(r, "cpu graphs interpreted") == 0 and
             stat(r, "cpu graph calls") == 2 * len(calls), r.stdout)
    s.record("toy %s: compile phases" % opt,
             re.search(r"^    kiln-cpu: \d", r.stdout, re.M) is not None and
             re.search(r"^    jit: \d", r.stdout, re.M) is not None, r.stdout)
    es = entries(r)
    s.record("toy %s: BACKEND_MATCH guard" % opt,
             len(es) == 2 and all('kg.guard_backend {backend = "cpu"}' in e for e in es),
             r.stdout)

# The eager backend runs the same calls with no cpu stats.
r = run_calls(TOY, calls[:2], "--stats")
check_calls("toy eager", r, calls[:2], toy_example)
s.record("toy eager: no cpu stats", stat(r, "cpu graph calls") is None, r.stdout)

# --backend=eager (or interpreter) with a kiln-cpu pipeline is a conflict.
r = run_calls(TOY, calls[:1], "--backend=eager", "--pipeline=kiln-cpu")
s.record("backend/pipeline conflict",
         r.rc == 1 and "backend 'eager' conflicts with pipeline 'kiln-cpu', "
         "which selects the cpu backend" in r.stderr, repr(r))
r = run_calls(TOY, calls[:1], "--backend=tpu")
s.record("unknown backend", r.rc == 1 and "unknown backend 'tpu' (available: "
         "eager, interpreter, cpu)" in r.stderr, repr(r))
r = run_calls(TOY, calls[:1], "--backend=cpu", "--pipeline=kiln-cpu{bogus=1}")
s.record("bad kiln-cpu option", r.rc == 1 and "invalid pipeline" in r.stderr,
         repr(r))

# -- a graph with an op without a CPU lowering -------------------------------
UNLOWERED = """
kg.program @p(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %c = kg.graph @p_g0(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %n = kt.neg %a : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("m.py":2:4)
    %r = kt.alloc_ref %n : (tensor<4x3xf32>) -> !kt.ref<4x3xf32> loc("m.py":3:8)
    %c0 = arith.constant 0 : index
    %z = tensor.extract %a[%c0, %c0] : tensor<4x3xf32>
    %t = arith.cmpf ole, %z, %z : f32
    scf.if %t {
      kt.relu_ %r : (!kt.ref<4x3xf32>) -> () loc("m.py":3:8)
    }
    %v = kt.load %r : (!kt.ref<4x3xf32>) -> tensor<4x3xf32> loc("m.py":3:8)
    kg.yield %v : tensor<4x3xf32>
  }
  %e = kg.graph @p_g1(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %r = kt.exp %a : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("m.py":4:8)
    kg.yield %r : tensor<4x3xf32>
  }
  kg.return %c, %e : tensor<4x3xf32>, tensor<4x3xf32>
}
"""
# Every value-semantics kt op lowers and the cpu backend functionalizes ref
# ops itself; a ref used in a nested region (which functionalization
# refuses) does not compile, but the interpreter runs it.
x = s.randn(4, 3)


r = run_calls(UNLOWERED, [[x]], "--backend=cpu")
s.record("no CPU lowering: error with op and location",
         r.rc == 1 and "compiling @p for the cpu backend failed" in r.stderr and
         "m.py:3:8: cannot functionalize a !kt.ref used inside a nested "
         "region" in r.stderr,
         repr(r))


def unlowered_ref(x):
    xt = torch.from_numpy(x).double()
    return [torch.relu(-xt).numpy(), torch.exp(xt).numpy()]


r = run_calls(UNLOWERED, [[x], [x]], "--backend=cpu",
              "--cpu-fallback=eager", "--stats")
check_calls("cpu_fallback=eager", r, [[x], [x]], unlowered_ref)
s.record("cpu_fallback=eager: one warning naming the graph",
         r.stderr.count("kiln: warning: @p: graph @p_g0 runs in the "
                        "interpreter (cpu_fallback = eager)") == 1 and
         "cannot functionalize" in r.stderr, repr(r))
s.record("cpu_fallback=eager: the other graph compiled",
         stat(r, "cpu graphs compiled") == 1 and
         stat(r, "cpu graphs interpreted") == 1 and
         stat(r, "cpu graph calls") == 2, r.stdout)

# -- model-like programs on both backends ------------------------------------
block = open(os.path.join(ROOT, "examples", "block.mlir")).read()
sig = re.search(r"func.func @block\((.*?)\) ->", block, re.S).group(1)
types = re.findall(r"tensor<[0-9x]+xf32>", sig)
names = ", ".join("%%a%d" % i for i in range(len(types)))
args = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(types))
BLOCK = block.replace("func.func @block", "func.func @block_g0") + """
kg.program @block(%s) -> tensor<8x16xf32> {
  %%y = kg.graph @block_g0(%s) : (%s) -> tensor<8x16xf32>
  kg.return %%y : tensor<8x16xf32>
}
""" % (args, names, ", ".join(types))


def block_ref(x, ln1_w, ln1_b, wqkv, wo, ln2_w, ln2_b, w1, b1, w2, b2):
    t = lambda a: torch.from_numpy(a).double()
    x, ln1_w, ln1_b, wqkv, wo = map(t, [x, ln1_w, ln1_b, wqkv, wo])
    ln2_w, ln2_b, w1, b1, w2, b2 = map(t, [ln2_w, ln2_b, w1, b1, w2, b2])
    wqkv, wo, w1, w2 = wqkv * 0.25, wo * 0.25, w1 * 0.25, w2 * 0.25
    n1 = F.layer_norm(x, [16], ln1_w, ln1_b)
    q, k, v = (n1 @ wqkv.T).reshape(8, 3, 2, 8).permute(1, 2, 0, 3)
    att = sdpa_causal(q, k, v)
    h = x + att.transpose(0, 1).reshape(8, 16) @ wo.T
    n2 = F.layer_norm(h, [16], ln2_w, ln2_b)
    up = F.gelu(n2 @ w1.T + b1, approximate="tanh")
    return (h + up @ w2.T + b2).numpy()


shapes = [tuple(int(d) for d in t[7:-5].split("x")) for t in types]
calls = [[s.randn(*sh) for sh in shapes] for _ in range(2)]
for backend in ["eager", "cpu"]:
    r = run_calls(BLOCK, calls, "--backend=" + backend, "--stats")
    check_calls("block %s" % backend, r, calls, block_ref, (1e-4, 1e-5))
    if backend == "cpu":
        s.record("block cpu: one compile, one hit, graph compiled",
                 stat(r, "compiles") == 1 and stat(r, "cpu graph calls") == 2,
                 r.stdout)

# An MLP over a dynamic batch: linear, relu, linear, log_softmax, with the
# batch dim dynamic from the first compile (sizes 5, 1, 64, 0).
MLP = """
kg.program @mlp(%x: tensor<?x12xf32>, %w1: tensor<24x12xf32>, %b1: tensor<24xf32>, %w2: tensor<10x24xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0", 12]} : tensor<?x12xf32>
  %y = kg.graph @mlp_g0(%x, %w1, %b1, %w2, %b2) : (tensor<?x12xf32>, tensor<24x12xf32>, tensor<24xf32>, tensor<10x24xf32>, tensor<10xf32>) -> tensor<?x10xf32> {
  ^bb0(%a: tensor<?x12xf32>, %v1: tensor<24x12xf32>, %c1: tensor<24xf32>, %v2: tensor<10x24xf32>, %c2: tensor<10xf32>):
    %h = kt.linear %a, %v1, %c1 : (tensor<?x12xf32>, tensor<24x12xf32>, tensor<24xf32>) -> tensor<?x24xf32>
    %r = kt.relu %h : (tensor<?x24xf32>) -> tensor<?x24xf32>
    %o = kt.linear %r, %v2, %c2 : (tensor<?x24xf32>, tensor<10x24xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    %l = kt.log_softmax %o {dim = 1} : (tensor<?x10xf32>) -> tensor<?x10xf32>
    kg.yield %l : tensor<?x10xf32>
  }
  kg.return %y : tensor<?x10xf32>
}
"""


def mlp_ref(x, w1, b1, w2, b2):
    t = lambda a: torch.from_numpy(a).double()
    h = F.relu(F.linear(t(x), t(w1), t(b1)))
    return F.log_softmax(F.linear(h, t(w2), t(b2)), dim=1).numpy()


weights = [s.randn(24, 12), s.randn(24), s.randn(10, 24), s.randn(10)]
calls = [[s.randn(n, 12)] + weights for n in (5, 1, 64, 0)]
for backend in ["eager", "cpu"]:
    r = run_calls(MLP, calls, "--backend=" + backend, "--stats")
    check_calls("mlp %s" % backend, r, calls, mlp_ref, (1e-4, 1e-5))
    s.record("mlp %s: one dynamic entry" % backend,
             stat(r, "compiles") == 1 and stat(r, "cache hits") == 3, r.stdout)

# Attention with a graph break between two graphs (the scores are printed by
# the host), f64 and causal.
ATTN = """
kg.program @attn(%q: tensor<2x5x8xf64>, %k: tensor<2x5x8xf64>, %v: tensor<2x5x8xf64>, %wo: tensor<8x8xf64>) -> tensor<2x5x8xf64> {
  %a = kg.graph @attn_g0(%q, %k, %v) : (tensor<2x5x8xf64>, tensor<2x5x8xf64>, tensor<2x5x8xf64>) -> tensor<2x5x8xf64> {
  ^bb0(%q0: tensor<2x5x8xf64>, %k0: tensor<2x5x8xf64>, %v0: tensor<2x5x8xf64>):
    %r = kt.scaled_dot_product_attention %q0, %k0, %v0 {is_causal = true} : (tensor<2x5x8xf64>, tensor<2x5x8xf64>, tensor<2x5x8xf64>) -> tensor<2x5x8xf64>
    kg.yield %r : tensor<2x5x8xf64>
  }
  kg.break "call_function print" {
    kg.host_call @print(%a) : (tensor<2x5x8xf64>) -> ()
  }
  %o = kg.graph @attn_g1(%a, %wo) : (tensor<2x5x8xf64>, tensor<8x8xf64>) -> tensor<2x5x8xf64> {
  ^bb0(%a0: tensor<2x5x8xf64>, %w0: tensor<8x8xf64>):
    %p = kt.linear %a0, %w0 : (tensor<2x5x8xf64>, tensor<8x8xf64>) -> tensor<2x5x8xf64>
    %t = kt.tanh %p : (tensor<2x5x8xf64>) -> tensor<2x5x8xf64>
    kg.yield %t : tensor<2x5x8xf64>
  }
  kg.return %o : tensor<2x5x8xf64>
}
"""


def attn_ref(q, k, v, wo):
    t = lambda a: torch.from_numpy(a)
    a = sdpa_causal(t(q), t(k), t(v))
    return torch.tanh(F.linear(a, t(wo))).numpy()


calls = [[s.randn(2, 5, 8, dtype=np.float64) for _ in range(3)] +
         [s.randn(8, 8, dtype=np.float64)] for _ in range(2)]
for backend in ["eager", "cpu"]:
    r = run_calls(ATTN, calls, "--backend=" + backend, "--stats")
    check_calls("attention %s" % backend, r, calls, attn_ref, TOLERANCES["f64"])
    s.record("attention %s: the break printed twice" % backend,
             r.stdout.count("print: ") == 2, r.stdout)
    if backend == "cpu":
        s.record("attention cpu: both graphs compiled, four calls",
                 stat(r, "cpu graphs compiled") == 2 and
                 stat(r, "cpu graph calls") == 4, r.stdout)
s.finish()
