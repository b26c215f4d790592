"""torch.autocast("cpu") and compiled code.

Kiln does not capture autocast's casts yet. Before, a compiled function
called under `torch.autocast("cpu", dtype=torch.bfloat16)`, or with an
autocast block inside, computed in float32 where eager computes linear,
matmul and convolution in bfloat16 (results of another dtype and other
values, silently). Now a call made under autocast runs eagerly (one
KilnWarning; fullgraph=True raises), and the ops of an autocast block
inside the traced code are graph breaks that run eagerly under autocast.
References: eager PyTorch under the same autocast."""

import warnings

import pytest
import torch
import torch.nn as nn

import kiln

torch.manual_seed(0)
LIN = nn.Linear(8, 8)
CONV = nn.Conv2d(3, 4, 3)


def outer(x):
    return LIN(x).relu() + 1


def inner(x):
    y = x.sin()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = LIN(y) @ y.t()
    return z, z.float().sum() + y.sum()


def check(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_call_under_autocast_runs_eagerly(backend):
    x = torch.randn(4, 8)
    f = kiln.compile(outer, backend=backend)
    check(f(x), outer(x))                    # captured, float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = outer(x)
        with pytest.warns(kiln.KilnWarning, match="autocast"):
            got = f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # one warning per function
            got2 = f(x)
    assert want.dtype == torch.bfloat16
    check(got, want)
    check(got2, want)
    check(f(x), outer(x))                    # the program again


def test_call_under_autocast_fullgraph_raises():
    f = kiln.compile(outer, backend="cpu", fullgraph=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(kiln.Unsupported, match="autocast"):
            f(torch.randn(4, 8))


def test_module_under_autocast():
    m = kiln.compile(nn.Sequential(CONV, nn.ReLU()), backend="cpu")
    x = torch.randn(2, 3, 8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = CONV(x).relu()
        with pytest.warns(kiln.KilnWarning, match="autocast"):
            got = m(x)
    check(got, want)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_autocast_block_inside(backend):
    x = torch.randn(4, 8)
    check(kiln.compile(inner, backend=backend)(x), inner(x))
    text = str(kiln.explain(inner)(x))
    assert 'inside torch.autocast("cpu", dtype=torch.bfloat16)' in text
    with pytest.raises(kiln.Unsupported, match="autocast"):
        kiln.compile(inner, backend=backend, fullgraph=True)(x)


def test_autocast_block_inside_training():
    x = torch.randn(4, 8, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    want = inner(x)
    want[1].backward()
    wx, ww = x.grad.clone(), LIN.weight.grad.clone()
    LIN.weight.grad = None
    got = kiln.compile(inner, backend="cpu")(x2)
    got[1].backward()
    check(got, want)
    torch.testing.assert_close(x2.grad, wx)
    torch.testing.assert_close(LIN.weight.grad, ww)
    LIN.zero_grad(set_to_none=True)
