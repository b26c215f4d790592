"""The FX importer: a torch.fx graph and example inputs -> a `kg.program`.

`FxImporter` is a small abstract interpreter over FX nodes. Each node's value
is computed symbolically: tensors become `TensorVal`s (an SSA value of the
graph body with a symbolic shape and a dtype), sizes become ints or `Sym`s
(see _symbolic.py), everything else stays a Python value. Each call_function
/ call_method / call_module node is converted by the converter registered
for its target in kiln._ops (one table per kind of target); a target without
a converter raises `Unsupported` naming the op and the user's source line.

Nodes are imported one at a time (`import_node`), so the tracer
(kiln._tracer) can ask for a node's value while Python code is still
running (a branch on `x.dim() == 3`, `B, T, C = x.size()`).

The program (`finish`) is one `kg.graph` over every tensor the graph reads:
user inputs first (placeholder order), then parameters, buffers and tensor
constants in order of first use, each with a `kg.guard_tensor`; a tensor
written in place (an input or a buffer) is a `!kt.ref` argument, loaded at
the start of the graph and written back with `kt.copy_` at its end. Every op
carries the location of the node it came from (Python frames as a call-site
chain, in a NameLoc with the module path) and the discardable attributes
`kg.source_fn` and `kg.nn_module_stack`.
"""

import collections
import dataclasses
import functools
import inspect
import operator
import re
import traceback

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from . import _autocast, _ir, _signatures
from ._errors import KilnError, KilnValueError, Unsupported
from ._symbolic import ShapeEnv, Sym, is_unbacked, nonneg, same, value


class TensorVal:
    """A tensor value of the graph body: its SSA name, shape (ints and
    Syms) and torch dtype. `arg` is the ProgramArg it is (as loaded), when it
    is one; `is_view` marks results of view ops (aliases). `const` is the
    torch tensor of a constant made in the program (kt.constant), for
    converters that need values known at import (a constant boolean mask);
    `slice_attrs` the attributes of the kt.slice that made it.

    Views made by link_view also know how to be made again from a new value
    of their base (`view_emit`) and how a write through them becomes a new
    value of the base (`view_inv`); `views` lists the views taken of this
    value, which a write to it makes again (kiln's functionalization of
    views, see Importer.mutate). `layout` is None for a value PyTorch lays
    out contiguously, "permuted" or "strided" otherwise (a reshape of such a
    value may be a copy in PyTorch, so a write through it is refused).

    `scalar` is None for a tensor; for a Python number the program computes
    from tensor data (`aten._local_scalar_dense`, `Tensor.item()`) it is the
    number's Python type (float, int or bool, by the dtype, as `.item()`
    gives): the value is a 0-d tensor that promotes as a Python number of
    that type in tensor arithmetic, and a program output that is one is
    handed back to Python as that number (kiln._compile)."""

    __slots__ = ("name", "shape", "dtype", "arg", "is_view", "base", "const",
                 "slice_attrs", "view_emit", "view_inv", "views", "rebuilt",
                 "layout", "scalar")

    def __init__(self, name, shape, dtype, arg=None, is_view=False,
                 base=None):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.arg = arg
        self.is_view = is_view
        self.base = base
        self.const = None
        self.slice_attrs = None
        self.view_emit = None
        self.view_inv = None
        self.views = None
        self.rebuilt = None
        self.layout = None
        self.scalar = None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def type(self):
        return _ir.tensor_type(self.shape, self.dtype)

    def __repr__(self):
        return "TensorVal(%s: %s)" % (self.name, self.type)


def example_layout(t, key=False):
    """TensorVal.layout for a call's tensor input `t`: None when it is
    contiguous, "permuted" when it is a dense tensor with its dims in
    another order (a transposed or channels-last tensor: PyTorch lays out
    pointwise results the same way), "strided" otherwise (a slice, an
    expanded tensor). With `key`, the permuted layout's order of dims too:
    the program's key has it (kiln._compile), since `is_contiguous()` (of
    either memory format) and whether a reshape is a view depend on it."""
    if t.is_contiguous():
        return None
    order = tuple(sorted(range(t.ndim), key=lambda d: -t.stride(d)))
    if t.permute(order).is_contiguous():
        return ("permuted", order) if key else "permuted"
    return "strided"


def link_view(r, x, emit, inverse, layout=None):
    """Marks `r` as a view of `x`: `emit(b, base)` makes it again from a new
    value of the base (a TensorVal, not linked), `inverse(b, base, new)` is
    the base's value after `new` is written through the view (None: such a
    write is refused). Returns r."""
    r.is_view, r.base = True, x
    r.view_emit, r.view_inv = emit, inverse
    r.layout = layout
    if x.views is None:
        x.views = []
    x.views.append(r)
    return r


_NAME = TensorVal.name  # the slot's descriptor


class _RebuiltView(TensorVal):
    """A view made again from the new value of its base after a write to
    the base (Importer.mutate). Its op is emitted when its name is first
    needed (an op reading it), so views nothing reads again cost nothing (a
    loop writing `h[:, i]` T times would otherwise remake every earlier
    view of h each time)."""

    __slots__ = ("_imp", "_src")

    def __init__(self, imp, src, base):
        TensorVal.__init__(self, None, src.shape, src.dtype)
        self._imp, self._src = imp, src
        link_view(self, base, src.view_emit, src.view_inv, src.layout)
        self.slice_attrs = src.slice_attrs

    @property
    def name(self):
        n = _NAME.__get__(self)
        if n is None:
            src = self._src
            if src.layout == "unknown" and src.view_inv is None:
                # A reshape of a permuted or sliced tensor, read after a
                # write to its base: PyTorch made it a view (it sees the
                # write) or a copy (it does not) by strides kiln does not
                # follow. Before, it was always made again from the new
                # base (`v = x.t().flatten(); x.mul_(2)`: v doubled, where
                # eager's copy keeps the old values). The call runs eagerly.
                err = self._imp.error(
                    "a reshape of a permuted or sliced tensor is read after "
                    "a write to the tensor it was taken from: whether it "
                    "sees the write (a view) or not (a copy) depends on "
                    "strides kiln does not track")
                err._no_break = True
                raise err
            mark = len(self._imp.lines)
            n = self._src.view_emit(self._imp, self.base).name
            _NAME.__set__(self, n)
            self._imp.emitted_views.append((mark, self))
        return n

    @name.setter
    def name(self, v):
        _NAME.__set__(self, v)


def new_seed():
    """A fresh seed for a random op (a rank-0 int64 tensor), drawn from
    torch's default generator, so torch.manual_seed makes it reproducible.
    (A segment program runs while the tracer's random-call mode is on.)"""
    from torch.overrides import _no_torch_function_mode
    with _no_torch_function_mode():
        return torch.randint(0, 1 << 62, (), dtype=torch.int64)


class ProgramArg:
    """A tensor argument of the program: a user input (`input_index`), an
    attribute of the root module (`qualname`: a parameter, buffer or tensor
    constant) or a `seed` (a rank-0 int64 tensor that the caller fills with
    new_seed() on every call: the seed of a random op)."""

    def __init__(self, name, example, input_index=None, qualname=None,
                 seed=False):
        self.name = name
        self.example = example
        self.input_index = input_index
        self.qualname = qualname
        self.seed = seed
        # A tensor the traced code made from Python data (torch.zeros(3)
        # in the function): a constant of the program, but a new tensor on
        # every call in PyTorch, so never written back nor returned itself.
        self.fresh = False
        self.mutated = False
        self.value = None  # the TensorVal as loaded
        self.current = None  # its value after in-place writes
        self.block_name = None

    @property
    def is_input(self):
        return self.input_index is not None


def _symbolic_key(x):
    return x.key if isinstance(x, Sym) else x


