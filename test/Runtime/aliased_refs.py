# RUN: %python %s
# REQUIRES: numpy, torch
# Tests ref arguments that alias, through kiln-run, against PyTorch running
# the same in-place code on one tensor:
# * one .npy file named for two ref arguments of a func.func (the
#   interpreter) or of a kg.program is one buffer: `a.add_(1); b.mul_(2)` on
#   ones gives 4 through both (not 2), on kiln-eager and on kiln-aot-eager
#   (whose kiln-functionalize reads and writes each ref argument once), over
#   several calls that keep the buffer's state;
# * the aliasing is a guard: a call with distinct files after one with the
#   same file recompiles, with the reason; with dynamic shapes too
#   (automatic dynamic, --dynamic=dynamic);
# * tied weights: a training step whose loss reads two parameter refs,
#   called with one file for both, matches torch.autograd.grad(loss, [w, w])
#   and two in-place SGD updates of w; and a program that passes one ref to
#   the loss's graph twice gets the sum of both gradients;
# * a file named for a ref and a plain tensor argument: the tensor gets the
#   file's contents (a value), the ref is updated.

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import KILN_RUN, Suite, close
from runtime_helpers import reasons

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-alias-")


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def save(name, array):
    path = os.path.join(tmp, name)
    np.save(path, np.asarray(array))
    return path


def kiln_run(mlir, *args):
    out = os.path.join(tmp, "out")
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run([KILN_RUN, mlir, "--output-dir=" + out, "--stats"] +
                          list(args), capture_output=True, text=True)
    return proc, out


def load(path):
    return np.load(path) if os.path.exists(path) else None


def expect(label, got, want, tol=1e-6):
    if got is None:
        s.record(label, False, "missing output")
        return
    ok, msg = close(got, np.asarray(want, np.float64), tol, tol)
    s.record(label, ok, msg)


# -- a.add_(1); b.mul_(2) ------------------------------------------------------
FUNC = write("func.mlir", """
func.func @f(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) {
  %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
  %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> tensor<3xf32>
  kt.add_ %a, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  kt.mul_ %b, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  return
}
""")
PROG = write("prog.mlir", """
kg.program @two(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) -> tensor<3xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>
  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>
  %r = kg.graph @two_g(%a, %b) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>):
    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> tensor<3xf32>
    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    %v = kt.load %x : (!kt.ref<3xf32>) -> tensor<3xf32>
    kg.yield %v : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}
""")


def torch_two(a, b):
    a.add_(1)
    b.mul_(2)
    return a.clone()


x0 = np.array([1, -2, 0.5], np.float32)
ones = save("ones.npy", x0)
# The interpreter on a func.func: the same path, and another spelling of it.
for spelling in [ones, os.path.join(tmp, ".", "ones.npy")]:
    proc, out = kiln_run(FUNC, "--input=" + ones, "--input=" + spelling)
    t = torch.tensor(x0)
    torch_two(t, t)
    s.record("func same file rc", proc.returncode == 0, proc.stderr)
    expect("func same file arg0", load(os.path.join(out, "arg0.npy")), t)
    expect("func same file arg1", load(os.path.join(out, "arg1.npy")), t)
# Two files with the same contents are two buffers.
other = save("other.npy", x0)
proc, out = kiln_run(FUNC, "--input=" + ones, "--input=" + other)
ta, tb = torch.tensor(x0), torch.tensor(x0)
torch_two(ta, tb)
expect("func two files arg0", load(os.path.join(out, "arg0.npy")), ta)
expect("func two files arg1", load(os.path.join(out, "arg1.npy")), tb)

