"""Sizes that are 0 when the program runs (issue 15, bad input from the
importer): dims marked dynamic, called with an empty dim. Every case is
compiled once and checked against eager PyTorch on each size: the same
result, or a Kiln error where PyTorch raises.

Before 2026-11-29 the importer computed a view's -1 next to dynamic sizes
as `total // rest` and a user's `n // m`, `n % m` of two dims as
arith.floordivsi / remsi in the program: with the divisor 0 at run time the
CPU backend's process died of SIGFPE (`x.reshape(-1, x.size(1))` at T = 0,
`x[: x.size(0) // x.size(1)]`) or gave a result where PyTorch raises
(`x.view(B, -1, 4)` at B = 0), and the interpreter reported "integer
division by zero" from inside the index arithmetic. `unflatten(1, (-1, 2))`
of an empty batch raised where PyTorch gives a [0, 2, 2, C] tensor.
"""

import os
import subprocess
import sys

import pytest
import torch

import kiln

BACKENDS = ["eager", "cpu"]


def marked(x, dims):
    for d in dims:
        kiln.mark_dynamic(x, d)
    return x


def check_sizes(f, shapes, dims, backend):
    """f compiled once, called on a tensor of each shape with `dims` marked
    dynamic: PyTorch's result, or a KilnError where PyTorch raises (and no
    error where it does not). Returns the Kiln errors' messages."""
    compiled = kiln.compile(f, backend=backend)
    messages = []
    for s in shapes:
        x = torch.randn(*s)
        try:
            want = f(x.clone())
        except (RuntimeError, IndexError, ZeroDivisionError):
            with pytest.raises(kiln.KilnError) as e:
                compiled(marked(x.clone(), dims))
            messages.append(str(e.value))
            continue
        got = compiled(marked(x.clone(), dims))
        assert got.shape == want.shape, (s, got.shape, want.shape)
        torch.testing.assert_close(got, want, equal_nan=True,
                                   msg="shape %s" % (s,))
    programs = list(compiled._kiln.programs.values())
    assert len(programs) == 1
    assert programs[0].stats()["compiles"] == 1, \
        programs[0].recompile_reasons()
    return messages


RESHAPES = {
    "view_b_minus1_4": lambda x: x.view(x.size(0), -1, 4) * 2,
    "reshape_minus1_t": lambda x: x.reshape(-1, x.size(1)) + 1,
    "reshape_minus1_tc": lambda x: x.reshape(-1, x.size(1) * x.size(2)) + 1,
    "view_minus1": lambda x: x.view(-1) + 1,
    "flatten": lambda x: x.flatten(1) + 1,
    "unflatten_minus1_2": lambda x: x.unflatten(1, (-1, 2)) + 1,
    "unflatten_b_minus1": lambda x: x.flatten(0, 1).unflatten(
        0, (x.size(0), -1)) + 1,
    "transpose_reshape": lambda x: x.transpose(0, 1).reshape(
        x.size(1), -1) + 1,
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(RESHAPES))
def test_reshape_with_a_dynamic_size_that_is_zero(name, backend):
    messages = check_sizes(RESHAPES[name],
                           [(2, 4, 4), (0, 4, 4), (2, 0, 4), (3, 2, 4)],
                           [0, 1], backend)
    for m in messages:
        # PyTorch's case, at the user's line, not arith's division by zero.
        assert "the sizes other than the -1 multiply to 0" in m, m
        assert "test_zero_sizes.py:" in m, m
        assert "floordivsi" not in m, m


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_minus1_is_inferred_by_kt_reshape(backend):
    # No division by a run-time size in the program: the -1 is kt.reshape's
    # own (inferred when it runs, an error when the others multiply to 0).
    f = RESHAPES["reshape_minus1_t"]
    compiled = kiln.compile(f, backend=backend)
    compiled(marked(torch.randn(2, 3, 4), [0, 1]))
    prog = list(compiled._kiln.programs.values())[0]
    ir = prog.session.entry_ir(prog.name, 0)
    assert "floordivsi" not in ir and "remsi" not in ir, ir
    assert "shape = [-1, -2]" in ir, ir


@pytest.mark.parametrize("backend", BACKENDS)
def test_unflatten_checks_the_dim_it_splits(backend):
    # PyTorch infers unflatten's -1 from the dim's size alone and checks
    # that the sizes multiply up to it, also when another dim is 0 (where
    # kt.reshape's element count check passes: 0 == 0).
    f = lambda x: x.unflatten(1, (-1, 2)) * 2  # noqa: E731
    messages = check_sizes(f, [(2, 4, 3), (0, 4, 3), (0, 5, 3), (2, 5, 3),
                               (2, 0, 3)], [0, 1], backend)
    assert len(messages) == 2, messages
    for m in messages:
        assert "don't multiply up to the size of dim 1 [5]" in m, m
    g = lambda x: x.unflatten(1, (2, 2)) * 2  # noqa: E731
    messages = check_sizes(g, [(2, 4, 3), (0, 4, 3), (0, 6, 3)], [0, 1],
                           backend)
    assert len(messages) == 1 and "[6]" in messages[0], messages


def test_unflatten_errors_when_captured():
    for f, shape, text in [
            (lambda x: x.unflatten(1, (-1, 0)), (2, 0, 3),
             "cannot reshape tensor of 0 elements into shape [-1, 0]"),
            (lambda x: x.unflatten(1, (-1, 0)), (2, 4, 3),
             "Provided sizes [-1, 0] don't multiply up"),
            (lambda x: x.unflatten(1, (-1, 3)), (2, 4, 3),
             "Provided sizes [-1, 3] don't multiply up"),
            (lambda x: x.unflatten(1, (-1, -1)), (2, 4, 3),
             "only one dimension can be inferred")]:
        x = torch.randn(*shape)
        with pytest.raises(RuntimeError):
            f(x)
        with pytest.raises(kiln.KilnError, match=text.replace(
                "[", r"\[").replace("]", r"\]")):
            kiln.compile(f, backend="eager", fullgraph=True)(x)


