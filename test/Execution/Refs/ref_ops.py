# RUN: %python %s
# REQUIRES: numpy, torch
# Tests !kt.ref semantics in the interpreter through kiln-run against PyTorch
# in-place ops on views: writes through transpose/slice/select/permute/
# reshape/unsqueeze/squeeze views reach the base and every other alias,
# loads copy, alloc_ref makes a private buffer, in-place ops broadcast their
# operand, index_put_ (accumulate, duplicates, negative and broadcast
# indices), integer div_, and runtime errors (writes to an expanded view, a
# view_reshape the layout does not allow, a store of the wrong runtime shape).
# kiln-run writes the final contents of each ref argument as arg<i>.npy.

import os
import shutil
import subprocess
import tempfile

import numpy as np
import torch
from kiln_testing import KILN_RUN, Suite, close, ttype
from tool_server import tool_run  # noqa: E402

s = Suite(__file__)


def rtype(shape, elem):
    return "!kt.ref<%s>" % ttype(shape, elem)[len("tensor<"):-1]


def run_refs(mlir, inputs, extra=()):
    """Runs @main; returns (results, {arg index: final contents}) or raises
    RuntimeError with kiln-run's stderr."""
    tmp = tempfile.mkdtemp(prefix="kiln-refs-")
    try:
        path = os.path.join(tmp, "t.mlir")
        with open(path, "w") as f:
            f.write(mlir)
        out = os.path.join(tmp, "out")
        args = [KILN_RUN, path, "--output-dir=" + out]
        for i, x in enumerate(inputs):
            p = os.path.join(tmp, "in%d.npy" % i)
            np.save(p, np.array(x, order="C"))
            args.append("--input=" + p)
        args.extend(extra)
        proc = tool_run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        res, mutated = [], {}
        for name in sorted(os.listdir(out)):
            if name.startswith("result"):
                res.append((int(name[6:-4]), np.load(os.path.join(out, name))))
            elif name.startswith("arg"):
                mutated[int(name[3:-4])] = np.load(os.path.join(out, name))
        return [r for _, r in sorted(res)], mutated, proc.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check(label, args, body, results, inputs, torch_fn, rtol=1e-6, atol=1e-6):
    """`args`: list of (type text); `body`: lines; `results`: result types.
    `torch_fn(*torch tensors)` mutates its inputs in place and returns the
    expected results; each ref argument is compared with its final value."""
    a = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(args))
    res = "(" + ", ".join(results) + ")"
    ret = "  return" + (" " + ", ".join("%%r%d" % i for i in range(len(results)))
                        + " : " + ", ".join(results) if results else "")
    mlir = "func.func @main(%s) -> %s {\n%s\n%s\n}\n" % (
        a, res, "\n".join("  " + l for l in body), ret)
    for backend in ("interpreter", "cpu"):
        # The cpu backend compiles the function's value form (its refs
        # functionalized; the new values written back into the arguments).
        check_on(label if backend == "interpreter" else label + " (cpu)",
                 args, mlir, inputs, torch_fn, rtol, atol, backend)


def check_on(label, args, mlir, inputs, torch_fn, rtol, atol, backend):
    ts = [torch.from_numpy(np.array(x, order="C")) for x in inputs]
    expected = torch_fn(*ts)
    try:
        got, mutated, _ = run_refs(mlir, inputs, ["--backend=" + backend])
    except RuntimeError as e:
        s.record(label, False, str(e))
        return
    s.record(label + " result count", len(got) == len(expected),
             "%d vs %d" % (len(got), len(expected)))
    for i, (g, e) in enumerate(zip(got, expected)):
        ok, msg = close(g, e.numpy(), rtol, atol)
        s.record("%s result%d" % (label, i), ok, msg)
    for i, t in enumerate(args):
        if t.startswith("!kt.ref"):
            if i not in mutated:
                s.record("%s arg%d" % (label, i), False, "no arg%d.npy" % i)
                continue
            ok, msg = close(mutated[i], ts[i].numpy(), rtol, atol)
            s.record("%s arg%d" % (label, i), ok, msg)
        else:
            s.record("%s no arg%d.npy for a tensor" % (label, i),
                     i not in mutated)


def check_error(label, args, body, inputs, substring, extra=()):
    a = ", ".join("%%a%d: %s" % (i, t) for i, t in enumerate(args))
    mlir = "func.func @main(%s) {\n%s\n  return\n}\n" % (
        a, "\n".join("  " + l for l in body))
    try:
        run_refs(mlir, inputs, extra)
    except RuntimeError as e:
        s.record(label, substring in str(e),
                 "stderr lacks %r: %s" % (substring, e))
        return
    s.record(label, False, "expected an error mentioning %r" % substring)


