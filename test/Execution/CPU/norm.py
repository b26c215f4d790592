# RUN: %python %s
# REQUIRES: numpy
# layer_norm, batch_norm and scaled_dot_product_attention (mask, is_causal,
# scale, broadcast batch dims) through the CPU backend vs the interpreter.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
from cpu_compare import CPUSuite
from kiln_testing import ttype

s = CPUSuite(__file__)
T = ttype
FLOATS = [("f32", np.float32), ("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]


def ln(xs, ns, w, b, elem="f32", dt=np.float32, eps=None, xtype=None):
    x = s.randn(*xs, dtype=dt) * 3 + 1
    ins, types = [x], [xtype or T(xs, elem)]
    kw = ""
    if w:
        ins.append(s.randn(*ns, dtype=dt)); types.append(T(ns, elem)); kw += " weight %arg1"
    if b:
        ins.append(s.randn(*ns, dtype=dt)); types.append(T(ns, elem))
        kw += " bias %%arg%d" % (len(ins) - 1)
    attrs = "normalized_shape = [%s]" % ", ".join(map(str, ns))
    if eps is not None:
        attrs += ", eps = %r : f64" % eps
    rt = types[0]
    mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.layer_norm %%arg0%s {%s} : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (
        ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(types)), rt, kw, attrs,
        ", ".join(types), rt, rt)
    s.check("layer_norm %s %s w=%s b=%s %s" % (xs, ns, w, b, elem), mlir, ins, elems=[elem])


for xs, ns in [((2, 4), (4,)), ((3, 5, 7), (7,)), ((3, 5, 7), (5, 7)), ((9,), (9,)), ((0, 3), (3,)),
               ((2, 1, 3), (1, 3))]:
    for w, b in [(True, True), (False, False), (True, False), (False, True)]:
        ln(xs, ns, w, b)
for elem, dt in FLOATS:
    ln((4, 13), (13,), True, True, elem, dt)
ln((3, 6), (6,), True, True, eps=0.1)
ln((5, 6), (6,), True, True, xtype="tensor<?x6xf32>")


def bn(xs, w, b, elem="f32", dt=np.float32, eps=None):
    c = xs[1]
    x = s.randn(*xs, dtype=dt)
    ins = [x, s.randn(c, dtype=dt), np.abs(s.randn(c, dtype=dt)) + np.asarray(0.5, dtype=dt)]
    kw = ""
    if w:
        ins.append(s.randn(c, dtype=dt)); kw += " weight %arg3"
    if b:
        ins.append(s.randn(c, dtype=dt)); kw += " bias %%arg%d" % (len(ins) - 1)
    types = [T(xs, elem)] + [T((c,), elem)] * (len(ins) - 1)
    attrs = " {eps = %r : f64}" % eps if eps is not None else ""
    mlir = ("func.func @main(%s) -> %s {\n  %%r = kt.batch_norm %%arg0, %%arg1, %%arg2%s%s : (%s) -> %s\n"
            "  return %%r : %s\n}\n") % (
        ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(types)), types[0], kw, attrs,
        ", ".join(types), types[0], types[0])
    s.check("batch_norm %s w=%s b=%s %s" % (xs, w, b, elem), mlir, ins, elems=[elem])


for xs in [(2, 3), (2, 3, 4), (3, 5, 7, 2), (1, 1, 9), (0, 3, 2)]:
    for w, b in [(True, True), (False, False), (True, False), (False, True)]:
        bn(xs, w, b)
for elem, dt in FLOATS:
    bn((2, 5, 3), True, True, elem, dt, eps=1e-3)


def sdpa(qs, ks, vs, mask=None, causal=False, scale=None, elem="f32", dt=np.float32):
    ins = [s.randn(*qs, dtype=dt), s.randn(*ks, dtype=dt), s.randn(*vs, dtype=dt)]
    types = [T(qs, elem), T(ks, elem), T(vs, elem)]
    if mask is not None:
        mshape, mkind = mask
        if mkind == "i1":
            m = s.randbool(*mshape)
            m.reshape(-1)[::3] = True  # keep most rows live
            ins.append(m); types.append(T(mshape, "i1"))
        else:
            ins.append(s.randn(*mshape, dtype=dt)); types.append(T(mshape, elem))
    batch = np.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2])
    rt = T(tuple(batch) + (qs[-2], vs[-1]), elem)
    attrs = []
    if causal:
        attrs.append("is_causal = true")
    if scale is not None:
        attrs.append("scale = %r : f64" % scale)
    s.check_op("kt.scaled_dot_product_attention", ins, [rt], attrs=", ".join(attrs),
               arg_types=types)


for qs, ks, vs in [((4, 8), (6, 8), (6, 5)), ((2, 4, 8), (2, 6, 8), (2, 6, 5)),
                   ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 3)), ((3, 1, 5, 4), (1, 2, 5, 4), (2, 5, 6)),
                   ((1, 1), (1, 1), (1, 1)), ((2, 7, 3), (2, 7, 3), (2, 7, 3))]:
    sdpa(qs, ks, vs)
    sdpa(qs, ks, vs, causal=True)
    sdpa(qs, ks, vs, scale=0.3)
    sdpa(qs, ks, vs, mask=((qs[-2], ks[-2]), "i1"))
    sdpa(qs, ks, vs, mask=((qs[-2], ks[-2]), "f32"))
    sdpa(qs, ks, vs, mask=((ks[-2],), "f32"), scale=1.5)
# a fully masked row gives NaN
q, k, v = s.randn(3, 4), s.randn(5, 4), s.randn(5, 2)
m = np.ones((3, 5), dtype=np.bool_); m[1, :] = False
s.check_op("kt.scaled_dot_product_attention", [q, k, v, m], [T((3, 2), "f32")],
           label="sdpa fully masked row")
for elem, dt in FLOATS:
    sdpa((2, 5, 8), (2, 6, 8), (2, 6, 3), causal=True, elem=elem, dt=dt)
    sdpa((2, 5, 8), (2, 6, 8), (2, 6, 3), mask=((5, 6), "f32"), elem=elem, dt=dt)
q, k, v = s.randn(2, 5, 4), s.randn(2, 6, 4), s.randn(2, 6, 3)
s.check_op("kt.scaled_dot_product_attention", [q, k, v], ["tensor<?x5x3xf32>"],
           attrs="is_causal = true", label="sdpa dynamic batch",
           arg_types=["tensor<?x5x4xf32>", "tensor<?x6x4xf32>", "tensor<?x6x3xf32>"])

s.finish()
