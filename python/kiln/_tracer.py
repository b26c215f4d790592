"""KilnTracer: torch.fx symbolic tracing that knows the values of sizes.

`torch.fx.symbolic_trace` cannot run Python that branches on a tensor's
metadata (`if src.dim() == 3:` in nn.TransformerEncoderLayer), iterates over
sizes or calls `len()`. KilnTracer imports every node as it is created
(kiln._fx_import.FxImporter is the abstract interpreter), so a Proxy can be
turned into a Python value when the code needs one:

* a size, rank, dtype or other metadata is its value (a size that is
  symbolic is specialized: see kiln._symbolic);
* the value of a tensor (`bool(x.sum() < 0)`, `x.item()`) is data-dependent:
  with a kiln._breaks.SegmentRun, a graph break (the graph so far runs, the
  value is real); without one, or where breaks are refused, `Unsupported`
  with the user's line.

Modules that have a converter in kiln._ops are leaves (`call_module` nodes);
others are traced through, so a model's own modules (and torch.nn containers
such as TransformerEncoderLayer) become the ops they run. Each node records
the user's Python frames (innermost first, from the traced module's forward
down to the call; PyTorch's own dispatch frames left out) and the module
stack, which the importer turns into MLIR locations.
"""

import builtins
import collections
import contextlib
import dis
import dataclasses
import functools
import inspect
import linecache
import math
import operator
import os
import re
import sys
import threading
import traceback
import types
import warnings

import torch
import torch.fx as fx
from torch.overrides import TorchFunctionMode, _no_torch_function_mode
from torch.nn.modules import module as _nn_module
from torch.utils import _pytree as pytree

from . import _fx_import, _ops
from ._errors import ArgumentTypeError, KilnError, Unsupported
from ._fx_import import TensorVal, target_name
from ._symbolic import Sym, is_unbacked

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_KILN_DIR = os.path.dirname(os.path.abspath(__file__))
# PyTorch files whose frames are dispatch machinery, never the user's code.
_SKIP_FILES = tuple(os.path.join(_TORCH_DIR, f) for f in (
    "fx" + os.sep, "overrides.py", "_tensor.py", "_jit_internal.py",
    os.path.join("nn", "modules", "module.py"), "_ops.py", "_C",
    os.path.join("utils", "_python_dispatch.py")))


@functools.lru_cache(maxsize=4096)
def _skipped(filename):
    f = os.path.abspath(filename)
    return f.startswith(_SKIP_FILES) or f.startswith(_KILN_DIR)


_RAISE_OPS = {dis.opmap[n] for n in ("RAISE_VARARGS", "RERAISE")
              if n in dis.opmap}


def _innermost(exc):
    """The innermost traceback entry of `exc` (None without a traceback)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def raised_by_user(exc):
    """Whether `exc` was raised by a `raise` or `assert` statement of the
    user's code (the innermost frame of its traceback is not torch's or
    kiln's, and its instruction there is a raise): the user's own error,
    which eager PyTorch raises too, not a limit of the tracer (an exception
    of a torch function given a traced value also shows the user's line,
    at a call instruction). Code run eagerly at a graph break on real
    values (KilnTracer._run_eagerly: an attribute read, a hook, a disabled
    function) raises as eager does (raises_as_eager)."""
    if getattr(exc, "_kiln_raised_eagerly", False):
        return True
    tb = _innermost(exc)
    if tb is None:
        return False
    code = tb.tb_frame.f_code
    if _skipped(code.co_filename):
        return False
    i = tb.tb_lasti
    return 0 <= i < len(code.co_code) and code.co_code[i] in _RAISE_OPS


def raises_as_eager(fn, *args, **kwargs):
    """fn(*args, **kwargs) for an op run eagerly at a graph break, on real
    values: an exception it raises is what eager PyTorch raises there, the
    user's error (raised_by_user), not a limit of the tracer."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        try:
            e._kiln_raised_eagerly = True
        except AttributeError:   # (an exception type without a __dict__)
            pass
        raise


_PARSER_MESSAGE = re.compile(r"[\w.]+\(\)(:| takes| got| missing| received)")


def parser_refused(exc):
    """Whether `exc` is a TypeError of PyTorch's argument parser raised at a
    call in the user's code (a torch function implemented in C, given
    arguments it does not take: `torch.maximum(x, 7)`; the parser refuses
    them before __torch_function__ sees the traced values), which eager
    raises too; not a traced value where Python needs a real one (those
    name the Proxy)."""
    if not isinstance(exc, TypeError) or "Proxy" in str(exc) or \
            not _PARSER_MESSAGE.match(str(exc)):
        return False
    tb = _innermost(exc)
    if tb is None:
        return False
    name = tb.tb_frame.f_code.co_filename
    return not _skipped(name) and not _in_torch(name)


def _in_torch(filename):
    return os.path.abspath(filename).startswith(_TORCH_DIR + os.sep)


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

    def __iter__(self):
        # torch.fx's own __iter__ finds the calling instruction at index
        # f_lasti // 2 of dis.get_instructions, which in Python 3.11 leaves
        # out the CACHE entries: `v, i = torch.topk(...)` raised an
        # IndexError (or read the wrong instruction). By offset instead.
        frame = inspect.currentframe().f_back
        inst = None
        for ins in dis.get_instructions(frame.f_code):
            if ins.offset == frame.f_lasti:
                inst = ins
                break
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __index__(self):
        return self.tracer.to_int(self, index=True)

    def __int__(self):
        return self.tracer.to_int(self)

    def __float__(self):
        return float(self.tracer.concrete(self, "float()"))

    def __abs__(self):
        # abs(x): a node (torch.fx's Proxy has no __abs__), converted as
        # torch.abs, or as Python's abs of a number from `.item()`.
        return self.tracer.create_proxy("call_function", builtins.abs,
                                        (self,), {})

    def __round__(self, ndigits=None):
        # round() of a Python number from `.item()` (or of a tensor, as
        # eager): Python needs the value, a graph break.
        v = self.tracer.concrete(self, "round()")
        return round(v) if ndigits is None else round(v, ndigits)

    def register_hook(self, hook):
        """Tensor.register_hook on a traced value: a graph break; the hook
        is registered on the real tensor, which the later graphs read, so
        it runs on the gradient as in eager (TorchDynamo keeps such hooks
        too). Returns the real RemovableHandle."""
        return self.tracer.run_eagerly_for(
            "Tensor.register_hook(): a gradient hook on a value computed "
            "in the graph", _register_hook, (self, hook), {})

    def __getattr__(self, k):
        # torch.fx's Proxy.__getattr__ gives a plain fx Attribute, which
        # has none of the methods above: `range(x.ndim)` (torch.masked's
        # _canonical_dim) raised "'Attribute' object cannot be interpreted
        # as an integer". A KilnAttribute is both.
        if k in _AUTOGRAD_ATTRS and "tracer" in self.__dict__:
            # x.grad, x.grad_fn, x.is_leaf, x._version...: the tensor's
            # autograd or storage state, which no graph holds (a Proxy is
            # never None, so `x.grad is None` was always False): a graph
            # break, Python reads the real tensor's attribute.
            return self.tracer.run_eagerly_for(
                "Tensor.%s: autograd or storage state read by Python" % k,
                getattr, (self, k), {})
        a = KilnAttribute(self, k)
        if k in _METADATA_ATTRS and "tracer" in self.__dict__:
            # x.dtype, x.ndim, x.layout, x.device: their Python values
            # (torch functions' argument parsers refuse a proxy for a
            # dtype or an int: `torch.sum(x, d, dtype=x.dtype)` in
            # torch.masked raised "argument 'dtype' must be torch.dtype").
            v = self.tracer.value(a)
            if isinstance(v, (torch.dtype, torch.layout, torch.device,
                              bool, int)):
                return v
        tracer = self.__dict__.get("tracer")
        if tracer is not None and tracer.run is not None:
            tracer.run.track(a)
        return a

    # print(x), f"{x}": the tensor's value, at a graph break.
    def __repr__(self):
        if self.tracer.may_break():
            return repr(self.tracer.concrete(self, "repr()"))
        return super().__repr__()

    def __str__(self):
        if self.tracer.may_break():
            return str(self.tracer.concrete(self, "str()"))
        return super().__repr__()

    def __format__(self, spec):
        if self.tracer.may_break():
            return format(self.tracer.concrete(self, "format()"), spec)
        return super().__repr__()

    def __setitem__(self, idx, v):
        # x[idx] = v: an operator.setitem node (kiln._ops.setitem writes x).
        self.tracer.create_proxy("call_function", operator.setitem,
                                 (self, idx, v), {})

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


# Tensor attributes a graph break answers (KilnProxy.__getattr__).
_AUTOGRAD_ATTRS = frozenset(("grad", "grad_fn", "is_leaf", "_base",
                             "_version", "output_nr", "names",
                             "retains_grad", "nbytes", "itemsize"))

# Tensor attributes whose values are metadata, known while tracing.
_METADATA_ATTRS = frozenset(("dtype", "ndim", "layout", "device",
                             "is_sparse", "is_quantized", "is_cuda",
                             "is_meta", "is_mkldnn"))


class KilnAttribute(KilnProxy, fx.proxy.Attribute):
    """`x.ndim`, `x.dtype`, `x.T`: an fx Attribute (its node made when
    used; `x.size()` becomes a call_method) that, like a KilnProxy, can
    become a Python value (`range(x.ndim)`, `int(x.ndim)`)."""


def _positional(fn, co):
    """`fn` with its keyword-only parameters made positional, and its
    `*args` / `**kwargs` taken as one tuple / dict parameter each (same
    names, in its signature's order), for torch.fx's placeholders: the
    frontend passes the tuple and the dict as containers, one placeholder
    per tensor leaf (torch.fx's own `*args` placeholder is one proxy, which
    a call cannot unpack)."""
    n = co.co_argcount + co.co_kwonlyargcount
    names = co.co_varnames[:n]
    pos = list(names[:co.co_argcount])
    kw = list(names[co.co_argcount:])
    varargs = varkw = None
    if co.co_flags & inspect.CO_VARARGS:
        varargs = co.co_varnames[n]
        n += 1
    if co.co_flags & inspect.CO_VARKEYWORDS:
        varkw = co.co_varnames[n]
    # No defaults: every call passes every parameter (the frontend binds
    # them with their defaults applied).
    env = {"_fn": fn}
    params = pos + ([varargs] if varargs else []) + kw + \
        ([varkw] if varkw else [])
    call = pos + (["*" + varargs] if varargs else []) + \
        ["%s=%s" % (k, k) for k in kw] + (["**" + varkw] if varkw else [])
    src = "def _kiln_positional(%s):\n    return _fn(%s)\n" % (
        ", ".join(params), ", ".join(call))
    exec(compile(src, "<kiln>", "exec"), env)
    wrapper = env["_kiln_positional"]
    wrapper.__qualname__ = getattr(fn, "__qualname__", "fn")
    return wrapper


