"""kiln.compile of functions and modules that take `*args` / `**kwargs`
(torch.compile compiles them): the extra arguments are containers, one
program input per tensor, the rest specialized; their count and keyword
names are part of the cache key. References are eager PyTorch."""

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


def close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_varargs_function(backend):
    def total(*xs):
        out = xs[0] * 2
        for x in xs[1:]:
            out = out + torch.sin(x)
        return out

    opt = kiln.compile(total, backend=backend, fullgraph=True)
    a, b, c = torch.randn(5), torch.randn(5), torch.randn(2, 5)
    close(opt(a, b), total(a, b))
    # Another count of arguments is another program; the first one is
    # still used for its own calls.
    close(opt(a, b, c), total(a, b, c))
    close(opt(b), total(b))
    close(opt(b, a), total(b, a))
    assert len(opt._kiln.programs) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_positional_varargs_keyword_only_and_kwargs(backend):
    def f(x, *rest, scale=2.0, **extra):
        y = x * scale
        for r in rest:
            y = y - r
        if "bias" in extra:
            y = y + extra["bias"]
        return y * extra.get("gain", 1.0)

    opt = kiln.compile(f, backend=backend, fullgraph=True)
    x, r, bias = torch.randn(3, 4), torch.randn(4), torch.randn(3, 1)
    for args, kwargs in [((x,), {}), ((x, r), {"scale": 0.5}),
                         ((x, r, r), {"bias": bias}),
                         ((x,), {"bias": bias, "gain": 3.0}),
                         ((x,), {"gain": 3.0, "bias": bias}),
                         ((), {"x": x, "gain": -1.0})]:
        close(opt(*args, **kwargs), f(*args, **kwargs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_values_in_varargs_are_specialized(backend):
    def permuted(x, *dims):
        return x.permute(*dims) + 1

    opt = kiln.compile(permuted, backend=backend, fullgraph=True)
    x = torch.randn(2, 3, 4)
    close(opt(x, 2, 0, 1), permuted(x, 2, 0, 1))
    close(opt(x, 1, 2, 0), permuted(x, 1, 2, 0))
    assert opt(x, 1, 2, 0).shape == (3, 4, 2)
    assert len(opt._kiln.programs) == 2


class Concat(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, *parts, **named):
        y = self.fc(torch.cat(parts, dim=-1))
        for v in named.values():
            y = y * v
        return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_forward_with_varargs(backend):
    torch.manual_seed(0)
    m = Concat().eval()
    opt = kiln.compile(m, backend=backend, fullgraph=True)
    a, b, w = torch.randn(2, 1), torch.randn(2, 3), torch.randn(3)
    with torch.no_grad():
        close(opt(a, b), m(a, b))
        close(opt(a, b, w=w), m(a, b, w=w))
        close(opt(b, a, w=w, v=w + 1), m(b, a, w=w, v=w + 1))
        # The module's parameters are read on every call.
        m.fc.weight.add_(1.0)
        close(opt(a, b), m(a, b))


def test_varargs_training_matches_autograd():
    torch.manual_seed(0)
    m = Concat().train()
    ref = Concat()
    ref.load_state_dict(m.state_dict())
    opt = kiln.compile(m, backend="cpu", fullgraph=True)
    a = torch.randn(5, 1, requires_grad=True)
    b = torch.randn(5, 3)
    a_ref = a.detach().clone().requires_grad_()
    w = torch.randn(3)
    opt(a, b, w=w).square().sum().backward()
    ref(a_ref, b, w=w).square().sum().backward()
    close(a.grad, a_ref.grad)
    close(m.fc.weight.grad, ref.fc.weight.grad)
    close(m.fc.bias.grad, ref.fc.bias.grad)


def branchy(*xs):
    y = xs[0] + xs[1]
    if y.sum() < 0:  # a graph break
        return y * -1
    return y * 2


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_graph_break_in_varargs_function(backend):
    opt = kiln.compile(branchy, backend=backend)
    a = torch.randn(6)
    for b in (torch.ones(6) * 10, torch.ones(6) * -10):
        close(opt(a, b), branchy(a, b))
    out = kiln.explain(branchy)(a, torch.ones(6))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    with pytest.raises(kiln.KilnError, match="graph break|generic_jump|"
                       "data-dependent"):
        kiln.compile(branchy, backend=backend, fullgraph=True)(a, a)


def test_python_containers_in_kwargs_are_specialized():
    def f(x, **kw):
        return x + len(kw["items"])

    opt = kiln.compile(f, backend="eager", fullgraph=True)
    x = torch.ones(2)
    close(opt(x, items=[[1], {2: 3}]), x + 2)
    close(opt(x, items=[[1], {2: 3}, 4]), x + 3)
    assert len(opt._kiln.programs) == 2
    # A value kiln cannot specialize (a set is an unhashable leaf).
    with pytest.raises(kiln.Unsupported, match="unhashable"):
        opt(x, items={1, 2})
