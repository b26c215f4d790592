"""index_put / index_put_ / x[i] = v / x[i] with one index tensor over a
dim marked dynamic (`?`, kiln.mark_dynamic), issue 16 batch 7 item 3: one
program serves every size, negative indices wrap by the dim's size computed
at run time, out-of-range indices are the run-time error of kt.scatter /
kt.index_select at the user's line. On the `eager` (interpreter) and `cpu`
backends against eager PyTorch. Several index tensors over dynamic dims
(issue 16 batch 8): the linear index's strides and range checks computed
at run time; their broadcast shape must be static.""" 

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


def put2(x, i, j, v):
    return torch.index_put(x, (i, j), v)


def acc2(x, i, j, v):
    return x.index_put((i, j), v, accumulate=True)


def setitem2(x, i, j, v):
    y = x.clone()
    y[i, :, j] = v
    return y


def read2(x, i, j, v):
    return x[i, :, j] * 2


def read2_adjacent(x, i, j, v):
    return x[:, i, j] + 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [put2, acc2, setitem2, read2, read2_adjacent],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dyn", [(0,), (2,)], ids=str)
def test_several_index_tensors_over_dynamic_dims(backend, fn, dyn):
    # Issue 16 batch 8: the linear index's strides and each index's range
    # check are computed at run time (a SpecializationError before). One
    # program for every size; negative indices wrap by the size at run
    # time; repeats (accumulate adds them).
    c = kiln.compile(fn, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(2)
    for n0, n1, n2 in ((5, 3, 4), (7, 3, 6), (2, 3, 3)):
        x = torch.randn(n0, n1, n2, generator=g)
        x[0, 1, 1] = float("nan")
        if fn is read2_adjacent:
            i = torch.tensor([0, -1, 1, 2])
            j = torch.tensor([1, -n2, n2 - 1, 0])
        else:
            i = torch.tensor([0, -1, 1, 1])
            j = torch.tensor([1, -n2, n2 - 1, n2 - 1])
        v = torch.randn(4, n1, generator=g) if fn in (put2, acc2) else \
            torch.randn(4, n1, generator=g)
        if fn in (put2, acc2):
            v = torch.randn(4, n1, generator=g)
            xx = x.permute(0, 2, 1).contiguous()   # indexed dims first

            def run(f):
                return f(xx, i, j, v)
            for d in dyn:
                kiln.mark_dynamic(xx, (0, 2, 1)[d])
        else:
            def run(f):
                return f(x, i, j, v)
            for d in dyn:
                kiln.mark_dynamic(x, d)
        torch.testing.assert_close(run(c), run(fn), rtol=1e-6, atol=1e-6,
                                   equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_several_index_tensors_out_of_range_at_run_time(backend):
    def f(x, i, j):
        return x[i, j]
    c = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.randn(5, 4)
    kiln.mark_dynamic(x, 1)
    assert torch.equal(c(x, torch.tensor([4, -5]), torch.tensor([3, -4])),
                       f(x, torch.tensor([4, -5]), torch.tensor([3, -4])))
    # Each index is checked against its own dim (the linear index 1*4+4=8
    # would be in range).
    with pytest.raises(kiln.KilnError, match="out of"):
        c(x, torch.tensor([1]), torch.tensor([4]))
    with pytest.raises(kiln.KilnError, match="out of"):
        c(x, torch.tensor([-6]), torch.tensor([0]))


@pytest.mark.parametrize("fn", [acc2, read2, read2_adjacent],
                         ids=lambda f: f.__name__)
def test_several_index_tensors_take_one_dynamic_dim(fn):
    # Two dims marked dynamic: the collapse to [N] + rest and back needs
    # kt.reshape to infer two sizes; refused with a SpecializationError
    # naming the rule (a limit, docs/python.md).
    x = torch.randn(5, 3, 4)
    kiln.mark_dynamic(x, 0)
    kiln.mark_dynamic(x, 2)
    i, j = torch.tensor([0, 1]), torch.tensor([1, 2])
    v = torch.randn(2, 3) if fn is acc2 else None
    with pytest.raises(kiln.SpecializationError,
                       match="several index tensors take one dim"):
        kiln.compile(fn, backend="eager", fullgraph=True)(x, i, j, v)


def test_several_index_tensors_of_dynamic_length_need_the_size():
    # The index tensors' broadcast shape must be static when there are
    # several (one index tensor may have a dynamic length).
    def f(x, i, j, v):
        return torch.index_put(x, (i, j), v, accumulate=True)
    x = torch.randn(6, 4)
    i, j = torch.tensor([0, 1]), torch.tensor([1, 3])
    kiln.mark_dynamic(i, 0)
    with pytest.raises(kiln.SpecializationError,
                       match="the shape of the index tensors"):
        kiln.compile(f, backend="eager", fullgraph=True)(
            x, i, j, torch.randn(2))
