"""Records built from tensors inside a compiled function and returned:
namedtuples and dataclasses (a model's output record, as HuggingFace's
ModelOutput dataclasses). torch.compile returns them with their types;
kiln did not (a dataclass output failed the capture, a namedtuple built from
tensors was a graph break). References are eager PyTorch."""

import collections
import dataclasses
from typing import Optional

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "aot_eager", "cpu"]

Pair = collections.namedtuple("Pair", "act total")


@dataclasses.dataclass
class Output:
    logits: torch.Tensor
    loss: Optional[torch.Tensor] = None
    hidden: tuple = ()
    name: str = "out"


def close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_namedtuple_built_from_tensors(backend):
    def f(x):
        return Pair(x.relu(), x.sum())

    opt = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.randn(3, 4)
    got, want = opt(x), f(x)
    assert type(got) is Pair
    close(got.act, want.act)
    close(got.total, want.total)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataclass_output(backend):
    def f(x, y):
        h = x @ y
        return {"out": Output(h.softmax(-1), hidden=(h, h.relu())),
                "extra": [Output(h.sum(), loss=h.mean(), name="s")]}

    opt = kiln.compile(f, backend=backend, fullgraph=True)
    x, y = torch.randn(2, 3), torch.randn(3, 5)
    got, want = opt(x, y), f(x, y)
    out, extra = got["out"], got["extra"][0]
    assert type(out) is Output and type(extra) is Output
    close(out.logits, want["out"].logits)
    assert out.loss is None and out.name == "out"
    assert isinstance(out.hidden, tuple) and len(out.hidden) == 2
    close(out.hidden[1], want["out"].hidden[1])
    close(extra.loss, want["extra"][0].loss)
    assert extra.name == "s"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x, labels=None):
        logits = self.fc(x)
        loss = None
        if labels is not None:
            loss = -logits.log_softmax(-1).gather(1, labels[:, None]).mean()
        return Output(logits=logits, loss=loss)


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_a_module_returning_a_dataclass(backend):
    torch.manual_seed(0)
    m, ref = Classifier(), Classifier()
    ref.load_state_dict(m.state_dict())
    opt = kiln.compile(m, backend=backend, fullgraph=True)
    x, labels = torch.randn(5, 6), torch.tensor([0, 3, 1, 1, 2])
    got = opt(x, labels)
    want = ref(x, labels)
    assert type(got) is Output
    close(got.loss, want.loss)
    got.loss.backward()
    want.loss.backward()
    close(m.fc.weight.grad, ref.fc.weight.grad)
    close(m.fc.bias.grad, ref.fc.bias.grad)
    # Without labels: loss is None (another key, another program).
    with torch.no_grad():
        out = opt(x)
    assert type(out) is Output and out.loss is None
    close(out.logits, ref(x).logits)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_dataclass_output_after_a_graph_break(backend):
    def f(x):
        y = x * 2
        if y.sum() > 0:  # a graph break
            y = y + 1
        return Output(y, loss=y.mean())

    opt = kiln.compile(f, backend=backend)
    for x in (torch.ones(3), -torch.ones(3)):
        got, want = opt(x), f(x)
        assert type(got) is Output
        close(got.logits, want.logits)
        close(got.loss, want.loss)
    assert kiln.explain(f)(torch.ones(3)).graph_break_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_ordered_dict_output_keeps_its_type(backend):
    def f(x):
        return collections.OrderedDict([("out", x.relu()), ("aux", x.sum())])

    got = kiln.compile(f, backend=backend, fullgraph=True)(torch.randn(3))
    assert type(got) is collections.OrderedDict
    assert list(got) == ["out", "aux"]


RETURN_TYPES = [
    ("max", lambda x: x.max(1)),
    ("min", lambda x: torch.min(x, 0, keepdim=True)),
    ("sort", lambda x: x.sort(-1, descending=True)),
    ("topk", lambda x: torch.topk(x, 2)),
    ("kthvalue", lambda x: x.kthvalue(2, 1)),
    ("aminmax", lambda x: torch.aminmax(x, dim=1)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,fn", RETURN_TYPES,
                         ids=[r[0] for r in RETURN_TYPES])
def test_named_results_are_torch_return_types(backend, name, fn):
    x = torch.randn(3, 5)
    got, want = kiln.compile(fn, backend=backend, fullgraph=True)(x), fn(x)
    assert type(got) is type(want) is getattr(torch.return_types, name)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(got[0], getattr(want, want._fields[0])
                               if hasattr(want, "_fields") else want[0])


def test_return_type_grad_and_graph_break():
    def f(x):
        r = x.max(1)
        if r.values.sum() > 0:  # a graph break
            return r
        return x.min(1)

    x = torch.randn(4, 3, requires_grad=True)
    xr = x.detach().clone().requires_grad_()
    got = kiln.compile(f, backend="cpu")(x)
    want = f(xr)
    assert type(got) is type(want)
    got.values.sum().backward()
    want.values.sum().backward()
    torch.testing.assert_close(x.grad, xr.grad)
