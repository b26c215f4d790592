"""torch.special's Bessel and Airy functions (kt.special fn = bessel_j0,
bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0/k1,
scaled_modified_bessel_k0/k1, spherical_bessel_j0, airy_ai; ops12) on both
backends ("eager" is the interpreter, "cpu" compiled code) against
independent references: mpmath at 30 digits in float64 (PyTorch 1.13's own
float64 values are off by up to 4e-7 for bessel_j0/j1/y0/y1 and 3e-6 for
airy_ai on 2 < |x| < 9, so they are the reference only in float32), and
PyTorch for the values at 0, negative x, +-inf and NaN; float16/bfloat16
refused as PyTorch refuses them; integer inputs promote; no gradient (as
PyTorch: the results do not require grad); the ATen overloads through
make_fx; both backends agree bit for bit."""

import math

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

mpmath = pytest.importorskip("mpmath")

BACKENDS = ("eager", "cpu")

S = torch.special
# (name, torch function, mpmath reference, domain: "all" or "pos")
FNS = [
    ("bessel_j0", S.bessel_j0, lambda x: mpmath.besselj(0, x), "all"),
    ("bessel_j1", S.bessel_j1, lambda x: mpmath.besselj(1, x), "all"),
    ("bessel_y0", S.bessel_y0, lambda x: mpmath.bessely(0, x), "pos"),
    ("bessel_y1", S.bessel_y1, lambda x: mpmath.bessely(1, x), "pos"),
    ("modified_bessel_k0", S.modified_bessel_k0,
     lambda x: mpmath.besselk(0, x), "pos"),
    ("modified_bessel_k1", S.modified_bessel_k1,
     lambda x: mpmath.besselk(1, x), "pos"),
    ("scaled_modified_bessel_k0", S.scaled_modified_bessel_k0,
     lambda x: mpmath.besselk(0, x) * mpmath.exp(x), "pos"),
    ("scaled_modified_bessel_k1", S.scaled_modified_bessel_k1,
     lambda x: mpmath.besselk(1, x) * mpmath.exp(x), "pos"),
    ("spherical_bessel_j0", S.spherical_bessel_j0,
     lambda x: mpmath.sin(x) / x, "all"),
    ("airy_ai", S.airy_ai, lambda x: mpmath.airyai(x), "all"),
]
IDS = [f[0] for f in FNS]

# A grid through every algorithm's range and its switch points (17 for
# J/Y, 2 and -8.66 for Ai), small and large magnitudes.
_POS = ([i / 8 for i in range(1, 200)] +
        [10.0 ** e for e in range(-30, 6)] +
        [16.999, 17.0, 17.001, 2.0, 2.001, 25.5, 100.0, 103.8, 700.0,
         710.0, 1234.5, 3e5])
_ALL = _POS + [-x for x in _POS if x < 2000] + [-8.66, -8.6600001]


def _xs(domain):
    return _POS if domain == "pos" else _ALL


def _compile(fn, backend):
    return kiln.compile(lambda *a: fn(*a), backend=backend, fullgraph=True)


