"""Forward hooks and pre-hooks of nn.Modules under kiln.compile, as
nn.Module.__call__ runs them in eager PyTorch. A submodule with hooks runs
eagerly with them at a graph break (real tensors, on every call, so a hook
that records activations records this call's); the compiled module's own
hooks run around its compiled forward; hooks added or removed after the
first call recapture. Before, kiln skipped them: a leaf module's hooks
(Linear, Conv2d) and the root's never ran, a silent wrong answer.
Every result is compared with eager PyTorch on a copy of the model."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn
from torch.nn.modules import module as nn_module

import kiln
from models import BACKENDS



pytestmark = pytest.mark.usefixtures("reset_kiln")


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


def clip_grad_input(mod, grad_input, grad_output):
    return tuple(None if g is None else g.clamp(-0.01, 0.01)
                 for g in grad_input)


def run_backward(model, x):
    x = x.clone().requires_grad_(True)
    model(x).pow(2).sum().backward()
    return x.grad


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "cpu"])
@pytest.mark.parametrize("where", ["submodule", "root"])
def test_full_backward_hook_records_and_edits_gradients(backend, where):
    # register_full_backward_hook: a hook that records the gradients and
    # one that replaces grad_input (clipping) must run on kiln's backward
    # as on eager's. Before, kiln's compiled backward skipped them.
    m = net()
    ref = copy.deepcopy(m)
    seen = {"kiln": [], "eager": []}
    for model, tag in ((m, "kiln"), (ref, "eager")):
        target = model[2] if where == "submodule" else model
        target.register_full_backward_hook(
            lambda mod, gi, go, tag=tag: seen[tag].append(
                [g.clone() for g in go if g is not None]))
        target.register_full_backward_hook(clip_grad_input)
    cm = kiln.compile(m, backend=backend)
    x = torch.randn(6, 4)
    for _ in range(2):
        got = run_backward(cm, x)
        want = run_backward(ref, x)
        torch.testing.assert_close(got, want)
        for (n, p), q in zip(m.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=n)
            p.grad = q.grad = None
    assert len(seen["kiln"]) == len(seen["eager"]) == 2
    for a, b in zip(seen["kiln"], seen["eager"]):
        torch.testing.assert_close(a, b)


def test_backward_hook_added_after_first_call_recaptures():
    m = net()
    ref = copy.deepcopy(m)
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(3, 4)
    torch.testing.assert_close(run_backward(cm, x), run_backward(ref, x))
    for model in (m, ref):
        model[0].register_full_backward_hook(clip_grad_input)
    torch.testing.assert_close(run_backward(cm, x), run_backward(ref, x))


def test_fullgraph_refuses_backward_hooks():
    m = net()
    m[3].register_full_backward_hook(clip_grad_input)
    cm = kiln.compile(m, backend="cpu", fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="backward hooks"):
        cm(torch.randn(2, 4))


@pytest.mark.parametrize("where", ["submodule", "root"])
def test_non_full_backward_hook(where):
    # The deprecated register_backward_hook (a hook on the output's
    # grad_fn): it runs and its replacement gradient is used, as in eager.
    m = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    ref = copy.deepcopy(m)
    calls = {"kiln": 0, "eager": 0}

    def make(tag):
        def hook(mod, gi, go):
            calls[tag] += 1
            return tuple(None if g is None else g * 0.5 for g in gi)
        return hook
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model, tag in ((m, "kiln"), (ref, "eager")):
            target = model[1] if where == "submodule" else model
            target.register_backward_hook(make(tag))
        cm = kiln.compile(m, backend="cpu")
        x = torch.randn(3, 4)
        got, want = run_backward(cm, x), run_backward(ref, x)
    torch.testing.assert_close(got, want)
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    assert calls["kiln"] == calls["eager"] == 1


def test_global_full_backward_hook():
    m = net()
    ref = copy.deepcopy(m)
    cm = kiln.compile(m, backend="cpu")
    x = torch.randn(2, 4)
    run_backward(cm, x)
    names = []
    h = nn_module.register_module_full_backward_hook(
        lambda mod, gi, go: names.append(type(mod).__name__))
    try:
        got = run_backward(cm, x)
        n_kiln = list(names)
        names.clear()
        want = run_backward(ref, x)
    finally:
        h.remove()
    torch.testing.assert_close(got, want)
    assert sorted(n_kiln) == sorted(names) and names, (n_kiln, names)


def tensor_hook_fn(x, w):
    y = torch.tanh(x @ w)
    y.register_hook(lambda g: g.clamp(-0.05, 0.05))   # edits the gradient
    x.register_hook(lambda g: RECORDED.append(g.clone()))  # records it
    return (y * y).sum() + x.sum()


RECORDED = []


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_register_hook_in_compiled_code(backend):
    # Tensor.register_hook inside compiled code: a graph break; the hook
    # runs on the gradient as in eager (on an intermediate and an input),
    # on every call. Before: kiln.Unsupported ("argument of type
    # function").
    torch.manual_seed(5)
    w = torch.randn(4, 3, requires_grad=True)
    cf = kiln.compile(tensor_hook_fn, backend=backend)
    for _ in range(2):
        x = torch.randn(5, 4, requires_grad=True)
        RECORDED.clear()
        cf(x, w).backward()
        got = (x.grad, w.grad, list(RECORDED))
        w.grad = None
        x2 = x.detach().clone().requires_grad_(True)
        RECORDED.clear()
        tensor_hook_fn(x2, w).backward()
        torch.testing.assert_close(got[0], x2.grad)
        torch.testing.assert_close(got[1], w.grad)
        assert len(got[2]) == len(RECORDED) == 1
        torch.testing.assert_close(got[2][0], RECORDED[0])
        w.grad = None
    ex = kiln.explain(tensor_hook_fn, torch.randn(5, 4, requires_grad=True), w)
    assert "Tensor.register_hook()" in str(ex)


def test_fullgraph_refuses_tensor_hooks():
    cf = kiln.compile(tensor_hook_fn, backend="cpu", fullgraph=True)
    with pytest.raises(kiln.Unsupported, match="register_hook"):
        cf(torch.randn(5, 4, requires_grad=True),
           torch.randn(4, 3, requires_grad=True))
