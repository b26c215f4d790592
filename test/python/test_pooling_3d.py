"""3-D pooling, adaptive max pooling with indices and max unpooling at the
torch level (kiln/_ops.py, issue 16 batch 7): F.max_pool3d (values and
indices), F.avg_pool3d, F.adaptive_avg/max_pool3d, F.adaptive_max_pool1d/2d/
3d with return_indices, F.max_unpool1d/2d/3d and their nn modules, on the
`eager` (interpreter) and `cpu` backends against eager PyTorch; their
gradients (AOT graphs: avg_pool3d_backward, max_pool3d_with_indices_backward,
adaptive_max_pool2d/3d_backward) against PyTorch's; and the inputs PyTorch
1.13 refuses (max pooling of integers, int avg_pool3d) refused with its
message."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]


def R(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


def check(fn, *args, backend, exact=False):
    want = fn(*args)
    got = kiln.compile(fn, backend=backend, fullgraph=True)(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        assert g.shape == w.shape, (i, g.shape, w.shape)
        if not w.dtype.is_floating_point:
            assert torch.equal(g, w), (i, g, w)
        else:
            tol = 0 if exact else 1e-5
            torch.testing.assert_close(g, w, rtol=tol, atol=tol,
                                       equal_nan=True)


MAX3D = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    ((2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2), True),
    (3, 1, 1, 1, False),                        # overlapping windows
    ((1, 2, 3), (1, 3, 2), 0, (2, 1, 1), True),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", MAX3D, ids=str)
@pytest.mark.parametrize("shape", [(2, 2, 5, 6, 7), (3, 4, 5, 6)], ids=str)
def test_max_pool3d(backend, params, shape):
    k, s, p, d, c = params

    def f(x):
        r = F.max_pool3d(x, k, s, p, d, c, return_indices=True)
        return F.max_pool3d(x, k, s, p, d, c), r[0], r[1]
    check(f, R(*shape), backend=backend, exact=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool3d_nan_inf_ties_f64(backend):
    x = R(1, 2, 4, 4, 4, dtype=torch.float64)
    x[0, 0, 0, 0, 1] = math.nan
    x[0, 0, 2:, 2:, 2:] = 1.0                     # ties: the first wins
    x[0, 1, :2, :2, :2] = -math.inf
    x[0, 1, 3, 3, 3] = math.inf

    def f(x):
        r = F.max_pool3d(x, 2, return_indices=True)
        return r[0], r[1]
    check(f, x, backend=backend, exact=True)


AVG3D = [  # kernel, stride, padding, ceil_mode, count_include_pad
    (2, None, 0, False, True),
    ((2, 3, 2), (2, 2, 1), (1, 1, 0), True, False),
    ((3, 2, 2), 1, (1, 0, 1), False, True),
    (3, 2, 1, True, True),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", AVG3D, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_avg_pool3d(backend, params, dtype):
    k, s, p, c, cip = params
    check(lambda x: F.avg_pool3d(x, k, s, p, c, cip), R(2, 3, 5, 6, 7,
                                                          dtype=dtype),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", AVG3D + [
    ((1, 2, 3), (1, 2, 2), (0, 1, 1), True, False),
    ((2, 1, 1), (3, 1, 1), 0, True, True),     # ceil_mode windows at the end
], ids=str)
@pytest.mark.parametrize("dov", [None, 3, -2], ids=str)
def test_avg_pool3d_int64_and_divisor_override(backend, params, dov):
    # int64 (PyTorch divides the integer sum once, truncating toward zero:
    # negative sums included) and divisor_override: the window sums divided
    # once by PyTorch's 3-D divisor (issue 16 batch 8).
    k, s, p, c, cip = params
    g = torch.Generator().manual_seed(5)
    xi = torch.randint(-50, 50, (2, 3, 5, 6, 7), generator=g)
    check(lambda x: F.avg_pool3d(x, k, s, p, c, cip, dov), xi,
          backend=backend)
    check(lambda x: F.avg_pool3d(x, k, s, p, c, cip, dov), xi[0],
          backend=backend)                     # unbatched
    if dov is not None:
        check(lambda x: F.avg_pool3d(x, k, s, p, c, cip, dov),
              R(2, 3, 5, 6, 7, dtype=torch.float64), backend=backend)
        m = nn.AvgPool3d(k, s, p, c, cip, dov)
        check(m, R(1, 2, 4, 5, 6), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_avg_pool3d_int64_wraps(backend):
    # Sums past 2**63 wrap, as PyTorch's int64 accumulation.
    x = torch.full((1, 1, 2, 2, 2), 2 ** 62, dtype=torch.int64)
    x[0, 0, 0, 0, 0] = 3
    check(lambda x: F.avg_pool3d(x, 2), x, backend=backend)
    check(lambda x: F.avg_pool3d(x, 2, divisor_override=1), x,
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_avg_pool3d_divisor_override_gradient(backend):
    # make_fx/AOT: aten.avg_pool3d_backward with divisor_override.
    for args in [(2, None, 0, False, True, 3), ((2, 3, 2), (2, 2, 1),
                                                 (1, 1, 0), True, False, 5)]:
        fn = lambda x: F.avg_pool3d(x, *args)   # noqa: E731
        x = R(2, 2, 5, 6, 7, dtype=torch.float64).requires_grad_()
        xr = x.detach().clone().requires_grad_()
        w = R(*fn(xr).shape, dtype=torch.float64, seed=1)
        out = kiln.compile(fn, backend=backend)(x)
        (out * w).sum().backward()
        (fn(xr) * w).sum().backward()
        torch.testing.assert_close(x.grad, xr.grad)
        # The ATen converter of avg_pool3d_backward (a make_fx graph).
        from torch.fx.experimental.proxy_tensor import make_fx

        def t3(v):
            return [v] * 3 if isinstance(v, int) else list(v or [])

        def bwd(x, w):
            return torch.ops.aten.avg_pool3d_backward(
                w, x, t3(args[0]), t3(args[1]), t3(args[2]), *args[3:])
        gm = make_fx(bwd)(xr.detach(), w)
        got = kiln.compile(gm, backend=backend, fullgraph=True)(
            xr.detach(), w)
        torch.testing.assert_close(got, xr.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pool3d_modules(backend):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.mp = nn.MaxPool3d(2, stride=(1, 2, 2), return_indices=True)
            self.ap = nn.AvgPool3d((2, 2, 3), padding=1, ceil_mode=True)
            self.aap = nn.AdaptiveAvgPool3d((2, None, 3))
            self.amp = nn.AdaptiveMaxPool3d(3, return_indices=True)

        def forward(self, x):
            v, i = self.mp(x)[0], self.mp(x)[1]
            a = self.amp(x)
            return v, i, self.ap(x), self.aap(x), a[0], a[1]
    check(M(), R(2, 3, 5, 6, 7), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("out", [2, (3, 4, 2), (5, 1, 7), (1, 1, 1)],
                         ids=str)
def test_adaptive_pool3d(backend, out):
    def f(x):
        r = F.adaptive_max_pool3d(x, out, return_indices=True)
        return F.adaptive_avg_pool3d(x, out), r[0], r[1]
    check(f, R(2, 2, 5, 6, 7), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [
    (1, (2, 3, 7), 4), (1, (3, 7), 7), (1, (2, 3, 5), 8),
    (2, (2, 3, 7, 5), (3, 4)), (2, (3, 6, 4), (3, 2)),
    (2, (1, 2, 5, 5), (7, 1)),                      # output > input
], ids=str)
def test_adaptive_max_pool_indices(backend, case):
    nd, shape, out = case
    fn = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d}[nd]

    def f(x):
        r = fn(x, out, return_indices=True)
        return r[0], r[1]
    check(f, R(*shape), backend=backend, exact=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adaptive_max_pool_indices_nan_ties(backend):
    x = torch.zeros(1, 2, 5, 7)
    x[0, 0, 1, 2] = math.nan
    x[0, 1, 4, 6] = 3.0

    def f(x):
        r = F.adaptive_max_pool2d(x, (2, 3), return_indices=True)
        return r[0], r[1]
    check(f, x, backend=backend, exact=True)


def _nan_ties(*shape, seed=0):
    # Several NaN per window (PyTorch's kernels take the last one: a NaN
    # takes over the running max), ties of numbers (the first one wins),
    # windows of -inf only and windows without NaN.
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-2, 3, shape, generator=g).to(torch.float64)
    flat = x.view(-1)
    n = flat.numel()
    pick = torch.randperm(n, generator=g)
    flat[pick[: n // 4]] = math.nan
    flat[pick[n // 4: n // 4 + n // 8]] = -math.inf
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_pool_indices_several_nan(backend, seed):
    x4 = _nan_ties(2, 3, 7, 8, seed=seed)
    x5 = _nan_ties(2, 2, 5, 6, 7, seed=seed)
    x3 = _nan_ties(2, 3, 11, seed=seed)

    def f2(x):
        a = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        c = F.max_pool2d(x, (2, 3), (1, 2), 0, (2, 1), True,
                         return_indices=True)
        d = F.adaptive_max_pool2d(x, (3, 5), return_indices=True)
        return a + c + d
    check(f2, x4, backend=backend, exact=True)

    def f3(x):
        a = F.max_pool3d(x, 2, return_indices=True)
        c = F.max_pool3d(x, (2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2),
                         True, return_indices=True)
        d = F.adaptive_max_pool3d(x, (2, 4, 3), return_indices=True)
        return a + c + d
    check(f3, x5, backend=backend, exact=True)

    def f1(x):
        return (F.max_pool1d(x, 3, 2, 1, return_indices=True)
                + F.adaptive_max_pool1d(x, 4, return_indices=True))
    check(f1, x3, backend=backend, exact=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_indices_several_nan_aten(backend):
    # The ATen converters (make_fx graphs): max_pool2d/3d_with_indices,
    # adaptive_max_pool2d/3d.
    from torch.fx.experimental.proxy_tensor import make_fx
    x4 = _nan_ties(2, 3, 7, 8, seed=3)
    x5 = _nan_ties(2, 2, 5, 6, 7, seed=4)

    def f(x4, x5):
        return (F.max_pool2d(x4, 3, 2, 1, return_indices=True)
                + F.adaptive_max_pool2d(x4, (3, 5), return_indices=True)
                + F.max_pool3d(x5, 2, return_indices=True)
                + F.adaptive_max_pool3d(x5, (2, 4, 3), return_indices=True))
    gm = make_fx(f)(x4, x5)
    got = kiln.compile(gm, backend=backend, fullgraph=True)(x4, x5)
    for g, w in zip(got, f(x4, x5)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_unpool(backend):
    def f1(x):
        r = F.max_pool1d(x, 3, stride=2, return_indices=True)
        return F.max_unpool1d(r[0], r[1], 3, stride=2)

    def f2(x):
        r = F.max_pool2d(x, 2, return_indices=True)
        return (F.max_unpool2d(r[0], r[1], 2),
                F.max_unpool2d(r[0], r[1], 2, output_size=(7, 7)),
                F.max_unpool2d(r[0], r[1], 2, output_size=[2, 3, 7, 6]))

    def f3(x):
        r = F.max_pool3d(x, 2, return_indices=True)
        return F.max_unpool3d(r[0], r[1], 2)
    check(f1, R(2, 3, 9), backend=backend, exact=True)
    check(f2, R(2, 3, 6, 6), backend=backend, exact=True)
    check(f3, R(2, 2, 4, 6, 4), backend=backend, exact=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.p = nn.MaxPool2d(2, return_indices=True)
            self.u = nn.MaxUnpool2d(2)

        def forward(self, x):
            r = self.p(x)
            return self.u(r[0], r[1])
    check(M(), R(3, 4, 6), backend=backend, exact=True)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
@pytest.mark.parametrize("fn", [
    lambda x: F.avg_pool3d(x, (2, 3, 2), (2, 2, 1), (1, 1, 0), True, False),
    lambda x: F.avg_pool3d(x, 3, 1, 1),
    lambda x: F.max_pool3d(x, (2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2),
                           True),
    lambda x: F.max_pool3d(x, 2, 1),               # overlapping windows
    lambda x: F.adaptive_max_pool3d(x, (2, 4, 3)),
    lambda x: F.adaptive_max_pool2d(x[0], (4, 5)),
], ids=["avg", "avg-overlap", "max", "max-overlap", "adaptive-max3d",
        "adaptive-max2d"])
def test_gradients(backend, fn):
    x = R(2, 2, 5, 6, 7, dtype=torch.float64).requires_grad_()
    xr = x.detach().clone().requires_grad_()
    w = R(*fn(xr).shape, dtype=torch.float64, seed=1)
    out = kiln.compile(fn, backend=backend)(x)
    (out * w).sum().backward()
    (fn(xr) * w).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [
    (lambda x: F.max_pool3d(x.long(), 2),
     '"max_pool3d" not implemented for torch.int64'),
    (lambda x: F.avg_pool3d(x.int(), 2),
     '"avg_pool3d" not implemented for torch.int32'),
    (lambda x: F.avg_pool3d(x.short(), 2),
     '"avg_pool3d" not implemented for torch.int16'),
    (lambda x: F.avg_pool3d(x, 2, divisor_override=0),
     "divisor must be not zero"),
    (lambda x: F.max_pool3d(x[0, 0], 2), "max_pool3d expects a 4-D or 5-D "
     "input, got rank 3"),
    (lambda x: F.max_pool3d(x, 2, padding=2),
     "pad should be at most half of effective kernel size"),
    (lambda x: F.max_unpool2d(x[0], x[0].long(), 2, output_size=(20, 20)),
     "max_unpool2d: invalid output_size"),
    # 2-D and 1-D max pooling of integers: a located error at import (it
    # was the kt verifier's error when the module was loaded).
    (lambda x: F.max_pool2d(x[0].long(), 2),
     '"max_pool2d" not implemented for torch.int64'),
    (lambda x: F.max_pool1d(x[0, 0].int(), 2, return_indices=True)[1],
     '"max_pool2d" not implemented for torch.int32'),
], ids=["max-int64", "avg-int32", "avg-int16", "divisor-0", "rank", "pad",
        "unpool-size", "max2d-int64", "max1d-int32"])
def test_refused(backend, case):
    fn, msg = case
    with pytest.raises(kiln.Unsupported) as e:
        kiln.compile(fn, backend=backend, fullgraph=True)(R(2, 2, 4, 4, 4))
    assert msg in str(e.value), str(e.value)
