"""Helpers for the training tests: an MLP training step written as a captured
program (kg.program with a kg.grad, see docs/training.md), its inputs, and the
same steps in PyTorch as the reference.

The MLP is linear -> relu -> linear -> cross_entropy (integer targets), and
the step is SGD without momentum: p <- p - lr * grad.
"""

import os
import tempfile

import numpy as np
import torch
from kiln_testing import close

F = torch.nn.functional

# The MLP training tests' setup (Execution/Training/mlp_sgd*.py): five SGD
# steps of a 32-64-10 MLP on batches of 16, per-dtype tolerances, and the
# rungs of the ladder they run on.
STEPS, BATCH, D_IN, HIDDEN, CLASSES, LR = 5, 16, 32, 64, 10, 0.1
TOL = {np.float64: (1e-10, 1e-12), np.float32: (2e-5, 2e-6)}
# pass-primals: saved parameters and inputs are passed to the backward's
# graph call, not returned by the forward (the same ops: bit-identical).
PIPELINES = ["kiln-eager", "kiln-aot-eager", "kiln-aot-eager{partition=save-all}",
             "kiln-aot-eager{partition=recompute-all}",
             "kiln-aot-eager{pass-primals}",
             "kiln-aot-eager{partition=recompute-all pass-primals}"]


def mlp_step_program(name, batch, d_in, hidden, classes, elem, lr):
    """The training step as a kg.program taking (w1, b1, w2, b2, x, t) and
    returning (loss, new w1, new b1, new w2, new b2)."""
    T = lambda *dims: "tensor<%s%s>" % ("".join("%dx" % d for d in dims), elem)
    w1, b1, w2, b2 = T(hidden, d_in), T(hidden), T(classes, hidden), T(classes)
    x, t = T(batch, d_in), "tensor<%dxi64>" % batch
    h, o, s = T(batch, hidden), T(batch, classes), T()
    params = [w1, b1, w2, b2]
    P = ", ".join(params)
    return f"""
kg.program @{name}(%w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}, %x: {x}, %t: {t}) -> ({s}, {P}) {{
  kg.guard_tensor %w1 {{dtype = {elem}, shape = [{hidden}, {d_in}], requires_grad = true}} : {w1}
  kg.guard_tensor %b1 {{dtype = {elem}, shape = [{hidden}], requires_grad = true}} : {b1}
  kg.guard_tensor %w2 {{dtype = {elem}, shape = [{classes}, {hidden}], requires_grad = true}} : {w2}
  kg.guard_tensor %b2 {{dtype = {elem}, shape = [{classes}], requires_grad = true}} : {b2}
  kg.guard_tensor %x {{dtype = {elem}, shape = [{batch}, {d_in}]}} : {x}
  kg.guard_tensor %t {{dtype = i64, shape = [{batch}]}} : {t}
  %loss = kg.graph @{name}_forward(%w1, %b1, %w2, %b2, %x, %t) : ({P}, {x}, {t}) -> {s} {{
  ^bb0(%a1: {w1}, %c1: {b1}, %a2: {w2}, %c2: {b2}, %ax: {x}, %at: {t}):
    %0 = kt.linear %ax, %a1, %c1 : ({x}, {w1}, {b1}) -> {h} loc("mlp.py":10:8)
    %1 = kt.relu %0 : ({h}) -> {h} loc("mlp.py":10:8)
    %2 = kt.linear %1, %a2, %c2 : ({h}, {w2}, {b2}) -> {o} loc("mlp.py":11:8)
    %3 = kt.cross_entropy %2, %at : ({o}, {t}) -> {s} loc("train.py":5:11)
    kg.yield %3 : {s}
  }}
  %g:4 = kg.grad %loss wrt(%w1, %b1, %w2, %b2) : ({s}, {P}) -> ({P}) loc("train.py":6:4)
  %n:4 = kg.graph @{name}_sgd(%w1, %b1, %w2, %b2, %g#0, %g#1, %g#2, %g#3) : ({P}, {P}) -> ({P}) {{
  ^bb0(%p1: {w1}, %q1: {b1}, %p2: {w2}, %q2: {b2}, %g1: {w1}, %h1: {b1}, %g2: {w2}, %h2: {b2}):
    %lr = kt.full {{size = [], value = {lr!r}, dtype = {elem}}} : () -> {s}
    %0 = kt.mul %g1, %lr : ({w1}, {s}) -> {w1}
    %1 = kt.sub %p1, %0 : ({w1}, {w1}) -> {w1}
    %2 = kt.mul %h1, %lr : ({b1}, {s}) -> {b1}
    %3 = kt.sub %q1, %2 : ({b1}, {b1}) -> {b1}
    %4 = kt.mul %g2, %lr : ({w2}, {s}) -> {w2}
    %5 = kt.sub %p2, %4 : ({w2}, {w2}) -> {w2}
    %6 = kt.mul %h2, %lr : ({b2}, {s}) -> {b2}
    %7 = kt.sub %q2, %6 : ({b2}, {b2}) -> {b2}
    kg.yield %1, %3, %5, %7 : {P}
  }}
  kg.return %loss, %n#0, %n#1, %n#2, %n#3 : {s}, {P}
}}
"""