class KilnTracer(fx.Tracer):
    def __init__(self, importer, root_fn, run=None):
        super().__init__(autowrap_modules=(math,))
        # math's own functions are wrapped by _math_wrapped (once, not on
        # every trace); `from math import sqrt` in traced code is still
        # found by torch.fx (the ids stay in _autowrap_function_ids).
        self._autowrap_search = []
        self.importer = importer
        # kiln._breaks.SegmentRun when graph breaks are handled (None: the
        # legacy whole-function capture, where a break is an error).
        self.run = run
        if run is not None:
            run.tracer = self
        self.eager_depth = 0
        # The grad mode the traced Python set (_grad_mode_tracked).
        self.user_grad = torch.is_grad_enabled()
        # Modules called by a traced function that are not the root's
        # (path_of_module): registered on the root in call order.
        self.closure_modules = []
        self.closure_params = []
        self.proxy_buffer_attributes = True
        self.root_code = inspect.unwrap(root_fn).__code__
        self.module_stack = collections.OrderedDict()
        # Real tensors computed at trace time from tensors that exist
        # outside the trace (a global, a closure tensor, a parameter read
        # through a closure module): {id: (tensor, {id: root tensor})}.
        # Their values are baked into the program (as constants, or as
        # Python values through .item() / bool()); the roots' in-place
        # changes must recapture (importer.data_reads, kiln/_guards.py).
        self.derived = {}

    # --- structure

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """torch.fx's placeholders, with two changes: keyword-only
        parameters are traced through a positional wrapper (fx's own
        _patch_function rebuilds a code object the 3.11 way it does not
        know: "code() argument 13 must be str"); and where concrete_args
        hold containers (a list of tensors, each leaf a placeholder), the
        traced function gets the containers back and returns its output as
        it is, not flattened (the importer keeps the output's structure)."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        flags = co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        defaults = tuple(getattr(fn, "__defaults__", None) or ()) + tuple(
            (getattr(fn, "__kwdefaults__", None) or {}).values())
        if co.co_kwonlyargcount or flags or any(
                isinstance(d, torch.Tensor) for d in defaults):
            # (a tensor default, `def f(x, acc=ACC)`: torch.fx wrote it
            # into the traced code's signature as a name it never defined,
            # "name '_tensor_constant0' is not defined"; the call binds
            # every parameter anyway)
            root_fn = _positional(root_fn, co)
        from torch.fx._symbolic_trace import _PyTreeCodeGen
        with warnings.catch_warnings():
            # torch.fx cannot assert the value of a specialized argument
            # of another type (a NumPy scalar, a dtype) in the graph; kiln's
            # key holds every such value, so a new one is a new capture.
            warnings.filterwarnings(
                "ignore", message="Was not able to add assertion")
            root_fn2, args = super().create_args_for_root(
                root_fn, is_module, concrete_args)
        if isinstance(self.graph._codegen, _PyTreeCodeGen):
            in_spec = self.graph._codegen.pytree_info.in_spec
            self.graph._codegen = fx.graph.CodeGen()

            names = list(inspect.signature(fn).parameters)
            # (`*args` and `**kwargs` are the function's own, fresh on
            # every call in eager too: changing them reaches no caller)
            fresh = {n for n, p in inspect.signature(fn).parameters.items()
                     if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}

            def unflattened(*flat):
                rebuilt = pytree.tree_unflatten(list(flat), in_spec)
                # (the containers the traced code gets: copies of the
                # caller's, whose changes _stored_values_break refuses)
                self.arg_containers = [
                    (names[i] if i < len(names) else "#%d" % i, a,
                     _structure(a)) for i, a in enumerate(rebuilt)
                    if isinstance(a, (list, dict)) and
                    (i >= len(names) or names[i] not in fresh)]
                return root_fn(*rebuilt)
            return unflattened, args
        return root_fn2, args

    def is_leaf_module(self, m, qualname):
        return _ops.is_supported_module(m)

    def call_module(self, m, forward, args, kwargs):
        if self.eager_depth or getattr(_active, "tracer", None) is not self:
            # torch.fx patches nn.Module.__call__ process-wide while it
            # traces: a module called on another thread runs as it is.
            return forward(*args, **kwargs)
        hooked = has_forward_hooks(m)
        if hooked:
            # Hooks are Python with side effects (a hook that stores the
            # output, one that edits it): the module runs eagerly with them,
            # on real tensors, at a graph break, as nn.Module.__call__ runs
            # it. torch.fx would skip them on a leaf module and run them on
            # Proxies on another.
            return self.call_module_eagerly(m, forward, args, kwargs, hooked)
        path = self.path_of_module(m)
        self.module_stack[path] = type(m).__qualname__
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.module_stack.pop(path, None)

    def call_module_eagerly(self, m, forward, args, kwargs, why):
        """A call of a module with forward hooks: a graph break; the module
        and its hooks run eagerly (see call_module)."""
        reason = "%s (%s) has %s: it runs eagerly with them" % (
            type(m).__name__, self.path_of_module(m), why)
        return self._run_eagerly(reason, forward, args, kwargs)

    def path_of_module(self, mod):
        """A module's path in the traced root. A module that is not one of
        the root's submodules (a function that calls `model.encoder(x)`, a
        lambda that captures a layer, the closure's modules) is registered
        on a function's root under `_kiln_closure_<k>`, so its parameters
        and buffers are read by name on every call as the root's are."""
        path = self.submodule_paths.get(mod) if self.submodule_paths \
            else None
        if path is not None:
            return path
        try:
            return super().path_of_module(mod)
        except NameError:
            pass
        # torch.fx's root for a traced function is a bare nn.Module.
        if type(self.root) is not torch.nn.Module:
            raise Unsupported(
                "%s is called by %s but is not one of its submodules; "
                "kiln cannot capture modules outside the compiled module "
                "yet (make it a submodule, or compile a function that "
                "calls both)" % (type(mod).__name__,
                                 type(self.root).__name__))
        k = len(self.closure_modules)
        name = "_kiln_closure_%d" % k
        self.closure_modules.append(mod)
        self.root.add_module(name, mod)
        if self.submodule_paths is not None:
            for sub_name, sub in mod.named_modules():
                self.submodule_paths.setdefault(
                    sub, name + ("." + sub_name if sub_name else ""))
        return name

    def create_arg(self, a):
        if isinstance(a, float) and type(a) is not float and \
                hasattr(a, "_kiln_node"):
            # A number the graph computes that torch's parser took as a
            # float (kiln._optim.TracedNumber: SGD's `alpha=-lr`).
            return a._kiln_node
        if isinstance(a, torch.nn.Parameter) and \
                type(self.root) is torch.nn.Module and \
                getattr(_active, "tracer", None) is self and \
                not any(a is p for p in self.root.parameters()):
            # A parameter a traced function reads directly
            # (`x @ layer.weight`): registered on the function's root, read
            # by name on every call (as path_of_module's modules).
            name = "_kiln_closure_p%d" % len(self.closure_params)
            self.closure_params.append(a)
            self.root.register_parameter(name, a)
        lifted = self._lifted_attr(a)
        if lifted is not None:
            return lifted
        if isinstance(a, dict) and type(a) is not dict and \
                _fx_import.is_record_type(type(a)):
            # An OrderedDict output (torchvision's segmentation models):
            # built by a node, as torch.fx would make it a plain dict.
            return self.create_node("call_function", type(a),
                                    (super().create_arg(list(a.items())),),
                                    {})
        if dataclasses.is_dataclass(a) and not isinstance(a, type) and \
                _fx_import.is_record_type(type(a)):
            # A dataclass output (a model's output record): a node that
            # builds it from its fields (torch.fx knows no dataclasses).
            fields = {f.name: getattr(a, f.name)
                      for f in dataclasses.fields(a) if f.init}
            return self.create_node("call_function", type(a), (),
                                    super().create_arg(fields))
        if isinstance(a, torch.Tensor) and id(a) in self.derived and \
                getattr(_active, "tracer", None) is self and \
                not self.eager_depth:
            # A tensor computed at trace time from a global one becomes a
            # constant of the program (`x + T * 2`). A view of the global
            # (`W.t()`, `T[1:]`) shares its memory: the program reads its
            # changes.
            self._read({k: t for k, t in self._roots([a]).items()
                        if not _same_storage(a, t)},
                       "computed into a constant")
        if isinstance(a, torch.Tensor) and \
                getattr(_active, "tracer", None) is self and \
                not self.eager_depth:
            self.importer.held_tensors[id(a)] = a
        if isinstance(a, torch.nn.Module) and \
                type(self.root) is torch.nn.Module and \
                getattr(_active, "tracer", None) is self:
            # A module passed as an argument (a distance_function): read
            # from the root like the modules a function calls.
            return self.create_node("get_attr", self.path_of_module(a), (),
                                    {})
        np = sys.modules.get("numpy")
        if np is not None and isinstance(a, np.generic) and \
                not isinstance(a, (np.void, np.datetime64, np.timedelta64)):
            # A NumPy scalar (`x * np.float32(2)`, an index from NumPy):
            # PyTorch takes it as the Python number it holds.
            return super().create_arg(a.item())
        return super().create_arg(a)

    def _lifted_attr(self, a):
        """An optimizer's tensor among a node's arguments (kiln/_optim.py):
        a get_attr of the name of its source, set on the root to this
        trace's tensor (segments read it there); the program reads it from
        its source on every call. None for any other value."""
        sources = getattr(self.importer, "optim_sources", None)
        if sources is None or not isinstance(a, torch.Tensor) or \
                getattr(_active, "tracer", None) is not self or \
                self.eager_depth:
            return None
        name = sources.name_of(a)
        if name is None:
            return None
        # Not a tensor made by the trace (a torch call's result, such as
        # `p.grad` read through Tensor.grad's getter, is recorded as made
        # in the trace): a constant's value would be fixed.
        made = self.importer.made_in_trace
        if made.get(id(a)) is a:
            del made[id(a)]
        self.root.__dict__[name] = a
        return self.create_node("get_attr", name, (), {})

    # --- values of real tensors baked into the program

    def _roots(self, tensors):
        roots = {}
        made = self.importer.made_in_trace
        for t in tensors:
            d = self.derived.get(id(t))
            if d is not None and d[0] is t:
                roots.update(d[1])
            elif made.get(id(t)) is not t:
                roots[id(t)] = t
        return roots

    def _read(self, roots, how):
        if not roots:
            return
        frames = self._user_frames()
        where = "%s:%d" % frames[0][:2] if frames else "?"
        for k, t in roots.items():
            self.importer.data_reads.setdefault(
                k, (t, "data of a %s tensor %s (%s)" % (
                    "x".join(map(str, t.shape)) or "0-d", how, where)))

    def note_real_op(self, func, args, kwargs, r):
        """A torch function run on real tensors while tracing (not on
        traced values): its results derive from the real tensors outside
        the trace it read; a Python value it returns (`T.item()`,
        `bool(T.any())`) reads their data."""
        leaves = [a for a in pytree.tree_flatten((args, kwargs or {}))[0]
                  if isinstance(a, torch.Tensor)]
        if not leaves:
            return
        roots = self._roots(leaves)
        if not roots:
            return
        name = getattr(func, "__name__", "")
        outs = [o for o in pytree.tree_flatten(r)[0]
                if isinstance(o, torch.Tensor)]
        # (`p.grad = None`, Tensor.grad's __set__, reads no data: guarding
        # the old gradients' versions recaptured a training step once more.)
        if not outs and name not in _METADATA_READS and \
                name not in ("__set__", "__delete__"):
            self._read(roots, "read by %s" % name.strip("_"))
        for o in outs:
            self.derived[id(o)] = (o, roots)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self.eager_depth or getattr(_active, "tracer", None) is not self:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def proxy(self, node):
        p = KilnProxy(node, self)
        if self.run is not None:
            self.run.track(p)
        return p

    def create_proxy(self, kind, target, args, kwargs, name=None,
                     type_expr=None, proxy_factory_fn=None):
        p = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                 proxy_factory_fn)
        node = getattr(p, "node", None)
        # (torch.fx's wrapper of an autowrapped function, math.sqrt, needs a
        # Proxy back.)
        if node is not None and node.meta.get("kiln_eager") and not (
                kind == "call_function" and id(target) in getattr(
                    self, "_autowrap_function_ids", ())):
            # An op run eagerly at a graph break: a Python value (`.item()`,
            # `.tolist()`) is given to Python as is; tensors stay proxies
            # (later ops on them are captured again).
            v = self.run.concrete[node]
            if not any(isinstance(x, torch.Tensor)
                       for x in pytree.tree_flatten(v)[0]):
                return v
        return p

    def create_node(self, kind, target, args, kwargs, name=None,
                    type_expr=None):
        if kind == "output" and self.run is not None and \
                not self.eager_depth:
            self._check_argument_containers()
            self._stored_values_break(args)
        node = super().create_node(kind, target, args, kwargs, name,
                                   type_expr)
        node.meta["nn_module_stack"] = collections.OrderedDict(
            self.module_stack)
        # The grad mode the user's Python set when it created the node (a
        # `torch.no_grad()` block inside the traced function; not the C++
        # mode a custom autograd.Function's forward runs in: see
        # _grad_mode_tracked).
        node.meta["kiln_grad"] = self.user_grad
        # Under torch.autocast("cpu") (the call's or a block inside the
        # traced code): the importer makes autocast's casts (kiln._autocast).
        if torch.is_autocast_cpu_enabled():
            node.meta["kiln_autocast"] = torch.get_autocast_cpu_dtype()
        self.importer.root = self.root
        run = self.run
        if run is None:
            node.meta["kiln_frames"] = self._user_frames()
            self.importer.import_node(node)
            return node
        run.add_node(node)
        calls = ("call_function", "call_method", "call_module")
        if kind in calls:
            reason = self._eager_reason(node)
            if reason is not None:
                node.meta["kiln_frames"] = self._user_frames()
                run.run_eager_op(node, reason)
                node.meta["kiln_eager"] = True
                return node
        if run.replaying() and run.replay_node(node):
            # The recorded segment goes on: no import (kiln._breaks._Trie).
            return node
        node.meta["kiln_frames"] = self._user_frames()
        imp = self.importer
        mark = len(imp.lines)
        try:
            # The converters' own torch calls (dtype promotion on dummies)
            # need no interception by _RandomCalls.
            with _no_torch_function_mode():
                imp.import_node(node)
        except Unsupported as e:
            if kind not in calls or getattr(e, "_no_break", False):
                raise
            if not run.breaks_allowed():
                e.graph_break = True
                raise
            # The op cannot be captured: a graph break, the op runs eagerly.
            imp.rollback(mark)
            imp.env.pop(node, None)
            run.run_eager_op(node, getattr(e, "reason", e.message),
                             refused=True)
            node.meta["kiln_eager"] = True
            return node
        if len(imp.lines) > mark:
            run.seg_ops.append(target_name(node))
        return node

    def _check_argument_containers(self):
        """A list or dict of tensors passed as an argument is traced as a
        copy (create_args_for_root): a change to it is refused."""
        for name, c, before in getattr(self, "arg_containers", ()):
            if _structure(c) != before:
                err = Unsupported(
                    "the function changed the %s passed as argument %r "
                    "(an item added, replaced or removed): kiln passes the "
                    "traced code a copy of a container that holds tensors, "
                    "so the change would not reach the caller's %s; return "
                    "the values instead, or make the change outside the "
                    "compiled function" % (type(c).__name__, name,
                                           type(c).__name__))
                err._no_break = True
                raise err

    def _stored_values_break(self, output_args):
        """Traced tensors the user's code stored into Python objects (a
        global list, a dict, a plain object's attribute: kiln._stores):
        a graph break before the function's output, then each gets its
        real tensor. (Not in an optimizer's lifted step: kiln._optim
        settles its state.)"""
        if getattr(self.importer, "optim_sources", None) is not None:
            return
        from . import _stores
        stored = [s for s in _stores.find(self.traced)
                  if s.proxy.tracer is self and s.node is not None]
        if not stored:
            return
        run = self.run
        needed = [s.node for s in stored]
        # (the output's own values: their proxies are gone by now)
        fx.node.map_arg(output_args, needed.append)
        run.graph_break(_stores.reason(stored), needed)
        _stores.replace(stored, lambda n: run.concrete[n])

    def _eager_reason(self, node):
        """Why `node` must run eagerly (a graph break), or None."""
        from . import _breaks
        t = node.target
        if node.op == "call_function":
            if isinstance(t, _breaks._Disabled):
                return "call to %s, disabled by kiln.disable" % getattr(
                    t, "__qualname__", t)
            if isinstance(t, _WithGenerator):
                return ("%s with a generator= argument: random numbers "
                        "of a given generator run eagerly" % t.__name__)
            if t in _RANDOM and t not in _CAPTURED_RANDOM:
                return "%s: random numbers are not captured (run eagerly)" \
                    % _random_name(t)
        if node.op == "call_method":
            from ._compile import config
            if t == "item" and (config.capture_scalar_outputs or getattr(
                    self.importer, "optim_sources", None) is not None):
                # A Python number in the graph (O.python_scalar; a tensor
                # of several elements raises PyTorch's ValueError there).
                # In an optimizer's step (kiln/_optim.py): Adam's
                # `step_t.item()`, its bias corrections computed in the
                # graph from the step tensor.
                pass
            elif t in ("item", "tolist", "numpy", "__array__"):
                return ("Tensor.%s(): a tensor's value is needed in Python"
                        % t)
            if getattr(torch.Tensor, t, None) in _RANDOM and getattr(
                    torch.Tensor, t, None) not in _CAPTURED_RANDOM:
                return ("Tensor.%s: random numbers are not captured (run "
                        "eagerly)" % t)
        if _breaks.is_disallowed(node):
            return "%s is disallowed in graphs (kiln.disallow_in_graph)" % (
                target_name(node))
        return None

    # --- graph breaks and eager regions

    def may_break(self):
        return self.run is not None and self.eager_depth == 0 and \
            self.run.breaks_allowed()

    def graph_break(self, reason):
        if self.run is None:
            raise self.importer._located(Unsupported, "graph break: %s"
                                         % reason)
        self.run.graph_break(reason)

    def call_eagerly(self, fn, args, kwargs):
        """A call of a kiln.disable'd function: a graph break; `fn` runs
        eagerly on real values (any Python objects may be arguments), and
        the tensors it returns are values of later graphs."""
        reason = "call to %s, disabled by kiln.disable" % getattr(
            fn, "__qualname__", fn)
        return self._run_eagerly(reason, fn.fn, args, kwargs)

    def run_eagerly_for(self, reason, fn, args, kwargs):
        return self._run_eagerly(reason, fn, args, kwargs)

    def _run_eagerly(self, reason, fn, args, kwargs):
        """A graph break for `reason`; `fn` runs eagerly on the real values
        of `args` / `kwargs`, and the tensors it returns are values of later
        graphs (with fullgraph: kiln.Unsupported)."""
        if self.run is None:
            raise self.importer._located(Unsupported, "graph break: %s"
                                         % reason)
        flat, spec = pytree.tree_flatten((args, kwargs))
        needed = [p.node for p in flat if isinstance(p, fx.Proxy)]
        self.run.graph_break(reason, needed)
        real = [self.value(p) if isinstance(p, fx.Proxy) else p
                for p in flat]
        a, k = pytree.tree_unflatten(real, spec)
        with self.eager():
            out = raises_as_eager(fn, *a, **k)
        return self.wrap_real(out)

    def wrap_real(self, out):
        """Real tensors (results of eager code at a break) as proxies of
        nodes whose values are known: later ops on them are captured."""
        leaves, spec = pytree.tree_flatten(out)
        res = []
        for x in leaves:
            if isinstance(x, torch.Tensor):
                node = fx.Tracer.create_node(self, "call_function",
                                             _eager_value, (), {})
                node.meta["kiln_eager"] = True
                self.run.concrete[node] = x
                res.append(self.proxy(node))
            else:
                res.append(x)
        return pytree.tree_unflatten(res, spec)

    @contextlib.contextmanager
    def eager(self):
        """Code run eagerly while tracing (an op at a graph break, a
        disabled function): no proxies, no capture."""
        self.eager_depth += 1
        try:
            yield
        finally:
            self.eager_depth -= 1

    @contextlib.contextmanager
    def no_breaks(self, what):
        if self.run is None:
            yield
            return
        self.run.forbid.append(what)
        try:
            yield
        finally:
            self.run.forbid.pop()

    def constant_result(self, wrapper, args, kwargs):
        """kiln.assume_constant_result: `wrapper.fn` runs once, eagerly;
        its result is a constant of the compiled function."""
        leaves = pytree.tree_flatten((args, kwargs))[0]
        if any(isinstance(x, fx.Proxy) for x in leaves):
            raise self.importer._located(
                Unsupported, "kiln.assume_constant_result: the arguments of "
                "%s must be Python values or real tensors, not values the "
                "captured function computed" % getattr(
                    wrapper.fn, "__qualname__", wrapper.fn))
        owner = self.run.owner if self.run is not None else None
        cache = owner.constant_results if owner is not None else {}
        try:
            key = (id(wrapper), args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = (id(wrapper), tuple(id(x) for x in leaves))
        if key not in cache:
            with self.eager():
                cache[key] = wrapper.fn(*args, **kwargs)
        return cache[key]

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

    # --- assignments to a module's tensors

    def assign_tensor_attr(self, m, name, value):
        """`self.buf = t` in traced code, `t` a traced value, `buf` a buffer
        or parameter of `m`. `self.n += 1` is Python's in-place add on the
        buffer then this assignment of the same tensor: nothing more to do.
        Another tensor assigned to a buffer (`self.n = self.n + 1`) is
        written into it (a copy_, as the buffer is read by name on every
        call; eager PyTorch rebinds the name to the new tensor, the values
        are the same); one of another shape or dtype is refused, as is a
        computed tensor assigned to a parameter (eager raises TypeError)."""
        cur = getattr(m, name)
        if cur is value:
            return
        node = value.node
        inplace = (node.op == "call_function" and node.target in (
            operator.iadd, operator.isub, operator.imul, operator.itruediv,
            operator.ifloordiv, operator.imod, operator.ipow, operator.iand,
            operator.ior, operator.ixor)) or (
            node.op == "call_method" and node.target.endswith("_"))
        if inplace and node.args and isinstance(cur, fx.Proxy) and \
                node.args[0] is cur.node:
            return
        kind = "parameter" if name in m._parameters else "buffer"
        if kind == "parameter":
            raise TypeError(
                "cannot assign a computed tensor as parameter '%s' "
                "(torch.nn.Parameter or None expected)" % name)
        a, b = self.value(cur), self.value(value)
        shape_a = [str(d) for d in a.shape]
        shape_b = [str(d) for d in b.shape]
        if a.dtype != b.dtype or shape_a != shape_b:
            raise self.importer._located(
                Unsupported, "a tensor of shape [%s] and dtype %s assigned "
                "to buffer '%s' of shape [%s] and dtype %s: kiln updates "
                "buffers in place; register a buffer of the new shape "
                "instead" % (", ".join(shape_b), b.dtype, name,
                             ", ".join(shape_a), a.dtype))
        cur.copy_(value)

    def store_in_attribute(self, m, name, value):
        """`self.attn = w` in traced code, `w` a traced value and `attn` a
        plain attribute (not a buffer or parameter): a Python side effect
        that outlives the call (a module keeping its last attention map,
        or a state). A graph break: the graph so far runs and the attribute
        gets the real tensor, on every call, as in eager PyTorch (the
        traced value itself would be left in the module: a proxy that
        fails on the next call). Where breaks are refused (fullgraph):
        kiln.Unsupported."""
        reason = ("a tensor the graph computes is stored in attribute "
                  "'%s' of a %s (a side effect Python runs on every call)"
                  % (name, type(m).__name__))
        v = self.value(value)
        if isinstance(v, Sym):
            return self.static(v, "a size stored in attribute '%s'" % name)
        if isinstance(v, torch.Tensor):
            return v   # a real tensor (an earlier segment)
        if not isinstance(v, TensorVal):
            return value
        if not self.may_break():
            if self.run is not None:
                self.run.check_break(reason)
            raise self.importer._located(
                Unsupported, "%s: a graph break, refused here" % reason)
        return self.run.materialize(value.node, reason)

    # --- Python values of proxies

    def value(self, proxy):
        node = proxy.node
        run = self.run
        if run is not None and not run.in_segment(node) and \
                node in run.concrete:
            return run.concrete[node]  # a real value (an earlier segment)
        if run is not None and run.replaying():
            return run.renv[node]  # the recorded value (a replay)
        return self.importer.env[node]

    def static(self, v, why):
        """A Python int for a size (specialized: see kiln._symbolic). In a
        replay the recording already specialized it; it is the recorded
        size, which the signatures guarantee."""
        if isinstance(v, Sym) and self.run is not None and \
                self.run.replaying():
            return v.value
        return self.importer.static(v, why)

    def concrete(self, proxy, why):
        v = self.value(proxy)
        if is_unbacked(v) and self.may_break():
            # A data-dependent size (x[m].shape[0]) read by Python: a graph
            # break at the tensor that has it; the segment's run gives
            # its real value (Breaks._finish_flush).
            src = self._unbacked_tensor_node(v)
            if src is not None:
                self.run.materialize(
                    src, "a data-dependent size needed as a Python number "
                    "(%s)" % why)
                if proxy.node in self.run.concrete:
                    return self.run.concrete[proxy.node]
        if isinstance(v, Sym):
            return self.static(v, why)
        if isinstance(v, TensorVal):
            reason = "data-dependent control flow: %s of a tensor value" % why
            if why == "a branch on the truth value":
                reason = "generic_jump: " + reason
            if self.may_break():
                # A graph break: the graph so far runs, Python gets the
                # value (a real tensor).
                return self.run.materialize(proxy.node, reason)
            if self.run is not None:
                self.run.check_break(reason)
            raise self.importer._located(
                Unsupported, "%s (the result depends on the tensor's data; "
                "a graph break, refused here)" % reason)
        return v

    def _unbacked_tensor_node(self, size):
        """The latest node of the current segment whose tensor has a dim
        that is one of the unbacked symbols of `size` (None: none)."""
        names = {sid for sid in size.syms if isinstance(sid, str)}
        for n in reversed(self.run.seg_nodes):
            tv = self.run.node_value(n)
            if isinstance(tv, TensorVal) and any(
                    is_unbacked(d) and d.key[0] == "s" and d.key[1] in names
                    for d in tv.shape):
                return n
        return None

    def to_bool(self, obj):
        return bool(self.concrete(obj, "a branch on the truth value"))

    def to_int(self, obj, index=False):
        v = self.concrete(obj, "int()")
        if isinstance(v, torch.Tensor):
            return operator.index(v) if index else int(v)
        if not index and isinstance(v, (bool, float)):
            # int() of a Python number (`.item()` of a float tensor, a
            # size divided): Python's int(2.5) is 2.
            return int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("%r is not an integer" % (v,))
        return v

    def length(self, obj):
        v = self.value(obj)
        if isinstance(v, torch.Tensor):
            return len(v)
        if isinstance(v, TensorVal):
            if v.ndim == 0:
                raise TypeError("len() of a 0-d tensor")
            if is_unbacked(v.shape[0]) and self.may_break():
                # len(x[m]): a graph break, the real tensor's length.
                return len(self.run.materialize(
                    obj.node, "len() of a tensor with a data-dependent "
                    "size"))
            return self.static(v.shape[0], "len() of a tensor")
        return len(v)

    def iter(self, obj):
        v = self.value(obj)
        if isinstance(v, (TensorVal, torch.Tensor)):
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


# Random ops the importer converts (kt.rand / kt.randn / kt.dropout with a
# seed argument drawn from torch's generator on every call: kiln._ops,
# "random numbers"). A method on a tensor that is not traced (a constant
# made at trace time) still breaks: its result could not reach the tensor.
_CAPTURED_RANDOM = set()
for _ns, _names in ((torch, ("rand", "randn", "rand_like", "randn_like",
                             "bernoulli")),
                    (torch.Tensor, ("uniform_", "normal_", "bernoulli",
                                    "bernoulli_"))):
    for _n in _names:
        if hasattr(_ns, _n):
            _CAPTURED_RANDOM.add(getattr(_ns, _n))


def _same_storage(a, b):
    with _no_torch_function_mode():
        try:
            return a.storage().data_ptr() == b.storage().data_ptr()
        except Exception:   # no storage (a sparse or meta tensor)
            return False


# Tensor methods that return Python values about a tensor's metadata, not
# its data (a real tensor's `size()` is guarded with the tensor).
_METADATA_READS = frozenset((
    "size", "dim", "numel", "nelement", "stride", "storage_offset",
    "is_contiguous", "data_ptr", "element_size", "get_device", "ndimension",
    "__len__", "__get__", "is_floating_point", "is_complex", "is_signed",
    "__hash__", "__repr__", "__str__", "__format__", "__torch_function__",
    "type", "is_pinned", "is_shared", "has_names", "_is_view", "is_inference",
    "_version", "is_set_to", "__eq__", "__ne__", "__dir__", "__reduce_ex__",
    "__deepcopy__", "untyped_storage", "storage", "_typed_storage"))


_INPLACE_DUNDERS = frozenset((
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__",
    "__ilshift__", "__irshift__", "__imatmul__", "__setitem__"))
_INPLACE_OPERATORS = frozenset((
    operator.iadd, operator.isub, operator.imul, operator.itruediv,
    operator.ifloordiv, operator.imod, operator.ipow, operator.iand,
    operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.imatmul, operator.setitem))
# In-place methods that change no data.
_METADATA_INPLACE = frozenset(("requires_grad_", "share_memory_",
                               "retain_grad", "rename_"))


def _at_user_line(tracer, message, cls=Unsupported):
    """`cls` (an Unsupported) at the user's line the trace is at."""
    frames = tracer._user_frames()
    where = "%s:%d:%d" % frames[0] if frames else None
    return cls("%s: %s" % (where, message) if where else message, where)


def _written_by_graph(tracer, tensors):
    """Whether one of the real `tensors` is a tensor the program holds and
    the graph has written in place so far. A view of one (`acc[0]`, taken
    while tracing, which reads the value from before the write) cannot be
    made a node: refused (kiln.Unsupported)."""
    written = {id(a.example) for a in tracer.importer.args
               if a.mutated and a.example is not None and
               a.input_index is None and a.qualname is not None}
    fresh = getattr(tracer.importer, "written_fresh", {})
    written |= set(fresh)
    if not written:
        return False
    segment = tracer.run.segment_index if tracer.run is not None else 0
    for t in tensors:
        if id(t) in fresh and fresh[id(t)][1] != segment:
            raise _at_user_line(
                tracer, "a tensor made by the code and written in place "
                "with traced values before a graph break is read after it "
                "(`z = torch.ones(3); z.copy_(x)`, a break, then `z * 3`): "
                "not supported yet (the write happens in the graph before "
                "the break, the tensor keeps its old values); make z from "
                "the traced values (`z = x.clone()`) or write it after the "
                "break")
        if id(t) not in written and any(_same_storage(t, w)
                                        for w, _ in fresh.values()):
            # (`z.detach().copy_(x)` then `z * 3`: z and the written alias
            # are two tensors of the trace over one memory)
            raise _at_user_line(
                tracer, "a tensor that shares memory with one the graph "
                "writes in place (an alias made while kiln captures, e.g. "
                "`z.detach().copy_(x)` of a tensor `z` made by the code, "
                "then `z` read): it would read the value from before the "
                "write; write `z` itself")
        if t._base is not None and id(t._base) in written:
            raise tracer.importer._located(
                Unsupported, "a view of a tensor the graph writes in place, "
                "taken while kiln captures (`acc[0]` of a global `acc` after "
                "`acc.add_(x)`): it would read the value from before the "
                "write; index it after a kiln.graph_break(), or pass the "
                "tensor as an argument")
    return any(id(t) in written for t in tensors)


def _written_in_segment(node):
    """The nodes whose tensors `node` writes in place (an in-place method,
    an augmented assignment, `t[i] = v`, a `_foreach_*_` op, `out=`)."""
    t = node.target
    name = t if node.op == "call_method" else getattr(t, "__name__", "")
    name = name or ""
    targets = []
    args = node.args
    if node.op == "call_function" and t in _INPLACE_OPERATORS or (
            name.endswith("_") and not name.startswith("__") and
            name not in _METADATA_INPLACE and args):
        targets.append(args[0])
        if name.startswith("_foreach_"):
            targets = list(args[0]) if isinstance(
                args[0], (list, tuple)) else targets
    out = node.kwargs.get("out")
    if out is not None:
        targets += pytree.tree_flatten(out)[0]
    return [a for a in targets if isinstance(a, fx.Node)]


def _pending_write(tracer, tensors):
    """Whether one of the real `tensors` (or a view of it, or one it views)
    is the value of an earlier segment (a real tensor at this graph break)
    that a node of the current segment writes in place: the write happens
    when the segment runs, so a read on real tensors now would see the
    value from before it (SGD with nesterov: `buf.mul_(m)` at a break, then
    `.add_(d_p)` in the graph, then `d_p.add(buf)` on the real `buf`)."""
    run = tracer.run
    if run is None or not run.seg_nodes:
        return False
    written = []
    for n in run.seg_nodes:
        if n.op == "get_attr" and n.target.startswith("_kiln_src_"):
            # An optimizer's tensor that a lifted step in the segment reads
            # or writes (kiln._optim.StepLift): a real op on it now, after
            # the step (a `zero_grad()` after `step()`), would run before
            # the step's ops. (Inside the step its ops are nodes.)
            if getattr(tracer.importer, "optim_sources", None) is not None:
                continue
            t = tracer.root.__dict__.get(n.target)
            if isinstance(t, torch.Tensor):
                written.append(t)
            continue
        if n.op not in ("call_method", "call_function"):
            continue
        for w in _written_in_segment(n):
            if not run.in_segment(w) and w in run.concrete and \
                    isinstance(run.concrete[w], torch.Tensor):
                written.append(run.concrete[w])
    return any(t is w or _same_storage(t, w) for t in tensors
               for w in written)


def _read_of_written(tracer, func, args, kwargs):
    """A call on real tensors only (torch runs it now, while tracing) that
    reads a tensor the graph has written in place so far (`acc.add_(x)` on
    a global `acc`, then `acc * 1`): now it would read the value from
    before the program's write, so it is made a node of the graph instead
    (a Proxy of it), which reads the written value. None otherwise."""
    name = getattr(func, "__name__", "") or ""
    if name in _METADATA_READS:
        return None   # (shape, dtype, stride...: no data read)
    leaves = [v for v in pytree.tree_flatten((args, kwargs or {}))[0]
              if isinstance(v, torch.Tensor)]
    if not leaves or any(isinstance(v, fx.Proxy) for v in leaves):
        return None
    if _pending_write(tracer, leaves):
        # The segment so far runs first (a graph break), then `func` on the
        # written values.
        tracer.graph_break(
            "%s reads a tensor that the graph so far writes in place (a "
            "value of an earlier graph, e.g. an optimizer's state)"
            % (name.strip("_") or func))
        return None
    if not _written_by_graph(tracer, leaves):
        return None
    return _call_node(tracer, func, args, kwargs)


def _call_node(tracer, func, args, kwargs):
    """A node (a Proxy) for the torch call `func(*args, **kwargs)`: a
    Tensor method or dunder as a call_method or its `operator` function,
    anything else as a call_function."""
    name = getattr(func, "__name__", "") or ""
    # (A Tensor method wrapped while tracing, _real_tensor_methods_wrapped,
    # is what torch passes as `func`: its __wrapped__ is the method.)
    owner = getattr(getattr(func, "__wrapped__", func), "__objclass__", None)
    if owner is torch._C._TensorBase or name.startswith("__"):
        op = getattr(operator, name.strip("_"), None) \
            if name.startswith("__") else None
        if op is not None:
            return tracer.create_proxy("call_function", op, args,
                                       kwargs or {})
        return tracer.create_proxy("call_method", name, args, kwargs or {})
    return tracer.create_proxy("call_function", func, args, kwargs or {})


def _lifted_call(tracer, func, args, kwargs):
    """A torch call on real tensors only, one of them a tensor of the
    optimizer whose step kiln captures (kiln/_optim.py: a parameter, its
    gradient or state): a node of the graph (a Proxy), which reads the
    tensor from its source on every call, instead of a computation at
    trace time (a constant) or an eager write (a graph break). None
    otherwise (metadata reads stay Python values)."""
    sources = getattr(tracer.importer, "optim_sources", None)
    if sources is None:
        return None
    name = getattr(func, "__name__", "") or ""
    if name in _METADATA_READS or name in _METADATA_INPLACE or \
            name in ("__set__", "__delete__"):
        return None
    leaves = pytree.tree_flatten((args, kwargs or {}))[0]
    if not any((isinstance(v, torch.Tensor) and
                sources.name_of(v) is not None) or
               (isinstance(v, float) and hasattr(v, "_kiln_node"))
               for v in leaves):
        return None
    if any(isinstance(v, fx.Proxy) for v in leaves):
        return None   # (the Proxy's __torch_function__ makes the node)
    return _call_node(tracer, func, args, kwargs)


def _external_write(tracer, func, args, kwargs):
    """Why `func(*args, **kwargs)`, called while tracing with no traced
    value among its arguments, is an in-place write to a real tensor that
    the program neither takes as an argument nor made (an optimizer's
    parameters and state reached through `self.param_groups`, `p.grad`),
    or None. torch would do it once, now, and a program without graph
    breaks would not repeat it (a compiled `optimizer.step` updated the
    parameters on its first call only): such a write is a graph break, so
    it runs eagerly on every call. (With a traced value among the
    arguments the call is a node of the graph: `acc.add_(x)` on a global
    `acc` writes the tensor the program holds.)"""
    name = getattr(func, "__name__", "") or ""
    leaves = pytree.tree_flatten((args, kwargs or {}))[0]
    if any(isinstance(v, fx.Proxy) for v in leaves):
        return None
    targets = []
    if args and isinstance(args[0], torch.Tensor) and (
            name in _INPLACE_DUNDERS or
            (name.endswith("_") and not name.startswith("__") and
             name not in _METADATA_INPLACE)):
        targets.append(args[0])
    if name.startswith("_foreach_") and name.endswith("_") and args and \
            isinstance(args[0], (list, tuple)):
        targets += [t for t in args[0] if isinstance(t, torch.Tensor)]
    out = (kwargs or {}).get("out")
    if out is not None:
        targets += [t for t in pytree.tree_flatten(out)[0]
                    if isinstance(t, torch.Tensor)]
    made = tracer.importer.made_in_trace
    for t in targets:
        if made.get(id(t)) is not t:
            return ("Tensor.%s: an in-place write to a tensor the program "
                    "does not take as an argument (reached through a Python "
                    "object, e.g. an optimizer's parameters or state)" % name)
    return None


class _RandomCalls(TorchFunctionMode):
    """Refuses random number generation while tracing: a call without a
    traced argument (`torch.randn(3)`) would otherwise run once at trace
    time and its values become a constant of the program."""

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _RANDOM and not self.tracer.eager_depth and \
                (kwargs or {}).get("generator") is not None and \
                self.tracer.may_break():
            # FX cannot hold a Generator as an argument: the node's target
            # keeps it (a graph break: it runs eagerly, on that generator).
            kwargs = dict(kwargs)
            target = _WithGenerator(func, kwargs.pop("generator"))
            return self.tracer.create_proxy("call_function", target, args,
                                            kwargs)
        if func in _CAPTURED_RANDOM and not self.tracer.eager_depth and \
                getattr(func, "__objclass__", None) is not \
                torch._C._TensorBase and \
                (kwargs or {}).get("generator") is None:
            # torch.rand(3) has no traced argument: recorded as a node (the
            # importer converts it), never run at trace time.
            return self.tracer.create_proxy("call_function", func, args,
                                            kwargs or {})
        if func in _RANDOM and not self.tracer.eager_depth and \
                self.tracer.may_break():
            # A graph break: the call runs eagerly on every call.
            if getattr(func, "__objclass__", None) is torch._C._TensorBase:
                return self.tracer.create_proxy(
                    "call_method", func.__name__, args, kwargs or {})
            return self.tracer.create_proxy("call_function", func, args,
                                            kwargs or {})
        if func in _RANDOM and not self.tracer.eager_depth:
            frames = self.tracer._user_frames()
            where = "%s:%d:%d" % frames[0] if frames else None
            name = getattr(func, "__name__", str(func))
            owner = "Tensor." if getattr(func, "__objclass__", None) \
                is torch._C._TensorBase else "torch."
            msg = ("%s%s: random numbers are not captured yet (Kiln's random "
                   "ops take explicit seeds)" % (owner, name))
            if (kwargs or {}).get("generator") is not None:
                msg = ("%s%s with a generator= argument: not captured (Kiln "
                       "draws its seeds from torch's default generator)"
                       % (owner, name))
            if self.tracer.run is not None:
                msg += "; a graph break, refused here"
            err = Unsupported("%s: %s" % (where, msg) if where else msg,
                              where)
            err.graph_break = self.tracer.run is not None
            raise err
        if not self.tracer.eager_depth and \
                (kwargs or {}).get("requires_grad") is True and \
                getattr(func, "__objclass__", None) is not \
                torch._C._TensorBase and not any(
                    isinstance(v, fx.Proxy)
                    for v in pytree.tree_flatten((args, kwargs))[0]):
            # A factory making a leaf that requires grad, with no traced
            # argument (`torch.tensor([1.], requires_grad=True)`): eager
            # makes a new leaf on every call. Recorded as a node (never run
            # at trace time, where its value would become a constant of the
            # program); its converter refuses requires_grad=True, so it is
            # a graph break (a located Unsupported with fullgraph=True).
            return self.tracer.create_proxy("call_function", func, args,
                                            kwargs)
        if not self.tracer.eager_depth:
            node = _lifted_call(self.tracer, func, args, kwargs)
            if node is not None:
                return node
            node = _read_of_written(self.tracer, func, args, kwargs)
            if node is not None:
                return node
            why = _external_write(self.tracer, func, args, kwargs)
            if why is not None:
                # A graph break: the write runs eagerly on every call.
                return self.tracer.run_eagerly_for(why, func, args,
                                                   kwargs or {})
        r = func(*args, **(kwargs or {}))
        if not self.tracer.eager_depth:
            self.tracer.note_real_op(func, args, kwargs, r)
        if isinstance(r, torch.Tensor) and not self.tracer.eager_depth:
            # A tensor made from Python data while tracing: a constant
            # (FxImporter.made_in_trace; constant masks index by position).
            self.tracer.importer.made_in_trace[id(r)] = r
        return r


class _WithGenerator:
    """A random function or Tensor method called with `generator=` (the
    target of its graph-break node)."""

    def __init__(self, func, generator):
        self.func, self.generator = func, generator
        self.__name__ = _random_name(func)
        self.__qualname__ = self.__name__

    def __call__(self, *args, **kwargs):
        return self.func(*args, generator=self.generator, **kwargs)


def _eager_value():
    """The target of nodes standing for tensors computed eagerly at a graph
    break (never called)."""
    raise AssertionError("not callable")


def _random_name(func):
    owner = "Tensor." if getattr(func, "__objclass__", None) \
        is torch._C._TensorBase else "torch."
    return owner + getattr(func, "__name__", str(func))


# The tracer of the trace running on this thread (None: none). Tracing
# patches process-wide names (torch.zeros ..., math.*, and torch.fx's own
# nn.Module.__call__ / __getattr__); every patched function checks this
# flag and, on a thread that is not tracing, is the original function, so
# eager PyTorch on other threads is unaffected (test_threads.py).
_active = threading.local()


def global_hook_dicts():
    """nn.Module's global hook dicts (register_module_forward_hook ...):
    forward, forward pre-, backward and backward pre-hooks (empty where
    this PyTorch has no such kind)."""
    return (_nn_module._global_forward_hooks,
            _nn_module._global_forward_pre_hooks,
            getattr(_nn_module, "_global_backward_hooks", None) or {},
            getattr(_nn_module, "_global_backward_pre_hooks", None) or {})


def _backward_hook_dicts(m):
    """The backward hook dicts nn.Module.__call__ reads for `m`: its own
    and the global ones (pre-hooks where this PyTorch has them; read from
    the instance dict: PyTorch 1.13 has none, and getattr would go through
    nn.Module.__getattr__ and its AttributeError on every module of every
    call's guard check)."""
    return (m._backward_hooks, m.__dict__.get("_backward_pre_hooks")) + \
        global_hook_dicts()[2:]


def has_module_hooks(m, global_backward):
    """Whether a call of `m` runs forward, forward pre- or backward hooks of
    its own, or (`global_backward`, computed once by the caller) global
    backward hooks: has_forward_hooks(m) or has_backward_hooks(m) without
    the global forward hooks, for the per-call check of a whole module tree
    (kiln._compile)."""
    return bool(m._forward_hooks or m._forward_pre_hooks or
                m._backward_hooks or m.__dict__.get("_backward_pre_hooks") or
                global_backward)


def _register_hook(t, hook):
    return t.register_hook(hook)


def has_forward_hooks(m):
    """What hooks a module call runs (nn.Module.__call__: the module's own
    and the global ones; forward hooks, pre-hooks and backward hooks), as
    words, or "" for none."""
    kinds = []
    if m._forward_pre_hooks or _nn_module._global_forward_pre_hooks:
        kinds.append("forward pre-hooks")
    if m._forward_hooks or _nn_module._global_forward_hooks:
        kinds.append("forward hooks")
    if any(_backward_hook_dicts(m)):
        kinds.append("backward hooks")
    return " and ".join(kinds)


def has_backward_hooks(m):
    return any(_backward_hook_dicts(m))


def current_tracer():
    """The KilnTracer tracing on this thread, or None."""
    return getattr(_active, "tracer", None)


_MATH_WRAPPERS = {}


def _thread_local(orig, wrapped):
    """`wrapped` on a thread that is tracing, `orig` elsewhere."""
    @functools.wraps(orig)
    def patched(*args, **kwargs):
        if getattr(_active, "tracer", None) is None:
            return orig(*args, **kwargs)
        return wrapped(*args, **kwargs)
    return patched


@contextlib.contextmanager
def _checkpoint_inlined():
    """`torch.utils.checkpoint.checkpoint(fn, *args)` (activation
    checkpointing: recompute fn in the backward instead of keeping its
    activations) traces fn itself: kiln-partition's min-cut decides what the
    backward keeps or recomputes, as TorchDynamo treats checkpoint. Traced
    as PyTorch runs it, fn ran under `no_grad` inside an autograd Function
    (the reentrant form) and its result carried no gradient ("element 0 of
    tensors does not require grad"). Both forms (use_reentrant True and
    False) are patched where `checkpoint` looks them up, so
    `from torch.utils.checkpoint import checkpoint` is covered too;
    `checkpoint_sequential` calls `checkpoint`."""
    import torch.utils.checkpoint as cp

    def reentrant(function, preserve_rng_state, *args):
        return function(*args)

    def without_reentrant(function, preserve_rng_state=True, *args,
                          **kwargs):
        return function(*args, **kwargs)

    cls = cp.CheckpointFunction
    had = "apply" in cls.__dict__
    old_apply = cls.__dict__.get("apply")
    orig_apply = cls.apply
    old_nr = cp._checkpoint_without_reentrant
    if getattr(old_nr, "_kiln_inlined", False):
        yield   # (a nested trace: patched by the outer one)
        return
    cls.apply = staticmethod(_thread_local(orig_apply, reentrant))
    cp._checkpoint_without_reentrant = _thread_local(old_nr,
                                                     without_reentrant)
    cp._checkpoint_without_reentrant._kiln_inlined = True
    try:
        yield
    finally:
        cp._checkpoint_without_reentrant = old_nr
        if had:
            cls.apply = old_apply
        else:
            del cls.apply


@contextlib.contextmanager
def _math_wrapped():
    """What torch.fx's autowrap of the math module does (math.sqrt of a
    Proxy becomes a call_function node), with the wrappers made once: fx
    makes 56 of them (functools.wraps each) on every trace, a large part
    of a replayed call's cost (kiln._breaks)."""
    if not _MATH_WRAPPERS:
        from torch.fx._symbolic_trace import _create_wrapped_func
        for name, value in list(math.__dict__.items()):
            if not name.startswith("_") and callable(value):
                _MATH_WRAPPERS[name] = (value, _thread_local(
                    value, _create_wrapped_func(value)))
    d = math.__dict__
    saved = []
    try:
        for name, (orig, wrapped) in _MATH_WRAPPERS.items():
            if d.get(name) is orig:
                d[name] = wrapped
                saved.append((name, orig))
        yield
    finally:
        for name, orig in saved:
            d[name] = orig


# torch factory functions whose size argument may be a traced value:
# `torch.zeros(x.shape)`, `torch.rand(x.shape[0], 4)` (a size Proxy is no
# tuple of ints to PyTorch's argument parser, which raises before
# __torch_function__ is asked). While tracing they are wrapped: a call with
# a Proxy among its arguments becomes a node, the importer's converter reads
# the sizes (symbolic sizes stay symbolic).
_FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "arange",
              "randint", "randperm")


