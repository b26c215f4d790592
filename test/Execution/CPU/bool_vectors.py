# RUN: %python %s
# REQUIRES: numpy
# Bool (i1) tensors in vectorized CPU kernels, compared with NumPy. A bool is
# one byte in memory; kiln-cpu-lower-vectors reads and writes vectors of i1
# as bytes (kiln::cpu::populateByteBoolTransferPatterns), so kernels with i1
# operands or results are vectorized like the others (they were scalar: a
# masked softmax with a [1, T, T] causal mask ran 5x slower than without the
# mask). Odd sizes give masked tails, broadcasts and transposed masks give
# strided reads, reductions over i1 keep their accumulators across loops
# (the byte views must not hide the loop-carried dependency from the
# transfer hoisting), 1 and 2 threads, fused and unfused.
import numpy as np
from kiln_testing import KilnRunError, Suite, run

s = Suite(__file__)

TYPES = {np.dtype(np.float32): "f32", np.dtype(np.bool_): "i1",
         np.dtype(np.int64): "i64"}


def ty(shape, dtype):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), TYPES[np.dtype(dtype)]) \
        if shape else "tensor<%s>" % TYPES[np.dtype(dtype)]


def cpu_case(label, mlir, inputs, refs):
    for extra in (["--cpu-threads=1"], ["--cpu-threads=2"],
                  ["--cpu-threads=2", "--cpu-fuse=false"]):
        tag = "%s %s" % (label, " ".join(extra))
        try:
            got = run(mlir, inputs, extra_args=["--backend=cpu", *extra])
        except KilnRunError as e:
            s.record(tag, False, str(e))
            continue
        s.record(tag + " result count", len(got) == len(refs),
                 "%d results" % len(got))
        for i, (g, r) in enumerate(zip(got, refs)):
            g, r = np.asarray(g), np.asarray(r)
            if g.shape != r.shape or g.dtype != r.dtype:
                s.record("%s result%d" % (tag, i), False,
                         "got %s %s, expected %s %s" % (g.dtype, g.shape, r.dtype, r.shape))
                continue
            if r.dtype == np.bool_:
                bad = np.argwhere(g != r)
                s.record("%s result%d" % (tag, i), bad.size == 0,
                         "%d mismatches, first at %s" % (len(bad), bad[:1].tolist()))
            else:
                ok = np.allclose(g, r, rtol=1e-5, atol=1e-6, equal_nan=True)
                s.record("%s result%d" % (tag, i), ok,
                         "max diff %g" % np.nanmax(np.abs(g.astype(np.float64) - r)))


