"""Special functions (issue 16): torch.lgamma, digamma, polygamma, mvlgamma,
erfc, erfinv, i0 and torch.special's gammaln, psi, multigammaln, erfcx,
ndtr, ndtri, log_ndtr, i0e, i1, i1e, modified_bessel_i0/i1, bessel_j0/j1,
bessel_y0/y1, modified_bessel_k0/k1, scaled_modified_bessel_k0/k1,
spherical_bessel_j0, airy_ai, xlog1py, entr and zeta, with their Tensor
methods, in-place forms and ATen overloads.

Most are `kt.special` (one op, the function in its `fn` attribute; its
kernel is kiln/rt/SpecialFunctions.h on both backends) or `kt.zeta`;
mvlgamma, xlog1py and entr are PyTorch's formulas over existing kt ops.
Integer and bool inputs promote to the default float dtype, as PyTorch's
unary float ops do.
"""

import math

import torch

from . import _aten as A
from . import _ir
from . import _ops as O


def special(b, x, fn, n=None):
    """kt.special {fn} of a float tensor."""
    attrs = {"fn": _ir.Raw("#kt.special_fn<%s>" % fn)}
    if n is not None:
        attrs["n"] = int(n)
    return b.op("special", [x], attrs, shape=x.shape, dtype=x.dtype)


def _float_tensor(b, x, what):
    return A._float(b, O.need_tensor(b, x, what))


def _unary(fn, what):
    def conv(b, x, *, out=None):
        if out is not None:
            raise b.error("%s with out= is not supported" % what)
        return special(b, _float_tensor(b, x, what), fn)
    conv.__name__ = fn
    return conv


# (kt.special fn, torch/Tensor names, torch.special attributes, ATen names)
_UNARY = [
    ("lgamma", ("lgamma", "special_gammaln"), ("gammaln",), ("lgamma",)),
    ("digamma", ("digamma", "special_digamma", "special_psi"),
     ("digamma", "psi"), ("digamma", "special_digamma", "special_psi")),
    ("erfc", ("erfc", "special_erfc"), ("erfc",), ("erfc", "special_erfc")),
    ("erfinv", ("erfinv", "special_erfinv"), ("erfinv",),
     ("erfinv", "special_erfinv")),
    ("erfcx", ("special_erfcx",), ("erfcx",), ("special_erfcx",)),
    ("ndtr", ("special_ndtr",), ("ndtr",), ("special_ndtr",)),
    ("ndtri", ("special_ndtri",), ("ndtri",), ("special_ndtri",)),
    ("log_ndtr", ("special_log_ndtr",), ("log_ndtr",), ("special_log_ndtr",)),
    ("i0", ("i0", "special_i0", "special_modified_bessel_i0"),
     ("i0", "modified_bessel_i0"),
     ("i0", "special_i0", "special_modified_bessel_i0")),
    ("i0e", ("special_i0e",), ("i0e",), ("special_i0e",)),
    ("i1", ("special_i1", "special_modified_bessel_i1"),
     ("i1", "modified_bessel_i1"), ("special_i1", "special_modified_bessel_i1")),
    ("i1e", ("special_i1e",), ("i1e",), ("special_i1e",)),
]

for _fn, _names, _special_names, _aten_names in _UNARY:
    _conv = _unary(_fn, _names[0])
    O.both(*_names)(_conv)
    for _s in _special_names:
        _t = getattr(torch.special, _s, None)
        if _t is not None:
            O.function(_t)(_conv)
    A.aten(*_aten_names)(_conv)
    # In-place methods (x.lgamma_(), x.i0_(), ...).
    for _n in _names:
        if hasattr(torch.Tensor, _n + "_"):
            O.METHODS[_n + "_"] = (
                lambda c: lambda b, x: O.in_place(b, x, c(b, x)))(_conv)


# Functions PyTorch 1.13 defines for float32 and float64 only (its CPU
# kernels refuse float16 and bfloat16) and without a derivative: their
# results do not require grad, so Kiln stops the gradient there (a term of
# a loss that is a constant to autograd, as in PyTorch).
_NO_GRAD = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
            "modified_bessel_k0", "modified_bessel_k1",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
            "spherical_bessel_j0", "airy_ai")


def _no_grad_unary(fn):
    def conv(b, x, *, out=None):
        if out is not None:
            raise b.error("special.%s with out= is not supported" % fn)
        x = _float_tensor(b, x, "special." + fn)
        if x.dtype in (torch.float16, torch.bfloat16):
            raise b.error('"%s_cpu" not implemented for \'%s\'' % (
                fn, "Half" if x.dtype == torch.float16 else "BFloat16"))
        return O.stop_gradient(b, special(b, x, fn))
    conv.__name__ = fn
    return conv


