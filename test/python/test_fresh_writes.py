"""Tensors the traced code makes from Python data (`z = torch.ones(3)`: a
real tensor while kiln traces) written in place with traced values, then
read: the reads see the written values, as in eager. Before 2026-11-30 a
later read ran at trace time on the values from before the write (`z *
3` gave 3s), and `z[0] = x[1]` was a graph break writing a copy. Reads kiln
cannot make right are refused, never silently wrong."""

import pytest
import torch

import kiln

BACKENDS = ["eager", "cpu"]


def copy_then_read(x):
    z = torch.ones(3)
    z.copy_(x)
    return z * 3


def setitem_then_read(x):
    z = torch.ones(3)
    z[0] = x[1]
    return z * 3


def add_then_read(x):
    z = torch.zeros(3) + 1
    z.add_(x)
    return z.sum() + z


def put_and_index_fill(x):
    z = torch.ones(3)
    z.index_fill_(0, torch.tensor([1]), x.sum())
    z.mul_(x)
    return z


def written_then_detached(x):
    z = torch.ones(3)
    z.copy_(x)
    return z.detach() * 3


def returned_written(x):
    z = torch.ones(3)
    z.mul_(x)
    return z


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [copy_then_read, setitem_then_read,
                                add_then_read, put_and_index_fill,
                                written_then_detached, returned_written],
                         ids=lambda f: f.__name__)
def test_reads_of_a_written_tensor_made_by_the_code(backend, fn):
    f = kiln.compile(fn, backend=backend)
    for _ in range(2):
        x = torch.randn(3)
        torch.testing.assert_close(f(x), fn(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_a_written_tensor(backend):
    def f(x):
        z = torch.zeros(2, 3)
        z[0] = x * 2
        z[1].copy_(x.sin())
        return (z * z).sum()

    x = torch.randn(3, requires_grad=True)
    xk = x.detach().clone().requires_grad_()
    f(x).backward()
    kiln.compile(f, backend=backend)(xk).backward()
    torch.testing.assert_close(xk.grad, x.grad)


def view_before_write(x):
    z = torch.ones(3)
    v = z[1:]
    z.copy_(x)
    return v * 3


def alias_written(x):
    z = torch.zeros(3) + 1
    z.detach().copy_(x)
    return z * 3


def read_after_a_break(x):
    z = torch.ones(3)
    z.copy_(x)
    if x.sum() > 100:
        x = x + 1
    return z * 3 + x


@pytest.mark.parametrize("fn", [view_before_write, alias_written,
                                read_after_a_break],
                         ids=lambda f: f.__name__)
def test_reads_kiln_cannot_make_right_are_refused(fn):
    with pytest.raises(kiln.Unsupported):
        kiln.compile(fn)(torch.randn(3))
