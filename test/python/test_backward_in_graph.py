"""`backward()` inside a compiled function, and values of earlier graphs
that later graphs read through `detach()`.

A graph's argument that requires grad but reaches its results only through
gradient barriers (`l.detach()` of an earlier graph's loss, a `no_grad`
block) gets no gradient and enters the graph's autograd Function detached.
Before, it was a differentiable input: its zero gradient ran the earlier
graph's backward again ("Trying to backward through the graph a second
time" in a gradient-accumulation loop: an error out of the compiled call).
A graph in which nothing reaches a result through differentiable ops runs
as without grad. References: eager PyTorch on the same inputs."""

import copy

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["aot_eager", "cpu"]


def grads_after(fn, model, *args):
    out = fn(model, *args)
    grads = [p.grad.clone() for p in model.parameters()]
    return out, grads


def compare(fn, backend, *args):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))
    ref = copy.deepcopy(model)
    want, wgrads = grads_after(fn, ref, *args)
    kiln.reset()
    got, ggrads = grads_after(kiln.compile(fn, backend=backend), model, *args)
    torch.testing.assert_close(got, want)
    assert got.requires_grad == want.requires_grad
    for g, w in zip(ggrads, wgrads):
        torch.testing.assert_close(g, w)


def accumulate(model, xs):
    total = 0
    for x in xs.split(2):
        loss = model(x).square().mean()
        loss.backward()
        total = total + loss.detach()
    return total


def retain(model, xs):
    loss = model(xs).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return loss


def detached_chain(model, xs):
    a = model(xs).sum()
    a.backward()
    b = model(xs * a.detach()).sum()    # a later graph reads a detached
    b.backward()
    return b.detach() + a.detach()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [accumulate, retain, detached_chain])
def test_backward_inside(backend, fn):
    compare(fn, backend, torch.randn(6, 8))


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_with_only_detached_inputs(backend):
    """The second graph reads `y` (requires grad) only through detach:
    its result requires no grad, as in eager, and no backward runs."""
    w = torch.randn(3, requires_grad=True)

    def f(x):
        y = x * w
        kiln.graph_break()
        return y.detach().sin() * 2, y
    x = torch.randn(3)
    want = f(x)
    got = kiln.compile(f, backend=backend)(x)
    assert [t.requires_grad for t in got] == [t.requires_grad for t in want]
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e)
    got[1].sum().backward()
    torch.testing.assert_close(w.grad, x)


def saliency(model, x):
    x = x.clone().requires_grad_()
    score = model(x).max(1).values.sum()
    g, = torch.autograd.grad(score, x)
    return g.abs().amax(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_requires_grad_inside(backend):
    """`x.requires_grad_()` inside the compiled function makes a leaf that
    autograd tracks (a graph break: PyTorch makes it), so
    `torch.autograd.grad` finds the path to it. Before, requires_grad_ did
    nothing in the graph and autograd.grad raised "One of the
    differentiated Tensors does not require grad"."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))
    x = torch.randn(5, 8)
    want = saliency(model, x)
    got = kiln.compile(saliency, backend=backend)(model, x)
    torch.testing.assert_close(got, want)


def test_requires_grad_false_on_computed_value_raises_as_eager():
    w = torch.randn(3, requires_grad=True)

    def f(x):
        y = x * w
        y.requires_grad_(False)
        return y
    with pytest.raises(RuntimeError, match="leaf variables"):
        f(torch.ones(3))
    with pytest.raises(RuntimeError, match="leaf variables"):
        kiln.compile(f, backend="cpu")(torch.ones(3))


def test_create_graph_through_a_graph_is_a_clear_error():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)

    def penalty(x):
        x = x.clone().requires_grad_()
        y = lin(x).square().sum()
        g, = torch.autograd.grad(y, x, create_graph=True)
        return g.norm()
    with pytest.raises(kiln.KilnError, match="double backward"):
        kiln.compile(penalty, backend="cpu")(torch.randn(3, 4))


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 6)
        self.h1 = nn.Linear(6, 2)
        self.h2 = nn.Linear(6, 3)

    def forward(self, x):
        t = self.trunk(x).relu()
        return self.h1(t), self.h2(t)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("use", ["first", "both", "second_times_zero"])
def test_unused_output_leaves_grads_none(backend, use):
    """A compiled module with two outputs whose loss uses one: the other
    head's parameters keep grad None, as in eager, so SGD with momentum and
    weight decay leaves them alone. Before, the unused output got a zero
    cotangent and those parameters zero gradients: the optimizer moved
    them (weight decay) where eager skips them."""
    torch.manual_seed(0)
    ref = TwoHeads()
    model = copy.deepcopy(ref)
    compiled = kiln.compile(model, backend=backend)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                            weight_decay=0.1) for m in (ref, model)]

    def loss_of(a, b):
        if use == "first":
            return a.square().sum()
        if use == "both":
            return a.square().sum() + b.sum()
        return a.square().sum() + (b * 0).sum()
    for step in range(3):
        x = torch.randn(5, 4)
        for m, f, opt in ((ref, ref, opts[0]), (model, compiled, opts[1])):
            opt.zero_grad(set_to_none=True)
            loss_of(*f(x)).backward()
        for (name, p), q in zip(ref.named_parameters(), model.parameters()):
            assert (p.grad is None) == (q.grad is None), name
            if p.grad is not None:
                torch.testing.assert_close(q.grad, p.grad)
        for opt in opts:
            opt.step()
        for p, q in zip(ref.parameters(), model.parameters()):
            torch.testing.assert_close(q, p)
