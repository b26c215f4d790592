"""ATen-level import: FX nodes that call `torch.ops.aten.<op>.<overload>`.

Graphs that make_fx, AOTAutograd and torch.export produce call ATen
operators (OpOverload objects) rather than torch functions. Each converter
here maps one overload onto the torch-level converters of kiln._ops (most
ATen ops are the torch function with every argument explicit) or onto a
decomposition into kt ops written with the same helpers. Converters are
keyed by the overload's name, `"<op>.<overload>"` (`"add.Tensor"`,
`"convolution.default"`), so the table does not depend on which overloads
the installed PyTorch has.

* ATEN: "<op>.<overload>" -> converter(b, *args, **kwargs), with the
  overload's schema as its signature (`b` is the FxImporter);
* UNSUPPORTED: "<op>.<overload>" -> the reason it has no converter. This is
  the one place that says why a Core ATen op is not supported: the hole test
  (test/python/test_core_aten.py) and the generated table
  (docs/core-aten.md) read it.

Kiln's values are contiguous tensors without storage: sizes are Kiln's
(`sym_size`), strides are the contiguous strides of those sizes
(`sym_stride`), a storage offset is 0, `empty*` tensors are zeros, and
memory formats, layouts and `pin_memory` are accepted and ignored (a
device other than the CPU is refused).
"""

import math
import os

import torch

from . import _ir
from . import _ops as O
from ._fx_import import TensorVal
from ._symbolic import Sym, is_unbacked, value

ATEN = {}
UNSUPPORTED = {}

_HERE = os.path.dirname(os.path.abspath(__file__))
CORE_OPS_FILE = os.path.join(_HERE, "core_aten_ops.txt")


def overload_name(target):
    """"<op>.<overload>" of an OpOverload (None for anything else)."""
    if not isinstance(target, torch._ops.OpOverload):
        return None
    packet = target.overloadpacket.__name__
    return "%s.%s" % (packet, target._overloadname)


def converter(target):
    """The converter of an aten OpOverload target, or None. An in-place
    overload (`add_.Tensor`, in make_fx graphs of PyTorch 1.13, which does
    not functionalize) is its functional overload's result written into
    its first argument."""
    name = overload_name(target)
    if name is None:
        return None
    conv = ATEN.get(name)
    if conv is None:
        op, _, ov = name.partition(".")
        base = ATEN.get("%s.%s" % (op[:-1], ov)) if op.endswith("_") and \
            not op.endswith("__") else None
        if base is not None and op in _SHAPE_IN_PLACE:
            # x.unsqueeze_(0) changes x's sizes, not its values: the
            # result is the view's value, which make_fx's later nodes use
            # (1.13's matmul of a 1-D operand records unsqueeze_/squeeze_).
            conv = base
        elif base is not None:
            def conv(b, x, *args, **kwargs):
                return O.in_place(b, x, base(b, x, *args, **kwargs))
    return conv


# In-place ops that change a tensor's sizes or strides, not its values.
_SHAPE_IN_PLACE = {"squeeze_", "unsqueeze_", "t_", "transpose_",
                   "swapdims_", "swapaxes_"}


def reason_unsupported(target):
    name = overload_name(target)
    return UNSUPPORTED.get(name) if name else None


def core_ops(path=CORE_OPS_FILE, section=None):
    """[(name, schema, section)] of python/kiln/core_aten_ops.txt:
    "<op>.<overload>" (overload `default` when the schema has none), its
    schema, and the section ("core", or "aot" for ops that AOTAutograd
    graphs contain outside the core list)."""
    out = []
    current = "core"
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                if line.startswith("# [") and line.endswith("]"):
                    current = line[3:-1]
                continue
            if not line:
                continue
            head = line.split("(", 1)[0]
            op, _, ov = head.partition(".")
            name = "%s.%s" % (op, ov or "default")
            if section is None or section == current:
                out.append((name, line, current))
    return out


def aten(*names):
    def reg(fn):
        for n in names:
            ATEN[n if "." in n else n + ".default"] = fn
        return fn
    return reg


def unsupported(reason, *names):
    for n in names:
        UNSUPPORTED[n if "." in n else n + ".default"] = reason


def _fn(name):
    """The torch-level converter of torch.<name> (or Tensor.<name>)."""
    for ns in (torch, torch.nn.functional, torch._C._nn):
        t = getattr(ns, name, None)
        conv = O.FUNCTIONS.get(t) if t is not None else None
        if conv is not None:
            return conv
    return O.METHODS[name]


def _bin(name):
    def conv(b, x, y):
        return _fn(name)(b, x, y)
    return conv


_eq, _ne, _lt, _le, _gt, _ge = (_bin(n) for n in
                                ("eq", "ne", "lt", "le", "gt", "ge"))
_logical_and, _logical_or = _bin("logical_and"), _bin("logical_or")


def _t(b, x, what):
    return O.need_tensor(b, x, what)


def _float(b, x):
    """x as a float tensor (integers and bools promote to the default
    dtype, as PyTorch's unary float ops do)."""
    if not x.dtype.is_floating_point:
        return O.cast(b, x, torch.get_default_dtype())
    return x


def _un(b, name, x):
    return b.op(name, [x], shape=x.shape,
                dtype=torch.bool if name == "isnan" else x.dtype)


def _ignore_device(b, device=None, **_):
    O._check_device(b, device)


# ------------------------------------------------------------- pointwise


def _same(torch_name):
    """The aten op is the torch function with the same arguments."""
    conv = _fn(torch_name)

    def c(b, *args, **kwargs):
        return conv(b, *args, **kwargs)
    c.__name__ = torch_name
    return c


for _n in ("abs", "ceil", "floor", "round", "neg", "relu", "sigmoid", "sin",
           "cos", "tanh", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt",
           "erf", "reciprocal", "sign", "bitwise_not", "logical_not",
           "isnan", "maximum", "minimum", "logical_and", "logical_or",
           "logical_xor", "bmm", "mm", "flip", "gather", "index_select",
           "diagonal", "permute", "atan2", "sort", "topk", "argmax",
           "argmin", "amax", "amin", "addmm", "baddbmm", "addbmm", "dot",
           "vdot", "mv", "addmv", "outer", "addr", "addcmul", "addcdiv",
           "positive", "resolve_neg", "resolve_conj", "conj_physical",
           "fliplr", "flipud", "deg2rad", "rad2deg", "fmax", "fmin",
           "ldexp", "frac", "logaddexp", "logaddexp2", "cross", "diff"):
    aten(_n)(_same(_n))

def _add_sub(name):
    """alpha is keyword-only in the .Tensor overloads, positional in
    .Scalar: both come here."""
    def conv(b, x, y, alpha=1):
        return _fn(name)(b, x, y, alpha=alpha)
    return conv


for _n in ("add", "sub", "rsub"):
    aten("%s.Tensor" % _n, "%s.Scalar" % _n)(_add_sub(_n))


