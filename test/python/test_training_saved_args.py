"""Saved arguments of a compiled training step (kiln/_training.py with
kiln-partition{pass-primals}): the forward program does not return the
arguments the backward reads (weights, the batch), `ctx.save_for_backward`
keeps the tensors themselves, as AOTAutograd does. References are eager
PyTorch (and its float64 copy, the same() rule of test_training.py)."""

import copy
import re
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln
from models import same
from test_training import check_same, sgd_steps


def _pairs(compiled):
    programs = compiled._kiln.programs.values()
    return [p for prog in programs
            for p in getattr(prog, "training_pairs", {}).values()]


def _fwd_result_count(pair):
    m = re.search(r"func\.func @%s_g_fwd\(.*\) -> (\(.*?\)|tensor<[^>]*>) "
                  r"attributes" % re.escape(pair.name), pair.text)
    assert m, pair.text[:2000]
    res = m.group(1)
    return 1 if not res.startswith("(") else \
        len(re.findall(r"tensor<", res))


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_saved_arguments_are_the_callers_tensors(backend):
    # tanh(x @ w): the backward reads x and w (and the tanh output); the
    # forward returns only the output and the activation, and the saved
    # values for x and w are those tensors (no copy).
    def f(x, w):
        return torch.tanh(x @ w)

    g = kiln.compile(f, backend=backend)
    x = torch.randn(4, 5, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    out = g(x, w)
    (pair,) = _pairs(g)
    assert sorted(pair.saved_primals) == [0, 1]
    assert _fwd_result_count(pair) == pair.num_outputs + pair.num_saved - 2
    outs, saved = pair.forward([x.detach(), w.detach()])
    assert saved[0].data_ptr() == x.data_ptr()
    assert saved[1].data_ptr() == w.data_ptr()
    xr, wr = (t.detach().clone().requires_grad_() for t in (x, w))
    ref = f(xr, wr)
    check_same(out, ref, "output")
    out.pow(2).sum().backward()
    ref.pow(2).sum().backward()
    check_same(x.grad, xr.grad, "grad of x")
    check_same(w.grad, wr.grad, "grad of w")


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
@pytest.mark.parametrize("which", ["weight", "input"])
def test_saved_argument_written_before_backward_raises_as_eager(backend,
                                                                which):
    # The weight (updated in place under no_grad) or the input batch (which
    # does not require grad) is saved for the backward; writing it between
    # forward and backward raises PyTorch's version-counter error, as in
    # eager, instead of silently using the old value.
    def f(x, w):
        return torch.tanh(x @ w)

    def run(fn):
        torch.manual_seed(0)
        # x's gradient reads w, w's gradient reads x.
        x = torch.randn(4, 5, requires_grad=which == "weight")
        w = torch.randn(5, 3, requires_grad=True)
        out = fn(x, w)
        with torch.no_grad():
            (w if which == "weight" else x).add_(1.0)
        out.sum().backward()

    with pytest.raises(RuntimeError, match="modified by an inplace"):
        run(f)
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        run(kiln.compile(f, backend=backend))


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
def test_argument_saved_and_written_keeps_its_value_before_the_write(
        backend):
    # s (through its clone, which eager saves and kiln's functional graph
    # reads as s itself) is read by w's gradient and written in place by
    # the graph: the backward sees s before the write (the forward still
    # returns it, a copy: `kg.written`), and s gets its new value.
    def f(w, s):
        y = (w * s.clone()).sum() + (w * w).sum()
        s.mul_(3.0)
        return y

    g = kiln.compile(f, backend=backend)
    w = torch.randn(6, requires_grad=True)
    s = torch.randn(6)
    wr, sr = w.detach().clone().requires_grad_(), s.clone()
    out, ref = g(w, s), f(wr, sr)
    check_same(out, ref, "output")
    check_same(s, sr, "written argument")
    out.backward()
    ref.backward()
    check_same(w.grad, wr.grad, "grad of w")
    (pair,) = _pairs(g)
    # w is passed; s is returned by the forward (after the outputs: the
    # loss and s's new value).
    assert pair.saved_primals == [0] and pair.written == [1]
    assert pair.num_saved == 2
    assert _fwd_result_count(pair) == pair.num_outputs + 1


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_autograd_grad_twice_with_retain_graph(backend):
    def f(x, w, b):
        return F.gelu(F.linear(x, w, b)).pow(2).mean()

    g = kiln.compile(f, backend=backend)
    torch.manual_seed(1)
    x = torch.randn(6, 8, requires_grad=True)
    w = torch.randn(4, 8, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    xr, wr, br = (t.detach().clone().requires_grad_() for t in (x, w, b))
    loss, ref = g(x, w, b), f(xr, wr, br)
    first = torch.autograd.grad(loss, [x, w, b], retain_graph=True)
    second = torch.autograd.grad(loss, [w, x])
    expected = torch.autograd.grad(ref, [xr, wr, br])
    for a, e, n in zip(first, expected, "xwb"):
        check_same(a, e, "first grad of " + n)
    check_same(second[0], expected[1], "second grad of w")
    check_same(second[1], expected[0], "second grad of x")


class _TwiceUsed(nn.Module):
    """One weight used twice (fc applied two times)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(torch.tanh(self.fc(torch.tanh(self.fc(x)))))


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_weight_used_twice_and_input_requiring_grad_sgd_steps(backend):
    g = torch.Generator().manual_seed(4)
    compiled = sgd_steps(
        _TwiceUsed(),
        lambda s: torch.randn(5, 8, generator=g).requires_grad_(), backend)
    (pair,) = _pairs(compiled)
    assert pair.saved_primals  # the weights and the input pass through


class _ConvBNResidual(nn.Module):
    """resnet18-like: conv-bn-relu, a basic block with a skip, pooling,
    a linear head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.conv3 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)
        for bn in (self.bn1, self.bn2, self.bn3):
            nn.init.uniform_(bn.weight, 0.5, 1.5)
            nn.init.uniform_(bn.bias, -0.5, 0.5)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        z = F.relu(self.bn2(self.conv2(y)))
        z = self.bn3(self.conv3(z))
        y = F.relu(y + z)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_conv_bn_residual_sgd_steps_with_running_statistics(backend):
    # The BatchNorm running statistics are written arguments (returned, not
    # passed); the conv weights and the batch are passed saved arguments.
    g = torch.Generator().manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = sgd_steps(
            _ConvBNResidual().train(),
            lambda s: torch.randn(4, 3, 12, 12, generator=g), backend,
            buffers=True, lr=0.01, grad_tol=1e-3)
    (pair,) = _pairs(compiled)
    assert pair.saved_primals
    assert not set(pair.saved_primals) & set(pair.written)