@contextlib.contextmanager
def _factories_wrapped(tracer):
    def wrap(orig):
        @functools.wraps(orig)
        def factory(*args, **kwargs):
            if getattr(_active, "tracer", None) is not tracer:
                # Another thread (eager PyTorch while this one traces).
                return orig(*args, **kwargs)
            if not tracer.eager_depth and any(
                    isinstance(x, fx.Proxy)
                    for x in pytree.tree_flatten((args, kwargs))[0]):
                if kwargs.get("generator") is not None:
                    raise Unsupported(
                        "torch.%s with a generator= and a traced size: not "
                        "supported yet" % orig.__name__)
                if orig.__name__ in ("arange", "randint", "randperm"):
                    # torch.arange(T, device=x.device): its bounds as they
                    # are (kiln._ops.arange specializes them). randint and
                    # randperm run eagerly at a graph break, on the sizes'
                    # values (kiln._breaks.SegmentRun.eager_value).
                    return tracer.create_proxy("call_function", orig,
                                               tuple(args), kwargs)
                if orig.__name__ == "full":
                    size, rest = args[0], tuple(args[1:])
                elif len(args) == 1:
                    # torch.zeros(x.shape), torch.zeros((n, 4))
                    size, rest = args[0], ()
                else:
                    # torch.zeros(x.size(0), 4)
                    size, rest = tuple(args), ()
                return tracer.create_proxy("call_function", orig,
                                           (size,) + rest, kwargs)
            return orig(*args, **kwargs)
        return factory

    def info(orig):
        # torch.finfo(x.dtype), torch.iinfo(x.dtype): the traced dtype is an
        # attribute Proxy; its value is the example's dtype.
        @functools.wraps(orig, updated=())
        def dtype_info(*args, **kwargs):
            if getattr(_active, "tracer", None) is tracer and not \
                    tracer.eager_depth:
                args, kwargs = pytree.tree_map(
                    lambda a: tracer.concrete(a, orig.__name__ + "()")
                    if isinstance(a, fx.Proxy) else a, (args, kwargs))
            return orig(*args, **kwargs)
        return dtype_info

    saved = []
    try:
        for name in _FACTORIES:
            orig = getattr(torch, name)
            saved.append((name, orig))
            setattr(torch, name, wrap(orig))
        for name in ("finfo", "iinfo"):
            orig = getattr(torch, name)
            saved.append((name, orig))
            setattr(torch, name, info(orig))
        yield
    finally:
        for name, orig in saved:
            setattr(torch, name, orig)


