"""A compiled optimizer step, `kiln.compile(opt.step)` or a compiled
training step that calls `opt.step()`, against eager PyTorch over several
steps: SGD (plain, momentum, nesterov, weight decay), Adam, AdamW, RMSprop and
Adagrad, for-loop and foreach;
hyperparameters changed between calls (param_groups, an lr scheduler);
`zero_grad(set_to_none=True)` with some gradients None; state created
lazily on the first step; `add_param_group`; `load_state_dict`; several
optimizer objects. `kiln.compile(opt.step)` is one program after its first
call (kiln/_optim.py: the parameters, gradients and state lifted, read from
their sources on every call; grads-None pattern, state entries and
hyperparameters but lr in the key, lr a per-call argument:
test_step_is_one_program and after); a
compiled function that calls `opt.step()` (form "train") lifts the step the
same way from its second call on (kiln/_optim.py StepLift: one graph after
backward(); test_step_in_a_compiled_training_function_is_one_graph and
after; docs/python.md, "Compiled optimizer steps")."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

STEPS = 6

OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd-nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9,
                                               nesterov=True),
    "sgd-weight-decay": lambda ps: torch.optim.SGD(ps, lr=0.1,
                                                   weight_decay=0.1),
    "sgd-momentum-wd": lambda ps: torch.optim.SGD(
        ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adam-wd-amsgrad": lambda ps: torch.optim.Adam(
        ps, lr=0.01, weight_decay=0.1, amsgrad=True),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
    "sgd-nesterov-foreach": lambda ps: torch.optim.SGD(
        ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1,
        foreach=True),
    "adam-foreach": lambda ps: torch.optim.Adam(ps, lr=0.01,
                                                weight_decay=0.1,
                                                foreach=True),
    "adam-maximize": lambda ps: torch.optim.Adam(ps, lr=0.01, maximize=True),
    "rmsprop": lambda ps: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5),
    "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.1),
}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))


def _batch(i):
    g = torch.Generator().manual_seed(100 + i)
    return torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)


def _loss(m, x, y, i):
    return F.mse_loss(m(x), y)


def _assert_same(ref, got, what):
    for (name, a), b in zip(ref.named_parameters(), got.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5,
                                   msg=lambda m: "%s, %s: %s" % (
                                       what, name, m))


def _run(make, form, backend, mutate=None, loss=_loss, steps=STEPS):
    """Trains a model and a copy `steps` steps, one eagerly, one with the
    step compiled (form "step": kiln.compile(opt.step); form "train": a
    compiled function doing zero_grad, forward, backward, opt.step()),
    comparing parameters and optimizer state after every step."""
    m1 = _model()
    m2 = copy.deepcopy(m1)
    o1, o2 = make(m1.parameters()), make(m2.parameters())

    def train(m, o, x, y, i):
        o.zero_grad(set_to_none=True)
        lo = loss(m, x, y, i)
        lo.backward()
        o.step()
        return lo

    if form == "step":
        cstep = kiln.compile(o2.step, backend=backend)

        def compiled(m, o, x, y, i):
            o.zero_grad(set_to_none=True)
            lo = loss(m, x, y, i)
            lo.backward()
            cstep()
            return lo
    else:
        compiled = kiln.compile(train, backend=backend)
    for i in range(steps):
        x, y = _batch(i)
        if mutate is not None:
            mutate(m1, o1, i)
            mutate(m2, o2, i)
        l1 = train(m1, o1, x, y, i)
        l2 = compiled(m2, o2, x, y, i)
        torch.testing.assert_close(l2, l1)
        _assert_same(m1, m2, "step %d" % i)
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            s1, s2 = o1.state.get(p1, {}), o2.state.get(p2, {})
            assert sorted(s1) == sorted(s2), (i, sorted(s1), sorted(s2))
            for k in s1:
                if s1[k] is None:
                    assert s2[k] is None, (i, k)
                    continue
                torch.testing.assert_close(torch.as_tensor(s2[k]),
                                           torch.as_tensor(s1[k]),
                                           rtol=1e-4, atol=1e-5)
    return m2, o2


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("form", ["step", "train"])
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_compiled_step_matches_eager(backend, form, name):
    # (sgd-nesterov failed from the second step on: `buf.mul_(momentum)`
    # is a break, `.add_(d_p)` a node of the next graph, and
    # `d_p.add(buf, alpha=momentum)` ran on the real `buf` while tracing,
    # before the graph's write.)
    _run(OPTIMIZERS[name], form, backend)


def _set(key, values):
    def mutate(m, o, i):
        for g in o.param_groups:
            g[key] = values(i)
    return mutate


HYPER = {
    "lr-param-groups": ("sgd-momentum", _set("lr", lambda i: 0.1 / (i + 1))),
    "lr-adam": ("adam", _set("lr", lambda i: 0.02 / (i + 1))),
    "momentum": ("sgd-momentum",
                 _set("momentum", lambda i: 0.9 if i < 3 else 0.5)),
    "weight-decay": ("sgd-weight-decay",
                     _set("weight_decay", lambda i: 0.1 if i < 3 else 0.0)),
    "betas": ("adam", _set("betas", lambda i: (0.9, 0.999) if i < 3
                           else (0.5, 0.9))),
    "nesterov-off": ("sgd-nesterov",
                     _set("nesterov", lambda i: i < 3)),
}


@pytest.mark.parametrize("case", sorted(HYPER))
@pytest.mark.parametrize("form", ["step", "train"])
def test_hyperparameters_changed_between_calls(form, case):
    name, mutate = HYPER[case]
    _run(OPTIMIZERS[name], form, "cpu", mutate=mutate)


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
@pytest.mark.parametrize("form", ["step", "train"])
def test_lr_scheduler(form, name):
    scheds = {}

    def mutate(m, o, i):
        # StepLR made before the first step, stepped after each one (as a
        # training loop does): lr 0.1, 0.1, 0.05, 0.05, 0.025 ...
        if id(o) not in scheds:
            scheds[id(o)] = torch.optim.lr_scheduler.StepLR(o, 2, 0.5)
        else:
            scheds[id(o)].step()
    _, o = _run(OPTIMIZERS[name], form, "cpu", mutate=mutate)
    assert o.param_groups[0]["lr"] < OPTIMIZERS[name]([
        torch.zeros(1, requires_grad=True)]).param_groups[0]["lr"]


def _some_grads_none(m, x, y, i):
    # On odd steps only the last layer takes part: after
    # zero_grad(set_to_none=True) the first layer's grads are None, and the
    # optimizer skips those parameters (their state is not touched).
    if i % 2:
        return (m[2].weight.sum() + m[2].bias.sum()) * (i + 1)
    return F.mse_loss(m(x), y)


@pytest.mark.parametrize("name", ["sgd-momentum", "sgd-nesterov", "adam",
                                  "adamw"])
@pytest.mark.parametrize("form", ["step", "train"])
def test_set_to_none_some_grads_none(form, name):
    _run(OPTIMIZERS[name], form, "cpu", loss=_some_grads_none)


def _unused_output_loss(m, x, y, i):
    out = m(x)   # computed, then not used by the loss on odd steps
    if i % 2:
        return (m[2].weight.sum() + m[2].bias.sum()) * (i + 1)
    return F.mse_loss(out, y)


def test_grad_none_when_output_unused_in_compiled_train_step():
    # A parameter used only by a value the loss does not use gets None, as
    # in eager (kiln._training._result_arg_masks: it enters the graph's
    # autograd Function detached); it got a zero gradient, and momentum
    # then moved it.
    _run(OPTIMIZERS["sgd-momentum"], "train", "cpu",
         loss=_unused_output_loss)


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_lazily_created_state(backend, name):
    # Momentum buffers / Adam's moments exist only after step 1: the first
    # call creates them (torch.clone / zeros_like), later calls update them.
    m = _model()
    ref = copy.deepcopy(m)
    o, ro = OPTIMIZERS[name](m.parameters()), OPTIMIZERS[name](
        ref.parameters())
    step = kiln.compile(o.step, backend=backend)
    assert not o.state
    for i in range(3):
        x, y = _batch(i)
        for mod, opt, st in ((ref, ro, ro.step), (m, o, step)):
            opt.zero_grad()
            F.mse_loss(mod(x), y).backward()
            st()
        assert len(o.state) == 4
        _assert_same(ref, m, "step %d" % i)
    key = "momentum_buffer" if name.startswith("sgd") else "exp_avg"
    for p, rp in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(o.state[p][key], ro.state[rp][key])


@pytest.mark.parametrize("form", ["step", "train"])
def test_add_param_group(form):
    def mutate(m, o, i):
        if i == 2:
            # The last layer moves to its own group with its own lr.
            last = list(m[2].parameters())
            o.param_groups[0]["params"] = [
                p for p in o.param_groups[0]["params"]
                if all(p is not q for q in last)]
            o.add_param_group({"params": last, "lr": 0.03})
    for name in ("sgd-momentum", "adam"):
        _run(OPTIMIZERS[name], form, "cpu", mutate=mutate)


@pytest.mark.parametrize("form", ["step", "train"])
def test_load_state_dict(form):
    saved = {}

    def mutate(m, o, i):
        if i == 2:
            saved[id(o)] = copy.deepcopy(o.state_dict())
        if i == 4:
            # Back to the state of step 2, with another lr.
            sd = copy.deepcopy(saved[id(o)])
            for g in sd["param_groups"]:
                g["lr"] = g["lr"] / 3
            o.load_state_dict(sd)
    for name in ("sgd-momentum", "adam"):
        _run(OPTIMIZERS[name], form, "cpu", mutate=mutate)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_second_optimizer_object(backend):
    # One compiled training step called with two models and two optimizers
    # (specialized by identity: each pair its own capture), interleaved.
    def train(m, o, x, y):
        o.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        o.step()
        return loss
    step = kiln.compile(train, backend=backend)
    ma, mb = _model(), _model()
    with torch.no_grad():
        for p in mb.parameters():
            p.mul_(-1)
    refs = [copy.deepcopy(ma), copy.deepcopy(mb)]
    opts = [torch.optim.SGD(ma.parameters(), lr=0.1, momentum=0.9),
            torch.optim.Adam(mb.parameters(), lr=0.01)]
    ref_opts = [torch.optim.SGD(refs[0].parameters(), lr=0.1, momentum=0.9),
                torch.optim.Adam(refs[1].parameters(), lr=0.01)]
    for i in range(4):
        x, y = _batch(i)
        for k, m in enumerate((ma, mb)):
            torch.testing.assert_close(step(m, opts[k], x, y),
                                       train(refs[k], ref_opts[k], x, y))
            _assert_same(refs[k], m, "model %d step %d" % (k, i))
    # Two compiled steps of two optimizers over one model's halves.
    m = _model()
    ref = copy.deepcopy(m)
    o1 = torch.optim.SGD(m[0].parameters(), lr=0.1, momentum=0.9)
    o2 = torch.optim.Adam(m[2].parameters(), lr=0.01)
    r1 = torch.optim.SGD(ref[0].parameters(), lr=0.1, momentum=0.9)
    r2 = torch.optim.Adam(ref[2].parameters(), lr=0.01)
    s1 = kiln.compile(o1.step, backend=backend)
    s2 = kiln.compile(o2.step, backend=backend)
    for i in range(4):
        x, y = _batch(i)
        for mod, steps in ((ref, (r1.step, r2.step)), (m, (s1, s2))):
            mod.zero_grad()
            F.mse_loss(mod(x), y).backward()
            for st in steps:
                st()
        _assert_same(ref, m, "step %d" % i)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_read_of_a_tensor_a_graph_writes_after_a_break(backend):
    # The pattern behind SGD's nesterov, without an optimizer: `b.mul_(.5)`
    # on a tensor reached through an object is a break (eager); `.add_(g)`
    # on its result is a node of the next graph; `b * 2` on the real `b`
    # must see that write (before: computed while tracing, from the value
    # before the add_: 3 of 3 calls wrong).
    class State:
        pass
    st = State()
    st.buf = torch.ones(3)

    def f(g):
        b = st.buf
        b.mul_(0.5).add_(g)
        return g + b, b * 2, (b * 1).sum()
    c = kiln.compile(f, backend=backend)
    rb = torch.ones(3)
    for i in range(3):
        g = torch.full((3,), float(i + 1))
        got = c(g)
        rb.mul_(0.5).add_(g)
        want = (g + rb, rb * 2, (rb * 1).sum())
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b)
        torch.testing.assert_close(st.buf, rb)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_written_arguments_of_any_layout(backend):
    # The runtime writes a written (ref) argument back into the caller's
    # memory: one memcpy when both layouts are row-major (size-1 dims with
    # any stride), element by element through the strides otherwise.
    def f(a, b, c):
        a.add_(1)
        b.mul_(2)
        c.sub_(3)

    def views(ts):
        return (ts[0].permute(2, 0, 1), ts[1][:, ::2, 1:],
                ts[2][:1].as_strided((1, 3, 4), (7, 4, 1)))
    _check_written_views(f, backend, views,
                         [torch.arange(24.).reshape(2, 3, 4) + k
                          for k in range(3)])


def _check_written_views(f, backend, views, base):
    """f compiled writes views(base) as f writes views(ref), twice, with no
    eager fallback."""
    g = kiln.compile(f, backend=backend)
    ref = [t.clone() for t in base]
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)  # no eager fallback
        for _ in range(2):
            f(*views(ref))
            g(*views(base))
            for t, r in zip(base, ref):
                torch.testing.assert_close(t, r)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_written_arguments_of_each_write_back_path(backend):
    # The cpu backend writes a ref back in one copy when its view is
    # row-major (an offset view, size-1 dims with any stride, 0-d), in
    # rows when only its innermost dim is contiguous, element by element
    # otherwise (before: element by element always).
    def f(a, b, c, d, e):
        a.add_(1)
        b.mul_(2)
        c.sub_(3)
        d.add_(4)
        e.mul_(-1)

    def views(ts):
        return (ts[0][1], ts[1].as_strided((3, 1, 4), (4, 100, 1), 24),
                ts[2][:, 1:3, :2], ts[3][0, 0, 0],
                ts[4][:, :, 1::2].transpose(0, 2))
    _check_written_views(f, backend, views,
                         [torch.arange(120.).reshape(5, 3, 8) + k
                          for k in range(5)])


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_non_contiguous_parameters(backend):
    # SGD momentum's parameter update is a node of a graph (it follows the
    # momentum buffer's write), so the program writes the parameter back.
    torch.manual_seed(0)
    w = torch.randn(3, 4)
    ps = [nn.Parameter(w.t()), nn.Parameter(torch.randn(6, 2)[::2])]
    rps = [nn.Parameter(p.detach().clone()) for p in ps]
    assert not ps[0].is_contiguous() and not ps[1].is_contiguous()
    o = torch.optim.SGD(ps, lr=0.1, momentum=0.9)
    ro = torch.optim.SGD(rps, lr=0.1, momentum=0.9)
    step = kiln.compile(o.step, backend=backend)
    for i in range(3):
        for p, rp in zip(ps, rps):
            p.grad = torch.full_like(p, float(i + 1)).contiguous()
            rp.grad = p.grad.clone()
        ro.step()
        step()
        for p, rp in zip(ps, rps):
            torch.testing.assert_close(p, rp)


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
def test_parameters_that_are_views_of_one_buffer(name):
    # Row-major ref arguments run in the caller's memory (no copy in or
    # back; docs/runtime.md "Ref arguments"), others are copied and written
    # back: parameters that are disjoint views of one flat buffer (row-major
    # ones with offsets, a transposed one, a strided one) step as eager's.
    torch.manual_seed(0)

    def params():
        flat = torch.randn(64)
        return flat, [flat[0:12].view(3, 4), flat[12:24].view(4, 3).t(),
                      flat[24:28], flat[28:40:2], flat[40:64].view(2, 3, 4)]
    base, ps = params()
    rbase = base.clone()
    rps = [rbase.as_strided(p.shape, p.stride(), p.storage_offset())
           for p in ps]
    for p in ps + rps:
        p.requires_grad_(True)
    o, ro = OPTIMIZERS[name](ps), OPTIMIZERS[name](rps)
    step = kiln.compile(o.step, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)  # no eager fallback
        for i in range(4):
            for k, (p, rp) in enumerate(zip(ps, rps)):
                p.grad = torch.full(p.shape, float(i + k + 1)).sin()
                rp.grad = p.grad.clone()
            ro.step()
            step()
            torch.testing.assert_close(base, rbase)


# --- The step as one program (kiln/_optim.py): after the first call, which
# creates the state lazily (graph breaks), `kiln.compile(opt.step)` lifts
# the parameters, gradients and state it reaches through the optimizer
# (each read from its source on every call) and runs as one program.

# (Adagrad creates its state in __init__: one program from the first call;
# its `state_sum.addcmul_(grad, grad, value=1)` on real tensors reached
# the importer as a call of the tracer's wrapper of Tensor.addcmul_, "no
# Kiln conversion for kiln._tracer.addcmul_", before _call_node unwrapped
# it. RMSprop's state["step"] is a Python int, a key value: it recaptures
# every step, so it is not here.)
ONE_PROGRAM = ["sgd", "sgd-momentum", "sgd-nesterov", "sgd-weight-decay",
               "sgd-momentum-wd", "adam", "adam-wd-amsgrad", "adamw",
               "adam-maximize", "adagrad"]


def _programs(compiled_step):
    """The captured whole-function programs of a compiled step (not the
    first call's segments) and how often each compiled."""
    from kiln._compile import _Program
    return [p.compiles for p in compiled_step._kiln.programs.values()
            if isinstance(p, _Program)]


def _train_pair(name, steps, cstep_of, loss=_loss, explain_at=None,
                mutate=None):
    """`steps` steps of eager against a compiled step (cstep_of(o)),
    zero_grad(set_to_none=True) every step (a new `p.grad` object each
    time), called with grad enabled; at step `explain_at` the compiled side
    runs `kiln.explain(o.step)()` instead (it runs the step too): its
    ExplainOutput is returned."""
    m1 = _model()
    m2 = copy.deepcopy(m1)
    o1, o2 = OPTIMIZERS[name](m1.parameters()), OPTIMIZERS[name](
        m2.parameters())
    cstep = cstep_of(o2)
    out = None
    assert torch.is_grad_enabled()
    for i in range(steps):
        x, y = _batch(i)
        if mutate is not None:
            mutate(m1, o1, i)
            mutate(m2, o2, i)
        for m, o in ((m1, o1), (m2, o2)):
            o.zero_grad(set_to_none=True)
            loss(m, x, y, i).backward()
        o1.step()
        if i == explain_at:
            out = kiln.explain(o2.step)()
        else:
            cstep(o2)
        _assert_same(m1, m2, "step %d" % i)
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            s1, s2 = o1.state.get(p1, {}), o2.state.get(p2, {})
            assert sorted(s1) == sorted(s2)
            for k in s1:
                if isinstance(s1[k], torch.Tensor):
                    torch.testing.assert_close(s2[k], s1[k], rtol=1e-4,
                                               atol=1e-5)
    return out, cstep


@pytest.mark.parametrize("name", ONE_PROGRAM)
def test_step_is_one_program(name):
    # Before: every write to a parameter or state tensor was a graph break
    # (an SGD-momentum step of this model: 4 graphs, 12 breaks).
    holder = {}

    def cstep_of(o):
        holder["c"] = kiln.compile(o.step)
        return lambda o: holder["c"]()
    out, _ = _train_pair(name, 7, cstep_of, explain_at=3)
    assert (out.graph_count, out.graph_break_count) == (1, 0), \
        out.break_reasons
    # One program for steps 2..7, compiled once: a new `p.grad` object each
    # step, and Adam's `state["step"]` (its `.item()` in the graph), need
    # no recapture.
    assert _programs(holder["c"]) == [1]


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
def test_fullgraph_after_the_first_step(name):
    # The first step creates the state (eagerly here); from then on
    # fullgraph=True captures the step whole.
    holder = {}

    def cstep(o):
        if "c" not in holder:
            o.step()
            holder["c"] = kiln.compile(o.step, fullgraph=True)
            return
        holder["c"]()
    _train_pair(name, 6, lambda o: cstep)
    assert _programs(holder["c"]) == [1]


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
def test_grads_none_key_the_program(name):
    # Steps alternate between all gradients and only the last layer's
    # (`p.grad is None` for the others: skipped): two programs, each
    # compiled once, reused on alternate steps.
    holder = {}

    def cstep_of(o):
        holder["c"] = kiln.compile(o.step)
        return lambda o: holder["c"]()
    _train_pair(name, 8, cstep_of, loss=_some_grads_none)
    assert sorted(_programs(holder["c"])) == [1, 1]


def test_momentum_is_a_key_value():
    # A hyperparameter the step branches on (`if momentum != 0`) or that is
    # not read per call: a new value recompiles (a constant of the program,
    # with the change as the guard's reason); a value seen before reuses
    # its program. (Before opt27 `lr` was such a key value too.)
    holder = {}

    def cstep_of(o):
        holder["c"] = kiln.compile(o.step)
        return lambda o: holder["c"]()
    ms = [0.9, 0.9, 0.9, 0.5, 0.5, 0.9, 0.5]
    _train_pair("sgd-momentum", len(ms), cstep_of,
                mutate=_set("momentum", lambda i: ms[i]))
    assert sorted(_programs(holder["c"])) == [1, 1]
    reasons = holder["c"]._kiln.guards.describe(
        *[k[-1][1] for k in list(holder["c"]._kiln.programs)[-2:]])
    assert reasons == ["SGD param_groups[0]['momentum']: 0.9 -> 0.5"], \
        reasons


SCHEDULERS = {
    "step": lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5),
    "lambda": lambda o: torch.optim.lr_scheduler.LambdaLR(
        o, lambda i: 1.0 / (1 + i)),
    "onecycle": lambda o: torch.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.05, total_steps=25, cycle_momentum=False),
}


