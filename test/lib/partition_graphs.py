"""The graphs of kiln-partition's tests and of bench/partition_bytes.py.

Each graph is written twice, independently: as a kt MLIR function
`@<name>` marked `kg.differentiate` (for kiln-opt -kiln-autodiff
-kiln-partition) and as a PyTorch function of the same inputs (the reference
of the execution tests, and what functorch's partitioners see in the
benchmark). Sizes are parameters: the tests use small ones, the benchmark the
sizes of issue 4 section 6.

    g = mlp(batch=4, d_in=6, d_hidden=8, d_out=5, elem="f64")
    g.mlir         # module text with func.func @mlp
    g.inputs(rng)  # list of NumPy arrays (the primals)
    g.torch_fn(*tensors) -> output tensor
"""

import numpy as np

NP_OF = {"f32": np.float32, "f64": np.float64}


def tt(shape, elem):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), elem)


class Graph:
    def __init__(self, name, args, result, body, torch_fn, note=""):
        """args: list of (shape, elem); result: (shape, elem); body: lines
        using %a0.. for the arguments, ending with `return`."""
        self.name = name
        self.args = args
        self.result = result
        self.torch_fn = torch_fn
        self.note = note
        params = ", ".join("%%a%d: %s" % (i, tt(s, e))
                           for i, (s, e) in enumerate(args))
        self.mlir = ("func.func @%s(%s) -> %s attributes {kg.differentiate} {\n%s\n}\n"
                     % (name, params, tt(*result),
                        "\n".join("  " + l for l in body)))

    def inputs(self, rng, scale=1.0):
        return [(rng.standard_normal(s) * scale).astype(NP_OF[e])
                for s, e in self.args]


def _linear(out, x, w, b, xs, ws, bs, ys, e):
    return "%s = kt.linear %s, %s, %s : (%s, %s, %s) -> %s" % (
        out, x, w, b, tt(xs, e), tt(ws, e), tt(bs, e), tt(ys, e))


def _unary(out, op, x, shape, e, attrs=""):
    return "%s = kt.%s %s%s : (%s) -> %s" % (out, op, x, attrs, tt(shape, e),
                                             tt(shape, e))


def mlp(batch=256, d_in=1024, d_hidden=4096, d_out=1024, elem="f32",
        act="relu", name=None):
    """linear -> relu (or gelu) -> linear."""
    import torch.nn.functional as F
    e = elem
    name = name or ("mlp" if act == "relu" else "gelu_mlp")
    body = [
        _linear("%0", "%a0", "%a1", "%a2", [batch, d_in], [d_hidden, d_in],
                [d_hidden], [batch, d_hidden], e),
        _unary("%1", act, "%0", [batch, d_hidden], e),
        _linear("%2", "%1", "%a3", "%a4", [batch, d_hidden], [d_out, d_hidden],
                [d_out], [batch, d_out], e),
        "return %%2 : %s" % tt([batch, d_out], e),
    ]
    actf = F.relu if act == "relu" else F.gelu

    def fn(x, w1, b1, w2, b2):
        return F.linear(actf(F.linear(x, w1, b1)), w2, b2)
    return Graph(name, [([batch, d_in], e), ([d_hidden, d_in], e),
                        ([d_hidden], e), ([d_out, d_hidden], e), ([d_out], e)],
                 ([batch, d_out], e), body, fn)


def gelu_mlp(**kw):
    return mlp(act="gelu", **kw)


def attention(seq=512, d_model=512, heads=8, elem="f32", explicit=False):
    """q/k/v projections, multi-head softmax attention, output projection,
    on x [1, seq, d_model] (weights [d, d], biases [d]). With explicit=False
    the attention is one kt.scaled_dot_product_attention; with explicit=True
    it is matmul / mul (scale) / softmax / matmul, the ops torch 1.13 traces."""
    import math
    import torch
    import torch.nn.functional as F
    e = elem
    S, D, H = seq, d_model, heads
    dh = D // H
    X = [1, S, D]
    W = [D, D]
    B = [D]
    HS = [1, S, H, dh]
    P = [1, H, S, dh]
    body = []
    for i, nm in enumerate(["q", "k", "v"]):
        w, b = "%%a%d" % (1 + 2 * i), "%%a%d" % (2 + 2 * i)
        body.append(_linear("%%%s0" % nm, "%a0", w, b, X, W, B, X, e))
        body.append("%%%s1 = kt.reshape %%%s0 {shape = [1, %d, %d, %d]} : (%s) -> %s"
                    % (nm, nm, S, H, dh, tt(X, e), tt(HS, e)))
        body.append("%%%s2 = kt.permute %%%s1 {dims = [0, 2, 1, 3]} : (%s) -> %s"
                    % (nm, nm, tt(HS, e), tt(P, e)))
    if explicit:
        body += [
            "%%kt_ = kt.transpose %%k2 {dim0 = -1 : i64, dim1 = -2 : i64} : (%s) -> %s"
            % (tt(P, e), tt([1, H, dh, S], e)),
            "%%s0 = kt.matmul %%q2, %%kt_ : (%s, %s) -> %s"
            % (tt(P, e), tt([1, H, dh, S], e), tt([1, H, S, S], e)),
            "%%sc = kt.full {dtype = %s, size = [], value = %.17e : f64} : () -> %s"
            % (e, 1.0 / math.sqrt(dh), tt([], e)),
            "%%s1 = kt.mul %%s0, %%sc : (%s, %s) -> %s"
            % (tt([1, H, S, S], e), tt([], e), tt([1, H, S, S], e)),
            "%%p = kt.softmax %%s1 {dim = -1 : i64} : (%s) -> %s"
            % (tt([1, H, S, S], e), tt([1, H, S, S], e)),
            "%%o0 = kt.matmul %%p, %%v2 : (%s, %s) -> %s"
            % (tt([1, H, S, S], e), tt(P, e), tt(P, e)),
        ]
    else:
        body.append("%%o0 = kt.scaled_dot_product_attention %%q2, %%k2, %%v2 : (%s, %s, %s) -> %s"
                    % (tt(P, e), tt(P, e), tt(P, e), tt(P, e)))
    body += [
        "%%o1 = kt.permute %%o0 {dims = [0, 2, 1, 3]} : (%s) -> %s"
        % (tt(P, e), tt(HS, e)),
        "%%o2 = kt.reshape %%o1 {shape = [1, %d, %d]} : (%s) -> %s"
        % (S, D, tt(HS, e), tt(X, e)),
        _linear("%o3", "%o2", "%a7", "%a8", X, W, B, X, e),
        "return %%o3 : %s" % tt(X, e),
    ]

    def fn(x, wq, bq, wk, bk, wv, bv, wo, bo):
        def split(t):
            return t.reshape(1, S, H, dh).permute(0, 2, 1, 3)
        q, k, v = (split(F.linear(x, w, b)) for w, b in
                   ((wq, bq), (wk, bk), (wv, bv)))
        # torch 1.13 has no F.scaled_dot_product_attention: its math form.
        p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh), -1)
        o = torch.matmul(p, v).permute(0, 2, 1, 3).reshape(1, S, D)
        return F.linear(o, wo, bo)
    args = [(X, e)] + [(W, e), (B, e)] * 4
    return Graph("attention_explicit" if explicit else "attention", args,
                 (X, e), body, fn)


