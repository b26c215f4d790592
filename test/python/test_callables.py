"""kiln.compile of bound methods, classmethods, functools.partial objects
and `model.forward` (torch.compile takes any callable). Before, bound
methods and classmethods failed the capture (an AssertionError inside
torch.fx: the code object counts `self`) and partials raised an
AttributeError. References are eager PyTorch."""

import copy
import functools

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


class Helper:
    """An object (not a module) holding a module, with methods."""

    def __init__(self):
        torch.manual_seed(0)
        self.scale = 3.0
        self.net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))

    def run(self, x, shift=1.0):
        return self.net(x) * self.scale + shift

    @classmethod
    def double(cls, x):
        return x * 2

    @staticmethod
    def inc(x):
        return x + 1


def g(x, y, *, z=1.0):
    return x * y + z


@pytest.mark.parametrize("backend", BACKENDS)
def test_methods_and_partials(backend):
    h = Helper()
    h.net.eval()
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    cases = [
        (h.run, (x,), {}), (h.run, (x,), {"shift": -2.0}),
        (Helper.double, (x,), {}), (h.inc, (x,), {}),
        (functools.partial(g, z=2.0), (x, y), {}),
        (functools.partial(g, x), (y,), {"z": 0.5}),
        (functools.partial(functools.partial(g, x), y), (), {}),
    ]
    with torch.no_grad():
        for fn, args, kwargs in cases:
            got = kiln.compile(fn, backend=backend, fullgraph=True)(
                *args, **kwargs)
            torch.testing.assert_close(got, fn(*args, **kwargs))


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_bound_method_follows_its_modules_training_flag(backend):
    h = Helper()
    opt = kiln.compile(h.run, backend=backend)
    x = torch.randn(5, 4)
    with torch.no_grad():
        h.net.eval()
        torch.testing.assert_close(opt(x), h.run(x))
        h.net.train()  # BatchNorm in training mode: another program
        ref = copy.deepcopy(h)
        torch.testing.assert_close(opt(x), ref.run(x))
        torch.testing.assert_close(h.net[1].running_mean,
                                   ref.net[1].running_mean)


def test_bound_method_training_matches_autograd():
    h = Helper()
    h.net.double()  # f64: BatchNorm's gradient over 6 rows is ill-conditioned
    ref = copy.deepcopy(h)
    opt = kiln.compile(h.run, backend="cpu", fullgraph=True)
    x = torch.randn(6, 4, dtype=torch.float64)
    opt(x).square().sum().backward()
    ref.run(x).square().sum().backward()
    for p, q in zip(ref.net.parameters(), h.net.parameters()):
        torch.testing.assert_close(q.grad, p.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_model_forward_compiles_the_module(backend):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    opt = kiln.compile(m.forward, backend=backend)
    x = torch.randn(2, 4)
    with torch.no_grad():
        torch.testing.assert_close(opt(x), m(x))
        m[0].weight.mul_(-1)  # parameters are read on every call
        torch.testing.assert_close(opt(x), m(x))
