# RUN: %python %s
# REQUIRES: numpy, torch
# Fusion groups end to end: each graph runs
#  * through `kiln-run --backend=cpu` (kiln-cpu: kiln-fuse, lowering, one
#    scf.forall kernel per group), compared with the interpreter on the
#    unfused graph (CPUSuite: same tolerances as the other CPU tests) and
#    with PyTorch/NumPy in float64 (with OpenBLAS and generated matmuls: all
#    the graphs in one `kiln-run --batch` process per matmul option);
#  * through the interpreter after `kiln-opt -kiln-fuse` (the kt.fusion ops
#    run by their interpreter model), compared with PyTorch/NumPy;
# and the compiled IR is checked to hold the expected number of kernels.
# Sizes are odd (not multiples of the tiles: 16 rows, 1024 elements), with
# `?` dims, empty tensors and NaN/Inf inputs.
import os, shutil, subprocess, sys, tempfile, warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np
import torch
from cpu_compare import CPUSuite
from cpu_sweep import Case, _run_all
from kiln_testing import KilnRunError, run, ttype as T
from tool_server import tool_run  # noqa: E402

KILN_OPT = os.path.join(os.environ.get("KILN_TOOLS_DIR", ""), "kiln-opt")
s = CPUSuite(__file__)


def kiln_opt(mlir, *args):
    p = tool_run([KILN_OPT, "-", *args], input=mlir, capture_output=True, text=True)
    if p.returncode != 0:
        raise KilnRunError(p.returncode, p.stderr)
    return p.stdout


def close_to(got, want, rtol=1e-5, atol=1e-5):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False, "shape %s != %s" % (got.shape, want.shape)
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return False, "NaN positions differ"
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        i = tuple(np.argwhere(~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True))[0])
        return False, "first mismatch at %s: %r vs %r" % (i, got[i], want[i])
    return True, ""


def graph(label, mlir, inputs, refs, kernels=None, rtol=1e-5, atol=1e-5):
    """`refs`: the float64 PyTorch/NumPy results; `kernels`: how many
    `kiln.kernel` foralls the compiled IR must hold."""
    empty = any(np.asarray(x).size == 0 for x in inputs)
    if empty:
        kernels = None  # nothing to save: no group, or a kernel of no tile
    s.check(label, mlir, inputs)
    # CPU vs the independent reference: deferred to cpu_vs_torch().
    cpu_pending.append((label, mlir, inputs, refs, rtol, atol))
    # The fused kt IR in the interpreter.
    try:
        fused = kiln_opt(mlir, "-kiln-fuse")
        if not empty:
            s.record(label + " has kt.fusion", "kt.fusion" in fused, fused)
        got = run(fused, inputs)
        for i, (g, r) in enumerate(zip(got, refs)):
            ok, msg = close_to(g, r, rtol, atol)
            s.record("%s fused interpreter result%d" % (label, i), ok, msg)
    except KilnRunError as e:
        s.record(label + " fused interpreter", False, str(e))
    if kernels is not None:
        try:
            # matmul=generated: contractions join kernels only then (with
            # OpenBLAS they stay alone, see kiln-fuse-contractions.mlir).
            ir = kiln_opt(mlir, "--pass-pipeline=builtin.module("
                          "kiln-cpu{allow-partial fuse=true matmul=generated})")
            n = ir.count("kiln.kernel =")
            s.record("%s %d kernels" % (label, kernels), n == kernels,
                     "%d kiln.kernel foralls:\n%s" % (n, ir))
        except KilnRunError as e:
            s.record(label + " kernels", False, str(e))


cpu_pending = []


