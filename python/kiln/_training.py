"""Training: a captured graph whose inputs or parameters require grad runs as
a torch.autograd.Function.

For one capture (kiln._fx_import.ImportResult) and one requires-grad
pattern of its program arguments:

1. the graph becomes `func.func @P_g(args {kg.requires_grad = ...}) ->
   results attributes {kg.differentiate}`;
2. `kiln-autodiff` + `kiln-partition` (kilnSessionTransformModule) split it
   into `@P_g_fwd(args) -> (outputs, saved)` and `@P_g_bwd(saved,
   cotangents) -> gradients` (docs/partition.md);
3. two `kg.program`s wrap them, `@P_fwd` and `@P_bwd`, loaded into one
   session of the compiled function's backend and pipeline;
4. `forward(ctx, *args)` calls `@P_fwd`, keeps the saved values with
   `ctx.save_for_backward` (the partition's saved values: the argument
   tensors the backward reads, listed in `kg.saved_primals` and not returned
   by the forward (`kiln-partition{pass-primals}`), then the forward's saved
   results) and returns the outputs; `backward`
   calls `@P_bwd(saved, grad_outputs)` and returns one gradient per
   argument that requires grad, None elsewhere.

Parameters are program arguments (not constants), so gradients accumulate
into `.grad` and any torch.optim optimizer works. Each pair is compiled for
its exact shapes and dtypes (static); keys are the shapes, dtypes and the
requires-grad pattern.
"""

import contextvars
import re

import torch

from . import _capi
from ._errors import KilnError, Unsupported

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+")


# The reason _Program.text_of is given for a capture with `?` types.
DYNAMIC_CAPTURE = "dynamic training inputs"

# {id(input tensor): dims} made dynamic by automatic dynamic shapes for the
# capture of a dynamic pair (read by _Compiled._import with the tensors'
# kiln.mark_dynamic dims).
EXTRA_DYNAMIC = contextvars.ContextVar("kiln_training_dynamic", default=None)


def _gradient_edges(ops):
    """(result names, operand names) of each op line a gradient flows
    through (not an `index` size, not a gradient barrier, not an integer
    or boolean result), in order; lines inside regions included."""
    edges = []
    for line in ops:
        if " = " not in line:
            continue
        lhs, rhs = line.split(" = ", 1)
        if rhs.startswith(("tensor.dim ", "arith.")) or \
                "kg.stop_gradient" in rhs or not _float_results(rhs):
            continue
        edges.append((_NAME.findall(lhs),
                      _NAME.findall(rhs.split(" : ", 1)[0])))
    return edges


def _has_regions(ops):
    """Whether op lines open or close a region (bodies reading outer values
    that the line dataflow does not see)."""
    return any(l.rstrip().endswith("{") or l.lstrip().startswith("}")
               for l in ops)


def _reach(graph, rg):
    """{value name: bit mask of the arguments that require grad and reach
    it along _gradient_edges} (bit j: argument j)."""
    mask = {name: 1 << j for j, ((name, _, _), r) in
            enumerate(zip(graph["args"], rg)) if r}
    for lhs, operands in _gradient_edges(graph["ops"]):
        m = 0
        for o in operands:
            m |= mask.get(o, 0)
        if m:
            for n in lhs:
                mask[n] = mask.get(n, 0) | m
    return mask


_ELEMENT = re.compile(r"(?:tensor|!kt\.ref)<(?:(?:\?|\d+)x)*([a-z]+)")


def _float_results(rhs):
    """Whether an op line has a floating (or complex) result: integer and
    boolean results (argmax, comparisons, a cast to int64) carry no
    gradient, so an argument reaching a result only through them gets
    none (eager: `x.argmin(-1).float()` does not require grad)."""
    sig = rhs.rsplit(" loc(", 1)[0]
    if "->" not in sig:
        return True
    kinds = _ELEMENT.findall(sig.rsplit("->", 1)[1])
    return not kinds or any(k in ("f", "bf", "complex") for k in kinds)