@pytest.mark.parametrize("sched", sorted(SCHEDULERS))
@pytest.mark.parametrize("name", ["adam", "adamw", "sgd", "sgd-momentum",
                                  "sgd-nesterov"])
def test_lr_read_per_call(name, sched):
    # `lr` is a per-call argument of the step's program (kiln/_optim.py,
    # PER_CALL: a 0-d f64 tensor read from param_groups[g]["lr"] on every
    # call, its .item() in the graph), not a key value: a scheduler that
    # changes it on every step runs one program compiled once, and the
    # parameters follow eager's over 20 steps (before: a recompile per
    # step, then eager past cache_size_limit). SGD's since opt28: its
    # `alpha=-lr` is a _optim.TracedNumber, a float torch's parser takes
    # (the 9 sgd cases failed before: a program per lr value, then eager).
    m, rm = _model(), _model()
    o, ro = OPTIMIZERS[name](m.parameters()), OPTIMIZERS[name](
        rm.parameters())
    step = kiln.compile(o.step, backend="cpu")
    with warnings.catch_warnings():
        # (the scheduler wraps o.step after kiln.compile took it, and warns
        # that its wrapper was not called)
        warnings.simplefilter("ignore", UserWarning)
        s, rs = SCHEDULERS[sched](o), SCHEDULERS[sched](ro)
        warnings.simplefilter("error", kiln.KilnWarning)  # no eager fallback
        lrs = set()
        for i in range(20):
            for k, (p, rp) in enumerate(zip(m.parameters(),
                                            rm.parameters())):
                p.grad = torch.full_like(p, float(i % 4 - k)).cos()
                rp.grad = p.grad.clone()
            ro.step()
            step()
            lrs.add(o.param_groups[0]["lr"])
            s.step()
            rs.step()
            for p, rp in zip(m.parameters(), rm.parameters()):
                torch.testing.assert_close(p, rp)
    assert len(lrs) > 5, lrs
    assert _programs(step) == [1]


