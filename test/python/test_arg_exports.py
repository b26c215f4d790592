"""The DLPack exports of a compiled module's parameters and buffers are kept
between calls (kiln._capi._ArgExports): each test changes a parameter in a
way a kept export could miss and checks the next call against eager
PyTorch: `.data` assigned (a new tensor; the same memory with other strides,
shape or dtype), `resize_` / `set_`, a parameter replaced, an in-place
update, a buffer assigned; calls from several threads; a compiled module
called again from inside itself (a host callback at a graph break)."""

import pytest
import torch
import torch.nn as nn

import kiln
from helpers import run_in_threads

BACKENDS = ["cpu", "eager"]


def _check(c, m, *xs):
    with torch.no_grad():
        got = c(*xs)
        want = m(*xs)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.fixture(params=BACKENDS)
def backend(request):
    kiln.reset()
    return request.param


def _linear(n=4):
    torch.manual_seed(0)
    return nn.Linear(n, n).eval()


def test_data_assigned_a_new_tensor(backend):
    m = _linear()
    c = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    _check(c, m, x)
    m.weight.data = torch.randn(4, 4)   # same object, other memory
    _check(c, m, x)
    m.bias.data = torch.randn(4)
    _check(c, m, x)


def test_data_assigned_same_memory_other_strides(backend):
    # Same data pointer, same shape, transposed strides: only the strides
    # tell the kept export is stale.
    m = _linear()
    c = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    _check(c, m, x)
    w = m.weight.data
    m.weight.data = w.t()
    assert m.weight.data_ptr() == w.data_ptr()
    _check(c, m, x)


def test_data_assigned_same_memory_other_shape():
    # A bias [4] viewed as [1, 4] broadcasts the same: same pointer and
    # values, another shape; the call recaptures (shapes are guarded) and
    # must read the new view.
    kiln.reset()
    m = _linear()
    c = kiln.compile(m, backend="cpu")
    x = torch.randn(3, 4)
    _check(c, m, x)
    m.bias.data = m.bias.data.view(1, 4)
    _check(c, m, x)


def test_resize_and_set(backend):
    m = _linear()
    c = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    _check(c, m, x)
    with torch.no_grad():
        m.weight.set_(torch.randn(4, 4))
    _check(c, m, x)
    with torch.no_grad():
        # Growing the shared storage reallocates it: the parameter's data
        # pointer moves, the old memory is freed.
        old = m.bias.data_ptr()
        m.bias.data.resize_(1 << 16)
        assert m.bias.data_ptr() != old
        m.bias.copy_(torch.randn(4))
    _check(c, m, x)


def test_parameter_replaced_and_updated_in_place(backend):
    m = _linear()
    c = kiln.compile(m, backend=backend)
    x = torch.randn(3, 4)
    _check(c, m, x)
    m.weight = nn.Parameter(torch.randn(4, 4))
    _check(c, m, x)
    with torch.no_grad():
        m.weight.mul_(-2.0)
        m.bias.add_(1.0)
    _check(c, m, x)


def test_buffer_assigned():
    kiln.reset()
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).eval()
    c = kiln.compile(m, backend="cpu")
    x = torch.randn(2, 3, 8, 8)
    _check(c, m, x)
    bn = m[1]
    bn.running_mean = torch.randn(4)
    bn.running_var.data = torch.rand(4) + 0.5
    _check(c, m, x)


def test_threads_share_a_module():
    kiln.reset()
    m = _linear(16)
    c = kiln.compile(m, backend="cpu")
    xs = [torch.randn(5, 16) for _ in range(8)]
    with torch.no_grad():
        want = [m(x) for x in xs]
        c(xs[0])

    def work(i):
        with torch.no_grad():
            for _ in range(20):
                torch.testing.assert_close(c(xs[i]), want[i])
    run_in_threads(work, 8)


@pytest.mark.parametrize("with_break", [False, True])
def test_compiled_module_inside_compiled_function(with_break):
    # A compiled module called from code kiln captures is inlined into that
    # capture (TorchDynamo's behaviour), with and without a graph break
    # between its calls; its parameters stay live inputs of the outer
    # program (a changed weight is read).
    import warnings
    kiln.reset()
    m = _linear()
    c = kiln.compile(m, backend="cpu")

    def f(x):
        y = c(x)
        if with_break:
            print("", end="")     # a graph break
        return c(y) + 1

    g = kiln.compile(f, backend="cpu")
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        with torch.no_grad():
            for step in range(3):
                torch.testing.assert_close(g(x), m(m(x)) + 1)
                m.weight.mul_(0.5)
            m.weight.data = torch.randn(4, 4)
            torch.testing.assert_close(g(x), m(m(x)) + 1)
            # The compiled module alone still runs its own program.
            torch.testing.assert_close(c(x), m(x))
