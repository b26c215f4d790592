"""Small real user programs through kiln.compile (issue 12): what user code
does that used to fail to trace. Each runs on the eager, aot_eager and cpu
backends against eager PyTorch (the reference), and trains where it
applies (gradients equal eager's)."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln
from helpers import import_program, run_program

BACKENDS = ["eager", "aot_eager", "cpu"]


@pytest.fixture(autouse=True)
def fresh_config():
    saved = {k: getattr(kiln.config, k) for k in kiln.config.__slots__}
    yield
    for k, v in saved.items():
        setattr(kiln.config, k, v)


def compiles(c):
    """Compiles of each captured program of a compiled function."""
    return sorted(s["compiles"] for s in c._kiln.stats().values())


# --------------------------------------------------------- factories


def zeros_of_shape(x):
    return torch.zeros(x.shape) + x


def new_zeros_of_shape(x):
    return x.new_zeros(x.shape) + x * 2


def ones_of_size(x):
    return torch.ones(x.size(0), 4) * x.sum(1, keepdim=True)


def full_of_shape(x):
    return torch.full(x.shape, 2.5) * x


def zeros_of_tuple(x):
    return torch.zeros((x.shape[0], x.shape[1] * 2))[:, ::2] + x


def empty_then_fill(x):
    return torch.empty(x.size(0), x.size(1)).fill_(3.0) - x


FACTORIES = [zeros_of_shape, new_zeros_of_shape, ones_of_size,
             full_of_shape, zeros_of_tuple, empty_then_fill]


# Every factory on the interpreted backends; two on the cpu backend (its
# compiles are the slow part of this file).
FACTORY_CASES = [(b, f) for f in FACTORIES for b in ("eager", "aot_eager")] \
    + [("cpu", zeros_of_shape), ("cpu", ones_of_size)]


@pytest.mark.parametrize("backend,fn", FACTORY_CASES,
                         ids=["%s-%s" % (b, f.__name__)
                              for b, f in FACTORY_CASES])
def test_factory_with_sizes_from_a_tensor(backend, fn):
    # torch.zeros(x.shape) and friends: the sizes are traced values (a
    # size Proxy is no tuple of ints to PyTorch's argument parser); a new
    # batch recompiles once, then the batch is dynamic (kt.full takes it
    # from tensor.dim of the input; it is not specialized).
    c = kiln.compile(fn, backend=backend, fullgraph=True)
    for n in (3, 5, 7, 2):
        x = torch.randn(n, 4)
        torch.testing.assert_close(c(x), fn(x))
    assert compiles(c) == [2]
    # mark_dynamic: no recompile at all.
    kiln.reset()
    for n in (3, 6):
        x = torch.randn(n, 4)
        kiln.mark_dynamic(x, 0)
        torch.testing.assert_close(c(x), fn(x))
    assert compiles(c) == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_factory_sizes_in_training(backend):
    def f(x, w):
        mask = torch.ones(x.shape[0], 1)
        mask[0] = 0.0
        return (x * w * mask + torch.zeros(x.size(0), w.size(0))).sum()

    c = kiln.compile(f, backend=backend)
    for n in (3, 5, 6):
        x = torch.randn(n, 4)
        w1 = torch.randn(4, requires_grad=True)
        w2 = w1.detach().clone().requires_grad_()
        f(x, w1).backward()
        c(x, w2).backward()
        torch.testing.assert_close(w2.grad, w1.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_tensors_of_sizes_from_a_tensor(backend):
    def f(x):
        return x + torch.rand(x.shape), torch.randn(x.size(0), 3)

    c = kiln.compile(f, backend=backend, fullgraph=True)
    torch.manual_seed(0)
    for n in (4, 9, 300):
        x = torch.zeros(n, 5)
        u, z = c(x)
        assert u.shape == (n, 5) and z.shape == (n, 3)
        assert 0 <= u.min() and u.max() < 1
    # The last (dynamic) draw of 1500 uniforms and 900 normals has the
    # moments of its distribution.
    assert abs(u.mean().item() - 0.5) < 0.05
    assert abs(z.mean().item()) < 0.15 and abs(z.std().item() - 1) < 0.15
    assert compiles(c) == [2]


# ------------------------------------------- outputs: None and containers


def add_into(x, out):
    out.add_(x)


def scale_into(x, out):
    out.mul_(2)
    out += x
    return None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [add_into, scale_into],
                         ids=lambda f: f.__name__)
def test_function_returning_none_that_mutates(backend, fn):
    c = kiln.compile(fn, backend=backend, fullgraph=True)
    for n in (3, 4):
        x = torch.randn(n, 4)
        want = torch.randn(n, 4)
        got = want.clone()
        assert fn(x, want) is None
        assert c(x, got) is None
        torch.testing.assert_close(got, want)


def nested_outputs(x):
    return x + 1, (x * 2, [x.sum(), x.exp()]), {"a": x.relu(), "b": [x]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_containers_as_outputs(backend):
    # Lists and dicts come back as list and dict (not torch.fx's
    # immutable_list / immutable_dict).
    x = torch.randn(3, 4)
    got = kiln.compile(nested_outputs, backend=backend, fullgraph=True)(x)
    want = nested_outputs(x)
    assert type(got[1][1]) is list and type(got[2]) is dict and \
        type(got[2]["b"]) is list
    torch.testing.assert_close(got, want)


# ---------------------------------------------------- inputs and guards


def tuple_in(xs):
    return xs[0] * xs[1]


def list_in(xs):
    return sum(xs)


def dict_in(d):
    return d["x"] * d["scale"] + d["b"]


def keyword_only(x, *, y, scale=2.0):
    return x * scale + y


@pytest.mark.parametrize("backend", BACKENDS)
def test_containers_of_tensors_as_inputs(backend):
    a, b, c3 = (torch.randn(3, 4) for _ in range(3))
    tf = kiln.compile(tuple_in, backend=backend, fullgraph=True)
    torch.testing.assert_close(tf((a, b)), tuple_in((a, b)))
    lf = kiln.compile(list_in, backend=backend, fullgraph=True)
    torch.testing.assert_close(lf([a, b, c3]), list_in([a, b, c3]))
    # Another length is another structure: its own program.
    torch.testing.assert_close(lf([a, b]), list_in([a, b]))
    assert len(lf._kiln.programs) == 2
    df = kiln.compile(dict_in, backend=backend, fullgraph=True)
    for scale in (2.0, 2.0, 3.0):
        d = {"x": a, "scale": scale, "b": b}
        torch.testing.assert_close(df(d), dict_in(d))
    # A Python value inside the dict is guarded on: a new value is a new
    # program (as TorchDynamo specializes it), the same value hits.
    assert len(df._kiln.programs) == 2


class DictLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, batch):
        y = self.lin(batch["x"]) * batch["scale"]
        return {"y": y, "loss": F.mse_loss(y, batch["t"])}


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_with_a_dict_input(backend):
    torch.manual_seed(0)
    m = DictLoss()
    ref = copy.deepcopy(m)
    c = kiln.compile(m, backend=backend)
    for _ in range(2):
        batch = {"x": torch.randn(5, 4), "t": torch.randn(5, 3),
                 "scale": 0.5}
        m.zero_grad()
        ref.zero_grad()
        got, want = c(batch), ref(batch)
        assert type(got) is dict
        torch.testing.assert_close(got, want)
        got["loss"].backward()
        want["loss"].backward()
        torch.testing.assert_close(m.lin.weight.grad, ref.lin.weight.grad)
        torch.testing.assert_close(m.lin.bias.grad, ref.lin.bias.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_only_parameters(backend):
    # torch.fx's own handling of keyword-only parameters rebuilds a code
    # object the pre-3.11 way ("code() argument 13 must be str").
    c = kiln.compile(keyword_only, backend=backend, fullgraph=True)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(c(x, y=y), keyword_only(x, y=y))
    torch.testing.assert_close(c(x, y=y, scale=0.5),
                               keyword_only(x, y=y, scale=0.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_scalars_are_guarded_on(backend):
    def f(x, n, flag):
        return x[:, :n].sum(1) * (2 if flag else 1) + n

    c = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.randn(3, 6)
    for n, flag in ((2, True), (4, True), (2, True), (2, False)):
        torch.testing.assert_close(c(x, n, flag), f(x, n, flag))
    assert len(c._kiln.programs) == 3


# ------------------------------------------------------- real modules


class WhereTopk(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        y = torch.where(y > 0, y, 0.1 * y)
        y = y.masked_fill(x < -1.0, -5.0)
        v, i = torch.topk(y, 3, dim=-1)  # tuple unpacking of a Proxy
        a = torch.argmax(y, dim=-1)
        return v.sum(-1) + a.float() + i.float().mean(-1)


class LSTMWithState(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=batch_first)
        self.out = nn.Linear(12, 3)

    def forward(self, tok, state):
        # LSTM checks hx.size() != expected (tuples of sizes compared).
        h, (hn, cn) = self.lstm(self.emb(tok), state)
        return self.out(h.mean(1 if self.lstm.batch_first else 0)), (hn, cn)


def _lstm_inputs(batch_first):
    tok = torch.randint(0, 50, (3, 7) if batch_first else (7, 3))
    return tok, (torch.randn(2, 3, 12), torch.randn(2, 3, 12))


MODULES = [
    ("where_topk", WhereTopk, lambda: (torch.randn(4, 8),)),
    ("lstm_state_batch_first", lambda: LSTMWithState(True),
     lambda: _lstm_inputs(True)),
    ("lstm_state", lambda: LSTMWithState(False),
     lambda: _lstm_inputs(False)),
]


def _tensors(o):
    from torch.utils._pytree import tree_flatten
    return [t for t in tree_flatten(o)[0] if isinstance(t, torch.Tensor)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,make,inputs", MODULES,
                         ids=[m[0] for m in MODULES])
def test_modules_inference_and_training(backend, name, make, inputs):
    torch.manual_seed(0)
    m = make()
    mk = copy.deepcopy(m)
    c = kiln.compile(mk, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.KilnWarning)
        args = inputs()
        with torch.no_grad():
            torch.testing.assert_close(c(*args), m(*args))
        for _ in range(2):
            args = inputs()
            want, got = m(*args), c(*args)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
            m.zero_grad()
            mk.zero_grad()
            sum(t.pow(2).mean() for t in _tensors(want)
                if t.is_floating_point()).backward()
            sum(t.pow(2).mean() for t in _tensors(got)
                if t.is_floating_point()).backward()
            for (k, p), q in zip(m.named_parameters(), mk.parameters()):
                assert (p.grad is None) == (q.grad is None), k
                if p.grad is not None:
                    torch.testing.assert_close(q.grad, p.grad, rtol=1e-4,
                                               atol=1e-5, msg=k)


def test_shape_comparisons_of_sizes():
    def f(x, y):
        if x.shape == y.shape:
            return x + y
        if x.size() != (x.size(0), 4):
            return x * 0
        return x - 1

    c = kiln.compile(f, backend="eager", fullgraph=True)
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(c(a, b), f(a, b))
    torch.testing.assert_close(c(a, torch.randn(2, 4)), f(a, torch.randn(2, 4)))
    torch.testing.assert_close(c(torch.randn(2, 5), b),
                               f(torch.randn(2, 5), b) * 0)


# --------------------------------- BatchNorm: the program's own check


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_batch_norm_program_refuses_one_value_per_channel(backend):
    # The imported kt.batch_norm_train carries kt.verify_batch_size: run
    # directly in a session (without the frontend's size check), a dynamic
    # batch of 1 with 1x1 spatial dims is the run-time error PyTorch's
    # F.batch_norm raises, not NaN statistics.
    torch.manual_seed(0)
    m = nn.BatchNorm2d(3).train()
    x = torch.randn(4, 3, 1, 1)
    result, _ = import_program(m, x, dynamic_dims={(0, 0)})
    assert "kt.verify_batch_size" in result.text
    s = kiln.Session()
    s.set_option("backend", backend)
    s.load(result.text, "bn.mlir")
    s.mark_dynamic(result.name, 0, 0)  # the batch (argument 0, dim 0)
    outs, _ = run_program(result, [x], m, session=s)
    ref = nn.BatchNorm2d(3).train()
    torch.testing.assert_close(outs[0], ref(x))
    one = torch.randn(1, 3, 1, 1)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm2d(3).train()(one)
    with pytest.raises(kiln.KilnError,
                       match=r"Expected more than 1 value per channel when "
                       r"training, got input size \[1, 3, 1, 1\]"):
        run_program(result, [one], m, session=s)
    # A batch of 1 with more than one spatial value is fine.
    two = torch.randn(1, 3, 1, 2)
    result2, _ = import_program(m, two, dynamic_dims={(0, 0), (0, 3)})
    outs, _ = run_program(result2, [two], m, backend)
    assert torch.isfinite(outs[0]).all()
