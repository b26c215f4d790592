"""A compiled optimizer step as one program (docs/python.md, "Compiled
optimizer steps").

`kiln.compile(opt.step)` reaches the optimizer's parameters, gradients and
state through Python objects (`self.param_groups[g]["params"][i]`,
`p.grad`, `self.state[p]["exp_avg"]`), not through arguments. While kiln
captures such a step, those tensors are *lifted*: a torch call among whose
arguments one of them is (`buf.mul_(momentum)`, `param.add_(d_p,
alpha=-lr)`) becomes a node of the graph instead of running at trace time
(kiln._tracer's `_lifted_call`), each lifted tensor a program argument
named after where it lives (`_kiln_src_o0_g0_p3_grad`), and its writes the
program's ref writes. The program reads each lifted tensor again from its
source on every call (`Sources.resolve`, as TorchDynamo re-reads
`param_groups[0]["params"][3].grad`), so a new `p.grad` object after
`zero_grad(set_to_none=True)` is read, not the one the capture saw.

What the step's Python branches on is part of the key (`add_guards`):
per optimizer, the number of groups and parameters, per parameter whether
its gradient is None and which state entries it has (with the non-tensor
ones' values), and each group's hyperparameters (`momentum`, `betas`,
...: constants of the program, so a new value recompiles, with the change
as the reason, up to `config.cache_size_limit`), except those in PER_CALL
(`lr`): a lifted capture reads them as program arguments (a 0-d f64 tensor
per group, resolved on every call; `install_per_call` puts a stand-in in
the group while the step is traced, whose arithmetic is the tensor's
`.item()` in the graph), so an lr scheduler does not recompile.

Lifting starts once the state exists (`Sources.ready`): the first step,
which creates it (`torch.clone(d_p)` stored in `state[p]`), keeps its graph
breaks, so no traced value is left in the optimizer's state.

A compiled function that calls `opt.step()` (a training step: zero_grad,
forward, backward, step) gets the same from StepLift: the optimizers it
reaches have their `step` wrapped while it is traced; an SGD, Adam or AdamW
step runs `kiln.compile(opt.step)` at that point (its own program, not
traced per call), any other is lifted into the function's segments
(`Sources.add_stepping`). SGD's and RMSprop's `alpha=-lr` is a
TracedNumber, a float that torch's argument parser takes."""

import functools
import inspect
import operator
import weakref

import torch
import torch.fx as fx

from ._errors import KilnError
from ._guards import _code_names, freeze

_PREFIX = "_kiln_src_"


def reachable_optimizers(fn):
    """The optimizers a compiled callable reaches as a bound method's object
    (`kiln.compile(opt.step)`)."""
    obj = getattr(fn, "__self__", None)
    if isinstance(obj, torch.optim.Optimizer):
        return [obj]
    return []


def _state_tensors(state):
    for name, v in state.items():
        if isinstance(v, torch.Tensor):
            yield name, v


# Hyperparameters the steps compute with but never branch on (Adam's
# `lr`: `lr / bias_correction1`), read per call (_PER_CALL_TYPES): a 0-d
# f64 program argument whose `.item()` the graph uses, not a key value, so
# an lr scheduler does not recompile. `momentum`, `weight_decay`,
# `nesterov`, `amsgrad`, `maximize` change what the step does (`if
# momentum != 0`) and stay in the key, as do the betas and eps (not done).
PER_CALL = ("lr",)

# Optimizers whose lifted capture could not take `lr` per call (it had graph
# breaks, or was captured again without lifting: `lr` baked in): `lr` is a
# key value for them from then on.
_BAKED = weakref.WeakSet()


# The optimizers whose steps take a traced `lr` (Adam's and AdamW's use it
# in `lr / bias_correction1` and `lr * weight_decay`, numbers the graph
# computes; SGD's and RMSprop's `param.add_(d_p, alpha=-lr)` gets a
# TracedNumber, a float torch's argument parser takes where it refuses a
# Proxy).
_PER_CALL_TYPES = (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD,
                   torch.optim.RMSprop)