def cpu_vs_torch():
    """The graphs on the CPU backend (kiln-cpu with fusion, OpenBLAS or
    generated matmuls) vs their PyTorch/NumPy references: every graph in
    one `kiln-run --batch` process per option set (one compile of all the
    graphs, each its own function; cpu_sweep._run_all names a graph that
    fails to compile or crashes)."""
    cases = [Case(label, mlir, inputs, "main", None)
             for label, mlir, inputs, _, _, _ in cpu_pending]
    texts = {k: c.mlir for k, c in enumerate(cases)}
    for extra in (["--cpu-fuse"], ["--cpu-fuse", "--matmul=generated"]):
        tmp = tempfile.mkdtemp(prefix="kiln-fused-")
        try:
            out = _run_all(cases, texts, "cpu", tmp, "fused", extra)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for k, (label, _, _, refs, rtol, atol) in enumerate(cpu_pending):
            kind, got = out.get(k, ("error", "no outcome"))
            if kind != "ok":
                s.record("%s cpu %s vs torch" % (label, " ".join(extra)), False,
                         "%s: %s" % (kind, got))
                continue
            if len(got) != len(refs):
                s.record("%s cpu %s vs torch" % (label, " ".join(extra)), False,
                         "%d results, %d references" % (len(got), len(refs)))
            for i, (g, r) in enumerate(zip(got, refs)):
                ok, msg = close_to(g, r, rtol, atol)
                s.record("%s cpu %s vs torch result%d" % (label, " ".join(extra), i), ok, msg)


def fn(args, results, body):
    return "func.func @main(%s) -> (%s) {\n%s\n}\n" % (
        ", ".join("%%arg%d: %s" % (i, t) for i, t in enumerate(args)),
        ", ".join(results), body)


t64 = lambda x: torch.from_numpy(np.asarray(x, dtype=np.float64))

# -- a chain of 10 pointwise ops ------------------------------------------------
def chain(shape, argty=None, special=False):
    ty = argty or T(shape, "f32")
    x = s.randn(*shape, special=special)
    y = s.randn(*shape)
    body = "\n".join([
        "  %%0 = kt.add %%arg0, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%1 = kt.neg %%0 : (%s) -> %s" % (ty, ty),
        "  %%2 = kt.exp %%1 : (%s) -> %s" % (ty, ty),
        "  %%3 = kt.mul %%2, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%4 = kt.tanh %%3 : (%s) -> %s" % (ty, ty),
        "  %%5 = kt.sigmoid %%4 : (%s) -> %s" % (ty, ty),
        "  %%6 = kt.relu %%5 : (%s) -> %s" % (ty, ty),
        "  %%7 = kt.sin %%6 : (%s) -> %s" % (ty, ty),
        "  %%8 = kt.abs %%7 : (%s) -> %s" % (ty, ty),
        "  %%9 = kt.sub %%8, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  return %%9 : %s" % ty])
    X, Y = t64(x), t64(y)
    r = torch.abs(torch.sin(torch.relu(torch.sigmoid(torch.tanh(torch.exp(-(X + Y)) * Y))))) - X
    graph("chain %s %s%s" % (shape, ty, " special" if special else ""),
          fn([ty, ty], [ty], body), [x, y], [r.numpy()], kernels=1)


chain((37, 53))
chain((5000,))
chain((3, 17, 19))
chain((37, 53), "tensor<?x?xf32>")
chain((0, 5))
chain((64, 33), special=True)

# -- atan2 / fmod, and the integer bitwise ops, in one kernel ---------------------
def float_mix(shape, argty=None):
    ty = argty or T(shape, "f32")
    x, y = s.randn(*shape, special=True), s.randn(*shape)
    body = "\n".join([
        "  %%0 = kt.atan2 %%arg0, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%1 = kt.mul %%0, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%2 = kt.fmod %%1, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  return %%2 : %s" % ty])
    X, Y = t64(x), t64(y)
    r = torch.fmod(torch.atan2(X, Y) * X, Y)
    graph("atan2 fmod %s %s" % (shape, ty), fn([ty, ty], [ty], body), [x, y],
          [r.numpy()], kernels=1)


def int_mix(shape, argty=None):
    ty = argty or T(shape, "i64")
    bty = ty.replace("i64", "i1")
    a = s.randint(-1000, 1000, *shape)
    b = s.randint(-50, 50, *shape)
    b[b == 0] = -1
    body = "\n".join([
        "  %%0 = kt.bitwise_xor %%arg0, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%1 = kt.bitwise_not %%0 : (%s) -> %s" % (ty, ty),
        "  %%2 = kt.fmod %%1, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%3 = kt.bitwise_and %%2, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%4 = kt.bitwise_or %%3, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%5 = kt.logical_xor %%4, %%arg0 : (%s, %s) -> %s" % (ty, ty, bty),
        "  return %%5 : %s" % bty])
    A, B = torch.from_numpy(a), torch.from_numpy(b)
    r = torch.logical_xor(torch.fmod(~(A ^ B), B) & A | B, A)
    graph("bitwise fmod logical_xor %s %s" % (shape, ty), fn([ty, ty], [bty], body),
          [a, b], [r.numpy()], kernels=1)


