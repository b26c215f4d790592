"""Normalizations of f32 inputs whose sum of squared deviations overflows
f32 (issue 15, fuzz seed 201252): PyTorch 1.13's CPU layer_norm,
batch_norm (training) and group_norm accumulate that sum in float, so past
float's range the variance is inf, 1/sqrt(var + eps) is 0 and the output is
0 (the bias where there is one); torch.var accumulates in double and stays
finite. Kiln's interpreter (`eager`) and CPU backend follow the same rule
(docs/debugging.md, "Normalizations whose variance overflows"); references
are eager PyTorch. Inputs where PyTorch gives NaN instead (rows whose
deviations themselves overflow when squared, an artifact of its vectorized
summation) are not compared."""

import pytest
import torch
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]


def X(scale, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


def check(fn, x, backend):
    want = fn(x)
    got = kiln.compile(fn, backend=backend, fullgraph=True)(x)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        assert not torch.isnan(w).any()       # a case PyTorch computes
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


# 1e15: the sum of squares fits f32 (finite results); 1e18: it does not
# (PyTorch's layer_norm gives zeros) while each square does; 1e19 with
# batch_norm's 37 elements per channel.
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e15, 1e18, 5e18], ids=str)
def test_layer_norm(backend, scale):
    x = X(scale, 2, 24, 37)
    w, b = X(1, 24, 37, seed=1), X(1, 24, 37, seed=2)
    check(lambda x: F.layer_norm(x, [24, 37]), x, backend)
    check(lambda x: F.layer_norm(x, [24, 37], w, b), x, backend)
    check(lambda x: F.layer_norm(x, [37]), x, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e15, 1e18, 1e19], ids=str)
def test_batch_norm_training(backend, scale):
    x = X(scale, 1, 24, 37)
    w, b = X(1, 24, seed=1), X(1, 24, seed=2)
    check(lambda x: F.batch_norm(x, None, None, w, b, training=True), x,
          backend)


# The CPU pipeline's kiln-decompose expansion of kt.var computes in f64 too:
# it squared in f32 before (inf on cpu past 1.8e19 where PyTorch is finite).
@pytest.mark.parametrize("backend", BACKENDS)
def test_var_accumulates_in_double(backend):
    # torch.var (double accumulation) stays finite where the normalizations'
    # float sums overflow: Kiln's kt.var too.
    x = X(1e19, 3, 888)
    check(lambda x: torch.var(x, 1), x, backend)
    check(lambda x: torch.var(x, 1, unbiased=False), x, backend)
    check(lambda x: torch.std(x, 1), X(1e18, 3, 888, seed=3), backend)
    check(lambda x: torch.var(x), x, backend)
    check(lambda x: torch.var_mean(x, 0), x, backend)
    # f16 in, f16 out (computed in f64); a variance past f16's range is inf.
    check(lambda x: torch.var(x, 1), X(1e1, 3, 888).half(), backend)
    check(lambda x: torch.var(x, 1), X(1e3, 3, 888).half(), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_f64_unaffected(backend):
    x = X(1e19, 2, 24, 37).double()
    check(lambda x: F.layer_norm(x, [24, 37]), x, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e15, 1e19], ids=str)
def test_group_norm_aten(backend, scale):
    # aten.native_group_norm (make_fx graphs; F.group_norm has no
    # torch-level converter): 4 groups of 2 * 37 values; at 1e19 a group's
    # m2 passes f32's range (PyTorch: zeros) while its variance does not.
    from torch.fx.experimental.proxy_tensor import make_fx
    x = X(scale, 2, 8, 37)
    w, b = X(1, 8, seed=1), X(1, 8, seed=2)

    def f(x):
        return F.group_norm(x, 4, w, b)
    gm = make_fx(f)(x)
    got = kiln.compile(gm, backend=backend, fullgraph=True)(x)
    want = f(x)
    assert not torch.isnan(want).any()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
