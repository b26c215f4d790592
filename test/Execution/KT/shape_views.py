# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the view-like shape ops (reshape, transpose, permute, expand, squeeze,
# unsqueeze, slice, select, flip) against PyTorch through kiln-run: every
# dtype, rank 0, zero-size dims, negative dims, Python slice clamping, dynamic
# (`?`) dims and runtime errors.

import numpy as np
import torch
from kiln_testing import Suite, ttype, to_bf16, func_text

s = Suite(__file__, cpu=True)

DTYPES = ["f32", "f64", "f16", "bf16", "i64", "i32", "i1"]


def make(shape, elem):
    """Random data of `shape` for MLIR element type `elem` (bf16 as float32)."""
    if elem in ("f32", "f64", "f16"):
        return s.randn(*shape, dtype={"f32": np.float32, "f64": np.float64,
                                      "f16": np.float16}[elem])
    if elem == "bf16":
        return to_bf16(s.randn(*shape))
    if elem == "i1":
        return s.randint(0, 2, *shape).astype(np.bool_)
    return s.randint(-100, 100, *shape,
                     dtype=np.int64 if elem == "i64" else np.int32)


def ref(fn, *xs):
    out = fn(*[torch.from_numpy(np.array(x)) for x in xs])
    return out.contiguous().numpy()


def check(op, x, elem, attrs, fn, arg_shape=None, res_shape=None, label=None):
    """Runs `op` on x (typed `elem`, argument shape `arg_shape` with None for
    `?`), compares with torch `fn`."""
    expected = ref(fn, x)
    arg_t = ttype(arg_shape if arg_shape is not None else x.shape, elem)
    res_t = ttype(res_shape if res_shape is not None else expected.shape, elem)
    attr = (" {" + attrs + "}") if attrs else ""
    body = ["%%r = %s %%arg0%s : (%s) -> %s" % (op, attr, arg_t, res_t),
            "return %%r : %s" % res_t]
    mlir = func_text("main", [arg_t], [res_t], body)
    s.check(label or "%s {%s} %s %s %s" % (op, attrs, elem, x.shape, arg_t),
            mlir, [x], expected, elem=elem)


def check_err(op, x, elem, attrs, arg_shape, res_shape, substring):
    arg_t = ttype(arg_shape, elem)
    res_t = ttype(res_shape, elem)
    mlir = func_text("main", [arg_t], [res_t], [
        "%%r = %s %%arg0 {%s} : (%s) -> %s" % (op, attrs, arg_t, res_t),
        "return %%r : %s" % res_t])
    s.check_error("%s {%s} error %s" % (op, attrs, x.shape), mlir, [x],
                  substring)


# ---- reshape ----------------------------------------------------------------
for elem in DTYPES:
    x = make((2, 3, 4), elem)
    check("kt.reshape", x, elem, "shape = [4, -1]", lambda t: t.reshape(4, -1))
x = make((2, 3, 4), "f32")
check("kt.reshape", x, "f32", "shape = [-1]", lambda t: t.reshape(-1))
check("kt.reshape", x, "f32", "shape = [3, 2, 2, 2]", lambda t: t.reshape(3, 2, 2, 2))
check("kt.reshape", make((1, 1), "i64"), "i64", "shape = []", lambda t: t.reshape(()))
check("kt.reshape", make((), "f64"), "f64", "shape = [1, 1, -1]", lambda t: t.reshape(1, 1, -1))
check("kt.reshape", make((3, 0), "f32"), "f32", "shape = [0, 7]", lambda t: t.reshape(0, 7))
check("kt.reshape", make((3, 0), "f32"), "f32", "shape = [-1, 3]", lambda t: t.reshape(-1, 3))
# dynamic input: -1 computed at run time
check("kt.reshape", make((6, 4), "f32"), "f32", "shape = [-1, 8]",
      lambda t: t.reshape(-1, 8), arg_shape=(None, 4), res_shape=(None, 8))
check("kt.reshape", make((5, 2), "i32"), "i32", "shape = [2, 5]",
      lambda t: t.reshape(2, 5), arg_shape=(None, None))
check_err("kt.reshape", make((5, 3), "f32"), "f32", "shape = [-1, 2]",
          (None, 3), (None, 2), "not divisible")
check_err("kt.reshape", make((5, 3), "f32"), "f32", "shape = [4, 4]",
          (None, 3), (4, 4), "cannot reshape")

