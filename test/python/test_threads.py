"""Tracing patches process-wide names while it runs (torch.zeros / ones /
empty / full / rand / randn, math.*, and torch.fx's own nn.Module.__call__
and __getattr__). A thread running eager PyTorch while another thread traces
must get the original functions: plain tensors, module calls that run, the
right values (kiln._tracer._active, a thread-local "tracing" flag)."""

import math
import threading

import torch
import torch.nn as nn

import kiln
from kiln import _tracer


def _eager_worker(stop, errors, counts, layer):
    x = torch.ones(1, 4)
    want = layer(x).detach().clone()
    while not stop.is_set():
        try:
            got = {
                "zeros": torch.zeros(2, 3),
                "ones": torch.ones(3),
                "empty": torch.empty(2),
                "full": torch.full((2,), 1.5),
                "rand": torch.rand(2),
                "randn": torch.randn(2),
                "arange": torch.arange(4),
                "layer": layer(x),
            }
            for name, t in got.items():
                if type(t) is not torch.Tensor:
                    errors.append("%s gave a %s" % (name, type(t)))
            if not torch.equal(got["zeros"], torch.tensor([[0.0] * 3] * 2)):
                errors.append("zeros: %s" % got["zeros"])
            if not torch.equal(got["full"], torch.tensor([1.5, 1.5])):
                errors.append("full: %s" % got["full"])
            if not torch.allclose(got["layer"], want):
                errors.append("layer: %s" % got["layer"])
            if math.sqrt(4.0) != 2.0 or type(math.sqrt(4.0)) is not float:
                errors.append("math.sqrt")
        except Exception as e:  # what the other thread's trace leaked
            errors.append(repr(e))
        counts[0] += 1


def test_eager_thread_unaffected_by_tracing():
    torch.manual_seed(0)
    layer = nn.Linear(4, 4)
    inner = nn.Linear(4, 4)
    stop = threading.Event()
    errors, counts = [], [0]
    worker = threading.Thread(target=_eager_worker,
                              args=(stop, errors, counts, layer))
    worker.start()
    traced = 0
    try:
        for i in range(12):
            kiln.reset()

            def f(x):
                # factories with a traced size, math, a module call
                z = torch.zeros(x.shape[0], 4) + torch.ones(4)
                return inner(x) * math.sqrt(2.0) + z + torch.full((4,), 0.5)

            g = kiln.compile(f, backend="eager")
            x = torch.randn(3 + i % 2, 4)
            torch.testing.assert_close(g(x), f(x))
            traced += 1
    finally:
        stop.set()
        worker.join()
    assert traced == 12
    assert counts[0] > 0
    assert errors == [], errors[:5]
    assert _tracer.current_tracer() is None


def test_patched_factories_check_the_thread():
    """While this thread traces (inside the traced function), another
    thread's torch.zeros is the original: checked at the moment the patch
    is in place, not by chance."""
    seen = {}

    def other():
        seen["zeros"] = type(torch.zeros(2))
        seen["tracer"] = _tracer.current_tracer()
        seen["module"] = type(nn.ReLU()(torch.ones(2)))

    def f(x):
        seen["patched"] = torch.zeros is not _tracer._FACTORIES_ORIG
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["here"] = _tracer.current_tracer() is not None
        return x + 1

    _tracer._FACTORIES_ORIG = torch.zeros
    try:
        g = kiln.compile(f, backend="eager")
        x = torch.randn(3)
        torch.testing.assert_close(g(x), x + 1)
    finally:
        del _tracer._FACTORIES_ORIG
    assert seen["patched"] is True   # the patch was in place
    assert seen["here"] is True
    assert seen["zeros"] is torch.Tensor
    assert seen["tracer"] is None
    assert seen["module"] is torch.Tensor
