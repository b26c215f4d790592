"""Kiln's logs and traces from Python: `KILN_LOGS` / `KILN_TRACE` as
`torch._logging.set_logs` / TORCH_LOGS.

    kiln.set_logs("recompiles,+guards")        # as KILN_LOGS=recompiles,+guards
    kiln.set_logs(graph_breaks=True, perf="+")  # keyword form, as torch's
    kiln.set_logs()                             # everything off
    kiln.set_trace("trace.json")                # Chrome trace, as KILN_TRACE

The settings are the C library's, process-wide: messages from the compiler,
the runtime and this package's tracer (its graph breaks, with the user's
source lines) go to one place: stderr with a `[kiln:<topic>] ` prefix, the
file KILN_LOGS_FILE names, or the handler `set_log_handler` installs.
docs/debugging.md lists the topics.
"""

from . import _capi
from ._capi import LOG_CALLBACK, _check, _Str
from ._errors import KilnError

TOPICS = ("graph_breaks", "recompiles", "guards", "graph", "fusion",
          "partition", "codegen", "perf")

_handler = None  # keeps the ctypes callback alive


def set_logs(spec=None, **topics):
    """Sets which topics are logged, replacing KILN_LOGS and any earlier
    call. `spec` is KILN_LOGS's syntax ("recompiles,+guards", "all,-perf");
    keywords name topics (or `all`) with True (on), "+" (verbose) or False
    (off), applied after `spec`. No arguments: every topic off. An unknown
    topic raises KilnError naming the valid ones."""
    items = [spec] if spec else []
    for name, value in topics.items():
        if value is True:
            items.append(name)
        elif value in ("+", "verbose"):
            items.append("+" + name)
        elif value is False or value is None:
            items.append("-" + name)
        else:
            raise KilnError("set_logs: %s=%r: expected True, False or '+'"
                            % (name, value))
    _check(_capi.lib().kilnSetLogs(_Str(",".join(items)).ref))


def set_log_handler(fn):
    """fn(topic: str, message: str) receives every log message instead of
    stderr; None restores the default. fn may be called from Kiln's
    compile threads."""
    global _handler
    L = _capi.lib()
    if fn is None:
        L.kilnSetLogCallback(LOG_CALLBACK(), None)
        _handler = None
        return

    def trampoline(_user, topic, message):
        try:
            fn(_capi._string(topic), _capi._string(message))
        except Exception:  # a handler's error must not unwind into C
            pass
    cb = LOG_CALLBACK(trampoline)
    L.kilnSetLogCallback(cb, None)
    _handler = cb


def log_enabled(topic, verbose=False):
    """Whether `topic` is logged (at the verbose level with verbose=True)."""
    return bool(_capi.lib().kilnLogEnabled(_Str(topic).ref, verbose))


def log(topic, message):
    """Logs `message` under `topic` when it is on."""
    _check(_capi.lib().kilnLog(_Str(topic).ref, _Str(message).ref))


def set_trace(path):
    """Starts a Chrome trace into `path` (as KILN_TRACE): compile phases,
    program calls and kernel runs, and this package's captures; written at
    exit and by flush_trace(). Raises KilnError if `path` cannot be
    written."""
    _check(_capi.lib().kilnTraceOpen(_Str(str(path)).ref))


def flush_trace():
    """Writes the trace recorded so far (a no-op when none is open)."""
    _check(_capi.lib().kilnTraceFlush())


class trace_scope:
    """Records its `with` block as a trace event (category "capture" by
    default) when a trace is open."""

    __slots__ = ("name", "category", "start")

    def __init__(self, name, category="capture"):
        self.name, self.category = name, category

    def __enter__(self):
        self.start = _capi.lib().kilnTraceNowMicros()
        return self

    def __exit__(self, *exc):
        L = _capi.lib()
        end = L.kilnTraceNowMicros()
        L.kilnTraceRecord(_Str(self.name).ref, _Str(self.category).ref,
                          self.start, end - self.start)
        return False