# ---- transpose / permute ----------------------------------------------------
for elem in DTYPES:
    x = make((2, 3, 4), elem)
    check("kt.transpose", x, elem, "dim0 = 0, dim1 = -1", lambda t: t.transpose(0, -1))
    check("kt.permute", x, elem, "dims = [1, -1, 0]", lambda t: t.permute(1, -1, 0))
x = make((2, 3, 4, 5), "f32")
check("kt.transpose", x, "f32", "dim0 = 2, dim1 = 1", lambda t: t.transpose(2, 1))
check("kt.transpose", x, "f32", "dim0 = 1, dim1 = 1", lambda t: t.transpose(1, 1))
check("kt.transpose", make((), "f32"), "f32", "dim0 = 0, dim1 = -1", lambda t: t.transpose(0, -1))
check("kt.transpose", make((0, 3), "f32"), "f32", "dim0 = 0, dim1 = 1", lambda t: t.transpose(0, 1))
check("kt.transpose", make((3, 5), "f32"), "f32", "dim0 = 0, dim1 = 1",
      lambda t: t.transpose(0, 1), arg_shape=(None, None), res_shape=(None, None))
check("kt.permute", x, "f32", "dims = [3, 1, 0, 2]", lambda t: t.permute(3, 1, 0, 2))
check("kt.permute", make((), "i64"), "i64", "dims = []", lambda t: t.permute(()))
check("kt.permute", make((2, 0, 3), "f64"), "f64", "dims = [2, 0, 1]", lambda t: t.permute(2, 0, 1))
check("kt.permute", make((4, 3, 2), "i32"), "i32", "dims = [2, 0, 1]",
      lambda t: t.permute(2, 0, 1), arg_shape=(None, 3, None), res_shape=(None, None, 3))

# ---- expand -----------------------------------------------------------------
for elem in DTYPES:
    x = make((3, 1), elem)
    check("kt.expand", x, elem, "size = [2, -1, 4]", lambda t: t.expand(2, -1, 4))
check("kt.expand", make((), "f32"), "f32", "size = [2, 3]", lambda t: t.expand(2, 3))
check("kt.expand", make((1, 3), "f32"), "f32", "size = [0, 3]", lambda t: t.expand(0, 3))
check("kt.expand", make((2, 3), "f32"), "f32", "size = [2, 3]", lambda t: t.expand(2, 3))
check("kt.expand", make((1, 0), "f32"), "f32", "size = [4, 0]", lambda t: t.expand(4, 0))
check("kt.expand", make((1, 3), "i64"), "i64", "size = [5, -1]",
      lambda t: t.expand(5, -1), arg_shape=(None, 3), res_shape=(5, 3))
check("kt.expand", make((5, 3), "i64"), "i64", "size = [5, -1]",
      lambda t: t.expand(5, -1), arg_shape=(None, 3), res_shape=(5, 3))
check_err("kt.expand", make((2, 3), "f32"), "f32", "size = [5, 3]", (None, 3),
          (5, 3), "cannot be expanded")

# ---- squeeze / unsqueeze ----------------------------------------------------
for elem in DTYPES:
    x = make((1, 3, 1, 2), elem)
    check("kt.squeeze", x, elem, "", lambda t: t.squeeze())
    check("kt.unsqueeze", x, elem, "dim = -1", lambda t: t.unsqueeze(-1))
x = make((1, 3, 1, 2), "f32")
check("kt.squeeze", x, "f32", "dim = [0]", lambda t: t.squeeze(0))
check("kt.squeeze", x, "f32", "dim = [1]", lambda t: t.squeeze(1))  # no-op
check("kt.squeeze", x, "f32", "dim = [-2, 0]", lambda t: t.squeeze(-2).squeeze(0))
check("kt.squeeze", make((), "f32"), "f32", "", lambda t: t.squeeze())
check("kt.squeeze", make((), "f32"), "f32", "dim = [0]", lambda t: t.squeeze(0))
check("kt.squeeze", make((1, 0, 1), "f32"), "f32", "", lambda t: t.squeeze())
check("kt.squeeze", make((4, 1, 3), "f32"), "f32", "",
      lambda t: t.squeeze(), arg_shape=(None, 1, 3), res_shape=(None, 3))
check_err("kt.squeeze", make((1, 1, 3), "f32"), "f32", "dim = [0]",
          (None, 1, 3), (None, 1, 3), "dynamic dim 0 has size 1")
