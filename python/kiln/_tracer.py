"""KilnTracer: torch.fx symbolic tracing that knows the values of sizes.

`torch.fx.symbolic_trace` cannot run Python that branches on a tensor's
metadata (`if src.dim() == 3:` in nn.TransformerEncoderLayer), iterates over
sizes or calls `len()`. KilnTracer imports every node as it is created
(kiln._fx_import.FxImporter is the abstract interpreter), so a Proxy can be
turned into a Python value when the code needs one:

* a size, rank, dtype or other metadata is its value (a size that is
  symbolic is specialized: see kiln._symbolic);
* the value of a tensor (`bool(x.sum() < 0)`, `x.item()`) is data-dependent
  and raises `Unsupported` with the user's line (a graph break in a later
  version).

Modules that have a converter in kiln._ops are leaves (`call_module` nodes);
others are traced through, so a model's own modules (and torch.nn containers
such as TransformerEncoderLayer) become the ops they run. Each node records
the user's Python frames (innermost first, from the traced module's forward
down to the call; PyTorch's own dispatch frames left out) and the module
stack, which the importer turns into MLIR locations.
"""

import collections
import inspect
import linecache
import math
import operator
import os
import traceback

import torch
import torch.fx as fx
from torch.overrides import TorchFunctionMode

from . import _ops
from ._errors import KilnError, Unsupported
from ._fx_import import TensorVal
from ._symbolic import Sym

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_KILN_DIR = os.path.dirname(os.path.abspath(__file__))
# PyTorch files whose frames are dispatch machinery, never the user's code.
_SKIP_FILES = tuple(os.path.join(_TORCH_DIR, f) for f in (
    "fx" + os.sep, "overrides.py", "_tensor.py", "_jit_internal.py",
    os.path.join("nn", "modules", "module.py"), "_ops.py", "_C",
    os.path.join("utils", "_python_dispatch.py")))


def _skipped(filename):
    f = os.path.abspath(filename)
    return f.startswith(_SKIP_FILES) or f.startswith(_KILN_DIR)


def _column(frame):
    try:
        pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        if pos[2] is not None:
            return pos[2] + 1
    except (AttributeError, IndexError):
        pass
    return 1


class KilnProxy(fx.Proxy):
    """A Proxy that can become a Python value (see the module doc) and
    records augmented assignments (`x += y`) as in-place ops, as eager
    PyTorch runs them."""

    def __len__(self):
        return self.tracer.length(self)

    def __index__(self):
        return self.tracer.to_int(self)

    def __int__(self):
        return self.tracer.to_int(self)

    def __float__(self):
        return float(self.tracer.concrete(self, "float()"))

    def __iadd__(self, other):
        return self.tracer.create_proxy("call_function", operator.iadd,
                                        (self, other), {})

    def __isub__(self, other):
        return self.tracer.create_proxy("call_function", operator.isub,
                                        (self, other), {})

    def __imul__(self, other):
        return self.tracer.create_proxy("call_function", operator.imul,
                                        (self, other), {})

    def __itruediv__(self, other):
        return self.tracer.create_proxy("call_function", operator.itruediv,
                                        (self, other), {})


