# RUN: %python %s
# REQUIRES: numpy
# linalg.generics whose results have different indexing maps (a rank-0 sum
# next to a [C] sum of the same input, sums over different dims) or whose
# iterator types disagree with an output map (a dim marked "reduction" that
# an output keeps, a dim marked "parallel" that an output drops), through
# the CPU backend, against NumPy (float64 references). Loop semantics
# define these ops: out_i[map_i(p)] = f(ins(p), out_i[map_i(p)]) for every
# point p in order. kiln-cpu-tile-vectorize splits independent results
# into one generic each, with iterator types read off the output's map
# (docs/codegen.md "round 12"); results that read each other's accumulator
# stay whole and scalar. Before: invalid IR (vector.multi_reduction with a
# scalar destination for a vector<1x1xf32> source) or a race between the
# threads over a "parallel" dim that an output drops (a wrong sum).
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import numpy as np
from kiln_testing import run, KilnRunError, Suite, ttype as T

suite = Suite(__file__, seed=26)
rng = suite.rng
record = suite.record


def module(shape, iters, outs, elem, lines):
    """func @main(x, y) over `shape` -> one result per (kept dims, acc type,
    init) in `outs`; body `lines` over %a, %b (x, y) and %o0, %o1, ... (the
    accumulators) defines %v0, %v1, ..., yielded."""
    rank = len(shape)
    dims = ", ".join("d%d" % i for i in range(rank))
    idm = "affine_map<(%s) -> (%s)>" % (dims, dims)
    tx = T(shape, elem)
    touts = [T([shape[d] for d in keep], acc) for keep, acc, _ in outs]
    maps = [idm, idm] + ["affine_map<(%s) -> (%s)>" % (dims, ", ".join("d%d" % d for d in keep))
                         for keep, _, _ in outs]
    L = ["func.func @main(%%x: %s, %%y: %s) -> (%s) {" % (tx, tx, ", ".join(touts))]
    for k, (keep, acc, init) in enumerate(outs):
        L.append("  %%z%d = arith.constant %s : %s" % (k, init, acc))
        L.append("  %%e%d = tensor.empty() : %s" % (k, touts[k]))
        L.append("  %%f%d = linalg.fill ins(%%z%d : %s) outs(%%e%d : %s) -> %s"
                 % (k, k, acc, k, touts[k], touts[k]))
    n = len(outs)
    L.append("  %%r:%d = linalg.generic {indexing_maps = [%s], iterator_types = [%s]} "
             "ins(%%x, %%y : %s, %s) outs(%s : %s) {"
             % (n, ", ".join(maps), ", ".join('"%s"' % i for i in iters), tx, tx,
                ", ".join("%%f%d" % k for k in range(n)), ", ".join(touts)))
    L.append("  ^bb0(%%a: %s, %%b: %s, %s):" % (
        elem, elem, ", ".join("%%o%d: %s" % (k, acc) for k, (_, acc, _) in enumerate(outs))))
    L += ["    " + l for l in lines]
    L.append("    linalg.yield %s : %s" % (", ".join("%%v%d" % k for k in range(n)),
                                          ", ".join(acc for _, acc, _ in outs)))
    L.append("  } -> (%s)" % ", ".join(touts))
    L.append("  return %s : %s" % (", ".join("%%r#%d" % k for k in range(n)), ", ".join(touts)))
    L.append("}")
    return "\n".join(L) + "\n"


def check(label, shape, iters, outs, lines, want_fn, elem="f32", rtol=1e-5):
    dt = np.float32 if elem == "f32" else np.float64
    x = (rng.standard_normal(shape) * 3 + 1).astype(dt)
    y = rng.standard_normal(shape).astype(dt)
    mlir = module(shape, iters, outs, elem, lines)
    try:
        got = run(mlir, [x, y], extra_args=["--backend=cpu", "--cpu-threads=2"])
    except KilnRunError as e:
        record(label, False, "kiln-run failed: %s" % str(e)[-300:])
        return
    if not isinstance(got, (list, tuple)):
        got = [got]
    wants = want_fn(x.astype(np.float64), y.astype(np.float64))
    if len(got) != len(wants):
        record(label, False, "%d results, want %d" % (len(got), len(wants)))
        return
    for i, (g, (w, sc)) in enumerate(zip(got, wants)):
        g = np.asarray(g, dtype=np.float64)
        ok = g.shape == np.shape(w) and np.all(np.abs(g - w) <= rtol * sc + 1e-12)
        record("%s result%d" % (label, i), ok,
               "" if ok else "max err %g, got %s want %s" % (
                   np.max(np.abs(g - w)) if g.shape == np.shape(w) else -1,
                   np.ravel(g)[:4], np.ravel(w)[:4]))


def f32(a):
    """`a` rounded to f32 (a product the kernel computes in f32)."""
    return a.astype(np.float32).astype(np.float64)