def _result_arg_masks(graph, rg, results):
    """Per result, a bit mask of the arguments that require grad and reach
    it (_reach). A graph with regions: every such argument reaches every
    result."""
    if _has_regions(graph["ops"]):
        return [sum(1 << j for j, r in enumerate(rg) if r)] * len(results)
    mask = _reach(graph, rg)
    return [mask.get(_NAME.match(name).group(0), 0)
            for name, _, _ in results]


class _NoGradients(Exception):
    """Pair: no argument that requires grad reaches a result."""


class NotTrainable(Unsupported):
    """A graph kiln cannot train yet (it runs eagerly instead)."""


class DoubleBackward(KilnError):
    """create_graph=True through a compiled graph (not supported)."""


def _split_types(text):
    """'tensor<3xf32>, tensor<2x3xi1>' -> the types (commas at depth 0)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _result_types(module_text, func):
    """The result types of `func.func @func` in printed module text."""
    m = re.search(r"func\.func @%s\((.*)\) -> (.*?)(?: attributes \{.*\})? "
                  r"\{\n" % re.escape(func), module_text)
    if m is None:
        raise NotTrainable("kiln-partition produced no @%s" % func)
    res = m.group(2).strip()
    if res.startswith("(") and res.endswith(")"):
        res = res[1:-1]
    return _split_types(res)


def _saved_primals(module_text, func):
    """`kg.saved_primals` of `func.func @func` (kiln-partition{pass-primals}):
    the argument numbers passed to the backward as its first saved values."""
    m = re.search(r"func\.func @%s\(.*\) -> .* attributes \{(.*)\} \{\n"
                  % re.escape(func), module_text)
    a = m and re.search(r"kg\.saved_primals = array<i64(?:: ([0-9, ]*))?>",
                        m.group(1))
    if a is None:
        raise NotTrainable("kiln-partition produced no kg.saved_primals on @%s"
                           % func)
    return [int(x) for x in (a.group(1) or "").split(",") if x.strip()]


def _requires_grad_outputs(graph, rg, results):
    """Which results depend on an argument that requires grad (_reach over
    the op lines, regions' lines included), as PyTorch's requires_grad of
    the outputs; written arguments' final values count like results."""
    live = _reach(graph, rg)
    # A result of a multi-result op is `%v#i` (the op's lhs `%v:N`): _NAME
    # reads both as `%v`.
    return [bool(live.get(_NAME.match(name).group(0))) and dtype in _FLOATS
            for name, _, dtype in results]


class Pair:
    """The forward and backward programs of one capture and requires-grad
    pattern, in their own session."""

    def __init__(self, owner_prog, capture, tensors, rg):
        graph = capture.graph
        # Arguments the graph writes (BatchNorm's num_batches_tracked,
        # running statistics) are values of the differentiable function;
        # their final values are extra, non-differentiable outputs that
        # `call` writes back into the tensors.
        # A written argument that requires grad (`relu(inplace=True)` on an
        # activation) gets the new value by a differentiable copy_, as an
        # in-place op in eager PyTorch re-bases its history.
        self.written = [j for j, _, _, _ in graph["written"]]
        check_written(self, capture, tensors)
        results = list(graph["results"]) + [
            (name, t, dtype) for _, name, t, dtype in graph["written"]]
        if not results:
            raise NotTrainable("the graph has no tensor results")
        self.num_results = len(graph["results"])
        base = "%s_train" % owner_prog.name
        self.name = base
        self.capture = capture
        self.rg = list(rg)
        # Values computed outside autograd (BatchNorm's running
        # statistics): they require no grad and get no cotangent.
        no_grad = graph.get("no_grad", set())
        # Which arguments each result's gradient reaches: an argument that
        # only results the caller's loss does not use reach gets None, as
        # in eager (autograd never visits its history there).
        self.out_masks = _result_arg_masks(graph, rg, results)
        # A result no argument that requires grad reaches (through
        # integer values, `x.argmax(1).float()`, or gradient barriers)
        # does not require grad, as in eager.
        self.out_rg = [r and name not in no_grad for r, (name, _, _) in
                       zip(_requires_grad_outputs(graph, rg, results),
                           results)]
        # Arguments that require grad but reach no differentiable result
        # (`l.detach()` of an earlier graph's loss) get no gradient and
        # enter the Function detached (see call): a zero gradient would run
        # the earlier graph's backward again ("Trying to backward through
        # the graph a second time").
        reached = 0
        for m, r in zip(self.out_masks, self.out_rg):
            if r:
                reached |= m
        rg = [r and bool((reached >> j) & 1) for j, r in enumerate(rg)]
        self.rg = rg
        if not any(rg) and not any(tensors[j].requires_grad
                                   for j in self.written):
            # Nothing to differentiate (the arguments that require grad
            # reach the results only through detach / no_grad): the
            # program runs as it does without grad (call returns None).
            raise _NoGradients()
        self.out_meta = [(t, dtype) for _, t, dtype in results]
        rattrs = ["%s {kg.requires_grad = false}" % t
                  if name in no_grad else t for name, t, _ in results]
        # The programs are added to printed text, whose location aliases
        # are renumbered: they use the root location itself.
        loc = graph["root_loc"]
        loc = graph["loc_defs"].get(loc, loc)
        # The user's function, `file:line:col` (error messages).
        m = re.search(r'"([^"]*)":(\d+):(\d+)', loc)
        self.location = "%s:%s:%s" % m.groups() if m else None
        arg_types = [t for _, t, _ in graph["args"]]
        # `kg.written`: the argument is overwritten after the forward, so
        # kiln-partition{pass-primals} still returns its saved value (the
        # value before the write) instead of passing the argument through.
        written = set(self.written)
        sig = ", ".join(
            "%s: %s {kg.requires_grad = %s%s}" % (
                n, t, "true" if r else "false",
                ", kg.written" if j in written else "")
            for j, ((n, t, _), r) in enumerate(zip(graph["args"], rg)))
        rtypes = [t for _, t, _ in results]
        ops = "".join("    %s\n" % l for l in graph["ops"])
        func = (
            "%smodule {\n  func.func @%s_g(%s) -> (%s) attributes "
            "{kg.differentiate} {\n%s    return %s : %s loc(%s)\n  } "
            "loc(%s)\n}\n" % (
                graph["locs"], base, sig, ", ".join(rattrs), ops,
                ", ".join(n for n, _, _ in results),
                ", ".join(rtypes), loc, loc))
        session = _capi.Session()
        backend, pipeline = owner_prog.owner.backend_spec
        session.set_option("backend", backend)
        session.set_option("pipeline", owner_prog.owner.options.get(
            "pipeline", pipeline))
        for k in ("cpu_fallback",):
            if k in owner_prog.owner.options:
                session.set_option(k, owner_prog.owner.options[k])
        # Static per pair, except the `?` dims of a dynamic capture, whose
        # guards name symbols: with "auto" those are dynamic from the start.
        dynamic = any("?" in t for _, t, _ in graph["args"])
        session.set_option("dynamic", "auto" if dynamic else "static")
        session.set_warning_callback(owner_prog._warning)
        # pass-primals: saved arguments (weights, the batch) are not forward
        # results (each would be a copy per step); `forward` saves the
        # tensors themselves and passes them to the backward.
        split = session.transform(func,
                                  "kiln-autodiff,kiln-partition{pass-primals}")
        fwd_types = _result_types(split, base + "_g_fwd")
        self.saved_primals = _saved_primals(split, base + "_g_fwd")
        m = len(rtypes)
        saved_types = ([arg_types[j] for j in self.saved_primals]
                       + fwd_types[m:])
        self.num_outputs = m
        self.num_saved = len(saved_types)
        float_outs = [i for i, ((name, _, dtype)) in enumerate(results)
                      if dtype in _FLOATS and name not in no_grad]
        self.float_outs = float_outs
        ct_types = [rtypes[i] for i in float_outs]
        grad_types = [t for t, r in zip(arg_types, rg) if r]

        symbols = [0]

        def guard_shape(t):
            # A `?` dim (from a kiln.mark_dynamic'd dim) is a symbol of its
            # own: the runtime keeps it dynamic from the first compile.
            out = []
            for d in _dims(t):
                if d == "?":
                    out.append('"s%d"' % symbols[0])
                    symbols[0] += 1
                else:
                    out.append(d)
            return "[%s]" % ", ".join(out)

        def program(name, callee, types, results):
            params = ", ".join("%%p%d: %s" % (i, t)
                               for i, t in enumerate(types))
            guards = "".join(
                "    kg.guard_tensor %%p%d {dtype = %s, shape = %s, "
                "requires_grad = false} : %s loc(%s)\n" % (
                    i, _elem(t), guard_shape(t), t, loc)
                for i, t in enumerate(types))
            operands = ", ".join("%%p%d" % i for i in range(len(types)))
            n = len(results)
            lhs = "%r = " if n == 1 else "%%r:%d = " % n
            names = "%r" if n == 1 else ", ".join(
                "%%r#%d" % i for i in range(n))
            return (
                "  kg.program @%s(%s) -> (%s) {\n%s"
                "    %skg.graph @%s(%s) : (%s) -> (%s) loc(%s)\n"
                "    kg.return %s : %s loc(%s)\n  } loc(%s)\n" % (
                    name, params, ", ".join(results), guards, lhs, callee,
                    operands, ", ".join(types), ", ".join(results), loc,
                    names, ", ".join(results), loc, loc))

        progs = program(base + "_fwd", base + "_g_fwd", arg_types, fwd_types)
        bwd_args = saved_types + ct_types
        progs += program(base + "_bwd", base + "_g_bwd", bwd_args,
                         grad_types)
        self.dynamic = symbols[0] > 0
        lines = split.split("\n")
        end = max(i for i, l in enumerate(lines) if l.startswith("}"))
        self.text = "\n".join(lines[:end] + [progs.rstrip("\n")]
                              + lines[end:])
        session.load(self.text, "%s.mlir" % base)
        self.session = session

    def forward(self, tensors):
        """(outputs, saved): the saved values are the arguments listed in
        `kg.saved_primals` (the tensors themselves: save_for_backward's
        version counter then raises if the caller writes one in place
        before the backward, as in eager), then the forward's saved
        results."""
        res = self.session.call(self.name + "_fwd", tensors,
                                [False] * len(tensors))
        # (the outputs and written values: tensors of their own; saved
        # values may share an output's memory)
        _capi.Session.distinct(res, self.num_outputs)
        saved = res[self.num_outputs:]
        # A saved value over the memory of an argument the caller will
        # overwrite (the written ones) is copied first.
        written = {tensors[j].data_ptr() for j in self.written}
        saved = [s.clone() if s.data_ptr() in written else s for s in saved]
        # A saved value that is an output's memory is saved as that output
        # tensor itself, so that the caller writing the output in place
        # before the backward raises autograd's error, as in eager (a
        # separate tensor over the same memory has its own version
        # counter: the backward silently read the written values); one
        # that is another view of an output's memory is copied.
        saved = [self._output_or_copy(s, res) for s in saved]
        # A passed argument that aliases a written one (the same tensor
        # passed twice) is copied too: its value before the write.
        primals = [tensors[j].clone() if tensors[j].data_ptr() in written
                   else tensors[j] for j in self.saved_primals]
        return res[:self.num_outputs], primals + saved

    def _output_or_copy(self, s, res):
        ptr = _capi.storage_ptr(s)
        for o in res[:self.num_outputs]:
            if _capi.storage_ptr(o) != ptr:
                continue
            if o.dtype == s.dtype and o.shape == s.shape and \
                    o.stride() == s.stride() and \
                    o.storage_offset() == s.storage_offset():
                return o
            return s.clone()
        return s

    def backward(self, saved, grads, out_shapes):
        # grads[i] is None for an output the loss does not use
        # (set_materialize_grads(False)): a zero cotangent, and the
        # arguments that only such outputs reach get None.
        live = 0
        for i in self.float_outs:
            if grads[i] is not None:
                live |= self.out_masks[i]
        if not live:
            return [None] * len(self.rg)
        cts = []
        for i in self.float_outs:
            g = grads[i]
            if g is None:
                _, dtype = self.out_meta[i]
                g = torch.zeros(out_shapes[i], dtype=dtype)
            cts.append(g.contiguous())
        args = list(saved) + cts
        res = self.session.call(self.name + "_bwd", args,
                                [False] * len(args))
        out = []
        it = iter(res)
        seen = set()
        for j, r in enumerate(self.rg):
            g = next(it) if r else None
            if g is not None and not (live >> j) & 1:
                g = None   # reaches only outputs the loss does not use
            if g is not None:
                # Two gradients that are one value of the program (the
                # biases of the two BatchNorms summed into a residual) come
                # back as one buffer: autograd would make that one tensor
                # the .grad of both, and the next backward would accumulate
                # into it twice.
                if g.data_ptr() in seen and g.numel():
                    g = g.clone()
                seen.add(g.data_ptr())
            out.append(g)
        return out


def _elem(type_text):
    return type_text[type_text.rindex("x") + 1:-1] if "x" in type_text \
        else type_text[len("tensor<"):-1]


def _dims(type_text):
    """The dims of a ranked tensor type's text ("?" for a dynamic one)."""
    inner = type_text[len("tensor<"):-1]
    return inner.split("x")[:-1]


def check_written(pair, capture, tensors):
    """A leaf that requires grad cannot be written in place (eager raises
    PyTorch's error; kiln runs such a call eagerly)."""
    for j in pair.written:
        if tensors[j].requires_grad and tensors[j].is_leaf:
            raise NotTrainable(
                "the graph writes argument '%s' in place, a leaf that "
                "requires grad" % capture.args[j].name)


class _Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pair, *tensors):
        outs, saved = pair.forward(list(tensors))
        ctx.pair = pair
        ctx.set_materialize_grads(False)
        ctx.out_shapes = [o.shape for o in outs]
        ctx.save_for_backward(*saved)
        ctx.mark_non_differentiable(
            *[o for o, r in zip(outs, pair.out_rg) if not r])
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        pair = ctx.pair
        if torch.is_grad_enabled():
            # create_graph=True (autograd runs the backward in grad mode):
            # the gradients would come back without a graph, and a second
            # derivative (a Hessian, a gradient penalty) would silently be
            # zero.
            raise DoubleBackward(
                "%s: double backward through the compiled graph @%s "
                "(torch.autograd.grad or backward with create_graph=True) "
                "is not supported: its backward is a Kiln program, not "
                "differentiable again; run this function eagerly "
                "(kiln.disable) to take higher derivatives"
                % (pair.location, pair.name), pair.location)
        return (None,) + tuple(pair.backward(ctx.saved_tensors, grads,
                                             ctx.out_shapes))


