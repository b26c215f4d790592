"""Integer convolutions (issue 16 batch 8, kiln/_ops.py `_int_conv2d`):
F.conv1d/2d/3d on int8/uint8/int16/int32/int64 and F.conv_transpose1d/2d/3d
on int64, as PyTorch 1.13's CPU kernels compute them (products and sums in
the dtype, wrapping on overflow), on the `eager` (interpreter) and `cpu`
backends against eager PyTorch; the dtypes PyTorch refuses (bool; int8 to
int32 for transposed convolutions; mixed dtypes) refused with PyTorch's
message; and the ATen-level aten.convolution of integer tensors."""

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

BACKENDS = ["eager", "cpu"]
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]


def I(*shape, seed=0, lo=-20, hi=20, dtype=torch.int64):
    g = torch.Generator().manual_seed(seed + 7 * sum(shape))
    if dtype == torch.uint8:
        lo = 0
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def check(fn, *args, backend):
    want = fn(*args)
    got = kiln.compile(fn, backend=backend, fullgraph=True)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        got.dtype, want.dtype, got.shape, want.shape)
    assert torch.equal(got, want), (got, want)


CONV2D = [  # x shape, weight shape, bias, stride, padding, dilation, groups
    ((2, 4, 5, 6), (6, 4, 2, 3), False, 1, 0, 1, 1),
    ((2, 4, 7, 6), (6, 2, 3, 2), True, (2, 1), (1, 2), (1, 2), 2),
    ((1, 2, 6, 6), (2, 2, 2, 2), True, 1, 0, 2, 1),
    ((1, 3, 5, 5), (3, 1, 3, 3), False, 2, 1, 1, 3),        # depthwise
    ((4, 5, 6), (2, 4, 3, 3), True, 1, "same", (2, 1), 1),  # unbatched
    ((1, 4, 5, 6), (3, 4, 2, 2), False, 1, "same", 1, 1),   # asymmetric
    ((0, 4, 5, 6), (3, 4, 2, 2), True, 1, 0, 1, 1),         # empty batch
    ((2, 3, 1, 7), (2, 3, 1, 1), True, (1, 3), 0, 1, 1),    # odd shapes
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", CONV2D, ids=str)
def test_conv2d_int64(backend, params):
    xs, ws, bias, s, p, d, g = params
    w = I(*ws, seed=1)
    bv = I(ws[0], seed=2) if bias else None
    check(lambda x: F.conv2d(x, w, bv, s, p, d, g), I(*xs), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_conv_dtypes_wrap(backend, dtype):
    # Large values: the sums overflow int8/uint8/int16 (and int32 with
    # these), which PyTorch wraps.
    big = {torch.int8: 120, torch.uint8: 250, torch.int16: 30000,
           torch.int32: 2 ** 30, torch.int64: 2 ** 62}[dtype]
    x = I(2, 3, 5, 6, lo=big - 10, hi=big, dtype=dtype)
    w = I(4, 3, 2, 2, seed=3, lo=1, hi=9, dtype=dtype)
    bv = I(4, seed=4, lo=0, hi=9, dtype=dtype)
    check(lambda x: F.conv2d(x, w, bv, padding=1), x, backend=backend)
    x1 = I(2, 3, 9, dtype=dtype)
    w1 = I(6, 1, 3, seed=5, dtype=dtype)
    check(lambda x: F.conv1d(x, w1, None, 2, 1, 1, 3), x1, backend=backend)
    if dtype == torch.int64:     # PyTorch dilates int64 only
        check(lambda x: F.conv1d(x, w1, None, 2, 1, 2, 3), x1,
              backend=backend)
    x3 = I(1, 2, 4, 5, 3, dtype=dtype)
    w3 = I(2, 2, 2, 3, 2, seed=6, dtype=dtype)
    check(lambda x: F.conv3d(x, w3, None, (1, 2, 1), 1), x3,
          backend=backend)


CONVT2D = [  # x, weight, bias, stride, padding, output_padding, groups, dil
    ((2, 4, 3, 5), (4, 3, 2, 3), False, 1, 0, 0, 1, 1),
    ((2, 4, 3, 5), (4, 2, 3, 3), True, 2, 1, 1, 2, 1),
    ((1, 2, 4, 3), (2, 3, 3, 2), True, (3, 2), (2, 0), (2, 1), 1, (1, 2)),
    ((2, 4, 4), (2, 1, 3, 3), False, 2, 2, 0, 1, (2, 1)),   # unbatched
    ((2, 2, 1, 1), (2, 2, 1, 1), True, 2, 0, 1, 1, 1),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", CONVT2D, ids=str)
def test_conv_transpose2d_int64(backend, params):
    xs, ws, bias, s, p, op, g, d = params
    w = I(*ws, seed=1)
    bv = I(ws[1] * g, seed=2) if bias else None
    check(lambda x: F.conv_transpose2d(x, w, bv, s, p, op, g, d), I(*xs),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_transpose1d_3d_int64(backend):
    w1 = I(4, 3, 3, seed=1)
    check(lambda x: F.conv_transpose1d(x, w1, None, 2, 1, 1), I(2, 4, 6),
          backend=backend)
    w3 = I(2, 3, 2, 3, 2, seed=2)
    b3 = I(3, seed=3)
    check(lambda x: F.conv_transpose3d(x, w3, b3, (2, 1, 1), (0, 1, 0)),
          I(1, 2, 3, 4, 3), backend=backend)
    big = I(1, 2, 3, 3, lo=2 ** 61, hi=2 ** 61 + 9)
    w2 = I(2, 2, 2, 2, lo=3, hi=9)
    check(lambda x: F.conv_transpose2d(x, w2, stride=2), big,
          backend=backend)


def refused(fn, *args):
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(kiln.Unsupported) as got:
        kiln.compile(fn, backend="eager", fullgraph=True)(*args)
    assert str(want.value) in str(got.value), (str(want.value),
                                               str(got.value))
    assert "test_int_conv.py" in str(got.value)   # located


def test_refused_like_pytorch():
    b = torch.ones(1, 2, 4, 4, dtype=torch.bool)
    refused(lambda x: F.conv2d(x, x[:, :, :2, :2]), b)
    refused(lambda x: F.conv1d(x, x[:, :, :2]), b[0])
    refused(lambda x: F.conv3d(x, x[:, :, :2, :2, :2]), b[None])
    for dt in (torch.int8, torch.int32):
        x = torch.ones(1, 2, 3, 3, dtype=dt)
        w = torch.ones(2, 1, 2, 2, dtype=dt)
        refused(lambda x: F.conv_transpose2d(x, w), x)
        refused(lambda x: F.conv_transpose1d(x, w[..., 0]), x[:, :, 0])
        refused(lambda x: F.conv_transpose3d(x, w[..., None]),
                x[..., None])
    for dt in (torch.uint8, torch.int16, torch.int32):
        x = torch.ones(1, 2, 5, 5, dtype=dt)
        refused(lambda x: F.conv2d(x, x[:, :, :2, :2], dilation=2), x)
        refused(lambda x: F.conv1d(x, x[:, :, 0, :2], dilation=(2,)), x[0])
        w = torch.ones(1, 2, 2, 2, 2, dtype=dt)
        refused(lambda x: F.conv3d(x, w, dilation=(2, 1, 1)),
                torch.ones(1, 2, 5, 5, 5, dtype=dt))
    x = torch.ones(1, 2, 3, 3, dtype=torch.int64)
    refused(lambda x: F.conv2d(x, x[:, :, :2, :2].int()), x)
    refused(lambda x: F.conv2d(x, x[:, :, :2, :2], torch.ones(1)), x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_convolution_int(backend):
    w = I(4, 2, 2, 2, seed=1)
    bv = I(4, seed=2)
    wt = I(4, 2, 3, 3, seed=3)
    x = I(2, 4, 5, 5)

    def f(x):
        return F.conv2d(x, w, bv, 2, 1, 1, 2) + F.conv_transpose2d(
            x, wt, None, 1, 1)[:, :, ::2, ::2].repeat(1, 2, 1, 1)
    gm = make_fx(f)(x)
    got = kiln.compile(gm, backend=backend, fullgraph=True)(x)
    assert torch.equal(got, f(x))
