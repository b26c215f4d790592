"""Graph breaks: running a function whose capture stops where Python needs a
tensor's value.

Design (docs/python.md, "Graph breaks"). A compiled function is traced with
kiln._tracer.KilnTracer (torch.fx proxies; each node imported as it is
created). Where Python needs a value the graph cannot give it (the truth
value of a tensor, `.item()`, `.tolist()`), where an op has no Kiln
conversion (or its converter refuses it), at `kiln.graph_break()` and at a
call of a `kiln.disable`d function or a `kiln.disallow_in_graph` op, the
trace *breaks*:

1. the nodes imported since the last break (a *segment*) are finished as a
   kg.program whose results are the segment's tensors Python can still reach
   (the proxies alive at the break, found by weak references), looked up in
   the function's segment cache by the segment's structure, compiled on a
   miss, and called: the values become real tensors;
2. the value Python asked for is given to it (a real bool, float, list), or
   the op without a conversion runs eagerly on the real tensors;
3. tracing goes on with a new segment whose inputs are the real tensors of
   earlier segments that it uses.

The Python function itself runs on every call (as TorchDynamo runs the
Python between its graphs on every call): a function with breaks is traced
again each call. A segment imported once is recorded (_Trie); a later
segment whose node signatures and end match a recording runs its program
without an import (a replay); the first difference imports the segment
(SegmentRun.catch_up), and its program is found by its structure. Nothing Python decided is replayed from an earlier call, so a
branch on `b.sum() < 0` takes the side this call's value picks, and the
segment after it is the one for that side (a different structure, a
different program). Non-tensor values a segment takes from earlier segments
(a size, an `.item()`) are part of its key; tensors are its arguments,
checked by the runtime's guards (recompiles, automatic dynamic shapes,
cache_size_limit per segment program).
"""

import collections
import functools
import inspect
import linecache
import threading
import traceback
import warnings
import weakref

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from . import _fx_import, _logs, _training
from ._errors import KilnError, Unsupported
from ._fx_import import FxImporter, TensorVal
from ._symbolic import Sym, evaluate, is_unbacked

_state = threading.local()


def active_tracer():
    """The KilnTracer tracing on this thread, or None."""
    stack = getattr(_state, "tracers", None)
    return stack[-1] if stack else None


class tracing:
    """Context: `tracer` is the active tracer (kiln.is_compiling() is true
    inside, graph_break() breaks its graph)."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        if not hasattr(_state, "tracers"):
            _state.tracers = []
        _state.tracers.append(self.tracer)
        return self.tracer

    def __exit__(self, *exc):
        _state.tracers.pop()
        return False


# ------------------------------------------------------------ user API


def is_compiling():
    """True while kiln captures the code that calls it (torch.compiler.
    is_compiling); False in eager code, including a `kiln.disable`d function
    or an op running eagerly at a graph break."""
    t = active_tracer()
    return t is not None and t.eager_depth == 0


def graph_break():
    """An explicit graph break (torch._dynamo.graph_break): the graph so far
    is compiled and run, a new one starts. Outside compiled code, nothing."""
    t = active_tracer()
    if t is None or t.eager_depth:
        return
    t.graph_break("graph_break()")


class _Wrapper:
    """A wrapped callable that keeps the wrapped one's name and binds as a
    method."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


class _Disabled(_Wrapper):
    """What kiln.disable returns: `fn` runs eagerly (a graph break around
    its call when called from compiled code)."""

    def __init__(self, fn, recursive):
        super().__init__(fn)
        self.recursive = recursive

    def __call__(self, *args, **kwargs):
        t = active_tracer()
        if t is None or t.eager_depth:
            return self.fn(*args, **kwargs)
        return t.call_eagerly(self, args, kwargs)


def disable(fn=None, recursive=True):
    """torch._dynamo.disable: `fn` (and everything it calls) runs eagerly,
    never captured; called from a compiled function, it is a graph break
    ("call to a kiln.disable'd function"). `kiln.compile` of a disabled
    function returns it unchanged. As a decorator: `@kiln.disable` or
    `@kiln.disable(recursive=False)` (kiln cannot capture the functions a
    disabled function calls, so recursive=False behaves as True)."""
    if fn is None:
        return lambda f: disable(f, recursive)
    if isinstance(fn, _Disabled):
        return fn
    if not callable(fn):
        raise TypeError("kiln.disable takes a callable, got %s"
                        % type(fn).__name__)
    return _Disabled(fn, recursive)


class _AllowedInGraph(_Wrapper):
    """What kiln.allow_in_graph returns for a Python function: its call is
    captured whole, in the graph of its caller; a graph break inside it is an
    error, not a break."""

    def __call__(self, *args, **kwargs):
        t = active_tracer()
        if t is None or t.eager_depth:
            return self.fn(*args, **kwargs)
        with t.no_breaks(getattr(self.fn, "__qualname__", repr(self.fn))):
            return self.fn(*args, **kwargs)


_disallowed = set()          # functions
_disallowed_methods = set()  # Tensor method names


def _graph_op(fn):
    """('function', fn) or ('method', name) for a callable kiln captures
    into graphs; None for anything else."""
    from . import _ops
    name = getattr(fn, "__name__", None)
    owner = getattr(fn, "__objclass__", None)
    if owner is not None and issubclass(torch.Tensor, owner) and name and \
            name in _ops.METHODS:
        return ("method", name)
    if _ops.function_converter(fn) is not None:
        return ("function", fn)
    return None


def disallow_in_graph(fn):
    """torch._dynamo.disallow_in_graph: calls of the torch op `fn`
    (`torch.add`, `torch.Tensor.sum`, ...) break the graph and run eagerly.
    Global, like TorchDynamo's; programs captured before keep their graphs
    (call kiln.reset()). Naming a callable kiln does not put in graphs is an
    error. Returns `fn`."""
    op = _graph_op(fn)
    if op is None:
        raise KilnError(
            "kiln.disallow_in_graph expects a torch op that kiln captures "
            "into graphs (a torch function or Tensor method with a Kiln "
            "conversion), got %r; use kiln.disable for other functions"
            % (fn,))
    if op[0] == "method":
        _disallowed_methods.add(op[1])
    else:
        _disallowed.add(fn)
    return fn


