"""Kiln from Python: torch.compile-style compilation of PyTorch programs.

Programs are captured with torch.fx (kiln._tracer), imported as Kiln
kg.programs (kiln._fx_import, converters in kiln._ops) and run through
Kiln's C API (libKilnCAPI.so, kiln._capi), the package's only way into the
compiler. docs/python.md describes the API and what is supported.
"""

from ._capi import Session, library_path
from ._errors import KilnError, SpecializationError, Unsupported

__version__ = "0.1.0"

__all__ = ["KilnError", "Session", "SpecializationError", "Unsupported",
           "library_path"]
