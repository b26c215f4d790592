"""Graph breaks inside grad-mode blocks, and `torch.enable_grad()` inside a
call made with grad disabled.

A graph break runs the segment captured so far. Before, that segment ran in
whatever grad mode the traced code had set where the break fell: a break
inside `with torch.no_grad():` (an accuracy logged with `.item()` in a
training step) ran the forward and the loss without autograd, and
`loss.backward()` failed ("element 0 of tensors does not require grad"); a
break inside `torch.enable_grad()` of a call made under `no_grad` ran the
segment before it with autograd (its results required grad where eager's do
not). Now every segment is captured and run in the call's grad mode (part of
the function's key); the nodes of `no_grad` blocks are gradient barriers as
before, and an op on tensors under `torch.enable_grad()` in a call made with
grad disabled is a graph break that runs it eagerly, so autograd records it
(before: captured without autograd, its result did not require grad and
backward failed). References: eager PyTorch on the same inputs."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    kiln.reset()
    yield request.param


def check(fn, grad, backend, *args):
    """Compiled and eager fn on copies of args, called in grad mode
    `grad`: the same outputs, the same requires_grad, and the same
    gradients of the first output's sum."""
    def copies():
        return [a.detach().clone().requires_grad_(a.requires_grad)
                for a in args]
    ea, ca = copies(), copies()
    with torch.set_grad_enabled(grad):
        e = fn(*ea)
        c = kiln.compile(fn, backend=backend)(*ca)
    e = e if isinstance(e, tuple) else (e,)
    c = c if isinstance(c, tuple) else (c,)
    assert [t.requires_grad for t in c] == [t.requires_grad for t in e]
    for a, b in zip(c, e):
        torch.testing.assert_close(a, b)
    if e[0].requires_grad:
        e[0].sum().backward()
        c[0].sum().backward()
        for a, b in zip(ca, ea):
            if b.requires_grad:
                torch.testing.assert_close(a.grad, b.grad)


def break_in_no_grad(x, w):
    y = (x @ w).relu()
    with torch.no_grad():
        s = y.sum() * 2
        if s.item() > 0:       # a graph break inside no_grad
            v = y * 3
        else:
            v = y * 4
        u = v + 1
    return y * u, u


def enable_grad_inside(x, w):
    a = x.sin()
    with torch.enable_grad():
        b = (a @ w) * 2
    return b, a


def no_grad_then_enable_grad(x, w):
    with torch.no_grad():
        a = x * 2
        kiln.graph_break()
        b = a + 1
    with torch.enable_grad():
        c = (x @ w * b).sum()
    return c, b


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("fn", [break_in_no_grad, enable_grad_inside,
                                no_grad_then_enable_grad])
def test_grad_modes(backend, fn, grad):
    torch.manual_seed(0)
    check(fn, grad, backend, torch.randn(4, 3, requires_grad=True),
          torch.randn(3, 3, requires_grad=True))


def test_enable_grad_inside_no_grad_is_a_break(backend):
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)
    with torch.no_grad():
        out = kiln.explain(enable_grad_inside)(x, w)
    text = str(out)
    assert "under torch.enable_grad() inside a call made with grad " \
        "disabled" in text
    assert "b = (a @ w) * 2" in text
    with torch.no_grad():
        with pytest.raises(kiln.Unsupported, match="enable_grad"):
            kiln.compile(enable_grad_inside, backend=backend,
                         fullgraph=True)(x, w)


def test_enable_grad_on_constants_only_is_captured(backend):
    """A factory under enable_grad takes no tensor: no break (eager's
    result does not require grad either)."""
    def f(x):
        with torch.enable_grad():
            z = torch.zeros(3)
        return x * 2, z + 1
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        out = kiln.explain(f)(x)
    assert "0 graph breaks" in str(out)
    check(f, False, backend, x)


@pytest.mark.parametrize("opt_inside", [False, True])
@pytest.mark.parametrize("where", ["no_grad_item", "graph_break"])
def test_training_step_with_break(backend, where, opt_inside):
    """Forward, loss, a graph break (an accuracy read by .item() under
    no_grad, or kiln.graph_break()) and backward in one compiled function,
    with zero_grad and opt.step inside it or outside: parameters equal
    eager's after each step. Before, the break under no_grad ran forward
    and loss without autograd (backward failed), and with the optimizer
    inside, the second call's replay of its segment raised an IndexError
    (its recorded inputs were numbered by a node that had left the
    segment): "cannot trace step: IndexError"."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
    ref = copy.deepcopy(model)
    x = torch.randn(8, 6)
    t = torch.randint(0, 4, (8,))

    def make_step(m):
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x, t):
            if opt_inside:
                opt.zero_grad()
            out = m(x)
            loss = F.cross_entropy(out, t)
            if where == "no_grad_item":
                with torch.no_grad():
                    acc = (out.argmax(1) == t).float().mean().item()
            else:
                kiln.graph_break()
                acc = 0.0
            loss.backward()
            if opt_inside:
                opt.step()
            return loss.detach(), acc
        return step, opt

    eager_step, eager_opt = make_step(ref)
    comp_step, comp_opt = make_step(model)
    comp_step = kiln.compile(comp_step, backend=backend)
    for _ in range(3):
        if not opt_inside:
            eager_opt.zero_grad()
            comp_opt.zero_grad()
        le, ae = eager_step(x, t)
        lc, ac = comp_step(x, t)
        if not opt_inside:
            eager_opt.step()
            comp_opt.step()
        torch.testing.assert_close(lc, le)
        assert ac == ae
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p, q)