# kg.program, three calls: same file, distinct files, same file again (the
# file's buffer keeps its state across calls, as a parameter does).
for pipeline in ["kiln-eager", "kiln-aot-eager"]:
    p1, p2 = save("p1.npy", x0), save("p2.npy", x0)
    proc, out = kiln_run(PROG, "--pipeline=" + pipeline,
                         "--call=%s,%s" % (p1, p1), "--call=%s,%s" % (p2, p1),
                         "--call=%s,%s" % (p1, p1))
    label = "program %s" % pipeline
    s.record(label + " rc", proc.returncode == 0, proc.stderr)
    t1, t2 = torch.tensor(x0), torch.tensor(x0)
    want = [torch_two(t1, t1)]
    want_args = [(t1.clone(), t1.clone())]
    want.append(torch_two(t2, t1))
    want_args.append((t2.clone(), t1.clone()))
    want.append(torch_two(t1, t1))
    want_args.append((t1.clone(), t1.clone()))
    for k in range(3):
        d = os.path.join(out, "call%d" % k)
        expect("%s call%d result" % (label, k),
               load(os.path.join(d, "result0.npy")), want[k])
        for i in range(2):
            expect("%s call%d arg%d" % (label, k, i),
                   load(os.path.join(d, "arg%d.npy" % i)), want_args[k][i])
    # Same, distinct, same: three entries would be wrong (the third hits
    # the first); each change of aliasing is a recompile reason.
    r = reasons(proc)
    s.record(label + " reasons", r == [
        "ref arguments 'a' and 'b' aliasing mismatch. expected the same "
        "tensor, actual distinct tensors"], r)

# Dynamic shapes: a second size makes the dim dynamic (automatic dynamic) or
# every dim is dynamic from the start; the aliasing is kept through both.
DYN = write("dyn.mlir", """
kg.program @dyn(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>) -> tensor<3xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [3]} : !kt.ref<3xf32>
  kg.guard_tensor %b {dtype = f32, shape = [3]} : !kt.ref<3xf32>
  %r = kg.graph @dyn_g(%a, %b) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>):
    %one = kt.full {size = [], value = 1.0, dtype = f32} : () -> tensor<f32>
    %two = kt.full {size = [], value = 2.0, dtype = f32} : () -> tensor<f32>
    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<f32>) -> ()
    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<f32>) -> ()
    %v = kt.load %x : (!kt.ref<3xf32>) -> tensor<3xf32>
    kg.yield %v : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}
""")
x5 = np.array([1, -2, 0.5, 3, -1], np.float32)
for pipeline in ["kiln-eager", "kiln-aot-eager"]:
    for dynamic in ["auto", "dynamic"]:
        p3, p5, q5 = save("p3.npy", x0), save("p5.npy", x5), save("q5.npy", x5)
        calls = [(p3, p3), (p5, p5), (q5, p5), (p5, p5)]
        proc, out = kiln_run(DYN, "--pipeline=" + pipeline,
                             "--dynamic=" + dynamic,
                             *["--call=%s,%s" % c for c in calls])
        label = "dynamic %s %s" % (pipeline, dynamic)
        s.record(label + " rc", proc.returncode == 0, proc.stderr)
        state = {p3: torch.tensor(x0), p5: torch.tensor(x5),
                 q5: torch.tensor(x5)}
        for k, (pa, pb) in enumerate(calls):
            want = torch_two(state[pa], state[pb])
            d = os.path.join(out, "call%d" % k)
            expect("%s call%d result" % (label, k),
                   load(os.path.join(d, "result0.npy")), want)
            expect("%s call%d arg1" % (label, k),
                   load(os.path.join(d, "arg1.npy")), state[pb])

