"""Recurrent layers: nn.RNN, nn.LSTM and nn.GRU, unrolled over time.

The modules' forward (traced as written, in torch/nn/modules/rnn.py) ends in
one call of `_VF.rnn_tanh`, `_VF.rnn_relu`, `_VF.lstm` or `_VF.gru` (the same
builtins as `torch.rnn_tanh`, ...) with the input, the initial state, the
flat list of weights and the layer's settings. These converters write that
call as kt ops, with PyTorch 1.13's cell formulas (aten/src/ATen/native/
RNN.cpp and the nn.LSTM / nn.GRU documentation):

* per layer and direction, the input projection of every step at once:
  `linear(x, w_ih, b_ih)` over [T, B, I] (one product, not T);
* then per step the recurrent product `linear(h, w_hh, b_hh)` and the cell:
  - RNN: h' = tanh(gi + gh) (or relu);
  - LSTM (gates i, f, g, o): c' = f * c + i * g, h' = o * tanh(c'), and with
    proj_size h' = (o * tanh(c')) @ w_hr^T;
  - GRU (gates r, z, n): n = tanh(gi_n + r * gh_n), h' = (1 - z) * n + z * h;
* the reverse direction walks the steps backwards; the directions' outputs
  are concatenated on the feature dim; in training, dropout with the
  module's p between layers (not after the last one).

The sequence length is unrolled, so it is specialized: another length
compiles another program (a recompile, as any specialized size), and the
program grows with T (about 10 kt ops per step, layer and direction).
Packed sequences (`pack_padded_sequence`) are refused with a KilnError (a
graph break: the module runs eagerly).
"""

import torch

from . import _ops as O


def _unary(b, name, x):
    return O.unary(b, name, x, float_only=True)


def _gates(b, x, n):
    """n equal slices of x's last dim (chunk, as the ATen cells)."""
    return O.chunk(b, x, n, -1)


def _rnn_cell(b, nonlinearity):
    def cell(gi, gh, h, c, w):
        pre = O.add(b, gi, gh)
        if nonlinearity == "tanh":
            return _unary(b, "tanh", pre), None
        return O.relu(b, pre), None
    return cell


def _lstm_cell(b):
    def cell(gi, gh, h, c, w):
        i, f, g, o = _gates(b, O.add(b, gi, gh), 4)
        i = _unary(b, "sigmoid", i)
        f = _unary(b, "sigmoid", f)
        g = _unary(b, "tanh", g)
        o = _unary(b, "sigmoid", o)
        c = O.add(b, O.mul(b, f, c), O.mul(b, i, g))
        h = O.mul(b, o, _unary(b, "tanh", c))
        if w.get("hr") is not None:
            h = O.linear(b, h, w["hr"])
        return h, c
    return cell


def _gru_cell(b):
    def cell(gi, gh, h, c, w):
        ir, iz, in_ = _gates(b, gi, 3)
        hr, hz, hn = _gates(b, gh, 3)
        r = _unary(b, "sigmoid", O.add(b, ir, hr))
        z = _unary(b, "sigmoid", O.add(b, iz, hz))
        n = _unary(b, "tanh", O.add(b, in_, O.mul(b, r, hn)))
        # (1 - z) * n + z * h, written as n + z * (h - n).
        return O.add(b, n, O.mul(b, z, O.sub(b, h, n))), None
    return cell