check("kt.unsqueeze", make((), "f32"), "f32", "dim = 0", lambda t: t.unsqueeze(0))
check("kt.unsqueeze", make((), "f32"), "f32", "dim = -1", lambda t: t.unsqueeze(-1))
check("kt.unsqueeze", make((2, 3), "f32"), "f32", "dim = 1", lambda t: t.unsqueeze(1))
check("kt.unsqueeze", make((2, 3), "f32"), "f32", "dim = -3", lambda t: t.unsqueeze(-3))
check("kt.unsqueeze", make((2, 3), "f32"), "f32", "dim = 2", lambda t: t.unsqueeze(2))
check("kt.unsqueeze", make((2, 0), "i1"), "i1", "dim = 1", lambda t: t.unsqueeze(1),
      arg_shape=(None, 0), res_shape=(None, 1, 0))

# ---- slice --------------------------------------------------------------------
x = make((10, 3), "f32")
for (start, end, step) in [(None, None, 1), (2, 7, 1), (1, 9, 3), (-3, None, 1),
                           (None, -2, 2), (-100, 100, 1), (5, 2, 1),
                           (20, 30, 1), (-20, -15, 1), (0, 10, 4), (3, 3, 1),
                           (7, None, 5), (None, None, 1000)]:
    attrs = ["dim = 0"]
    if start is not None:
        attrs.append("start = %d" % start)
    if end is not None:
        attrs.append("end = %d" % end)
    attrs.append("step = %d" % step)
    check("kt.slice", x, "f32", ", ".join(attrs),
          lambda t: t[start:end:step])
    # the same on a dynamic dim
    check("kt.slice", x, "f32", ", ".join(attrs), lambda t: t[start:end:step],
          arg_shape=(None, 3), res_shape=(None, 3))
for elem in DTYPES:
    x = make((2, 8, 3), elem)
    check("kt.slice", x, elem, "dim = -2, start = 1, end = -1, step = 2",
          lambda t: t[:, 1:-1:2])
check("kt.slice", make((4, 0), "f32"), "f32", "dim = 1, start = 0, end = 2",
      lambda t: t[:, 0:2])
check("kt.slice", make((0, 4), "f32"), "f32", "dim = 1, start = 1, end = 3",
      lambda t: t[:, 1:3])

# ---- select -------------------------------------------------------------------
for elem in DTYPES:
    x = make((3, 4, 2), elem)
    check("kt.select", x, elem, "dim = 1, index = -1", lambda t: t.select(1, -1))
x = make((3, 4), "f64")
check("kt.select", x, "f64", "dim = 0, index = 2", lambda t: t.select(0, 2))
check("kt.select", x, "f64", "dim = -1, index = -4", lambda t: t.select(-1, -4))
check("kt.select", make((5,), "f32"), "f32", "dim = 0, index = 3", lambda t: t.select(0, 3))
check("kt.select", make((3, 0), "f32"), "f32", "dim = 0, index = 1", lambda t: t.select(0, 1))
check("kt.select", x, "f64", "dim = 0, index = -3", lambda t: t.select(0, -3),
      arg_shape=(None, 4), res_shape=(4,))
check_err("kt.select", x, "f64", "dim = 0, index = 3", (None, 4), (4,),
          "out of range")
check_err("kt.select", x, "f64", "dim = 0, index = -4", (None, 4), (4,),
          "out of range")

# ---- flip -----------------------------------------------------------------------
for elem in DTYPES:
    x = make((2, 3, 4), elem)
    check("kt.flip", x, elem, "dims = [0, -1]", lambda t: t.flip(0, -1))
x = make((2, 3, 4), "f32")
check("kt.flip", x, "f32", "dims = [1]", lambda t: t.flip(1))
check("kt.flip", x, "f32", "dims = []", lambda t: t.flip(()))
check("kt.flip", x, "f32", "dims = [2, 0, 1]", lambda t: t.flip(2, 0, 1))
check("kt.flip", make((), "f32"), "f32", "dims = [0]", lambda t: t.flip(0))
check("kt.flip", make((3, 0), "f32"), "f32", "dims = [0, 1]", lambda t: t.flip(0, 1))
check("kt.flip", make((5, 2), "i64"), "i64", "dims = [0]", lambda t: t.flip(0),
      arg_shape=(None, None), res_shape=(None, None))

s.finish()