def _per_call_keys(o, group, baked=None):
    if baked is None:
        baked = o in _BAKED
    if baked or type(o) not in _PER_CALL_TYPES:
        return ()
    return tuple(k for k in PER_CALL
                 if type(group.get(k)) in (float, int))


def per_call(o):
    """Whether a call's capture of `o`'s step reads PER_CALL hyperparameters
    per call (a lifted capture: Sources.ready)."""
    return o not in _BAKED and type(o) in _PER_CALL_TYPES and _ready([o])


def mark_baked(sources):
    """A lifted capture that did not become one program: `lr` stays a key
    value for these optimizers."""
    for o in sources.opts:
        _BAKED.add(o)


def _hyper_tensor(v):
    return torch.tensor(float(v), dtype=torch.float64)


class TracedNumber(float):
    """A number the graph computes from a PER_CALL hyperparameter (`-lr`,
    `1 - lr * weight_decay`) that is also a Python float with this trace's
    value, so torch's argument parser takes it where a number goes
    (`param.add_(d_p, alpha=-lr)` of SGD and RMSprop: a Proxy there is
    refused before kiln's tracer sees the call). Wherever it is an argument
    of a node the tracer records its node instead of the value
    (`_kiln_node`, KilnTracer.create_arg), and a torch call with one among
    its arguments is a node (_tracer._lifted_call). Arithmetic with numbers
    stays a TracedNumber, with a Proxy (Adam's `lr / bias_correction1`) is
    the Proxy's. A read of its value as a float (`math.sqrt(lr)`,
    `float(lr)`, a comparison) gets this trace's value: the optimizers made
    per call (_PER_CALL_TYPES) do none of these with `lr`."""

    def __new__(cls, value, proxy):
        self = float.__new__(cls, value)
        self.proxy = proxy
        return self

    @property
    def _kiln_node(self):
        return self.proxy.node

    def __repr__(self):
        return "<traced number %r>" % float(self)


def _tn_unary(op):
    return lambda self: TracedNumber(op(float(self)), op(self.proxy))


def _tn_binary(op, reflected=False):
    def f(self, other):
        if isinstance(other, fx.Proxy):
            return op(other, self.proxy) if reflected else \
                op(self.proxy, other)
        if isinstance(other, TracedNumber):
            a, pa, b, pb = float(self), self.proxy, float(other), other.proxy
        elif type(other) in (int, float):
            a, pa, b, pb = float(self), self.proxy, other, other
        else:
            return NotImplemented
        if reflected:
            a, pa, b, pb = b, pb, a, pa
        return TracedNumber(op(a, b), op(pa, pb))
    return f


for _name, _op in (("neg", operator.neg), ("pos", operator.pos),
                   ("abs", operator.abs)):
    setattr(TracedNumber, "__%s__" % _name, _tn_unary(_op))
for _name, _op in (("add", operator.add), ("sub", operator.sub),
                   ("mul", operator.mul), ("truediv", operator.truediv),
                   ("pow", operator.pow)):
    setattr(TracedNumber, "__%s__" % _name, _tn_binary(_op))
    setattr(TracedNumber, "__r%s__" % _name, _tn_binary(_op, True))


class _PerCallValue:
    """Stands for `group[k]` (a PER_CALL hyperparameter) while a lifted step
    is traced: the step's first arithmetic with it reads the lifted 0-d
    tensor's `.item()` (a traced number, as Adam's `step_t.item()`), so the
    value is the program argument's, not a constant; the arithmetic's
    result is a TracedNumber (or a Proxy)."""
    __slots__ = ("_t", "_real", "_v")

    def __init__(self, t, real):
        self._t = t
        self._real = float(real)
        self._v = None

    def _val(self):
        if self._v is None:
            self._v = TracedNumber(self._real, self._t.item())
        return self._v

    def __repr__(self):
        return "<per-call hyperparameter>"


def _unary(op):
    return lambda self: op(self._val())