@pytest.mark.parametrize("when", [0, 3])
def test_lr_changes_around_a_capture_that_bakes_it(when):
    # lr changing on every step around captures that are not one lifted
    # program: plain SGD's step after `momentum` is set nonzero creates the
    # momentum buffer (a capture with graph breaks, then captured again
    # without lifting: _optim.TracedValueStored). Every step matches eager
    # (none runs with an older lr). (Such a step runs with breaks, traced
    # again on every call, so it reads the new lr anyway; _optim._BAKED,
    # which makes lr a key value again for that optimizer, is a second
    # line: this test passes without it too.)
    m, rm = _model(), _model()
    o = torch.optim.SGD(m.parameters(), lr=0.1)
    ro = torch.optim.SGD(rm.parameters(), lr=0.1)
    step = kiln.compile(o.step, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.KilnWarning)
        for i in range(8):
            for k, (p, rp) in enumerate(zip(m.parameters(),
                                            rm.parameters())):
                p.grad = torch.full_like(p, float(i - k)).sin()
                rp.grad = p.grad.clone()
            for opt in (o, ro):
                opt.param_groups[0]["lr"] = 0.1 / (1 + i)
                if i == when:
                    opt.param_groups[0]["momentum"] = 0.9
            ro.step()
            step()
            for p, rp in zip(m.parameters(), rm.parameters()):
                torch.testing.assert_close(p, rp)


