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
    # PyTorch divides the int64 sum once; two 2-D pools would truncate
    # twice (a wrong answer), so Kiln refuses it.
    (lambda x: F.avg_pool3d(x.long(), 2),
     '"avg_pool3d" not implemented for torch.int64'),
    (lambda x: F.avg_pool3d(x, 2, divisor_override=3),
     "avg_pool3d with divisor_override"),
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
], ids=["max-int64", "avg-int32", "avg-int64", "divisor", "rank", "pad",
        "unpool-size", "max2d-int64", "max1d-int32"])
def test_refused(backend, case):
    fn, msg = case
    with pytest.raises(kiln.Unsupported) as e:
        kiln.compile(fn, backend=backend, fullgraph=True)(R(2, 2, 4, 4, 4))
    assert msg in str(e.value), str(e.value)