# x.t()[1:3].add_(y): a write through a slice of a transpose, y broadcast.
for elem, npt in [("f32", np.float32), ("f64", np.float64)]:
    x = s.randn(3, 4, dtype=npt)
    y = s.randn(3, dtype=npt)

    def f(x, y):
        x.t()[1:3].add_(y)
        return []
    check("t-slice-add_ " + elem, [rtype([3, 4], elem), ttype([3], elem)], [
        "%%t = kt.view_transpose %%a0 {dim0 = 0, dim1 = 1} : (%s) -> %s" % (
            rtype([3, 4], elem), rtype([4, 3], elem)),
        "%%v = kt.view_slice %%t {dim = 0, start = 1, end = 3} : (%s) -> %s" % (
            rtype([4, 3], elem), rtype([2, 3], elem)),
        "kt.add_ %%v, %%a1 : (%s, %s) -> ()" % (rtype([2, 3], elem),
                                              ttype([3], elem)),
    ], [], [x, y], f)

# Aliases see each other's writes; a load is a copy (taken before the write).
x = s.randn(4, 6)
y = s.randn(6)


def f_alias(x, y):
    before = x[1].clone()
    x[1].mul_(y)          # through a select view
    row = x.view(24)[6:12]  # another alias of the same row
    return [before, row.clone()]
check("select-mul_ aliases", [rtype([4, 6], "f32"), ttype([6], "f32")], [
    "%s1 = kt.view_select %a0 {dim = 0, index = 1} : (!kt.ref<4x6xf32>) -> !kt.ref<6xf32>",
    "%r0 = kt.load %s1 : (!kt.ref<6xf32>) -> tensor<6xf32>",
    "kt.mul_ %s1, %a1 : (!kt.ref<6xf32>, tensor<6xf32>) -> ()",
    "%flat = kt.view_reshape %a0 {shape = [24]} : (!kt.ref<4x6xf32>) -> !kt.ref<24xf32>",
    "%row = kt.view_slice %flat {start = 6, end = 12} : (!kt.ref<24xf32>) -> !kt.ref<6xf32>",
    "%r1 = kt.load %row : (!kt.ref<6xf32>) -> tensor<6xf32>",
], ["tensor<6xf32>", "tensor<6xf32>"], [x, y], f_alias)

# permute + strided slice + sub_ with a broadcast operand; unsqueeze/squeeze.
x = s.randn(2, 3, 5)
y = s.randn(1, 2)


def f_perm(x, y):
    v = x.permute(2, 0, 1)[::2, :, 1]   # 3x2
    v.sub_(y)
    x.unsqueeze(0).squeeze(0)[1, 2].relu_()
    return []
check("permute-slice-sub_, unsqueeze-squeeze-relu_",
      [rtype([2, 3, 5], "f32"), ttype([1, 2], "f32")], [
    "%p = kt.view_permute %a0 {dims = [2, 0, 1]} : (!kt.ref<2x3x5xf32>) -> !kt.ref<5x2x3xf32>",
    "%q = kt.view_slice %p {dim = 0, step = 2} : (!kt.ref<5x2x3xf32>) -> !kt.ref<3x2x3xf32>",
    "%v = kt.view_select %q {dim = 2, index = 1} : (!kt.ref<3x2x3xf32>) -> !kt.ref<3x2xf32>",
    "kt.sub_ %v, %a1 : (!kt.ref<3x2xf32>, tensor<1x2xf32>) -> ()",
    "%u = kt.view_unsqueeze %a0 {dim = 0} : (!kt.ref<2x3x5xf32>) -> !kt.ref<1x2x3x5xf32>",
    "%w = kt.view_squeeze %u {dim = [0]} : (!kt.ref<1x2x3x5xf32>) -> !kt.ref<2x3x5xf32>",
    "%a = kt.view_select %w {dim = 0, index = 1} : (!kt.ref<2x3x5xf32>) -> !kt.ref<3x5xf32>",
    "%b = kt.view_select %a {dim = 0, index = 2} : (!kt.ref<3x5xf32>) -> !kt.ref<5xf32>",
    "kt.relu_ %b : (!kt.ref<5xf32>) -> ()",
], [], [x, y], f_perm)