def allow_in_graph(fn):
    """torch._dynamo.allow_in_graph. For a torch op disallowed with
    disallow_in_graph: allowed again (returns `fn`). For a Python function:
    returns a wrapper whose calls are captured whole into the caller's
    graph; a graph break inside it raises instead (use the returned
    function: kiln has no bytecode hook to recognise calls of the
    original)."""
    op = _graph_op(fn)
    if op is not None:
        if op[0] == "method":
            _disallowed_methods.discard(op[1])
        else:
            _disallowed.discard(fn)
        return fn
    if isinstance(fn, _AllowedInGraph):
        return fn
    if isinstance(fn, _Disabled):
        fn = fn.fn
    if not callable(fn):
        raise TypeError("kiln.allow_in_graph takes a callable, got %s"
                        % type(fn).__name__)
    return _AllowedInGraph(fn)


def is_disallowed(node):
    if node.op == "call_function":
        try:
            return node.target in _disallowed
        except TypeError:
            return False
    if node.op == "call_method":
        return node.target in _disallowed_methods
    return False


class _AssumeConstant(_Wrapper):
    """What kiln.assume_constant_result returns."""

    def __call__(self, *args, **kwargs):
        t = active_tracer()
        if t is None or t.eager_depth:
            return self.fn(*args, **kwargs)
        return t.constant_result(self, args, kwargs)


def assume_constant_result(fn):
    """torch._dynamo.assume_constant_result: called from compiled code,
    `fn` runs once (eagerly, at capture) and its result is a constant of the
    compiled function from then on: later calls do not run it and nothing
    guards it (kiln.reset() forgets it). Its arguments must be Python values
    or real tensors, not values computed by the captured function."""
    return _AssumeConstant(fn)


# ------------------------------------------------------------ frames


def user_stack(tracer):
    """[(file, line, function name)] of the user's frames, outermost
    first, from the traced function down to the current point."""
    from ._tracer import _skipped
    frames = []
    f = inspect.currentframe()
    while f is not None:
        code = f.f_code
        if not _skipped(code.co_filename):
            frames.append((code.co_filename, f.f_lineno, code.co_name))
        if code is tracer.root_code:
            break
        f = f.f_back
    frames.reverse()
    return frames


class BreakReason:
    """One graph break: `reason` (what broke the graph) and `user_stack`
    (traceback.FrameSummary list, outermost first, ending at the user's
    line)."""

    def __init__(self, reason, stack, graph_index):
        self.reason = reason
        self.user_stack = [traceback.FrameSummary(f, l, n)
                           for (f, l, n) in stack]
        self.graph_index = graph_index

    @property
    def location(self):
        if not self.user_stack:
            return None
        fs = self.user_stack[-1]
        return "%s:%d" % (fs.filename, fs.lineno)

    def __repr__(self):
        return "BreakReason(%r at %s)" % (self.reason, self.location)


class GraphInfo:
    """One graph of a run: its program name, its ops (as `target_name`s of
    the FX nodes that became kt ops) and its MLIR text."""

    def __init__(self, name, ops, text):
        self.name = name
        self.ops = ops
        self.text = text


# ------------------------------------------------------------ the runs


def _freeze(v):
    """A hashable, comparable form of a Python constant for segment keys."""
    if v is None or isinstance(v, (bool, int, str)):
        return (type(v).__name__, v)
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, slice):
        return ("slice", _freeze(v.start), _freeze(v.stop), _freeze(v.step))
    if isinstance(v, (torch.dtype, torch.device, torch.layout,
                      torch.memory_format)) or v is Ellipsis:
        return ("torch", str(v))
    if isinstance(v, torch.Tensor):
        return ("tensor",)  # an argument of the program, guarded there
    try:
        hash(v)
        return ("obj", v)
    except TypeError:
        return ("id", _Identity(v))


class _Identity:
    """An unhashable constant in a segment key: equal only to itself, and
    kept alive by the key (so its id is never reused by another object)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj


class _ExternalEnv(dict):
    """A segment importer's environment: a node of an earlier segment (or
    an eager op) is imported on first use as an input of this segment,
    holding its real value."""

    def __init__(self, run):
        super().__init__()
        self.run = run

    def __missing__(self, node):
        return self.run.external(node)


class _Missing:
    pass


_BASE_WRITE = ("an in-place write to a view, or to a tensor a view of which "
               "crossed a graph break (as a copy), is not supported yet")


_MISSING = _Missing()


def _sig_externals(sig, out):
    """Adds to `out` the external indices that a node signature
    (RunSegment._signature) names: its ("x", j, meta) entries."""
    if isinstance(sig, tuple):
        if len(sig) == 3 and sig[0] == "x" and isinstance(sig[1], int):
            out.add(sig[1])
            return
        for part in sig:
            _sig_externals(part, out)


def _meta(v, run):
    """The signature of a value from outside a segment: a tensor by the
    metadata the import reads (dtype, shape, requires_grad, device, the
    kiln.mark_dynamic / mark_static marks, whether it stands for a view or
    for a tensor whose view crossed a break), anything else by value
    (_freeze)."""
    if isinstance(v, torch.Tensor):
        marks = v.__dict__
        return ("T", v.dtype, v.shape, v.requires_grad, v.device,
                v.is_leaf,
                tuple(sorted(marks.get("_kiln_dynamic_dims") or ())),
                tuple(sorted(marks.get("_kiln_static_dims") or ())),
                id(v) in run.view_copies, id(v) in run.view_bases)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_meta(x, run) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, _meta(x, run)) for k, x in v.items()))
    if v is _MISSING:
        return ("missing",)
    return _freeze(v)


def _unique_tensors(out):
    uniq = []
    seen = set()
    for x in pytree.tree_flatten(out)[0]:
        if isinstance(x, TensorVal) and id(x) not in seen:
            seen.add(id(x))
            uniq.append(x)
    return uniq


class _Trie:
    """The recorded segments of a function (one Broken), as a trie over
    node signatures (SegmentRun._signature). A node holds the importer
    value of the FX node it stands for (what the tracer answers Python:
    shapes, dtypes, constants) and its frames; `ends` the segments that
    ended there, by their live results (positions in the segment, or
    ("final",)); `refused` the signatures whose converter refused them
    there (they run eagerly).

    The invariant (docs/python.md, "Replaying segments"): a node's
    importer value is a function of the signatures of the nodes before it
    in its segment and its own, so equal signatures give equal values, and
    a segment whose every node and whose end match a recorded one is the
    recorded program applied to this call's inputs."""

    __slots__ = ("value", "frames", "children", "ends", "refused")

    def __init__(self, value=None, frames=None):
        self.value = value
        self.frames = frames
        self.children = {}
        self.ends = {}
        self.refused = {}


