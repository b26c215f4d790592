"""int8, uint8 and int16 tensors through kiln.compile (the FX importer, the
C API's DLPack path) on every backend, against eager PyTorch: inputs of each
dtype, constants, `.to(dtype)` and the dtype methods (`.byte()`, `.char()`,
`.short()`), wrap-around, uint8's unsigned comparisons and division, and
sums promoting to int64."""

import pytest
import torch

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]
DTYPES = [torch.int8, torch.uint8, torch.int16]


def inputs(dtype):
    info = torch.iinfo(dtype)
    a = torch.tensor([[info.min, info.max, 0, 1], [info.max - 1, 2, 100, 7],
                      [info.min + 1, 3, 5, 9]], dtype=dtype)
    b = torch.tensor([[1, 1, 3, 2], [2, 200 if dtype == torch.uint8 else -2,
                                     7, 3], [5, 4, 9, 2]], dtype=dtype)
    return a, b


def arith(a, b):
    return (a + b, a - b, a * b, a // b, a % b, a > b, torch.maximum(a, b),
            torch.minimum(a, b), a.sum(), a.sum(1), a.amax(0), a.argmax(1),
            torch.where(a > b, a, b), torch.cat([a, b]), a.abs(), -a,
            a.float() / 2, a & b, ~a, a + 1)


def casts(a, b):
    return (a.to(torch.float32), a.to(torch.int64), a.to(torch.int8),
            a.to(torch.uint8), a.to(torch.int16), a.byte(), a.char(),
            a.short(), (a.float() * 0.5).to(torch.int16), a == 7,
            a + torch.tensor([3, 100, 7, 1], dtype=torch.int16))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("fn", [arith, casts], ids=lambda f: f.__name__)
def test_small_int_dtypes(backend, dtype, fn):
    a, b = inputs(dtype)
    want = fn(a, b)
    got = kiln.compile(fn, backend=backend, fullgraph=True)(a, b)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        assert torch.equal(g, w), (i, g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint8_named_cases(backend):
    def f(x, y):
        return x + 1, x > y, x.float(), x.sum(), x // y

    x = torch.tensor([255, 200, 100, 0], dtype=torch.uint8)
    y = torch.tensor([1, 100, 200, 3], dtype=torch.uint8)
    got = kiln.compile(f, backend=backend, fullgraph=True)(x, y)
    for g, w in zip(got, f(x, y)):
        assert g.dtype == w.dtype and torch.equal(g, w), (g, w)
    assert got[0].tolist() == [0, 201, 101, 1]
    assert got[1].tolist() == [True, True, False, False]
    assert got[2].tolist() == [255.0, 200.0, 100.0, 0.0]
    assert got[3].item() == 555 and got[3].dtype == torch.int64


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.uint8,
                                   torch.int8, torch.int64, torch.bool])
def test_dtype_predicates_pick_the_branch(backend, dtype):
    # torch.is_signed / Tensor.is_signed / is_complex of a traced value are
    # Python bools from its dtype (torch.is_signed was refused).
    def f(x):
        if torch.is_signed(x) and x.is_signed() and not x.is_complex():
            return x * 2
        return x + 1
    kiln.reset()
    x = torch.full((3,), 3).to(dtype)
    got = kiln.compile(f, backend=backend)(x)
    want = f(x)
    assert got.dtype == want.dtype
    assert torch.equal(got, want)
