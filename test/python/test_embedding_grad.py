"""Embedding's gradient options: padding_idx (the padding row gets no
gradient) and scale_grad_by_freq (each row's gradient divided by how often
its index occurs), through nn.Embedding and F.embedding, against eager
PyTorch's autograd. The converter once ignored both: the padding row was
trained, and scaled gradients were not scaled."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

IDX = torch.tensor([[0, 2, 0, 3], [2, 2, 1, 7]])


def _weight():
    torch.manual_seed(0)
    return torch.randn(8, 5)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
@pytest.mark.parametrize("kw", [dict(padding_idx=0), dict(padding_idx=-1),
                                dict(scale_grad_by_freq=True),
                                dict(padding_idx=2, scale_grad_by_freq=True)],
                         ids=["pad0", "pad-1", "freq", "pad2+freq"])
def test_functional_embedding_grad(backend, kw):
    w1 = _weight().requires_grad_()
    w2 = _weight().requires_grad_()
    g = torch.randn(2, 4, 5)

    def f(i, w):
        return (F.embedding(i, w, **kw) * g).sum()
    f(IDX, w1).backward()
    kiln.compile(f, backend=backend)(IDX, w2).backward()
    assert torch.allclose(w1.grad, w2.grad, atol=1e-6), (w1.grad, w2.grad)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_module_embedding_trains_as_eager(backend):
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Embedding(8, 5, padding_idx=3,
                                    scale_grad_by_freq=True), nn.Tanh())
    with torch.no_grad():
        m1[0].weight.normal_()   # a nonzero padding row
    m2 = copy.deepcopy(m1)
    c = kiln.compile(m2, backend=backend)
    o1 = torch.optim.SGD(m1.parameters(), lr=0.5)
    o2 = torch.optim.SGD(m2.parameters(), lr=0.5)
    idx = torch.tensor([[3, 1, 1, 4], [3, 3, 0, 1]])
    for _ in range(3):
        for m, o, fn in ((m1, o1, m1), (m2, o2, c)):
            o.zero_grad()
            (fn(idx) ** 2).sum().backward()
            o.step()
    assert torch.allclose(m1[0].weight, m2[0].weight, atol=1e-6)
    # the padding row was never updated
    assert torch.equal(m2[0].weight[3], copy.deepcopy(m1)[0].weight[3])


def test_values_unchanged_and_no_grad_path():
    # inf and nan rows come out as they are (on the gradient path too).
    w = _weight()
    w[0] = float("inf")
    w[2, 1] = float("nan")
    kw = dict(padding_idx=0, scale_grad_by_freq=True)
    f = kiln.compile(lambda i, w: F.embedding(i, w, **kw), backend="cpu")
    want = F.embedding(IDX, w, **kw)
    got = f(IDX, w.clone().requires_grad_())
    assert torch.allclose(got, want, equal_nan=True)
    with torch.no_grad():
        assert torch.allclose(f(IDX, w), want, equal_nan=True)


def test_bad_padding_idx():
    w = _weight()
    f = lambda i, w: F.embedding(i, w, padding_idx=8)   # noqa: E731
    with pytest.raises(AssertionError):
        f(IDX, w)
    with pytest.raises((AssertionError, kiln.KilnError, RuntimeError)):
        kiln.compile(f, backend="cpu", fullgraph=True)(IDX, w)


def test_captured_without_grad_then_called_with_it():
    # One program serves both: the weight's requires_grad is no part of
    # its key, so the gradient options cannot depend on it.
    w = _weight()
    f = kiln.compile(lambda i, w: (F.embedding(i, w, padding_idx=0) ** 2)
                     .sum(), backend="cpu")
    f(IDX, w)
    w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
    (F.embedding(IDX, w1, padding_idx=0) ** 2).sum().backward()
    f(IDX, w2).backward()
    assert torch.allclose(w1.grad, w2.grad, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(padding_idx=0),
                                dict(padding_idx=2, scale_grad_by_freq=True)],
                         ids=["pad0", "pad2+freq"])
def test_aten_graph_through_the_backend_entry(kw):
    # make_fx's aten.embedding carries padding_idx / scale_grad_by_freq;
    # Kiln differentiates the ATen graph itself.
    from torch.fx.experimental.proxy_tensor import make_fx
    w = _weight()

    def f(i, w):
        return (F.embedding(i, w, **kw) ** 2).sum()
    gm = make_fx(f)(IDX, w)
    c = kiln.backend(gm, [IDX, w.clone().requires_grad_()])
    w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
    f(IDX, w1).backward()
    r = c(IDX, w2)
    (r[0] if isinstance(r, (tuple, list)) else r).backward()
    assert torch.allclose(w1.grad, w2.grad, atol=1e-6)
