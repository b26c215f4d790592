# RUN: %python %s
# REQUIRES: numpy, torch
# Tests that the runtime's specialization re-infers the types of everything a
# new entry changes, for training programs (kg.grad) and the host code around
# them, on the interpreter and (automatic dynamic, --dynamic=dynamic,
# --mark-dynamic, dynamic -> static) the cpu backend, against PyTorch
# autograd in float64:
# * kg.grad wrt the parameters and the input, called with three batch sizes
#   under automatic dynamic (static entry, then a `?` entry the third call
#   hits), --dynamic=dynamic, --mark-dynamic, --dynamic=static (static ->
#   static) and --mark-static with --dynamic=dynamic;
# * the same program written with `?` dims and symbolic guards: dynamic from
#   the start (auto) and dynamic -> static (--dynamic=static);
# * parameters as !kt.ref (kt.load in the loss graph) under --dynamic=dynamic
#   (interpreter);
# * the gradient flowing through a kg.break, kg.to_host, scf.if, scf.for and
#   scf.while on the host;
# * an outlined graph function called at two sites that specialization gives
#   different types (a copy per signature).

import os
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import Suite, close
from runtime_helpers import entries, run_calls, stat

s = Suite(__file__)
RTOL, ATOL = 1e-10, 1e-12
D, H = 4, 3           # input features, outputs
BATCHES = [2, 5, 7]   # one call each


def T(*dims):
    return "tensor<%sf64>" % "".join("%sx" % d for d in dims)


def step_program(dyn=False):
    """loss = mean((tanh(x @ w + b) - t)^2); returns loss and its gradients
    wrt w, b and x, for a batch of 2. With `dyn`, every dim is `?` with a
    symbolic guard (the batch dim of x and t shares one)."""
    def ty(*dims):
        return T(*["?" if dyn else d for d in dims])

    def shape(*dims):
        return "[%s]" % ", ".join('"%s"' % d if dyn else str(d) for d in dims)
    w, b, x, t = ty(D, H), ty(H), ty(2, D), ty(2, H)
    y, sc = ty(2, H), T()
    return f"""
kg.program @step(%w: {w}, %b: {b}, %x: {x}, %t: {t}) -> ({sc}, {w}, {b}, {x}) {{
  kg.guard_tensor %w {{dtype = f64, shape = {shape(D, H) if not dyn else shape("w0", "w1")}, requires_grad = true}} : {w}
  kg.guard_tensor %b {{dtype = f64, shape = {shape(H) if not dyn else shape("b0")}, requires_grad = true}} : {b}
  kg.guard_tensor %x {{dtype = f64, shape = {shape(2, D) if not dyn else shape("n", "x1")}}} : {x}
  kg.guard_tensor %t {{dtype = f64, shape = {shape(2, H) if not dyn else shape("n", "t1")}}} : {t}
  %loss = kg.graph @step_loss(%w, %b, %x, %t) : ({w}, {b}, {x}, {t}) -> {sc} {{
  ^bb0(%aw: {w}, %ab: {b}, %ax: {x}, %at: {t}):
    %0 = kt.matmul %ax, %aw : ({x}, {w}) -> {y}
    %1 = kt.add %0, %ab : ({y}, {b}) -> {y}
    %2 = kt.tanh %1 : ({y}) -> {y}
    %3 = kt.sub %2, %at : ({y}, {t}) -> {y}
    %4 = kt.mul %3, %3 : ({y}, {y}) -> {y}
    %5 = kt.mean %4 : ({y}) -> {sc}
    kg.yield %5 : {sc}
  }}
  %g:3 = kg.grad %loss wrt(%w, %b, %x) : ({sc}, {w}, {b}, {x}) -> ({w}, {b}, {x}) loc("train.py":6:4)
  kg.return %loss, %g#0, %g#1, %g#2 : {sc}, {w}, {b}, {x}
}}
"""


def torch_step(w, b, x, t):
    tw, tb, tx = (torch.tensor(a, requires_grad=True) for a in (w, b, x))
    loss = ((torch.tanh(tx @ tw + tb) - torch.tensor(t)) ** 2).mean()
    gw, gb, gx = torch.autograd.grad(loss, [tw, tb, tx])
    return [loss.detach().numpy(), gw.numpy(), gb.numpy(), gx.numpy()]


