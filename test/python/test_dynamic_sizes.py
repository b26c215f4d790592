"""Sizes taken from dynamic dims, without specializing them. expand /
expand_as / broadcast_to to a size that is a dynamic dim of another tensor
(`cls.expand(t.shape[0], -1, -1)`, ViT's class token with a dynamic
batch): a product with ones of that size. torch.arange to a dynamic end
(position ids): cumsum of ones. torch functions and real tensors' methods
given traced sizes (`torch.reshape(x, (x.shape[0] * 3,))`) trace as nodes.
Before, each was a SpecializationError under mark_dynamic (a recapture per
size otherwise) or a TypeError from torch's argument parser. One compile
serves every size; each result is compared with eager PyTorch."""

import pytest
import torch
import torch.nn as nn

import kiln
from models import BACKENDS



pytestmark = pytest.mark.usefixtures("reset_kiln")


def compiles(cf):
    return sum(s["compiles"] for s in cf._kiln.stats().values())


def run_sizes(f, make, sizes, dims=(0,), backend="cpu", grad=False):
    cf = kiln.compile(f, backend=backend)
    for n in sizes:
        args = make(n)
        for a in args:
            for d in dims:
                if isinstance(a, torch.Tensor) and a.ndim > d:
                    kiln.mark_dynamic(a, d)
        want = f(*args)
        got = cf(*args)
        torch.testing.assert_close(got, want)
    return cf


@pytest.mark.parametrize("backend", BACKENDS)
def test_expand_to_a_dynamic_batch(backend):
    cls = torch.randn(1, 1, 4)

    def f(t):
        return torch.cat([cls.expand(t.shape[0], -1, -1), t], 1) * 2
    cf = run_sizes(f, lambda n: (torch.randn(n, 3, 4),), (2, 5, 1, 7),
                   backend=backend)
    assert compiles(cf) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_leading_dim_expand_as_and_broadcast_to(backend):
    v = torch.randn(3)

    w = torch.randn(1, 3)

    def f(t, u):
        a = v.expand(t.shape[0], 3)              # a new leading dim
        b = w.expand_as(t)                       # dim 0 of size 1
        c = torch.broadcast_to(u, (u.shape[0], t.shape[1]))
        d = u.t().expand(t.shape[1], u.shape[0])
        return a + b, c, d
    cf = run_sizes(f, lambda n: (torch.randn(n, 3), torch.randn(n, 1)),
                   (2, 6, 3), backend=backend)
    assert compiles(cf) == 1


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float64])
def test_exact_values_and_dtypes(dtype):
    # x * 1 is x exactly: NaN, infinities and -0.0 survive the broadcast.
    if dtype == torch.bool:
        c = torch.tensor([[True, False, True]])
    elif dtype == torch.int64:
        c = torch.tensor([[2 ** 62, -3, 0]])
    else:
        c = torch.tensor([[float("nan"), float("-inf"), -0.0]],
                         dtype=dtype)

    def f(t):
        return c.expand(t.shape[0], 3)
    cf = kiln.compile(f, backend="cpu")
    for n in (2, 4):
        t = torch.randn(n, 5)
        kiln.mark_dynamic(t, 0)
        got = cf(t)
        assert got.dtype == dtype and got.shape == (n, 3)
        torch.testing.assert_close(got, f(t), equal_nan=True)
        if dtype == torch.float64:
            assert torch.signbit(got[:, 2]).all()
    assert compiles(cf) == 1


def test_expand_view_sees_a_later_write_to_its_base():
    def f(t):
        c = torch.zeros(1, 3)
        e = c.expand(t.shape[0], 3)
        c.add_(t[0, :3])      # e is a view of c: it sees the write
        return e + 0
    run_sizes(f, lambda n: (torch.randn(n, 4),), (2, 5))


class ClsToken(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)
        self.cls = nn.Parameter(torch.randn(1, 1, 8))
        self.pos = nn.Parameter(torch.randn(1, 5, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        t = self.proj(x)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        return self.head(torch.tanh(t)[:, 0] + t.mean(1))


def test_cls_token_training_with_a_dynamic_batch():
    torch.manual_seed(0)
    m = ClsToken()
    ref = ClsToken()
    ref.load_state_dict(m.state_dict())
    cm = kiln.compile(m, backend="cpu")
    for n in (3, 6, 2):
        x = torch.randn(n, 4, 6)
        kiln.mark_dynamic(x, 0)
        cm(x).square().sum().backward()
        ref(x).square().sum().backward()
        for (name, p), q in zip(m.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=name)
        m.zero_grad()
        ref.zero_grad()


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_functions_given_dynamic_sizes(backend):
    # torch.reshape(x, (x.shape[0] * 3,)) and friends with a dynamic dim:
    # torch's argument parser refused the traced size ("must be tuple of
    # SymInts, not tuple") before __torch_function__ could see it.
    def f(x, u):
        a = torch.reshape(x, (x.shape[0] * x.shape[1],))
        b = torch.broadcast_to(u, (u.shape[0], x.shape[1]))
        c = torch.reshape(x, (-1, x.shape[1], 1)).sum(-1)
        return a, b + c
    cf = run_sizes(f, lambda n: (torch.randn(n, 3), torch.randn(n, 1)),
                   (4, 7, 2), backend=backend)
    assert compiles(cf) == 1


def test_a_size_that_must_be_static_still_says_why():
    # narrow's length is a kt.slice bound: specialized, with the reason.
    def f(x):
        return torch.narrow(x, 0, 0, x.shape[0] - 1)
    x = torch.randn(5, 3)
    kiln.mark_dynamic(x, 0)
    with pytest.raises(kiln.SpecializationError, match="a narrow length"):
        kiln.compile(f, backend="eager")(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_arange_to_a_dynamic_size(backend):
    # Position ids over a dynamic sequence: kt.arange's bounds are static;
    # before, the end was specialized ("an arange bound").
    def f(x):
        pos = torch.arange(x.shape[1])
        odd = torch.arange(1, x.shape[0] + 5, 3)
        half = torch.arange(2.0, x.shape[0]) * 0.5
        return x + pos, odd, half, torch.arange(x.shape[0],
                                                dtype=torch.float64)
    cf = run_sizes(f, lambda n: (torch.randn(n, n + 2),), (4, 9, 2),
                   dims=(0, 1), backend=backend)
    assert compiles(cf) == 1
    out = cf(torch.randn(3, 3))
    assert out[1].dtype == torch.int64 and out[2].dtype == torch.float32
    assert out[3].dtype == torch.float64


def test_arange_with_a_fractional_step_still_specializes():
    def f(x):
        return torch.arange(0, x.shape[0], 0.5)
    x = torch.randn(4, 2)
    kiln.mark_dynamic(x, 0)
    with pytest.raises(kiln.SpecializationError, match="an arange bound"):
        kiln.compile(f, backend="eager")(x)
