"""The error policy of kiln.compile per kind of failure, as torch._dynamo's
(docs/python.md, "Errors: what raises and what falls back"):

| failure                       | default        | suppress_errors | fullgraph |
| unsupported op                | graph break    | graph break     | raises    |
| capture failure               | raises         | eager + warning | raises    |
| backend / compiler failure    | raises         | eager + warning | raises    |
| the user's own error          | raises         | raises (eager)  | raises    |

Every case is a small user program run against eager PyTorch."""

import warnings

import pytest
import torch

import kiln
from kiln import _capi

MODES = ["default", "suppress_errors", "fullgraph", "fullgraph+suppress"]


@pytest.fixture(autouse=True)
def _restore_config():
    kiln.reset()
    yield
    kiln.config.suppress_errors = False
    kiln.reset()


def _compile(fn, mode, **kw):
    kiln.config.suppress_errors = "suppress" in mode
    return kiln.compile(fn, fullgraph="fullgraph" in mode, **kw)


def _kiln_warnings(record):
    return [str(w.message) for w in record
            if issubclass(w.category, kiln.KilnWarning)]


def unsupported_op(x):
    return torch.fix(x) + 1


def cannot_capture(x):
    # torch.tensor of a traced shape: the capture fails (not a graph break)
    return torch.tensor(x.shape) + x.sum()


def shape_bug(x):
    return x @ torch.ones(3, 3)


def plain(x):
    return torch.relu(x) * 2 + 1


def with_break(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
@pytest.mark.parametrize("mode", MODES)
def test_unsupported_op_is_a_graph_break(backend, mode):
    x = torch.rand(4, 4) + 0.5
    g = _compile(unsupported_op, mode, backend=backend)
    if "fullgraph" in mode:
        with pytest.raises(kiln.Unsupported,
                           match=r"test_error_policy.py:\d+:\d+: no Kiln "
                                 r"conversion for torch.fix"):
            g(x)
        return
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        torch.testing.assert_close(g(x), unsupported_op(x))
    assert _kiln_warnings(record) == []


@pytest.mark.parametrize("mode", MODES)
def test_capture_failure(mode):
    x = torch.randn(4, 4)
    g = _compile(cannot_capture, mode, backend="eager")
    if mode != "suppress_errors":
        with pytest.raises(kiln.Unsupported) as info:
            g(x)
        # the user's line, and what the traced Python raised
        assert "test_error_policy.py:%d" % (
            cannot_capture.__code__.co_firstlineno + 2) in str(info.value)
        assert "cannot trace cannot_capture" in str(info.value)
        return
    with pytest.warns(kiln.KilnWarning) as record:
        out = g(x)
    torch.testing.assert_close(out, cannot_capture(x))
    msg = _kiln_warnings(record)[0]
    # the function, its source line, the reason
    assert "cannot_capture (%s:%d) runs eagerly" % (
        __file__, cannot_capture.__code__.co_firstlineno) in msg, msg
    assert "cannot trace" in msg
    # not captured again for this key: no second warning
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        torch.testing.assert_close(g(x), cannot_capture(x))
    assert _kiln_warnings(again) == []


@pytest.mark.parametrize("mode", MODES)
def test_backend_compile_failure(mode):
    """A real compiler failure: the session's pipeline names no pass."""
    x = torch.randn(5)
    g = _compile(plain, mode, backend="eager",
                 options={"pipeline": "kiln-no-such-pass"})
    if mode != "suppress_errors":
        with pytest.raises(kiln.KilnError, match="kiln-no-such-pass"):
            g(x)
        return
    with pytest.warns(kiln.KilnWarning,
                      match=r"plain \(.*test_error_policy.py:\d+\) runs "
                            r"eagerly: .*kiln-no-such-pass"):
        out = g(x)
    torch.testing.assert_close(out, plain(x))


@pytest.mark.parametrize("fn", [plain, with_break], ids=["whole", "breaks"])
@pytest.mark.parametrize("mode", ["default", "suppress_errors"])
def test_internal_error_in_a_program(monkeypatch, fn, mode):
    """An internal error of a compiled program's run (the C API reporting
    a failing pass), in a function without and with graph breaks: raises,
    or with suppress_errors runs that call eagerly."""
    def failing(self, *args, **kwargs):
        raise kiln.KilnError("error: a pass failed (simulated)")
    x = torch.randn(6)
    g = _compile(fn, mode, backend="eager")
    monkeypatch.setattr(_capi.Session, "call", failing)
    if mode == "default":
        with pytest.raises(kiln.KilnError, match="a pass failed"):
            g(x)
        return
    with pytest.warns(kiln.KilnWarning, match="runs eagerly: .*a pass "
                                              "failed"):
        out = g(x)
    torch.testing.assert_close(out, fn(x))


@pytest.mark.parametrize("mode", MODES)
def test_user_error_raises_in_every_mode(mode):
    """An error of the program itself (eager raises it too) is never
    hidden: suppress_errors runs the function eagerly, which raises
    PyTorch's own error; the others raise kiln's, which is a RuntimeError
    naming the user's line."""
    x = torch.randn(4, 4)
    with pytest.raises(RuntimeError) as eager:
        shape_bug(x)
    g = _compile(shape_bug, mode, backend="eager")
    with pytest.raises(RuntimeError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g(x)
    if mode == "suppress_errors":
        assert str(info.value) == str(eager.value)
    else:
        assert isinstance(info.value, kiln.KilnError)
        assert "test_error_policy.py:%d" % (
            shape_bug.__code__.co_firstlineno + 1) in str(info.value)
        assert "cannot be multiplied" in str(info.value)