for _fn in _NO_GRAD:
    _conv = _no_grad_unary(_fn)
    O.function(getattr(torch.special, _fn))(_conv)
    A.aten("special_" + _fn)(_conv)


def _order(b, n, what):
    n = b.static(n, "%s's order n" % what)
    if not isinstance(n, int) or isinstance(n, bool):
        raise b.error("%s: the order n must be an int, got %r" % (what, n))
    if n < 0:
        raise b.error("%s: the order n = %d must be >= 0 (as PyTorch)"
                      % (what, n))
    return n


def polygamma(b, n, x, *, out=None):
    """torch.polygamma(n, x): kt.special {fn = polygamma, n}."""
    n = _order(b, n, "polygamma")
    return special(b, _float_tensor(b, x, "polygamma"), "polygamma", n)


O.function(torch.polygamma, getattr(torch.special, "polygamma", None))(
    polygamma)
O.METHODS["polygamma"] = lambda b, x, n: polygamma(b, n, x)
O.METHODS["polygamma_"] = lambda b, x, n: O.in_place(
    b, x, polygamma(b, n, x))
A.aten("polygamma", "special_polygamma")(polygamma)


def mvlgamma(b, x, p, *, out=None):
    """The multivariate log-gamma of dimension p: sum over i < p of
    lgamma(x - i / 2), plus p (p - 1) / 4 log(pi) (PyTorch's formula).
    PyTorch raises at run time when an element is <= (p - 1) / 2; kt
    programs raise no data-dependent errors, so such elements give
    lgamma's values (inf at the poles) instead."""
    x = _float_tensor(b, x, "mvlgamma")
    p = b.static(p, "mvlgamma's p")
    if not isinstance(p, int) or p < 1:
        raise b.error("mvlgamma: p must be an int >= 1, got %r" % (p,))
    r = None
    for i in range(p):
        t = special(b, O.sub(b, x, i / 2.0) if i else x, "lgamma")
        r = t if r is None else O.add(b, r, t)
    return O.add(b, r, p * (p - 1) / 4.0 * math.log(math.pi))


O.both("mvlgamma", "special_multigammaln")(mvlgamma)
O.function(torch.special.multigammaln)(mvlgamma)
O.METHODS["mvlgamma_"] = lambda b, x, p: O.in_place(b, x, mvlgamma(b, x, p))
A.aten("mvlgamma", "special_multigammaln")(mvlgamma)


def _float_dt(b, *xs):
    dt = O.result_type(b, *xs)
    return dt if dt.is_floating_point else torch.get_default_dtype()


def xlog1py(b, x, y, *, out=None):
    """x * log1p(y); 0 where x == 0 and y is not NaN (PyTorch's
    xlog1py)."""
    if not O.is_tensor(x) and not O.is_tensor(y):
        raise b.error("xlog1py of two numbers")
    dt = _float_dt(b, x, y)
    X, Y = O.operand(b, x, dt), O.operand(b, y, dt)
    r = O.mul(b, X, O.unary(b, "log1p", Y))
    r = O.where(b, O.binary(b, "eq", X, 0.0, out_dtype=torch.bool),
                b.constant(0, dt), r)
    return O.where(b, O.isnan(b, Y), b.constant(float("nan"), dt), r)


O.both("special_xlog1py")(xlog1py)
O.function(torch.special.xlog1py)(xlog1py)
A.aten("special_xlog1py", "special_xlog1py.self_scalar",
       "special_xlog1py.other_scalar")(xlog1py)


def entr(b, x, *, out=None):
    """-x log x for x > 0, 0 at 0, -inf below 0, NaN for NaN (PyTorch's
    entr)."""
    x = _float_tensor(b, x, "entr")
    dt = x.dtype
    pos = O.mul(b, O.unary(b, "neg", x), O.unary(b, "log", x))
    r = O.where(b, O.binary(b, "eq", x, 0.0, out_dtype=torch.bool),
                b.constant(0, dt), pos)
    r = O.where(b, O.binary(b, "lt", x, 0.0, out_dtype=torch.bool),
                b.constant(float("-inf"), dt), r)
    return r


O.both("special_entr")(entr)
O.function(torch.special.entr)(entr)
A.aten("special_entr")(entr)


def zeta(b, x, q, *, out=None):
    """torch.special.zeta(x, q): the Hurwitz zeta function, kt.zeta
    (either argument may be a number)."""
    if not O.is_tensor(x) and not O.is_tensor(q):
        raise b.error("zeta of two numbers")
    dt = _float_dt(b, x, q)
    return O.binary(b, "zeta", x, q, compute=dt)


O.both("special_zeta")(zeta)
O.function(torch.special.zeta)(zeta)
A.aten("special_zeta", "special_zeta.self_scalar",
       "special_zeta.other_scalar")(zeta)