class _End:
    """Where a recorded segment ended: its importer (program arguments),
    the importer value of each of its nodes, its output (final segments),
    the order in which its external values became program inputs (their
    signature indices), its ops, its program (None: no ops), whether it
    ran eagerly (cache_size_limit of its site) and its ImportResult."""

    __slots__ = ("importer", "values", "out", "ext_order", "ops", "prog",
                 "eager", "result", "site")

    def __init__(self, importer, values, out, ext_order, ops, prog, eager,
                 result, site):
        self.importer = importer
        self.values = values
        self.out = out
        self.ext_order = ext_order
        self.ops = ops
        self.prog = prog
        self.eager = eager
        self.result = result
        self.site = site



class SegmentRun:
    """One call of a function through the tracer, with graph breaks.

    `owner` is the kiln._compile._Compiled, `cache` the _Broken holding the
    segment programs of this function and argument structure, `examples`
    the placeholder values (tensors and Python values), `allow_breaks` False
    when a break must raise (fullgraph=True, a re-capture)."""

    def __init__(self, owner, cache, name, importer, examples, allow_breaks,
                 dynamic_dims=()):
        self.owner = owner
        self.cache = cache
        self.name = name
        self.importer = importer
        self.examples = examples
        self.allow_breaks = allow_breaks
        self.dynamic_dims = set(dynamic_dims)
        # The grad mode of the call (part of the function's key): every
        # segment is captured and run in it, whatever mode the traced code
        # has set where the break falls (a break inside `torch.no_grad()` or
        # `torch.enable_grad()` blocks; kiln._fx_import's stop_gradient and
        # _refuse_enabled_grad handle the nodes of those blocks).
        self.grad_mode = importer.grad_enabled
        self.tracer = None
        self.concrete = {}       # node -> its real value (earlier segments)
        self.seg_nodes = []      # the nodes of the current segment
        self.seg_set = set()
        self.seg_ops = []        # their target names that became kt ops
        self.seg_inputs = list(examples)  # input_index -> tensor
        self.ext_nodes = []      # external nodes, in order of first use
        self.ext_index = {}
        self.proxies = []        # weakrefs to the proxies of the trace
        self.view_copies = set()  # ids of tensors that stand for views
        self.view_bases = set()   # ids of the tensors those views are of
        self.breaks = []
        self.graphs = []
        self.segment_index = 0
        self.start_location = None
        self.forbid = []         # allow_in_graph regions being traced
        self.output_value = _MISSING
        # The sources of an optimizer step being lifted (kiln._optim.
        # StepLift): a segment that starts inside the step lifts too.
        self.optim_sources = None
        # Replay (see _Trie): the signature of each node of the segment,
        # the segment position of each node, the external nodes in the
        # order the signatures first name them, the trie position matched
        # so far (None: this segment is imported) and the recorded
        # importer values of the matched nodes.
        self.seg_sigs = []
        self.seg_pos = {}
        self.sig_ext = {}
        self.sig_ext_nodes = []
        self.placeholder_count = 0
        self.pending_refusal = None
        self.pos = None
        self.renv = {}
        self._start_replay()

    # --- bookkeeping called by the tracer

    def track(self, proxy):
        self.proxies.append(weakref.ref(proxy))

    def add_node(self, node):
        self.seg_pos[node] = len(self.seg_nodes)
        self.seg_sigs.append(self._signature(node))
        self.seg_nodes.append(node)
        self.seg_set.add(node)

    def _remove_last(self, node):
        """Takes `node` (the op being created, which runs eagerly) out of
        the segment; returns its signature."""
        i = self.seg_pos.pop(node)
        del self.seg_nodes[i]
        self.seg_set.discard(node)
        sig = self.seg_sigs.pop(i)
        for n in self.seg_nodes[i:]:  # (nodes a converter's reads made)
            self.seg_pos[n] -= 1
        return sig

    def in_segment(self, node):
        return node in self.seg_set

    def external(self, node):
        """The importer value of `node`, a node of an earlier segment (or
        an eager op): its real tensors become inputs of this segment."""
        if node not in self.concrete:
            raise KilnError("internal error: the value of %s was not kept "
                            "across a graph break" % node.name)
        value = self.concrete[node]
        imp = self.importer

        def leaf(x):
            if isinstance(x, torch.Tensor):
                index = len(self.seg_inputs)
                self.seg_inputs.append(x)
                for d in getattr(x, "_kiln_dynamic_dims", ()):
                    imp.dynamic_dims.add((index, d))
                v = imp._input_value(x, index, node.name)
                if id(x) in self.view_copies:
                    v.is_view = True
                if id(x) in self.view_bases:
                    imp.no_write[id(v)] = _BASE_WRITE
                return v
            return x

        v = pytree.tree_map(leaf, value)
        dict.__setitem__(imp.env, node, v)
        if isinstance(v, TensorVal):
            imp.bind_node(v, node)
        if node not in self.ext_index:
            self.ext_index[node] = len(self.ext_nodes)
            self.ext_nodes.append(node)
        return v

    # --- breaks

    def breaks_allowed(self):
        return self.allow_breaks and not self.forbid

    def check_break(self, reason):
        """Raises when a break is not allowed here (fullgraph, a
        re-capture, inside an allow_in_graph function)."""
        if self.forbid:
            raise self._refused(
                "graph break inside %s, which kiln.allow_in_graph captures "
                "whole: %s" % (self.forbid[-1], reason))
        if not self.allow_breaks:
            raise self._refused("graph break: %s" % reason)

    def _refused(self, message):
        frames = self.tracer._user_frames()
        where = "%s:%d:%d" % frames[0] if frames else None
        text = "%s: %s" % (where, message) if where else message
        if frames:
            text += "\n" + "\n".join("  at %s:%d:%d" % f for f in frames)
        err = Unsupported(text, where)
        err._located = True
        err.graph_break = True
        return err

    def record_break(self, reason, stack):
        """Keeps the break for explain() and logs it (KILN_LOGS=
        graph_breaks: reason and user line; +graph_breaks: the user's
        whole stack)."""
        b = BreakReason(reason, stack, len(self.graphs))
        self.breaks.append(b)
        if _logs.log_enabled("graph_breaks"):
            text = "Graph break in %s at %s: %s" % (
                self.name, b.location or "<unknown>", reason)
            if _logs.log_enabled("graph_breaks", verbose=True):
                for fs in reversed(b.user_stack[:-1]):
                    text += "\n  from %s:%d in %s" % (fs.filename, fs.lineno,
                                                     fs.name)
            _logs.log("graph_breaks", text)

    def graph_break(self, reason, needed=()):
        """A break here: records it, runs the segment so far (keeping the
        values of `needed` nodes and of every live proxy) and starts the
        next one."""
        self.check_break(reason)
        stack = user_stack(self.tracer)
        self.record_break(reason, stack)
        self.flush(needed)
        self.start_location = (stack[-1][0], stack[-1][1]) if stack else None

    def materialize(self, node, reason):
        """The real value of `node` (a tensor of the current segment), at a
        graph break."""
        if node in self.concrete:
            return self.concrete[node]
        self.graph_break(reason, [node])
        return self.concrete[node]

    # --- running segments

    def _live_nodes(self, needed):
        live = []
        seen = set()
        for n in needed:
            if n in self.seg_set and n not in seen:
                seen.add(n)
                live.append(n)
        alive = []
        for r in self.proxies:
            p = r()
            if p is None:
                continue
            alive.append(r)
            node = p.__dict__.get("node") if not isinstance(
                p, fx.proxy.Attribute) else p.__dict__.get("_node")
            if node is not None and node in self.seg_set and \
                    node not in seen:
                seen.add(node)
                live.append(node)
        self.proxies = alive
        order = {n: i for i, n in enumerate(self.seg_nodes)}
        live.sort(key=order.__getitem__)
        return live

    def _key(self, live, output=None):
        """The structure of the current segment: its nodes (targets,
        constant arguments, which node each argument is), the values of the
        non-tensor values it takes from earlier segments, and its
        results."""
        index = {n: i for i, n in enumerate(self.seg_nodes)}
        ext = {}

        def arg(a):
            if isinstance(a, fx.Node):
                if a in index:
                    return ("n", index[a])
                if a not in ext:
                    # Its tensors are arguments (guarded); everything else
                    # in it is a constant of the graph, so part of the key.
                    ext[a] = ("x", len(ext),
                              _freeze(self.concrete.get(a, _MISSING)))
                return ext[a]
            if isinstance(a, (tuple, list)):
                return (type(a).__name__, tuple(arg(x) for x in a))
            if isinstance(a, dict):
                return ("dict", tuple((k, arg(x)) for k, x in a.items()))
            if isinstance(a, slice):
                return ("slice", arg(a.start), arg(a.stop), arg(a.step))
            return _freeze(a)

        nodes = []
        for n in self.seg_nodes:
            target = n.target
            try:
                hash(target)
            except TypeError:
                target = ("id", id(target))
            nodes.append((n.op, target, arg(n.args), arg(n.kwargs)))
        return (tuple(nodes), tuple(index[n] for n in live))

    # --- signatures and replay (see _Trie)

    def _signature(self, node):
        """What a replay must find equal for `node` to stand for a recorded
        node: its kind and target, its constant arguments, which node of
        the segment each operand is, and for every value from outside the
        segment (a placeholder, an attribute, a value of an earlier segment
        or of an eager op) its non-tensor value or its tensor metadata
        (_meta)."""
        pos = self.seg_pos
        ext = self.sig_ext

        def arg(a):
            if isinstance(a, fx.Node):
                i = pos.get(a)
                if i is not None:
                    return ("n", i)
                j = ext.get(a)
                if j is None:
                    j = ext[a] = len(self.sig_ext_nodes)
                    self.sig_ext_nodes.append(a)
                return ("x", j, _meta(self.concrete.get(a, _MISSING), self))
            if isinstance(a, (tuple, list)):
                return (type(a).__name__, tuple(arg(x) for x in a))
            if isinstance(a, dict):
                return ("dict", tuple((k, arg(x)) for k, x in a.items()))
            if isinstance(a, slice):
                return ("slice", arg(a.start), arg(a.stop), arg(a.step))
            return _freeze(a)

        target = node.target
        try:
            hash(target)
        except TypeError:
            target = _Identity(target)
        extra = None
        if node.op == "placeholder":
            i = self.placeholder_count
            self.placeholder_count += 1
            extra = _meta(self.examples[i] if i < len(self.examples)
                          else _MISSING, self)
        elif node.op == "get_attr" and self.tracer is not None:
            try:
                extra = _meta(self.attr(node.target), self)
            except AttributeError:
                extra = ("no attribute",)
        return (node.op, target, arg(node.args), arg(node.kwargs), extra)

    def _start_replay(self):
        trie = self.cache.trie if self.allow_breaks else None
        self.pos = trie if trie is not None and (
            trie.children or trie.ends) else None
        self.renv = {}

    def replaying(self):
        return self.pos is not None

    def replay_node(self, node):
        """In a replayed segment, `node` (just added) continues the
        recorded path: its recorded value stands for its import (True).
        A converter refusal recorded for it: the op runs eagerly (True).
        Anything else: the segment so far is imported now and the trace
        goes on importing (False)."""
        sig = self.seg_sigs[-1]
        child = self.pos.children.get(sig)
        if child is not None:
            self.pos = child
            self.renv[node] = child.value
            node.meta["kiln_frames"] = child.frames
            return True
        refused = self.pos.refused.get(sig)
        if refused is not None:
            node.meta["kiln_frames"] = refused[1]
            self.run_eager_op(node, refused[0], refused=True)
            node.meta["kiln_eager"] = True
            return True
        self.catch_up(len(self.seg_nodes) - 1)
        return False

    def catch_up(self, count):
        """Leaves replay for the rest of this segment: its first `count`
        nodes are imported now, in order, as the tracer would have."""
        from torch.overrides import _no_torch_function_mode
        from ._fx_import import target_name
        self.pos = None
        self.renv = {}
        imp = self.importer
        with _no_torch_function_mode():
            for n in self.seg_nodes[:count]:
                mark = len(imp.lines)
                imp.import_node(n)
                if len(imp.lines) > mark:
                    self.seg_ops.append(target_name(n))

    def _replay_inputs(self, end):
        inputs = list(self.seg_inputs)
        for j in end.ext_order:
            value = self.concrete[self.sig_ext_nodes[j]]
            inputs.extend(x for x in pytree.tree_flatten(value)[0]
                          if isinstance(x, torch.Tensor))
        return inputs

    def _replay_flush(self, needed, final):
        """Ends a replayed segment: when the recorded path ends here with
        these live results, its program runs on this call's inputs (True);
        else the segment is imported (catch_up) and flush goes on (False)."""
        live = [] if final else self._live_nodes(needed)
        key = ("final",) if final else tuple(self.seg_pos[n] for n in live)
        end = self.pos.ends.get(key)
        if end is None:
            self.catch_up(len(self.seg_nodes))
            return False
        env = dict(zip(self.seg_nodes, end.values))
        imp = end.importer
        out = end.out if final else tuple(env[n] for n in live)
        uniq = _unique_tensors(out)
        values = {}
        self.seg_inputs = self._replay_inputs(end)
        if end.eager:
            self._run_eagerly()
            values = None
        elif end.prog is None:
            for tv in uniq:
                values[id(tv)] = self._arg_tensor(tv, imp=imp)
        else:
            results = self.cache.call_program(end.prog, self, end.site,
                                              end.result)
            if results is None:
                self._run_eagerly()
                values = None
            else:
                if len(results) != len(uniq):
                    raise KilnError("internal error: the replayed graph @%s "
                                    "returned %d values for %d results"
                                    % (end.prog.name, len(results),
                                       len(uniq)))
                for tv, t in zip(uniq, results):
                    values[id(tv)] = t
                self.graphs.append(GraphInfo(end.prog.name, list(end.ops),
                                             end.result.text))
        self.cache.replayed_segments += 1
        self._finish_flush(imp, env, out, uniq, values, final)
        return True

    def _record(self, imp, live, out, final, prog, eager, result):
        """Adds this (imported) segment to the trie: the path of its node
        signatures with their importer values, and at its end the program
        (or the eager run) with what a replay needs."""
        cache = self.cache
        if not self.allow_breaks or cache.recorded >= cache.record_limit():
            return
        values = [imp.env.get(n, _MISSING) for n in self.seg_nodes]
        if any(v is _MISSING for v in values):
            return
        named = set()
        for sig in self.seg_sigs:
            _sig_externals(sig, named)
        ext_order = []
        for n in self.ext_nodes:
            j = self.sig_ext.get(n)
            if j is None or j not in named:
                # An input the signatures of the segment's nodes do not
                # name (named only by a node that left the segment, an
                # eager op): not replayed. (A replay numbers the externals
                # by its own signatures: such an index pointed past them,
                # an IndexError in _replay_inputs.)
                return
            ext_order.append(j)
        node = cache.trie
        for n, sig, v in zip(self.seg_nodes, self.seg_sigs, values):
            child = node.children.get(sig)
            if child is None:
                child = node.children[sig] = _Trie(
                    v, n.meta.get("kiln_frames"))
            node = child
        key = ("final",) if final else tuple(self.seg_pos[n] for n in live)
        if key not in node.ends:
            node.ends[key] = _End(imp, values, out, ext_order,
                                  list(self.seg_ops), prog, eager, result,
                                  (self.segment_index, self.start_location))
            cache.recorded += 1
        if self.pending_refusal is not None:
            sig, reason, frames = self.pending_refusal
            node.refused.setdefault(sig, (reason, frames))

    def flush(self, needed=(), final=False):
        """Runs the current segment: its live tensors (or, when `final`, the
        function's output) get their real values; a new segment starts."""
        if self.pos is not None and self._replay_flush(needed, final):
            self.pending_refusal = None
            self._new_segment()
            return
        imp = self.importer
        if final:
            live = []
            out = imp.output
        else:
            live = self._live_nodes(needed)
            out = tuple(imp.env[n] for n in live)
        uniq = _unique_tensors(out)
        values = {}
        prog = None
        result = None
        eager = False
        if imp.lines:
            key = self._key(live)
            site = (self.segment_index, self.start_location)
            name = self.cache.name_for(key, site)
            results = None
            if name is not None:
                imp.output = tuple(uniq)
                imp.name = name
                result = imp.finish()
                results = self.cache.run_segment(self, key, site, result)
                prog = self.cache.programs.get(key)
            else:
                eager = True
            if results is None:  # runs eagerly (cache_size_limit)
                self._run_eagerly()
                values = None
            else:
                for tv, t in zip(uniq, results):
                    values[id(tv)] = t
                self.graphs.append(GraphInfo(name, list(self.seg_ops),
                                             result.text))
        else:
            for tv in uniq:
                values[id(tv)] = self._arg_tensor(tv)
        self.cache.imported_segments += 1
        self._record(imp, live, out, final, prog, eager, result)
        self.pending_refusal = None
        self._finish_flush(imp, imp.env, out, uniq, values, final)
        self._new_segment()

    def _finish_flush(self, imp, env, out, uniq, values, final):
        """The real values of the segment's nodes (`values`: id of a result
        TensorVal -> its tensor; None when the segment ran eagerly)."""
        if values is not None:
            self._propagate_dynamic(uniq, values, imp)
            for tv in uniq:
                if tv.is_view:
                    # It crosses the break as a copy: neither it nor the
                    # tensor it views may be written in place later.
                    self.view_copies.add(id(values[id(tv)]))
                    root = tv
                    while root.is_view and root.base is not None:
                        root = root.base
                    base = values.get(id(root))
                    if base is None:
                        base = self._arg_tensor(root, None, imp=imp)
                    if base is not None:
                        self.view_bases.add(id(base))

            # Data-dependent sizes (kt.nonzero's counts) the segment's
            # results have: their real values, for the Python sizes
            # (x[m].shape[0]) computed from them.
            unbacked = {}
            for tv in uniq:
                t = values.get(id(tv))
                for d, size in enumerate(tv.shape):
                    if t is not None and is_unbacked(size) and \
                            size.key[0] == "s":
                        unbacked[size.key[1]] = t.shape[d]

            def size_of(sid):
                return unbacked[sid]  # KeyError: not a result's dim

            def conv(x):
                if isinstance(x, TensorVal) and x.scalar:
                    # A Python number the segment computed (`.item()`
                    # captured): Python goes on with the number (the
                    # program's caller hands it back as one already).
                    t = values.get(id(x), _MISSING)
                    return t.item() if isinstance(t, torch.Tensor) else t
                if isinstance(x, TensorVal):
                    return values.get(id(x), _MISSING)
                if is_unbacked(x):
                    try:
                        return evaluate(x.key, size_of)
                    except KeyError:
                        return _MISSING
                if isinstance(x, Sym):
                    return x.value
                return x

            for n in self.seg_nodes:
                if n in self.concrete:
                    continue
                v = env.get(n, _MISSING)
                if v is _MISSING:
                    continue
                cv = pytree.tree_map(conv, v)
                if not any(x is _MISSING for x in pytree.tree_flatten(cv)[0]):
                    self.concrete[n] = cv
            if final:
                self.output_value = pytree.tree_map(conv, out)
        elif final:
            self.output_value = self.concrete[self._output_node()]

    def _propagate_dynamic(self, results, values, imp):
        """A result's dims computed from dims marked dynamic
        (kiln.mark_dynamic) are marked dynamic on the real tensor, so the
        segments that take it do not recompile for their first new size
        either."""
        args = {id(a.value) for a in imp.args} | {id(a.current)
                                                  for a in imp.args}
        for tv in results:
            if id(tv) in args or not imp.dynamic_dims:
                continue
            dims = set()
            for d, size in enumerate(tv.shape):
                if isinstance(size, Sym) and any(
                        not isinstance(sid, str) and
                        imp.shape_env.symbols[sid][:2] in imp.dynamic_dims
                        for sid in size.syms):
                    dims.add(d)
            if dims:
                values[id(tv)]._kiln_dynamic_dims = dims

    def _output_node(self):
        for n in reversed(self.seg_nodes):
            if n.op == "output":
                return n
        raise KilnError("internal error: the segment has no output")

    def _arg_tensor(self, tv, default=_MISSING, imp=None):
        """The real tensor a TensorVal that is a program argument stands
        for."""
        args = (imp or self.importer).args
        for a in args:
            if a.value is tv or a.current is tv:
                if a.is_input:
                    return self.seg_inputs[a.input_index]
                return self.attr(a.qualname)
        for a in args:
            if tv.name in (a.value.name, a.current.name):
                # A copy of an argument made without an op (`x.clone()`
                # after a break, copy_of): a new tensor, as in PyTorch.
                # (It failed: "a graph result without an op".)
                return self._arg_tensor(
                    a.current if tv.name == a.current.name else a.value,
                    default, imp).clone()
        if default is not _MISSING:
            return default
        raise KilnError("internal error: a graph result without an op")

    def attr(self, qualname):
        from ._fx_import import raw_getattr
        consts = self.importer.module_constants
        if qualname in consts:
            # (a tensor constant of a compiled module, off the module once
            # the trace is over: the last segment runs eagerly after it)
            return consts[qualname]
        obj = self.tracer.root
        for part in qualname.split("."):
            obj = raw_getattr(obj, part)
        return obj

    def _new_segment(self):
        old = self.importer
        imp = FxImporter(self.name, old.root, [], (),
                         root_location=None)
        imp.grad_enabled = self.grad_mode
        imp.root_loc = imp._loc_alias(_root_loc_text(old))
        imp.env = _ExternalEnv(self)
        # (one dict for the whole trace: _tracer._constants_kept_off fills
        # the first importer's)
        imp.module_constants = old.module_constants
        # (and one of the tensors made in the trace that graphs wrote:
        # _tracer._written_by_graph refuses reads of them after a break)
        imp.written_fresh = old.written_fresh
        imp.segment = self.segment_index + 1
        if self.optim_sources is not None:
            imp.optim_sources = self.optim_sources
        self.importer = imp
        if self.tracer is not None:
            self.tracer.importer = imp
        self.seg_nodes = []
        self.seg_set = set()
        self.seg_ops = []
        self.seg_inputs = []
        self.ext_nodes = []
        self.ext_index = {}
        self.seg_sigs = []
        self.seg_pos = {}
        self.sig_ext = {}
        self.sig_ext_nodes = []
        self.segment_index += 1
        self._start_replay()

    def _run_eagerly(self):
        """Runs the current segment's nodes eagerly (PyTorch), in order."""
        with self.tracer.eager():
            for n in self.seg_nodes:
                if n in self.concrete:
                    continue
                if n.op == "placeholder":
                    self.concrete[n] = self.examples[
                        self._placeholder_index(n)]
                elif n.op == "get_attr":
                    self.concrete[n] = self.attr(n.target)
                elif n.op == "output":
                    self.concrete[n] = _fx_import._plain_containers(
                        fx.node.map_arg(n.args[0],
                                        lambda m: self.concrete[m]))
                else:
                    self.concrete[n] = self.eager_value(n)

    def _placeholder_index(self, node):
        i = 0
        for n in node.graph.nodes:
            if n is node:
                return i
            if n.op == "placeholder":
                i += 1
        raise KilnError("internal error: unknown placeholder")

    def eager_value(self, node):
        """Runs the op of `node` eagerly on the real values of its
        arguments (which must all be known), in the grad mode the traced
        code had when it called it (node.meta["kiln_grad"]: an optimizer's
        in-place update under its `torch.no_grad()`)."""
        mode = node.meta.get("kiln_grad")
        if mode is None or mode == torch.is_grad_enabled():
            return self._eager_value(node)
        saved = self.tracer.user_grad
        try:
            with torch.set_grad_enabled(mode):
                return self._eager_value(node)
        finally:
            self.tracer.user_grad = saved   # (set_grad_enabled is tracked)

    def _eager_value(self, node):
        def real(m):
            v = self.concrete[m]
            if isinstance(v, Sym):
                # A size from an input dim (`torch.randint(0, 5, (n,))`,
                # `n = x.shape[-1]`): the op gets a Python int, specialized
                # (another size recaptures; a marked dim raises
                # SpecializationError). Before, the symbolic size reached
                # torch and the capture failed with a TypeError.
                return self.tracer.static(
                    v, "a size passed to %s, run eagerly at a graph break"
                    % _fx_import.target_name(node))
            return v
        args = fx.node.map_arg(node.args, real)
        kwargs = fx.node.map_arg(node.kwargs, real)
        if node.op == "call_function":
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            self_, rest = args[0], args[1:]
            if node.target.endswith("_") and (
                    id(self_) in self.view_copies or
                    id(self_) in self.view_bases):
                err = self._refused("Tensor.%s: %s" % (node.target,
                                                       _BASE_WRITE))
                err.graph_break = False
                raise err
            return getattr(self_, node.target)(*rest, **kwargs)
        if node.op == "call_module":
            return self.tracer.root.get_submodule(node.target)(*args,
                                                              **kwargs)
        raise KilnError("internal error: cannot run %s eagerly" % node.op)

    def run_eager_op(self, node, reason, refused=False):
        """A break at an op kiln does not put in the graph: the segment so
        far runs, then the op runs eagerly."""
        self.check_break(reason)
        stack = user_stack(self.tracer)
        self.record_break(reason, stack)
        needed = [a for a in node.all_input_nodes if a in self.seg_set]
        needed += self._unbacked_sources(needed)
        sig = self._remove_last(node)
        if refused:
            # The converter refused it: recorded with the segment (the
            # refusal is a function of the signature), so a replay runs it
            # eagerly without importing.
            self.pending_refusal = (sig, reason, node.meta.get("kiln_frames"))
        self.flush(needed)
        with self.tracer.eager():
            try:
                value = self.eager_value(node)
            except TypeError as e:
                # Eager's own TypeError (an argument the op does not take,
                # kiln._signatures): kiln._tracer raises it as one, at the
                # user's line.
                e.kiln_eager_op = True
                raise
        self.concrete[node] = value
        self.start_location = (stack[-1][0], stack[-1][1]) if stack else None
        return value

    def node_value(self, node):
        """The importer's value of a node of the current segment (the
        recorded one in a replay), None when it has none."""
        if self.replaying():
            return self.renv.get(node)
        return self.importer.env.get(node)

    def _unbacked_sources(self, nodes):
        """The tensor nodes whose dims give the data-dependent sizes
        (_symbolic.Unbacked) that `nodes` hold as Python values
        (x[m].shape[0]): results of the segment, so that its run gives
        those sizes their real values (_finish_flush)."""
        out = []
        for n in nodes:
            v = self.node_value(n)
            for leaf in pytree.tree_flatten(v)[0]:
                if is_unbacked(leaf):
                    src = self.tracer._unbacked_tensor_node(leaf)
                    if src is not None and src not in out:
                        out.append(src)
        return out

    def finish(self, force):
        """After the trace: with breaks (or `force`), runs the last segment
        and returns (True, the function's output); else (False, None)."""
        if not self.breaks and not force:
            return False, None
        self.flush(final=True)
        return True, self.output_value


