"""kiln.compile and friends: the torch.compile-style API.

`compile(fn_or_module)` returns a wrapper (`OptimizedModule` for modules)
that, on each call:

1. computes a Python-level key: the structure of the arguments, the values
   of non-tensor arguments (specialized, as TorchDynamo does), the
   modules' training flags. Each key has its own captured program in its own
   Kiln session;
2. on the first call of a key, traces the function (kiln._tracer) and
   imports it (kiln._fx_import) into a kg.program whose tensor arguments are
   the tensor inputs, then the parameters and buffers it reads; loads it,
   and marks static the input dims the capture specialized and every dim of
   parameters and buffers (kilnSessionMarkStatic);
3. calls the program with the tensors (DLPack, no copies); the session's
   guards, cache, recompile reasons and automatic dynamic shapes apply.
   A cache miss re-captures with the new inputs (the on-miss callback), as
   TorchDynamo re-traces on a guard failure. After `cache_size_limit`
   entries, a miss runs the original Python function eagerly, with one
   warning listing the recompile reasons.

Results come back as torch tensors that own Kiln's buffers (no copy).
"""

import builtins
import contextlib
import functools
import inspect
import itertools
import re
import sys
import threading
import time
import warnings
import weakref

import torch
import torch.fx as fx
from torch.nn.modules import module as _nn_module
from torch.utils import _pytree as pytree

from . import (_breaks, _capi, _fx_import, _guards, _ir, _logs, _optim,
               _tracer, _training)
from ._errors import KilnError, SpecializationError, Unsupported

# backend name -> (session backend, pipeline)
_BACKENDS = {
    "eager": ("eager", "kiln-eager"),
    "aot_eager": ("eager", "kiln-aot-eager"),
    # cpu: kt.cross_entropy and kt.log_softmax stay whole ops: each is one
    # kernel over blocks of rows, and cross_entropy's backward (its VJP:
    # glp - exp(log_softmax(x)) * s) one pass writing the gradient
    # (docs/codegen.md, "cross_entropy"; docs/python.md).
    "cpu": ("cpu", "kiln-aot-eager{fold-conv-bn=true "
            "keep=kt.cross_entropy,kt.log_softmax},kiln-cpu"),
}
_MODES = (None, "default", "reduce-overhead", "max-autotune",
          "max-autotune-no-cudagraphs")
# Session options that `options=` may set (kilnSessionSetOption).
_OPTIONS = ("pipeline", "cpu_fallback", "frozen", "freezing")


class KilnWarning(UserWarning):
    """Warnings of the kiln package (cache limit reached, errors
    suppressed)."""