float_mix((37, 53))
float_mix((3, 17, 19), "tensor<?x17x?xf32>")
float_mix((0, 5))
int_mix((37, 53))
int_mix((5000,), "tensor<?xi64>")

# -- scans between pointwise chains (a scan stays out of the fusion groups) ------
def scan_mix(op, shape, dim, ref):
    ty = T(shape, "f32")
    x = s.randn(*shape)
    body = "\n".join([
        "  %%0 = kt.tanh %%arg0 : (%s) -> %s" % (ty, ty),
        "  %%a = kt.neg %%0 : (%s) -> %s" % (ty, ty),
        "  %%1 = kt.%s %%a {dim = %d} : (%s) -> %s" % (op, dim, ty, ty),
        "  %%2 = kt.mul %%1, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%3 = kt.add %%2, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  return %%3 : %s" % ty])
    X = t64(x)
    graph("%s %s dim=%d" % (op, shape, dim), fn([ty], [ty], body), [x],
          [(ref(-torch.tanh(X), dim) * X + X).numpy()], kernels=2)


for _op, _ref in (("cumsum", torch.cumsum), ("cumprod", torch.cumprod),
                  ("logcumsumexp", torch.logcumsumexp)):
    scan_mix(_op, (37, 53), 1, _ref)
    scan_mix(_op, (5, 7, 3), 0, _ref)

# -- scatters between pointwise chains (kt.scatter stays out of the groups) -------
def scatter_mix(reduce, include_self, shape, ishape, dim):
    ty, it = T(shape, "f32"), T(ishape, "i64")
    x = s.randn(*shape)
    # Few distinct targets: many repeated indices accumulate.
    i = np.random.RandomState(7).randint(0, min(3, shape[dim]), ishape).astype(np.int64)
    attrs = "dim = %d : i64, reduce = #kt.scatter_reduce<%s>%s" % (
        dim, reduce, "" if include_self else ", include_self = false")
    body = "\n".join([
        "  %%0 = kt.tanh %%arg0 : (%s) -> %s" % (ty, ty),
        "  %%a = kt.neg %%0 : (%s) -> %s" % (ty, ty),
        "  %%1 = kt.scatter %%a, %%arg1, %%arg0 {%s} : (%s, %s, %s) -> %s" % (
            attrs, ty, it, ty, ty),
        "  %%2 = kt.mul %%1, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%3 = kt.add %%2, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  return %%3 : %s" % ty])
    X = t64(x)
    r = torch.scatter_reduce(-torch.tanh(X), dim, torch.from_numpy(i), X, reduce,
                             include_self=include_self)
    graph("scatter %s include_self=%s %s dim=%d" % (reduce, include_self, shape, dim),
          fn([ty, it], [ty], body), [x, i], [(r * X + X).numpy()], kernels=2)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # scatter_reduce is beta in PyTorch 1.13
    scatter_mix("sum", True, (37, 53), (30, 53), 0)
    scatter_mix("mean", False, (5, 7, 3), (5, 7, 3), -1)
    scatter_mix("amax", True, (37, 53), (37, 20), 1)

# -- sort between pointwise chains (kt.argsort stays out of the groups; the
# values are kt.gather at the permutation) -------------------------------------
def sort_mix(shape, dim, desc):
    ty, it = T(shape, "f32"), T(shape, "i64")
    x = s.randn(*shape)
    body = "\n".join([
        "  %%0 = kt.tanh %%arg0 : (%s) -> %s" % (ty, ty),
        "  %%a = kt.neg %%0 : (%s) -> %s" % (ty, ty),
        "  %%i = kt.argsort %%a {dim = %d, descending = %s} : (%s) -> %s" % (
            dim, "true" if desc else "false", ty, it),
        "  %%1 = kt.gather %%a, %%i {dim = %d} : (%s, %s) -> %s" % (dim, ty, it, ty),
        "  %%2 = kt.mul %%1, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%3 = kt.add %%2, %%arg0 : (%s, %s) -> %s" % (ty, ty, ty),
        "  return %%3, %%i : %s, %s" % (ty, it)])
    X = t64(x)
    v, i = torch.sort(-torch.tanh(X), dim=dim, descending=desc, stable=True)
    graph("sort %s dim=%d desc=%s" % (shape, dim, desc), fn([ty], [ty, it], body),
          [x], [(v * X + X).numpy(), i.numpy()], kernels=2)