# `isinstance(x, torch.Tensor)` in the user's code, where x is traced: a
# Proxy, which is no Tensor, so the branch for a tensor was never taken
# (`if isinstance(s, torch.Tensor): x * s else: x + s` silently computed the
# other branch). While a thread traces, the user's modules (the traced
# function's, each submodule class's forward's, the closure's: see
# _user_globals) get a global `isinstance` that answers for a traced value
# as for the value it stands for, and torch.is_tensor does the same for
# callers outside torch and kiln. builtins.isinstance itself is not
# replaced: torch.fx and torch's Python code test for Proxies and Tensors
# to dispatch, and a Python-level isinstance under every one of their calls
# made a call with graph breaks 2-3x slower. Making the Proxy claim the
# class (`__class__`) instead crashes PyTorch 1.13's C++ argument parser,
# which then reads the Proxy as a tensor.
_ORIG_ISINSTANCE = builtins.isinstance
_SAMPLE_TENSOR = torch.empty(0)


def _internal_module(name):
    return name is not None and (
        name in ("torch", "kiln") or name.startswith(("torch.", "kiln.")))


_UNKNOWN = object()


def _traced_like(obj):
    """A real object standing for a traced value in isinstance: a tensor
    for a Proxy of a tensor (the parameter itself for a parameter's
    get_attr), an int for a size, the value itself for a Python value the
    tracer holds (a dtype, a tuple of sizes), _UNKNOWN otherwise."""
    tracer = getattr(_active, "tracer", None)
    if tracer is None or getattr(obj, "tracer", None) is not tracer:
        return _UNKNOWN
    node = obj.node
    if node.op == "get_attr":
        # Through the modules' own dicts: attribute access is torch.fx's
        # (a Proxy again) while tracing.
        real = getattr(tracer.importer, "root", None) or tracer.root
        *path, last = node.target.split(".")
        for part in path:
            real = real.__dict__.get("_modules", {}).get(part) \
                if real is not None else None
        if real is not None:
            d = real.__dict__
            t = d.get("_parameters", {}).get(last)
            if t is None:
                t = d.get("_buffers", {}).get(last, d.get(last))
            if _ORIG_ISINSTANCE(t, torch.Tensor):
                return t
    try:
        v = tracer.value(obj)
    except KeyError:
        return _UNKNOWN
    if _ORIG_ISINSTANCE(v, torch.Tensor):
        return v
    if _ORIG_ISINSTANCE(v, TensorVal):
        return _SAMPLE_TENSOR
    if _ORIG_ISINSTANCE(v, Sym):
        return v.value
    if _ORIG_ISINSTANCE(v, fx.Proxy):
        return _UNKNOWN
    return v