for _n in ("mul", "div", "eq", "ne", "lt", "le", "gt", "ge",
           "fmod", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor"):
    aten("%s.Tensor" % _n, "%s.Scalar" % _n)(_same(_n))
aten("div.Tensor_mode", "div.Scalar_mode")(_same("div"))
aten("pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow.Scalar")(_same("pow"))
aten("where.self")(_same("where"))
aten("masked_fill.Scalar", "masked_fill.Tensor")(_same("masked_fill"))
aten("clamp.default", "clamp.Tensor")(_same("clamp"))
aten("clamp_min.default", "clamp_min.Tensor")(_same("clamp_min"))
aten("copysign.Tensor", "copysign.Scalar")(_same("copysign"))
aten("ldexp.Tensor")(_same("ldexp"))


@aten("linalg_cross")
def linalg_cross(b, x, y, dim=-1):
    return O.cross(b, x, y, dim)
aten("clamp_max.default", "clamp_max.Tensor")(_same("clamp_max"))
aten("hardtanh.default")(_same("hardtanh"))
aten("leaky_relu.default")(_same("leaky_relu"))
aten("gelu.default")(_same("gelu"))
aten("silu.default")(_same("silu"))


@aten("atan2.out")
def atan2_out(b, x, y, *, out):
    """The out= form writes the caller's tensor: an in-place write."""
    return O.in_place(b, out, O.atan2(b, x, y))


# Float functions without a kt op of their own: decompositions (PyTorch's
# formulas, written to keep precision near 0 and NaN outside the domain).

def _float_unary(fn):
    def conv(b, x):
        x = _float(b, _t(b, x, fn.__name__))
        return fn(b, x)
    conv.__name__ = fn.__name__
    return conv


def _c(b, v, x):
    return b.constant(v, x.dtype)


@aten("log2")
@_float_unary
def log2(b, x):
    return O.mul(b, _un(b, "log", x), 1.0 / math.log(2.0))


@aten("log10")
@_float_unary
def log10(b, x):
    return O.mul(b, _un(b, "log", x), 1.0 / math.log(10.0))


@aten("tan")
@_float_unary
def tan(b, x):
    return O.div(b, _un(b, "sin", x), _un(b, "cos", x))


def _half_exp_abs(b, x):
    """(|x|, e^|x| / 2 as (e^(|x|/2) / 2) e^(|x|/2)): finite up to where
    sinh/cosh overflow (e^|x| alone overflows ~0.7 earlier: f64 cosh(710)
    was inf); for |x| > 20 it is sinh and cosh within a few ulp (e^-|x|
    is below half an ulp there). Its gradient in the band where e^|x|
    overflows but the result does not is NaN (the other where branch)."""
    a = _un(b, "abs", x)
    h = _un(b, "exp", O.mul(b, a, 0.5))
    return a, O.mul(b, O.mul(b, h, 0.5), h)


@aten("sinh")
@_float_unary
def sinh(b, x):
    # (expm1(x) - expm1(-x)) / 2: exact near 0.
    r = O.mul(b, O.sub(b, _un(b, "expm1", x),
                       _un(b, "expm1", _un(b, "neg", x))), 0.5)
    a, big = _half_exp_abs(b, x)
    return O.where(b, _gt(b, a, 20.0), O.mul(b, big, _un(b, "sign", x)), r)


@aten("cosh")
@_float_unary
def cosh(b, x):
    r = O.mul(b, O.add(b, _un(b, "exp", x),
                       _un(b, "exp", _un(b, "neg", x))), 0.5)
    a, big = _half_exp_abs(b, x)
    return O.where(b, _gt(b, a, 20.0), big, r)


@aten("atan")
@_float_unary
def atan(b, x):
    return O.atan2(b, x, O.full_like(b, x, 1.0))


def _one_minus_sq(b, x):
    # (1 - x) * (1 + x): no cancellation near |x| = 1.
    return O.mul(b, O.rsub(b, x, 1.0), O.add(b, x, 1.0))


@aten("asin")
@_float_unary
def asin(b, x):
    return O.atan2(b, x, _un(b, "sqrt", _one_minus_sq(b, x)))


@aten("acos")
@_float_unary
def acos(b, x):
    return O.atan2(b, _un(b, "sqrt", _one_minus_sq(b, x)), x)


@aten("asinh")
@_float_unary
def asinh(b, x):
    # sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); large |x| as
    # log(2|x|) (x^2 would overflow).
    a = _un(b, "abs", x)
    sq = O.mul(b, a, a)
    small = _un(b, "log1p", O.add(b, a, O.div(
        b, sq, O.add(b, _un(b, "sqrt", O.add(b, sq, 1.0)), 1.0))))
    big = O.add(b, _un(b, "log", a), math.log(2.0))
    r = O.where(b, _gt(b, a, 1e15 if x.dtype == torch.float64 else 1e7),
                big, small)
    return O.where(b, _un(b, "isnan", x), x,
                   O.mul(b, r, _un(b, "sign", x)))


@aten("acosh")
@_float_unary
def acosh(b, x):
    # log1p((x - 1) + sqrt(x - 1) * sqrt(x + 1)): NaN below 1; x - 1 is
    # exact near 1, where log(x + ...) lost the digits of the small
    # result (f32 acosh(1 + 1e-6) was 4e-5 off). Large x as log(x) + log 2
    # (the sum would overflow near the float max).
    xm1 = O.sub(b, x, 1.0)
    t = O.mul(b, _un(b, "sqrt", xm1), _un(b, "sqrt", O.add(b, x, 1.0)))
    small = _un(b, "log1p", O.add(b, xm1, t))
    big = O.add(b, _un(b, "log", x), math.log(2.0))
    return O.where(b, _gt(b, x, 1e15 if x.dtype == torch.float64 else 1e7),
                   big, small)


@aten("atanh")
@_float_unary
def atanh(b, x):
    # copysign(0.5 * log1p(2|x| / (1 - |x|)), x): NaN outside [-1, 1],
    # +-inf at +-1. Odd, so computed on |x|: the quotient near x = -1 was
    # -1 + tiny, whose rounding log1p magnified (f64 atanh(-1 + 1e-12) was
    # 4e-6 off).
    a = _un(b, "abs", x)
    r = O.mul(b, _un(b, "log1p", O.div(b, O.mul(b, a, 2.0),
                                       O.rsub(b, a, 1.0))), 0.5)
    return O.copysign(b, r, x)


@aten("trunc")
def trunc(b, x):
    x = _t(b, x, "trunc")
    if not x.dtype.is_floating_point:
        return O.copy_of(x)
    return O.mul(b, _un(b, "floor", _un(b, "abs", x)), _un(b, "sign", x))


@aten("isinf")
def isinf(b, x):
    x = _t(b, x, "isinf")
    if not x.dtype.is_floating_point:
        return O.full(b, x.shape, False, torch.bool)
    return _eq(b, _un(b, "abs", x), math.inf)


@aten("elu")
def elu(b, x, alpha=1, scale=1, input_scale=1):
    x = _t(b, x, "elu")
    neg = O.mul(b, _un(b, "expm1", O.mul(b, x, float(input_scale))),
                float(alpha) * float(scale))
    return O.where(b, _gt(b, x, 0), O.mul(b, x, float(scale)), neg)


# ------------------------------------------------------------ reductions


@aten("sum.default")
def sum_all(b, x, *, dtype=None):
    return O.sum_(b, x, dtype=dtype)


@aten("sum.dim_IntList")
def sum_dim(b, x, dim, keepdim=False, *, dtype=None):
    return O.sum_(b, x, dim if dim else None, keepdim, dtype=dtype)


@aten("mean.default")
def mean_all(b, x, *, dtype=None):
    return O.mean(b, x, dtype=dtype)


@aten("mean.dim")
def mean_dim(b, x, dim, keepdim=False, *, dtype=None):
    return O.mean(b, x, dim if dim else None, keepdim, dtype=dtype)


@aten("prod.default")
def prod_all(b, x, *, dtype=None):
    return O.prod_(b, x, dtype=dtype)


@aten("prod.dim_int")
def prod_dim(b, x, dim, keepdim=False, *, dtype=None):
    return O.prod_(b, x, dim, keepdim, dtype=dtype)


@aten("any.default")
def any_all(b, x):
    return O.any_(b, x)


@aten("any.dim")
def any_dim(b, x, dim, keepdim=False):
    return O.any_(b, x, dim, keepdim)


@aten("any.dims")
def any_dims(b, x, dim=None, keepdim=False):
    x = _t(b, x, "any")
    if dim is None or len(dim) == 0:
        r = O.any_(b, x)
        if keepdim:
            r = O.reshape(b, r, [1] * x.ndim)
        return r
    return _ne(b, O.sum_(b, _ne(b, x, 0), list(dim), keepdim), 0)


@aten("var.dim")
def var_dim(b, x, dim=None, unbiased=True, keepdim=False):
    return O.var(b, x, dim if dim else None, unbiased, keepdim)


@aten("var.correction")
def var_correction(b, x, dim=None, *, correction=None, keepdim=False):
    return O.var(b, x, dim if dim else None, None, keepdim,
                 correction=1 if correction is None else correction)


def _max_min_dim(name):
    def conv(b, x, dim, keepdim=False):
        r = _fn(name)(b, x, dim, keepdim)
        return (r[0], r[1])
    return conv


aten("max.dim")(_max_min_dim("max"))
aten("min.dim")(_max_min_dim("min"))


@aten("max.default")
def max_all(b, x):
    return O.amax(b, x, list(range(_t(b, x, "max").ndim)))


@aten("min.default")
def min_all(b, x):
    return O.amin(b, x, list(range(_t(b, x, "min").ndim)))


@aten("cumsum")
def cumsum(b, x, dim, *, dtype=None):
    return _fn("cumsum")(b, x, dim, dtype=dtype)


@aten("_softmax")
def softmax(b, x, dim, half_to_float):
    if half_to_float:
        x = O.cast(b, x, torch.float32)
    return _fn("softmax")(b, x, dim)


@aten("_log_softmax")
def log_softmax(b, x, dim, half_to_float):
    if half_to_float:
        x = O.cast(b, x, torch.float32)
    return _fn("log_softmax")(b, x, dim)


# --------------------------------------------------------- shape and views


@aten("view", "_unsafe_view", "reshape")
def view(b, x, size):
    return O.reshape(b, x, *size)


@aten("_reshape_alias")
def reshape_alias(b, x, size, stride):
    """PyTorch 1.13's reshape as a view (its strides are those of the
    reshaped contiguous values): a reshape."""
    return O.reshape(b, x, *size)


@aten("expand")
def expand(b, x, size, *, implicit=False):
    return O.expand(b, x, size)


@aten("alias", "clone", "lift_fresh_copy", "lift_fresh")
def clone(b, x, *, memory_format=None):
    # A value copy: Kiln's values have no storage to share.
    return O.copy_of(_t(b, x, "clone"))


@aten("detach")
def detach(b, x):
    return O.stop_gradient(b, x)


@aten("t")
def t(b, x):
    return O.t(b, x)


@aten("transpose.int")
def transpose(b, x, d0, d1):
    return O.transpose(b, x, d0, d1)


@aten("unsqueeze")
def unsqueeze(b, x, dim):
    return O.unsqueeze(b, x, dim)


@aten("squeeze.dim")
def squeeze_dim(b, x, dim):
    return O.squeeze(b, x, dim)


@aten("squeeze.default")
def squeeze_all(b, x):
    return O.squeeze(b, x)


@aten("squeeze.dims")
def squeeze_dims(b, x, dim):
    x = _t(b, x, "squeeze")
    dims = sorted({O.norm_dim(b, d, x.ndim) for d in dim}, reverse=True)
    for d in dims:
        x = O.squeeze(b, x, d)
    return x


@aten("slice.Tensor")
def slice_(b, x, dim=0, start=None, end=None, step=1):
    x = _t(b, x, "slice")
    if end is not None and not isinstance(end, (Sym, TensorVal)) and \
            end >= (1 << 62):
        end = None
    return O.slice_dim(b, x, dim, start, end, step)


@aten("select.int")
def select(b, x, dim, index):
    return O.select(b, x, dim, index)


@aten("split_with_sizes")
def split_with_sizes(b, x, split_sizes, dim=0):
    return list(O.split_with_sizes(b, x, split_sizes, dim))


@aten("split.Tensor")
def split(b, x, split_size, dim=0):
    return list(O.split(b, x, split_size, dim))


@aten("unsafe_split.Tensor")
def unsafe_split(b, x, split_size, dim=0):
    return list(O.split(b, x, split_size, dim))


@aten("unbind.int")
def unbind(b, x, dim=0):
    return list(O.unbind(b, x, dim))


@aten("cat")
def cat(b, tensors, dim=0):
    return O.cat(b, tensors, dim)


@aten("stack")
def stack(b, tensors, dim=0):
    return O.stack(b, tensors, dim)


@aten("repeat")
def repeat(b, x, repeats):
    return O.repeat(b, x, *repeats)


@aten("constant_pad_nd")
def constant_pad_nd(b, x, pad, value=0):
    return O.pad(b, x, list(pad), "constant", value)


for _k in (1, 2, 3):
    aten("reflection_pad%dd" % _k)(O._aten_pad("reflect", _k))
    aten("replication_pad%dd" % _k)(O._aten_pad("replicate", _k))


@aten("select_scatter")
def select_scatter(b, x, src, dim, index):
    x = _t(b, x, "select_scatter")
    src = O.cast(b, _t(b, src, "select_scatter's src"), x.dtype)
    d = O.norm_dim(b, dim, x.ndim)
    n = b.static(x.shape[d], "the size of a select_scatter dim")
    i = b.static(index, "a select_scatter index")
    if not -n <= i < n:
        raise b.error("select_scatter: index %d is out of range for a dim "
                      "of size %d" % (i, n))
    return b.op("select_scatter", [x, src], {"dim": d, "index": i % n},
                shape=x.shape, dtype=x.dtype)


@aten("slice_scatter")
def slice_scatter(b, x, src, dim=0, start=None, end=None, step=1):
    x = _t(b, x, "slice_scatter")
    src = O.cast(b, _t(b, src, "slice_scatter's src"), x.dtype)
    d = O.norm_dim(b, dim, x.ndim)
    n = b.static(x.shape[d], "the size of a slice_scatter dim")
    start, end, step = slice(
        None if start is None else b.static(start, "a slice start"),
        None if end is None else b.static(end, "a slice end"),
        b.static(step, "a slice step")).indices(n)
    attrs = {"dim": d, "start": start, "end": max(end, start),
             "step": step}
    return b.op("slice_scatter", [x, src], attrs, shape=x.shape,
                dtype=x.dtype)


@aten("diagonal")
def diagonal(b, x, offset=0, dim1=0, dim2=1):
    return O.diagonal(b, x, offset, dim1, dim2)


# ---------------------------------------------------------------- creation


@aten("_to_copy")
def to_copy(b, x, *, dtype=None, layout=None, device=None, pin_memory=None,
            non_blocking=False, memory_format=None):
    O._check_device(b, device)
    x = _t(b, x, "_to_copy")
    if dtype is None or dtype == x.dtype:
        return O.copy_of(x)
    return O.cast(b, x, dtype)


@aten("copy")
def copy(b, x, src, non_blocking=False):
    """aten.copy (functional copy_): src broadcast to x's shape, in x's
    dtype."""
    x = _t(b, x, "copy")
    src = O.cast(b, _t(b, src, "copy's source"), x.dtype)
    if tuple(map(value, src.shape)) == tuple(map(value, x.shape)):
        return O.copy_of(src)
    return O.expand(b, src, list(x.shape))


@aten("full")
def full(b, size, fill_value, *, dtype=None, layout=None, device=None,
         pin_memory=None):
    O._check_device(b, device)
    return O.full(b, size, fill_value, dtype)


@aten("full_like")
def full_like(b, x, fill_value, *, dtype=None, layout=None, device=None,
              pin_memory=None, memory_format=None):
    O._check_device(b, device)
    return O.full(b, _t(b, x, "full_like").shape, fill_value,
                  dtype or x.dtype)


def _like(fill):
    def conv(b, x, *, dtype=None, layout=None, device=None,
             pin_memory=None, memory_format=None):
        O._check_device(b, device)
        return O.full(b, _t(b, x, "*_like").shape, fill, dtype or x.dtype)
    return conv


aten("zeros_like", "empty_like")(_like(0))
aten("ones_like")(_like(1))


@aten("fill.Scalar")
def fill_scalar(b, x, value):
    x = _t(b, x, "fill")
    return O.full(b, x.shape, value, x.dtype)


@aten("fill.Tensor")
def fill_tensor(b, x, value):
    x = _t(b, x, "fill")
    return O.expand(b, O.cast(b, value, x.dtype), list(x.shape))


def _filled(fill):
    def conv(b, size, *, dtype=None, layout=None, device=None,
             pin_memory=None, memory_format=None):
        O._check_device(b, device)
        return O.full(b, size, fill, dtype or torch.get_default_dtype())
    return conv


# empty: zeros (an uninitialized tensor's values are unspecified).
empty = _filled(0)
aten("empty.memory_format", "zeros.default")(empty)
aten("ones.default")(_filled(1))


@aten("empty_strided")
def empty_strided(b, size, stride, *, dtype=None, layout=None, device=None,
                  pin_memory=None):
    """Zeros of `size`: Kiln values are contiguous, the strides only say
    how PyTorch lays the (unspecified) values out."""
    return empty(b, size, dtype=dtype, device=device)


@aten("scalar_tensor")
def scalar_tensor(b, s, *, dtype=None, layout=None, device=None,
                  pin_memory=None):
    O._check_device(b, device)
    return O.full(b, [], s, dtype or torch.get_default_dtype())


@aten("arange.start_step", "arange.start", "arange.default")
def arange(b, *args, dtype=None, layout=None, device=None, pin_memory=None):
    return O.arange(b, *args, dtype=dtype, device=device)


def _random(b, name, size, dtype):
    """kt.rand / kt.randn with a seed argument of its own (drawn on every
    call from torch's generator: ProgramArg.seed); Kiln's Philox stream,
    not PyTorch's numbers."""
    size = [b.static(s, "the size of a random tensor") for s in size]
    dtype = dtype or torch.get_default_dtype()
    if not dtype.is_floating_point:
        raise b.error("aten.%s of dtype %s" % (name, dtype))
    return b.op(name, [b.seed_arg()], {"size": size, "dtype": dtype},
                shape=size, dtype=dtype)


def _rand(name):
    def conv(b, size, *, dtype=None, layout=None, device=None,
             pin_memory=None, generator=None):
        O._check_device(b, device)
        if generator is not None:
            raise b.error("a random op with its own generator")
        return _random(b, name, size, dtype)
    return conv


aten("rand")(_rand("rand"))
aten("randn")(_rand("randn"))


@aten("randperm")
def randperm(b, n, *, dtype=torch.int64, layout=None, device=None,
             pin_memory=None, generator=None):
    """The stable argsort of n uniform float64 numbers."""
    O._check_device(b, device)
    if generator is not None:
        raise b.error("a random op with its own generator")
    n = b.static(n, "randperm's n")
    u = _random(b, "rand", [n], torch.float64)
    r = b.op("argsort", [u], {"dim": 0}, shape=[n], dtype=torch.int64)
    return O.cast(b, r, dtype) if dtype != torch.int64 else r


def _bernoulli(b, x, p, generator):
    x = _t(b, x, "bernoulli")
    if generator is not None:
        raise b.error("a random op with its own generator")
    p = float(b.static(p, "bernoulli's p"))
    size = [b.static(v, "the size of a random tensor") for v in x.shape]
    u = _random(b, "rand", size, torch.float64)
    return O.cast(b, _lt(b, u, p), x.dtype)


@aten("bernoulli.p")
def bernoulli(b, x, p, *, generator=None):
    """1 with probability p, else 0, in x's dtype and shape (kt.rand with
    its own seed argument)."""
    return _bernoulli(b, x, p, generator)


@aten("bernoulli_.float")
def bernoulli_(b, x, p=0.5, *, generator=None):
    """x filled with bernoulli(p) draws (the dropout mask make_fx records
    for nn.Dropout in training)."""
    return O.in_place(b, x, _bernoulli(b, x, p, generator))


# ----------------------------------------------------------- indexing


@aten("index.Tensor")
def index(b, x, indices):
    """x[i0, i1, ...] with index tensors (None: the whole dim): one index
    tensor is kt.index_select; several (broadcast together, adjacent or
    not) are one flat index: sum of index_k * stride_k over the indexed
    dims (the indexed dims moved first), then kt.index_select on the
    flattened dims. A bool mask is kt.nonzero and a gather (a
    data-dependent size: O.tensor_index's x[m])."""
    x = _t(b, x, "index")
    if any(i is not None and i.dtype in (torch.bool, torch.uint8)
           for i in indices):
        # A boolean mask: the rows where it is true, a count known when
        # the program runs (kt.nonzero; O.tensor_index's x[m], x[:, m]).
        return O.tensor_index(b, x, tuple(
            slice(None) if i is None else i for i in indices))
    idx = list(indices) + [None] * (x.ndim - len(indices))
    used = [d for d, i in enumerate(idx) if i is not None]
    if len(used) == 1:
        d = used[0]
        i = idx[d]
        flat = O.reshape(b, i, -1) if i.ndim != 1 else i
        n = x.shape[d]
        if is_unbacked(n):
            # A data-dependent size (unique's values indexed by its
            # inverse): negative indices wrap by the size at run time.
            n = O._dim_size_tensor(b, x, d)
        flat = _wrap_index(b, flat, n)
        r = O.index_select(b, x, d, flat)
        if i.ndim == 1:
            return r
        shape = list(x.shape[:d]) + list(i.shape) + list(x.shape[d + 1:])
        return O.reshape(b, r, shape)
    # Several index tensors: PyTorch puts the broadcast index dims first
    # when the indexed dims are not adjacent, else where they were.
    adjacent = used == list(range(used[0], used[-1] + 1))
    rest = [d for d in range(x.ndim) if d not in used]
    xp = O.permute(b, x, used + rest)
    sizes = [b.static(x.shape[d], "an indexed dim's size") for d in used]
    ishape = O.broadcast(b, *[idx[d].shape for d in used])
    flat = None
    stride = 1
    for d, n in reversed(list(zip(used, sizes))):
        i = _wrap_index(b, O.cast(b, idx[d], torch.int64), n)
        term = O.mul(b, i, stride) if stride != 1 else i
        flat = term if flat is None else O.add(b, flat, term)
        stride *= n
    flat = O.expand(b, flat, list(ishape)) if tuple(
        map(value, flat.shape)) != tuple(map(value, ishape)) else flat
    xf = O.reshape(b, xp, [stride] + [x.shape[d] for d in rest])
    r = O.index_select(b, xf, 0, O.reshape(b, flat, -1))
    r = O.reshape(b, r, list(ishape) + [x.shape[d] for d in rest])
    if adjacent and used[0] > 0:
        k = len(ishape)
        lead = list(range(k, k + used[0]))
        perm = lead + list(range(k)) + list(range(k + used[0], r.ndim))
        r = O.permute(b, r, perm)
    return r


def _wrap_index(b, i, n):
    """Negative indices count from the end (i + n where i < 0)."""
    return O.where(b, _lt(b, i, 0), O.add(b, i, n), i)


def _same_shape(a, b_):
    return tuple(map(value, a)) == tuple(map(value, b_))


@aten("index_put")
def index_put(b, x, indices, values, accumulate=False):
    """x[indices] = values (accumulate: +=), indices as aten.index takes
    them (index tensors, None for whole dims):

    * one boolean mask over x's leading dims with a single value (`x[m] =
      v`): kt.where (accumulate: x + v where the mask is true); a mask
      with a tensor of values needs the mask's count (data-dependent) and
      is refused;
    * integer index tensors: the indexed dims moved first and flattened,
      one flat index (as aten.index), values broadcast to the indexed
      result's shape and laid out the same way, then kt.scatter along the
      flat dim (reduce "sum" when accumulating), and x's layout restored.
    """
    x = _t(b, x, "index_put")
    idx = list(indices) + [None] * (x.ndim - len(indices))
    used = [d for d, i in enumerate(idx) if i is not None]
    if not used:
        raise b.error("aten.index_put without an index tensor")
    v = values if isinstance(values, TensorVal) else b.constant(values,
                                                                x.dtype)
    v = O.cast(b, v, x.dtype)
    masks = [d for d in used if idx[d].dtype in (torch.bool, torch.uint8)]
    if masks:
        m = idx[masks[0]]
        n_v = 1
        for d_ in v.shape:
            n_v *= b.static(d_, "index_put's value count")
        if len(used) != 1 or masks[0] != 0 or n_v != 1:
            raise b.error("aten.index_put with a boolean mask and %s (the "
                          "values' positions depend on the data)" % (
                              "other indices" if len(used) != 1 else
                              "a tensor of values"))
        m = O.cast(b, m, torch.bool)
        if m.ndim < x.ndim:
            m = O.reshape(b, m, list(m.shape) + [1] * (x.ndim - m.ndim))
        v0 = O.reshape(b, v, [])
        new = O.add(b, x, v0) if accumulate else v0
        return O.where(b, m, new, x)
    adjacent = used == list(range(used[0], used[-1] + 1))
    rest = [d for d in range(x.ndim) if d not in used]
    sizes = [b.static(x.shape[d], "an indexed dim's size") for d in used]
    ishape = list(O.broadcast(b, *[idx[d].shape for d in used]))
    flat = None
    stride = 1
    for d, n in reversed(list(zip(used, sizes))):
        i = _wrap_index(b, O.cast(b, idx[d], torch.int64), n)
        term = O.mul(b, i, stride) if stride != 1 else i
        flat = term if flat is None else O.add(b, flat, term)
        stride *= n
    if not _same_shape(flat.shape, ishape):
        flat = O.expand(b, flat, ishape)
    k = len(ishape)
    rshape = [x.shape[d] for d in rest]
    # The values' shape: x[indices]'s, whose index dims come first unless
    # the indexed dims are adjacent (then they sit where those dims were).
    lead = used[0] if adjacent else 0
    out_shape = rshape[:lead] + ishape + rshape[lead:]
    if not _same_shape(v.shape, out_shape):
        v = O.expand(b, v, out_shape)
    if lead:
        perm = list(range(lead, lead + k)) + list(range(lead)) + list(
            range(lead + k, len(out_shape)))
        v = O.permute(b, v, perm)
    n_idx = 1
    for d_ in ishape:
        n_idx *= b.static(d_, "the index count")
    v = O.reshape(b, v, [n_idx] + rshape)
    xp = O.permute(b, x, used + rest) if used + rest != list(
        range(x.ndim)) else x
    xf = O.reshape(b, xp, [stride] + rshape)
    fi = O.reshape(b, flat, [n_idx] + [1] * len(rest))
    if rest:
        fi = O.expand(b, fi, [n_idx] + rshape)
    r = O.scatter_op(b, xf, 0, fi, v, "sum" if accumulate else "none",
                     True, "index_put")
    r = O.reshape(b, r, [x.shape[d] for d in used + rest])
    if used + rest != list(range(x.ndim)):
        inv = [0] * x.ndim
        for pos, d in enumerate(used + rest):
            inv[d] = pos
        r = O.permute(b, r, inv)
    return r


@aten("scatter.src", "scatter.value", "scatter.reduce",
      "scatter.value_reduce")
def scatter(b, x, dim, index, src, reduce=None):
    if isinstance(src, TensorVal):
        return O.scatter(b, x, dim, index, src, reduce=reduce)
    return O.scatter(b, x, dim, index, value=src, reduce=reduce)


@aten("scatter_add")
def scatter_add(b, x, dim, index, src):
    return O.scatter_add(b, x, dim, index, src)


@aten("scatter_reduce.two")
def scatter_reduce(b, x, dim, index, src, reduce, *, include_self=True):
    return O.scatter_reduce(b, x, dim, index, src, reduce,
                            include_self=include_self)


@aten("masked_scatter")
def masked_scatter(b, x, mask, source):
    """The k-th True of the (broadcast) mask takes source's k-th element:
    k = cumsum(mask) - 1 over the flattened mask, read from the flattened
    source by kt.index_select (positions without True read element 0 and
    are not used)."""
    x = _t(b, x, "masked_scatter")
    shape = O.broadcast(b, x.shape, mask.shape)
    m = O.expand(b, mask, list(shape)) if tuple(
        map(value, mask.shape)) != tuple(map(value, shape)) else mask
    xb = O.expand(b, x, list(shape)) if tuple(
        map(value, x.shape)) != tuple(map(value, shape)) else x
    mf = O.reshape(b, m, -1)
    k = O.sub(b, _fn("cumsum")(b, mf, 0), 1)
    k = O.clamp(b, k, 0)
    src = O.cast(b, O.reshape(b, source, -1), x.dtype)
    picked = O.reshape(b, O.index_select(b, src, 0, k), list(shape))
    return O.where(b, m, picked, xb)


@aten("embedding")
def embedding(b, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
              sparse=False):
    """aten.embedding (padding_idx -1: none); the gradient options shape
    the weight's gradient when Kiln differentiates the graph itself."""
    out = O.embedding(b, indices, weight)
    pad = padding_idx if padding_idx is not None and padding_idx >= 0 \
        else None
    return O._embedding_grad_options(b, out, indices, weight, pad,
                                     scale_grad_by_freq)


@aten("_embedding_bag")
def embedding_bag(b, weight, indices, offsets, scale_grad_by_freq=False,
                  mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=-1):
    """F.embedding_bag with 1-D indices and offsets, as PyTorch 1.13's CPU
    kernel: the bag of position i is (the number of bag starts <= i) - 1,
    a comparison of i with every offset (offsets are data, their count is
    static); rows are summed into their bag by kt.scatter (reduce sum;
    max: amax over the bag, empty bags 0). Returns (output, offset2bag,
    bag_size, max_indices) with PyTorch's values for each mode: sum:
    (out, [], zeros, zeros), the zeros of the offsets' size; mean: (out,
    bag ids, counts, counts); max: (out, bag ids, counts, the weight row of
    each first maximum)."""
    weight = _t(b, weight, "_embedding_bag")
    if indices.ndim != 1 or offsets.ndim != 1:
        raise b.error("aten._embedding_bag with %d-D indices (1-D indices "
                      "and offsets are supported)" % indices.ndim)
    if padding_idx is not None and padding_idx >= 0:
        raise b.error("aten._embedding_bag with a padding_idx")
    if mode not in (0, 1, 2):
        raise b.error("aten._embedding_bag mode %r" % (mode,))
    if per_sample_weights is not None and mode != 0:
        raise b.error("per_sample_weights are only supported for mode "
                      "sum (PyTorch's rule)")
    L = b.static(indices.shape[0], "the number of indices")
    nb = b.static(offsets.shape[0], "the number of offsets")
    B = nb - 1 if include_last_offset else nb
    D = weight.shape[1]
    idx = O.cast(b, indices, torch.int64)
    # PyTorch's checks of the offsets' values, when the program runs.
    offsets = O._check_bag_offsets(b, O.cast(b, offsets, torch.int64), L)
    starts = offsets
    if include_last_offset:
        starts = O.slice_dim(b, starts, 0, 0, B, 1)
    pos = O.arange(b, L)
    ge = _le(b, O.unsqueeze(b, starts, 0), O.unsqueeze(b, pos, 1))  # L, B
    bag = O.sub(b, O.sum_(b, ge, [1]), 1)
    bag_ok = _ge(b, bag, 0)      # positions before the first offset
    bag = O.clamp(b, bag, 0)
    # Rows that count in their bag's values: with include_last_offset, none
    # from the last offset on (PyTorch still counts them in bag_size).
    row_ok = bag_ok
    if include_last_offset and nb > 0:
        row_ok = _logical_and(b, bag_ok, _lt(b, pos, O.select(b, offsets, 0,
                                                               -1)))
    rows = O.index_select(b, weight, 0, idx)                       # L, D
    if per_sample_weights is not None:
        rows = O.mul(b, rows, O.unsqueeze(
            b, O.cast(b, per_sample_weights, weight.dtype), 1))
    rows = O.mul(b, rows, O.unsqueeze(b, O.cast(b, row_ok, weight.dtype),
                                      1))
    bag_e = O.expand(b, O.unsqueeze(b, bag, 1), [L, D])
    ones = O.cast(b, bag_ok, torch.int64)
    counts = O.scatter_op(b, O.full(b, [B], 0, torch.int64), 0, bag, ones,
                          "sum", True, "_embedding_bag")
    if mode == 2:
        # Positions outside every bag cannot win: -inf rows.
        rows = O.where(b, O.unsqueeze(b, row_ok, 1), rows,
                       O.full(b, [], -math.inf, weight.dtype))
        out = O.scatter_op(b, O.full(b, [B, D], -math.inf, weight.dtype), 0,
                           bag_e, rows, "amax", True, "_embedding_bag")
        empty = O.unsqueeze(b, _eq(b, counts, 0), 1)
        out = O.where(b, empty, O.full(b, [], 0, weight.dtype), out)
        # The first position (in index order) holding its bag's maximum.
        hit = _logical_and(b, O.unsqueeze(b, row_ok, 1), _eq(
            b, rows, O.gather(b, out, 0, bag_e)))
        big = O.full(b, [], L, torch.int64)
        posL = O.expand(b, O.unsqueeze(b, pos, 1), [L, D])
        first = O.scatter_op(b, O.full(b, [B, D], L, torch.int64), 0, bag_e,
                             O.where(b, hit, posL, big), "amin", True,
                             "_embedding_bag")
        found = _lt(b, first, L)
        first = O.clamp(b, first, 0, max(L - 1, 0))
        which = O.reshape(b, O.index_select(b, idx, 0, O.reshape(
            b, first, [-1])), [B, D])
        max_idx = O.where(b, found, which, O.full(b, [], 0, torch.int64))
        return (out, bag, counts, max_idx)
    out = O.scatter_op(b, O.full(b, [B, D], 0, weight.dtype), 0, bag_e,
                       rows, "sum", True, "_embedding_bag")
    if mode == 0:
        # bag_size and max_indices of mode sum: zeros of the offsets' size
        # (one more than the bags with include_last_offset), as PyTorch.
        zeros_o = O.full(b, [nb], 0, torch.int64)
        return (out, O.full(b, [0], 0, torch.int64), zeros_o, zeros_o)
    div = O.cast(b, O.clamp(b, counts, 1), weight.dtype)
    out = O.div(b, out, O.unsqueeze(b, div, 1))
    return (out, bag, counts, counts)


@aten("embedding_dense_backward")
def embedding_dense_backward(b, grad, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """Rows of grad summed into a [num_weights, D] zero tensor at the
    indices (kt.scatter, reduce sum); rows of padding_idx get nothing;
    scale_grad_by_freq divides each row by its index's count."""
    grad = _t(b, grad, "embedding_dense_backward")
    n = b.static(num_weights, "num_weights")
    D = grad.shape[-1]
    i = O.reshape(b, indices, -1)
    g = O.reshape(b, grad, [-1, D])
    if padding_idx is not None and padding_idx >= 0:
        keep = _ne(b, i, padding_idx)
        g = O.mul(b, g, O.cast(b, O.unsqueeze(b, keep, 1), g.dtype))
    if scale_grad_by_freq:
        ones = O.full(b, [i.shape[0]], 1, torch.int64)
        counts = O.scatter_op(b, O.full(b, [n], 0, torch.int64), 0, i, ones,
                              "sum", True, "embedding_dense_backward")
        per_row = O.index_select(b, counts, 0, i)
        g = O.div(b, g, O.cast(b, O.unsqueeze(b, per_row, 1), g.dtype))
    ie = O.expand(b, O.unsqueeze(b, i, 1), list(g.shape))
    return O.scatter_op(b, O.full(b, [n, D], 0, g.dtype), 0, ie, g, "sum",
                        True, "embedding_dense_backward")


# ------------------------------------------------------ matmul and conv


@aten("convolution")
def convolution(b, x, w, bias, stride, padding, dilation, transposed,
                output_padding, groups):
    x = _t(b, x, "convolution")
    k = x.ndim - 2
    if k == 2:
        if transposed:
            return O.conv_transpose2d(b, x, w, bias, stride, padding,
                                      output_padding, groups, dilation)
        return O.conv2d(b, x, w, bias, stride, padding, dilation, groups)
    if k == 1:
        if transposed:
            return O.conv_transpose1d(b, x, w, bias, stride, padding,
                                      output_padding, groups, dilation)
        return O.conv1d(b, x, w, bias, stride, padding, dilation, groups)
    if k == 3:
        st, pd, dl = [[b.static(v, "a conv " + what) for v in vs]
                      for vs, what in ((stride, "stride"),
                                       (padding, "padding"),
                                       (dilation, "dilation"))]
        G = b.static(groups, "conv groups")
        if transposed:
            op = [b.static(v, "a conv output_padding")
                  for v in output_padding]
            return O._conv_transpose3d(b, x, w, bias, st, pd, op, G, dl)
        return O._conv3d(b, x, w, bias, st, pd, dl, G)
    raise b.error("aten.convolution with %d spatial dims (kt has 1-D and "
                  "2-D convolutions; 3-D ones are decomposed)" % k)


def _red_except(b, x, keep):
    dims = [d for d in range(x.ndim) if d != keep]
    return O.sum_(b, x, dims)


def _conv_weight_grad(b, a, g, KH, KW, st, pd, dl, G):
    """The gradient of conv2d(a, w)'s weight [O, C/G, KH, KW] given the
    gradient g [N, O, OH, OW] of its output: grad_w[o, c, kh, kw] =
    sum_n,oh,ow g[n, o, oh, ow] * a[n, grp*Cg + c, oh*s + kh*d - p, ...],
    a convolution over the batch of a (channels as batch) with g as the
    filter, its stride the dilation and its dilation the stride (PyTorch's
    own formula), cut to the kernel size."""
    N, C, H, W = [b.static(v, "a conv input size") for v in a.shape]
    O_, OH, OW = [b.static(v, "a conv output size") for v in
                  (g.shape[1], g.shape[2], g.shape[3])]
    Cg, Og = C // G, O_ // G
    at = O.reshape(b, a, [N, G, Cg, H, W])
    at = O.permute(b, at, [2, 1, 0, 3, 4])              # Cg, G, N, H, W
    at = O.reshape(b, at, [Cg, G * N, H, W])
    gt = O.reshape(b, g, [N, G, Og, OH, OW])
    gt = O.permute(b, gt, [1, 2, 0, 3, 4])              # G, Og, N, OH, OW
    gt = O.reshape(b, gt, [G * Og, N, OH, OW])
    r = O.conv2d(b, at, gt, None, dl, pd, st, G)        # Cg, G*Og, kh', kw'
    r = O.slice_dim(b, r, 2, 0, KH, 1)
    r = O.slice_dim(b, r, 3, 0, KW, 1)
    return O.permute(b, r, [1, 0, 2, 3])


def _conv3d_weight_grad(b, a, g, K, st, pd, dl, G):
    """The gradient of conv3d(a, w)'s weight [O, C/G, KD, KH, KW] given the
    gradient g [N, O, Do, Ho, Wo] of its output: per depth tap j, the 2-D
    weight gradient (_conv_weight_grad) of the depth slices od * s + j * d
    - p of a (stacked into the batch, as _ops._conv3d reads them) against
    g's depth slices."""
    N, C, D, H, W = a.shape
    Oc, Do, Ho, Wo = g.shape[1:]
    Do = b.static(Do, "a conv output depth")
    ap = O.pad(b, a, [0, 0, 0, 0, pd[0], pd[0]], "constant", 0) \
        if pd[0] else a
    gs = O.reshape(b, O.permute(b, g, [0, 2, 1, 3, 4]), [-1, Oc, Ho, Wo])
    taps = []
    for j in range(K[0]):
        depths = [od * st[0] + j * dl[0] for od in range(Do)]
        idx = b.constant_tensor(torch.tensor(depths, dtype=torch.int64))
        sl = O.permute(b, O.index_select(b, ap, 2, idx), [0, 2, 1, 3, 4])
        sl = O.reshape(b, sl, [-1, C, H, W])
        taps.append(_conv_weight_grad(b, sl, gs, K[1], K[2], st[1:], pd[1:],
                                      dl[1:], G))
    return O.stack(b, taps, 2)


def _convolution_backward_3d(b, grad, x, w, stride, padding, dilation,
                             transposed, output_padding, groups,
                             output_mask):
    """As the 2-D case, with _ops's 3-D convolutions: not transposed,
    grad_input = conv_transpose3d(grad, w) (output_padding giving back x's
    size), grad_weight = _conv3d_weight_grad(x, grad); transposed (the
    adjoint), grad_input = conv3d(grad, w), grad_weight =
    _conv3d_weight_grad(grad, x)."""
    st, pd, dl = [[b.static(v, "a conv " + what) for v in vs]
                  for vs, what in ((stride, "stride"), (padding, "padding"),
                                   (dilation, "dilation"))]
    G = b.static(groups, "groups")
    ins = [b.static(v, "a conv input size") for v in x.shape[2:]]
    K = [b.static(v, "a conv weight size") for v in w.shape[2:]]
    outs = [b.static(v, "a conv output size") for v in grad.shape[2:]]
    gi = gw = gb = None
    if output_mask[0]:
        if transposed:
            gi = O._conv3d(b, grad, w, None, st, pd, dl, G)
        else:
            op = [n - ((o - 1) * s_ - 2 * p + d * (k - 1) + 1)
                  for n, o, k, s_, p, d in zip(ins, outs, K, st, pd, dl)]
            gi = O._conv_transpose3d(b, grad, w, None, st, pd, op, G, dl)
    if output_mask[1]:
        gw = (_conv3d_weight_grad(b, grad, x, K, st, pd, dl, G)
              if transposed else
              _conv3d_weight_grad(b, x, grad, K, st, pd, dl, G))
    if output_mask[2]:
        gb = O.sum_(b, grad, [0, 2, 3, 4])
    return (gi, gw, gb)


@aten("convolution_backward")
def convolution_backward(b, grad, x, w, bias_sizes, stride, padding,
                         dilation, transposed, output_padding, groups,
                         output_mask):
    """1-D (as 2-D with a unit height) and 2-D convolutions.
    Not transposed: grad_input is a transposed convolution of grad with
    the weight (output_padding chosen to give back x's size), grad_weight
    _conv_weight_grad(x, grad). Transposed (the adjoint): grad_input is a
    convolution of grad with the weight, grad_weight
    _conv_weight_grad(grad, x). grad_bias sums grad over every dim but the
    channels."""
    grad = _t(b, grad, "convolution_backward")
    if x.ndim == 3:
        # 1-D as 2-D with a unit height.
        r = convolution_backward(
            b, O.unsqueeze(b, grad, 2), O.unsqueeze(b, x, 2),
            O.unsqueeze(b, w, 2), bias_sizes, [1] + list(stride),
            [0] + list(padding), [1] + list(dilation), transposed,
            [0] + list(output_padding), groups, output_mask)
        return tuple(None if v is None else (O.squeeze(b, v, 2)
                                             if i < 2 else v)
                     for i, v in enumerate(r))
    if x.ndim == 5:
        return _convolution_backward_3d(b, grad, x, w, stride, padding,
                                        dilation, transposed,
                                        output_padding, groups, output_mask)
    if x.ndim != 4:
        raise b.error("aten.convolution_backward: only 1-D, 2-D and 3-D "
                      "convolutions")
    st = [b.static(v, "a stride") for v in stride]
    pd = [b.static(v, "a padding") for v in padding]
    dl = [b.static(v, "a dilation") for v in dilation]
    G = b.static(groups, "groups")
    H, W = [b.static(v, "a conv input size") for v in x.shape[2:]]
    KH, KW = [b.static(v, "a conv weight size") for v in w.shape[2:]]
    OH, OW = [b.static(v, "a conv output size") for v in grad.shape[2:]]
    gi = gw = gb = None
    if output_mask[0]:
        if transposed:
            gi = O.conv2d(b, grad, w, None, st, pd, dl, G)
        else:
            op = []
            for n, o, k, s_, p, d in ((H, OH, KH, st[0], pd[0], dl[0]),
                                      (W, OW, KW, st[1], pd[1], dl[1])):
                op.append(n - ((o - 1) * s_ - 2 * p + d * (k - 1) + 1))
            gi = O.conv_transpose2d(b, grad, w, None, st, pd, op, G, dl)
    if output_mask[1]:
        gw = (_conv_weight_grad(b, grad, x, KH, KW, st, pd, dl, G)
              if transposed else
              _conv_weight_grad(b, x, grad, KH, KW, st, pd, dl, G))
    if output_mask[2]:
        gb = O.sum_(b, grad, [0, 2, 3])
    return (gi, gw, gb)


# ------------------------------------------------------------- pooling


def _adaptive_matrix(n_in, n_out):
    """[n_out, n_in]: row i averages PyTorch's adaptive window i,
    [floor(i * n_in / n_out), ceil((i + 1) * n_in / n_out))."""
    m = torch.zeros(n_out, n_in, dtype=torch.float64)
    for i in range(n_out):
        s_ = (i * n_in) // n_out
        e = -((-(i + 1) * n_in) // n_out)
        m[i, s_:e] = 1.0 / (e - s_)
    return m


def _along(b, x, d, m):
    """The [m_out, m_in] matrix m applied along dim d of x (kt.matmul
    with a constant, d moved last and back)."""
    last = x.ndim - 1
    xt = O.transpose(b, x, d, last) if d != last else x
    mt = b.constant_tensor(m.t().contiguous().to(x.dtype), limit=1 << 20)
    r = _fn("matmul")(b, xt, mt)
    return O.transpose(b, r, d, last) if d != last else r


def _adaptive_avg(b, x, out, what, backward_of=None):
    """Adaptive average pooling of x's last len(out) dims: kt.avg_pool2d
    (kernel = stride = in / out) when every size divides evenly (2-D), a
    mean for 1x1, else one constant averaging matrix per dim (windows of
    unequal sizes, PyTorch's bounds). With backward_of (the forward's
    input), x is the gradient of the output and the transposed matrices
    give the input's gradient."""
    k = len(out)
    src = backward_of if backward_of is not None else x
    if not src.dtype.is_floating_point:
        raise b.error("%s of a %s tensor" % (what, src.dtype))
    ins = [b.static(n, "an adaptive pool's input size")
           for n in src.shape[-k:]]
    out = [b.static(o, "an adaptive pool's output size") for o in out]
    if any(o <= 0 for o in out):
        raise b.error("%s: output sizes must be positive, got %s"
                      % (what, out))
    even = all(n % o == 0 for n, o in zip(ins, out))
    if backward_of is None and even and k == 2:
        return O.adaptive_avg_pool2d(b, x, out)
    if backward_of is not None and even and k == 2:
        ks = [n // o for n, o in zip(ins, out)]
        return avg_pool2d_backward(b, x, backward_of, ks, ks, [0, 0], False,
                                   True, None)
    r = x
    for i, (n, o) in enumerate(zip(ins, out)):
        m = _adaptive_matrix(n, o)
        r = _along(b, r, x.ndim - k + i, m.t() if backward_of is not None
                   else m)
    return r


@aten("_adaptive_avg_pool2d", "adaptive_avg_pool2d")
def adaptive_avg_pool2d(b, x, output_size):
    x = _t(b, x, "_adaptive_avg_pool2d")
    if x.ndim not in (3, 4):
        raise b.error("adaptive_avg_pool2d expects a 3-D or 4-D input")
    out = [x.shape[-2 + i] if o is None else o
           for i, o in enumerate(list(output_size))]
    return _adaptive_avg(b, x, out, "_adaptive_avg_pool2d")


@aten("adaptive_avg_pool1d")
def adaptive_avg_pool1d(b, x, output_size):
    x = _t(b, x, "adaptive_avg_pool1d")
    return _adaptive_avg(b, x, list(output_size), "adaptive_avg_pool1d")


@aten("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward(b, grad, x):
    grad = _t(b, grad, "_adaptive_avg_pool2d_backward")
    return _adaptive_avg(b, grad, list(grad.shape[-2:]),
                         "_adaptive_avg_pool2d_backward", backward_of=x)


@aten("avg_pool2d")
def avg_pool2d(b, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return O.avg_pool2d(b, x, kernel_size, list(stride) or None, padding,
                        ceil_mode, count_include_pad, divisor_override)


@aten("avg_pool1d")
def avg_pool1d(b, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    x = _t(b, x, "avg_pool1d")
    stride = list(stride) or list(kernel_size)
    r = O.avg_pool2d(b, O.unsqueeze(b, x, -2), [1, kernel_size[0]],
                     [1, stride[0]], [0, _first(padding)], ceil_mode,
                     count_include_pad)
    return O.squeeze(b, r, -2)


def _first(v):
    return v[0] if isinstance(v, (list, tuple)) else v


@aten("avg_pool2d_backward")
def avg_pool2d_backward(b, grad, x, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    grad = _t(b, grad, "avg_pool2d_backward")
    x = _t(b, x, "avg_pool2d_backward")
    k, s, p, _ = O._pool_attrs(b, kernel_size, list(stride) or None,
                               padding)
    attrs = O._avg_pool_attrs(b, k, s, p, ceil_mode, count_include_pad,
                              divisor_override)
    return b.op("avg_pool2d_backward", [grad, x], attrs, shape=x.shape,
                dtype=x.dtype)


@aten("max_pool2d_with_indices")
def max_pool2d_with_indices(b, x, kernel_size, stride=(), padding=0,
                            dilation=1, ceil_mode=False):
    """(values, flat indices into each input plane): kt.max_pool2d for the
    values, _window_argmax for the indices."""
    x = _t(b, x, "max_pool2d_with_indices")
    attrs, k, s, p, d = O._max_pool_attrs(b, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    vals = O.max_pool2d(b, x, k, s, p, d, ceil_mode)
    return (vals, O._window_argmax(b, x, vals, k, s, p, d))


@aten("max_pool3d_with_indices")
def max_pool3d_with_indices(b, x, kernel_size, stride=(), padding=0,
                            dilation=1, ceil_mode=False):
    """Values by two kt.max_pool2d, indices (flat, into each input volume)
    by _ops._window_argmax: the torch-level max_pool3d."""
    return O.max_pool3d(b, x, kernel_size, stride, padding, dilation,
                        ceil_mode, return_indices=True)


@aten("avg_pool3d")
def avg_pool3d(b, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Two kt.avg_pool2d: the torch-level avg_pool3d (_ops._pool3d)."""
    return O.avg_pool3d(b, x, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


@aten("avg_pool3d_backward")
def avg_pool3d_backward(b, grad, x, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """The adjoint of avg_pool3d's two 2-D pools (_ops._pool3d), in reverse
    order: kt.avg_pool2d_backward over D (against the first pool's result),
    then over (H, W) (against x). With a divisor_override, the forward is
    the window sum divided by it: grad / divisor_override through the two
    sums' adjoints (divisor_override=1)."""
    grad = _t(b, grad, "avg_pool3d_backward")
    x = _t(b, x, "avg_pool3d_backward")
    dov = None
    if divisor_override is not None:
        dov = b.static(divisor_override, "a divisor_override")
        if dov == 0:
            raise b.error("divisor must be not zero")
        grad = O.div(b, grad, float(dov))
        dov = 1
    k = O._triple(b, kernel_size, "a pool kernel size")
    s = O._triple(b, stride, "a pool stride", k)
    p = O._triple(b, padding, "a pool padding")
    lead = list(x.shape[:-3])
    D, H, W = x.shape[-3:]
    x4 = O.reshape(b, x, [-1, D, H, W])
    y1 = O.avg_pool2d(b, x4, k[1:], s[1:], p[1:], ceil_mode,
                      count_include_pad)
    H2, W2 = y1.shape[-2:]
    y1 = O.unsqueeze(b, O.reshape(b, y1, [y1.shape[0], D, H2 * W2]), 0)
    Do = grad.shape[-3]
    g = O.unsqueeze(b, O.reshape(b, grad, [-1, Do, H2 * W2]), 0)
    g1 = avg_pool2d_backward(b, g, y1, [k[0], 1], [s[0], 1], [p[0], 0],
                             ceil_mode, count_include_pad, dov)
    g1 = O.reshape(b, O.squeeze(b, g1, 0), [-1, D, H2, W2])
    gx = avg_pool2d_backward(b, g1, x4, k[1:], s[1:], p[1:], ceil_mode,
                             count_include_pad, dov)
    return O.reshape(b, gx, lead + [D, H, W])


def _grad_at_indices(b, grad, x, indices, nd, what):
    """Each output's gradient added at the flat position (into its input
    plane or volume) `indices` gives: a kt.scatter (sum) of grad into zeros
    of x's flattened last nd dims."""
    grad = _t(b, grad, what)
    x = _t(b, x, what)
    indices = _t(b, indices, what)
    lead = list(x.shape[:-nd])
    vol = O.prod([b.static(n, "a pooled size") for n in x.shape[-nd:]])
    n_out = O.prod([b.static(n, "a pooled size")
                    for n in grad.shape[-nd:]])
    zeros = O.full(b, lead + [vol], 0, dtype=grad.dtype)
    r = O.scatter_op(b, zeros, len(lead),
                     O.reshape(b, indices, lead + [n_out]),
                     O.reshape(b, grad, lead + [n_out]), "sum", what=what)
    return O.reshape(b, r, list(x.shape))


@aten("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(b, grad, x, kernel_size, stride,
                                     padding, dilation, ceil_mode, indices):
    return _grad_at_indices(b, grad, x, indices, 3,
                            "max_pool3d_with_indices_backward")


@aten("adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward(b, grad, x, indices):
    return _grad_at_indices(b, grad, x, indices, 2,
                            "adaptive_max_pool2d_backward")


@aten("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward(b, grad, x, indices):
    return _grad_at_indices(b, grad, x, indices, 3,
                            "adaptive_max_pool3d_backward")


@aten("adaptive_max_pool2d")
def adaptive_max_pool2d(b, x, output_size):
    """(values, flat indices): _ops.adaptive_max_pool2d with indices."""
    return tuple(O.adaptive_max_pool2d(b, x, list(output_size), True))


@aten("adaptive_max_pool3d")
def adaptive_max_pool3d(b, x, output_size):
    return tuple(O.adaptive_max_pool3d(b, x, list(output_size), True))


@aten("max_unpool2d")
def max_unpool2d(b, x, indices, output_size):
    x = _t(b, x, "max_unpool2d")
    out = [b.static(o, "an output size") for o in output_size]
    if len(out) != 2:
        raise b.error("max_unpool2d: There should be exactly two elements "
                      "(height, width) in output_size, got %d" % len(out))
    return O._unpool_to(b, x, _t(b, indices, "max_unpool2d"), out, 2,
                        "max_unpool2d")


@aten("max_unpool3d")
def max_unpool3d(b, x, indices, output_size, stride, padding):
    x = _t(b, x, "max_unpool3d")
    out = [b.static(o, "an output size") for o in output_size]
    if len(out) != 3:
        raise b.error("max_unpool3d: There should be exactly three elements "
                      "(depth, height, width) in output_size, got %d"
                      % len(out))
    return O._unpool_to(b, x, _t(b, indices, "max_unpool3d"), out, 3,
                        "max_unpool3d")


@aten("_adaptive_avg_pool3d")
def adaptive_avg_pool3d(b, x, output_size):
    """Output 1x1x1: the mean over the volume; sizes that divide evenly:
    avg_pool3d with kernel = stride = in / out; else averaging matrices
    (_adaptive_avg)."""
    x = _t(b, x, "_adaptive_avg_pool3d")
    out = [b.static(o, "an output size") for o in output_size]
    if out == [1, 1, 1]:
        return O.mean(b, x, [-3, -2, -1], True)
    ins = [b.static(n, "an adaptive pool's input size")
           for n in x.shape[-3:]]
    if all(o > 0 and n % o == 0 for n, o in zip(ins, out)):
        ks = [n // o for n, o in zip(ins, out)]
        return avg_pool3d(b, x, ks, ks)
    return _adaptive_avg(b, x, out, "_adaptive_avg_pool3d")


@aten("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(b, grad, x, kernel_size, stride,
                                     padding, dilation, ceil_mode, indices):
    """kt.max_pool2d_backward (it routes each output's gradient to the
    first maximum of its window, which is where `indices` points)."""
    grad = _t(b, grad, "max_pool2d_with_indices_backward")
    x = _t(b, x, "max_pool2d_with_indices_backward")
    attrs, *_ = O._max_pool_attrs(b, kernel_size, stride, padding, dilation,
                                ceil_mode)
    return b.op("max_pool2d_backward", [grad, x], attrs, shape=x.shape,
                dtype=x.dtype)


aten("upsample_nearest2d.vec")(O._aten_upsample("nearest", 2,
                                                 "upsample_nearest2d"))
aten("upsample_bilinear2d.vec")(O._aten_upsample("bilinear", 2,
                                                  "upsample_bilinear2d"))


# -------------------------------------------------------------- norms


def _empty(b, dtype):
    return O.full(b, [0], 0, dtype)


def _update_running_stats(b, x, save_mean, save_invstd, running_mean,
                          running_var, momentum, eps):
    """native_batch_norm in training writes its running statistics in
    place, as the CPU kernel does: stat = (1 - m) * stat + m * batch, the
    batch variance unbiased (from save_invstd: _ops._bn_unbiased_var). Outside
    autograd (no-grad values). The statistics are then !kt.ref arguments
    of the program (the cpu backend does not take those yet: its compile
    fails naming the argument)."""
    m = float(b.static(momentum, "batch_norm's momentum"))
    dims = [0] + list(range(2, x.ndim))
    for stat, batch in ((running_mean, lambda: save_mean),
                        (running_var, lambda: O._bn_unbiased_var(
                            b, x, save_invstd, eps, dims))):
        if stat is None:
            continue
        new = O.add(b, O.mul(b, O.cast(b, stat, x.dtype), 1.0 - m),
                    O.mul(b, O.cast(b, batch(), x.dtype), m))
        new = O.stop_gradient(b, O.cast(b, new, stat.dtype))
        b.no_grad_values.add(new.name)
        O.in_place(b, stat, new)


def _bn(b, x, weight, bias, running_mean, running_var, training, momentum,
        eps):
    x = _t(b, x, "batch_norm")
    st = torch.float64 if x.dtype == torch.float64 else torch.float32
    if training or running_mean is None:
        ops = [x]
        text = x.name
        if weight is not None:
            ops.append(O.cast(b, weight, x.dtype))
            text += " weight %s" % ops[-1].name
        if bias is not None:
            ops.append(O.cast(b, bias, x.dtype))
            text += " bias %s" % ops[-1].name
        y, mean, invstd = b.op(
            "batch_norm_train", ops, {"eps": float(eps)}, operand_text=text,
            results=[(x.shape, x.dtype), ([x.shape[1]], st),
                     ([x.shape[1]], st)])
        if training:
            _update_running_stats(b, x, mean, invstd, running_mean,
                                  running_var, momentum, eps)
        return (y, mean, invstd)
    y = O.batch_norm(b, x, running_mean, running_var, weight, bias, False,
                     momentum, eps)
    return (y, _empty(b, st), _empty(b, st))


@aten("native_batch_norm", "_native_batch_norm_legit.default")
def native_batch_norm(b, x, weight, bias, running_mean, running_var,
                      training, momentum, eps):
    return _bn(b, x, weight, bias, running_mean, running_var, training,
               momentum, eps)


@aten("_native_batch_norm_legit.no_stats")
def native_batch_norm_no_stats(b, x, weight, bias, training, momentum, eps):
    return _bn(b, x, weight, bias, None, None, True, momentum, eps)


@aten("_native_batch_norm_legit_no_training")
def native_batch_norm_no_training(b, x, weight, bias, running_mean,
                                  running_var, momentum, eps):
    return _bn(b, x, weight, bias, running_mean, running_var, False,
               momentum, eps)


@aten("native_batch_norm_backward")
def native_batch_norm_backward(b, grad, x, weight, running_mean, running_var,
                               save_mean, save_invstd, train, eps,
                               output_mask):
    """Training mode: kt.batch_norm_backward. Evaluation mode: the
    running statistics are constants, so grad_input = grad * weight *
    rsqrt(running_var + eps), grad_weight = sum(grad * xhat), grad_bias =
    sum(grad)."""
    grad = _t(b, grad, "native_batch_norm_backward")
    x = _t(b, x, "native_batch_norm_backward")
    if not train:
        C = x.shape[1]
        bshape = [1, C] + [1] * (x.ndim - 2)
        inv = _un(b, "rsqrt", O.add(b, O.cast(b, running_var, x.dtype),
                                    float(eps)))
        invb = O.reshape(b, inv, bshape)
        meanb = O.reshape(b, O.cast(b, running_mean, x.dtype), bshape)
        xhat = O.mul(b, O.sub(b, x, meanb), invb)
        scale = invb if weight is None else O.mul(
            b, invb, O.reshape(b, O.cast(b, weight, x.dtype), bshape))
        gi = O.mul(b, grad, scale)
        dims = [0] + list(range(2, x.ndim))
        gw = O.sum_(b, O.mul(b, grad, xhat), dims)
        gb = O.sum_(b, grad, dims)
        return tuple(v if m else None for v, m in
                     zip((gi, gw, gb), output_mask))
    ops = [grad, x, save_mean, save_invstd]
    text = ", ".join(v.name for v in ops)
    if weight is not None:
        ops.append(O.cast(b, weight, x.dtype))
        text += " weight %s" % ops[-1].name
    C = x.shape[1]
    gi, gw, gb = b.op("batch_norm_backward", ops, operand_text=text,
                      results=[(x.shape, x.dtype), ([C], x.dtype),
                               ([C], x.dtype)])
    return tuple(v if m else None for v, m in zip((gi, gw, gb), output_mask))


def _ln_stats(b, x, axis):
    dims = list(range(axis, x.ndim))
    st = x.dtype
    mean = O.mean(b, x, dims, True)
    var = O.var(b, x, dims, None, True, correction=0)
    return dims, mean, var, st


@aten("native_layer_norm")
def native_layer_norm(b, x, normalized_shape, weight, bias, eps):
    """kt.layer_norm for the output; mean and rstd (shape: the outer dims
    then 1s) by kt.mean and kt.var (biased) over the normalized dims."""
    x = _t(b, x, "native_layer_norm")
    y = O.layer_norm(b, x, normalized_shape, weight, bias, eps)
    axis = x.ndim - len(normalized_shape)
    _, mean, var, _ = _ln_stats(b, x, axis)
    rstd = _un(b, "rsqrt", O.add(b, var, float(eps)))
    return (y, mean, rstd)


@aten("native_layer_norm_backward")
def native_layer_norm_backward(b, grad, x, normalized_shape, mean, rstd,
                               weight, bias, output_mask):
    """xhat = (x - mean) * rstd, g = grad * weight, M the normalized
    elements: grad_input = rstd / M * (M * g - sum(g) - xhat *
    sum(g * xhat)) (sums over the normalized dims); grad_weight =
    sum(grad * xhat), grad_bias = sum(grad) over the outer dims."""
    grad = _t(b, grad, "native_layer_norm_backward")
    x = _t(b, x, "native_layer_norm_backward")
    axis = x.ndim - len(normalized_shape)
    inner = list(range(axis, x.ndim))
    outer = list(range(axis))
    M = 1
    for d in inner:
        M *= b.static(x.shape[d], "a normalized dim")
    mean = O.cast(b, mean, x.dtype)
    rstd = O.cast(b, rstd, x.dtype)
    xhat = O.mul(b, O.sub(b, x, mean), rstd)
    g = grad if weight is None else O.mul(b, grad, weight)
    gi = gw = gb = None
    if output_mask[0]:
        s1 = O.sum_(b, g, inner, True)
        s2 = O.sum_(b, O.mul(b, g, xhat), inner, True)
        t = O.sub(b, O.sub(b, O.mul(b, g, float(M)), s1),
                  O.mul(b, xhat, s2))
        gi = O.mul(b, t, O.div(b, rstd, float(M)))
    if output_mask[1] and weight is not None:
        gw = O.sum_(b, O.mul(b, grad, xhat), outer) if outer else O.mul(
            b, grad, xhat)
    if output_mask[2] and bias is not None:
        gb = O.sum_(b, grad, outer) if outer else O.copy_of(grad)
    return (gi, gw, gb)


@aten("native_group_norm")
def native_group_norm(b, x, weight, bias, N, C, HxW, group, eps):
    """x as [N, G, C/G * HxW]: mean and biased variance per (n, g), rstd =
    rsqrt(var + eps), normalized, back to x's shape, then the per-channel
    affine. Returns (out, mean [N, G], rstd [N, G])."""
    x = _t(b, x, "native_group_norm")
    if not x.dtype.is_floating_point:
        raise b.error("native_group_norm of a %s tensor" % x.dtype)
    N = b.static(N, "N")
    C = b.static(C, "C")
    G = b.static(group, "group")
    # f16/bf16: computed in f32, each result rounded once (PyTorch's CPU
    # kernel computes in float; in the low dtype the output was up to 5%
    # off, the OpInfo sweep's bf16 samples).
    dt = x.dtype
    ct = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    x = O.cast(b, x, ct)
    xs = O.reshape(b, x, [N, G, -1])
    mean = O.mean(b, xs, [2], True)
    var = O.var(b, xs, [2], None, True, correction=0)
    if x.dtype != torch.float64:
        # PyTorch's CPU group_norm sums the squared deviations in float:
        # past float's range the variance is inf (rstd 0, the output 0),
        # where kt.var (double, as torch.var) stays finite (issue 15,
        # docs/debugging.md).
        n = b.static(xs.shape[2], "a group's size")
        m2 = O.mul(b, O.cast(b, var, torch.float32), float(n))
        var = O.where(b, _eq(b, m2, math.inf), math.inf, var)
    rstd = _un(b, "rsqrt", O.add(b, var, float(eps)))
    y = O.reshape(b, O.mul(b, O.sub(b, xs, mean), rstd), list(x.shape))
    cshape = [1, C] + [1] * (x.ndim - 2)
    if weight is not None:
        y = O.mul(b, y, O.reshape(b, O.cast(b, weight, ct), cshape))
    if bias is not None:
        y = O.add(b, y, O.reshape(b, O.cast(b, bias, ct), cshape))
    return (O.cast(b, y, dt), O.cast(b, O.reshape(b, mean, [N, G]), dt),
            O.cast(b, O.reshape(b, rstd, [N, G]), dt))


@aten("native_group_norm_backward")
def native_group_norm_backward(b, grad, x, mean, rstd, weight, N, C, HxW,
                               group, output_mask):
    """Per (n, g) as layer norm over the group's C/G * HxW elements, with
    g = grad * weight[c]: grad_input = rstd / M * (M * g - sum(g) - xhat *
    sum(g * xhat)); grad_weight[c] = sum over n and HxW of grad * xhat;
    grad_bias[c] = sum of grad."""
    grad = _t(b, grad, "native_group_norm_backward")
    x = _t(b, x, "native_group_norm_backward")
    N = b.static(N, "N")
    C = b.static(C, "C")
    G = b.static(group, "group")
    M = (C // G) * b.static(HxW, "HxW")
    cshape = [1, C] + [1] * (x.ndim - 2)
    m = O.reshape(b, O.cast(b, mean, x.dtype), [N, G, 1])
    r = O.reshape(b, O.cast(b, rstd, x.dtype), [N, G, 1])
    xs = O.reshape(b, x, [N, G, -1])
    xhat = O.mul(b, O.sub(b, xs, m), r)
    g = grad if weight is None else O.mul(
        b, grad, O.reshape(b, O.cast(b, weight, x.dtype), cshape))
    gs = O.reshape(b, g, [N, G, -1])
    gi = gw = gb = None
    if output_mask[0]:
        s1 = O.sum_(b, gs, [2], True)
        s2 = O.sum_(b, O.mul(b, gs, xhat), [2], True)
        t = O.sub(b, O.sub(b, O.mul(b, gs, float(M)), s1),
                  O.mul(b, xhat, s2))
        gi = O.reshape(b, O.mul(b, t, O.div(b, r, float(M))),
                       list(x.shape))
    dims = [0] + list(range(2, x.ndim))
    if output_mask[1]:
        xh = O.reshape(b, xhat, list(x.shape))
        gw = O.sum_(b, O.mul(b, grad, xh), dims)
    if output_mask[2]:
        gb = O.sum_(b, grad, dims)
    return (gi, gw, gb)


@aten("native_dropout")
def native_dropout(b, x, p, train):
    """(out, mask): in training with p > 0 the mask is kt.rand >= p (a
    seed argument of its own, drawn per call) and out = x * mask / (1 -
    p); otherwise out is x and the mask all true."""
    x = _t(b, x, "native_dropout")
    p = float(p)
    if not train or p == 0:
        return (O.copy_of(x), O.full(b, x.shape, True, torch.bool))
    if p == 1:
        return (O.full(b, x.shape, 0, x.dtype),
                O.full(b, x.shape, False, torch.bool))
    size = [b.static(s, "a dropout size") for s in x.shape]
    u = b.op("rand", [b.seed_arg()], {"size": size, "dtype": x.dtype},
             shape=size, dtype=x.dtype)
    mask = _ge(b, u, p)
    out = O.mul(b, O.mul(b, x, O.cast(b, mask, x.dtype)), 1.0 / (1.0 - p))
    return (out, mask)


# ------------------------------------------------------------ backward


@aten("threshold_backward")
def threshold_backward(b, grad, x, threshold):
    """grad where x > threshold, else 0 (ReLU's backward)."""
    grad = _t(b, grad, "threshold_backward")
    return O.where(b, _le(b, x, threshold), O.full(b, [], 0, grad.dtype),
                   grad)


@aten("select_backward")
def select_backward(b, grad, input_sizes, dim, index):
    """grad placed at `index` of dim in zeros of the input's sizes."""
    grad = _t(b, grad, "select_backward")
    zeros = O.full(b, input_sizes, 0, grad.dtype)
    return select_scatter(b, zeros, grad, dim, index)


@aten("slice_backward")
def slice_backward(b, grad, input_sizes, dim, start, end, step):
    """grad placed at the slice of dim in zeros of the input's sizes."""
    grad = _t(b, grad, "slice_backward")
    zeros = O.full(b, input_sizes, 0, grad.dtype)
    return slice_scatter(b, zeros, grad, dim, start, end, step)


@aten("new_zeros", "new_empty")
def new_zeros(b, x, size, *, dtype=None, layout=None, device=None,
              pin_memory=None):
    O._check_device(b, device)
    return O.full(b, size, 0, dtype or _t(b, x, "new_zeros").dtype)


@aten("_softmax_backward_data")
def softmax_backward_data(b, grad, output, dim, input_dtype):
    """grad_input = y * (grad - sum(grad * y, dim))."""
    s = O.sum_(b, O.mul(b, grad, output), [dim], True)
    r = O.mul(b, output, O.sub(b, grad, s))
    return O.cast(b, r, input_dtype) if r.dtype != input_dtype else r


@aten("_log_softmax_backward_data")
def log_softmax_backward_data(b, grad, output, dim, input_dtype):
    """grad_input = grad - exp(y) * sum(grad, dim)."""
    s = O.sum_(b, grad, [dim], True)
    r = O.sub(b, grad, O.mul(b, _un(b, "exp", output), s))
    return O.cast(b, r, input_dtype) if r.dtype != input_dtype else r


# Activation and loss backward ops of AOT graphs (PyTorch's derivative
# formulas, derivatives.yaml / the CPU kernels).


def _zero_like(b, x):
    return O.full(b, [], 0, x.dtype)


@aten("sigmoid_backward")
def sigmoid_backward(b, grad, y):
    """grad * y * (1 - y) (y: the forward's output)."""
    return O.mul(b, grad, O.mul(b, y, O.rsub(b, y, 1.0)))


@aten("tanh_backward")
def tanh_backward(b, grad, y):
    """grad * (1 - y^2) (y: the forward's output)."""
    return O.mul(b, grad, O.rsub(b, O.mul(b, y, y), 1.0))


@aten("silu_backward")
def silu_backward(b, grad, x):
    """grad * s * (1 + x * (1 - s)), s = sigmoid(x)."""
    sg = _un(b, "sigmoid", x)
    return O.mul(b, grad, O.mul(b, sg, O.add(
        b, O.mul(b, x, O.rsub(b, sg, 1.0)), 1.0)))


@aten("gelu_backward")
def gelu_backward(b, grad, x, *, approximate="none"):
    """PyTorch's GeluBackward kernels: exact (erf) and tanh forms."""
    if approximate == "tanh":
        beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kappa = 0.044715
        xsq = O.mul(b, x, x)
        inner = O.mul(b, O.add(b, x, O.mul(b, O.mul(b, xsq, x), kappa)),
                      beta)
        th = _un(b, "tanh", inner)
        left = O.mul(b, x, 0.5)
        left_d = O.mul(b, O.add(b, th, 1.0), 0.5)
        right_d = O.mul(b, O.mul(b, left, O.rsub(b, O.mul(b, th, th), 1.0)),
                        O.mul(b, O.add(b, O.mul(b, xsq, 3 * kappa), 1.0),
                              beta))
        return O.mul(b, grad, O.add(b, left_d, right_d))
    if approximate != "none":
        raise b.error("gelu_backward with approximate=%r" % approximate)
    cdf = O.mul(b, O.add(b, _un(b, "erf", O.mul(b, x, 1 / math.sqrt(2.0))),
                         1.0), 0.5)
    pdf = O.mul(b, _un(b, "exp", O.mul(b, O.mul(b, x, x), -0.5)),
                1 / math.sqrt(2 * math.pi))
    return O.mul(b, grad, O.add(b, cdf, O.mul(b, x, pdf)))


@aten("hardtanh_backward")
def hardtanh_backward(b, grad, x, min_val, max_val):
    """grad inside (min_val, max_val), 0 at and beyond the bounds."""
    out = _logical_or(b, _le(b, x, min_val), _ge(b, x, max_val))
    return O.where(b, out, _zero_like(b, grad), grad)


@aten("leaky_relu_backward")
def leaky_relu_backward(b, grad, x, negative_slope, self_is_result):
    return O.where(b, _gt(b, x, 0), grad, O.mul(b, grad, negative_slope))


@aten("elu_backward")
def elu_backward(b, grad, alpha, scale, input_scale, is_result, x):
    """x is the forward's output when is_result (ELU in place)."""
    alpha, scale, input_scale = float(alpha), float(scale), float(
        input_scale)
    if is_result:
        neg = O.mul(b, O.mul(b, grad, input_scale),
                    O.add(b, x, alpha * scale))
    else:
        neg = O.mul(b, O.mul(b, grad, input_scale * alpha * scale),
                    _un(b, "exp", O.mul(b, x, input_scale)))
    return O.where(b, _le(b, x, 0), neg, O.mul(b, grad, scale))


aten("hardswish")(_same("hardswish"))
aten("hardsigmoid")(_same("hardsigmoid"))


@aten("hardswish_backward")
def hardswish_backward(b, grad, x):
    """0 below -3, grad * (x / 3 + 0.5) up to 3, grad above."""
    mid = O.mul(b, grad, O.add(b, O.div(b, x, 3.0), 0.5))
    return O.where(b, _lt(b, x, -3.0), _zero_like(b, grad),
                   O.where(b, _le(b, x, 3.0), mid, grad))


@aten("hardsigmoid_backward")
def hardsigmoid_backward(b, grad, x):
    """grad / 6 strictly inside (-3, 3), else 0."""
    inside = _logical_and(b, _gt(b, x, -3.0), _lt(b, x, 3.0))
    return O.where(b, inside, O.div(b, grad, 6.0), _zero_like(b, grad))


@aten("softplus")
def softplus(b, x, beta=1, threshold=20):
    """x where x * beta > threshold, else log1p(exp(x * beta)) / beta."""
    x = _float(b, _t(b, x, "softplus"))
    xb = O.mul(b, x, float(beta))
    soft = O.div(b, _un(b, "log1p", _un(b, "exp", xb)), float(beta))
    return O.where(b, _gt(b, xb, float(threshold)), x, soft)


@aten("softplus_backward")
def softplus_backward(b, grad, x, beta, threshold):
    xb = O.mul(b, x, float(beta))
    z = _un(b, "exp", xb)
    soft = O.mul(b, grad, O.div(b, z, O.add(b, z, 1.0)))
    return O.where(b, _gt(b, xb, float(threshold)), grad, soft)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(b, r):
    if r not in _REDUCTIONS:
        raise b.error("a loss reduction %r (0 none, 1 mean, 2 sum)" % (r,))
    return _REDUCTIONS[r]


@aten("mse_loss")
def mse_loss(b, x, y, reduction=1):
    d = O.sub(b, x, y)
    sq = O.mul(b, d, d)
    r = _reduction(b, reduction)
    return sq if r == "none" else (O.mean(b, sq) if r == "mean"
                                   else O.sum_(b, sq))


@aten("mse_loss_backward")
def mse_loss_backward(b, grad, x, y, reduction):
    """2 (x - y) grad (divided by the element count for mean)."""
    d = O.mul(b, O.sub(b, x, y), 2.0)
    r = _reduction(b, reduction)
    if r == "mean":
        n = 1
        for s_ in x.shape:
            n *= b.static(s_, "mse_loss's element count")
        d = O.div(b, d, float(max(n, 1)))
    return O.mul(b, d, grad)


def _nll_parts(b, x, target, weight, ignore_index):
    """(picked log-probabilities, per-target weights with ignored targets
    0) for input [N, C] or [C] (target [N] or 0-d)."""
    x = _t(b, x, "nll_loss")
    cdim = 1 if x.ndim == 2 else 0
    if x.ndim not in (1, 2):
        raise b.error("aten.nll_loss with a %d-D input (nll_loss2d's "
                      "spatial form is not converted)" % x.ndim)
    keep = _ne(b, target, ignore_index)
    safe = O.where(b, keep, target, 0)
    if x.ndim == 2:
        picked = O.squeeze(b, O.gather(b, x, 1, O.unsqueeze(b, safe, 1)), 1)
    else:
        picked = O.reshape(b, O.index_select(
            b, x, 0, O.reshape(b, safe, [1])), [])
    w = O.cast(b, keep, x.dtype)
    if weight is not None:
        w = O.mul(b, w, O.index_select(b, O.cast(b, weight, x.dtype), 0,
                                       O.reshape(b, safe, [-1])) if
                  safe.ndim == 1 else O.reshape(b, O.index_select(
                      b, O.cast(b, weight, x.dtype), 0,
                      O.reshape(b, safe, [1])), []))
    return x, cdim, safe, picked, w


@aten("nll_loss_forward")
def nll_loss_forward(b, x, target, weight, reduction, ignore_index):
    """(output, total_weight): -x[i, target[i]] * w[target[i]], ignored
    targets 0; mean divides by the total weight (the sum of the weights
    of the targets not ignored)."""
    x, _, _, picked, w = _nll_parts(b, x, target, weight, ignore_index)
    loss = O.neg(b, O.mul(b, picked, w))
    total = O.sum_(b, w)
    r = _reduction(b, reduction)
    if r == "none":
        return (loss, O.full(b, [], 0, x.dtype))
    s_ = O.sum_(b, loss)
    return (O.div(b, s_, total) if r == "mean" else s_, total)


@aten("nll_loss_backward")
def nll_loss_backward(b, grad, x, target, weight, reduction, ignore_index,
                      total_weight):
    """-w[target] * grad (divided by total_weight for mean) at each
    target's class, 0 elsewhere (a comparison with the class index, no
    scatter)."""
    x, cdim, safe, _, w = _nll_parts(b, x, target, weight, ignore_index)
    r = _reduction(b, reduction)
    g = O.cast(b, grad, x.dtype)
    if r == "mean":
        g = O.div(b, g, O.cast(b, total_weight, x.dtype))
    val = O.neg(b, O.mul(b, w, g))
    C = x.shape[cdim]
    classes = O.arange(b, C)
    if x.ndim == 2:
        hit = _eq(b, O.unsqueeze(b, safe, 1), O.unsqueeze(b, classes, 0))
        val = O.unsqueeze(b, val, 1)
    else:
        hit = _eq(b, classes, safe)
    return O.where(b, hit, val, _zero_like(b, x))


# ------------------------------------------------------------ distances


def _pair_dist(b, d, p):
    """||d||_p over the last dim."""
    a = _un(b, "abs", d)
    if p == 0:
        return O.sum_(b, O.cast(b, _ne(b, a, 0), d.dtype), [-1])
    if math.isinf(p):
        return O.amax(b, a, [-1])
    if p == 1:
        return O.sum_(b, a, [-1])
    if p == 2:
        return O.masked_root(b, O.sum_(b, O.mul(b, a, a), [-1]))
    return O.masked_root(b, O.sum_(b, O.pow_(b, a, float(p)), [-1]), p)


@aten("_cdist_forward")
def cdist_forward(b, x1, x2, p, compute_mode):
    """The p-norm of every difference x1[..., i, :] - x2[..., j, :] (a
    broadcast difference, then the norm over the last dim)."""
    x1 = _t(b, x1, "_cdist_forward")
    d = O.sub(b, O.unsqueeze(b, x1, -2), O.unsqueeze(b, x2, -3))
    return _pair_dist(b, d, float(p))


@aten("_pdist_forward")
def pdist_forward(b, x, p=2):
    """The p-norm of x[i] - x[j] for i < j, row-major: the pairs are
    constants, the rows picked by kt.index_select."""
    x = _t(b, x, "_pdist_forward")
    n = b.static(x.shape[0], "pdist's row count")
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return O.full(b, [0], 0, x.dtype)
    ii = b.constant_tensor(torch.tensor([q[0] for q in pairs]),
                           limit=1 << 20)
    jj = b.constant_tensor(torch.tensor([q[1] for q in pairs]),
                           limit=1 << 20)
    d = O.sub(b, O.index_select(b, x, 0, ii), O.index_select(b, x, 0, jj))
    return _pair_dist(b, d, float(p))


@aten("col2im")
def col2im(b, x, output_size, kernel_size, dilation, padding, stride):
    """F.fold: each column's values added at their window positions of
    the padded output (kt.scatter, reduce sum, with constant positions),
    then the padding cut off."""
    x = _t(b, x, "col2im")
    batched = x.ndim == 3
    if not batched:
        x = O.unsqueeze(b, x, 0)
    H, W = [b.static(v, "an output size") for v in output_size]
    kh, kw = [b.static(v, "a kernel size") for v in kernel_size]
    dh, dw = [b.static(v, "a dilation") for v in dilation]
    ph, pw = [b.static(v, "a padding") for v in padding]
    sh, sw = [b.static(v, "a stride") for v in stride]
    N = x.shape[0]
    CK = b.static(x.shape[1], "col2im's channel dim")
    L = b.static(x.shape[2], "col2im's block count")
    C = CK // (kh * kw)
    Hp, Wp = H + 2 * ph, W + 2 * pw
    bh = (Hp - (dh * (kh - 1) + 1)) // sh + 1
    bw = (Wp - (dw * (kw - 1) + 1)) // sw + 1
    if bh * bw != L:
        raise b.error("col2im: %d blocks given, the sizes give %d"
                      % (L, bh * bw))
    pos = torch.empty(kh * kw, L, dtype=torch.int64)
    for i in range(kh):
        for j in range(kw):
            for r in range(bh):
                for c in range(bw):
                    pos[i * kw + j, r * bw + c] = (
                        (r * sh + i * dh) * Wp + c * sw + j * dw)
    posv = b.constant_tensor(pos.reshape(-1), limit=1 << 20)
    cols = O.reshape(b, x, [N, C, kh * kw * L])
    idx = O.expand(b, O.reshape(b, posv, [1, 1, kh * kw * L]),
                   [N, C, kh * kw * L])
    out = O.full(b, [N, C, Hp * Wp], 0, x.dtype)
    out = O.scatter_op(b, out, 2, idx, cols, "sum", True, "col2im")
    out = O.reshape(b, out, [N, C, Hp, Wp])
    out = O.slice_dim(b, O.slice_dim(b, out, 2, ph, ph + H, 1), 3, pw,
                      pw + W, 1)
    return out if batched else O.squeeze(b, out, 0)


def _owns_contiguous_storage(b, node):
    """Whether the FX node's tensor is the whole of its storage, laid out
    contiguously from offset 0: a graph input that is, or the result of an
    operator that returns a new tensor (no alias in its schema) with
    contiguous strides (make_fx's tensor_meta)."""
    import torch.fx as fx
    if not isinstance(node, fx.Node):
        return False
    if node.op == "placeholder":
        v = b.env.get(node)
        ex = v.arg.example if isinstance(v, TensorVal) and v.arg else None
        return (ex is not None and ex.is_contiguous() and
                ex.storage_offset() == 0 and
                ex.storage().size() == ex.numel())
    meta = node.meta.get("tensor_meta")
    t = node.target
    if node.op != "call_function" or meta is None or \
            not isinstance(t, torch._ops.OpOverload):
        return False
    rets = t._schema.returns
    if not rets or rets[0].alias_info is not None:
        return False
    shape = list(meta.shape)
    want, acc = [], 1
    for n in reversed(shape):
        want.append(acc)
        acc *= n
    want.reverse()
    return all(st == w for st, w, n in zip(meta.stride, want, shape)
               if n != 1)


def _storage_base(b, node):
    """(base node, view nodes) where `node` is a chain of ATen view ops
    (slice, select, t, transpose, permute, view, expand, unsqueeze,
    diagonal, ...: an OpOverload whose result aliases its first argument
    without writing it; getitem of split/unbind) with constant arguments
    over a base that owns its storage contiguously
    (_owns_contiguous_storage); None when it is not."""
    import operator
    import torch.fx as fx
    from torch.utils import _pytree as pytree
    chain = []
    while not _owns_contiguous_storage(b, node):
        if not isinstance(node, fx.Node) or node.op != "call_function" or \
                len(chain) > 64:
            return None
        t = node.target
        if t is operator.getitem:
            pass
        elif isinstance(t, torch._ops.OpOverload):
            args = t._schema.arguments
            rets = t._schema.returns
            if not args or not rets or args[0].alias_info is None or \
                    args[0].alias_info.is_write or \
                    rets[0].alias_info is None:
                return None
        else:
            return None
        if not node.args or not isinstance(node.args[0], fx.Node) or any(
                isinstance(a, fx.Node) for a in pytree.tree_flatten(
                    (list(node.args[1:]), node.kwargs))[0]):
            return None
        chain.append(node)
        node = node.args[0]
    return node, chain[::-1]


def _dense_order(node):
    """For the FX node of an operator that returns a new tensor (no alias in
    its schema) whose make_fx strides (tensor_meta) are contiguous strides
    of its dims in some order (dense, non-overlapping: `x.t().clone()`,
    `x.t().exp()` keep the transpose's): those dims from the largest stride
    to the smallest, so its storage is its value permuted that way and
    flattened; None otherwise."""
    import torch.fx as fx
    if not isinstance(node, fx.Node) or node.op != "call_function":
        return None
    meta = node.meta.get("tensor_meta")
    t = node.target
    if meta is None or not isinstance(t, torch._ops.OpOverload):
        return None
    rets = t._schema.returns
    if not rets or rets[0].alias_info is not None:
        return None
    shape, stride = list(meta.shape), list(meta.stride)
    if len(stride) != len(shape):
        return None
    order = sorted(range(len(shape)), key=lambda d: (-stride[d], d))
    acc = 1
    for d in reversed(order):
        if shape[d] != 1 and stride[d] != acc:
            return None
        acc *= shape[d]
    return order


@aten("as_strided")
def as_strided(b, x, size, stride, storage_offset=None):
    """A strided read of the storage x views: x owns its storage
    contiguously, or is a chain of view ops (_storage_base) over a tensor
    that does. The storage positions are constants: the view chain
    replayed on torch.arange of the base (a real view of it), then
    torch.as_strided of that, read with kt.index_select from the base
    flattened. The result is a view (in-place writes to it are refused).
    Anything else (a view through an op with data-dependent arguments, a
    non-contiguous result) is refused: Kiln's values have no storage to
    read through."""
    x = _t(b, x, "as_strided")
    found = _storage_base(b, b.node.args[0])
    if found is None:
        raise b.error("aten.as_strided of a view whose storage Kiln "
                      "cannot trace to a contiguous base (a non-contiguous "
                      "result, a view of an in-place op's result, a view "
                      "op with tensor arguments): Kiln's values have no "
                      "storage to read through")
    base_node, chain = found
    base = b.env[base_node]
    if not isinstance(base, TensorVal):
        raise b.error("aten.as_strided of a non-tensor base")
    shape = [b.static(d, "as_strided's base size") for d in base.shape]
    n = 1
    for d in shape:
        n *= d
    size = [b.static(v, "an as_strided size") for v in size]
    stride = [b.static(v, "an as_strided stride") for v in stride]
    off = None if storage_offset is None else b.static(
        storage_offset, "a storage offset")
    if any(v < 0 for v in size + stride) or (off or 0) < 0:
        raise b.error("aten.as_strided with a negative size, stride or "
                      "offset")
    view = torch.arange(n).reshape(shape)
    for nd in chain:
        view = nd.target(view, *nd.args[1:], **nd.kwargs)
    first = view.storage_offset() if off is None else off
    last = first + sum((n_ - 1) * st for n_, st in zip(size, stride))
    if 0 not in size and last >= n:
        raise b.error("aten.as_strided reads past the end of its input's "
                      "storage (position %d of %d)" % (last, n))
    pos = torch.as_strided(view, size, stride, first)
    posv = b.constant_tensor(pos.reshape(-1).contiguous(), limit=1 << 20)
    r = O.reshape(b, O.index_select(b, O.reshape(b, base, [-1]), 0, posv),
                  size)
    return TensorVal(r.name, r.shape, r.dtype, is_view=True, base=base)


@aten("_local_scalar_dense")
def local_scalar_dense(b, x):
    """x.item(): the one element of x as a Python number, a 0-d value that
    later ops read as a number (PyTorch's promotion of Python scalars) and
    that the Python layer hands back as an int, float or bool where it is an
    output (O.python_scalar)."""
    return O.python_scalar(b, x)


# In-place overloads that change a tensor's sizes, strides or storage
# (packet names), not just its values.
_LAYOUT_IN_PLACE = _SHAPE_IN_PLACE | {"resize_", "resize_as_", "as_strided_",
                                      "set_", "squeeze_"}


def _written_in_place_from(node):
    """The node whose tensor (storage, sizes, strides) `node`'s is: back
    through in-place overloads that only write values (`add_`, `fill_`,
    `copy_`: the tensor they return is their first argument)."""
    import torch.fx as fx
    while isinstance(node, fx.Node) and node.op == "call_function" and \
            isinstance(node.target, torch._ops.OpOverload) and \
            node.args and isinstance(node.args[0], fx.Node):
        t = node.target
        args, rets = t._schema.arguments, t._schema.returns
        if not args or not rets or args[0].alias_info is None or \
                not args[0].alias_info.is_write or \
                rets[0].alias_info is None or \
                t.overloadpacket.__name__ in _LAYOUT_IN_PLACE:
            break
        node = node.args[0]
    return node


def _storage_read_later(node, base_node):
    """Whether a tensor sharing base_node's storage (base_node itself, or a
    view or in-place result of it, transitively) other than `node` is read
    by a node after `node`, or base_node is a graph input (its caller
    shares the storage)."""
    if base_node.op == "placeholder":
        return True
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    at = order[node]
    seen, todo = {base_node}, [base_node]
    while todo:
        m = todo.pop()
        for u in m.users:
            if u is node:
                continue
            if order[u] > at:
                return True
            t = u.target
            aliases = isinstance(t, torch._ops.OpOverload) and \
                t._schema.returns and \
                t._schema.returns[0].alias_info is not None and \
                u.args and u.args[0] is m
            if (aliases or getattr(t, "__name__", "") == "getitem") and \
                    u not in seen:
                seen.add(u)
                todo.append(u)
    return False


# resize_'s memory formats that lay the storage out channels-last, and the
# rank PyTorch requires for each.
_CHANNELS_LAST = {torch.channels_last: 4, torch.channels_last_3d: 5}


@aten("resize_")
def resize_(b, x, size, memory_format=None):
    """x.resize_(size, memory_format=) as a value (PyTorch's rules): the
    same sizes without a memory format change nothing (not even the
    strides); otherwise x gets `size` with the format's strides
    (contiguous, or channels-last) over its storage from its storage
    offset: the storage's elements in order (the first numel of a
    contiguous x, or of the contiguous tensor a view x is taken of), then
    new ones where the storage grows, which PyTorch leaves uninitialized and
    Kiln fills with zeros (do not read them). The storage is traced as
    aten.as_strided traces it (_storage_base; value-only in-place ops on
    the way are the same tensor). Refused: a storage Kiln cannot trace, a
    graph input whose size or strides would change (the caller's tensor),
    a torch-level graph (nodes after it read the old tensor), a graph that
    reads the old node after it, and PyTorch's errors (negative sizes,
    preserve_format, a channels-last format of the wrong rank). The result
    is a value of its own; an in-place write to it is refused while
    another tensor of the same storage is read later (they would share
    it)."""
    import torch.fx as fx
    from ._symbolic import same
    x = _t(b, x, "resize_")
    node = b.node
    src = node.args[0] if node.args else None
    if not isinstance(node.target, torch._ops.OpOverload) or \
            not isinstance(src, fx.Node):
        raise b.error("Tensor.resize_ outside an ATen-level graph: the "
                      "resized tensor is read by its old node later (a "
                      "graph break runs it eagerly)")
    n = node.next
    while n.op != "root":
        if src in n.all_input_nodes:
            raise b.error("aten.resize_: %s reads the tensor resized by "
                          "%s through the node before the resize" % (
                              n.name, node.name))
        n = n.next
    size = list(size) if isinstance(size, (list, tuple)) else [size]
    if memory_format not in (None, torch.contiguous_format) and \
            memory_format not in _CHANNELS_LAST:
        raise b.error("aten.resize_: Unsupported memory format %s" % (
            memory_format,))
    rank = _CHANNELS_LAST.get(memory_format)
    if rank is not None and len(size) != rank:
        raise b.error("aten.resize_: required rank %d tensor to use %s "
                      "format" % (rank, str(memory_format).split(".")[-1]))
    if memory_format is None and len(size) == x.ndim and \
            all(same(a, d) for a, d in zip(size, x.shape)):
        # The same sizes: nothing changes (not even the strides).
        return O.copy_of(x)
    size = [b.static(d, "a resize_ size") for d in size]
    if any(not isinstance(d, int) or d < 0 for d in size):
        raise b.error("aten.resize_: a negative size in %s (PyTorch 1.13 "
                      "raises 'numel: integer multiplication overflow')"
                      % (size,))
    shape = [b.static(d, "the size of a tensor resized") for d in x.shape]
    if size == shape and memory_format is None:
        return O.copy_of(x)
    store = _written_in_place_from(src)
    if store.op == "placeholder" and (size != shape or rank is not None):
        raise b.error("aten.resize_ of the graph input %s from %s to %s%s: "
                      "Kiln cannot change the size or strides of the "
                      "caller's tensor" % (
                          store.name, shape, size, "" if rank is None
                          else " (%s)" % memory_format))
    stores = b.__dict__.setdefault("_resize_storage", {})
    flat = None
    if store in stores:
        # resize_ of a resize_'s result (through value-only in-place ops):
        # the storage that resize_ left (it never shrinks), its window
        # [off, off + numel) holding the tensor's current value in storage
        # order.
        prev_flat, total, off, base_node, order = stores[store]
        cur = O.reshape(b, x if order is None else O.permute(b, x, order),
                        [-1])
        n = 1
        for d in shape:
            n *= d
        parts = [O.slice_dim(b, prev_flat, 0, 0, off, 1)] if off else []
        parts.append(cur)
        if off + n < total:
            parts.append(O.slice_dim(b, prev_flat, 0, off + n, total, 1))
        flat = parts[0] if len(parts) == 1 else O.cat(b, parts, 0)
        base = None
    else:
        found = _storage_base(b, store)
        order = None if found is not None else _dense_order(store)
        if found is None and order is None:
            raise b.error("aten.resize_ of a tensor whose storage Kiln "
                          "cannot trace to a contiguous base (a view of a "
                          "result with overlapping strides, a view of an "
                          "in-place op's result, a view op with tensor "
                          "arguments): Kiln's values have no storage to "
                          "read through")
        if found is None:
            # A result laid out by its strides (x.t().clone()): its
            # storage is the value permuted to those strides' order.
            base_node, chain = store, []
            base = O.copy_of(O.permute(b, b.env[store], order))
        else:
            base_node, chain = found
            base = x if not chain else b.env[base_node]
        if not isinstance(base, TensorVal):
            raise b.error("aten.resize_ of a non-tensor base")
        bshape = [b.static(d, "the size of a resized tensor's base")
                  for d in base.shape]
        total = 1
        for d in bshape:
            total *= d
        view = torch.arange(total).reshape(bshape)
        for nd in chain:
            view = nd.target(view, *nd.args[1:], **nd.kwargs)
        off = view.storage_offset()
    want = 1
    for d in size:
        want *= d
    # Storage positions off .. off + want - 1: those below `total` hold the
    # storage's values, the others are new (zeros).
    have = max(0, min(want, total - off))
    if flat is None and not (have == want == total and off == 0):
        flat = O.reshape(b, base, [-1])
    if off + want > total:
        # The storage grows (the new elements: zeros in Kiln).
        grown = O.full(b, [off + want - total], 0, x.dtype)
        flat = grown if total == 0 else O.cat(
            b, [flat if flat is not None else O.reshape(b, base, [-1]),
                grown], 0)
    stores[node] = (flat if flat is not None else O.reshape(b, base, [-1]),
                    max(total, off + want), off, base_node,
                    None if rank is None else
                    [0] + list(range(2, rank)) + [1])
    if want == 0:
        return O.full(b, size, 0, x.dtype)
    if flat is None:
        r = base
    else:
        r = O.slice_dim(b, flat, 0, off, off + want, 1)
    if rank is None:
        r = O.copy_of(O.reshape(b, r, size))
    else:
        # Channels-last strides: the storage holds N, spatial dims, C.
        r = O.reshape(b, r, [size[0]] + size[2:] + [size[1]])
        r = O.copy_of(O.permute(b, r, [0, rank - 1] +
                                list(range(1, rank - 1))))
        r.layout = "permuted"
    if _storage_read_later(node, base_node):
        b.no_write[id(r)] = (
            "an in-place write to the result of aten.resize_ (%s), whose "
            "storage another tensor read later shares: Kiln's resized value "
            "is a copy" % node.name)
    return r


@aten("resize_as_")
def resize_as_(b, x, other, memory_format=None):
    """x.resize_as_(other): aten.resize_ to other's sizes (its rules and
    refusals)."""
    other = _t(b, other, "resize_as_'s template")
    return resize_(b, x, list(other.shape), memory_format)


@aten("grid_sampler_2d")
def grid_sampler_2d(b, x, grid, interpolation_mode, padding_mode,
                    align_corners):
    """F.grid_sample on 4-D inputs: bilinear (mode 0) or nearest (1)
    interpolation with zeros (0), border (1) or reflection (2) padding,
    PyTorch's unnormalization (align_corners) and reflect_coordinates;
    each corner read by kt.gather on the flattened planes, corners outside
    the input contributing zero. Bicubic is refused."""
    x = _t(b, x, "grid_sampler_2d")
    if interpolation_mode not in (0, 1):
        raise b.error("grid_sampler_2d: bicubic interpolation is not "
                      "supported")
    if padding_mode not in (0, 1, 2):
        raise b.error("grid_sampler_2d: padding mode %r" % (padding_mode,))
    if not x.dtype.is_floating_point:
        raise b.error("grid_sampler_2d of a %s tensor" % x.dtype)
    N, C, H, W = x.shape
    Hi, Wi = [b.static(n, "a grid_sampler input size") for n in (H, W)]
    Ho, Wo = grid.shape[1], grid.shape[2]
    g = O.cast(b, grid, x.dtype)
    gx = O.select(b, g, 3, 0)
    gy = O.select(b, g, 3, 1)

    def unnorm(c, size):
        if align_corners:
            return O.mul(b, O.add(b, c, 1.0), (size - 1) / 2.0)
        return O.div(b, O.sub(b, O.mul(b, O.add(b, c, 1.0), float(size)),
                              1.0), 2.0)

    def reflect(c, twice_low, twice_high):
        """PyTorch's reflect_coordinates: c mirrored at low / 2 and
        high / 2 until it lies between them."""
        if twice_low == twice_high:
            return O.full(b, list(c.shape), 0.0, c.dtype)
        lo = twice_low / 2.0
        span = (twice_high - twice_low) / 2.0
        a = _un(b, "abs", O.sub(b, c, lo))
        extra = O.binary(b, "fmod", a, span)
        flips = _un(b, "floor", O.div(b, a, span))
        even = O.binary(b, "eq", O.binary(b, "fmod", flips, 2.0), 0.0,
                        out_dtype=torch.bool)
        return O.where(b, even, O.add(b, extra, lo),
                       O.add(b, O.rsub(b, extra, span), lo))

    ix, iy = unnorm(gx, Wi), unnorm(gy, Hi)
    if padding_mode == 2:
        # Reflection (PyTorch's compute_coordinates): mirrored at the
        # border pixels' centers (align_corners) or edges, then clipped.
        if align_corners:
            ix = reflect(ix, 0, 2 * (Wi - 1))
            iy = reflect(iy, 0, 2 * (Hi - 1))
        else:
            ix = reflect(ix, -1, 2 * Wi - 1)
            iy = reflect(iy, -1, 2 * Hi - 1)
    if padding_mode in (1, 2):
        ix = O.clamp(b, ix, 0.0, float(Wi - 1))
        iy = O.clamp(b, iy, 0.0, float(Hi - 1))
    xf = O.reshape(b, x, [N, C, Hi * Wi])

    def read(cx, cy):
        """x at integer (float-valued) positions, 0 outside."""
        inside = _logical_and(b, _logical_and(b, _ge(b, cx, 0.0),
                                              _le(b, cx, float(Wi - 1))),
                              _logical_and(b, _ge(b, cy, 0.0),
                                           _le(b, cy, float(Hi - 1))))
        sx = O.cast(b, O.clamp(b, cx, 0.0, float(Wi - 1)), torch.int64)
        sy = O.cast(b, O.clamp(b, cy, 0.0, float(Hi - 1)), torch.int64)
        flat = O.add(b, O.mul(b, sy, Wi), sx)              # N, Ho, Wo
        idx = O.reshape(b, flat, [N, 1, -1])
        idx = O.expand(b, idx, [N, C, idx.shape[-1]])
        v = O.reshape(b, O.gather(b, xf, 2, idx), [N, C, Ho, Wo])
        m = O.cast(b, O.unsqueeze(b, inside, 1), x.dtype)
        return O.mul(b, v, m)

    if interpolation_mode == 1:
        return read(_un(b, "round", ix), _un(b, "round", iy))
    x0, y0 = _un(b, "floor", ix), _un(b, "floor", iy)
    x1, y1 = O.add(b, x0, 1.0), O.add(b, y0, 1.0)
    wx1, wy1 = O.sub(b, ix, x0), O.sub(b, iy, y0)
    wx0, wy0 = O.rsub(b, wx1, 1.0), O.rsub(b, wy1, 1.0)
    out = None
    for cx, cy, w in ((x0, y0, O.mul(b, wx0, wy0)),
                      (x1, y0, O.mul(b, wx1, wy0)),
                      (x0, y1, O.mul(b, wx0, wy1)),
                      (x1, y1, O.mul(b, wx1, wy1))):
        term = O.mul(b, read(cx, cy), O.unsqueeze(b, w, 1))
        out = term if out is None else O.add(b, out, term)
    return out


# ------------------------------------------------------------ sizes


@aten("sym_size.int", "sym_size")
def sym_size(b, x, dim):
    x = _t(b, x, "sym_size")
    return x.shape[O.norm_dim(b, dim, x.ndim)]


@aten("sym_numel")
def sym_numel(b, x):
    x = _t(b, x, "sym_numel")
    return O.prod(list(x.shape))


@aten("sym_stride.int")
def sym_stride(b, x, dim):
    """The contiguous stride (Kiln's values are contiguous)."""
    x = _t(b, x, "sym_stride")
    d = O.norm_dim(b, dim, x.ndim)
    return O.prod(list(x.shape[d + 1:]))


@aten("sym_storage_offset")
def sym_storage_offset(b, x):
    return 0


@aten("sym_is_contiguous")
def sym_is_contiguous(b, x, memory_format=torch.contiguous_format):
    return True


# ------------------- ops the torch-level importer converts (issue 16)
# ATen overloads of ops whose torch-level converter (kiln._ops, _decomp)
# already emits the kt ops: each adapter maps the overload's schema onto
# that converter's arguments.


@aten("all.default")
def all_all(b, x):
    return O.all_(b, x)


@aten("all.dim")
def all_dim(b, x, dim, keepdim=False):
    return O.all_(b, x, dim, keepdim)


@aten("aminmax")
def aminmax(b, x, *, dim=None, keepdim=False):
    r = O.aminmax(b, x, dim=dim, keepdim=keepdim)
    return (r[0], r[1])


@aten("count_nonzero.default", "count_nonzero.dim_IntList")
def count_nonzero(b, x, dim=None):
    # dim_IntList with [] counts over every dim, as PyTorch.
    return O.count_nonzero(b, x, list(dim) if isinstance(
        dim, (list, tuple)) else dim)


aten("floor_divide.default", "floor_divide.Scalar")(_same("floor_divide"))
aten("index_add")(_same("index_add"))
aten("index_copy")(_same("index_copy"))
aten("index_fill.int_Scalar", "index_fill.int_Tensor")(_same("index_fill"))
aten("logcumsumexp")(_same("logcumsumexp"))
for _n in ("trace", "tril", "triu", "pixel_shuffle", "pixel_unshuffle"):
    aten(_n)(_same(_n))


@aten("kthvalue")
def kthvalue(b, x, k, dim=-1, keepdim=False):
    r = O.kthvalue(b, x, k, dim, keepdim)
    return (r[0], r[1])


@aten("round.decimals")
def round_decimals(b, x, *, decimals):
    return _fn("round")(b, x, decimals=decimals)


@aten("searchsorted.Tensor", "searchsorted.Scalar")
def searchsorted(b, seq, v, *, out_int32=False, right=False, side=None,
                 sorter=None):
    return O.FUNCTIONS[torch.searchsorted](
        b, seq, v, out_int32=out_int32, right=right, side=side,
        sorter=sorter)


@aten("bucketize.Tensor", "bucketize.Scalar")
def bucketize(b, v, boundaries, *, out_int32=False, right=False):
    return O.FUNCTIONS[torch.bucketize](b, v, boundaries,
                                        out_int32=out_int32, right=right)


# var / std / var_mean / std_mean: `.default` (unbiased), `.dim` (dims,
# unbiased) and `.correction` (dims, correction: None is 1); dims None or
# [] reduce every dim.
@aten("var.default")
def var_all(b, x, unbiased=True):
    return O.var(b, x, None, unbiased)


def _var_family(name):
    fn = {"std": O.std, "var_mean": O.var_mean,
          "std_mean": O.FUNCTIONS[torch.std_mean]}[name]

    @aten(name + ".default")
    def default(b, x, unbiased=True):
        return fn(b, x, None, unbiased)

    @aten(name + ".dim")
    def dim(b, x, dim=None, unbiased=True, keepdim=False):
        return fn(b, x, list(dim) if dim else None, unbiased, keepdim)

    @aten(name + ".correction")
    def correction(b, x, dim=None, *, correction=None, keepdim=False):
        return fn(b, x, list(dim) if dim else None, None, keepdim,
                  correction=1 if correction is None else correction)


for _n in ("std", "var_mean", "std_mean"):
    _var_family(_n)


# upsample_*: both overloads (`.vec`: exactly one of output_size and
# scale_factors; the other: output_size and optional per-dim scales for
# the kernel), the torch-level converters of torch._C._nn.upsample_*.
for _k in (1, 2, 3):
    aten("upsample_nearest%dd" % _k, "upsample_nearest%dd.vec" % _k)(
        O._aten_upsample("nearest", _k, "upsample_nearest%dd" % _k))
for _name, _mode, _k in (("upsample_linear1d", "linear", 1),
                         ("upsample_bilinear2d", "bilinear", 2),
                         ("upsample_trilinear3d", "linear", 3),
                         ("upsample_bicubic2d", "bicubic", 2)):
    aten(_name, _name + ".vec")(O._aten_upsample(_mode, _k, _name))


@aten("eye.default", "eye.m")
def eye(b, n, m=None, *, dtype=None, layout=None, device=None,
        pin_memory=None):
    """kt.arange of the rows compared with kt.arange of the columns, cast
    to the dtype (exact for every dtype, any size)."""
    O._check_device(b, device)
    n = b.static(n, "eye's n")
    m = n if m is None else b.static(m, "eye's m")
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise b.error("aten.eye: %s must be greater or equal to 0, got %d"
                          % (name, v))
    dtype = dtype or torch.get_default_dtype()
    rows = O.reshape(b, O.arange(b, n), [n, 1])
    return O.cast(b, _eq(b, rows, O.arange(b, m)), dtype)


# Creation ops whose values are a function of their (static) arguments only,
# made by PyTorch itself at import time and inlined as a kt.constant, as
# the torch-level importer evaluates torch.linspace(0, 1, 5) in Python (the
# values are PyTorch's bit for bit, whose CPU kernels mix a scalar and a
# vectorized formula).
_CONSTANT_LIMIT = 1 << 16


def _made_by_pytorch(name, count):
    op = getattr(torch.ops.aten, name.split(".")[0])
    overload = getattr(op, name.split(".")[1])

    def conv(b, *args, dtype=None, layout=None, device=None,
             pin_memory=None, **kwargs):
        O._check_device(b, device)
        args = [b.static(a, "an argument of aten.%s" % name) for a in args]
        kwargs = {k: b.static(v, "an argument of aten.%s" % name)
                  for k, v in kwargs.items()}
        n, what = count(*args, **kwargs)
        if n > _CONSTANT_LIMIT:
            raise b.error("aten.%s with %s = %d: Kiln inlines its values "
                          "as a constant of at most %d elements"
                          % (name, what, n, _CONSTANT_LIMIT))
        if dtype is not None:
            kwargs["dtype"] = dtype
        try:
            t = overload(*args, **kwargs)
        except (RuntimeError, ValueError, TypeError) as e:
            raise b.error("aten.%s: %s" % (name, str(e).split("\n")[0]))
        return b.constant_tensor(t, _CONSTANT_LIMIT * 2)
    return conv


aten("linspace")(_made_by_pytorch(
    "linspace.default", lambda start, end, steps, *a, **k: (steps, "steps")))
aten("logspace")(_made_by_pytorch(
    "logspace.default", lambda start, end, steps, *a, **k: (steps, "steps")))


def _tri_count(row, col, offset=0):
    """The number of (row, col) pairs with col - row <= offset."""
    return (sum(max(0, min(col, r + offset + 1)) for r in range(row)),
            "row x col")


aten("tril_indices")(_made_by_pytorch("tril_indices.default", _tri_count))
aten("triu_indices")(_made_by_pytorch(
    "triu_indices.default",
    lambda row, col, offset=0: (row * col - _tri_count(row, col,
                                                       offset - 1)[0],
                                "row x col")))


aten("_embedding_bag_forward_only")(ATEN["_embedding_bag.default"])


# ------------------------------------------------- not supported (reasons)


unsupported("FFT results are complex, and " + _ir.COMPLEX_REASON,
            "_fft_c2r", "_fft_r2c")

# ATen ops (packet names) whose results are complex: without a converter,
# the FX importer names them with _ir.COMPLEX_REASON (the ops that take a
# complex tensor fail where that tensor would be made, or at the input).
COMPLEX_RESULT_OPS = {"view_as_complex", "polar", "complex", "_fft_r2c",
                      "_fft_c2c", "fft_fft", "fft_rfft", "fft_ifft",
                      "fft_fftn", "fft_rfftn", "stft"}


# ------------------------------------------- torch calls without a converter


def _fits(type_str, v):
    """Whether the Python value `v` (TensorVal, Sym, number, list, ...)
    can be passed as an argument of ATen schema type `type_str`."""
    optional = type_str.endswith("?") or type_str.startswith("Optional[")
    t = type_str.rstrip("?")
    if t.startswith("Optional[") and t.endswith("]"):
        t = t[len("Optional["):-1]
    if v is None:
        return optional
    is_t = isinstance(v, TensorVal)
    if t == "Tensor":
        return is_t
    if t in ("List[Tensor]", "Tensor[]", "List[Optional[Tensor]]"):
        return isinstance(v, (list, tuple)) and all(
            isinstance(x, TensorVal) or (x is None and "Optional" in t)
            for x in v)
    if is_t:
        return False
    if isinstance(v, (list, tuple)):
        return t.startswith("List[") or t.endswith("[]")
    if t in ("int", "SymInt"):
        return isinstance(v, (int, Sym)) and not isinstance(v, float)
    if t == "float":
        return isinstance(v, (int, float, Sym))
    if t == "bool":
        return isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float, bool, Sym))
    if t == "str":
        return isinstance(v, str)
    if t.startswith("List[") or t.endswith("[]"):
        # An int where a list of ints goes (`int[1] dim`): PyTorch's
        # argument parser takes it.
        return isinstance(v, (int, Sym))
    return not isinstance(v, (list, tuple))


def _binds(schema, args, kwargs):
    params = list(schema.arguments)
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    names = {a.name for a in params}
    if any(k not in names for k in kwargs):
        return False
    given = {}
    for a, v in zip(positional, args):
        given[a.name] = v
    for k, v in kwargs.items():
        if k in given:
            return False
        given[k] = v
    for a in params:
        if a.name == "out" and a.name not in given:
            if not a.has_default_value():
                return False
            continue
        if a.name not in given:
            if not a.has_default_value():
                return False
            continue
        if not _fits(str(a.type), given[a.name]):
            return False
    return True


def torch_fallback(name, args, kwargs):
    """The ATen converter for `torch.<name>` / `Tensor.<name>` calls that
    have no torch-level converter (kiln._ops): the converter of the first
    overload of `aten.<name>` whose schema takes these arguments (tensors
    where it wants tensors, scalars where it wants scalars, the keyword
    names it has), or None. The torch function and its ATen op have the
    same arguments for these ops (torch.atan -> aten.atan.default)."""
    packet = getattr(torch.ops.aten, name, None) if name else None
    if packet is None or not isinstance(packet, torch._ops.OpOverloadPacket):
        return None
    for ov in packet.overloads():
        conv = ATEN.get("%s.%s" % (name, ov))
        if conv is None:
            continue
        try:
            schema = getattr(packet, ov)._schema
        except Exception:  # noqa: BLE001
            continue
        if _binds(schema, args, kwargs):
            return conv
    return None


# --------------- torch.nn.functional activations (the OpInfo sweep found
# them missing at the torch level): the ATen decompositions above.

def _inplace_refused(b, inplace, name):
    if inplace:
        raise b.error("F.%s(inplace=True) is not supported: use the "
                      "functional form" % name)


@O.function(torch.nn.functional.elu)
def _f_elu(b, x, alpha=1.0, inplace=False):
    _inplace_refused(b, inplace, "elu")
    return ATEN["elu.default"](b, x, alpha)


@O.function(torch.nn.functional.selu, torch.selu)
def _f_selu(b, x, inplace=False):
    _inplace_refused(b, inplace, "selu")
    return ATEN["elu.default"](b, x, 1.6732632423543772848170429916717,
                               1.0507009873554804934193349852946)


@O.function(torch.nn.functional.celu, torch.celu)
def _f_celu(b, x, alpha=1.0, inplace=False):
    _inplace_refused(b, inplace, "celu")
    return ATEN["elu.default"](b, x, alpha, 1, 1.0 / alpha)


@O.function(torch.nn.functional.softplus)
def _f_softplus(b, x, beta=1, threshold=20):
    return ATEN["softplus.default"](b, x, beta, threshold)


@O.function(torch.nn.functional.softsign)
def _f_softsign(b, x):
    x = _float(b, _t(b, x, "softsign"))
    return O.div(b, x, O.add(b, _un(b, "abs", x), 1.0))


@O.function(torch.nn.functional.tanhshrink)
def _f_tanhshrink(b, x):
    x = _float(b, _t(b, x, "tanhshrink"))
    return O.sub(b, x, _un(b, "tanh", x))


@O.function(torch.nn.functional.mish)
def _f_mish(b, x, inplace=False):
    _inplace_refused(b, inplace, "mish")
    x = _float(b, _t(b, x, "mish"))
    return O.mul(b, x, _un(b, "tanh", ATEN["softplus.default"](b, x)))


@O.function(torch.nn.functional.logsigmoid, torch._C._nn.log_sigmoid)
def _f_logsigmoid(b, x):
    """-softplus(-x)."""
    x = _float(b, _t(b, x, "logsigmoid"))
    return _un(b, "neg", ATEN["softplus.default"](b, _un(b, "neg", x)))


@O.function(torch.nn.functional.softmin)
def _f_softmin(b, x, dim=None, _stacklevel=3, dtype=None):
    x = _t(b, x, "softmin")
    if dim is None:
        raise b.error("F.softmin without dim (deprecated implicit dim) is "
                      "not supported: pass dim")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    return O.FUNCTIONS[torch.nn.functional.softmax](b, _un(b, "neg", x),
                                                    dim)


@O.function(torch.nn.functional.glu)
def _f_glu(b, x, dim=-1):
    x = _t(b, x, "glu")
    d = O.norm_dim(b, dim, x.ndim)
    n = x.shape[d]
    if value(n) % 2:
        raise b.error("Halving dimension must be even, but dimension %d is "
                      "size %d" % (d, value(n)))
    if isinstance(n, Sym):
        if hasattr(b, "check_sizes"):
            # A dynamic dim: even on every call (PyTorch's error), halved
            # at n // 2 (the example's n // 2 baked into the slices gave
            # wrong halves, or none, at other sizes).
            b.check_sizes(-(n % 2), 0, "Halving dimension must be even, "
                          "but dimension %d is size %%s" % d, [n])
        else:
            n = b.static(n, "glu's halved dim")
    a = O.slice_dim(b, x, d, 0, n // 2, 1)
    g = O.slice_dim(b, x, d, n // 2, None, 1)
    return O.mul(b, a, _un(b, "sigmoid", g))


@O.function(torch.nn.functional._threshold, torch.nn.functional.threshold,
            torch.threshold)
def _f_threshold(b, x, threshold, value_, inplace=False):
    """value where x <= threshold, else x (NaN stays NaN)."""
    _inplace_refused(b, inplace, "threshold")
    x = _t(b, x, "threshold")
    low = O.binary(b, "le", x, threshold, out_dtype=torch.bool)
    return O.where(b, low, O.operand(b, value_, x.dtype), x)


@aten("glu")
def _a_glu(b, x, dim=-1):
    return _f_glu(b, x, dim)


@aten("celu")
def _a_celu(b, x, alpha=1.0):
    return _f_celu(b, x, alpha)


@aten("mish")
def _a_mish(b, x):
    return _f_mish(b, x)


@aten("threshold")
def _a_threshold(b, x, threshold, value_):
    return _f_threshold(b, x, threshold, value_)