def softmax(x):
    m = x.max(-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(-1, keepdims=True)


# GPT-2's masked attention softmax: scale, masked_fill(-inf) from a
# broadcast [1, T, T] causal mask, softmax over the last dim.
for b, t in ((3, 37), (2, 64), (1, 5)):
    x = s.randn(b, t, t)
    mask = np.triu(np.ones((t, t), np.bool_), 1)[None]
    mlir = """
func.func @main(%x: {X}, %m: {M}) -> {X} {{
  %s = kt.full {{dtype = f32, size = [], value = 0.25 : f64}} : () -> tensor<f32>
  %ninf = kt.full {{dtype = f32, size = [], value = 0xFFF0000000000000 : f64}} : () -> tensor<f32>
  %0 = kt.mul %x, %s : ({X}, tensor<f32>) -> {X}
  %1 = kt.where %m, %ninf, %0 : ({M}, tensor<f32>, {X}) -> {X}
  %2 = kt.softmax %1 {{dim = 2 : i64}} : ({X}) -> {X}
  return %2 : {X}
}}""".format(X=ty((b, t, t), np.float32), M=ty((1, t, t), np.bool_))
    ref = softmax(np.where(mask, -np.inf, x * np.float32(0.25))).astype(np.float32)
    cpu_case("masked softmax %dx%dx%d" % (b, t, t), mlir, [x, mask], [ref])

# Comparisons and logical ops with i1 results and broadcast i1 operands.
for shape_a, shape_b in (((5, 1, 19), (1, 7, 19)), ((33, 17), (33, 17)),
                         ((1000, 130), (130,))):
    a, c = s.randn(*shape_a), s.randn(*shape_b)
    p = s.randn(*shape_a) > 0
    q = s.randn(*shape_b) > 0.3
    out = np.broadcast_shapes(shape_a, shape_b)
    mlir = """
func.func @main(%a: {A}, %c: {B}, %p: {P}, %q: {Q}) -> ({O}, {O}, {O}, {O}, {PA}, {O}) {{
  %0 = kt.lt %a, %c : ({A}, {B}) -> {O}
  %1 = kt.logical_and %p, %q : ({P}, {Q}) -> {O}
  %2 = kt.logical_or %0, %q : ({O}, {Q}) -> {O}
  %3 = kt.logical_xor %1, %2 : ({O}, {O}) -> {O}
  %4 = kt.logical_not %p : ({P}) -> {PA}
  %5 = kt.eq %p, %q : ({P}, {Q}) -> {O}
  return %0, %1, %2, %3, %4, %5 : {O}, {O}, {O}, {O}, {PA}, {O}
}}""".format(A=ty(shape_a, np.float32), B=ty(shape_b, np.float32),
             P=ty(shape_a, np.bool_), Q=ty(shape_b, np.bool_),
             PA=ty(shape_a, np.bool_), O=ty(out, np.bool_))
    lt = a < c
    land = p & q
    lor = lt | q
    cpu_case("logical %s %s" % (shape_a, shape_b), mlir, [a, c, p, q],
             [lt, land, lor, land ^ lor, ~p, p == q])

# A transposed (strided) mask, a cast each way, a where on i1 values.
p = s.randn(23, 41) > 0
x = s.randn(41, 23)
mlir = """
func.func @main(%p: {P}, %x: {X}) -> ({X}, {X}, {XB}, {XB}) {{
  %t = kt.transpose %p {{dim0 = 0 : i64, dim1 = 1 : i64}} : ({P}) -> {XB}
  %0 = kt.where %t, %x, %x : ({XB}, {X}, {X}) -> {X}
  %z = kt.full {{dtype = f32, size = [], value = 0.0 : f64}} : () -> tensor<f32>
  %1 = kt.where %t, %x, %z : ({XB}, {X}, tensor<f32>) -> {X}
  %2 = kt.cast %x {{dtype = i1}} : ({X}) -> {XB}
  %f = kt.cast %t {{dtype = f32}} : ({XB}) -> {X}
  %3 = kt.where %t, %2, %t : ({XB}, {XB}, {XB}) -> {XB}
  return %1, %f, %2, %3 : {X}, {X}, {XB}, {XB}
}}""".format(P=ty((23, 41), np.bool_), X=ty((41, 23), np.float32),
             XB=ty((41, 23), np.bool_))
pt = p.T
cpu_case("transposed mask, casts", mlir, [p, x],
         [np.where(pt, x, 0).astype(np.float32), pt.astype(np.float32), x != 0,
          np.where(pt, x != 0, pt)])

# any / all over i1 inputs, inner, outer and all dims (the accumulator is
# read and written in the reduction loop).
for shape in ((3, 5), (67, 130), (4, 9, 33)):
    p = s.randn(*shape) > 1.2
    r = len(shape)
    inner, outer = ty(shape[:-1], np.bool_), ty(shape[1:], np.bool_)
    mlir = """
func.func @main(%p: {P}) -> ({I}, {O}, tensor<i1>, {I}, {O}) {{
  %0 = kt.any %p {{dim = [{last}]}} : ({P}) -> {I}
  %1 = kt.any %p {{dim = [0]}} : ({P}) -> {O}
  %2 = kt.all %p : ({P}) -> tensor<i1>
  %3 = kt.all %p {{dim = [{last}]}} : ({P}) -> {I}
  %n = kt.logical_not %p : ({P}) -> {P}
  %4 = kt.all %n {{dim = [0]}} : ({P}) -> {O}
  return %0, %1, %2, %3, %4 : {I}, {O}, tensor<i1>, {I}, {O}
}}""".format(P=ty(shape, np.bool_), I=inner, O=outer, last=r - 1)
    cpu_case("any/all %s" % (shape,), mlir, [p],
             [p.any(-1), p.any(0), np.array(p.all()), p.all(-1), (~p).all(0)])

s.finish()
