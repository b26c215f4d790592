"""Replaying the segments of a function with graph breaks (kiln._breaks,
_Trie; docs/python.md, "Replaying segments"). After the first call of a
path, a call runs the Python and reuses the recorded segments without
importing them; any change of the Python path (a branch flipping, another
`.item()` value, another shape, dtype or argument structure, a global the
Python reads) is detected and that segment is imported again. Every result
is checked against eager PyTorch (the function itself, uncompiled)."""

import pytest
import torch
import torch.nn as nn

import kiln
from kiln import _breaks


@pytest.fixture(autouse=True)
def _restore_config():
    saved = kiln.config.cache_size_limit
    yield
    kiln.config.cache_size_limit = saved


def _broken(f):
    """The segment cache (kiln._breaks.Broken) of the compiled function's
    only argument structure."""
    (b,) = [p for p in f._kiln.programs.values()
            if isinstance(p, _breaks.Broken)]
    return b


def _counts(f):
    b = _broken(f)
    return b.imported_segments, b.replayed_segments


def _check(f, fn, *args, **kwargs):
    want = fn(*args, **kwargs)
    got = f(*args, **kwargs)
    torch.testing.assert_close(got, want)
    return got


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_steady_state_replays_without_importing(backend):
    f = kiln.compile(toy_example, backend=backend)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(10, generator=g)
    pos = torch.rand(10, generator=g) + 0.1
    _check(f, toy_example, a, pos)      # records g0 and the + side
    _check(f, toy_example, a, -pos)     # g0 replayed, the - side imported
    imported, replayed = _counts(f)
    assert (imported, replayed) == (3, 1)
    for i in range(6):
        b = -pos if i % 2 else pos
        _check(f, toy_example, torch.randn(10, generator=g), b)
    # Both paths are known: every segment of these calls is a replay.
    assert _counts(f) == (3, 1 + 12)
    assert all(s["compiles"] == 1 for s in f._kiln.stats().values())


def test_branch_flip_after_replays_takes_this_calls_side():
    def fn(x):
        y = x * 3
        if y.mean() > 0:
            y = y.exp()
        else:
            y = y.sin() - 1
        return y + x

    f = kiln.compile(fn)
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    for _ in range(3):
        _check(f, fn, x.abs())
    # Replays of the positive side so far; now the other side.
    _check(f, fn, -x.abs())
    _check(f, fn, x.abs())
    _check(f, fn, -x.abs())
    # 6 calls of 2 segments: g0, the + side and the - side imported once.
    assert _counts(f) == (3, 9)


def test_item_value_used_as_a_constant_is_never_replayed_with_another():
    def fn(x):
        m = x.abs().max().item()        # a Python float from a break
        return x / m + m                # m is a constant of this graph

    f = kiln.compile(fn)
    g = torch.Generator().manual_seed(2)
    xs = [torch.randn(6, generator=g) * s for s in (1.0, 3.0, 1.0)]
    xs[2] = xs[0].clone()               # the first value again
    for x in xs:
        _check(f, fn, x)
    # Two distinct values: two graphs after the break; the third call
    # replays the first value's graph.
    stats = f._kiln.stats()
    assert len(stats) == 3
    assert _counts(f) == (3, 3)


def test_item_value_used_by_python_only():
    def fn(x, w):
        n = int(x.sum().item() > 0)     # Python decides on it
        for _ in range(1 + n):
            x = torch.tanh(x @ w)
        return x

    f = kiln.compile(fn)
    g = torch.Generator().manual_seed(3)
    w = torch.randn(4, 4, generator=g) * 0.5
    x = torch.randn(3, 4, generator=g).abs()
    for inp in (x, -x, x, -x, x):
        _check(f, fn, inp, w)
    imported, replayed = _counts(f)
    assert imported == 3 and replayed == 7


def test_shape_and_dtype_changes_are_imported_not_replayed():
    def fn(x):
        y = x.sum(0)
        if y[0] > -1e9:                 # a break (always true)
            pass
        if x.shape[0] > 4:              # Python on a size after the break
            return y * 2
        return y - x[0]

    f = kiln.compile(fn)
    g = torch.Generator().manual_seed(4)
    calls = [torch.randn(3, 5, generator=g),
             torch.randn(8, 5, generator=g),
             torch.randn(3, 5, generator=g),
             torch.randn(8, 5, generator=g).double(),
             torch.randn(3, 5, generator=g).double(),
             torch.randn(3, 7, generator=g),
             torch.randn(3, 5, generator=g)]
    for x in calls:
        _check(f, fn, x)
    imported, replayed = _counts(f)
    assert replayed >= 2          # the repeated (3, 5) float32 calls
    assert imported >= 10         # every new shape or dtype


