"""torch.autocast("cpu") captured (kiln._autocast).

A compiled function called under `torch.autocast("cpu", dtype=
torch.bfloat16)`, or with an autocast block inside, is captured with
autocast's casts as ops of the program (PyTorch 1.13's CPU policy: products
and convolutions in bfloat16, losses, 3-D pooling, some paddings and the
transposed convolutions in float32, everything else on its arguments'
dtypes); the autocast state is part of the program's key. Before, such a
call ran eagerly (a KilnWarning) and the ops of a block inside were graph
breaks.

References: eager PyTorch under the same autocast (dtypes exactly; values
at bfloat16's tolerance, or for whole models by the `same()` rule against
a float64 run); the policy tables themselves against eager PyTorch's
result dtypes (every entry, and every OpInfo op whose dtype autocast
changes)."""

import sys
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln
from kiln import _autocast, _ops
from models import (fp64_reference, gpt2_block, same, torchvision_model,
                    transformer_layer)

BF16 = torch.bfloat16
AC = dict(device_type="cpu", dtype=BF16)


def autocast():
    return torch.autocast(**AC)


def close(got, want):
    """Equal dtypes; values at bfloat16's resolution (a value computed from
    bfloat16 ones may differ by a rounding of an intermediate: kiln rounds
    a product before adding the bias where oneDNN rounds once), relative to
    the result's magnitude."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        scale = max(1.0, w.detach().double().abs().max().item())
        torch.testing.assert_close(g.detach().double(), w.detach().double(),
                                   rtol=2e-2, atol=2e-2 * scale)


def r(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


# --------------------------------------------------------- single ops

def _w(*s):
    return r(*s, seed=7)


# (name, function, inputs): each runs compiled (backend cpu) and eagerly
# under autocast; dtypes must be equal, values at bfloat16's tolerance.
OPS = [
    ("linear", lambda x, w, b: F.linear(x, w, b), (r(4, 8), _w(6, 8), _w(6))),
    ("mm", lambda a, b: torch.mm(a, b), (r(4, 8), _w(8, 3))),
    ("matmul_method", lambda a, b: a.matmul(b), (r(2, 4, 8), _w(8, 3))),
    ("matmul_op", lambda a, b: a @ b, (r(4, 8), _w(8, 3))),
    ("bmm", lambda a, b: torch.bmm(a, b), (r(2, 4, 8), _w(2, 8, 3))),
    ("addmm", lambda c, a, b: torch.addmm(c, a, b, beta=0.5),
     (_w(4, 3), r(4, 8), _w(8, 3))),
    ("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b), (_w(2, 4, 3), r(2, 4, 8), _w(2, 8, 3))),
    ("einsum", lambda a, b: torch.einsum("bij,jk->bik", a, b),
     (r(2, 4, 8), _w(8, 3))),
    ("tensordot", lambda a, b: torch.tensordot(a, b, 1), (r(4, 8), _w(8, 3))),
    ("multi_dot", lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
     (r(4, 8), _w(8, 5), _w(5, 3))),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1),
     (r(2, 3, 8, 8), _w(4, 3, 3, 3), _w(4))),
    ("conv1d", lambda x, w: F.conv1d(x, w), (r(2, 3, 9), _w(4, 3, 3))),
    # float32 policy (bfloat16 arguments are cast up)
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w),
     (r(1, 3, 5, 5, dtype=BF16), _w(3, 2, 3, 3))),
    ("cross_entropy_bf16", lambda x, t: F.cross_entropy(x, t),
     (r(4, 5, dtype=BF16), torch.tensor([0, 4, 2, 1]))),
    ("mse_bf16", lambda a, b: F.mse_loss(a, b),
     (r(4, 5, dtype=BF16), _w(4, 5))),
    ("l1_bf16", lambda a, b: F.l1_loss(a, b), (r(4, 5, dtype=BF16),
                                               _w(4, 5).to(BF16))),
    ("max_pool3d_bf16", lambda x: F.max_pool3d(x, 2),
     (r(1, 2, 4, 4, 4, dtype=BF16),)),
    ("prod_method_bf16", lambda x: x.prod(1), (r(3, 4, dtype=BF16),)),
    ("pad_reflect_bf16", lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
     (r(1, 2, 4, 4, dtype=BF16),)),
    ("pad_replicate_bf16", lambda x: F.pad(x, (1, 1), mode="replicate"),
     (r(1, 2, 4, dtype=BF16),)),
    ("pad_constant_bf16", lambda x: F.pad(x, (1, 1)),
     (r(1, 2, 4, dtype=BF16),)),
    # other ops follow their arguments: a bfloat16 product, then float32
    ("chain", lambda x, w, y: (F.linear(x, w).relu() + y).softmax(-1),
     (r(4, 8), _w(6, 8), r(4, 6))),
    ("bf16_then_scalar", lambda x, w: F.gelu(x @ w) * 0.5 + 1,
     (r(4, 8), _w(8, 3))),
    # float64 arguments are not cast
    ("mm_f64", lambda a, b: torch.mm(a, b), (r(4, 8, dtype=torch.float64),
                          _w(8, 3).double())),
    # a product of bfloat16 results is bfloat16 again
    ("two_products", lambda a, b, c: (a @ b) @ c,
     (r(4, 8), _w(8, 5), _w(5, 3))),
]


@pytest.mark.parametrize("name,fn,inputs", OPS, ids=[o[0] for o in OPS])
def test_op_under_autocast(name, fn, inputs):
    with autocast():
        want = fn(*inputs)
        got = kiln.compile(fn, backend="cpu", fullgraph=True)(*inputs)
    close(got, want)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
def test_backends(backend):
    fn = dict((o[0], o[1]) for o in OPS)["chain"]
    x, w, y = r(4, 8), _w(6, 8), r(4, 6)
    with autocast():
        want = fn(x, w, y)
        got = kiln.compile(fn, backend=backend, fullgraph=True)(x, w, y)
    assert want.dtype == torch.float32
    close(got, want)


def test_cov_is_a_break():
    def f(x):
        return torch.cov(x.t() @ x) + 1

    x = r(4, 6)
    with autocast():
        want = f(x)
        got = kiln.compile(f, backend="cpu")(x)
        with pytest.raises(kiln.Unsupported, match="torch.cov inside "
                           "torch.autocast"):
            kiln.compile(f, backend="cpu", fullgraph=True)(x)
        text = str(kiln.explain(f)(x))
    close(got, want)
    assert "autocast casts only some of its inner ops" in text


# --------------------------------------------------------- the key

def test_with_and_without_autocast():
    lin = nn.Linear(8, 8)

    def f(x):
        return lin(x).relu() + 1

    c = kiln.compile(f, backend="cpu")
    x = r(4, 8)
    close(c(x), f(x))
    with autocast():
        want = f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # no more eager fallback warning
            got = c(x)
    assert want.dtype == BF16
    close(got, want)
    close(c(x), f(x))                          # the float32 program again
    with autocast():
        close(c(x), want)
    assert len(c._kiln.programs) == 2


def test_block_disabled_inside():
    lin = nn.Linear(8, 8)

    def f(x):
        y = lin(x)
        with torch.autocast("cpu", enabled=False):
            z = lin(x)
        return y, z, y.float() + z

    x = r(4, 8)
    with autocast():
        want = f(x)
        got = kiln.compile(f, backend="cpu", fullgraph=True)(x)
    assert [t.dtype for t in want] == [BF16, torch.float32, torch.float32]
    close(got, want)


LIN = nn.Linear(8, 8)


def inner(x):
    y = x.sin()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = LIN(y) @ y.t()
    return z, z.float().sum() + y.sum()


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_autocast_block_inside(backend):
    x = r(4, 8)
    close(kiln.compile(inner, backend=backend, fullgraph=True)(x), inner(x))
    report = kiln.explain(inner)(x)
    assert report.graph_break_count == 0, str(report)


def test_autocast_block_inside_training():
    x = r(4, 8).requires_grad_(True)
    x2 = x.detach().clone().requires_grad_(True)
    want = inner(x)
    want[1].backward()
    wx, ww = x.grad.clone(), LIN.weight.grad.clone()
    LIN.zero_grad(set_to_none=True)
    got = kiln.compile(inner, backend="cpu", fullgraph=True)(x2)
    got[1].backward()
    close(got, want)
    assert LIN.weight.grad.dtype == torch.float32
    torch.testing.assert_close(x2.grad, wx, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(LIN.weight.grad, ww, rtol=2e-2, atol=2e-2)
    LIN.zero_grad(set_to_none=True)


# --------------------------------------------------------- models

def _model(name):
    if name == "resnet18":
        return torchvision_model("resnet18"), (r(2, 3, 32, 32),)
    if name == "transformer_layer":
        return transformer_layer(), (r(2, 8, 32),)
    if name == "gpt2_block":
        return gpt2_block(), (r(2, 8, 32),)
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                      nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 10), nn.LogSoftmax(-1))
    return m.eval(), (r(2, 3, 8, 8),)


MODELS = ["small_cnn", "resnet18", "transformer_layer", "gpt2_block"]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_model_inference(name, backend):
    model, inputs = _model(name)
    ref64 = fp64_reference(model, *inputs)
    with autocast():
        # (eager under no_grad takes nn.TransformerEncoderLayer's fast path,
        # which fails on bfloat16 in PyTorch 1.13)
        want = model(*inputs).detach()
        with torch.no_grad():
            got = kiln.compile(model, backend=backend)(*inputs)
    assert got.dtype == want.dtype
    # torch._dynamo's same() takes 3x eager's error for bfloat16 results
    ok, msg = same(got.float(), want.float(), ref64.float(),
                   rtol=2e-2, atol=2e-2, multiplier=3.0)
    assert ok, msg


def test_training_step_under_autocast():
    """The usual CPU AMP step: forward and loss under autocast, backward
    and the optimizer outside; parameters after 3 SGD steps."""
    model, (x,) = _model("small_cnn")
    model.train()
    import copy
    ref = copy.deepcopy(model)
    t = torch.tensor([1, 7])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1)
    c = kiln.compile(model, backend="cpu")
    for _ in range(3):
        for m, o, call in ((ref, ropt, ref), (model, opt, c)):
            o.zero_grad()
            with autocast():
                out = call(x)
                loss = F.nll_loss(out, t)
            assert out.dtype == BF16 and loss.dtype == torch.float32
            loss.backward()
            o.step()
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=3e-2, atol=3e-2, msg=n)
    for b, rb in zip(model.buffers(), ref.buffers()):
        torch.testing.assert_close(b, rb, rtol=3e-2, atol=3e-2)


# --------------------------------------------------------- the tables

def _dtype_change(fn, *inputs):
    """(dtype without autocast, dtype under autocast) of fn's result."""
    plain = fn(*inputs)
    with autocast():
        cast = fn(*inputs)
    plain = plain[0] if isinstance(plain, tuple) else plain
    cast = cast[0] if isinstance(cast, tuple) else cast
    return plain.dtype, cast.dtype


