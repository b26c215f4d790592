"""Exceptions raised by the kiln package."""


class KilnError(RuntimeError):
    """An error reported by Kiln: a C API failure (the compiler's or the
    runtime's message, with the source location Kiln reports), or a program
    the frontend cannot capture.

    `message` is Kiln's message; `location` the user's source location it
    names (``file:line:col``, or ``None`` when there is none)."""

    def __init__(self, message, location=None):
        super().__init__(message)
        self.message = message
        self.location = location


class Unsupported(KilnError):
    """The frontend cannot capture something in the program: an operator,
    module or Python construct it does not know, or a value it would have to
    read at trace time (data-dependent control flow) where a graph break is
    refused (fullgraph=True, inside a kiln.allow_in_graph function). The
    message names what and where (the user's source line). Without
    fullgraph, `kiln.config.suppress_errors` runs a function that cannot be
    captured eagerly instead."""


class SpecializationError(KilnError):
    """A dim marked dynamic (`kiln.mark_dynamic`) had to be specialized to
    one size by the capture (as TorchDynamo's ConstraintViolationError)."""


class NotOneElementError(Unsupported, ValueError):
    """`.item()` (`aten._local_scalar_dense`) of a tensor that has not
    exactly one element: PyTorch's ValueError and message, raised when the
    program is captured (not a graph break: eager would raise it too)."""

    _no_break = True


class ArgumentTypeError(Unsupported, TypeError):
    """A call whose arguments PyTorch's argument parser refuses (eager's
    TypeError: an argument the function does not take, a missing one, one
    of the wrong type; kiln._signatures): a KilnError at the user's line
    that `except TypeError` catches too, as it catches eager's. Without
    fullgraph the call runs eagerly at a graph break, and eager's TypeError
    is raised as this class, with its message."""


class KilnValueError(KilnError, ValueError):
    """A check of Kiln's that stands for one of PyTorch's that raises
    ValueError (BatchNorm's "Expected more than 1 value per channel when
    training"): a KilnError (with its location) that `except ValueError`
    catches too, as it catches eager's."""


class KilnIndexError(KilnError, IndexError):
    """A run-time index check of a compiled program failed ("index 5 is
    out of range for dim 0 with size 3"): a KilnError (a RuntimeError, as
    eager's `gather` / `scatter` raise) that `except IndexError` catches
    too, as it catches eager's error of `x[i]`, `index_select` and
    `embedding`."""


def runtime_error(message, location=None):
    """KilnError for a C API failure's message: KilnIndexError when it is
    a failed index check."""
    import re
    if re.search(r"\bindex -?\d+ (is )?out of (range|bounds) for (dim|an "
                 r"embedding table)",
                 message):
        return KilnIndexError(message, location)
    return KilnError(message, location)