# Slice assignment x[:, 1:4:2] = v (copy_), zero_, fill_ through views;
# reading an expanded view.
x = s.randn(3, 5)
v = s.randn(3, 1)
c = np.array(2.5, dtype=np.float32)


def f_assign(x, v, c):
    x[:, 1:4:2] = v
    x[2].zero_()
    x.t()[4].fill_(c)
    return [x[:, :1].expand(3, 4).clone()]
check("copy_/zero_/fill_, expand read",
      [rtype([3, 5], "f32"), ttype([3, 1], "f32"), ttype([], "f32")], [
    "%sl = kt.view_slice %a0 {dim = 1, start = 1, end = 4, step = 2} : (!kt.ref<3x5xf32>) -> !kt.ref<3x2xf32>",
    "kt.copy_ %sl, %a1 : (!kt.ref<3x2xf32>, tensor<3x1xf32>) -> ()",
    "%r2 = kt.view_select %a0 {dim = 0, index = 2} : (!kt.ref<3x5xf32>) -> !kt.ref<5xf32>",
    "kt.zero_ %r2 : (!kt.ref<5xf32>) -> ()",
    "%t = kt.view_transpose %a0 {dim0 = 0, dim1 = 1} : (!kt.ref<3x5xf32>) -> !kt.ref<5x3xf32>",
    "%c4 = kt.view_select %t {dim = 0, index = 4} : (!kt.ref<5x3xf32>) -> !kt.ref<3xf32>",
    "kt.fill_ %c4, %a2 : (!kt.ref<3xf32>, tensor<f32>) -> ()",
    "%c0 = kt.view_slice %a0 {dim = 1, end = 1} : (!kt.ref<3x5xf32>) -> !kt.ref<3x1xf32>",
    "%e = kt.view_expand %c0 {size = [3, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<3x4xf32>",
    "%r0 = kt.load %e : (!kt.ref<3x4xf32>) -> tensor<3x4xf32>",
], ["tensor<3x4xf32>"], [x, v, c], f_assign)

# Integer in-place ops: floor div_, mul_ wrap, i32.
for elem, npt in [("i64", np.int64), ("i32", np.int32)]:
    x = s.randint(-50, 50, 4, 3, dtype=npt)
    d = s.randint(1, 7, 3, dtype=npt) * np.where(s.randint(0, 2, 3) > 0, 1, -1).astype(npt)

    def f_int(x, d):
        x[1:].div_(d, rounding_mode="floor")
        x[0].mul_(d)
        return []
    check("int div_ floor/mul_ " + elem, [rtype([4, 3], elem), ttype([3], elem)], [
        "%%v = kt.view_slice %%a0 {start = 1} : (%s) -> %s" % (rtype([4, 3], elem), rtype([3, 3], elem)),
        "kt.div_ %%v, %%a1 {rounding_mode = #kt.rounding_mode<floor>} : (%s, %s) -> ()" % (rtype([3, 3], elem), ttype([3], elem)),
        "%%w = kt.view_select %%a0 {dim = 0, index = 0} : (%s) -> %s" % (rtype([4, 3], elem), rtype([3], elem)),
        "kt.mul_ %%w, %%a1 : (%s, %s) -> ()" % (rtype([3], elem), ttype([3], elem)),
    ], [], [x, d], f_int)

# index_put_: accumulate with duplicate and negative indices; two broadcast
# index tensors; a write through a transposed view.
x = s.randn(5, 3)
i = np.array([0, -1, 0, 2], dtype=np.int64)
vals = s.randn(4, 3)


def f_ip(x, i, vals):
    x.index_put_((i,), vals, accumulate=True)
    return []
check("index_put_ accumulate", [rtype([5, 3], "f32"), ttype([4], "i64"), ttype([4, 3], "f32")], [
    "kt.index_put_ %a0, %a1, %a2 {accumulate = true} : (!kt.ref<5x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> ()",
], [], [x, i, vals], f_ip)

x = s.randn(4, 5)
rows = np.array([[0], [3]], dtype=np.int64)
cols = np.array([1, -2, 4], dtype=np.int32)
vals = s.randn(3)


def f_ip2_ref(x, rows, cols, vals):
    x.index_put_((rows, cols.long()), vals)
    return []
check("index_put_ broadcast indices", [rtype([4, 5], "f32"), ttype([2, 1], "i64"), ttype([3], "i32"), ttype([3], "f32")], [
    "kt.index_put_ %a0, %a1, %a2, %a3 : (!kt.ref<4x5xf32>, tensor<2x1xi64>, tensor<3xi32>, tensor<3xf32>) -> ()",
], [], [x, rows, cols, vals], f_ip2_ref)