MODULE_SAMPLES = {
    nn.Linear: (lambda: nn.Linear(4, 3), (4, 4)),
    nn.Conv1d: (lambda: nn.Conv1d(2, 3, 3), (1, 2, 6)),
    nn.Conv2d: (lambda: nn.Conv2d(2, 3, 3), (1, 2, 6, 6)),
    nn.Conv3d: (lambda: nn.Conv3d(2, 3, 3), (1, 2, 4, 4, 4)),
    nn.ConvTranspose1d: (lambda: nn.ConvTranspose1d(2, 3, 3), (1, 2, 6)),
    nn.ConvTranspose2d: (lambda: nn.ConvTranspose2d(2, 3, 3), (1, 2, 6, 6)),
    nn.ConvTranspose3d: (lambda: nn.ConvTranspose3d(2, 3, 3),
                         (1, 2, 4, 4, 4)),
    nn.MaxPool3d: (lambda: nn.MaxPool3d(2), (1, 2, 4, 4, 4)),
    nn.AvgPool3d: (lambda: nn.AvgPool3d(2), (1, 2, 4, 4, 4)),
    nn.AdaptiveAvgPool3d: (lambda: nn.AdaptiveAvgPool3d(1), (1, 2, 4, 4, 4)),
    nn.AdaptiveMaxPool3d: (lambda: nn.AdaptiveMaxPool3d(1), (1, 2, 4, 4, 4)),
    nn.ReflectionPad1d: (lambda: nn.ReflectionPad1d(1), (1, 2, 4)),
    nn.ReflectionPad2d: (lambda: nn.ReflectionPad2d(1), (1, 2, 4, 4)),
    nn.ReplicationPad1d: (lambda: nn.ReplicationPad1d(1), (1, 2, 4)),
    nn.ReplicationPad2d: (lambda: nn.ReplicationPad2d(1), (1, 2, 4, 4)),
    nn.ReplicationPad3d: (lambda: nn.ReplicationPad3d(1), (1, 2, 4, 4, 4)),
    nn.MSELoss: (lambda: (lambda a: nn.MSELoss()(a, a * 2)), (3, 4)),
    nn.L1Loss: (lambda: (lambda a: nn.L1Loss()(a, a * 2)), (3, 4)),
}