def red(a, axes):
    """a summed over `axes` and the sum of |a| (the tolerance's scale)."""
    return a.sum(axis=axes), np.abs(a).sum(axis=axes)


SUM2 = ["%v0 = arith.addf %o0, %a : f32", "%v1 = arith.addf %o1, %a : f32"]
SUM_PROD = ["%v0 = arith.addf %o0, %a : f32", "%m = arith.mulf %a, %b : f32",
            "%v1 = arith.addf %o1, %m : f32"]
WIDE = ["%w = arith.extf %a : f32 to f64", "%v0 = arith.addf %o0, %w : f64",
        "%m = arith.mulf %a, %b : f32", "%w2 = arith.extf %m : f32 to f64",
        "%v1 = arith.addf %w2, %o1 : f64"]
SUM_MAX = ["%v0 = arith.addf %o0, %a : f32", "%v1 = arith.maximumf %o1, %b : f32"]
F32, F64, NINF = "f32", "f64", "0xFF800000"

for n, c in [(64, 32), (1, 1), (3, 17), (33, 5), (1000, 3), (7, 1000), (256, 64)]:
    s = (n, c)
    # rd25's form: a rank-0 sum next to a [C] sum, both dims "reduction".
    check("all+cols rr %dx%d" % s, s, ["reduction", "reduction"],
          [((), F32, "0.0"), ((1,), F32, "0.0")], SUM2,
          lambda x, y: [red(x, (0, 1)), red(x, 0)])
    # The same with d1 "parallel": the rank-0 output drops it (threads over
    # d1 raced on it).
    check("all+cols rp %dx%d" % s, s, ["reduction", "parallel"],
          [((), F32, "0.0"), ((1,), F32, "0.0")], SUM2,
          lambda x, y: [red(x, (0, 1)), red(x, 0)])
    # Row sums and column sums of one input in one generic.
    check("rows+cols %dx%d" % s, s, ["parallel", "reduction"],
          [((0,), F32, "0.0"), ((1,), F32, "0.0")], SUM_PROD,
          lambda x, y: [red(x, 1), red(f32(x * y), 0)])
    # A sum and a max with different maps.
    check("sum+max %dx%d" % s, s, ["parallel", "reduction"],
          [((0,), F32, "0.0"), ((), F32, NINF)], SUM_MAX,
          lambda x, y: [red(x, 1), (y.max(), np.abs(y).max())])
    # One result, its kept dim marked "reduction"; one result dropping a
    # "parallel" dim.
    check("one kept-reduction %dx%d" % s, s, ["reduction", "reduction"],
          [((1,), F32, "0.0")], ["%v0 = arith.addf %o0, %a : f32"],
          lambda x, y: [red(x, 0)])
    check("one dropped-parallel %dx%d" % s, s, ["parallel", "reduction"],
          [((), F32, "0.0")], ["%v0 = arith.addf %o0, %a : f32"],
          lambda x, y: [red(x, (0, 1))])

# batch_norm_backward-like [N, C, HW]: f32 terms into f64 (summed in f32
# blocks, hence the f32-level tolerance), a sum over all next to a
# per-channel sum, and per-(N, C) sums next to per-channel ones.
for s in [(8, 16, 3001), (3, 5, 17), (2, 7, 785), (1, 33, 1)]:
    check("wide all+ch %s" % (s,), s, ["reduction", "reduction", "reduction"],
          [((), F64, "0.0"), ((1,), F64, "0.0")], WIDE,
          lambda x, y: [red(x, (0, 1, 2)), red(f32(x * y), (0, 2))], rtol=1e-6)
    check("wide nc+ch %s" % (s,), s, ["parallel", "parallel", "reduction"],
          [((0, 1), F64, "0.0"), ((1,), F64, "0.0")], WIDE,
          lambda x, y: [red(x, 2), red(f32(x * y), (0, 2))], rtol=1e-6)
    check("f64 all+ch %s" % (s,), s, ["reduction", "parallel", "reduction"],
          [((), F64, "0.0"), ((1,), F64, "0.0")],
          [l.replace("f32", "f64") for l in SUM_PROD],
          lambda x, y: [red(x, (0, 1, 2)), red(x * y, (0, 2))], elem="f64", rtol=1e-12)


# Results that read each other's accumulator stay whole (loop semantics:
# o1[c] += o0 before o0's update, rows outer, columns inner).
def dependent(x, y):
    o0, o1 = 0.0, np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            o1[j] += o0
            o0 += x[i, j]
    return [(o0, np.abs(x).sum()), (o1, np.abs(x).sum() * x.size)]


for s in [(3, 5), (4, 1), (1, 6)]:
    check("dependent %dx%d" % s, s, ["reduction", "reduction"],
          [((), F32, "0.0"), ((1,), F32, "0.0")],
          ["%v0 = arith.addf %o0, %a : f32", "%v1 = arith.addf %o1, %o0 : f32"],
          dependent)

suite.finish()
