"""Errors the user's own code raises while kiln captures it (`raise
ValueError(...)`, a failed `assert`, input checks of a model's forward)
reach the caller as they are, the exception eager PyTorch raises (as with
torch.compile), not as kiln.Unsupported: on the first call, on a recompile,
after a graph break, from a helper, from torchvision's code, with grad on.
With fullgraph=True the capture's Unsupported error stays; a limit of the
tracer (a torch function given a traced value) stays Unsupported."""

import warnings

import pytest
import torch
import torch.nn as nn

import kiln
from kiln import config


class MyError(Exception):
    def __init__(self, rows):
        super().__init__("bad rows: %d" % rows)
        self.rows = rows


def rows_checked(x):
    if x.shape[0] != 3:
        raise ValueError("want 3 rows, got %d" % x.shape[0])
    return x + 1


def positive(x):
    assert x.sum() > 0, "positive sum wanted"   # a data-dependent break
    return x * 2


def _check_rows(n):
    if n > 4:
        raise MyError(n)


def via_helper(x):
    _check_rows(x.shape[0])
    return x.relu()


@pytest.fixture(autouse=True)
def _fresh():
    kiln.reset()
    yield
    kiln.reset()


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_raise_on_first_call_then_compiles(backend):
    c = kiln.compile(rows_checked, backend=backend)
    with pytest.raises(ValueError, match="want 3 rows, got 4"):
        c(torch.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        torch.testing.assert_close(c(torch.ones(3)), torch.full((3,), 2.0))
    with pytest.raises(ValueError, match="got 5"):
        c(torch.ones(5))    # a recompile for the new shape raises it


def test_assert_after_a_graph_break():
    c = kiln.compile(positive, backend="cpu")
    torch.testing.assert_close(c(torch.ones(3)), torch.full((3,), 2.0))
    with pytest.raises(AssertionError, match="positive sum wanted"):
        c(-torch.ones(3))
    torch.testing.assert_close(c(torch.ones(3)), torch.full((3,), 2.0))


def test_user_exception_class_from_a_helper():
    c = kiln.compile(via_helper, backend="cpu")
    with pytest.raises(MyError) as info:
        c(torch.ones(6, 2))
    assert info.value.rows == 6
    torch.testing.assert_close(c(-torch.ones(2, 2)), torch.zeros(2, 2))


def test_torchvision_input_check():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    m = torchvision.models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=1, num_heads=2,
        hidden_dim=32, mlp_dim=64, num_classes=5).eval()
    c = kiln.compile(m, backend="cpu")
    with torch.no_grad():
        with pytest.raises(AssertionError, match="Wrong image height"):
            c(torch.randn(1, 3, 48, 32))
        x = torch.randn(2, 3, 32, 32)
        torch.testing.assert_close(c(x), m(x), rtol=1e-4, atol=1e-5)


def test_with_grad():
    lin = nn.Linear(3, 3)

    def step(x):
        if x.dim() != 2:
            raise ValueError("2-d input wanted")
        return lin(x).sum()

    c = kiln.compile(step, backend="cpu")
    with pytest.raises(ValueError, match="2-d input wanted"):
        c(torch.ones(3))
    loss = c(torch.ones(2, 3))
    loss.backward()
    assert lin.weight.grad is not None


def test_fullgraph_keeps_unsupported():
    c = kiln.compile(rows_checked, backend="cpu", fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="want 3 rows"):
        c(torch.ones(4))


def test_suppress_errors_gives_the_same_error():
    old = config.suppress_errors
    config.suppress_errors = True
    try:
        c = kiln.compile(rows_checked, backend="cpu")
        with pytest.raises(ValueError, match="want 3 rows"):
            c(torch.ones(4))
    finally:
        config.suppress_errors = old


def test_writes_before_the_error_happen_once():
    # The assert needs x.sum(): a graph break; the first graph (the
    # in-place add) has run when the assert fails, so the call is not run
    # again eagerly: x is written once, as in eager.
    def f(x):
        x.add_(1)
        assert x.sum() > 0, "still negative"
        return x * 2

    c = kiln.compile(f, backend="cpu")
    x = torch.full((3,), -10.0)
    with pytest.raises(AssertionError, match="still negative"):
        c(x)
    torch.testing.assert_close(x, torch.full((3,), -9.0))
    y = torch.full((3,), 1.0)
    torch.testing.assert_close(c(y), torch.full((3,), 4.0))


def test_raise_because_of_the_traced_value():
    # The code raises only because it sees the traced value (eager does
    # not): the capture fails as before (Unsupported by default; the eager
    # result with suppress_errors), never the TypeError eager would not
    # raise.
    def f(x):
        if type(x) is not torch.Tensor:
            raise TypeError("expected a tensor")
        return x + 1

    c = kiln.compile(f, backend="cpu")
    with pytest.raises(kiln.Unsupported, match="expected a tensor"):
        c(torch.ones(2))
    old = config.suppress_errors
    config.suppress_errors = True
    try:
        with pytest.warns(kiln.KilnWarning, match="runs eagerly"):
            torch.testing.assert_close(kiln.compile(f, backend="cpu")(
                torch.ones(2)), torch.full((2,), 2.0))
    finally:
        config.suppress_errors = old


def test_eager_error_is_shown_alone():
    c = kiln.compile(rows_checked, backend="cpu")
    with pytest.raises(ValueError) as info:
        c(torch.ones(4))
    assert info.value.__suppress_context__ or info.value.__context__ is None


def test_tracer_limits_stay_unsupported():
    # torch.tensor of a traced shape raises inside torch at the user's line
    # (a call, not a raise): a limit of the capture, not the user's error.
    def f(x):
        return torch.tensor(x.shape) + x.sum()

    c = kiln.compile(f, backend="cpu")
    with pytest.raises(kiln.Unsupported, match="cannot trace"):
        c(torch.ones(4, 4))
