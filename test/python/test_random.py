"""Random numbers in compiled graphs: torch.rand / randn / rand_like /
randn_like, Tensor.uniform_ / normal_, torch.bernoulli, and channel-wise
and alpha dropout in training mode (kiln._ops, "random numbers"). Each
random op is kt.rand / kt.randn / kt.dropout with a seed argument drawn
from torch's default generator on every call: the values are Kiln's Philox
stream, not eager PyTorch's, so the checks against eager are on shapes,
dtypes, distributions (mean, variance, range, a Kolmogorov-Smirnov bound),
structure (whole channels dropped, PyTorch's scaling) and gradients."""

import math
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


def ks_distance(sample, cdf):
    """sup |F_n(x) - F(x)| of a 1-D sample against a CDF."""
    x, _ = torch.sort(sample.double().flatten())
    n = x.numel()
    f = cdf(x)
    upper = torch.arange(1, n + 1, dtype=torch.float64) / n
    lower = torch.arange(0, n, dtype=torch.float64) / n
    return max((upper - f).abs().max().item(), (f - lower).abs().max().item())


def ks_bound(n):
    # The Kolmogorov-Smirnov statistic exceeds 1.95 / sqrt(n) with
    # probability 0.001.
    return 1.95 / math.sqrt(n)


def uniform_cdf(lo, hi):
    return lambda x: ((x - lo) / (hi - lo)).clamp(0, 1)


def normal_cdf(mean, std):
    return lambda x: 0.5 * (1 + torch.erf((x - mean) / (std * math.sqrt(2))))


def random_ops(x):
    a = torch.rand(200, 100)
    n = torch.randn_like(x)
    u = torch.empty_like(x).uniform_(-2, 3)
    z = x.clone().normal_(5, 2)
    r = torch.rand_like(x, dtype=torch.float64)
    g = torch.randn(3, 4, dtype=torch.float64)
    bb = torch.bernoulli(torch.full_like(x, 0.3))
    return a, n, u, z, r, g, bb


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_ops_are_in_the_graph_with_their_distributions(backend):
    x = torch.ones(200, 100)
    explained = kiln.explain(random_ops)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    c = kiln.compile(random_ops, backend=backend, fullgraph=True)
    first = c(x)
    second = c(x)
    want = random_ops(x)
    for k, (o, o2, w) in enumerate(zip(first, second, want)):
        assert o.shape == w.shape and o.dtype == w.dtype, k
        # New values on every call.
        assert (o != o2).float().mean().item() > 0.25, k
    a, n, u, z, r, g, bb = first
    n_el = x.numel()
    assert 0 <= a.min().item() and a.max().item() < 1
    assert 0 <= r.min().item() and r.max().item() < 1
    assert -2 <= u.min().item() and u.max().item() < 3
    for sample, cdf in ((a, uniform_cdf(0, 1)), (r, uniform_cdf(0, 1)),
                        (u, uniform_cdf(-2, 3)), (n, normal_cdf(0, 1)),
                        (z, normal_cdf(5, 2))):
        d = ks_distance(sample, cdf)
        assert d < ks_bound(n_el), d
    # Means and variances within 5 standard errors.
    for sample, mean, var in ((n, 0, 1), (z, 5, 4), (u, 0.5, 25 / 12)):
        se = math.sqrt(var / n_el)
        assert abs(sample.double().mean().item() - mean) < 5 * se
        assert abs(sample.double().var().item() - var) < 5 * var * math.sqrt(
            2 / n_el)
    assert set(bb.unique().tolist()) <= {0.0, 1.0}
    assert abs(bb.mean().item() - 0.3) < 5 * math.sqrt(0.21 / n_el)
    # Two random ops of one graph have seeds of their own.
    assert not torch.equal(a, torch.rand(200, 100)) and \
        (a - r.float()).abs().max().item() > 0.1


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_manual_seed_makes_kiln_reproducible(backend):
    c = kiln.compile(random_ops, backend=backend)
    x = torch.ones(20, 10)
    torch.manual_seed(7)
    first = c(x)
    torch.manual_seed(7)
    again = c(x)
    for o, p in zip(first, again):
        assert torch.equal(o, p)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_random_values(backend):
    # d/dx sum(randn_like(x) * x + x.bernoulli-free terms) = the noise.
    def f(x, w):
        noise = torch.randn_like(x)
        return noise * x * w, noise

    c = kiln.compile(f, backend=backend)
    x = torch.randn(50, 8, requires_grad=True)
    w = torch.rand(8, requires_grad=True)
    out, noise = c(x, w)
    assert not noise.requires_grad
    up = torch.randn(50, 8)
    out.backward(up)
    torch.testing.assert_close(x.grad, up * noise * w.detach())
    torch.testing.assert_close(w.grad, (up * noise * x.detach()).sum(0))


