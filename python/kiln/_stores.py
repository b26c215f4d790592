"""Traced tensors the user's code stores into Python objects the trace
does not see: a global list (`LOG.append(y)`), a dict (`CACHE["k"] = y`,
a forward hook's `activations[name] = out`), a plain object's attribute
(`cfg.last = y`), a global (`global LAST; LAST = y`) or a closure's cell
(`nonlocal`).

Python's containers and plain objects cannot be intercepted when they are
written, so after a trace the objects the compiled code reaches are
searched for torch.fx proxies (`find`): the closures of the user's
functions and the globals their code reads (kiln._tracer._user_code, the
code isinstance patching follows too), the attributes of the modules it
runs (and their `forward`s' and hooks' closures and globals), each
followed a few levels down through lists, tuples, dicts, sets and plain
objects. Each proxy found is
a graph break at the end of the function (its node's real value is
computed, kiln._breaks.SegmentRun.graph_break) and is then replaced by
that real tensor where it was stored (`replace`). Since the stores happen
when the Python runs, the function keeps running through the tracer with
breaks on every call (as functions with graph breaks do), so each call
stores its own values, as in eager PyTorch. Before 2026-11-30 the proxy
stayed in the container: the first call left a torch.fx object there
("Found multiple different tracers" when the user used it) and later calls
(the cached program) stored nothing.
"""

import collections
import inspect
import types

import torch
from torch import fx

from ._tracer import _internal_module, _user_code

# How far below a root the search goes, and how many values it looks at
# in all (a module's globals may hold a dataset): past the budget the rest
# is not searched.
_DEPTH = 4
_BUDGET = 200000

_SCALARS = (str, bytes, int, float, complex, bool, type(None), torch.dtype,
            torch.device, torch.Size)
_SKIPPED = (torch.Tensor, torch.optim.Optimizer, type,
            types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
            types.MethodType, types.CodeType, types.FrameType)


class Stored:
    """A proxy found where the user's code stored it: `path` names the
    place (`LOG[0]`, `cfg.last`), `setter(value)` writes there."""

    def __init__(self, path, proxy, setter):
        self.path = path
        self.proxy = proxy
        self.setter = setter

    @property
    def node(self):
        p = self.proxy
        return p.__dict__.get("_node") if isinstance(
            p, fx.proxy.Attribute) else p.__dict__.get("node")


def _hook_functions(m):
    """The hook functions registered on module `m` (forward hooks that
    keep activations in a dict are the common case)."""
    out = []
    for k, v in vars(m).items():
        if k.startswith("_") and "hook" in k and isinstance(v, dict):
            out.extend(v.values())
    return out


def _names_read(code):
    """The global names `code` reads (nested code objects too)."""
    names = []
    codes = [code]
    while codes:
        co = codes.pop()
        names.extend(co.co_names)
        codes.extend(c for c in co.co_consts if inspect.iscode(c))
    return names


def _function_roots(f):
    """(path, value, setter) of a function's closure cells and the
    globals its code reads (modules and functions left out: they are
    followed, not searched)."""
    out = []
    f = getattr(f, "__func__", f)
    code = getattr(f, "__code__", None)
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, f.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        out.append(("%s's %s" % (f.__name__, name), v,
                    lambda new, cell=cell: setattr(cell, "cell_contents",
                                                   new)))
    g = getattr(f, "__globals__", None)
    if g is None or _internal_module(g.get("__name__")):
        return out
    for k in dict.fromkeys(_names_read(code)):
        if k in g and not inspect.ismodule(g[k]) and \
                not inspect.isfunction(g[k]):
            out.append(("%s.%s" % (g.get("__name__", "?"), k), g[k],
                        lambda new, g=g, k=k: g.__setitem__(k, new)))
    return out


def _roots(module, fn):
    """(path, value, setter) of the places to search: the module (its
    attributes, children and hooks: `visit`), and the closures and the
    globals read by the user's functions (kiln._tracer._user_code)."""
    out = [("self", module, None)] if module is not None else []
    functions, _ = _user_code(module if module is not None else fn)
    for f in functions:
        out.extend(_function_roots(f))
    return out


