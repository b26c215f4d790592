"""Kiln from Python: torch.compile-style compilation of PyTorch programs.

    import kiln
    opt = kiln.compile(model, backend="cpu")   # "eager", "aot_eager", "cpu"
    y = opt(x)

Programs are captured with torch.fx (kiln._tracer), imported as Kiln
kg.programs (kiln._fx_import, converters in kiln._ops) and run through
Kiln's C API (libKilnCAPI.so, kiln._capi), the package's only way into the
compiler. docs/python.md describes the API and what is supported.
"""

from ._breaks import (ExplainOutput, allow_in_graph, assume_constant_result,
                      disable, disallow_in_graph, explain, graph_break,
                      is_compiling)
from ._capi import Session, library_path
from ._compile import (CompiledFunction, KilnWarning, OptimizedModule,
                       backend, compile, config, list_backends, mark_dynamic,
                       mark_static, optimize, reset)
from ._errors import (ArgumentTypeError, KilnError, KilnIndexError,
                      SpecializationError, Unsupported)
from ._logs import flush_trace, set_log_handler, set_logs, set_trace
# The ATen converters, and the torch-level converters written with them
# (F.elu, F.selu, ...), registered at import.
from . import _aten  # noqa: E402,F401
# Decompositions of losses, norms, NaN-aware reductions and shape ops.
from . import _decomp  # noqa: E402,F401
# Special functions (kt.special, kt.zeta) and their formulas.
from . import _special  # noqa: E402,F401
# nn.RNN, nn.LSTM and nn.GRU, unrolled over time.
from . import _rnn  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = ["ArgumentTypeError", "CompiledFunction", "ExplainOutput",
           "KilnIndexError",
           "KilnError", "KilnWarning", "OptimizedModule", "Session",
           "SpecializationError", "Unsupported",
           "allow_in_graph", "assume_constant_result", "backend", "compile",
           "config", "disable", "disallow_in_graph", "explain",
           "flush_trace", "graph_break", "is_compiling", "library_path",
           "list_backends", "mark_dynamic", "mark_static", "optimize",
           "reset", "set_log_handler", "set_logs", "set_trace"]
