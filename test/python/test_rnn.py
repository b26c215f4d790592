"""nn.RNN, nn.LSTM and nn.GRU compiled without a graph break: their forward
ends in `_VF.lstm` / `_VF.gru` / `_VF.rnn_tanh` / `_VF.rnn_relu`, which
kiln/_rnn.py unrolls over time into kt ops (docs/python.md, "Recurrent
layers"). References: eager PyTorch (outputs and final states), and
torch.autograd for the gradients of the training path."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn

import kiln

BACKENDS = ["eager", "cpu"]


def close(a, b, tol=1e-5):
    torch.testing.assert_close(a, b, rtol=tol, atol=tol)


def close_tree(a, b, tol=1e-5):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            close_tree(x, y, tol)
    else:
        close(a, b, tol)


def make(kind, **kw):
    torch.manual_seed(0)
    if kind == "rnn_relu":
        return nn.RNN(nonlinearity="relu", **kw)
    return {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[kind](**kw)


CONFIGS = [
    dict(num_layers=1),
    dict(num_layers=2, batch_first=True),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=1, bias=False, batch_first=True, bidirectional=True),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["rnn", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_forward_matches_eager_without_graph_break(backend, kind, cfg):
    kw = dict(CONFIGS[cfg], input_size=5, hidden_size=7)
    m = make(kind, **kw).eval()
    B, T = 3, 4
    x = torch.randn(B, T, 5) if kw.get("batch_first") else \
        torch.randn(T, B, 5)
    opt = kiln.compile(m, backend=backend, fullgraph=True)
    with torch.no_grad():
        close_tree(opt(x), m(x))
        # With an initial state.
        D = 2 if kw.get("bidirectional") else 1
        h0 = torch.randn(kw["num_layers"] * D, B, 7)
        state = (h0, torch.randn_like(h0)) if kind == "lstm" else h0
        close_tree(opt(x, state), m(x, state))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_proj_size_and_unbatched_input(backend):
    m = make("lstm", input_size=4, hidden_size=6, num_layers=2,
             proj_size=3, bidirectional=True).eval()
    opt = kiln.compile(m, backend=backend, fullgraph=True)
    with torch.no_grad():
        x = torch.randn(5, 2, 4)
        out = opt(x)
        assert out[0].shape == (5, 2, 6)
        close_tree(out, m(x))
        # An unbatched sequence [T, I] (the module adds and removes the
        # batch dim around the _VF call).
        u = torch.randn(5, 4)
        close_tree(opt(u), m(u))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float64_and_a_new_sequence_length_recompiles(backend):
    m = make("gru", input_size=3, hidden_size=5, batch_first=True).double()
    m.eval()
    opt = kiln.compile(m, backend=backend)
    with torch.no_grad():
        for T in (6, 2, 6):
            x = torch.randn(2, T, 3, dtype=torch.float64)
            close_tree(opt(x), m(x), 1e-12)
    # Two lengths, two compiles (the length is unrolled, so specialized:
    # the third call hits the first one's entry).
    (prog,) = opt._kiln.programs.values()
    assert prog.stats()["compiles"] == 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_gradients_match_autograd(backend, kind):
    m = make(kind, input_size=4, hidden_size=5, num_layers=2,
             bidirectional=True, batch_first=True).double()
    ref = copy.deepcopy(m)
    opt = kiln.compile(m, backend=backend)
    x = torch.randn(3, 6, 4, dtype=torch.float64, requires_grad=True)
    xr = x.detach().clone().requires_grad_(True)
    out, ref_out = opt(x), ref(xr)
    close_tree(out, ref_out, 1e-10)
    def loss_of(o):
        # The output, and the final state (LSTM: h_n and c_n).
        states = o[1] if kind == "lstm" else (o[1],)
        return (o[0] ** 2).sum() + sum((s * s.cos()).sum() for s in states)

    loss, ref_loss = loss_of(out), loss_of(ref_out)
    loss.backward()
    ref_loss.backward()
    close(x.grad, xr.grad, 1e-10)
    for (n, p), (_, q) in zip(m.named_parameters(), ref.named_parameters()):
        assert p.grad is not None, n
        close(p.grad, q.grad, 1e-10)


def test_sgd_steps_of_a_sequence_classifier_on_cpu():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 6)
            self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True)
            self.head = nn.Linear(8, 3)

        def forward(self, tok, target):
            h, (hn, cn) = self.lstm(self.emb(tok))
            logits = self.head(h[:, -1])
            return nn.functional.cross_entropy(logits, target)

    torch.manual_seed(1)
    model = Net()
    ref = copy.deepcopy(model)
    opt = kiln.compile(model, backend="cpu", fullgraph=True)
    sgds = [torch.optim.SGD(p.parameters(), lr=0.1) for p in (model, ref)]
    for step in range(3):
        tok = torch.randint(0, 20, (4, 7))
        target = torch.randint(0, 3, (4,))
        losses = [opt(tok, target), ref(tok, target)]
        close(losses[0], losses[1])
        for l, s in zip(losses, sgds):
            s.zero_grad()
            l.backward()
            s.step()
        for (n, p), (_, q) in zip(model.named_parameters(),
                                  ref.named_parameters()):
            close(p, q, 1e-5)


def test_dropout_between_layers_in_training_only():
    m = make("lstm", input_size=3, hidden_size=4, num_layers=3, dropout=0.5)
    opt = kiln.compile(m, backend="cpu", fullgraph=True)
    x = torch.randn(5, 2, 3)
    m.train()
    a, b = opt(x)[0], opt(x)[0]
    # The masks are drawn per call, so two calls differ.
    assert not torch.allclose(a, b)
    m.eval()
    with torch.no_grad():
        close_tree(opt(x), m(x))


def test_packed_sequence_input_is_refused_with_its_reason():
    # Packed sequences are not captured (their batch sizes are data): a
    # PackedSequence argument is refused by name, and with suppress_errors
    # the call runs eagerly.
    m = make("lstm", input_size=3, hidden_size=4).eval()
    x, lengths = torch.randn(5, 2, 3), torch.tensor([5, 3])
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths)
    with pytest.raises(kiln.KilnError, match="PackedSequence"):
        kiln.compile(m, backend="cpu")(packed)
    old = kiln.config.suppress_errors
    kiln.config.suppress_errors = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.no_grad():
                out, (h, c) = kiln.compile(m, backend="cpu")(packed)
                ref, (hr, cr) = m(packed)
    finally:
        kiln.config.suppress_errors = old
    close(out.data, ref.data)
    close_tree((h, c), (hr, cr))
