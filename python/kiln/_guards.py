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

* through the user's objects, attributes of attributes the code names, up
  to four levels (`cfg.model.width`), and a module's non-scalar attributes
  (`self.opts.beta`) through the names its class's methods mention;
* dicts (`OPTS["scale"]`, `self.cfg["act"]`): a dict of guardable values
  (string, number, enum ... keys; at most 64 items; nested dicts too) is
  guarded as a whole, its items in order, so a changed, added or removed
  item recaptures (Dynamo's DICT_KEYS and per-item guards); in a dict that
  also holds other values (a module, a function), each guardable item
  present at the first call is guarded on its own.

* lists (`SIZES[0]`, `self.scales[1]`, `OPTS["a"][1]`): a list of
  guardable values (at most 64 items) is guarded by its items, in order
  (Dynamo's LIST_LENGTH and per-item guards), so an item changed in place,
  appended or removed recaptures. A list that the captured code itself
  changes (code that appends to a list it logs to) is guarded by identity
  from then on: its items change on every capture by design (and kiln
  warns that the change happens when it captures, not on every call).

Guardable values: None, bool, int, float, complex, str, bytes, torch.dtype,
torch.device, torch.memory_format, enum members, NumPy scalars
(`np.float32(2.0)`, compared by value), and tuples, lists and
dicts of those (nested up to four levels). A longer list is guarded by
identity only (another list assigned is a change; its items are not).
Tensors, modules and other objects are not values here (tensors read by
the code are program arguments or constants of their own, see
docs/python.md); a tensor in a global list or tuple is an item guarded by
identity, as is a NumPy array (which `torch.from_numpy` in the code
shares)."""

import enum
import functools
import inspect
import operator
import types

import torch

from ._breaks import _Identity

try:
    import numpy
    _NUMPY_SCALARS = (numpy.bool_, numpy.number)
    _ARRAYS = (torch.Tensor, numpy.ndarray)
except ImportError:  # torch works without NumPy
    _NUMPY_SCALARS = ()
    _ARRAYS = (torch.Tensor,)

_SCALARS = (type(None), bool, int, float, complex, str, bytes, torch.dtype,
            torch.device, torch.memory_format, enum.Enum) + _NUMPY_SCALARS
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
            "tensor" if isinstance(self.obj, torch.Tensor) else
            type(self.obj).__name__, id(self.obj))


_WRITTEN = "(written by the captured code)"


class _ListItems:
    """A hashable snapshot of a list's items, in order (equal to another
    list's snapshot with the same items); `obj` is the list itself."""
    __slots__ = ("obj", "items")

    def __init__(self, obj, items):
        self.obj = obj
        self.items = items

    def __eq__(self, other):
        return isinstance(other, _ListItems) and self.items == other.items

    def __hash__(self):
        return hash(self.items)

    def __repr__(self):
        return repr(list(self.items))


class _DictItems:
    """A hashable snapshot of a dict's items, in order."""
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def __eq__(self, other):
        return isinstance(other, _DictItems) and self.items == other.items

    def __hash__(self):
        return hash(self.items)

    def __repr__(self):
        return "{%s}" % ", ".join("%r: %r" % kv for kv in self.items)


def freeze(v, tensors=True, depth=0):
    """A hashable snapshot of a guardable value, or _MISSING. A tensor is
    guardable (by identity) only where `tensors`. A snapshot is its own
    snapshot (values() freezes a whole key again, describe() both keys)."""
    if isinstance(v, _SCALARS + (_DictItems, _ListItems, _Ident)):
        return v
    if isinstance(v, _ARRAYS):
        # The program holds the tensor (or the NumPy array a
        # torch.from_numpy in the code shares): another one assigned in its
        # place is a change.
        return _Ident(v) if tensors else _MISSING
    if depth > 4:
        return _MISSING
    if type(v) is dict and len(v) <= 64:
        out = []
        for k, x in v.items():
            f = freeze(x, tensors, depth + 1)
            if not isinstance(k, _SCALARS) or f is _MISSING:
                return _MISSING
            out.append((k, f))
        return _DictItems(tuple(out))
    if isinstance(v, (tuple, list)) and len(v) <= 64:
        out = []
        for x in v:
            f = freeze(x, True if isinstance(v, tuple) else tensors,
                       depth + 1)
            if f is _MISSING:
                return _MISSING
            out.append(f)
        return _ListItems(v, tuple(out)) if isinstance(v, list) else \
            tuple(out)
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


def _dict_of(v):
    """The dict whose entries the code reads: a dict itself, or an
    object's, class's or Python module's __dict__ (None otherwise)."""
    if type(v) is dict:
        return v
    d = getattr(v, "__dict__", None)
    return d if isinstance(d, (dict, types.MappingProxyType)) else None


def _entry(d, name):
    return _MISSING if d is None else d.get(name, _MISSING)


class _Source:
    """One dict (a function's globals, a module's, object's or class's
    __dict__, a user's dict) and the names guarded in it. A dict reached
    through other values (`cfg.model.width`, `OPTS["sub"]["k"]`) is found
    again on every call by `resolve`, so an object assigned in place of
    `cfg.model` is read, not the one seen at the first call."""
    __slots__ = ("label", "d", "names", "ident", "get", "ok", "items",
                 "resolve", "written", "module")

    def __init__(self, label, d, items=False, resolve=None):
        self.label = label
        self.d = d
        self.names = []
        self.ident = set()  # names guarded by identity (user functions)
        # names the captured code stores tensors in (`self.attn = w`, a
        # graph break that runs on every call): not guarded (Guards.demote)
        self.written = set()
        self.get = None
        self.ok = True   # every name there, no list or dict: the fast path
        self.items = items  # d is the user's dict (labels `label[key]`)
        self.resolve = resolve
        # d is an nn.Module's __dict__ (set by Guards._add_module_tree): its
        # attributes may be written by the captured code (Guards.demote)
        self.module = False

    def finish(self):
        self.names.sort(key=repr)
        self.get = operator.itemgetter(*self.names)
        self.ok = not self.ident and not any(
            isinstance(self.d.get(n), (list, dict) + _ARRAYS)
            for n in self.names)

    def labels(self):
        if self.items:
            return ["%s[%r]" % (self.label, n) for n in self.names]
        return ["%s%s" % (self.label, n) for n in self.names]

    def current(self):
        return self.d if self.resolve is None else self.resolve()

    def values(self, d):
        """The names' values in `d`, frozen (a name deleted since reads as
        missing; a list as its identity)."""
        got = tuple(_WRITTEN if n in self.written
                    else _Ident(v) if n in self.ident and v is not _MISSING
                    else freeze(v)
                    for n in self.names for v in (_entry(d, n),))
        return got[0] if len(self.names) == 1 else got


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


def _entry_of(parent, name):
    return _entry(parent(), name)


class _Cell:
    __slots__ = ("label", "cell", "ident")

    def __init__(self, label, cell):
        self.label = label
        self.cell = cell
        self.ident = False  # a list the captured code changes (demote)

    def values(self):
        v = _cell_value(self.cell)
        if self.ident and v is not _MISSING:
            return (_Ident(v),)
        return (freeze(v),)


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
            # The tensors a compiled module's code reads through `self` are
            # read by name on every call (get_attr); a module the compiled
            # function reaches through its closure or globals is not its
            # root: its plain tensor attributes (`self.mask = t`, not
            # buffers) are constants of the program, guarded by identity.
            self._add_module_tree(m, tensors=fn is not None)
        if fn is not None:
            self._add_callable(fn, depth=0)
        self._sources = [s for s in self._sources.values() if s.names]
        for s in self._sources:
            s.finish()
        self._labels = []
        self._slots = []   # (source, name) or (cell, None), as _labels
        for s in self._sources:
            self._labels.extend(s.labels())
            self._slots.extend((s, n) for n in s.names)
        for c in self._cells:
            self._labels.append(c.label)
            self._slots.append((c, None))
        self._computed = []   # functions (add_computed)
        self._shows = {}      # label index -> show (add_computed)
        self._reads = {}   # id -> tensor (add_reads)
        self._held = {}    # id -> tensor (add_held)
        self.count = len(self._labels)

    def add_computed(self, label, fn, show=None):
        """Guards the hashable value `fn()` computes on every call (an
        optimizer's structure and hyperparameters: kiln._optim); `show(old,
        new)`, when given, names what changed (strings, for describe).
        Added before any add_reads (values() keeps the order of the
        labels)."""
        assert not self._reads
        self._computed.append(fn)
        if show is not None:
            self._shows[len(self._labels)] = show
        self._labels.append(label)
        self._slots.append((None, None))
        self.count = len(self._labels)

    def add_reads(self, reads):
        """Guards the tensors whose data a capture baked in (`T.item()`,
        `x + T * 2` with a global `T`: kiln._tracer.note_real_op) by their
        version counter: an in-place change recaptures."""
        for k, (t, label) in reads.items():
            if k not in self._reads:
                self._reads[k] = t
                self._labels.append(label)
                self._slots.append((None, None))
        self.count = len(self._labels)

    def add_held(self, held):
        """The real tensors a capture made constants of its program (the
        program reads them by identity): Guards.demote keeps guarding
        these."""
        self._held.update(held)

    # --- discovery

    def _source(self, label, d, items=False, resolve=None):
        s = self._sources.get(id(d))
        if s is None:
            s = self._sources[id(d)] = _Source(label, d, items, resolve)
        return s

    def _guard(self, label, d, name, tensors=False, items=False,
               resolve=None, ident=False):
        """Guards `d[name]` if its value is guardable (or, with `ident`,
        whatever it is, by identity). `resolve` finds `d` again per call
        (None: `d` is always the same dict)."""
        v = d.get(name, _MISSING)
        if v is _MISSING or (not ident and freeze(v, tensors) is _MISSING):
            return False
        s = self._source(label, d, items, resolve)
        if name not in s.names:
            s.names.append(name)
        if ident:
            s.ident.add(name)
        return True

    def _add_module_tree(self, root, tensors=False):
        for path, m in root.named_modules(remove_duplicate=True):
            if id(m) in self._seen_obj:
                continue
            self._seen_obj.add(id(m))
            d = m.__dict__
            label = "%s.%s." % (type(root).__name__, path) if path else \
                "%s." % type(root).__name__
            names = set()
            cls = type(m)
            for klass in cls.__mro__:
                if klass is torch.nn.Module or _internal(klass.__module__):
                    continue
                for attr in vars(klass).values():
                    f = getattr(attr, "__func__", attr)
                    if isinstance(f, types.FunctionType):
                        self._add_function(f, depth=1)
                        _code_names(f.__code__, names)
            for k in list(d):
                if k not in _MODULE_INTERNALS and not self._guard(
                        label, d, k, tensors=tensors):
                    # `self.opts.beta`, `self.cfg["act"]`
                    self._follow(d[k], names, 1, "%s%s." % (label, k),
                                 functools.partial(_entry, d, k))
            if id(d) in self._sources:
                self._sources[id(d)].module = True

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
                self._follow(fn.__self__, _code_names(code), depth, "self.",
                             None)
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
            label = "global %s." % gname
            v = g[name]
            if self._guard(label, g, name, tensors=True):
                continue
            if isinstance(v, types.FunctionType) and not _internal(
                    v.__globals__.get("__name__")):
                # A helper function traced into the program: another one
                # assigned to the name recaptures.
                self._guard(label, g, name, ident=True)
            self._follow(v, names, depth, "%s." % name,
                         functools.partial(_entry, g, name))
        for var, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            label = "closure %s of %s" % (var, f.__qualname__)
            if freeze(v) is not _MISSING:
                self._cells.append(_Cell(label, cell))
            else:
                self._follow(v, names, depth, "%s." % var,
                             functools.partial(_cell_value, cell))

    def _follow(self, v, names, depth, prefix, where):
        """A global, cell or attribute value that is not a scalar: the
        user's function (its code), module, class, plain object or dict
        (its entries that `names` mention; a dict's guardable items).
        `where()` gives the value at the same place on a later call (None:
        always `v`)."""
        if isinstance(v, torch.nn.Module) or depth > 4:
            return  # the module's own guards (closure modules)
        if isinstance(v, types.FunctionType):
            self._add_function(v, depth + 1)
            return
        if isinstance(v, functools.partial) or inspect.ismethod(v):
            self._add_callable(v, depth + 1)
            return
        items = type(v) is dict
        if items:
            wanted = [k for k in v if isinstance(k, _SCALARS)]
        else:
            owner = v.__name__ if isinstance(v, types.ModuleType) else \
                v.__module__ if isinstance(v, type) else type(v).__module__
            if _internal(owner):
                return   # torch's, NumPy's, kiln's, the standard library's
            wanted = names
        d = _dict_of(v)
        if d is None or id(d) in self._seen_obj:
            return
        self._seen_obj.add(id(d))
        resolve = None if where is None else (
            lambda: _dict_of(where()))
        label = prefix[:-1] if items else prefix
        for name in wanted:
            # A tensor attribute of the user's object (`cfg.w`) or a tensor
            # item of a dict that holds other objects too: a constant of the
            # program, guarded by identity (another one assigned in its
            # place recaptures), as a global tensor is.
            if name not in d or self._guard(label, d, name, items=items,
                                            resolve=resolve, tensors=True):
                continue
            # `cfg.model.width`, `OPTS["sub"]["k"]`: one level further
            sub = "%s[%r]." % (label, name) if items else \
                "%s%s." % (prefix, name)
            parent = resolve if resolve is not None else (lambda: d)
            self._follow(d[name], names, depth + 1, sub,
                         functools.partial(_entry_of, parent, name))

    # --- per call

    def values(self):
        out = []
        raw = []   # the values read from the dicts as they are (fast path)
        for s in self._sources:
            d = s.current()
            if s.ok and d is s.d:
                try:
                    got = s.get(d)
                except KeyError:   # a name deleted since
                    got = s.values(d)
                else:
                    if len(s.names) == 1:
                        raw.append(got)
                    else:
                        raw.extend(got)
            else:
                got = s.values(d)
            if len(s.names) == 1:
                out.append(got)
            else:
                out.extend(got)
        for c in self._cells:
            out.extend(c.values())
        for fn in self._computed:
            out.append(fn())
        for r in self._reads.values():
            out.append(r._version)
        t = tuple(out)
        # Only the fast path's values can be unhashable or tensors: the rest
        # are frozen (s.values, cells) or version numbers.
        if raw and _not_plain(raw):
            return tuple(freeze(v) for v in t)
        return t

    def demote(self, old):
        """After a capture: the guarded lists whose items changed since
        `old` (the values() before it) while still the same list, i.e.
        lists the captured code itself changed, are guarded by identity
        from now on; and module attributes that held None, a number or a
        tensor the program does not hold, and that the capture stored a
        tensor in, are not guarded from now on
        (the store is a graph break: it runs on every call). Returns
        (index in values(), label, "list" or "written") for each."""
        out = []
        for i, ((where, name), label, a) in enumerate(
                zip(self._slots, self._labels, old)):
            if where is None:
                continue   # a version guard (add_reads)
            v = _cell_value(where.cell) if name is None else \
                _entry(where.current(), name)
            if name is not None and isinstance(v, torch.Tensor) and (
                    a is None or isinstance(a, _SCALARS) or (
                        isinstance(a, _Ident) and
                        isinstance(a.obj, torch.Tensor) and
                        a.obj is not v and
                        self._held.get(id(a.obj)) is not a.obj and
                        id(a.obj) not in self._reads)) and \
                    isinstance(where, _Source) and where.module:
                # A module attribute that held None, a number, or a tensor the
                # program does not hold (nor baked the data of), and that
                # the capture stored a tensor in (`self.attn = w`: a graph
                # break, run on every call): written by the code on every
                # call, not read as a constant of it (code that reads it
                # runs in Python after the break, as the write does).
                where.written.add(name)
                where.ok = False
                out.append((i, label, "written"))
                continue
            if not isinstance(a, _ListItems):
                continue
            if v is not a.obj or freeze(v) == a:
                continue
            if name is None:
                where.ident = True
            else:
                where.ident.add(name)
                where.ok = False
            out.append((i, label, "list"))
        return out

    def describe(self, old, new):
        """The guarded names whose values differ between two values()
        tuples, as `name: old -> new` strings."""
        out = []
        for i, (label, a, b) in enumerate(zip(self._labels, old, new)):
            show = self._shows.get(i)
            if show is not None:
                out.extend("%s %s" % (label, d) for d in show(a, b))
                continue
            a, b = freeze(a), freeze(b)
            try:
                same = a is b or bool(a == b)
            except Exception:
                same = False
            if not same:
                out.append("%s: %s -> %s" % (label, _show(a), _show(b)))
        return out


def _not_plain(vals):
    """True when a name the fast path read holds what a key may not hold as
    it is: an unhashable value (a list now), or a tensor (a name that held a
    scalar at the first call holds one now, `self.last = out` run eagerly:
    compared by identity, as a tensor's == is elementwise, not a key's
    equality)."""
    try:
        hash(tuple(vals))
    except TypeError:
        return True
    for v in vals:
        if isinstance(v, _ARRAYS):
            return True
    return False


def _show(v):
    if v is _MISSING:
        return "(missing)"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."