# -- tied weights -------------------------------------------------------------
TIED = write("tied.mlir", """
kg.program @tied(%w: !kt.ref<4xf32>, %v: !kt.ref<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  kg.guard_tensor %w {dtype = f32, shape = [4], requires_grad = true} : !kt.ref<4xf32>
  kg.guard_tensor %v {dtype = f32, shape = [4], requires_grad = true} : !kt.ref<4xf32>
  %l = kg.graph @tied_loss(%w, %v, %x) : (!kt.ref<4xf32>, !kt.ref<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%rw: !kt.ref<4xf32>, %rv: !kt.ref<4xf32>, %a: tensor<4xf32>):
    %w0 = kt.load %rw : (!kt.ref<4xf32>) -> tensor<4xf32>
    %v0 = kt.load %rv : (!kt.ref<4xf32>) -> tensor<4xf32>
    %0 = kt.mul %w0, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.tanh %v0 : (tensor<4xf32>) -> tensor<4xf32>
    %2 = kt.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = kt.sum %2 {dim = [0]} : (tensor<4xf32>) -> tensor<f32>
    kg.yield %3 : tensor<f32>
  }
  %g:2 = kg.grad %l wrt(%w, %v) : (tensor<f32>, !kt.ref<4xf32>, !kt.ref<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  kg.graph @tied_sgd(%w, %v, %g#0, %g#1) : (!kt.ref<4xf32>, !kt.ref<4xf32>, tensor<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%p: !kt.ref<4xf32>, %q: !kt.ref<4xf32>, %gp: tensor<4xf32>, %gq: tensor<4xf32>):
    %lr = kt.full {size = [], value = 0.25, dtype = f32} : () -> tensor<f32>
    %0 = kt.mul %gp, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.sub_ %p, %0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    %1 = kt.mul %gq, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.sub_ %q, %1 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return %l : tensor<f32>
}
""")
# The same loss, with the program passing one ref to the loss's graph twice.
TWICE = write("twice.mlir", """
kg.program @twice(%w: !kt.ref<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  kg.guard_tensor %w {dtype = f32, shape = [4], requires_grad = true} : !kt.ref<4xf32>
  %l = kg.graph @twice_loss(%w, %w, %x) : (!kt.ref<4xf32>, !kt.ref<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%rw: !kt.ref<4xf32>, %rv: !kt.ref<4xf32>, %a: tensor<4xf32>):
    %w0 = kt.load %rw : (!kt.ref<4xf32>) -> tensor<4xf32>
    %v0 = kt.load %rv : (!kt.ref<4xf32>) -> tensor<4xf32>
    %0 = kt.mul %w0, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = kt.tanh %v0 : (tensor<4xf32>) -> tensor<4xf32>
    %2 = kt.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = kt.sum %2 {dim = [0]} : (tensor<4xf32>) -> tensor<f32>
    kg.yield %3 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, !kt.ref<4xf32>) -> tensor<4xf32>
  kg.graph @twice_sgd(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%p: !kt.ref<4xf32>, %gp: tensor<4xf32>):
    %lr = kt.full {size = [], value = 0.25, dtype = f32} : () -> tensor<f32>
    %0 = kt.mul %gp, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    kt.sub_ %p, %0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return %l : tensor<f32>
}
""")

w0 = np.array([1, 2, -1, 0.5], np.float32)
xv = np.array([1, -1, 2, 3], np.float32)
x = save("x.npy", xv)
STEPS = 3


def torch_tied(updates_per_step):
    """loss = sum(w * x * tanh(w)) with w tied; torch.autograd.grad over
    [w, w] gives the full gradient for each, and each is applied (tied) or
    once (the program passing w twice)."""
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    xt = torch.tensor(xv, dtype=torch.float64)
    losses = []
    for _ in range(STEPS):
        loss = (w * xt * torch.tanh(w)).sum()
        gs = torch.autograd.grad(loss, [w] * updates_per_step)
        with torch.no_grad():
            for g in gs:
                w.sub_(0.25 * g)
        losses.append(loss.item())
    return losses, w.detach().numpy()


for pipeline in ["kiln-eager", "kiln-aot-eager"]:
    for mlir, files, updates in [
            (TIED, lambda p: "%s,%s,%s" % (p, p, x), 2),
            (TWICE, lambda p: "%s,%s" % (p, x), 1)]:
        name = os.path.basename(mlir).split(".")[0]
        p = save("w.npy", w0)
        proc, out = kiln_run(mlir, "--pipeline=" + pipeline,
                             *["--call=" + files(p)] * STEPS)
        label = "%s %s" % (name, pipeline)
        s.record(label + " rc", proc.returncode == 0, proc.stderr)
        losses, w_final = torch_tied(updates)
        for k in range(STEPS):
            d = os.path.join(out, "call%d" % k)
            expect("%s call%d loss" % (label, k),
                   load(os.path.join(d, "result0.npy")), losses[k], 1e-5)
        d = os.path.join(out, "call%d" % (STEPS - 1))
        expect(label + " w", load(os.path.join(d, "arg0.npy")), w_final, 1e-5)
        if name == "tied":
            expect(label + " v", load(os.path.join(d, "arg1.npy")), w_final,
                   1e-5)
        # The input file itself is never changed.
        expect(label + " file unchanged", np.load(p), w0, 0)

# -- one file for a ref and a plain tensor --------------------------------------
MIXED = write("mixed.mlir", """
func.func @m(%a: !kt.ref<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
  kt.add_ %a, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  %y = kt.add %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
""")
proc, out = kiln_run(MIXED, "--input=" + ones, "--input=" + ones)
expect("mixed result (the file's value)", load(os.path.join(out, "result0.npy")),
       2 * x0)
expect("mixed arg0", load(os.path.join(out, "arg0.npy")), x0 + 1)

shutil.rmtree(tmp, ignore_errors=True)
s.finish()