x = s.randn(3, 4)
i = np.array([1, 3], dtype=np.int64)
vals = s.randn(2, 3)


def f_ip3(x, i, vals):
    x.t().index_put_((i,), vals)
    return []
check("index_put_ through a transpose", [rtype([3, 4], "f32"), ttype([2], "i64"), ttype([2, 3], "f32")], [
    "%t = kt.view_transpose %a0 {dim0 = 0, dim1 = 1} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>",
    "kt.index_put_ %t, %a1, %a2 : (!kt.ref<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> ()",
], [], [x, i, vals], f_ip3)

# Two index tensors over a 3-D ref with accumulate: repeated positions add,
# the values broadcast over the last dim.
x = s.randn(4, 3, 2)
rows = np.array([[0, -1], [0, 3]], dtype=np.int64)
cols = np.array([2, 2], dtype=np.int64)
vals = s.randn(2, 1, 2)


def f_ip4(x, rows, cols, vals):
    x.index_put_((rows, cols), vals, accumulate=True)
    return []
check("index_put_ accumulate two indices", [rtype([4, 3, 2], "f32"), ttype([2, 2], "i64"), ttype([2], "i64"), ttype([2, 1, 2], "f32")], [
    "kt.index_put_ %a0, %a1, %a2, %a3 {accumulate = true} : (!kt.ref<4x3x2xf32>, tensor<2x2xi64>, tensor<2xi64>, tensor<2x1x2xf32>) -> ()",
], [], [x, rows, cols, vals], f_ip4)

# alloc_ref: a private copy; the tensor argument is not written.
x = s.randn(2, 3)
y = s.randn(2, 3)


def f_alloc(x, y):
    b = x.clone()
    b.add_(y)
    b[0].relu_()
    return [b.clone(), x.clone()]
check("alloc_ref private buffer", [ttype([2, 3], "f32"), ttype([2, 3], "f32")], [
    "%b = kt.alloc_ref %a0 : (tensor<2x3xf32>) -> !kt.ref<2x3xf32>",
    "kt.add_ %b, %a1 : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()",
    "%b0 = kt.view_select %b {dim = 0, index = 0} : (!kt.ref<2x3xf32>) -> !kt.ref<3xf32>",
    "kt.relu_ %b0 : (!kt.ref<3xf32>) -> ()",
    "%r0 = kt.load %b : (!kt.ref<2x3xf32>) -> tensor<2x3xf32>",
    "kt.add_ %b, %a1 : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()",
    "%r1 = kt.add %a0, %a0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
], ["tensor<2x3xf32>", "tensor<2x3xf32>"], [x, y],
    lambda x, y: (lambda b: [b, x + x])(
        torch.cat([torch.relu(x[:1] + y[:1]), x[1:] + y[1:]])))

# Store through a dynamic ref.
x = s.randn(5, 2)
v = s.randn(5, 2)


def f_store(x, v):
    x.copy_(v)
    return []
check("store dynamic", [rtype([None, 2], "f32"), ttype([None, 2], "f32")], [
    "kt.store %a1, %a0 : (tensor<?x2xf32>, !kt.ref<?x2xf32>) -> ()",
], [], [x, v], f_store)

# In-place ops on an empty ref: a [2, 0] tensor's dim 0 has stride 0, which
# makes no expanded view (no element at all). Found by kiln-fuzz-gen (gen28,
# --zero-dims seed 353): the interpreter refused the add_ as a write to an
# expanded view, where PyTorch and the cpu backend do nothing.
def f_empty(x, v):
    x.add_(v)
    x.mul_(v)
    return []
check("in-place ops on an empty ref", [rtype([2, 0], "i64"), ttype([], "i64")], [
    "kt.add_ %a0, %a1 : (!kt.ref<2x0xi64>, tensor<i64>) -> ()",
    "kt.mul_ %a0, %a1 : (!kt.ref<2x0xi64>, tensor<i64>) -> ()",
], [], [np.zeros((2, 0), np.int64), np.array(3, np.int64)], f_empty)

# Runtime errors.
check_error("write to an expanded view", [rtype([3, 1], "f32"), ttype([], "f32")], [
    "%e = kt.view_expand %a0 {size = [3, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<3x4xf32>",
    "kt.add_ %e, %a1 : (!kt.ref<3x4xf32>, tensor<f32>) -> ()",
], [s.randn(3, 1), np.array(1.0, dtype=np.float32)],
    "more than one element of the written-to ref refers to a single memory location")