def _binary(op):
    return lambda self, other: op(self._val(), other)


def _reflected(op):
    return lambda self, other: op(other, self._val())


for _name, _op in (("neg", operator.neg), ("pos", operator.pos),
                   ("abs", operator.abs)):
    setattr(_PerCallValue, "__%s__" % _name, _unary(_op))
for _name, _op in (("add", operator.add), ("sub", operator.sub),
                   ("mul", operator.mul), ("truediv", operator.truediv),
                   ("pow", operator.pow)):
    setattr(_PerCallValue, "__%s__" % _name, _binary(_op))
    setattr(_PerCallValue, "__r%s__" % _name, _reflected(_op))


def _ready(opts):
    """Sources.ready for `opts`."""
    if not opts:
        return False
    for o in opts:
        for group in o.param_groups:
            if group.get("foreach"):
                # `torch._foreach_*` ops have no converters, and torch's
                # argument parser takes no traced value for a list of
                # tensors: a foreach step keeps its graph breaks.
                return False
            for p in group["params"]:
                if p.grad is not None and not o.state.get(p):
                    return False
    return True


class Sources:
    """The tensors of `opts` that a capture lifts, by identity, each with
    the path it is read from on every call; and, per group, a 0-d tensor
    for each PER_CALL hyperparameter (`install_per_call`)."""

    def __init__(self, opts):
        self.opts = list(opts)
        self.by_id = {}   # id -> (tensor, qualname)
        self.paths = {}   # qualname -> (k, g, i, what)
        self.hyper = []   # (group, key, tensor)
        self.resolved = {}  # qualname -> (value, tensor) of the last call
        for k, o in enumerate(self.opts):
            self._add_optimizer(k, o)

    def _add_optimizer(self, k, o, baked=None):
        for g, group in enumerate(o.param_groups):
            for i, p in enumerate(group["params"]):
                self._add(p, (k, g, i, None))
                if p.grad is not None:
                    self._add(p.grad, (k, g, i, "grad"))
                for name, v in _state_tensors(o.state.get(p, {})):
                    self._add(v, (k, g, i, ("state", name)))
            for key in _per_call_keys(o, group, baked):
                t = _hyper_tensor(group[key])
                self._add(t, (k, g, None, ("hyper", key)))
                self.hyper.append((group, key, t))

    def add_stepping(self, o):
        """An optimizer whose `step()` a compiled function calls (StepLift):
        its tensors as they are now (a later step of the same optimizer in
        the trace reads the gradients of then), numbered after the
        optimizers added before it in this trace, so each trace of the
        function names them alike. Returns the hyper entries it added (its
        PER_CALL hyperparameters, read per call whatever _BAKED says: the
        function is traced on every call)."""
        k = next((j for j, x in enumerate(self.opts) if x is o), None)
        if k is None:
            k = len(self.opts)
            self.opts.append(o)
        else:
            # Its entries of an earlier step in this trace: read again.
            for tid, (t, name) in list(self.by_id.items()):
                if self.paths[name][0] == k:
                    del self.by_id[tid]
            self.hyper = [h for h in self.hyper
                          if not any(h[0] is g for g in o.param_groups)]
        before = len(self.hyper)
        self._add_optimizer(k, o, baked=False)
        return self.hyper[before:]

    def install_per_call(self, hyper=None):
        """While a lifted step is traced: each PER_CALL hyperparameter in
        its group is a _PerCallValue over its lifted tensor. Returns the
        function that puts the numbers back."""
        hyper = self.hyper if hyper is None else hyper
        saved = [(group, key, group[key]) for group, key, _ in hyper]
        for group, key, t in hyper:
            group[key] = _PerCallValue(t, group[key])

        def restore():
            for group, key, v in saved:
                group[key] = v
        return restore

    def _add(self, t, path):
        if id(t) in self.by_id:
            return   # (a parameter in two groups: the first path reads it)
        k, g, i, what = path
        if i is None:
            name = "%so%d_g%d_%s" % (_PREFIX, k, g, what[1])
            self.by_id[id(t)] = (t, name)
            self.paths[name] = path
            return
        name = "%so%d_g%d_p%d" % (_PREFIX, k, g, i)
        if what == "grad":
            name += "_grad"
        elif what is not None:
            name += "_" + "".join(c if c.isalnum() else "_" for c in what[1])
        self.by_id[id(t)] = (t, name)
        self.paths[name] = path

    def ready(self):
        """Whether every parameter with a gradient has its state (the
        first step, which creates it, is not lifted) and no group uses the
        foreach implementation."""
        return _ready(self.opts)

    def name_of(self, t):
        """The qualified name of a lifted tensor, or None."""
        e = self.by_id.get(id(t))
        return e[1] if e is not None and e[0] is t else None

    def resolve(self, name):
        """The tensor at `name`'s source now."""
        k, g, i, what = self.paths[name]
        o = self.opts[k]
        if i is None:
            # A PER_CALL hyperparameter: its value now, as a 0-d f64 tensor
            # (the same tensor while the value is the same).
            v = o.param_groups[g][what[1]]
            last = self.resolved.get(name)
            if last is None or last[0] != v:
                last = self.resolved[name] = (v, _hyper_tensor(v))
            return last[1]
        p = o.param_groups[g]["params"][i]
        if what is None:
            return p
        if what == "grad":
            return p.grad
        return o.state[p][what[1]]