def test_step_writes_parameters_under_grad_mode():
    # The step's ops are all made under its torch.no_grad(): the program
    # runs as an inference call that writes its (requires-grad) parameter
    # arguments, also when called with grad enabled; no warning, no eager
    # fallback. (Lifted without this, it went to the training path:
    # "writes argument ... in place, a leaf that requires grad".)
    holder = {}

    def cstep_of(o):
        holder["c"] = kiln.compile(o.step)
        return lambda o: holder["c"]()
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        _train_pair("sgd-momentum", 4, cstep_of)
    for p in holder["c"]._kiln.user_fn.__self__.param_groups[0]["params"]:
        assert p.requires_grad and p.grad_fn is None
    assert _programs(holder["c"]) == [1]


@pytest.mark.parametrize("form", ["one", "two"])
def test_two_optimizers_over_the_same_parameters(form):
    # SGD and Adam step the same parameters, each compiled (each its own
    # program over the same lifted parameters); or one optimizer's state
    # replaced by load_state_dict (new state tensors, read from their
    # source: no recapture).
    m1 = _model()
    m2 = copy.deepcopy(m1)
    pairs = [(OPTIMIZERS["sgd-momentum"](m.parameters()),
              OPTIMIZERS["adam"](m.parameters())) for m in (m1, m2)]
    compiled = [kiln.compile(o.step) for o in pairs[1]]
    saved = None
    for i in range(6):
        x, y = _batch(i)
        for k, m in enumerate((m1, m2)):
            m.zero_grad(set_to_none=True)
            F.mse_loss(m(x), y).backward()
            for j, o in enumerate(pairs[k]):
                if form == "two" or j == 0:
                    o.step() if k == 0 else compiled[j]()
        _assert_same(m1, m2, "step %d" % i)
        if i == 2:
            saved = [copy.deepcopy(o[0].state_dict()) for o in pairs]
        if i == 4:
            for o, sd in zip(pairs, saved):
                o[0].load_state_dict(copy.deepcopy(sd))
    for c in compiled[:2 if form == "two" else 1]:
        assert _programs(c) == [1]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_state_created_by_a_later_step(backend):
    # Plain SGD has state {"momentum_buffer": None} after its first step, so
    # the second is lifted; when `momentum` becomes nonzero later, that
    # step creates the buffer (`torch.clone(d_p).detach()` stored in the
    # state). Before: a traced value (a Proxy) was left in the optimizer's
    # state and the parameters went wrong from then on. Now the state is
    # restored and that step captured without lifting (its breaks run
    # eagerly); the next step is one program again.
    holder = {}

    def cstep_of(o):
        holder["c"] = kiln.compile(o.step, backend=backend)
        return lambda o: holder["c"]()

    def mutate(m, o, i):
        if i == 3:
            for g in o.param_groups:
                g["momentum"] = 0.9
    _train_pair("sgd", 7, cstep_of, mutate=mutate)
    o = holder["c"]._kiln.user_fn.__self__
    for st in o.state.values():
        assert isinstance(st["momentum_buffer"], torch.Tensor)
        assert type(st["momentum_buffer"]) is torch.Tensor
    out = kiln.explain(o.step)()
    assert (out.graph_count, out.graph_break_count) == (1, 0)