DIVISIONS = {
    "slice_floordiv": lambda x: x[: x.size(0) // x.size(1)] * 2,
    "zeros_floordiv": lambda x: torch.zeros(x.size(0) // x.size(1), 3) + 1,
    "ones_mod": lambda x: x.new_ones(x.size(0) % x.size(1)) * 3,
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_a_size_divided_by_a_dynamic_size_that_is_zero(name, backend):
    # Python raises ZeroDivisionError; the program divides by max(m, 1) and
    # the frontend raises before the call. Run in a subprocess: the old
    # code's SIGFPE killed the process.
    code = """
import torch, kiln, sys
sys.path.insert(0, %r)
import test_zero_sizes as T
msgs = T.check_sizes(T.DIVISIONS[%r], [(6, 2), (8, 3), (4, 0), (5, 5)],
                     [0, 1], %r)
print("MESSAGES", msgs)
""" % (os.path.dirname(os.path.abspath(__file__)), name, backend)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ))
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:],
                               p.stderr[-2000:])
    assert "integer division or modulo by zero: a size divided by the " \
        "size [0]" in p.stdout, p.stdout


def _write_last(x):
    y = x.clone()
    y[:, -1] = 0
    return y


def _scale_second_last(x):
    y = x.clone()
    y.select(1, -2).mul_(3)
    return y


CONVERTERS = {
    # Converters that baked the example's size of a dynamic dim into the
    # program (before 2026-11-29): a write through x[:, -1] wrote the
    # capture's last index on every size; diff's slices [1:n] / [:n-1] and
    # glu's halves [:n//2] / [n//2:] kept the example's n (wrong shapes,
    # "not broadcast-compatible", or an odd size accepted); kl_div's
    # batchmean divided by 0 (NaN) when another dim was empty.
    "select_write_negative": _write_last,
    "select_scale_negative": _scale_second_last,
    "diff": lambda x: x.diff(dim=1),
    "diff_n2": lambda x: torch.diff(x, n=2, dim=1),
    "glu": lambda x: torch.nn.functional.glu(x, 1),
    "kl_batchmean": lambda x: torch.nn.functional.kl_div(
        x.log_softmax(2), (x * 2).softmax(2), reduction="batchmean"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_converters_follow_a_dynamic_size(name, backend):
    check_sizes(CONVERTERS[name], [(2, 4, 3), (2, 6, 3), (2, 2, 3),
                                   (2, 5, 3), (2, 1, 3), (2, 0, 3),
                                   (0, 4, 3), (3, 0, 2)], [0, 1, 2],
                backend)


@pytest.mark.parametrize("start,length", [(0, -1), (2, 5), (4, 0), (-4, 1),
                                          (3, 0), (-1, 1), (-3, 3), (1, 2)])
def test_narrow_with_static_bounds_checks_them(start, length):
    # narrow never clamps (a slice would): before 2026-11-29 x.narrow(1, 0,
    # -1) was x[:, 0:-1] and x.narrow(1, 2, 5) of a dim of 3 was x[:, 2:3],
    # where PyTorch raises.
    f = lambda x: x.narrow(1, start, length) * 2  # noqa: E731
    x = torch.randn(2, 3, 4)
    try:
        want = f(x)
    except (RuntimeError, IndexError):
        with pytest.raises(kiln.KilnError, match="narrow"):
            kiln.compile(f, backend="eager", fullgraph=True)(x.clone())
        return
    torch.testing.assert_close(
        kiln.compile(f, backend="eager", fullgraph=True)(x.clone()), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_narrow_of_a_dynamic_dim_checks_every_call(backend):
    # kt.slice clamps static bounds to a dynamic dim's size; narrow's check
    # runs before each call instead (L = 2: PyTorch raises).
    messages = check_sizes(lambda x: x.narrow(1, 1, 2) * 2,
                           [(2, 4), (2, 3), (2, 2), (2, 5), (2, 0)], [1],
                           backend)
    assert len(messages) == 2, messages
    assert all("narrow(): start (1) + length (2) exceeds" in m
               for m in messages), messages


@pytest.mark.parametrize("chunks", [0, -1])
def test_chunk_count_must_be_positive(chunks):
    f = lambda x: x.chunk(chunks, 1)[0] * 1  # noqa: E731
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be "
                       "greater than 0"):
        f(torch.randn(2, 3))
    # Was "cannot capture Tensor.chunk: ZeroDivisionError" (0) and "split
    # size must be positive" (-1).
    with pytest.raises(kiln.KilnError, match="chunk expects `chunks` to be "
                       "greater than 0, got: %d" % chunks):
        kiln.compile(f, backend="eager", fullgraph=True)(torch.randn(2, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_size_check_that_divides_by_zero_is_a_kiln_error(backend):
    # narrow's per-call check of a length n // m: with m = 0 its evaluation
    # divided by zero in the frontend (a ZeroDivisionError traceback from
    # kiln._symbolic before 2026-11-29), now a KilnError at the user's line.
    messages = check_sizes(
        lambda x: x.narrow(1, 0, x.size(0) // x.size(1)) * 2,
        [(4, 2), (6, 3), (4, 0)], [0, 1], backend)
    assert len(messages) == 1, messages
    assert "integer division or modulo by zero" in messages[0], messages
    assert "test_zero_sizes.py:" in messages[0], messages