def _dynamic_warning(prog, error):
    if getattr(prog, "dynamic_training_warned", False):
        return
    prog.dynamic_training_warned = True
    import warnings
    from ._compile import KilnWarning
    warnings.warn("kiln: @%s: cannot train with dynamic dims (%s); each "
                  "shape compiles its own forward and backward"
                  % (prog.name, error.message if hasattr(error, "message")
                     else error), KilnWarning, stacklevel=5)


def _key(rg, tensors, dyn):
    """A pair's key: the requires-grad pattern, and per argument its dtype
    and shape with None for the dims in `dyn` ((argument, dim) pairs)."""
    return (rg, tuple((tuple(None if (j, d) in dyn else n
                             for d, n in enumerate(t.shape)), t.dtype)
                      for j, t in enumerate(tensors)))


def _changed_dims(prog, pairs, rg, tensors):
    """Automatic dynamic shapes for training: the input dims whose sizes
    differ from those of an existing pair of the same requires-grad pattern,
    dtypes and ranks (as the runtime makes a changed dim dynamic on the
    recompile of an inference program)."""
    if prog.owner.dynamic_mode() != "auto":
        return set()
    inputs = {j for j, a in enumerate(prog.result.args) if a.is_input}
    changed = set()
    for krg, shapes in pairs:
        if krg != rg or len(shapes) != len(tensors) or any(
                dt != t.dtype or len(sh) != t.dim()
                for (sh, dt), t in zip(shapes, tensors)):
            continue
        for j, ((sh, _), t) in enumerate(zip(shapes, tensors)):
            if j in inputs:
                changed.update((j, d) for d, (n, m) in enumerate(
                    zip(sh, t.shape)) if n is not None and n != m)
    return changed