w0 = s.randn(D, H, dtype=np.float64)
b0 = s.randn(H, dtype=np.float64)
calls = [[w0, b0, s.randn(n, D, dtype=np.float64),
          s.randn(n, H, dtype=np.float64)] for n in BATCHES]
refs = [torch_step(*c) for c in calls]


def check_results(label, r, expected, compiles=None):
    if r.rc != 0:
        s.record(label, False, repr(r))
        return
    for k, want in enumerate(expected):
        got = r.results[k]
        ok, msg = len(got) == len(want), "%d results" % len(got)
        for i, (g, e) in enumerate(zip(got, want)):
            if ok:
                ok, msg = close(g, e, RTOL, ATOL)
                msg = "result %d: %s" % (i, msg)
        s.record("%s: call %d (batch %d)" % (label, k, calls[k][2].shape[0]),
                 ok, msg)
    if compiles is not None:
        s.record("%s: %d compiles" % (label, compiles),
                 stat(r, "compiles") == compiles, r.stdout)


STATIC, DYNAMIC = step_program(), step_program(dyn=True)
MODES = [
    # (label, program, options, compiles, also on the cpu backend)
    ("automatic dynamic", STATIC, [], 2, True),
    ("--dynamic=dynamic", STATIC, ["--dynamic=dynamic"], 1, True),
    ("--mark-dynamic x:0, t:0", STATIC,
     ["--mark-dynamic=2:0", "--mark-dynamic=3:0"], 1, True),
    ("--dynamic=static", STATIC, ["--dynamic=static"], 3, False),
    ("--dynamic=dynamic --mark-static w:0", STATIC,
     ["--dynamic=dynamic", "--mark-static=0:0"], 1, False),
    ("? dims, automatic dynamic", DYNAMIC, [], 1, False),
    ("? dims, --dynamic=static", DYNAMIC, ["--dynamic=static"], 3, True),
]
for backend in ["interpreter", "cpu"]:
    for label, prog, opts, compiles, on_cpu in MODES:
        if backend == "cpu" and not on_cpu:
            continue  # each cpu entry compiles: the main modes only
        r = run_calls(prog, calls, "--stats", "--print-entries",
                      "--backend=" + backend, *opts)
        check_results("%s, %s" % (label, backend), r, refs, compiles)
        if label == "automatic dynamic" and r.rc == 0:
            # The second entry is dynamic in the batch dim; the gradient
            # wrt x (a result of the program) has the `?` dim too.
            es = entries(r)
            s.record("%s, %s: gradient types" % (label, backend),
                     len(es) == 2 and "-> (tensor<f64>, tensor<4x3xf64>, "
                     "tensor<3xf64>, tensor<?x4xf64>) {" in es[1], r.stdout)

