"""Symbolic sizes for the FX importer.

Every dim of a user input is imported as a `Sym`: an integer expression over
input dims that also carries the size of the example input. Sizes computed
from it (a conv's output height, `B * T`, `C // n_head`) stay symbolic, so
the IR the importer writes can stay valid when the runtime makes such a dim
dynamic (automatic dynamic shapes, `mark_dynamic`).

Where the importer must put a size into the IR as a number (an attribute
such as a slice bound, a Python branch on a size, a size used as a tensor
value), it *specializes* the symbols involved: `ShapeEnv.specialize` records
them, and the frontend marks those input dims static in the session
(`kilnSessionMarkStatic`), so that the runtime never makes them dynamic and a
new size recompiles (and re-captures) instead. This is TorchDynamo's "guard
on a symbolic size".
"""

import operator

from ._errors import Unsupported


class Sym:
    """A symbolic integer: `value` is its size in the example inputs, `syms`
    the input-dim symbols it depends on, `key` a structural expression
    (equal keys: provably equal sizes)."""

    __slots__ = ("value", "syms", "key")

    def __init__(self, value, syms, key):
        self.value = value
        self.syms = syms
        self.key = key

    def __repr__(self):
        return "Sym(%s=%d)" % (_show(self.key), self.value)

    # Arithmetic stays symbolic; comparisons and conversions do not exist
    # here on purpose: they go through ShapeEnv, which records the
    # specialization they imply.
    def _bin(self, other, op, name, reverse=False):
        if isinstance(other, bool) or not isinstance(other, (int, Sym)):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        if is_unbacked(a) or is_unbacked(b):
            return make(None, name, a, b)
        return make(op(value(a), value(b)), name, a, b)

    def __add__(self, o):
        return self._bin(o, operator.add, "+")

    def __radd__(self, o):
        return self._bin(o, operator.add, "+", True)

    def __sub__(self, o):
        return self._bin(o, operator.sub, "-")

    def __rsub__(self, o):
        return self._bin(o, operator.sub, "-", True)

    def __mul__(self, o):
        return self._bin(o, operator.mul, "*")

    def __rmul__(self, o):
        return self._bin(o, operator.mul, "*", True)

    def __floordiv__(self, o):
        return self._bin(o, operator.floordiv, "//")

    def __rfloordiv__(self, o):
        return self._bin(o, operator.floordiv, "//", True)

    def __mod__(self, o):
        return self._bin(o, operator.mod, "%")

    def __rmod__(self, o):
        return self._bin(o, operator.mod, "%", True)

    def __neg__(self):
        return make(None if is_unbacked(self) else -self.value, "neg",
                    self, None)

    def __pos__(self):
        return self


class UnbackedSizeError(Unsupported):
    """A size only known when the program runs (an unbacked size: the
    count of kt.nonzero) was needed as a Python number while capturing."""


# Unbacked symbols' sids are strings ("u0", "u1", ...): never an input dim.
def _unbacked_sid(sid):
    return isinstance(sid, str)


class Unbacked(Sym):
    """A size that depends on the data (kt.nonzero's count, kt.bincount's
    length; torch's "unbacked" SymInt): it is `?` in the IR, has no example value, is never
    guarded nor specialized, and is computed by the program when it runs.
    Sums and products of it stay Unbacked; reading its value (`value()`,
    a comparison made to pick a code path, a size baked into an attribute)
    raises UnbackedSizeError, an Unsupported: a graph break where breaks
    are allowed, a refusal naming the op otherwise. So a converter can
    never take a wrong branch on a guessed size."""

    __slots__ = ()

    def __init__(self, syms, key):
        Sym.__init__(self, None, syms, key)

    def __getattribute__(self, name):
        if name == "value":
            raise UnbackedSizeError(
                "a data-dependent size (%s, computed when the program runs: "
                "the count of a nonzero, masked_select or boolean-mask "
                "index, the length of a unique or bincount, a size read "
                "from data by `.item()`) is needed as a Python number here"
                % _show(object.__getattribute__(self, "key")))
        return object.__getattribute__(self, name)

    def __repr__(self):
        return "Unbacked(%s)" % _show(self.key)


def is_unbacked(x):
    """True for a size that depends on the data (see Unbacked)."""
    return isinstance(x, Unbacked)


def _show(key):
    if key[0] == "s":
        return key[2]
    if key[0] == "neg":
        return "-" + _show(key[1])
    if key[0] in ("min", "max", "idx"):
        return "%s(%s, %s)" % (key[0], *[_show(k) if isinstance(k, tuple)
                                         else k for k in key[1:]])
    return "(%s %s %s)" % (_show(key[1]) if isinstance(key[1], tuple)
                           else key[1], key[0],
                           _show(key[2]) if isinstance(key[2], tuple)
                           else key[2])


def value(x):
    """The example value of a size (an int for ints)."""
    return x.value if isinstance(x, Sym) else x


def key(x):
    return x.key if isinstance(x, Sym) else x


def syms(x):
    return x.syms if isinstance(x, Sym) else frozenset()