class _Config:
    """kiln.config: the torch._dynamo.config settings kiln honours.

    * cache_size_limit (8): entries per compiled function and argument
      structure before a miss runs eagerly instead of recompiling;
    * automatic_dynamic_shapes (True): a dim whose size changed is compiled
      dynamic on the next recompile (False: every new size recompiles);
    * verbose (False): print each capture and recompile (with its reason)
      to stderr;
    * suppress_errors (False): a function kiln cannot capture or compile
      runs eagerly, with a warning, instead of raising;
    * capture_scalar_outputs (False): `x.item()` in traced code stays in the
      graph (a Python number the program computes, handed back as one where
      the function returns it) instead of a graph break, as TorchDynamo's
      setting of that name (docs/python.md, "Graph breaks").
    """

    __slots__ = ("cache_size_limit", "automatic_dynamic_shapes", "verbose",
                 "suppress_errors", "capture_scalar_outputs")

    def __init__(self):
        self.cache_size_limit = 8
        self.automatic_dynamic_shapes = True
        self.verbose = False
        self.suppress_errors = False
        self.capture_scalar_outputs = False

    def __setattr__(self, name, value):
        if name not in self.__slots__:
            raise AttributeError("kiln.config has no setting %r (settings: "
                                 "%s)" % (name, ", ".join(self.__slots__)))
        if name == "cache_size_limit" and (
                not isinstance(value, int) or value < 1):
            raise ValueError("kiln.config.cache_size_limit must be a "
                             "positive int")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return "kiln.config(%s)" % ", ".join(
            "%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


config = _Config()

_compiled = weakref.WeakSet()
_lock = threading.RLock()


def list_backends():
    """The backend names `compile` takes."""
    return sorted(_BACKENDS)


def reset():
    """Forgets every compiled program (torch._dynamo.reset): the next call
    of any compiled function captures and compiles again."""
    for c in list(_compiled):
        c.reset()


def mark_dynamic(t, index):
    """torch._dynamo.mark_dynamic: dim `index` of tensor `t` is compiled
    dynamic from its first compile (no recompile when it changes). A
    capture that needs that size as a number raises SpecializationError."""
    dims = getattr(t, "_kiln_dynamic_dims", None)
    if dims is None:
        dims = set()
        t._kiln_dynamic_dims = dims
    for i in ([index] if isinstance(index, int) else index):
        if not -t.dim() <= i < t.dim():
            raise IndexError("dim %d out of range for a tensor of rank %d"
                             % (i, t.dim()))
        dims.add(i % t.dim())
        getattr(t, "_kiln_static_dims", set()).discard(i % t.dim())


def mark_static(t, index=None):
    """torch._dynamo.mark_static: dim `index` (every dim when None) of `t`
    stays static: each new size recompiles."""
    dims = getattr(t, "_kiln_static_dims", None)
    if dims is None:
        dims = set()
        t._kiln_static_dims = dims
    indices = range(t.dim()) if index is None else (
        [index] if isinstance(index, int) else index)
    for i in indices:
        dims.add(i % t.dim())
        getattr(t, "_kiln_dynamic_dims", set()).discard(i % t.dim())


def _symbol_name(name):
    name = re.sub(r"[^A-Za-z0-9_]", "_", name) or "fn"
    if name[0].isdigit():
        name = "_" + name
    return name



@functools.lru_cache(maxsize=4096)
def _qualname_parts(qualname):
    """`qualname` split at its dots (once: the per-call lookups of a
    module's parameters and buffers, kiln._compile's tensors / attr)."""
    return tuple(qualname.split("."))

def _is_tensor(x):
    return isinstance(x, torch.Tensor)


def _module_tree(roots):
    """The modules of each root's tree in the order of Module.modules() (pre-
    order, each module once, the roots' trees concatenated with modules seen
    in an earlier root's tree left out), read straight from the _modules
    dicts: the per-call module-tree check (_Compiled._key) without
    named_modules' qualified names."""
    out = []
    seen = set()
    for root in roots:
        stack = [root]
        while stack:
            m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            out.append(m)
            children = [c for c in m.__dict__["_modules"].values()
                        if c is not None]
            children.reverse()
            stack.extend(children)
    return out


# The key entry of the guarded Python values (kiln/_guards.py): last.
_GUARDS = "python values"


class _CacheLimit(Exception):
    pass


class _AliasedArguments(Exception):
    """A call whose tensor arguments share memory with one the program
    writes in place (f(a, a[0]) writing its second argument): the program
    was captured for separate tensors, so the call runs eagerly."""


def _extent(t):
    """The bytes [start, end) that tensor t's elements occupy."""
    if t.numel() == 0:
        return None
    # (PyTorch strides are never negative.)
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()


def _aliased_write(args, tensors):
    """(written argument's name, other argument's name) of the first pair
    of arguments that share memory where the program writes one of them,
    else None."""
    written = [j for j, a in enumerate(args) if a.mutated]
    if not written:
        return None
    for j in written:
        t = tensors[j]
        if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
            # An expanded tensor written in place: eager PyTorch refuses
            # (at::assert_no_internal_overlap); the program would write one
            # of its values for several elements.
            raise RuntimeError(
                "unsupported operation: more than one element of the "
                "written-to tensor refers to a single memory location. "
                "Please clone() the tensor before performing the "
                "operation. (argument '%s' of a kiln program that writes "
                "it in place)" % args[j].name)
    # Pairs with a user input on one side (the module's own parameters and
    # buffers do not overlap each other): a few extents per call.
    inputs = [k for k, a in enumerate(args) if a.is_input]
    extents = {}

    def extent(k):
        if k not in extents:
            extents[k] = _extent(tensors[k])
        return extents[k]

    for j in written:
        w = extent(j)
        if w is None:
            continue
        for k in (range(len(args)) if args[j].is_input else inputs):
            e = extent(k) if k != j else None
            if e is not None and e[0] < w[1] and w[0] < e[1]:
                return args[j].name, args[k].name
    return None


class _Ran:
    """A call that ran with graph breaks: its output and the run."""

    def __init__(self, value, run):
        self.value = value
        self.run = run


def _no_grad_body(gm):
    """Whether every op of a captured graph was made with grad disabled
    by the traced code (an optimizer's step, under its own
    `torch.no_grad()`): the program then runs as an inference call that
    writes its arguments, also when called with grad enabled and
    parameters that require grad, as eager runs the step."""
    return _no_grad_nodes(gm.graph.nodes)


def _no_grad_nodes(nodes):
    # (torch.fx's asserts on concrete arguments, `closure=None` of a step,
    # `torch._assert(i == 3, ...)` of a Python number argument of a training
    # step and the comparison it checks, are made before the step's
    # no_grad: no ops of the program.)
    nodes = list(nodes)
    checks = set()
    for n in reversed(nodes):
        if n.op == "call_function" and (
                n.target is fx._symbolic_trace._assert_is_none or
                n.target is torch._assert or
                (n.users and all(u in checks for u in n.users))):
            checks.add(n)
    ops = [n for n in nodes
           if n.op in ("call_function", "call_method", "call_module") and
           n not in checks]
    return bool(ops) and all(n.meta.get("kiln_grad") is False for n in ops)


class _Program:
    """One captured program (one argument structure of one compiled
    function, or one segment of a function with graph breaks) in its own
    session."""

    root = None  # where a segment's attributes are read (else the owner's)

    def __init__(self, owner, name, bound_flat, concrete, text_of):
        self.owner = owner
        self.name = name
        self.session = _capi.Session()
        backend, pipeline = owner.backend_spec
        self.session.set_option("backend", backend)
        self.session.set_option("pipeline", owner.options.get("pipeline",
                                                              pipeline))
        for k in ("cpu_fallback", "frozen"):
            if k in owner.options:
                self.session.set_option(k, owner.options[k])
        # kiln applies cache_size_limit itself (a miss past it runs the
        # Python function eagerly); the session never stops compiling.
        self.session.set_option("cache_size_limit", str(1 << 30))
        self.session.set_option("dynamic", owner.dynamic_mode())
        self.session.set_warning_callback(self._warning)
        self.session.set_miss_callback(self._on_miss)
        self.limit_warned = False
        self.compiles = 0
        self.current = None  # the flat tensors of the call in progress
        self.marked = set()
        self.result = None
        self.fresh_text = None
        self.text_of = text_of
        self.result = self.text_of(bound_flat, "")
        self.session.load(self.result.text, "%s.mlir" % name)
        self.fresh_text = self.result.text
        # options={"freezing": True} (PyTorch's freezing): the module's
        # parameters and buffers that the program only reads are constant
        # arguments; the runtime computes what depends on them alone once
        # (batch norm folded into weights, weights packed for oneDNN) and
        # again when one is replaced (its address) or updated in place (its
        # version counter, checked per call below).
        self.constant_args = []
        if owner.options.get("freezing"):
            self.constant_args = [
                j for j, a in enumerate(self.result.args)
                if not a.is_input and not a.seed and not a.mutated]
        self.constant_spec = ",".join(str(j) for j in self.constant_args)
        self.constant_versions = None
        if self.constant_args:
            self.session.set_option("constant_args", self.constant_spec)
        self._apply_marks(self.result)
        # The capture of each cache entry, in compile order (the runtime's
        # entry index): captures for different inputs may lay out outputs
        # differently, so results are mapped by the capture of the entry
        # that ran (kilnSessionGetLastEntry). The fallback (frozen) runs the
        # loaded program: `loaded`.
        self.loaded = self.result
        self.layouts = []
        self.pending = None  # the capture an on-miss call just returned
        self._plan = None  # _owner_plan's (tree, capture, owners)
        self._held_args = None  # _held's (capture, flags)

    # --- capture

    def _apply_marks(self, result):
        for j, a in enumerate(result.args):
            if not a.is_input:
                for d in range(a.example.dim()):
                    self._mark(j, d, False)
        index = {a.input_index: j for j, a in enumerate(result.args)
                 if a.is_input}
        for (i, d) in result.specialized:
            if i in index:
                self._mark(index[i], d, False)

    def _mark(self, j, d, dynamic):
        if (j, d, dynamic) in self.marked:
            return
        self.marked.add((j, d, dynamic))
        (self.session.mark_dynamic if dynamic else self.session.mark_static)(
            self.name, j, d)

    def _on_miss(self, program, reason):
        if self.fresh_text is not None and not reason:
            text, self.fresh_text = self.fresh_text, None
            self.compiles += 1
            self.pending = self.loaded
            return text
        self.fresh_text = None
        if self.compiles >= config.cache_size_limit:
            raise _CacheLimit(reason)
        if config.verbose:
            print("kiln: recompiling @%s: %s" % (self.name, reason),
                  file=sys.stderr)
        result = self.text_of(self.current_flat, reason)
        if [a.name for a in result.args] != [a.name for a in
                                              self.result.args]:
            raise KilnError(
                "re-capturing @%s for new inputs read other tensors than "
                "the first capture (%s vs %s); call kiln.reset()" % (
                    self.name, [a.name for a in result.args],
                    [a.name for a in self.result.args]))
        self.result = result
        self._apply_marks(result)
        self.compiles += 1
        self.pending = result
        return result.text

    def _warning(self, message):
        warnings.warn("kiln: " + message, KilnWarning, stacklevel=3)

    # --- calls

    def _owner_plan(self):
        """Per argument, the module owning it and its name there (None for
        arguments that are not a module attribute read through the compiled
        module's tree), for the module tree of the owner's last call
        (_Compiled._key checks the tree on every call before this runs)."""
        owner = self.owner
        tree = getattr(owner, "tree_modules", None)
        if tree is None or owner.module is None or self.root is not None \
                or getattr(self.result, "root", None) is not None:
            return None
        plan = self._plan
        if plan is not None and plan[0] is tree and plan[1] is self.result:
            return plan[2]
        consts = self.result.constants
        owners = []
        for a in self.result.args:
            if a.is_input or a.seed or a.qualname in consts:
                owners.append(None)
                continue
            parts = _qualname_parts(a.qualname)
            obj = owner.module
            try:
                for part in parts[:-1]:
                    obj = _fx_import.raw_getattr(obj, part)
            except AttributeError:
                obj = None
            owners.append((obj, parts[-1])
                          if isinstance(obj, torch.nn.Module) else None)
        self._plan = (tree, self.result, owners)
        return owners

    def _held(self):
        """Per argument, whether it is read from the module or the capture
        (a parameter, buffer or constant, not a call input or a seed): the
        ones whose DLPack exports the session keeps between calls."""
        held = self._held_args
        if held is None or held[0] is not self.result:
            held = self._held_args = (self.result, [
                not (a.is_input or a.seed) for a in self.result.args])
        return held[1]

    def tensors(self, flat_inputs):
        """The program's tensor arguments for these inputs. A module
        attribute read through the compiled module's tree comes from its
        owning module's _parameters / _buffers (raw_getattr's first two
        tables; _owner_plan) without walking its qualified name again."""
        owners = self._owner_plan() or itertools.repeat(None)
        out = []
        for a, o in zip(self.result.args, owners):
            t = None
            if o is not None:
                module, leaf = o
                d = module.__dict__
                t = d["_parameters"].get(leaf)
                if t is None:
                    t = d["_buffers"].get(leaf)
                if not isinstance(t, torch.Tensor):
                    t = None
            out.append(t if t is not None else self._argument(a, flat_inputs))
        return out

    def _argument(self, a, flat_inputs):
        """The tensor of argument `a` for these inputs, found the long way."""
        if a.is_input:
            return flat_inputs[a.input_index]
        if a.seed:
            return _fx_import.new_seed()  # a new draw every call
        sources = getattr(self.result, "sources", None)
        if sources is not None and _optim.is_lifted_name(a.qualname):
            # An optimizer's tensor, read from where it lives now (kiln/
            # _optim.py): a new `p.grad` object after zero_grad(set_to_none).
            return sources.resolve(a.qualname)
        consts = self.result.constants
        if a.qualname in consts:
            return consts[a.qualname]
        root = self.root if self.root is not None else \
            getattr(self.result, "root", None)
        if root is None:
            return self.owner.attr(a.qualname)
        obj = root
        for part in _qualname_parts(a.qualname):
            obj = _fx_import.raw_getattr(obj, part)
        return obj

    def call(self, flat_inputs):
        # Checks of sizes the program needs that a dynamic dim may break
        # (BatchNorm's more than one value per channel in training).
        _fx_import.check_sizes(self.result, flat_inputs)
        tensors = self.tensors(flat_inputs)
        pair = _aliased_write(self.result.args, tensors)
        if pair is not None:
            e = _AliasedArguments(
                "arguments '%s' and '%s' share memory and the program "
                "writes '%s' in place; it was captured for tensors that do "
                "not overlap, so this call runs eagerly (PyTorch)"
                % (pair[1], pair[0], pair[0]))
            e.pair = pair   # (written argument, the other)
            raise e
        if torch.is_grad_enabled() and not getattr(
                self.result, "no_grad_body", False) and any(
                    t.requires_grad for t in tensors):
            # Training: forward and backward programs in an autograd
            # Function (kiln._training).
            trained = _training.call(self, flat_inputs, tensors)
            if trained is not None:
                capture, results = trained
                return self.unflatten(capture, results, tensors)
        for j, a in enumerate(self.result.args):
            if a.is_input:
                t = tensors[j]
                for d in getattr(t, "_kiln_dynamic_dims", ()):
                    self._mark(j, d, True)
                for d in getattr(t, "_kiln_static_dims", ()):
                    self._mark(j, d, False)
        if self.constant_args:
            versions = [tensors[j]._version for j in self.constant_args]
            if versions != self.constant_versions:
                if self.constant_versions is not None:
                    # Updated in place: what was computed from them is stale.
                    self.session.set_option("constant_args",
                                            self.constant_spec)
                self.constant_versions = versions
        self.current_flat = flat_inputs
        self.pending = None
        try:
            results = self.session.call(
                self.name, tensors, [t.requires_grad for t in tensors],
                held=self._held())
        finally:
            self.current_flat = None
        _capi.Session.distinct(results)
        return self.unflatten(self.layout_of_last_call(), results, tensors)

    def capture_for(self, flat_inputs, tensors, dynamic=False):
        """A capture (ImportResult) for these inputs: the latest one when
        its arguments have these shapes and dtypes, else a new trace.
        `dynamic`: a new trace whose types are `?` where they derive from a
        dim marked dynamic (a dynamic training pair)."""
        if not dynamic and all(
                tuple(a.example.shape) == tuple(t.shape) and
                a.example.dtype == t.dtype
                for a, t in zip(self.result.args, tensors)):
            return self.result
        result = self.text_of(flat_inputs, _training.DYNAMIC_CAPTURE
                              if dynamic else "training inputs")
        if [a.name for a in result.args] != [a.name for a in
                                              self.result.args]:
            raise KilnError(
                "re-capturing @%s for new inputs read other tensors than "
                "the first capture; call kiln.reset()" % self.name)
        return result

    def layout_of_last_call(self):
        """The capture (ImportResult) of the cache entry that ran the last
        call."""
        entry = self.session.last_entry(self.name)
        if self.pending is not None and entry == len(self.layouts):
            self.layouts.append(self.pending)
        self.pending = None
        if entry < 0:
            return self.loaded
        if entry >= len(self.layouts):
            raise KilnError("internal error: @%s ran cache entry %d, but "
                            "kiln knows the captures of %d entries"
                            % (self.name, entry, len(self.layouts)))
        return self.layouts[entry]

    @staticmethod
    def unflatten(layout, results, tensors):
        """The function's output from a call's results, as `layout` (the
        capture that ran) places them."""
        leaves = []
        for kind, v in layout.output_leaves:
            if kind == "result":
                leaves.append(results[v])
            elif kind == "item":
                # A Python number (`.item()` in the program): int, float or
                # bool by the 0-d result's dtype, as PyTorch's .item().
                leaves.append(results[v].item())
            elif kind == "arg":
                leaves.append(tensors[v])
            elif kind == "fresh":
                leaves.append(tensors[v].clone())
            else:
                leaves.append(v)
        return pytree.tree_unflatten(leaves, layout.output_spec)

    def stats(self):
        return self.session.stats(self.name)

    def recompile_reasons(self):
        return self.session.recompile_reasons(self.name)


def _as_function(fn):
    """A plain function with fn's signature (a bound method's without its
    object, a partial's remaining parameters) that calls fn. No defaults:
    every call passes every parameter (calls are bound with defaults
    applied). Its name is fn's; no __wrapped__ (torch.fx unwraps)."""
    sig = inspect.signature(fn)
    params, call = [], []
    star = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            params.append("*" + p.name)
            call.append("*" + p.name)
            star = True
        elif p.kind == p.VAR_KEYWORD:
            params.append("**" + p.name)
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            params.append(p.name)
            call.append("%s=%s" % (p.name, p.name))
        else:
            params.append(p.name)
            call.append(p.name)
    env = {"_fn": fn}
    exec(builtins.compile("def _kiln_call(%s):\n    return _fn(%s)\n" % (
        ", ".join(params), ", ".join(call)), "<kiln>", "exec"), env)
    wrapper = env["_kiln_call"]
    target = getattr(fn, "__func__", getattr(fn, "func", fn))
    wrapper.__name__ = getattr(target, "__name__", "fn")
    wrapper.__qualname__ = getattr(target, "__qualname__", wrapper.__name__)
    return wrapper


def _module_slots(fn):
    """Where the modules `fn` names live, to be read again on every call:
    ("cell", cell) for a closure cell, ("global", dict, name) for a
    global (the names of its code and nested code), ("fixed", module) for
    a module held by a functools.partial (its arguments) or a bound
    method's object (the object when a module, else the modules among its
    attributes: `self.encoder(x)` in a helper object's method). A name
    rebound to another module (`d = nn.Linear(..)` after compiling a lambda
    that calls `d`) is then seen: the module tree changes, the call
    recaptures and the guards are found again. One walk: the modules are
    the slots' current contents (`_current_closure_modules`)."""
    slots = []

    def fixed(v):
        if isinstance(v, torch.nn.Module) and \
                not any(_slot_module(s) is v for s in slots):
            slots.append(("fixed", v))

    def walk(f):
        if isinstance(f, functools.partial):
            walk(f.func)
            for v in list(f.args) + list(f.keywords.values()):
                fixed(v)
            return
        if inspect.ismethod(f):
            walk(f.__func__)
            obj = f.__self__
            for v in [obj] if isinstance(obj, torch.nn.Module) else list(
                    getattr(obj, "__dict__", {}).values()):
                fixed(v)
            return
        try:
            f = inspect.unwrap(f)
        except ValueError:
            pass
        code = getattr(f, "__code__", None)
        if code is None:
            return
        for cell in getattr(f, "__closure__", None) or ():
            try:
                if isinstance(cell.cell_contents, torch.nn.Module):
                    slots.append(("cell", cell))
            except ValueError:   # an empty cell
                pass
        g = getattr(f, "__globals__", {})
        for name in sorted(_guards._code_names(code)):
            if isinstance(g.get(name), torch.nn.Module):
                slots.append(("global", g, name))

    walk(fn)
    return slots


def _slot_module(slot):
    if slot[0] == "cell":
        try:
            return slot[1].cell_contents
        except ValueError:
            return None
    if slot[0] == "global":
        return slot[1].get(slot[2])
    return slot[1]


def _checked_options(options):
    """`options=` of kiln.compile / kiln.backend, validated."""
    options = dict(options or {})
    for k, v in options.items():
        if k not in _OPTIONS:
            raise KilnError("unknown option %r (options: %s)" % (
                k, ", ".join(_OPTIONS)))
        if k == "freezing" and not isinstance(v, bool):
            raise KilnError("option 'freezing' must be True or False, got %r"
                            % (v,))
    return options


class _Compiled:
    """The state behind a compiled function or module."""

    def __init__(self, fn, backend, fullgraph, dynamic, mode, options):
        if isinstance(backend, str):
            if backend not in _BACKENDS:
                raise KilnError("unknown backend %r (backends: %s)" % (
                    backend, ", ".join(list_backends())))
            self.backend_spec = _BACKENDS[backend]
        else:
            raise KilnError("backend must be one of %s, got %r" % (
                ", ".join(list_backends()), backend))
        if mode not in _MODES:
            raise KilnError("unknown mode %r (modes: %s)" % (
                mode, ", ".join(str(m) for m in _MODES)))
        options = _checked_options(options)
        self.backend = backend
        if inspect.ismethod(fn) and isinstance(fn.__self__, torch.nn.Module) \
                and fn.__func__ is getattr(type(fn.__self__), "forward",
                                           None):
            # kiln.compile(model.forward): the module.
            fn = fn.__self__
        self.user_fn = fn
        if not isinstance(fn, torch.nn.Module) and (
                inspect.ismethod(fn) or isinstance(fn, functools.partial)):
            # A bound method or a partial: traced through a plain function
            # of the same signature (torch.fx reads a function's code).
            fn = _as_function(fn)
        self.fn = fn
        self.module = fn if isinstance(fn, torch.nn.Module) else None
        # What calls are bound to and run eagerly: the user's callable (a
        # bound method or partial keeps its own defaults).
        self.forward = fn.forward if self.module is not None else \
            self.user_fn
        try:
            self.signature = inspect.signature(self.forward)
        except (ValueError, TypeError):
            # A builtin (torch.asin, a C function): Python gives it no
            # signature to bind the call's arguments to.
            raise KilnError(
                "cannot compile %r: it has no Python signature (a builtin); "
                "wrap it in a function, e.g. kiln.compile(lambda x: %s(x))"
                % (fn, getattr(fn, "__name__", "f"))) from None
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.options = options
        # optimizer -> kiln.compile(opt.step), for the steps the function
        # calls (kiln._optim.StepLift)
        self.step_programs = None
        self.programs = {}
        self.failed = {}
        self.constant_results = {}  # kiln.assume_constant_result
        self.trace_root = None
        # The modules a compiled function reaches through its closure and
        # globals (`model.encoder(x)`, a lambda's layer): their training
        # flags are part of the key, as the root module's are.
        self.module_slots = (_module_slots(self.user_fn)
                             if self.module is None else [])
        self.closure_modules = self._current_closure_modules()
        self.grad_warned = False
        # The Python values the code reads besides its arguments (kiln/
        # _guards.py), found at the first call.
        self.guards = None
        self.guard_limit_warned = False
        # The modules of the compiled module's (or the closure modules')
        # tree at the last call, and a counter of its changes (_key).
        self.tree_modules = None
        self.tree_version = 0
        base = type(fn).__name__ if self.module is not None else getattr(
            fn, "__name__", "fn")
        self.name = _symbol_name(base)
        _compiled.add(self)

    def dynamic_mode(self):
        if self.dynamic is True:
            return "dynamic"
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return "static"
        return "auto"

    def reset(self):
        with _lock:
            self.programs.clear()
            self.failed.clear()
            self.constant_results.clear()
            self.guards = None
            self.guard_limit_warned = False
            self.tree_modules = None
            self.step_programs = None

    def attr(self, qualname):
        root = self.module if self.module is not None else self.trace_root
        obj = root
        for part in _qualname_parts(qualname):
            obj = _fx_import.raw_getattr(obj, part)
        if not isinstance(obj, torch.Tensor):
            raise KilnError("%s is no longer a tensor (it is a %s); call "
                            "kiln.reset()" % (qualname, type(obj).__name__))
        return obj

    # --- the call path

    def _bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError("%s: %s" % (self.name, e)) from None
        # `*args` and `**kwargs` are bound as a tuple and a dict: containers,
        # as a list argument is (kiln._tracer makes them positional).
        bound.apply_defaults()
        return bound

    def _key(self, bound):
        flat = []
        key = []
        for name, v in bound.arguments.items():
            leaves, spec = pytree.tree_flatten(v)
            tensors = [x for x in leaves if _is_tensor(x)]
            if (tensors or isinstance(v, dict)) and not _is_tensor(v):
                # A list / tuple / dict of tensors (and Python values): one
                # program input per tensor leaf; the structure and the other
                # leaves' values are part of the key (specialized, as
                # TorchDynamo guards on them).
                others = []
                for x in leaves:
                    if _is_tensor(x):
                        flat.append(x)
                        others.append("T")
                        continue
                    try:
                        hash(x)
                    except TypeError:
                        raise Unsupported(
                            "argument %r holds a %s, which cannot be "
                            "specialized (unhashable)"
                            % (name, type(x).__name__)) from None
                    others.append((type(x).__name__, x))
                key.append((name, "P", repr(spec), tuple(others)))
                continue
            if tensors:
                flat.append(v)
                key.append((name, "T"))
            else:
                try:
                    hash(v)
                except TypeError:
                    raise Unsupported("argument %r of type %s cannot be "
                                      "specialized (unhashable)"
                                      % (name, type(v).__name__)) from None
                key.append((name, "C", type(v).__name__, v))
        # How each tensor input is laid out (is_contiguous(), whether a
        # reshape is a view) and, in grad mode, which require grad (read by
        # `x.requires_grad`; TorchDynamo guards on both): entries only when
        # some input is not contiguous / requires grad.
        for t in flat:
            if t.layout != torch.strided:
                raise Unsupported(
                    "a %s tensor argument: kiln takes dense (strided) "
                    "tensors; convert it with .to_dense()" % t.layout)
        layouts = tuple(_fx_import.example_layout(t, True) for t in flat)
        if any(layouts):
            key.append(("layouts", layouts))
        if torch.is_grad_enabled():
            grads = tuple(t.requires_grad for t in flat)
            if any(grads):
                key.append(("requires_grad", grads))
        if self.module is None:
            # (module arguments too: their training flags and hooks key
            # the program as a closure's modules do)
            self.closure_modules = self._current_closure_modules()
            for v in bound.arguments.values():
                if isinstance(v, torch.nn.Module) and not any(
                        v is c for c in self.closure_modules):
                    self.closure_modules.append(v)
        roots = [self.module] if self.module is not None else \
            self.closure_modules
        if roots:
            # The training flags of every module, and which modules have
            # forward or backward hooks (a module with hooks runs eagerly at a
            # graph
            # break: _tracer.call_module), with the global ones: hooks
            # added or removed after a capture recapture.
            training = []
            hooked = []
            mods = _module_tree(roots)
            global_backward = any(_tracer.global_hook_dicts()[2:])
            has_hooks = _tracer.has_module_hooks
            for m in mods:
                training.append(m.training)
                if has_hooks(m, global_backward):
                    hooked.append(id(m))
            # The module tree itself: a submodule replaced or added after
            # a capture (`model.act = nn.Tanh()`) recaptures (the old
            # modules are kept, so no new module can reuse an old id), and
            # the guards are found again on the new tree.
            seen = self.tree_modules
            if seen is None or len(seen) != len(mods) or any(
                    a is not b for a, b in zip(seen, mods)):
                if seen is not None:
                    self.tree_version += 1
                    self.guards = None
                self.tree_modules = mods
            key.append(("module tree", self.tree_version))
            key.append(("training" if self.module is not None
                        else "closure training", tuple(training)))
            if hooked:
                key.append(("hooks", tuple(hooked)))
        global_hooks = tuple(tuple(d) for d in _tracer.global_hook_dicts())
        if any(global_hooks):
            key.append(("global hooks",) + global_hooks)
        key.append(("grad", torch.is_grad_enabled()))
        if torch.is_autocast_cpu_enabled():
            # A call under torch.autocast("cpu"): its casts are captured
            # (kiln._autocast), so the program is for that state.
            key.append(("autocast", torch.get_autocast_cpu_dtype()))
        # Factories and Python-number promotion in the traced code follow
        # torch's default dtype at capture time.
        key.append(("default dtype", torch.get_default_dtype()))
        guards = self.guards
        if guards is None:
            guards = self.guards = _guards.Guards(
                fn=self.user_fn if self.module is None else None,
                modules=([self.module] if self.module is not None
                         else self.closure_modules))
            if self.module is None:
                _optim.add_guards(guards, self.user_fn)
        if guards.count:
            key.append((_GUARDS, guards.values()))
        return tuple(key), flat

    def _current_closure_modules(self):
        out = []
        for slot in self.module_slots:
            m = _slot_module(slot)
            if isinstance(m, torch.nn.Module) and \
                    not any(m is c for c in out):
                out.append(m)
        return out

    def _settle_guards(self, key, prog):
        """After a capture, two kinds of guards change what the key of this
        capture should have been, and the entry moves to the key with
        them: a guarded list that the capture itself changed
        (`LOG.append(...)` in the traced code) would change the key on
        every call, so it is guarded by identity from now on (without
        graph breaks such a change happens when kiln captures, not on
        every call: one warning says so); and tensors outside the trace
        whose data the capture baked in (`T.item()`, `x + T * 2` with a
        global `T`) are guarded by their version from now on."""
        guards = self.guards
        if not key or guards is None:
            return
        has = key[-1][0] is _GUARDS
        old = key[-1][1] if has else ()
        demoted = guards.demote(old)
        now = guards.values()
        if now == old:
            return
        skip = {i for i, _, _ in demoted}
        if len(now) < len(old) or any(
                now[i] != old[i] for i in range(len(old)) if i not in skip):
            return   # other values changed while capturing: a recapture
        entry = self.programs.pop(key, None)
        if entry is not None:
            base = key[:-1] if has else key
            self.programs[base + ((_GUARDS, now),)] = entry
        demoted = [d for d in demoted if d[2] == "list"]
        if demoted and not isinstance(prog, _Ran):
            warnings.warn(
                "kiln: %s (%s) changes %s while it is captured; the compiled "
                "program does not repeat that change on later calls (Python "
                "side effects happen when kiln captures; kiln.graph_break() "
                "before the change runs it on every call)"
                % (self.name, self.where(),
                   ", ".join(label for _, label, _ in demoted)),
                KilnWarning, stacklevel=4)

    def _guard_miss(self, key):
        """A key not seen before: when other keys differ from it only in
        guarded values (globals, closure cells, module attributes), its
        capture is a recompile for those values. Returns None to capture,
        or the reasons when `cache_size_limit` such keys exist already
        (the call then runs eagerly, with one warning)."""
        if not key or key[-1][0] is not _GUARDS:
            return None
        base = key[:-1]
        same = [k for k in list(self.programs) + list(self.failed)
                if k[:-1] == base]
        if not same:
            return None
        reasons = self.guards.describe(same[-1][-1][1], key[-1][1])
        if config.verbose:
            print("kiln: recompiling %s: %s" % (
                self.name, "; ".join(reasons) or "guarded values changed"),
                file=sys.stderr)
        if len(same) < config.cache_size_limit:
            return None
        return reasons

    def __call__(self, *args, **kwargs):
        try:
            bound = self._bind(args, kwargs)
            key, flat = self._key(bound)
        except Unsupported as e:
            return self._capture_failed(e, None, args, kwargs)
        if key in self.failed:
            return self._eager(args, kwargs)
        prog = self.programs.get(key)
        if prog is None:
            over = self._guard_miss(key)
            if over is not None:
                if not self.guard_limit_warned:
                    self.guard_limit_warned = True
                    warnings.warn(
                        "kiln: %s (%s) reached cache_size_limit (%d) for "
                        "changes of the Python values it reads; calls with "
                        "new values run eagerly (PyTorch). Last change: %s"
                        % (self.name, self.where(), config.cache_size_limit,
                           "; ".join(over) or "?"),
                        KilnWarning, stacklevel=2)
                return self._eager(args, kwargs)
            # One capture at a time: tracing patches torch's factories and
            # walks the module process-wide, so threads whose first calls
            # overlap would trace into each other (a KeyError for a
            # submodule: test_onednn.py::test_block_from_several_threads).
            # Calls of programs already captured do not take the lock.
            with _lock:
                prog = self.programs.get(key)
                if prog is None and key in self.failed:
                    return self._eager(args, kwargs)
                if prog is None:
                    try:
                        prog = self._capture(key, bound)
                    except KilnError as e:
                        return self._capture_failed(e, key, args, kwargs)
                    self._settle_guards(key, prog)
            if isinstance(prog, _Ran):
                # The first call had graph breaks: it ran segment by
                # segment; this key runs with breaks from now on.
                return prog.value
        if isinstance(prog, _breaks.Broken):
            return self._call_broken(prog, bound, args, kwargs)
        try:
            return prog.call(flat)
        except _training.NotTrainable as e:
            if self.fullgraph:
                raise
            self.not_trainable_warning(e)
            return self._eager(args, kwargs)
        except _CacheLimit:
            self._limit_warning(prog)
            return self._eager(args, kwargs)
        except _AliasedArguments as e:
            if self.fullgraph:
                raise KilnError("kiln: %s: %s" % (self.name, e)) from None
            if not getattr(prog, "alias_warned", False):
                prog.alias_warned = True
                warnings.warn("kiln: %s (%s): %s" % (self.name, self.where(),
                                                     e),
                              KilnWarning, stacklevel=3)
            return self._eager(args, kwargs)
        except KilnError as e:
            if getattr(e, "graph_break", False) and not self.fullgraph:
                # New inputs took the Python code to a graph break (a
                # re-capture cannot break): this key runs with breaks from
                # now on, starting with this call.
                broken = _breaks.Broken(self, prog.name)
                self.programs[key] = broken
                return self._call_broken(broken, bound, args, kwargs)
            # A recompile (re-capture) or a run that failed. With
            # suppress_errors this call runs eagerly; later calls try again.
            return self._fall_back(e, args, kwargs, stacklevel=3)

    def _call_broken(self, broken, bound, args, kwargs):
        """A call of a function with graph breaks: traced again, each
        segment run by its program (kiln._breaks)."""
        names, flat, concrete = self._split(bound)
        try:
            ran = self._import(broken.name, names, flat, concrete,
                               allow_breaks=True, cache=broken,
                               force_run=True)
        except KilnError as e:
            return self._fall_back(e, args, kwargs, stacklevel=4)
        return ran.value

    def explain_call(self, args, kwargs):
        """kiln.explain: one call traced with graph breaks, every graph
        run; returns the ExplainOutput."""
        bound = self._bind(args, kwargs)
        self._key(bound)
        names, flat, concrete = self._split(bound)
        ran = self._import(self.name, names, flat, concrete,
                           allow_breaks=True,
                           cache=_breaks.Broken(self, self.name),
                           force_run=True)
        return _breaks.ExplainOutput(ran.run.graphs, ran.run.breaks)

    def _capture_failed(self, error, key, args, kwargs):
        """A function kiln cannot capture (or load) raises, or with
        suppress_errors runs eagerly from now on (for this key). An error
        the user's code raised itself while it was captured (`raise
        ValueError(...)`, a failed `assert`, with the values eager has)
        propagates as it is, as in eager PyTorch (and TorchDynamo): this
        call has no result, and the next one is captured again."""
        return self._fall_back(error, args, kwargs, key=key, stacklevel=4)

    def _fall_back(self, error, args, kwargs, key=None, stacklevel=3):
        """The error policy for a failed capture, recompile or run: the
        user's own exception as eager raises it (_eager_or_user_error);
        else `error` raised, or with suppress_errors (never for fullgraph or
        a SpecializationError) the call's eager result with a KilnWarning,
        and no capture again for `key` when given."""
        ran = self._eager_or_user_error(error, args, kwargs)
        if isinstance(error, SpecializationError) or self.fullgraph or \
                not config.suppress_errors:
            raise error
        if key is not None:
            self.failed[key] = error
        warnings.warn("kiln: %s (%s) runs eagerly: %s" % (
            self.name, self.where(), error), KilnWarning,
            stacklevel=stacklevel)
        return ran[0] if ran is not None else self._eager(args, kwargs)

    def _eager_or_user_error(self, error, args, kwargs):
        """A capture failed (`error`, an Unsupported) because the user's
        code raised an exception itself (a `raise` or `assert` statement:
        _tracer.raised_by_user). That is the user's error when eager
        PyTorch raises too (a shape check, a failed assert), but code can
        also raise because it saw a traced value (`if type(x) is not
        torch.Tensor: raise TypeError`), where eager does not. So the call
        runs eagerly: what eager raises propagates as it is (its own
        traceback), and a result is returned as `(value,)` for the caller's
        policy (Unsupported by default, the value with suppress_errors).
        After a graph break some graphs of this call have already run (and
        done their writes), and running it again would repeat them: then
        the exception the capture saw, which came from real values, is
        raised as it is. None when `error` is not such a failure, or with
        fullgraph (where not capturing the whole function is the error)."""
        cause = error.__cause__
        if self.fullgraph or not isinstance(error, Unsupported) or \
                not isinstance(cause, Exception) or \
                isinstance(cause, KilnError) or \
                not _tracer.raised_by_user(cause):
            return None
        if getattr(error, "segments_ran", False):
            raise cause from None
        try:
            return (self._eager(args, kwargs),)
        except BaseException as eager_error:
            # eager's exception alone, not "during handling of Unsupported"
            eager_error.__suppress_context__ = True
            raise

    def not_trainable_warning(self, error):
        """One warning per compiled function: a graph that kiln cannot
        train runs eagerly (PyTorch) when grad is needed."""
        if self.grad_warned:
            return
        self.grad_warned = True
        warnings.warn("kiln: %s: cannot train this graph yet (%s); calls "
                      "that need gradients run it eagerly (PyTorch)"
                      % (self.name, error), KilnWarning, stacklevel=4)

    def _eager(self, args, kwargs):
        return self.forward(*args, **kwargs)

    def where(self):
        """The compiled function's source line (`file:line`), for
        KilnWarnings."""
        target = self.forward
        while isinstance(target, functools.partial):
            target = target.func
        code = getattr(inspect.unwrap(target), "__code__", None)
        return ("%s:%d" % (code.co_filename, code.co_firstlineno)
                if code else "?")

    def _limit_warning(self, prog):
        if prog.limit_warned:
            return
        prog.limit_warned = True
        where = self.where()
        reasons = prog.recompile_reasons()
        warnings.warn(
            "kiln: %s (%s) reached cache_size_limit (%d); it will not be "
            "recompiled and runs eagerly (PyTorch) from now on. Recompile "
            "reasons:\n%s" % (self.name, where, config.cache_size_limit,
                              "\n".join("  %d. %s" % (i + 1, r)
                                        for i, r in enumerate(reasons))),
            KilnWarning, stacklevel=4)

    def _split(self, bound):
        """(argument names, the tensor arguments, {name: non-tensor
        argument})."""
        concrete = {}
        tensors_by_name = {}
        containers = {}
        for name, v in bound.arguments.items():
            leaves = pytree.tree_flatten(v)[0]
            if any(_is_tensor(x) for x in leaves):
                if _is_tensor(v):
                    tensors_by_name[name] = v
                else:
                    # FX makes a placeholder per leaf (fx.PH: traced).
                    containers[name] = v
                    concrete[name] = pytree.tree_map(
                        lambda x: fx.PH if _is_tensor(x) else x, v)
            else:
                concrete[name] = v
        names = list(bound.arguments)
        flat = []
        for n in names:
            if n in tensors_by_name:
                flat.append(tensors_by_name[n])
            elif n in containers:
                flat.extend(x for x in pytree.tree_flatten(containers[n])[0]
                            if _is_tensor(x))
        return names, flat, concrete

    def _capture(self, key, bound):
        """The first call of a key: traced with graph breaks allowed
        (unless fullgraph). Without a break, the whole function is one
        program (a _Program, re-captured on misses); with breaks, the call
        has run segment by segment: returns _Ran, and the key's entry is
        the segment cache (kiln._breaks.Broken)."""
        names, flat, concrete = self._split(bound)
        index = len(self.programs)
        name = self.name if index == 0 else "%s_%d" % (self.name, index)
        broken = _breaks.Broken(self, name)
        first = []

        def text_of(flat, reason):
            if first:
                return first.pop()
            start = time.perf_counter()
            result = self._import(
                name, names, flat, concrete,
                dynamic_types=reason == _training.DYNAMIC_CAPTURE)
            if config.verbose:
                print("kiln: captured @%s%s in %.3f s (%d tensor arguments)"
                      % (name, " (%s)" % reason if reason else "",
                         time.perf_counter() - start, len(result.args)),
                      file=sys.stderr)
            return result

        start = time.perf_counter()
        outcome = self._import(name, names, flat, concrete,
                               allow_breaks=not self.fullgraph,
                               cache=broken)
        if isinstance(outcome, _Ran):
            self.programs[key] = broken
            if config.verbose:
                print("kiln: captured %s with %d graph break(s): %s" % (
                    name, len(outcome.run.breaks), "; ".join(
                        "%s at %s" % (b.reason, b.location)
                        for b in outcome.run.breaks)), file=sys.stderr)
            return outcome
        if config.verbose:
            print("kiln: captured @%s in %.3f s (%d tensor arguments)"
                  % (name, time.perf_counter() - start, len(outcome.args)),
                  file=sys.stderr)
        first.append(outcome)
        prog = _Program(self, name, flat, concrete, text_of)
        self.programs[key] = prog
        return prog

    def _import(self, name, names, flat, concrete, allow_breaks=False,
                cache=None, force_run=False, dynamic_types=False):
        """Traces and imports the function for these inputs. Returns the
        ImportResult of the whole function; or, when the trace had graph
        breaks (or `force_run`), a _Ran: the call has run, segment by
        segment, through `cache`'s programs. Without `allow_breaks`, a
        break raises Unsupported (marked `graph_break`). A trace
        (kiln.set_trace) shows it as a "capture" event."""
        with _logs.trace_scope("capture " + name):
            try:
                return self._import_traced(name, names, flat, concrete,
                                           allow_breaks, cache, force_run,
                                           dynamic_types)
            except _optim.TracedValueStored:
                # The lifted capture stored a traced value in the
                # optimizer's state (restored): captured again without
                # lifting (kiln/_optim.py), `lr` a constant of it and a key
                # value from now on.
                for o in _optim.reachable_optimizers(self.user_fn):
                    _optim._BAKED.add(o)
                self.lift = False
                try:
                    return self._import_traced(name, names, flat, concrete,
                                               allow_breaks, cache,
                                               force_run, dynamic_types)
                finally:
                    self.lift = True

    def _import_traced(self, name, names, flat, concrete, allow_breaks,
                       cache, force_run, dynamic_types=False):
        # Placeholders are made in signature order: tensors get the flat
        # inputs, concrete arguments their values (FX passes them as
        # concrete_args, adding asserts the importer checks).
        examples = []
        it = iter(flat)
        input_index = {}
        for n in names:
            if n in concrete:
                v = concrete[n]
                # FX makes one placeholder per leaf of a concrete argument;
                # an fx.PH leaf is a tensor input (a container of tensors).
                if isinstance(v, (list, tuple, dict)):
                    for leaf in pytree.tree_flatten(v)[0]:
                        if leaf is fx.PH:
                            input_index[len(examples)] = None
                            examples.append(next(it))
                        else:
                            examples.append(leaf)
                else:
                    examples.append(v)
            else:
                input_index[len(examples)] = None
                examples.append(next(it))
        dynamic = set()
        # Dims a training call made dynamic (automatic dynamic shapes of
        # training pairs, kiln._training): {id(tensor): dims}.
        extra = _training.EXTRA_DYNAMIC.get() or {}
        for i, e in enumerate(examples):
            if isinstance(e, torch.Tensor):
                for d in getattr(e, "_kiln_dynamic_dims", ()):
                    dynamic.add((i, d))
                for d in extra.get(id(e), ()):
                    dynamic.add((i, d))
        importer = _fx_import.FxImporter(
            name, self.module, examples, dynamic,
            root_location=_fx_import.function_location(self.forward))
        if dynamic_types:
            # A capture for a dynamic training pair (kiln._training): dims
            # computed from dynamic input dims are written `?`.
            token = _ir.DYNAMIC_SYMS.set(importer.dynamic_syms)
            try:
                return self._import_run(name, importer, examples, names,
                                        input_index, concrete, allow_breaks,
                                        cache, force_run)
            finally:
                _ir.DYNAMIC_SYMS.reset(token)
        return self._import_run(name, importer, examples, names, input_index,
                                concrete, allow_breaks, cache, force_run)

    def _import_run(self, name, importer, examples, names, input_index,
                    concrete, allow_breaks, cache, force_run):
        run = _breaks.SegmentRun(
            self, cache if cache is not None else _breaks.Broken(self, name),
            name, importer, examples, allow_breaks)
        snap = None
        restore = None
        lift = None
        if self.module is None and getattr(self, "lift", True):
            reached = _optim.reachable_optimizers(self.user_fn)
            sources = _optim.Sources(reached)
            if sources.ready():
                importer.optim_sources = sources
                snap = _optim.snapshot(sources)
                # `lr` read per call (kiln/_optim.py, PER_CALL).
                restore = sources.install_per_call()
            elif not reached and run.allow_breaks:
                # `opt.step()` called by the function (a training step):
                # lifted where it runs (kiln/_optim.py, StepLift).
                opts = _optim.optimizers_named(
                    self.user_fn, [e for e in examples
                                   if not isinstance(e, torch.Tensor)])
                if opts:
                    if self.step_programs is None:
                        self.step_programs = weakref.WeakKeyDictionary()
                    lift = _optim.StepLift(opts, run, self.step_programs,
                                           self)
        try:
            with lift if lift is not None else contextlib.nullcontext():
                gm = _tracer.trace(self.module, self.fn, importer,
                                   concrete or None, run=run)
        except KilnError:
            if lift is not None:
                lift.abandon()
            if snap is not None and not run.breaks:
                _optim.settle_state(snap)
            raise
        except BaseException:
            if lift is not None:
                lift.abandon()
            raise
        finally:
            if restore is not None:
                restore()
            if importer.data_reads and self.guards is not None:
                self.guards.add_reads(importer.data_reads)
            if self.guards is not None:
                self.guards.add_held(importer.held_tensors)
        if snap is not None and run.breaks:
            # Segments would replay this capture's `lr`: a key value from
            # now on.
            _optim.mark_baked(importer.optim_sources)
        if snap is not None and not run.breaks:
            _optim.settle_state(snap)
        try:
            # A lifted `opt.step()` (StepLift) runs as segments on every
            # call, also without a break: the function is traced again
            # each time, and nothing of the optimizer is guarded.
            ran, value = run.finish(force_run or (lift is not None and
                                                  lift.used))
        except BaseException:
            if lift is not None:
                lift.abandon()
            raise
        if snap is not None and ran:
            _optim.settle_state(snap, run)
        if lift is not None and ran:
            lift.settle(run)
        if ran:
            return _Ran(value, run)
        result = importer.finish()
        result.sources = getattr(importer, "optim_sources", None)
        result.no_grad_body = _no_grad_body(gm)
        if self.module is None:
            self.trace_root = gm
            # The constants this capture stowed on its own root
            # (`_tensor_constant0`: torch.fx names them per root, so each
            # capture of a function has its own): its program reads them
            # there, not on a later capture's root.
            result.root = gm
        # Input indices are placeholder positions; calls pass the flat
        # tensors: renumber to positions among the tensors.
        tensor_pos = {}
        k = 0
        for i, e in enumerate(examples):
            if i in input_index:
                tensor_pos[i] = k
                k += 1
        for a in result.args:
            if a.is_input:
                a.input_index = tensor_pos[a.input_index]
        result.specialized = {(tensor_pos[i], d): r for (i, d), r in
                              result.specialized.items() if i in tensor_pos}
        result.sym_dims = {sid: (tensor_pos[i], d) for sid, (i, d) in
                           result.sym_dims.items() if i in tensor_pos}
        return result

    def stats(self):
        """Per captured program (each graph of a function with graph
        breaks): its C API statistics."""
        out = {}
        for p in self.programs.values():
            if isinstance(p, _breaks.Broken):
                out.update(p.stats())
            else:
                out[p.name] = p.stats()
        return out

    def recompile_reasons(self):
        out = {}
        for p in self.programs.values():
            if isinstance(p, _breaks.Broken):
                out.update(p.recompile_reasons())
            else:
                out[p.name] = p.recompile_reasons()
        return out


def _backward_hook(m):
    """torch.utils.hooks.BackwardHook for `m`'s full backward hooks (and
    pre-hooks, where this PyTorch has them), as nn.Module.__call__ makes
    it, with `m`'s non-full (register_backward_hook) hooks; (None, [])
    without backward hooks."""
    if not _tracer.has_backward_hooks(m):
        return None, []
    full, non_full = m._get_backward_hooks()
    pre = m._get_backward_pre_hooks() if hasattr(
        m, "_get_backward_pre_hooks") else []
    if not (full or pre):
        return None, non_full
    if pre:
        return torch.utils.hooks.BackwardHook(m, full, pre), non_full
    try:
        return torch.utils.hooks.BackwardHook(m, full), non_full
    except TypeError:   # PyTorch 2's (module, hooks, pre_hooks)
        return torch.utils.hooks.BackwardHook(m, full, []), non_full


def _call_with_hooks(m, call, args, kwargs):
    """nn.Module.__call__'s hooks around the compiled forward of a
    compiled module `m`: its pre-hooks (global ones first) may replace the
    positional inputs, its forward hooks the output; they run eagerly, on
    every call, with real tensors. Its backward hooks see the gradients of
    its inputs and outputs through the compiled backward (the same
    BackwardHook nodes nn.Module.__call__ puts around the forward)."""
    for hook in (list(_nn_module._global_forward_pre_hooks.values()) +
                 list(m._forward_pre_hooks.values())):
        r = hook(m, args)
        if r is not None:
            args = r if isinstance(r, tuple) else (r,)
    bw_hook, non_full = _backward_hook(m)
    if bw_hook is not None:
        args = bw_hook.setup_input_hook(args)
    out = call(*args, **kwargs)
    for hook in (list(_nn_module._global_forward_hooks.values()) +
                 list(m._forward_hooks.values())):
        r = hook(m, args, out)
        if r is not None:
            out = r
    if bw_hook is not None:
        out = bw_hook.setup_output_hook(out)
    if non_full:
        var = out
        while not isinstance(var, torch.Tensor):
            var = next(iter(var.values())) if isinstance(var, dict) \
                else var[0]
        if var.grad_fn is not None:
            for hook in non_full:
                var.grad_fn.register_hook(_nn_module._WrappedHook(hook, m))
    return out


class OptimizedModule(torch.nn.Module):
    """What `kiln.compile(module)` returns: calling it runs the compiled
    forward; everything else (parameters, state_dict, attributes, train /
    eval, `to`) is the original module's (`_orig_mod`)."""

    def __init__(self, mod, compiled):
        object.__setattr__(self, "_kiln_ready", False)
        super().__init__()
        object.__setattr__(self, "_orig_mod", mod)
        object.__setattr__(self, "_kiln", compiled)
        object.__setattr__(self, "_kiln_ready", True)

    def __call__(self, *args, **kwargs):
        m = self._orig_mod
        if _breaks.is_compiling():
            # Called from code kiln captures: the module's code is inlined
            # into that capture (as TorchDynamo does with a compiled module).
            return m(*args, **kwargs)
        if _tracer.has_forward_hooks(m):
            return _call_with_hooks(m, self._kiln, args, kwargs)
        return self._kiln(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._kiln(*args, **kwargs)

    def __getattr__(self, name):
        if name in ("_orig_mod", "_kiln"):
            return object.__getattribute__(self, name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if not object.__getattribute__(self, "_kiln_ready"):
            return object.__setattr__(self, name, value)
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | {"_orig_mod"})

    def __repr__(self):
        return "OptimizedModule(%r)" % (self._orig_mod,)

    # Module API, delegated (state_dict keys are the original module's).
    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._orig_mod.load_state_dict(*args, **kwargs)

    def parameters(self, recurse=True):
        return self._orig_mod.parameters(recurse)

    def named_parameters(self, *args, **kwargs):
        return self._orig_mod.named_parameters(*args, **kwargs)

    def buffers(self, recurse=True):
        return self._orig_mod.buffers(recurse)

    def named_buffers(self, *args, **kwargs):
        return self._orig_mod.named_buffers(*args, **kwargs)

    def children(self):
        return self._orig_mod.children()

    def named_children(self):
        return self._orig_mod.named_children()

    def modules(self):
        return self._orig_mod.modules()

    def named_modules(self, *args, **kwargs):
        return self._orig_mod.named_modules(*args, **kwargs)

    def train(self, mode=True):
        self._orig_mod.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, **kwargs):
        self._orig_mod.to(*args, **kwargs)
        return self

    def cpu(self):
        return self.to("cpu")

    def zero_grad(self, set_to_none=False):
        self._orig_mod.zero_grad(set_to_none)

    def requires_grad_(self, requires_grad=True):
        self._orig_mod.requires_grad_(requires_grad)
        return self

    @property
    def training(self):
        if not object.__getattribute__(self, "_kiln_ready"):
            return True
        return self._orig_mod.training

    @training.setter
    def training(self, mode):
        if object.__getattribute__(self, "_kiln_ready"):
            self._orig_mod.training = mode


class CompiledFunction:
    """What `kiln.compile(function)` returns."""

    def __init__(self, fn, compiled):
        self._orig_fn = fn
        self._kiln = compiled
        self.__wrapped__ = fn
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(self, attr, getattr(fn, attr))
            except (AttributeError, TypeError):
                pass

    def __call__(self, *args, **kwargs):
        if _breaks.is_compiling():
            return self._orig_fn(*args, **kwargs)   # inlined (as above)
        return self._kiln(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        import functools
        return functools.partial(self.__call__, obj)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="cpu",
            mode=None, options=None, disable=False):
    """torch.compile for Kiln: `model` (an nn.Module or a function over
    tensors) compiled by `backend`:

    * "eager": captured, graphs run by Kiln's interpreter (kiln-eager);
    * "aot_eager": + functionalization and decompositions (kiln-aot-eager),
      still interpreted;
    * "cpu": + fusion and CPU code generation (kiln-cpu; the default).

    `dynamic`: None = automatic dynamic shapes (kiln.config), True = every
    dim dynamic from the start, False = static. `mode` is accepted for
    torch.compile compatibility and changes nothing. `options` sets session
    options: "pipeline" (a Kiln pass pipeline), "cpu_fallback", "frozen".
    `fullgraph=True` makes every capture failure raise, even with
    kiln.config.suppress_errors. Used as a decorator without a model,
    returns the decorator."""
    if model is None:
        def decorator(m):
            return compile(m, fullgraph=fullgraph, dynamic=dynamic,
                           backend=backend, mode=mode, options=options,
                           disable=disable)
        return decorator
    if disable or isinstance(model, _breaks._Disabled):
        return model
    compiled = _Compiled(model, backend, fullgraph, dynamic, mode, options)
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(model, compiled)
    if not callable(model):
        raise TypeError("kiln.compile takes a module or a function, got %s"
                        % type(model).__name__)
    return CompiledFunction(model, compiled)


def optimize(backend="cpu", *, nopython=False, dynamic=None):
    """torch._dynamo.optimize: a decorator compiling with `backend`
    (`nopython=True` is fullgraph=True)."""
    def decorator(fn):
        return compile(fn, backend=backend, fullgraph=nopython,
                       dynamic=dynamic)
    return decorator


# ------------------------------------------------------ the FX backend


class _GraphModuleProgram:
    """A torch.fx GraphModule compiled by Kiln (the backend entry point)."""

    def __init__(self, gm, example_inputs, backend, options):
        self.gm = gm
        spec = _BACKENDS.get(backend)
        if spec is None:
            raise KilnError("unknown backend %r (backends: %s)" % (
                backend, ", ".join(list_backends())))
        self.owner = _Compiled.__new__(_Compiled)
        self.owner.backend_spec = spec
        self.owner.options = _checked_options(options)
        self.owner.dynamic = None
        self.owner.module = gm
        self.owner.trace_root = gm
        self.owner.fullgraph = True
        self.owner.grad_warned = False
        self.owner.name = "fx_graph"
        self.name = "fx_graph"

        def text_of(flat, reason):
            return _fx_import.import_graph_module(gm, flat, self.name)

        self.program = _Program(self.owner, self.name, list(example_inputs),
                                {}, text_of)

    def __call__(self, *args):
        return self.program.call(list(args))


def backend(gm, example_inputs, *, backend="cpu", options=None):
    """A torch.compile backend: `torch.compile(m, backend=kiln.backend)`
    hands TorchDynamo's FX graphs to Kiln where PyTorch 2 is installed.
    Takes a torch.fx.GraphModule and its example inputs, returns a callable
    with the GraphModule's calling convention. `backend=` picks Kiln's
    backend ("eager", "aot_eager", "cpu")."""
    if not isinstance(gm, fx.GraphModule):
        raise TypeError("kiln.backend takes a torch.fx.GraphModule, got %s"
                        % type(gm).__name__)
    return _GraphModuleProgram(gm, example_inputs, backend, options)
