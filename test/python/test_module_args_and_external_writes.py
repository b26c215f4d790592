"""A compiled function may take modules (and other Python objects such as
an optimizer) as arguments, as with torch.compile: the module is
specialized by identity and its parameters are read on every call, as a
closure's modules are. An in-place write, while kiln captures, to a real
tensor the program does not take as an argument (an optimizer's
parameters and state, reached through `self.param_groups`) is a graph
break: it runs eagerly on every call. Before, torch did it once, at
capture, and the program did not repeat it (a compiled `optimizer.step`
updated the parameters on its first call only)."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_module_and_optimizer_as_arguments(backend):
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    m2 = copy.deepcopy(m1)
    o1 = torch.optim.SGD(m1.parameters(), lr=0.1, momentum=0.9)
    o2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
    step = kiln.compile(_train_step, backend=backend)
    for _ in range(3):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        l1 = _train_step(m1, o1, x, y)
        l2 = step(m2, o2, x, y)
        torch.testing.assert_close(l2, l1)
    for a, b in zip(m1.parameters(), m2.parameters()):
        torch.testing.assert_close(b, a)


def test_module_argument_training_flag_and_identity():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    other = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    f = kiln.compile(lambda mod, x: mod(x), backend="cpu")
    x = torch.randn(3, 4)
    m.eval()
    other.eval()
    torch.testing.assert_close(f(m, x), m(x))
    torch.testing.assert_close(f(other, x), other(x))  # another module
    with torch.no_grad():
        m[0].weight.mul_(2)                            # read live
    torch.testing.assert_close(f(m, x), m(x))
    m.train()                                          # dropout now on
    y = f(m, x)
    assert (y == 0).any() or not torch.allclose(y, m.eval()(x))


@pytest.mark.parametrize("make", [
    lambda p: torch.optim.SGD(p, lr=0.1),
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: torch.optim.Adam(p, lr=0.01),
], ids=["sgd", "sgd-momentum", "adam"])
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_compiled_optimizer_step_updates_on_every_call(backend, make):
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    ref = copy.deepcopy(m)
    opt, ref_opt = make(m.parameters()), make(ref.parameters())
    step = kiln.compile(opt.step, backend=backend)
    for _ in range(4):
        x = torch.randn(4, 3)
        for mod, o, st in ((ref, ref_opt, ref_opt.step), (m, opt, step)):
            o.zero_grad()
            mod(x).sum().backward()
            st()
        for a, b in zip(ref.parameters(), m.parameters()):
            torch.testing.assert_close(b, a)


def test_external_write_with_fullgraph_is_refused():
    m = nn.Linear(3, 2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m(torch.randn(4, 3)).sum().backward()
    before = [p.detach().clone() for p in m.parameters()]
    with pytest.raises(kiln.Unsupported, match="in-place write to a tensor"):
        kiln.compile(opt.step, backend="cpu", fullgraph=True)()
    for p, b in zip(m.parameters(), before):
        assert torch.equal(p, b)        # nothing written while capturing


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_writes_to_tensors_the_program_holds(backend):
    # A global tensor the graph writes (`acc.add_(x)`, a node: the program
    # holds acc) and then reads with no traced value (`acc * 1`, `acc.sum()`):
    # those reads are nodes too, so they see the write (before, torch ran
    # them while tracing, on the value from before the write: one call
    # behind). A tensor made in the trace is the call's own.
    acc = torch.zeros(3)

    def f(x):
        acc.add_(x)
        t = torch.zeros(3)
        t += x
        return acc * 1, acc.sum(), t
    g = kiln.compile(f, backend=backend)
    x = torch.ones(3)
    for k in (1.0, 2.0, 3.0):
        a, s, t = g(x)
        torch.testing.assert_close(a, torch.full((3,), k))
        torch.testing.assert_close(s, torch.tensor(3 * k))
        torch.testing.assert_close(t, x)
    torch.testing.assert_close(acc, torch.full((3,), 3.0))


def test_index_of_a_written_global_reads_the_written_value():
    """`acc[0]` after `acc.add_(x)`: a node of the graph reading the
    written value (since 2026-11-30; it was refused before)."""
    acc, ref = torch.zeros(3), torch.zeros(3)

    def f(x, acc=acc):
        acc.add_(x)
        return acc[0] + 0

    g = kiln.compile(f, backend="cpu")
    for i in range(3):
        x = torch.arange(3.0) + i
        torch.testing.assert_close(g(x), f(x, ref))
        torch.testing.assert_close(acc, ref)


def test_view_of_a_written_global_taken_before_the_write_is_refused():
    acc = torch.zeros(3)

    def f(x):
        v = acc[0]
        acc.add_(x)
        return v + 0
    with pytest.raises(kiln.Unsupported, match="view of a tensor the graph"):
        kiln.compile(f, backend="cpu")(torch.ones(3))


def test_metadata_of_a_written_global_is_read_as_is():
    acc = torch.zeros(2, 3)
    view = acc[1]

    def f(x):
        acc.add_(x)
        return x * acc.shape[1] * view.shape[0] + acc.dim()
    g = kiln.compile(f, backend="cpu")
    x = torch.ones(2, 3)
    torch.testing.assert_close(g(x), x * 9 + 2)


def test_tensor_default_argument():
    """`def f(x, w=W)` called without w: torch.fx wrote the default into
    the traced code's signature as an undefined name ("name
    '_tensor_constant0' is not defined") before 2026-11-30."""
    W = torch.arange(3.0)

    def f(x, w=W):
        return x * w + 1

    g = kiln.compile(f, backend="cpu")
    x = torch.randn(3)
    torch.testing.assert_close(g(x), f(x))
    torch.testing.assert_close(g(x, torch.ones(3)), f(x, torch.ones(3)))
