"""Traced tensors stored into Python objects the trace does not see (a
global list, a dict a forward hook fills, a plain object's attribute, a
global, a closure cell, a list argument): each call of the compiled
function stores real tensors with eager's values (kiln._stores). Before,
the first call left a torch.fx proxy there and later calls stored
nothing."""

import warnings

import pytest
import torch

import kiln

LOG = []
CACHE = {}
LAST = None


class Cfg:
    pass


CFG = Cfg()


def _reset():
    global LAST
    LOG.clear()
    CACHE.clear()
    LAST = None
    CFG.__dict__.clear()


def _store_everywhere(x):
    global LAST
    y = x * 2
    LOG.append(y)
    CACHE["k"] = (y + 1, [y - 1])
    CFG.last = y.relu()
    LAST = y.sum()
    return y.sin()


@pytest.mark.parametrize("dynamic", [None, True])
def test_stores_into_globals_each_call(dynamic):
    _reset()
    f = kiln.compile(_store_everywhere, dynamic=dynamic)
    xs = [torch.randn(3) for _ in range(2)] + [torch.randn(5)]
    outs = [f(x) for x in xs]
    assert len(LOG) == 3
    for x, y, o in zip(xs, LOG, outs):
        assert type(y) is torch.Tensor
        torch.testing.assert_close(y, x * 2)
        torch.testing.assert_close(o, (x * 2).sin())
    x = xs[-1]
    a, (b,) = CACHE["k"]
    torch.testing.assert_close(a, x * 2 + 1)
    torch.testing.assert_close(b, x * 2 - 1)
    torch.testing.assert_close(CFG.last, (x * 2).relu())
    torch.testing.assert_close(LAST, (x * 2).sum())
    # (real tensors: usable outside the trace)
    assert torch.stack(LOG[:2]).shape == (2, 3)


def test_forward_hook_keeps_activations():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                            torch.nn.Linear(8, 2))
    acts = {}

    def hook(mod, inp, out):
        acts["fc1"] = out.detach()

    m[0].register_forward_hook(hook)
    cm = kiln.compile(m)
    for _ in range(3):
        x = torch.randn(5, 4)
        with torch.no_grad():
            got = cm(x)
            want = m(x)
        torch.testing.assert_close(got, want)
        assert type(acts["fc1"]) is torch.Tensor
        torch.testing.assert_close(acts["fc1"], m[0](x).detach())


class _Keeps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.history = []
        self.stats = {}

    def forward(self, x):
        y = torch.tanh(self.lin(x))
        self.history.append(y.detach())
        self.stats["mean"] = y.mean()
        return y * 2


def test_module_attribute_containers_in_training():
    torch.manual_seed(0)
    ref = _Keeps()
    m = _Keeps()
    m.load_state_dict(ref.state_dict())
    cm = kiln.compile(m)
    for _ in range(3):
        x = torch.randn(4, 3)
        cm(x).sum().backward()
        ref(x).sum().backward()
    assert len(m.history) == 3
    for a, b in zip(m.history, ref.history):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(m.stats["mean"], ref.stats["mean"])
    assert m.stats["mean"].requires_grad
    torch.testing.assert_close(m.lin.weight.grad, ref.lin.weight.grad)


def test_nonlocal_cell_and_closure_list():
    seen = []
    out = []
    last = None

    def f(x):
        nonlocal last
        y = x + 1
        last = y
        out.append(y * 3)
        seen.append(y.sum())
        return y

    cf = kiln.compile(f)
    for i in range(2):
        x = torch.full((2,), float(i))
        cf(x)
        assert type(out[-1]) is torch.Tensor
        torch.testing.assert_close(out[-1], (x + 1) * 3)
        torch.testing.assert_close(last, x + 1)
    assert len(out) == len(seen) == 2
    torch.testing.assert_close(seen[1], torch.tensor(4.0))


def test_explain_names_the_store():
    _reset()
    out = kiln.explain(_store_everywhere)(torch.randn(3))
    assert out.graph_break_count == 1
    text = str(out)
    assert "stored into" in text and "LOG[0]" in text, text


def test_fullgraph_refuses_with_the_place():
    _reset()
    f = kiln.compile(_store_everywhere, fullgraph=True)
    with pytest.raises(kiln.Unsupported, match=r"stored into .*LOG\[0\]"):
        f(torch.randn(3))


def test_no_store_no_break():
    """Code that keeps its values to itself stays one graph."""
    items = [1, 2]

    def f(x):
        return x * len(items)

    out = kiln.explain(f)(torch.randn(3))
    assert out.graph_break_count == 0


# ------------------------- containers of tensors passed as arguments

def _appends(x, outs):
    outs.append(x * 2)
    return x + outs[0]


def test_a_changed_argument_container_is_refused():
    """kiln passes the traced code a copy of a list or dict of tensors: a
    change to it would not reach the caller's (before 2026-11-30 it was
    silently lost), so it is refused naming the argument."""
    x = torch.randn(3)
    outs = [torch.ones(3)]
    with pytest.raises(kiln.Unsupported, match="argument 'outs'"):
        kiln.compile(_appends)(x, outs)


def test_a_changed_argument_container_runs_eagerly_with_suppress_errors():
    x = torch.randn(3)
    outs = [torch.ones(3)]
    saved = kiln.config.suppress_errors
    kiln.config.suppress_errors = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = kiln.compile(_appends)(x, outs)
    finally:
        kiln.config.suppress_errors = saved
    torch.testing.assert_close(got, x + 1)
    assert len(outs) == 2
    torch.testing.assert_close(outs[1], x * 2)


def test_writes_into_tensors_of_an_argument_container_and_kwargs():
    """In-place writes to the tensors a container holds reach the caller's
    tensors; `**kwargs` is the function's own dict (changing it is fine)."""
    def f(x, d, **kw):
        d["z"].add_(1)
        m = kw.pop("mask")
        kw["extra"] = m * 2
        return x * m + kw["extra"]

    x = torch.randn(3)
    d1, d2 = {"z": torch.zeros(2)}, {"z": torch.zeros(2)}
    want = f(x, d1, mask=x > 0)
    got = kiln.compile(f)(x, d2, mask=x > 0)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(d2["z"], d1["z"])