_NO_GRADIENTS = "no gradients"   # a pairs entry: see call


def call(prog, flat_inputs, tensors):
    """Runs `prog` (a kiln._compile._Program) on its program arguments
    `tensors` (for the call's `flat_inputs`) as an autograd Function:
    (the capture, the results) to unflatten the outputs with; None when
    nothing is differentiated (_NoGradients: the caller runs the program
    as without grad)."""
    from ._compile import _CacheLimit, config
    rg = tuple(t.requires_grad for t in tensors)
    pairs = prog.__dict__.setdefault("training_pairs", {})
    # Dims marked dynamic (kiln.mark_dynamic) on the inputs, and dims that
    # changed size between training calls (automatic dynamic shapes): one
    # pair with `?` there serves every size (keyed without them).
    dyn, marked = set(), set()
    auto = prog.__dict__.setdefault("training_auto_dims", set())
    if not getattr(prog, "dynamic_training_failed", False):
        marked = {(j, d) for j, t in enumerate(tensors)
                  for d in t.__dict__.get("_kiln_dynamic_dims", ())}
        dyn = marked | {(j, d) for j, d in auto if d < tensors[j].dim()}
    key = _key(rg, tensors, dyn)
    pair = pairs.get(key)
    if pair is None and not getattr(prog, "dynamic_training_failed", False):
        changed = _changed_dims(prog, pairs, rg, tensors) - dyn
        if changed:
            auto |= changed
            dyn |= changed
            key = _key(rg, tensors, dyn)
            pair = pairs.get(key)
    if pair is None:
        if len(pairs) >= config.cache_size_limit:
            raise _CacheLimit("training: %d shapes / requires-grad patterns"
                              % len(pairs))
        pair = None
        if dyn:
            extra = {}
            for j, d in dyn:
                extra.setdefault(id(tensors[j]), set()).add(d)
            token = EXTRA_DYNAMIC.set(extra)
            try:
                pair = Pair(prog, prog.capture_for(flat_inputs, tensors,
                                                   dynamic=True),
                            tensors, rg)
            except _NoGradients:
                pair = _NO_GRADIENTS
            except KilnError as e:
                # An op whose gradient needs static shapes (a convolution
                # with a dynamic spatial dim), or a size the program needs
                # as a number: pairs for each shape (a warning where the
                # user marked dims dynamic; automatic dynamic shapes fall
                # back quietly, as a recompile would).
                if marked:
                    _dynamic_warning(prog, e)
                prog.dynamic_training_failed = True
                key = _key(rg, tensors, set())
                pair = pairs.get(key)
            finally:
                EXTRA_DYNAMIC.reset(token)
        if pair is None:
            capture = prog.capture_for(flat_inputs, tensors)
            try:
                pair = Pair(prog, capture, tensors, rg)
            except _NoGradients:
                pair = _NO_GRADIENTS
        pairs[key] = pair
    elif pair is not _NO_GRADIENTS:
        check_written(pair, pair.capture, tensors)
    if pair is _NO_GRADIENTS:
        return None
    # An argument that requires grad but reaches no differentiable result
    # (Pair.rg False) enters detached: no edge into its history (autograd
    # would run that history's backward again with a zero gradient).
    outs = list(_Function.apply(pair, *[
        t.detach() if t.requires_grad and not r and j not in pair.written
        else t for j, (t, r) in enumerate(zip(tensors, pair.rg))]))
    for j, value in zip(pair.written, outs[pair.num_results:]):
        if tensors[j].requires_grad:
            tensors[j].copy_(value)
        else:
            with torch.no_grad():
                tensors[j].copy_(value)
    return pair.capture, outs[:pair.num_results]