sort_mix((37, 53), 1, False)
sort_mix((5, 7, 3), 0, True)

# -- softmax / log_softmax / layer_norm (composites) ------------------------------
for shape, dim, ty in [((37, 1000), 1, None), ((19, 7), 1, None), ((6, 33), 0, None),
                       ((3, 5, 9), -1, None), ((21, 13), 1, "tensor<?x13xf32>"),
                       ((0, 4), 1, None)]:
    ty = ty or T(shape, "f32")
    x = s.randn(*shape, special=(shape == (37, 1000))) * 3
    for op, ref in [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)]:
        body = ("  %%0 = kt.%s %%arg0 {dim = %d} : (%s) -> %s\n  return %%0 : %s"
                % (op, dim, ty, ty, ty))
        graph("%s %s dim=%d %s" % (op, shape, dim, ty), fn([ty], [ty], body), [x],
              [ref(t64(x), dim).numpy()], kernels=1)

for shape in [(19, 33), (4, 5, 6), (0, 8)]:
    ty = T(shape, "f32")
    n = shape[-1]
    wt = T((n,), "f32")
    x, w, b = s.randn(*shape) * 2 + 1, s.randn(n), s.randn(n)
    body = ("  %%0 = kt.layer_norm %%arg0 weight %%arg1 bias %%arg2 {normalized_shape = [%d]} : "
            "(%s, %s, %s) -> %s\n  return %%0 : %s" % (n, ty, wt, wt, ty, ty))
    r = torch.nn.functional.layer_norm(t64(x), (n,), t64(w), t64(b))
    graph("layer_norm %s" % (shape,), fn([ty, wt, wt], [ty], body), [x, w, b], [r.numpy()],
          kernels=1, rtol=1e-4, atol=1e-5)

# -- softmax written out with keepdim reductions (one group) --------------------
for shape in [(37, 29), (1, 5), (0, 3)]:
    ty, kt_ = T(shape, "f32"), T((shape[0], 1), "f32")
    x = s.randn(*shape, special=(shape == (37, 29)))
    body = "\n".join([
        "  %%0 = kt.amax %%arg0 {dim = [1], keepdim = true} : (%s) -> %s" % (ty, kt_),
        "  %%1 = kt.sub %%arg0, %%0 : (%s, %s) -> %s" % (ty, kt_, ty),
        "  %%2 = kt.exp %%1 : (%s) -> %s" % (ty, ty),
        "  %%3 = kt.sum %%2 {dim = [1], keepdim = true} : (%s) -> %s" % (ty, kt_),
        "  %%4 = kt.div %%2, %%3 : (%s, %s) -> %s" % (ty, kt_, ty),
        "  return %%4 : %s" % ty])
    graph("written-out softmax %s" % (shape,), fn([ty], [ty], body), [x],
          [torch.softmax(t64(x), 1).numpy()], kernels=1)

# -- reduction with prologue and epilogue ----------------------------------------
for shape, ty in [((37, 101), None), ((3, 2000), None), ((40, 7), "tensor<?x?xf32>")]:
    ty = ty or T(shape, "f32")
    rt = T((shape[0],), "f32") if "?" not in ty else "tensor<?xf32>"
    x, y = s.randn(*shape), s.randn(*shape)
    body = "\n".join([
        "  %c = kt.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>",
        "  %%0 = kt.mul %%arg0, %%arg1 : (%s, %s) -> %s" % (ty, ty, ty),
        "  %%1 = kt.mean %%0 {dim = [1]} : (%s) -> %s" % (ty, rt),
        "  %%2 = kt.mul %%1, %%c : (%s, tensor<f32>) -> %s" % (rt, rt),
        "  %%3 = kt.tanh %%2 : (%s) -> %s" % (rt, rt),
        "  return %%3 : %s" % rt])
    r = torch.tanh((t64(x) * t64(y)).mean(1) * 0.5)
    graph("mean prologue/epilogue %s %s" % (shape, ty), fn([ty, ty], [rt], body), [x, y],
          [r.numpy()], kernels=1)

