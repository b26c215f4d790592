# RUN: %python %s
# REQUIRES: numpy, torch
# batch_norm's per-channel reductions through the CPU backend, whose H and W
# loops kiln-cpu-tile-vectorize collapses into one (collapseContiguousLoops):
# kt.batch_norm_train (result, save_mean, save_invstd) and
# kt.batch_norm_backward (grad_input, grad_weight, grad_bias) against PyTorch's
# native_batch_norm / native_batch_norm_backward in float64, on odd shapes
# (H*W = 1, 3, 35, 51, 256; widths not a multiple of the vector width), f32
# and f64, static and `?` dims; each also against the interpreter.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)
SHAPES = [(2, 3, 5, 7), (1, 4, 1, 1), (3, 2, 17, 3), (4, 8, 16, 16), (8, 16, 4, 4),
          (2, 5, 3, 1), (3, 6, 1, 17)]
NP = {"f32": np.float32, "f64": np.float64}


def train(xs, elem, dyn):
    dt = NP[elem]
    x = (s.randn(*xs, dtype=dt) * 3 + 2).astype(dt)
    w, b = s.randn(xs[1], dtype=dt), s.randn(xs[1], dtype=dt)
    tx = ttype(xs, elem) if not dyn else "tensor<?x%dx?x?x%s>" % (xs[1], elem)
    tc = ttype((xs[1],), elem)
    want = torch.native_batch_norm(torch.from_numpy(x.astype(np.float64)),
                                   torch.from_numpy(w.astype(np.float64)),
                                   torch.from_numpy(b.astype(np.float64)),
                                   None, None, True, 0.1, 1e-5)
    for i, rt in enumerate([tx, tc, tc]):
        mlir = ("func.func @main(%%x: %s, %%w: %s, %%b: %s) -> %s {\n"
                "  %%r:3 = kt.batch_norm_train %%x weight %%w bias %%b : (%s, %s, %s) -> (%s, %s, %s)\n"
                "  return %%r#%d : %s\n}\n") % (tx, tc, tc, rt, tx, tc, tc, tx, tc, tc, i, rt)
        s.check_reference("batch_norm_train %s %s%s result %d" % (xs, elem, " ?" if dyn else "", i),
                          mlir, [x, w, b], want[i].numpy(), elem)


def backward(xs, elem, dyn):
    dt = NP[elem]
    x = (s.randn(*xs, dtype=dt) * 3 + 2).astype(dt)
    g = s.randn(*xs, dtype=dt)
    w = s.randn(xs[1], dtype=dt)
    x64 = torch.from_numpy(x.astype(np.float64))
    _, m, r = torch.native_batch_norm(x64, None, None, None, None, True, 0.1, 1e-5)
    m, r = m.numpy().astype(dt), r.numpy().astype(dt)
    want = torch.ops.aten.native_batch_norm_backward(
        torch.from_numpy(g.astype(np.float64)), x64, torch.from_numpy(w.astype(np.float64)),
        None, None, torch.from_numpy(m.astype(np.float64)),
        torch.from_numpy(r.astype(np.float64)), True, 1e-5, [True, True, True])
    tx = ttype(xs, elem) if not dyn else "tensor<?x%dx?x?x%s>" % (xs[1], elem)
    tc = ttype((xs[1],), elem)
    for i, rt in enumerate([tx, tc, tc]):
        mlir = ("func.func @main(%%g: %s, %%x: %s, %%m: %s, %%r: %s, %%w: %s) -> %s {\n"
                "  %%o:3 = kt.batch_norm_backward %%g, %%x, %%m, %%r weight %%w : "
                "(%s, %s, %s, %s, %s) -> (%s, %s, %s)\n"
                "  return %%o#%d : %s\n}\n") % (tx, tx, tc, tc, tc, rt, tx, tx, tc, tc, tc,
                                               tx, tc, tc, i, rt)
        s.check_reference("batch_norm_backward %s %s%s result %d" % (xs, elem, " ?" if dyn else "", i),
                          mlir, [g, x, m, r, w], want[i].numpy(), elem)


for xs in SHAPES:
    for elem in ["f32", "f64"]:
        train(xs, elem, False)
        backward(xs, elem, False)
for xs in [(3, 2, 17, 3), (4, 8, 16, 16)]:
    train(xs, "f32", True)
    backward(xs, "f32", True)
s.finish()
