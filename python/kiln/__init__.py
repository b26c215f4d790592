"""Kiln from Python: torch.compile-style compilation of PyTorch programs.

The package reaches the compiler only through Kiln's C API
(libKilnCAPI.so, see kiln._capi). docs/python.md describes the API.
"""

from ._capi import Session, library_path
from ._errors import KilnError, SpecializationError, Unsupported

__version__ = "0.1.0"

__all__ = ["KilnError", "Session", "SpecializationError", "Unsupported",
           "library_path"]