# -- horizontal: two results from one read --------------------------------------
for shape in [(33, 45), (1025,)]:
    ty = T(shape, "f32")
    x = s.randn(*shape, special=True)
    body = ("  %%0 = kt.exp %%arg0 : (%s) -> %s\n  %%1 = kt.sin %%arg0 : (%s) -> %s\n"
            "  return %%0, %%1 : %s, %s" % (ty, ty, ty, ty, ty, ty))
    graph("horizontal %s" % (shape,), fn([ty], [ty, ty], body), [x],
          [np.exp(x.astype(np.float64)), np.sin(x.astype(np.float64))])

# -- results that fold to a group input (neg(neg(x)), an identity cast) ---------
for shape, ty in [((37, 21), None), ((9,), "tensor<?xf32>")]:
    ty = ty or T(shape, "f32")
    x = s.randn(*shape, special=True)
    body = "\n".join([
        "  %%0 = kt.neg %%arg0 : (%s) -> %s" % (ty, ty),
        "  %%1 = kt.neg %%0 : (%s) -> %s" % (ty, ty),
        "  %%2 = kt.cast %%1 {dtype = f32} : (%s) -> %s" % (ty, ty),
        "  %%3 = kt.exp %%2 : (%s) -> %s" % (ty, ty),
        "  return %%1, %%0, %%2, %%3 : %s, %s, %s, %s" % (ty, ty, ty, ty)])
    X = x.astype(np.float64)
    graph("folded results %s %s" % (shape, ty), fn([ty], [ty] * 4, body), [x],
          [X, -X, X, np.exp(X)])

# -- contraction + epilogue ------------------------------------------------------
for m, k, n, xty in [(19, 13, 29, None), (64, 32, 48, None), (7, 5, 3, "tensor<?x5xf32>"),
                     (0, 4, 6, None)]:
    xty = xty or T((m, k), "f32")
    wty, bty = T((n, k), "f32"), T((n,), "f32")
    oty = T((m, n), "f32") if "?" not in xty else "tensor<?x%dxf32>" % n
    x, w, b, res = s.randn(m, k), s.randn(n, k), s.randn(n), s.randn(m, n)
    body = "\n".join([
        "  %%0 = kt.linear %%arg0, %%arg1, %%arg2 : (%s, %s, %s) -> %s" % (xty, wty, bty, oty),
        "  %%1 = kt.gelu %%0 : (%s) -> %s" % (oty, oty),
        "  %%2 = kt.add %%1, %%arg3 : (%s, %s) -> %s" % (oty, oty, oty),
        "  return %%2 : %s" % oty])
    r = torch.nn.functional.gelu(torch.nn.functional.linear(t64(x), t64(w), t64(b))) + t64(res)
    graph("linear+gelu+residual %dx%dx%d %s" % (m, k, n, xty), fn([xty, wty, bty, oty], [oty], body),
          [x, w, b, res], [r.numpy()], kernels=1, rtol=1e-4, atol=1e-4)

# matmul with a relu prologue and a tanh epilogue.
for m, k, n in [(17, 9, 11), (33, 64, 5)]:
    xt, wt, ot = T((m, k), "f32"), T((k, n), "f32"), T((m, n), "f32")
    x, w = s.randn(m, k, special=True), s.randn(k, n)
    body = "\n".join([
        "  %%0 = kt.relu %%arg0 : (%s) -> %s" % (xt, xt),
        "  %%1 = kt.matmul %%0, %%arg1 : (%s, %s) -> %s" % (xt, wt, ot),
        "  %%2 = kt.tanh %%1 : (%s) -> %s" % (ot, ot),
        "  return %%2 : %s" % ot])
    X = torch.relu(t64(x))
    r = torch.tanh(X @ t64(w))
    graph("relu+matmul+tanh %dx%dx%d" % (m, k, n), fn([xt, wt], [ot], body), [x, w], [r.numpy()],
          kernels=1, rtol=1e-4, atol=1e-4)

cpu_vs_torch()
s.finish()
