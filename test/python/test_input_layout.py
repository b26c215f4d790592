"""What a program reads of its tensor inputs besides shape and dtype: how
each is laid out (`is_contiguous()`, and whether a reshape of it is a view
that writes reach) and, in grad mode, whether it requires grad
(`x.requires_grad`). Both are part of the program's key, as TorchDynamo
guards on them: a call with another layout or requires_grad captures
again. Before, a program captured for a contiguous input answered
`is_contiguous()` True for a transposed one, a write through
`x.reshape(-1)` of a transposed input reached the input (PyTorch's reshape
copies), and a program captured for an input without requires_grad kept
that answer for one with it."""

import pytest
import torch

import kiln
from kiln import config

BACKENDS = ["eager", "cpu"]


def _inputs():
    torch.manual_seed(0)
    base = torch.randn(4, 6)
    return [("contiguous", base.clone()),
            ("transposed", base.clone().t()),
            ("sliced", base.clone()[:, 1:5]),
            ("channels_last", torch.randn(2, 3, 4, 5).to(
                memory_format=torch.channels_last)),
            ("contiguous again", base.clone())]


@pytest.mark.parametrize("backend", BACKENDS)
def test_is_contiguous_of_inputs_and_results(backend):
    def f(x):
        a = 2.0 if x.is_contiguous() else 3.0
        b = 5.0 if (x * 2).is_contiguous() else 7.0
        c = 11.0 if x.is_contiguous(memory_format=torch.channels_last) \
            else 13.0
        return x * a + b + c
    cf = kiln.compile(f, backend=backend)
    for name, x in _inputs():
        assert torch.allclose(cf(x), f(x)), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_results_are_not_contiguous(backend):
    def f(x):
        y = x + 1
        k = 0.0
        for i, v in enumerate((y.t(), y[:, 1:], y.expand(2, 4, 6), y)):
            k = k + (10.0 ** i) * v.is_contiguous()
        return y * k
    x = torch.randn(4, 6)
    assert torch.allclose(kiln.compile(f, backend=backend)(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_through_reshape_of_a_transposed_input(backend):
    # PyTorch's reshape of a transposed tensor is a copy: the input keeps
    # its values. Kiln refuses the write (it cannot tell view from copy
    # for every such reshape) instead of writing the input.
    def f(x):
        y = x.reshape(-1)
        y.add_(1)
        return y * 2
    x = torch.randn(4, 6).t()
    want_x = x.clone()
    want = f(want_x.clone())
    with pytest.raises(kiln.Unsupported, match="in-place op on this view"):
        kiln.compile(f, backend=backend)(x)
    assert torch.equal(x, want_x)
    old = config.suppress_errors
    config.suppress_errors = True
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = kiln.compile(f, backend=backend)(x)
    finally:
        config.suppress_errors = old
    assert torch.allclose(got, want) and torch.equal(x, want_x)
    # a contiguous input: the reshape is a view, the write reaches x
    xc = torch.randn(4, 6)
    xe = xc.clone()
    assert torch.allclose(kiln.compile(f, backend=backend)(xc), f(xe))
    assert torch.equal(xc, xe)


@pytest.mark.parametrize("backend", BACKENDS)
def test_requires_grad_read_by_the_program(backend):
    def f(x):
        return x * 2 if x.requires_grad else x * 5
    cf = kiln.compile(f, backend=backend)
    x = torch.randn(3)
    assert torch.allclose(cf(x), x * 5)
    xg = x.clone().requires_grad_()
    y = cf(xg)
    assert torch.allclose(y, x * 2)
    y.sum().backward()
    assert torch.allclose(xg.grad, torch.full((3,), 2.0))
    with torch.no_grad():
        assert torch.allclose(cf(xg), f(xg))
    assert torch.allclose(cf(x), x * 5)


def test_layout_changes_are_recompiles_not_new_failures():
    # One program per layout; the same layout hits.
    calls = []
    cf = kiln.compile(lambda x: x.sin() + 1, backend="cpu")
    x = torch.randn(5, 7)
    for t in (x, x.t(), x.t(), x):
        calls.append(cf(t))
    assert all(torch.allclose(c, t.sin() + 1)
               for c, t in zip(calls, (x, x.t(), x.t(), x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_autograd_state_read_by_python(backend):
    # x.grad, x.grad_fn, x.is_leaf, x._version: graph breaks that read the
    # real tensors (a Proxy is never None: `x.grad is None` was False,
    # x.is_leaf raised a KeyError from the tracer).
    def f(x, w):
        h = x * w
        k = 1.0
        k += 2.0 if w.grad is None else 3.0
        k += 5.0 if h.grad_fn is None else 7.0
        k += 11.0 if h.is_leaf else 13.0
        k += 17.0 if w.is_leaf else 19.0
        k += float(x._version)
        return h * k
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    cf = kiln.compile(f, backend=backend)
    assert torch.allclose(cf(x, w), f(x, w))
    f(x, w).sum().backward()                  # w.grad is set now
    assert torch.allclose(cf(x, w), f(x, w))
    x.add_(1)                                 # x._version moves
    assert torch.allclose(cf(x, w), f(x, w))
    with torch.no_grad():
        assert torch.allclose(cf(x, w), f(x, w))
    wn = torch.randn(3)
    assert torch.allclose(cf(x, wn), f(x, wn))


def test_attribute_missing_in_this_pytorch_raises_attribute_error():
    f = lambda x: x * x.nbytes   # noqa: E731  (no Tensor.nbytes in 1.13)
    x = torch.randn(3)
    if hasattr(x, "nbytes"):
        pytest.skip("this PyTorch has Tensor.nbytes")
    with pytest.raises(AttributeError, match="nbytes"):
        kiln.compile(f, backend="cpu")(x)


def test_sparse_input_is_a_clear_error_or_eager():
    f = lambda a: a * 2   # noqa: E731
    x = torch.randn(3, 3).to_sparse()
    with pytest.raises(kiln.Unsupported, match="sparse_coo tensor argument"):
        kiln.compile(f, backend="cpu")(x)
    old = config.suppress_errors
    config.suppress_errors = True
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = kiln.compile(f, backend="cpu")(x)
    finally:
        config.suppress_errors = old
    assert torch.equal(got.to_dense(), (x * 2).to_dense())