class SizeCheck:
    """A size the program requires of its inputs on every call
    (FxImporter.check_sizes): `key` (a Sym's expression over input-dim
    symbols) is at least `minimum`; else the call raises KilnError with
    `message % [sizes of shape]`, at `location` (the user's line)."""

    def __init__(self, key, minimum, message, shape, location,
                 error=KilnError):
        self.key, self.minimum = key, minimum
        self.message, self.shape, self.location = message, shape, location
        self.error = error   # KilnError, or KilnValueError (PyTorch's kind)

    def check(self, sym_dims, inputs):
        """`sym_dims`: sid -> (input index, dim); `inputs`: the call's
        flat tensors."""
        from ._symbolic import evaluate

        def size_of(sid):
            i, d = sym_dims[sid]
            return inputs[i].shape[d]
        error = self.error
        try:
            if evaluate(self.key, size_of) >= self.minimum:
                return
            msg = self.message % (
                [evaluate(k, size_of) for k in self.shape],)
        except ZeroDivisionError:
            # A size that divides by a size that is 0 on this call (`n //
            # m`): Python's ZeroDivisionError in eager PyTorch, a KilnError
            # at the user's line here (not a traceback from this check).
            msg = ("integer division or modulo by zero: a size of this "
                   "call divides by a size that is 0")
            error = KilnError
        raise error("%s: %s" % (self.location, msg) if self.location
                    else msg, self.location)


def check_sizes(result, inputs):
    """Runs the size checks of a capture (ImportResult) on a call's flat
    tensors."""
    for c in getattr(result, "size_checks", ()):
        c.check(result.sym_dims, inputs)


class ImportResult:
    """What `FxImporter.finish` produces: the module text and how to call it.

    * `args`: the program's tensor arguments (ProgramArg), in order;
    * `output_spec`, `output_leaves`: the output pytree; each leaf is
      ("result", i), ("fresh", j) (a copy of program argument j, a tensor
      the traced code made from Python data), ("arg", j) (the program
      argument itself: an input or parameter returned as is, or written
      in place), ("item", i) (result i, a 0-d tensor, handed back as a
      Python number: `.item()`, TensorVal.scalar) or ("const", v);
    * `constants`: a compiled module's tensor constants by qualname, kept
      off the user's module (kiln._tracer._constants_kept_off);
    * `specialized`: {(input index, dim): reason} for input dims the capture
      needs static;
    * `attr_dims_static`: every dim of non-input arguments (always static);
    * `graph`: the graph's parts as text (block arguments, op lines,
      results, location aliases), for kiln._training.
    """

    constants = {}

    def __init__(self, **kw):
        self.__dict__.update(kw)


_SSA_BAD = re.compile(r"[^A-Za-z0-9$._-]")
# Names the program text defines itself: op results (v0, v1, ...), the
# graph's block arguments (a0, a1, ...) and its results (r).
_RESULT_NAME = re.compile(r"v[0-9]+|a[0-9]+|r")


def _ssa_name(name, taken):
    name = _SSA_BAD.sub("_", name) or "arg"
    # Digits first, and the names the text defines (`FxImporter.fresh`'s
    # v0, v1, ..., block arguments a0, a1, ..., the graph's results r) get
    # a leading "_": an input named `v0` or `a3` must not redefine %v0 or
    # the block's %a3.
    if name[0].isdigit() or _RESULT_NAME.fullmatch(name):
        name = "_" + name
    base, n = name, 1
    while name in taken:
        name = "%s_%d" % (base, n)
        n += 1
    taken.add(name)
    return name


def target_name(node):
    """How an FX node's target is called in messages (`torch.nn.functional.
    relu`, `Tensor.view`, a module's type)."""
    t = node.target
    if node.op == "call_method":
        return "Tensor.%s" % t
    if node.op == "call_module":
        return "module %s" % t
    if node.op == "call_function":
        mod = getattr(t, "__module__", None) or ""
        name = getattr(t, "__name__", None) or str(t)
        if mod in ("_operator", "operator"):
            return "operator.%s" % name
        if mod.startswith("torch._C") or mod == "torch":
            return "torch.%s" % name
        if mod:
            return "%s.%s" % (mod, name)
        return name
    return "%s %s" % (node.op, t)


# --- locations


_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in '
                       r'(?P<fn>\S+)')


def frames_from_stack_trace(stack_trace):
    """(file, line, col) frames, innermost first, from an FX node's
    `stack_trace` string (outermost first, as traceback formats it)."""
    frames = []
    for m in _FRAME_RE.finditer(stack_trace or ""):
        frames.append((m.group("file"), int(m.group("line")), 1))
    frames.reverse()
    return frames


def node_frames(node):
    f = node.meta.get("kiln_frames")
    if f is not None:
        return f
    return frames_from_stack_trace(node.meta.get("stack_trace"))


def node_module_path(node):
    if node.op == "call_module":
        return str(node.target)
    stack = node.meta.get("nn_module_stack")
    if stack:
        return str(list(stack.keys())[-1])
    return None


def node_source_fn(node):
    sf = node.meta.get("source_fn")
    if isinstance(sf, (tuple, list)) and sf:
        return str(sf[0])
    if node.op == "call_module":
        return None
    if node.op in ("call_function", "call_method"):
        t = node.target
        return t if isinstance(t, str) else getattr(t, "__name__", str(t))
    return None


def format_frames(frames):
    return ["%s:%d:%d" % f for f in frames]


_NO_OUTPUT = object()  # FxImporter.output before the output node


def is_record_type(t):
    """A namedtuple class, or a dataclass (registered with torch's pytree
    on first use, its init fields as children), whose instances a traced
    function may build from tensors and return."""
    if not isinstance(t, type):
        return False
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        return True
    if t is collections.OrderedDict:
        return True
    if dataclasses.is_dataclass(t):
        _register_dataclass(t)
        return True
    return False


def _register_dataclass(cls):
    if cls in pytree.SUPPORTED_NODES:
        return
    names = [f.name for f in dataclasses.fields(cls) if f.init]

    def flatten(obj):
        return [getattr(obj, n) for n in names], (cls, tuple(names))

    def unflatten(values, context):
        klass, keys = context
        return klass(**dict(zip(keys, values)))

    pytree._register_pytree_node(cls, flatten, unflatten)


