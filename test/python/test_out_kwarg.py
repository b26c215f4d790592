"""`out=` arguments of torch functions (`torch.add(x, y, out=o)`): the
result is written into `o` as eager PyTorch writes it (same shape: in the
graph, as an in-place write; a tensor of another shape, which PyTorch
resizes, runs eagerly through a graph break), on every backend. The
importer once dropped `out=` silently: `o` kept its old values."""

import warnings

import pytest
import torch

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


def _flat(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _flat(x)]
    return []


def _same(a, b):
    a, b = _flat(a), _flat(b)
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape
        and torch.allclose(x.double(), y.double(), atol=1e-6)
        for x, y in zip(a, b))


def _check(backend, f, make_out, *args):
    torch.manual_seed(0)
    oe, oc = make_out(), make_out()
    ae = [a.clone() for a in args]
    ac = [a.clone() for a in args]
    expected = f(*ae, oe)
    got = kiln.compile(f, backend=backend)(*ac, oc)
    assert _same(oc, oe), (oc, oe)
    assert _same(got, expected), (got, expected)
    assert _same(ac, ae)
    return oc


X = torch.randn(3, 4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_out(backend):
    _check(backend, lambda a, o: torch.add(a, 1.5, out=o),
           lambda: torch.zeros(3, 4), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_then_used(backend):
    # The returned value and later reads of o both see the write.
    def f(a, o):
        r = torch.mul(a, 2, out=o)
        return r + o.sum(), o * 3
    _check(backend, f, lambda: torch.ones(3, 4), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_cast_to_wider_dtype(backend):
    _check(backend, lambda a, o: torch.sub(a, 1, out=o),
           lambda: torch.zeros(3, 4, dtype=torch.float64), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduction_and_tuple_out(backend):
    def f(a, o):
        torch.sum(a, 1, out=o[0])
        torch.max(a, 1, out=(o[1], o[2]))
        return o[0] + o[1]
    _check(backend, f, lambda: (torch.zeros(3), torch.zeros(3),
                                torch.zeros(3, dtype=torch.long)), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_out_and_factory_out(backend):
    def f(a, o):
        torch.matmul(a, a.t(), out=o[0])
        torch.arange(4, out=o[1])
        return o[1] * 2
    _check(backend, f, lambda: (torch.zeros(3, 3),
                                torch.zeros(4, dtype=torch.long)), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_is_an_input_or_a_view(backend):
    def f(a, o):
        torch.mul(a, 2, out=a)          # out aliases the input
        torch.exp(a[0], out=o[1])       # out is a view (a row of o)
        return a.sum() + o.sum()
    _check(backend, f, lambda: torch.zeros(3, 4), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_resized_as_eager(backend):
    # PyTorch resizes an out of another shape (no warning for an empty
    # one): the call runs eagerly, o ends as eager leaves it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = _check(backend, lambda a, o: torch.add(a, 1, out=o),
                   lambda: torch.zeros(0), X)
    assert o.shape == (3, 4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_a_narrower_dtype_raises_as_eager(backend):
    f = lambda a, o: torch.add(a, 1, out=o)  # noqa: E731
    with pytest.raises(RuntimeError, match="can't be cast"):
        f(X, torch.zeros(3, 4, dtype=torch.long))
    o = torch.zeros(3, 4, dtype=torch.long)
    with pytest.raises(RuntimeError, match="can't be cast"):
        kiln.compile(f, backend=backend)(X, o)
    assert not o.any()


def test_out_with_dynamic_sizes():
    f = kiln.compile(lambda a, o: torch.add(a, a, out=o), backend="cpu",
                     dynamic=True)
    for n in (2, 5, 7):
        a = torch.randn(n, 3)
        o = torch.zeros(n, 3)
        f(a, o)
        assert torch.allclose(o, a + a)