# Parameters as refs (read with kt.load in the graph): all dims dynamic, on
# both backends (the cpu backend compiles the graph's value form, whose ref
# arguments are tensors: docs/codegen.md "Refs").
REFS = f"""
kg.program @step(%w: !kt.ref<4x3xf64>, %b: !kt.ref<3xf64>, %x: {T(2, D)}, %t: {T(2, H)}) -> ({T()}, {T(D, H)}, {T(H)}, {T(2, D)}) {{
  kg.guard_tensor %w {{dtype = f64, shape = [4, 3], requires_grad = true}} : !kt.ref<4x3xf64>
  kg.guard_tensor %b {{dtype = f64, shape = [3], requires_grad = true}} : !kt.ref<3xf64>
  kg.guard_tensor %x {{dtype = f64, shape = [2, 4]}} : {T(2, D)}
  kg.guard_tensor %t {{dtype = f64, shape = [2, 3]}} : {T(2, H)}
  %loss = kg.graph @step_loss(%w, %b, %x, %t) : (!kt.ref<4x3xf64>, !kt.ref<3xf64>, {T(2, D)}, {T(2, H)}) -> {T()} {{
  ^bb0(%rw: !kt.ref<4x3xf64>, %rb: !kt.ref<3xf64>, %ax: {T(2, D)}, %at: {T(2, H)}):
    %aw = kt.load %rw : (!kt.ref<4x3xf64>) -> {T(D, H)}
    %ab = kt.load %rb : (!kt.ref<3xf64>) -> {T(H)}
    %0 = kt.matmul %ax, %aw : ({T(2, D)}, {T(D, H)}) -> {T(2, H)}
    %1 = kt.add %0, %ab : ({T(2, H)}, {T(H)}) -> {T(2, H)}
    %2 = kt.tanh %1 : ({T(2, H)}) -> {T(2, H)}
    %3 = kt.sub %2, %at : ({T(2, H)}, {T(2, H)}) -> {T(2, H)}
    %4 = kt.mul %3, %3 : ({T(2, H)}, {T(2, H)}) -> {T(2, H)}
    %5 = kt.mean %4 : ({T(2, H)}) -> {T()}
    kg.yield %5 : {T()}
  }}
  %g:3 = kg.grad %loss wrt(%w, %b, %x) : ({T()}, !kt.ref<4x3xf64>, !kt.ref<3xf64>, {T(2, D)}) -> ({T(D, H)}, {T(H)}, {T(2, D)})
  kg.return %loss, %g#0, %g#1, %g#2 : {T()}, {T(D, H)}, {T(H)}, {T(2, D)}
}}
"""
for backend in ("eager", "cpu"):
    r = run_calls(REFS, calls, "--stats", "--dynamic=dynamic",
                  "--backend=" + backend)
    check_results("refs, --dynamic=dynamic, " + backend, r, refs, 1)

# The gradient through host code: a break (disallowed kt.neg), kg.to_host of
# the loss, scf.if on it, an scf.for and an scf.while of graph calls.
x2, sc = T(2, D), T()
# The scf.if threshold lies between the calls' losses: both branches run.
losses = sorted(float(r[0]) for r in refs)
THRESHOLD = (losses[0] + losses[-1]) / 2
HOST = f"""
kg.program @step(%w: {T(D, H)}, %b: {T(H)}, %x: {x2}, %t: {T(2, H)}) -> ({x2}, {x2}) {{
  kg.guard_tensor %w {{dtype = f64, shape = [4, 3], requires_grad = true}} : {T(D, H)}
  kg.guard_tensor %b {{dtype = f64, shape = [3], requires_grad = true}} : {T(H)}
  kg.guard_tensor %x {{dtype = f64, shape = [2, 4]}} : {x2}
  kg.guard_tensor %t {{dtype = f64, shape = [2, 3]}} : {T(2, H)}
  %loss = kg.graph @step_loss(%w, %b, %x, %t) : ({T(D, H)}, {T(H)}, {x2}, {T(2, H)}) -> {sc} {{
  ^bb0(%aw: {T(D, H)}, %ab: {T(H)}, %ax: {x2}, %at: {T(2, H)}):
    %0 = kt.matmul %ax, %aw : ({x2}, {T(D, H)}) -> {T(2, H)}
    %1 = kt.add %0, %ab : ({T(2, H)}, {T(H)}) -> {T(2, H)}
    %2 = kt.tanh %1 : ({T(2, H)}) -> {T(2, H)}
    %3 = kt.sub %2, %at : ({T(2, H)}, {T(2, H)}) -> {T(2, H)}
    %4 = kt.mul %3, %3 : ({T(2, H)}, {T(2, H)}) -> {T(2, H)}
    %5 = kt.mean %4 : ({T(2, H)}) -> {sc}
    kg.yield %5 : {sc}
  }}
  %gx = kg.grad %loss wrt(%x) : ({sc}, {x2}) -> {x2}
  %n = kg.break "disallowed op kt.neg" -> {x2} {{
    %0 = kt.neg %gx : ({x2}) -> {x2}
    kg.yield %0 : {x2}
  }}
  %lh = kg.to_host %loss : {sc} -> f64
  %half = arith.constant {THRESHOLD:.17e} : f64
  %big = arith.cmpf ogt, %lh, %half : f64
  %d = scf.if %big -> ({x2}) {{
    %y = kg.graph @step_double(%n) : ({x2}) -> {x2} {{
    ^bb0(%a: {x2}):
      %0 = kt.add %a, %a : ({x2}, {x2}) -> {x2}
      kg.yield %0 : {x2}
    }}
    scf.yield %y : {x2}
  }} else {{
    scf.yield %n : {x2}
  }}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> ({x2}) {{
    %y = kg.graph @step_for(%acc, %d) : ({x2}, {x2}) -> {x2} {{
    ^bb0(%a: {x2}, %e: {x2}):
      %0 = kt.add %a, %e : ({x2}, {x2}) -> {x2}
      kg.yield %0 : {x2}
    }}
    scf.yield %y : {x2}
  }}
  %wh:2 = scf.while (%acc = %x, %i = %c0) : ({x2}, index) -> ({x2}, index) {{
    %more = arith.cmpi slt, %i, %c3 : index
    scf.condition(%more) %acc, %i : {x2}, index
  }} do {{
  ^bb0(%acc: {x2}, %i: index):
    %y = kg.graph @step_while(%acc, %d) : ({x2}, {x2}) -> {x2} {{
    ^bb0(%a: {x2}, %e: {x2}):
      %0 = kt.sub %a, %e : ({x2}, {x2}) -> {x2}
      kg.yield %0 : {x2}
    }}
    %next = arith.addi %i, %c1 : index
    scf.yield %y, %next : {x2}, index
  }}
  kg.return %f, %wh#0 : {x2}, {x2}
}}
"""


