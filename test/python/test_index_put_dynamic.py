"""index_put / index_put_ / x[i] = v / x[i] with one index tensor over a
dim marked dynamic (`?`, kiln.mark_dynamic), issue 16 batch 7 item 3: one
program serves every size, negative indices wrap by the dim's size computed
at run time, out-of-range indices are the run-time error of kt.scatter /
kt.index_select at the user's line. On the `eager` (interpreter) and `cpu`
backends against eager PyTorch. Several index tensors over a dynamic dim
still need its size (a SpecializationError naming it)."""

import pytest
import torch

import kiln

BACKENDS = ["eager", "cpu"]


def put(x, i, v):
    return torch.index_put(x, (i,), v)


def acc(x, i, v):
    return x.index_put((i,), v, accumulate=True)


def setitem(x, i, v):
    y = x.clone()
    y[i] = v
    return y


def inplace(x, i, v):
    y = x * 1
    y.index_put_((i,), v, accumulate=True)
    return y


def read(x, i, v):
    return x[i] * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [put, acc, setitem, inplace, read],
                         ids=lambda f: f.__name__)
def test_one_index_over_a_dynamic_dim(backend, fn):
    c = kiln.compile(fn, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(1)
    for n, dtype in ((6, torch.float32), (9, torch.float32), (3, torch.float32),
                     (5, torch.float64)):
        x = torch.randn(n, 4, generator=g, dtype=dtype)
        x[0, 1] = float("nan")          # NaN rows count in the dim's size
        # Repeats (accumulate adds them; a plain put keeps one), negatives
        # down to -n.
        i = torch.tensor([0, 2, -1, 2, -n])
        v = torch.randn(5, 4, generator=g, dtype=dtype)
        kiln.mark_dynamic(x, 0)
        # (put, setitem: for the repeated index 2, PyTorch's CPU kernel
        # and Kiln both keep the last write.)
        got, want = c(x, i, v), fn(x, i, v)
        torch.testing.assert_close(got, want, rtol=0, atol=0,
                                   equal_nan=True)
    x = torch.randn(4, 4)
    kiln.mark_dynamic(x, 0)
    with pytest.raises(kiln.KilnError, match="index 4 is out of"):
        c(x, torch.tensor([0, 4, 1, 1, 1]), torch.randn(5, 4))


def test_int_values_and_a_dynamic_trailing_dim():
    def f(x, i, v):
        return x.index_put((i,), v, accumulate=True)
    c = kiln.compile(f, backend="eager", fullgraph=True)
    for n in (7, 4):
        x = torch.arange(n * 3).reshape(n, 3)
        i = torch.tensor([-1, 0, -1])
        v = torch.ones(3, 3, dtype=torch.int64)
        kiln.mark_dynamic(x, 0)
        assert torch.equal(c(x, i, v), f(x, i, v))


def test_several_index_tensors_need_the_size():
    def f(x, i, j, v):
        return torch.index_put(x, (i, j), v, accumulate=True)
    x = torch.randn(6, 4)
    kiln.mark_dynamic(x, 0)
    with pytest.raises(kiln.SpecializationError,
                       match="the size of an indexed dim"):
        kiln.compile(f, backend="eager", fullgraph=True)(
            x, torch.tensor([0, 1]), torch.tensor([1, 3]), torch.randn(2))