def mlp_init(rng, d_in, hidden, classes, dtype):
    """nn.Linear's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    def u(fan_in, *shape):
        k = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-k, k, size=shape).astype(dtype)
    return [u(d_in, hidden, d_in), u(d_in, hidden), u(hidden, classes, hidden),
            u(hidden, classes)]


def mlp_batches(rng, steps, batch, d_in, classes, dtype):
    return [(rng.standard_normal((batch, d_in)).astype(dtype),
             rng.integers(0, classes, size=batch).astype(np.int64))
            for _ in range(steps)]


def torch_sgd_steps(params, batches, lr, dtype):
    """The same steps in PyTorch (eager autograd, torch.optim.SGD): returns
    the loss of every step and the final parameters, as NumPy arrays."""
    torch_dtype = {np.float32: torch.float32, np.float64: torch.float64}[dtype]
    ps = [torch.tensor(p, dtype=torch_dtype, requires_grad=True)
          for p in params]
    opt = torch.optim.SGD(ps, lr=lr)
    losses = []
    for x, t in batches:
        opt.zero_grad()
        h = F.relu(F.linear(torch.tensor(x, dtype=torch_dtype), ps[0], ps[1]))
        loss = F.cross_entropy(F.linear(h, ps[2], ps[3]), torch.tensor(t))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in ps]


def mlp_step_program_refs(name, batch, d_in, hidden, classes, elem, lr):
    """The training step as torch.compile captures it: the parameters are
    `!kt.ref` arguments (mutable tensors); the forward graph reads them, kg.grad
    differentiates the loss with respect to them, and the SGD graph updates
    them in place (kt.sub_). Takes (w1, b1, w2, b2, x, t), returns the loss."""
    T = lambda *dims: "tensor<%s%s>" % ("".join("%dx" % d for d in dims), elem)
    R = lambda *dims: "!kt.ref<%s%s>" % ("".join("%dx" % d for d in dims), elem)
    w1, b1, w2, b2 = T(hidden, d_in), T(hidden), T(classes, hidden), T(classes)
    r1, q1, r2, q2 = R(hidden, d_in), R(hidden), R(classes, hidden), R(classes)
    x, t = T(batch, d_in), "tensor<%dxi64>" % batch
    h, o, s = T(batch, hidden), T(batch, classes), T()
    P = ", ".join([w1, b1, w2, b2])
    RP = ", ".join([r1, q1, r2, q2])
    return f"""
