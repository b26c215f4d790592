"""Torch-level decompositions of the calls real programs use that had no
converter (issue 16; the OpInfo sweep's refusals, docs/opinfo.md): losses,
distances and normalizations of torch.nn.functional, NaN-aware reductions,
small pointwise functions and shape ops. Each is written with kiln._ops'
helpers (existing kt ops), with PyTorch 1.13's formulas (its CPU kernels or
its Python definitions, cited per function), so the interpreter, the CPU
backend and the training path (kt's VJPs) get them at once. The ATen
overloads of the same ops (make_fx graphs) map onto these converters at the
end of the file.

Data-dependent output shapes (repeat_interleave with tensor repeats,
tensor_split with tensor indices) and arguments not written here are
refused with a KilnError naming the op.
"""

import itertools
import math
import operator

import torch
import torch.nn.functional as F

from . import _aten as A
from . import _ir
from . import _ops as O
from ._symbolic import Sym, value

# ---------------------------------------------------------------- helpers


def _t(b, x, what):
    return O.need_tensor(b, x, what)


def _un(b, name, x):
    return b.op(name, [x], shape=x.shape, dtype=x.dtype)


def _bool(b, name, x, y):
    return O.binary(b, name, x, y, out_dtype=torch.bool)


def _float_dt(b, *xs):
    dt = O.result_type(b, *xs)
    return dt if dt.is_floating_point else torch.get_default_dtype()


def _reduction_string(b, size_average, reduce, reduction, what):
    """PyTorch's legacy size_average/reduce arguments, as
    torch.nn._reduction.legacy_get_string."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if size_average and reduce:
            reduction = "mean"
        elif reduce:
            reduction = "sum"
        else:
            reduction = "none"
    if isinstance(reduction, int):
        reduction = A._reduction(b, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise b.error("%s: %r is not a valid value for reduction" % (
            what, reduction))
    return reduction


def _reduce(b, loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return O.sum_(b, loss)
    return O.mean(b, loss)


def _div_by_count(b, t, x, dims):
    """t divided by the number of elements of x over `dims` (a mean's
    divisor): a Python float for static sizes, a count computed at run time
    for symbolic ones (a dynamic batch: the divisor follows the call's
    size, without a recapture)."""
    n, dyn = 1, []
    for d in dims:
        if isinstance(x.shape[d], Sym):
            dyn.append(d)
        else:
            n *= x.shape[d]
    if not dyn:
        return O.div(b, t, float(n))
    c = None
    for d in dyn:
        k = O._dim_size_tensor(b, x, d)
        c = k if c is None else O.mul(b, c, k)
    c = O.cast(b, c, t.dtype)
    if n != 1:
        c = O.mul(b, c, float(n))
    return O.div(b, t, c)


def _same_size(b, x, y, what):
    if [value(d) for d in x.shape] != [value(d) for d in y.shape]:
        raise b.error("%s: Using a target size (%s) that is different to "
                      "the input size (%s) is deprecated. Please ensure they "
                      "have the same size." % (
                          what, [value(d) for d in y.shape],
                          [value(d) for d in x.shape]))


def _pair(b, x, y, what, ints=False):
    """x, y cast to their promoted float dtype (ints: integers compute in
    the default float dtype, as the ops whose formula adds a float
    constant do in PyTorch; else they are refused)."""
    x, y = _t(b, x, what), _t(b, y, what)
    dt = O.result_type(b, x, y)
    if not dt.is_floating_point and ints:
        dt = torch.get_default_dtype()
    if not dt.is_floating_point:
        raise b.error("%s of %s and %s tensors (PyTorch computes it for "
                      "floating-point tensors)" % (what, x.dtype, y.dtype))
    return O.cast(b, x, dt), O.cast(b, y, dt)


def vector_norm(b, x, p, dims, keepdim):
    """||x||_p over `dims` (None: all), PyTorch's linalg.vector_norm."""
    a = _un(b, "abs", x)
    p = float(p)
    if dims is not None and len(dims) == 0:
        dims = None
    if p == 0:
        return O.sum_(b, O.cast(b, _bool(b, "ne", a, 0.0), x.dtype), dims,
                      keepdim)
    if math.isinf(p):
        return (O.amax if p > 0 else O.amin)(b, a, dims or (), keepdim)
    if p == 1:
        return O.sum_(b, a, dims, keepdim)
    if p == 2:
        return O.masked_root(b, O.sum_(b, O.mul(b, a, a), dims, keepdim))
    return O.masked_root(b, O.sum_(b, O.pow_(b, a, p), dims, keepdim), p)


# ------------------------------------------------------------------ losses


def _simple_loss(name, elementwise):
    """A loss of (input, target) computed elementwise (broadcast as
    PyTorch does), then reduced."""
    def conv(b, input, target, size_average=None, reduce=None,
             reduction="mean", **kw):
        r = _reduction_string(b, size_average, reduce, reduction, name)
        x, y = _pair(b, input, target, name)
        return _reduce(b, elementwise(b, x, y, **kw), r)
    conv.__name__ = name
    return conv


def _mse(b, x, y):
    d = O.sub(b, x, y)
    return O.mul(b, d, d)


def _l1(b, x, y):
    return _un(b, "abs", O.sub(b, x, y))


def _smooth_l1(b, x, y, beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: l1);
    PyTorch's smooth_l1 kernel."""
    beta = float(b.static(beta, "smooth_l1_loss's beta"))
    if beta < 0:
        raise b.error("smooth_l1_loss does not support negative values for "
                      "beta.")
    z = _l1(b, x, y)
    if beta == 0.0:
        return z
    return O.where(b, _bool(b, "lt", z, beta),
                   O.div(b, O.mul(b, O.mul(b, z, z), 0.5), beta),
                   O.sub(b, z, 0.5 * beta))


def _soft_margin(b, x, y):
    """log1p(exp(-y x)), PyTorch's soft_margin_loss."""
    return _un(b, "log1p", _un(b, "exp", O.mul(b, _un(b, "neg", x), y)))


O.function(F.mse_loss)(_simple_loss("mse_loss", _mse))
O.function(F.l1_loss)(_simple_loss("l1_loss", _l1))
O.function(F.soft_margin_loss)(_simple_loss("soft_margin_loss",
                                            _soft_margin))


@O.function(F.smooth_l1_loss)
def smooth_l1_loss(b, input, target, size_average=None, reduce=None,
                   reduction="mean", beta=1.0):
    r = _reduction_string(b, size_average, reduce, reduction,
                          "smooth_l1_loss")
    x, y = _pair(b, input, target, "smooth_l1_loss")
    return _reduce(b, _smooth_l1(b, x, y, beta), r)


@O.function(F.huber_loss)
def huber_loss(b, input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    r = _reduction_string(b, None, None, reduction, "huber_loss")
    x, y = _pair(b, input, target, "huber_loss")
    delta = float(b.static(delta, "huber_loss's delta"))
    if delta <= 0:
        raise b.error("huber_loss does not support non-positive values for "
                      "delta.")
    z = _l1(b, x, y)
    loss = O.where(b, _bool(b, "lt", z, delta),
                   O.mul(b, O.mul(b, z, z), 0.5),
                   O.mul(b, O.sub(b, z, 0.5 * delta), delta))
    return _reduce(b, loss, r)


@O.function(F.binary_cross_entropy)
def binary_cross_entropy(b, input, target, weight=None, size_average=None,
                         reduce=None, reduction="mean"):
    """(t - 1) max(log1p(-x), -100) - t max(log(x), -100), times weight
    (PyTorch's binary_cross_entropy kernel; target and input of one
    size)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "binary_cross_entropy")
    x, y = _pair(b, input, target, "binary_cross_entropy")
    _same_size(b, x, y, "binary_cross_entropy")
    lo = O.clamp_min(b, _un(b, "log1p", _un(b, "neg", x)), -100.0)
    lx = O.clamp_min(b, _un(b, "log", x), -100.0)
    loss = O.sub(b, O.mul(b, O.sub(b, y, 1.0), lo), O.mul(b, y, lx))
    if weight is not None:
        loss = O.mul(b, loss, O.cast(b, _t(b, weight, "a weight"), x.dtype))
    return _reduce(b, loss, r)


@O.function(F.binary_cross_entropy_with_logits)
def binary_cross_entropy_with_logits(b, input, target, weight=None,
                                     size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """(1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0),
    lw = (pos_weight - 1) t + 1 (PyTorch 1.13's formula)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "binary_cross_entropy_with_logits")
    x, y = _pair(b, input, target, "binary_cross_entropy_with_logits")
    _same_size(b, x, y, "binary_cross_entropy_with_logits")
    m = O.clamp_min(b, _un(b, "neg", x), 0.0)
    lse = _un(b, "log", O.add(b, _un(b, "exp", _un(b, "neg", m)),
                              _un(b, "exp", O.sub(b, _un(b, "neg", x), m))))
    base = O.mul(b, O.rsub(b, y, 1.0), x)
    if pos_weight is not None:
        pw = O.cast(b, _t(b, pos_weight, "pos_weight"), x.dtype)
        lw = O.add(b, O.mul(b, O.sub(b, pw, 1.0), y), 1.0)
        loss = O.add(b, base, O.mul(b, lw, O.add(b, lse, m)))
    else:
        loss = O.add(b, O.add(b, base, m), lse)
    if weight is not None:
        loss = O.mul(b, loss, O.cast(b, _t(b, weight, "a weight"), x.dtype))
    return _reduce(b, loss, r)


@O.function(F.margin_ranking_loss)
def margin_ranking_loss(b, input1, input2, target, margin=0.0,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, -t (x1 - x2) + margin)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "margin_ranking_loss")
    x1, x2 = _pair(b, input1, input2, "margin_ranking_loss", ints=True)
    t = O.cast(b, _t(b, target, "margin_ranking_loss"), x1.dtype)
    loss = O.clamp_min(b, O.add(b, O.mul(b, _un(b, "neg", t),
                                         O.sub(b, x1, x2)), margin), 0.0)
    return _reduce(b, loss, r)


@O.function(F.hinge_embedding_loss)
def hinge_embedding_loss(b, input, target, margin=1.0, size_average=None,
                         reduce=None, reduction="mean"):
    """where(t != 1, max(0, margin - x), 0) + where(t != -1, x, 0)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "hinge_embedding_loss")
    x = _t(b, input, "hinge_embedding_loss")
    if not x.dtype.is_floating_point:
        raise b.error("hinge_embedding_loss of a %s input (float only)"
                      % x.dtype)
    t = _t(b, target, "hinge_embedding_loss")
    zero = b.constant(0, x.dtype)
    mc = O.clamp_min(b, O.rsub(b, x, margin), 0.0)
    loss = O.add(b, O.where(b, _bool(b, "ne", t, 1), mc, zero),
                 O.where(b, _bool(b, "ne", t, -1), x, zero))
    return _reduce(b, loss, r)


@O.function(F.poisson_nll_loss)
def poisson_nll_loss(b, input, target, log_input=True, full=False,
                     size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(x) - t x (log_input) or x - t log(x + eps); full adds
    Stirling's t log t - t + 0.5 log(2 pi t) where t > 1."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "poisson_nll_loss")
    x, t = _pair(b, input, target, "poisson_nll_loss", ints=True)
    if b.static(log_input, "poisson_nll_loss's log_input"):
        loss = O.sub(b, _un(b, "exp", x), O.mul(b, t, x))
    else:
        loss = O.sub(b, x, O.mul(b, t, _un(b, "log", O.add(b, x, eps))))
    if b.static(full, "poisson_nll_loss's full"):
        st = O.add(b, O.sub(b, O.mul(b, t, _un(b, "log", t)), t),
                   O.mul(b, _un(b, "log", O.mul(b, t, 2 * math.pi)), 0.5))
        st = O.where(b, _bool(b, "le", t, 1.0), b.constant(0, x.dtype), st)
        loss = O.add(b, loss, st)
    return _reduce(b, loss, r)


@O.function(F.gaussian_nll_loss)
def gaussian_nll_loss(b, input, target, var, full=False, eps=1e-6,
                      reduction="mean"):
    """0.5 (log(max(var, eps)) + (x - t)^2 / max(var, eps)) (+ 0.5 log 2
    pi with full); var may lack the last dim or have it 1 (F's
    definition)."""
    r = _reduction_string(b, None, None, reduction, "gaussian_nll_loss")
    x, t = _pair(b, input, target, "gaussian_nll_loss")
    v = O.cast(b, _t(b, var, "gaussian_nll_loss's var"), x.dtype)
    xs = [value(d) for d in x.shape]
    vs = [value(d) for d in v.shape]
    if vs != xs:
        if xs[:-1] == vs:
            v = O.unsqueeze(b, v, -1)
        elif xs[:-1] == vs[:-1] and vs[-1:] == [1]:
            pass
        else:
            raise b.error("var is of incorrect size")
    loss = O.mul(b, O.add(b, _un(b, "log", O.clamp_min(b, v, eps)),
                          O.div(b, _mse(b, x, t), O.clamp_min(b, v, eps))),
                 0.5)
    if b.static(full, "gaussian_nll_loss's full"):
        loss = O.add(b, loss, 0.5 * math.log(2 * math.pi))
    return _reduce(b, loss, r)


@O.function(F.cosine_embedding_loss)
def cosine_embedding_loss(b, input1, input2, target, margin=0.0,
                          size_average=None, reduce=None, reduction="mean"):
    """1 - cos where t == 1, max(0, cos - margin) where t == -1, with
    cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) over
    the dim after the target's dims (PyTorch's kernel)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "cosine_embedding_loss")
    x1, x2 = _pair(b, input1, input2, "cosine_embedding_loss", ints=True)
    t = _t(b, target, "cosine_embedding_loss")
    d = t.ndim
    if x1.ndim != d + 1 or x2.ndim != d + 1:
        raise b.error("cosine_embedding_loss: %dD target tensor expects %dD "
                      "input tensors, but found inputs with sizes %s and %s."
                      % (d, d + 1, [value(s) for s in x1.shape],
                         [value(s) for s in x2.shape]))
    ps = O.sum_(b, O.mul(b, x1, x2), [d])
    m1 = O.add(b, O.sum_(b, O.mul(b, x1, x1), [d]), 1e-12)
    m2 = O.add(b, O.sum_(b, O.mul(b, x2, x2), [d]), 1e-12)
    cos = O.div(b, ps, _un(b, "sqrt", O.mul(b, m1, m2)))
    zero = b.constant(0, x1.dtype)
    pos = O.where(b, _bool(b, "eq", t, 1), O.rsub(b, cos, 1.0), zero)
    neg = O.where(b, _bool(b, "eq", t, -1),
                  O.clamp_min(b, O.sub(b, cos, margin), 0.0), zero)
    return _reduce(b, O.add(b, pos, neg), r)