def host_ref(w, b, x, t):
    loss, _, _, gx = torch_step(w, b, x, t)
    d = -gx * (2 if loss > THRESHOLD else 1)
    return [x + 3 * d, x - 3 * d]


host_refs = [host_ref(*c) for c in calls]
s.record("host code: both branches of scf.if run",
         losses[0] < THRESHOLD < losses[-1], losses)
for backend, label, opts, compiles in [
        ("interpreter", "automatic dynamic", [], 2),
        ("interpreter", "--dynamic=static", ["--dynamic=static"], 3),
        ("cpu", "automatic dynamic", [], 2)]:
    r = run_calls(HOST, calls, "--stats", "--backend=" + backend, *opts)
    check_results("host code, %s, %s" % (label, backend), r, host_refs,
                  compiles)

# An outlined graph function called at two sites whose types specialization
# makes different (4x3 and Nx4): each site gets a function of its own types.
OUTLINED = f"""
func.func @square(%a: tensor<?x?xf64>) -> tensor<?x?xf64> attributes {{kg.graph_function}} {{
  %0 = kt.mul %a, %a : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}}
kg.program @sq(%w: tensor<?x?xf64>, %x: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) {{
  kg.guard_tensor %w {{dtype = f64, shape = ["w0", "w1"]}} : tensor<?x?xf64>
  kg.guard_tensor %x {{dtype = f64, shape = ["x0", "x1"]}} : tensor<?x?xf64>
  %a = kg.graph @square(%w) : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %b = kg.graph @square(%x) : (tensor<?x?xf64>) -> tensor<?x?xf64>
  kg.return %a, %b : tensor<?x?xf64>, tensor<?x?xf64>
}}
"""
sq_calls = [[c[0], c[2]] for c in calls]
sq_refs = [[c[0] ** 2, c[2] ** 2] for c in calls]
for backend in ["interpreter", "cpu"]:
    r = run_calls(OUTLINED, sq_calls, "--stats", "--print-entries",
                  "--dynamic=static", "--backend=" + backend)
    check_results("two signatures of @square, %s" % backend, r, sq_refs, 3)
    if r.rc == 0:
        e = entries(r)[0]
        s.record("two signatures of @square, %s: a copy" % backend,
                 "@square(%w) : (tensor<4x3xf64>) -> tensor<4x3xf64>" in e
                 and "@square_0(%x) : (tensor<2x4xf64>) -> tensor<2x4xf64>"
                 in e, e)

s.finish()
