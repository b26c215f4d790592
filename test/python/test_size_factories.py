"""torch.arange with bounds from traced sizes (position ids: `torch.arange(T,
device=x.device)[None, :]`) and torch.finfo / torch.iinfo of a traced dtype
(`torch.finfo(x.dtype).min` in attention masks): the patterns of
HuggingFace-style attention code. Before, the capture failed (arange and
finfo received a Proxy). References are eager PyTorch."""

import copy
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


class Attention(nn.Module):
    def __init__(self, d=16, heads=2, max_len=32):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.pos = nn.Embedding(max_len, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, x, attention_mask=None):
        B, T, C = x.size()
        pos = torch.arange(T, device=x.device, dtype=torch.long)[None, :]
        x = self.ln(x + self.pos(pos.expand(B, -1)))
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        if attention_mask is not None:
            ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * \
                torch.finfo(x.dtype).min
            att = att + ext
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf"))
        att = F.softmax(att, dim=-1, dtype=torch.float32).type_as(q)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.out(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_attention_with_positions_and_finfo_masks(backend):
    torch.manual_seed(0)
    m = Attention()
    ref = copy.deepcopy(m)
    opt = kiln.compile(m, backend=backend)
    for T in (5, 8):
        x = torch.randn(2, T, 16)
        mask = torch.ones(2, T, dtype=torch.long)
        mask[1, -2:] = 0
        m.zero_grad()
        ref.zero_grad()
        got, want = opt(x, attention_mask=mask), ref(x, attention_mask=mask)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        got.square().sum().backward()
        want.square().sum().backward()
        for (name, p), q in zip(ref.named_parameters(), m.parameters()):
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5,
                                       msg=name)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_arange_bounds_and_dtype_info(backend):
    def f(x):
        n = x.shape[-1]
        steps = torch.arange(1, n + 1, 2, dtype=torch.float32)
        ramp = torch.arange(n, dtype=x.dtype) / n
        big = torch.iinfo(torch.int32).max if x.dtype == torch.int32 else \
            torch.finfo(x.dtype).max
        eps = torch.finfo(x.dtype).eps
        return (x * ramp).clamp(max=big) + steps.sum() + eps

    opt = kiln.compile(f, backend=backend, fullgraph=True)
    for shape, dtype in (((3, 6), torch.float32), ((2, 7), torch.float64)):
        x = torch.randn(*shape, dtype=dtype)
        got, want = opt(x), f(x)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("make", [
    lambda x: torch.zeros(x.shape, requires_grad=True),
    lambda x: torch.full(x.shape, 2.0, requires_grad=True),
    lambda x: torch.ones_like(x, requires_grad=True),
    lambda x: x.new_full((3,), 1.5, requires_grad=True),
], ids=["zeros", "full", "ones_like", "new_full"])
def test_factory_requires_grad_makes_a_leaf(backend, make):
    # A new leaf that requires grad is eager PyTorch's (a graph break): the
    # result requires grad and backward reaches the leaf, as in eager.
    def f(x):
        w = make(x)
        y = x * w
        return y, w
    x = torch.randn(3)
    ye, we = f(x)
    yc, wc = kiln.compile(f, backend=backend)(x)
    assert torch.allclose(yc, ye) and torch.equal(wc, we)
    assert yc.requires_grad and wc.requires_grad and wc.is_leaf
    yc.sum().backward()
    assert torch.allclose(wc.grad, x)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("make", [
    lambda: torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
    lambda: torch.zeros(3, requires_grad=True),
    lambda: torch.ones(3, dtype=torch.float64, requires_grad=True),
    lambda: torch.full((3,), 0.5, requires_grad=True),
    lambda: torch.arange(3.0, requires_grad=True),
    lambda: torch.linspace(0, 1, 3, requires_grad=True),
    lambda: torch.eye(3, requires_grad=True),
], ids=["tensor", "zeros", "ones_f64", "full", "arange", "linspace", "eye"])
def test_tensor_free_factory_requires_grad(backend, make):
    """A factory given no traced value (`torch.tensor([..],
    requires_grad=True)`) makes a new leaf on every call, as eager does.
    Before, torch.fx ran it once while tracing and the program kept its
    value as a constant: the results were copies that were no leaves, and
    backward never reached them (their .grad stayed None)."""
    def f(x):
        w = make()
        return (x * w).sum(), w
    c = kiln.compile(f, backend=backend)
    leaves = []
    for _ in range(2):
        x = torch.randn(3, dtype=make().dtype)
        y, w = c(x)
        ye, we = f(x)
        torch.testing.assert_close(y, ye)
        torch.testing.assert_close(w, we.detach())
        assert w.requires_grad and w.is_leaf
        y.backward()
        ye.backward()
        torch.testing.assert_close(w.grad, we.grad)
        leaves.append(w)
    assert leaves[0] is not leaves[1]


def test_tensor_free_factory_requires_grad_fullgraph():
    def f(x):
        return x * torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(kiln.Unsupported, match="requires_grad"):
        kiln.compile(f, backend="cpu", fullgraph=True)(torch.randn(2))


def test_integer_factory_requires_grad_raises_as_eager():
    def f(x):
        return x + torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        f(torch.ones(2))
    with pytest.raises(RuntimeError, match="floating point"):
        kiln.compile(f, backend="cpu")(torch.ones(2))
