"""Gradient barriers in compiled training code: `Tensor.detach()`,
`x.data`, `with torch.no_grad():` blocks, `@torch.no_grad()` helpers and
`torch.set_grad_enabled(False)` inside the traced function stop gradients
as in eager PyTorch (the values are kg.stop_gradient barriers for
kiln-autodiff; docs/training.md), `torch.enable_grad()` inside them
restores them, and a custom autograd.Function's forward (grad disabled in
C++) is no barrier. Before, gradients flowed through all of them: a silent
wrong gradient.
References: eager PyTorch's autograd on the same inputs."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


def grads_of(fn, *args):
    """Outputs and the gradients of sum(outputs * weights) w.r.t. args."""
    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * torch.linspace(0.5, 1.5, o.numel()).view_as(o)).sum()
               for o in outs if o.requires_grad)
    loss.backward()
    return [o.detach() for o in outs], \
        [o.requires_grad for o in outs], \
        [a.grad for a in args if a.requires_grad]


def check(fn, backend, *args):
    got = grads_of(kiln.compile(fn, backend=backend), *args)
    ref = grads_of(fn, *args)
    for a, e in zip(got[0], ref[0]):
        torch.testing.assert_close(a, e)
    assert got[1] == ref[1], "requires_grad of the outputs"
    assert len(got[2]) == len(ref[2])
    for a, e in zip(got[2], ref[2]):
        if e is None:
            assert a is None or torch.count_nonzero(a) == 0
        else:
            torch.testing.assert_close(a, e)


def no_grad_and_detach(x, w):
    with torch.no_grad():
        y = x * w
    z = (x * w).detach()
    return y + z + x * w


def detach_only(x, w):
    z = (x * w).detach()
    return z + x * w


def data_attribute(x, w):
    return (x * w.data).exp() + w


def set_grad_enabled_calls(x, w):
    torch.set_grad_enabled(False)
    y = (x * w).sin()
    torch.set_grad_enabled(True)
    return y + (x * w).cos()


def detached_output(x, w):
    h = torch.tanh(x @ w)
    return h, h.detach() * 2


def only_through_detach(x, w):
    return (x * w).detach().exp() + x


@torch.no_grad()
def _batch_stat(y):
    return y.pow(2).mean()


def no_grad_decorator(x, w):
    y = x * w
    return y * _batch_stat(y)


def enable_grad_inside_no_grad(x, w):
    with torch.no_grad():
        a = (x * w).sum()
        with torch.enable_grad():
            b = x * w * 3
        c = b * 2           # grad disabled again
    return x * w * a + b + c


class _Twice(torch.autograd.Function):
    """A custom Function: its forward runs with grad disabled (in C++);
    kiln differentiates through it, it is no barrier."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def custom_function_and_no_grad(x, w):
    y = _Twice.apply(x * w)
    with torch.no_grad():
        s = y.abs().max()
    return y / s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [detach_only, data_attribute,
                                only_through_detach, no_grad_and_detach,
                                set_grad_enabled_calls, no_grad_decorator,
                                enable_grad_inside_no_grad,
                                custom_function_and_no_grad],
                         ids=lambda f: f.__name__)
def test_barriers_match_eager_gradients(backend, fn):
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    check(fn, backend, x, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_detached_output_requires_no_grad(backend):
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(3, 5, requires_grad=True)
    check(detached_output, backend, x, w)
    h, d = kiln.compile(detached_output, backend=backend)(x, w)
    assert h.requires_grad and not d.requires_grad


class Siamese(nn.Module):
    """A BYOL-style loss: the target branch is detached, and an EMA buffer
    is updated under no_grad."""

    def __init__(self):
        super().__init__()
        self.online = nn.Sequential(nn.Linear(6, 8), nn.ReLU(),
                                    nn.Linear(8, 4))
        self.target = nn.Linear(6, 4)
        self.register_buffer("center", torch.zeros(4))

    def forward(self, x):
        p = self.online(x)
        t = self.target(x).detach()
        with torch.no_grad():
            self.center.mul_(0.9).add_(0.1 * t.mean(0))
        return F.mse_loss(p, t - self.center)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sgd_steps_with_a_detached_target_match_eager(backend):
    torch.manual_seed(0)
    model = Siamese()
    ref = copy.deepcopy(model)
    opt = kiln.compile(model, backend=backend)
    sgds = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref)]
    for step in range(3):
        x = torch.randn(5, 6)
        losses = [opt(x), ref(x)]
        torch.testing.assert_close(losses[0], losses[1])
        for loss, sgd in zip(losses, sgds):
            sgd.zero_grad()
            loss.backward()
        for (n, p), (_, q) in zip(model.named_parameters(),
                                  ref.named_parameters()):
            if q.grad is None:
                # The target branch gets no gradient in eager PyTorch.
                assert p.grad is None or torch.count_nonzero(p.grad) == 0, n
            else:
                torch.testing.assert_close(p.grad, q.grad, msg=n)
        for sgd in sgds:
            sgd.step()
        torch.testing.assert_close(model.center, ref.center)


# ---------------- writes through detach() and .data (aliases, as in eager)

def write_through_detach(x, w):
    h = x * w
    h.detach().mul_(2)          # h's values change; its gradient does not
    return torch.tanh(h) + h * 3


def write_through_data(x, w):
    h = x * 1.5
    h.data.add_(w.detach())
    return h.pow(2)


def write_under_no_grad(x, w):
    h = x * w
    with torch.no_grad():
        h.detach().clamp_(-0.5, 0.5)
    return h * h.sum()


def write_into_a_value_without_grad(x, w):
    """x's alias takes w's values but not w's gradient: the result requires
    no grad, w gets None (module fuzzer seed 53037: the write carried w's
    gradient)."""
    z = x.detach() * 0 + 1
    z.detach()[...] = x * w
    return z * 3, x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [write_through_detach, write_through_data,
                                write_under_no_grad,
                                write_into_a_value_without_grad],
                         ids=lambda f: f.__name__)
def test_writes_through_detached_aliases_match_eager(backend, fn):
    """A write through `x.detach()` or `x.data` is a write to x (PyTorch's
    alias of x's memory), invisible to autograd: values and gradients as in
    eager. Before 2026-11-30 the write was lost."""
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    check(fn, backend, x, w)


def _ema(x, ema):
    ema.data.mul_(0.9).add_(0.1 * x.data)
    return ema * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_ema_update_through_data_writes_the_argument(backend):
    x = torch.randn(5)
    e_eager, e_kiln = torch.ones(5), torch.ones(5)
    f = kiln.compile(_ema, backend=backend)
    for _ in range(3):
        torch.testing.assert_close(f(x, e_kiln), _ema(x, e_eager))
        torch.testing.assert_close(e_kiln, e_eager)


class _MeanTeacher(torch.nn.Module):
    """A buffer updated through `.data` from a parameter (an exponential
    moving average of the weights), used after the update."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.register_buffer("avg", torch.zeros(3, 3))

    def forward(self, x):
        self.avg.data.mul_(0.5).add_(self.lin.weight.data)
        return self.lin(x) + x @ self.avg


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffer_updated_through_data_in_training(backend):
    torch.manual_seed(0)
    ref = _MeanTeacher()
    m = copy.deepcopy(ref)
    cm = kiln.compile(m, backend=backend)
    for _ in range(3):
        x = torch.randn(4, 3)
        got, want = cm(x), ref(x)
        torch.testing.assert_close(got, want)
        got.sum().backward()
        want.sum().backward()
        torch.testing.assert_close(m.avg, ref.avg)
        torch.testing.assert_close(m.lin.weight.grad, ref.lin.weight.grad)
