"""Forward hooks and pre-hooks of nn.Modules under kiln.compile, as
nn.Module.__call__ runs them in eager PyTorch. A submodule with hooks runs
eagerly with them at a graph break (real tensors, on every call, so a hook
that records activations records this call's); the compiled module's own
hooks run around its compiled forward; hooks added or removed after the
first call recapture. Before, kiln skipped them: a leaf module's hooks
(Linear, Conv2d) and the root's never ran, a silent wrong answer.
Every result is compared with eager PyTorch on a copy of the model."""

import copy

import pytest
import torch
import torch.nn as nn
from torch.nn.modules import module as nn_module

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]


@pytest.fixture(autouse=True)
def _reset():
    kiln.reset()
    yield
    kiln.reset()


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                         nn.Sequential(nn.Linear(8, 8), nn.Tanh()),
                         nn.Linear(8, 3))


def scale_output(mod, inp, out):
    return out * 3


def shift_input(mod, inp):
    return (inp[0] + 1,)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("when", ["before", "after"])
def test_leaf_forward_hook_changes_output(backend, when):
    m, ref = net(), net()
    x = torch.randn(5, 4)
    if when == "before":
        m[0].register_forward_hook(scale_output)
    cm = kiln.compile(m, backend=backend)
    if when == "after":
        cm(x)
        m[0].register_forward_hook(scale_output)
    ref[0].register_forward_hook(scale_output)
    torch.testing.assert_close(cm(x), ref(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pre_hook_and_nested_module_hook(backend):
    m, ref = net(), net()
    for model in (m, ref):
        model[3].register_forward_pre_hook(shift_input)
        model[2].register_forward_hook(scale_output)   # a non-leaf module
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(2, 4)
    torch.testing.assert_close(cm(x), ref(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_recording_hook_sees_every_call(backend):
    m, ref = net(), net()
    seen, seen_ref = [], []
    m[1].register_forward_hook(lambda mod, i, o: seen.append(o.detach()))
    ref[1].register_forward_hook(
        lambda mod, i, o: seen_ref.append(o.detach()))
    cm = kiln.compile(m, backend=backend)
    for _ in range(3):
        x = torch.randn(3, 4)
        torch.testing.assert_close(cm(x), ref(x))
    assert len(seen) == len(seen_ref) == 3
    for a, b in zip(seen, seen_ref):
        assert isinstance(a, torch.Tensor)
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_root_hooks(backend):
    m, ref = net(), net()
    for model in (m, ref):
        model.register_forward_pre_hook(shift_input)
        model.register_forward_hook(scale_output)
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(2, 4)
    torch.testing.assert_close(cm(x), ref(x))


def test_removed_hook_recaptures():
    m, ref = net(), net()
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(2, 4)
    h = m[0].register_forward_hook(scale_output)
    h_ref = ref[0].register_forward_hook(scale_output)
    torch.testing.assert_close(cm(x), ref(x))
    h.remove()
    h_ref.remove()
    torch.testing.assert_close(cm(x), ref(x))


def test_global_forward_hook():
    m, ref = net(), net()
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(2, 4)
    cm(x)
    calls = []

    def hook(mod, inp, out):
        calls.append(type(mod).__name__)
        return out + 1 if isinstance(mod, nn.Linear) else None
    h = nn_module.register_module_forward_hook(hook)
    try:
        got = cm(x)
        n_kiln = len(calls)
        want = ref(x)
    finally:
        h.remove()
    torch.testing.assert_close(got, want)
    assert n_kiln == len(calls) - n_kiln, calls


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_training_through_a_hooked_module(backend):
    m = net()
    ref = copy.deepcopy(m)
    for model in (m, ref):
        model[2].register_forward_hook(scale_output)
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(6, 4)
    cm(x).pow(2).sum().backward()
    ref(x).pow(2).sum().backward()
    for (n, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=n)


def test_fullgraph_refuses_hooks():
    m = net()
    m[0].register_forward_hook(scale_output)
    cm = kiln.compile(m, backend="cpu", fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="forward hooks"):
        cm(torch.randn(2, 4))


def test_function_calling_a_hooked_module():
    m, ref = net(), net()
    for model in (m, ref):
        model[0].register_forward_hook(scale_output)

    def f(x):
        return m(x).sum(-1)
    cf = kiln.compile(f, backend="cpu")
    x = torch.randn(3, 4)
    torch.testing.assert_close(cf(x), ref(x).sum(-1))