def _plain_containers(x):
    """The output of a graph with torch.fx's immutable_list and
    immutable_dict (how FX stores a node's arguments) made the list and
    dict the function returned, as eager PyTorch returns them."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_plain_containers(v) for v in x])
    if isinstance(x, tuple) and type(x).__module__ == "torch.return_types":
        return type(x)([_plain_containers(v) for v in x])
    if isinstance(x, tuple):
        return tuple(_plain_containers(v) for v in x)
    if isinstance(x, list):
        return [_plain_containers(v) for v in x]
    if isinstance(x, collections.OrderedDict):
        return collections.OrderedDict(
            (k, _plain_containers(v)) for k, v in x.items())
    if isinstance(x, dict):
        return {k: _plain_containers(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return type(x)(**{f.name: _plain_containers(getattr(x, f.name))
                          for f in dataclasses.fields(x) if f.init})
    return x


class _IndexVal:
    """An `index` SSA value (FxImporter.index_of)."""

    type = "index"

    def __init__(self, name, line=0):
        self.name = name
        self.line = line  # its line in FxImporter.lines (for rollback)


# ATen creation overloads whose `size` may hold Python numbers read from
# tensor data (O.full makes them unbacked sizes: FxImporter.size_from_data).
_DATA_SIZES_TAKEN = frozenset((
    "full.default", "zeros.default", "ones.default", "empty.memory_format",
    "new_zeros.default", "new_ones.default", "new_empty.default",
    "new_full.default"))

# ... and views with an explicit -1 (kt.reshape takes the number as a size
# and infers the -1, both checked when it runs).
_VIEWS = frozenset(("view.default", "_unsafe_view.default",
                    "reshape.default"))


class FxImporter:
    """Imports FX nodes one by one into a kg.program (see the module doc).

    `root` is the module whose attributes get_attr nodes and call_module
    targets name; `example_inputs` the values of the placeholders, in
    order; `dynamic_dims` the (input, dim) pairs marked dynamic
    (kiln.mark_dynamic), which may not be specialized."""

    def __init__(self, name, root, example_inputs, dynamic_dims=(),
                 root_location=None):
        from . import _ops  # the converter tables
        self.ops = _ops
        self.name = name
        self.root = root
        self.examples = list(example_inputs)
        self.dynamic_dims = set(dynamic_dims)
        self.shape_env = ShapeEnv()
        # The sids of symbols of dims marked dynamic (see _ir.DYNAMIC_SYMS).
        self.dynamic_syms = set()
        # Checks of sizes the capture cannot make at trace time because a
        # dim may be dynamic (check_sizes): made on every call.
        self.size_checks = []
        self.env = {}
        self.args = []
        self.attr_args = {}
        # Tensors the traced code made from Python data while tracing
        # (torch.tensor([True, False]), torch.arange(4) > 1): id -> tensor,
        # filled by kiln._tracer. They are constants of the program.
        self.made_in_trace = {}
        # id -> (tensor, segment index) of the tensors made in the trace
        # that the graph wrote in place (mutate): reads of them are nodes
        # (kiln._tracer._written_by_graph)
        self.written_fresh = {}
        # Tensors outside the trace whose data the trace baked in (read
        # into Python, or computed into a constant): id -> (tensor, label),
        # filled by kiln._tracer; guarded by their version (_guards.py).
        self.data_reads = {}
        # Real tensors the trace made constants of the program (id ->
        # tensor; torch.fx's create_arg): see Guards.demote.
        self.held_tensors = {}
        # _tensor_constant<k> attributes taken off a compiled module after
        # its trace (kiln._tracer._constants_kept_off).
        self.module_constants = {}
        self._arg_names = set()
        self.lines = []
        # (line count before, view): _RebuiltViews in emission order, so
        # that rollback can forget those whose lines it drops.
        self.emitted_views = []
        self._ssa = 0
        self.locs = {}
        self.loc_alias = "#loc0"
        self.locs["unknown"] = "#loc0"
        self.root_loc = self._loc_alias(root_location or "unknown")
        self.node = None
        self.cur_loc = self.root_loc
        self.cur_attrs = ""
        self.placeholders = 0
        # Names of values PyTorch computes outside autograd (BatchNorm's
        # running statistics): written back, never differentiated.
        self.no_grad_values = set()
        # The capture's grad mode: nodes the traced code created with grad
        # disabled (`torch.no_grad()`, `set_grad_enabled(False)` inside it;
        # node.meta["kiln_grad"], set by the tracer) are gradient barriers.
        self.grad_enabled = torch.is_grad_enabled()
        self.output = _NO_OUTPUT
        # id(TensorVal) -> the nodes bound to it (mutate rebinds them). The
        # TensorVals are kept alive while the import runs: a freed one's id
        # would be reused by a new TensorVal, and an in-place write to that
        # one would then rebind the old one's nodes (y.add_(1) followed by
        # z.scatter_(...) returned z's value for y).
        self._tensor_nodes = {}
        self._bound = []
        # id(TensorVal) -> why it must not be written in place (graph
        # breaks: a tensor whose views crossed a break as copies).
        self.no_write = {}
        # The dtype a module converted whole under autocast casts its
        # parameters to (see _import), else None.
        self._module_cast = None

    # ----- per node

    def import_graph(self, graph):
        for node in graph.nodes:
            self.import_node(node)
        return self

    def import_node(self, node):
        self.node = node
        frames = node_frames(node)
        self.cur_frames = frames
        loc = _ir.location(frames, node_module_path(node))
        self.cur_loc = self._loc_alias(loc)
        self.cur_attrs = self._metadata_attrs(node)
        if self.grad_enabled and node.meta.get("kiln_grad") is False:
            self.cur_attrs["kg.stop_gradient"] = True
        try:
            self._refuse_enabled_grad(node)
            self._refuse_complex(node)
            value = self._import(node)
        except KilnError as e:
            if getattr(e, "_located", False):
                raise
            message = e.message
            if getattr(e, "_complex", False) and node.op not in (
                    "placeholder", "get_attr"):
                # Name the op that made or took the complex tensor.
                message = "%s: %s" % (target_name(node), message)
            err = self._located(type(e), message)
            if getattr(e, "_no_break", False):
                err._no_break = True
            raise err from None
        except (TypeError, ValueError, IndexError, RuntimeError,
                AttributeError, NotImplementedError, ZeroDivisionError) as e:
            if self._takes_data_scalar(node):
                # A converter met a Python number from `.item()` where it
                # needs an int (a size, a slice bound, a dim): say that,
                # not the TypeError it raised on the TensorVal.
                raise self._located(
                    Unsupported, "%s: a Python number read from tensor "
                    "data (`.item()`, aten._local_scalar_dense) is used as "
                    "a size, an index or a dim; sizes from tensor values "
                    "are captured as the size of a new tensor "
                    "(torch.zeros(n): kt.full checks them when the program "
                    "runs) and as slice bounds (x[:n]) only, not where "
                    "PyTorch's rules for -1 or a negative value (view, "
                    "reshape, narrow) would need other checks: a graph "
                    "break hands Python the number" % target_name(node)) \
                from e
            raise self._located(
                Unsupported, "cannot capture %s: %s: %s"
                % (target_name(node), type(e).__name__, e)) from e
        self.env[node] = value
        if isinstance(value, TensorVal):
            self.bind_node(value, node)
        return value

    def _refuse_enabled_grad(self, node):
        """An op on tensors that the traced code runs under
        `torch.enable_grad()` (or `set_grad_enabled(True)`) inside a call
        made with grad disabled: the capture has no autograd (its key has
        grad off), so its result would not require grad where eager's does
        (and `backward()` on it would fail). It is refused: a graph break
        runs it eagerly, in the grad mode the code set, so autograd records
        it; with fullgraph=True a located Unsupported."""
        if self.grad_enabled or node.meta.get("kiln_grad") is not True or \
                node.op not in ("call_function", "call_method",
                                "call_module"):
            return
        def value(a):
            if a in self.env:
                return self.env[a]
            # A node of an earlier segment or an eager op (kiln._breaks'
            # _ExternalEnv would make it an input of this segment).
            run = getattr(self.env, "run", None)
            return run.concrete.get(a) if run is not None else None

        leaves = pytree.tree_flatten((node.args, node.kwargs))[0]
        if any(isinstance(a, fx.Node) and any(
                isinstance(v, (TensorVal, torch.Tensor))
                for v in pytree.tree_flatten(value(a))[0])
               for a in leaves):
            raise Unsupported(
                "%s under torch.enable_grad() inside a call made with "
                "grad disabled: the captured program has no autograd, so "
                "the op runs eagerly (a graph break) for autograd to record "
                "it" % target_name(node))

    def _takes_data_scalar(self, node):
        """True when an argument of `node` is a Python number the program
        reads from tensor data (TensorVal.scalar: `.item()`)."""
        leaves = []
        for a in pytree.tree_flatten((node.args, node.kwargs))[0]:
            leaves += [a.start, a.stop, a.step] if isinstance(a, slice) \
                else [a]
        return any(isinstance(v, TensorVal) and v.scalar for v in (
            self.env.get(a) if isinstance(a, fx.Node) else a
            for a in leaves))

    def bind_node(self, value, node):
        """Records that `node` reads the TensorVal `value` (see mutate)."""
        self._bound.append(value)
        self._tensor_nodes.setdefault(id(value), []).append(node)

    def _located(self, cls, message):
        frames = getattr(self, "cur_frames", None) or []
        where = format_frames(frames[:1])[0] if frames else None
        path = node_module_path(self.node) if self.node is not None else None
        text = message
        if path:
            text = "%s (in %s)" % (text, path)
        if frames:
            text = "%s: %s\n%s" % (where, text, "\n".join(
                "  at " + f for f in format_frames(frames)))
        err = cls(text, where)
        err._located = True
        err.reason = message
        return err

    def error(self, message):
        """An Unsupported error for the current node."""
        return Unsupported(message)

    def _metadata_attrs(self, node):
        attrs = {}
        sf = node_source_fn(node)
        if sf:
            attrs["kg.source_fn"] = sf
        stack = node.meta.get("nn_module_stack")
        if stack:
            attrs["kg.nn_module_stack"] = [str(k) for k in stack.keys()]
        elif node.op == "call_module":
            attrs["kg.nn_module_stack"] = [str(node.target)]
        return attrs

    def _loc_alias(self, text):
        alias = self.locs.get(text)
        if alias is None:
            alias = "#loc%d" % len(self.locs)
            self.locs[text] = alias
        return alias

    def _import(self, node):
        op = node.op
        if op == "placeholder":
            return self._placeholder(node)
        if op == "get_attr":
            return self._get_attr(node.target)
        if op == "output":
            self.output = _plain_containers(
                fx.node.map_arg(node.args[0], lambda n: self.env[n]))
            return None
        args = fx.node.map_arg(node.args, lambda n: self.env[n])
        kwargs = fx.node.map_arg(node.kwargs, lambda n: self.env[n])
        autocast = node.meta.get("kiln_autocast")
        if autocast is not None:
            pol = _autocast.policy(node, self.root, args, kwargs)
            if pol == _autocast.REFUSED:
                raise Unsupported(
                    "%s inside torch.autocast(\"cpu\", dtype=%s): autocast "
                    "casts only some of its inner ops; it runs eagerly"
                    % (target_name(node), autocast))
            if pol is not None:
                # torch.autocast("cpu"): the casts PyTorch makes before the
                # op (kiln._autocast); a module converted whole has its
                # parameters cast too (module_tensor).
                args, kwargs = _autocast.cast_args(
                    self, pol, autocast, args, kwargs,
                    lambda v: isinstance(v, TensorVal), self.ops.cast)
                if op == "call_module":
                    self._module_cast = _autocast.target_dtype(pol, autocast)
                    try:
                        return self._import_call(node, op, args, kwargs)
                    finally:
                        self._module_cast = None
        if op == "call_function" and "out" in kwargs and not isinstance(
                node.target, torch._ops.OpOverload):
            # `torch.add(x, y, out=o)`: the op, then its result written into
            # o (the converters take `out` only to accept the call).
            kwargs = dict(kwargs)
            out = kwargs.pop("out")
            result = self._import_call(node, op, args, kwargs)
            return result if out is None else self._write_out(out, result)
        return self._import_call(node, op, args, kwargs)

    def _write_out(self, out, result):
        """The value of `f(..., out=out)`: `result` written into the tensor
        (or tensors, for a tuple) `out`, as PyTorch's out= variants do when
        the result has out's shape and casts to its dtype. A resize (out of
        another shape) is left to eager PyTorch: Unsupported, so a graph
        break runs the call."""
        outs = out if isinstance(out, (list, tuple)) else (out,)
        results = result if isinstance(result, (list, tuple)) else (result,)
        if len(outs) != len(results) or not all(
                isinstance(o, TensorVal) and not o.scalar for o in outs):
            raise self.error("out= takes %d tensor(s) for this call"
                             % len(results))
        written = []
        for o, r in zip(outs, results):
            if not isinstance(r, TensorVal):
                r = self.ops.operand(self, r, o.dtype)
            if [value(d) for d in r.shape] != [value(d) for d in o.shape]:
                raise self.error(
                    "out= with a tensor of shape %s for a result of shape "
                    "%s (PyTorch resizes it)" % (
                        [value(d) for d in o.shape],
                        [value(d) for d in r.shape]))
            if not torch.can_cast(r.dtype, o.dtype):
                raise self.error(
                    "result type %s can't be cast to the desired output "
                    "type %s (PyTorch raises)" % (r.dtype, o.dtype))
            written.append(self.ops.copy_(self, o, r))
        if isinstance(out, (list, tuple)):
            return type(result)(*written) if hasattr(result, "_fields") \
                else tuple(written)
        return written[0]

    def _import_call(self, node, op, args, kwargs):
        if op == "call_module":
            module = self.root.get_submodule(node.target)
            conv = self.ops.module_converter(module)
            if conv is None:
                raise self.error(
                    "no Kiln conversion for %s (%s)" % (
                        type(module).__name__, node.target))
            return conv(self, module, str(node.target), *args, **kwargs)
        if op in ("call_method", "call_function"):
            # PyTorch's own argument parser judges the call (a TypeError
            # where eager raises one; kiln._signatures).
            _signatures.check_call(op, node.target, args, kwargs, TensorVal)
        if op == "call_method":
            conv = self.ops.METHODS.get(node.target)
            if conv is None:
                conv = self._aten_fallback(node.target, args, kwargs)
            if conv is None:
                raise self.error("no Kiln conversion for Tensor.%s"
                                 % node.target)
            return conv(self, *args, **kwargs)
        if op == "call_function":
            if isinstance(node.target, torch._ops.OpOverload):
                # An ATen-level graph (make_fx, AOTAutograd): kiln._aten.
                return self._import_aten(node, args, kwargs)
            if getattr(node.target, "__module__", None) in (
                    "_operator", "operator", "math", "builtins"):
                leaves = [v for v in pytree.tree_flatten((args, kwargs))[0]
                          if isinstance(v, TensorVal)]
                if leaves and all(v.scalar for v in leaves):
                    # Python arithmetic on numbers read from tensors
                    # (`.item()`): as Python computes it (others, math.*
                    # among them, refused: a graph break).
                    return self.ops.scalar_op(self, node.target, args)
            conv = self.ops.function_converter(node.target)
            if conv is not None:
                return conv(self, *args, **kwargs)
            if is_record_type(node.target):
                # A namedtuple or dataclass built from tensors (a model's
                # output record): the same record of the values.
                return node.target(*args, **kwargs)
            if not _contains_tensor((args, kwargs)):
                if kwargs.get("requires_grad") is True:
                    # (torch.linspace(0, 1, 3, requires_grad=True): a new
                    # leaf on every call, not a constant of the program.)
                    raise self.error(
                        "%s: a new tensor with requires_grad=True (a leaf "
                        "that autograd tracks)" % target_name(node))
                return self.ops.python_call(self, node.target, args, kwargs)
            conv = self._aten_fallback(
                _torch_op_name(node.target), args, kwargs)
            if conv is not None:
                return conv(self, *args, **kwargs)
            raise self.error("no Kiln conversion for %s" % target_name(node))
        raise self.error("unknown FX node kind %s" % op)

    def _refuse_complex(self, node):
        """A complex tensor anywhere in the graph is refused naming the op:
        an ATen-level node whose result is complex (make_fx's tensor_meta),
        or a torch-level function that makes complex tensors (view_as_complex,
        polar, torch.fft.*; a symbolic_trace graph has no dtypes)."""
        if node.op != "call_function":
            return
        metas = node.meta.get("tensor_meta")
        metas = metas if isinstance(metas, (list, tuple)) else [metas]
        for m in metas:
            if _ir.is_complex(getattr(m, "dtype", None)):
                raise _ir.complex_error("a result", m.dtype)
        t = node.target
        if isinstance(t, torch._ops.OpOverload):
            return
        name = getattr(t, "__name__", "")
        mod = getattr(t, "__module__", None) or ""
        if (name in _ir.COMPLEX_FUNCTIONS and mod in ("torch", "torch.functional")) \
                or (mod in ("torch._C._fft", "torch.fft")
                    and name not in _ir.REAL_FFT_FUNCTIONS):
            err = Unsupported("its result would be complex: %s"
                              % _ir.COMPLEX_REASON)
            err._complex = True
            raise err

    def _aten_fallback(self, name, args, kwargs):
        """A torch function or Tensor method without a torch-level
        converter: the ATen converter of the same op, where one of its
        overloads takes these arguments (kiln._aten.torch_fallback)."""
        from . import _aten
        return _aten.torch_fallback(name, args, kwargs)

    def _import_aten(self, node, args, kwargs):
        from . import _aten
        conv = _aten.converter(node.target)
        if conv is None:
            name = _aten.overload_name(node.target)
            why = _aten.reason_unsupported(node.target)
            if name.partition(".")[0] in _aten.COMPLEX_RESULT_OPS:
                raise self.error("aten.%s: its result would be complex: %s"
                                 % (name, _ir.COMPLEX_REASON))
            raise self.error("no Kiln conversion for aten.%s%s" % (
                name, ": " + why if why else ""))
        self._refuse_scalar_sizes(_aten.overload_name(node.target), node,
                                  args, kwargs)
        return conv(self, *args, **kwargs)

    def _refuse_scalar_sizes(self, name, node, args, kwargs):
        """A Python number read from a tensor (`.item()`, TensorVal.scalar)
        passed where the overload `name`'s schema takes ints (sizes, dims:
        a data-dependent size) is refused naming the argument."""
        def scalars(v):
            return [x for x in pytree.tree_flatten(v)[0]
                    if isinstance(x, TensorVal) and x.scalar]
        schema = getattr(node.target, "_schema", None)
        if schema is None or not scalars((args, kwargs)):
            return  # (None: a stand-in for an overload torch lacks)
        named = {a.name: a for a in schema.arguments}
        bound = list(zip(schema.arguments, args)) + [
            (named[k], v) for k, v in kwargs.items() if k in named]
        for a, v in bound:
            if (a.name == "size" and name in _DATA_SIZES_TAKEN) or (
                    a.name in ("start", "end") and name == "slice.Tensor") \
                    or (a.name in ("size", "shape") and name in _VIEWS and
                        isinstance(v, (list, tuple)) and -1 in [
                            d for d in v if isinstance(d, int)]):
                continue  # O.full, O.slice_dim, O.reshape: unbacked sizes
            if scalars(v) and "int" in str(a.type).lower():
                raise self.error(
                    "argument '%s' (%s) of aten.%s: a Python number read "
                    "from tensor data (aten._local_scalar_dense, `.item()`) "
                    "is used as a size or dim; sizes from tensor values are "
                    "taken as the size of a new tensor (aten.full, zeros, "
                    "ones, empty, new_*: kt.full checks them when the "
                    "program runs) and as aten.slice's bounds only, not "
                    "where PyTorch's rules for -1 or a negative value "
                    "would need other checks"
                    % (a.name, a.type, name))

    # ----- arguments

    def _placeholder(self, node):
        i = self.placeholders
        self.placeholders += 1
        if i >= len(self.examples):
            raise self.error("the graph has more inputs than the %d example "
                             "inputs given" % len(self.examples))
        return self._input_value(self.examples[i], i, node.name)

    def _input_value(self, example, index, name):
        if isinstance(example, torch.Tensor):
            arg = ProgramArg(_ssa_name(name, self._arg_names), example,
                             input_index=index)
            shape = []
            for d, size in enumerate(example.shape):
                sym = self.shape_env.new(size, index, d)
                if (index, d) in self.dynamic_dims:
                    self.dynamic_syms |= sym.syms
                shape.append(sym)
            value = self._add_arg(arg, shape)
            value.layout = example_layout(example)
            return value
        if isinstance(example, (list, tuple)) and any(
                isinstance(x, torch.Tensor) for x in example):
            raise self.error("an input that is a %s of tensors is not "
                             "supported yet" % type(example).__name__)
        # A module argument (`step(model, opt, x)`) is specialized by
        # identity in the program's key (kiln._compile); the traced code
        # calls it as a module outside the root (its parameters read by name
        # on every call, as a closure's modules).
        return example

    def _add_arg(self, arg, shape):
        _ir.element_type(arg.example.dtype, "argument '%s'" % arg.name)
        arg.block_name = "%%a%d" % len(self.args)
        arg.value = TensorVal(arg.block_name, shape, arg.example.dtype,
                              arg=arg)
        arg.current = arg.value
        self.args.append(arg)
        return arg.value

    def _get_attr(self, qualname):
        obj = self.root
        for part in qualname.split("."):
            obj = raw_getattr(obj, part)
        if isinstance(obj, torch.Tensor):
            return self.attr_tensor(qualname, obj)
        return obj

    def attr_tensor(self, qualname, tensor):
        """The program argument for a parameter / buffer / constant of the
        root module (made on first use)."""
        arg = self.attr_args.get(qualname)
        if arg is None:
            arg = ProgramArg(_ssa_name(qualname, self._arg_names), tensor,
                             qualname=qualname)
            self.attr_args[qualname] = arg
            self._add_arg(arg, list(tensor.shape))
            if self.made_in_trace.get(id(tensor)) is tensor:
                # Made by the traced code from Python data: fixed for this
                # program (a captured tensor is not: it may change).
                arg.value.const = tensor
                arg.fresh = True
        return arg.current

    def seed_arg(self):
        """A new seed argument (ProgramArg.seed): its TensorVal."""
        k = sum(1 for a in self.args if a.seed)
        arg = ProgramArg(_ssa_name("seed%d" % k, self._arg_names),
                         torch.zeros((), dtype=torch.int64), seed=True)
        return self._add_arg(arg, [])

    def module_tensor(self, module_path, attr):
        """A parameter or buffer of a submodule (for module converters);
        `attr` may be dotted (`out_proj.weight`). None stays None."""
        qualname = "%s.%s" % (module_path, attr) if module_path else attr
        obj = self.root
        for part in qualname.split("."):
            obj = raw_getattr(obj, part)
            if obj is None:
                return None
        t = self.attr_tensor(qualname, obj)
        target = self._module_cast
        if target is not None and isinstance(t, TensorVal) and \
                _autocast.eligible(t.dtype, target):
            # A module converted whole under autocast (nn.Linear, nn.Conv2d):
            # its parameters cast as its functional form's arguments are.
            t = self.ops.cast(self, t, target)
        return t

    # ----- sizes

    def static(self, x, why):
        """An int for a size, specializing its symbols (see _symbolic). A
        data-dependent size (_symbolic.Unbacked) has no int: the
        UnbackedSizeError (an Unsupported) names `why`."""
        if is_unbacked(x):
            return self.shape_env.specialize(x, why)
        if isinstance(x, Sym):
            reason = "%s at %s" % (why, (format_frames(self.cur_frames[:1])
                                         or ["<unknown>"])[0])
            for sid in x.syms:
                arg, dim, _ = self.shape_env.symbols[sid]
                if (arg, dim) in self.dynamic_dims:
                    from ._errors import SpecializationError
                    raise SpecializationError(
                        "dim %d of input %d was marked dynamic, but the "
                        "program needs its size to be %d: %s"
                        % (dim, arg, x.value, why))
            return self.shape_env.specialize(x, reason)
        if isinstance(x, torch.Tensor):
            raise self.error("%s: a tensor value is needed as a Python "
                             "number (data-dependent)" % why)
        if isinstance(x, TensorVal) and x.scalar:
            raise self.error(
                "%s: a Python number read from tensor data "
                "(aten._local_scalar_dense, `.item()`) is needed as a "
                "constant while capturing (data-dependent)" % why)
        if isinstance(x, TensorVal):
            raise self.error("%s: the value of a tensor is needed at trace "
                             "time (data-dependent)" % why)
        return x

    def is_marked_dynamic(self, x):
        """True when the size `x` depends on an input dim marked dynamic
        (which `static` may not specialize)."""
        if not isinstance(x, Sym):
            return False
        return any(not isinstance(sid, str) and
                   (self.shape_env.symbols[sid][0],
                    self.shape_env.symbols[sid][1]) in self.dynamic_dims
                   for sid in x.syms)

    def check_sizes(self, x, minimum, message, shape, error=KilnError):
        """Requires the size `x` to be at least `minimum` on every call:
        checked now on the example, and, when `x` depends on input dims
        (the runtime may make them dynamic), again by the frontend before
        each call of the program (ImportResult.size_checks), raising
        `error` (KilnError, or KilnValueError where PyTorch's check raises
        ValueError) with `message % sizes of shape` at the current node's
        location, as PyTorch's own check would at that line."""
        where = (format_frames(self.cur_frames[:1]) or [None])[0]
        if value(x) < minimum:
            raise self.error(message % ([value(d) for d in shape],))
        if isinstance(x, Sym):
            self.size_checks.append(SizeCheck(
                x.key, minimum, message, [_symbolic_key(d) for d in shape],
                where, error))

    def index_of(self, x):
        """An `index` SSA value for the size `x`: a constant for an int;
        for a Sym, `tensor.dim` of the input it comes from and `arith` ops
        for its expression (so an op sized by it, kt.full / kt.rand with
        dynamic sizes, stays valid when the runtime makes the dim dynamic).
        Returns an object with `name` and `type` ("index"); None when the
        size cannot be computed from an input (then specialize it)."""
        return self.index_of_key(x.key if isinstance(x, Sym) else int(x))

    def _index_expr(self, k):
        def emit(text):
            name = self.fresh()
            self.lines.append("%s = %s loc(%s)" % (name, text, self.cur_loc))
            return _IndexVal(name, len(self.lines) - 1)
        if not isinstance(k, tuple):
            return emit("arith.constant %d : index" % k)
        if k[0] == "s" and isinstance(k[1], str):
            # An unbacked size: dim 0 of the kt.nonzero that made it.
            src = self.shape_env.unbacked_source.get(k[1])
            if src is None:
                return None
            if isinstance(src, tuple) and src[0] == "data":
                # A size read from data (size_from_data): the 0-d i64
                # value as an index.
                t = src[1]
                e = emit("tensor.extract %s[] : %s" % (t.name, t.type))
                return emit("arith.index_cast %s : i64 to index" % e.name)
            if isinstance(src, tuple) and src[0] == "dim":
                # Dim d of the creation op that checked a size read from
                # data (data_size_checked).
                t, d = src[1], src[2]
                c = self.index_of(d)
                return emit("tensor.dim %s, %s : %s" % (t.name, c.name,
                                                        t.type))
            c = self.index_of(0)
            return emit("tensor.dim %s, %s : %s" % (src.name, c.name,
                                                    src.type))
        if k[0] == "s":
            argi, dim, _ = self.shape_env.symbols[k[1]]
            arg = next((a for a in self.args if a.input_index == argi),
                       None)
            if arg is None:
                return None
            c = self.index_of(dim)
            return emit("tensor.dim %s, %s : %s" % (
                arg.block_name, c.name, arg.value.type))
        if k[0] == "neg":
            a = self.index_of_key(k[1])
            zero = self.index_of(0)
            if a is None:
                return None
            return emit("arith.subi %s, %s : index" % (zero.name, a.name))
        ops = {"+": "addi", "-": "subi", "*": "muli", "//": "floordivsi",
               "%": "remsi", "min": "minsi", "max": "maxsi"}
        divisor = k[0] in ("//", "%") and isinstance(k[2], tuple)
        if divisor and not nonneg(k[2]):
            return None  # a divisor that may be negative: specialized
        a, b = self.index_of_key(k[1]), self.index_of_key(k[2])
        if a is None or b is None or (k[0] not in ops and k[0] != "idx"):
            return None
        if divisor:
            # A division by a size that may be 0 on a later call (`n // m`,
            # `n % m` of dims the runtime made or was told dynamic): Python
            # raises ZeroDivisionError there, so the frontend checks the
            # divisor before each call (check_sizes), and the program
            # divides by max(m, 1): never arith.floordivsi / remsi by zero
            # (SIGFPE on the CPU backend, an error in the interpreter).
            where = (format_frames(self.cur_frames[:1]) or [None])[0]
            self.size_checks.append(SizeCheck(
                k[2], 1, "integer division or modulo by zero: a size "
                "divided by the size %s (ZeroDivisionError in Python)",
                [k[2]], where))
            one = self.index_of(1)
            b = emit("arith.maxsi %s, %s : index" % (b.name, one.name))
        if k[0] == "idx":
            # A slice bound a on a dim of size b (Python's rule, as
            # kt.slice applies it): a < 0 ? a + b : a, clamped to [0, b].
            zero = self.index_of(0)
            neg = emit("arith.cmpi slt, %s, %s : index" % (a.name, zero.name))
            wrap = emit("arith.addi %s, %s : index" % (a.name, b.name))
            sel = emit("arith.select %s, %s, %s : index" % (
                neg.name, wrap.name, a.name))
            lo = emit("arith.maxsi %s, %s : index" % (sel.name, zero.name))
            return emit("arith.minsi %s, %s : index" % (lo.name, b.name))
        return emit("arith.%s %s, %s : index" % (ops[k[0]], a.name, b.name))

    def index_of_key(self, k):
        cache = self.__dict__.setdefault("_index_cache", {})
        if k in cache:
            return cache[k]
        v = self._index_expr(k)
        if v is not None:
            cache[k] = v
        return v

    def size_from_data(self, x, what):
        """The size a Python number read from tensor data stands for
        (`n = t.item()` in `torch.zeros(n)`): a new unbacked size (see
        _symbolic.Unbacked) computed when the program runs from the 0-d
        value (`tensor.extract` + `arith.index_cast`). Two kinds of ops
        take it: creation ops (kt.full checks a dynamic size and raises
        "dynamic size V (dim D) must be non-negative" when it runs, as
        PyTorch raises for a negative size) and slice bounds (kt.slice
        applies Python's rules to a dynamic bound when it runs: a negative
        one counts from the end; _symbolic.nonneg is False for it). One
        number gives one size, however often it is used."""
        cache = self.__dict__.setdefault("_data_sizes", {})
        if id(x) in cache:
            return cache[id(x)][1]
        if x.dtype.is_floating_point or x.dtype == torch.bool:
            raise self.error(
                "%s: a %s read from tensor data (`.item()`) is used as a "
                "size (PyTorch takes ints only)" % (what, x.scalar.__name__))
        t = x if x.dtype == torch.int64 else \
            self.ops.cast(self, x, torch.int64)
        u = self.shape_env.new_unbacked("d")
        self.shape_env.unbacked_source[u.key[1]] = ("data", t)
        cache[id(x)] = (x, u)
        return u

    def data_size_checked(self, size, result):
        """After the creation op `result` of shape `size` took sizes read
        from data: later uses of each such size read dim d of `result`
        (tensor.dim), so they come after its run-time check and keep it
        alive (a size read again from the value could be negative where
        the creation op that would have raised was dead code)."""
        env = self.shape_env
        for d, u in enumerate(size):
            if is_unbacked(u):
                src = env.unbacked_source.get(u.key[1])
                if isinstance(src, tuple) and src[0] == "data":
                    env.unbacked_source[u.key[1]] = ("dim", result, d)
                    self.__dict__.get("_index_cache", {}).clear()

    def sized(self, size, why):
        """The `size` attribute and the `index` operands of a sized
        creation op (kt.full, kt.rand, kt.randn): a symbolic size is a -1
        entry whose extent is computed from the inputs (no
        specialization); one that cannot be is specialized (`why`)."""
        attr, dyn = [], []
        for d in size:
            if isinstance(d, Sym):
                v = self.index_of(d)
                if v is not None:
                    attr.append(-1)
                    dyn.append(v)
                    continue
                d = self.static(d, why)
            attr.append(int(d))
        return attr, dyn

    def static_list(self, xs, why):
        return [self.static(x, why) for x in xs]

    # ----- emission

    def fresh(self):
        name = "%%v%d" % self._ssa
        self._ssa += 1
        return name

    def op(self, opname, operands, attrs=None, shape=None, dtype=None,
           operand_text=None, results=None, is_view=False, base=None):
        """Emits `kt.<opname>` and returns its TensorVal (or a list for
        `results=[(shape, dtype), ...]`)."""
        attrs = dict(attrs or {})
        attrs.update(self.cur_attrs)
        if results is None:
            results = [(shape, dtype)]
            single = True
        else:
            single = False
        name = self.fresh()
        vals = []
        # PyTorch lays out the results of most ops on a permuted input
        # (pointwise ones) as the input: a reshape of them may copy.
        permuted = any(getattr(v, "layout", None) == "permuted"
                       for v in operands)
        for i, (s, d) in enumerate(results):
            n = name if len(results) == 1 else "%s#%d" % (name, i)
            vals.append(TensorVal(n, s, d, is_view=is_view,
                                  base=base if is_view else None))
            if permuted:
                vals[-1].layout = "permuted"
        lhs = name if len(results) == 1 else "%s:%d" % (name, len(results))
        otext = operand_text if operand_text is not None else ", ".join(
            v.name for v in operands)
        rtypes = ", ".join(v.type for v in vals)
        if len(vals) != 1:
            rtypes = "(" + rtypes + ")"
        self.lines.append("%s = kt.%s %s%s : (%s) -> %s loc(%s)" % (
            lhs, opname, otext, _ir.attr_dict(attrs),
            ", ".join(self._type_of(v) for v in operands), rtypes,
            self.cur_loc))
        return vals[0] if single else vals

    def effect(self, opname, operands, attrs=None):
        """An op without results (kt.copy_ and the like)."""
        attrs = dict(attrs or {})
        attrs.update(self.cur_attrs)
        self.lines.append("kt.%s %s%s : (%s) -> () loc(%s)" % (
            opname, ", ".join(v.name for v in operands), _ir.attr_dict(attrs),
            ", ".join(self._type_of(v) for v in operands), self.cur_loc))

    def _type_of(self, v):
        if isinstance(v, _RefOperand):
            return _ir.ref_type(v.shape, v.dtype)
        return v.type

    def constant(self, v, dtype):
        """A rank-0 constant of `dtype` holding the Python number v."""
        if isinstance(v, Sym):
            v = self.static(v, "a size used as a tensor value")
        return self.op("constant", [],
                       {"value": _ir.Raw(_ir.scalar_dense(v, dtype))},
                       shape=(), dtype=dtype)

    def constant_tensor(self, t, limit=4096):
        """A small torch tensor as a dense kt.constant (converters' own
        tables, such as interpolation indices, may pass a larger limit)."""
        t = t.detach().cpu()
        et = _ir.element_type(t.dtype)
        if t.numel() > limit:
            raise self.error("a tensor constant of %d elements created in "
                             "the program (only small constants are inlined)"
                             % t.numel())
        flat = t.reshape(-1)
        shape = list(t.shape)
        if t.dtype.is_floating_point:
            # The raw little-endian buffer: exact, inf and nan included.
            raw = flat.contiguous().view(torch.uint8).numpy().tobytes()
            return self.op("constant", [], {
                "value": _ir.Raw('dense<"0x%s"> : %s' % (
                    raw.hex().upper(), _ir.tensor_type(shape, t.dtype)))},
                shape=shape, dtype=t.dtype)
        if t.dtype == torch.bool:
            items = ["true" if b else "false" for b in flat.tolist()]
        else:
            items = [str(int(x)) for x in flat.tolist()]
        body = _nest(items, shape)
        r = self.op("constant", [], {
            "value": _ir.Raw("dense<%s> : %s" % (
                body, _ir.tensor_type(shape, t.dtype)))},
            shape=shape, dtype=t.dtype)
        r.const = t
        return r

    # ----- mutation

    def mutate(self, old, new):
        """Records that the tensor `old` was written in place with the value
        `new`: every node bound to `old` now reads `new`; a program argument
        becomes a ref written back at the end of the graph."""
        if old.is_view:
            if old.view_inv is None or old.base is None:
                err = self.error(
                    "an in-place op on this view of another tensor is not "
                    "supported yet (writes through reshapes of permuted or "
                    "sliced tensors, expand, diagonal, as_strided and "
                    "views across graph breaks)")
                err._no_break = True  # running it eagerly would write a copy
                raise err
            # Functionalized: the base's new value is the write scattered
            # into it (recursively up to the tensor that owns the memory);
            # every view of it, this one included, is then made again from
            # the new value.
            self.mutate(old.base, old.view_inv(self, old.base, new))
            return old.rebuilt if old.rebuilt is not None else new
        # The written tensor's value from now on: a value of its own (not a
        # view of what computed it, e.g. a reshape that wrote back an
        # unsqueeze), laid out as the tensor was.
        if new.is_view or new.views:
            new = TensorVal(new.name, new.shape, new.dtype)
        new.layout = old.layout
        for v in (old, old.arg.value if old.arg is not None else None):
            if v is not None and id(v) in self.no_write:
                err = self.error(self.no_write[id(v)])
                err._no_break = True
                raise err
        for n in self._tensor_nodes.get(id(old), []):
            self.env[n] = new
            self.bind_node(new, n)
        arg = old.arg
        if arg is None:
            for a in self.args:
                if a.current is old:
                    arg = a
        if arg is not None and arg.fresh:
            # `y = torch.zeros(3); y += x`: y is this call's own tensor in
            # PyTorch; writing the program's constant back would carry the
            # write into every later call. Later reads of y (real-tensor
            # calls, made nodes by kiln._tracer._read_of_written: `y * 3`)
            # read the written value. Before 2026-11-30 they ran at trace
            # time on y's value from before the write: `z = torch.ones(3);
            # z.copy_(x); return z * 3` returned 3s.
            arg.current = new
            self.written_fresh[id(arg.example)] = (
                arg.example, getattr(self, "segment", 0))
            new.arg = None
            arg = None
        if arg is not None:
            arg.mutated = True
            arg.current = new
            new.arg = None
        self._rebuild_views(old, new)
        return new

    def rollback(self, mark):
        """Drops the lines from `mark` on (an op that could not be imported
        after all): views emitted there are emitted again when next read."""
        del self.lines[mark:]
        cache = self.__dict__.get("_index_cache")
        if cache:  # sizes computed in the dropped lines are computed again
            for k in [k for k, v in cache.items() if v.line >= mark]:
                del cache[k]
        while self.emitted_views and self.emitted_views[-1][0] >= mark:
            _NAME.__set__(self.emitted_views.pop()[1], None)

    def _rebuild_views(self, old, new):
        """The views taken of `old` read `new` from now on (as in PyTorch,
        where they share its memory)."""
        views, old.views = old.views, None
        for v in views or ():
            nv = _RebuiltView(self, v, new)
            v.rebuilt = nv
            for n in self._tensor_nodes.get(id(v), []):
                self.env[n] = nv
                self.bind_node(nv, n)
            self._rebuild_views(v, nv)

    # ----- the program

    def finish(self):
        if self.output is _NO_OUTPUT:
            raise KilnError("the FX graph has no output node")
        leaves, spec = pytree.tree_flatten(self.output)
        # A view made again after a write (_RebuiltView) is emitted when its
        # name is first read: the results' and the written arguments' are
        # read below, after the body's lines are taken.
        for v in leaves + [a.current for a in self.args if a.mutated]:
            if isinstance(v, TensorVal):
                v.name
        results = []
        index = {}
        out_leaves = []
        arg_of = {id(a.current): j for j, a in enumerate(self.args)}
        arg_of.update({id(a.value): j for j, a in enumerate(self.args)
                       if not a.mutated})
        for leaf in leaves:
            if isinstance(leaf, TensorVal):
                if id(leaf) in arg_of and (
                        leaf.arg is not None or
                        self.args[arg_of[id(leaf)]].mutated):
                    j = arg_of[id(leaf)]
                    # A tensor the code made (`return torch.zeros(3)`): a
                    # new copy per call, as PyTorch makes a new one.
                    out_leaves.append(
                        ("fresh" if self.args[j].fresh else "arg", j))
                    continue
                if id(leaf) not in index:
                    index[id(leaf)] = len(results)
                    results.append(leaf)
                # A Python number (`.item()`): its 0-d result, read back.
                out_leaves.append(("item" if leaf.scalar else "result",
                                   index[id(leaf)]))
            elif isinstance(leaf, Sym):
                out_leaves.append(("const", self.static(
                    leaf, "a size returned by the program")))
            else:
                out_leaves.append(("const", leaf))
        text = self._module_text(results)
        # The graph as plain text parts (kiln._training builds the
        # differentiable func.func of training programs from them).
        graph = dict(
            args=[(a.block_name, a.value.type, a.mutated) for a in self.args],
            # A written argument's value at the end (name, type, dtype).
            written=[(j, a.current.name, a.current.type, a.current.dtype)
                     for j, a in enumerate(self.args) if a.mutated],
            ops=list(self.lines),
            results=[(r.name, r.type, r.dtype) for r in results],
            no_grad=set(self.no_grad_values),
            root_loc=self.root_loc,
            locs="".join("%s = loc(%s)\n" % (alias, t)
                         for t, alias in self.locs.items()),
            loc_defs={alias: t for t, alias in self.locs.items()})
        attr_static = set()
        for j, a in enumerate(self.args):
            if not a.is_input:
                for d in range(a.example.dim()):
                    attr_static.add((j, d))
        return ImportResult(
            text=text, name=self.name, args=list(self.args),
            output_spec=spec, output_leaves=out_leaves,
            specialized=self.shape_env.specialized_dims(),
            size_checks=list(self.size_checks),
            sym_dims={sid: (a, d) for sid, (a, d, _) in
                      enumerate(self.shape_env.symbols)},
            attr_dims_static=attr_static, num_results=len(results),
            graph=graph,
            result_dtypes=[r.dtype for r in results],
            # (the trace's dict, shared by its segments' importers and
            # filled when the trace ends: _tracer._constants_kept_off)
            constants=self.module_constants)

    def _module_text(self, results):
        P = []
        args = self.args
        sig = []
        for a in args:
            t = (_ir.ref_type if a.mutated else _ir.tensor_type)(
                list(a.example.shape), a.example.dtype)
            sig.append("%%%s: %s" % (a.name, t))
        rtypes = [r.type for r in results]
        P.append("  kg.program @%s(%s) -> (%s) {" % (
            self.name, ", ".join(sig), ", ".join(rtypes)))
        for a in args:
            t = (_ir.ref_type if a.mutated else _ir.tensor_type)(
                list(a.example.shape), a.example.dtype)
            P.append("    kg.guard_tensor %%%s {dtype = %s, shape = %s, "
                     "requires_grad = %s} : %s loc(%s)" % (
                         a.name, _ir.element_type(a.example.dtype),
                         list(a.example.shape),
                         "true" if a.example.requires_grad else "false", t,
                         self.root_loc))
        used = [a for a in args]
        body = []
        block_args = []
        for a in used:
            if a.mutated:
                rname = a.block_name + "_ref"
                rt = _ir.ref_type(a.value.shape, a.value.dtype)
                block_args.append("%s: %s" % (rname, rt))
                body.append("%s = kt.load %s : (%s) -> %s loc(%s)" % (
                    a.block_name, rname, rt, a.value.type, self.root_loc))
            else:
                block_args.append("%s: %s" % (a.block_name, a.value.type))
        body.extend(self.lines)
        for a in used:
            if a.mutated:
                rt = _ir.ref_type(a.value.shape, a.value.dtype)
                body.append("kt.copy_ %s_ref, %s : (%s, %s) -> () loc(%s)"
                            % (a.block_name, a.current.name, rt,
                               a.current.type, self.root_loc))
        ops_text = "".join("      %s\n" % l for l in body)
        operand_types = ", ".join(
            (_ir.ref_type if a.mutated else _ir.tensor_type)(
                list(a.example.shape), a.example.dtype) for a in used)
        rlist = ", ".join(r.type for r in results)
        if body or results:
            lhs = ""
            if results:
                lhs = "%r = " if len(results) == 1 else "%%r:%d = " % len(
                    results)
            P.append("    %skg.graph @%s_g0(%s) : (%s) -> (%s) {" % (
                lhs, self.name, ", ".join("%%%s" % a.name for a in used),
                operand_types, rlist))
            P.append("    ^bb0(%s):" % ", ".join(block_args))
            P.append(ops_text.rstrip("\n"))
            if results:
                P.append("      kg.yield %s : %s loc(%s)" % (
                    ", ".join(r.name for r in results), rlist, self.root_loc))
            else:
                P.append("      kg.yield loc(%s)" % self.root_loc)
            P.append("    } loc(%s)" % self.root_loc)
        if results:
            names = ("%r" if len(results) == 1 else
                     ", ".join("%%r#%d" % i for i in range(len(results))))
            P.append("    kg.return %s : %s loc(%s)" % (names, rlist,
                                                      self.root_loc))
        else:
            P.append("    kg.return loc(%s)" % self.root_loc)
        P.append("  } loc(%s)" % self.root_loc)
        locs = "".join("%s = loc(%s)\n" % (alias, text)
                       for text, alias in self.locs.items())
        return locs + "module {\n" + "\n".join(P) + "\n}\n"