@pytest.mark.parametrize("cls", list(MODULE_SAMPLES),
                         ids=[c.__name__ for c in MODULE_SAMPLES])
def test_module_table_matches_eager(cls):
    """LOWER_MODULES: a float32 input gives bfloat16 under autocast;
    FP32_MODULES: a bfloat16 input gives float32 (PyTorch 1.13 has no
    bfloat16 CPU kernel for most of them: that is why they are there)."""
    make, shape = MODULE_SAMPLES[cls]
    m = make()
    if isinstance(m, nn.Module):
        assert isinstance(m, _autocast.LOWER_MODULES + _autocast.FP32_MODULES)
    if isinstance(m, _autocast.LOWER_MODULES):
        assert _dtype_change(m, r(*shape)) == (torch.float32, BF16)
    else:
        with autocast():
            out = m(r(*shape, dtype=BF16))
        assert out.dtype == torch.float32


def test_modules_not_in_tables_follow_inputs():
    """Modules kiln converts whole that are in neither table compute on
    their input's dtype under autocast (checked for those with float32
    parameters mixed with a bfloat16 input too)."""
    x = r(2, 4, 6, 6, dtype=BF16)
    for m in (nn.BatchNorm2d(4).eval(), nn.MaxPool2d(2), nn.AvgPool2d(2),
              nn.AdaptiveAvgPool2d(1), nn.ReLU(), nn.GELU(), nn.Upsample(
                  scale_factor=2), nn.ReflectionPad3d(1), nn.Softmax(-1)):
        assert not isinstance(m, _autocast.LOWER_MODULES
                              + _autocast.FP32_MODULES)
        assert _dtype_change(m, x) == (BF16, BF16), m