def _root_loc_text(importer):
    for text, alias in importer.locs.items():
        if alias == importer.root_loc:
            return text
    return "unknown"


# ------------------------------------------------------------ the cache


class Broken:
    """The segment programs of one compiled function and argument
    structure: each distinct segment structure is one kg.program in its own
    session (kiln._compile._Program), so its guards, recompiles, automatic
    dynamic shapes and cache_size_limit are the runtime's. At most
    cache_size_limit structures per segment site (its position in the call
    and the line it starts at): past that, that segment runs eagerly."""

    def __init__(self, owner, name):
        self.owner = owner
        self.name = name
        self.programs = collections.OrderedDict()
        self.sites = collections.defaultdict(int)
        self.warned = set()
        self.trie = _Trie()      # the recorded segments, for replays
        self.recorded = 0
        self.replayed_segments = 0  # segments run without an import
        self.imported_segments = 0  # segments traced and imported

    @staticmethod
    def record_limit():
        from ._compile import config
        return 16 * max(1, config.cache_size_limit)

    def name_for(self, key, site):
        """The program name of a segment structure; None when the segment
        must run eagerly (its site reached cache_size_limit)."""
        from ._compile import config
        prog = self.programs.get(key)
        if prog is not None:
            return prog.name
        if self.sites[site] >= config.cache_size_limit:
            self._warn(site, "has had %d different graphs"
                       % self.sites[site])
            return None
        return "%s_g%d" % (self.name, len(self.programs))

    def run_segment(self, run, key, site, result):
        """Calls the segment's program (made on first use) on the run's
        inputs: its results, or None past cache_size_limit."""
        from ._compile import _CacheLimit, _Program, config
        prog = self.programs.get(key)
        if prog is None:
            self.sites[site] += 1
            holder = [result]
            prog = _Program(self.owner, result.name, run.seg_inputs, {},
                            lambda flat, reason: holder[0])
            prog.holder = holder
            self.programs[key] = prog
        return self.call_program(prog, run, site, result)

    def call_program(self, prog, run, site, result):
        """Calls a segment's program on the run's inputs, `result` being
        the capture of this segment for them: its results, or None when the
        segment must run eagerly (cache_size_limit, not trainable)."""
        from ._compile import (_AliasedArguments, _CacheLimit, config,
                               _no_grad_nodes)
        prog.holder[0] = result
        prog.result = result
        prog.root = run.tracer.root
        # A segment of an optimizer's step (its ops all made under its
        # `torch.no_grad()`) runs as an inference call (_no_grad_body).
        result.no_grad_body = _no_grad_nodes(run.seg_nodes)
        user_grad = run.tracer.user_grad
        try:
            try:
                # Kiln's own torch calls (arguments detached for DLPack,
                # results unflattened) are not the traced code's: the
                # tracer's modes must not make them nodes (a detach of a
                # buffer the graph writes, `self.count += 1`, became a
                # Proxy: "data must be a Tensor").
                with torch.set_grad_enabled(run.grad_mode), \
                        torch.overrides._no_torch_function_mode():
                    out = prog.call(run.seg_inputs)
            finally:
                run.tracer.user_grad = user_grad  # (the mode is tracked)
        except _training.NotTrainable as e:
            if self.owner.fullgraph:
                raise
            self.owner.not_trainable_warning(e)
            return None
        except _CacheLimit:
            self._warn(site, "its program @%s reached cache_size_limit (%d)"
                       % (prog.name, config.cache_size_limit), prog)
            return None
        except _AliasedArguments as e:
            # f(t, t) writing one of them: this segment runs eagerly on the
            # real (aliased) tensors for this call, as the whole function
            # does without breaks (it raised out of the trace).
            if self.owner.fullgraph:
                raise KilnError("kiln: %s: %s" % (self.name, e)) from None
            self._warn(site, "writes its argument '%s', which shares "
                       "memory with '%s'" % e.pair, for_now=True)
            return None
        return list(out)

    def _warn(self, site, why, prog=None, for_now=False):
        """One KilnWarning per segment site (and kind): the segment runs
        eagerly from now on, or (`for_now`) for this call."""
        from ._compile import KilnWarning
        if (for_now, site) in self.warned:
            return
        self.warned.add((for_now, site))
        where = "%s:%d" % site[1] if site[1] else "the start"
        reasons = prog.recompile_reasons() if prog is not None else []
        warnings.warn(
            "kiln: %s: the graph after %s (segment %d) %s; it runs eagerly "
            "(PyTorch) %s%s" % (
                self.name, where, site[0], why,
                "for this call" if for_now else "from now on",
                (". Recompile reasons:\n" + "\n".join(
                    "  %d. %s" % (i + 1, r) for i, r in enumerate(reasons)))
                if reasons else ""), KilnWarning, stacklevel=5)

    def stats(self):
        return {p.name: p.stats() for p in self.programs.values()}

    def recompile_reasons(self):
        return {p.name: p.recompile_reasons() for p in
                self.programs.values()}