def is_lifted_name(qualname):
    return qualname is not None and qualname.startswith(_PREFIX)


def _structure(o):
    """What an optimizer's step branches on, besides its hyperparameters:
    per group, per parameter, whether its gradient is None, and its state
    entries (tensors by kind, other values as they are)."""
    state = o.state
    out = []
    for group in o.param_groups:
        ps = []
        for p in group["params"]:
            st = state.get(p)
            entries = ()
            if st:
                entries = tuple(sorted(
                    (name, ("tensor", v.dtype, v.dim())
                     if isinstance(v, torch.Tensor) else freeze(v))
                    for name, v in st.items()))
            ps.append((p.grad is None, entries))
        out.append(tuple(ps))
    return tuple(out)


def _hyper(o):
    """Each group's hyperparameters (every entry but `params`); a PER_CALL
    one as "per call" when the step's capture reads it per call."""
    live = per_call(o)
    out = []
    for group in o.param_groups:
        skip = _per_call_keys(o, group) if live else ()
        out.append(tuple(sorted(
            (k, "per call" if k in skip else freeze(v))
            for k, v in group.items() if k != "params")))
    return tuple(out)


def add_guards(guards, fn):
    """Adds the facts of the optimizers `fn` reaches to the guard set:
    computed on every call (kiln._guards.Guards.add_computed)."""
    for o in reachable_optimizers(fn):
        label = type(o).__name__
        guards.add_computed("%s structure (grads None, state entries)"
                            % label, lambda o=o: _structure(o))
        guards.add_computed("%s" % label, lambda o=o: _hyper(o),
                            show=_hyper_changes)


def _hyper_changes(old, new):
    """`param_groups[g]['lr']: 0.1 -> 0.05` for each changed entry."""
    if len(old) != len(new):
        return ["param_groups: %d -> %d groups" % (len(old), len(new))]
    out = []
    for g, (a, b) in enumerate(zip(old, new)):
        a, b = dict(a), dict(b)
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k, "(missing)") != b.get(k, "(missing)"):
                out.append("param_groups[%d][%r]: %r -> %r" % (
                    g, k, a.get(k, "(missing)"), b.get(k, "(missing)")))
    return out


class TracedValueStored(Exception):
    """A lifted capture left a traced value in an optimizer's state (a
    state entry the step creates: SGD's momentum buffer after `momentum`
    went from 0 to nonzero); the optimizer's state is restored and the
    step captured again without lifting (kiln._compile._import)."""


def snapshot(sources):
    """The optimizers' state entries before a lifted capture."""
    return _snapshot(sources.opts)