def layer_norm_residual(rows=8192, dim=1024, elem="f32"):
    """y = x + layer_norm(x, [dim], w, b)."""
    import torch.nn.functional as F
    e = elem
    X = [rows, dim]
    body = [
        "%%0 = kt.layer_norm %%a0 weight %%a1 bias %%a2 {normalized_shape = [%d]} : (%s, %s, %s) -> %s"
        % (dim, tt(X, e), tt([dim], e), tt([dim], e), tt(X, e)),
        "%%1 = kt.add %%a0, %%0 : (%s, %s) -> %s" % (tt(X, e), tt(X, e), tt(X, e)),
        "return %%1 : %s" % tt(X, e),
    ]

    def fn(x, w, b):
        return x + F.layer_norm(x, (dim,), w, b)
    return Graph("layer_norm_residual", [(X, e), ([dim], e), ([dim], e)],
                 (X, e), body, fn)


def conv_bn_relu(batch=8, channels=64, size=56, elem="f32", eps=1e-5):
    """conv2d 3x3 (padding 1, no bias) -> training-mode batch_norm (batch
    statistics; kt.batch_norm is the inference form, so the statistics are
    kt.mean / kt.var(correction=0) / kt.rsqrt, as a frontend lowers it) ->
    relu."""
    import torch.nn.functional as F
    e = elem
    N, C, Hh = batch, channels, size
    X = [N, C, Hh, Hh]
    S = [1, C, 1, 1]
    body = [
        "%%0 = kt.conv2d %%a0, %%a1 {padding = [1, 1]} : (%s, %s) -> %s"
        % (tt(X, e), tt([C, C, 3, 3], e), tt(X, e)),
        "%%m = kt.mean %%0 {dim = [0, 2, 3], keepdim = true} : (%s) -> %s" % (tt(X, e), tt(S, e)),
        "%%v = kt.var %%0 {dim = [0, 2, 3], keepdim = true, correction = 0.0} : (%s) -> %s"
        % (tt(X, e), tt(S, e)),
        "%%ep = kt.full {dtype = %s, size = [], value = %.17e : f64} : () -> %s" % (e, eps, tt([], e)),
        "%%ve = kt.add %%v, %%ep : (%s, %s) -> %s" % (tt(S, e), tt([], e), tt(S, e)),
        _unary("%is", "rsqrt", "%ve", S, e),
        "%%xc = kt.sub %%0, %%m : (%s, %s) -> %s" % (tt(X, e), tt(S, e), tt(X, e)),
        "%%xn = kt.mul %%xc, %%is : (%s, %s) -> %s" % (tt(X, e), tt(S, e), tt(X, e)),
        "%%w = kt.reshape %%a2 {shape = [1, %d, 1, 1]} : (%s) -> %s" % (C, tt([C], e), tt(S, e)),
        "%%b = kt.reshape %%a3 {shape = [1, %d, 1, 1]} : (%s) -> %s" % (C, tt([C], e), tt(S, e)),
        "%%y0 = kt.mul %%xn, %%w : (%s, %s) -> %s" % (tt(X, e), tt(S, e), tt(X, e)),
        "%%y1 = kt.add %%y0, %%b : (%s, %s) -> %s" % (tt(X, e), tt(S, e), tt(X, e)),
        _unary("%y", "relu", "%y1", X, e),
        "return %%y : %s" % tt(X, e),
    ]

    def fn(x, w, g, b):
        y = F.conv2d(x, w, padding=1)
        y = F.batch_norm(y, None, None, g, b, training=True, eps=eps)
        return F.relu(y)
    return Graph("conv_bn_relu", [(X, e), ([C, C, 3, 3], e), ([C], e), ([C], e)],
                 (X, e), body, fn)