def test_random_op_with_a_generator_is_a_graph_break():
    g = torch.Generator().manual_seed(0)

    def f(x):
        return x + torch.rand(3, generator=g)

    out = kiln.explain(f)(torch.zeros(3))
    assert out.graph_break_count == 1
    assert "generator" in out.break_reasons[0].reason
    c = kiln.compile(f, backend="eager")
    g.manual_seed(3)
    got = c(torch.zeros(3))
    g.manual_seed(3)
    torch.testing.assert_close(got, torch.rand(3, generator=g))


def channel_dropped(y):
    """Per (sample, channel) of y [N, C, ...]: all zero."""
    return (y.flatten(2) == 0).all(-1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("module", [nn.Dropout1d, nn.Dropout2d, nn.Dropout3d])
def test_channel_dropout_training_mode(backend, module):
    p = 0.4
    spatial = {nn.Dropout1d: (5,), nn.Dropout2d: (3, 4),
               nn.Dropout3d: (2, 3, 2)}[module]
    m = nn.Sequential(nn.Linear(spatial[-1], spatial[-1]), module(p)).train()
    c = kiln.compile(m, backend=backend)
    x = torch.rand((64, 16) + spatial) + 0.5
    explained = kiln.explain(m)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    y = c(x)
    h = m[0](x)
    assert (h != 0).all()
    dropped = channel_dropped(y)
    # Whole channels: every element of a channel is dropped or none is.
    partly = ((y.flatten(2) == 0).any(-1) & ~dropped)
    assert not partly.any()
    # 1024 Bernoulli(0.4): standard deviation 0.015.
    assert abs(dropped.float().mean().item() - p) < 0.075
    kept = ~dropped
    torch.testing.assert_close(y[kept], h[kept] / (1 - p))
    y2 = c(x)
    assert (channel_dropped(y2) != dropped).any()  # a new mask per call
    # The backward applies the forward's mask.
    up = torch.randn(y.shape)
    y.backward(up)
    mask = kept.float().view(kept.shape + (1,) * len(spatial)) / (1 - p)
    want = torch.autograd.grad(h, m[0].weight, up * mask)[0]
    torch.testing.assert_close(m[0].weight.grad, want, rtol=1e-4,
                               atol=1e-4)
    # Eval mode: the identity, as eager.
    m.eval()
    with torch.no_grad():
        torch.testing.assert_close(c(x), m(x))


@pytest.mark.parametrize("fn,shape,mask_shape", [
    (lambda t: F.dropout1d(t, 0.5, True), (6, 40), (6, 1)),
    (lambda t: F.dropout3d(t, 0.5, True), (6, 2, 3, 4), (6, 1, 1, 1)),
    (lambda t: F.dropout2d(t, 0.5, True), (6, 8, 9), (6, 8, 1)),
    (lambda t: torch.feature_dropout(t, 0.5, True), (6, 8, 9), (6, 8, 1)),
])
def test_channel_dropout_mask_shapes_of_unbatched_inputs(fn, shape,
                                                         mask_shape):
    # PyTorch's rules: dropout1d / dropout3d take an unbatched input (the
    # channel is dim 0); dropout2d in 1.13 takes a 3-D input as (N, C, L).
    c = kiln.compile(fn, backend="eager")
    x = torch.ones(shape)
    for _ in range(3):
        y = c(x)
        assert y.shape == x.shape
        # Constant over the dims the mask broadcasts along.
        per = y.amax(dim=[d for d, s in enumerate(mask_shape) if s == 1],
                     keepdim=True)
        assert per.shape == mask_shape
        assert torch.equal(y, per.expand(shape)), "not one value per channel"
        assert set(y.unique().tolist()) <= {0.0, 2.0}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_training_mode(backend, feature):
    p = 0.2
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout

    def f(x, w):
        return fn(x * w, p, True)

    c = kiln.compile(f, backend=backend)
    x = torch.randn(400, 50, 4) if feature else torch.randn(400, 200)
    # An input near -alpha gives the dropped value when kept: moved away,
    # so that each output tells kept from dropped (before, a CI flake:
    # whether such an input occurred depended on the tests run before).
    x = torch.where((x + alpha).abs() < 1e-3, x + 0.01, x)
    w = torch.ones(x.shape[-1], requires_grad=True)
    y = c(x, w)
    kept_value = x * a + alpha * a * p
    kept = torch.isclose(y, kept_value, atol=1e-5, rtol=1e-5)
    dropped_value = torch.tensor(alpha * a * (p - 1))
    assert torch.isclose(y[~kept], dropped_value, atol=1e-5).all()
    if feature:
        # A channel is kept or dropped as a whole.
        per = kept.all(-1) | (~kept).all(-1)
        assert per.all()
    rate = (~kept).float().mean().item()
    assert abs(rate - p) < 0.02, rate
    # Zero mean, unit variance for standard normal inputs (the point of
    # alpha dropout), as eager's.
    assert abs(y.mean().item()) < 0.03 and abs(y.var().item() - 1) < 0.05
    # The backward uses the forward's mask: d y / d (x * w) = a * keep.
    y.backward(torch.ones_like(y))
    want = (x * a * kept.float()).sum(tuple(range(x.dim() - 1)))
    torch.testing.assert_close(w.grad, want, rtol=1e-4, atol=1e-3)
    # Not in training: the identity.
    torch.testing.assert_close(
        kiln.compile(lambda t: fn(t, p, False), backend=backend)(x), x)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_channel_dropout_at_a_dynamic_batch(backend):
    # The mask is built from the input (not kt.full of static sizes): a
    # mark_dynamic batch stays dynamic, one training pair serves batches 4
    # and 7, and no_grad calls work too.
    m = nn.Sequential(nn.Conv2d(3, 4, 1), nn.Dropout2d(0.3),
                      nn.AlphaDropout(0.2)).train()
    c = kiln.compile(m, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        for batch in (4, 7, 4, 7):
            x = torch.randn(batch, 3, 5, 5)
            kiln.mark_dynamic(x, 0)
            y = c(x)
            assert y.shape == (batch, 4, 5, 5)
            y.sum().backward()
            with torch.no_grad():
                assert c(x).shape == y.shape
    (pair,) = [q for p in c._kiln.programs.values()
               for q in getattr(p, "training_pairs", {}).values()]
    assert pair.dynamic
    assert pair.session.stats(pair.name + "_fwd")["compiles"] == 1


class _Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x) + 0.1 * torch.randn_like(x)


@pytest.mark.parametrize("mark", [True, False])
def test_random_tensor_of_a_dynamic_size(mark):
    # randn_like of a batch that is dynamic (marked, or made dynamic by
    # automatic dynamic shapes) is captured: kt.randn takes the batch as a
    # dynamic size (tensor.dim of the input), no graph break, no
    # specialization. Marked: one dynamic training pair, compiled once;
    # automatic: a static pair, then one dynamic pair for every new batch.
    # The noise is additive: the weight's gradient equals eager's.
    torch.manual_seed(0)
    m = _Noisy()
    c = kiln.compile(m, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        for batch in (4, 7, 4, 9):
            x = torch.randn(batch, 3)
            if mark:
                kiln.mark_dynamic(x, 0)
            with torch.no_grad():
                assert c(x).shape == (batch, 3)
            m.zero_grad()
            y = c(x)
            y.sum().backward()
            torch.testing.assert_close(
                m.lin.weight.grad, x.sum(0).expand(3, 3).contiguous())
    pairs = [q for p in c._kiln.programs.values()
             for q in getattr(p, "training_pairs", {}).values()]
    compiles = [(q.dynamic, q.session.stats(q.name + "_fwd")["compiles"])
                for q in pairs]
    assert sorted(compiles) == ([(True, 1)] if mark else
                                [(False, 1), (True, 1)])
    # The inference program (the no_grad key) is dynamic the same way.
    assert c._kiln.stats()["_Noisy"]["compiles"] == (1 if mark else 2)
    x = torch.randn(5, 3)
    kiln.mark_dynamic(x, 0)
    out = kiln.explain(_Noisy())(x)
    assert out.graph_break_count == 0 and out.graph_count == 1