def _snapshot(opts):
    return [(o, {id(p): (p, dict(st)) for p, st in o.state.items()})
            for o in opts]


def _restore(snap):
    """Puts the optimizers' state back as it was at `snap`."""
    for o, before in snap:
        for p in [p for p in o.state if id(p) not in before]:
            del o.state[p]
        for p, saved in before.values():
            st = o.state[p]
            st.clear()
            st.update(saved)


def settle_state(snap, run=None):
    """After a lifted capture: a traced value (a Proxy) the step stored in
    an optimizer's state is replaced by its real value where the capture
    ran (graph breaks: `run.concrete`); where it did not run, the state is
    put back as it was and TracedValueStored raised (the caller captures
    again without lifting)."""
    found = False
    for o, before in snap:
        for p, st in list(o.state.items()):
            for k, v in list(st.items()):
                if not isinstance(v, fx.Proxy):
                    continue
                real = run.concrete.get(v.node) if run is not None else None
                if isinstance(real, torch.Tensor):
                    st[k] = real
                    continue
                found = True
    if not found:
        return
    if run is not None:
        raise KilnError(
            "the captured optimizer step stored a value it computed in the "
            "optimizer's state, and kiln could not give it a real value; "
            "call kiln.reset()")
    _restore(snap)
    raise TracedValueStored()


# --- the step of an optimizer a compiled function calls (the "train" form)


# Optimizers whose step inside a compiled function runs as its own
# program (StepLift._own_program).
_OWN_PROGRAM_TYPES = (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW)


def optimizers_named(fn, values=()):
    """The optimizers a compiled function (not a bound `opt.step`) may call
    `step()` on: those in its closure cells, the globals its code names
    (nested code too), a bound method's object and that object's attributes
    (`self.opt` of a trainer), a functools.partial's arguments, and
    `values` (the call's non-tensor arguments, containers flattened)."""
    from torch.utils import _pytree as pytree
    found = []

    def add(v):
        if isinstance(v, torch.optim.Optimizer) and \
                not any(v is o for o in found):
            found.append(v)

    def walk(f):
        if isinstance(f, functools.partial):
            walk(f.func)
            for v in list(f.args) + list(f.keywords.values()):
                add(v)
            return
        if inspect.ismethod(f):
            walk(f.__func__)
            obj = f.__self__
            add(obj)
            for v in list(getattr(obj, "__dict__", {}).values()):
                add(v)
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
                add(cell.cell_contents)
            except ValueError:   # an empty cell
                pass
        g = getattr(f, "__globals__", {})
        for name in sorted(_code_names(code)):
            add(g.get(name))

    walk(fn)
    for v in values:
        for leaf in pytree.tree_flatten(v)[0]:
            add(leaf)
    return found


