"""Tensors the compiled code makes from Python data (`torch.zeros(3)`,
`torch.ones(2, 2)`, `torch.tensor([...])` in the function) are new tensors
on every call in PyTorch. Kiln keeps them as constants of the program: it
must neither write them back when the code updates them in place (`y +=
x`), nor return the constant itself (a caller that edits the result would
edit every later call's). Before, both happened: `y = torch.zeros(2, 2);
y += x; return y` returned the same tensor on every call, accumulating x
(1, 2, 3 ... after each call). Every result is compared with eager."""

import pytest
import torch

import kiln
from models import BACKENDS



pytestmark = pytest.mark.usefixtures("reset_kiln")


def accumulate(x):
    y = torch.zeros(3, 4)
    y += x[:1]
    return y


def scale_in_place(x):
    y = torch.ones(3, 4)
    y.mul_(2)
    y[0] = -1.0
    return y


def made_and_returned(x):
    return x + 1, torch.zeros(4), torch.tensor([1.0, 2.0])


def with_break(x):
    y = torch.zeros(3, 4)
    y += x
    if y.sum() > 0:        # a graph break: the first graph ends here
        y.add_(1)
    return y * 2, y


def training(x):
    acc = torch.zeros(4)
    for i in range(x.shape[0]):
        acc += x[i] * (i + 1)
    return acc.pow(2).sum(), acc


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [accumulate, scale_in_place,
                                made_and_returned, with_break],
                         ids=lambda f: f.__name__)
def test_made_tensors_are_new_each_call(backend, fn):
    cf = kiln.compile(fn, backend=backend)
    x = torch.randn(3, 4)
    first = cf(x)
    for _ in range(2):
        again = cf(x)
    want = fn(x)
    torch.testing.assert_close(first, want)
    torch.testing.assert_close(again, want)
    # The caller edits a result: later calls are not affected.
    for t in torch.utils._pytree.tree_flatten(again)[0]:
        t.add_(100)
    torch.testing.assert_close(cf(x), want)
    for a, b in zip(torch.utils._pytree.tree_flatten(first)[0],
                    torch.utils._pytree.tree_flatten(cf(x))[0]):
        assert a is not b and a.data_ptr() != b.data_ptr()


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_made_tensor_updated_in_training(backend):
    cf = kiln.compile(training, backend=backend)
    for _ in range(3):
        x = torch.randn(3, 4, requires_grad=True)
        loss, acc = cf(x)
        loss.backward()
        x2 = x.detach().clone().requires_grad_(True)
        loss2, acc2 = training(x2)
        loss2.backward()
        torch.testing.assert_close(loss, loss2)
        torch.testing.assert_close(acc, acc2)
        torch.testing.assert_close(x.grad, x2.grad)


GLOBAL_T = torch.ones(3)


class MakesTensors(torch.nn.Module):
    def __init__(self, breaks):
        super().__init__()
        self.breaks = breaks
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x) + torch.zeros(3) + GLOBAL_T + torch.tensor([1., 2, 3])
        if self.breaks and y.sum() > 1e6:   # a graph break
            y = y * 2
        return y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("breaks", [False, True])
def test_compiled_module_gains_no_attributes(backend, breaks):
    # torch.fx stores a trace's tensor constants on the traced root; for a
    # compiled module that was the user's module, which kept
    # `_tensor_constant<k>` attributes (every recapture's) for good.
    torch.manual_seed(0)
    m = MakesTensors(breaks)
    before = set(m.__dict__)
    cm = kiln.compile(m, backend=backend)
    for n in (2, 3, 2):
        x = torch.randn(n, 3, requires_grad=True)
        got = cm(x)
        assert set(m.__dict__) == before, set(m.__dict__) - before
        torch.testing.assert_close(got, m(x))
        got.sum().backward()
