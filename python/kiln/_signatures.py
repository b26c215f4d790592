"""PyTorch's own argument binding for the calls the importer converts.

Kiln's converters (kiln._ops) are Python functions with signatures of their
own: many take `*args` / `**kwargs` or defaults PyTorch does not have, so a
call eager PyTorch refuses with a TypeError (`x.relu(7)`, `x.int(7)`,
`x.maximum(7)`, an unknown keyword, a string where a dim goes) was converted
and the extra or mistyped argument ignored. Rather than repeat PyTorch's
signatures converter by converter, `check_call` lets PyTorch's argument
parser judge the call once per call site at capture: the same method or
torch function is called on "meta" tensors of the arguments' shapes and
dtypes (no data, no kernel runs; a Python number read from tensor data is
a number of its type, a symbolic size its example value). A TypeError there
that does not come from the meta device itself means eager refuses the call:
`ArgumentTypeError` (an Unsupported error that is also a TypeError) is
raised, so without fullgraph the call runs eagerly at a graph break and the
user gets eager's own TypeError at their line; with fullgraph the capture
fails with that TypeError's text at the user's line. Any other outcome
(a result, a RuntimeError of a shape check, an op without a meta kernel)
leaves the call to the converter, unchanged.

Only calls that reach PyTorch's C++ parser are checked: Tensor methods and
builtin torch functions (`torch.maximum`, `torch._C._nn.*`) with a tensor
among their arguments (a call without one could touch the global random
generator or allocate real memory). Python-level functions
(torch.nn.functional) bind their arguments in Python while they are traced.
"""

import types

import torch
from torch.overrides import _no_torch_function_mode

from ._errors import ArgumentTypeError
from ._symbolic import Sym, is_unbacked, value


class _Unknown(Exception):
    """An argument with no meta stand-in: the call is not checked."""


# Methods whose meta call would read data, run Python callbacks or touch
# autograd state: unchecked.
_UNCHECKED = frozenset((
    "apply_", "map_", "map2_", "backward", "register_hook", "share_memory_",
    "storage", "untyped_storage", "data_ptr", "__array__", "__reduce_ex__",
    "__deepcopy__"))

# Methods that may leave the meta device (`x.cpu()` allocates the result on
# the CPU before it fails to copy): checked on stand-ins with no elements.
_EMPTY_STANDINS = frozenset((
    "to", "cpu", "cuda", "type", "pin_memory", "numpy", "tolist", "item"))

_PLAIN = (int, float, bool, complex, str, type(None), type(Ellipsis),
          torch.dtype, torch.device, torch.layout, torch.memory_format)


def _size(d):
    """A stand-in for a size: its example value, 1 for a data-dependent
    (unbacked) one, whose value is not known while tracing (the check is
    about argument types, not sizes)."""
    if is_unbacked(d):
        return 1
    v = value(d)
    return 1 if v is None else v


def _meta(v, tensor_val, empty=False):
    if isinstance(v, tensor_val):
        if v.scalar is not None:
            return v.scalar(1)
        shape = [0] if empty else [_size(d) for d in v.shape]
        return torch.empty(shape, dtype=v.dtype, device="meta")
    if isinstance(v, Sym):
        return _size(v)
    if isinstance(v, _PLAIN):
        return v
    if isinstance(v, torch.Tensor):
        return torch.empty([0] if empty else v.shape, dtype=v.dtype,
                           device="meta")
    if isinstance(v, slice):
        return slice(*(_meta(x, tensor_val, empty)
                       for x in (v.start, v.stop, v.step)))
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        # (FX's immutable_list / immutable_dict are subclasses)
        items = [_meta(x, tensor_val, empty) for x in v]
        if type(v) is torch.Size and all(type(x) is int for x in items):
            return torch.Size(items)
        return items if isinstance(v, list) else tuple(items)
    if isinstance(v, dict):
        return {k: _meta(x, tensor_val, empty) for k, x in v.items()}
    raise _Unknown()


def _has_tensor(v, tensor_val):
    if isinstance(v, tensor_val):
        return v.scalar is None
    if isinstance(v, (list, tuple)):
        return any(_has_tensor(x, tensor_val) for x in v)
    if isinstance(v, dict):
        return any(_has_tensor(x, tensor_val) for x in v.values())
    return False


def _torch_builtin(fn):
    """A function of torch's C++ bindings (torch.maximum, torch._C._nn.*,
    torch._C._VariableFunctions.*), which PyTorch's parser binds."""
    if not isinstance(fn, types.BuiltinFunctionType):
        return False
    mod = getattr(fn, "__module__", None) or ""
    return mod == "torch" or mod.startswith("torch.")


def parser_error(call, args, kwargs, tensor_val, empty=False):
    """PyTorch's TypeError for `call` (a callable taking the meta stand-ins
    of `args`, `kwargs`; with `empty`, tensors of no elements), or None
    where it takes them (or the check cannot tell)."""
    try:
        margs = _meta(tuple(args), tensor_val, empty)
        mkwargs = _meta(dict(kwargs), tensor_val, empty)
    except _Unknown:
        return None
    try:
        # No torch function mode of the tracer (kiln._tracer._RandomCalls
        # records random calls as nodes) sees the stand-ins.
        with _no_torch_function_mode():
            call(*margs, **mkwargs)
    except TypeError as e:
        if "meta" in str(e):
            # The meta device's own refusal (`.numpy()`), not the parser's.
            return None
        return e
    except Exception:  # noqa: BLE001  (checks of values, missing meta kernels)
        return None
    return None


def check_call(node_op, target, args, kwargs, tensor_val):
    """Raises ArgumentTypeError where PyTorch's parser refuses a
    call_method (`target` a Tensor method name, args[0] the tensor) or a
    call_function of a builtin torch function. `tensor_val` is the
    importer's TensorVal class."""
    if node_op == "call_method":
        if not args or not isinstance(args[0], tensor_val) or \
                args[0].scalar is not None:
            return
        fn = getattr(torch.Tensor, target, None)
        if fn is None or target in _UNCHECKED:
            return
        name = "Tensor.%s" % target
    elif node_op == "call_function":
        if not _torch_builtin(target) or not _has_tensor((args, kwargs),
                                                         tensor_val):
            return
        fn = target
        name = "torch.%s" % getattr(target, "__name__", target)
    else:
        return
    e = parser_error(fn, args, kwargs, tensor_val,
                     empty=node_op == "call_method" and
                     target in _EMPTY_STANDINS)
    if e is not None:
        raise ArgumentTypeError(
            "%s does not take these arguments (PyTorch raises TypeError: "
            "%s)" % (name, e))
