"""Assignments to a module's buffers and parameters in traced code.
`self.n += 1` is Python's in-place add on the buffer followed by
`self.n = <that tensor>`; nn.Module.__setattr__ refused the traced value
and its error message, built from the Proxy, failed inside torch.fx
("cannot trace ...: KeyError: getattr_235"). Now the in-place form updates
the buffer, `self.n = self.n + 1` writes the new value into it, and what
eager would refuse or kiln cannot do is refused with a clear message.
Results and buffers are compared with eager PyTorch on a copy."""

import copy

import pytest
import torch
import torch.nn as nn

import kiln
from models import BACKENDS



pytestmark = pytest.mark.usefixtures("reset_kiln")


class Counter(nn.Module):
    def __init__(self, how, dtype=torch.long):
        super().__init__()
        self.how = how
        self.lin = nn.Linear(4, 4)
        self.register_buffer("n", torch.zeros((), dtype=dtype))
        self.register_buffer("avg", torch.zeros(4))

    def forward(self, x):
        y = self.lin(x)
        if self.how == "iadd":
            self.n += 1
            self.avg *= 0.5
        elif self.how == "rebind":
            self.n = self.n + 1
            self.avg = self.avg * 0.5 + y.detach().mean(0)
        else:  # "method"
            self.n.add_(1)
            self.avg.mul_(0.5)
        return y * self.n + self.avg


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["iadd", "rebind", "method"])
@pytest.mark.parametrize("train", [False, True])
def test_buffer_updates(backend, how, train):
    torch.manual_seed(0)
    m = Counter(how)
    ref = copy.deepcopy(m)
    cm = kiln.compile(m, backend=backend)
    for i in range(3):
        x = torch.randn(2 + i, 4, requires_grad=train)
        xr = x.detach().clone().requires_grad_(train)
        got, want = cm(x), ref(xr)
        torch.testing.assert_close(got, want)
        if train:
            got.sum().backward()
            want.sum().backward()
            torch.testing.assert_close(x.grad, xr.grad)
            for p, q in zip(m.parameters(), ref.parameters()):
                torch.testing.assert_close(p.grad, q.grad)
        for (name, b), c in zip(m.named_buffers(), ref.buffers()):
            torch.testing.assert_close(b, c, msg=name)


class Resized(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(()))

    def forward(self, x):
        self.n = x.sum(0)   # another shape: eager rebinds the buffer
        return x * 2


class ParamAssign(nn.Module):
    def __init__(self, in_place):
        super().__init__()
        self.in_place = in_place
        self.w = nn.Parameter(torch.ones(3))

    def forward(self, x):
        if self.in_place:
            with torch.no_grad():
                self.w *= 2
        else:
            self.w = self.w * 2
        return x * self.w


def test_buffer_of_another_shape_is_refused():
    cm = kiln.compile(Resized(), backend="cpu")
    with pytest.raises(kiln.Unsupported, match="assigned to buffer 'n'"):
        cm(torch.randn(2, 3))


def test_parameter_updated_in_place_and_computed_assignment():
    m, ref = ParamAssign(True), ParamAssign(True)
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(cm(x), ref(x))
    torch.testing.assert_close(m.w, ref.w)
    # As eager: a computed tensor cannot become a parameter.
    with pytest.raises(TypeError):
        ParamAssign(False)(x)
    cm = kiln.compile(ParamAssign(False), backend="cpu")
    with pytest.raises(kiln.Unsupported, match="as parameter 'w'"):
        cm(x)


@pytest.mark.parametrize("train", [False, True])
def test_buffer_update_then_graph_break(train):
    """`self.count += 1` then a graph break (`int(lengths[i])`): the segment
    before the break runs while the tracer is active, and its argument
    handling (a detach of the buffer the graph writes, for DLPack) went
    through the tracer's modes and became a Proxy ("cannot trace ...:
    data must be a Tensor"). Outputs, gradients and the buffer equal
    eager's."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 8, 3, padding=1)
            self.lin = nn.Linear(8, 3)
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x, lengths):
            h = torch.relu(self.conv(x))
            self.count += 1
            rows = [h[i, :, :int(lengths[i])].mean(-1)
                    for i in range(x.shape[0])]
            return self.lin(torch.stack(rows))

    torch.manual_seed(0)
    ref = Net()
    model = copy.deepcopy(ref)
    compiled = kiln.compile(model, backend="cpu")
    for T in (5, 7):
        x = torch.randn(3, 4, T)
        lengths = torch.randint(1, T + 1, (3,))
        with torch.set_grad_enabled(train):
            want = ref(x, lengths)
            got = compiled(x, lengths)
        torch.testing.assert_close(got, want)
        if train:
            want.sum().backward()
            got.sum().backward()
            for p, q in zip(model.parameters(), ref.parameters()):
                torch.testing.assert_close(p.grad, q.grad)
    assert model.count.item() == ref.count.item() == 2
