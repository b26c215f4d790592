"""Calls whose tensor arguments share memory with one the program writes in
place (f(a, a[0]) writing its second argument; an input and a transposed
view of it). The program was captured for separate tensors: the call runs
eagerly with one KilnWarning (as correct as PyTorch), or raises with
fullgraph=True; calls with separate tensors stay compiled. Before, the
C API refused the call ("shares memory with ref argument")."""

import warnings

import pytest
import torch

import kiln


def write_second(a, b):
    b.add_(1)
    return a.sum()


def write_first(a, b):
    a.mul_(2)
    return b + 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
@pytest.mark.parametrize("fn,make", [
    (write_second, lambda a: (a, a[0])),
    (write_first, lambda a: (a, a.t())),
    (write_first, lambda a: (a, a)),
    (write_second, lambda a: (a[:, 1:], a[:, :2])),
], ids=["select", "transpose", "same", "overlapping-slices"])
def test_aliased_arguments_run_eagerly_and_match(backend, fn, make):
    opt = kiln.compile(fn, backend=backend)
    base = torch.arange(12.0).reshape(3, 4)
    mine, ref = base.clone(), base.clone()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = opt(*make(mine))
        opt(*make(mine.clone()))  # one warning per program
    want = fn(*make(ref))
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(mine, ref)
    msgs = [str(x.message) for x in w if issubclass(x.category,
                                                     kiln.KilnWarning)]
    assert len(msgs) == 1, msgs
    assert "share memory" in msgs[0] and "runs eagerly" in msgs[0]
    assert w[0].filename == __file__
    # Separate tensors: compiled, no warning.
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    pair = make(x)
    sep = [t.clone() for t in pair]
    ref2 = [t.clone() for t in pair]
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        torch.testing.assert_close(opt(*sep), fn(*ref2))
    torch.testing.assert_close(sep[0], ref2[0])


def test_aliased_arguments_with_fullgraph_raise():
    opt = kiln.compile(write_second, backend="eager", fullgraph=True)
    a = torch.zeros(3, 4)
    with pytest.raises(kiln.KilnError, match="share memory"):
        opt(a, a[0])


def test_read_only_aliases_stay_compiled():
    def f(a, b):
        return a + b.sum()

    opt = kiln.compile(f, backend="cpu", fullgraph=True)
    a = torch.randn(3, 4)
    torch.testing.assert_close(opt(a, a[0]), f(a, a[0]))


def write_then_break(a, b):
    a.add_(b)
    if a.sum() > -1e9:      # a graph break on the written value
        a.mul_(2)
    return a.clone()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
@pytest.mark.parametrize("make", [
    lambda t: (t, t), lambda t: (t[:, ::2], t[:, 1::2]),
    lambda t: (t[0], t[1])], ids=["same", "interleaved", "rows"])
def test_aliased_arguments_with_graph_breaks(backend, make):
    # With a graph break the segment's program met the aliased arguments
    # inside the trace and the call failed ("cannot trace ...:
    # _AliasedArguments"); now that segment runs eagerly for the call.
    kiln.reset()
    cf = kiln.compile(write_then_break, backend=backend)
    for _ in range(2):
        t1 = torch.randn(4, 4)
        t2 = t1.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cf(*make(t1))
        want = write_then_break(*make(t2))
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(t1, t2)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
def test_writing_an_expanded_argument_raises_as_eager(backend):
    def f(a, b):
        b.mul_(2)
        return a + b
    kiln.reset()
    cf = kiln.compile(f, backend=backend)
    a, v = torch.randn(3, 3), torch.randn(3)
    with pytest.raises(RuntimeError, match="single memory location"):
        f(a, v.expand(3, 3))
    with pytest.raises(RuntimeError, match="single memory location"):
        cf(a, v.expand(3, 3))
    torch.testing.assert_close(cf(a, v.clone()), f(a, v.clone()))


def clone_after_break(a, b):
    a.add_(b)
    kiln.graph_break()
    return a.clone(), a, b.clone()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
def test_clone_of_an_argument_after_a_break(backend):
    # A segment with no op of its own (x.clone() of a segment's argument)
    # failed: "internal error: a graph result without an op".
    kiln.reset()
    cf = kiln.compile(clone_after_break, backend=backend)
    for _ in range(3):          # the second call replays the segments
        a1, b1 = torch.randn(3), torch.randn(3)
        a2, b2 = a1.clone(), b1.clone()
        got = cf(a1, b1)
        want = clone_after_break(a2, b2)
        torch.testing.assert_close(got, want)
        assert got[1] is a1
        assert got[0].data_ptr() != a1.data_ptr()
        assert got[2].data_ptr() != b1.data_ptr()
