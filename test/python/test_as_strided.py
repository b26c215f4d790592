"""as_strided with view semantics (issue 16 batch 7, item 3): a strided
read of the storage its input views, where the input is a graph input that
owns its storage contiguously (or a new contiguous result, at the ATen
level) or a chain of view ops of one (slices, select, t/transpose/permute,
view, unsqueeze, expand, split's pieces). The positions are constants: the
view chain replayed on torch.arange of the base, then torch.as_strided of
that. Torch level (Tensor.as_strided, torch.as_strided) and ATen level
(make_fx graphs through kiln.backend), on the `eager` (interpreter) and
`cpu` backends against eager PyTorch; what cannot be read that way is
refused, never a wrong answer."""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

BACKENDS = ["eager", "cpu"]

VIEWS = {
    "contiguous": lambda x: x.as_strided((3, 3), (2, 5), 1),
    "slice": lambda x: x[1:].as_strided((2, 2), (1, 2)),
    "slice-offset": lambda x: x[2:, 1:].as_strided((2, 3), (1, 2), 4),
    "transpose": lambda x: x.t().as_strided((2, 3), (1, 4)),
    "chain": lambda x: x.t()[1:].unsqueeze(0).as_strided((3, 2), (1, 5)),
    "select": lambda x: x[1].as_strided((2, 3), (3, 1), 2),
    "split": lambda x: torch.split(x, 2)[1].as_strided((2, 2), (5, 1)),
    "expand": lambda x: x[:1].expand(3, 5).as_strided((4,), (2,)),
    "overlapping": lambda x: x[1:].as_strided((3, 4), (1, 1)),
    "zero-stride": lambda x: x[3].as_strided((2, 3), (0, 1)),
    "empty": lambda x: x[1:].as_strided((0, 3), (1, 1)),
    "then-ops": lambda x: x[1:].as_strided((2, 2), (1, 2)).exp() * 2,
    "torch.as_strided": lambda x: torch.as_strided(x[:, 1:], (2, 2), (1, 2),
                                                   2),
}


def example():
    return torch.randn(4, 5, generator=torch.Generator().manual_seed(3))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(VIEWS))
def test_torch_level(backend, name):
    fn = VIEWS[name]
    x = example()
    got = kiln.compile(fn, backend=backend, fullgraph=True)(x)
    # Exact reads; "then-ops" computes exp (within an ulp of PyTorch's).
    torch.testing.assert_close(got, fn(x), rtol=1e-6, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", [n for n in VIEWS if n != "empty"])
def test_aten_level(backend, name):
    fn = VIEWS[name]
    x = example()
    gm = make_fx(fn)(x)
    assert any("as_strided" in str(n.target) for n in gm.graph.nodes)
    got = kiln.backend(gm, [x], backend=backend)(x)
    torch.testing.assert_close(got, fn(x), rtol=1e-6, atol=0)


def test_int_and_f64_inputs():
    for x in (torch.arange(20).reshape(4, 5),
              example().double()):
        fn = VIEWS["chain"]
        assert torch.equal(kiln.compile(fn, backend="eager",
                                        fullgraph=True)(x), fn(x))


@pytest.mark.parametrize("case", [
    # A result of a non-view op (eager may keep a transpose's strides).
    (lambda x: x.t().exp().as_strided((2, 2), (1, 2)),
     "neither a graph input owning its storage contiguously nor a chain of "
     "views of one"),
    # A view after an in-place write to its base.
    (lambda x: x.add_(1)[1:].as_strided((2, 2), (1, 2)),
     "nor a chain of views of one"),
    (lambda x: x[1:].as_strided((5, 5), (5, 1)),
     # The offset defaults to the view's own (5).
     "as_strided reads past the end of its input's storage (position 29 of "
     "20)"),
], ids=["non-view", "in-place", "past-end"])
def test_torch_level_refused(case):
    fn, msg = case
    with pytest.raises(kiln.Unsupported) as e:
        kiln.compile(fn, backend="eager", fullgraph=True)(example())
    assert msg in str(e.value), str(e.value)


def test_aten_level_refused():
    x = example()
    # A view of an in-place op's result: refused (conservatively).
    def f(x):
        x.add_(1)
        return x[1:].as_strided((2, 2), (1, 2))
    gm = make_fx(f)(x.clone())
    with pytest.raises(kiln.Unsupported, match="as_strided of a view"):
        kiln.backend(gm, [x.clone()], backend="eager")(x.clone())