check_error("view_reshape of a transpose", [rtype([2, 3], "f32")], [
    "%t = kt.view_transpose %a0 {dim0 = 0, dim1 = 1} : (!kt.ref<2x3xf32>) -> !kt.ref<3x2xf32>",
    "%v = kt.view_reshape %t {shape = [6]} : (!kt.ref<3x2xf32>) -> !kt.ref<6xf32>",
], [s.randn(2, 3)], "view size [6] is not compatible with the ref's size [3, 2]")
check_error("view_reshape to a size that does not divide", [rtype([None, 3], "f32")], [
    "%v = kt.view_reshape %a0 {shape = [-1, 2]} : (!kt.ref<?x3xf32>) -> !kt.ref<?x2xf32>",
], [s.randn(5, 3)],
    "cannot view a ref of shape [5, 3] (15 elements) as shape [-1, 2]: 15 is not divisible by 2")
check_error("view_reshape to another element count", [rtype([None, 3], "f32")], [
    "%v = kt.view_reshape %a0 {shape = [4, 4]} : (!kt.ref<?x3xf32>) -> !kt.ref<4x4xf32>",
], [s.randn(5, 3)], "cannot view a ref of shape [5, 3] (15 elements) as shape [4, 4]")
check_error("view_squeeze of a ? dim of size 1", [rtype([None, 1, 3], "f32")], [
    "%v = kt.view_squeeze %a0 {dim = [0]} : (!kt.ref<?x1x3xf32>) -> !kt.ref<?x1x3xf32>",
], [s.randn(1, 1, 3)],
    "dynamic dim 0 has size 1 at run time; kt.view_squeeze keeps `?` dims in its "
    "result type, so it cannot squeeze it as PyTorch would (make the dim static "
    "or use kt.view_reshape)")
check_error("store of the wrong runtime shape", [rtype([None], "f32"), ttype([None], "f32")], [
    "kt.store %a1, %a0 : (tensor<?xf32>, !kt.ref<?xf32>) -> ()",
], [s.randn(3), s.randn(4)], "value of shape [4] stored into a ref of shape [3]")
for extra in ([], ["--backend=cpu"]):
    check_error("index_put_ out of range " + " ".join(extra), [rtype([3], "f32"), ttype([1], "i64"), ttype([], "f32")], [
        "kt.index_put_ %a0, %a1, %a2 : (!kt.ref<3xf32>, tensor<1xi64>, tensor<f32>) -> ()",
    ], [s.randn(3), np.array([3]), np.array(1.0, dtype=np.float32)],
        "index 3 is out of bounds for dim 0 with size 3", extra)
    check_error("index_put_ below -size " + " ".join(extra), [rtype([3], "f32"), ttype([1], "i64"), ttype([], "f32")], [
        "kt.index_put_ %a0, %a1, %a2 : (!kt.ref<3xf32>, tensor<1xi64>, tensor<f32>) -> ()",
    ], [s.randn(3), np.array([-4]), np.array(1.0, dtype=np.float32)],
        "is out of bounds for dim 0 with size 3", extra)
# Two index tensors: each is checked against its own dim (the linear index
# 0 * 4 + 5 would be in range of the 3 x 4 tensor).
check_error("index_put_ second index out of range (cpu)", [rtype([3, 4], "f32"), ttype([1], "i64"), ttype([1], "i64"), ttype([], "f32")], [
    "kt.index_put_ %a0, %a1, %a2, %a3 {accumulate = true} : (!kt.ref<3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<f32>) -> ()",
], [s.randn(3, 4), np.array([0]), np.array([5]), np.array(1.0, dtype=np.float32)],
    "index 5 is out of range for dim 1 with size 4", ["--backend=cpu"])

# --print shows the mutated argument after the results.
_, _, out = run_refs(
    "func.func @main(%a: !kt.ref<2xf32>) -> tensor<2xf32> {\n"
    "  %v = kt.load %a : (!kt.ref<2xf32>) -> tensor<2xf32>\n"
    "  kt.zero_ %a : (!kt.ref<2xf32>) -> ()\n"
    "  return %v : tensor<2xf32>\n}\n", [np.array([1.0, 2.0], np.float32)],
    extra=["--print"])
s.record("--print arg0 (mutated)", "result0" in out and
         "arg0 (mutated): !kt.ref<2xf32>" in out and
         out.index("result0") < out.index("arg0 (mutated)"), out)

s.finish()
