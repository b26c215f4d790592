"""MLIR text for the FX importer: types, attributes, constants, locations.

The importer writes the textual form of a `kg.program` (docs/dialects/kg.md)
over `kt` ops (docs/dialects/kt.md); Kiln parses and verifies it when the
session loads it, so any inconsistency is reported with its location.
"""

import contextvars
import math
import struct

import torch

from ._errors import Unsupported
from ._symbolic import Sym, is_unbacked, value

# torch dtype -> kt element type.
ELEMENT_TYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8",
    torch.bool: "i1",
}
TORCH_DTYPES = {v: k for k, v in ELEMENT_TYPES.items()}


# Why a complex tensor cannot be imported (docs/adding-ops.md, "Complex
# dtypes"): every place a complex dtype reaches Kiln names it with this.
COMPLEX_REASON = ("complex dtypes are not supported: kt has no complex "
                  "element types (docs/adding-ops.md, \"Complex dtypes\")")

# torch-level functions whose results are complex (their converters would
# need complex element types): named in the error instead of "no Kiln
# conversion". The torch.fft functions are matched by their module.
COMPLEX_FUNCTIONS = {"view_as_complex", "polar", "complex", "view_as_real",
                     "stft", "istft"}

# torch.fft functions whose results are real for real inputs (rolls): not
# refused as complex; a complex input is refused where it is imported.
REAL_FFT_FUNCTIONS = {"fft_fftshift", "fft_ifftshift"}


def is_complex(dtype):
    return isinstance(dtype, torch.dtype) and dtype.is_complex


def complex_error(what, dtype):
    """The Unsupported error for a complex tensor; `_complex` tells the FX
    importer to prefix the op (target) being converted."""
    err = Unsupported("%s of dtype %s: %s" % (what, dtype, COMPLEX_REASON))
    err._complex = True
    return err


def element_type(dtype, what="tensor"):
    if is_complex(dtype):
        raise complex_error(what, dtype)
    try:
        return ELEMENT_TYPES[dtype]
    except KeyError:
        raise Unsupported(
            "%s of dtype %s: Kiln's element types are %s" % (
                what, dtype, ", ".join(str(d).replace("torch.", "")
                                       for d in ELEMENT_TYPES))) from None


# The symbols (kiln._symbolic sids) printed `?` while a capture for a
# dynamic training pair is imported (kiln._training): dims computed from a
# kiln.mark_dynamic'd input dim. None: every dim is printed as its size.
DYNAMIC_SYMS = contextvars.ContextVar("kiln_dynamic_syms", default=None)


def shape_text(shape):
    """Dims as `NxMx...`: `?` for a data-dependent size (always: it has no
    value; _symbolic.Unbacked) and for sizes from dims marked dynamic."""
    dyn = DYNAMIC_SYMS.get() or frozenset()
    return "".join(
        "?x" if is_unbacked(d) or (isinstance(d, Sym) and d.syms & dyn)
        else "%dx" % value(d) for d in shape)


def tensor_type(shape, dtype):
    return "tensor<%s%s>" % (shape_text(shape), element_type(dtype))


def ref_type(shape, dtype):
    return "!kt.ref<%s%s>" % (shape_text(shape), element_type(dtype))


def float_literal(x):
    """A float as an MLIR literal that round-trips (decimal with a point, or
    the f64 bit pattern for inf and nan)."""
    x = float(x)
    if math.isfinite(x):
        r = repr(x)
        if "." not in r:
            mant, _, exp = r.partition("e")
            r = mant + ".0" + ("e" + exp if exp else "")
        return r
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


def f64_attr(x):
    return "%s : f64" % float_literal(x)


class Raw(str):
    """Attribute text written as is (e.g. `#kt.approximate<tanh>`)."""


def attr_value(v):
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f64_attr(v)
    if isinstance(v, torch.dtype):
        return element_type(v)
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(attr_value(x) for x in v)
    if isinstance(v, str):
        return '"%s"' % escape(v)
    raise TypeError("no attribute form for %r" % (v,))


def attr_dict(attrs):
    items = ["%s = %s" % (k, attr_value(v)) for k, v in attrs.items()
             if v is not None]
    return (" {%s}" % ", ".join(items)) if items else ""


def scalar_dense(v, dtype):
    """`dense<...> : tensor<T>` holding one value of `dtype` exactly as torch
    stores it (floats by bit pattern after torch's rounding)."""
    et = element_type(dtype)
    if dtype == torch.bool:
        text = "true" if v else "false"
    elif dtype.is_floating_point:
        bits = torch.tensor(v, dtype=dtype)
        nbytes = bits.element_size()
        ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[nbytes]
        raw = int(bits.view(ints).item()) & ((1 << (8 * nbytes)) - 1)
        text = "0x%0*X" % (2 * nbytes, raw)
    else:
        text = str(wrap_int(int(v), dtype))
    return "dense<%s> : tensor<%s>" % (text, et)


def is_integer_dtype(dtype):
    """True for torch's integer dtypes (not bool)."""
    return dtype in (torch.int64, torch.int32, torch.int16, torch.int8,
                     torch.uint8)


def wrap_int(v, dtype):
    """The Python int `v` wrapped to the integer `dtype` (two's complement,
    as torch stores a scalar in an int8/int16/uint8 tensor)."""
    bits = {torch.int64: 64, torch.int32: 32, torch.int16: 16,
            torch.int8: 8, torch.uint8: 8}[dtype]
    v &= (1 << bits) - 1
    if dtype != torch.uint8 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def escape(s):
    out = []
    for ch in s:
        if ch in '"\\' or ord(ch) < 32 or ord(ch) > 126:
            for b in ch.encode():
                out.append("\\%02X" % b)
        else:
            out.append(ch)
    return "".join(out)


# --- locations


def file_loc(filename, line, col):
    return '"%s":%d:%d' % (escape(filename), line, col)


def location(frames, name=None):
    """The MLIR location of an op: its Python frames (innermost first, as
    (filename, line, col)) as a call-site chain, wrapped in a NameLoc with
    the module path when there is one. Returns the text inside `loc(...)`."""
    text = None
    for f in reversed(frames):
        inner = file_loc(*f)
        text = inner if text is None else "callsite(%s at %s)" % (inner, text)
    if name:
        return '"%s"' % escape(name) + ("(%s)" % text if text else "")
    return text or "unknown"
