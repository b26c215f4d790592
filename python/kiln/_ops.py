"""Converters from PyTorch calls to `kt` ops, one table per kind of target.

* FUNCTIONS: call_function targets (torch.*, torch.nn.functional.*,
  operator.*, Python builtins on tensors);
* METHODS: call_method names (Tensor methods);
* MODULES: leaf module classes (call_module), keyed by class; a subclass
  uses its base's converter only when it does not override `forward`.

Each converter is `fn(b, *args, **kwargs)` (modules: `fn(b, module, path,
*args, **kwargs)`) with the signature of the PyTorch call it converts, so
Python binds the user's arguments; `b` is the FxImporter (kiln._fx_import),
whose helpers emit ops (`b.op`), specialize sizes (`b.static`) and record
in-place writes (`b.mutate`). Arguments arrive as TensorVals (tensors),
ints / Syms (sizes) and plain Python values.

PyTorch's type promotion is applied here (kt ops take operands of one
element type): the result dtype of an elementwise op is
`torch.result_type` of its operands (computed on empty tensors of the
operands' dtypes and ranks, so 0-d tensors and Python scalars promote as in
PyTorch), and operands are converted with `kt.cast`.

Everything not in these tables raises `Unsupported` (the importer names the
op and the user's line). docs/python.md lists what is covered.
"""

import builtins
import collections
import math
import re
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import _ir
from ._errors import KilnValueError
from ._fx_import import TensorVal, link_view
from ._symbolic import (Sym, is_unbacked, key, nonneg, same, slice_index, smax,
                        smin, value)

FUNCTIONS = {}
FUNCTIONS_BY_NAME = {}  # (module, qualname) -> converter: function_named
METHODS = {}
MODULES = {}


def function(*targets):
    def reg(fn):
        for t in targets:
            if t is not None:
                FUNCTIONS[t] = fn
        return fn
    return reg


def function_named(module_name, qualname):
    """Registers a converter for a function of another package, found by
    its module and name when a graph calls it (importing the package here
    would slow `import kiln`: torchvision's ops)."""
    def reg(fn):
        FUNCTIONS_BY_NAME[(module_name, qualname)] = fn
        return fn
    return reg


def method(*names):
    def reg(fn):
        for n in names:
            METHODS[n] = fn
        return fn
    return reg


def both(*names, extra=()):
    """Registers a converter for torch.<name> (and F.<name>) as a function
    and Tensor.<name> as a method."""
    def reg(fn):
        for n in names:
            for ns in (torch, F, torch.special):
                t = getattr(ns, n, None)
                if t is not None and callable(t):
                    FUNCTIONS[t] = fn
            METHODS[n] = fn
        for t in extra:
            FUNCTIONS[t] = fn
        return fn
    return reg


def module(*classes):
    def reg(fn):
        for c in classes:
            MODULES[c] = fn
        return fn
    return reg


def function_converter(target):
    try:
        conv = FUNCTIONS.get(target)
    except TypeError:  # unhashable target
        return None
    if conv is None and FUNCTIONS_BY_NAME:
        conv = FUNCTIONS_BY_NAME.get((getattr(target, "__module__", None),
                                      getattr(target, "__qualname__", None)))
    return conv


def module_converter(m):
    for cls in type(m).__mro__:
        conv = MODULES.get(cls)
        if conv is not None:
            if type(m).forward is not cls.forward:
                return None
            return conv
    return None


def is_supported_module(m):
    return module_converter(m) is not None


# ---------------------------------------------------------------- helpers


def _opt(f, name):
    return getattr(f, name, None)


def is_tensor(x):
    return isinstance(x, TensorVal)


def _dummy(x):
    if isinstance(x, TensorVal) and x.scalar:
        # A Python number read from a tensor (`.item()`): promotes as one.
        return x.scalar(0)
    if isinstance(x, TensorVal):
        return torch.empty(() if x.ndim == 0 else (0,), dtype=x.dtype)
    if isinstance(x, Sym):
        return x.value
    return x


def result_type(b, *xs):
    """torch.result_type over any number of operands."""
    xs = [x for x in xs if x is not None]
    ds = [_dummy(x) for x in xs]
    for x, d in zip(xs, ds):
        if not isinstance(d, (torch.Tensor, bool, int, float)):
            raise b.error("an operand of type %s where a tensor or number "
                          "is expected" % type(x).__name__)
    if len(ds) == 1:
        d = ds[0]
        if isinstance(d, torch.Tensor):
            return d.dtype
        return torch.result_type(torch.empty(0), d) if not isinstance(
            d, float) else torch.get_default_dtype()
    # Fold tensors first (dims over 0-d), numbers last, as PyTorch's
    # categories do: compute with empty tensors standing for each operand.
    tensors = [d for d in ds if isinstance(d, torch.Tensor)]
    numbers = [d for d in ds if not isinstance(d, torch.Tensor)]
    if not tensors:
        t = torch.tensor(numbers[0])
        tensors, numbers = [t.reshape(())], numbers[1:]
    dims = [t for t in tensors if t.dim() > 0]
    zero = [t for t in tensors if t.dim() == 0]
    acc = None
    for t in dims:
        acc = t if acc is None else torch.empty(0, dtype=torch.result_type(
            acc, t))
    for t in zero:
        acc = t if acc is None else torch.empty(
            0 if acc.dim() else (), dtype=torch.result_type(acc, t))
    for n in numbers:
        acc = torch.empty(0 if acc.dim() else (), dtype=torch.result_type(
            acc, n))
    return acc.dtype


def cast(b, t, dtype):
    if t.dtype == dtype:
        return t
    _ir.element_type(dtype)
    return b.op("cast", [t], {"dtype": dtype}, shape=t.shape, dtype=dtype)


def operand(b, x, dtype):
    """A tensor operand of `dtype`: a TensorVal cast if needed, a Python
    number (or size) as a rank-0 constant."""
    if isinstance(x, TensorVal):
        return cast(b, x, dtype)
    if isinstance(x, Sym):
        x = b.static(x, "a size used as a tensor operand")
    if isinstance(x, (bool, int, float)):
        if _ir.is_integer_dtype(dtype) and isinstance(x, float) \
                and not float(x).is_integer():
            raise b.error("a float scalar in an integer op")
        return b.constant(x, dtype)
    raise b.error("an operand of type %s where a tensor is expected"
                  % type(x).__name__)


def need_tensor(b, x, what):
    if not isinstance(x, TensorVal):
        raise b.error("%s expects a tensor, got %s" % (what,
                                                        type(x).__name__))
    return x


def norm_dim(b, d, rank, what="dim"):
    d = b.static(d, what)
    if not isinstance(d, int):
        raise b.error("%s must be an int, got %r" % (what, d))
    r = max(rank, 1)
    if not -r <= d < r:
        raise b.error("%s %d is out of range for a tensor of rank %d"
                      % (what, d, rank))
    return d % r


def norm_dims(b, dims, rank, what="dim"):
    if dims is None:
        return None
    if isinstance(dims, (int, Sym)):
        dims = [dims]
    return [norm_dim(b, d, rank, what) for d in dims]


def int_list(b, xs, why):
    if isinstance(xs, (int, Sym)):
        return [b.static(xs, why)]
    return [b.static(x, why) for x in xs]


def pair(b, x, why):
    xs = int_list(b, x, why)
    return xs * 2 if len(xs) == 1 else xs


def sizes_arg(args):
    """Varargs or one sequence of sizes (view(2, 3) / view((2, 3)))."""
    if len(args) == 1 and isinstance(args[0], (list, tuple, torch.Size)):
        return list(args[0])
    return list(args)


def broadcast(b, *shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        present = [s[len(s) - rank + i] for s in shapes
                   if len(s) - rank + i >= 0]
        if all(same(d, present[0]) for d in present[1:]):
            # One size (or the same expression everywhere): nothing to
            # broadcast, so a symbolic size 1 needs no guard (x[:1] * 2).
            out.append(present[0])
            continue
        res = 1
        for s in shapes:
            j = len(s) - rank + i
            if j < 0:
                continue
            d = s[j]
            # (A data-dependent size broadcast with a static 1 is itself,
            # whatever it is; anything else needs its value: refused.)
            if isinstance(d, Sym) and not is_unbacked(d) and d.value == 1:
                if isinstance(res, Sym) and same(res, d):
                    continue
                d = b.static(d, "broadcasting a dim of size 1")
            if not isinstance(d, Sym) and d == 1:
                continue
            if not isinstance(res, Sym) and res == 1:
                res = d
                continue
            if same(res, d):
                continue
            if value(res) != value(d):
                raise b.error("shapes %s cannot be broadcast together" % (
                    " and ".join(str([value(x) for x in s])
                                 for s in shapes)))
            if not isinstance(d, Sym):
                res = d
        out.append(res)
    return tuple(out)


def prod(xs):
    p = 1
    for x in xs:
        p = p * x
    return p


# PyTorch's arithmetic whose promoted dtype is bool: add and maximum are
# logical or, mul and minimum logical and, sub is an error. kt's arithmetic
# ops take numbers only (an i1 add would wrap, i.e. xor), so the importer
# maps them here, for every converter that reaches `binary`.
_BOOL_ARITH = {"add": "logical_or", "maximum": "logical_or",
               "mul": "logical_and", "minimum": "logical_and"}


def binary(b, name, x, y, out_dtype=None, compute=None):
    """An elementwise binary kt op with broadcasting and promotion."""
    if not is_tensor(x) and not is_tensor(y):
        raise b.error("kt.%s of two non-tensors" % name)
    dt = compute or result_type(b, x, y)
    if dt == torch.bool and out_dtype in (None, torch.bool):
        if name == "sub":
            raise b.error("subtraction of two bool operands (PyTorch does "
                          "not support it: use ^ or logical_xor)")
        name = _BOOL_ARITH.get(name, name)
    X, Y = operand(b, x, dt), operand(b, y, dt)
    shape = broadcast(b, X.shape, Y.shape)
    return b.op(name, [X, Y], shape=shape, dtype=out_dtype or dt)


def unary(b, name, x, float_only=False, attrs=None):
    x = need_tensor(b, x, "kt.%s" % name)
    if float_only and not x.dtype.is_floating_point:
        x = cast(b, x, torch.get_default_dtype())
    if not float_only and x.dtype == torch.bool:
        raise b.error("kt.%s of a bool tensor" % name)
    return b.op(name, [x], attrs, shape=x.shape, dtype=x.dtype)


def in_place(b, x, result):
    """x.op_(...): writes `result` (cast to x's dtype) into x."""
    x = need_tensor(b, x, "an in-place op")
    if tuple(map(value, result.shape)) != tuple(map(value, x.shape)):
        raise b.error("an in-place op would change the shape of its "
                      "operand from %s to %s" % (
                          [value(d) for d in x.shape],
                          [value(d) for d in result.shape]))
    result = cast(b, result, x.dtype)
    result = TensorVal(result.name, x.shape, result.dtype)
    return b.mutate(x, result)


def alias(x, shape=None):
    """A new TensorVal for the same SSA value: a view of x that is all of
    x (a write through it is a write to x)."""
    shape = x.shape if shape is None else shape

    def emit(b, base):
        return TensorVal(base.name, shape, base.dtype)

    def inverse(b, base, new):
        if tuple(new.shape) == tuple(base.shape):
            return new
        return reshape(b, new, *base.shape)

    return link_view(TensorVal(x.name, shape, x.dtype), x, emit, inverse,
                     x.layout)


def view_op(b, opname, x, attrs, shape, inverse, layout=None, sizes=()):
    """`kt.<opname>` of x as a view of x (kiln._fx_import.link_view): a
    write through it is `inverse(b, base, new)` written to x. `sizes`:
    symbolic sizes whose `index` values (FxImporter.index_of, computed when
    the op is emitted) are operands after x (kt.reshape's)."""
    def emit(b, base):
        return b.op(opname, [base] + [b.index_of(d) for d in sizes], attrs,
                    shape=shape, dtype=base.dtype)

    return link_view(emit(b, x), x, emit, inverse, layout)


def _reshape_back(b, base, new):
    """The inverse of a view that only regroups its base's elements
    (reshape of a contiguous value, squeeze, unsqueeze)."""
    return reshape(b, new, *base.shape)


def copy_of(x):
    return TensorVal(x.name, x.shape, x.dtype)


# ------------------------------------- Python numbers read from tensor data


def python_type(dtype):
    """The Python type of `.item()` of a tensor of `dtype`."""
    if dtype == torch.bool:
        return bool
    return float if dtype.is_floating_point else int


def python_scalar(b, x, what="aten._local_scalar_dense"):
    """The one element of x as a Python number (`Tensor.item()`,
    `aten._local_scalar_dense`): a 0-d value marked `scalar` (see
    TensorVal), its dtype x's (so `.item()` of the result reads back what
    PyTorch's would), carrying no gradient (a Python number has none). A
    tensor of another number of elements is PyTorch's error."""
    x = need_tensor(b, x, what)
    n = 1
    for d in x.shape:
        n *= b.static(d, "the size of a tensor read as a Python number "
                      "(%s)" % what)
    if n != 1:
        from ._errors import NotOneElementError
        raise NotOneElementError(
            "only one element tensors can be converted to Python scalars "
            "(%s of a tensor of %d elements)" % (what, n))
    if x.ndim:
        x = reshape(b, x, [])
    r = b.op("cast", [x], {"dtype": x.dtype, "kg.stop_gradient": True},
             shape=(), dtype=x.dtype)
    r.scalar = python_type(x.dtype)
    return r


@method("item")
def item(b, x):
    """Tensor.item() in a graph (kiln.config.capture_scalar_outputs; the
    tracer makes it a graph break otherwise)."""
    return python_scalar(b, x, "Tensor.item()")


def is_python_scalar(x):
    return isinstance(x, TensorVal) and x.scalar is not None


# Python's operators on Python numbers read from tensors (`s * 2`, `s > 0`
# in a TorchDynamo graph with capture_scalar_outputs): kt op names.
_SCALAR_OPS = {operator.add: "add", operator.sub: "sub",
               operator.mul: "mul", operator.truediv: "div",
               operator.neg: "neg", operator.pos: None,
               operator.abs: "abs", builtins.abs: "abs",
               operator.pow: "pow", math.sqrt: "sqrt",
               operator.eq: "eq", operator.ne: "ne", operator.lt: "lt",
               operator.le: "le", operator.gt: "gt", operator.ge: "ge"}


def scalar_op(b, target, args):
    """`target(*args)` on Python numbers, at least one of them read from a
    tensor (is_python_scalar) and none a tensor: computed as Python does,
    in float64 (a float among the operands, or true division) or int64
    (ints and bools), comparisons giving bools; the result is again a
    Python number. Other operators are refused."""
    if target not in _SCALAR_OPS:
        raise b.error("%s of a Python number read from a tensor (.item()) "
                      "is not supported" % getattr(target, "__name__",
                                                   target))
    kinds = []
    for a in args:
        if is_python_scalar(a):
            kinds.append(a.scalar)
        elif isinstance(a, (bool, int, float, Sym)):
            kinds.append(int if isinstance(a, Sym) else type(a))
        else:
            raise b.error("%s of a Python number read from a tensor and "
                          "a %s" % (target.__name__, type(a).__name__))
    name = _SCALAR_OPS[target]
    if name is None:
        return args[0]
    if target is operator.pow and float not in kinds:
        # (an int to a negative int power is a float in Python)
        raise b.error("** of Python ints read from a tensor (.item()) is "
                      "not supported")
    wide = float in kinds or target in (operator.truediv, math.sqrt)
    dt = torch.float64 if wide else torch.int64
    if target in (operator.neg, operator.abs, builtins.abs) and \
            kinds == [bool]:
        kind = int
    elif target in _COMPARE:
        kind = bool
    else:
        kind = float if wide else int
    xs = [operand(b, a, dt) for a in args]
    if target is math.sqrt:
        # Python raises ValueError ("math domain error") where kt.sqrt
        # would give NaN: a run-time check.
        ok = b.op("ge", [xs[0], operand(b, 0.0, dt)], shape=(),
                  dtype=torch.bool)
        xs[0] = check_values(b, xs[0], ok, "math domain error (math.sqrt "
                             "of a negative Python number read from a "
                             "tensor)")
    elif target is operator.pow:
        # A negative float to a non-integer power is a complex number in
        # Python (NaN in kt.pow): refused when the program runs.
        base, e = xs
        ok = b.op("logical_or", [
            b.op("ge", [base, operand(b, 0.0, dt)], shape=(),
                 dtype=torch.bool),
            b.op("eq", [b.op("floor", [e], shape=(), dtype=dt), e],
                 shape=(), dtype=torch.bool)], shape=(), dtype=torch.bool)
        xs[0] = check_values(b, base, ok, "** of a negative Python number "
                             "read from a tensor to a non-integer power (a "
                             "complex number in Python)")
    r = b.op(name, xs, shape=(), dtype=torch.bool if kind is bool else dt)
    r.scalar = kind
    return r


# ------------------------------------------------------ Python-level calls


_COMPARE = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
            operator.ge}


def python_call(b, target, args, kwargs):
    """A call_function node with no tensor among its arguments: evaluated
    now, in Python (size arithmetic stays symbolic; anything else that needs
    a size's value specializes it)."""
    if target in (operator.add, operator.sub, operator.mul,
                  operator.floordiv, operator.mod, operator.neg,
                  operator.pos) and not kwargs:
        if all(isinstance(a, (int, Sym)) and not isinstance(a, bool)
               for a in args):
            return target(*args)
    if target in _COMPARE and len(args) == 2:
        a, c = args
        if target in (operator.eq, operator.ne) and isinstance(
                a, (list, tuple)) and isinstance(c, (list, tuple)) and any(
                isinstance(v, Sym) for v in list(a) + list(c)):
            # x.size() != (2, 3, 12), x.shape == y.shape: sizes compared
            # one by one (a Sym has no ==: a tuple of them compared by
            # identity was always unequal); provably equal ones without
            # specializing them.
            equal = len(a) == len(c) and all(
                same(u, v) or b.static(u, "a comparison of sizes") ==
                b.static(v, "a comparison of sizes") for u, v in zip(a, c))
            return equal if target is operator.eq else not equal
        if isinstance(a, Sym) or isinstance(c, Sym):
            if target in (operator.eq, operator.ne) and same(a, c):
                return target is operator.eq
            a = b.static(a, "a comparison of sizes")
            c = b.static(c, "a comparison of sizes")
        return target(a, c)
    if target is getattr:
        return getattr(*args)
    if target is operator.getitem:
        return args[0][static_index(b, args[1])]
    args = _concrete(b, args, "a Python call on a size (%s)"
                     % getattr(target, "__name__", target))
    kwargs = _concrete(b, kwargs, "a Python call on a size")
    return target(*args, **kwargs)


def static_index(b, i):
    if isinstance(i, Sym):
        return b.static(i, "an index")
    if isinstance(i, slice):
        return slice(*(b.static(x, "a slice bound") for x in
                       (i.start, i.stop, i.step)))
    return i


def _concrete(b, x, why):
    if isinstance(x, Sym):
        return b.static(x, why)
    if isinstance(x, (list, tuple)):
        return type(x)(_concrete(b, v, why) for v in x) if not hasattr(
            x, "_fields") else type(x)(*[_concrete(b, v, why) for v in x])
    if isinstance(x, dict):
        return {k: _concrete(b, v, why) for k, v in x.items()}
    return x


@function(torch._assert)
def _assert(b, condition, message):
    if isinstance(condition, TensorVal):
        raise b.error("torch._assert on a tensor value (data-dependent)")
    if not b.static(condition, "an assertion"):
        raise b.error("assertion failed: %s" % message)
    return None


def check_values(b, x, cond, message):
    """`x` after a run-time check that every element of the bool tensor
    `cond` holds (kt.check): where one does not, the call fails with
    `message` at the user's line, in the interpreter and in compiled code.
    For what PyTorch checks on the data (embedding_bag's offsets); use the
    result, so the check runs before the ops that read `x`."""
    return b.op("check", [x, cond], {"message": message},
                shape=tuple(x.shape), dtype=x.dtype)


@function(torch.fx._symbolic_trace._assert_is_none)
def _assert_is_none(b, value, message):
    if value is not None:
        raise b.error(message)
    return None


# ------------------------------------------------------------ metadata

_TENSOR_ATTRS = {}


def tensor_attr(name):
    def reg(fn):
        _TENSOR_ATTRS[name] = fn
        return fn
    return reg


@tensor_attr("shape")
def _shape(b, x):
    return tuple(x.shape)


@tensor_attr("ndim")
def _ndim(b, x):
    return x.ndim


@tensor_attr("dtype")
def _dtype(b, x):
    return x.dtype


@tensor_attr("device")
def _device(b, x):
    return torch.device("cpu")


@tensor_attr("is_cuda")
def _is_cuda(b, x):
    return False


@tensor_attr("is_nested")
@tensor_attr("is_sparse")
@tensor_attr("is_quantized")
@tensor_attr("is_meta")
def _false(b, x):
    return False


@tensor_attr("layout")
def _layout(b, x):
    return torch.strided


@tensor_attr("requires_grad")
def _requires_grad(b, x, at_node=True):
    """x.requires_grad as eager would answer it: an argument's own flag; a
    computed value requires grad when grad is enabled where it is read, it
    is floating (or complex), and an argument that requires grad reaches it
    along the gradient edges of the ops so far (not through detach, no_grad
    ops, integer values or running statistics). Code that branches on it
    (a loss built from the outputs that require grad) took the False branch
    for every computed value before. `at_node=False`: whether gradients
    reach x at all, whatever the grad mode of the op being converted (a
    write under `no_grad` into a value that carries a gradient)."""
    if x.arg is not None:
        return bool(x.arg.example.requires_grad)
    if not b.grad_enabled or (at_node and b.node.meta.get("kiln_grad")
                              is False) or \
            not (x.dtype.is_floating_point or x.dtype.is_complex) or \
            x.name in b.no_grad_values:
        return False
    from kiln._training import _reach
    # (the dataflow over the ops so far, kept until more ops are emitted:
    # code that asks for every output's flag walks the lines once)
    cached = getattr(b, "_rg_reach", None)
    if cached is None or cached[0] != (len(b.lines), len(b.args)):
        graph = {"args": [(a.block_name, a.value.type, a.mutated)
                          for a in b.args], "ops": b.lines}
        rg = [bool(a.example.requires_grad) for a in b.args]
        cached = ((len(b.lines), len(b.args)), _reach(graph, rg))
        b._rg_reach = cached
    # (a result of a multi-result op, `%v1#0`: the dataflow names the op)
    return bool(cached[1].get(x.name.split("#")[0], 0))


@tensor_attr("T")
def _T(b, x):
    return permute(b, x, list(reversed(range(x.ndim))))


@tensor_attr("mT")
def _mT(b, x):
    return transpose(b, x, -2, -1)


@tensor_attr("data")
def _data(b, x):
    return detached_alias(b, x)


@function(builtins.getattr)
def _getattr(b, obj, name, *default):
    if isinstance(obj, TensorVal):
        fn = _TENSOR_ATTRS.get(name)
        if fn is None:
            raise b.error("no Kiln conversion for Tensor.%s" % name)
        return fn(b, obj)
    return getattr(obj, name, *default)


@method("size")
def size(b, x, dim=None):
    if dim is None:
        return tuple(x.shape)
    return x.shape[norm_dim(b, dim, x.ndim)]


@method("dim", "ndimension")
def _dim(b, x):
    return x.ndim


@both("numel")
def numel(b, x):
    return prod(x.shape)


@method("nelement")
def _nelement(b, x):
    return prod(x.shape)


@method("element_size")
def _element_size(b, x):
    return torch.empty(0, dtype=x.dtype).element_size()


@both("is_floating_point")
def _is_floating_point(b, x):
    return x.dtype.is_floating_point


@both("is_signed")
def _is_signed(b, x):
    return x.dtype.is_signed


@both("is_complex")
def _is_complex(b, x):
    return x.dtype.is_complex


@method("is_contiguous")
def _is_contiguous(b, x, memory_format=None):
    """As PyTorch answers for a value laid out as TensorVal.layout says: a
    transposed, permuted, sliced or expanded view (and pointwise results of
    a permuted one) is not contiguous. A call's input as it came in is
    asked directly (its layout is part of the program's key:
    _fx_import.example_layout); a
    result of pointwise ops on a channels-last input is taken as not
    channels-last (PyTorch keeps that layout: not tracked)."""
    arg = x.arg
    if arg is not None and arg.value is x and arg.input_index is not None:
        return arg.example.is_contiguous(
            memory_format=memory_format or torch.contiguous_format)
    if x.layout is not None:
        return False
    if memory_format in (None, torch.contiguous_format, torch.preserve_format):
        return True
    shape = [value(d) for d in x.shape]
    if not all(isinstance(d, int) for d in shape):
        raise b.error("is_contiguous(memory_format=%s) of a tensor with "
                      "dynamic sizes" % memory_format)
    try:
        return torch.empty(shape, device="meta").is_contiguous(
            memory_format=memory_format)
    except RuntimeError as e:
        raise b.error("is_contiguous: %s" % e)


@method("get_device")
def _get_device(b, x):
    return -1


@function(builtins.len)
def _len(b, x):
    if isinstance(x, TensorVal):
        if x.ndim == 0:
            raise b.error("len() of a 0-d tensor")
        return x.shape[0]
    return len(x)


# ------------------------------------------------------- elementwise

_ALPHA = "alpha"


def _with_alpha(b, x, y, alpha, name):
    if result_type(b, x, y) == torch.bool:
        # PyTorch: a bool result takes alpha as a bool (y and alpha).
        alpha = bool(b.static(alpha, "alpha"))
        if not alpha:
            y = binary(b, "mul", y, False) if is_tensor(y) else False
        return binary(b, name, x, y)
    if alpha != 1:
        y = binary(b, "mul", y, alpha) if is_tensor(y) else y * alpha
    return binary(b, name, x, y)


@both("add")
@function(operator.add)
def add(b, x, y, *, alpha=1, out=None):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.add, (x, y), {})
    return _with_alpha(b, x, y, alpha, "add")


@both("sub", "subtract")
@function(operator.sub)
def sub(b, x, y, *, alpha=1, out=None):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.sub, (x, y), {})
    return _with_alpha(b, x, y, alpha, "sub")


@both("rsub")
def rsub(b, x, y, *, alpha=1):
    return _with_alpha(b, y, x, alpha, "sub")


@both("mul", "multiply")
@function(operator.mul)
def mul(b, x, y, *, out=None):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.mul, (x, y), {})
    return binary(b, "mul", x, y)


def _rounding(mode):
    return _ir.Raw("#kt.rounding_mode<%s>" % mode)


@both("div", "divide", "true_divide")
@function(operator.truediv)
def div(b, x, y, *, rounding_mode=None, out=None):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.truediv, (x, y), {})
    dt = result_type(b, x, y)
    if rounding_mode is None:
        if not dt.is_floating_point:
            dt = torch.get_default_dtype()
        return binary(b, "div", x, y, compute=dt)
    if rounding_mode not in ("trunc", "floor"):
        raise b.error("div rounding_mode %r" % (rounding_mode,))
    if dt == torch.bool:
        raise b.error("div with rounding_mode=%r (floor_divide) of bool "
                      "operands: PyTorch does not implement it for bool"
                      % rounding_mode)
    X, Y = operand(b, x, dt), operand(b, y, dt)
    return b.op("div", [X, Y], {"rounding_mode": _rounding(rounding_mode)},
                shape=broadcast(b, X.shape, Y.shape), dtype=dt)


@both("floor_divide")
@function(operator.floordiv)
def floordiv(b, x, y):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.floordiv, (x, y), {})
    return div(b, x, y, rounding_mode="floor")


def _no_bool(b, name, x, y):
    dt = result_type(b, x, y)
    if dt == torch.bool:
        raise b.error("%s of bool operands (PyTorch does not implement it "
                      "for bool)" % name)
    return dt


@both("remainder")
@function(operator.mod)
def remainder(b, x, y, *, out=None):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.mod, (x, y), {})
    _no_bool(b, "remainder", x, y)
    return binary(b, "remainder", x, y)


@both("fmod")
def fmod(b, x, y, *, out=None):
    """C's remainder (the sign of x): kt.fmod."""
    _no_bool(b, "fmod", x, y)
    return binary(b, "fmod", x, y)


@both("atan2", "arctan2")
def atan2(b, x, y, *, out=None):
    """Integers and bools promote to the default float dtype, as torch.div."""
    dt = result_type(b, x, y)
    if not dt.is_floating_point:
        dt = torch.get_default_dtype()
    return binary(b, "atan2", x, y, compute=dt)


@both("pow")
@function(operator.pow)
def pow_(b, x, y):
    if not is_tensor(x) and not is_tensor(y):
        return python_call(b, operator.pow, (x, y), {})
    if is_tensor(x) and not is_tensor(y):
        e = b.static(y, "an exponent")
        dt = result_type(b, x, e)
        X = cast(b, x, dt)
        # PyTorch's pow(Tensor, Scalar) special cases (same rounding).
        if e == 1:
            return copy_of(X)
        if e == 2:
            return binary(b, "mul", X, X)
        if e == 3:
            return binary(b, "mul", binary(b, "mul", X, X), X)
        if dt.is_floating_point:
            if e == 0.5:
                return unary(b, "sqrt", X)
            if e == -0.5:
                return unary(b, "rsqrt", X)
            if e == -1:
                return unary(b, "reciprocal", X)
            if e == -2:
                return unary(b, "reciprocal", binary(b, "mul", X, X))
        return binary(b, "pow", X, e)
    return binary(b, "pow", x, y)


@function(operator.neg)
@both("neg", "negative")
def neg(b, x):
    if not is_tensor(x):
        return python_call(b, operator.neg, (x,), {})
    return unary(b, "neg", x)


@function(operator.pos)
def pos(b, x):
    return x


@both("abs", "absolute")
@function(builtins.abs)
def abs_(b, x):
    if not is_tensor(x):
        return abs(b.static(x, "abs() of a size"))
    return unary(b, "abs", x)


for _name in ("exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
              "tanh", "sigmoid", "erf", "reciprocal"):
    def _make(n):
        def conv(b, x, *, out=None):
            return unary(b, n, x, float_only=True)
        conv.__name__ = n
        return conv
    both(_name)(_make(_name))

for _name in ("floor", "ceil", "sign"):
    def _make(n):
        def conv(b, x, *, out=None):
            return unary(b, n, x)
        conv.__name__ = n
        return conv
    both(_name)(_make(_name))

@both("round")
def round_(b, x, *, decimals=0, out=None):
    """torch.round(x, decimals=d), d != 0, is PyTorch's round_decimals
    kernel as kt ops: nearbyint(x * 10^d) / 10^d (d > 0) or
    nearbyint(x / 10^-d) * 10^-d (d < 0), each step in x's dtype (PyTorch
    computes in float for float32, double for float64, and for bfloat16
    rounds 10^d and x * 10^d (x / 10^-d) to bfloat16 and the last step's
    float result once; it does not implement decimals for other
    dtypes)."""
    x = need_tensor(b, x, "round")
    d = b.static(decimals, "round's decimals")
    if d == 0:
        return unary(b, "round", x)
    if x.dtype not in (torch.float32, torch.float64, torch.bfloat16):
        raise b.error("round with decimals=%d of a %s tensor (PyTorch "
                      "implements it for float32, float64 and bfloat16 "
                      "only)" % (d, x.dtype))
    try:
        p = 10.0 ** abs(d)
    except OverflowError:
        p = math.inf
    if d > 0:
        return binary(b, "div", unary(b, "round", binary(b, "mul", x, p)), p)
    return binary(b, "mul", unary(b, "round", binary(b, "div", x, p)), p)


for _name in ("maximum", "minimum"):
    def _make(n):
        def conv(b, x, y, *, out=None):
            return binary(b, n, x, y)
        conv.__name__ = n
        return conv
    both(_name)(_make(_name))


def _compare(name, op):
    def conv(b, x, y, *, out=None):
        if not is_tensor(x) and not is_tensor(y):
            return python_call(b, op, (x, y), {})
        return binary(b, name, x, y, out_dtype=torch.bool)
    conv.__name__ = name
    return conv


for _name, _op, _alias in (("eq", operator.eq, None),
                           ("ne", operator.ne, "not_equal"),
                           ("lt", operator.lt, "less"),
                           ("le", operator.le, "less_equal"),
                           ("gt", operator.gt, "greater"),
                           ("ge", operator.ge, "greater_equal")):
    _c = _compare(_name, _op)
    both(_name, *([_alias] if _alias else []))(_c)
    FUNCTIONS[_op] = _c
    METHODS["__%s__" % _name] = _c


def _logical(name):
    """logical_and/or/xor: operands of any dtype, compared with 0."""
    def conv(b, x, y, *, out=None):
        X = operand(b, x, torch.bool) if not is_tensor(x) else cast(
            b, x, torch.bool)
        Y = operand(b, y, torch.bool) if not is_tensor(y) else cast(
            b, y, torch.bool)
        return b.op(name, [X, Y], shape=broadcast(b, X.shape, Y.shape),
                    dtype=torch.bool)
    conv.__name__ = name
    return conv


both("logical_and")(_logical("logical_and"))
both("logical_or")(_logical("logical_or"))
both("logical_xor")(_logical("logical_xor"))


def _bitwise(name, op, reflected=False):
    """bitwise_and/or/xor (&, |, ^) on integer and bool tensors, with
    PyTorch's promotion; floats are an error as in PyTorch."""
    def conv(b, x, y, *, out=None):
        if reflected:
            x, y = y, x
        if not is_tensor(x) and not is_tensor(y):
            return python_call(b, op, (x, y), {})
        dt = result_type(b, x, y)
        if dt.is_floating_point:
            raise b.error("%s of %s operands (PyTorch implements it for "
                          "integer and bool tensors only)" % (name, dt))
        X, Y = operand(b, x, dt), operand(b, y, dt)
        return b.op(name, [X, Y], shape=broadcast(b, X.shape, Y.shape),
                    dtype=dt)
    conv.__name__ = name
    return conv


for _name, _op, _dunder in (("bitwise_and", operator.and_, "and"),
                            ("bitwise_or", operator.or_, "or"),
                            ("bitwise_xor", operator.xor, "xor")):
    _c = _bitwise(_name, _op)
    both(_name)(_c)
    FUNCTIONS[_op] = _c
    METHODS["__%s__" % _dunder] = _c
    METHODS["__r%s__" % _dunder] = _bitwise(_name, _op, reflected=True)


@both("logical_not")
def logical_not(b, x, *, out=None):
    x = need_tensor(b, x, "logical_not")
    return b.op("logical_not", [x], shape=x.shape, dtype=torch.bool)


@function(operator.invert)
@method("__invert__")
@both("bitwise_not")
def invert(b, x, *, out=None):
    if not is_tensor(x):
        return python_call(b, operator.invert, (x,), {})
    if x.dtype.is_floating_point:
        raise b.error("bitwise_not of a %s tensor (PyTorch implements it "
                      "for integer and bool tensors only)" % x.dtype)
    return b.op("bitwise_not", [x], shape=x.shape, dtype=x.dtype)


@both("isnan")
def isnan(b, x):
    return b.op("isnan", [x], shape=x.shape, dtype=torch.bool)


@both("where")
def where(b, cond, x=None, y=None):
    if x is None:
        raise b.error("torch.where(cond) (data-dependent output shape)")
    cond = cast(b, need_tensor(b, cond, "where"), torch.bool)
    dt = result_type(b, x, y)
    X, Y = operand(b, x, dt), operand(b, y, dt)
    return b.op("where", [cond, X, Y],
                shape=broadcast(b, cond.shape, X.shape, Y.shape), dtype=dt)


@both("masked_fill")
def masked_fill(b, x, mask, value):
    x = need_tensor(b, x, "masked_fill")
    mask = cast(b, need_tensor(b, mask, "masked_fill's mask"), torch.bool)
    if is_tensor(value):
        if value.ndim != 0:
            raise b.error("masked_fill with a value of rank %d (must be 0)"
                          % value.ndim)
        v = cast(b, value, x.dtype)
    else:
        v = operand(b, value, x.dtype)
    shape = broadcast(b, x.shape, mask.shape)
    if tuple(map(value_of, shape)) != tuple(map(value_of, x.shape)):
        raise b.error("masked_fill's mask does not broadcast to the tensor")
    return b.op("where", [mask, v, x], shape=x.shape, dtype=x.dtype)


def value_of(d):
    return value(d)


@both("clamp", "clip")
def clamp(b, x, min=None, max=None, *, out=None):
    x = need_tensor(b, x, "clamp")
    if is_tensor(min) or is_tensor(max):
        r = x
        if min is not None:
            r = binary(b, "maximum", r, min)
        if max is not None:
            r = binary(b, "minimum", r, max)
        return r
    if min is None and max is None:
        raise b.error("clamp with neither min nor max")
    lo = b.static(min, "a clamp bound") if min is not None else None
    hi = b.static(max, "a clamp bound") if max is not None else None
    dt = result_type(b, x, *(v for v in (lo, hi) if v is not None))
    x = cast(b, x, dt)
    if dt == torch.bool:
        raise b.error("clamp of a bool tensor")
    attrs = {}
    if lo is not None:
        attrs["min"] = float(lo)
    if hi is not None:
        attrs["max"] = float(hi)
    return b.op("clamp", [x], attrs, shape=x.shape, dtype=dt)


@both("clamp_min")
def clamp_min(b, x, m, *, out=None):
    return clamp(b, x, min=m)


@both("clamp_max")
def clamp_max(b, x, m, *, out=None):
    return clamp(b, x, max=m)


# --- activations


@both("relu")
def relu(b, x, inplace=False):
    r = unary(b, "relu", x)
    return in_place(b, x, r) if inplace else r


@both("relu_")
def relu_(b, x):
    return in_place(b, x, unary(b, "relu", x))


@function(F.relu6)
def relu6(b, x, inplace=False):
    r = clamp(b, x, 0.0, 6.0)
    return in_place(b, x, r) if inplace else r


@function(F.hardtanh)
def hardtanh(b, x, min_val=-1.0, max_val=1.0, inplace=False):
    r = clamp(b, x, min_val, max_val)
    return in_place(b, x, r) if inplace else r


@both("gelu")
def gelu(b, x, approximate="none"):
    x = need_tensor(b, x, "gelu")
    attrs = {}
    if approximate == "tanh":
        attrs["approximate"] = _ir.Raw("#kt.approximate<tanh>")
    elif approximate != "none":
        raise b.error("gelu approximate=%r" % (approximate,))
    return b.op("gelu", [x], attrs, shape=x.shape, dtype=x.dtype)


@function(F.silu)
def silu(b, x, inplace=False):
    r = unary(b, "silu", x, float_only=True)
    return in_place(b, x, r) if inplace else r


@function(F.leaky_relu)
def leaky_relu(b, x, negative_slope=0.01, inplace=False):
    zero = 0
    pos = binary(b, "gt", x, zero, out_dtype=torch.bool)
    r = where(b, pos, x, binary(b, "mul", x, negative_slope))
    return in_place(b, x, r) if inplace else r


@function(F.hardsigmoid)
def hardsigmoid(b, x, inplace=False):
    r = binary(b, "div", clamp(b, binary(b, "add", x, 3.0), 0.0, 6.0), 6.0)
    return in_place(b, x, r) if inplace else r


@function(F.hardswish)
def hardswish(b, x, inplace=False):
    r = binary(b, "div", binary(
        b, "mul", x, clamp(b, binary(b, "add", x, 3.0), 0.0, 6.0)), 6.0)
    return in_place(b, x, r) if inplace else r


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(name):
    def conv(b, x, dim=None, _stacklevel=3, dtype=None, *, half_to_float=None):
        x = need_tensor(b, x, name)
        if isinstance(_stacklevel, torch.dtype):
            # torch.softmax(x, dim, dtype) / Tensor.softmax(dim, dtype):
            # the third positional argument is the dtype there (F's is
            # _stacklevel).
            if dtype is not None:
                raise TypeError("%s() got multiple values for argument "
                                "'dtype'" % name)
            dtype = _stacklevel
        if dim is None:
            dim = _softmax_dim(x.ndim)
        if dtype is not None:
            x = cast(b, x, dtype)
        if not x.dtype.is_floating_point:
            raise b.error("%s of a %s tensor" % (name, x.dtype))
        d = norm_dim(b, dim, x.ndim)
        return b.op(name, [x], {"dim": d}, shape=x.shape, dtype=x.dtype)
    return conv


both("softmax")(_softmax("softmax"))
both("log_softmax")(_softmax("log_softmax"))


# ----------------------------------------------------------- reductions


def reduce_shape(shape, dims, keepdim):
    out = []
    for i, d in enumerate(shape):
        if dims is None or i in dims:
            if keepdim:
                out.append(1)
        else:
            out.append(d)
    return tuple(out)


def _reduction(b, name, x, dim, keepdim, out_dtype=None, attrs=None):
    x = need_tensor(b, x, name)
    dims = norm_dims(b, dim, x.ndim)
    if dims is not None and len(dims) == 0:
        dims = None
    if dims is not None and len(set(dims)) != len(dims):
        d = next(d for d in dims if dims.count(d) > 1)
        raise b.error("%s: dim %d appears multiple times in the list of dims"
                      % (name, d))
    a = dict(attrs or {})
    if dims is not None:
        a["dim"] = sorted(set(dims))
    if keepdim:
        a["keepdim"] = True
    shape = reduce_shape(x.shape, None if dims is None else set(dims),
                         keepdim)
    return b.op(name, [x], a, shape=shape, dtype=out_dtype or x.dtype)


def _cumulative(name):
    """cumsum/cumprod (integers and bools accumulate in int64 unless `dtype`
    says otherwise, as PyTorch) and logcumsumexp (float operands; PyTorch
    1.13 has no integer kernel), along one dim: kt.<name>."""
    def conv(b, x, dim, *, dtype=None, out=None):
        x = need_tensor(b, x, name)
        d = norm_dim(b, dim, x.ndim)
        if dtype is not None:
            x = cast(b, x, dtype)
        elif name != "logcumsumexp" and not x.dtype.is_floating_point:
            x = cast(b, x, torch.int64)
        if name == "logcumsumexp" and not x.dtype.is_floating_point:
            raise b.error("logcumsumexp of a %s tensor (PyTorch implements "
                          "it for floating-point tensors only)" % x.dtype)
        return b.op(name, [x], {"dim": d}, shape=x.shape, dtype=x.dtype)
    conv.__name__ = name
    return conv


for _name in ("cumsum", "cumprod"):
    both(_name)(_cumulative(_name))
    METHODS[_name + "_"] = (lambda c: lambda b, x, dim, *, dtype=None: in_place(
        b, x, c(b, x, dim, dtype=dtype)))(_cumulative(_name))
both("logcumsumexp")(_cumulative("logcumsumexp"))


@both("sum")
def sum_(b, x, dim=None, keepdim=False, *, dtype=None, out=None):
    x = need_tensor(b, x, "sum")
    if dtype is not None:
        x = cast(b, x, dtype)
    out_dt = x.dtype if x.dtype.is_floating_point else torch.int64
    return _reduction(b, "sum", x, dim, keepdim, out_dtype=out_dt)


@both("mean")
def mean(b, x, dim=None, keepdim=False, *, dtype=None, out=None):
    x = need_tensor(b, x, "mean")
    if dtype is not None:
        x = cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("mean of a %s tensor (PyTorch requires a float "
                      "dtype)" % x.dtype)
    return _reduction(b, "mean", x, dim, keepdim)


@both("amax")
def amax(b, x, dim=(), keepdim=False):
    return _reduction(b, "amax", x, dim, keepdim)


@both("amin")
def amin(b, x, dim=(), keepdim=False):
    return _reduction(b, "amin", x, dim, keepdim)


@both("prod")
def prod_(b, x, dim=None, keepdim=False, *, dtype=None):
    x = need_tensor(b, x, "prod")
    if dtype is not None:
        x = cast(b, x, dtype)
    out_dt = x.dtype if x.dtype.is_floating_point else torch.int64
    return _reduction(b, "prod", x, dim, keepdim, out_dtype=out_dt)


@both("all")
def all_(b, x, dim=None, keepdim=False):
    return _reduction(b, "all", x, dim, keepdim, out_dtype=torch.bool)


@both("any")
def any_(b, x, dim=None, keepdim=False):
    return _reduction(b, "any", x, dim, keepdim, out_dtype=torch.bool)


@both("logsumexp")
def logsumexp(b, x, dim, keepdim=False):
    """Integer and bool inputs promote to the default float dtype, as
    PyTorch's logsumexp."""
    x = need_tensor(b, x, "logsumexp")
    if isinstance(dim, (list, tuple)) and not dim and not keepdim and \
            x.ndim > 0:
        # An empty dim list reduces every dim; PyTorch 1.13 then fails to
        # write the 0-d sum into its keepdim-shaped output (keepdim=True
        # works).
        raise b.error("output with shape [] doesn't match the broadcast "
                      "shape %s" % ([1] * x.ndim,))
    if not x.dtype.is_floating_point:
        x = cast(b, x, torch.get_default_dtype())
    return _reduction(b, "logsumexp", x, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased in (None, True) else 0.0


@both("var")
def var(b, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    x = need_tensor(b, x, "var")
    if not x.dtype.is_floating_point:
        raise b.error("std and var only support floating point and complex "
                      "dtypes, got %s (as PyTorch)" % x.dtype)
    return _reduction(b, "var", x, dim, keepdim,
                      attrs={"correction": _correction(unbiased, correction)})


@function(F.one_hot)
def one_hot(b, x, num_classes=-1):
    """Rows of the n x n identity (int64) selected by x (kt.index_select,
    whose run-time range check rejects negative and too large classes, as
    PyTorch does); num_classes=-1 (from the data's maximum) is
    data-dependent and refused."""
    x = need_tensor(b, x, "one_hot")
    if x.dtype != torch.int64:
        raise b.error("one_hot of a %s tensor (PyTorch takes int64 class "
                      "indices)" % x.dtype)
    n = b.static(num_classes, "one_hot's num_classes")
    if n == -1:
        raise b.error("one_hot without num_classes (the size would come "
                      "from the data)")
    if n < 0:
        raise b.error("one_hot's num_classes must be -1 or non-negative")
    i = b.op("arange", [], {"start": 0.0, "end": float(n), "step": 1.0,
                            "dtype": torch.int64}, shape=(n,),
             dtype=torch.int64)
    eye = cast(b, binary(b, "eq", reshape(b, i, n, 1), i,
                         out_dtype=torch.bool), torch.int64)
    flat = reshape(b, x, -1)
    rows = b.op("index_select", [eye, flat], {"dim": 0},
                shape=(flat.shape[0], n), dtype=torch.int64)
    return copy_of(reshape(b, rows, *x.shape, n))


@both("var_mean")
def var_mean(b, x, dim=None, unbiased=None, keepdim=False, *,
             correction=None):
    """(var, mean) over the same dims: kt.var and kt.mean."""
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        dim, unbiased = None, dim
    return (var(b, x, dim, unbiased, keepdim, correction=correction),
            mean(b, x, dim, keepdim))


AminMax = collections.namedtuple("AminMax", ["min", "max"])


def return_type(name, *values):
    """PyTorch's named result of op `name` (torch.return_types.max, sort,
    ...) holding the values, as eager PyTorch returns it."""
    return getattr(torch.return_types, name)(values)


@both("aminmax")
def aminmax(b, x, *, dim=None, keepdim=False, out=None):
    """(min, max) over one dim or every element: kt.amin and kt.amax (NaN
    propagates, an empty reduction is their error, as PyTorch)."""
    x = need_tensor(b, x, "aminmax")
    if dim is not None:
        dim = norm_dim(b, dim, x.ndim)
    return return_type("aminmax", _reduction(b, "amin", x, dim, keepdim),
                       _reduction(b, "amax", x, dim, keepdim))


@function(torch.std_mean)
def std_mean(b, x, dim=None, unbiased=None, keepdim=False, *,
             correction=None):
    """(std, mean) over the same dims: sqrt(kt.var) and kt.mean."""
    v, m = var_mean(b, x, dim, unbiased, keepdim, correction=correction)
    return (masked_root(b, v), m)


@both("count_nonzero")
def count_nonzero(b, x, dim=None):
    """The number of elements != 0 (NaN counts) over dim (all dims when
    None), as int64: kt.ne + kt.sum."""
    x = need_tensor(b, x, "count_nonzero")
    nz = binary(b, "ne", x, 0, out_dtype=torch.bool)
    return sum_(b, nz, dim)


@both("std")
def std(b, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return masked_root(b, var(b, x, dim, unbiased, keepdim,
                              correction=correction))


def masked_root(b, s, p=2.0):
    """s ** (1/p) (sqrt for p = 2) of a sum of |x|^p, whose gradient is 0
    where s is 0, as PyTorch's std_backward, norm_backward and
    _cdist_backward mask it: the plain root's derivative is inf there,
    times the sum's zero derivative NaN (a NaN gradient for the std of
    equal values, the norm of a zero row, cdist(x, x)'s diagonal)."""
    zero = binary(b, "eq", s, 0, out_dtype=torch.bool)
    safe = where(b, zero, b.constant(1, s.dtype), s)
    root = unary(b, "sqrt", safe) if float(p) == 2.0 else \
        pow_(b, safe, 1.0 / float(p))
    return where(b, zero, b.constant(0, s.dtype), root)


MinMax = collections.namedtuple("MinMax", ["values", "indices"])


def _minmax(reduce_name, arg_name, elementwise):
    def conv(b, x, dim=None, keepdim=False, *, out=None):
        if is_tensor(dim):
            return binary(b, elementwise, x, dim)
        if dim is None:
            return _reduction(b, reduce_name, x, None, False)
        values = _reduction(b, reduce_name, x, dim, keepdim)
        # kt.argmax/argmin take no bools (torch.argmax refuses them too),
        # but max/min(dim) of a bool tensor has indices: the same positions
        # over uint8 (the first largest / smallest).
        xi = x
        if is_tensor(x) and x.dtype == torch.bool:
            xi = cast(b, x, torch.uint8)
        indices = _arg(b, arg_name, xi, dim, keepdim)
        return return_type(reduce_name[1:], values, indices)
    return conv


def _arg(b, name, x, dim, keepdim):
    x = need_tensor(b, x, name)
    if dim is None:
        shape = (1,) * x.ndim if keepdim else ()
        return b.op(name, [x], {"keepdim": True} if keepdim else {},
                    shape=shape, dtype=torch.int64)
    d = norm_dim(b, dim, x.ndim)
    attrs = {"dim": d}
    if keepdim:
        attrs["keepdim"] = True
    return b.op(name, [x], attrs, shape=reduce_shape(x.shape, {d}, keepdim),
                dtype=torch.int64)


both("max")(_minmax("amax", "argmax", "maximum"))
both("min")(_minmax("amin", "argmin", "minimum"))


@both("argmax")
def argmax(b, x, dim=None, keepdim=False):
    return _arg(b, "argmax", x, dim, keepdim)


@both("argmin")
def argmin(b, x, dim=None, keepdim=False):
    return _arg(b, "argmin", x, dim, keepdim)


# ----------------------------------------------------------- sorting
# kt.argsort (always stable) is the one sorting primitive: sort's values are
# kt.gather of the input at the permutation; topk and kthvalue slice the
# permutation before the gather (docs/python.md).

SortResult = collections.namedtuple("SortResult", ["values", "indices"])


def _argsort(b, x, d, descending):
    attrs = {"dim": d}
    if descending:
        attrs["descending"] = True
    return b.op("argsort", [x], attrs, shape=x.shape, dtype=torch.int64)


def _sort_dim(b, x, dim, what):
    x = need_tensor(b, x, what)
    return x, norm_dim(b, dim, x.ndim)


def _bool_arg(b, v, what):
    v = b.static(v, what) if isinstance(v, Sym) else v
    if not isinstance(v, bool):
        raise b.error("%s must be a bool, got %r" % (what, v))
    return v


@both("sort")
def sort(b, x, dim=-1, descending=False, stable=None, *, out=None):
    x, d = _sort_dim(b, x, dim, "sort")
    desc = _bool_arg(b, descending, "sort's descending")
    indices = _argsort(b, x, d, desc)
    values = b.op("gather", [x, indices], {"dim": d}, shape=x.shape,
                  dtype=x.dtype)
    return return_type("sort", values, indices)


@both("argsort")
def argsort(b, x, dim=-1, descending=False, *, stable=None):
    x, d = _sort_dim(b, x, dim, "argsort")
    return _argsort(b, x, d, _bool_arg(b, descending, "argsort's descending"))


@both("msort")
def msort(b, x, *, out=None):
    return sort(b, x, 0).values


def _sorted_prefix(b, x, d, k, descending, what):
    """The first k positions of the stable permutation along d and x
    gathered there: (values, indices)."""
    idx = _argsort(b, x, d, descending)
    if x.ndim:
        idx = slice_dim(b, idx, d, 0, k, 1)
    values = b.op("gather", [x, idx], {"dim": d}, shape=idx.shape,
                  dtype=x.dtype)
    return values, idx


def _no_half_or_bool(b, x, what):
    # PyTorch 1.13's CPU kernels of topk and kthvalue.
    if x.dtype in (torch.float16, torch.bool):
        raise b.error("%s is not implemented for %s (as in PyTorch)"
                      % (what, x.dtype))


@both("topk")
def topk(b, x, k, dim=-1, largest=True, sorted=True, *, out=None):
    x, d = _sort_dim(b, x, dim, "topk")
    _no_half_or_bool(b, x, "topk")
    k = b.static(k, "topk's k")
    size = b.static(x.shape[d], "topk's dim size") if x.ndim else 1
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= size:
        raise b.error("topk: selected index k = %r out of range for dim %d "
                      "of size %d" % (k, d, size))
    largest = _bool_arg(b, largest, "topk's largest")
    _bool_arg(b, sorted, "topk's sorted")
    # sorted=False: PyTorch leaves the order unspecified; it is sorted here.
    values, idx = _sorted_prefix(b, x, d, k, largest, "topk")
    return return_type("topk", values, idx)


@both("kthvalue")
def kthvalue(b, x, k, dim=-1, keepdim=False, *, out=None):
    x, d = _sort_dim(b, x, dim, "kthvalue")
    _no_half_or_bool(b, x, "kthvalue")
    k = b.static(k, "kthvalue's k")
    size = b.static(x.shape[d], "kthvalue's dim size") if x.ndim else 1
    if size == 0:
        raise b.error("kthvalue: dim %d is empty (PyTorch: expected reduction "
                      "dim to have non-zero size)" % d)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= size:
        raise b.error("kthvalue: selected number k = %r out of range for dim "
                      "%d of size %d (k counts from 1)" % (k, d, size))
    keepdim = _bool_arg(b, keepdim, "kthvalue's keepdim")
    idx = _argsort(b, x, d, False)
    if x.ndim:
        idx = slice_dim(b, idx, d, k - 1, k, 1)
    values = b.op("gather", [x, idx], {"dim": d}, shape=idx.shape,
                  dtype=x.dtype)
    if x.ndim and not keepdim:
        values, idx = squeeze(b, values, d), squeeze(b, idx, d)
    return return_type("kthvalue", values, idx)


# searchsorted / bucketize: kt.searchsorted on the operands promoted to
# their common dtype (as PyTorch); out_int32 is a kt.cast of the result and
# sorter a kt.gather of the sequence (docs/python.md).
def _searchsorted(b, seq, v, out_int32, right, side, sorter, what):
    seq = need_tensor(b, seq, what + "'s sorted sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise b.error("%s: side can only be 'left' or 'right', got %r"
                          % (what, side))
        if right and side == "left":
            raise b.error("%s: side and right can't be set to opposites, "
                          "got side of left while right was True" % what)
        right = side == "right"
    right = _bool_arg(b, right, what + "'s right")
    if seq.ndim == 0:
        raise b.error("%s: the sorted sequence must have at least one dim, "
                      "got a 0-d tensor" % what)
    if not isinstance(v, TensorVal) and seq.ndim != 1:
        raise b.error("%s: a scalar value needs a 1-D sorted sequence, got "
                      "%d dims" % (what, seq.ndim))
    dtype = result_type(b, seq, v)
    if dtype == torch.bool:
        raise b.error("%s is not implemented for torch.bool (as in PyTorch)"
                      % what)
    seq = cast(b, seq, dtype)
    v = operand(b, v, dtype)
    if seq.ndim > 1:
        if v.ndim != seq.ndim or any(
                not same(p, q) and b.static(p, what) != b.static(q, what)
                for p, q in zip(seq.shape[:-1], v.shape[:-1])):
            raise b.error("%s: the leading dims of the sorted sequence %s and "
                          "of the values %s must match (or the sequence be "
                          "1-D)" % (what, list(seq.shape), list(v.shape)))
    if sorter is not None:
        sorter = need_tensor(b, sorter, what + "'s sorter")
        if sorter.dtype != torch.int64 or sorter.ndim != seq.ndim or any(
                not same(p, q) and b.static(p, what) != b.static(q, what)
                for p, q in zip(sorter.shape, seq.shape)):
            raise b.error("%s: sorter must be an int64 tensor of the sorted "
                          "sequence's shape %s, got %s %s" % (
                              what, list(seq.shape), sorter.dtype,
                              list(sorter.shape)))
        seq = b.op("gather", [seq, sorter], {"dim": seq.ndim - 1},
                   shape=seq.shape, dtype=seq.dtype)
    r = b.op("searchsorted", [seq, v], {"right": True} if right else {},
             shape=v.shape, dtype=torch.int64)
    return cast(b, r, torch.int32) if _bool_arg(
        b, out_int32, what + "'s out_int32") else r


@function(torch.searchsorted)
def searchsorted(b, seq, v, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    return _searchsorted(b, seq, v, out_int32, right, side, sorter,
                         "searchsorted")


@function(torch.bucketize)
def bucketize(b, v, boundaries, *, out_int32=False, right=False, out=None):
    boundaries = need_tensor(b, boundaries, "bucketize's boundaries")
    if boundaries.ndim != 1:
        raise b.error("bucketize: boundaries must be 1-D, got %d dims"
                      % boundaries.ndim)
    return _searchsorted(b, boundaries, v, out_int32, right, None, None,
                         "bucketize")


# ----------------------------------------------------------- shapes


def _reshape_attr(b, x, shape, what, inferred=None):
    """The `shape` attribute and the symbolic sizes of the `index` operands
    of kt.reshape for the symbolic target `shape` (its -1 already
    inferred). One symbolic
    size is the -1 entry kt.reshape infers; with several, each is a -2 entry
    whose size operand computes its expression from the inputs' dims
    (`FxImporter.index_of`: `tensor.dim`, `arith.muli`, ...), so that
    `x.view(B, T, H, D)` with `B` and `T` dynamic specializes neither. A
    size that cannot be computed so is specialized (`what`). `inferred`:
    the position of the user's -1 when its size is symbolic: it stays
    kt.reshape's -1 (inferred when the op runs, an error when the other
    sizes multiply to 0), never `total // rest` in index arithmetic, a
    division by zero when `rest` is 0 at run time."""
    attr, operands = [], []
    # With no elements a -1 is ambiguous (kt.reshape's error): every size
    # is written out. The -1 goes to a size marked dynamic when there is
    # one (the others may be specialized), else to the first symbolic one.
    unbacked = any(is_unbacked(d) for d in shape)
    empty = not unbacked and value(prod(shape)) == 0
    syms = [i for i, d in enumerate(shape) if isinstance(d, Sym)]
    if inferred not in syms:
        inferred = None
    sized = {}
    if (len(syms) > 1 or unbacked) and not empty and \
            hasattr(b, "index_of"):
        # Every symbolic size exactly (none inferred: the run-time check is
        # then PyTorch's, the element count against the sizes' product).
        for i in syms:
            if i == inferred:
                continue
            v = b.index_of(shape[i])
            if v is not None:
                sized[i] = v
    marked = [i for i in syms if i not in sized and
              b.is_marked_dynamic(shape[i])]
    rest = [i for i in syms if i not in sized]
    dyn = None if empty or not rest else (
        inferred if inferred is not None else (marked or rest)[0])
    for i, d in enumerate(shape):
        if i in sized:
            attr.append(-2)
            operands.append(shape[i])
            continue
        if i == dyn:
            attr.append(-1)
            continue
        if isinstance(d, Sym):
            d = b.static(d, what)
        attr.append(d)
    return attr, operands


def reshape(b, x, *shape):
    x = need_tensor(b, x, "reshape")
    target = sizes_arg(shape)
    total = prod(x.shape)
    infer = [i for i, d in enumerate(target)
             if not isinstance(d, Sym) and d == -1]
    if len(infer) > 1:
        raise b.error("only one dimension can be inferred in a reshape")
    data = [is_python_scalar(d) for d in target]
    if any(data):
        if not infer:
            # view(n, 4) with n = -1 infers n in PyTorch: kt.reshape would
            # call it a negative size. (A graph break: FxImporter's reason.)
            raise TypeError("a size read from data in a reshape without "
                            "an explicit -1")
        # view(n, -1): n read from data is a -2 size of kt.reshape, which
        # raises for a negative one when it runs (PyTorch raises for n < 0
        # with another -1 too: "only one dimension can be inferred",
        # "invalid shape dimension").
        target = [b.size_from_data(d, "a reshape size") if dd else d
                  for d, dd in zip(target, data)]
    if any(is_unbacked(d) for d in list(target) + [total]):
        # A data-dependent size (kt.nonzero's count): nothing to check
        # now; kt.reshape checks the element count when it runs.
        inferred = None
        if infer:
            rest = prod(d for i, d in enumerate(target) if i != infer[0])
            if not isinstance(rest, Sym) and rest == 0:
                target[infer[0]] = 0
            else:
                # kt.reshape infers it when it runs (its -1 entry: an error
                # when the other sizes multiply to 0, where total // rest
                # divided by zero: SIGFPE on the CPU backend); later uses
                # read the result's dim.
                inferred = b.shape_env.new_unbacked()
                target[infer[0]] = inferred
        if len(target) == x.ndim and all(
                same(a, c) for a, c in zip(target, x.shape)):
            return alias(x)
        attr, sizes = _reshape_attr(b, x, target, "a reshape to a size")
        contiguous = x.layout is None
        r = view_op(b, "reshape", x, {"shape": attr}, target,
                    _reshape_back if contiguous else None,
                    None if contiguous else "unknown", sizes=sizes)
        if inferred is not None:
            b.shape_env.unbacked_source[inferred.key[1]] = (
                "dim", r, infer[0])
        return r
    if infer:
        rest = prod(d for i, d in enumerate(target) if i != infer[0])
        if value(rest) == 0:
            raise b.error("cannot reshape a tensor of %d elements into a "
                          "shape with a 0 and a -1" % value(total))
        if value(total) % value(rest):
            raise b.error("shape %s is invalid for input of size %d" % (
                [value(d) for d in target], value(total)))
        if not isinstance(total, Sym):
            # A static element count over symbolic sizes: the inferred size
            # moves when they do, so they must stay what they are.
            b.static(rest, "a reshape inferring a size from other sizes")
            inferred = value(total) // value(rest)
        else:
            if isinstance(rest, Sym) and hasattr(b, "check_sizes"):
                # The other sizes may multiply to 0 on a later call (dims
                # marked or made dynamic): PyTorch's error then, before the
                # program runs, where `total // rest` divided by zero.
                b.check_sizes(
                    rest, 1, "cannot reshape a tensor into shape %s: the "
                    "sizes other than the -1 multiply to 0, so the -1 is "
                    "ambiguous or the shape invalid (PyTorch: 'cannot "
                    "reshape tensor of 0 elements ... ambiguous', 'shape "
                    "... is invalid for input of size ...')",
                    [-1 if i == infer[0] else d
                     for i, d in enumerate(target)])
            inferred = total // rest
        target[infer[0]] = inferred
    if value(prod(target)) != value(total):
        raise b.error("shape %s is invalid for input of size %d" % (
            [value(d) for d in target], value(total)))
    if all(same(a, c) for a, c in zip(target, x.shape)) and \
            len(target) == x.ndim:
        return alias(x)
    attr, sizes = _reshape_attr(b, x, target, "a reshape to a size",
                                infer[0] if infer else None)
    # A reshape of a permuted or strided tensor may be a copy in PyTorch
    # (reshape) or an error (view): a write through it is refused.
    contiguous = x.layout is None
    return view_op(b, "reshape", x, {"shape": attr}, target,
                   _reshape_back if contiguous else None,
                   None if contiguous else "unknown", sizes=sizes)


both("reshape")(reshape)
method("view")(lambda b, x, *shape, **kw: _view(b, x, *shape, **kw))


def _view(b, x, *shape, dtype=None):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise b.error("Tensor.view(dtype) (a bit cast) is not supported")
    return reshape(b, x, *shape)


@method("view_as", "reshape_as")
def view_as(b, x, other):
    return reshape(b, x, *other.shape)


@both("flatten")
def flatten(b, x, start_dim=0, end_dim=-1):
    x = need_tensor(b, x, "flatten")
    if x.ndim == 0:
        return reshape(b, x, 1)
    s = norm_dim(b, start_dim, x.ndim)
    e = norm_dim(b, end_dim, x.ndim)
    if s > e:
        raise b.error("flatten: start_dim after end_dim")
    if s == e:
        return x
    target = list(x.shape[:s]) + [prod(x.shape[s:e + 1])] + list(
        x.shape[e + 1:])
    return reshape(b, x, target)


@both("unflatten")
def unflatten(b, x, dim, sizes):
    x = need_tensor(b, x, "unflatten")
    d = norm_dim(b, dim, x.ndim)
    sizes = list(sizes)
    if any(is_python_scalar(s) for s in sizes):
        # Sizes read from data (`.item()`): reshape's rules (view(n, -1)).
        return reshape(b, x, list(x.shape[:d]) + sizes + list(
            x.shape[d + 1:]))
    n = x.shape[d]
    infer = [i for i, s in enumerate(sizes)
             if not isinstance(s, Sym) and s == -1]
    if len(infer) > 1:
        raise b.error("unflatten: only one dimension can be inferred")
    rest = prod(s for i, s in enumerate(sizes) if not infer or i != infer[0])
    shown = [value(s) for s in sizes]
    if not isinstance(rest, Sym):
        # PyTorch infers a -1 from dim d's size alone (infer_size), not
        # from the element count: unflatten(1, (-1, 2)) of a [0, 4, 3]
        # tensor is [0, 2, 2, 3], where a reshape's -1 would be ambiguous.
        # The divisor is a number: no division by a run-time size.
        if infer and rest == 0 and value(n) == 0:
            raise b.error("cannot reshape tensor of 0 elements into shape "
                          "%s because the unspecified dimension size -1 can "
                          "be any value and is ambiguous" % shown)
        if (rest == 0 or value(n) % rest) if infer else value(n) != rest:
            raise b.error("unflatten: Provided sizes %s don't multiply up to "
                          "the size of dim %d (%d) in the input tensor"
                          % (shown, d, value(n)))
        if isinstance(n, Sym) and hasattr(b, "check_sizes"):
            # dim d may have another size on a later call (dynamic).
            what = ("unflatten: Provided sizes %s don't multiply up to the "
                    "size of dim %d %%s in the input tensor" % (shown, d))
            if infer:
                b.check_sizes(-(n % rest), 0, what, [n])
            else:
                b.check_sizes(n - rest, 0, what, [n])
                b.check_sizes(rest - n, 0, what, [n])
        if infer:
            sizes[infer[0]] = n // rest
    return reshape(b, x, list(x.shape[:d]) + sizes + list(
        x.shape[d + 1:]))


def permute(b, x, dims):
    x = need_tensor(b, x, "permute")
    dims = [norm_dim(b, d, x.ndim) for d in dims]
    if sorted(dims) != list(range(x.ndim)):
        raise b.error("permute dims %s are not a permutation of %d dims"
                      % (dims, x.ndim))
    if dims == list(range(x.ndim)):
        return alias(x)
    back = [dims.index(i) for i in range(x.ndim)]
    return view_op(b, "permute", x, {"dims": dims},
                   [x.shape[d] for d in dims],
                   lambda b, base, new: permute(b, new, back), "permuted")


@both("permute")
def _permute(b, x, *dims):
    return permute(b, x, sizes_arg(dims))


def transpose(b, x, d0, d1):
    x = need_tensor(b, x, "transpose")
    if x.ndim == 0:
        return alias(x)
    a, c = norm_dim(b, d0, x.ndim), norm_dim(b, d1, x.ndim)
    if a == c:
        return alias(x)
    shape = list(x.shape)
    shape[a], shape[c] = shape[c], shape[a]
    return view_op(b, "transpose", x, {"dim0": a, "dim1": c}, shape,
                   lambda b, base, new: transpose(b, new, a, c), "permuted")


both("transpose", "swapaxes", "swapdims")(transpose)


@both("t")
def t(b, x):
    x = need_tensor(b, x, "t")
    if x.ndim > 2:
        raise b.error("t() expects a tensor of rank <= 2")
    return transpose(b, x, 0, 1) if x.ndim == 2 else alias(x)


@both("unsqueeze")
def unsqueeze(b, x, dim):
    x = need_tensor(b, x, "unsqueeze")
    d = b.static(dim, "an unsqueeze dim")
    if not -x.ndim - 1 <= d <= x.ndim:
        raise b.error("unsqueeze dim %d out of range" % d)
    d %= x.ndim + 1
    shape = list(x.shape)
    shape.insert(d, 1)
    return view_op(b, "unsqueeze", x, {"dim": d}, shape, _reshape_back,
                   x.layout)


@both("squeeze")
def squeeze(b, x, dim=None):
    x = need_tensor(b, x, "squeeze")
    dims = norm_dims(b, dim, x.ndim)
    if dims is None:
        dims = list(range(x.ndim))
    drop = []
    symbolic = False
    for d in dims:
        if x.ndim == 0:
            break
        size = x.shape[d]
        if isinstance(size, Sym):
            size = b.static(size, "squeezing a dim")
            symbolic = symbolic or size == 1
        if size == 1:
            drop.append(d)
    if not drop:
        return alias(x)
    shape = [s for i, s in enumerate(x.shape) if i not in drop]
    dynamic = _ir.DYNAMIC_SYMS.get() or frozenset()
    if symbolic and x.layout is None and not any(
            is_unbacked(d) or (isinstance(d, Sym) and d.syms & dynamic)
            for d in shape):
        # A dim of size 1 the capture specialized may still be `?` in the
        # program's types (kt.full sized by `x.shape` keeps its sizes
        # dynamic, so the runtime can make the input dims dynamic), and
        # kt.squeeze keeps `?` dims: `torch.zeros(x.shape).squeeze()` then
        # failed when it ran. kt.reshape to the squeezed (static) shape
        # says it. (With other dims dynamic, kt.squeeze as before.)
        return reshape(b, x, shape)
    return view_op(b, "squeeze", x, {"dim": sorted(drop)}, shape,
                   _reshape_back, x.layout)


def expand(b, x, sizes):
    x = need_tensor(b, x, "expand")
    sizes = list(sizes)
    if len(sizes) < x.ndim:
        raise b.error("expand: %d sizes for a tensor of rank %d" % (
            len(sizes), x.ndim))
    lead = len(sizes) - x.ndim
    attr, shape = [], []
    # Symbolic sizes a dim of size 1 (or a new leading dim) broadcasts to
    # (`cls.expand(t.shape[0], -1, -1)` with a dynamic batch): {dim: Sym}.
    dynamic = {}
    for i, s in enumerate(sizes):
        if i < lead:
            if isinstance(s, Sym) and b.index_of(s) is not None:
                dynamic[i] = s
                attr.append(1)
                shape.append(s)
                continue
            s = b.static(s, "a new leading dim of expand")
            attr.append(s)
            shape.append(s)
            continue
        d = x.shape[i - lead]
        if not isinstance(s, Sym) and s == -1 or same(s, d):
            attr.append(-1)
            shape.append(d)
            continue
        if isinstance(d, Sym):
            d = b.static(d, "expanding a dim")
        if d != 1 and value(s) != d:
            raise b.error("expand: size %d of dim %d is not %d" % (
                value(s), i, d))
        if isinstance(s, Sym) and d == 1 and b.index_of(s) is not None:
            dynamic[i] = s
            attr.append(-1)
            shape.append(s)
            continue
        s = b.static(s, "the size an expand broadcasts to")
        attr.append(s)
        shape.append(s)
    if not dynamic:
        if all(a == -1 for a in attr):
            return alias(x)
        # Several elements of an expanded view share one of x: PyTorch
        # refuses writes through it.
        return view_op(b, "expand", x, {"size": attr}, shape, None,
                       "strided")
    # kt.expand's sizes are static: the static part is a kt.expand (size 1
    # kept where the size is symbolic), the symbolic sizes come from a
    # product with ones of those sizes (kt.full with dynamic sizes: x * 1
    # is x exactly, NaN, infinities and -0.0 included).
    static_shape = [1 if i in dynamic else d for i, d in enumerate(shape)]
    ones_shape = [dynamic.get(i, 1) for i in range(len(shape))]

    def emit(b, base):
        y = base
        if len(static_shape) != base.ndim or any(
                a not in (-1, 1) for a in attr):
            y = b.op("expand", [base], {"size": attr}, shape=static_shape,
                     dtype=base.dtype)
        return binary(b, "mul", y, full(b, ones_shape, 1, base.dtype))

    return link_view(emit(b, x), x, emit, None, "strided")


@method("expand")
def _expand(b, x, *sizes):
    return expand(b, x, sizes_arg(sizes))


@method("expand_as")
def expand_as(b, x, other):
    return expand(b, x, other.shape)


@both("broadcast_to")
def broadcast_to(b, x, size):
    return expand(b, x, size)


@method("repeat")
def repeat(b, x, *sizes):
    x = need_tensor(b, x, "repeat")
    reps = [b.static(r, "a repeat count") for r in sizes_arg(sizes)]
    if len(reps) < x.ndim:
        raise b.error("repeat: fewer repeats than dims")
    lead = len(reps) - x.ndim
    shape = [1] * lead + list(x.shape)
    y = reshape(b, x, shape) if lead else x
    # [.., d, ..] -> [.., r, d, ..] expanded -> reshaped to [.., r*d, ..]
    inter, target, final = [], [], []
    for r, d in zip(reps, shape):
        inter.extend([1, d])
        target.extend([r, d])
        final.append(r * d)
    y = reshape(b, y, inter)
    y = expand(b, y, target)
    return copy_of(reshape(b, y, final))


@method("contiguous")
def contiguous(b, x, memory_format=None):
    return x


@both("clone")
def clone(b, x, *, memory_format=None):
    return copy_of(need_tensor(b, x, "clone"))


def stop_gradient(b, x):
    """x as a value that carries no gradient (Tensor.detach, x.data): a
    same-type kt.cast marked `kg.stop_gradient`, a barrier for
    kiln-autodiff's activity analysis (the cast folds away when lowered).
    Integer and bool tensors carry no gradient anyway."""
    x = need_tensor(b, x, "detach")
    if not x.dtype.is_floating_point:
        return x
    return b.op("cast", [x], {"dtype": x.dtype, "kg.stop_gradient": True},
                shape=x.shape, dtype=x.dtype)


@both("detach")
def detach(b, x):
    return detached_alias(b, x)


def detached_alias(b, x):
    """`x.detach()` and `x.data`: x's value without a gradient, and, as in
    PyTorch, an alias of x's memory: a write through it is a write to x
    (`ema.data.mul_(0.9).add_(...)`, `h.detach().zero_()`), which autograd
    does not see: x keeps its gradient history and takes the new value.
    So x's new value is the written one where no gradient reaches x, else
    `stop_gradient(new) + (x - stop_gradient(x))` (the new value, x's
    gradient; an infinite or NaN element of x makes that element NaN).
    Before 2026-11-30 the result was a separate value and such writes were
    lost (`test_detach.py`)."""
    x = need_tensor(b, x, "detach")
    if not x.dtype.is_floating_point:
        return x

    def emit(b, base):
        return stop_gradient(b, base)

    def inverse(b, base, new):
        # (autograd does not see the write: x's new value never carries
        # the written value's gradient)
        new = stop_gradient(b, cast(b, new, base.dtype))
        if not _requires_grad(b, base, at_node=False):
            return new
        # (a write under `no_grad`: its ops are barriers, these are not)
        barrier = b.cur_attrs.pop("kg.stop_gradient", None)
        try:
            return add(b, new, sub(b, base, stop_gradient(b, base)))
        finally:
            if barrier is not None:
                b.cur_attrs["kg.stop_gradient"] = barrier

    return link_view(emit(b, x), x, emit, inverse, x.layout)


@method("cpu")
def cpu(b, x, *args, **kw):
    return x


@method("cuda")
def cuda(b, x, *args, **kw):
    raise b.error("Tensor.cuda(): kiln runs on the CPU")


@method("requires_grad_")
def requires_grad_(b, x, requires_grad=True):
    # Makes a leaf that autograd tracks (or, on a computed value, raises
    # in eager): PyTorch's to do, a graph break. Before, it did nothing
    # here: `torch.autograd.grad(y, x.clone().requires_grad_())` found no
    # path to x.
    raise b.error("Tensor.requires_grad_(): a leaf that autograd tracks is "
                  "PyTorch's to make (runs eagerly)")


_DTYPE_METHODS = {"float": torch.float32, "double": torch.float64,
                  "half": torch.float16, "bfloat16": torch.bfloat16,
                  "long": torch.int64, "int": torch.int32, "short": torch.int16,
                  "char": torch.int8, "byte": torch.uint8, "bool": torch.bool}

for _m, _dt in _DTYPE_METHODS.items():
    def _make(dt):
        def conv(b, x, memory_format=None):
            return copy_of(cast(b, x, dt)) if x.dtype != dt else x
        return conv
    METHODS[_m] = _make(_dt)


@method("to")
def to(b, x, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, TensorVal):
            dtype = a.dtype
        elif isinstance(a, (str, torch.device)):
            device = a
    if device is not None and torch.device(device).type != "cpu":
        raise b.error("Tensor.to(%s): kiln runs on the CPU" % device)
    if dtype is None or dtype == x.dtype:
        return x
    return copy_of(cast(b, x, dtype))


@method("type")
def type_(b, x, dtype=None, non_blocking=False):
    if dtype is None:
        raise b.error("Tensor.type() returns a string (not supported)")
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": torch.float32,
                 "torch.DoubleTensor": torch.float64,
                 "torch.LongTensor": torch.int64,
                 "torch.IntTensor": torch.int32,
                 "torch.ShortTensor": torch.int16,
                 "torch.CharTensor": torch.int8,
                 "torch.ByteTensor": torch.uint8,
                 "torch.BoolTensor": torch.bool,
                 "torch.HalfTensor": torch.float16}
        if dtype not in names:
            raise b.error("Tensor.type(%r)" % dtype)
        dtype = names[dtype]
    return to(b, x, dtype)


@method("type_as")
def type_as(b, x, other):
    return to(b, x, other.dtype)


@both("cat", "concat", "concatenate")
def cat(b, tensors, dim=0, *, out=None):
    ts = [need_tensor(b, t, "cat") for t in tensors]
    if not ts:
        raise b.error("cat of no tensors")
    ref = next((t for t in ts if not (t.ndim == 1 and value(t.shape[0]) == 0)),
               ts[0])
    d = norm_dim(b, dim, ref.ndim)
    dt = result_type(b, *ts)
    ts = [cast(b, t, dt) for t in ts
          if t.ndim == ref.ndim or not (t.ndim == 1 and value(t.shape[0]) == 0)]
    shape = list(ref.shape)
    total = 0
    for t in ts:
        if t.ndim != ref.ndim:
            raise b.error("cat of tensors of ranks %d and %d" % (
                ref.ndim, t.ndim))
        for i in range(ref.ndim):
            if i != d and not same(t.shape[i], shape[i]) and \
                    value(t.shape[i]) != value(shape[i]):
                raise b.error("cat: sizes of dim %d differ (%d vs %d)" % (
                    i, value(t.shape[i]), value(shape[i])))
        total = total + t.shape[d]
    shape[d] = total
    if len(ts) == 1:
        return copy_of(ts[0])
    return b.op("concat", ts, {"dim": d}, shape=shape, dtype=dt)


@both("stack")
def stack(b, tensors, dim=0, *, out=None):
    ts = [need_tensor(b, t, "stack") for t in tensors]
    if not ts:
        raise b.error("stack of no tensors")
    d = b.static(dim, "a stack dim")
    r = ts[0].ndim
    if not -r - 1 <= d <= r:
        raise b.error("stack dim %d out of range" % d)
    d %= r + 1
    dt = result_type(b, *ts)
    ts = [cast(b, t, dt) for t in ts]
    for t in ts[1:]:
        if [value(x) for x in t.shape] != [value(x) for x in ts[0].shape]:
            raise b.error("stack expects tensors of equal size")
    shape = list(ts[0].shape)
    shape.insert(d, len(ts))
    return b.op("stack", ts, {"dim": d}, shape=shape, dtype=dt)


def slice_dim(b, x, dim, start, end, step):
    """x[start:end:step] along dim, with Python's slice rules."""
    # Bounds read from data (`x[:t.item()]`): unbacked sizes that kt.slice
    # applies with Python's rules when it runs (negative: from the end).
    if is_python_scalar(start):
        start = b.size_from_data(start, "a slice start")
    if is_python_scalar(end):
        end = b.size_from_data(end, "a slice end")
    size = x.shape[dim]
    step = 1 if step is None else b.static(step, "a slice step")
    if step <= 0:
        raise b.error("slice step must be positive")
    start_zero = start is None or (not isinstance(start, Sym) and start == 0)
    end_full = end is None or same(end, size) or (
        not isinstance(end, Sym) and end >= 2 ** 62)
    if start_zero and end_full and step == 1:
        return alias(x)
    dyn = [v for v in (start, None if end_full else end)
           if isinstance(v, Sym)]
    if dyn and hasattr(b, "index_of") and \
            all(b.index_of(v) is not None for v in dyn):
        return _dynamic_slice(b, x, dim, start, None if end_full else end,
                              step)
    if isinstance(size, Sym):
        s0 = 0 if start is None else start
        if end_full and not isinstance(s0, Sym) and 0 <= s0 <= value(size):
            # [s0::step] of a symbolic size: the length stays symbolic
            # (0 when a later size is below s0: kt.slice clamps s0).
            length = (size - s0 + step - 1) // step
            if s0 > 0:
                length = smax(length, 0)
            attrs = {"dim": dim, "start": s0}
            if step != 1:
                attrs["step"] = step
            return _slice_op(b, x, dim, attrs, length)
        if not isinstance(start, Sym) and not isinstance(end, Sym):
            # Static bounds of a symbolic size (x[:1], x[-1:], x[1:3]):
            # kt.slice clamps them at run time; the length is the symbolic
            # len(range(size)[start:end:step]) (min / max, no guard).
            def clamp(v):
                return smin(v, size) if v >= 0 else smax(size + v, 0)
            lo = 0 if start is None else clamp(start)
            hi = size if end_full else clamp(end)
            length = smax((hi - lo + step - 1) // step, 0)
            attrs = {"dim": dim, "start": 0 if start is None else start}
            if not end_full:
                attrs["end"] = end
            if step != 1:
                attrs["step"] = step
            return _slice_op(b, x, dim, attrs, length)
        size = b.static(size, "slicing a dim")
    s0 = None if start is None else b.static(start, "a slice start")
    e0 = None if end_full else b.static(end, "a slice end")
    length = len(range(size)[slice(s0, e0, step)])
    attrs = {"dim": dim, "start": 0 if s0 is None else s0}
    if e0 is not None:
        attrs["end"] = e0
    if step != 1:
        attrs["step"] = step
    return _slice_op(b, x, dim, attrs, length)


def _dynamic_slice(b, x, dim, start, end, step):
    """x[start:end:step] along dim where a bound is a symbolic size
    (x[:, :T], x[..., :T - 1],
    x.narrow(d, s, T), GPT-2's bias[:, :, :T, :T]): kt.slice with that
    bound as an `index` operand (dynamic_start / dynamic_end), applied with
    Python's rules at run time; the length stays symbolic (no
    specialization)."""
    size = x.shape[dim]
    lo = 0 if start is None else slice_index(start, size)
    hi = size if end is None else slice_index(end, size)
    length = smax((hi - lo + step - 1) // step, 0)
    attrs, operands = {"dim": dim}, []
    if isinstance(start, Sym):
        attrs["dynamic_start"] = _ir.Raw("unit")
        operands.append(start)
    elif start is not None:
        attrs["start"] = start
    if isinstance(end, Sym):
        attrs["dynamic_end"] = _ir.Raw("unit")
        operands.append(end)
    elif end is not None:
        attrs["end"] = end
    if step != 1:
        attrs["step"] = step
    return _slice_op(b, x, dim, attrs, length, operands)


def _sub_layout(x, dim, step=1):
    """The layout of a slice or select of x along dim: contiguous when x is
    and every dim before `dim` has size 1."""
    if x.layout is not None:
        return x.layout
    if step == 1 and all(not isinstance(s, Sym) and s == 1
                         for s in x.shape[:dim]):
        return None
    return "strided"


class _SliceAttrs(dict):
    """kt.slice's attributes, with `bounds`: the symbolic sizes of its
    dynamic bounds (its `index` operands, in order)."""

    def __init__(self, attrs, bounds=()):
        super().__init__(attrs)
        self.bounds = tuple(bounds)


def _slice_scatter(b, base, new, info):
    """kt.slice_scatter of `new` into `base` at the slice `info`
    (_SliceAttrs: the same attributes and dynamic bounds)."""
    bounds = [b.index_of(v) for v in getattr(info, "bounds", ())]
    return b.op("slice_scatter", [base, new] + bounds, dict(info),
                shape=base.shape, dtype=base.dtype)


def _slice_op(b, x, dim, attrs, length, sizes=()):
    attrs = _SliceAttrs(attrs, sizes)

    def inverse(b, base, new):
        return _slice_scatter(b, base, new, attrs)

    r = view_op(b, "slice", x, dict(attrs), _with(x.shape, dim, length),
                inverse, _sub_layout(x, dim, attrs.get("step", 1)), sizes)
    r.slice_attrs = attrs  # a write through it is a kt.slice_scatter
    return r


def _with(shape, d, v):
    s = list(shape)
    s[d] = v
    return s


def select(b, x, dim, index):
    x = need_tensor(b, x, "select")
    d = norm_dim(b, dim, x.ndim)
    i = b.static(index, "a select index")
    size = value(x.shape[d])
    if not -size <= i < size:
        raise b.error("index %d is out of bounds for dim %d of size %d"
                      % (i, d, size))
    shape = [s for k, s in enumerate(x.shape) if k != d]

    def inverse(b, base, new):
        # The index as written (kt.select_scatter counts a negative one
        # from the end when it runs): `i % size` baked the example's size
        # in, so `y[:, -1] = v` with dim 1 dynamic wrote the capture's last
        # column on every later size.
        return b.op("select_scatter", [base, new],
                    {"dim": d, "index": i}, shape=base.shape,
                    dtype=base.dtype)

    return view_op(b, "select", x, {"dim": d, "index": i}, shape, inverse,
                   _sub_layout(x, d))


both("select")(select)


@both("narrow")
def narrow(b, x, dim, start, length):
    x = need_tensor(b, x, "narrow")
    d = norm_dim(b, dim, x.ndim)
    def dynamic(v):
        # A symbolic size stays symbolic (kt.slice with dynamic bounds); a
        # start must be provably >= 0 for that.
        return isinstance(v, Sym) and hasattr(b, "index_of") and nonneg(v)

    s = start if dynamic(start) else b.static(start, "a narrow start")
    n = length if dynamic(length) else b.static(length, "a narrow length")
    if isinstance(s, Sym) or isinstance(n, Sym):
        # PyTorch's checks (narrow never clamps), on every call.
        if not isinstance(s, Sym) and s < 0:
            s += x.shape[d]
        b.check_sizes(n, 0, "narrow(): length must be non-negative "
                      "(input of shape %s)", x.shape)
        b.check_sizes(x.shape[d] - s - n, 0, "narrow(): start + length "
                      "exceeds the size of dim %d of the input of shape "
                      "%%s" % d, x.shape)
        return slice_dim(b, x, d, s, s + n, 1)
    # Static start and length: PyTorch's checks (narrow never clamps; a
    # slice would: x.narrow(1, 0, -1) was x[:, 0:-1], x.narrow(1, 2, 5) of
    # a dim of 3 was x[:, 2:3]).
    size = x.shape[d]
    if not -value(size) <= s <= value(size):
        raise b.error("narrow(): start out of range (expected to be in "
                      "range of [%d, %d], but got %d)"
                      % (-value(size), value(size), s))
    if s >= 0 and isinstance(size, Sym) and hasattr(b, "check_sizes"):
        # A dynamic dim (kt.slice clamps to it when it runs): the same
        # check on every call.
        if n < 0:
            raise b.error("narrow(): start (%d) + length (%d) exceeds "
                          "dimension size (%d)." % (s, n, value(size)))
        b.check_sizes(size - s - n, 0, "narrow(): start (%d) + length (%d) "
                      "exceeds the size of dim %d of the input of shape %%s"
                      % (s, n, d), x.shape)
        return slice_dim(b, x, d, s, s + n, 1)
    size = b.static(size, "a narrow start from the end") if s < 0 else \
        b.static(size, "a narrow's dim")
    if s < 0:
        s += size
    if n < 0 or s + n > size:
        raise b.error("narrow(): start (%d) + length (%d) exceeds dimension "
                      "size (%d)." % (s, n, size))
    return slice_dim(b, x, d, s, s + n, 1)


@function(operator.getitem)
def getitem(b, x, idx):
    if not isinstance(x, TensorVal):
        return python_call(b, operator.getitem, (x, idx), {})
    return tensor_index(b, x, idx)


METHODS["__getitem__"] = getitem


# ------------------------------------- data-dependent sizes (issue 16)
#
# kt.nonzero's count is a size known only when the program runs: an
# _symbolic.Unbacked (`?` in the IR, never guarded, never specialized).
# nonzero / argwhere are the op; masked_select(x, m) and x[m] with a mask
# that is not a constant are a gather of the flattened x by the nonzero
# positions of the flattened mask (one kt.index_select, whose gradient is
# a scatter-add).


def nonzero_op(b, x):
    """kt.nonzero of x: int64 [u, rank(x)], u a new unbacked size."""
    x = need_tensor(b, x, "nonzero")
    u = b.shape_env.new_unbacked()
    r = b.op("nonzero", [x], shape=(u, x.ndim), dtype=torch.int64)
    b.shape_env.unbacked_source[u.key[1]] = r
    return r


def nonzero_column(b, nz, k):
    """Column k of a kt.nonzero result: the int64 [u] indices of dim k."""
    return b.op("select", [nz], {"dim": 1, "index": k},
                shape=(nz.shape[0],), dtype=torch.int64)


def masked_rows(b, x, mask):
    """x[mask] for a mask covering x's leading mask.ndim dims (same sizes):
    [u] + x.shape[mask.ndim:], the rows of x where the mask is true, in
    row-major order."""
    k = mask.ndim
    if mask.dtype != torch.bool:
        mask = cast(b, mask, torch.bool)
    for d in range(k):
        if not same(mask.shape[d], x.shape[d]):
            if value(mask.shape[d]) != value(x.shape[d]):
                raise b.error(
                    "The shape of the mask %s at index %d does not match "
                    "the shape of the indexed tensor %s at index %d"
                    % ([value(s) for s in mask.shape], d,
                       [value(s) for s in x.shape], d))
            b.static(mask.shape[d], "a mask's size against the tensor's")
            b.static(x.shape[d], "a mask's size against the tensor's")
    flat_mask = reshape(b, mask, -1) if k != 1 else mask
    rows = reshape(b, x, [-1] + list(x.shape[k:])) if k != 1 else x
    idx = nonzero_column(b, nonzero_op(b, flat_mask), 0)
    return index_select(b, rows, 0, idx)


def masked_select_op(b, x, mask):
    """torch.masked_select: x and mask broadcast together, the selected
    elements as a 1-D tensor [u]."""
    x = need_tensor(b, x, "masked_select")
    mask = need_tensor(b, mask, "masked_select's mask")
    if mask.dtype not in _MASK_DTYPES:
        raise b.error("masked_select: expected BoolTensor for mask, got %s"
                      % mask.dtype)
    shape = broadcast(b, x.shape, mask.shape)
    if tuple(map(key, x.shape)) != tuple(map(key, shape)):
        x = expand(b, x, shape)
    if tuple(map(key, mask.shape)) != tuple(map(key, shape)):
        mask = expand(b, mask, shape)
    flat = reshape(b, x, -1)
    m = reshape(b, mask, -1)
    return masked_rows(b, flat, m)


def unique_op(b, x, consecutive, return_inverse, return_counts, what):
    """torch.unique (dim=None, sorted) and torch.unique_consecutive of the
    flattened x: (values [u], inverse (x's shape, int64), counts [u]), u a
    new unbacked size (kt.nonzero's count). Sorted: a stable kt.argsort of
    the flattened x and its gather; a run starts where an element differs
    from the one before it (`ne`, so every NaN is its own run, as PyTorch's
    NaN != NaN; -0.0 equals 0.0 and the first in input order is kept); the
    values are the run starts (kt.nonzero of that mask, an index_select),
    the inverse the running count of starts minus one (scattered back
    through the sort permutation), the counts a scatter-add of ones by it."""
    x = need_tensor(b, x, what)
    flat = reshape(b, x, -1)
    n = flat.shape[0]
    pos = sub(b, b.op("cumsum", [full(b, [n], 1, torch.int64)], {"dim": 0},
                      shape=(n,), dtype=torch.int64), 1)
    if consecutive:
        srt, perm = flat, None
    else:
        perm = _argsort(b, flat, 0, False)
        srt = b.op("gather", [flat, perm], {"dim": 0}, shape=(n,),
                   dtype=flat.dtype)
    prev = b.op("gather", [srt, clamp_min(b, sub(b, pos, 1), 0)], {"dim": 0},
                shape=(n,), dtype=flat.dtype)
    start = binary(b, "logical_or",
                   binary(b, "ne", srt, prev, out_dtype=torch.bool),
                   binary(b, "eq", pos, b.constant(0, torch.int64),
                          out_dtype=torch.bool), out_dtype=torch.bool)
    idx = nonzero_column(b, nonzero_op(b, start), 0)
    # PyTorch has no derivative for unique (backward raises "not
    # implemented"): no gradient flows through the values (as zeta's self).
    values = stop_gradient(b, index_select(b, srt, 0, idx))
    u = idx.shape[0]
    inverse, counts = _unique_runs(b, start, perm, n, u, return_inverse,
                                   return_counts)
    if inverse is not None and x.ndim != 1:
        inverse = reshape(b, inverse, list(x.shape))
    return values, inverse, counts


def _unique_runs(b, start, perm, n, u, return_inverse, return_counts):
    """unique's inverse ([n], int64, in input order: each element's run,
    the running count of run starts minus one, scattered back through the
    sort permutation `perm` when there is one) and counts ([u]: a
    scatter-add of ones by run), each None unless asked for."""
    run = sub(b, b.op("cumsum", [cast(b, start, torch.int64)], {"dim": 0},
                      shape=(n,), dtype=torch.int64), 1)
    inverse = counts = None
    if return_inverse:
        inverse = run if perm is None else b.op(
            "scatter", [full(b, [n], 0, torch.int64), perm, run], {"dim": 0},
            shape=(n,), dtype=torch.int64)
    if return_counts:
        counts = b.op("scatter", [full(b, [u], 0, torch.int64), run,
                                  full(b, [n], 1, torch.int64)],
                      {"dim": 0, "reduce": _ir.Raw("#kt.scatter_reduce<sum>")},
                      shape=(u,), dtype=torch.int64)
    return inverse, counts


def unique_dim_op(b, x, dim, consecutive, return_inverse, return_counts,
                  what):
    """torch.unique / unique_consecutive with a dim: the distinct slices
    along `dim` (values: x's shape with [u] at dim; inverse and counts
    [n] and [u], int64). x is laid out as rows [n, m] (x.transpose(dim, 0)
    with the other dims flattened, as PyTorch's kernel: m must be static
    and non-zero, as PyTorch refuses 0-sized other dims); unique sorts the rows lexicographically with one
    stable kt.argsort per column, last column first; a row starts a run
    where any element differs (`ne`) from the row before it; then as
    unique_op."""
    x = need_tensor(b, x, what)
    if x.ndim == 0:
        raise b.error("%s: dim specified for a 0-d tensor" % what)
    d = norm_dim(b, dim, x.ndim)
    rest = [x.shape[k] for k in range(x.ndim) if k != d]
    m = b.static(prod(rest), "%s: the size of the slices along dim" % what)
    if m == 0:
        raise b.error("There are 0 sized dimensions, and they aren't "
                      "selected, so unique cannot be applied")
    # PyTorch's layout: dim swapped with dim 0 (x.transpose(dim, 0)), the
    # other dims flattened in that order.
    perm_dims = list(range(x.ndim))
    perm_dims[0], perm_dims[d] = d, 0
    xm = permute(b, x, perm_dims) if d else x
    rows = reshape(b, xm, [x.shape[d], m]) if x.ndim != 2 or d else xm
    n = rows.shape[0]
    pos = sub(b, b.op("cumsum", [full(b, [n], 1, torch.int64)], {"dim": 0},
                      shape=(n,), dtype=torch.int64), 1)
    perm = None
    if not consecutive:
        for c in reversed(range(m)):
            col = select(b, rows, 1, c)
            if perm is not None:
                col = b.op("gather", [col, perm], {"dim": 0}, shape=(n,),
                           dtype=col.dtype)
            p2 = _argsort(b, col, 0, False)
            perm = p2 if perm is None else b.op(
                "gather", [perm, p2], {"dim": 0}, shape=(n,),
                dtype=torch.int64)
        rows = index_select(b, rows, 0, perm)
    prev = index_select(b, rows, 0, clamp_min(b, sub(b, pos, 1), 0))
    diff = sum_(b, cast(b, binary(b, "ne", rows, prev, out_dtype=torch.bool),
                        torch.int64), [1])
    start = binary(b, "logical_or",
                   binary(b, "ne", diff, b.constant(0, torch.int64),
                          out_dtype=torch.bool),
                   binary(b, "eq", pos, b.constant(0, torch.int64),
                          out_dtype=torch.bool), out_dtype=torch.bool)
    idx = nonzero_column(b, nonzero_op(b, start), 0)
    u = idx.shape[0]
    vals = index_select(b, rows, 0, idx)
    vals = reshape(b, vals, [u] + [xm.shape[k] for k in range(1, x.ndim)])
    if d:
        vals = permute(b, vals, perm_dims)  # a swap is its own inverse
    values = stop_gradient(b, copy_of(vals))
    inverse, counts = _unique_runs(b, start, perm, n, u, return_inverse,
                                   return_counts)
    return values, inverse, counts


_BINCOUNT_INTS = (torch.int64, torch.int32, torch.int16, torch.int8,
                  torch.uint8)


def bincount_op(b, x, weights=None, minlength=0):
    """torch.bincount: kt.bincount, whose length max(max(x) + 1, minlength)
    is a new unbacked size. Weights other than float32 are cast to float64
    (PyTorch's result dtypes). An empty x gives int64 zeros even with
    weights (PyTorch's kernel), so with weights the length of x is
    specialized (an unbacked one is refused)."""
    x = need_tensor(b, x, "bincount")
    if x.ndim != 1 or x.dtype not in _BINCOUNT_INTS:
        raise b.error("bincount only supports 1-d non-negative integral "
                      "inputs (got a %d-d %s tensor)" % (x.ndim, x.dtype))
    minlength = b.static(minlength, "bincount's minlength")
    if not isinstance(minlength, int) or isinstance(minlength, bool):
        raise b.error("bincount's minlength must be an int, got %r"
                      % (minlength,))
    if minlength < 0:
        raise b.error("bincount: minlength should be >= 0, got %d"
                      % minlength)
    operands = [x]
    dtype = torch.int64
    if weights is not None:
        weights = need_tensor(b, weights, "bincount's weights")
        if weights.ndim != 1 or (
                not is_unbacked(x.shape[0]) and
                not is_unbacked(weights.shape[0]) and
                value(x.shape[0]) != value(weights.shape[0])):
            raise b.error("weights should be 1-d and have the same length "
                          "as input")
        n = b.static(x.shape[0], "bincount with weights (PyTorch's result "
                     "for an empty input is int64)")
        if n == 0:
            return full(b, [minlength], 0, torch.int64)
        dtype = torch.float32 if weights.dtype == torch.float32 \
            else torch.float64
        if weights.dtype != dtype:
            weights = cast(b, weights, dtype)
        operands.append(weights)
    u = b.shape_env.new_unbacked()
    attrs = {"minlength": minlength} if minlength else {}
    r = b.op("bincount", operands, attrs, shape=(u,), dtype=dtype)
    b.shape_env.unbacked_source[u.key[1]] = r
    return r


def tensor_index(b, x, idx):
    """x[idx]: basic entries (ints, slices, None, Ellipsis) as views, index
    tensors (advanced indexing) as one kt.index_select (see _advanced_read)."""
    entries = _index_entries(b, x, idx, write=False)
    masks = [k for k, i in enumerate(entries) if isinstance(i, TensorVal)
             and i.dtype in _MASK_DTYPES]
    if masks:
        return _mask_read(b, x, entries, masks)
    r, _, adv = _basic_index(b, x, entries)
    if adv:
        return _advanced_read(b, r, adv)
    if r is x:
        return alias(x)
    return r


# ------------------------------------------ advanced indexing (issue 16 b6)
#
# x[idx] and x[idx] = v for every index PyTorch takes: ints, slices, None,
# Ellipsis, integer index tensors of any rank broadcast together (and lists
# of ints), boolean masks (constant ones as their nonzero positions; others
# only in assignments, as a kt.where). The basic entries are views
# (kt.select / kt.slice / kt.unsqueeze); the index tensors address the view
# through one linear index into the view with the indexed dims permuted to
# the front and collapsed (_AdvancedPlan), so a read is one kt.index_select
# and a write one kt.scatter: their gradients are a scatter-add and a gather.

_INDEX_DTYPES = (torch.int64, torch.int32)
_MASK_DTYPES = (torch.bool, torch.uint8)


def _has_tensor(xs):
    return any(_has_tensor(v) if isinstance(v, (list, tuple)) else
               isinstance(v, TensorVal) for v in xs)


def _index_entries(b, x, idx, write):
    """The entries of an index: a tuple with its Ellipsis expanded to full
    slices, lists as constant index tensors, constant masks as their
    nonzero positions. A mask that is not a constant stays (only
    assignments take it: _masked_write)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    entries = []
    for i in idx:
        if isinstance(i, bool):
            raise b.error("indexing with a Python bool (x[True]) is not "
                          "supported")
        if isinstance(i, (list, torch.Tensor)):
            if isinstance(i, list) and _has_tensor(i):
                raise b.error("an index that is a list of tensors")
            t = i if isinstance(i, torch.Tensor) else torch.tensor(
                _concrete(b, i, "a list index"))
            if not (t.dtype in _MASK_DTYPES or not t.dtype.is_floating_point):
                raise b.error("an index list of %s values" % t.dtype)
            i = b.constant_tensor(t)
        if isinstance(i, TensorVal):
            if i.dtype in _MASK_DTYPES:
                const = getattr(i, "const", None)
                if const is not None:
                    # A constant mask: its nonzero positions, one index
                    # tensor per dim it covers (PyTorch's expansion).
                    nz = const.bool().nonzero()
                    entries.extend(b.constant_tensor(nz[:, k].contiguous())
                                   for k in range(const.dim()))
                    if const.dim() == 0:
                        raise b.error("indexing with a 0-d boolean mask")
                    continue
            elif i.dtype not in _INDEX_DTYPES:
                raise b.error("tensors used as indices must be long, int, "
                              "byte or bool tensors, got %s" % i.dtype)
        elif not (i is None or i is Ellipsis or isinstance(i, slice) or
                  isinstance(i, (int, Sym))):
            raise b.error("an index of type %s" % type(i).__name__)
        entries.append(i)
    if sum(1 for i in entries if i is Ellipsis) > 1:
        raise b.error("an index with more than one Ellipsis")

    def dims_of(i):
        if i is None or i is Ellipsis:
            return 0
        if isinstance(i, TensorVal) and i.dtype in _MASK_DTYPES:
            return max(i.ndim, 1)
        return 1
    consumed = sum(dims_of(i) for i in entries)
    if consumed > x.ndim:
        raise b.error("too many indices for tensor of dimension %d"
                      % x.ndim)
    out = []
    for i in entries:
        if i is Ellipsis:
            out.extend([slice(None)] * (x.ndim - consumed))
        else:
            out.append(i)
    return out


def _is_full_slice(i):
    return isinstance(i, slice) and i.start is None and i.stop is None \
        and i.step is None


def _mask_read(b, x, entries, masks):
    """x[..., m, ...] with a boolean mask that is not a constant: a
    data-dependent size (masked_rows). The mask's dims move first, the
    rows are gathered, and the count goes where the mask's dims were, as
    PyTorch. Other index entries than full slices with it are refused."""
    if len(masks) != 1 or any(not _is_full_slice(i) for k, i in
                              enumerate(entries) if k != masks[0]):
        raise b.error("indexing with a boolean mask together with other "
                      "indices (only x[m] and x[:, m] with full slices are "
                      "supported; the result's size depends on the data)")
    p = masks[0]
    m = entries[p]
    if m.ndim == 0:
        raise b.error("indexing with a 0-d boolean mask")
    k = m.ndim
    order = list(range(p, p + k)) + [d for d in range(x.ndim)
                                     if not p <= d < p + k]
    xt = permute(b, x, order) if p else x
    r = masked_rows(b, xt, m)
    if p:
        back = list(range(1, p + 1)) + [0] + list(range(p + 1, r.ndim))
        r = permute(b, r, back)
    return r


def _basic_index(b, x, entries):
    """Applies the basic entries (ints select, slices slice, None
    unsqueezes) left to right; index tensors keep their dim. Returns the
    view, its steps (for writing back) and [(dim in the view, index)]."""
    r, dim, steps, adv = x, 0, [], []
    for i in entries:
        prev = r
        if i is None:
            r = unsqueeze(b, r, dim)
            steps.append(("unsqueeze", dim, None, prev))
            dim += 1
        elif isinstance(i, slice):
            r = slice_dim(b, r, dim, i.start, i.stop, i.step)
            steps.append(("slice", dim, getattr(r, "slice_attrs", None),
                          prev))
            dim += 1
        elif isinstance(i, TensorVal):
            adv.append((dim, i))
            dim += 1
        else:
            k = b.static(i, "an index")
            r = select(b, r, dim, k)
            # k as written: kt.select_scatter counts a negative one from
            # the end when it runs (the dim may be dynamic).
            steps.append(("select", dim, k, prev))
    return r, steps, adv


def _dim_size_tensor(b, r, d):
    """The size of r's dim d as a rank-0 int64 tensor computed at run time
    (for a dim marked dynamic, whose size the program may not bake in): the
    number of elements of an all-true mask of r's shape, cut to the first
    position of every other dim. (A tensor with another dim of size 0 gives
    0: it has nothing to index.) Where the size can be computed from the
    inputs' dims (FxImporter.index_of), it is the sum of a kt.full of ones
    of that size instead, right when another dim is 0 too (a batch mean,
    kl_div's batchmean, of a [2, 0, 3] tensor divides by 2, not 0)."""
    n = r.shape[d]
    if isinstance(n, Sym) and hasattr(b, "index_of") and \
            b.index_of(n) is not None:
        return sum_(b, full(b, [n], 1, torch.int64, "a dim's size"), [0])
    m = _dim_mask(b, r, d)
    return sum_(b, cast(b, m, torch.int64), list(range(r.ndim)))


def _dim_mask(b, r, d):
    """An all-true bool mask of r's shape cut to the first position of
    every dim but d: [1, .., n, .., 1] (n: dim d's size at run time)."""
    m = binary(b, "eq", r, r, out_dtype=torch.bool)
    if r.dtype.is_floating_point:
        # NaN != NaN: those positions count too.
        m = binary(b, "logical_or", m, b.op("isnan", [r], shape=r.shape,
                                            dtype=torch.bool),
                   out_dtype=torch.bool)
    for od in range(r.ndim):
        if od == d:
            continue
        if isinstance(m.shape[od], Sym):
            # [0:1] of a dim that may be dynamic too, without reading its
            # size (a dim of size 0 leaves nothing to index).
            m = _slice_op(b, m, od, {"dim": od, "start": 0, "end": 1}, 1)
        else:
            m = slice_dim(b, m, od, 0, 1, 1)
    return m


def _dim_iota(b, r, d):
    """0 .. n-1 along dim d (int64, [1, .., n, .., 1]) for a dim of r whose
    size n is known at run time only: the running count of _dim_mask."""
    m = cast(b, _dim_mask(b, r, d), torch.int64)
    c = b.op("cumsum", [m], {"dim": d}, shape=m.shape, dtype=torch.int64)
    return sub(b, c, 1)


class _AdvancedPlan:
    """How the index tensors `adv` address the view `r`: the view permuted
    with the indexed dims first (`perm`) and collapsed to [N] + rest, the
    flat linear index `linear` ([M], checked and wrapped), the broadcast
    index shape B and where B goes in the result (`pos`: in place of the
    indexed dims when they are adjacent, else first; a 0-d index is an int,
    as PyTorch selects it first)."""

    def __init__(self, b, r, adv):
        dims = [d for d, _ in adv]
        self.rest_dims = [d for d in range(r.ndim) if d not in dims]
        self.perm = dims + self.rest_dims
        # An index tensor may address a dim marked dynamic (`?`): its size
        # stays symbolic, negative indices wrap by the dim's size computed
        # at run time (_dim_size_tensor); with several index tensors the
        # linear index's strides and range checks are computed at run time
        # too (issue 16 batch 8). One index tensor may be of a dynamic
        # length itself; several need a static broadcast shape.
        one = len(adv) == 1

        # A data-dependent size (an unbacked one: x[m], torch.unique's
        # values indexed by its inverse) is as dynamic as a marked dim.
        def dyn(n):
            return b.is_marked_dynamic(n) or is_unbacked(n)

        # kt.reshape infers one size: collapsing to [N] + rest and back
        # with several index tensors takes one dim of r marked dynamic.
        several_dyn = not one and sum(1 for n in r.shape if dyn(n)) > 1
        sizes = [r.shape[d] if dyn(r.shape[d]) and
                 not several_dyn else b.static(
                     r.shape[d], "the size of an indexed dim (several index "
                     "tensors take one dim marked dynamic)" if several_dyn
                     else "the size of an indexed dim")
                 for d in dims]
        self.N = prod(sizes)
        self.B = list(broadcast(b, *[t.shape for _, t in adv]))
        self.B = [s if one and dyn(s) else
                  b.static(s, "the shape of the index tensors")
                  for s in self.B]
        self.M = prod(self.B)
        self.rest = [r.shape[d] for d in self.rest_dims]
        # Placement of B: the dims of the non-0-d indices, counted in the
        # view without the 0-d ones, must be consecutive to stay in place.
        zero = [d for d, t in adv if t.ndim == 0]
        nz = [d - sum(1 for z in zero if z < d) for d, t in adv if t.ndim]
        adjacent = all(q == p + 1 for p, q in zip(nz, nz[1:]))
        first = min((d for d, t in adv if t.ndim), default=0)
        self.pos = sum(1 for d in self.rest_dims if d < first) \
            if adjacent else 0
        wrapped = []
        for (d, t), n in zip(adv, sizes):
            t = cast(b, t, torch.int64)
            # Negative indices count from the end (PyTorch); what is still
            # out of [0, n) is kt.index_select's / kt.scatter's run-time
            # error at the user's line.
            if isinstance(n, Sym):
                n = _dim_size_tensor(b, r, d)
            t = b.op("where", [binary(b, "lt", t, 0, out_dtype=torch.bool),
                               add(b, t, n), t], shape=t.shape,
                     dtype=torch.int64)
            t = expand(b, t, self.B) if list(t.shape) != self.B else t
            wrapped.append(reshape(b, t, [self.M]))
        if len(wrapped) == 1:
            self.linear = wrapped[0]
        else:
            # Each index checked against its own dim (the linear index could
            # be in range when one of them is not): kt.index_select of an
            # iota laid along that dim, whose run-time check is the range
            # check (its message names the dim).
            # A dynamic dim's table is _dim_iota, its size in the strides
            # of the dims before it _dim_size_tensor (run-time values).
            lin = None
            for i, ((d, _), t, n) in enumerate(zip(adv, wrapped, sizes)):
                later = list(zip(dims[i + 1:], sizes[i + 1:]))
                stride = prod([m for _, m in later if not isinstance(m, Sym)])
                if isinstance(n, Sym):
                    table = _dim_iota(b, r, d)
                else:
                    table = reshape(b, arange(b, n), [1] * d + [n])
                t = reshape(b, index_select(b, table, d, t), [self.M])
                t = mul(b, t, stride) if stride != 1 else t
                for od, m in later:
                    if isinstance(m, Sym):
                        t = mul(b, t, _dim_size_tensor(b, r, od))
                lin = t if lin is None else add(b, lin, t)
            self.linear = lin

    def collapsed(self, b, r):
        """r permuted (indexed dims first) and reshaped to [N] + rest."""
        # A product of sizes marked dynamic: -1 (reshape infers it at run
        # time from the other sizes).
        n = -1 if isinstance(self.N, Sym) and len(self.perm) > len(
            self.rest) + 1 else self.N
        return reshape(b, permute(b, r, self.perm), [n] + self.rest)

    def result_shape(self):
        return self.rest[:self.pos] + self.B + self.rest[self.pos:]

    def to_result(self, b, t):
        """[M] + rest -> the indexing result's shape (B placed at pos)."""
        t = reshape(b, t, self.B + self.rest)
        if self.pos == 0 or not self.B:
            return t
        nb = len(self.B)
        perm = [nb + j for j in range(self.pos)] + list(range(nb)) + \
            [nb + j for j in range(self.pos, len(self.rest))]
        return permute(b, t, perm)

    def from_result(self, b, t):
        """The indexing result's shape -> [M] + rest (to_result's inverse)."""
        if self.pos and self.B:
            nb = len(self.B)
            perm = list(range(self.pos, self.pos + nb)) + \
                list(range(self.pos)) + \
                list(range(self.pos + nb, nb + len(self.rest)))
            t = permute(b, t, perm)
        return reshape(b, t, [self.M] + self.rest)

    def uncollapsed(self, b, t, r):
        """[N] + rest back to r's shape (collapsed's inverse)."""
        t = reshape(b, t, [r.shape[d] for d in self.perm])
        inv = [self.perm.index(d) for d in range(r.ndim)]
        return permute(b, t, inv)


def _advanced_read(b, r, adv):
    plan = _AdvancedPlan(b, r, adv)
    if len(adv) == 1:
        # One index tensor: kt.index_select along its own dim.
        d = adv[0][0]
        picked = index_select(b, r, d, plan.linear)
        shape = list(r.shape[:d]) + plan.B + list(r.shape[d + 1:])
        return copy_of(reshape(b, picked, shape))
    # A new tensor (PyTorch copies), not a view: in-place ops may write it.
    return copy_of(plan.to_result(b, index_select(b, plan.collapsed(b, r), 0,
                                                  plan.linear)))



# Writes: x[idx] = v, index_put_ / index_put (issue 16 batch 6 item 2). The
# new value of the whole tensor: the view's steps written back with
# kt.select_scatter / kt.slice_scatter; index tensors as one kt.scatter (sum
# with accumulate) at _AdvancedPlan's linear index; a mask as a kt.where.

def _write_values(b, v, shape, dtype, what):
    """The value of an assignment broadcast to the indexing result's shape
    (PyTorch drops the value's leading size-1 dims first), in dtype."""
    if not isinstance(v, TensorVal):
        if isinstance(v, Sym):
            v = b.static(v, "an assigned size")
        if not isinstance(v, (bool, int, float)):
            raise b.error("%s: a value of type %s" % (what, type(v).__name__))
        dt = torch.bool if isinstance(v, bool) else \
            torch.int64 if isinstance(v, int) else torch.float64
        v = b.constant(v, dt)
    while v.ndim > len(shape) and value(v.shape[0]) == 1:
        v = reshape(b, v, list(v.shape[1:]))
    v = cast(b, v, dtype)
    if v.ndim > len(shape) or any(
            value(a) != 1 and value(a) != value(c) for a, c in
            zip(v.shape, list(shape)[len(shape) - v.ndim:])):
        raise b.error("shape mismatch: value tensor of shape %s cannot be "
                      "broadcast to indexing result of shape %s" % (
                          [value(d) for d in v.shape],
                          [value(d) for d in shape]))
    return expand(b, v, list(shape)) if v.ndim else \
        (expand(b, v, list(shape)) if len(shape) else v)


def _write_back(b, steps, new):
    """The view's new value written into what it views, step by step back
    to the indexed tensor."""
    for kind, d, info, prev in reversed(steps):
        if kind == "unsqueeze":
            new = reshape(b, new, list(prev.shape))
        elif kind == "select":
            new = b.op("select_scatter", [prev, new], {"dim": d, "index": info},
                       shape=prev.shape, dtype=prev.dtype)
        elif info is not None:
            new = _slice_scatter(b, prev, new, info)
    return new


def _masked_write(b, x, entries, v, accumulate, what):
    """x[mask] = v (leading full slices allowed): a kt.where; v a number or
    a tensor broadcasting to the dims after the mask's."""
    pos = None
    for k, i in enumerate(entries):
        if isinstance(i, TensorVal) and i.dtype in _MASK_DTYPES:
            if pos is not None:
                raise b.error("%s with two boolean masks" % what)
            pos = k
        elif pos is not None or not (isinstance(i, slice) and
                                     i == slice(None)):
            raise b.error("%s with a boolean mask and other indices than "
                          "leading full slices (x[:, mask] = v)" % what)
    mask = entries[pos]
    if mask.ndim == 0:
        raise b.error("%s with a 0-d boolean mask" % what)
    for k in range(mask.ndim):
        if value(mask.shape[k]) != value(x.shape[pos + k]):
            raise b.error("The shape of the mask %s at index %d does not "
                          "match the shape of the indexed tensor %s at index "
                          "%d" % ([value(d) for d in mask.shape], k,
                                  [value(d) for d in x.shape], pos + k))
    rest = list(x.shape[pos + mask.ndim:])
    if isinstance(v, TensorVal) and v.dtype != x.dtype and \
            value(prod(v.shape)) != 1:
        # PyTorch: one element is masked_fill (cast), more index_put_.
        raise b.error("Index put requires the source and destination dtypes "
                      "match, got %s for the destination and %s for the "
                      "source." % (x.dtype, v.dtype))
    if isinstance(v, TensorVal):
        while v.ndim > len(rest) and value(v.shape[0]) == 1:
            v = reshape(b, v, list(v.shape[1:]))
        if v.ndim > len(rest):
            raise b.error("%s: a value of shape %s for a boolean mask (its "
                          "dim for the masked elements has the data-dependent "
                          "count; a number or a tensor broadcasting to %s is "
                          "supported)" % (what, [value(d) for d in v.shape],
                                          [value(d) for d in rest]))
    v = _write_values(b, v, rest, x.dtype, what)
    cond = reshape(b, cast(b, mask, torch.bool),
                   list(mask.shape) + [1] * len(rest))
    if accumulate:
        zero = b.constant(0, x.dtype)
        add_ = b.op("where", [cond, v, zero],
                    shape=broadcast(b, cond.shape, v.shape), dtype=x.dtype)
        return add(b, x, add_)
    return b.op("where", [cond, v, x], shape=x.shape, dtype=x.dtype)


def index_write(b, x, idx, v, accumulate=False, what="an indexed assignment"):
    """The value of x after x[idx] = v (x[idx] += v with accumulate, every
    repeated index adding; without it the last write in row-major order of
    the index wins, as PyTorch's CPU kernel)."""
    x = need_tensor(b, x, what)
    entries = _index_entries(b, x, idx, write=True)
    if any(isinstance(i, TensorVal) and i.dtype in _MASK_DTYPES
           for i in entries):
        return _masked_write(b, x, entries, v, accumulate, what)
    r, steps, adv = _basic_index(b, x, entries)
    if adv:
        if isinstance(v, TensorVal) and v.dtype != x.dtype:
            # PyTorch's index_put_ rule (a mask or a view casts the value).
            raise b.error("Index put requires the source and destination "
                          "dtypes match, got %s for the destination and %s "
                          "for the source." % (x.dtype, v.dtype))
        plan = _AdvancedPlan(b, r, adv)
        src = plan.from_result(b, _write_values(b, v, plan.result_shape(),
                                                x.dtype, what))
        rank = 1 + len(plan.rest)
        index = reshape(b, plan.linear, [plan.M] + [1] * (rank - 1))
        if rank > 1:
            index = expand(b, index, [plan.M] + plan.rest)
        new = scatter_op(b, plan.collapsed(b, r), 0, index, src,
                         "sum" if accumulate else "none", what=what)
        new = plan.uncollapsed(b, new, r)
    else:
        src = _write_values(b, v, r.shape, x.dtype, what)
        new = add(b, r, src) if accumulate else src
        new = cast(b, new, x.dtype)
    return _write_back(b, steps, new)


@method("__setitem__")
@function(operator.setitem)
def setitem(b, x, idx, v):
    """`x[idx] = v` (also Tensor.__setitem__ as a method: a tensor made in
    the trace, `z = torch.ones(3)`, written with a traced value, where
    torch dispatches the method: it was a graph break with the write to a
    copy, `z[0] = x[1]` lost)."""
    if not isinstance(x, TensorVal):
        return python_call(b, operator.setitem, (x, idx, v), {})
    mark = len(b.lines)
    new = index_write(b, x, idx, v)
    if not re.search(re.escape(x.name) + r"\b", "\n".join(b.lines[mark:])):
        # `x[...] = v`, `x[:] = v`: the write covers x and does not read
        # it; as zero_/fill_/copy_, x keeps its history (see overwrite).
        return overwrite(b, x, new)
    return in_place(b, x, new)


def _index_put_args(b, x, indices, values, what):
    x = need_tensor(b, x, what)
    values = need_tensor(b, values, "%s's values" % what)
    if values.dtype != x.dtype:
        raise b.error("Index put requires the source and destination dtypes "
                      "match, got %s for the destination and %s for the "
                      "source." % (x.dtype, values.dtype))
    if not isinstance(indices, (list, tuple)):
        raise b.error("%s's indices must be a tuple of tensors" % what)
    return x, tuple(slice(None) if i is None else i for i in indices), values


@method("index_put_")
def index_put_(b, x, indices, values, accumulate=False):
    x, idx, values = _index_put_args(b, x, indices, values, "index_put_")
    return in_place(b, x, index_write(
        b, x, idx, values, bool(b.static(accumulate, "accumulate")),
        "index_put_"))


@both("index_put")
def index_put(b, x, indices, values, accumulate=False):
    x, idx, values = _index_put_args(b, x, indices, values, "index_put")
    return copy_of(index_write(b, x, idx, values,
                               bool(b.static(accumulate, "accumulate")),
                               "index_put"))


@both("masked_scatter")
def masked_scatter(b, x, mask, source):
    """x with its masked positions (mask broadcast to x) taking source's
    elements in order: the k-th masked position reads source.flatten()[k]
    (kt.cumsum of the mask, one kt.index_select, whose run-time check is
    PyTorch's 'fewer source elements than ones in the mask' error), kt.where."""
    x = need_tensor(b, x, "masked_scatter")
    mask = need_tensor(b, mask, "masked_scatter's mask")
    source = need_tensor(b, source, "masked_scatter's source")
    if mask.dtype not in _MASK_DTYPES:
        raise b.error("masked_scatter_ only supports boolean masks, but got "
                      "mask with dtype %s" % mask.dtype)
    if source.dtype != x.dtype:
        raise b.error("masked_scatter: expected self and source to have "
                      "same dtypes but got %s and %s" % (x.dtype,
                                                         source.dtype))
    if tuple(map(value, broadcast(b, x.shape, mask.shape))) != \
            tuple(map(value, x.shape)):
        raise b.error("masked_scatter: the mask does not broadcast to the "
                      "tensor")
    n = b.static(prod(x.shape), "masked_scatter's element count")
    ns = b.static(prod(source.shape), "masked_scatter's source size")
    if ns == 0:
        raise b.error("masked_scatter with an empty source (supported when "
                      "the source has elements)")
    m = reshape(b, expand(b, cast(b, mask, torch.bool), list(x.shape)), [n])
    pos = sub(b, _cumulative("cumsum")(b, m, 0), 1)
    pos = where(b, m, pos, 0)
    picked = index_select(b, reshape(b, source, [ns]), 0, pos)
    r = where(b, m, picked, reshape(b, x, [n]))
    return copy_of(reshape(b, r, list(x.shape)))


METHODS["masked_scatter_"] = lambda b, x, mask, source: in_place(
    b, x, masked_scatter(b, x, mask, source))


@both("index_select")
def index_select(b, x, dim, index):
    x = need_tensor(b, x, "index_select")
    index = need_tensor(b, index, "index_select's index")
    d = norm_dim(b, dim, x.ndim)
    if index.ndim > 1:
        raise b.error("index_select's index must have rank 0 or 1")
    n = index.shape[0] if index.ndim == 1 else 1
    shape = _with(x.shape, d, n) if x.ndim else ()
    return b.op("index_select", [x, index], {"dim": d}, shape=shape,
                dtype=x.dtype)


@both("gather")
def gather(b, x, dim, index, *, sparse_grad=False):
    x = need_tensor(b, x, "gather")
    index = need_tensor(b, index, "gather's index")
    d = norm_dim(b, dim, x.ndim)
    if index.dtype not in (torch.int64, torch.int32):
        if any(value(s) == 0 for s in index.shape):
            # PyTorch checks nothing of an empty index: an empty result
            # (the empty size specialized: a non-empty index recaptures).
            shape = [b.static(s, "an empty gather index") for s in
                     index.shape]
            return full(b, shape, 0, x.dtype, why="an empty gather")
        raise b.error("gather(): Expected dtype int64 for index, got %s"
                      % str(index.dtype)[6:])
    return b.op("gather", [x, index], {"dim": d}, shape=index.shape,
                dtype=x.dtype)


def scatter_op(b, x, dim, index, src, reduce="none", include_self=True,
               what="scatter"):
    """kt.scatter: src (a tensor of x's dtype, or a number filling index's
    shape) written (reduce "none") or reduced into x at index along dim."""
    x = need_tensor(b, x, what)
    index = need_tensor(b, index, "%s's index" % what)
    if index.dtype not in (torch.int64, torch.int32):
        raise b.error("%s's index must be an integer tensor, got %s"
                      % (what, index.dtype))
    d = norm_dim(b, dim, x.ndim)
    if isinstance(src, TensorVal):
        if src.dtype != x.dtype:
            raise b.error("%s: src has dtype %s but self has %s (PyTorch "
                          "requires them to be equal)" % (what, src.dtype,
                                                         x.dtype))
    else:
        src = full(b, index.shape, src, x.dtype,
                   why="the index shape of a scatter of a value")
    if reduce == "mean" and x.dtype == torch.bool:
        raise b.error("%s with reduce='mean' of a bool tensor (PyTorch has "
                      "no such kernel)" % what)
    attrs = {"dim": d}
    if reduce != "none":
        attrs["reduce"] = _ir.Raw("#kt.scatter_reduce<%s>" % reduce)
    if not include_self:
        attrs["include_self"] = False
    return b.op("scatter", [x, index, src], attrs, shape=x.shape,
                dtype=x.dtype)


# torch.scatter's deprecated `reduce=` ("add", "multiply").
_SCATTER_REDUCE = {None: "none", "add": "sum", "multiply": "prod"}


@both("scatter")
def scatter(b, x, dim, index, src=None, value=None, *, reduce=None):
    if reduce not in _SCATTER_REDUCE:
        raise b.error("scatter's reduce must be 'add' or 'multiply', got %r"
                      % (reduce,))
    return scatter_op(b, x, dim, index, value if src is None else src,
                      _SCATTER_REDUCE[reduce])


@both("scatter_add")
def scatter_add(b, x, dim, index, src):
    return scatter_op(b, x, dim, index, need_tensor(b, src, "scatter_add's src"),
                      "sum", what="scatter_add")


@both("scatter_reduce")
def scatter_reduce(b, x, dim, index, src, reduce, *, include_self=True,
                   out=None):
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise b.error("scatter_reduce's reduce must be one of 'sum', "
                      "'prod', 'mean', 'amax', 'amin', got %r" % (reduce,))
    return scatter_op(b, x, dim, index,
                      need_tensor(b, src, "scatter_reduce's src"), reduce,
                      bool(b.static(include_self, "include_self")),
                      what="scatter_reduce")


def _index_along(b, x, d, index, shape, what):
    """A 1-D (or 0-d) index along dim d broadcast to `shape` (the shape of
    the source, whose dim d has index's length): the index of a kt.scatter
    that does what index_add / index_copy / index_fill do."""
    index = need_tensor(b, index, "%s's index" % what)
    if index.dtype not in (torch.int64, torch.int32):
        raise b.error("%s's index must be an integer tensor, got %s"
                      % (what, index.dtype))
    if index.ndim > 1:
        raise b.error("%s's index must have rank 0 or 1, got %d"
                      % (what, index.ndim))
    if x.ndim == 0:
        return reshape(b, index, []) if index.ndim else index
    n = index.shape[0] if index.ndim else 1
    unit = [1] * x.ndim
    unit[d] = n
    return expand(b, reshape(b, index, unit), list(shape))


def _index_source(b, x, d, index, source, what):
    """index_add / index_copy's source, checked against self (`x`, a
    tensor) and the index along dim `d`: rank, shape and dtype."""
    source = need_tensor(b, source, "%s's source" % what)
    n = 1 if index.ndim == 0 else index.shape[0]
    if source.ndim != x.ndim and not (x.ndim <= 1 and source.ndim <= 1):
        raise b.error("%s: source has rank %d but self has rank %d"
                      % (what, source.ndim, x.ndim))
    for k in range(source.ndim):
        want = n if k == d else x.shape[k]
        if value(source.shape[k]) != value(want):
            raise b.error("%s: source has shape %s but must have %s at dim "
                          "%d (self %s, %s indices along dim %d)" % (
                              what, [value(s) for s in source.shape],
                              value(want), k, [value(s) for s in x.shape],
                              value(n), d))
    if source.dtype != x.dtype:
        raise b.error("%s: source has dtype %s but self has %s "
                      "(PyTorch requires them to be equal)" % (
                          what, source.dtype, x.dtype))
    return source


@both("index_add")
def index_add(b, x, dim, index, source, *, alpha=1, out=None):
    x = need_tensor(b, x, "index_add")
    d = norm_dim(b, dim, x.ndim)
    source = _index_source(b, x, d, index, source, "index_add")
    alpha = b.static(alpha, "index_add's alpha")
    if alpha != 1:
        source = cast(b, mul(b, source, alpha), x.dtype)
    idx = _index_along(b, x, d, index, source.shape, "index_add")
    return scatter_op(b, x, d, idx, source, "sum", what="index_add")


@both("index_copy")
def index_copy(b, x, dim, index, source):
    x = need_tensor(b, x, "index_copy")
    d = norm_dim(b, dim, x.ndim)
    source = _index_source(b, x, d, index, source, "index_copy")
    idx = _index_along(b, x, d, index, source.shape, "index_copy")
    return scatter_op(b, x, d, idx, source, "none", what="index_copy")


@both("index_fill")
def index_fill(b, x, dim, index, value):
    x = need_tensor(b, x, "index_fill")
    d = norm_dim(b, dim, x.ndim)
    index = need_tensor(b, index, "index_fill's index")
    # index_fill accepts indices in [-size, size), as PyTorch.
    size = x.shape[d] if x.ndim else 1
    if isinstance(size, Sym):
        size = b.static(size, "the size of index_fill's dim")
    index = where(b, binary(b, "lt", index, 0, out_dtype=torch.bool),
                  add(b, index, size), index)
    shape = list(x.shape) if x.ndim else []
    if x.ndim:
        shape[d] = index.shape[0] if index.ndim else 1
    idx = _index_along(b, x, d, index, shape, "index_fill")
    if isinstance(value, TensorVal):
        if value.ndim != 0:
            raise b.error("index_fill's value must be a number or a 0-d "
                          "tensor, got a tensor of rank %d" % value.ndim)
        src = expand(b, cast(b, value, x.dtype), shape) if shape else \
            cast(b, value, x.dtype)
    else:
        src = full(b, shape, value, x.dtype,
                   why="the shape of index_fill's selection")
    return scatter_op(b, x, d, idx, src, "none", what="index_fill")


for _name, _conv in (("scatter", scatter), ("scatter_add", scatter_add),
                     ("scatter_reduce", scatter_reduce),
                     ("index_add", index_add), ("index_copy", index_copy),
                     ("index_fill", index_fill)):
    METHODS[_name + "_"] = (lambda c: lambda b, x, *a, **k: in_place(
        b, x, c(b, x, *a, **k)))(_conv)


@both("split")
def split(b, x, split_size_or_sections, dim=0):
    x = need_tensor(b, x, "split")
    d = norm_dim(b, dim, x.ndim)
    size = x.shape[d]
    step = split_size_or_sections
    if isinstance(step, Sym) and hasattr(b, "index_of") and \
            b.is_marked_dynamic(step) and nonneg(step) and \
            value(size) > 0 and value(step) > 0 and not same(step, size):
        # A split size that depends on a dim marked dynamic (T // 2): the
        # chunks are kt.slice ops with dynamic bounds. Their number k is
        # the capture's; every call checks that its sizes give k chunks
        # too ((k - 1) * step < n <= k * step, step >= 1) and raises
        # otherwise (a program has a fixed number of results).
        n = size
        k = -(-value(n) // value(step))
        what = ("split(): a split size that depends on a dim marked "
                "dynamic gave %d chunks when the program was captured, and "
                "the number of chunks is fixed per compile; it differs for "
                "the input of shape %%s" % k)
        b.check_sizes(step, 1, what, x.shape)
        b.check_sizes(k * step - n, 0, what, x.shape)
        b.check_sizes(n - (k - 1) * step, 1, what, x.shape)
        return tuple(slice_dim(b, x, d, i * step,
                               None if i == k - 1 else (i + 1) * step, 1)
                     for i in range(k))
    if isinstance(split_size_or_sections, (int, Sym)):
        step = b.static(split_size_or_sections, "a split size")
        if step <= 0:
            raise b.error("split size must be positive")
        if same(step, size):
            return (alias(x),)
        n = b.static(size, "splitting a dim")
        sizes = [min(step, n - s) for s in range(0, n, step)] or [0]
    else:
        sizes = [b.static(s, "a split section") for s in
                 split_size_or_sections]
        if sum(sizes) != value(size):
            raise b.error("split sections %s do not add up to %d" % (
                sizes, value(size)))
        b.static(size, "splitting a dim")
    out, start = [], 0
    for s in sizes:
        out.append(slice_dim(b, x, d, start, start + s, 1))
        start += s
    return tuple(out)


@method("split_with_sizes")
def split_with_sizes(b, x, split_sizes, dim=0):
    return split(b, x, list(split_sizes), dim)


@both("chunk")
def chunk(b, x, chunks, dim=0):
    x = need_tensor(b, x, "chunk")
    d = norm_dim(b, dim, x.ndim)
    # The argument first (PyTorch's error, before a dynamic dim's size is
    # needed).
    c = b.static(chunks, "a chunk count")
    if not isinstance(c, int) or isinstance(c, bool) or c <= 0:
        raise b.error("chunk expects `chunks` to be greater than 0, got: %r"
                      % (c,))
    n = b.static(x.shape[d], "chunking a dim")
    step = -(-n // c) if n else 1
    return split(b, x, step, d)


@both("unbind")
def unbind(b, x, dim=0):
    x = need_tensor(b, x, "unbind")
    d = norm_dim(b, dim, x.ndim)
    n = b.static(x.shape[d], "unbinding a dim")
    return tuple(select(b, x, d, i) for i in range(n))


@both("flip")
def flip(b, x, dims):
    x = need_tensor(b, x, "flip")
    ds = norm_dims(b, dims, x.ndim)
    return b.op("flip", [x], {"dims": ds}, shape=x.shape, dtype=x.dtype)


def _tri(b, x, diagonal, lower):
    x = need_tensor(b, x, "tril/triu")
    if x.ndim < 2:
        raise b.error("tril/triu of a tensor of rank < 2")
    k = b.static(diagonal, "a diagonal")
    h, w = x.shape[-2], x.shape[-1]
    if (b.is_marked_dynamic(h) or b.is_marked_dynamic(w)) and \
            value(h) > 0 and value(w) > 0:
        # Rows or columns marked dynamic (a causal mask `ones(T, T).tril()`
        # with T marked): the row and column numbers are run-time iotas of
        # x's last two dims ([1, .., h, 1] and [1, .., 1, w]), nothing
        # specialized. (Not for an empty example: _dim_mask's [0:1] cuts
        # need a non-empty dim; unmarked sizes are specialized as before.)
        rows = _dim_iota(b, x, x.ndim - 2)
        cols = _dim_iota(b, x, x.ndim - 1)
        diff = binary(b, "sub", cols, rows)  # [1, .., h, w]: j - i
        keep = binary(b, "le" if lower else "ge", diff, k,
                      out_dtype=torch.bool)
        zero = operand(b, 0, x.dtype)
        return b.op("where", [keep, x, zero], shape=x.shape, dtype=x.dtype)
    h = b.static(x.shape[-2], "the rows of tril/triu")
    w = b.static(x.shape[-1], "the columns of tril/triu")
    rows = b.op("arange", [], {"start": 0.0, "end": float(h), "step": 1.0,
                               "dtype": torch.int64}, shape=(h,),
                dtype=torch.int64)
    cols = b.op("arange", [], {"start": 0.0, "end": float(w), "step": 1.0,
                               "dtype": torch.int64}, shape=(w,),
                dtype=torch.int64)
    rows = reshape(b, rows, h, 1)
    diff = binary(b, "sub", cols, rows)  # [h, w]: j - i
    keep = binary(b, "le" if lower else "ge", diff, k, out_dtype=torch.bool)
    zero = operand(b, 0, x.dtype)
    return b.op("where", [keep, x, zero], shape=x.shape, dtype=x.dtype)


@both("tril")
def tril(b, x, diagonal=0):
    return _tri(b, x, diagonal, True)


@both("triu")
def triu(b, x, diagonal=0):
    return _tri(b, x, diagonal, False)


method("tril_")(lambda b, x, diagonal=0: in_place(b, x, tril(b, x, diagonal)))
method("triu_")(lambda b, x, diagonal=0: in_place(b, x, triu(b, x, diagonal)))


# --- diagonals: decompositions into kt.permute / kt.reshape / kt.slice
# (diagonal), kt.pad / kt.where (diag_embed), kt.sum (trace). Their
# gradients are those of the kt ops (kiln-autodiff).


def _two_dims(b, dim1, dim2, rank, what):
    d1 = norm_dim(b, dim1, rank, what + "'s dim1")
    d2 = norm_dim(b, dim2, rank, what + "'s dim2")
    if d1 == d2:
        raise b.error("%s dimensions cannot be identical %d, %d"
                      % (what, dim1, dim2))
    return d1, d2


@both("diagonal")
def diagonal(b, x, offset=0, dim1=0, dim2=1):
    """x's diagonal `offset` in the plane (dim1, dim2), as a last dim after
    the others (a view, as in PyTorch): those two dims moved last and
    flattened, then every (w + 1)-th element from the diagonal's start."""
    x = need_tensor(b, x, "diagonal")
    if x.ndim < 2:
        raise b.error("diagonal of a tensor of rank %d (needs >= 2)" % x.ndim)
    d1, d2 = _two_dims(b, dim1, dim2, x.ndim, "diagonal")
    k = b.static(offset, "a diagonal offset")
    h = b.static(x.shape[d1], "the size of a diagonal's dim")
    w = b.static(x.shape[d2], "the size of a diagonal's dim")
    others = [d for d in range(x.ndim) if d not in (d1, d2)]
    y = permute(b, x, others + [d1, d2])
    y = reshape(b, y, *[x.shape[d] for d in others], h * w)
    start = k if k >= 0 else -k * w
    length = max(0, min(h, w - k) if k >= 0 else min(h + k, w))
    if length == 0:
        r = slice_dim(b, y, y.ndim - 1, 0, 0, 1)
    else:
        r = slice_dim(b, y, y.ndim - 1, start,
                      start + (length - 1) * (w + 1) + 1, w + 1)
    r = alias(r)
    # Made again from x after a write to x (its steps are views of x); a
    # write through it is refused (its steps reshape a permuted x).
    r.view_inv = None
    return r


_diagonal = diagonal


@both("diag_embed")
def diag_embed(b, x, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) planes hold x's last dim on diagonal
    `offset`, zeros elsewhere: x padded with |offset| zeros, broadcast along
    the other dim of the plane and masked by `col - row == offset`."""
    x = need_tensor(b, x, "diag_embed")
    if x.ndim < 1:
        raise b.error("diag_embed of a 0-d tensor (needs rank >= 1)")
    rank = x.ndim + 1
    d1, d2 = _two_dims(b, dim1, dim2, rank, "diag_embed")
    k = b.static(offset, "a diagonal offset")
    n = b.static(x.shape[-1], "the size of diag_embed's last dim")
    m = n + abs(k)
    v = pad(b, x, [0, abs(k)]) if k else x
    v = unsqueeze(b, v, -1 if k >= 0 else -2)
    rows = b.op("arange", [], {"start": 0.0, "end": float(m), "step": 1.0,
                               "dtype": torch.int64}, shape=(m,),
                dtype=torch.int64)
    cols = rows
    rows = reshape(b, rows, m, 1)
    keep = binary(b, "eq", binary(b, "sub", cols, rows), k,
                  out_dtype=torch.bool)
    zero = operand(b, 0, x.dtype)
    shape = broadcast(b, v.shape, keep.shape)
    r = b.op("where", [keep, v, zero], shape=shape, dtype=x.dtype)
    # r: [batch..., row, col] -> row at d1, col at d2.
    batch = iter(range(rank - 2))
    perm = [rank - 2 if p == d1 else rank - 1 if p == d2 else next(batch)
            for p in range(rank)]
    return copy_of(permute(b, r, perm))


@both("diag")
def diag(b, x, diagonal=0):
    """1-D: the square matrix with x on diagonal `diagonal`; 2-D: that
    diagonal of x (a copy, as torch.diag)."""
    x = need_tensor(b, x, "diag")
    if x.ndim == 1:
        return diag_embed(b, x, diagonal, 0, 1)
    if x.ndim == 2:
        return copy_of(_diagonal(b, x, diagonal, 0, 1))
    raise b.error("diag of a tensor of rank %d (needs 1 or 2)" % x.ndim)


@both("trace")
def trace(b, x):
    """The sum of a matrix's main diagonal (integers sum to int64, as
    torch.trace)."""
    x = need_tensor(b, x, "trace")
    if x.ndim != 2:
        raise b.error("trace: expected a matrix, but got a tensor of rank %d"
                      % x.ndim)
    if x.dtype == torch.bool:
        raise b.error("trace of a bool tensor (PyTorch does not implement "
                      "it for bool)")
    return sum_(b, diagonal(b, x, 0, 0, 1))


# ------------------------------------------------------------- creation


def _creation_dtype(dtype, fill=None):
    if dtype is not None:
        return dtype
    if isinstance(fill, bool):
        return torch.bool
    if isinstance(fill, int):
        return torch.int64
    return torch.get_default_dtype()


def full(b, size, fill_value, dtype=None, why="the size of a new tensor"):
    """kt.full; a size computed from input dims (torch.zeros(x.shape),
    x.new_ones(x.size(0), 4)) is a dynamic size of kt.full (tensor.dim of
    the input), so the input dim stays dynamic."""
    size = list(size)
    data = [is_python_scalar(d) for d in size]
    if any(data):
        # Sizes read from data (`torch.zeros(t.item())`): unbacked sizes,
        # checked by kt.full when it runs (negative: an error).
        size = [b.size_from_data(d, why) if dd else d
                for d, dd in zip(size, data)]
        if is_python_scalar(fill_value):
            dt = _creation_dtype(dtype, fill_value.scalar(0))
            # The checked kt.full picks the number: where(True, v, v).
            yes = full(b, size, True, torch.bool, why)
            v = cast(b, fill_value, dt)
            return where(b, yes, v, v)
        r = full(b, size, fill_value, dtype, why)
        b.data_size_checked(size, r)
        return r
    if is_python_scalar(fill_value):
        # A number read from a tensor (`.item()`): its value broadcast (the
        # dtype inferred from its Python type, as for a literal).
        dt = _creation_dtype(dtype, fill_value.scalar(0))
        if any(isinstance(d, int) and d < 0 for d in size):
            raise b.error("Trying to create tensor with negative dimension: "
                          "%s" % ([value(d) for d in size],))
        return copy_of(expand(b, cast(b, fill_value, dt), size))
    fill = b.static(fill_value, "a fill value")
    if isinstance(fill, TensorVal):
        raise b.error("a fill value that is a tensor")
    dt = _creation_dtype(dtype, fill)
    attr, dyn = b.sized(size, why)
    shape = [d if isinstance(d, Sym) else a for d, a in zip(size, attr)]
    return b.op("full", dyn, {"size": attr, "value": float(fill),
                              "dtype": dt}, shape=shape, dtype=dt)


def _check_device(b, device, requires_grad=False):
    """A factory's device (the CPU) and requires_grad: a new leaf that
    requires grad (`torch.zeros(3, requires_grad=True)`) is PyTorch's to
    make (a graph break), since the program's results do not."""
    if device is not None and torch.device(device).type != "cpu":
        raise b.error("a tensor created on %s: kiln runs on the CPU"
                      % device)
    if requires_grad:
        raise b.error("a new tensor with requires_grad=True (a leaf that "
                      "autograd tracks)")


def _factory(fill):
    def conv(b, *size, out=None, dtype=None, layout=None, device=None,
             pin_memory=None, requires_grad=False, memory_format=None):
        _check_device(b, device, requires_grad)
        return full(b, sizes_arg(size), fill, dtype or
                    torch.get_default_dtype())
    return conv


function(torch.zeros)(_factory(0))
function(torch.ones)(_factory(1))
function(torch.empty)(_factory(0))


@function(torch.full)
def _full(b, size, fill_value, *, out=None, dtype=None, layout=None,
          device=None, pin_memory=None, requires_grad=False):
    _check_device(b, device, requires_grad)
    return full(b, size, fill_value, dtype)


def _like(fill):
    def conv(b, x, *, dtype=None, layout=None, device=None, pin_memory=None,
             requires_grad=False, memory_format=None):
        _check_device(b, device, requires_grad)
        return full(b, x.shape, fill, dtype or x.dtype)
    return conv


function(torch.zeros_like)(_like(0))
function(torch.ones_like)(_like(1))
function(torch.empty_like)(_like(0))


@function(torch.full_like)
def full_like(b, x, fill_value, *, dtype=None, layout=None, device=None,
              pin_memory=None, requires_grad=False, memory_format=None):
    _check_device(b, device, requires_grad)
    return full(b, x.shape, fill_value, dtype or x.dtype)


def _new(fill):
    def conv(b, x, *size, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=None):
        _check_device(b, device, requires_grad)
        return full(b, sizes_arg(size), fill, dtype or x.dtype)
    return conv


METHODS["new_zeros"] = _new(0)
METHODS["new_ones"] = _new(1)
METHODS["new_empty"] = _new(0)


@method("new_full")
def new_full(b, x, size, fill_value, *, dtype=None, device=None,
             requires_grad=False, layout=None, pin_memory=None):
    _check_device(b, device, requires_grad)
    return full(b, size, fill_value, dtype or x.dtype)


@function(torch.arange)
def arange(b, *args, out=None, dtype=None, layout=None, device=None,
           pin_memory=None, requires_grad=False):
    _check_device(b, device, requires_grad)
    dyn = _arange_dynamic(b, args, dtype)
    if dyn is not None:
        return dyn
    args = [b.static(a, "an arange bound") for a in args]
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    elif len(args) == 2:
        start, end, step = args[0], args[1], 1
    elif len(args) == 3:
        start, end, step = args
    else:
        raise b.error("arange takes 1 to 3 bounds")
    if dtype is None:
        dtype = (torch.get_default_dtype() if any(
            isinstance(a, float) for a in (start, end, step))
            else torch.int64)
    n = max(0, math.ceil((end - start) / step))
    return b.op("arange", [], {"start": float(start), "end": float(end),
                               "step": float(step), "dtype": dtype},
                shape=(n,), dtype=dtype)


def _arange_dynamic(b, args, dtype):
    """torch.arange(T) / arange(start, T, step) whose end is a symbolic size
    (position ids over a dynamic sequence, `torch.arange(B)` to index a
    dynamic batch) and whose start and step are numbers: kt.arange's bounds
    are static, so it is start + step * (cumsum of ones - 1), computed in
    int64 (exact) or, for float bounds, in f64 as PyTorch's CPU kernel does,
    then cast. None where that does not apply (then the bound is
    specialized)."""
    if not args or len(args) > 3:
        return None
    start, end, step = (0, args[0], 1) if len(args) == 1 else (
        (args[0], args[1], 1) if len(args) == 2 else tuple(args))
    if not isinstance(end, Sym) or any(
            isinstance(a, (Sym, bool)) or not isinstance(a, (int, float))
            for a in (start, step)) or step <= 0 or \
            b.index_of(end) is None:
        return None
    if dtype is None:
        dtype = torch.get_default_dtype() if any(
            isinstance(a, float) for a in (start, step)) else torch.int64
    if isinstance(start, float) or isinstance(step, float):
        if not (float(start).is_integer() and float(step).is_integer()):
            return None   # a size ceil((T - start) / step) of floats
        start, step = int(start), int(step)
    n = end if (start, step) == (0, 1) else (end - start + step - 1) // step
    ones = full(b, [n], 1, torch.int64)
    idx = sub(b, b.op("cumsum", [ones], {"dim": 0}, shape=ones.shape,
                      dtype=torch.int64), 1)
    if step != 1:
        idx = mul(b, idx, step)
    if start:
        idx = add(b, idx, start)
    return cast(b, idx, dtype) if dtype != torch.int64 else idx


@function(torch.tensor, torch.as_tensor)
def tensor(b, data, dtype=None, device=None, requires_grad=False,
           pin_memory=False):
    _check_device(b, device, requires_grad)
    data = _concrete(b, data, "a size in torch.tensor()")
    if isinstance(data, TensorVal):
        return cast(b, data, dtype) if dtype else data
    t = torch.tensor(data, dtype=dtype)
    return b.constant_tensor(t)


for _rand in ("rand", "randn", "randint", "rand_like", "randn_like",
              "bernoulli", "normal", "multinomial", "randperm"):
    def _make(n):
        def conv(b, *a, **k):
            raise b.error("torch.%s: random numbers are not captured yet "
                          "(Kiln's random ops take explicit seeds)" % n)
        return conv
    if hasattr(torch, _rand):
        FUNCTIONS[getattr(torch, _rand)] = _make(_rand)

for _rand in ("uniform_", "normal_", "bernoulli_", "bernoulli",
              "exponential_", "random_", "cauchy_", "log_normal_",
              "geometric_"):
    def _make(n):
        def conv(b, *a, **k):
            raise b.error("Tensor.%s: random numbers are not captured yet "
                          "(Kiln's random ops take explicit seeds)" % n)
        return conv
    METHODS[_rand] = _make(_rand)


# ------------------------------------------------------- random numbers
#
# kt.rand / kt.randn take a seed (a rank-0 int64 tensor): each random op is
# given a seed argument of the program of its own (ProgramArg.seed), which
# kiln fills on every call with a draw from torch's default generator
# (kiln._fx_import.new_seed). So values change on every call and
# torch.manual_seed makes Kiln's results reproducible; they are Kiln's
# Philox stream, not bit-equal to eager PyTorch's. Sizes are static (a
# dynamic dim used as a size is specialized, as torch.zeros).


def _no_generator(b, name, generator):
    if generator is not None:
        raise b.error("%s with a generator= argument: Kiln draws its seeds "
                      "from torch's default generator" % name)


def random_tensor(b, kind, size, dtype, name):
    """kt.rand (uniform [0, 1)) or kt.randn (standard normal) of `size`,
    seeded by a new seed argument."""
    dtype = dtype or torch.get_default_dtype()
    if not dtype.is_floating_point:
        raise b.error('"%s" not implemented for %s' % (name, dtype))
    # A size computed from input dims is a dynamic size of kt.rand
    # (tensor.dim of the input): the dim stays dynamic.
    size = list(size)
    seed = b.seed_arg()
    attr, dyn = b.sized(size, "the size of a random tensor")
    shape = [d if isinstance(d, Sym) else a for d, a in zip(size, attr)]
    return b.op(kind, [seed] + dyn, {"size": attr, "dtype": dtype},
                shape=shape, dtype=dtype)


def _random_factory(kind):
    def conv(b, *size, generator=None, out=None, dtype=None, layout=None,
             device=None, pin_memory=False, requires_grad=False,
             names=None):
        _check_device(b, device, requires_grad)
        _no_generator(b, "torch." + kind, generator)
        return random_tensor(b, kind, sizes_arg(size), dtype, kind)
    return conv


def _random_like(kind):
    def conv(b, x, *, dtype=None, layout=None, device=None,
             pin_memory=False, requires_grad=False, memory_format=None):
        _check_device(b, device, requires_grad)
        x = need_tensor(b, x, kind + "_like")
        return random_tensor(b, kind, x.shape, dtype or x.dtype, kind)
    return conv


function(torch.rand)(_random_factory("rand"))
function(torch.randn)(_random_factory("randn"))
function(torch.rand_like)(_random_like("rand"))
function(torch.randn_like)(_random_like("randn"))


def _float_self(b, x, name):
    x = need_tensor(b, x, name)
    if not x.dtype.is_floating_point:
        raise b.error('"%s" not implemented for %s' % (name, x.dtype))
    return x


@method("uniform_")
def uniform_(b, x, a=0.0, to=1.0, *, generator=None, **kw):
    """x.uniform_(a, to): a + (to - a) * u, u of kt.rand, written in x."""
    if "from" in kw:
        a = kw.pop("from")
    to = kw.pop("to", to)
    x = _float_self(b, x, "uniform_")
    _no_generator(b, "Tensor.uniform_", generator)
    lo = float(b.static(a, "uniform_'s bound"))
    hi = float(b.static(to, "uniform_'s bound"))
    if not lo <= hi:
        raise b.error("uniform_ expects to return a [from, to) range, but "
                      "found from=%g > to=%g" % (lo, hi))
    u = random_tensor(b, "rand", x.shape, x.dtype, "uniform_")
    return in_place(b, x, add(b, mul(b, u, hi - lo), lo))


@method("normal_")
def normal_(b, x, mean=0.0, std=1.0, *, generator=None):
    """x.normal_(mean, std): mean + std * z, z of kt.randn, written in x."""
    x = _float_self(b, x, "normal_")
    _no_generator(b, "Tensor.normal_", generator)
    mean = float(b.static(mean, "normal_'s mean"))
    std = float(b.static(std, "normal_'s std"))
    if std < 0:
        raise b.error("normal expects std >= 0.0, but found std %g" % std)
    z = random_tensor(b, "randn", x.shape, x.dtype, "normal_")
    return in_place(b, x, add(b, mul(b, z, std), mean))


def _bernoulli(b, x, p, name):
    """1 where u < p (u of kt.rand), else 0, of x's shape and dtype; `p` a
    tensor of probabilities (broadcast to x) or a number."""
    x = _float_self(b, x, name)
    if not is_tensor(p):
        p = float(b.static(p, "a bernoulli probability"))
        if not 0 <= p <= 1:
            raise b.error("bernoulli_ expects p to be in [0, 1], but got "
                          "p=%g" % p)
    u = random_tensor(b, "rand", x.shape, x.dtype, name)
    return cast(b, binary(b, "lt", u, p, out_dtype=torch.bool), x.dtype)


@function(torch.bernoulli)
def bernoulli(b, x, p=None, *, generator=None, out=None):
    _no_generator(b, "torch.bernoulli", generator)
    return _bernoulli(b, x, x if p is None else p, "bernoulli")


@method("bernoulli")
def _m_bernoulli(b, x, p=None, *, generator=None):
    _no_generator(b, "Tensor.bernoulli", generator)
    return _bernoulli(b, x, x if p is None else p, "bernoulli")


@method("bernoulli_")
def bernoulli_(b, x, p=0.5, *, generator=None):
    _no_generator(b, "Tensor.bernoulli_", generator)
    return in_place(b, x, _bernoulli(b, x, p, "bernoulli_"))


# ----------------------------------------------------------- linear algebra


def matmul_shape(b, a, c):
    if a.ndim == 0 or c.ndim == 0:
        raise b.error("matmul of a 0-d tensor")
    ka = a.shape[-1]
    kc = c.shape[0] if c.ndim == 1 else c.shape[-2]
    if not same(ka, kc) and value(ka) != value(kc):
        raise b.error("matmul: shapes %s and %s cannot be multiplied (%d vs "
                      "%d)" % ([value(d) for d in a.shape],
                               [value(d) for d in c.shape], value(ka),
                               value(kc)))
    if a.ndim == 1 and c.ndim == 1:
        return ()
    if a.ndim == 1:
        return tuple(c.shape[:-2]) + (c.shape[-1],)
    if c.ndim == 1:
        return tuple(a.shape[:-1])
    batch = broadcast(b, a.shape[:-2], c.shape[:-2])
    return tuple(batch) + (a.shape[-2], c.shape[-1])


@both("matmul")
@function(operator.matmul)
def matmul(b, a, c, *, out=None):
    a = need_tensor(b, a, "matmul")
    c = need_tensor(b, c, "matmul")
    dt = result_type(b, a, c)
    if dt == torch.bool:
        raise b.error("matmul of bool tensors")
    a, c = cast(b, a, dt), cast(b, c, dt)
    return b.op("matmul", [a, c], shape=matmul_shape(b, a, c), dtype=dt)


@both("mm")
def mm(b, a, c, *, out=None):
    if a.ndim != 2 or c.ndim != 2:
        raise b.error("mm expects 2-D tensors")
    return matmul(b, a, c)


@both("bmm")
def bmm(b, a, c, *, out=None):
    if a.ndim != 3 or c.ndim != 3:
        raise b.error("bmm expects 3-D tensors")
    return matmul(b, a, c)


def _add_product(b, bias, product, beta, alpha):
    """beta * bias + alpha * product as PyTorch's BLAS-style kernels: a zero
    beta ignores bias (NaN/inf included) and a zero alpha the product, which
    is then not computed; the result has the product's shape."""
    beta = b.static(beta, "beta")
    alpha = b.static(alpha, "alpha")
    p = product()
    if not p.dtype.is_floating_point and p.dtype != torch.bool:
        # PyTorch's integer kernels convert the scalars to the integer type
        # (truncation: alpha=0.6 is 0, beta=2.7 is 2).
        alpha, beta = int(alpha), int(beta)
    if alpha == 0:
        # The product's shape and dtype (its value is not used).
        r = full(b, p.shape, 0, p.dtype, "the shape of a product")
    else:
        r = p
        if alpha != 1:
            r = binary(b, "mul", r, alpha)
    if beta == 0:
        return r
    if beta != 1:
        bias = binary(b, "mul", bias, beta)
    shape = broadcast(b, need_tensor(b, bias, "the added tensor").shape,
                      r.shape)
    if tuple(map(value, shape)) != tuple(map(value, r.shape)):
        raise b.error("the added tensor of shape %s does not broadcast to "
                      "the product's shape %s" % (
                          [value(d) for d in bias.shape],
                          [value(d) for d in r.shape]))
    return binary(b, "add", bias, r)


def _in_f32(b, fn, *ts):
    """fn on f16/bf16 tensors computed in f32 and rounded once, as PyTorch
    computes these BLAS-style ops in f32 (issue 16: f32 accumulation)."""
    ts = [need_tensor(b, t, "a matrix product") for t in ts]
    low = {t.dtype for t in ts} & {torch.float16, torch.bfloat16}
    if len(low) != 1 or len({t.dtype for t in ts}) != 1:
        return fn(*ts)
    return cast(b, fn(*[cast(b, t, torch.float32) for t in ts]), low.pop())


@both("addmm")
def addmm(b, bias, m1, m2, *, beta=1, alpha=1, out=None):
    return _in_f32(b, lambda bias, m1, m2: _add_product(
        b, bias, lambda: mm(b, m1, m2), beta, alpha), bias, m1, m2)


@both("baddbmm")
def baddbmm(b, bias, m1, m2, *, beta=1, alpha=1, out=None):
    return _in_f32(b, lambda bias, m1, m2: _add_product(
        b, bias, lambda: bmm(b, m1, m2), beta, alpha), bias, m1, m2)


@both("addbmm")
def addbmm(b, bias, b1, b2, *, beta=1, alpha=1, out=None):
    """beta * bias + alpha * sum over the batch of b1[i] @ b2[i]."""
    return _in_f32(b, lambda bias, b1, b2: _addbmm(b, bias, b1, b2, beta,
                                                    alpha), bias, b1, b2)


def _addbmm(b, bias, b1, b2, beta, alpha):
    def product():
        p = bmm(b, b1, b2)
        # The batch sum keeps the product's dtype (torch.sum would widen
        # integers to int64).
        return cast(b, sum_(b, p, 0), p.dtype)
    return _add_product(b, bias, product, beta, alpha)


@both("dot", "vdot", "inner")
def dot(b, x, y, *, out=None):
    """dot/vdot of 1-D tensors (vdot conjugates: the same for real ones);
    inner of 1-D ones is dot, of others the product over the last dims."""
    x = need_tensor(b, x, "dot")
    y = need_tensor(b, y, "dot")
    if x.ndim == 0 or y.ndim == 0:
        return mul(b, x, y)
    if x.ndim != 1 or y.ndim != 1:
        if x.ndim >= 1 and y.ndim >= 1:
            # inner: sum over the last dims of x and y.
            return matmul(b, x, transpose(b, y, -1, -2) if y.ndim > 1
                          else y) if y.ndim <= 2 else _refuse_inner(b)
        raise b.error("dot expects 1-D tensors, got %d-D and %d-D"
                      % (x.ndim, y.ndim))
    if x.dtype != y.dtype:
        raise b.error("dot expects both vectors to have the same dtype, "
                      "got %s and %s" % (str(x.dtype)[6:],
                                         str(y.dtype)[6:]))
    return _in_f32(b, lambda x, y: matmul(b, x, y), x, y)


def _refuse_inner(b):
    raise b.error("inner of a tensor of more than 2 dims is not "
                  "supported")


@both("mv")
def mv(b, m, v, *, out=None):
    m = need_tensor(b, m, "mv")
    v = need_tensor(b, v, "mv")
    if m.ndim != 2 or v.ndim != 1:
        raise b.error("mv expects a 2-D matrix and a 1-D vector, got %d-D "
                      "and %d-D" % (m.ndim, v.ndim))
    return _in_f32(b, lambda m, v: matmul(b, m, v), m, v)


@both("addmv")
def addmv(b, bias, m, v, *, beta=1, alpha=1, out=None):
    return _in_f32(b, lambda bias, m, v: _add_product(
        b, bias, lambda: mv(b, m, v), beta, alpha), bias, m, v)


@both("outer", "ger")
def outer(b, x, y, *, out=None):
    x = need_tensor(b, x, "outer")
    y = need_tensor(b, y, "outer")
    if x.ndim != 1 or y.ndim != 1:
        raise b.error("outer expects 1-D tensors, got %d-D and %d-D"
                      % (x.ndim, y.ndim))
    return mul(b, unsqueeze(b, x, 1), unsqueeze(b, y, 0))


@both("addr")
def addr(b, bias, x, y, *, beta=1, alpha=1, out=None):
    """beta * bias + alpha * outer(x, y); for bool tensors PyTorch's
    (beta and bias) or (alpha and outer)."""
    p = outer(b, x, y)
    if p.dtype == torch.bool:
        r = p if alpha else full(b, p.shape, 0, torch.bool,
                                   "the shape of a product")
        if beta:
            r = binary(b, "logical_or", need_tensor(b, bias, "addr"), r)
        return r
    return _add_product(b, bias, lambda: p, beta, alpha)


@both("addcmul")
def addcmul(b, x, t1, t2, *, value=1, out=None):
    """x + value * t1 * t2 (f16/bf16 computed in f32, rounded once; an
    integer result truncates a float `value`, as PyTorch's kernel)."""
    return _in_f32(b, lambda x, t1, t2: _addcmul(b, x, t1, t2, value),
                   x, t1, t2)


def _addcmul(b, x, t1, t2, value):
    p = mul(b, t1, t2)
    dt = result_type(b, x, p)
    value = b.static(value, "addcmul's value")
    if not dt.is_floating_point and dt != torch.bool:
        value = int(value)
    if value != 1:
        p = mul(b, p, value)
    return add(b, x, p)


@both("addcdiv")
def addcdiv(b, x, t1, t2, *, value=1, out=None):
    """x + value * t1 / t2 (true division; integer t1 and t2 are refused,
    as PyTorch refuses them)."""
    t1 = need_tensor(b, t1, "addcdiv")
    t2 = need_tensor(b, t2, "addcdiv")
    if not t1.dtype.is_floating_point and not t2.dtype.is_floating_point:
        raise b.error("Integer division with addcdiv is no longer "
                      "supported")
    def f(x, t1, t2):
        q = div(b, t1, t2)
        if value != 1:
            q = mul(b, q, value)
        return add(b, x, q)
    return _in_f32(b, f, x, t1, t2)


@function(F.linear, torch._C._nn.linear)
def linear(b, x, weight, bias=None):
    """F.linear as PyTorch 1.13 computes it: kt.linear for float operands
    with a 2-D weight and a 1-D bias (or none); otherwise matmul(x, weight^T)
    plus bias, which PyTorch allows too: integer tensors, a 1-D weight
    (`x @ weight`, with a bias only for a 1-D `x`), a bias that broadcasts
    to the result."""
    x = need_tensor(b, x, "linear")
    weight = need_tensor(b, weight, "linear's weight")
    dt = result_type(b, x, weight, *([bias] if bias is not None else []))
    if dt == torch.bool:
        raise b.error("linear of bool tensors")
    if weight.ndim not in (1, 2):
        raise b.error("linear's weight must be 1-D or 2-D, got %d-D"
                      % weight.ndim)
    if x.ndim == 0:
        raise b.error("linear of a 0-d input")
    w_in = weight.shape[-1]
    if not same(x.shape[-1], w_in) and value(x.shape[-1]) != value(w_in):
        raise b.error("linear: input features %d != weight's %d" % (
            value(x.shape[-1]), value(w_in)))
    if weight.ndim == 1 and bias is not None and x.ndim != 1:
        # PyTorch 1.13 computes this case with addmm, which rejects it.
        raise b.error("linear with a 1-D weight and a bias needs a 1-D "
                      "input, got %d-D (PyTorch: mat2 must be a matrix)"
                      % x.ndim)
    simple = (dt.is_floating_point and weight.ndim == 2 and
              (bias is None or (is_tensor(bias) and bias.ndim == 1 and (
                  same(bias.shape[0], weight.shape[0]) or
                  value(bias.shape[0]) == value(weight.shape[0])))))
    if simple:
        ops = [cast(b, x, dt), cast(b, weight, dt)]
        if bias is not None:
            ops.append(cast(b, bias, dt))
        return b.op("linear", ops,
                    shape=tuple(x.shape[:-1]) + (weight.shape[0],), dtype=dt)
    w = transpose(b, weight, 0, 1) if weight.ndim == 2 else weight
    r = matmul(b, cast(b, x, dt), cast(b, w, dt))
    if bias is None:
        return r
    if is_tensor(bias) and tuple(map(value, broadcast(
            b, r.shape, bias.shape))) != tuple(map(value, r.shape)):
        raise b.error("linear's bias of shape %s does not broadcast to the "
                      "result's %s" % ([value(d) for d in bias.shape],
                                       [value(d) for d in r.shape]))
    return binary(b, "add", r, bias, compute=dt)


# torch.einsum (PyTorch 1.13's aten/src/ATen/native/Linear.cpp): the
# equation is parsed here; repeated subscripts of one operand take its
# diagonal (kt.permute + kt.reshape + strided kt.slice), subscripts that no
# other operand and not the output have are summed at once, and the operands
# are contracted left to right as PyTorch does without opt_einsum: a pair
# with contracted subscripts is one kt.matmul over [batch, M, K] x
# [batch, K, N] (kt.permute + kt.reshape around it), a pair without is a
# broadcast kt.mul. Dims of size 1 broadcast against the other operand's.
# The result is permuted to the output's order. Its gradient is that of
# those ops.
def _einsum_sum(b, x, dims):
    # torch.sum: integers sum to int64, as in PyTorch's einsum
    if not dims:
        return x
    return sum_(b, x, dims)


def _einsum_parse(b, eq, ops):
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(ops):
        raise b.error("einsum(): fewer operands were provided than specified "
                      "in the equation")
    if len(terms) < len(ops):
        raise b.error("einsum(): more operands were provided than specified "
                      "in the equation")

    def labels(term, what):
        out, pos = [], 0
        seen_ellipsis = False
        while pos < len(term):
            c = term[pos]
            if c == ".":
                if seen_ellipsis:
                    raise b.error("einsum(): found '.' for %s for which an "
                                  "ellipsis was already found" % what)
                if term[pos:pos + 3] != "...":
                    raise b.error("einsum(): found '.' for %s that is not "
                                  "part of any ellipsis" % what)
                out.append("...")
                seen_ellipsis = True
                pos += 3
                continue
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise b.error("einsum(): invalid subscript given at index %d "
                              "in the equation string, subscripts must be in "
                              "[a-zA-Z]" % (eq.index(term) + pos))
            out.append(c)
            pos += 1
        return out

    ins = [labels(t, "operand %d" % i) for i, t in enumerate(terms)]
    # Ellipsis dims: labels (0, k) .. (0, E - 1) right-aligned per operand.
    n_ell = 0
    expanded = []
    for i, (ls, x) in enumerate(zip(ins, ops)):
        named = [c for c in ls if c != "..."]
        if "..." in ls:
            k = x.ndim - len(named)
            if k < 0:
                raise b.error("einsum(): the number of subscripts in the "
                              "equation (%d) is more than the number of "
                              "dimensions (%d) for operand %d"
                              % (len(named), x.ndim, i))
            n_ell = max(n_ell, k)
        elif len(named) != x.ndim:
            raise b.error("einsum(): the number of subscripts in the equation "
                          "(%d) does not match the number of dimensions (%d) "
                          "for operand %d and no ellipsis was given"
                          % (len(named), x.ndim, i))
    for ls, x in zip(ins, ops):
        out = []
        for c in ls:
            if c == "...":
                k = x.ndim - (len(ls) - 1)
                out += [("...", n_ell - k + j) for j in range(k)]
            else:
                out.append(c)
        expanded.append(out)
    ell = [("...", j) for j in range(n_ell)]
    if arrow:
        outl = labels(rhs, "the output")
        res = []
        for c in outl:
            if c == "...":
                res += ell
                continue
            if c in res:
                raise b.error("einsum(): output subscript %s appears more "
                              "than once in the output" % c)
            if not any(c in ls for ls in ins):
                raise b.error("einsum(): output subscript %s does not appear "
                              "in the equation for any input operand" % c)
            res.append(c)
    else:
        count = collections.Counter(c for ls in ins for c in ls if c != "...")
        # PyTorch orders A-Z before a-z.
        res = ell + sorted((c for c in count if count[c] == 1),
                           key=lambda c: (c.islower(), c))
    return expanded, res


@function(torch.einsum)
def einsum(b, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ops = [need_tensor(b, x, "einsum") for x in operands]
    if not isinstance(equation, str):
        raise b.error("einsum's equation must be a string")
    labels, out = _einsum_parse(b, equation, ops)
    if ops:
        dts = {x.dtype for x in ops}
        if len(dts) > 1:
            raise b.error("einsum(): operands of different dtypes %s (PyTorch "
                          "expects one)" % sorted(str(d) for d in dts))
        if len(ops) > 1 and ops[0].dtype in (torch.float16, torch.bool):
            raise b.error('"bmm" not implemented for %s (einsum of several '
                          'operands, as PyTorch 1.13 on CPU)' % ops[0].dtype)
    # Sizes per label, with size-1 broadcasting.
    size = {}
    for i, (ls, x) in enumerate(zip(labels, ops)):
        mine = {}
        for c, n in zip(ls, x.shape):
            n = b.static(n, "an einsum dim")
            if c in mine and mine[c] != n:
                raise b.error("einsum(): subscript %s is repeated for operand "
                              "%d but the sizes don't match, %d != %d"
                              % (c, i, n, mine[c]))
            mine[c] = n
            if c in size and size[c] != n and 1 not in (size[c], n):
                raise b.error("einsum(): subscript %s has size %d for operand "
                              "%d which does not broadcast with previously "
                              "seen size %d" % (c if isinstance(c, str) else
                                                "...", n, i, size[c]))
            size[c] = max(size.get(c, n), n) if 1 in (size.get(c, n), n) \
                else n
    # Per operand: take diagonals of repeated labels.
    terms = []
    for ls, x in zip(labels, ops):
        ls = list(ls)
        while len(set(ls)) != len(ls):
            c = next(c for c in ls if ls.count(c) > 1)
            i = ls.index(c)
            j = ls.index(c, i + 1)
            x = diagonal(b, x, 0, i, j)
            ls = [l for k, l in enumerate(ls) if k not in (i, j)] + [c]
        terms.append((x, ls))

    def needed(k):
        # labels used by the output or by operands after k
        need = set(out)
        for _, ls in terms[k + 1:]:
            need.update(ls)
        return need

    def reduce_alone(x, ls, keep):
        dims = [d for d, c in enumerate(ls) if c not in keep]
        return _einsum_sum(b, x, dims), [c for c in ls if c in keep]

    if not terms:
        raise b.error("einsum() must provide at least one operand")
    x, ls = terms[0]
    if len(terms) == 1:
        x, ls = reduce_alone(x, ls, set(out))
    for k in range(1, len(terms)):
        y, ly = terms[k]
        keep = needed(k)
        x, ls = reduce_alone(x, ls, keep | set(ly))
        y, ly = reduce_alone(y, ly, keep | set(ls))
        x, ls = _einsum_pair(b, x, ls, y, ly, keep, size)
    # Output order; size-1 dims that broadcast get their size.
    x = permute(b, x, [ls.index(c) for c in out]) if ls != out else x
    want = [size[c] for c in out]
    if [value(d) for d in x.shape] != want:
        x = expand(b, x, want)
    return x


def _einsum_pair(b, x, lx, y, ly, keep, size):
    def grow(t, lt, other):
        # size-1 dims against the other operand's size
        want = [size[c] if c in other and value(t.shape[d]) == 1 else
                t.shape[d] for d, c in enumerate(lt)]
        if [value(d) for d in want] != [value(d) for d in t.shape]:
            t = expand(b, t, want)
        return t
    if x.dtype != y.dtype:
        # An integer operand summed to int64 (PyTorch 1.13's bmm then fails
        # on the mixed dtypes where Kiln computes in int64).
        x, y = cast(b, x, torch.int64), cast(b, y, torch.int64)
    shared = [c for c in lx if c in ly]
    x = grow(x, lx, ly)
    y = grow(y, ly, lx)
    contracted = [c for c in shared if c not in keep]
    batch = [c for c in shared if c in keep]
    fx = [c for c in lx if c not in ly]
    fy = [c for c in ly if c not in lx]
    if not contracted:
        # A broadcast product: x as [batch, fx, 1..], y as [batch, 1.., fy].
        order = batch + fx + fy
        xa = permute(b, x, [lx.index(c) for c in batch + fx])
        xa = reshape(b, xa, [size[c] for c in batch + fx] + [1] * len(fy))
        ya = permute(b, y, [ly.index(c) for c in batch + fy])
        ya = reshape(b, ya, [size[c] for c in batch] + [1] * len(fx)
                     + [size[c] for c in fy])
        return binary(b, "mul", xa, ya), order

    def n(cs):
        return prod([size[c] for c in cs]) if cs else 1
    xa = permute(b, x, [lx.index(c) for c in batch + fx + contracted])
    xa = reshape(b, xa, [n(batch), n(fx), n(contracted)])
    ya = permute(b, y, [ly.index(c) for c in batch + contracted + fy])
    ya = reshape(b, ya, [n(batch), n(contracted), n(fy)])
    r = matmul(b, xa, ya)
    r = reshape(b, r, [size[c] for c in batch + fx + fy])
    return r, batch + fx + fy


# ---------------------------------------------------------------- nn


def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _empty_conv(b, x, weight, groups, out, dt):
    """PyTorch 1.13's rules for empty convolution operands (static sizes):
    no output channels is an error; an input with no channels gives an
    empty [N, 0, *out] result (PyTorch's, whatever the weight's output
    channels); an empty spatial dim with a batch and channels is an error.
    None when the operands are not empty (or their sizes are dynamic)."""
    if value(weight.shape[0]) == 0:
        raise b.error("Given groups=%d, expected weight to be at least %d at "
                      "dimension 0, but got weight of size %s instead"
                      % (groups, groups, list(map(value, weight.shape))))
    # (Sizes of 0 are specialized: the program's form depends on them.)
    c = x.shape[-len(out) - 1]
    if value(c) == 0:
        b.static(c, "a convolution's input channels (0)")
        shape = list(x.shape[:-len(out) - 1]) + [0] + list(out)
        return copy_of(full(b, shape, 0, dt))
    batch = x.shape[0] if x.ndim == len(out) + 2 else 1
    spatial = x.shape[-len(out):]
    if any(value(n) == 0 for n in spatial) and value(batch) != 0:
        raise b.error("Only zero batch or zero channel inputs are supported, "
                      "but got input shape: %s" % list(map(value, x.shape)))
    return None


def _check_kernel(b, k):
    """PyTorch's check of a convolution's kernel sizes (the weight's
    spatial dims): each at least 1, where an empty kernel would otherwise
    give a result (a sum over nothing) or fail deep in a pass."""
    if min(k) < 1:
        if len(k) == 2:
            raise b.error("kernel size should be greater than zero, but got "
                          "kernel_height: %d kernel_width: %d" % tuple(k))
        raise b.error("kernel size should be greater than zero, but got: %s"
                      % " x ".join(map(str, k)))


@function(F.conv2d, torch.conv2d)
def conv2d(b, x, weight, bias=None, stride=1, padding=0, dilation=1,
           groups=1):
    x = need_tensor(b, x, "conv2d")
    weight = need_tensor(b, weight, "conv2d's weight")
    if x.ndim not in (3, 4):
        raise b.error("conv2d expects a 3-D or 4-D input, got rank %d"
                      % x.ndim)
    dt = _conv_dtype(b, x, weight, bias, "slow_conv2d_cpu")
    stride = pair(b, stride, "a conv stride")
    dilation = pair(b, dilation, "a conv dilation")
    kh = b.static(weight.shape[2], "a kernel size")
    kw = b.static(weight.shape[3], "a kernel size")
    _check_kernel(b, [kh, kw])
    groups = b.static(groups, "conv groups")
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0, 0]
        elif padding == "same":
            if stride != [1, 1]:
                raise b.error("padding='same' with stride > 1")
            total = [dilation[0] * (kh - 1), dilation[1] * (kw - 1)]
            if total[0] % 2 or total[1] % 2:
                # Asymmetric: PyTorch pads the extra element at the end.
                pads = [total[1] // 2, total[1] - total[1] // 2,
                        total[0] // 2, total[0] - total[0] // 2]
                x = pad(b, x, pads)
                padding = [0, 0]
            else:
                padding = [total[0] // 2, total[1] // 2]
        else:
            raise b.error("conv2d padding=%r" % padding)
    else:
        padding = pair(b, padding, "a conv padding")
    if not dt.is_floating_point:
        _int_dilation(b, dt, dilation)
        return _int_conv2d(b, x, weight, bias, stride, padding, dilation,
                           groups, dt)
    ops = [cast(b, x, dt), cast(b, weight, dt)]
    if bias is not None:
        ops.append(cast(b, bias, dt))
    lead = tuple(x.shape[:-3])
    h = _conv_out(x.shape[-2], kh, stride[0], padding[0], dilation[0])
    w = _conv_out(x.shape[-1], kw, stride[1], padding[1], dilation[1])
    empty = _empty_conv(b, x, weight, groups, [h, w], dt)
    if empty is not None:
        return empty
    if value(h) < 1 or value(w) < 1:
        raise b.error("conv2d: the input is smaller than the kernel")
    attrs = {}
    if stride != [1, 1]:
        attrs["stride"] = stride
    if padding != [0, 0]:
        attrs["padding"] = padding
    if dilation != [1, 1]:
        attrs["dilation"] = dilation
    if groups != 1:
        attrs["groups"] = groups
    return b.op("conv2d", ops, attrs,
                shape=lead + (weight.shape[0], h, w), dtype=dt)


@function(F.conv_transpose2d, torch.conv_transpose2d)
def conv_transpose2d(b, x, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    x = need_tensor(b, x, "conv_transpose2d")
    weight = need_tensor(b, weight, "conv_transpose2d's weight")
    if x.ndim not in (3, 4):
        raise b.error("conv_transpose2d expects a 3-D or 4-D input, got "
                      "rank %d" % x.ndim)
    if weight.ndim != 4:
        raise b.error("conv_transpose2d expects a 4-D weight, got rank %d"
                      % weight.ndim)
    dt = _conv_dtype(b, x, weight, bias, "slow_conv_transpose2d_out_cpu",
                     transposed=True)
    stride = pair(b, stride, "a conv stride")
    padding = pair(b, padding, "a conv padding")
    output_padding = pair(b, output_padding, "a conv output_padding")
    dilation = pair(b, dilation, "a conv dilation")
    groups = b.static(groups, "conv groups")
    k = [b.static(weight.shape[2], "a kernel size"),
         b.static(weight.shape[3], "a kernel size")]
    _check_kernel(b, k)
    # PyTorch 1.13's checks of an empty weight (no input or no output
    # channels).
    if value(weight.shape[0]) == 0:
        raise b.error("Given groups=%d, expected weight to be at least %d at "
                      "dimension 0, but got weight of size %s instead"
                      % (groups, groups, list(map(value, weight.shape))))
    if value(weight.shape[1]) == 0:
        raise b.error("non-empty 2D or 4D weight tensor expected, but got: %s"
                      % list(map(value, weight.shape)))
    for i in range(2):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise b.error("conv_transpose2d: output_padding %d must be "
                          "smaller than stride %d or dilation %d"
                          % (output_padding[i], stride[i], dilation[i]))
    ops = [cast(b, x, dt), cast(b, weight, dt)]
    if bias is not None:
        ops.append(cast(b, bias, dt))
    lead = tuple(x.shape[:-3])
    out = [(x.shape[-2 + i] - 1) * stride[i] - 2 * padding[i]
           + dilation[i] * (k[i] - 1) + output_padding[i] + 1
           for i in range(2)]
    if value(out[0]) < 1 or value(out[1]) < 1:
        raise b.error("conv_transpose2d: the output would be empty")
    if not dt.is_floating_point:
        return _int_conv_transpose2d(b, x, weight, bias, stride, padding,
                                     output_padding, groups, dilation, dt)
    attrs = {}
    if stride != [1, 1]:
        attrs["stride"] = stride
    if padding != [0, 0]:
        attrs["padding"] = padding
    if output_padding != [0, 0]:
        attrs["output_padding"] = output_padding
    if dilation != [1, 1]:
        attrs["dilation"] = dilation
    if groups != 1:
        attrs["groups"] = groups
    return b.op("conv_transpose2d", ops, attrs,
                shape=lead + (weight.shape[1] * groups, out[0], out[1]),
                dtype=dt)


# Integer convolutions (issue 16 batch 8). PyTorch 1.13's CPU kernels
# convolve int8/uint8/int16/int32/int64 (slow_conv2d, slow_conv3d: the
# products and sums in the dtype, wrapping), transposed ones int64 only, and
# refuse bool (and the other integers for transposed ones) with '"<kernel>"
# not implemented for '<Type>''. kt.conv2d is a float op, so an integer one
# is im2col: one strided slice of the zero-padded input per kernel tap,
# stacked, times the weight (kt.matmul in i64), cast back to the dtype:
# exact, as sums and products modulo 2^bits do not depend on where they
# wrap. A transposed one is the direct convolution of the input with
# stride - 1 zeros inserted between its elements, padded by
# dilation * (k - 1) - padding (output_padding more at the end; a negative
# amount crops), with the flipped, group-transposed weight. Integer results
# have no gradient.

_TORCH_TYPE_NAMES = {
    torch.bool: "Bool", torch.uint8: "Byte", torch.int8: "Char",
    torch.int16: "Short", torch.int32: "Int", torch.int64: "Long",
    torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.float32: "Float", torch.float64: "Double"}


_C_TYPE_NAMES = {  # as PyTorch's messages name them (typeid names)
    torch.bool: "bool", torch.uint8: "unsigned char",
    torch.int8: "signed char", torch.int16: "short int",
    torch.int32: "int", torch.int64: "long int", torch.float32: "float",
    torch.float64: "double", torch.float16: "c10::Half",
    torch.bfloat16: "c10::BFloat16"}


def _conv_dtype(b, x, weight, bias, kernel, transposed=False):
    """The dtype of a convolution of x and weight: floats promote as
    before; integers as PyTorch's CPU kernels take them (one dtype for
    input, weight and bias)."""
    dt = result_type(b, x, weight)
    if dt.is_floating_point:
        return dt
    if dt == torch.bool or (transposed and dt != torch.int64):
        raise b.error('"%s" not implemented for \'%s\'' % (
            kernel, _TORCH_TYPE_NAMES[dt]))
    if x.dtype != weight.dtype:
        raise b.error("expected scalar type %s but found %s" % (
            _TORCH_TYPE_NAMES[x.dtype], _TORCH_TYPE_NAMES[weight.dtype]))
    if bias is not None and need_tensor(b, bias, "a conv bias").dtype != dt:
        raise b.error("Input type (%s) and bias type (%s) should be the "
                      "same" % (_C_TYPE_NAMES.get(dt, dt),
                                _C_TYPE_NAMES.get(bias.dtype, bias.dtype)))
    return dt


def _int_dilation(b, dt, dilation):
    # PyTorch 1.13 sends a dilated convolution to slow_conv_dilated2d/3d,
    # whose CPU kernels take int64 but no other integer.
    if dt != torch.int64 and any(d > 1 for d in dilation):
        raise b.error('"slow_conv_dilated<>" not implemented for \'%s\''
                      % _TORCH_TYPE_NAMES[dt])


def _crop_or_pad(b, x, dim, lo, hi):
    """x along dim (-1 or -2) with lo/hi zeros added at the start/end; a
    negative amount removes elements."""
    n = b.static(x.shape[dim], "a convolved size")
    if lo < 0 or hi < 0:
        x = slice_dim(b, x, x.ndim + dim, max(-lo, 0), n - max(-hi, 0), 1)
    lo, hi = max(lo, 0), max(hi, 0)
    if lo or hi:
        x = pad(b, x, [lo, hi] if dim == -1 else [0, 0, lo, hi])
    return x


def _int_conv2d(b, x, weight, bias, stride, padding, dilation, groups, dt):
    unbatched = x.ndim == 3
    if unbatched:
        x = unsqueeze(b, x, 0)
    if weight.ndim != 4:
        raise b.error("conv2d expects a 4-D weight, got rank %d"
                      % weight.ndim)
    x = cast(b, x, torch.int64)
    w = cast(b, weight, torch.int64)
    c = b.static(x.shape[1], "conv2d's input channels")
    h = b.static(x.shape[2], "an integer conv2d's input height")
    wd = b.static(x.shape[3], "an integer conv2d's input width")
    o, cg, kh, kw = [b.static(n, "conv2d's weight") for n in w.shape]
    if groups < 1 or c != cg * groups or o % groups:
        raise b.error("conv2d: expected input with %d channels (weight %s, "
                      "groups %d), got %d" % (cg * groups, [o, cg, kh, kw],
                                              groups, c))
    oh = _conv_out(h, kh, stride[0], padding[0], dilation[0])
    ow = _conv_out(wd, kw, stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        raise b.error("conv2d: the input is smaller than the kernel")
    if padding != [0, 0]:
        x = pad(b, x, [padding[1], padding[1], padding[0], padding[0]])
    taps = []
    for i in range(kh):
        for j in range(kw):
            t = slice_dim(b, x, 2, i * dilation[0],
                          i * dilation[0] + (oh - 1) * stride[0] + 1,
                          stride[0])
            taps.append(slice_dim(b, t, 3, j * dilation[1],
                                  j * dilation[1] + (ow - 1) * stride[1] + 1,
                                  stride[1]))
    n = x.shape[0]
    cols = stack(b, taps, 2)                           # N, C, kh*kw, oh, ow
    cols = reshape(b, cols, [n, groups, cg * kh * kw, oh * ow])
    wm = reshape(b, w, [groups, o // groups, cg * kh * kw])
    y = reshape(b, matmul(b, wm, cols), [n, o, oh, ow])
    if bias is not None:
        y = add(b, y, reshape(b, cast(b, bias, torch.int64), [1, o, 1, 1]))
    y = cast(b, y, dt)
    return squeeze(b, y, 0) if unbatched else y


def _int_conv_transpose2d(b, x, weight, bias, stride, padding,
                          output_padding, groups, dilation, dt):
    unbatched = x.ndim == 3
    if unbatched:
        x = unsqueeze(b, x, 0)
    n, c = x.shape[0], b.static(x.shape[1], "conv_transpose2d's channels")
    ci, og, kh, kw = [b.static(v, "conv_transpose2d's weight")
                      for v in weight.shape]
    if c != ci or c % groups:
        raise b.error("conv_transpose2d: expected input with %d channels "
                      "(weight %s, groups %d), got %d"
                      % (ci, [ci, og, kh, kw], groups, c))
    h = b.static(x.shape[2], "an integer conv_transpose2d's input height")
    wd = b.static(x.shape[3], "an integer conv_transpose2d's input width")
    s = stride
    if s[1] > 1:                    # zeros between the columns
        x = reshape(b, pad(b, unsqueeze(b, x, -1), [0, s[1] - 1]),
                    [n, c, h, wd * s[1]])
        x = slice_dim(b, x, 3, 0, (wd - 1) * s[1] + 1, 1)
    if s[0] > 1:                    # and between the rows
        w2 = (wd - 1) * s[1] + 1
        x = reshape(b, pad(b, unsqueeze(b, x, -2), [0, 0, 0, s[0] - 1]),
                    [n, c, h * s[0], w2])
        x = slice_dim(b, x, 2, 0, (h - 1) * s[0] + 1, 1)
    for i, (k, dim) in enumerate(((kh, -2), (kw, -1))):
        q = dilation[i] * (k - 1) - padding[i]
        x = _crop_or_pad(b, x, dim, q, q + output_padding[i])
    cg = c // groups
    w = reshape(b, weight, [groups, cg, og, kh, kw])
    w = reshape(b, permute(b, w, [0, 2, 1, 3, 4]), [groups * og, cg, kh, kw])
    w = flip(b, w, [2, 3])
    y = _int_conv2d(b, x, w, bias, [1, 1], [0, 0], dilation, groups, dt)
    return squeeze(b, y, 0) if unbatched else y


def _conv_transpose_output_padding(b, x, output_size, stride, padding, k,
                                   dilation):
    # nn.ConvTranspose2d's _output_padding: the output_padding that gives
    # `output_size` (its last two entries), within [0, stride - 1].
    size = int_list(b, output_size, "an output_size")
    if len(size) not in (2, x.ndim):
        raise b.error("ConvTranspose2d: output_size must have 2 or %d "
                      "entries, got %d" % (x.ndim, len(size)))
    size = size[-2:]
    res = []
    for i in range(2):
        n = b.static(x.shape[-2 + i], "an input size with output_size")
        lo = (n - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1) + 1
        hi = lo + stride[i] - 1
        if not lo <= size[i] <= hi:
            raise b.error("ConvTranspose2d: requested output size %d is not "
                          "in the valid range [%d, %d]" % (size[i], lo, hi))
        res.append(size[i] - lo)
    return res


@function(F.conv1d, torch.conv1d)
def conv1d(b, x, weight, bias=None, stride=1, padding=0, dilation=1,
           groups=1):
    # As a 2-D convolution over [.., C, 1, L] (exact).
    x = need_tensor(b, x, "conv1d")
    weight = need_tensor(b, weight, "conv1d's weight")
    if x.ndim not in (2, 3):
        raise b.error("Expected 2D (unbatched) or 3D (batched) input to "
                      "conv1d, but got input of rank %d" % x.ndim)
    if weight.ndim != 3:
        raise b.error("conv1d expects a 3-D weight, got rank %d"
                      % weight.ndim)
    if isinstance(padding, str):
        p2 = padding
    else:
        p2 = [0, int_list(b, padding, "a conv padding")[0]]
    xs = unsqueeze(b, x, -2)
    ws = unsqueeze(b, weight, -2)
    r = conv2d(b, xs, ws, bias, [1, int_list(b, stride, "a stride")[0]], p2,
               [1, int_list(b, dilation, "a dilation")[0]], groups)
    return squeeze(b, r, -2)


@function(F.conv_transpose1d, torch.conv_transpose1d)
def conv_transpose1d(b, x, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    # As a 2-D transposed convolution over [.., C, 1, L] (exact), so its
    # gradient is kt.conv_transpose2d's.
    x = need_tensor(b, x, "conv_transpose1d")
    weight = need_tensor(b, weight, "conv_transpose1d's weight")
    if x.ndim not in (2, 3):
        raise b.error("Expected 2D (unbatched) or 3D (batched) input to "
                      "conv_transpose1d, but got input of rank %d" % x.ndim)
    if weight.ndim != 3:
        raise b.error("conv_transpose1d expects a 3-D weight, got rank %d"
                      % weight.ndim)

    def one(v, why):
        v = int_list(b, v, why)
        if len(v) != 1:
            raise b.error("conv_transpose1d expects one %s, got %d"
                          % (why, len(v)))
        return v[0]
    r = conv_transpose2d(
        b, unsqueeze(b, x, -2), unsqueeze(b, weight, -2), bias,
        [1, one(stride, "stride")], [0, one(padding, "padding")],
        [0, one(output_padding, "output_padding")], groups,
        [1, one(dilation, "dilation")])
    return squeeze(b, r, -2)


def _pool_attrs(b, kernel_size, stride, padding, dilation=None):
    k = pair(b, kernel_size, "a pool kernel size")
    s = pair(b, stride, "a pool stride") if stride not in (None, []) else k
    p = pair(b, padding, "a pool padding")
    d = pair(b, dilation, "a pool dilation") if dilation is not None else [1,
                                                                           1]
    return k, s, p, d


def _avg_pool_attrs(b, k, s, p, ceil_mode, count_include_pad,
                    divisor_override):
    """kt.avg_pool2d's (and kt.avg_pool2d_backward's) attributes, the
    defaults left out."""
    attrs = {"kernel_size": k, "stride": s}
    if p != [0, 0]:
        attrs["padding"] = p
    if ceil_mode:
        attrs["ceil_mode"] = True
    if not count_include_pad:
        attrs["count_include_pad"] = False
    if divisor_override is not None:
        attrs["divisor_override"] = b.static(divisor_override, "a divisor")
    return attrs


def _max_pool_attrs(b, kernel_size, stride, padding, dilation, ceil_mode):
    """kt.max_pool2d's (and kt.max_pool2d_backward's) attributes, the
    defaults left out, with the normalized kernel, stride, padding and
    dilation: (attrs, k, s, p, d). Shared by max_pool2d here and
    aten.max_pool2d_with_indices(_backward) in kiln/_aten.py."""
    if isinstance(stride, (list, tuple)) and not stride:
        stride = None    # ATen's `stride=[]`: the kernel size
    k, s, p, d = _pool_attrs(b, kernel_size, stride, padding, dilation)
    attrs = {"kernel_size": k, "stride": s}
    if p != [0, 0]:
        attrs["padding"] = p
    if d != [1, 1]:
        attrs["dilation"] = d
    if ceil_mode:
        attrs["ceil_mode"] = True
    return attrs, k, s, p, d


def _pool_out(b, size, k, s, p, d, ceil_mode):
    if not ceil_mode:
        return _conv_out(size, k, s, p, d)
    n = b.static(size, "a pool with ceil_mode")
    out = -(-(n + 2 * p - d * (k - 1) - 1) // s) + 1
    if (out - 1) * s >= n + p:
        out -= 1
    return out


def max_pool2d(b, x, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    x = need_tensor(b, x, "max_pool2d")
    if not x.dtype.is_floating_point:
        # PyTorch 1.13 on CPU (and kt.max_pool2d): floats only. A located
        # error here, not the verifier's at load time.
        raise b.error('"max_pool2d" not implemented for %s (PyTorch '
                      "implements it for floats)" % x.dtype)
    attrs, k, s, p, d = _max_pool_attrs(b, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    h = _pool_out(b, x.shape[-2], k[0], s[0], p[0], d[0], ceil_mode)
    w = _pool_out(b, x.shape[-1], k[1], s[1], p[1], d[1], ceil_mode)
    for n in (h, w):
        if value(n) < 1:
            # PyTorch decides: max_pool2d raises "Output size is too
            # small", but max_pool1d without grad returns an empty tensor
            # (its own kernel). A graph break runs it eagerly (before:
            # kt.max_pool2d's verifier failed the whole program at load).
            raise b.error("max_pool: output size %d is too small (eager "
                          "PyTorch decides)" % value(n))
    r = b.op("max_pool2d", [x], attrs,
             shape=tuple(x.shape[:-2]) + (h, w), dtype=x.dtype)
    if return_indices:
        # The values stay kt.max_pool2d (its gradient); the indices are
        # integers without one.
        return r, _max_pool2d_indices(b, x, k, s, p, d, h, w)
    return r


for _t in (F.max_pool2d, _opt(F, "_max_pool2d"), torch.max_pool2d,
           _opt(F, "max_pool2d_with_indices")):
    if _t is not None:
        FUNCTIONS[_t] = max_pool2d


@function(F.avg_pool2d, torch._C._nn.avg_pool2d)
def avg_pool2d(b, x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    x = need_tensor(b, x, "avg_pool2d")
    if not (x.dtype.is_floating_point or x.dtype == torch.int64):
        # PyTorch 1.13 on CPU: floats and int64 only.
        raise b.error("avg_pool2d of a %s tensor (PyTorch implements it for "
                      "floats and int64 only)" % x.dtype)
    k, s, p, _ = _pool_attrs(b, kernel_size, stride, padding)
    h = _pool_out(b, x.shape[-2], k[0], s[0], p[0], 1, ceil_mode)
    w = _pool_out(b, x.shape[-1], k[1], s[1], p[1], 1, ceil_mode)
    attrs = _avg_pool_attrs(b, k, s, p, ceil_mode, count_include_pad,
                            divisor_override)
    return b.op("avg_pool2d", [x], attrs,
                shape=tuple(x.shape[:-2]) + (h, w), dtype=x.dtype)


@function(F.adaptive_avg_pool2d, torch._C._nn.adaptive_avg_pool2d)
def adaptive_avg_pool2d(b, x, output_size):
    x = need_tensor(b, x, "adaptive_avg_pool2d")
    if x.ndim not in (3, 4):
        raise b.error("adaptive_avg_pool2d expects a 3-D or 4-D input")
    if isinstance(output_size, (int, Sym)) or output_size is None:
        output_size = [output_size, output_size]
    out = []
    for o, n in zip(output_size, x.shape[-2:]):
        out.append(n if o is None else b.static(o, "an output size"))
    if all(not isinstance(o, Sym) and o == 1 for o in out):
        # The mean over each plane: PyTorch's 1x1 adaptive pool.
        return mean(b, x, [-2, -1], keepdim=True)
    if any(not isinstance(o, Sym) and o == 0 for o in out):
        # An empty output: _adaptive's windows (a dim pooled to 0 keeps its
        # input size dynamic).
        return _adaptive(b, x, out, 2, "avg", "adaptive_avg_pool2d")
    ks = []
    for o, n in zip(out, x.shape[-2:]):
        if same(o, n):
            ks.append(1)
            continue
        n = b.static(n, "an adaptive pool's input size")
        o = b.static(o, "an adaptive pool's output size")
        if o == 0 or n % o:
            # Windows of different lengths: PyTorch's general windows as
            # separable taps (_adaptive).
            return _adaptive(b, x, out, 2, "avg", "adaptive_avg_pool2d")
        ks.append(n // o)
    if ks == [1, 1]:
        return x
    return avg_pool2d(b, x, ks, ks)


# ------------------------------------ pooling family (issue 16 batch 6 item 3)
#
# max_pool2d's indices, 1-D pools as the 2-D ops over [.., C, 1, L] (as
# conv1d), adaptive pools with PyTorch's windows start = floor(i * in / out),
# end = ceil((i + 1) * in / out) as separable taps (kt.index_select at
# constant positions, so the gradient is a scatter-add): the average
# weighted by 1 / window length, the maximum a kt.maximum over the taps.

def _max_pool2d_indices(b, x, k, s, p, d, oh, ow):
    """PyTorch's flat per-plane index (h * W + w) of each window's maximum:
    the kH * kW taps as strided slices of the input padded with the dtype's
    lowest value, kt.argmax over them (the first largest in scan order, as
    PyTorch's strict comparison), the tap's position in the plane; a window
    whose values are all the lowest value gets its first position inside
    the plane, as PyTorch (a padded tap cannot be the answer)."""
    H = b.static(x.shape[-2], "max_pool2d's input height (indices)")
    W = b.static(x.shape[-1], "max_pool2d's input width (indices)")
    oh = b.static(oh, "max_pool2d's output height")
    ow = b.static(ow, "max_pool2d's output width")
    if x.dtype.is_floating_point:
        low = float("-inf")
    elif x.dtype == torch.bool:
        raise b.error("max_pool2d of a bool tensor")
    else:
        low = float(torch.iinfo(x.dtype).min)
    need_h = (oh - 1) * s[0] + (k[0] - 1) * d[0] + 1
    need_w = (ow - 1) * s[1] + (k[1] - 1) * d[1] + 1
    pb, pr = max(0, need_h - H - p[0]), max(0, need_w - W - p[1])
    shape = list(x.shape)
    shape[-2], shape[-1] = H + p[0] + pb, W + p[1] + pr
    xp = b.op("pad", [x], {"pad": [p[1], pr, p[0], pb], "value": low},
              shape=shape, dtype=x.dtype)
    r = x.ndim
    taps = []
    for kh in range(k[0]):
        for kw in range(k[1]):
            t = slice_dim(b, xp, r - 2, kh * d[0],
                          kh * d[0] + (oh - 1) * s[0] + 1, s[0])
            taps.append(slice_dim(b, t, r - 1, kw * d[1],
                                  kw * d[1] + (ow - 1) * s[1] + 1, s[1]))
    st = stack(b, taps, r - 2)
    tap = argmax(b, st, r - 2)
    if x.dtype.is_floating_point and len(taps) > 1:
        # PyTorch's kernel takes a NaN over the running max whatever it
        # holds, so a window with NaN gets its last NaN (kt.argmax gives
        # the first): the first NaN of the reversed taps.
        last = sub(b, len(taps) - 1, argmax(b, flip(b, st, [r - 2]), r - 2))
        nan = b.op("isnan", [amax(b, st, r - 2)], shape=tap.shape,
                   dtype=torch.bool)
        tap = where(b, nan, last, tap)
    kh = div(b, tap, k[1], rounding_mode="floor")
    kw = sub(b, tap, mul(b, kh, k[1]))
    rows = b.constant_tensor(torch.tensor(
        [[i * s[0] - p[0]] for i in range(oh)], dtype=torch.int64), 1 << 20)
    cols = b.constant_tensor(torch.tensor(
        [j * s[1] - p[1] for j in range(ow)], dtype=torch.int64), 1 << 20)
    h = add(b, rows, mul(b, kh, d[0]))
    w = add(b, cols, mul(b, kw, d[1]))

    def first(start, step):
        while start < 0:
            start += step
        return start
    firsts = b.constant_tensor(torch.tensor(
        [[first(i * s[0] - p[0], d[0]) * W + first(j * s[1] - p[1], d[1])
          for j in range(ow)] for i in range(oh)], dtype=torch.int64),
        1 << 20)
    def cmp(name, t, v):
        return binary(b, name, t, v, out_dtype=torch.bool)
    inside = binary(b, "logical_and", binary(
        b, "logical_and", cmp("ge", h, 0), cmp("lt", h, H)), binary(
        b, "logical_and", cmp("ge", w, 0), cmp("lt", w, W)))
    return where(b, inside, add(b, mul(b, h, W), w), firsts)


def _pool1d(b, x, what):
    x = need_tensor(b, x, what)
    if x.ndim not in (2, 3):
        raise b.error("%s: Expected 2D or 3D (batch mode) tensor with "
                      "optional 0 dim batch size for input, but got rank %d"
                      % (what, x.ndim))
    return unsqueeze(b, x, -2)


def _one(b, v, why):
    vs = int_list(b, v, why)
    if len(vs) != 1:
        raise b.error("%s must be a single int, got %s" % (why, vs))
    return vs[0]


def max_pool1d(b, x, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    xs = _pool1d(b, x, "max_pool1d")
    k = _one(b, kernel_size, "max_pool1d's kernel_size")
    s = k if stride in (None, []) else _one(b, stride, "max_pool1d's stride")
    r = max_pool2d(b, xs, [1, k], [1, s],
                   [0, _one(b, padding, "max_pool1d's padding")],
                   [1, _one(b, dilation, "max_pool1d's dilation")],
                   ceil_mode, return_indices)
    if return_indices:
        # h = 0 in the [1, L] plane: the flat index is the position.
        return squeeze(b, r[0], -2), squeeze(b, r[1], -2)
    return squeeze(b, r, -2)


for _t in (F.max_pool1d, torch.max_pool1d, _opt(F, "_max_pool1d")):
    if _t is not None:
        FUNCTIONS[_t] = max_pool1d


def _with_indices(conv):
    # F.max_pool1d/2d_with_indices return (values, indices) whatever their
    # return_indices argument says.
    def c(b, x, *args, **kwargs):
        args = list(args)
        if len(args) >= 6:
            args[5] = True
        else:
            kwargs["return_indices"] = True
        return conv(b, x, *args, **kwargs)
    return c


FUNCTIONS[F.max_pool1d_with_indices] = _with_indices(max_pool1d)
FUNCTIONS[F.max_pool2d_with_indices] = _with_indices(max_pool2d)


@function(F.avg_pool1d, torch.avg_pool1d)
def avg_pool1d(b, x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    xs = _pool1d(b, x, "avg_pool1d")
    k = _one(b, kernel_size, "avg_pool1d's kernel_size")
    s = k if stride in (None, []) else _one(b, stride, "avg_pool1d's stride")
    return squeeze(b, avg_pool2d(
        b, xs, [1, k], [1, s], [0, _one(b, padding, "avg_pool1d's padding")],
        ceil_mode, count_include_pad), -2)


def _adaptive_windows(n, o):
    """PyTorch's adaptive pooling windows: [floor(i*n/o), ceil((i+1)*n/o))."""
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _adaptive_dim(b, x, d, o, mode, what):
    """x pooled along dim d to o outputs with adaptive windows: the taps
    (kt.index_select at constant positions; a short window repeats its last
    position with weight 0 / for the maximum, harmlessly) averaged with
    1 / window length or maximized."""
    if o == 0:
        # No windows: an empty dim whatever the input's size (which stays
        # dynamic), as PyTorch returns; an empty input dim is still
        # PyTorch's error (checked on every call when it is dynamic).
        b.check_sizes(x.shape[d], 1, "%s(): Expected input to have non-zero "
                      "size for non-batch dimensions, but input has sizes "
                      "%%s with dimension %d being empty" % (what, d),
                      x.shape)
        return slice_dim(b, x, d, 0, 0, 1)
    n = b.static(x.shape[d], "%s's input size" % what)
    if o == n:
        return x
    if n == 0:
        raise b.error("%s: an empty dim %d cannot be pooled to %d" % (what, d, o))
    wins = _adaptive_windows(n, o)
    taps = max(e - s for s, e in wins)
    shape = [1] * x.ndim
    shape[d] = o
    acc = None
    for t in range(taps):
        idx = torch.tensor([min(s + t, e - 1) for s, e in wins])
        v = index_select(b, x, d, b.constant_tensor(idx, 1 << 20))
        if mode == "avg":
            inside = torch.tensor([s + t < e for s, e in wins])
            if not bool(inside.all()):
                # Outside a short window: 0 (not the repeated value times 0,
                # which is NaN for an infinity).
                v = where(b, b.constant_tensor(inside.reshape(shape),
                                               1 << 20), v, 0)
            acc = v if acc is None else add(b, acc, v)
        else:
            acc = v if acc is None else binary(b, "maximum", acc, v)
    if mode == "avg":
        # The window's sum over its length, as PyTorch.
        lens = torch.tensor([float(e - s) for s, e in wins],
                            dtype=torch.float64)
        acc = div(b, acc, b.constant_tensor(lens.to(x.dtype).reshape(shape),
                                            1 << 20))
    return acc


def _adaptive(b, x, output_size, nd, mode, what):
    x = need_tensor(b, x, what)
    if x.ndim not in (nd + 1, nd + 2):
        raise b.error("%s: Expected %dD or %dD tensor, got rank %d"
                      % (what, nd + 1, nd + 2, x.ndim))
    if not x.dtype.is_floating_point:
        raise b.error('"%s" not implemented for %s (floats only, as '
                      "PyTorch)" % (what, x.dtype))
    if isinstance(output_size, (int, Sym)) or output_size is None:
        output_size = [output_size] * nd
    if len(output_size) != nd:
        raise b.error("%s: output_size must have %d entries" % (what, nd))
    r = x
    for k, o in enumerate(output_size):
        d = x.ndim - nd + k
        o = b.static(x.shape[d], "an output size") if o is None else \
            b.static(o, "an output size")
        if o < 0:
            raise b.error("%s: output_size must be >= 0, got %d" % (what, o))
        r = _adaptive_dim(b, r, d, o, mode, what)
    return copy_of(r) if r is not x else copy_of(mul(b, x, 1))


@function(F.adaptive_avg_pool1d, torch.adaptive_avg_pool1d)
def adaptive_avg_pool1d(b, x, output_size):
    return _adaptive(b, x, [_one(b, output_size, "adaptive_avg_pool1d's "
                                 "output_size")], 1, "avg",
                     "adaptive_avg_pool1d")


def _adaptive_max(b, x, output_size, nd, return_indices, what):
    """The maximum over PyTorch's adaptive windows (_adaptive) and, with
    return_indices, the flat index of each window's first maximum
    (_adaptive_argmax)."""
    x = need_tensor(b, x, what)
    vals = _adaptive(b, x, output_size, nd, "max", what)
    if not return_indices:
        return vals
    out = [b.static(o, "an output size") for o in vals.shape[-nd:]]
    return vals, _adaptive_argmax(b, x, vals, out)


@function(torch.adaptive_max_pool1d)
def _torch_adaptive_max_pool1d(b, x, output_size):
    """torch.adaptive_max_pool1d (ATen's): values and indices, always."""
    return adaptive_max_pool1d(b, x, output_size, True)


@function(F.adaptive_max_pool1d)
def adaptive_max_pool1d(b, x, output_size, return_indices=False):
    return _adaptive_max(b, x, [_one(b, output_size, "adaptive_max_pool1d's "
                                     "output_size")], 1, return_indices,
                         "adaptive_max_pool1d")


@function(F.adaptive_max_pool2d)
def adaptive_max_pool2d(b, x, output_size, return_indices=False):
    return _adaptive_max(b, x, output_size, 2, return_indices,
                         "adaptive_max_pool2d")


FUNCTIONS[F.adaptive_max_pool1d_with_indices] = _with_indices(
    lambda b, x, output_size, return_indices=False: adaptive_max_pool1d(
        b, x, output_size, return_indices))
FUNCTIONS[F.adaptive_max_pool2d_with_indices] = _with_indices(
    lambda b, x, output_size, return_indices=False: adaptive_max_pool2d(
        b, x, output_size, return_indices))


# --------------------- 3-D pooling, adaptive max indices, unpooling, conv3d
# (issue 16 batch 7 item 2; the ATen converters of kiln/_aten.py call these)

def _triple(b, v, what, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        return default
    if isinstance(v, (list, tuple)):
        v = [b.static(e, what) for e in v]
        return v * 3 if len(v) == 1 else v
    return [b.static(v, what)] * 3


def _pool3d(b, x, k, s, p, d, ceil_mode, pool2d):
    """A 3-D pool as two 2-D pools (max and average over a box are
    separable, padding and ceil_mode windows included): over (H, W) on
    [N*C*..., D, H, W], then over D on [..., D, H'*W'] with a (kd, 1)
    kernel."""
    lead = list(x.shape[:-3])
    D, H, W = x.shape[-3:]
    y = reshape(b, x, [-1, D, H, W])
    y = pool2d(y, k[1:], s[1:], p[1:], d[1:])
    H2, W2 = y.shape[-2:]
    y = reshape(b, y, [y.shape[0], D, H2 * W2])
    y = pool2d(unsqueeze(b, y, 0), [k[0], 1], [s[0], 1], [p[0], 0],
               [d[0], 1])
    y = squeeze(b, y, 0)
    return reshape(b, y, lead + [y.shape[-2], H2, W2])


def _first_hit(b, x, vals, positions):
    """Flat indices (into each input plane or volume, the last
    len(vals.shape) - len(lead) dims of x) of the first of `positions`
    whose value equals the window's max `vals`, or, when `vals` is NaN, of
    the last NaN (PyTorch's kernels: a NaN takes over the running max). positions: int64 tensors of the output's
    window shape, one per tap in scan order, -1 for a tap outside the
    input; each is read with kt.index_select at constant positions."""
    nd = len(positions[0].shape)
    lead = list(x.shape[:-nd])
    outs = list(positions[0].shape)
    total = 1
    for n in x.shape[-nd:]:
        total *= b.static(n, "a pooled size")
    xf = reshape(b, x, lead + [total])

    def cmp(name, t, v):
        return binary(b, name, t, v, out_dtype=torch.bool)

    def isnan(t):
        return b.op("isnan", [t], shape=t.shape, dtype=torch.bool)
    best = found = last = None
    for pos in positions:
        posv = b.constant_tensor(pos, limit=1 << 20)
        valid = cmp("ge", posv, 0)
        safe = clamp(b, posv, 0)
        picked = index_select(b, xf, xf.ndim - 1, reshape(b, safe, -1))
        picked = reshape(b, picked, lead + outs)
        hit = cmp("logical_and", valid, cmp(
            "logical_or", cmp("eq", picked, vals),
            cmp("logical_and", isnan(picked), isnan(vals))))
        if best is None:
            best, found = where(b, hit, safe, -1), hit
            last = best
        else:
            take = cmp("logical_and", hit, logical_not(b, found))
            best = where(b, take, safe, best)
            found = cmp("logical_or", found, hit)
            last = where(b, hit, safe, last)
    if vals.dtype.is_floating_point and len(positions) > 1:
        # A NaN takes over the running max in PyTorch's kernels: a window
        # with NaN gets its last NaN (ties of numbers: the first).
        best = where(b, isnan(vals), last, best)
    if tuple(map(value, best.shape)) != tuple(map(value, lead + outs)):
        best = expand(b, best, lead + outs)
    return cast(b, best, torch.int64)


def _window_argmax(b, x, vals, k, s, p, d):
    """_first_hit over the windows of a (dilated, padded) max pool: for each
    window offset, the input position of every output (constants)."""
    nd = len(k)
    ins = [b.static(n, "a pooled size") for n in x.shape[-nd:]]
    outs = [b.static(n, "a pooled size") for n in vals.shape[-nd:]]
    grids = torch.meshgrid(*[torch.arange(o) for o in outs], indexing="ij")
    positions = []
    for offset in torch.cartesian_prod(*[torch.arange(n) for n in k]).reshape(
            -1, nd).tolist():
        pos = torch.zeros(outs, dtype=torch.int64)
        ok = torch.ones(outs, dtype=torch.bool)
        for i in range(nd):
            c = grids[i] * s[i] - p[i] + offset[i] * d[i]
            ok &= (c >= 0) & (c < ins[i])
            pos = pos * ins[i] + c
        positions.append(torch.where(ok, pos, torch.full_like(pos, -1)))
    return _first_hit(b, x, vals, positions)


def _adaptive_argmax(b, x, vals, out):
    """_first_hit over PyTorch's adaptive windows [floor(i*n/o),
    ceil((i+1)*n/o)) of the last len(out) dims: tap t of a window is its
    start + t, a short window repeating its last position (the same
    position again cannot change the first hit)."""
    nd = len(out)
    ins = [b.static(n, "an adaptive pool's input size")
           for n in x.shape[-nd:]]
    wins = [_adaptive_windows(n, o) for n, o in zip(ins, out)]
    taps = [max([e - s_ for s_, e in w] or [1]) for w in wins]
    positions = []
    for offset in torch.cartesian_prod(*[torch.arange(t) for t in taps]
                                       ).reshape(-1, nd).tolist():
        per_dim = [torch.tensor([min(s_ + t, e - 1) for s_, e in w],
                                dtype=torch.int64)
                   for w, t in zip(wins, offset)]
        grids = torch.meshgrid(*per_dim, indexing="ij")
        pos = torch.zeros(out, dtype=torch.int64)
        for i in range(nd):
            pos = pos * ins[i] + grids[i]
        positions.append(pos)
    return _first_hit(b, x, vals, positions)


def _float_pool(b, x, what, nd, also=()):
    x = need_tensor(b, x, what)
    if x.ndim not in (nd + 1, nd + 2):
        raise b.error("%s expects a %d-D or %d-D input, got rank %d"
                      % (what, nd + 1, nd + 2, x.ndim))
    if not (x.dtype.is_floating_point or x.dtype in also):
        # PyTorch 1.13 on CPU (max pooling of integers is not implemented).
        raise b.error('"%s" not implemented for %s (PyTorch implements it '
                      "for %s)" % (what, x.dtype, "floats" + "".join(
                          " and %s" % str(t).replace("torch.", "")
                          for t in also)))
    return x


def max_pool3d(b, x, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode=False, return_indices=False):
    """Values by two kt.max_pool2d (_pool3d), indices (flat, into each
    input volume) by _window_argmax."""
    x = _float_pool(b, x, "max_pool3d", 3)
    k = _triple(b, kernel_size, "a pool kernel size")
    s = _triple(b, stride, "a pool stride", k)
    p = _triple(b, padding, "a pool padding")
    d = _triple(b, dilation, "a pool dilation")
    for kk, pp in zip(k, p):
        if pp * 2 > kk:
            raise b.error("max_pool3d: pad should be at most half of "
                          "effective kernel size, but got pad=%d and "
                          "kernel_size=%d" % (pp, kk))

    def pool2d(y, k2, s2, p2, d2):
        return max_pool2d(b, y, k2, s2, p2, d2, ceil_mode)
    vals = _pool3d(b, x, k, s, p, d, ceil_mode, pool2d)
    if return_indices:
        return vals, _window_argmax(b, x, vals, k, s, p, d)
    return vals


for _t in (F.max_pool3d, torch.max_pool3d, _opt(F, "_max_pool3d")):
    if _t is not None:
        FUNCTIONS[_t] = max_pool3d
FUNCTIONS[F.max_pool3d_with_indices] = _with_indices(max_pool3d)


@function(F.avg_pool3d, torch._C._nn.avg_pool3d)
def avg_pool3d(b, x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Two kt.avg_pool2d (_pool3d): the divisor of a 3-D window is the
    product of its per-dim divisors (clipped windows and
    count_include_pad=False alike), so averaging twice is PyTorch's
    average. int64 (PyTorch divides the integer sum once, truncating; two
    averages would truncate twice) and a divisor_override (not a product of
    2-D divisors) are the window sums (two kt.avg_pool2d with
    divisor_override=1), divided once by PyTorch's 3-D divisor
    (_avg_pool3d_divisors: constants)."""
    x = _float_pool(b, x, "avg_pool3d", 3, also=(torch.int64,))
    k = _triple(b, kernel_size, "a pool kernel size")
    s = _triple(b, stride, "a pool stride", k)
    p = _triple(b, padding, "a pool padding")
    if divisor_override is not None:
        divisor_override = b.static(divisor_override, "a divisor_override")
        if divisor_override == 0:
            raise b.error("divisor must be not zero")
    if divisor_override is None and x.dtype.is_floating_point:
        def pool2d(y, k2, s2, p2, d2):
            return avg_pool2d(b, y, k2, s2, p2, ceil_mode, count_include_pad)
        return _pool3d(b, x, k, s, p, [1, 1, 1], ceil_mode, pool2d)

    def sum2d(y, k2, s2, p2, d2):
        return avg_pool2d(b, y, k2, s2, p2, ceil_mode, count_include_pad, 1)
    total = _pool3d(b, x, k, s, p, [1, 1, 1], ceil_mode, sum2d)
    if divisor_override is not None:
        div_t = divisor_override
    else:
        sizes = [b.static(n, "an int64 avg_pool3d's input size")
                 for n in x.shape[-3:]]
        outs = [b.static(n, "an int64 avg_pool3d's output size")
                for n in total.shape[-3:]]
        div_t = b.constant_tensor(_avg_pool3d_divisors(
            sizes, outs, k, s, p, count_include_pad), limit=1 << 20)
    if x.dtype.is_floating_point:
        return div(b, total, cast(b, div_t, x.dtype) if isinstance(
            div_t, TensorVal) else float(div_t))
    return div(b, total, div_t, rounding_mode="trunc")


def _avg_pool3d_divisors(sizes, outs, k, s, p, count_include_pad):
    """PyTorch's avg_pool3d divisor of each output position (int64
    [OD, OH, OW]): the window clipped to the padded input
    (count_include_pad) or to the input; 1 for a window without input
    elements (its sum is 0, as PyTorch's output)."""
    pool, count = [], []
    for n, o, kk, ss, pp in zip(sizes, outs, k, s, p):
        ps, cs = [], []
        for i in range(o):
            st = i * ss - pp
            en = min(st + kk, n + pp)
            ps.append(en - st)
            cs.append(min(en, n) - max(st, 0))
        pool.append(torch.tensor(ps, dtype=torch.int64))
        count.append(torch.tensor(cs, dtype=torch.int64))

    def outer(v):
        return v[0][:, None, None] * v[1][None, :, None] * v[2][None, None, :]
    cnt = outer(count)
    empty = (count[0][:, None, None] <= 0) | (count[1][None, :, None] <= 0) \
        | (count[2][None, None, :] <= 0)
    d = outer(pool) if count_include_pad else cnt
    return torch.where(empty, torch.ones_like(d), d)


@function(F.adaptive_avg_pool3d, torch._C._nn.adaptive_avg_pool3d)
def adaptive_avg_pool3d(b, x, output_size):
    return _adaptive(b, x, _adaptive_sizes(b, x, output_size, 3,
                                           "adaptive_avg_pool3d"),
                     3, "avg", "adaptive_avg_pool3d")


def _adaptive_sizes(b, x, output_size, nd, what):
    x = need_tensor(b, x, what)
    if isinstance(output_size, (int, Sym)) or output_size is None:
        output_size = [output_size] * nd
    output_size = list(output_size)
    if len(output_size) != nd:
        raise b.error("%s: output_size must have %d entries" % (what, nd))
    return [x.shape[x.ndim - nd + i] if o is None else o
            for i, o in enumerate(output_size)]


@function(F.adaptive_max_pool3d)
def adaptive_max_pool3d(b, x, output_size, return_indices=False):
    return _adaptive_max(b, x, _adaptive_sizes(
        b, x, output_size, 3, "adaptive_max_pool3d"), 3, return_indices,
        "adaptive_max_pool3d")


FUNCTIONS[F.adaptive_max_pool3d_with_indices] = _with_indices(
    lambda b, x, output_size, return_indices=False: adaptive_max_pool3d(
        b, x, output_size, return_indices))


def max_unpool(b, x, indices, kernel_size, stride, padding, output_size,
               nd, what):
    """PyTorch's max_unpool{1,2,3}d: zeros of the output size with each
    value written at its flat index into its plane (kt.scatter along the
    flattened spatial dims; an index outside the plane is kt.scatter's
    run-time error, as PyTorch's "Found an invalid max index")."""
    x = need_tensor(b, x, what)
    indices = need_tensor(b, indices, "%s's indices" % what)
    if x.ndim not in (nd + 1, nd + 2):
        raise b.error("%s expects a %d-D or %d-D input, got rank %d"
                      % (what, nd + 1, nd + 2, x.ndim))
    if indices.dtype != torch.int64:
        raise b.error("%s: indices must be int64, got %s"
                      % (what, indices.dtype))
    if tuple(map(value, indices.shape)) != tuple(map(value, x.shape)):
        raise b.error("%s: Expected shape of indices to be same as that of "
                      "the input tensor" % what)

    def dims(v, why, default=None):
        if v is None or (isinstance(v, (list, tuple)) and not v):
            return default
        vs = int_list(b, v, why) if isinstance(v, (list, tuple)) else \
            [b.static(v, why)]
        return vs * nd if len(vs) == 1 else vs
    k = dims(kernel_size, "%s's kernel_size" % what)
    s = dims(stride, "%s's stride" % what, k)
    p = dims(padding, "%s's padding" % what, [0] * nd)
    ins = [b.static(n, "%s's input size" % what) for n in x.shape[-nd:]]
    default = [(n - 1) * s_ - 2 * p_ + k_
               for n, s_, p_, k_ in zip(ins, s, p, k)]
    if output_size is None:
        out = default
    else:
        out = int_list(b, output_size, "%s's output_size" % what)
        if len(out) == x.ndim:
            out = out[-nd:]
        if len(out) != nd:
            raise b.error("%s: output_size must have %d or %d elements"
                          % (what, nd, x.ndim))
        for o, dflt, s_ in zip(out, default, s):
            if o < dflt - s_ or o > dflt + s_:
                raise b.error("%s: invalid output_size %s (it must be "
                              "between %s and %s)" % (
                                  what, out, [dd - ss for dd, ss in
                                              zip(default, s)],
                                  [dd + ss for dd, ss in zip(default, s)]))
    return _unpool_to(b, x, indices, out, nd, what)


def _unpool_to(b, x, indices, out, nd, what):
    """max_unpool's result of spatial size `out` (aten.max_unpool2d/3d take
    the size only)."""
    if tuple(map(value, indices.shape)) != tuple(map(value, x.shape)):
        raise b.error("%s: Expected shape of indices to be same as that of "
                      "the input tensor" % what)
    lead = list(x.shape[:-nd])
    plane = 1
    for o in out:
        plane *= o
    n_in = 1
    for n in x.shape[-nd:]:
        n_in *= b.static(n, "%s's input size" % what)
    zeros = full(b, lead + [plane], 0, dtype=x.dtype)
    r = scatter_op(b, zeros, len(lead), reshape(b, indices, lead + [n_in]),
                   reshape(b, x, lead + [n_in]), "none", what=what)
    return reshape(b, r, lead + out)


def _unpool(nd):
    name = "max_unpool%dd" % nd

    def conv(b, x, indices, kernel_size, stride=None, padding=0,
             output_size=None):
        return max_unpool(b, x, indices, kernel_size, stride, padding,
                          output_size, nd, name)
    return conv


for _nd in (1, 2, 3):
    FUNCTIONS[getattr(F, "max_unpool%dd" % _nd)] = _unpool(_nd)


for _nd in (1, 2, 3):
    def _m_unpool(b, m, path, x, indices, output_size=None, _nd=_nd):
        return max_unpool(b, x, indices, m.kernel_size, m.stride, m.padding,
                          output_size, _nd, "max_unpool%dd" % _nd)
    MODULES[getattr(nn, "MaxUnpool%dd" % _nd)] = _m_unpool


# The pooling modules: each forward is its functional form on the module's
# attributes, in the functional form's order.
def _pool_module(fn, *attrs):
    def conv(b, m, path, x):
        return fn(b, x, *[getattr(m, a) for a in attrs])
    return conv


_MAX_POOL = ("kernel_size", "stride", "padding", "dilation", "ceil_mode",
             "return_indices")
_AVG_POOL = ("kernel_size", "stride", "padding", "ceil_mode",
             "count_include_pad", "divisor_override")
for _cls, _fn, _attrs in (
        (nn.MaxPool1d, max_pool1d, _MAX_POOL),
        (nn.MaxPool2d, max_pool2d, _MAX_POOL),
        (nn.MaxPool3d, max_pool3d, _MAX_POOL),
        (nn.AvgPool1d, avg_pool1d, _AVG_POOL[:-1]),   # no divisor_override
        (nn.AvgPool2d, avg_pool2d, _AVG_POOL),
        (nn.AvgPool3d, avg_pool3d, _AVG_POOL),
        (nn.AdaptiveAvgPool1d, adaptive_avg_pool1d, ("output_size",)),
        (nn.AdaptiveAvgPool2d, adaptive_avg_pool2d, ("output_size",)),
        (nn.AdaptiveAvgPool3d, adaptive_avg_pool3d, ("output_size",)),
        (nn.AdaptiveMaxPool1d, adaptive_max_pool1d,
         ("output_size", "return_indices")),
        (nn.AdaptiveMaxPool2d, adaptive_max_pool2d,
         ("output_size", "return_indices")),
        (nn.AdaptiveMaxPool3d, adaptive_max_pool3d,
         ("output_size", "return_indices"))):
    MODULES[_cls] = _pool_module(_fn, *_attrs)


# ------------------------- 3-D convolutions (issue 16 batch 7, item 2)
#
# kt has 1-D/2-D convolutions only: a 3-D one is kD 2-D ones over the depth
# taps. conv3d: for each depth tap j, the input depth slices od * s + j * d
# - p of every output depth (constants) stacked into the batch, convolved
# over (H, W) with w[:, :, j], summed over j. conv_transpose3d: for each
# depth tap j, the transposed 2-D convolution of every input depth slice
# with w[:, :, j]; input depth i of tap j lands on output depth
# i * s + j * d - p, a constant 0/1 matrix [Do, kD * D] (kt.matmul) adds
# them up. Their gradients are those kt ops' (the ATen
# convolution_backward of 3-D convolutions: kiln/_aten.py).

def _conv3d(b, x, w, bias, stride, padding, dilation, groups):
    """conv3d of a 5-D x with int lists stride/padding/dilation."""
    st, pd, dl = stride, padding, dilation
    N, C, D, H, W = x.shape
    D = b.static(D, "a conv input depth")
    kd = b.static(w.shape[2], "a conv kernel depth")
    Do = (D + 2 * pd[0] - dl[0] * (kd - 1) - 1) // st[0] + 1
    if Do <= 0:
        raise b.error("conv3d: the output depth would be %d (input depth "
                      "%d, kernel depth %d)" % (Do, D, kd))
    xp = pad(b, x, [0, 0, 0, 0, pd[0], pd[0]], "constant", 0) \
        if pd[0] else x
    out = None
    for j in range(kd):
        depths = [od * st[0] + j * dl[0] for od in range(Do)]
        idx = b.constant_tensor(torch.tensor(depths, dtype=torch.int64))
        sl = index_select(b, xp, 2, idx)                 # N, C, Do, H, W
        sl = permute(b, sl, [0, 2, 1, 3, 4])
        sl = reshape(b, sl, [-1, C, H, W])               # N*Do, C, H, W
        wj = select(b, w, 2, j)
        y = conv2d(b, sl, wj, None, st[1:], pd[1:], dl[1:], groups)
        out = y if out is None else add(b, out, y)
    Oc, Ho, Wo = out.shape[1:]
    out = permute(b, reshape(b, out, [N, Do, Oc, Ho, Wo]), [0, 2, 1, 3, 4])
    if bias is not None:
        out = add(b, out, reshape(b, cast(b, bias, out.dtype),
                                  [1, -1, 1, 1, 1]))
    return out


def _conv_transpose3d(b, x, w, bias, stride, padding, output_padding,
                      groups, dilation):
    """conv_transpose3d of a 5-D x with int lists."""
    st, pd, op, dl = stride, padding, output_padding, dilation
    N, C, D, H, W = x.shape
    D = b.static(D, "a conv input depth")
    kd = b.static(w.shape[2], "a conv kernel depth")
    Do = (D - 1) * st[0] - 2 * pd[0] + dl[0] * (kd - 1) + op[0] + 1
    if Do <= 0:
        raise b.error("conv_transpose3d: the output depth would be %d" % Do)
    xs = reshape(b, permute(b, x, [0, 2, 1, 3, 4]), [-1, C, H, W])
    taps = []
    for j in range(kd):
        y = conv_transpose2d(b, xs, select(b, w, 2, j), None, st[1:],
                             pd[1:], op[1:], groups, dl[1:])
        Oc, Ho, Wo = y.shape[1:]
        taps.append(reshape(b, y, [N, D, Oc * Ho * Wo]))
    m = torch.zeros(Do, kd * D, dtype=torch.float64)
    for j in range(kd):
        for i in range(D):
            od = i * st[0] + j * dl[0] - pd[0]
            if 0 <= od < Do:
                m[od, j * D + i] = 1
    ys = taps[0] if kd == 1 else cat(b, taps, 1)     # N, kd*D, K
    out = matmul(b, b.constant_tensor(m.to(ys.dtype), 1 << 20), ys)
    out = permute(b, reshape(b, out, [N, Do, Oc, Ho, Wo]), [0, 2, 1, 3, 4])
    if bias is not None:
        out = add(b, out, reshape(b, cast(b, bias, out.dtype),
                                  [1, -1, 1, 1, 1]))
    return out


def _conv3d_operands(b, x, weight, bias, what):
    x = need_tensor(b, x, what)
    weight = need_tensor(b, weight, "%s's weight" % what)
    if x.ndim not in (4, 5):
        raise b.error("Expected 4D (unbatched) or 5D (batched) input to %s, "
                      "but got input of rank %d" % (what, x.ndim))
    if weight.ndim != 5:
        raise b.error("%s expects a 5-D weight, got rank %d"
                      % (what, weight.ndim))
    transposed = what == "conv_transpose3d"
    dt = _conv_dtype(b, x, weight, bias, "slow_conv_transpose3d_out_cpu"
                     if transposed else "compute_columns3d",
                     transposed=transposed)
    x = cast(b, x, dt)
    if x.ndim == 4:
        x = unsqueeze(b, x, 0)
    return (x, cast(b, weight, dt),
            None if bias is None else cast(b, bias, dt))


@function(F.conv3d, torch.conv3d)
def conv3d(b, x, weight, bias=None, stride=1, padding=0, dilation=1,
           groups=1):
    unbatched = need_tensor(b, x, "conv3d").ndim == 4
    x, weight, bias = _conv3d_operands(b, x, weight, bias, "conv3d")
    st = _triple(b, stride, "a conv stride")
    dl = _triple(b, dilation, "a conv dilation")
    groups = b.static(groups, "conv groups")
    k = [b.static(n, "a kernel size") for n in weight.shape[2:]]
    _check_kernel(b, k)
    c = b.static(x.shape[1], "conv3d's input channels")
    if c != b.static(weight.shape[1], "conv3d's weight") * groups:
        raise b.error("conv3d: expected input with %d channels (weight %s, "
                      "groups %d), got %d" % (
                          weight.shape[1] * groups,
                          list(map(value, weight.shape)), groups, c))
    if isinstance(padding, str):
        if padding == "valid":
            pd = [0, 0, 0]
        elif padding == "same":
            if st != [1, 1, 1]:
                raise b.error("padding='same' is not supported for strided "
                              "convolutions")
            total = [d * (kk - 1) for d, kk in zip(dl, k)]
            if any(t % 2 for t in total):
                # Asymmetric: PyTorch pads the extra element at the end.
                x = pad(b, x, [v for t in reversed(total)
                               for v in (t // 2, t - t // 2)])
                pd = [0, 0, 0]
            else:
                pd = [t // 2 for t in total]
        else:
            raise b.error("conv3d padding=%r" % padding)
    else:
        pd = _triple(b, padding, "a conv padding")
    if not x.dtype.is_floating_point:
        _int_dilation(b, x.dtype, dl)
    r = _conv3d(b, x, weight, bias, st, pd, dl, groups)
    return squeeze(b, r, 0) if unbatched else r


@function(F.conv_transpose3d, torch.conv_transpose3d)
def conv_transpose3d(b, x, weight, bias=None, stride=1, padding=0,
                     output_padding=0, groups=1, dilation=1):
    unbatched = need_tensor(b, x, "conv_transpose3d").ndim == 4
    x, weight, bias = _conv3d_operands(b, x, weight, bias,
                                       "conv_transpose3d")
    st = _triple(b, stride, "a conv stride")
    pd = _triple(b, padding, "a conv padding")
    op = _triple(b, output_padding, "a conv output_padding")
    dl = _triple(b, dilation, "a conv dilation")
    groups = b.static(groups, "conv groups")
    _check_kernel(b, [b.static(n, "a kernel size") for n in weight.shape[2:]])
    c = b.static(x.shape[1], "conv_transpose3d's input channels")
    if c != b.static(weight.shape[0], "conv_transpose3d's weight"):
        raise b.error("conv_transpose3d: expected input with %d channels "
                      "(weight %s), got %d" % (
                          value(weight.shape[0]),
                          list(map(value, weight.shape)), c))
    for i in range(3):
        if op[i] >= max(st[i], dl[i]):
            raise b.error("conv_transpose3d: output_padding %d must be "
                          "smaller than stride %d or dilation %d"
                          % (op[i], st[i], dl[i]))
    r = _conv_transpose3d(b, x, weight, bias, st, pd, op, groups, dl)
    return squeeze(b, r, 0) if unbatched else r


@module(nn.Conv3d)
def _m_conv3d(b, m, path, x):
    x, padding = _conv_padding_mode(b, m, x)
    return conv3d(b, x, b.module_tensor(path, "weight"),
                  b.module_tensor(path, "bias"), m.stride, padding,
                  m.dilation, m.groups)


@module(nn.ConvTranspose3d)
def _m_conv_transpose3d(b, m, path, x, output_size=None):
    if m.padding_mode != "zeros":
        raise b.error("Only 'zeros' padding mode is supported for "
                      "ConvTranspose3d")
    output_padding = m.output_padding
    if output_size is not None:
        x = need_tensor(b, x, "ConvTranspose3d")
        size = int_list(b, output_size, "an output_size")
        if len(size) not in (3, x.ndim):
            raise b.error("ConvTranspose3d: output_size must have 3 or %d "
                          "entries, got %d" % (x.ndim, len(size)))
        size = size[-3:]
        output_padding = []
        for i in range(3):
            n = b.static(x.shape[-3 + i], "an input size with output_size")
            lo = ((n - 1) * m.stride[i] - 2 * m.padding[i]
                  + m.dilation[i] * (m.kernel_size[i] - 1) + 1)
            hi = lo + m.stride[i] - 1
            if not lo <= size[i] <= hi:
                raise b.error("ConvTranspose3d: requested output size %d is "
                              "not in the valid range [%d, %d]"
                              % (size[i], lo, hi))
            output_padding.append(size[i] - lo)
    return conv_transpose3d(b, x, b.module_tensor(path, "weight"),
                            b.module_tensor(path, "bias"), m.stride,
                            m.padding, output_padding, m.groups, m.dilation)


# ------------------------------- as_strided (issue 16 batch 7, item 3)

def _torch_storage_view(b, node):
    """The torch-level view chain of FX node `node` replayed on
    torch.arange of its base (a graph input whose example owns its storage
    contiguously): a real view of that arange, whose values are storage
    positions; None when the chain has anything but view ops with constant
    arguments (an op whose result is not a view of its input, an in-place
    op, a tensor argument) or another base."""
    import torch.fx as fx
    from torch.utils import _pytree as pytree
    if not isinstance(node, fx.Node):
        return None
    chain = []
    while node.op != "placeholder":
        if node.op not in ("call_function", "call_method") or \
                len(chain) > 64:
            return None
        name = node.target if node.op == "call_method" else getattr(
            node.target, "__name__", "")
        if str(name).endswith("_") and not str(name).endswith("__"):
            return None                              # in place
        if not node.args or not isinstance(node.args[0], fx.Node) or any(
                isinstance(a, fx.Node) for a in pytree.tree_flatten(
                    (list(node.args[1:]), node.kwargs))[0]):
            return None
        chain.append(node)
        node = node.args[0]
    v = b.env.get(node)
    ex = v.arg.example if isinstance(v, TensorVal) and v.arg else None
    if ex is None or not (ex.is_contiguous() and ex.storage_offset() == 0
                          and ex.storage().size() == ex.numel()):
        return None
    base = torch.arange(ex.numel()).reshape(ex.shape)
    view = base
    for nd in reversed(chain):
        try:
            if nd.op == "call_method":
                view = getattr(view, nd.target)(*nd.args[1:], **nd.kwargs)
            else:
                view = nd.target(view, *nd.args[1:], **nd.kwargs)
        except Exception:  # noqa: not replayable: refused below
            return None
        ts = [t for t in pytree.tree_flatten(view)[0]
              if isinstance(t, torch.Tensor)]
        if not ts or any(t.storage().data_ptr() != base.storage().data_ptr()
                         for t in ts):
            return None                            # not a view of the base
    if not isinstance(view, torch.Tensor):
        return None
    return v, base, view


@both("as_strided")
def as_strided(b, x, size, stride, storage_offset=None):
    """Tensor.as_strided / torch.as_strided: a strided read of the storage
    x views, where x is a graph input that owns its storage contiguously or
    a chain of views of one (_torch_storage_view): the positions are
    constants (the chain replayed on torch.arange), read with
    kt.index_select from the input flattened. Of anything else (a result
    of a non-view op, whose strides eager PyTorch may not make contiguous)
    it is refused."""
    x = need_tensor(b, x, "as_strided")
    found = _torch_storage_view(b, b.node.args[0])
    if found is None:
        raise b.error("as_strided of a tensor that is neither a graph input "
                      "owning its storage contiguously nor a chain of views "
                      "of one (Kiln's values have no storage to read "
                      "through)")
    base_val, base, view = found
    size = int_list(b, size, "an as_strided size")
    stride = int_list(b, stride, "an as_strided stride")
    off = view.storage_offset() if storage_offset is None else b.static(
        storage_offset, "a storage offset")
    if any(v < 0 for v in size + stride) or off < 0:
        raise b.error("as_strided with a negative size, stride or offset")
    n = base.numel()
    last = off + sum((n_ - 1) * st for n_, st in zip(size, stride))
    if 0 not in size and last >= n:
        raise b.error("as_strided reads past the end of its input's storage "
                      "(position %d of %d)" % (last, n))
    pos = torch.as_strided(view, size, stride, off)
    posv = b.constant_tensor(pos.reshape(-1).contiguous(), limit=1 << 20)
    r = reshape(b, index_select(b, reshape(b, base_val, [-1]), 0, posv),
                size)
    return TensorVal(r.name, r.shape, r.dtype, is_view=True, base=base_val)


@function(torch.batch_norm)
def _torch_batch_norm(b, input, weight, bias, running_mean, running_var,
                      training, momentum, eps, cudnn_enabled=True):
    """torch.batch_norm: ATen's argument order (weight and bias before the
    running statistics), unlike F.batch_norm's."""
    return batch_norm(b, input, running_mean, running_var, weight, bias,
                      training, momentum, eps)


@function(F.batch_norm)
def batch_norm(b, x, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-5, *args,
               num_batches_tracked=None):
    x = need_tensor(b, x, "batch_norm")
    if x.ndim < 2:
        raise b.error("batch_norm expects an input of rank >= 2")
    if training or running_mean is None or running_var is None:
        return _batch_norm_train(b, x, running_mean, running_var, weight,
                                 bias, momentum, eps, num_batches_tracked)
    dt = x.dtype
    ops = [x, cast(b, running_mean, dt), cast(b, running_var, dt)]
    text = "%s, %s, %s" % tuple(o.name for o in ops)
    if weight is not None:
        ops.append(cast(b, weight, dt))
        text += " weight %s" % ops[-1].name
    if bias is not None:
        ops.append(cast(b, bias, dt))
        text += " bias %s" % ops[-1].name
    return b.op("batch_norm", ops, {"eps": float(eps)}, shape=x.shape,
                dtype=dt, operand_text=text)


def _batch_norm_train(b, x, running_mean, running_var, weight, bias,
                      momentum, eps, num_batches_tracked):
    """batch_norm with batch statistics (training mode, or no running
    statistics): one kt.batch_norm_train (aten native_batch_norm), whose
    VJP is one kt.batch_norm_backward; it returns the normalized input
    and the batch's save_mean / save_invstd (f32, f64 for f64 inputs). The
    running statistics given are written in place (as eager PyTorch's
    kernel does): running_mean = (1 - m) * running_mean + m * save_mean,
    running_var likewise with the unbiased variance (from save_invstd:
    _bn_unbiased_var), both outside autograd (no-grad values), and
    `num_batches_tracked`
    (BatchNorm modules) += 1 first; momentum None is the cumulative
    average, m = 1 / num_batches_tracked."""
    if not x.dtype.is_floating_point:
        raise b.error("batch_norm of a %s tensor" % x.dtype)
    dims = [0] + list(range(2, x.ndim))
    count = 1
    for d in dims:
        count = count * x.shape[d]
    # F.batch_norm's own check (_verify_batch_size): at capture, and on
    # every call when a dim of the count may be dynamic.
    b.check_sizes(count, 2, "Expected more than 1 value per channel when "
                  "training, got input size %s", x.shape,
                  error=KilnValueError)
    dt = x.dtype
    st = torch.float64 if dt == torch.float64 else torch.float32
    ops = [x]
    text = x.name
    if weight is not None:
        ops.append(cast(b, weight, dt))
        text += " weight %s" % ops[-1].name
    if bias is not None:
        ops.append(cast(b, bias, dt))
        text += " bias %s" % ops[-1].name
    # kt.verify_batch_size: the program itself refuses one value per channel
    # too (the interpreter's and kiln-cpu's run-time error), for callers
    # that run it without the frontend's check (a kiln.Session).
    y, save_mean, save_invstd = b.op(
        "batch_norm_train", ops, {"eps": float(eps),
                                  "kt.verify_batch_size": _ir.Raw("unit")},
        operand_text=text,
        results=[(x.shape, dt), ([x.shape[1]], st), ([x.shape[1]], st)])
    if running_mean is None and running_var is None:
        return y
    if num_batches_tracked is not None:
        num_batches_tracked = in_place(b, num_batches_tracked,
                                       add(b, num_batches_tracked, 1))
    if momentum is None:
        if num_batches_tracked is None:
            raise b.error("batch_norm with momentum=None needs "
                          "num_batches_tracked (a BatchNorm module)")
        factor = div(b, 1.0, cast(b, num_batches_tracked, dt))
        keep = sub(b, 1.0, factor)
    else:
        factor = float(b.static(momentum, "batch_norm's momentum"))
        keep = 1.0 - factor
    unbiased = (None if running_var is None else
                _bn_unbiased_var(b, x, save_invstd, eps, dims))
    for stat, batch in ((running_mean, save_mean), (running_var, unbiased)):
        if stat is None:
            continue
        batch = cast(b, batch, dt)
        new = add(b, mul(b, cast(b, stat, dt), keep), mul(b, batch, factor))
        # Not differentiable (aten updates them outside autograd): the
        # training program's backward has nothing of this update, and an
        # op that reads the statistic after it (`F.batch_norm(x, rm, ...)
        # @ rm`) gets no gradient through it (a gradient barrier: before,
        # one flowed through the batch mean into x's gradient).
        new = stop_gradient(b, cast(b, new, stat.dtype))
        b.no_grad_values.add(new.name)
        in_place(b, stat, new)
    return y


def _bn_unbiased_var(b, x, save_invstd, eps, dims):
    """The batch's unbiased variance for batch_norm's running_var, from
    kt.batch_norm_train's own statistics: save_invstd = 1 / sqrt(var + eps)
    (var biased), so var = 1 / save_invstd^2 - eps and the unbiased one
    var * M / (M - 1), M the count per channel (the product of `dims`),
    in f64 on [C] values. Was a kt.var (correction 1) of x: two more
    passes over the activations per batch norm per training step, in f64.
    The difference is the rounding of save_invstd (relative 2^-24 in f32
    of var + eps: an absolute error of at most ~1e-7 * (var + eps), below
    eps's own share of the eval normalization); a negative result of that
    rounding is clamped to 0. M is counted at run time (a kt.full of M ones
    summed: M elements, not C * M; the batch dim is a symbol that the
    runtime may make dynamic), and M == 1 gives NaN as the kt.var did
    (0 / 0)."""
    count = 1
    for d in dims:
        count = count * x.shape[d]
    f64 = torch.float64
    inv = cast(b, save_invstd, f64)
    v = sub(b, div(b, 1.0, mul(b, inv, inv)), float(eps))
    v = clamp_min(b, v, 0.0)
    m = sum_(b, full(b, [count], 1.0, f64, "batch_norm's count"))
    # M == 1: exactly 0 * (1 / 0) = NaN, as kt.var's 0 / 0.
    v = where(b, binary(b, "gt", m, 1.0, out_dtype=torch.bool), v, 0.0)
    return div(b, mul(b, v, m), sub(b, m, 1.0))


@function(F.layer_norm, torch.layer_norm)
def layer_norm(b, x, normalized_shape, weight=None, bias=None, eps=1e-5,
               *args):
    x = need_tensor(b, x, "layer_norm")
    ns = int_list(b, normalized_shape, "a normalized_shape")
    if not x.dtype.is_floating_point:
        raise b.error("layer_norm of a %s tensor" % x.dtype)
    for i, n in enumerate(ns):
        d = x.shape[x.ndim - len(ns) + i]
        b.static(d, "a layer_norm normalized dim")
    ops = [x]
    text = x.name
    if weight is not None:
        ops.append(cast(b, weight, x.dtype))
        text += " weight %s" % ops[-1].name
    if bias is not None:
        ops.append(cast(b, bias, x.dtype))
        text += " bias %s" % ops[-1].name
    return b.op("layer_norm", ops, {"normalized_shape": ns,
                                    "eps": float(eps)},
                shape=x.shape, dtype=x.dtype, operand_text=text)


@function(F.dropout, torch.dropout)
def dropout(b, x, p=0.5, training=True, inplace=False):
    """F.dropout: in training mode with p > 0, kt.dropout with a seed
    argument the caller draws anew on every call (ProgramArg.seed), so the
    mask changes per call; its VJP applies the same mask (the seed is
    saved for the backward)."""
    p = float(b.static(p, "a dropout probability"))
    if p < 0 or p > 1:
        raise b.error("dropout probability has to be between 0 and 1, but "
                      "got %g" % p)
    if not training or p == 0:
        return x
    x = need_tensor(b, x, "dropout")
    if not x.dtype.is_floating_point:
        raise b.error("dropout of a %s tensor" % x.dtype)
    r = b.op("dropout", [x, b.seed_arg()], {"p": p}, shape=x.shape,
             dtype=x.dtype)
    return in_place(b, x, r) if inplace else r


@function_named("torchvision.ops.stochastic_depth", "stochastic_depth")
def stochastic_depth(b, x, p, mode, training=True):
    """torchvision.ops.stochastic_depth (EfficientNet's, ConvNeXt's and
    Swin's drop path; torch.fx.wrap'd, so a call node): the input itself in
    eval mode or with p = 0. In training, torchvision's noise: one
    Bernoulli(1 - p) draw per row (mode "row": a [N, 1, ...] noise) or for
    the whole batch (mode "batch": [1, ...]), divided by 1 - p, times the
    input; here a kt.dropout of ones of the noise's shape (1 / (1 - p)
    where kept, with probability 1 - p; a seed argument drawn anew on every
    call, as F.dropout's), and zeros for p = 1 (torchvision does not
    divide then). Arguments torchvision refuses (p outside [0, 1], an
    unknown mode) are not converted (eager's ValueError at the break)."""
    p = float(b.static(p, "a stochastic depth probability"))
    if p < 0.0 or p > 1.0 or mode not in ("batch", "row"):
        raise b.error("stochastic_depth with p=%g, mode=%r (torchvision "
                      "raises ValueError)" % (p, mode))
    if not training or p == 0.0:
        return x
    x = need_tensor(b, x, "stochastic_depth")
    if not x.dtype.is_floating_point:
        raise b.error("stochastic_depth of a %s tensor" % x.dtype)
    if p == 1.0:
        return mul(b, x, 0.0)
    s = x
    for d in range(1 if mode == "row" else 0, x.ndim):
        s = slice_dim(b, s, d, 0, 1, None)
    one = full(b, [], 1.0, x.dtype)
    ones = where(b, binary(b, "eq", s, s, out_dtype=torch.bool), one, one)
    noise = b.op("dropout", [ones, b.seed_arg()], {"p": p},
                 shape=ones.shape, dtype=x.dtype)
    return mul(b, x, noise)


# Channel-wise and alpha dropout in training mode, as ATen's _dropout_impl:
# a noise tensor of 1 (kept, u >= p, u of kt.rand / kt.dropout for a seed
# argument drawn on every call) and 0 (dropped), of the input's shape
# (alpha_dropout) or one value per channel ([N, C, 1, ...]: feature
# dropout; [C, 1, ...] for an unbatched input of dropout1d / dropout3d).
# Feature dropout multiplies by the noise scaled by 1 / (1 - p) (one
# kt.dropout of ones: the mask), alpha dropout computes
# x * (a * noise) + alpha * a * (noise - 1 + p), a = 1 / sqrt((alpha^2 p +
# 1) (1 - p)), so the output keeps zero mean and unit variance for SELU
# activations. The backward multiplies by the same mask (the VJP of the
# multiplication; the mask is recomputed from, or saved with, its seed).
_SELU_ALPHA = 1.7580993408473766


def _mask_ones(b, x, feature, unbatched):
    """Ones of the noise's shape (x's, or one per channel), built from x so
    that its dims stay symbolic (a dynamic batch stays dynamic, where
    kt.full would need static sizes): x sliced to its first element along
    the dims the mask broadcasts over, then where(s == s, 1, 1) (both
    branches are 1: the condition only gives the shape)."""
    s = x
    if feature:
        first = 1 if unbatched else 2
        if x.ndim < first:
            raise b.error("Feature dropout requires at least 2 dimensions "
                          "in the input")
        for d in range(first, x.ndim):
            s = slice_dim(b, s, d, 0, 1, None)
    one = full(b, [], 1.0, x.dtype)
    return where(b, binary(b, "eq", s, s, out_dtype=torch.bool), one, one)


def _dropout_impl(b, x, p, training, inplace, name, feature=False,
                  alpha=False, unbatched=False):
    p = float(b.static(p, "a dropout probability"))
    if p < 0 or p > 1:
        raise b.error("dropout probability has to be between 0 and 1, but "
                      "got %g" % p)
    if not training or p == 0:
        return x
    x = need_tensor(b, x, name)
    if not x.dtype.is_floating_point:
        raise b.error("%s of a %s tensor" % (name, x.dtype))
    if p == 1:
        r = mul(b, x, 0.0)  # PyTorch: input * zeros({})
    else:
        ones = _mask_ones(b, x, feature, unbatched)
        # 1 / (1 - p) where kept (u >= p), 0 where dropped.
        mask = b.op("dropout", [ones, b.seed_arg()], {"p": p},
                    shape=ones.shape, dtype=x.dtype)
        if not alpha:
            r = mul(b, x, mask)
        else:
            keep = cast(b, binary(b, "ne", mask, 0.0, out_dtype=torch.bool),
                        x.dtype)
            a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) *
                                (1 - p))
            shift = add(b, mul(b, sub(b, keep, 1.0), _SELU_ALPHA * a),
                        _SELU_ALPHA * a * p)
            r = add(b, mul(b, x, mul(b, keep, a)), shift)
    return in_place(b, x, r) if inplace else r


def _feature_dropout_fn(name, unbatched_rank=None, alpha=False):
    """A converter of F.<name>(input, p, training, inplace): unbatched when
    the input's rank is not `unbatched_rank` (None: always batched)."""
    def conv(b, x, p=0.5, training=True, inplace=False):
        unbatched = unbatched_rank is not None and is_tensor(x) and \
            x.ndim != unbatched_rank
        if name == "dropout1d" and is_tensor(x) and x.ndim not in (2, 3):
            raise b.error("dropout1d: Expected 2D or 3D input, but received "
                          "a %dD input" % x.ndim)
        return _dropout_impl(b, x, p, training, inplace, name, feature=True,
                             alpha=alpha, unbatched=unbatched)
    return conv


if hasattr(F, "dropout1d"):
    function(F.dropout1d)(_feature_dropout_fn("dropout1d", 3))
# F.dropout2d in PyTorch 1.13 takes a 3-D input as (N, C, L), never
# unbatched.
function(F.dropout2d)(_feature_dropout_fn("dropout2d"))
function(F.dropout3d)(_feature_dropout_fn("dropout3d", 5))


@function(F.feature_alpha_dropout)
def feature_alpha_dropout(b, x, p=0.5, training=False, inplace=False):
    return _dropout_impl(b, x, p, training, inplace, "feature_alpha_dropout",
                         feature=True, alpha=True)


@function(F.alpha_dropout)
def alpha_dropout(b, x, p=0.5, training=False, inplace=False):
    return _dropout_impl(b, x, p, training, inplace, "alpha_dropout",
                         alpha=True)


@function(torch.feature_dropout)
def _t_feature_dropout(b, x, p, train):
    return _dropout_impl(b, x, p, train, False, "feature_dropout",
                         feature=True)


@function(torch.alpha_dropout)
def _t_alpha_dropout(b, x, p, train):
    return _dropout_impl(b, x, p, train, False, "alpha_dropout", alpha=True)


@function(torch.feature_alpha_dropout)
def _t_feature_alpha_dropout(b, x, p, train):
    return _dropout_impl(b, x, p, train, False, "feature_alpha_dropout",
                         feature=True, alpha=True)


METHODS["dropout"] = dropout


@function(F.embedding)
def embedding(b, input, weight, padding_idx=None, max_norm=None,
              norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise b.error("embedding with max_norm (renormalizes the weight in "
                      "place)")
    input = need_tensor(b, input, "embedding's indices")
    weight = need_tensor(b, weight, "embedding's weight")
    rows = value(weight.shape[0])
    if padding_idx is not None and isinstance(rows, int):
        if not -rows <= padding_idx < rows:
            raise b.error("Padding_idx must be within num_embeddings")
        padding_idx %= rows
    out = b.op("embedding", [weight, input],
               shape=tuple(input.shape) + (weight.shape[1],),
               dtype=weight.dtype)
    return _embedding_grad_options(b, out, input, weight, padding_idx,
                                   scale_grad_by_freq)


def _embedding_grad_options(b, out, input, weight, padding_idx, by_freq):
    """embedding's rows `out` with the gradient PyTorch's embedding
    backward gives their weight rows: none for padding_idx's, divided by
    how often the index occurs with scale_grad_by_freq. The values are
    out's, exactly. Nothing is added in grad mode off (part of the
    program's key)."""
    if padding_idx is None and not by_freq:
        return out
    if not getattr(b, "grad_enabled", True) \
            or not weight.dtype.is_floating_point:
        # (Not by the example weight's requires_grad: a program captured
        # for a weight without it is called with one that has it.)
        return out
    if by_freq:
        # out + (out * s - stop_gradient(out * s)) is out with the gradient
        # s * g (for finite values; s = 1 / count is in (0, 1]).
        flat = reshape(b, input, [-1])
        ones = full(b, flat.shape, 1, weight.dtype)
        counts = scatter_add(b, full(b, [weight.shape[0]], 0, weight.dtype),
                             0, flat, ones)
        per = reshape(b, index_select(b, counts, 0, flat), list(input.shape))
        scaled = mul(b, out, unsqueeze(b, div(b, 1.0, per), -1))
        st = add(b, stop_gradient(b, out),
                 sub(b, scaled, stop_gradient(b, scaled)))
        finite = binary(b, "eq", sub(b, out, out), 0, out_dtype=torch.bool)
        out = where(b, finite, st, out)
    if padding_idx is not None:
        keep = binary(b, "ne", input, padding_idx, out_dtype=torch.bool)
        out = where(b, unsqueeze(b, keep, -1), out, stop_gradient(b, out))
    return out


# ----------------------------------- embedding_bag (issue 16 batch 6 item 4)
#
# The bags' rows are one kt.embedding; each row's bag is its position over
# the fixed bag size (2-D input) or kt.searchsorted of the offsets; the
# bags are reduced by kt.scatter into [B, D]: sum (times per_sample_weights),
# mean (the sum over the count of the bag's rows), max (the first largest
# row of each bag, gathered, so the gradient reaches that row as PyTorch's);
# padding_idx rows count for nothing; an empty bag is zeros.

@function(F.embedding_bag)
def embedding_bag(b, input, weight, offsets=None, max_norm=None,
                  norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    what = "embedding_bag"
    input = need_tensor(b, input, what + "'s input")
    weight = need_tensor(b, weight, what + "'s weight")
    if max_norm is not None:
        raise b.error("embedding_bag with max_norm (renormalizes the weight "
                      "in place)")
    if scale_grad_by_freq:
        raise b.error("embedding_bag with scale_grad_by_freq")
    if mode not in ("sum", "mean", "max"):
        raise b.error("mode has to be one of sum, mean or max")
    if input.dtype not in _INDEX_DTYPES:
        raise b.error("embedding_bag: input must be an int64 or int32 "
                      "tensor, got %s" % input.dtype)
    if weight.ndim != 2:
        raise b.error("embedding_bag: weight has to be a 2D Tensor")
    V = b.static(weight.shape[0], "embedding_bag's number of embeddings")
    D = weight.shape[1]
    if padding_idx is not None:
        padding_idx = b.static(padding_idx, "padding_idx")
        if not -V <= padding_idx < V:
            raise b.error("padding_idx must be within the number of "
                          "embeddings")
        padding_idx %= V
    if per_sample_weights is not None:
        if mode != "sum":
            raise b.error("embedding_bag: per_sample_weights was not None. "
                          "per_sample_weights is only supported for "
                          "mode='sum' (got mode='%s')" % mode)
        per_sample_weights = need_tensor(b, per_sample_weights,
                                         "per_sample_weights")
        if tuple(map(value, per_sample_weights.shape)) != \
                tuple(map(value, input.shape)):
            raise b.error("embedding_bag: per_sample_weights must have the "
                          "shape of input")
        if per_sample_weights.dtype != weight.dtype:
            raise b.error("embedding_bag: per_sample_weights must have the "
                          "dtype of weight")
    valid = None    # rows that count (padding_idx, include_last_offset)
    if input.ndim == 2:
        if offsets is not None:
            raise b.error("if input is 2D, then offsets has to be None, as "
                          "input is treated is a mini-batch of fixed length "
                          "sequences.")
        B = b.static(input.shape[0], "embedding_bag's number of bags")
        n = b.static(input.shape[1], "embedding_bag's bag size")
        T = B * n
        bag = b.constant_tensor(torch.arange(T, dtype=torch.int64) // max(n, 1),
                                1 << 20) if T else full(b, [0], 0, torch.int64)
    elif input.ndim == 1:
        if offsets is None:
            raise b.error("offsets has to be a 1D Tensor but got None")
        offsets = need_tensor(b, offsets, "embedding_bag's offsets")
        if offsets.ndim != 1:
            raise b.error("offsets has to be a 1D Tensor")
        if offsets.dtype not in _INDEX_DTYPES:
            raise b.error("embedding_bag: offsets must be int64 or int32")
        T = b.static(input.shape[0], "embedding_bag's input length")
        nb = b.static(offsets.shape[0], "embedding_bag's number of offsets")
        B = nb - 1 if include_last_offset else nb
        if B < 0:
            raise b.error("embedding_bag: include_last_offset needs at "
                          "least one offset")
        offsets = _check_bag_offsets(b, cast(b, offsets, torch.int64), T)
        if B == 0:
            # No bags (PyTorch: a [0, D] result; the rows are not read),
            # made from the checked offsets so that their checks stay.
            none = unsqueeze(b, slice_dim(b, offsets, 0, 0, 0, 1), 1)
            return copy_of(cast(b, expand(b, none, [0, D]), weight.dtype))
        starts = slice_dim(b, offsets, 0, 0, B, 1) if B != nb else offsets
        # Each row's bag: the number of bag starts at or before it, less 1
        # (offsets[0] is 0, checked above, so every row has a bag).
        bag = sub(b, searchsorted(b, starts, arange(b, T), right=True), 1)
        if include_last_offset:
            # The last offset ends the last bag: rows from it on are in no
            # bag (PyTorch's sum and mean leave them out).
            valid = binary(b, "lt", arange(b, T), select(b, offsets, 0, -1),
                           out_dtype=torch.bool)
    else:
        raise b.error("input has to be 1D or 2D Tensor, but got Tensor of "
                      "dimension %d" % input.ndim)
    flat = reshape(b, input, [T])
    rows = embedding(b, flat, weight)                       # [T, D]
    keep = None
    if padding_idx is not None:
        keep = binary(b, "ne", flat, padding_idx, out_dtype=torch.bool)
        valid = keep if valid is None else binary(b, "logical_and", valid,
                                                  keep, out_dtype=torch.bool)
    if per_sample_weights is not None:
        rows = mul(b, rows, unsqueeze(b, reshape(b, per_sample_weights, [T]),
                                      1))
    index = expand(b, unsqueeze(b, bag, 1), [T, D])
    zeros = full(b, [B, D], 0, weight.dtype)
    if mode in ("sum", "mean"):
        src = rows if valid is None else where(
            b, unsqueeze(b, valid, 1), rows, 0)
        total = scatter_op(b, zeros, 0, index, src, "sum", what=what)
        if mode == "sum":
            return copy_of(total)
        # PyTorch 1.13 counts the rows past include_last_offset's end in
        # the last bag's size (only padding_idx rows are not counted), so
        # its mean divides that bag's sum by them too.
        ones = full(b, [T], 1, weight.dtype) if keep is None else \
            cast(b, keep, weight.dtype)
        count = scatter_op(b, full(b, [B], 0, weight.dtype), 0, bag, ones,
                           "sum", what=what)
        count = binary(b, "maximum", count, 1)
        return copy_of(div(b, total, unsqueeze(b, count, 1)))
    # max: the bag's largest value per column (scatter amax), then the
    # first row reaching it, gathered (its gradient goes to that row).
    low = float("-inf")
    src = rows if valid is None else where(b, unsqueeze(b, valid, 1), rows,
                                           low)
    top = scatter_op(b, full(b, [B, D], low, weight.dtype), 0, index, src,
                     "amax", what=what)
    hit = binary(b, "eq", src, index_select(b, top, 0, bag),
                 out_dtype=torch.bool)
    if valid is not None:
        hit = binary(b, "logical_and", hit, unsqueeze(b, valid, 1))
    pos = expand(b, unsqueeze(b, arange(b, T), 1), [T, D])
    first = scatter_op(b, full(b, [B, D], T, torch.int64), 0, index,
                       where(b, hit, pos, T), "amin", what=what)
    padded = cat(b, [rows, full(b, [1, D], 0, weight.dtype)], 0)  # row T: 0
    return copy_of(gather(b, padded, 0, first))


def _check_bag_offsets(b, offsets, T):
    """embedding_bag's offsets (i64, 1-D, of static length) after PyTorch's
    checks of their values, made when the program runs (kt.check): the
    first is 0, the last is at most the input's length T, and (fbgemm's
    check in PyTorch's sum and mean; its max mode reads out of bounds) they
    do not decrease."""
    n = value(offsets.shape[0])
    if n == 0:
        return offsets
    offsets = check_values(
        b, offsets, binary(b, "eq", select(b, offsets, 0, 0), 0,
                           out_dtype=torch.bool),
        "embedding_bag: offsets[0] has to be 0, i.e., the first sequence "
        "in the mini-batch has to start from position 0")
    offsets = check_values(
        b, offsets, binary(b, "le", select(b, offsets, 0, -1), T,
                           out_dtype=torch.bool),
        "embedding_bag: offsets[-1] can not be greater than input's "
        "length %d" % T)
    if n > 1:
        offsets = check_values(
            b, offsets, binary(b, "ge", slice_dim(b, offsets, 0, 1, n, 1),
                               slice_dim(b, offsets, 0, 0, n - 1, 1),
                               out_dtype=torch.bool),
            "embedding_bag: offsets have to be non-decreasing (each bag "
            "starts at or after the previous one)")
    return offsets


@module(nn.EmbeddingBag)
def _m_embedding_bag(b, m, path, x, offsets=None, per_sample_weights=None):
    return embedding_bag(b, x, b.module_tensor(path, "weight"), offsets,
                         m.max_norm, m.norm_type, m.scale_grad_by_freq,
                         m.mode, m.sparse, per_sample_weights,
                         m.include_last_offset, m.padding_idx)


@function(F.pad, torch._C._nn.pad if hasattr(torch._C._nn, "pad") else None)
def pad(b, x, pad, mode="constant", value=None):
    x = need_tensor(b, x, "pad")
    ps = int_list(b, pad, "a pad amount")
    if len(ps) % 2:
        raise b.error("Padding length must be divisible by 2")
    if len(ps) > 2 * x.ndim:
        raise b.error("Padding length too large")
    if mode != "constant":
        if mode not in ("reflect", "replicate", "circular"):
            raise b.error("Unrecognised padding mode %s" % mode)
        if value is not None and b.static(value, "a pad value") != 0:
            raise b.error('Padding mode "%s" doesn\'t take in value argument'
                          % mode)
        return _pad_mode(b, x, ps, mode)
    shape = list(x.shape)
    for i in range(len(ps) // 2):
        d = x.ndim - 1 - i
        lo, hi = ps[2 * i], ps[2 * i + 1]
        if lo < 0 or hi < 0:
            # Negative amounts crop (PyTorch narrows first): what is kept
            # may not be less than nothing.
            kept = x.shape[d] + min(lo, 0) + min(hi, 0)
            if value_of(kept) < 0:
                raise b.error(
                    "F.pad with %s crops %d elements from dim %d of size %d "
                    "(PyTorch: start + length exceeds dimension size)"
                    % (ps, -min(lo, 0) - min(hi, 0), d,
                       value_of(x.shape[d])))
            if isinstance(kept, Sym) and hasattr(b, "check_sizes"):
                b.check_sizes(kept, 0, "F.pad with %s crops more than dim "
                              "%d of the input of shape %%s holds (PyTorch: "
                              "start + length exceeds dimension size)"
                              % (ps, d), x.shape)
        shape[d] = shape[d] + lo + hi
    v = 0.0 if value is None else float(b.static(value, "a pad value"))
    return b.op("pad", [x], {"pad": ps, "value": v}, shape=shape,
                dtype=x.dtype)


# F.pad's reflect / replicate / circular modes (PyTorch's reflection_pad1d/
# 2d/3d, replication_pad1d/2d/3d and _pad_circular) as one kt.index_select
# per padded dim at the source positions, computed here: reflect -t / t /
# 2(n-1)-t, replicate clamp(t, 0, n-1) for t = output position - left pad
# (negative amounts crop), circular wraps around the dim cropped first, as
# PyTorch's _pad_circular copies from the cropped middle. The gradient is
# kt.index_select's, a scatter-add: each reflected, replicated or wrapped
# position summed back into its source, as PyTorch's *_pad*_backward. (A
# slice/flip/concat form was 3-6x slower on the CPU: two full copies per
# dim.)
def _pad_mode(b, x, ps, mode):
    k = len(ps) // 2
    if k not in (1, 2, 3) or x.ndim not in (k + 1, k + 2):
        raise b.error("Only 2D, 3D, 4D, 5D padding with non-constant padding "
                      "are supported for now (F.pad mode %r with %d amounts "
                      "of a rank %d tensor)" % (mode, len(ps), x.ndim))
    if mode == "circular" and x.ndim != k + 2:
        raise b.error("Invalid padding size, expected %d but got %d (circular "
                      "padding needs batch and channel dims)"
                      % (2 * (x.ndim - 2), len(ps)))
    if mode != "circular" and not (x.dtype in (torch.float32, torch.float64)):
        # PyTorch 1.13's CPU kernels: float and double only.
        raise b.error('"%s_pad%dd" not implemented for %s' % (
            "reflection" if mode == "reflect" else "replication", k, x.dtype))
    sizes = [b.static(n, "a padded dim") for n in x.shape]
    if mode != "circular":
        # PyTorch: a possibly empty batch dim, every other dim non-empty (the
        # first dim of an unbatched 1-D/2-D reflection pad may be empty).
        first = 1 if x.ndim == k + 2 or (mode == "reflect" and k < 3) else 0
        if any(n == 0 for n in sizes[first:]):
            raise b.error("%s padding of an input of shape %s: only the batch "
                          "dim may be empty" % (mode, sizes))
    outs = []
    for i in range(k):
        d = x.ndim - 1 - i
        lo, hi, n = ps[2 * i], ps[2 * i + 1], sizes[d]
        if mode == "reflect" and not (lo < n and hi < n):
            raise b.error("reflect padding (%d, %d) of dim %d must be smaller "
                          "than its size %d" % (lo, hi, d, n))
        if mode == "circular":
            m = n - max(-lo, 0) - max(-hi, 0)
            if m < 0:
                raise b.error("Negative padding value is resulting in an "
                              "empty dimension (circular padding (%d, %d) "
                              "of dim %d of size %d)" % (lo, hi, d, n))
            if max(lo, 0) > m or max(hi, 0) > m:
                raise b.error("Padding value causes wrapping around more than "
                              "once (circular padding (%d, %d) of dim %d of "
                              "size %d)" % (lo, hi, d, n))
        outs.append(n + lo + hi)
    if any(o < 0 for o in outs) or all(o < 1 for o in outs) and \
            mode != "circular":
        raise b.error("%s padding %s: the input of shape %s is too small "
                      "(output sizes %s)" % (mode, ps, sizes, outs[::-1]))
    for i in range(k):
        d = x.ndim - 1 - i
        idx = _pad_source(mode, sizes[d], ps[2 * i], ps[2 * i + 1])
        if not torch.equal(idx, torch.arange(sizes[d])):
            x = index_select(b, x, d, b.constant_tensor(idx, 1 << 20))
    return x


def _pad_source(mode, n, lo, hi):
    """The input position of each output position of a padded dim."""
    if mode == "circular":
        start, m = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
        j = torch.arange(m + max(lo, 0) + max(hi, 0))
        return start + torch.remainder(j - max(lo, 0), max(m, 1))
    t = torch.arange(n + lo + hi) - lo
    if mode == "replicate":
        return torch.clamp(t, 0, n - 1)
    return torch.where(t < 0, -t, torch.where(t < n, t, 2 * (n - 1) - t))


def _m_pad(mode, k):
    def conv(b, m, path, x):
        p = list(m.padding)
        if mode == "constant":
            return pad(b, x, p, "constant", m.value)
        return pad(b, x, p, mode)
    return conv


for _k, _n in ((1, "1d"), (2, "2d"), (3, "3d")):
    MODULES[getattr(nn, "ReflectionPad" + _n)] = _m_pad("reflect", _k)
    MODULES[getattr(nn, "ReplicationPad" + _n)] = _m_pad("replicate", _k)
    MODULES[getattr(nn, "ConstantPad" + _n)] = _m_pad("constant", _k)
    if hasattr(nn, "CircularPad" + _n):
        MODULES[getattr(nn, "CircularPad" + _n)] = _m_pad("circular", _k)
MODULES[nn.ZeroPad2d] = _m_pad("constant", 2)


# F.interpolate / nn.Upsample (PyTorch 1.13's CPU kernels,
# aten/src/ATen/native/cpu/UpSampleKernel.cpp): a separable decomposition,
# one spatial dim at a time from the last, into kt.index_select of the input
# at the source indices of each tap (computed here, in the kernel's
# arithmetic: float for float/bfloat16/uint8 inputs, double for double) times
# the tap's weights (a constant broadcast along the dim), summed in the
# kernel's order. Its gradient is kt.index_select's (the gradient scattered
# back with a sum into the source positions) times the weights: linear, no
# dense interpolation matrix.
_INTERP_MODES = ("nearest", "nearest-exact", "linear", "bilinear",
                 "trilinear", "bicubic")
_INTERP_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _interp_scale(ct, n_in, n_out, align_corners, scale):
    # area_pixel_compute_scale<ct>
    if align_corners:
        if n_out > 1:
            return torch.tensor(n_in - 1, dtype=ct) / (n_out - 1)
        return torch.tensor(0, dtype=ct)
    if scale is not None and scale > 0:
        return torch.tensor(1.0 / scale, dtype=ct)
    return torch.tensor(n_in, dtype=ct) / n_out


def _interp_source(ct, scale, n_out, align_corners, cubic):
    # area_pixel_compute_source_index<ct> for every output index
    i = torch.arange(n_out, dtype=ct)
    if align_corners:
        return scale * i
    src = scale * (i + torch.tensor(0.5, dtype=ct)) - torch.tensor(0.5, dtype=ct)
    if not cubic:
        src = torch.where(src < 0, torch.zeros((), dtype=ct), src)
    return src


def _floorf(x):
    return torch.floor(x.float()).long()


def _interp_taps(mode, dtype, n_in, n_out, align_corners, scale):
    """[(source indices, weights or None)] of one dim, PyTorch's formulas."""
    ct = torch.float64 if dtype == torch.float64 else torch.float32
    if mode in ("nearest", "nearest-exact"):
        sc = _interp_scale(ct, n_in, n_out, False, scale)
        if mode == "nearest":
            idx = _floorf(sc * torch.arange(n_out, dtype=ct))
        else:
            idx = _floorf(_interp_source(ct, sc, n_out, False, False) + 0.5)
        return [(torch.clamp(idx, max=n_in - 1), None)]
    sc = _interp_scale(ct, n_in, n_out, align_corners, scale)
    if mode == "bicubic":
        real = _interp_source(ct, sc, n_out, align_corners, True)
        i0 = _floorf(real)
        t = (real - i0.to(ct)).float() if ct == torch.float32 else real - i0
        A = torch.tensor(-0.75, dtype=t.dtype)

        def conv1(x):
            return ((A + 2) * x - (A + 3)) * x * x + 1

        def conv2(x):
            return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
        one = torch.tensor(1.0, dtype=t.dtype)
        ws = [conv2(t + one), conv1(t), conv1(one - t), conv2((one - t) + one)]
        return [(torch.clamp(i0 - 1 + j, 0, n_in - 1), ws[j]) for j in range(4)]
    # linear: compute_source_index_and_lambda
    if n_out == n_in:
        i = torch.arange(n_out)
        return [(i, torch.ones(n_out, dtype=ct)), (i, torch.zeros(n_out, dtype=ct))]
    real = _interp_source(ct, sc, n_out, align_corners, False)
    i0 = torch.clamp(_floorf(real), max=n_in - 1)
    l1 = torch.clamp(real - i0.to(ct), 0, 1)
    i1 = i0 + (i0 < n_in - 1).long()
    return [(i0, 1 - l1), (i1, l1)]


def _interp_dim(b, x, d, taps):
    rank = x.ndim
    out = None
    for idx, w in taps:
        if w is None and torch.equal(idx, torch.arange(value(x.shape[d]))):
            return x  # nearest at the same size: the identity
        # One entry per output position of the dim: up to 2^20.
        sel = index_select(b, x, d, b.constant_tensor(idx, 1 << 20))
        if w is not None:
            wc = b.constant_tensor(w.to(x.dtype).reshape(
                [-1] + [1] * (rank - 1 - d)), 1 << 20)
            sel = binary(b, "mul", sel, wc)
        out = sel if out is None else binary(b, "add", out, sel)
    return out


def _upsample(b, x, mode, output_size, scales, align_corners, what):
    k = x.ndim - 2
    if mode in ("nearest", "nearest-exact"):
        ok = ([torch.float32, torch.float64, torch.uint8]
              + ([torch.bfloat16] if mode == "nearest" else []))
    else:
        ok = [torch.float32, torch.float64, torch.bfloat16]
    if x.dtype not in ok:
        raise b.error("%s: mode %r not implemented for %s (PyTorch 1.13 on "
                      "CPU: %s)" % (what, mode, x.dtype,
                                    ", ".join(str(t) for t in ok)))
    # PyTorch's check of the sizes, on the example's sizes before any is
    # specialized (an output size of 0 fails whatever the input's sizes).
    sizes = [value(n) for n in x.shape]
    if any(n == 0 for n in sizes[1:]) or any(o <= 0 for o in output_size):
        raise b.error("%s: input and output sizes should be greater than 0 "
                      "(only the batch dim may be empty), but got input %s "
                      "and output %s" % (what, sizes, list(output_size)))
    sizes = [b.static(n, "an interpolated dim") for n in x.shape]
    dtype = x.dtype
    if dtype == torch.bfloat16 and mode not in ("nearest", "nearest-exact"):
        # Weights and sums in float32, rounded once (PyTorch 1.13's bfloat16
        # kernel rounds the weights and every product and sum to bfloat16:
        # up to ~0.1 from its own float32 result on values of size 1).
        x = cast(b, x, torch.float32)
    for i in range(k - 1, -1, -1):
        d = 2 + i
        sc = None if scales is None else scales[i]
        x = _interp_dim(b, x, d, _interp_taps(mode, x.dtype, sizes[d],
                                              output_size[i], align_corners,
                                              sc))
    return cast(b, x, dtype)


@function(F.interpolate)
def interpolate(b, x, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None,
                antialias=False):
    x = need_tensor(b, x, "interpolate")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise b.error("align_corners option can only be set with the "
                          "interpolating modes: linear | bilinear | bicubic "
                          "| trilinear")
    elif align_corners is None:
        align_corners = False
    k = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise b.error("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise b.error("either size or scale_factor should be defined")
    if mode not in _INTERP_MODES + ("area",):
        raise b.error("interpolate mode %r: Kiln converts %s and area"
                      % (mode, ", ".join(_INTERP_MODES)))
    if mode == "area" and x.ndim != 4:
        raise b.error("interpolate mode 'area' of a rank %d input (Kiln has "
                      "the 2-D adaptive average pool only)" % x.ndim)
    want = _INTERP_RANK.get(mode)
    if k < 1 or k > 3 or want is not None and x.ndim != want:
        raise b.error("interpolate mode %r expects a %s input, got rank %d"
                      % (mode, "%dD" % want if want else "3D, 4D or 5D",
                         x.ndim))
    if antialias:
        raise b.error("interpolate with antialias=True is not supported")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            out = int_list(b, size, "an interpolate size")
            if len(out) != k:
                raise b.error("Input and output must have the same number of "
                              "spatial dimensions, but got %d and %d"
                              % (k, len(out)))
        else:
            out = [b.static(size, "an interpolate size")] * k
        if recompute_scale_factor:
            raise b.error("recompute_scale_factor is not meaningful with an "
                          "explicit size.")
    else:
        if isinstance(scale_factor, (list, tuple)):
            scales = [float(b.static(f, "a scale factor"))
                      for f in scale_factor]
            if len(scales) != k:
                raise b.error("Input and scale_factor must have the same "
                              "number of spatial dimensions, but got %d and "
                              "%d" % (k, len(scales)))
        else:
            scales = [float(b.static(scale_factor, "a scale factor"))] * k
        n = [b.static(x.shape[2 + i], "an interpolated dim")
             for i in range(k)]
        if recompute_scale_factor or mode == "area":
            out = [int(math.floor(float(n[i]) * scales[i])) for i in range(k)]
            scales = None
        else:
            out = [int(n[i] * scales[i]) for i in range(k)]
    if mode == "area":
        # PyTorch: adaptive_avg_pool2d to the output size
        return adaptive_avg_pool2d(b, x, out)
    return _upsample(b, x, mode, out, scales, align_corners, "interpolate")


@function(_opt(F, "upsample"))
def _upsample_fn(b, x, size=None, scale_factor=None, mode="nearest",
                 align_corners=None):
    return interpolate(b, x, size, scale_factor, mode, align_corners)


@function(_opt(F, "upsample_nearest"))
def _upsample_nearest(b, x, size=None, scale_factor=None):
    return interpolate(b, x, size, scale_factor, "nearest")


@function(_opt(F, "upsample_bilinear"))
def _upsample_bilinear(b, x, size=None, scale_factor=None):
    return interpolate(b, x, size, scale_factor, "bilinear", True)


# The ATen ops themselves (torch._C._nn.*, as traced or exported graphs
# call them): reflection_pad1d/2d/3d, replication_pad1d/2d/3d and the
# upsample_* ops, both overloads (`.vec`: output_size or scale_factors;
# the other: output_size with optional per-dim scales for the kernel).
def _aten_pad(mode, k):
    def conv(b, x, padding):
        x = need_tensor(b, x, "%s_pad%dd" % (mode, k))
        ps = int_list(b, padding, "a pad amount")
        if len(ps) != 2 * k:
            raise b.error("%s_pad%dd expects %d padding amounts, got %d"
                          % ("reflection" if mode == "reflect" else
                             "replication", k, 2 * k, len(ps)))
        return _pad_mode(b, x, ps, mode)
    return conv


def _aten_upsample(mode, k, name):
    what = "torch._C._nn." + name

    def conv(b, x, output_size, *rest):
        x = need_tensor(b, x, what)
        if x.ndim != k + 2:
            raise b.error("%s expects a %dD input, got rank %d"
                          % (what, k + 2, x.ndim))
        align_corners = None
        if mode != "nearest":
            if not rest:
                raise b.error("%s needs align_corners" % what)
            align_corners, rest = bool(rest[0]), rest[1:]
        n = [b.static(d, "an interpolated dim") for d in x.shape[2:]]
        if len(rest) == 1 and (rest[0] is None or
                               isinstance(rest[0], (list, tuple))):
            scales = None if rest[0] is None else [
                float(b.static(f, "a scale factor")) for f in rest[0]]
            if (output_size is None) == (scales is None):
                raise b.error("Must specify exactly one of output_size and "
                              "scale_factors")
            if scales is not None:
                if len(scales) != k:
                    raise b.error("%s expects %d scale factors, got %d"
                                  % (what, k, len(scales)))
                out = [int(n[i] * scales[i]) for i in range(k)]
            else:
                out = int_list(b, output_size, "an output size")
        else:
            if output_size is None:
                raise b.error("%s needs an output_size" % what)
            out = int_list(b, output_size, "an output size")
            sc = list(rest) + [None] * (k - len(rest))
            if len(sc) != k:
                raise b.error("%s takes %d scales" % (what, k))
            scales = None if all(v is None for v in sc) else [
                None if v is None else float(v) for v in sc]
        if len(out) != k:
            raise b.error("%s expects %d output sizes, got %d"
                          % (what, k, len(out)))
        m = {"linear": "linear" if k == 1 else "trilinear"}.get(mode, mode)
        return _upsample(b, x, m, out, scales, align_corners, what)
    return conv


for _k in (1, 2, 3):
    for _mode, _aten in (("reflect", "reflection"), ("replicate", "replication")):
        _t = getattr(torch._C._nn, "%s_pad%dd" % (_aten, _k), None)
        if _t is not None:
            FUNCTIONS[_t] = _aten_pad(_mode, _k)
    _t = getattr(torch._C._nn, "upsample_nearest%dd" % _k, None)
    if _t is not None:
        FUNCTIONS[_t] = _aten_upsample("nearest", _k,
                                       "upsample_nearest%dd" % _k)
for _name, _mode, _k in (("upsample_linear1d", "linear", 1),
                         ("upsample_bilinear2d", "bilinear", 2),
                         ("upsample_trilinear3d", "linear", 3),
                         ("upsample_bicubic2d", "bicubic", 2)):
    _t = getattr(torch._C._nn, _name, None)
    if _t is not None:
        FUNCTIONS[_t] = _aten_upsample(_mode, _k, _name)


@module(nn.Upsample)
def _m_upsample(b, m, path, x):
    return interpolate(b, x, m.size, m.scale_factor, m.mode,
                       m.align_corners,
                       getattr(m, "recompute_scale_factor", None))


# pixel_shuffle / pixel_unshuffle / channel_shuffle (PyTorch's
# aten/src/ATen/native/PixelShuffle.cpp and ChannelShuffle.cpp): kt.reshape
# + kt.permute + kt.reshape, a new tensor (not a view), as PyTorch's
# reference decompositions; any dtype, leading batch dims, empty batches.
def _shuffle_factor(b, f, what, name):
    f = b.static(f, "a %s" % name)
    if not isinstance(f, int) or f <= 0:
        raise b.error("%s expects a positive %s, but got %s" % (what, name, f))
    return f


def _pixel_shuffle(b, x, r, down):
    what = "pixel_unshuffle" if down else "pixel_shuffle"
    x = need_tensor(b, x, what)
    r = _shuffle_factor(b, r, what,
                        "downscale_factor" if down else "upscale_factor")
    if x.ndim < 3:
        raise b.error("%s expects input to have at least 3 dimensions, but "
                      "got input with %d dimension(s)" % (what, x.ndim))
    lead = list(x.shape[:-3])
    c, h, w = [b.static(n, "a %s dim" % what) for n in x.shape[-3:]]
    n = len(lead)
    if down:
        if h % r or w % r:
            raise b.error("pixel_unshuffle expects height and width to be "
                          "divisible by downscale_factor, but got %dx%d and "
                          "%d" % (h, w, r))
        t = reshape(b, x, lead + [c, h // r, r, w // r, r])
        t = permute(b, t, list(range(n)) + [n + d for d in (0, 2, 4, 1, 3)])
        out = lead + [c * r * r, h // r, w // r]
    else:
        if c % (r * r):
            raise b.error("pixel_shuffle expects its input's 'channel' "
                          "dimension to be divisible by the square of "
                          "upscale_factor, but input.size(-3)=%d is not "
                          "divisible by %d" % (c, r * r))
        t = reshape(b, x, lead + [c // (r * r), r, r, h, w])
        t = permute(b, t, list(range(n)) + [n + d for d in (0, 3, 1, 4, 2)])
        out = lead + [c // (r * r), h * r, w * r]
    return copy_of(reshape(b, t, out))


@both("pixel_shuffle")
def pixel_shuffle(b, x, upscale_factor):
    return _pixel_shuffle(b, x, upscale_factor, False)


@both("pixel_unshuffle")
def pixel_unshuffle(b, x, downscale_factor):
    return _pixel_shuffle(b, x, downscale_factor, True)


@both("channel_shuffle", "native_channel_shuffle")
def channel_shuffle(b, x, groups):
    x = need_tensor(b, x, "channel_shuffle")
    g = b.static(groups, "channel_shuffle groups")
    if not isinstance(g, int) or g <= 0:
        raise b.error("Number of groups to divide channels in must be "
                      "positive. Value of groups:%s" % g)
    if x.ndim <= 2:
        raise b.error("channel_shuffle expects input with > 2 dims, but got "
                      "input with sizes %s" % [value(d) for d in x.shape])
    c = b.static(x.shape[1], "the channel dim of channel_shuffle")
    if c % g:
        raise b.error("Number of channels must be divisible by groups. Got "
                      "%d channels and %d groups." % (c, g))
    rest = list(x.shape[2:])
    t = reshape(b, x, [x.shape[0], g, c // g] + rest)
    t = permute(b, t, [0, 2, 1] + list(range(3, x.ndim + 1)))
    return copy_of(reshape(b, t, list(x.shape)))


@module(nn.PixelShuffle)
def _m_pixel_shuffle(b, m, path, x):
    return pixel_shuffle(b, x, m.upscale_factor)


@module(nn.PixelUnshuffle)
def _m_pixel_unshuffle(b, m, path, x):
    return pixel_unshuffle(b, x, m.downscale_factor)


if hasattr(nn, "ChannelShuffle"):
    module(nn.ChannelShuffle)(
        lambda b, m, path, x: channel_shuffle(b, x, m.groups))


# ------------------------------------------------------ in-place methods


def _inplace_binary(conv):
    def f(b, x, y, *args, **kwargs):
        return in_place(b, x, conv(b, x, y, *args, **kwargs))
    return f


for _m, _c in (("add_", add), ("sub_", sub), ("mul_", mul), ("div_", div),
               ("pow_", pow_), ("masked_fill_", masked_fill),
               ("clamp_", clamp), ("clamp_min_", clamp_min),
               ("clamp_max_", clamp_max), ("fmod_", fmod),
               ("remainder_", remainder), ("atan2_", atan2),
               ("bitwise_and_", FUNCTIONS[operator.and_]),
               ("bitwise_or_", FUNCTIONS[operator.or_]),
               ("bitwise_xor_", FUNCTIONS[operator.xor]),
               ("logical_and_", FUNCTIONS[torch.logical_and]),
               ("logical_or_", FUNCTIONS[torch.logical_or]),
               ("logical_xor_", FUNCTIONS[torch.logical_xor])):
    METHODS[_m] = _inplace_binary(_c)
METHODS["bitwise_not_"] = lambda b, x: in_place(b, x, invert(b, x))
METHODS["addcmul_"] = lambda b, x, t1, t2, *, value=1: in_place(
    b, x, addcmul(b, x, t1, t2, value=value))
METHODS["addcdiv_"] = lambda b, x, t1, t2, *, value=1: in_place(
    b, x, addcdiv(b, x, t1, t2, value=value))

for _op, _c in ((operator.iadd, add), (operator.isub, sub),
                (operator.imul, mul), (operator.itruediv, div),
                (operator.iand, FUNCTIONS[operator.and_]),
                (operator.ior, FUNCTIONS[operator.or_]),
                (operator.ixor, FUNCTIONS[operator.xor])):
    def _make(c, op):
        def f(b, x, y):
            if not is_tensor(x):
                return python_call(b, op, (x, y), {})
            return in_place(b, x, c(b, x, y))
        return f
    FUNCTIONS[_op] = _make(_c, _op)


@method("copy_")
def copy_(b, x, src, non_blocking=False):
    src = operand(b, src, x.dtype) if not is_tensor(src) else cast(
        b, src, x.dtype)
    shape = broadcast(b, x.shape, src.shape)
    if [value(d) for d in shape] != [value(d) for d in x.shape]:
        raise b.error("copy_: the source does not broadcast to the tensor")
    if [value(d) for d in src.shape] != [value(d) for d in x.shape]:
        src = expand(b, src, x.shape)
    return overwrite(b, x, src)


@method("zero_")
def zero_(b, x):
    return overwrite(b, x, full(b, x.shape, 0, x.dtype))


@method("fill_")
def fill_(b, x, v):
    if is_tensor(v):
        return overwrite(b, x, expand(b, cast(b, v, x.dtype), x.shape))
    return overwrite(b, x, full(b, x.shape, v, x.dtype))


def overwrite(b, x, new):
    """x.zero_(), x.fill_(v), x.copy_(src): `new` (which does not read x)
    written into x. In a capture with grad enabled, a kt.where on an
    all-true mask keeps x in the dataflow, as eager's in-place ops keep the
    tensor's history: x then still requires grad and what it was computed
    from gets zero gradients (eager's ZeroBackward / CopyBackwards), not
    None (`v = a @ a.t(); v.zero_(); loss(v).backward()` left a.grad None,
    and a result computed only from v did not require grad)."""
    x = need_tensor(b, x, "an in-place op")
    if getattr(b, "grad_enabled", False) and x.dtype.is_floating_point \
            and not x.scalar:
        yes = full(b, x.shape, True, torch.bool)
        new = where(b, yes, cast(b, new, x.dtype), x)
    return in_place(b, x, new)


for _m in ("exp_", "log_", "sqrt_", "tanh_", "sigmoid_", "neg_", "abs_",
           "floor_", "ceil_", "round_"):
    def _make(n):
        def f(b, x):
            return in_place(b, x, METHODS[n](b, x))
        return f
    METHODS[_m] = _make(_m[:-1])


# ------------------------------------------------------------- modules


@module(nn.Conv2d)
def _m_conv2d(b, m, path, x):
    x, padding = _conv_padding_mode(b, m, x)
    return conv2d(b, x, b.module_tensor(path, "weight"),
                  b.module_tensor(path, "bias"), m.stride, padding,
                  m.dilation, m.groups)


def _conv_padding_mode(b, m, x):
    # nn.ConvNd._conv_forward: a padding_mode other than "zeros" pads the
    # input with F.pad(mode=padding_mode) and convolves without padding.
    if m.padding_mode == "zeros":
        return x, m.padding
    return (pad(b, x, list(m._reversed_padding_repeated_twice),
                m.padding_mode), 0)


@module(nn.ConvTranspose2d)
def _m_conv_transpose2d(b, m, path, x, output_size=None):
    if m.padding_mode != "zeros":
        raise b.error("ConvTranspose2d with padding_mode=%r" % m.padding_mode)
    output_padding = m.output_padding
    if output_size is not None:
        output_padding = _conv_transpose_output_padding(
            b, need_tensor(b, x, "ConvTranspose2d"), output_size,
            list(m.stride), list(m.padding), list(m.kernel_size),
            list(m.dilation))
    return conv_transpose2d(b, x, b.module_tensor(path, "weight"),
                            b.module_tensor(path, "bias"), m.stride,
                            m.padding, output_padding, m.groups, m.dilation)


@module(nn.ConvTranspose1d)
def _m_conv_transpose1d(b, m, path, x, output_size=None):
    if m.padding_mode != "zeros":
        raise b.error("Only 'zeros' padding mode is supported for "
                      "ConvTranspose1d")
    output_padding = m.output_padding
    if output_size is not None:
        x = need_tensor(b, x, "ConvTranspose1d")
        size = int_list(b, output_size, "an output_size")
        if len(size) not in (1, x.ndim):
            raise b.error("ConvTranspose1d: output_size must have 1 or %d "
                          "entries, got %d" % (x.ndim, len(size)))
        n = b.static(x.shape[-1], "an input size with output_size")
        lo = ((n - 1) * m.stride[0] - 2 * m.padding[0]
              + m.dilation[0] * (m.kernel_size[0] - 1) + 1)
        hi = lo + m.stride[0] - 1
        if not lo <= size[-1] <= hi:
            raise b.error("ConvTranspose1d: requested output size %d is not "
                          "in the valid range [%d, %d]" % (size[-1], lo, hi))
        output_padding = [size[-1] - lo]
    return conv_transpose1d(b, x, b.module_tensor(path, "weight"),
                            b.module_tensor(path, "bias"), m.stride,
                            m.padding, output_padding, m.groups, m.dilation)


@module(nn.Conv1d)
def _m_conv1d(b, m, path, x):
    x, padding = _conv_padding_mode(b, m, x)
    return conv1d(b, x, b.module_tensor(path, "weight"),
                  b.module_tensor(path, "bias"), m.stride, padding,
                  m.dilation, m.groups)


@module(nn.Linear)
def _m_linear(b, m, path, x):
    return linear(b, x, b.module_tensor(path, "weight"),
                  b.module_tensor(path, "bias"))


@module(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
def _m_batch_norm(b, m, path, x):
    """nn.BatchNorm*d.forward: batch statistics in training mode (or
    without running statistics), which then updates the running
    statistics and num_batches_tracked in place when it tracks them."""
    # (m._buffers: reading a buffer attribute while tracing makes a node.)
    has_stats = m._buffers.get("running_mean") is not None and \
        m._buffers.get("running_var") is not None
    training = m.training or not has_stats
    track = m.training and m.track_running_stats and has_stats
    stats = has_stats and (not m.training or m.track_running_stats)
    return batch_norm(
        b, x, b.module_tensor(path, "running_mean") if stats else None,
        b.module_tensor(path, "running_var") if stats else None,
        b.module_tensor(path, "weight") if m.affine else None,
        b.module_tensor(path, "bias") if m.affine else None, training,
        m.momentum, m.eps,
        num_batches_tracked=b.module_tensor(path, "num_batches_tracked")
        if track and m._buffers.get("num_batches_tracked") is not None
        else None)


@module(nn.LayerNorm)
def _m_layer_norm(b, m, path, x):
    affine = getattr(m, "elementwise_affine", True)
    return layer_norm(b, x, m.normalized_shape,
                      b.module_tensor(path, "weight") if affine else None,
                      b.module_tensor(path, "bias") if affine else None,
                      m.eps)


@module(nn.ReLU)
def _m_relu(b, m, path, x):
    return relu(b, x, inplace=m.inplace)


@module(nn.ReLU6, nn.Hardtanh)
def _m_hardtanh(b, m, path, x):
    return hardtanh(b, x, m.min_val, m.max_val, m.inplace)


@module(nn.GELU)
def _m_gelu(b, m, path, x):
    return gelu(b, x, getattr(m, "approximate", "none"))


@module(nn.SiLU)
def _m_silu(b, m, path, x):
    return silu(b, x, m.inplace)


@module(nn.Sigmoid)
def _m_sigmoid(b, m, path, x):
    return unary(b, "sigmoid", x, float_only=True)


@module(nn.Tanh)
def _m_tanh(b, m, path, x):
    return unary(b, "tanh", x, float_only=True)


@module(nn.LeakyReLU)
def _m_leaky_relu(b, m, path, x):
    return leaky_relu(b, x, m.negative_slope, m.inplace)


@module(nn.Hardswish)
def _m_hardswish(b, m, path, x):
    return hardswish(b, x, m.inplace)


@module(nn.Hardsigmoid)
def _m_hardsigmoid(b, m, path, x):
    return hardsigmoid(b, x, m.inplace)


@module(nn.Softmax)
def _m_softmax(b, m, path, x):
    return FUNCTIONS[F.softmax](b, x, m.dim)


@module(nn.LogSoftmax)
def _m_log_softmax(b, m, path, x):
    return FUNCTIONS[F.log_softmax](b, x, m.dim)


@module(nn.Identity)
def _m_identity(b, m, path, x, *args, **kwargs):
    return x


@module(nn.Flatten)
def _m_flatten(b, m, path, x):
    return flatten(b, x, m.start_dim, m.end_dim)


@module(nn.Unflatten)
def _m_unflatten(b, m, path, x):
    return unflatten(b, x, m.dim, m.unflattened_size)


@module(nn.Dropout)
def _m_dropout(b, m, path, x):
    return dropout(b, x, m.p, m.training, m.inplace)


@module(nn.Dropout1d if hasattr(nn, "Dropout1d") else nn.Dropout2d,
        nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
def _m_feature_dropout(b, m, path, x):
    # Each module's forward is its functional form.
    fn = {"Dropout1d": "dropout1d", "Dropout2d": "dropout2d",
          "Dropout3d": "dropout3d", "AlphaDropout": "alpha_dropout",
          "FeatureAlphaDropout": "feature_alpha_dropout"}
    for cls in type(m).__mro__:
        if cls.__name__ in fn:
            conv = FUNCTIONS[getattr(F, fn[cls.__name__])]
            return conv(b, x, m.p, m.training, m.inplace)
    raise b.error("%s: no converter" % type(m).__name__)


@module(nn.Embedding)
def _m_embedding(b, m, path, x):
    return embedding(b, x, b.module_tensor(path, "weight"), m.padding_idx,
                     m.max_norm, m.norm_type, m.scale_grad_by_freq)


@module(nn.MultiheadAttention)
def _m_mha(b, m, path, query, key, value, key_padding_mask=None,
           need_weights=True, attn_mask=None, average_attn_weights=True):
    """nn.MultiheadAttention (inference; dropout must be inactive): the
    in-projection as kt.linear, heads split by reshape/transpose, attention
    as kt.scaled_dot_product_attention (or, when the weights are returned,
    matmul/softmax/matmul), the out-projection as kt.linear."""
    if m.training and m.dropout > 0:
        raise b.error("MultiheadAttention with dropout in training mode")
    if m.bias_k is not None or m.add_zero_attn:
        raise b.error("MultiheadAttention with add_bias_kv or add_zero_attn")
    q, k, v = (need_tensor(b, t, "MultiheadAttention") for t in (query, key,
                                                                   value))
    unbatched = q.ndim == 2
    if unbatched:
        q, k, v = (unsqueeze(b, t, 0 if m.batch_first else 1)
                   for t in (q, k, v))
        if key_padding_mask is not None:
            key_padding_mask = unsqueeze(b, key_padding_mask, 0)
    if not m.batch_first:
        q, k, v = (transpose(b, t, 0, 1) for t in (q, k, v))
    E, H = m.embed_dim, m.num_heads
    hd = E // H
    if m._qkv_same_embed_dim:
        w = b.module_tensor(path, "in_proj_weight")
        bias = b.module_tensor(path, "in_proj_bias")
        ws = split(b, w, E, 0)
        bs = split(b, bias, E, 0) if bias is not None else (None,) * 3
    else:
        ws = [b.module_tensor(path, n) for n in ("q_proj_weight",
                                                 "k_proj_weight",
                                                 "v_proj_weight")]
        bias = b.module_tensor(path, "in_proj_bias")
        bs = split(b, bias, E, 0) if bias is not None else (None,) * 3
    B, L, S = q.shape[0], q.shape[1], k.shape[1]

    def heads(t, n):  # [B, n, E] -> [B, H, n, hd]
        return transpose(b, reshape(b, t, [B, n, H, hd]), 1, 2)

    qp = heads(linear(b, q, ws[0], bs[0]), L)
    kp = heads(linear(b, k, ws[1], bs[1]), S)
    vp = heads(linear(b, v, ws[2], bs[2]), S)
    mask = _mha_mask(b, attn_mask, key_padding_mask, B, H, L, S, q.dtype)
    if need_weights:
        scale = 1.0 / math.sqrt(hd)
        scores = matmul(b, binary(b, "mul", qp, scale),
                        transpose(b, kp, -2, -1))
        if mask is not None:
            if mask.dtype == torch.bool:
                mask = where(b, mask, 0.0, float("-inf"))
            scores = binary(b, "add", scores, mask)
        weights = FUNCTIONS[F.softmax](b, scores, -1)
        attn = matmul(b, weights, vp)
    else:
        ops = [qp, kp, vp]
        if mask is not None:
            ops.append(mask)
        attn = b.op("scaled_dot_product_attention", ops,
                    shape=(qp.shape[0], H, L, hd), dtype=qp.dtype)
        weights = None
    out = reshape(b, transpose(b, attn, 1, 2), [B, L, E])
    out = linear(b, out, b.module_tensor(path, "out_proj.weight"),
                 b.module_tensor(path, "out_proj.bias"))
    if not m.batch_first:
        out = transpose(b, out, 0, 1)
    if unbatched:
        out = squeeze(b, out, 0 if m.batch_first else 1)
    if weights is not None:
        if average_attn_weights:
            weights = mean(b, weights, 1)
        if unbatched:
            weights = squeeze(b, weights, 0)
    return (out, weights)


def _mha_mask(b, attn_mask, key_padding_mask, B, H, L, S, dtype):
    """One mask for the attention scores [B, H, L, S]: bool (True = attend,
    kt's convention; MultiheadAttention's bool masks mark positions *not* to
    attend) or float (added)."""
    masks = []
    if attn_mask is not None:
        m = need_tensor(b, attn_mask, "attn_mask")
        if m.ndim == 3:
            m = reshape(b, m, [B, H, L, S])
        masks.append(m)
    if key_padding_mask is not None:
        m = need_tensor(b, key_padding_mask, "key_padding_mask")
        masks.append(reshape(b, m, [B, 1, 1, S]))
    if not masks:
        return None
    if all(m.dtype == torch.bool for m in masks):
        keep = logical_not(b, masks[0])
        for m in masks[1:]:
            keep = b.op("logical_and", [keep, logical_not(b, m)],
                        shape=broadcast(b, keep.shape, m.shape),
                        dtype=torch.bool)
        return keep
    total = None
    for m in masks:
        if m.dtype == torch.bool:
            m = where(b, m, float("-inf"), 0.0)
            m = cast(b, m, dtype)
        else:
            m = cast(b, m, dtype)
        total = m if total is None else binary(b, "add", total, m)
    return total


# ------------------------------- small ops the OpInfo sweep found missing
# (issue 16; docs/opinfo.md): decompositions into kt ops, each PyTorch's
# definition.


@both("positive", "resolve_neg", "resolve_conj", "conj", "conj_physical")
def _identity_real(b, x, *, out=None):
    """Real tensors: the tensor itself (complex tensors are refused when
    they enter a graph)."""
    return copy_of(need_tensor(b, x, "positive"))


@both("fliplr")
def fliplr(b, x):
    x = need_tensor(b, x, "fliplr")
    if x.ndim < 2:
        raise b.error("fliplr: input must be >= 2-d")
    return flip(b, x, [1])


@both("flipud")
def flipud(b, x):
    x = need_tensor(b, x, "flipud")
    if x.ndim < 1:
        raise b.error("flipud: input must be >= 1-d")
    return flip(b, x, [0])


def _to_float(b, x):
    x = need_tensor(b, x, "a float function")
    if not x.dtype.is_floating_point:
        return cast(b, x, torch.get_default_dtype())
    return x


@both("deg2rad")
def deg2rad(b, x, *, out=None):
    x = _to_float(b, x)
    return binary(b, "mul", x, math.pi / 180.0)


@both("rad2deg")
def rad2deg(b, x, *, out=None):
    x = _to_float(b, x)
    return binary(b, "mul", x, 180.0 / math.pi)


def _fminmax(name, kt_name):
    def conv(b, x, y, *, out=None):
        """fmax/fmin: maximum/minimum where a NaN loses to a number."""
        x = need_tensor(b, x, name)
        y = need_tensor(b, y, name)
        dt = result_type(b, x, y)
        if dt == torch.bool:
            return binary(b, kt_name, x, y)
        X, Y = cast(b, x, dt), cast(b, y, dt)
        r = binary(b, kt_name, X, Y)
        if not dt.is_floating_point:
            return r
        r = where(b, isnan(b, X), Y, r)
        return where(b, isnan(b, Y), X, r)
    conv.__name__ = name
    return conv


both("fmax")(_fminmax("fmax", "maximum"))
both("fmin")(_fminmax("fmin", "minimum"))


@both("copysign")
def copysign(b, x, y, *, out=None):
    """|x| with the sign of y (-0.0 counts as negative; integers promote
    to the default float dtype, as PyTorch)."""
    x = need_tensor(b, x, "copysign")
    dt = result_type(b, x, y)
    if not dt.is_floating_point:
        dt = torch.get_default_dtype()
    X = cast(b, x, dt)
    a = unary(b, "abs", X)
    if not is_tensor(y):
        yv = float(b.static(y, "copysign's sign"))
        return unary(b, "neg", a) if math.copysign(1.0, yv) < 0 else a
    Y = cast(b, y, dt)
    # y < 0, or y == -0.0 (1/y == -inf).
    neg_y = binary(b, "logical_or", binary(b, "lt", Y, 0.0,
                                           out_dtype=torch.bool),
                   binary(b, "lt", unary(b, "reciprocal", Y), 0.0,
                          out_dtype=torch.bool), out_dtype=torch.bool)
    return where(b, neg_y, unary(b, "neg", a), a)


@both("ldexp")
def ldexp(b, x, other, *, out=None):
    """x * 2 ** other (a float result)."""
    x = _to_float(b, x) if is_tensor(x) else x
    other = need_tensor(b, other, "ldexp")
    dt = result_type(b, x, other)
    if not dt.is_floating_point:
        dt = torch.get_default_dtype()
    p = binary(b, "pow", operand(b, 2.0, dt), cast(b, other, dt))
    return binary(b, "mul", operand(b, x, dt), p)


@function(torch.broadcast_tensors, torch.functional.broadcast_tensors)
def broadcast_tensors(b, *tensors):
    ts = [need_tensor(b, t, "broadcast_tensors") for t in tensors]
    shape = broadcast(b, *[t.shape for t in ts])
    return tuple(expand(b, t, shape) for t in ts)


@both("frac")
def frac(b, x, *, out=None):
    """x - trunc(x), as fmod(x, 1) (same sign as x; NaN for infinities)."""
    x = need_tensor(b, x, "frac")
    if not x.dtype.is_floating_point:
        raise b.error('"frac" is only defined for floating-point tensors, '
                      'got %s' % str(x.dtype)[6:])
    return binary(b, "fmod", x, 1.0)


def _logaddexp(name, log_base):
    def conv(b, x, y, *, out=None):
        """log(e^x + e^y) as max + log1p(exp(-|x - y|)) (base 2:
        scaled by ln 2); equal infinities give that infinity. f16/bf16
        compute in f32 and round once, as PyTorch's kernels (its opmath
        type): each step rounded to bf16 made logaddexp(-0.75, -0.75)
        -0.75 + bf16(ln 2) = -0.0586, 7 bf16 steps from -0.05688."""
        x = need_tensor(b, x, name)
        y = need_tensor(b, y, name)
        dt = result_type(b, x, y)
        if not dt.is_floating_point:
            dt = torch.get_default_dtype()
        if dt in (torch.float16, torch.bfloat16):
            return cast(b, conv(b, cast(b, x, torch.float32),
                                cast(b, y, torch.float32)), dt)
        X, Y = cast(b, x, dt), cast(b, y, dt)
        m = binary(b, "maximum", X, Y)
        d = unary(b, "abs", binary(b, "sub", X, Y))
        if log_base != 1.0:
            d = binary(b, "mul", d, log_base)
        t = unary(b, "log1p", unary(b, "exp", unary(b, "neg", d)))
        if log_base != 1.0:
            t = binary(b, "mul", t, 1.0 / log_base)
        r = binary(b, "add", m, t)
        # x == y == +-inf: x - y is NaN; the result is x.
        same_inf = binary(b, "logical_and", binary(
            b, "eq", X, Y, out_dtype=torch.bool), binary(
            b, "eq", unary(b, "abs", X), float("inf"),
            out_dtype=torch.bool), out_dtype=torch.bool)
        return where(b, same_inf, X, r)
    conv.__name__ = name
    return conv


both("logaddexp")(_logaddexp("logaddexp", 1.0))
both("logaddexp2")(_logaddexp("logaddexp2", math.log(2.0)))


@both("cross")
def cross(b, x, y, dim=None, *, out=None):
    """torch.cross: the cross product along `dim` (default: the first dim
    of size 3), broadcasting x and y."""
    x = need_tensor(b, x, "cross")
    y = need_tensor(b, y, "cross")
    if x.ndim != y.ndim:
        raise b.error("linalg.cross: inputs must have the same number of "
                      "dimensions.")
    dt = result_type(b, x, y)
    shape = broadcast(b, x.shape, y.shape)
    X, Y = expand(b, cast(b, x, dt), shape), expand(b, cast(b, y, dt), shape)
    if dim is None:
        dims = [i for i, s in enumerate(shape) if value(s) == 3]
        if not dims:
            raise b.error("no dimension of size 3 in input")
        d = dims[0]
    else:
        d = norm_dim(b, dim, len(shape))
    if value(shape[d]) != 3:
        raise b.error("linalg.cross: inputs dimension %d must have length 3."
                      " Got %d and %d" % (d, value(x.shape[d]) if
                                          d < x.ndim else -1,
                                          value(y.shape[d]) if d < y.ndim
                                          else -1))

    def c(t, i):
        return slice_dim(b, t, d, i, i + 1, 1)

    def term(i, j):
        return binary(b, "sub", binary(b, "mul", c(X, i), c(Y, j)),
                      binary(b, "mul", c(X, j), c(Y, i)))
    return cat(b, [term(1, 2), term(2, 0), term(0, 1)], d)


@function(torch.linalg.cross)
def linalg_cross(b, x, y, *, dim=-1, out=None):
    return cross(b, x, y, dim)


@method("sum_to_size")
def sum_to_size(b, x, *size):
    """Sums the dims that `size` broadcasts (leading dims, and dims where
    size is 1)."""
    x = need_tensor(b, x, "sum_to_size")
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    size = [b.static(s, "a sum_to_size size") for s in size]
    if not size:
        return sum_(b, x)  # as at::sum_to: a full sum (bool -> int64)
    lead = x.ndim - len(size)
    # `size` must expand to x's shape (PyTorch's check): each of its sizes
    # is 1 or x's trailing size.
    if lead < 0 or any(s != 1 and s != value(x.shape[lead + i])
                       for i, s in enumerate(size)):
        raise b.error("size {[%s]} is not expandable to size {[%s]}." % (
            ", ".join(map(str, size)),
            ", ".join(str(value(d)) for d in x.shape)))
    r = x
    if lead:
        r = sum_(b, r, list(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and
            value(r.shape[i]) != 1]
    if dims:
        r = sum_(b, r, dims, True)
    return r


@function(torch.meshgrid, torch.functional.meshgrid, torch._VF.meshgrid)
def meshgrid(b, *tensors, indexing=None):
    """meshgrid of 1-D (or 0-d) tensors: each expanded to the grid
    ("ij" indexing, PyTorch 1.13's default; "xy" swaps the first two
    dims)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    ts = [need_tensor(b, t, "meshgrid") for t in tensors]
    if any(t.ndim > 1 for t in ts):
        raise b.error("torch.meshgrid: Expected 0D or 1D tensor in the "
                      "tensor list")
    ts = [reshape(b, t, [-1]) if t.ndim == 0 else t for t in ts]
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise b.error("torch.meshgrid: indexing must be one of \"xy\" or "
                      "\"ij\", but received: %s" % indexing)
    swap = indexing == "xy" and len(ts) >= 2
    order = list(range(len(ts)))
    if swap:
        order[0], order[1] = 1, 0
    shape = [ts[i].shape[0] for i in order]
    out = []
    for j, t in enumerate(ts):
        pos = order.index(j)
        view = [1] * len(ts)
        view[pos] = t.shape[0]
        out.append(expand(b, reshape(b, t, view), shape))
    return tuple(out)


@both("diff")
def diff(b, x, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """n-th forward difference along dim (bool: logical_xor), with
    prepend/append concatenated first."""
    x = need_tensor(b, x, "diff")
    d = norm_dim(b, dim, x.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is not None and not is_tensor(extra):
            raise b.error("diff's prepend/append must be tensors")
    if prepend is not None:
        parts.append(prepend)
    parts.append(x)
    if append is not None:
        parts.append(append)
    r = cat(b, parts, d) if len(parts) > 1 else x
    n = b.static(n, "diff's n")
    for _ in range(n):
        size = r.shape[d]
        if not isinstance(size, Sym) and size == 0:
            break
        # [1:] and [:-1]: kt.slice clamps static bounds to a dynamic dim's
        # size when it runs (an empty dim gives empty slices). The
        # example's size as the bounds (`[1:size]`, `[0:size - 1]`) gave
        # wrong shapes once the dim changed size.
        hi = slice_dim(b, r, d, 1, None, 1)
        lo = slice_dim(b, r, d, 0, -1, 1)
        if r.dtype == torch.bool:
            r = binary(b, "logical_xor", hi, lo)
        else:
            r = binary(b, "sub", hi, lo)
    return r