def raw_getattr(obj, name):
    """getattr without the torch.fx tracer's patched Module.__getattr__
    (which would turn parameters into proxies while tracing)."""
    if isinstance(obj, torch.nn.Module):
        for table in ("_parameters", "_buffers", "_modules"):
            d = obj.__dict__.get(table)
            if d is not None and name in d:
                return d[name]
    return getattr(obj, name)


class _RefOperand:
    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype


def _nest(items, shape):
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[%s]" % ", ".join(items)
    step = len(items) // shape[0] if shape[0] else 0
    return "[%s]" % ", ".join(_nest(items[i * step:(i + 1) * step], shape[1:])
                              for i in range(shape[0]))


# Modules whose functions are their ATen op of the same name.
_TORCH_OP_MODULES = ("torch", "torch.functional", "torch.nn.functional",
                     "torch._C._nn", "torch._C._VariableFunctions",
                     "torch._VF")


def _torch_op_name(target):
    """The ATen op name of a torch-level function (torch.atan -> "atan"),
    or None for other callables."""
    name = getattr(target, "__name__", None)
    mod = getattr(target, "__module__", None)
    if not name or name.startswith("_"):
        return None
    if mod is None or mod in _TORCH_OP_MODULES or \
            getattr(torch, name, None) is target or \
            getattr(torch.nn.functional, name, None) is target:
        return name
    return None


def _contains_tensor(x):
    found = []

    def visit(v):
        if isinstance(v, (TensorVal, torch.Tensor)):
            found.append(v)
        return v

    fx.node.map_aggregate(x, visit)
    return bool(found)


def function_location(fn):
    """`"file":line:1` of a function's definition (the graph's location)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return _ir.file_loc(code.co_filename, code.co_firstlineno, 1)


def import_graph_module(gm, example_inputs, name, dynamic_dims=()):
    """Imports a finished GraphModule (the FX backend entry point)."""
    loc = None
    for node in gm.graph.nodes:
        frames = node_frames(node)
        if frames:
            loc = _ir.file_loc(*frames[-1])
            break
    imp = FxImporter(name, gm, example_inputs, dynamic_dims,
                     root_location=loc)
    imp.import_graph(gm.graph)
    return imp.finish()