# --- the step inside a compiled training function (form "train", lifted:
# kiln/_optim.py StepLift)

TRAIN_LIFTED = ["sgd", "sgd-momentum", "sgd-nesterov", "sgd-momentum-wd",
                "adam", "adamw"]

# How the training function gets its optimizer, zero_grad's set_to_none,
# whether the model has a frozen parameter (no grad: the step skips it) and
# whether the gradients are clipped between backward and step.
TRAIN_FORMS = {
    "closure-none": ("closure", True, False, False),
    "closure-zero-frozen": ("closure", False, True, False),
    "argument-zero": ("argument", False, False, False),
    "argument-none-frozen": ("argument", True, True, False),
    "closure-clip": ("closure", False, False, True),
}


def _compare_training(m1, o1, m2, o2, what):
    for (name, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        torch.testing.assert_close(p2, p1, rtol=1e-4, atol=1e-5,
                                   msg=lambda s: "%s, %s: %s" % (
                                       what, name, s))
        assert (p1.grad is None) == (p2.grad is None), (what, name)
        if p1.grad is not None:
            torch.testing.assert_close(p2.grad, p1.grad, rtol=1e-4,
                                       atol=1e-5)
        s1, s2 = o1.state.get(p1, {}), o2.state.get(p2, {})
        assert sorted(s1) == sorted(s2), (what, name, sorted(s1),
                                          sorted(s2))
        for k in s1:
            if not isinstance(s1[k], torch.Tensor):
                assert s2[k] == s1[k], (what, name, k)
                continue
            assert type(s2[k]) is torch.Tensor, (what, name, k)
            torch.testing.assert_close(s2[k], s1[k], rtol=1e-4, atol=1e-5)


def _train_fns(form, m, o, set_to_none, clip):
    """The eager training function for one model and optimizer: (f, args)
    with the optimizer from the closure or as an argument."""
    def body(mm, oo, x, y):
        oo.zero_grad(set_to_none=set_to_none)
        loss = F.mse_loss(mm(x), y)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(mm.parameters(), 0.5)
        oo.step()
        return loss

    if form == "closure":
        return (lambda x, y: body(m, o, x, y)), ()
    return body, (m, o)


def _segments(c):
    """(segment programs, their compiles, imported segments) of a compiled
    function with graph breaks, over its keys."""
    from kiln._breaks import Broken
    bs = [b for b in c._kiln.programs.values() if isinstance(b, Broken)]
    steps = [p for s in (c._kiln.step_programs or {}).values()
             for p in s._kiln.programs.values()
             if isinstance(p, kiln._compile._Program)]
    return (sum(len(b.programs) for b in bs),
            sum(p.compiles for b in bs for p in b.programs.values()),
            sum(b.imported_segments for b in bs),
            len(steps), sum(p.compiles for p in steps))


@pytest.mark.parametrize("how", sorted(TRAIN_FORMS))
@pytest.mark.parametrize("name", TRAIN_LIFTED)
def test_step_in_a_compiled_training_function_is_one_graph(name, how):
    # `opt.step()` called by a compiled training step, on an optimizer from
    # its closure or an argument: from the second call on (the first makes
    # the state, eagerly) the step's reads of `p.grad`, state and
    # hyperparameters and its writes are one graph after backward(), the
    # only break: the optimizer's own program (kiln.compile(o.step), run at
    # that point, not traced again: StepLift._own_program). Before: every
    # write of the step was a graph break run eagerly (SGD momentum on this
    # model: 1 + 12 breaks, 5 graphs). Parameters, gradients, state and the loss equal eager's
    # after each of 5 steps.
    where, set_to_none, frozen, clip = TRAIN_FORMS[how]
    m1 = _model()
    if frozen:
        m1[0].bias.requires_grad_(False)
    m2 = copy.deepcopy(m1)
    o1, o2 = OPTIMIZERS[name](m1.parameters()), OPTIMIZERS[name](
        m2.parameters())
    f1, a1 = _train_fns(where, m1, o1, set_to_none, clip)
    f2, a2 = _train_fns(where, m2, o2, set_to_none, clip)
    c = kiln.compile(f2, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)  # no eager fallback
        for i in range(5):
            x, y = _batch(i)
            l1 = f1(*a1, x, y)
            if i == 3:
                out = kiln.explain(f2)(*a2, x, y)
                l2 = None
            else:
                l2 = c(*a2, x, y)
                torch.testing.assert_close(l2, l1)
            if i == 1:
                after_2 = _segments(c)
            _compare_training(m1, o1, m2, o2, "step %d" % i)
    assert out.graph_break_count == 1, out.break_reasons
    assert "backward" in str(out.break_reasons[0].reason)
    assert out.graph_count == 2, out
    # The step's graph: the optimizer's own program (kiln.compile(o.step):
    # its in-place updates, one program with no break, compiled once).
    assert out.ops_per_graph[1] == ["%s.step (its own program)"
                                    % type(o2).__name__], out.ops_per_graph
    step = c._kiln.step_programs[o2]
    assert [p.compiles for p in step._kiln.programs.values()] == [1]
    # Steps 3 and 5 replay the graphs recorded by step 2: nothing imported
    # or compiled again.
    assert _segments(c) == after_2, (after_2, _segments(c))


def _twin_training_steps(name):
    """Two copies of the model, each with its optimizer `name` and its
    training-step function taking the optimizer as an argument: (m1, o1,
    f1, a1, m2, o2, f2, a2)."""
    m1 = _model()
    m2 = copy.deepcopy(m1)
    o1, o2 = OPTIMIZERS[name](m1.parameters()), OPTIMIZERS[name](
        m2.parameters())
    f1, a1 = _train_fns("argument", m1, o1, False, False)
    f2, a2 = _train_fns("argument", m2, o2, False, False)
    return m1, o1, f1, a1, m2, o2, f2, a2


@pytest.mark.parametrize("name", ["sgd-momentum", "adam"])
def test_step_in_a_compiled_training_function_cpu(name):
    # The same on the cpu backend (the step's graph writes the parameters
    # and state in the caller's memory), the optimizer as an argument.
    m1, o1, f1, a1, m2, o2, f2, a2 = _twin_training_steps(name)
    c = kiln.compile(f2, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        for i in range(5):
            x, y = _batch(i)
            l1 = f1(*a1, x, y)
            l2 = c(*a2, x, y)
            torch.testing.assert_close(l2, l1)
            _compare_training(m1, o1, m2, o2, "step %d" % i)
    out = kiln.explain(f2)(*a2, *_batch(5))
    assert (out.graph_count, out.graph_break_count) == (2, 1), \
        out.break_reasons
    # (the step's wrapper of the trace is gone: StepLift.__exit__)
    assert "step" not in o2.__dict__


@pytest.mark.parametrize("sched", ["step", "lambda"])
@pytest.mark.parametrize("name", ["sgd-momentum", "rmsprop", "adam"])
def test_lr_read_per_call_in_a_compiled_training_function(name, sched):
    # An lr scheduler stepping every call of a compiled training function
    # (zero_grad, forward, backward, opt.step()): the lifted step reads lr
    # per call (StepLift, PER_CALL), so 20 steps with 20 lr values (lambda)
    # are one capture of each graph (nothing imported or compiled after the
    # second call) and the parameters equal eager's. (RMSprop's Python-int
    # `state["step"]` is no key value here: the function is traced every
    # call anyway.) Before: every write of the step was a graph break run
    # eagerly.
    m1, o1, f1, a1, m2, o2, f2, a2 = _twin_training_steps(name)
    c = kiln.compile(f2, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s1, s2 = SCHEDULERS[sched](o1), SCHEDULERS[sched](o2)
        warnings.simplefilter("error", kiln.KilnWarning)
        lrs = set()
        for i in range(20):
            x, y = _batch(i)
            torch.testing.assert_close(c(*a2, x, y), f1(*a1, x, y))
            lrs.add(o2.param_groups[0]["lr"])
            s1.step()
            s2.step()
            _compare_training(m1, o1, m2, o2, "step %d" % i)
            if i == 1:
                after_2 = _segments(c)
    assert len(lrs) > 5, lrs
    assert _segments(c) == after_2, (after_2, _segments(c))
    # The scheduler's counting wrapper of o2.step is back in place after
    # each trace, and counted the steps as eager's did.
    assert getattr(o2.step, "_with_counter", False)
    assert o2._step_count == o1._step_count
    out = kiln.explain(f2)(*a2, *_batch(20))
    assert (out.graph_count, out.graph_break_count) == (2, 1), \
        out.break_reasons


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_lr_per_call_rounds_as_a_constant_lr(momentum):
    # SGD's `param.add_(d_p, alpha=-lr)` with lr read per call: the
    # program rounds -lr to float32 and computes `p + d_p * alpha` in
    # float32, bitwise what NumPy computes (and what the program with lr a
    # constant computed before). Eager PyTorch's CPU kernel computes it as
    # one fused multiply-add (ATen's add_kernel: vec::fmadd), which can
    # differ in the last bit: within 1 ulp of it.
    import numpy as np
    g = torch.Generator().manual_seed(0)
    p = torch.randn(1001, generator=g).requires_grad_(True)
    grads = [torch.randn(1001, generator=g) for _ in range(5)]
    o = torch.optim.SGD([p], lr=0.05, momentum=momentum)
    step = kiln.compile(o.step, backend="cpu")
    p.grad = grads[0].clone()
    step()   # the first step makes the state (eagerly)
    ref = p.detach().numpy().copy()
    buf = o.state[p]["momentum_buffer"]
    buf = None if buf is None else buf.numpy().copy()
    for i, (lr, d) in enumerate(zip([0.1, 1 / 3, 0.0123456789, 0.7],
                                    grads[1:])):
        o.param_groups[0]["lr"] = lr
        p.grad = d.clone()
        e = p.detach().clone().requires_grad_(True)
        e.grad = d.clone()
        eo = torch.optim.SGD([e], lr=lr, momentum=momentum)
        if momentum:
            eo.state[e]["momentum_buffer"] = o.state[p][
                "momentum_buffer"].clone()
        step()
        eo.step()
        dp = d.numpy()
        if momentum:
            buf = buf * np.float32(momentum) + dp
            dp = buf
        ref = ref + dp * np.float32(-lr)
        got = p.detach().numpy()
        assert np.array_equal(got, ref), (i, np.abs(got - ref).max())
        # (an FMA rounds once, mul-then-add twice: at most half an ulp of
        # the product apart before the sum's rounding)
        ulp = np.spacing(np.abs(e.detach().numpy())) + \
            np.spacing(np.abs(dp * np.float32(-lr)))
        assert (np.abs(got - e.detach().numpy()) <= ulp).all(), i
    assert _programs(step) == [1]