def test_kwargs_and_argument_structure():
    def fn(x, y=None, scale=2.0, negate=False):
        out = x * scale
        if y is not None:
            out = out + y
        if out.sum() > 0:               # a break
            out = out.relu()
        return -out if negate else out

    f = kiln.compile(fn)
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(5, generator=g), torch.randn(5, generator=g)
    for _ in range(2):
        _check(f, fn, x)
        _check(f, fn, x, y)
        _check(f, fn, x, y=y)
        _check(f, fn, y=y, x=x)
        _check(f, fn, x, scale=3.0)
        _check(f, fn, x, y, negate=True)
        _check(f, fn, -x, y, negate=True)
        _check(f, fn, x, y=-y, scale=-1.0)


FLAG = [False]


def test_python_state_read_between_ops_is_followed():
    # The Python runs on every call, so a global it reads picks this call's
    # ops; the replay notices the different op and imports from there.
    def fn(x):
        y = x * 2
        if FLAG[0]:
            y = y + 1
        z = y.sum()
        if z > 0:
            return y
        return y.neg()

    f = kiln.compile(fn)
    x = torch.randn(7, generator=torch.Generator().manual_seed(6))
    for flag in (False, False, True, True, False, True):
        FLAG[0] = flag
        _check(f, fn, x)
        _check(f, fn, -x)
    FLAG[0] = False


def test_refused_op_is_replayed_as_an_eager_op():
    def fn(x):
        y = torch.fix(x.abs() + 1) * 2   # no Kiln conversion: eager
        return y + x

    f = kiln.compile(fn)
    g = torch.Generator().manual_seed(7)
    for _ in range(4):
        _check(f, fn, torch.randn(5, generator=g))
    imported, replayed = _counts(f)
    assert imported == 2 and replayed == 6


def test_module_with_breaks_replays_and_follows_parameter_updates():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(6, 6)
            self.l2 = nn.Linear(6, 3)

        def forward(self, x):
            h = torch.relu(self.l1(x))
            if h.mean() > 0.2:
                h = h * 0.5
            return self.l2(h)

    torch.manual_seed(8)
    m = M()
    f = kiln.compile(m)
    x = torch.randn(4, 6)
    for i in range(4):
        _check(f, m, x)
        _check(f, m, x * 4)
        with torch.no_grad():
            m.l2.weight.mul_(0.9)           # new values, same tensors
        m.l1.weight = nn.Parameter(m.l1.weight.detach() * 1.1)
    assert _counts(f)[1] > 0


def test_training_through_replayed_segments():
    def fn(x, w):
        h = torch.tanh(x @ w)
        if h.sum() > 0:
            h = h * 2
        return (h * h).mean()

    g = torch.Generator().manual_seed(9)
    x = torch.randn(4, 3, generator=g)
    w0 = torch.randn(3, 3, generator=g)
    f = kiln.compile(fn)
    for sign in (1, 1, -1, -1, 1):
        w1 = (w0 * sign).requires_grad_()
        w2 = (w0 * sign).requires_grad_()
        loss1 = f(x, w1)
        loss2 = fn(x, w2)
        torch.testing.assert_close(loss1, loss2)
        loss1.backward()
        loss2.backward()
        torch.testing.assert_close(w1.grad, w2.grad)
    assert _counts(f)[1] > 0


def test_dropout_in_a_replayed_segment_draws_a_new_mask_each_call():
    def fn(x):
        y = torch.nn.functional.dropout(x, 0.5, True)
        if x.sum() > 0:                 # a break after the dropout
            y = y * 2
        return y

    f = kiln.compile(fn)
    x = torch.ones(4000)
    masks = [(f(x) == 0) for _ in range(3)]
    assert _counts(f)[1] >= 4           # the later calls replayed
    for m in masks:
        assert 0.45 < m.float().mean().item() < 0.55
    assert (masks[1] != masks[2]).any()
