"""Guards on the Python values a compiled function reads besides its
arguments (TorchDynamo's CONSTANT_MATCH guards on globals, closure cells and
module attributes).

A capture bakes every Python scalar the traced code reads into the program
as a constant: `x * SCALE` with a global `SCALE = 2.0` becomes `x * 2.0`,
`if USE_RELU:` picks one side, `self.alpha` of a module is read once. If
the value changes after the first call, the program would go on computing
with the old one: a silent wrong answer. So each compiled function gets a
guard set, found once, statically, from the code the trace can run, and
the values it names are part of every call's key (kiln/_compile.py): a
changed value is a new key, so a new capture (a recompile, reported with
the names that changed, bounded by `cache_size_limit`).

What is guarded (an over-approximation: a name the code mentions but the
traced path does not read still guards, at worst costing a recompile):

* the globals the compiled function's code names (`co_names`, nested code
  objects included) whose values are guardable (below), in its globals
  dict; its closure cells likewise;
* through globals and cells that are the user's plain functions (not
  torch's or kiln's), the same for their code, recursively (a helper that
  reads `SCALE`); through the user's Python modules, classes and plain
  objects, their attributes the code names (`cfg.scale`, `Config.depth`);
* for a compiled module, and the modules a function reaches through its
  closure and globals: every module's scalar attributes (`self.alpha`,
  a Conv2d's stride, a BatchNorm's eps: what converters read), and the
  code of the methods of every module class the user wrote (not torch's
  own classes) as above.

Guardable values: None, bool, int, float, complex, str, bytes, torch.dtype,
torch.device, torch.memory_format, enum members, and tuples / lists (taken
as tuples) of those. Tensors, modules and other objects are not values
here (tensors read by the code are program arguments or constants of their
own, see docs/python.md)."""

import enum
import functools
import inspect
import operator
import types

import torch

from ._breaks import _Identity

_SCALARS = (type(None), bool, int, float, complex, str, bytes, torch.dtype,
            torch.device, torch.memory_format, enum.Enum)
# nn.Module's own bookkeeping in every module's __dict__ (hooks, flags).
_MODULE_INTERNALS = frozenset(torch.nn.Module().__dict__) | {"training"}
_MISSING = object()


def _internal(modname):
    return modname is None or modname in (
        "torch", "kiln", "builtins", "math", "numpy", "typing", "functools",
        "operator", "collections", "inspect", "abc") or modname.startswith(
            ("torch.", "kiln.", "numpy.", "collections."))


class _Ident(_Identity):
    """A list or a tensor, guarded by identity: another one assigned in its
    place is a change; appending to the list (code that records its calls)
    or updating the tensor in place is not (the program reads the tensor it
    holds on every call)."""
    __slots__ = ()

    def __repr__(self):
        return "the %s at 0x%x" % (
            "tensor" if isinstance(self.obj, torch.Tensor) else "list",
            id(self.obj))


def freeze(v, tensors=True):
    """A hashable snapshot of a guardable value, or _MISSING. A tensor is
    guardable (by identity) only where `tensors`."""
    if isinstance(v, _SCALARS):
        return v
    if isinstance(v, torch.Tensor):
        return _Ident(v) if tensors else _MISSING
    if isinstance(v, tuple) and len(v) <= 64:
        out = []
        for x in v:
            f = freeze(x)
            if f is _MISSING:
                return _MISSING
            out.append(f)
        return tuple(out)
    if isinstance(v, list) and all(isinstance(x, _SCALARS) for x in v):
        return _Ident(v)
    return _MISSING


def _code_names(code, out=None):
    """The names (globals and attributes) a code object and the code
    objects nested in it mention."""
    if out is None:
        out = set()
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


class _Source:
    """One dict (a function's globals, a module's or object's __dict__) and
    the names guarded in it."""
    __slots__ = ("label", "d", "names", "get", "ok")

    def __init__(self, label, d):
        self.label = label
        self.d = d
        self.names = []
        self.get = None
        self.ok = True   # every name there, no list: the fast path

    def finish(self):
        self.names.sort()
        self.get = operator.itemgetter(*self.names)
        self.ok = not any(isinstance(self.d.get(n), (list, torch.Tensor))
                          for n in self.names)

    def values(self):
        """The names' values, frozen (a name deleted since reads as
        missing; a list as its identity)."""
        got = tuple(freeze(self.d.get(n, _MISSING)) for n in self.names)
        return got[0] if len(self.names) == 1 else got


class _Cell:
    __slots__ = ("label", "cell")

    def __init__(self, label, cell):
        self.label = label
        self.cell = cell

    def values(self):
        try:
            return (freeze(self.cell.cell_contents),)
        except ValueError:  # an empty cell
            return (_MISSING,)