def _isinstance(obj, cls):
    """isinstance, in the user's modules while tracing (see above)."""
    if _ORIG_ISINSTANCE(obj, cls):
        return True
    if not _ORIG_ISINSTANCE(obj, fx.Proxy) or \
            getattr(_active, "tracer", None) is None:
        return False
    like = _traced_like(obj)
    return like is not _UNKNOWN and _ORIG_ISINSTANCE(like, cls)


def _is_tensor(obj):
    """torch.is_tensor(x) from the user's code, as isinstance above."""
    if _ORIG_ISINSTANCE(obj, torch.Tensor):
        return True
    # The caller of _thread_local's wrapper.
    if _internal_module(sys._getframe(2).f_globals.get("__name__")):
        return False
    return _isinstance(obj, torch.Tensor)


def _referenced(f):
    """The values function f names: its closure's cells and the globals
    its code (nested code objects included: comprehensions, lambdas, inner
    functions) reads by name (inspect.getclosurevars sees the top code
    object only)."""
    out = []
    for cell in getattr(f, "__closure__", None) or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:
            pass   # (an empty cell)
    g = getattr(f, "__globals__", {})
    seen = set()
    codes = [getattr(f, "__code__", None)]
    while codes:
        co = codes.pop()
        if co is None:
            continue
        for name in co.co_names:
            if name in g and name not in seen:
                seen.add(name)
                out.append(g[name])
        codes.extend(c for c in co.co_consts if inspect.iscode(c))
    return out


