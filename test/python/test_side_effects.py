"""Tensors stored outside the call by the compiled code, and tensors the
compiled code reads from the user's objects. Before these fixes:

* `self.attn = w` (a module keeping its last attention map, or a state)
  left the traced value (a proxy) in the module: the next call failed with
  KeyError inside kiln, and the user's module held a proxy;
* a tensor attribute of a plain object (`cfg.w`), a tensor item of a dict
  that holds other objects too, and a plain tensor attribute of a module
  the compiled function calls through its globals were not guarded:
  assigning another tensor kept the first capture's (silent wrong answer).

Every result is compared with eager PyTorch."""

import types
import warnings

import pytest
import torch
import torch.nn as nn

import kiln
from models import BACKENDS



pytestmark = pytest.mark.usefixtures("reset_kiln")


def twins(cls, *args):
    torch.manual_seed(0)
    a = cls(*args)
    b = cls(*args)
    b.load_state_dict(a.state_dict())
    return a, b


class KeepsAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = None
        self.q = nn.Linear(4, 4)

    def forward(self, x):
        w = torch.softmax(self.q(x) @ x.transpose(-1, -2), -1)
        self.attn = w
        return w @ x


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_stores_computed_tensor(backend):
    a, b = twins(KeepsAttention)
    ca = kiln.compile(a, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            x = torch.randn(2, 3, 4)
            got, want = ca(x), b(x)
            torch.testing.assert_close(got, want)
            assert type(a.attn) is torch.Tensor
            torch.testing.assert_close(a.attn, b.attn)
            # the stored map takes part in autograd, as in eager
            (got.sum() + a.attn.pow(2).sum()).backward()
            (want.sum() + b.attn.pow(2).sum()).backward()
            torch.testing.assert_close(a.q.weight.grad, b.q.weight.grad)
    assert len(ca._kiln.programs) == 1
    info = kiln.explain(a)(torch.randn(2, 3, 4))
    assert any("stored in attribute 'attn' of a KeepsAttention" in str(r)
               for r in info.break_reasons)


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.state = None
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        if self.state is not None:
            x = x + self.state
        y = torch.tanh(self.lin(x))
        self.state = y.detach()
        return y * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("through", ["module", "function"])
def test_state_read_then_written(backend, through):
    a, b = twins(Recurrent)
    if through == "module":
        ca = kiln.compile(a, backend=backend)
    else:
        ca = kiln.compile(lambda x: a(x) + 1, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            x = torch.randn(3)
            with torch.no_grad():
                got = ca(x)
                want = b(x) if through == "module" else b(x) + 1
            torch.testing.assert_close(got, want)
            torch.testing.assert_close(a.state, b.state)
    # the store is a graph break that runs on every call: one capture
    assert len(ca._kiln.programs) == 1


def test_store_refused_under_fullgraph():
    class Rec(nn.Module):
        def forward(self, x):
            self.last = x * 2
            return x + 1
    with pytest.raises(kiln.Unsupported,
                       match=r"test_side_effects.py:\d+:\d+: graph break: a "
                       r"tensor the graph computes is stored in attribute "
                       r"'last' of a Rec"):
        kiln.compile(Rec(), backend="eager", fullgraph=True)(torch.ones(2))


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(3)   # a plain attribute, not a buffer

    def forward(self, x):
        return x * self.mask


CFG = types.SimpleNamespace(w=torch.ones(3))
OPTS = {"w": torch.ones(3), "act": nn.ReLU()}
MASKED = Masked()


def _rebind_cfg(v):
    CFG.w = v


def _rebind_opts(v):
    OPTS["w"] = v


def _rebind_masked(v):
    MASKED.mask = v


CASES = {
    "object attribute": (lambda x: x + CFG.w, _rebind_cfg),
    "dict item": (lambda x: OPTS["act"](x + OPTS["w"]), _rebind_opts),
    "module called by the function": (lambda x: MASKED(x), _rebind_masked),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_tensor_rebound_in_user_object(backend, case):
    fn, rebind = CASES[case]
    cf = kiln.compile(fn, backend=backend)
    x = torch.randn(3)
    try:
        for i in range(3):
            rebind(torch.full((3,), float(i) - 0.5))
            torch.testing.assert_close(cf(x), fn(x))
        rebind(torch.full((3,), 1.5))
        torch.testing.assert_close(cf(x), fn(x))
    finally:
        rebind(torch.ones(3))


LAYER = nn.Linear(4, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_rebound_in_closure_or_global(backend):
    # A compiled function that calls a module through a closure variable
    # or a global, the name then rebound to another module: before, the
    # modules were found once and the first capture kept running (silent:
    # PairwiseDistance(p=3) computed with p=2). Found by op16.
    global LAYER
    a, p = torch.randn(3, 4), torch.randn(3, 4)
    d = nn.PairwiseDistance()
    g = kiln.compile(lambda x, y: d(x, y), backend=backend)
    torch.testing.assert_close(g(a, p), d(a, p))
    d = nn.PairwiseDistance(p=3.0)
    torch.testing.assert_close(g(a, p), d(a, p))
    d.norm = 1.0          # an attribute of the new module is guarded too
    torch.testing.assert_close(g(a, p), d(a, p))

    saved = LAYER
    try:
        h = kiln.compile(lambda x: LAYER(x), backend=backend)
        torch.testing.assert_close(h(a), LAYER(a))
        LAYER = nn.Linear(4, 2)
        torch.testing.assert_close(h(a), LAYER(a))
    finally:
        LAYER = saved