@O.function(F.multilabel_soft_margin_loss)
def multilabel_soft_margin_loss(b, input, target, weight=None,
                                size_average=None, reduce=None,
                                reduction="mean"):
    """-(t logsigmoid(x) + (1 - t) logsigmoid(-x)) (times weight), summed
    over the class dim and divided by its size (F's definition)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "multilabel_soft_margin_loss")
    x, t = _pair(b, input, target, "multilabel_soft_margin_loss")
    ls = O.FUNCTIONS[F.logsigmoid]
    loss = _un(b, "neg", O.add(b, O.mul(b, t, ls(b, x)),
                               O.mul(b, O.rsub(b, t, 1.0),
                                     ls(b, _un(b, "neg", x)))))
    if weight is not None:
        loss = O.mul(b, loss, O.cast(b, _t(b, weight, "a weight"), x.dtype))
    cd = x.ndim - 1
    if x.ndim:
        loss = _div_by_count(b, O.sum_(b, loss, [cd]), x, [cd])
    return _reduce(b, loss, r)


@O.function(F.triplet_margin_loss)
def triplet_margin_loss(b, anchor, positive, negative, margin=1.0, p=2,
                        eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(margin + d(a, p) - d(a, n), 0), d the pairwise distance
    (swap: d(a, n) is min(d(a, n), d(p, n)))."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "triplet_margin_loss")
    a = _t(b, anchor, "triplet_margin_loss")
    dims = {a.ndim, _t(b, positive, "triplet_margin_loss").ndim,
            _t(b, negative, "triplet_margin_loss").ndim}
    if len(dims) != 1:
        raise b.error("triplet_margin_loss: The anchor, positive, and "
                      "negative tensors are expected to have the same "
                      "number of dimensions")
    dp = pairwise_distance(b, anchor, positive, p, eps)
    dn = pairwise_distance(b, anchor, negative, p, eps)
    if b.static(swap, "triplet_margin_loss's swap"):
        dn = O.binary(b, "minimum", dn,
                      pairwise_distance(b, positive, negative, p, eps))
    loss = O.clamp_min(b, O.sub(b, O.add(b, dp, margin), dn), 0.0)
    return _reduce(b, loss, r)


@O.function(F.nll_loss)
def nll_loss(b, input, target, weight=None, size_average=None,
             ignore_index=-100, reduce=None, reduction="mean"):
    """aten.nll_loss_forward's decomposition for [N, C] or [C] input; a
    [N, C, d1, ...] input moves C last and flattens (nll_loss2d's form)."""
    r = _reduction_string(b, size_average, reduce, reduction, "nll_loss")
    x = _t(b, input, "nll_loss")
    t = _t(b, target, "nll_loss")
    if t.dtype != torch.int64:
        raise b.error("nll_loss: expected scalar type Long but found %s"
                      % str(t.dtype)[6:])
    red = {"none": 0, "mean": 1, "sum": 2}[r]
    if x.ndim > 2:
        N, C = x.shape[0], x.shape[1]
        perm = [0] + list(range(2, x.ndim)) + [1]
        xf = O.reshape(b, O.permute(b, x, perm), [-1, C])
        tf = O.reshape(b, t, [-1])
        out, _ = A.nll_loss_forward(b, xf, tf, weight, red, ignore_index)
        if r == "none":
            return O.reshape(b, out, list(t.shape))
        return out
    out, _ = A.nll_loss_forward(b, x, t, weight, red, ignore_index)
    return out


@O.function(F.kl_div)
def kl_div(b, input, target, size_average=None, reduce=None,
           reduction="mean", log_target=False):
    """log_target: exp(t) (t - x); else xlogy(t, t) - t x; batchmean
    divides the sum by the first dim's size."""
    bm = reduction == "batchmean"
    r = "sum" if bm else _reduction_string(b, size_average, reduce,
                                           reduction, "kl_div")
    x, t = _pair(b, input, target, "kl_div")
    if b.static(log_target, "kl_div's log_target"):
        loss = O.mul(b, _un(b, "exp", t), O.sub(b, t, x))
    else:
        loss = O.sub(b, xlogy(b, t, t), O.mul(b, t, x))
    out = _reduce(b, loss, r)
    if bm and x.ndim:
        out = _div_by_count(b, out, x, [0])
    return out


def _class_weight(b, weight, x, C):
    """A per-class weight (C,) in x's dtype, broadcast along x's class dim
    (dim 1 of an N-d input, or the only dim)."""
    w = O.cast(b, _t(b, weight, "a weight"), x.dtype)
    if x.ndim >= 2:
        w = O.reshape(b, w, [1, C] + [1] * (x.ndim - 2))
    return w


_LOSS_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _merged_dim(a, c):
    """Of two sizes known to agree, the one the IR prints static (if any)."""
    return c if _ir.shape_text([a]).startswith("?") else a


def _cross_entropy_op(b, x, t, weight, ignore_index, r, ls, C):
    """One `kt.cross_entropy` for the cases it covers (its verifier's
    rules): a float input of rank >= 1; an int64 class-index target of the
    input's shape without the class dim, or a probability target of the
    input's shape and dtype; a [C] weight. None where it does not apply
    (the caller then decomposes, reporting PyTorch's errors)."""
    if x.dtype not in _LOSS_FLOATS or x.ndim < 1:
        return None
    cd = 1 if x.ndim >= 2 else 0
    prob = t.dtype.is_floating_point
    if prob:
        # A probability target of another float dtype promotes the result
        # in PyTorch (f32 logits, f64 target: f64 loss): decomposed.
        if t.dtype != x.dtype:
            return None
        want = list(x.shape)
    elif t.dtype == torch.int64:
        want = [d for i, d in enumerate(x.shape) if i != cd]
    else:
        return None
    if t.ndim != len(want) or any(value(a) != value(c)
                                  for a, c in zip(want, t.shape)):
        return None
    merged = [_merged_dim(a, c) for a, c in zip(want, t.shape)]
    operands = [x, t]
    if weight is not None:
        w = _t(b, weight, "cross_entropy's weight")
        if (w.ndim != 1 or not w.dtype.is_floating_point
                or value(w.shape[0]) != value(C)):
            return None
        operands.append(O.cast(b, w, x.dtype))
    if prob:
        shape = [d for i, d in enumerate(merged) if i != cd]
    else:
        shape = merged
    attrs = {"reduction": _ir.Raw("#kt.reduction<%s>" % r)}
    if not prob and ignore_index != -100:
        attrs["ignore_index"] = int(ignore_index)
    if ls != 0:
        attrs["label_smoothing"] = float(ls)
    return b.op("cross_entropy", operands, attrs,
                shape=shape if r == "none" else [], dtype=x.dtype)


@O.function(F.cross_entropy)
def cross_entropy(b, input, target, weight=None, size_average=None,
                  ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """One kt.cross_entropy where the op covers the arguments (class
    indices or probabilities, weight, ignore_index, label_smoothing, every
    reduction: docs/python.md); otherwise PyTorch 1.13's decomposition:
    nll_loss(log_softmax(x, class dim)) for class-index targets; class
    probabilities (a float target) sum -t log_softmax(x) over the class
    dim; label_smoothing mixes in the uniform distribution."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "cross_entropy")
    x = _t(b, input, "cross_entropy")
    t = _t(b, target, "cross_entropy")
    cd = 1 if x.ndim >= 2 else 0
    ls = float(b.static(label_smoothing, "cross_entropy's label_smoothing"))
    ignore_index = b.static(ignore_index, "cross_entropy's ignore_index")
    if x.ndim == 0:
        raise b.error("cross_entropy: the input must have at least one "
                      "dim (the class dim), got a 0-d tensor")
    # The class count: static where smoothing or a weight needs it.
    C = b.static(x.shape[cd], "cross_entropy's class count") if (
        ls > 0 or weight is not None) else x.shape[cd]
    if not 0.0 <= ls <= 1.0:
        raise b.error("label_smoothing must be between 0.0 and 1.0. Got: %g"
                      % ls)
    if t.dtype.is_floating_point and ignore_index >= 0:
        raise b.error("cross_entropy: ignore_index is not supported for "
                      "floating point target")
    op = _cross_entropy_op(b, x, t, weight, ignore_index, r, ls, C)
    if op is not None:
        return op
    lp = O.FUNCTIONS[F.log_softmax](b, x, cd)
    if t.dtype.is_floating_point:
        # A target of another float dtype promotes (PyTorch multiplies
        # log_softmax(x) by it: f32 logits, f64 target give an f64 loss).
        dt = torch.promote_types(x.dtype, t.dtype)
        lp = O.cast(b, lp, dt)
        t = O.cast(b, t, dt)
        if ls > 0:
            t = O.add(b, O.mul(b, t, 1.0 - ls), ls / C)
        prod = O.mul(b, lp, t)
        if weight is not None:
            prod = O.mul(b, prod, _class_weight(b, weight, lp, C))
        loss = _un(b, "neg", O.sum_(b, prod, [cd]))
        if r == "mean":
            return _div_by_count(b, O.sum_(b, loss), x,
                                 [i for i in range(x.ndim) if i != cd])
        return _reduce(b, loss, r)
    nll = nll_loss(b, lp, t, weight, None, ignore_index, None,
                   r if ls == 0 else "none")
    if ls == 0:
        return nll
    # Smoothing: (1 - ls) nll + ls / C * (-sum_c w_c lp_c), ignored
    # targets 0; mean divides both by the weight sum of the kept targets.
    keep = _bool(b, "ne", t, ignore_index)
    wl = lp
    if weight is not None:
        wl = O.mul(b, lp, _class_weight(b, weight, x, C))
    smooth = _un(b, "neg", O.sum_(b, wl, [cd]))
    smooth = O.where(b, keep, smooth, b.constant(0, x.dtype))
    if r == "none":
        return O.add(b, O.mul(b, nll, 1.0 - ls), O.mul(b, smooth, ls / C))
    if r == "sum":
        return O.add(b, O.mul(b, O.sum_(b, nll), 1.0 - ls),
                     O.mul(b, O.sum_(b, smooth), ls / C))
    if weight is not None:
        safe = O.where(b, keep, t, 0)
        wt = O.index_select(b, O.cast(b, weight, x.dtype), 0,
                            O.reshape(b, safe, [-1]))
        wt = O.mul(b, wt, O.cast(b, O.reshape(b, keep, [-1]), x.dtype))
        denom = O.sum_(b, wt)
    else:
        denom = O.sum_(b, O.cast(b, keep, x.dtype))
    total = O.add(b, O.mul(b, O.sum_(b, nll), 1.0 - ls),
                  O.mul(b, O.sum_(b, smooth), ls / C))
    return O.div(b, total, denom)


# ----------------------------------------------- distances, normalization


@O.function(F.pairwise_distance, torch.pairwise_distance)
def pairwise_distance(b, x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (PyTorch's kernel)."""
    x1, x2 = _pair(b, x1, x2, "pairwise_distance", ints=True)
    nd = max(x1.ndim, x2.ndim)
    d = O.add(b, O.sub(b, x1, x2), eps)
    if nd == 0:
        return vector_norm(b, d, p, None, False)
    return vector_norm(b, d, p, [nd - 1], b.static(keepdim, "keepdim"))


@O.function(F.cosine_similarity, torch.cosine_similarity)
def cosine_similarity(b, x1, x2, dim=1, eps=1e-8):
    """sum((x1 / max(||x1||, eps)) (x2 / max(||x2||, eps))) over dim,
    after broadcasting (PyTorch 1.13's cosine_similarity)."""
    x1, x2 = _t(b, x1, "cosine_similarity"), _t(b, x2, "cosine_similarity")
    dt = O.result_type(b, x1, x2)
    if not dt.is_floating_point:
        dt = torch.get_default_dtype()
    shape = O.broadcast(b, x1.shape, x2.shape)
    x1 = O.expand(b, O.cast(b, x1, dt), shape)
    x2 = O.expand(b, O.cast(b, x2, dt), shape)
    d = O.norm_dim(b, dim, len(shape))
    n1 = O.clamp_min(b, vector_norm(b, x1, 2, [d], True), eps)
    n2 = O.clamp_min(b, vector_norm(b, x2, 2, [d], True), eps)
    return O.sum_(b, O.mul(b, O.div(b, x1, n1), O.div(b, x2, n2)), [d])


@O.function(F.normalize)
def normalize(b, input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p over dim, eps)."""
    x = _t(b, input, "normalize")
    if not x.dtype.is_floating_point:
        raise b.error("normalize of a %s tensor (float only)" % x.dtype)
    d = O.norm_dim(b, dim, x.ndim)
    n = vector_norm(b, x, p, [d] if x.ndim else None, x.ndim > 0)
    return O.div(b, x, O.clamp_min(b, n, eps))


@O.both("dist")
def dist(b, x, y, p=2):
    """||x - y||_p over all elements."""
    x, y = _pair(b, x, y, "dist")
    return vector_norm(b, O.sub(b, x, y), b.static(p, "dist's p"), None,
                       False)


@O.function(torch.linalg.vector_norm)
def linalg_vector_norm(b, x, ord=2, dim=None, keepdim=False, *, dtype=None,
                       out=None):
    x = _t(b, x, "vector_norm")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("linalg.vector_norm: Expected a floating point or "
                      "complex tensor as input. Got %s" % str(x.dtype)[6:])
    return _vector_norm_over(b, x, ord, dim, keepdim)


def _vector_norm_over(b, x, p, dim, keepdim):
    """vector_norm of x over dim (an int, a list, or None: every dim)."""
    if isinstance(dim, int):
        dim = [dim]
    dims = None if dim is None else O.norm_dims(b, dim, x.ndim)
    return vector_norm(b, x, b.static(p, "a norm's ord"), dims,
                       b.static(keepdim, "keepdim"))


@O.both("norm")
def norm(b, x, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: vector p-norms ("fro" is the 2-norm over the dims);
    "nuc" needs singular values, which kt has not."""
    x = _t(b, x, "norm")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("norm of a %s tensor (float only)" % x.dtype)
    if p is None or p == "fro":
        p = 2
    if p == "nuc":
        raise b.error("norm(p='nuc') is not supported (kt has no singular "
                      "value decomposition)")
    if isinstance(p, str):
        raise b.error("norm: p %r is not supported" % p)
    return _vector_norm_over(b, x, p, dim, keepdim)


@O.both("renorm")
def renorm(b, x, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm scaled by
    maxnorm / (norm + 1e-7)."""
    x = _t(b, x, "renorm")
    if not x.dtype.is_floating_point:
        raise b.error("renorm of a %s tensor (float only)" % x.dtype)
    d = O.norm_dim(b, dim, x.ndim)
    others = [i for i in range(x.ndim) if i != d]
    n = vector_norm(b, x, b.static(p, "renorm's p"), others or None, True) \
        if others else _un(b, "abs", x)
    maxnorm = float(b.static(maxnorm, "renorm's maxnorm"))
    f = O.where(b, _bool(b, "gt", n, maxnorm),
                O.div(b, b.constant(maxnorm, x.dtype), O.add(b, n, 1e-7)),
                b.constant(1.0, x.dtype))
    return O.mul(b, x, f)


@O.function(F.group_norm, torch.group_norm)
def group_norm(b, input, num_groups, weight=None, bias=None, eps=1e-5,
               cudnn_enabled=True):
    """aten.native_group_norm's decomposition (its first result)."""
    x = _t(b, input, "group_norm")
    if x.ndim < 2:
        raise b.error("group_norm: expected an input of rank >= 2, got %d"
                      % x.ndim)
    N, C = value(x.shape[0]), value(x.shape[1])
    G = b.static(num_groups, "group_norm's num_groups")
    if C % G:
        raise b.error("Expected number of channels in input to be divisible "
                      "by num_groups, but got input of shape %s and "
                      "num_groups=%d" % ([value(d) for d in x.shape], G))
    HxW = 1
    for d in x.shape[2:]:
        HxW *= value(d)
    return A.ATEN["native_group_norm.default"](b, x, weight, bias, N, C,
                                               HxW, G, eps)[0]


def _instance_norm_update(b, x, running_mean, running_var, momentum):
    """The in-place running-statistics update of a training instance_norm
    (see instance_norm)."""
    if momentum is None:
        raise b.error("instance_norm with momentum=None is not supported "
                      "(PyTorch's instance_norm needs a float momentum)")
    m = float(b.static(momentum, "instance_norm's momentum"))
    dt = x.dtype
    dims = list(range(2, x.ndim))
    for stat, unbiased in ((running_mean, False), (running_var, True)):
        if stat is None:
            continue
        if unbiased:
            per = O.var(b, x, dims, None, False, correction=1) if dims \
                else O.full(b, list(x.shape[:2]), float("nan"), dt)
        else:
            per = O.mean(b, x, dims) if dims else x
        batch = O.mean(b, per, [0])
        new = O.add(b, O.mul(b, O.cast(b, stat, dt), 1.0 - m),
                    O.mul(b, batch, m))
        new = O.stop_gradient(b, O.cast(b, new, stat.dtype))
        b.no_grad_values.add(new.name)
        O.in_place(b, stat, new)


@O.function(torch.instance_norm)
def _torch_instance_norm(b, input, weight, bias, running_mean, running_var,
                         use_input_stats, momentum, eps, cudnn_enabled=False):
    """torch.instance_norm: ATen's argument order (weight and bias before
    the running statistics), unlike F.instance_norm's."""
    return instance_norm(b, input, running_mean, running_var, weight, bias,
                         use_input_stats, momentum, eps)


@O.function(F.instance_norm)
def instance_norm(b, input, running_mean=None, running_var=None,
                  weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5, cudnn_enabled=False):
    """Per (sample, channel) statistics: group_norm with one group per
    channel; without use_input_stats the running statistics normalize.
    With use_input_stats and running statistics (track_running_stats in
    training), they are updated in place as PyTorch's instance_norm does
    (batch_norm on the (1, N*C, ...) view with the statistics repeated N
    times, then averaged over N): running = (1 - momentum) * running +
    momentum * the mean over N of the per-instance mean (of the unbiased
    per-instance variance), outside autograd."""
    x = _t(b, input, "instance_norm")
    if b.static(use_input_stats, "instance_norm's use_input_stats"):
        if x.ndim < 3 and x.ndim != 2:
            raise b.error("instance_norm: expected an input of rank >= 2")
        C = b.static(x.shape[1], "instance_norm's channels")
        y = group_norm(b, x, C, weight, bias, eps)
        if running_mean is not None or running_var is not None:
            _instance_norm_update(b, x, running_mean, running_var, momentum)
        return y
    if running_mean is None or running_var is None:
        raise b.error("Expected running_mean and running_var to be defined "
                      "when use_input_stats is false")
    C = b.static(x.shape[1], "instance_norm's size")
    view = [1, C] + [1] * (x.ndim - 2)
    m = O.reshape(b, O.cast(b, running_mean, x.dtype), view)
    v = O.reshape(b, O.cast(b, running_var, x.dtype), view)
    y = O.mul(b, O.sub(b, x, m), _un(b, "rsqrt", O.add(b, v, eps)))
    if weight is not None:
        y = O.mul(b, y, O.reshape(b, O.cast(b, weight, x.dtype), view))
    if bias is not None:
        y = O.add(b, y, O.reshape(b, O.cast(b, bias, x.dtype), view))
    return y


@O.function(F.local_response_norm)
def local_response_norm(b, input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over a window of `size` channels
    (zero-padded size // 2 before, (size - 1) // 2 after)) ** beta (F's
    definition: its avg_pool counts the padding)."""
    x = _t(b, input, "local_response_norm")
    if x.ndim < 3:
        raise b.error("Expected 3D or higher dimensionality input (got %d "
                      "dimensions)" % x.ndim)
    size = b.static(size, "local_response_norm's size")
    C = b.static(x.shape[1], "local_response_norm's size")
    sq = O.mul(b, x, x)
    lo, hi = size // 2, (size - 1) // 2
    parts = []
    if lo:
        parts.append(O.full(b, [x.shape[0], lo] + list(x.shape[2:]), 0,
                            x.dtype))
    parts.append(sq)
    if hi:
        parts.append(O.full(b, [x.shape[0], hi] + list(x.shape[2:]), 0,
                            x.dtype))
    p = O.cat(b, parts, 1) if len(parts) > 1 else sq
    acc = None
    for j in range(size):
        s = O.slice_dim(b, p, 1, j, j + C, 1)
        acc = s if acc is None else O.add(b, acc, s)
    # Integers: F's avg_pool of the int squares divides as integers.
    avg = O.div(b, acc, float(size)) if x.dtype.is_floating_point else \
        O.div(b, acc, size, rounding_mode="trunc")
    div = O.pow_(b, O.add(b, O.mul(b, avg, alpha), k), beta)
    return O.div(b, x, div)


@O.function(F.prelu, torch.prelu)
def prelu(b, input, weight):
    """x where x > 0, else w x; w has one element or one per channel
    (dim 1)."""
    x = _t(b, input, "prelu")
    w = _t(b, weight, "prelu's weight")
    n = 1
    for d in w.shape:
        n *= b.static(d, "prelu's size")
    if n != 1:
        C = b.static(x.shape[1], "prelu's size") if x.ndim >= 2 else 1
        if w.ndim != 1 or n != C:
            raise b.error("Mismatch of parameter numbers and input channel "
                          "size. Found parameter numbers = %d and channel "
                          "size = %d." % (n, C))
        w = O.reshape(b, w, [1, C] + [1] * (x.ndim - 2))
    elif w.ndim:
        w = O.reshape(b, w, [])
    w = O.cast(b, w, x.dtype)
    return O.where(b, _bool(b, "gt", x, 0), x, O.mul(b, x, w))


@O.function(F.hardshrink, torch.hardshrink)
def hardshrink(b, input, lambd=0.5):
    """0 where -lambd <= x <= lambd, else x."""
    x = _t(b, input, "hardshrink")
    inside = O.binary(b, "logical_and", _bool(b, "ge", x, -lambd),
                      _bool(b, "le", x, lambd), out_dtype=torch.bool)
    return O.where(b, inside, b.constant(0, x.dtype), x)


@O.function(F.softshrink)
def softshrink(b, input, lambd=0.5):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    x = _t(b, input, "softshrink")
    if lambd < 0:
        raise b.error("lambda must be greater or equal to 0, but found to "
                      "be %g." % lambd)
    zero = b.constant(0, x.dtype)
    r = O.where(b, _bool(b, "lt", x, -lambd), O.add(b, x, lambd), zero)
    return O.where(b, _bool(b, "gt", x, lambd), O.sub(b, x, lambd), r)


# ------------------------------------------------------ NaN-aware, pointwise


@O.both("nansum")
def nansum(b, x, dim=None, keepdim=False, *, dtype=None, out=None):
    """sum with NaNs as 0."""
    x = _t(b, x, "nansum")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if x.dtype.is_floating_point:
        x = O.where(b, O.isnan(b, x), b.constant(0, x.dtype), x)
    return O.sum_(b, x, dim, keepdim)


@O.both("nanmean")
def nanmean(b, x, dim=None, keepdim=False, *, dtype=None, out=None):
    """nansum / the count of non-NaN elements."""
    x = _t(b, x, "nanmean")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("nanmean(): expected input to have floating point "
                      "dtype but got %s" % str(x.dtype)[6:])
    nan = O.isnan(b, x)
    cnt = O.sum_(b, O.cast(b, O.logical_not(b, nan), x.dtype), dim, keepdim)
    return O.div(b, nansum(b, x, dim, keepdim), cnt)


@O.both("nan_to_num")
def nan_to_num(b, x, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN -> nan, +inf -> posinf (default the dtype's max), -inf ->
    neginf (its lowest); integers unchanged."""
    x = _t(b, x, "nan_to_num")
    if not x.dtype.is_floating_point:
        return O.copy_of(x)
    fi = torch.finfo(x.dtype)
    pv = fi.max if posinf is None else posinf
    nv = fi.min if neginf is None else neginf
    r = O.where(b, O.isnan(b, x), b.constant(nan, x.dtype), x)
    r = O.where(b, _bool(b, "eq", x, float("inf")), b.constant(pv, x.dtype),
                r)
    return O.where(b, _bool(b, "eq", x, float("-inf")),
                   b.constant(nv, x.dtype), r)


@O.both("square")
def square(b, x, *, out=None):
    """x * x (bool: int64, as pow(x, 2))."""
    x = _t(b, x, "square")
    if x.dtype == torch.bool:
        x = O.cast(b, x, torch.int64)
    return O.mul(b, x, x)


@O.both("exp2")
def exp2(b, x, *, out=None):
    """2 ** x (integers: the default float dtype)."""
    x = _t(b, x, "exp2")
    dt = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()
    return O.binary(b, "pow", b.constant(2.0, dt), O.cast(b, x, dt))


@O.both("hypot")
def hypot(b, x, y, *, out=None):
    """sqrt(x^2 + y^2) scaled by max(|x|, |y|) so it does not overflow;
    an infinite operand gives +inf (even with a NaN), as std::hypot."""
    x, y = _pair(b, x, y, "hypot")
    ax, ay = _un(b, "abs", x), _un(b, "abs", y)
    hi = O.binary(b, "maximum", ax, ay)
    lo = O.binary(b, "minimum", ax, ay)
    safe = O.where(b, _bool(b, "eq", hi, 0.0), b.constant(1.0, x.dtype), hi)
    q = O.div(b, lo, safe)
    r = O.mul(b, hi, _un(b, "sqrt", O.add(b, O.mul(b, q, q), 1.0)))
    inf = O.binary(b, "logical_or", _bool(b, "eq", ax, float("inf")),
                   _bool(b, "eq", ay, float("inf")), out_dtype=torch.bool)
    return O.where(b, inf, b.constant(float("inf"), x.dtype), r)


@O.both("lerp")
def lerp(b, start, end, weight, *, out=None):
    """start + w (end - start) where |w| < 0.5, else end - (end - start)
    (1 - w) (PyTorch's lerp kernel; f16/bf16 compute in f32 and round
    once, as its opmath)."""
    s, e = _pair(b, start, end, "lerp")
    dt = s.dtype
    ct = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    s, e = O.cast(b, s, ct), O.cast(b, e, ct)
    w = O.operand(b, weight, ct) if not O.is_tensor(weight) else \
        O.cast(b, weight, ct)
    d = O.sub(b, e, s)
    small = _bool(b, "lt", _un(b, "abs", w), 0.5)
    r = O.where(b, small, O.add(b, s, O.mul(b, w, d)),
                O.sub(b, e, O.mul(b, d, O.rsub(b, w, 1.0))))
    return O.cast(b, r, dt)


@O.both("logit")
def logit(b, x, eps=None, *, out=None):
    """log(z / (1 - z)), z = clamp(x, eps, 1 - eps) when eps is given."""
    x = _t(b, x, "logit")
    if not x.dtype.is_floating_point:
        x = O.cast(b, x, torch.get_default_dtype())
    z = x
    if eps is not None:
        eps = float(b.static(eps, "logit's eps"))
        z = O.clamp(b, x, eps, 1.0 - eps)
    return _un(b, "log", O.div(b, z, O.rsub(b, z, 1.0)))


@O.both("xlogy")
def xlogy(b, x, y, *, out=None):
    """x * log(y), 0 where x == 0, NaN where y is NaN."""
    if not O.is_tensor(x) and not O.is_tensor(y):
        raise b.error("xlogy of two numbers")
    dt = _float_dt(b, x, y)
    X, Y = O.operand(b, x, dt), O.operand(b, y, dt)
    r = O.mul(b, X, _un(b, "log", Y))
    r = O.where(b, _bool(b, "eq", X, 0.0), b.constant(0, dt), r)
    return O.where(b, O.isnan(b, Y), b.constant(float("nan"), dt), r)


O.both("special_xlogy")(xlogy)
O.function(torch.special.xlogy)(xlogy)


@O.both("sgn")
def sgn(b, x, *, out=None):
    """sign for real tensors."""
    x = _t(b, x, "sgn")
    if x.dtype == torch.bool:
        return O.copy_of(x)
    return _un(b, "sign", x)


@O.both("signbit")
def signbit(b, x, *, out=None):
    """x < 0, or x == -0.0 (1 / x is -inf)."""
    x = _t(b, x, "signbit")
    if x.dtype == torch.bool:
        return _bool(b, "ne", x, x)
    neg = _bool(b, "lt", x, 0)
    if not x.dtype.is_floating_point:
        return neg
    nz = _bool(b, "lt", _un(b, "reciprocal", x), 0.0)
    return O.binary(b, "logical_or", neg, nz, out_dtype=torch.bool)


@O.both("sinc")
def sinc(b, x, *, out=None):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _t(b, x, "sinc")
    if not x.dtype.is_floating_point:
        x = O.cast(b, x, torch.get_default_dtype())
    px = O.mul(b, x, math.pi)
    r = O.div(b, _un(b, "sin", px), px)
    return O.where(b, _bool(b, "eq", x, 0.0), b.constant(1.0, x.dtype), r)


@O.both("heaviside")
def heaviside(b, x, values, *, out=None):
    """values where x == 0, else (x > 0) (NaN gives 0, as PyTorch); x
    and values of one dtype, as PyTorch requires."""
    x, v = _t(b, x, "heaviside"), _t(b, values, "heaviside")
    if x.dtype != v.dtype:
        raise b.error("heaviside is not yet implemented for tensors with "
                      "different dtypes")
    if x.dtype == torch.bool:
        return O.where(b, x, x, v)
    pos = O.cast(b, _bool(b, "gt", x, 0), x.dtype)
    return O.where(b, _bool(b, "eq", x, 0), v, pos)


def _isinf_sign(name, v):
    def conv(b, x, *, out=None):
        x = _t(b, x, name)
        if not x.dtype.is_floating_point:
            return _bool(b, "ne", x, x)  # false: integers are finite
        return _bool(b, "eq", x, v)
    conv.__name__ = name
    return conv


O.both("isposinf")(_isinf_sign("isposinf", float("inf")))
O.both("isneginf")(_isinf_sign("isneginf", float("-inf")))


@O.both("float_power")
def float_power(b, x, y, *, out=None):
    """pow in float64."""
    if not O.is_tensor(x) and not O.is_tensor(y):
        raise b.error("float_power of two numbers")
    X = O.operand(b, x, torch.float64)
    Y = O.operand(b, y, torch.float64)
    return O.binary(b, "pow", X, Y)


@O.both("isin")
def isin(b, elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element equals one of test_elements (compared in
    their promoted dtype)."""
    if not O.is_tensor(elements) and not O.is_tensor(test_elements):
        raise b.error("isin of two numbers")
    dt = O.result_type(b, elements, test_elements)
    e = O.operand(b, elements, dt)
    t = O.operand(b, test_elements, dt)
    tf = O.reshape(b, t, [-1])
    hit = _bool(b, "eq", O.unsqueeze(b, e, -1),
                O.reshape(b, tf, [1] * e.ndim + [-1]))
    r = O.any_(b, hit, [-1]) if b.static(tf.shape[0], "isin's size") else \
        O.full(b, list(e.shape), 0, torch.bool)
    if b.static(invert, "isin's invert"):
        r = O.logical_not(b, r)
    return r


def _shift(name, left):
    def conv(b, x, y, *, out=None):
        """x * 2^y (left) or floor(x / 2^y) (right) for integers; shifts
        of the width or more (or negative) give 0, or -1 for a negative x
        shifted right, as PyTorch's CPU kernels."""
        if not O.is_tensor(x) and not O.is_tensor(y):
            raise b.error("%s of two numbers" % name)
        dt = O.result_type(b, x, y)
        if dt.is_floating_point or dt == torch.bool:
            raise b.error("%s is only defined for integer tensors, got %s"
                          % (name, dt))
        X, Y = O.operand(b, x, dt), O.operand(b, y, dt)
        bits = torch.iinfo(dt).bits
        # Shift in int64, by a power of two (exact for counts < bits).
        X64, Y64 = O.cast(b, X, torch.int64), O.cast(b, Y, torch.int64)
        ok = O.binary(b, "logical_and", _bool(b, "ge", Y64, 0),
                      _bool(b, "lt", Y64, bits), out_dtype=torch.bool)
        ysafe = O.where(b, ok, Y64, b.constant(0, torch.int64))
        p = O.binary(b, "pow", b.constant(2, torch.int64), ysafe)
        if left:
            # Wrap to the dtype as a shift does: the low bits.
            r = O.mul(b, X64, p)
            r = O.cast(b, r, dt) if dt != torch.int64 else r
            return O.where(b, ok, r, b.constant(0, dt))
        r = O.div(b, X64, p, rounding_mode="floor")
        r = O.cast(b, r, dt)
        over = O.where(b, _bool(b, "lt", X, 0), b.constant(-1, dt),
                       b.constant(0, dt))
        return O.where(b, ok, r, over)
    conv.__name__ = name
    return conv


O.both("bitwise_left_shift", "__lshift__", extra=(operator.lshift,))(
    _shift("bitwise_left_shift", True))
O.both("bitwise_right_shift", "__rshift__", extra=(operator.rshift,))(
    _shift("bitwise_right_shift", False))


# -------------------------------------------------------------- shape ops


@O.both("roll")
def roll(b, x, shifts, dims=None):
    """Elements shifted along dims (none: the flattened tensor)."""
    x = _t(b, x, "roll")
    if isinstance(shifts, (int, Sym)):
        shifts = [shifts]
    if isinstance(dims, (int, Sym)):
        dims = [dims]
    shifts = [b.static(s, "a roll shift") for s in shifts]
    if dims is None or len(dims) == 0:
        if len(shifts) != 1:
            raise b.error("shifts and dimensions must align. shifts: %d, "
                          "dims: 0" % len(shifts))
        flat = O.reshape(b, x, [-1])
        return O.reshape(b, roll(b, flat, shifts, [0]), list(x.shape))
    if len(dims) != len(shifts):
        raise b.error("shifts and dimensions must align. shifts: %d, dims: "
                      "%d" % (len(shifts), len(dims)))
    r = x
    for s, d in zip(shifts, dims):
        d = O.norm_dim(b, d, x.ndim)
        n = b.static(r.shape[d], "roll's size")
        if n == 0:
            continue
        s %= n
        if s:
            r = O.cat(b, [O.slice_dim(b, r, d, n - s, n, 1),
                          O.slice_dim(b, r, d, 0, n - s, 1)], d)
    return r if r is not x else O.copy_of(x)


def _fftshift(name, inverse):
    def conv(b, x, dim=None):
        """torch.fft.fftshift: a roll by size // 2 (ifftshift: (size + 1) // 2)
        along dim (none: every dim), as PyTorch 1.13's
        aten/src/ATen/native/SpectralOps.cpp; real in, real out."""
        x = _t(b, x, name)
        if dim is None:
            dims = list(range(x.ndim))
        elif isinstance(dim, (int, Sym)):
            dims = [dim]
        else:
            dims = list(dim)
        dims = [O.norm_dim(b, b.static(d, "a %s dim" % name), x.ndim)
                for d in dims]
        shifts = [(b.static(x.shape[d], "%s's size" % name) +
                   (1 if inverse else 0)) // 2
                  for d in dims]
        if not dims:  # as PyTorch: roll with no shifts
            raise b.error("%s with an empty dim: `shifts` required" % name)
        return roll(b, x, shifts, dims)
    conv.__name__ = name
    O.FUNCTIONS[getattr(torch.fft, name)] = conv
    return conv


fftshift = _fftshift("fftshift", False)
ifftshift = _fftshift("ifftshift", True)


@O.both("tile")
def tile(b, x, dims):
    """repeat with 1s prepended to dims (or to x's shape)."""
    x = _t(b, x, "tile")
    dims = [b.static(d, "a tile count") for d in dims]
    dims = [1] * (x.ndim - len(dims)) + dims
    return O.repeat(b, x, dims)


@O.both("rot90")
def rot90(b, x, k=1, dims=(0, 1)):
    """k quarter turns in the plane of dims (from the first towards the
    second)."""
    x = _t(b, x, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise b.error("expected total rotation dims == 2, but got dims = %d"
                      % len(dims))
    if x.ndim < 2:
        raise b.error("expected total dims >= 2, but got total dims = %d"
                      % x.ndim)
    d0, d1 = (O.norm_dim(b, d, x.ndim) for d in dims)
    if d0 == d1:
        raise b.error("expected rotation dims to be different, but got "
                      "dim0 = %d and dim1 = %d" % (d0, d1))
    k = b.static(k, "rot90's k") % 4
    if k == 1:
        return O.transpose(b, O.flip(b, x, [d1]), d0, d1)
    if k == 2:
        return O.flip(b, x, [d0, d1])
    if k == 3:
        return O.transpose(b, O.flip(b, x, [d0]), d0, d1)
    return O.copy_of(x)


@O.both("ravel")
def ravel(b, x):
    return O.reshape(b, _t(b, x, "ravel"), [-1])


def _atleast(n):
    def one(b, x):
        x = _t(b, x, "atleast_%dd" % n)
        if x.ndim >= n:
            return x
        if x.ndim == 0:
            return O.reshape(b, x, [1] * n)
        if n == 2:
            return O.unsqueeze(b, x, 0)
        # n == 3: [N] -> [1, N, 1], [M, N] -> [M, N, 1].
        if x.ndim == 1:
            return O.reshape(b, x, [1, x.shape[0], 1])
        return O.unsqueeze(b, x, -1)

    def conv(b, *tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(one(b, t) for t in tensors[0])
        if len(tensors) == 1:
            return one(b, tensors[0])
        return tuple(one(b, t) for t in tensors)
    conv.one = one
    return conv


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)
O.function(torch.atleast_1d)(atleast_1d)
O.function(torch.atleast_2d)(atleast_2d)
O.function(torch.atleast_3d)(atleast_3d)


def _stack_fn(name, fix, dim_of):
    def conv(b, tensors, *, out=None):
        ts = [fix(b, _t(b, t, name)) for t in tensors]
        if not ts:
            raise b.error("%s expects a non-empty TensorList" % name)
        return O.cat(b, ts, dim_of(ts))
    conv.__name__ = name
    return conv


def _col(b, x):
    if x.ndim <= 1:
        return O.reshape(b, x, [-1, 1])
    return x


O.both("vstack", "row_stack")(_stack_fn("vstack", atleast_2d.one,
                                        lambda ts: 0))
O.both("hstack")(_stack_fn("hstack", atleast_1d.one,
                           lambda ts: 0 if ts[0].ndim == 1 else 1))
O.both("dstack")(_stack_fn("dstack", atleast_3d.one, lambda ts: 2))
O.both("column_stack")(_stack_fn("column_stack", _col, lambda ts: 1))


@O.both("tensor_split")
def tensor_split(b, x, indices_or_sections, dim=0):
    """n nearly equal parts (the first size % n one longer) or the parts
    between the given indices; tensor indices are read when they are
    constants only (else refused: data-dependent sizes)."""
    x = _t(b, x, "tensor_split")
    d = O.norm_dim(b, dim, x.ndim)
    ios = indices_or_sections
    if O.is_tensor(ios):
        raise b.error("tensor_split with tensor indices_or_sections is not "
                      "supported (the split sizes depend on its values)")
    if isinstance(ios, (int, Sym)):
        n = b.static(ios, "tensor_split's sections")
        if n <= 0:
            raise b.error("number of sections must be larger than 0, got %d"
                          % n)
    # The arguments are checked before the size is needed (a dynamic dim
    # is specialized here).
    L = b.static(x.shape[d], "tensor_split's size")
    if isinstance(ios, (int, Sym)):
        q, rem = divmod(L, n)
        bounds, s = [], 0
        for i in range(n):
            e = s + q + (1 if i < rem else 0)
            bounds.append((s, e))
            s = e
    else:
        idx = [b.static(i, "a tensor_split index") for i in ios]
        bounds, s = [], 0
        for i in idx + [L]:
            i = i + L if i < 0 else i
            i = max(0, min(i, L))
            bounds.append((s, max(s, i)))
            s = max(s, i)
    return tuple(O.slice_dim(b, x, d, lo, hi, 1) for lo, hi in bounds)


def _split_fn(name, dim_of, min_rank):
    def conv(b, x, indices_or_sections):
        x = _t(b, x, name)
        if x.ndim < min_rank:
            raise b.error("torch.%s requires a tensor with at least %d "
                          "dimension, but got a tensor with %d dimensions!"
                          % (name, min_rank, x.ndim))
        d = dim_of(x)
        ios = indices_or_sections
        if isinstance(ios, (int, Sym)):
            n = b.static(ios, "%s's sections" % name)
            if n == 0 or b.static(x.shape[d], "%s's size" % name) % n:
                raise b.error("torch.%s attempted to split along dimension "
                              "%d, but the size of the dimension %d is not "
                              "divisible by the split_size %d!" % (
                                  name, d, value(x.shape[d]), n))
        return tensor_split(b, x, ios, d)
    conv.__name__ = name
    return conv


O.both("vsplit")(_split_fn("vsplit", lambda x: 0, 2))
O.both("hsplit")(_split_fn("hsplit", lambda x: 0 if x.ndim == 1 else 1, 1))
O.both("dsplit")(_split_fn("dsplit", lambda x: 2, 3))


@O.both("take_along_dim")
def take_along_dim(b, x, indices, dim=None, *, out=None):
    """gather along dim after broadcasting x and indices in the other
    dims (dim None: on the flattened tensors)."""
    x = _t(b, x, "take_along_dim")
    i = _t(b, indices, "take_along_dim")
    if dim is None:
        return O.gather(b, O.reshape(b, x, [-1]), 0, O.reshape(b, i, [-1]))
    if x.ndim != i.ndim:
        raise b.error("torch.take_along_dim(): input and indices should "
                      "have the same number of dimensions, but got %d "
                      "dimensions for input, and %d dimensions for indices"
                      % (x.ndim, i.ndim))
    d = O.norm_dim(b, dim, x.ndim)
    xs, ist = list(x.shape), list(i.shape)
    xs[d] = 1
    ist[d] = 1
    bs = O.broadcast(b, xs, ist)
    xt = list(bs)
    xt[d] = x.shape[d]
    it = list(bs)
    it[d] = i.shape[d]
    return O.gather(b, O.expand(b, x, xt), d, O.expand(b, i, it))


@O.both("take")
def take(b, x, index):
    """x.flatten()[index] (negative indices count from the end)."""
    x = _t(b, x, "take")
    i = _t(b, index, "take")
    flat = O.reshape(b, x, [-1])
    n = b.static(flat.shape[0], "take's size")
    fi = O.reshape(b, i, [-1])
    fi = O.where(b, _bool(b, "lt", fi, 0), O.add(b, fi, n), fi)
    return O.reshape(b, O.index_select(b, flat, 0, fi), list(i.shape))


@O.both("narrow_copy")
def narrow_copy(b, x, dim, start, length):
    return O.copy_of(O.narrow(b, x, dim, start, length))


@O.both("movedim", "moveaxis")
def movedim(b, x, source, destination):
    """permute moving the source dims to the destinations, the others
    keeping their order."""
    x = _t(b, x, "movedim")
    src = [source] if isinstance(source, (int, Sym)) else list(source)
    dst = [destination] if isinstance(destination, (int, Sym)) else \
        list(destination)
    if len(src) != len(dst):
        raise b.error("movedim: Invalid source or destination dims: source "
                      "(%s dims) should contain the same number of dims as "
                      "destination (%s dims)" % (src, dst))
    r = x.ndim
    src = [O.norm_dim(b, s, r) for s in src]
    dst = [O.norm_dim(b, s, r) for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise b.error("movedim: repeated dim")
    order = [None] * r
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(i for i in range(r) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    if order == list(range(r)):
        return O.alias(x)
    return O.permute(b, x, order)


@O.both("tensordot")
def tensordot(b, a, c, dims=2, out=None):
    """The contraction of a's dims dims_a with c's dims_c: permute,
    reshape to matrices, mm."""
    a, c = _t(b, a, "tensordot"), _t(b, c, "tensordot")
    if O.is_tensor(dims):
        raise b.error("tensordot with tensor dims is not supported")
    if isinstance(dims, (int, Sym)):
        n = b.static(dims, "tensordot's dims")
        if n < 0:
            raise b.error("tensordot expects dims >= 0, but got dims=%d" % n)
        da = list(range(a.ndim - n, a.ndim))
        dc = list(range(n))
    else:
        da, dc = dims
        da = [da] if isinstance(da, int) else list(da)
        dc = [dc] if isinstance(dc, int) else list(dc)
    da = [O.norm_dim(b, d, a.ndim) for d in da]
    dc = [O.norm_dim(b, d, c.ndim) for d in dc]
    if len(da) != len(dc):
        raise b.error("both dimension lists should have same length")
    for i, j in zip(da, dc):
        if value(a.shape[i]) != value(c.shape[j]):
            raise b.error("contracted dimensions need to match, but first "
                          "has size %d in dim %d and second has size %d in "
                          "dim %d" % (value(a.shape[i]), i,
                                      value(c.shape[j]), j))
    fa = [i for i in range(a.ndim) if i not in da]
    fc = [j for j in range(c.ndim) if j not in dc]
    dt = O.result_type(b, a, c)
    A_ = O.cast(b, O.permute(b, a, fa + da) if a.ndim else a, dt)
    C_ = O.cast(b, O.permute(b, c, dc + fc) if c.ndim else c, dt)
    k = 1
    for i in da:
        k *= b.static(a.shape[i], "tensordot's size")
    m = 1
    for i in fa:
        m *= b.static(a.shape[i], "tensordot's size")
    n = 1
    for j in fc:
        n *= b.static(c.shape[j], "tensordot's size")
    r = O.mm(b, O.reshape(b, A_, [m, k]), O.reshape(b, C_, [k, n]))
    return O.reshape(b, r, [a.shape[i] for i in fa] +
                     [c.shape[j] for j in fc])


@O.both("repeat_interleave")
def repeat_interleave(b, x, repeats=None, dim=None, *, output_size=None):
    """Each element repeated `repeats` times along dim (none: flattened);
    tensor repeats make a data-dependent size: refused unless it is one
    element broadcast to all."""
    x = _t(b, x, "repeat_interleave")
    if repeats is None:
        raise b.error("repeat_interleave(repeats) (the one-argument form "
                      "returns data-dependent sizes) is not supported")
    if O.is_tensor(repeats):
        raise b.error("repeat_interleave with tensor repeats is not "
                      "supported (the output size depends on its values)")
    n = b.static(repeats, "repeat_interleave's repeats")
    if n < 0:
        raise b.error("repeats can not be negative")
    if dim is None:
        x = O.reshape(b, x, [-1])
        d = 0
    else:
        d = O.norm_dim(b, dim, x.ndim)
    shape = list(x.shape)
    inter = shape[:d + 1] + [1] + shape[d + 1:]
    y = O.reshape(b, x, inter)
    tgt = list(inter)
    tgt[d + 1] = n
    y = O.expand(b, y, tgt)
    final = list(shape)
    final[d] = b.static(shape[d], "repeat_interleave's size") * n
    return O.copy_of(O.reshape(b, y, final))


A.aten("repeat_interleave.self_int")(
    lambda b, x, repeats, dim=None, *, output_size=None: repeat_interleave(
        b, x, repeats, dim, output_size=output_size))


# Nodes that pass their first argument's values on unchanged (make_fx's
# views and copies of a repeats tensor).
_SAME_VALUES = {"expand.default", "_reshape_alias.default", "view.default",
                "reshape.default", "alias.default", "clone.default",
                "lift_fresh_copy.default", "_to_copy.default"}


def _uniform_fill(node):
    """The int that every element of the FX node's tensor holds when the
    graph makes it as a fill with a literal (`full(size, n)`, or
    `fill_(empty(size), n)` / `fill(t, n)`) passed on by views and copies
    that nothing else reads or writes; else None (then its values are
    data)."""
    import torch.fx as fx
    while True:
        # Each node of the chain read by one node only (an in-place write
        # to it would be another user).
        if not isinstance(node, fx.Node) or node.op != "call_function" or \
                len(node.users) != 1:
            return None
        if A.overload_name(node.target) not in _SAME_VALUES:
            break
        node = node.args[0]
    name = A.overload_name(node.target)
    if name == "full.default":
        v = node.args[1]
    elif name in ("fill_.Scalar", "fill.Scalar"):
        v = node.args[1]
        base = node.args[0]
        if name == "fill_.Scalar" and (
                not isinstance(base, fx.Node) or len(base.users) != 1 or
                A.overload_name(base.target) not in (
                    "empty.memory_format", "zeros.default", "ones.default")):
            return None
    else:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v


@A.aten("repeat_interleave.Tensor")
def _a_repeat_interleave_tensor(b, repeats, *, output_size=None):
    """repeat_interleave(repeats): each index i of repeats repeated
    repeats[i] times. Its size is the sum of the repeats' values, so it
    converts where the graph fills repeats with one literal n (what 1.13's
    make_fx records for x.repeat_interleave(n): index_select by
    repeat_interleave(expand(fill_(empty, n)))): arange(L) with each index
    expanded n times; other repeats are data, refused."""
    repeats = _t(b, repeats, "repeat_interleave's repeats")
    if repeats.ndim != 1 or repeats.dtype not in (torch.int32, torch.int64):
        raise b.error("repeat_interleave only accepts a 1-D int32 or int64 "
                      "repeats tensor, got %d-D %s"
                      % (repeats.ndim, repeats.dtype))
    n = _uniform_fill(b.node.args[0] if b.node is not None else None)
    if n is None:
        why = "data-dependent" if output_size is None else (
            "data-dependent; output_size=%s would not check the values"
            % (output_size,))
        raise b.error("aten.repeat_interleave.Tensor: the result's size is "
                      "the sum of the values of its repeats tensor (%s), not "
                      "supported unless the graph fills it with one number "
                      "(aten.repeat_interleave.self_int converts)" % why)
    if n < 0:
        raise b.error("repeats can not be negative")
    L = b.static(repeats.shape[0], "the length of repeat_interleave's "
                 "repeats")
    if output_size is not None and b.static(
            output_size, "repeat_interleave's output_size") != L * n:
        raise b.error("repeat_interleave: output_size %s is not the sum of "
                      "the repeats, %d" % (output_size, L * n))
    i = O.cast(b, O.arange(b, L), repeats.dtype)
    r = O.expand(b, O.reshape(b, i, [L, 1]), [L, n])
    return O.copy_of(O.reshape(b, r, [L * n]))


@O.both("diagflat")
def diagflat(b, x, offset=0):
    x = _t(b, x, "diagflat")
    return O.diag(b, O.reshape(b, x, [-1]), offset)


@O.function(torch.block_diag)
def block_diag(b, *tensors):
    """The tensors (0-d: 1x1, 1-D: one row) on the diagonal of a zero
    matrix, in their promoted dtype."""
    ts = [_t(b, t, "block_diag") for t in tensors]
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise b.error("torch.block_diag: Input tensors must have 2 or "
                          "fewer dimensions. Input %d has %d dimensions"
                          % (i, t.ndim))
    if not ts:
        return O.full(b, [1, 0], 0, torch.get_default_dtype())
    dt = O.result_type(b, *ts)
    ms = []
    for t in ts:
        t = O.cast(b, t, dt)
        if t.ndim == 0:
            t = O.reshape(b, t, [1, 1])
        elif t.ndim == 1:
            t = O.reshape(b, t, [1, -1])
        ms.append(t)
    W = sum(b.static(m.shape[1], "block_diag's size") for m in ms)
    rows, left = [], 0
    for m in ms:
        h = b.static(m.shape[0], "block_diag's block rows")
        w = b.static(m.shape[1], "block_diag's block columns")
        parts = []
        if left:
            parts.append(O.full(b, [h, left], 0, dt))
        parts.append(m)
        if W - left - w:
            parts.append(O.full(b, [h, W - left - w], 0, dt))
        rows.append(O.cat(b, parts, 1) if len(parts) > 1 else m)
        left += w
    return O.cat(b, rows, 0) if len(rows) > 1 else O.copy_of(rows[0])


@O.function(torch.cartesian_prod)
def cartesian_prod(b, *tensors):
    """The rows of every combination, the last tensor fastest (1 tensor:
    itself)."""
    ts = [_t(b, t, "cartesian_prod") for t in tensors]
    if any(t.ndim != 1 for t in ts):
        raise b.error("Expect a 1D vector, but got shape %s" % next(
            [value(d) for d in t.shape] for t in ts if t.ndim != 1))
    if len(ts) == 1:
        return O.copy_of(ts[0])
    grids = O.meshgrid(b, *ts, indexing="ij")
    return O.stack(b, [O.reshape(b, g, [-1]) for g in grids], 1)


@O.function(torch.combinations)
def combinations(b, x, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements (index lists
    built at compile time, itertools' order as PyTorch's)."""
    x = _t(b, x, "combinations")
    if x.ndim != 1:
        raise b.error("Expect a 1D vector, but got shape %s" % (
            [value(d) for d in x.shape],))
    r = b.static(r, "combinations' r")
    if r < 0:
        raise b.error("Expect a non-negative number, but got %d" % r)
    n = b.static(x.shape[0], "combinations's size")
    if r == 0:
        return O.full(b, [0], 0, x.dtype)
    f = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    combos = list(f(range(n), r))
    if not combos:
        return O.full(b, [0, r], 0, x.dtype)
    cols = []
    for j in range(r):
        idx = O.tensor(b, [c[j] for c in combos], dtype=torch.int64)
        cols.append(O.index_select(b, x, 0, idx))
    return O.stack(b, cols, 1)


# ------------------------------------------------------ statistics


@O.both("cov")
def cov(b, x, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) over the columns
    (observations), divided by N - correction (no frequency or
    observation weights)."""
    x = _t(b, x, "cov")
    if x.ndim > 2:
        raise b.error("cov(): expected input to have two or fewer "
                      "dimensions but got an input with %d dimensions"
                      % x.ndim)
    if fweights is not None or aweights is not None:
        raise b.error("cov with fweights or aweights is not supported")
    if not x.dtype.is_floating_point:
        x = O.cast(b, x, torch.get_default_dtype())
    if x.ndim < 2:
        x = O.reshape(b, x, [1, -1])
    corr = b.static(correction, "cov's correction")
    xm = O.sub(b, x, O.mean(b, x, [1], True))
    c = O.mm(b, xm, O.t(b, xm))
    N = x.shape[1]
    if isinstance(N, Sym):
        # The observations' count at run time (a dynamic dim).
        n = O.cast(b, O._dim_size_tensor(b, x, 1), c.dtype)
        c = O.div(b, c, O.clamp_min(b, O.sub(b, n, float(corr)), 0.0))
    else:
        c = O.div(b, c, float(max(N - corr, 0)))
    return O.reshape(b, c, []) if b.static(x.shape[0], "cov's variables") \
        == 1 else c


@O.both("corrcoef")
def corrcoef(b, x):
    """cov / sqrt(diag outer diag), clipped to [-1, 1]."""
    x = _t(b, x, "corrcoef")
    c = cov(b, x)
    if c.ndim == 0:
        return O.div(b, c, c)
    d = O.diagonal(b, c)
    sd = _un(b, "sqrt", d)
    c = O.div(b, c, O.unsqueeze(b, sd, 1))
    c = O.div(b, c, O.unsqueeze(b, sd, 0))
    return O.clamp(b, c, -1.0, 1.0)


# ------------------------------------------------ ATen overloads (make_fx)


def _aten_loss(conv, nargs):
    """aten.<loss>(inputs..., reduction int, extra...) -> the torch-level
    converter with reduction as a string."""
    def c(b, *args, **kw):
        args = list(args)
        red = args[nargs] if len(args) > nargs else kw.pop("reduction", 1)
        rest = args[nargs + 1:]
        return conv(b, *args[:nargs], *rest,
                    reduction=A._reduction(b, red), **kw)
    return c


A.aten("l1_loss")(_aten_loss(O.FUNCTIONS[F.l1_loss], 2))
A.aten("soft_margin_loss")(_aten_loss(O.FUNCTIONS[F.soft_margin_loss], 2))
A.aten("huber_loss")(lambda b, x, y, reduction=1, delta=1.0: huber_loss(
    b, x, y, A._reduction(b, reduction), delta))
A.aten("smooth_l1_loss")(lambda b, x, y, reduction=1, beta=1.0:
                         smooth_l1_loss(b, x, y, None, None,
                                        A._reduction(b, reduction), beta))
A.aten("binary_cross_entropy")(
    lambda b, x, y, weight=None, reduction=1: binary_cross_entropy(
        b, x, y, weight, None, None, A._reduction(b, reduction)))
A.aten("binary_cross_entropy_with_logits")(
    lambda b, x, y, weight=None, pos_weight=None, reduction=1:
    binary_cross_entropy_with_logits(b, x, y, weight, None, None,
                                     A._reduction(b, reduction), pos_weight))
A.aten("margin_ranking_loss")(
    lambda b, x1, x2, t, margin=0.0, reduction=1: margin_ranking_loss(
        b, x1, x2, t, margin, None, None, A._reduction(b, reduction)))
A.aten("hinge_embedding_loss")(
    lambda b, x, t, margin=1.0, reduction=1: hinge_embedding_loss(
        b, x, t, margin, None, None, A._reduction(b, reduction)))
A.aten("poisson_nll_loss")(
    lambda b, x, t, log_input, full, eps, reduction: poisson_nll_loss(
        b, x, t, log_input, full, None, eps, None,
        A._reduction(b, reduction)))
A.aten("cosine_embedding_loss")(
    lambda b, x1, x2, t, margin=0.0, reduction=1: cosine_embedding_loss(
        b, x1, x2, t, margin, None, None, A._reduction(b, reduction)))
A.aten("kl_div")(lambda b, x, t, reduction=1, log_target=False: kl_div(
    b, x, t, None, None, A._reduction(b, reduction), log_target))
A.aten("pairwise_distance")(pairwise_distance)
A.aten("cosine_similarity")(cosine_similarity)
A.aten("prelu", "_prelu_kernel")(prelu)
A.aten("hardshrink")(hardshrink)
A.aten("softshrink")(softshrink)
A.aten("dist")(dist)
A.aten("renorm")(renorm)
A.aten("nansum")(nansum)
A.aten("nanmean")(nanmean)
A.aten("nan_to_num")(nan_to_num)
A.aten("square")(square)
A.aten("exp2")(exp2)
A.aten("hypot")(hypot)
A.aten("lerp.Scalar", "lerp.Tensor")(lerp)
A.aten("logit")(logit)
A.aten("xlogy.Tensor", "xlogy.Scalar_Self", "xlogy.Scalar_Other",
       "special_xlogy")(xlogy)
A.aten("sgn")(sgn)
A.aten("signbit")(signbit)
A.aten("sinc")(sinc)
A.aten("heaviside")(heaviside)
A.aten("isposinf")(O.FUNCTIONS[torch.isposinf])
A.aten("isneginf")(O.FUNCTIONS[torch.isneginf])
A.aten("float_power.Tensor_Tensor", "float_power.Tensor_Scalar",
       "float_power.Scalar")(float_power)
A.aten("isin.Tensor_Tensor", "isin.Tensor_Scalar", "isin.Scalar_Tensor")(
    isin)
for _n in ("bitwise_left_shift", "bitwise_right_shift"):
    A.aten(_n + ".Tensor", _n + ".Tensor_Scalar", _n + ".Scalar_Tensor")(
        O.FUNCTIONS[getattr(torch, _n)])
A.aten("roll")(roll)
A.aten("rot90")(rot90)
A.aten("take_along_dim")(take_along_dim)
A.aten("take")(take)
A.aten("narrow_copy")(narrow_copy)
A.aten("movedim.int", "movedim.intlist")(movedim)
A.aten("repeat_interleave.self_int")(
    lambda b, x, repeats, dim=None, output_size=None: repeat_interleave(
        b, x, repeats, dim))
A.aten("tensor_split.sections", "tensor_split.indices")(tensor_split)
A.aten("cumprod")(O.FUNCTIONS[torch.cumprod])
A.aten("norm.Scalar", "norm.ScalarOpt_dim")(
    lambda b, x, p=2, dim=None, keepdim=False: norm(b, x, p, dim, keepdim))
A.aten("linalg_vector_norm")(
    lambda b, x, ord=2, dim=None, keepdim=False, dtype=None:
    linalg_vector_norm(b, x, ord, dim, keepdim, dtype=dtype))
A.aten("logsumexp")(O.FUNCTIONS[torch.logsumexp])
A.aten("diag")(O.FUNCTIONS[torch.diag])
A.aten("diag_embed")(O.FUNCTIONS[torch.diag_embed])
A.aten("block_diag")(lambda b, tensors: block_diag(b, *tensors))


@A.aten("new_ones", "new_full")
def _a_new_full(b, x, size, fill_value=1, *, dtype=None, layout=None,
                device=None, pin_memory=None):
    """x.new_ones(size) / x.new_full(size, v): x's dtype unless given."""
    O._check_device(b, device)
    return O.full(b, size, fill_value, dtype or _t(b, x, "new_full").dtype)


@A.aten("log_sigmoid_forward")
def _a_log_sigmoid_forward(b, x):
    """(logsigmoid(x), buffer): the buffer is exp(-|x|), what PyTorch's CPU
    kernel saves for log_sigmoid_backward."""
    x = A._float(b, _t(b, x, "log_sigmoid_forward"))
    out = O.FUNCTIONS[F.logsigmoid](b, x)
    return out, A._un(b, "exp", O.neg(b, O.abs_(b, x)))


@A.aten("log_sigmoid_backward")
def _a_log_sigmoid_backward(b, grad, x, buffer):
    """grad * sigmoid(-x), the derivative of logsigmoid (PyTorch's
    formula from the buffer, max_deriv - sign * z / (1 + z), is the same
    function)."""
    x = A._float(b, _t(b, x, "log_sigmoid_backward"))
    return O.mul(b, grad, A._un(b, "sigmoid", O.neg(b, x)))


@A.aten("_trilinear")
def _a_trilinear(b, i1, i2, i3, expand1, expand2, expand3, sumdim,
                 unroll_dim=1):
    """aten._trilinear (what F.bilinear records): each input unsqueezed
    at its expand dims, the three multiplied (broadcasting), summed over
    sumdim (those dims removed)."""
    ins = [_t(b, t, "_trilinear") for t in (i1, i2, i3)]
    exps = [b.static(e, "_trilinear's expand dims")
            for e in (expand1, expand2, expand3)]
    total = ins[0].ndim + len(exps[0])
    outs = []
    for t, ex in zip(ins, exps):
        if t.ndim + len(ex) != total:
            raise b.error("_trilinear: input of rank %d with %d expanded "
                          "dims does not have rank %d"
                          % (t.ndim, len(ex), total))
        ex = {d % total for d in ex}
        for d in range(total):
            if d in ex:
                t = O.unsqueeze(b, t, d)
        outs.append(t)
    sd = sorted({d % total for d in b.static(sumdim, "_trilinear's sumdim")})

    def f(t0, t1, t2):
        r = O.mul(b, O.mul(b, t0, t1), t2)
        return O.sum_(b, r, sd, False) if sd else r
    # f16/bf16 products summed in f32, rounded once (O._in_f32).
    r = O._in_f32(b, f, *outs)
    # PyTorch's sum of products keeps the inputs' dtype (int8 wraps in
    # int8; kt.sum accumulates integers in int64, wrapped back here).
    dt = O.result_type(b, *ins)
    return O.cast(b, r, dt) if r.dtype != dt else r


# ------------------------------------------- order statistics, im2col, misc


def _sorted_along(b, x, d):
    """(sorted values, their indices, the count of non-NaN elements with
    keepdim) along d; NaNs sort last, as kt.argsort and PyTorch."""
    idx = O._argsort(b, x, d, False)
    vals = b.op("gather", [x, idx], {"dim": d}, shape=x.shape, dtype=x.dtype)
    if x.dtype.is_floating_point:
        cnt = O.sum_(b, O.logical_not(b, O.isnan(b, x)), [d], True)
    else:
        shape = list(x.shape)
        shape[d] = 1
        cnt = O.full(b, shape, b.static(x.shape[d], "sorted_along's size"),
                     torch.int64)
    return vals, idx, cnt


def _median(name, ignore_nan):
    def conv(b, x, dim=None, keepdim=False, *, out=None):
        """The lower median ((n - 1) // 2 of the sorted values); a NaN
        makes it NaN (median) or is left out (nanmedian, NaN when all
        are); with dim also the index of that element."""
        x = _t(b, x, name)
        if x.dtype == torch.bool:
            raise b.error('"%s_cpu" not implemented for \'Bool\'' % name)
        whole = dim is None
        if whole:
            xf = O.reshape(b, x, [-1])
            d = 0
        else:
            xf = x
            d = O.norm_dim(b, dim, x.ndim)
        if xf.ndim == 0:
            v = O.copy_of(xf)
            return v if whole else O.SortResult(
                v, O.full(b, [], 0, torch.int64))
        n = b.static(xf.shape[d], "%s's size" % name)
        if n == 0:
            raise b.error("%s() input tensor cannot be empty" % name if whole
                          else "%s(): Expected reduction dim %d to have "
                          "non-zero size." % (name, d))
        vals, idx, cnt = _sorted_along(b, xf, d)
        if ignore_nan:
            # (cnt - 1) // 2, 0 when all are NaN (then the NaN itself).
            pos = O.clamp_min(b, O.div(b, O.sub(b, cnt, 1), 2,
                                       rounding_mode="floor"), 0)
        else:
            half = b.constant((n - 1) // 2, torch.int64)
            pos = O.where(b, _bool(b, "lt", cnt, n), cnt, half)
        pos = O.cast(b, pos, torch.int64)
        v = O.gather(b, vals, d, pos)
        if whole:
            return O.reshape(b, v, [])
        i = O.gather(b, idx, d, pos)
        if not b.static(keepdim, "keepdim"):
            v, i = O.squeeze(b, v, d), O.squeeze(b, i, d)
        return O.SortResult(v, i)
    conv.__name__ = name
    return conv


O.both("median")(_median("median", False))
O.both("nanmedian")(_median("nanmedian", True))


def _quantile(name, ignore_nan):
    def conv(b, x, q, dim=None, keepdim=False, *, interpolation="linear",
             out=None):
        """The q-quantiles of the sorted values at position q (n - 1)
        (n: the non-NaN count for nanquantile), interpolated as
        `interpolation` says; q a number or a 1-D tensor (a leading
        dim)."""
        x = _t(b, x, name)
        if not x.dtype.is_floating_point:
            raise b.error("%s() input tensor must be either float or double "
                          "dtype" % name)
        if interpolation not in ("linear", "lower", "higher", "midpoint",
                                 "nearest"):
            raise b.error("%s() interpolation must be one of linear, lower, "
                          "higher, midpoint or nearest. Got %s" % (
                              name, interpolation))
        whole = dim is None
        xf = O.reshape(b, x, [-1]) if whole or x.ndim == 0 else x
        d = 0 if whole or x.ndim == 0 else O.norm_dim(b, dim, x.ndim)
        n = b.static(xf.shape[d], "%s's size" % name)
        if n == 0:
            raise b.error("%s() input tensor must be non-empty" % name)
        scalar_q = not O.is_tensor(q)
        if scalar_q:
            qv = float(b.static(q, "%s's q" % name))
            if not 0 <= qv <= 1:
                raise b.error("%s() q must be in the range [0, 1] but got %g"
                              % (name, qv))
            qt = b.constant(qv, x.dtype)
            qt = O.reshape(b, qt, [1])
        else:
            qt = O.cast(b, q, x.dtype)
            if qt.ndim > 1:
                raise b.error("%s() q must be a scalar or 1D tensor" % name)
            qt = O.reshape(b, qt, [-1])
        vals, _, cnt = _sorted_along(b, xf, d)
        k = b.static(qt.shape[0], "%s's size" % name)
        # Move the reduced dim last, then a [..., k] position per q.
        perm = [i for i in range(xf.ndim) if i != d] + [d]
        sv = O.permute(b, vals, perm)
        c = O.cast(b, O.permute(b, cnt, perm), x.dtype)
        last = O.sub(b, c if ignore_nan else b.constant(n, x.dtype), 1.0)
        rank = O.mul(b, qt, O.clamp_min(b, last, 0.0))
        lo = _un(b, "floor", rank)
        hi = _un(b, "ceil", rank)
        if interpolation == "lower":
            pos_lo = pos_hi = lo
        elif interpolation == "higher":
            pos_lo = pos_hi = hi
        elif interpolation == "nearest":
            pos_lo = pos_hi = O.round_(b, rank)
        else:
            pos_lo, pos_hi = lo, hi
        il = O.cast(b, pos_lo, torch.int64)
        ih = O.cast(b, pos_hi, torch.int64)
        big = list(sv.shape[:-1]) + [k]
        il = O.expand(b, il, big) if il.ndim == len(big) else O.expand(
            b, O.reshape(b, il, [1] * (len(big) - 1) + [k]), big)
        ih = O.expand(b, ih, big) if ih.ndim == len(big) else O.expand(
            b, O.reshape(b, ih, [1] * (len(big) - 1) + [k]), big)
        vl = O.gather(b, sv, len(big) - 1, il)
        vh = O.gather(b, sv, len(big) - 1, ih)
        if interpolation == "linear":
            w = O.sub(b, rank, lo)
            r = lerp(b, vl, vh, w)
        elif interpolation == "midpoint":
            r = lerp(b, vl, vh, 0.5)
        else:
            r = vl
        if not ignore_nan:
            anynan = _bool(b, "lt", c, float(n))
            r = O.where(b, anynan, b.constant(float("nan"), x.dtype), r)
        else:
            allnan = _bool(b, "eq", c, 0.0)
            r = O.where(b, allnan, b.constant(float("nan"), x.dtype), r)
        # r: [rest..., k] -> [k, rest...] (q's dim first), keepdim puts a
        # 1 back at d (or all 1s for dim None).
        r = O.permute(b, r, [r.ndim - 1] + list(range(r.ndim - 1)))
        if b.static(keepdim, "keepdim"):
            if whole:
                r = O.reshape(b, r, [k] + [1] * x.ndim)
            else:
                r = O.unsqueeze(b, r, d + 1)
        if scalar_q:
            r = O.squeeze(b, r, 0)
        return r
    conv.__name__ = name
    return conv


O.both("quantile")(_quantile("quantile", False))
O.both("nanquantile")(_quantile("nanquantile", True))


@O.function(F.unfold)
def unfold(b, input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: [N, C, H, W] -> [N, C kh kw, L], one strided slice of the
    zero-padded input per kernel offset, stacked (channel-major, as
    PyTorch)."""
    x = _t(b, input, "unfold")
    if x.ndim not in (3, 4):
        raise b.error("Input Error: Only 3D or 4D input Tensors are "
                      "supported (got %dD)" % x.ndim)
    batched = x.ndim == 4
    if not batched:
        x = O.unsqueeze(b, x, 0)
    kh, kw = O.pair(b, kernel_size, "unfold's kernel_size")
    dh, dw = O.pair(b, dilation, "unfold's dilation")
    ph, pw = O.pair(b, padding, "unfold's padding")
    sh, sw = O.pair(b, stride, "unfold's stride")
    # PyTorch's argument checks (Im2Col's shape check), before the sizes
    # are needed (they specialize a dynamic dim).
    for what, name, v, w in (("kernel size", "kernel", kh, kw),
                             ("stride", "stride", sh, sw),
                             ("dilation", "dilation", dh, dw)):
        if v < 1 or w < 1:
            raise b.error("%s should be greater than zero, but got "
                          "%s_height: %d %s_width: %d"
                          % (what, name, v, name, w))
    N = x.shape[0]   # may stay dynamic
    C, H, W = (b.static(s, "unfold's input size") for s in x.shape[1:])
    oh = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise b.error("Given input with spatial size (%d, %d), kernel_size="
                      "(%d, %d), dilation=(%d, %d), padding=(%d, %d), "
                      "calculated shape of the array of sliding blocks as "
                      "(%d, %d), but its components must be at least one."
                      % (H, W, kh, kw, dh, dw, ph, pw, oh, ow))
    if ph or pw:
        x = O.FUNCTIONS[F.pad](b, x, [pw, pw, ph, ph])
    cols = []
    for i in range(kh):
        for j in range(kw):
            s = O.slice_dim(b, x, 2, i * dh, i * dh + sh * (oh - 1) + 1, sh)
            s = O.slice_dim(b, s, 3, j * dw, j * dw + sw * (ow - 1) + 1, sw)
            cols.append(s)
    r = O.stack(b, cols, 2)  # [N, C, kh kw, oh, ow]
    r = O.reshape(b, r, [N, C * kh * kw, oh * ow])
    return r if batched else O.squeeze(b, r, 0)


@O.function(F.fold)
def fold(b, input, output_size, kernel_size, dilation=1, padding=0,
         stride=1):
    """col2im: aten.col2im's decomposition."""
    x = _t(b, input, "fold")
    return A.ATEN["col2im.default"](
        b, x, list(O.pair(b, output_size, "fold's output_size")),
        list(O.pair(b, kernel_size, "fold's kernel_size")),
        list(O.pair(b, dilation, "fold's dilation")),
        list(O.pair(b, padding, "fold's padding")),
        list(O.pair(b, stride, "fold's stride")))


@O.function(F.bilinear, torch.bilinear)
def bilinear(b, x1, x2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + bias[o]."""
    x1, x2 = _t(b, x1, "bilinear"), _t(b, x2, "bilinear")
    w = _t(b, weight, "bilinear's weight")
    if w.ndim != 3:
        raise b.error("bilinear(): weight must be three-dimensional, got %d"
                      % w.ndim)
    # f16/bf16: computed in f32 and rounded once (PyTorch's own f32
    # computation rounded; the einsum's pairwise contraction rounded its
    # intermediate to bf16, up to 4 bf16 steps off).
    ts = [x1, w, x2] + ([_t(b, bias, "bilinear's bias")]
                        if bias is not None else [])

    def f(x1, w, x2, *bias):
        y = O.FUNCTIONS[torch.einsum](b, "...i,oij,...j->...o", x1, w, x2)
        return O.add(b, y, bias[0]) if bias else y
    return O._in_f32(b, f, *ts)


@O.function(torch.linalg.vecdot, getattr(torch._C._linalg, "linalg_vecdot",
                                        None))
def linalg_vecdot(b, x, y, *, dim=-1, out=None):
    """sum(x * y, dim) (PyTorch's definition, x.conj() * y, for real
    dtypes; integer tensors refused with PyTorch's message): the product
    promotes, the sum keeps its dtype."""
    x, y = _t(b, x, "linalg.vecdot"), _t(b, y, "linalg.vecdot")
    for t in (x, y):
        if not t.dtype.is_floating_point:
            raise b.error("linalg.vecdot: Expected a floating point or "
                          "complex tensor as input. Got %s" % {
                              torch.int64: "Long", torch.int32: "Int",
                              torch.int16: "Short", torch.int8: "Char",
                              torch.uint8: "Byte", torch.bool: "Bool"}.get(
                                  t.dtype, str(t.dtype)))
    r = O.mul(b, x, y)
    s = O.sum_(b, r, [dim], False)
    return O.cast(b, s, r.dtype) if s.dtype != r.dtype else s


@O.function(torch.linalg.multi_dot, getattr(torch._C._linalg,
                                            "linalg_multi_dot", None))
def linalg_multi_dot(b, tensors, *, out=None):
    """The chained matrix product in PyTorch's order (by cost: its
    three-matrix rule, else its matrix_chain_order; the order shows in
    rounding only); a 1-D first (last) tensor is a row (column) vector,
    removed from the result."""
    ts = [_t(b, t, "linalg.multi_dot") for t in tensors]
    if len(ts) < 2:
        raise b.error("multi_dot(): expected at least 2 tensors but got %d"
                      % len(ts))
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(ts) - 1))
        if not ok:
            raise b.error("multi_dot(): tensor %d must be %s but got %dD"
                          % (i, "1D or 2D" if i in (0, len(ts) - 1)
                             else "2D", t.ndim))
    # f16/bf16: the chain computed in f32 and rounded once (O._in_f32, as
    # addmm and the other products: issue 16).
    return O._in_f32(b, lambda *ts: _multi_dot(b, list(ts)), *ts)


def _multi_dot(b, ts):
    first1, last1 = ts[0].ndim == 1, ts[-1].ndim == 1
    if first1:
        ts[0] = O.unsqueeze(b, ts[0], 0)
    if last1:
        ts[-1] = O.unsqueeze(b, ts[-1], 1)
    mm = O.FUNCTIONS[torch.mm]
    dims = [b.static(t.shape[0], "multi_dot's sizes") for t in ts] + \
        [b.static(ts[-1].shape[1], "multi_dot's sizes")]
    n = len(ts)
    if n == 3:
        # PyTorch's order for three (f16/bf16 products are rounded between
        # the two mms, so the order shows in the result).
        a, bb, c, d = dims
        if (a * c) * (bb + d) > (bb * d) * (a + c):
            r = mm(b, ts[0], mm(b, ts[1], ts[2]))
        else:
            r = mm(b, mm(b, ts[0], ts[1]), ts[2])
    else:
        # PyTorch's matrix_chain_order (Cormen et al.; the first k of the
        # least cost), for two: one mm.
        m = [[0] * n for _ in range(n)]
        split = [[0] * n for _ in range(n)]
        for ln in range(1, n):
            for i in range(n - ln):
                j = i + ln
                m[i][j] = None
                for k in range(i, j):
                    q = m[i][k] + m[k + 1][j] + \
                        dims[i] * dims[k + 1] * dims[j + 1]
                    if m[i][j] is None or q < m[i][j]:
                        m[i][j], split[i][j] = q, k

        def chain(i, j):
            if i == j:
                return ts[i]
            k = split[i][j]
            return mm(b, chain(i, k), chain(k + 1, j))
        r = chain(0, n - 1)
    if last1:
        r = O.squeeze(b, r, 1)
    if first1:
        r = O.squeeze(b, r, 0)
    return r


@O.function(torch.linalg.matrix_power, torch.matrix_power,
            getattr(torch._C._linalg, "linalg_matrix_power", None))
def linalg_matrix_power(b, a, n, *, out=None):
    """A ** n for n >= 0 by PyTorch's products (n 0: the identity, 1: a
    copy, 2 and 3: matmuls, else its binary decomposition, least
    significant bit first), so the rounding is PyTorch's; a negative n
    needs the inverse (LAPACK), refused."""
    a = _t(b, a, "linalg.matrix_power")
    n = b.static(n, "matrix_power's exponent")
    if a.ndim < 2 or value(a.shape[-1]) != value(a.shape[-2]):
        raise b.error("linalg.matrix_power: A must be batches of square "
                      "matrices, but they are %s matrices" % " by ".join(
                          str(value(d)) for d in a.shape[-2:]))
    if n < 0:
        raise b.error("linalg.matrix_power with a negative exponent (%d) "
                      "is not supported (it needs the inverse, LAPACK)" % n)
    mul = O.FUNCTIONS[torch.matmul]
    if n == 0:
        # The identity whatever a holds (NaN and inf too).
        k = b.static(a.shape[-1], "matrix_power's size")
        eye = A.ATEN["eye.default"](b, k, dtype=a.dtype)
        return O.copy_of(O.expand(b, eye, list(a.shape)))
    if n == 1:
        return O.copy_of(a)
    if n == 2:
        return mul(b, a, a)
    if n == 3:
        return mul(b, mul(b, a, a), a)
    z = r = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else mul(b, z, z)
        if bit:
            r = z if r is None else mul(b, r, z)
    return r


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None,
                "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


@O.function(torch.cdist, torch.functional.cdist)
def cdist(b, x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_"
          "necessary"):
    """aten._cdist_forward (what torch.cdist records)."""
    if compute_mode not in _CDIST_MODES:
        raise b.error("%s is not a valid value for compute_mode"
                      % compute_mode)
    return A.ATEN["_cdist_forward.default"](b, x1, x2, p,
                                            _CDIST_MODES[compute_mode])


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


@O.function(F.grid_sample)
def grid_sample(b, x, grid, mode="bilinear", padding_mode="zeros",
                align_corners=None):
    """aten.grid_sampler_2d for 4-D inputs (F.grid_sample's dispatch;
    align_corners None is False, as PyTorch)."""
    x = _t(b, x, "grid_sample")
    if mode not in _GRID_MODES:
        raise b.error("nn.functional.grid_sample(): expected mode to be "
                      "'bilinear', 'nearest' or 'bicubic', but got: '%s'"
                      % mode)
    if padding_mode not in _GRID_PADDINGS:
        raise b.error("nn.functional.grid_sample(): expected padding_mode "
                      "to be 'zeros', 'border', or 'reflection', but got: "
                      "'%s'" % padding_mode)
    if x.ndim != 4:
        raise b.error("grid_sample of a %d-D input is not supported (Kiln "
                      "has aten.grid_sampler_2d, 4-D inputs)" % x.ndim)
    return A.ATEN["grid_sampler_2d.default"](
        b, x, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
        bool(align_corners))


@O.function(F.pdist, torch.pdist)
def pdist(b, x, p=2):
    """aten._pdist_forward's decomposition."""
    x = _t(b, x, "pdist")
    if x.ndim != 2:
        raise b.error("pdist only supports 2D tensors, got: %dD" % x.ndim)
    return A.ATEN["_pdist_forward.default"](b, x, p)


@O.function(torch.zero_)
def zero_(b, x):
    return O.METHODS["zero_"](b, x)


@O.both("put")
def put(b, x, index, source, accumulate=False):
    """x.flatten() with source written (or added) at index (negative
    indices count from the end)."""
    x = _t(b, x, "put")
    i = _t(b, index, "put")
    s = _t(b, source, "put")
    flat = O.reshape(b, x, [-1])
    n = b.static(flat.shape[0], "put's size")
    fi = O.reshape(b, i, [-1])
    fi = O.where(b, _bool(b, "lt", fi, 0), O.add(b, fi, n), fi)
    r = O.index_put(b, flat, [fi], O.reshape(b, O.cast(b, s, x.dtype),
                                             [-1]), accumulate)
    return O.reshape(b, r, list(x.shape))


O.METHODS["put_"] = lambda b, x, index, source, accumulate=False: \
    O.in_place(b, x, put(b, x, index, source, accumulate))


def _cumext(name, kt_reduce):
    def conv(b, x, dim, *, out=None):
        """(running max/min, the index where it was last reached) along
        dim, as an [n, n] lower-triangular masked reduction (so dims are
        limited to 1024 elements); a NaN stays from where it appears and
        ties index the last occurrence, as PyTorch's kernel."""
        x = _t(b, x, name)
        d = O.norm_dim(b, dim, x.ndim)
        if x.ndim == 0:
            return O.SortResult(O.copy_of(x),
                                O.full(b, [], 0, torch.int64))
        n = b.static(x.shape[d], "%s's size" % name)
        if n > 1024:
            raise b.error("%s along a dim of %d elements is not supported "
                          "(its decomposition is quadratic; at most 1024)"
                          % (name, n))
        xm = movedim(b, x, d, -1) if d != x.ndim - 1 else x
        rest = list(xm.shape[:-1])
        # m[..., i, j] = x[..., j] for j <= i, else the identity.
        xv = O.expand(b, O.unsqueeze(b, xm, -2), rest + [n, n])
        tri = O.tensor(b, [[j <= i for j in range(n)] for i in range(n)],
                       dtype=torch.bool)
        if x.dtype == torch.bool:
            ident = b.constant(kt_reduce == "amin", torch.bool)
        elif x.dtype.is_floating_point:
            ident = b.constant(float("-inf") if kt_reduce == "amax" else
                               float("inf"), x.dtype)
        else:
            info = torch.iinfo(x.dtype)
            ident = b.constant(info.min if kt_reduce == "amax" else
                               info.max, x.dtype)
        m = O.where(b, tri, xv, ident)
        isnan = None
        if x.dtype.is_floating_point:
            isnan = O.isnan(b, m)
        v = getattr(O, kt_reduce)(b, m, [-1])
        if isnan is not None:
            anynan = O.any_(b, isnan, [-1])
            v = O.where(b, anynan, b.constant(float("nan"), x.dtype), v)
        # The index: the last j <= i with x[j] == v[i] (the last NaN so
        # far when v is NaN: PyTorch's kernel moves to each new NaN).
        hit = _bool(b, "eq", m, O.unsqueeze(b, v, -1))
        if isnan is not None:
            hit = O.where(b, O.unsqueeze(b, anynan, -1), isnan, hit)
        hit = O.binary(b, "logical_and", hit, tri, out_dtype=torch.bool)
        js = O.arange(b, n)
        i = O.amax(b, O.where(b, hit, js, b.constant(-1, torch.int64)),
                   [-1])
        if d != x.ndim - 1:
            v, i = movedim(b, v, -1, d), movedim(b, i, -1, d)
        return O.SortResult(v, i)
    conv.__name__ = name
    return conv


O.both("cummax")(_cumext("cummax", "amax"))
O.both("cummin")(_cumext("cummin", "amin"))


A.aten("median.default", "median.dim")(O.FUNCTIONS[torch.median])
A.aten("nanmedian.default", "nanmedian.dim")(O.FUNCTIONS[torch.nanmedian])
A.aten("cummax")(O.FUNCTIONS[torch.cummax])
A.aten("cummin")(O.FUNCTIONS[torch.cummin])
A.aten("im2col")(lambda b, x, kernel_size, dilation, padding, stride: unfold(
    b, x, kernel_size, dilation, padding, stride))
A.aten("put")(put)
A.aten("zero")(lambda b, x: O.full(b, list(_t(b, x, "zero").shape), 0,
                                   x.dtype))


# ------------------------------------------------------- more losses


@O.function(F.multi_margin_loss)
def multi_margin_loss(b, input, target, p=1, margin=1.0, weight=None,
                      size_average=None, reduce=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p (times
    weight[y]) / C, per sample (PyTorch's kernel)."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "multi_margin_loss")
    x = _t(b, input, "multi_margin_loss")
    t = _t(b, target, "multi_margin_loss")
    p = b.static(p, "multi_margin_loss's p")
    if p not in (1, 2):
        raise b.error("only p == 1 and p == 2 supported")
    if not x.dtype.is_floating_point:
        raise b.error("multi_margin_loss of a %s input (float only)"
                      % x.dtype)
    x2 = x if x.ndim == 2 else O.reshape(b, x, [1, -1])
    t1 = O.reshape(b, t, [-1])
    C = b.static(x2.shape[1], "multi_margin_loss's size")
    xy = O.gather(b, x2, 1, O.unsqueeze(b, t1, 1))  # [N, 1]
    z = O.clamp_min(b, O.add(b, O.sub(b, x2, xy), margin), 0.0)
    if p == 2:
        z = O.mul(b, z, z)
    if weight is not None:
        w = O.cast(b, _t(b, weight, "a weight"), x.dtype)
        z = O.mul(b, z, O.unsqueeze(b, O.index_select(b, w, 0, t1), 1))
    not_y = _bool(b, "ne", O.unsqueeze(b, O.arange(b, C), 0),
                  O.unsqueeze(b, t1, 1))
    z = O.where(b, not_y, z, b.constant(0, x.dtype))
    loss = O.div(b, O.sum_(b, z, [1]), float(C))
    if x.ndim < 2:
        loss = O.reshape(b, loss, list(t.shape))
    return _reduce(b, loss, r)


@O.function(F.multilabel_margin_loss)
def multilabel_margin_loss(b, input, target, size_average=None,
                           reduce=None, reduction="mean"):
    """sum over the target classes j (target's entries up to the first
    -1) and the non-target classes i of max(0, 1 - (x[j] - x[i])) / C
    (PyTorch's kernel), with masks instead of its loop."""
    r = _reduction_string(b, size_average, reduce, reduction,
                          "multilabel_margin_loss")
    loss, _ = _multilabel_margin(b, input, target)
    return _reduce(b, loss, r)


def _multilabel_margin(b, input, target):
    """(the per-sample loss, is_target): is_target[n, c] = 1 where class c
    is one of sample n's targets, in the input's dtype and the target's
    shape (aten.multilabel_margin_loss_forward's second result)."""
    x = _t(b, input, "multilabel_margin_loss")
    t = _t(b, target, "multilabel_margin_loss")
    if not x.dtype.is_floating_point:
        raise b.error("multilabel_margin_loss of a %s input (float only)"
                      % x.dtype)
    if x.ndim > 2 or [value(d) for d in t.shape] != [value(d)
                                                      for d in x.shape]:
        raise b.error("multilabel_margin_loss: the target must have the "
                      "input's shape (a 0-D, 1-D or 2-D input), got input "
                      "%s and target %s" % ([value(d) for d in x.shape],
                                            [value(d) for d in t.shape]))
    x2 = x if x.ndim == 2 else O.reshape(b, x, [1, -1])
    t2 = t if t.ndim == 2 else O.reshape(b, t, [1, -1])
    C = b.static(x2.shape[1], "multilabel_margin_loss's size")
    # valid[n, k]: target[n, k] comes before the first -1.
    valid = O.cast(b, _bool(b, "ge", t2, 0), torch.int64)
    valid = _bool(b, "eq", O.FUNCTIONS[torch.cumprod](b, valid, 1), 1)
    safe = O.where(b, valid, t2, b.constant(0, torch.int64))
    cls = O.reshape(b, O.arange(b, C), [1, 1, C])
    # is_target[n, c]: c is one of the valid targets.
    hit = O.binary(b, "logical_and", _bool(b, "eq", O.unsqueeze(b, safe, 2),
                                           cls),
                   O.unsqueeze(b, valid, 2), out_dtype=torch.bool)
    is_t = O.any_(b, hit, [1])
    xj = O.gather(b, x2, 1, safe)                       # [N, K]
    z = O.clamp_min(b, O.rsub(b, O.sub(b, O.unsqueeze(b, xj, 2),
                                       O.unsqueeze(b, x2, 1)), 1.0), 0.0)
    keep = O.binary(b, "logical_and", O.unsqueeze(b, valid, 2),
                    O.logical_not(b, O.unsqueeze(b, is_t, 1)),
                    out_dtype=torch.bool)
    z = O.where(b, keep, z, b.constant(0, x.dtype))
    loss = O.div(b, O.sum_(b, z, [1, 2]), float(C))
    if x.ndim < 2:
        loss = O.reshape(b, loss, [])
    return loss, O.reshape(b, O.cast(b, is_t, x.dtype), list(t.shape))


@O.function(F.triplet_margin_with_distance_loss)
def triplet_margin_with_distance_loss(b, anchor, positive, negative, *,
                                      distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with pairwise_distance (eps 1e-6, p 2), also
    when distance_function is an nn.PairwiseDistance without keepdim (its
    norm and eps: PyTorch's triplet_margin_loss is this formula); another
    distance_function is refused (it would have to be traced; a Python
    function or builtin as an argument already fails in torch.fx)."""
    p, eps = 2, 1e-6
    if isinstance(distance_function, torch.nn.PairwiseDistance) and \
            not distance_function.keepdim:
        p, eps = distance_function.norm, distance_function.eps
    elif distance_function is not None:
        raise b.error("triplet_margin_with_distance_loss with a "
                      "distance_function other than nn.PairwiseDistance "
                      "(keepdim=False) is not supported, got %s"
                      % type(distance_function).__name__)
    return triplet_margin_loss(b, anchor, positive, negative, margin, p,
                               eps, swap, None, None, reduction)


@O.both("diagonal_scatter")
def diagonal_scatter(b, x, src, offset=0, dim1=0, dim2=1):
    """x with its diagonal (offset, dim1, dim2) replaced by src: a
    position mask from iotas and src gathered to every position."""
    x = _t(b, x, "diagonal_scatter")
    s = O.cast(b, _t(b, src, "diagonal_scatter"), x.dtype)
    d1, d2 = O.norm_dim(b, dim1, x.ndim), O.norm_dim(b, dim2, x.ndim)
    if d1 == d2:
        raise b.error("diagonal dimensions cannot be identical %d, %d"
                      % (dim1, dim2))
    k = b.static(offset, "diagonal_scatter's offset")
    m = b.static(x.shape[d1], "diagonal_scatter's rows")
    n = b.static(x.shape[d2], "diagonal_scatter's columns")
    L = max(0, min(m, n - k) if k >= 0 else min(m + k, n))
    want = [value(d) for i, d in enumerate(x.shape) if i not in (d1, d2)] \
        + [L]
    if [value(d) for d in s.shape] != want:
        raise b.error("diagonal_scatter: src must have the shape of the "
                      "diagonal, %s, got %s" % (want, [value(d) for d in
                                                    s.shape]))
    if L == 0:
        return O.copy_of(x)
    xm = movedim(b, x, [d1, d2], [-2, -1])
    i = O.reshape(b, O.arange(b, m), [m, 1])
    j = O.reshape(b, O.arange(b, n), [1, n])
    mask = _bool(b, "eq", O.sub(b, j, i), k)                # [m, n]
    pos = O.clamp(b, i if k >= 0 else j, 0, L - 1)          # diag index
    pos = O.expand(b, pos, [m, n])
    rest = list(xm.shape[:-2])
    idx = O.expand(b, O.reshape(b, pos, [1] * len(rest) + [m * n]),
                   rest + [m * n])
    vals = O.reshape(b, O.gather(b, s, len(rest), idx), rest + [m, n])
    r = O.where(b, mask, vals, xm)
    return movedim(b, r, [-2, -1], [d1, d2])


A.aten("diagonal_scatter")(diagonal_scatter)
A.aten("multi_margin_loss")(
    lambda b, x, t, p=1, margin=1.0, weight=None, reduction=1:
    multi_margin_loss(b, x, t, p, margin, weight, None, None,
                      A._reduction(b, reduction)))
A.aten("multilabel_margin_loss")(
    lambda b, x, t, reduction=1: multilabel_margin_loss(
        b, x, t, None, None, A._reduction(b, reduction)))


@A.aten("multilabel_margin_loss_forward")
def _a_multilabel_margin_loss_forward(b, x, t, reduction):
    """(loss reduced by `reduction`, is_target), as PyTorch's kernel."""
    loss, is_target = _multilabel_margin(b, x, t)
    return (_reduce(b, loss, A._reduction(b, reduction)), is_target)


# nonzero, argwhere, masked_select: a size known when the program runs
# (kt.nonzero's count, an unbacked size: kiln._symbolic.Unbacked).


@O.both("nonzero")
def nonzero(b, x, *, out=None, as_tuple=False):
    """torch.nonzero: kt.nonzero ([u, rank], int64); as_tuple: its columns
    (a 0-d x gives one [u] tensor, as PyTorch's as_tuple of a scalar)."""
    x = _t(b, x, "nonzero")
    if out is not None:
        raise b.error("torch.nonzero with out= is not supported")
    if not as_tuple:
        return O.nonzero_op(b, x)
    if x.ndim == 0:
        nz = O.nonzero_op(b, O.reshape(b, x, 1))
        return (O.nonzero_column(b, nz, 0),)
    nz = O.nonzero_op(b, x)
    return tuple(O.nonzero_column(b, nz, k) for k in range(x.ndim))


@O.both("argwhere")
def argwhere(b, x):
    """torch.argwhere is torch.nonzero."""
    return O.nonzero_op(b, _t(b, x, "argwhere"))


@O.both("masked_select")
def masked_select(b, x, mask, *, out=None):
    """The elements of x where mask (broadcast with x) is true, as a 1-D
    tensor in row-major order: kt.nonzero of the flattened mask and a
    kt.index_select of the flattened x."""
    if out is not None:
        raise b.error("torch.masked_select with out= is not supported")
    return O.masked_select_op(b, x, mask)


# unique, unique_consecutive (dim=None), bincount: sizes known when the
# program runs too (kt.nonzero's count of the run starts; kt.bincount's
# length). See O.unique_op and O.bincount_op.


def _flag(b, v, what):
    v = b.static(v, what)
    if not isinstance(v, bool):
        raise b.error("%s must be a bool, got %r" % (what, v))
    return v


def _unique_results(b, x, consecutive, return_inverse, return_counts, dim,
                    what):
    inv = _flag(b, return_inverse, "%s's return_inverse" % what)
    cnt = _flag(b, return_counts, "%s's return_counts" % what)
    if dim is not None:
        dim = b.static(dim, "%s's dim" % what)
        return O.unique_dim_op(b, x, dim, consecutive, inv, cnt, what), \
            inv, cnt
    return O.unique_op(b, x, consecutive, inv, cnt, what), inv, cnt


@O.function(torch.unique, torch.functional.unique)
def unique(b, x, sorted=True, return_inverse=False, return_counts=False,
           dim=None):
    """torch.unique (dim=None): the sorted distinct values (sorted=False
    gives them sorted too: PyTorch leaves that order to the
    implementation), with the inverse and counts when asked for."""
    _flag(b, sorted, "torch.unique's sorted")
    (v, i, c), inv, cnt = _unique_results(
        b, x, False, return_inverse, return_counts, dim, "torch.unique")
    out = (v,) + ((i,) if inv else ()) + ((c,) if cnt else ())
    return out[0] if len(out) == 1 else out


O.METHODS["unique"] = unique


def _empty_i64(b):
    return O.full(b, [0], 0, torch.int64)


@O.function(torch._unique)
def _unique(b, x, sorted=True, return_inverse=False):
    """torch._unique: (values, inverse); an empty inverse when not asked."""
    (v, i, _), inv, _ = _unique_results(b, x, False, return_inverse, False,
                                        None, "torch._unique")
    return v, i if inv else _empty_i64(b)


def _unique2(b, x, sorted=True, return_inverse=False, return_counts=False):
    """torch._unique2 / aten._unique2: (values, inverse, counts), the ones
    not asked for empty int64 tensors."""
    (v, i, c), inv, cnt = _unique_results(
        b, x, False, return_inverse, return_counts, None, "torch._unique2")
    return (v, i if inv else _empty_i64(b), c if cnt else _empty_i64(b))


O.function(torch._unique2)(_unique2)
A.aten("_unique2")(_unique2)


@A.aten("unique_dim")
def _a_unique_dim(b, x, dim, sorted=True, return_inverse=False,
                  return_counts=False):
    """aten.unique_dim: (values, inverse, counts), the ones not asked for
    empty int64 tensors."""
    (v, i, c), inv, cnt = _unique_results(
        b, x, False, return_inverse, return_counts, dim, "aten.unique_dim")
    return (v, i if inv else _empty_i64(b), c if cnt else _empty_i64(b))


@O.both("unique_consecutive")
def unique_consecutive(b, x, return_inverse=False, return_counts=False,
                       dim=None):
    """torch.unique_consecutive (dim=None): the first element of each run
    of equal consecutive elements of the flattened input."""
    (v, i, c), inv, cnt = _unique_results(
        b, x, True, return_inverse, return_counts, dim,
        "torch.unique_consecutive")
    out = (v,) + ((i,) if inv else ()) + ((c,) if cnt else ())
    return out[0] if len(out) == 1 else out


@A.aten("unique_consecutive")
def _a_unique_consecutive(b, x, return_inverse=False, return_counts=False,
                          dim=None):
    """aten.unique_consecutive: (values, inverse, counts), the ones not
    asked for empty int64 tensors."""
    (v, i, c), inv, cnt = _unique_results(
        b, x, True, return_inverse, return_counts, dim,
        "aten.unique_consecutive")
    return (v, i if inv else _empty_i64(b), c if cnt else _empty_i64(b))


@O.both("equal")
def _equal(b, x, y):
    """torch.equal's result is a Python bool read from the tensors' values:
    refused (a graph break where breaks are allowed: it runs eagerly).
    `(x == y).all()` is the tensor form Kiln compiles."""
    raise b.error("torch.equal returns a Python bool read from the tensors' "
                  "values (data-dependent Python control): a graph break, "
                  "the op runs eagerly; (a == b).all() is the 0-d tensor "
                  "form Kiln compiles")


@O.both("allclose")
def _allclose(b, x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.allclose returns a Python bool too: refused as torch.equal
    (it was "no Kiln conversion for torch.allclose")."""
    raise b.error("torch.allclose returns a Python bool read from the "
                  "tensors' values (data-dependent Python control): a graph "
                  "break, the op runs eagerly; torch.isclose(a, b).all() is "
                  "the 0-d tensor form Kiln compiles")


# ----------------------------------------------- more pointwise and shapes


@O.both("isfinite")
def isfinite(b, x):
    """Neither NaN nor infinite (integers: all true)."""
    x = _t(b, x, "isfinite")
    if not x.dtype.is_floating_point:
        return _bool(b, "eq", x, x)
    return _bool(b, "lt", _un(b, "abs", x), float("inf"))


@O.both("isreal")
def isreal(b, x):
    """All true for Kiln's real dtypes."""
    x = _t(b, x, "isreal")
    return O.full(b, list(x.shape), 1, torch.bool)


@O.both("real")
def real(b, x):
    """A real tensor's real part: itself."""
    return O.alias(_t(b, x, "real"))


@O.both("angle")
def angle(b, x, *, out=None):
    """pi where x < 0, else 0; NaN stays NaN (integers: the default float
    dtype)."""
    x = _t(b, x, "angle")
    dt = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()
    X = O.cast(b, x, dt)
    r = O.where(b, _bool(b, "lt", X, 0.0), b.constant(math.pi, dt),
                b.constant(0.0, dt))
    return O.where(b, O.isnan(b, X), X, r) if dt.is_floating_point else r


@O.both("isclose")
def isclose(b, x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    """x == y, or both finite and |x - y| <= atol + rtol |y|; NaNs equal
    with equal_nan."""
    x, y = _t(b, x, "isclose"), _t(b, y, "isclose")
    if x.dtype != y.dtype:
        raise b.error("%s did not match %s" % (str(x.dtype)[6:],
                                                str(y.dtype)[6:]))
    eq = _bool(b, "eq", x, y)
    if x.dtype == torch.bool:
        return eq
    dt = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()
    X, Y = O.cast(b, x, dt), O.cast(b, y, dt)
    close = _bool(b, "le", _un(b, "abs", O.sub(b, X, Y)),
                  O.add(b, O.mul(b, _un(b, "abs", Y), float(rtol)),
                        float(atol)))
    if dt.is_floating_point:
        fin = O.binary(b, "logical_and", isfinite(b, X), isfinite(b, Y),
                       out_dtype=torch.bool)
        close = O.binary(b, "logical_and", close, fin, out_dtype=torch.bool)
    r = O.binary(b, "logical_or", eq, close, out_dtype=torch.bool)
    if equal_nan and x.dtype.is_floating_point:
        both = O.binary(b, "logical_and", O.isnan(b, x), O.isnan(b, y),
                        out_dtype=torch.bool)
        r = O.binary(b, "logical_or", r, both, out_dtype=torch.bool)
    return r


@O.both("kron")
def kron(b, a, c, *, out=None):
    """The Kronecker product: a[i] c[j] at i * c.shape + j, dims aligned
    from the right."""
    a, c = _t(b, a, "kron"), _t(b, c, "kron")
    nd = max(a.ndim, c.ndim)
    A_ = O.reshape(b, a, [1] * (nd - a.ndim) + list(a.shape))
    C_ = O.reshape(b, c, [1] * (nd - c.ndim) + list(c.shape))
    ai, ci = [], []
    for k in range(nd):
        ai += [A_.shape[k], 1]
        ci += [1, C_.shape[k]]
    p = O.mul(b, O.reshape(b, A_, ai), O.reshape(b, C_, ci))
    return O.reshape(b, p, [b.static(A_.shape[k], "kron's size") *
                            b.static(C_.shape[k], "kron's size")
                            for k in range(nd)])


def _trapz_pairs(b, y, d, n):
    """y[1:] + y[:-1] along d, in y's dtype (integers wrap, as PyTorch's
    kernel adds them before any float arithmetic)."""
    return O.add(b, O.slice_dim(b, y, d, 1, n, 1),
                 O.slice_dim(b, y, d, 0, n - 1, 1))


def _trapz_dx(b, x, y, d, n, what):
    """x's differences along d, shaped to broadcast against the pairs."""
    x = _t(b, x, what)
    if x.ndim == 1:
        view = [1] * y.ndim
        view[d] = n - 1
        return O.reshape(b, O.FUNCTIONS[torch.diff](b, x), view)
    return O.FUNCTIONS[torch.diff](b, x, 1, d)


def _trapz_y(b, y, dim, what):
    y = _t(b, y, what)
    if y.dtype == torch.bool:
        raise b.error("%s: received a bool input for `y`, but bool is not "
                      "supported" % what)
    return y, O.norm_dim(b, dim, y.ndim)


@O.both("trapezoid", "trapz")
def trapezoid(b, y, x=None, *, dx=None, dim=-1):
    """PyTorch 1.13's formulas: (sum(y) - (y[0] + y[-1]) / 2) * dx, or
    sum(dx * (y[1:] + y[:-1])) / 2 with x's differences; an empty dim
    gives zeros."""
    y, d = _trapz_y(b, y, dim, "trapezoid")
    n = b.static(y.shape[d], "trapezoid's size")
    if n == 0:
        return O.sum_(b, y if y.dtype.is_floating_point else
                      O.cast(b, y, torch.get_default_dtype()), [d])
    if x is not None:
        p = O.mul(b, _trapz_dx(b, x, y, d, n, "trapezoid"),
                  _trapz_pairs(b, y, d, n))
        return O.div(b, O.sum_(b, p, [d]), 2.0)
    ends = O.add(b, O.select(b, y, d, 0), O.select(b, y, d, n - 1))
    r = O.sub(b, O.sum_(b, y, [d]), O.mul(b, ends, 0.5))
    return O.mul(b, r, 1.0 if dx is None else float(b.static(dx, "dx")))


@O.function(torch.cumulative_trapezoid)
def cumulative_trapezoid(b, y, x=None, *, dx=None, dim=-1):
    """cumsum(dx / 2 * (y[1:] + y[:-1])) along dim, or cumsum(dx * (y[1:]
    + y[:-1]) / 2) with x's differences (PyTorch 1.13's formulas, integer
    products wrapping as there)."""
    y, d = _trapz_y(b, y, dim, "cumulative_trapezoid")
    n = b.static(y.shape[d], "cumulative_trapezoid's size")
    if n == 0:
        return O.copy_of(y if y.dtype.is_floating_point else
                         O.cast(b, y, torch.get_default_dtype()))
    pairs = _trapz_pairs(b, y, d, n)
    if x is not None:
        # (dx * pairs) / 2: the product in the integer dtype too.
        p = O.div(b, O.mul(b, _trapz_dx(b, x, y, d, n,
                                        "cumulative_trapezoid"), pairs), 2.0)
    else:
        p = O.mul(b, pairs, (1.0 if dx is None else
                             float(b.static(dx, "dx"))) / 2.0)
    return O.FUNCTIONS[torch.cumsum](b, p, d)


@O.method("unfold")
def tensor_unfold(b, x, dimension, size, step):
    """Windows of `size` every `step` along dimension, as a new last
    dim."""
    x = _t(b, x, "Tensor.unfold")
    d = O.norm_dim(b, dimension, x.ndim) if x.ndim else 0
    size = b.static(size, "unfold's size")
    step = b.static(step, "unfold's step")
    if step <= 0:
        raise b.error("step is %d but must be > 0" % step)
    if x.ndim == 0:
        if size > 1:
            raise b.error("maximum size for tensor at dimension 0 is 1 but "
                          "size is %d" % size)
        return O.reshape(b, x, [1])
    L = b.static(x.shape[d], "tensor_unfold's size")
    if size > L:
        raise b.error("maximum size for tensor at dimension %d is %d but "
                      "size is %d" % (d, L, size))
    n = (L - size) // step + 1
    cols = [O.slice_dim(b, x, d, k, k + step * (n - 1) + 1, step)
            for k in range(size)]
    return O.stack(b, cols, x.ndim)


@O.tensor_attr("H")
def _H(b, x):
    if x.ndim > 2:
        raise b.error("tensor.H is only supported on matrices (2-D "
                      "tensors). Got %d-D tensor." % x.ndim)
    return O.t(b, x) if x.ndim == 2 else O.alias(x)


@O.tensor_attr("mH")
def _mH(b, x):
    if x.ndim == 0:
        return O.alias(x)    # PyTorch 1.13 returns a 0-d tensor as is
    if x.ndim < 2:
        raise b.error("tensor.mH is only supported on matrices or batches "
                      "of matrices. Got %d-D tensor." % x.ndim)
    return O.transpose(b, x, -2, -1)


O.METHODS["__rsub__"] = lambda b, x, other: O.sub(b, other, x)
O.METHODS["__rdiv__"] = O.METHODS["__rtruediv__"] = \
    lambda b, x, other: O.div(b, other, x)
O.METHODS["__rpow__"] = lambda b, x, other: O.pow_(b, other, x)
O.METHODS["__rmod__"] = lambda b, x, other: O.remainder(b, other, x)
O.METHODS["__rmatmul__"] = lambda b, x, other: O.matmul(b, other, x)

A.aten("isfinite")(isfinite)
A.aten("isclose")(isclose)
A.aten("angle")(angle)
A.aten("kron")(kron)
A.aten("unfold")(tensor_unfold)


# ----------------------------------------------- matrix norms, histograms


def _matrix_norm(b, x, ord, dims, keepdim, what):
    """'fro', inf, -inf, 1, -1 over the two dims (2, -2 and 'nuc' need
    singular values: refused)."""
    d0, d1 = dims
    if ord == "fro":
        return vector_norm(b, x, 2, [d0, d1], keepdim)
    if ord == "nuc" or ord in (2, -2):
        raise b.error("%s(ord=%r) is not supported (kt has no singular value "
                      "decomposition)" % (what, ord))
    if ord in (math.inf, -math.inf):
        s = O.sum_(b, _un(b, "abs", x), [d1], True)
        r = (O.amax if ord > 0 else O.amin)(b, s, [d0], True)
    elif ord in (1, -1):
        s = O.sum_(b, _un(b, "abs", x), [d0], True)
        r = (O.amax if ord > 0 else O.amin)(b, s, [d1], True)
    else:
        raise b.error("%s: Order %r not supported." % (what, ord))
    if not keepdim:
        r = O.squeeze(b, r, sorted((d0, d1))[1])
        r = O.squeeze(b, r, sorted((d0, d1))[0])
    return r


@O.function(torch.linalg.matrix_norm)
def linalg_matrix_norm(b, x, ord="fro", dim=(-2, -1), keepdim=False, *,
                       dtype=None, out=None):
    x = _t(b, x, "linalg.matrix_norm")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("linalg.matrix_norm: Expected a floating point or "
                      "complex tensor as input. Got %s" % str(x.dtype)[6:])
    if x.ndim < 2:
        raise b.error("linalg.matrix_norm: The input tensor A must have at "
                      "least 2 dimensions.")
    dims = [O.norm_dim(b, d, x.ndim) for d in dim]
    return _matrix_norm(b, x, b.static(ord, "ord"), dims,
                        b.static(keepdim, "keepdim"), "linalg.matrix_norm")


@O.function(torch.linalg.norm)
def linalg_norm(b, x, ord=None, dim=None, keepdim=False, *, dtype=None,
                out=None):
    """ord None: the 2-norm of the flattened tensor (dim None) or over dim;
    a number over one dim (or a 1-D input): a vector norm; over two dims
    (or a 2-D input with dim None): a matrix norm."""
    x = _t(b, x, "linalg.norm")
    if dtype is not None:
        x = O.cast(b, x, dtype)
    if not x.dtype.is_floating_point:
        raise b.error("linalg.norm: Expected a floating point or complex "
                      "tensor as input. Got %s" % str(x.dtype)[6:])
    keepdim = b.static(keepdim, "keepdim")
    if isinstance(dim, int):
        dim = [dim]
    if ord is None:
        dims = None if dim is None else O.norm_dims(b, dim, x.ndim)
        return vector_norm(b, x, 2, dims, keepdim)
    ord = b.static(ord, "ord")
    if dim is None:
        if x.ndim == 1:
            dim = [0]
        elif x.ndim == 2:
            dim = [0, 1]
        else:
            raise b.error("linalg.norm: If dim is not specified but ord is, "
                          "the input must be 1D or 2D. Got %dD." % x.ndim)
    dims = [O.norm_dim(b, d, x.ndim) for d in dim]
    if len(dims) == 2:
        return _matrix_norm(b, x, ord, dims, keepdim, "linalg.norm")
    if isinstance(ord, str):
        raise b.error("linalg.norm: ord %r needs two dims" % ord)
    return vector_norm(b, x, ord, dims, keepdim)


@O.function(torch.linalg.vander)
def linalg_vander(b, x, *, N=None):
    """[x^0, x^1, ..., x^(N-1)] along a new last dim, as PyTorch: a column
    of ones and the cumulative product of x repeated N-1 times (so
    integers accumulate, and result, in int64 like torch.cumprod)."""
    x = _t(b, x, "linalg.vander")
    if x.dtype == torch.bool:
        raise b.error("linalg.vander supports floating point, complex, and "
                      "integer tensors, but got Bool")
    if x.ndim == 0:
        x = O.reshape(b, x, [1])
    n = b.static(N, "linalg.vander's N") if N is not None else \
        b.static(x.shape[-1], "the size of linalg.vander's last dim")
    if n <= 1:
        raise b.error("N must be greater than 1.")
    shape = list(x.shape) + [n - 1]
    xs = O.expand(b, O.unsqueeze(b, x, -1), shape)
    r = O.FUNCTIONS[torch.cumprod](b, xs, -1)
    ones = O.full(b, list(x.shape) + [1], 1, r.dtype)
    return O.cat(b, [ones, r], -1)


@O.both("histc")
def histc(b, x, bins=100, min=0, max=0, *, out=None):
    """Counts in `bins` equal bins over [min, max] (both 0: the data's
    min and max; equal: widened by 1 each way, as PyTorch); elements
    outside are ignored, max falls in the last bin. An [N, bins]
    comparison, summed."""
    x = _t(b, x, "histc")
    if not x.dtype.is_floating_point:
        raise b.error('"histogram_cpu" not implemented for \'%s\''
                      % str(x.dtype)[6:].capitalize())
    bins = b.static(bins, "histc's bins")
    if bins <= 0:
        raise b.error("torch.histc(): bins must be > 0, but got %d for "
                      "dimension 0" % bins)
    lo, hi = float(b.static(min, "histc's min")), \
        float(b.static(max, "histc's max"))
    if lo > hi:
        raise b.error("torch.histc(): max must be larger than min")
    flat = O.reshape(b, x, [-1])
    dt = x.dtype
    if lo == hi:
        if b.static(flat.shape[0], "histc's size"):
            L, H = O.amin(b, flat, [0]), O.amax(b, flat, [0])
        else:
            L, H = b.constant(lo, dt), b.constant(hi, dt)
        same = _bool(b, "eq", L, H)
        L = O.where(b, same, O.sub(b, L, 1.0), L)
        H = O.where(b, same, O.add(b, H, 1.0), H)
    else:
        L, H = b.constant(lo, dt), b.constant(hi, dt)
    inside = O.binary(b, "logical_and", _bool(b, "ge", flat, L),
                      _bool(b, "le", flat, H), out_dtype=torch.bool)
    pos = O.div(b, O.mul(b, O.sub(b, flat, L), float(bins)), O.sub(b, H, L))
    idx = O.cast(b, pos, torch.int64)
    idx = O.where(b, _bool(b, "eq", idx, bins),
                  b.constant(bins - 1, torch.int64), idx)
    hit = O.binary(b, "logical_and",
                   _bool(b, "eq", O.unsqueeze(b, idx, 1),
                         O.unsqueeze(b, O.arange(b, bins), 0)),
                   O.unsqueeze(b, inside, 1), out_dtype=torch.bool)
    return O.sum_(b, O.cast(b, hit, dt), [0])


A.aten("histc")(histc)


@O.both("bincount")
def bincount(b, x, weights=None, minlength=0):
    """torch.bincount: kt.bincount (O.bincount_op)."""
    return O.bincount_op(b, x, weights, minlength)


A.aten("bincount")(bincount)


@O.function(getattr(F, "_scaled_dot_product_attention", None))
def scaled_dot_product_attention_113(b, query, key, value_, attn_mask=None,
                                     dropout_p=0.0, need_attn_weights=False,
                                     is_causal=False):
    """PyTorch 1.13's F._scaled_dot_product_attention (its math path):
    softmax(q / sqrt(E) @ k^T + mask) and that times v, both returned; a
    bool mask (or is_causal's lower triangle) keeps its true positions.
    dropout_p > 0 is refused (its random numbers are PyTorch's)."""
    q = _t(b, query, "_scaled_dot_product_attention")
    k = _t(b, key, "_scaled_dot_product_attention")
    v = _t(b, value_, "_scaled_dot_product_attention")
    if float(b.static(dropout_p, "dropout_p")) > 0.0:
        raise b.error("_scaled_dot_product_attention with dropout_p > 0 is "
                      "not supported")
    E = b.static(q.shape[-1], "the attention's head size")
    s = O.matmul(b, O.div(b, q, math.sqrt(E)), O.transpose(b, k, -2, -1))
    mask = attn_mask
    if b.static(is_causal, "is_causal"):
        L = b.static(q.shape[-2], "is_causal's mask size")
        S = b.static(k.shape[-2], "is_causal's mask size")
        mask = O.tensor(b, [[j <= i for j in range(S)] for i in range(L)],
                        dtype=torch.bool)
    if mask is not None:
        mask = _t(b, mask, "attn_mask")
        if mask.dtype == torch.bool:
            mask = O.where(b, mask, b.constant(0.0, s.dtype),
                           b.constant(float("-inf"), s.dtype))
        s = O.add(b, s, mask)
    w = O.FUNCTIONS[F.softmax](b, s, -1)
    return (O.matmul(b, w, v), w)


@O.both("index_reduce")
def index_reduce(b, x, dim, index, source, reduce, *, include_self=True):
    """scatter_reduce along dim with the index broadcast over source's
    other dims (reduce prod, mean, amax, amin)."""
    x = _t(b, x, "index_reduce")
    i = _t(b, index, "index_reduce")
    src = _t(b, source, "index_reduce")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise b.error("index_reduce(): Expected reduce to be one of prod, "
                      "mean, amax or amin but got %s." % reduce)
    d = O.norm_dim(b, dim, x.ndim) if x.ndim else 0
    if x.ndim == 0:
        return O.scatter_reduce(b, x, 0, i, src, reduce,
                                include_self=include_self)
    view = [1] * src.ndim
    view[d] = -1
    idx = O.expand(b, O.reshape(b, i, view), list(src.shape))
    return O.scatter_reduce(b, x, d, idx, src, reduce,
                            include_self=include_self)


A.aten("_scaled_dot_product_attention_forward",
       "_scaled_dot_product_attention")(scaled_dot_product_attention_113)
A.aten("index_reduce")(index_reduce)


# Data-dependent sizes at the ATen level (make_fx graphs): aten.nonzero is
# kt.nonzero, masked_select the same gather as the torch-level one (its
# count an unbacked size); aten.argwhere is recorded as nonzero by make_fx.
A.aten("nonzero")(lambda b, x: O.nonzero_op(b, _t(b, x, "nonzero")))
A.aten("masked_select")(lambda b, x, mask: O.masked_select_op(b, x, mask))
A.aten("argwhere")(lambda b, x: O.nonzero_op(b, _t(b, x, "argwhere")))