# ------------------------------------------------------------ explain


class ExplainOutput:
    """What kiln.explain returns (torch._dynamo.explain's ExplainOutput):
    `graphs` (the MLIR text of each graph's program), `graph_count`,
    `graph_break_count`, `break_reasons` (BreakReason: `reason`,
    `user_stack`), `op_count`, `ops_per_graph` (the ops of each graph, by
    their torch names) and `out_guards` (each graph's kg.guard_tensor
    lines). `print(explanation)` prints the FAQ's summary; it also unpacks
    as the FAQ's `explanation, out_guards, graphs, ops_per_graph`."""

    def __init__(self, graphs, breaks):
        self.graph_infos = graphs
        self.graphs = [g.text for g in graphs]
        self.graph_count = len(graphs)
        self.break_reasons = list(breaks)
        self.graph_break_count = len(breaks)
        self.ops_per_graph = [list(g.ops) for g in graphs]
        self.op_count = sum(len(o) for o in self.ops_per_graph)
        self.out_guards = [[l.strip() for l in g.text.splitlines()
                            if "kg.guard_tensor" in l] for g in graphs]

    def __str__(self):
        lines = ["Kiln produced %d graph%s, with %d graph break%s and %d "
                 "op%s." % (self.graph_count,
                            "" if self.graph_count == 1 else "s",
                            self.graph_break_count,
                            "" if self.graph_break_count == 1 else "s",
                            self.op_count, "" if self.op_count == 1 else "s")]
        if self.break_reasons:
            lines.append(" Break reasons:")
            for i, b in enumerate(self.break_reasons):
                lines.append("%d. %s" % (i + 1, b.reason))
                for fs in b.user_stack:
                    lines.append('   File "%s", line %d, in %s' % (
                        fs.filename, fs.lineno, fs.name))
                    src = linecache.getline(fs.filename, fs.lineno).strip()
                    if src:
                        lines.append("    %s" % src)
                lines.append("")
        if self.graph_infos:
            lines.append(" Ops per graph:")
            for i, g in enumerate(self.graph_infos):
                lines.append("%d. @%s: %s" % (i + 1, g.name,
                                              ", ".join(g.ops) or "(none)"))
        return "\n".join(lines)

    def __repr__(self):
        return "ExplainOutput(graph_count=%d, graph_break_count=%d, " \
            "op_count=%d)" % (self.graph_count, self.graph_break_count,
                              self.op_count)

    def __iter__(self):
        return iter((str(self), self.out_guards, self.graphs,
                     self.ops_per_graph))


def explain(fn, *args, **kwargs):
    """torch._dynamo.explain: `kiln.explain(fn)(*args, **kwargs)` (or
    `kiln.explain(fn, *args, **kwargs)`) captures and runs `fn` once on the
    `eager` backend and returns an ExplainOutput: graphs, graph breaks with
    their reasons and user lines, ops per graph."""
    from ._compile import _Compiled

    def run(*a, **k):
        c = _Compiled(fn, "eager", False, None, None, None)
        return c.explain_call(a, k)

    if args or kwargs:
        return run(*args, **kwargs)
    return run