def make(v, name, a, b):
    """The Sym for `a <name> b` with example value v, folding identities."""
    if name == "+":
        if a == 0 and not isinstance(a, Sym):
            return b
        if b == 0 and not isinstance(b, Sym):
            return a
    if name == "-" and b == 0 and not isinstance(b, Sym):
        return a
    if name == "*":
        for x, y in ((a, b), (b, a)):
            if not isinstance(x, Sym) and x == 1:
                return y
            if not isinstance(x, Sym) and x == 0:
                return 0
    if name in ("//",) and not isinstance(b, Sym) and b == 1:
        return a
    if name in ("min", "max") and key(a) == key(b):
        return a
    s = syms(a) | syms(b)
    if not s:
        return v
    if any(_unbacked_sid(sid) for sid in s):
        return Unbacked(s, (name, key(a), key(b)) if b is not None
                        else (name, key(a)))
    return Sym(v, s, (name, key(a), key(b)) if b is not None
               else (name, key(a)))


def smin(a, b):
    """min(a, b) of two sizes: an int when both are ints, else a Sym whose
    example value is the min (no guard: it stays symbolic)."""
    if is_unbacked(a) or is_unbacked(b):
        return make(None, "min", a, b)
    return make(min(value(a), value(b)), "min", a, b)


def smax(a, b):
    """max(a, b) of two sizes, like `smin`."""
    if is_unbacked(a) or is_unbacked(b):
        return make(None, "max", a, b)
    return make(max(value(a), value(b)), "max", a, b)


def _slice_index(v, n):
    """Python's slice rule for one bound `v` on a dim of size `n`."""
    if v < 0:
        v += n
    return min(max(v, 0), n)


_EVAL = {"+": operator.add, "-": operator.sub, "*": operator.mul,
         "//": operator.floordiv, "%": operator.mod, "min": min, "max": max,
         "idx": _slice_index}


def nonneg(x):
    """True when the size expression `x` is provably >= 0 for every size
    of its symbols (input dims are >= 0): a sum, product, floor division,
    remainder, min or max of such values."""
    k = key(x)
    if not isinstance(k, tuple):
        return k >= 0
    if k[0] == "s":
        # Input dims and counts are >= 0; a number read from data ("d"
        # names, ShapeEnv.new_unbacked) may not be.
        return not (isinstance(k[1], str) and k[1].startswith("d"))
    if k[0] == "idx":
        return True
    if k[0] in ("+", "*", "//", "%", "min", "max"):
        return nonneg(k[1]) and nonneg(k[2])
    return False


def slice_index(v, n):
    """The position a slice bound `v` (an int or a Sym) stands for on a
    dim of size `n`, with Python's rules (a negative bound counts from the
    end, then clamped to [0, n]): min(v, n) when v is provably >= 0,
    max(n + v, 0) for a negative int, else an `idx` node (evaluated with
    the rule; the importer writes it as arith.cmpi / select / clamp)."""
    if not isinstance(v, Sym) and not isinstance(n, Sym):
        return _slice_index(v, n)
    if not isinstance(v, Sym):
        return smin(v, n) if v >= 0 else smax(n + v, 0)
    if nonneg(v):
        return smin(v, n)
    if is_unbacked(v) or is_unbacked(n):
        return make(None, "idx", v, n)
    return make(_slice_index(value(v), value(n)), "idx", v, n)


def evaluate(k, size_of):
    """The value of a size's `key` for the input dims of a call:
    `size_of(sid)` gives the size of symbol `sid`."""
    if not isinstance(k, tuple):
        return k
    if k[0] == "s":
        return size_of(k[1])
    if k[0] == "neg":
        return -evaluate(k[1], size_of)
    return _EVAL[k[0]](evaluate(k[1], size_of), evaluate(k[2], size_of))


def same(a, b):
    """True when two sizes are provably equal (equal ints, or the same
    expression)."""
    return key(a) == key(b)


class ShapeEnv:
    """The input-dim symbols of one capture and the ones it specialized."""

    def __init__(self):
        self.symbols = []  # sid -> (arg index, dim, name)
        self.specialized = {}  # sid -> reason (the first)
        self.unbacked = []  # names of the unbacked symbols (see Unbacked)
        # name -> the TensorVal whose dim 0 it is (kt.nonzero's result)
        self.unbacked_source = {}

    def new(self, size, arg, dim):
        sid = len(self.symbols)
        name = "s%d" % sid
        self.symbols.append((arg, dim, name))
        return Sym(int(size), frozenset([sid]), ("s", sid, name))

    def new_unbacked(self, prefix="u"):
        """A new data-dependent size (see Unbacked): no input dim, no
        example value, never guarded. Prefix "d": a number read from data
        (`.item()`), which may be negative (nonneg is False for it)."""
        name = "%s%d" % (prefix, len(self.unbacked))
        self.unbacked.append(name)
        return Unbacked(frozenset([name]), ("s", name, name))

    def specialize(self, x, reason):
        """The example value of `x`, recording that the capture depends on
        it being exactly that (its symbols become static). An unbacked size
        has no such value: UnbackedSizeError."""
        if isinstance(x, Sym):
            if is_unbacked(x):
                raise UnbackedSizeError(
                    "%s: the size %s depends on the data (computed when the "
                    "program runs) and cannot be specialized"
                    % (reason, _show(x.key)))
            for sid in x.syms:
                self.specialized.setdefault(sid, reason)
            return x.value
        return x

    def specialized_dims(self):
        """(arg, dim) -> reason for every specialized input dim."""
        return {(self.symbols[s][0], self.symbols[s][1]): r
                for s, r in self.specialized.items()
                if not _unbacked_sid(s)}