def _structure(c):
    """What a container argument holds, by identity: its changes (an item
    added, replaced or removed) show as a different structure."""
    if isinstance(c, (list, tuple)):
        return (type(c), tuple(_structure(x) for x in c))
    if isinstance(c, dict):
        return (type(c), tuple((k, _structure(v)) for k, v in c.items()))
    return id(c)


def _plain_object(v):
    """An instance of a user class that is not a module, function, class,
    tensor or container (a helper object whose methods the code calls)."""
    return not isinstance(v, (type, types.ModuleType, types.FunctionType,
                              types.MethodType, types.BuiltinFunctionType,
                              torch.Tensor, torch.nn.Module, list, tuple,
                              dict, set, frozenset, str, bytes, int, float,
                              complex, bool, type(None))) and \
        hasattr(type(v), "__dict__") and \
        not _internal_module(type(v).__module__)


def _user_code(fn):
    """The user's code a trace of `fn` runs: (functions, module dicts).
    The functions are fn (a module: each of its submodules' classes'
    forward, their hooks, and the methods of plain objects in their
    attributes) and
    those fn's closure and globals name, followed through the functions
    found (a helper that calls a helper, four levels), the methods of plain
    objects they name (`scaler.apply(x)`), and the functions of user
    modules they name (`import mylib` then `mylib.loss(out)`), whose dicts
    are the second list. Torch's, kiln's and Python's standard library's
    code is left out. (kiln._tracer's isinstance patching and
    kiln._stores' search both follow the code this way.)"""
    functions = []
    modules = {}
    seen = set()

    def add(f, depth):
        f = getattr(f, "__func__", f)
        try:
            f = inspect.unwrap(f)
        except ValueError:
            return
        g = getattr(f, "__globals__", None)
        if g is None or _internal_module(g.get("__name__")) or \
                id(f) in seen:
            return
        seen.add(id(f))
        functions.append(f)
        if depth < 4 and inspect.isfunction(f):
            follow(f, depth + 1)

    def add_object(v, depth):
        """A plain object of a user class (`self.helper.f(x)`, `cfg.f`):
        its class's functions."""
        cls = type(v)
        if id(cls) in seen or _internal_module(cls.__module__) or \
                cls.__module__ == "builtins" or \
                cls.__module__.split(".")[0] in sys.stdlib_module_names:
            return
        seen.add(id(cls))
        for klass in cls.__mro__[:-1]:
            for x in vars(klass).values():
                if inspect.isfunction(x):
                    add(x, depth)

    def add_user_module(m, depth):
        if id(m.__dict__) in modules:
            return
        modules[id(m.__dict__)] = m.__dict__
        for x in list(vars(m).values()):
            if inspect.isfunction(x) and x.__module__ == m.__name__:
                add(x, depth)

    def add_module(m):
        for sub in m.modules():
            add(type(sub).forward, 0)
            for k, v in vars(sub).items():
                if not k.startswith("_") and _plain_object(v):
                    add_object(v, 1)
                elif k.startswith("_") and "hook" in k and \
                        isinstance(v, dict):
                    # (forward / pre-forward / backward hooks)
                    for h in list(v.values()):
                        add(h, 1)

    def follow(f, depth):
        for v in _referenced(f):
            if _ORIG_ISINSTANCE(v, torch.nn.Module):
                if depth == 0:
                    add_module(v)
            elif inspect.isfunction(v) or inspect.ismethod(v):
                add(v, depth)
            elif inspect.ismodule(v) and not _internal_module(v.__name__) \
                    and v.__name__.split(".")[0] not in \
                    sys.stdlib_module_names:
                add_user_module(v, depth)
            elif _plain_object(v):
                add_object(v, depth)

    if _ORIG_ISINSTANCE(fn, torch.nn.Module):
        add_module(fn)
        return functions, list(modules.values())
    add(fn, 4)   # (its closure: below)
    owner = getattr(fn, "__self__", None)
    if _ORIG_ISINSTANCE(owner, torch.nn.Module):
        add_module(owner)
    try:
        follow(inspect.unwrap(getattr(fn, "__func__", fn)), 0)
    except ValueError:
        pass
    return functions, list(modules.values())