def _mp(ref, x):
    mpmath.mp.dps = 30
    return float(ref(mpmath.mpf(x)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,fn,ref,domain", FNS, ids=IDS)
def test_f64_against_mpmath(backend, name, fn, ref, domain):
    xs = _xs(domain)
    if name == "airy_ai":
        xs = [x for x in xs if x < 103.892]
    got = _compile(fn, backend)(torch.tensor(xs, dtype=torch.float64))
    assert got.dtype == torch.float64
    for x, g in zip(xs, got.tolist()):
        w = _mp(ref, x)
        # The oscillating functions are compared at the scale of their
        # envelope (sqrt(2 / (pi x)) for J/Y, |x|^-1/4 / sqrt(pi) for Ai):
        # near a zero the relative error of any double computation grows.
        scale = abs(w)
        if name.startswith(("bessel", "spherical")) and abs(x) > 1:
            scale = max(scale, math.sqrt(2 / (math.pi * abs(x))) * 1e-3)
        if name == "airy_ai" and x < -1:
            scale = max(scale, abs(x) ** -0.25 / math.sqrt(math.pi) * 1e-3)
        # |x| > 1e5: the phase x - pi/4 is rounded (as PyTorch rounds it).
        tol = 1e-9 if abs(x) < 1e5 else 1e-6
        assert abs(g - w) <= tol * scale + 1e-300, (name, x, g, w)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,fn,ref,domain", FNS, ids=IDS)
def test_specials_and_f32_against_torch(backend, name, fn, ref, domain):
    """0, -0, negative x (NaN for Y and K), +-inf (NaN for J, Y and Ai,
    0 for K and spherical j0), NaN, Ai's cut-off at 103.892: PyTorch's
    values exactly; float32 against PyTorch."""
    sp = [0.0, -0.0, -1.0, -30.0, math.inf, -math.inf, math.nan, 1e-30,
          -1e-30, 103.9, 1e20, -1e20]
    x = torch.tensor(sp, dtype=torch.float64)
    want, got = fn(x), _compile(fn, backend)(x)
    assert torch.equal(got.isnan(), want.isnan()), (got, want)
    for g, w in zip(got.tolist(), want.tolist()):
        if math.isnan(w):
            continue
        if w == 0 or math.isinf(w):
            assert g == w and math.copysign(1, g) == math.copysign(1, w), \
                (name, got, want)
        else:
            assert math.isclose(g, w, rel_tol=1e-6), (name, got, want)
    # float32 against PyTorch's float64 rounded (its float32 kernels are
    # off by up to 1.1e-5 near x = 2..8; Kiln computes in double and
    # rounds once).
    x32 = torch.tensor(_xs(domain)[:-3], dtype=torch.float32)
    got32 = _compile(fn, backend)(x32)
    assert got32.dtype == torch.float32
    torch.testing.assert_close(got32, fn(x32.double()).float(),
                               rtol=2e-6, atol=4e-6, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_inputs_and_refused_halves(backend):
    i = torch.tensor([[1, 2, 5], [0, 30, 7]])
    for name, fn, _, _ in FNS:
        torch.testing.assert_close(_compile(fn, backend)(i), fn(i),
                                   rtol=2e-5, atol=2e-6, equal_nan=True)
    for dtype, what in ((torch.float16, "Half"),
                        (torch.bfloat16, "BFloat16")):
        h = torch.ones(3, dtype=dtype)
        with pytest.raises(RuntimeError):
            S.bessel_j0(h)
        with pytest.raises(kiln.Unsupported) as e:
            _compile(S.bessel_j0, backend)(h)
        assert '"bessel_j0_cpu" not implemented for \'%s\'' % what in \
            str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_gradient_as_pytorch(backend):
    """PyTorch's results do not require grad: a loss term through them is
    a constant; Kiln's training path gives the same gradients."""
    w0 = torch.tensor([0.3, 1.7, 4.0], dtype=torch.float64)

    def loss(w):
        return (w * w).sum() + S.bessel_j0(w).sum() + S.airy_ai(w).sum() \
            + S.modified_bessel_k1(w).sum()

    w = w0.clone().requires_grad_()
    loss(w).backward()
    wk = w0.clone().requires_grad_()
    out = _compile(loss, backend)(wk)
    out.backward()
    torch.testing.assert_close(out.detach(), loss(w0))
    torch.testing.assert_close(wk.grad, w.grad)
    torch.testing.assert_close(wk.grad, 2 * w0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_level(backend):
    x = torch.tensor([0.5, 2.0, 9.0, 30.0], dtype=torch.float64)

    def fn(a):
        return tuple(f(a) for _, f, _, _ in FNS)

    gm = make_fx(fn)(x)
    targets = {str(n.target) for n in gm.graph.nodes}
    assert "aten.special_airy_ai.default" in targets
    got = kiln.backend(gm, [x], backend=backend)(x)
    for g, (name, f, ref, _) in zip(got, FNS):
        for xv, gv in zip(x.tolist(), g.tolist()):
            w = _mp(ref, xv)
            assert math.isclose(gv, w, rel_tol=1e-9, abs_tol=1e-15), \
                (name, xv, gv, w)


def test_backends_agree_bitwise():
    torch.manual_seed(7)
    x = torch.randn(301, dtype=torch.float64) * 15
    for dtype in (torch.float64, torch.float32):
        a = x.to(dtype)
        for name, fn, _, _ in FNS:
            r0 = _compile(fn, "eager")(a)
            r1 = _compile(fn, "cpu")(a)
            assert torch.equal(r0.isnan(), r1.isnan()), name
            assert torch.equal(r0.nan_to_num(), r1.nan_to_num()), (name, dtype)
