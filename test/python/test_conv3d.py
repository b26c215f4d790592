"""3-D convolutions at the torch level (kiln/_ops.py, issue 16 batch 7):
F.conv3d / nn.Conv3d (stride, padding incl. "same"/"valid" and padding
modes, dilation, groups, bias, unbatched input) and F.conv_transpose3d /
nn.ConvTranspose3d (output_padding, forward's output_size), as kD 2-D
convolutions over the depth taps, on the `eager` (interpreter) and `cpu`
backends against eager PyTorch; their gradients (kiln.compile training,
and make_fx graphs with aten.convolution_backward of 3-D convolutions) against
PyTorch's; and the arguments PyTorch refuses."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

BACKENDS = ["eager", "cpu"]


def R(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed + 7 * sum(shape))
    return torch.randn(*shape, generator=g, dtype=dtype)


def check(fn, *args, backend, tol=1e-9):
    want = fn(*args)
    got = kiln.compile(fn, backend=backend, fullgraph=True)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        got.shape, want.shape)
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


CONV = [  # weight shape, bias, stride, padding, dilation, groups
    ((6, 4, 2, 3, 2), False, 1, 0, 1, 1),
    ((6, 2, 3, 2, 2), True, (2, 1, 2), (1, 0, 2), (1, 2, 1), 2),
    ((3, 4, 1, 1, 1), True, 2, 0, 1, 1),
    ((4, 1, 3, 3, 3), False, 1, 1, 1, 4),                  # depthwise
    ((3, 4, 2, 3, 3), True, 1, "same", (2, 1, 1), 1),
    ((3, 4, 2, 2, 3), False, 1, "same", 1, 1),             # asymmetric
    ((3, 4, 2, 2, 2), False, 1, "valid", 1, 1),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", CONV, ids=str)
def test_conv3d(backend, params):
    ws, bias, s, p, d, g = params
    w = R(*ws, seed=1)
    bv = R(ws[0], seed=2) if bias else None
    check(lambda x: F.conv3d(x, w, bv, s, p, d, g), R(2, 4, 5, 6, 7),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv3d_unbatched_f32_and_modules(backend):
    w = R(3, 4, 2, 2, 2, dtype=torch.float32)
    check(lambda x: F.conv3d(x, w), R(4, 5, 6, 7, dtype=torch.float32),
          backend=backend, tol=1e-5)
    for mode in ("zeros", "reflect", "replicate", "circular"):
        m = nn.Conv3d(4, 3, (3, 2, 3), padding=(1, 1, 1), padding_mode=mode,
                      dtype=torch.float64)
        check(m, R(2, 4, 4, 5, 6), backend=backend)


TRANSPOSED = [  # weight shape, bias, stride, padding, output_padding,
    # groups, dilation
    ((4, 3, 2, 2, 2), False, 2, 0, 0, 1, 1),
    ((4, 3, 3, 2, 3), True, (2, 3, 1), (1, 0, 1), (1, 2, 0), 2, (2, 1, 2)),
    ((4, 2, 1, 1, 1), True, 1, 0, 0, 1, 1),
    ((4, 1, 3, 3, 3), False, 2, 1, 1, 4, 1),               # depthwise
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", TRANSPOSED, ids=str)
def test_conv_transpose3d(backend, params):
    ws, bias, s, p, op, g, d = params
    w = R(*ws, seed=1)
    bv = R(ws[1] * g, seed=2) if bias else None
    check(lambda x: F.conv_transpose3d(x, w, bv, s, p, op, g, d),
          R(2, 4, 3, 4, 5), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_transpose3d_module_output_size(backend):
    m = nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1,
                           dtype=torch.float64)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x, output_size=[6, 8, 10])
    check(M(), R(2, 4, 3, 4, 5), backend=backend)
    check(m, R(4, 3, 4, 5), backend=backend)              # unbatched


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
@pytest.mark.parametrize("which", ["conv", "conv-groups", "transposed"])
def test_gradients(backend, which):
    if which == "conv":
        w = R(3, 4, 2, 3, 2, seed=1)
        fn = lambda x, w: F.conv3d(x, w, None, (2, 1, 1), (1, 0, 1))
    elif which == "conv-groups":
        w = R(6, 2, 2, 2, 3, seed=1)
        fn = lambda x, w: F.conv3d(x, w, None, 1, 0, (2, 1, 1), 2)
    else:
        w = R(4, 3, 2, 3, 2, seed=1)
        fn = lambda x, w: F.conv_transpose3d(x, w, None, (2, 1, 2), 1,
                                             (1, 0, 0))
    x = R(2, 4, 5, 4, 6).requires_grad_()
    w = w.requires_grad_()
    xr, wr = x.detach().clone().requires_grad_(), \
        w.detach().clone().requires_grad_()
    out = kiln.compile(fn, backend=backend)(x, w)
    u = R(*out.shape, seed=3)
    (out * u).sum().backward()
    (fn(xr, wr) * u).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad)
    torch.testing.assert_close(w.grad, wr.grad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("transposed", [False, True])
def test_aten_convolution_backward_3d(backend, transposed):
    x = R(2, 4, 5, 4, 6)
    if transposed:
        w, bias = R(4, 3, 2, 3, 2, seed=1), R(6, seed=2)
        fn = lambda x, w, bb: F.conv_transpose3d(x, w, bb, (2, 1, 2), 1,
                                                 (1, 0, 0), 2)
    else:
        w, bias = R(6, 2, 2, 3, 2, seed=1), R(6, seed=2)
        fn = lambda x, w, bb: F.conv3d(x, w, bb, (2, 1, 1), (1, 0, 1),
                                       (1, 1, 2), 2)

    def grads(x, w, bb):
        ins = [t.detach().requires_grad_() for t in (x, w, bb)]
        with torch.enable_grad():
            out = fn(*ins)
            return torch.autograd.grad((out * out.detach().cos()).sum(),
                                       ins)
    gm = make_fx(grads)(x, w, bias)
    assert any("convolution_backward" in str(n.target)
               for n in gm.graph.nodes)
    got = kiln.backend(gm, [x, w, bias], backend=backend)(x, w, bias)
    for g, e in zip(got, grads(x, w, bias)):
        torch.testing.assert_close(g, e)


W = R(3, 4, 2, 2, 2, seed=5)
W3 = R(3, 3, 2, 2, 2, seed=5)
WD = R(3, 4, 7, 2, 2, seed=5)
WT = R(4, 3, 2, 2, 2, seed=5)


@pytest.mark.parametrize("case", [
    (lambda x: F.conv3d(x[0, 0], W), "Expected 4D (unbatched) or 5D "
     "(batched) input to conv3d, but got input of rank 3"),
    (lambda x: F.conv3d(x, W3), "conv3d: expected input with 3 channels"),
    (lambda x: F.conv3d(x, W, stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda x: F.conv3d(x, WD), "conv3d: the output depth would be"),
    (lambda x: F.conv_transpose3d(x, WT, stride=2, output_padding=2),
     "output_padding 2 must be smaller than stride 2 or dilation 1"),
], ids=["rank", "channels", "same-strided", "too-small", "outpad"])
def test_refused(case):
    fn, msg = case
    x = R(2, 4, 5, 4, 6)
    with pytest.raises(Exception):
        fn(x)                                   # PyTorch refuses it too
    with pytest.raises(kiln.Unsupported) as e:
        kiln.compile(fn, backend="eager", fullgraph=True)(x)
    assert msg in str(e.value), str(e.value)