kg.program @{name}(%w1: {r1}, %b1: {q1}, %w2: {r2}, %b2: {q2}, %x: {x}, %t: {t}) -> {s} {{
  kg.guard_tensor %w1 {{dtype = {elem}, shape = [{hidden}, {d_in}], requires_grad = true}} : {r1}
  kg.guard_tensor %b1 {{dtype = {elem}, shape = [{hidden}], requires_grad = true}} : {q1}
  kg.guard_tensor %w2 {{dtype = {elem}, shape = [{classes}, {hidden}], requires_grad = true}} : {r2}
  kg.guard_tensor %b2 {{dtype = {elem}, shape = [{classes}], requires_grad = true}} : {q2}
  kg.guard_tensor %x {{dtype = {elem}, shape = [{batch}, {d_in}]}} : {x}
  kg.guard_tensor %t {{dtype = i64, shape = [{batch}]}} : {t}
  %loss = kg.graph @{name}_forward(%w1, %b1, %w2, %b2, %x, %t) : ({RP}, {x}, {t}) -> {s} {{
  ^bb0(%r1: {r1}, %q1: {q1}, %r2: {r2}, %q2: {q2}, %ax: {x}, %at: {t}):
    %a1 = kt.load %r1 : ({r1}) -> {w1}
    %c1 = kt.load %q1 : ({q1}) -> {b1}
    %a2 = kt.load %r2 : ({r2}) -> {w2}
    %c2 = kt.load %q2 : ({q2}) -> {b2}
    %0 = kt.linear %ax, %a1, %c1 : ({x}, {w1}, {b1}) -> {h} loc("mlp.py":10:8)
    %1 = kt.relu %0 : ({h}) -> {h} loc("mlp.py":10:8)
    %2 = kt.linear %1, %a2, %c2 : ({h}, {w2}, {b2}) -> {o} loc("mlp.py":11:8)
    %3 = kt.cross_entropy %2, %at : ({o}, {t}) -> {s} loc("train.py":5:11)
    kg.yield %3 : {s}
  }}
  %g:4 = kg.grad %loss wrt(%w1, %b1, %w2, %b2) : ({s}, {RP}) -> ({P}) loc("train.py":6:4)
  kg.graph @{name}_sgd(%w1, %b1, %w2, %b2, %g#0, %g#1, %g#2, %g#3) : ({RP}, {P}) -> () {{
  ^bb0(%p1: {r1}, %p2: {q1}, %p3: {r2}, %p4: {q2}, %g1: {w1}, %h1: {b1}, %g2: {w2}, %h2: {b2}):
    %lr = kt.full {{size = [], value = {lr!r}, dtype = {elem}}} : () -> {s}
    %0 = kt.mul %g1, %lr : ({w1}, {s}) -> {w1}
    kt.sub_ %p1, %0 : ({r1}, {w1}) -> () loc("train.py":7:4)
    %1 = kt.mul %h1, %lr : ({b1}, {s}) -> {b1}
    kt.sub_ %p2, %1 : ({q1}, {b1}) -> () loc("train.py":7:4)
    %2 = kt.mul %g2, %lr : ({w2}, {s}) -> {w2}
    kt.sub_ %p3, %2 : ({r2}, {w2}) -> () loc("train.py":7:4)
    %3 = kt.mul %h2, %lr : ({b2}, {s}) -> {b2}
    kt.sub_ %p4, %3 : ({q2}, {b2}) -> () loc("train.py":7:4)
    kg.yield
  }}
  kg.return %loss : {s}
}}
"""


def mlp_training_setup(seed, dtype, elem, program):
    """The inputs of an MLP training test: initial parameters and batches
    from `seed`, the torch.optim.SGD reference (losses, final parameters), a
    temporary directory and the step program (`program`: mlp_step_program or
    mlp_step_program_refs) written to step.mlir in it."""
    rng = np.random.default_rng(seed)
    params = mlp_init(rng, D_IN, HIDDEN, CLASSES, dtype)
    batches = mlp_batches(rng, STEPS, BATCH, D_IN, CLASSES, dtype)
    ref = torch_sgd_steps(params, batches, LR, dtype)
    tmp = tempfile.mkdtemp(prefix="kiln-train-")
    src = os.path.join(tmp, "step.mlir")
    with open(src, "w") as f:
        f.write(program("step", BATCH, D_IN, HIDDEN, CLASSES, elem, LR))
    return params, batches, ref, tmp, src


def check_against_torch(s, label, dtype, losses, final, ref_losses,
                        ref_params):
    """Records every step's loss and the final parameters against torch's,
    and that the loss goes down (the step trains)."""
    rtol, atol = TOL[dtype]
    for k in range(STEPS):
        ok, msg = close(np.array(losses[k]), np.array(ref_losses[k]), rtol,
                        atol)
        s.record("%s: loss of step %d" % (label, k), ok, msg)
    for name, a, b in zip(["w1", "b1", "w2", "b2"], final, ref_params):
        ok, msg = close(a, b, rtol, atol)
        s.record("%s: final %s" % (label, name), ok, msg)
    s.record("%s: loss decreases" % label, losses[-1] < losses[0],
             "losses %s" % losses)


def check_policies_agree(s, label, pipeline, losses, final, first):
    """kiln-aot-eager decomposes composites (cross_entropy, linear) before
    differentiating: other roundings than kiln-eager's kernels, so the rungs
    agree within the tolerance of check_against_torch; the partition
    policies of one rung run the same ops and agree bit for bit. `first` is
    the first kiln-aot-eager run (None before it); returns the new one."""
    if pipeline == "kiln-eager":
        return first
    if first is None:
        return (pipeline, losses, final)
    same = first[1] == losses and all(
        np.array_equal(a, b) for a, b in zip(first[2], final))
    s.record("%s: bit-identical to %s" % (label, first[0]), same,
             "losses %s vs %s" % (losses, first[1]))
    return first