def _unroll(b, what, cell, x, h0s, c0s, params, has_biases, num_layers,
            dropout, train, bidirectional, batch_first):
    x = O.need_tensor(b, x, what)
    if not isinstance(params, (list, tuple)):
        raise b.error("%s: packed sequences (pack_padded_sequence) are not "
                      "supported; pass a padded tensor" % what)
    if x.ndim != 3:
        raise b.error("%s: expected a 3-D input, got %d-D" % (what, x.ndim))
    if not x.dtype.is_floating_point:
        raise b.error("%s of a %s input" % (what, x.dtype))
    L = b.static(num_layers, "an RNN's layer count")
    D = 2 if b.static(bidirectional, "an RNN's direction count") else 1
    biases = bool(b.static(has_biases, "an RNN's bias flag"))
    p = float(b.static(dropout, "an RNN's dropout"))
    train = bool(b.static(train, "an RNN's training flag"))
    batch_first = bool(b.static(batch_first, "an RNN's batch_first flag"))
    per = 2 + (2 if biases else 0)
    proj = len(params) == L * D * (per + 1) and what == "lstm"
    if proj:
        per += 1
    if len(params) != L * D * per:
        raise b.error("%s: %d weights for %d layer(s) and %d direction(s)"
                      % (what, len(params), L, D))
    if batch_first:
        x = O.transpose(b, x, 0, 1)
    T = b.static(x.shape[0], "an RNN's sequence length (it is unrolled)")
    if T == 0:
        raise b.error("%s: a sequence of length 0" % what)
    h0s = O.need_tensor(b, h0s, what + "'s initial state")
    if c0s is not None:
        c0s = O.need_tensor(b, c0s, what + "'s initial cell state")
    layer_in = x
    hns, cns = [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            ws = [O.need_tensor(b, t, what + "'s weight")
                  for t in params[(layer * D + d) * per:
                                  (layer * D + d + 1) * per]]
            w = {"ih": ws[0], "hh": ws[1],
                 "b_ih": ws[2] if biases else None,
                 "b_hh": ws[3] if biases else None,
                 "hr": ws[-1] if proj else None}
            gi_all = O.linear(b, layer_in, w["ih"], w["b_ih"])
            h = O.select(b, h0s, 0, layer * D + d)
            c = O.select(b, c0s, 0, layer * D + d) if c0s is not None \
                else None
            steps = range(T) if d == 0 else range(T - 1, -1, -1)
            ys = [None] * T
            for t in steps:
                gi = O.select(b, gi_all, 0, t)
                gh = O.linear(b, h, w["hh"], w["b_hh"])
                h, c = cell(gi, gh, h, c, w)
                ys[t] = h
            outs.append(O.stack(b, ys, 0))
            hns.append(h)
            if c is not None:
                cns.append(c)
        layer_in = outs[0] if D == 1 else O.cat(b, outs, 2)
        if p > 0 and train and layer < L - 1:
            layer_in = O.dropout(b, layer_in, p, True)
    out = O.transpose(b, layer_in, 0, 1) if batch_first else layer_in
    result = [out, O.stack(b, hns, 0)]
    if cns:
        result.append(O.stack(b, cns, 0))
    return tuple(result)


def _packed(b, what, second):
    if O.is_tensor(second) and second.ndim == 1 and \
            not second.dtype.is_floating_point:
        raise b.error("%s: packed sequences (pack_padded_sequence) are not "
                      "supported; pass a padded tensor" % what)


@O.function(torch.lstm)
def lstm(b, input, hx, params, has_biases=None, num_layers=None,
         dropout=None, train=None, bidirectional=None, batch_first=None):
    _packed(b, "lstm", hx)
    if not isinstance(hx, (list, tuple)) or len(hx) != 2:
        raise b.error("lstm: expected the state (h0, c0)")
    return _unroll(b, "lstm", _lstm_cell(b), input, hx[0], hx[1], params,
                   has_biases, num_layers, dropout, train, bidirectional,
                   batch_first)


@O.function(torch.gru)
def gru(b, input, hx, params, has_biases=None, num_layers=None,
        dropout=None, train=None, bidirectional=None, batch_first=None):
    _packed(b, "gru", hx)
    return _unroll(b, "gru", _gru_cell(b), input, hx, None, params,
                   has_biases, num_layers, dropout, train, bidirectional,
                   batch_first)


def _simple(name, nonlinearity):
    def conv(b, input, hx, params, has_biases=None, num_layers=None,
             dropout=None, train=None, bidirectional=None, batch_first=None):
        _packed(b, name, hx)
        return _unroll(b, name, _rnn_cell(b, nonlinearity), input, hx, None,
                       params, has_biases, num_layers, dropout, train,
                       bidirectional, batch_first)
    conv.__name__ = name
    return conv


O.function(torch.rnn_tanh)(_simple("rnn_tanh", "tanh"))
O.function(torch.rnn_relu)(_simple("rnn_relu", "relu"))
