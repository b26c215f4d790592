"""`isinstance` and `torch.is_tensor` on traced values in the user's code
answer as in eager PyTorch (docs/python.md, "Arguments, outputs and sizes
taken from tensors"). Before, a traced tensor (a torch.fx Proxy) was no
`torch.Tensor`, so `if isinstance(s, torch.Tensor)` silently took the
other branch: a wrong answer, not an error. References: eager PyTorch."""

import builtins
import threading

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]
_ISINSTANCE, _IS_TENSOR = builtins.isinstance, torch.is_tensor


def scale_or_shift(x, s):
    if isinstance(s, torch.Tensor):
        return x * s
    return x + s


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_branch_is_taken_for_a_traced_tensor(backend):
    opt = kiln.compile(scale_or_shift, backend=backend)
    x, s = torch.randn(4), torch.randn(4)
    torch.testing.assert_close(opt(x, s), x * s)
    # A Python number takes the other branch (another program).
    torch.testing.assert_close(opt(x, 2.5), x + 2.5)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_answers_match_eager_for_tensors_sizes_dtypes_and_tuples(backend):
    def f(x, y):
        flags = [
            isinstance(x, torch.Tensor),
            isinstance(x * 2, torch.Tensor),
            isinstance(x, (list, torch.Tensor)),
            isinstance(x, nn.Parameter),
            isinstance(x, (int, float)),
            torch.is_tensor(x),
            torch.is_tensor(y.sum()),
            isinstance(x.shape[0], int),
            isinstance(x.shape, tuple),
            isinstance(x.dtype, torch.dtype),
            isinstance(torch.topk(x, 2), tuple),
        ]
        out = x
        for i, flag in enumerate(flags):
            out = out + (2.0 ** i if flag else 0.0)
        return out

    x, y = torch.randn(5), torch.randn(3)
    torch.testing.assert_close(
        kiln.compile(f, backend=backend, fullgraph=True)(x, y), f(x, y))


class Gated(nn.Module):
    """A mask that may be a tensor or None, and a parameter checked by
    class, as library code writes them."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.gain = nn.Parameter(torch.full((6,), 0.5))
        self.register_buffer("offset", torch.linspace(0, 1, 6))

    def forward(self, x, mask=None):
        h = self.proj(x)
        if isinstance(mask, torch.Tensor):
            h = h.masked_fill(mask, -1.0)
        if isinstance(self.gain, nn.Parameter):
            h = h * self.gain
        if isinstance(self.offset, nn.Parameter):  # a buffer: no
            h = h * 100.0
        return torch.tanh(h) + self.offset


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_with_optional_mask_trains_like_eager(backend):
    torch.manual_seed(0)
    m = Gated()
    ref = Gated()
    ref.load_state_dict(m.state_dict())
    opt = kiln.compile(m, backend=backend)
    x = torch.randn(3, 6)
    mask = torch.rand(3, 6) > 0.5
    for args in ((x, mask), (x,)):
        out, expected = opt(*args), ref(*args)
        torch.testing.assert_close(out, expected)
        out.square().sum().backward()
        expected.square().sum().backward()
        for (n, p), (_, q) in zip(m.named_parameters(),
                                  ref.named_parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=n)
            p.grad = q.grad = None


def test_isinstance_is_restored_and_other_threads_unaffected():
    seen = []
    started, release = threading.Event(), threading.Event()

    def other():
        started.set()
        release.wait(10)
        # Eager code on another thread while this one traces.
        seen.append(isinstance(torch.ones(1), torch.Tensor))
        seen.append(isinstance(3, torch.Tensor))

    t = threading.Thread(target=other)
    t.start()
    started.wait(10)

    def f(x):
        release.set()
        t.join(10)
        return x + 1

    kiln.compile(f, backend="eager")(torch.ones(2))
    assert seen == [True, False]
    assert builtins.isinstance is _ISINSTANCE
    assert torch.is_tensor is _IS_TENSOR


# ------------------------------------ methods of plain (non-module) objects

_SCALER = """
import torch

class Scaler:
    def __init__(self, s):
        self.s = s

    def apply(self, x):
        if isinstance(x, torch.Tensor):
            return x * self.s
        return x + 100.0
"""


def _scaler_module():
    import types
    mod = types.ModuleType("kiln_test_user_scaler")
    exec(_SCALER, mod.__dict__)
    return mod


@pytest.mark.parametrize("backend", ["cpu", "eager"])
def test_isinstance_in_a_method_of_a_module_attribute(backend):
    """`self.helper.apply(x)`, helper a plain object of a class defined in
    another module: that module's isinstance answers for a traced tensor
    (before 2026-11-30 it was False: x + 100 was computed)."""
    Scaler = _scaler_module().Scaler

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.helper = Scaler(2.0)

        def forward(self, x):
            return self.helper.apply(self.lin(x))

    m = M()
    x = torch.randn(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(kiln.compile(m, backend=backend)(x), m(x))


@pytest.mark.parametrize("backend", ["cpu", "eager"])
def test_isinstance_in_a_method_of_a_closure_object(backend):
    scaler = _scaler_module().Scaler(3.0)

    def f(x):
        return scaler.apply(x.sin())

    x = torch.randn(4)
    torch.testing.assert_close(kiln.compile(f, backend=backend)(x), f(x))