def _user_globals(fn):
    """The globals dicts of the user's code a trace of `fn` runs
    (_user_code): its functions' globals and the dicts of the user modules
    it names."""
    functions, modules = _user_code(fn)
    found = {}
    for f in functions:
        found[id(f.__globals__)] = f.__globals__
    for d in modules:
        found[id(d)] = d
    return list(found.values())


_MODULE_SETATTR = torch.nn.Module.__setattr__


def _module_setattr(m, name, value):
    t = getattr(_active, "tracer", None)
    if isinstance(value, fx.Proxy) and not t.eager_depth:
        d = m.__dict__
        if name in d.get("_buffers", ()) or name in d.get("_parameters", ()):
            return t.assign_tensor_attr(m, name, value)
        value = t.store_in_attribute(m, name, value)
    return _MODULE_SETATTR(m, name, value)


@contextlib.contextmanager
def _module_setattr_patched():
    """nn.Module.__setattr__ of a traced value to a buffer or parameter:
    KilnTracer.assign_tensor_attr (nn.Module's own refuses a Proxy, and
    its error message, made from the Proxy, failed inside torch.fx)."""
    if torch.nn.Module.__setattr__ is not _MODULE_SETATTR:
        yield   # a nested trace: patched by the outer one
        return
    torch.nn.Module.__setattr__ = _thread_local(_MODULE_SETATTR,
                                                _module_setattr)
    try:
        yield
    finally:
        torch.nn.Module.__setattr__ = _MODULE_SETATTR