def test_opinfo_ops_match_tables():
    """Every OpInfo op (PyTorch 1.13's op_db) that kiln converts and whose
    result dtype autocast changes in eager PyTorch is in the matching table
    (float32 -> bfloat16: lower; bfloat16 -> float32: fp32) or refused."""
    import opinfo_sweep
    missing = []
    seen = 0
    for op in opinfo_sweep.op_db():
        f = op.op
        name = getattr(f, "__name__", "")
        converted = _ops.function_converter(f) is not None or (
            getattr(f, "__module__", "") == "torch._tensor"
            and name in _ops.METHODS)
        if not converted:
            continue
        sup = op.supported_dtypes("cpu")
        for dt in (torch.float32, BF16):
            if dt not in sup:
                continue
            try:
                samples = list(op.sample_inputs("cpu", dt))[:2]
            except Exception:
                continue
            for s in samples:
                try:
                    plain, cast = _dtype_change(
                        lambda *a: op.op(*a, *s.args, **s.kwargs), s.input)
                except Exception:
                    continue
                if plain == cast or not cast.is_floating_point:
                    continue
                seen += 1
                is_method = getattr(f, "__module__", "") == "torch._tensor"
                lower = (_autocast.LOWER_METHODS if is_method
                         else _autocast.LOWER_FUNCTIONS)
                fp32 = (_autocast.FP32_METHODS if is_method
                        else _autocast.FP32_FUNCTIONS)
                refused = (_autocast.REFUSED_METHODS if is_method
                           else _autocast.REFUSED_FUNCTIONS)
                key = name if is_method else f
                want = lower if cast == BF16 else fp32
                if key not in want and key not in refused:
                    missing.append("%s (%s -> %s)" % (op.name, plain, cast))
                break
    assert seen > 20
    assert not missing, missing