class KilnTracer(fx.Tracer):
    def __init__(self, importer, root_fn):
        super().__init__(autowrap_modules=(math,))
        self.importer = importer
        self.proxy_buffer_attributes = True
        self.root_code = inspect.unwrap(root_fn).__code__
        self.module_stack = collections.OrderedDict()

    # --- structure

    def is_leaf_module(self, m, qualname):
        return _ops.is_supported_module(m)

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        self.module_stack[path] = type(m).__qualname__
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.module_stack.pop(path, None)

    def proxy(self, node):
        return KilnProxy(node, self)

    def create_node(self, kind, target, args, kwargs, name=None,
                    type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name,
                                   type_expr)
        node.meta["nn_module_stack"] = collections.OrderedDict(
            self.module_stack)
        node.meta["kiln_frames"] = self._user_frames()
        self.importer.root = self.root
        self.importer.import_node(node)
        return node

    def _user_frames(self):
        """(file, line, col) of the user's frames, innermost first, from
        the root function down to the op."""
        frames = []
        f = inspect.currentframe()
        while f is not None:
            code = f.f_code
            if not _skipped(code.co_filename):
                line = linecache.getline(code.co_filename, f.f_lineno)
                # The frame of a torch function dispatching to
                # __torch_function__ (F.relu's own body) is not the user's.
                if not (not frames and "handle_torch_function" in line):
                    frames.append((code.co_filename, f.f_lineno, _column(f)))
            if code is self.root_code:
                break
            f = f.f_back
        return frames

    # --- Python values of proxies

    def value(self, proxy):
        return self.importer.env[proxy.node]

    def concrete(self, proxy, why):
        v = self.value(proxy)
        if isinstance(v, Sym):
            return self.importer.static(v, why)
        if isinstance(v, TensorVal):
            raise self.importer._located(
                Unsupported, "data-dependent control flow: %s of a tensor "
                "value (the result depends on the tensor's data; graph "
                "breaks are not supported yet)" % why)
        return v

    def to_bool(self, obj):
        return bool(self.concrete(obj, "a branch on the truth value"))

    def to_int(self, obj):
        v = self.concrete(obj, "int()")
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("%r is not an integer" % (v,))
        return v

    def length(self, obj):
        v = self.value(obj)
        if isinstance(v, TensorVal):
            if v.ndim == 0:
                raise TypeError("len() of a 0-d tensor")
            return self.importer.static(v.shape[0], "len() of a tensor")
        return len(v)

    def iter(self, obj):
        v = self.value(obj)
        if isinstance(v, TensorVal):
            n = self.length(obj)
            return iter([obj[i] for i in range(n)])
        if isinstance(v, dict):
            return iter(v.keys())
        if isinstance(v, (tuple, list)):
            return iter([obj[i] for i in range(len(v))])
        raise Unsupported("iterating over a %s" % type(v).__name__)

    def keys(self, obj):
        v = self.value(obj)
        if isinstance(v, dict):
            return v.keys()
        return super().keys(obj)


_RANDOM = set()
for _ns, _names in ((torch, ("rand", "randn", "randint", "rand_like",
                             "randn_like", "randint_like", "randperm",
                             "normal", "bernoulli", "multinomial",
                             "poisson")),
                    (torch.Tensor, ("uniform_", "normal_", "bernoulli_",
                                    "exponential_", "random_", "cauchy_",
                                    "log_normal_", "geometric_",
                                    "bernoulli"))):
    for _n in _names:
        if hasattr(_ns, _n):
            _RANDOM.add(getattr(_ns, _n))


class _RandomCalls(TorchFunctionMode):
    """Refuses random number generation while tracing: a call without a
    traced argument (`torch.randn(3)`) would otherwise run once at trace
    time and its values become a constant of the program."""

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _RANDOM:
            frames = self.tracer._user_frames()
            where = "%s:%d:%d" % frames[0] if frames else None
            name = getattr(func, "__name__", str(func))
            owner = "Tensor." if getattr(func, "__objclass__", None) \
                is torch._C._TensorBase else "torch."
            msg = ("%s%s: random numbers are not captured yet (Kiln's random "
                   "ops take explicit seeds)" % (owner, name))
            raise Unsupported("%s: %s" % (where, msg) if where else msg,
                              where)
        return func(*args, **(kwargs or {}))


def trace(root, fn, importer, concrete_args):
    """Traces `fn` (a module, or a function) with KilnTracer; every node is
    imported as it is created. Returns the GraphModule."""
    root_fn = fn.forward if isinstance(fn, torch.nn.Module) else fn
    tracer = KilnTracer(importer, root_fn)
    if isinstance(fn, torch.nn.Module):
        importer.root = fn
    try:
        with _RandomCalls(tracer):
            graph = tracer.trace(fn, concrete_args=concrete_args)
    except KilnError:
        raise
    except Exception as e:
        # Anything else the traced Python raised (a Proxy used where a real
        # tensor is needed, an error of the user's code): an Unsupported
        # error at the innermost user line of the traceback.
        frames = [(f.filename, f.lineno, (f.colno or 0) + 1)
                  for f in traceback.extract_tb(e.__traceback__)
                  if not _skipped(f.filename)]
        where = "%s:%d:%d" % frames[-1] if frames else None
        msg = "cannot trace %s: %s: %s" % (
            getattr(root_fn, "__qualname__", root_fn), type(e).__name__, e)
        raise Unsupported("%s: %s" % (where, msg) if where else msg,
                          where) from e
    return fx.GraphModule(tracer.root, graph)