@contextlib.contextmanager
def _isinstance_patched(fn):
    patched = []
    for g in _user_globals(fn):
        # A module that defines its own isinstance keeps it; one patched by
        # an outer trace (nested compiles) stays patched by that one.
        if "isinstance" not in g:
            g["isinstance"] = _isinstance
            patched.append(g)
    orig_is_tensor = torch.is_tensor
    nested = getattr(orig_is_tensor, "_kiln_is_tensor", False)
    if not nested:
        torch.is_tensor = _thread_local(orig_is_tensor, _is_tensor)
        torch.is_tensor._kiln_is_tensor = True
    try:
        yield
    finally:
        for g in patched:
            if g.get("isinstance") is _isinstance:
                del g["isinstance"]
        if not nested:
            torch.is_tensor = orig_is_tensor


@contextlib.contextmanager
def _grad_mode_tracked(tracer):
    """Follows the grad mode the traced Python sets (`torch.no_grad()`,
    `torch.enable_grad()`, `torch.set_grad_enabled(m)`, as blocks,
    decorators or calls: all of them call torch._C._set_grad_enabled) in
    `tracer.user_grad` (which starts as the mode the trace began in). The
    C++ mode differs inside a custom
    autograd.Function's forward (Function.apply disables grad in C++):
    kiln differentiates through that forward, so its ops are no barriers,
    while ops of a no_grad block are (kg.stop_gradient)."""
    orig = torch._C._set_grad_enabled

    def set_grad_enabled(mode):
        current = getattr(_active, "tracer", None)
        if current is not None:
            current.user_grad = bool(mode)
        return orig(mode)
    nested = getattr(orig, "_kiln_grad_tracked", False)
    if not nested:
        set_grad_enabled._kiln_grad_tracked = True
        torch._C._set_grad_enabled = set_grad_enabled
    try:
        yield
    finally:
        if not nested:
            torch._C._set_grad_enabled = orig


def trace(root, fn, importer, concrete_args, run=None):
    """Traces `fn` (a module, or a function) with KilnTracer; every node is
    imported as it is created. Returns the GraphModule (with graph breaks,
    `run` a kiln._breaks.SegmentRun: the tracer's root module, the graph
    having been run segment by segment)."""
    root_fn = fn.forward if isinstance(fn, torch.nn.Module) else fn
    tracer = KilnTracer(importer, root_fn, run)
    # (what kiln._stores searches for stored traced tensors)
    tracer.traced = fn
    if isinstance(fn, torch.nn.Module):
        importer.root = fn
    with _constants_kept_off(fn, importer):
        return _trace(tracer, root_fn, fn, concrete_args, run)


@contextlib.contextmanager
def _constants_kept_off(fn, importer):
    """torch.fx stores the tensor constants of a trace (`torch.zeros(3)`
    made by the code, a global tensor) as `_tensor_constant<k>` attributes
    of the traced root: for a compiled module, the user's module, which
    kept them (and every recapture's) for good. They stay there while
    tracing (segments read them) and are moved into
    `importer.module_constants` after; programs read them there."""
    if not isinstance(fn, torch.nn.Module):
        yield
        return
    before = set(fn.__dict__)
    try:
        yield
    finally:
        found = {k: fn.__dict__[k] for k in list(fn.__dict__)
                 if k not in before and k.startswith("_tensor_constant")}
        for k in found:
            del fn.__dict__[k]
        # (in place: the programs of the graph breaks' segments share the
        # dict, and the last segment runs after the trace)
        importer.module_constants.update(found)


# Methods of a real tensor (a global, a closure tensor, a constant the code
# made) that take sizes: given a traced size (`c.expand(t.shape[0], 3)`),
# torch's argument parser raises a TypeError before __torch_function__ is
# asked, so they are wrapped while tracing (_real_tensor_methods_wrapped).
_SIZED_METHODS = ("expand", "view", "reshape", "repeat", "tile", "new_zeros",
                  "new_ones", "new_empty", "new_full", "narrow", "unflatten",
                  "expand_as", "view_as", "reshape_as",
                  # `value=` is a Number to the parser: a traced Python
                  # number (Adam's `value=-step_size` from `step_t.item()`)
                  "addcdiv_", "addcmul_", "addcdiv", "addcmul")
# Reflected operators that are C descriptors of torch._C._TensorBase (the
# others, __rsub__, __rpow__, ..., are Python functions of torch.Tensor
# that ask __torch_function__): called unbound on a traced value
# (`torch.Tensor.__radd__(x, 2)`, what OpInfo's __radd__ runs) they raise
# "descriptor '__radd__' ... doesn't apply to a 'KilnProxy' object", so
# they are wrapped while tracing too.
_REFLECTED_C = ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__")
# torch functions that take sizes: given a symbolic size (a dynamic dim is a
# Proxy) the same TypeError even on a traced tensor (`torch.reshape(x,
# (x.shape[0], -1))` with a dynamic batch).
_SIZED_FUNCTIONS = ("reshape", "broadcast_to", "narrow", "tile")


@contextlib.contextmanager
def _real_tensor_methods_wrapped(tracer):
    """While tracing, on real tensors: indexing (`T[1:]`, `T[[0, 2]]`) does
    not reach a __torch_function__ mode in torch 1.13, so Tensor.__getitem__
    is wrapped for its result to be known to derive from the indexed tensor
    (KilnTracer.note_real_op); the _SIZED_METHODS given a traced value
    record a node instead of raising. Traced values are Proxies, with
    their own methods."""
    def ours():
        return getattr(_active, "tracer", None) is tracer and \
            not tracer.eager_depth

    def getitem_of(orig):
        @functools.wraps(orig)
        def getitem(self, index):
            if isinstance(self, fx.Proxy):
                # torch.Tensor.__getitem__(x, i) on a traced x (the C
                # descriptor refuses a Proxy): indexing the Proxy.
                return self[index]
            if ours() and not tracer.eager_depth:
                # (`z[1]` of a tensor made by the code that the graph has
                # written: a node reading the written value)
                node = _read_of_written(tracer, orig, (self, index), None)
                if node is not None:
                    return node
            r = orig(self, index)
            if ours():
                tracer.note_real_op(getitem, (self, index), None, r)
            return r
        return getitem

    def sized_of(name, orig):
        @functools.wraps(orig)
        def sized(self, *args, **kwargs):
            if ours() and any(isinstance(a, fx.Proxy) for a in
                              pytree.tree_flatten((args, kwargs))[0]):
                return tracer.create_proxy("call_method", name,
                                           (self,) + args, kwargs)
            return orig(self, *args, **kwargs)
        return sized

    def reflected_of(name, orig):
        @functools.wraps(orig)
        def reflected(self, *args, **kwargs):
            if isinstance(self, fx.Proxy):
                # torch.Tensor.__radd__(x, 2) on a traced x: the C
                # descriptor refuses a Proxy; the Proxy's own __radd__.
                return getattr(self, name)(*args, **kwargs)
            return orig(self, *args, **kwargs)
        return reflected

    def sized_function_of(orig):
        @functools.wraps(orig)
        def sized(*args, **kwargs):
            if ours() and any(isinstance(a, fx.Proxy) for a in
                              pytree.tree_flatten((args, kwargs))[0]):
                return tracer.create_proxy("call_function", orig, args,
                                           kwargs)
            return orig(*args, **kwargs)
        return sized

    saved = []
    funcs = []
    try:
        for name in ("__getitem__",) + _SIZED_METHODS:
            orig = getattr(torch.Tensor, name)
            saved.append((name, orig, name in torch.Tensor.__dict__))
            setattr(torch.Tensor, name, getitem_of(orig)
                    if name == "__getitem__" else sized_of(name, orig))
        for name in _REFLECTED_C:
            orig = getattr(torch.Tensor, name)
            saved.append((name, orig, name in torch.Tensor.__dict__))
            setattr(torch.Tensor, name, reflected_of(name, orig))
        for name in _SIZED_FUNCTIONS:
            orig = getattr(torch, name)
            funcs.append((name, orig))
            setattr(torch, name, sized_function_of(orig))
        yield
    finally:
        for name, orig in reversed(funcs):
            setattr(torch, name, orig)
        for name, orig, had in reversed(saved):
            if had:
                setattr(torch.Tensor, name, orig)
            else:
                delattr(torch.Tensor, name)


def _trace(tracer, root_fn, fn, concrete_args, run):
    from . import _breaks
    outer = getattr(_active, "tracer", None)
    _active.tracer = tracer
    try:
        with _breaks.tracing(tracer), _RandomCalls(tracer), \
                _math_wrapped(), _factories_wrapped(tracer), \
                _checkpoint_inlined(), \
                _isinstance_patched(fn), _grad_mode_tracked(tracer), \
                _module_setattr_patched(), _real_tensor_methods_wrapped(tracer):
            graph = tracer.trace(fn, concrete_args=concrete_args)
    except KilnError:
        raise
    except Exception as e:
        # Anything else the traced Python raised (a Proxy used where a real
        # tensor is needed, an error of the user's code, PyTorch's check of
        # an argument): an Unsupported error at the innermost user line of
        # the traceback. A frame of PyTorch's own Python (torch.nn.functional
        # checking a stride) is not the user's line: the error is at the
        # user's call and names the PyTorch function that raised.
        tb = [f for f in traceback.extract_tb(e.__traceback__)
              if not _skipped(f.filename)]
        user = [f for f in tb if not _in_torch(f.filename)]
        frame = (user or tb or [None])[-1]
        where = "%s:%d:%d" % (frame.filename, frame.lineno,
                              (frame.colno or 0) + 1) if frame else None
        msg = "cannot trace %s: %s: %s" % (
            getattr(root_fn, "__qualname__", root_fn), type(e).__name__, e)
        if user and tb[-1] is not user[-1]:
            inner = tb[-1]
            msg += " (raised in %s, %s:%d)" % (
                inner.name, os.path.relpath(inner.filename,
                                            os.path.dirname(_TORCH_DIR)),
                inner.lineno)
        # A TypeError of an op run eagerly at a graph break is eager's, as
        # is one PyTorch's argument parser raised at the user's call of a
        # torch function (`torch.maximum(x, 7)`): still a TypeError for the
        # caller.
        cls = ArgumentTypeError if isinstance(e, TypeError) and (
            getattr(e, "kiln_eager_op", False) or parser_refused(e)) \
            else Unsupported
        err = cls("%s: %s" % (where, msg) if where else msg, where)
        # Graphs before a break ran with real values (and their writes):
        # kiln._compile's _eager_or_user_error reads this.
        err.segments_ran = bool(run is not None and run.breaks)
        raise err from e
    finally:
        _active.tracer = outer
    if run is not None and run.breaks:
        return tracer.root
    return fx.GraphModule(tracer.root, graph)