class Guards:
    """The guard set of one compiled callable: `values()` is the hashable
    tuple of the guarded values now; `describe(old, new)` names what
    changed between two such tuples."""

    def __init__(self, fn=None, modules=()):
        self._sources = {}   # id(dict) -> _Source
        self._cells = []
        self._seen_code = set()
        self._seen_obj = set()
        for m in modules:
            self._add_module_tree(m)
        if fn is not None:
            self._add_callable(fn, depth=0)
        self._sources = [s for s in self._sources.values() if s.names]
        for s in self._sources:
            s.finish()
        self._labels = []
        for s in self._sources:
            self._labels.extend("%s%s" % (s.label, n) for n in s.names)
        for c in self._cells:
            self._labels.append(c.label)
        self.count = len(self._labels)

    # --- discovery

    def _source(self, label, d):
        s = self._sources.get(id(d))
        if s is None:
            s = self._sources[id(d)] = _Source(label, d)
        return s

    def _guard(self, label, d, name, tensors=False):
        v = d.get(name, _MISSING)
        if v is _MISSING or freeze(v, tensors) is _MISSING:
            return False
        s = self._source(label, d)
        if name not in s.names:
            s.names.append(name)
        return True

    def _add_module_tree(self, root):
        for path, m in root.named_modules(remove_duplicate=True):
            if id(m) in self._seen_obj:
                continue
            self._seen_obj.add(id(m))
            d = m.__dict__
            label = "%s.%s." % (type(root).__name__, path) if path else \
                "%s." % type(root).__name__
            for k in list(d):
                if k not in _MODULE_INTERNALS:
                    self._guard(label, d, k)
            cls = type(m)
            for klass in cls.__mro__:
                if klass is torch.nn.Module or _internal(klass.__module__):
                    continue
                for attr in vars(klass).values():
                    f = getattr(attr, "__func__", attr)
                    if isinstance(f, types.FunctionType):
                        self._add_function(f, depth=1)

    def _add_callable(self, fn, depth):
        if isinstance(fn, functools.partial):
            self._add_callable(fn.func, depth)
            return
        if inspect.ismethod(fn):
            self._add_callable(fn.__func__, depth)
            code = getattr(fn.__func__, "__code__", None)
            if code is not None:
                # A helper object's method: the attributes of its object
                # that the method names (`self.scale`).
                self._follow(fn.__self__, _code_names(code), depth, "self.")
            return
        try:
            fn = inspect.unwrap(fn)
        except ValueError:
            return
        if isinstance(fn, types.FunctionType):
            self._add_function(fn, depth)

    def _add_function(self, f, depth):
        code = f.__code__
        if id(code) in self._seen_code or depth > 4:
            return
        g = f.__globals__
        if _internal(g.get("__name__")):
            return
        self._seen_code.add(id(code))
        names = _code_names(code)
        gname = g.get("__name__", "?")
        for name in names:
            if name not in g:
                continue
            # A global tensor (or parameter) is a constant of the program
            # (torch.fx holds the object): guarded by identity, so a new
            # one assigned to the name recaptures.
            if not self._guard("global %s." % gname, g, name, tensors=True):
                self._follow(g[name], names, depth, "%s." % name)
        for var, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            label = "closure %s of %s" % (var, f.__qualname__)
            if freeze(v) is not _MISSING:
                self._cells.append(_Cell(label, cell))
            else:
                self._follow(v, names, depth, "%s." % var)

    def _follow(self, v, names, depth, prefix):
        """A global or cell value that is not a scalar: the user's function
        (its code), module, class or plain object (its attributes that
        `names` mention)."""
        if isinstance(v, torch.nn.Module):
            return  # the module's own guards (closure modules)
        if isinstance(v, types.FunctionType):
            self._add_function(v, depth + 1)
            return
        if isinstance(v, functools.partial) or inspect.ismethod(v):
            self._add_callable(v, depth + 1)
            return
        if isinstance(v, types.ModuleType):
            if _internal(v.__name__):
                return
            d = vars(v)
        elif isinstance(v, type):
            if _internal(v.__module__):
                return
            d = v.__dict__
        else:
            if _internal(type(v).__module__) or id(v) in self._seen_obj:
                return
            d = getattr(v, "__dict__", None)
            if not isinstance(d, dict):
                return
        for name in names:
            if name in d:
                self._guard(prefix, d, name)

    # --- per call

    def values(self):
        out = []
        for s in self._sources:
            try:
                got = s.get(s.d) if s.ok else s.values()
            except KeyError:   # a name deleted since
                got = s.values()
            if len(s.names) == 1:
                out.append(got)
            else:
                out.extend(got)
        for c in self._cells:
            out.extend(c.values())
        t = tuple(out)
        try:
            hash(t)
        except TypeError:  # a list (or another unhashable value) now
            t = tuple(freeze(v) for v in t)
        return t

    def describe(self, old, new):
        """The guarded names whose values differ between two values()
        tuples, as `name: old -> new` strings."""
        out = []
        for label, a, b in zip(self._labels, old, new):
            a, b = freeze(a), freeze(b)
            try:
                same = a is b or bool(a == b)
            except Exception:
                same = False
            if not same:
                out.append("%s: %s -> %s" % (label, _show(a), _show(b)))
        return out


def _show(v):
    if v is _MISSING:
        return "(missing)"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."
