"""Results of a compiled function are tensors of their own, as eager's
are: values the compiler folds into one buffer (`y * 1.0`, `y + 0.0`,
`y.clone()` are `y`) are copied apart when returned (kiln._capi.Session.
distinct). Before 2026-11-30 they shared memory: a write into one showed
in the other, and after a graph break a later graph's in-place write into
one changed the other's saved value (a wrong weight gradient, found by the
module fuzzer)."""

import pytest
import torch
import torch.nn.functional as F

import kiln


def _folded(x):
    y = x.exp()
    return y, y * 1.0, y + 0.0, y.clone(), y.contiguous()


@pytest.mark.parametrize("grad", [False, True])
def test_equal_results_do_not_share_memory(grad):
    x = torch.randn(4, requires_grad=grad)
    outs = kiln.compile(_folded)(x)
    ptrs = {o.data_ptr() for o in outs[:4]}
    assert len(ptrs) == 4
    with torch.no_grad():
        outs[0].add_(1)
    for o in outs[1:4]:
        torch.testing.assert_close(o, x.detach().exp())


def test_one_value_returned_twice_is_one_tensor():
    """`return y, y`: one tensor twice, as eager."""
    def f(x):
        y = x.exp()
        return y, y
    a, b = kiln.compile(f)(torch.randn(3))
    assert a is b


torch.manual_seed(0)
_LIN = torch.nn.Linear(3, 3)


def _write_after_break(a):
    v0 = a * 1.0
    v2 = v0[v0 > 0.3]          # data-dependent size
    v3 = v2 * 1.0
    v3 = v3 + F.gelu(_LIN(v3))
    v2.mul_(0.0)
    return v3


def _step(a):
    out = _write_after_break(a)
    (out * 1.5).sum().backward()
    return out


@pytest.mark.parametrize("whole", [False, True], ids=["model", "whole-step"])
def test_write_after_a_break_keeps_the_gradient(whole):
    def run(fn):
        a = torch.tensor([0.1, 0.4, 0.9, 0.6, 0.2, 0.1]).requires_grad_()
        _LIN.weight.grad = None
        out = fn(a)
        if not whole:
            (out * 1.5).sum().backward()
        return out.detach(), _LIN.weight.grad.clone(), a.grad.clone()
    fn = _step if whole else _write_after_break
    want = run(fn)
    got = run(kiln.compile(fn))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("backend", ["cpu", "aot_eager"])
def test_output_saved_for_backward_written_in_place_raises(backend):
    """exp's backward reads its output: writing that output in place before
    the backward is autograd's error in eager, and in kiln (the saved value
    is the output tensor itself, one version counter). Before 2026-11-30
    kiln's backward read the written values: a silent wrong gradient."""
    def f(x):
        return x.exp()

    x = torch.randn(3, requires_grad=True)
    y = kiln.compile(f, backend=backend)(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        y.sum().backward()
    # unwritten, the gradient is exp's
    x.grad = None
    kiln.compile(f, backend=backend)(x).sum().backward()
    torch.testing.assert_close(x.grad, x.detach().exp())