class StepLift:
    """While kiln traces a compiled function that calls `opt.step()` on an
    optimizer it reaches (optimizers_named: a training step `zero_grad,
    forward, backward, step`), each such optimizer's `step` is wrapped (an
    instance attribute, put back after the trace): a step entered by this
    trace once the optimizer's state exists (`_ready`) is lifted as
    `kiln.compile(opt.step)`'s is (its parameters, gradients and state read
    from their sources, PER_CALL hyperparameters as program arguments; the
    tensors are named `_kiln_src_o<k>_...`, k counting the optimizers in
    the order this trace steps them), so its reads and in-place writes are
    nodes of the segment after `backward()` instead of one graph break per
    write. The function is traced on every call (backward is a break; a
    trace that lifted a step and had no break is run as segments too,
    `used`), so nothing of the optimizer needs a guard: the segment's
    signatures hold its constants (momentum, ...), its tensors' metadata
    and the pattern of None gradients. A first step (state not made yet)
    runs as before (its writes eager), so the state it creates is real; a
    traced value a lifted step stores in the state gets its real value
    after the run (`settle`), or the state is put back when the trace
    fails (`abandon`)."""

    def __init__(self, opts, run, programs=None, owner=None):
        self.opts = opts
        self.run = run
        self.sources = None
        self.snap = []
        self.saved = []
        # optimizer -> its kiln.compile(opt.step) (kept by the compiled
        # function: _own_program)
        self.programs = programs
        self.owner = owner
        self.ran_programs = False

    @property
    def used(self):
        return self.sources is not None or self.ran_programs

    def __enter__(self):
        for o in self.opts:
            had = "step" in o.__dict__
            self.saved.append((o, had, o.__dict__.get("step")))
            inner = o.step

            def step(*args, _o=o, _inner=inner, **kwargs):
                return self._step(_o, _inner, args, kwargs)
            functools.update_wrapper(step, inner)
            o.__dict__["step"] = step
        return self

    def __exit__(self, *exc):
        for o, had, v in reversed(self.saved):
            if had:
                o.__dict__["step"] = v
            else:
                o.__dict__.pop("step", None)
        self.saved = []
        return False

    def _step(self, o, inner, args, kwargs):
        from ._breaks import active_tracer
        tracer = active_tracer()
        run = self.run
        if tracer is None or tracer.run is not run or tracer.eager_depth \
                or not run.breaks_allowed() or \
                getattr(tracer.importer, "optim_sources", None) is not None \
                or not _ready([o]):
            return inner(*args, **kwargs)
        if not args and not kwargs and self._own_program(o, inner):
            return self._run_own_program(o, inner, tracer, run)
        if self.sources is None:
            self.sources = Sources([])
        hyper = self.sources.add_stepping(o)
        if not any(o is x for x, _ in self.snap):
            self.snap += _snapshot([o])
        run.optim_sources = self.sources
        tracer.importer.optim_sources = self.sources
        restore = self.sources.install_per_call(hyper)
        try:
            return inner(*args, **kwargs)
        finally:
            restore()
            run.optim_sources = None
            # (the importer of the segment the step ended in)
            run.importer.optim_sources = None

    def _own_program(self, o, inner):
        """Whether `o.step()` runs as its own program: an optimizer whose
        lifted step is one program with no recapture per step (SGD, Adam,
        AdamW: _OWN_PROGRAM_TYPES; RMSprop's Python-int step count is a key
        value) called through its class's step or an lr scheduler's
        counting wrapper (another wrapper of the user's runs traced)."""
        if self.programs is None or type(o) not in _OWN_PROGRAM_TYPES:
            return False
        if getattr(inner, "_with_counter", False):
            return True
        return getattr(inner, "__self__", None) is o and \
            getattr(inner, "__func__", None) is type(o).step

    def _run_own_program(self, o, inner, tracer, run):
        """`o.step()` as `kiln.compile(o.step)` runs it (one program, its
        own guards, compiled once): called at this point of the trace, not
        traced again on every call of the function. What the segment has
        so far runs first (a graph break, when it has ops)."""
        from ._breaks import GraphInfo
        from ._compile import compile as kiln_compile
        c = self.programs.get(o)
        if c is None:
            c = self.programs[o] = kiln_compile(
                type(o).step.__get__(o, type(o)),
                backend=self.owner.backend, options=self.owner.options)
        if run.importer.lines:
            run.graph_break("%s.step(): runs its own compiled program"
                            % type(o).__name__)
        if getattr(inner, "_with_counter", False):
            o._step_count += 1   # (what the scheduler's wrapper counts)
        with tracer.eager():
            out = c()
        self.ran_programs = True
        run.graphs.append(GraphInfo(
            "%s.step" % type(o).__name__,
            ["%s.step (its own program)" % type(o).__name__], ""))
        return out

    def settle(self, run):
        """After the run: a traced value a lifted step stored in the state
        gets its real value."""
        if self.snap:
            settle_state(self.snap, run)

    def abandon(self):
        """The trace failed: traced values a lifted step stored in the
        state are taken out (the state as before the step)."""
        for o, _ in self.snap:
            if any(isinstance(v, fx.Proxy) for st in o.state.values()
                   for v in st.values()):
                _restore(self.snap)
                return