def find(fn):
    """The proxies stored in the objects a trace of `fn` (a module or a
    function) reaches, as Stored. (Containers passed as arguments are not
    searched: kiln.compile refuses a list or dict argument without
    tensors, and copies one with tensors.)"""
    module = fn if isinstance(fn, torch.nn.Module) else None
    found = []
    seen = set()
    budget = [_BUDGET]

    def visit(v, path, depth, setter):
        if isinstance(v, fx.Proxy):
            if setter is not None:
                found.append(Stored(path, v, setter))
            return
        if isinstance(v, _SCALARS) or isinstance(v, _SKIPPED) or \
                depth > _DEPTH or id(v) in seen or budget[0] <= 0:
            return
        seen.add(id(v))
        budget[0] -= 1
        if isinstance(v, (list, collections.deque, dict)):
            # (by index or key; the item is written back the same way)
            items = list(v.items()) if isinstance(v, dict) else \
                list(enumerate(v))
            for k, x in items:
                budget[0] -= 1
                if budget[0] <= 0:
                    return
                visit(x, "%s[%r]" % (path, k), depth + 1,
                      lambda new, v=v, k=k: v.__setitem__(k, new))
        elif isinstance(v, tuple):
            items = list(v)
            rebuild = (lambda xs, t=type(v): t(*xs)) if hasattr(
                v, "_fields") else tuple

            def set_item(new, i, items=items, rebuild=rebuild,
                         setter=setter):
                items[i] = new
                if setter is not None:
                    setter(rebuild(items))
            for i, x in enumerate(v):
                visit(x, "%s[%d]" % (path, i), depth + 1,
                      lambda new, i=i, f=set_item: f(new, i))
        elif isinstance(v, (set, frozenset)):
            for x in list(v):
                if isinstance(x, fx.Proxy) and isinstance(v, set):
                    found.append(Stored(
                        "an element of %s" % path, x,
                        lambda new, v=v, x=x: (v.discard(x), v.add(new))))
        elif isinstance(v, torch.nn.Module):
            # Its plain attributes (`self.history = []`), its children,
            # its hooks' closures and globals (not its parameters and
            # buffers: the tracer handles those).
            for k, x in list(vars(v).items()):
                if not k.startswith("_") and k != "training":
                    visit(x, "%s.%s" % (path, k), depth + 1,
                          lambda new, d=v.__dict__, k=k: d.__setitem__(k,
                                                                       new))
            for k, c in v._modules.items():
                # (a deep model's modules: no depth limit along them)
                visit(c, "%s.%s" % (path, k), depth, None)
            # (a module a compiled function calls: its forward's and
            # hooks' closures and globals)
            for f in [type(v).forward] + _hook_functions(v):
                for p, x, st in _function_roots(f):
                    visit(x, p, depth + 1, st)
        elif not _internal_module(type(v).__module__) and \
                hasattr(v, "__dict__") and not callable(v):
            d = v.__dict__
            if not isinstance(d, dict):
                return
            for k, x in list(d.items()):
                visit(x, "%s.%s" % (path, k), depth + 1,
                      lambda new, d=d, k=k: d.__setitem__(k, new))

    for path, v, setter in _roots(module, fn):
        visit(v, path, 0, setter)
    return found


def reason(stored):
    paths = [s.path for s in stored]
    return ("a traced tensor stored into %s (a Python object the compiled "
            "code reaches): the graph so far runs and the real tensor is "
            "put there" % (", ".join(paths[:4]) +
                           (" and %d more" % (len(paths) - 4)
                            if len(paths) > 4 else "")))


def replace(stored, value_of):
    """Puts each proxy's real value where it was stored (`value_of(node)`
    the real tensor of a node)."""
    for s in stored:
        s.setter(value_of(s.node))
