"""Data-dependent sizes (issue 16): torch.nonzero, torch.argwhere,
masked_select and x[bool_mask] compiled through kt.nonzero, whose count is
an "unbacked" size (kiln._symbolic.Unbacked): `?` in the IR, never guarded
nor specialized. Both importers (kiln.compile's torch-level converters and
the ATen importer of make_fx graphs through kiln.backend), both backends
("eager" is the interpreter, "cpu" the compiled code); every result is
compared with PyTorch eager (values, shapes and dtypes). Also: one compile
for masks of different counts, ops after the result, gradients, and the
clean refusals / graph breaks where a converter needs the count as a
Python number."""

import math
import re

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import kiln
from kiln import _symbolic

BACKENDS = ["eager", "cpu"]


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got, want, equal_nan=True)


def _programs(compiled):
    return list(compiled._kiln.programs.values())


def _masks(shape):
    g = torch.Generator().manual_seed(len(shape))
    return [torch.zeros(shape, dtype=torch.bool),          # 0 rows
            torch.ones(shape, dtype=torch.bool),           # all rows
            torch.rand(shape, generator=g) < 0.5,
            torch.rand(shape, generator=g) < 0.2]


def _x(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g)


def with_nans(shape):
    x = _x(shape, 3)
    flat = x.view(-1)
    flat[::3] = 0.0
    flat[1::5] = math.nan
    flat[2::7] = -0.0
    return x


# ------------------------------------------------ kiln.compile (torch level)


def selects(x, m):
    return (torch.masked_select(x, m), x[m], torch.nonzero(m),
            torch.argwhere(m), m.nonzero(), x.masked_select(m))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(7,), (2, 3, 4)])
def test_compile_matches_eager_one_compile_for_every_count(backend, shape):
    f = kiln.compile(selects, backend=backend, fullgraph=True)
    x = _x(shape)
    for m in _masks(shape):
        _same(f(x, m), selects(x, m))
    [prog] = _programs(f)
    # The count is not guarded: 0, all and two random counts, one compile.
    assert prog.stats()["compiles"] == 1
    assert prog.recompile_reasons() == []
    ir = prog.session.entry_ir(prog.name, 0)
    assert "kt.nonzero" in ir and "tensor<?x%dxi64>" % len(shape) in ir


@pytest.mark.parametrize("backend", BACKENDS)
def test_ops_after_the_result(backend):
    def fn(x, m):
        y = x[m]
        return (y.sum(), y * 2.5, (y + y).mean(),
                torch.nonzero(x > 0).sum(0),
                torch.exp(torch.masked_select(x, m)).sum(),
                y.reshape(-1, 1) - 1, y.unsqueeze(0) * x[:1, :1].reshape(1, 1))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = _x((3, 4))
    for m in _masks((3, 4)):
        _same(f(x, m), fn(x, m))
    assert [p.stats()["compiles"] for p in _programs(f)] == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_negative_zero_and_dtypes(backend):
    def fn(x, i, b):
        return (torch.nonzero(x), torch.argwhere(x), x[x != x],
                torch.masked_select(x, x == x), torch.nonzero(i),
                i[i > 0], torch.nonzero(b), torch.nonzero(x, as_tuple=True))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = with_nans((3, 5))
    i = torch.tensor([[0, 3, -2], [7, 0, 0]], dtype=torch.int32)
    b = torch.tensor([True, False, True])
    _same(f(x, i, b), fn(x, i, b))


@pytest.mark.parametrize("backend", BACKENDS)
def test_rank_0(backend):
    # A 0-d operand: [count, 0] indices; as_tuple gives one [count] tensor.
    def fn(s):
        return torch.nonzero(s), torch.nonzero(s, as_tuple=True), \
            torch.argwhere(s), torch.masked_select(s, s > 0)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    for v in (0.0, 2.5, -1.0, math.nan):
        s = torch.tensor(v)
        _same(f(s), fn(s))
    assert [p.stats()["compiles"] for p in _programs(f)] == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_masks_that_broadcast_and_masks_of_some_dims(backend):
    def fn(x, row, col, m2):
        return (torch.masked_select(x, row), torch.masked_select(x, col),
                torch.masked_select(row, x > 0), x[m2], x[:, col.view(-1)],
                x[m2.to(torch.uint8)] * 1)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = _x((2, 3, 4))
    g = torch.Generator().manual_seed(5)
    for p in (0.0, 0.5, 1.0):
        row = torch.rand(4, generator=g) < p   # broadcasts over (2, 3)
        col = torch.rand(3, 1, generator=g) < p
        m2 = torch.rand(2, 3, generator=g) < p  # the leading two dims
        _same(f(x, row, col, m2), fn(x, row, col, m2))
    assert [p.stats()["compiles"] for p in _programs(f)] == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_input_dims_and_the_count(backend):
    # x's dim 0 becomes dynamic after one recompile; the count never
    # recompiles (the mask comes from x: the same symbols).
    def fn(x):
        return x[x > 0].sum() * 3, torch.argwhere(x < 0)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    for n in (3, 5, 7, 9, 0):
        x = _x((n, 4), n)
        _same(f(x), fn(x))
    [prog] = _programs(f)
    assert prog.stats()["compiles"] == 2
    assert prog.recompile_reasons() == [
        "tensor 'x' size mismatch at index 0. expected 3, actual 5"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_mark_dynamic_is_not_specialized_by_a_mask(backend):
    # kiln.mark_dynamic'd dims stay dynamic through x[x > 0] and
    # masked_select (no SpecializationError, no recompile).
    def fn(x):
        return x[x > 0] * 2, torch.masked_select(x, x < 0).sum(), \
            torch.nonzero(x)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    for n in (4, 6, 1):
        x = _x((n, 3), n)
        kiln.mark_dynamic(x, 0)
        _same(f(x), fn(x))
    [prog] = _programs(f)
    assert prog.stats()["compiles"] == 1


@pytest.mark.parametrize("backend", ["eager", "cpu", "aot_eager"])
def test_gradient_through_a_mask(backend):
    def fn(x, m):
        return (x[m] ** 2).sum() + torch.masked_select(x * 3, m).sum()
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    for m in _masks((3, 4)):
        x = _x((3, 4)).requires_grad_()
        f(x, m).backward()
        got = x.grad
        x.grad = None
        fn(x, m).backward()
        torch.testing.assert_close(got, x.grad)
    if backend != "aot_eager":
        # The training pair's forward and backward compile once for
        # every count (the saved tensors' `?` dims are not guarded).
        [prog] = _programs(f)
        [pair] = prog.training_pairs.values()
        names = re.findall(r"kg.program @(\w+)", pair.text)
        assert len(names) == 2
        assert [pair.session.stats(n)["compiles"] for n in names] == [1, 1]


# --------------------------------------------- sizes needed as numbers


def test_count_as_python_number_is_refused_with_fullgraph():
    # Broadcasting against a static size other than 1, a size read by
    # Python, a branch on it need its value: a refusal
    # naming the line, never a guessed size. (Against a 1 it is itself:
    # test_ops_after_the_result.)
    x, m = _x((3, 4)), _masks((3, 4))[2]
    for fn in (lambda x, m: x[m] + torch.ones(2),
               lambda x, m: x[m] + x[m].shape[0],
               lambda x, m: x if x[m].shape[0] > 2 else -x,
               lambda x, m: x[torch.nonzero(m, as_tuple=True)]):
        with pytest.raises(kiln.Unsupported,
                           match="data-dependent size|depends on the data"):
            kiln.compile(fn, backend="eager", fullgraph=True)(x, m)


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_the_count_is_checked_when_it_runs(backend):
    # view(2, -1) of [u]: kt.reshape infers the -1 when it runs (a size
    # of its own, read back with tensor.dim) and checks the element count
    # as PyTorch does.
    f = kiln.compile(lambda x, m: x[m].view(2, -1) * 2, backend=backend,
                     fullgraph=True)
    x = _x((3, 4))
    m = torch.arange(12).view(3, 4) % 2 == 0
    _same(f(x, m), x[m].view(2, -1) * 2)
    m[0, 0] = False  # 5 elements
    with pytest.raises(RuntimeError):
        x[m].view(2, -1)
    with pytest.raises(kiln.KilnError, match="cannot reshape tensor of "
                       "shape \\[5\\]"):
        f(x, m)


@pytest.mark.parametrize("backend", BACKENDS)
def test_count_as_python_number_is_a_graph_break(backend):
    def fn(x, m):
        y = x[m]
        z = x * 2 if torch.nonzero(m).shape[0] > 5 else x - 1
        return (y + y.shape[0], torch.nonzero(m).shape[0] * y.sum(), z,
                x.sum() * len(x[m]), [t * 2 for t in torch.argwhere(m)])
    f = kiln.compile(fn, backend=backend)
    x = _x((3, 4))
    for m in _masks((3, 4)):
        _same(f(x, m), fn(x, m))


def test_unbacked_sizes_are_never_specialized():
    env = _symbolic.ShapeEnv()
    s0 = env.new(4, 0, 0)
    u = env.new_unbacked()
    assert _symbolic.is_unbacked(u * 3 + s0)
    assert not _symbolic.is_unbacked(s0 * 3)
    with pytest.raises(_symbolic.UnbackedSizeError):
        _symbolic.value(u + 1)
    with pytest.raises(_symbolic.UnbackedSizeError, match="a reshape"):
        env.specialize(u * 2, "a reshape")
    assert env.specialized_dims() == {}
    assert kiln._ir.shape_text((u, s0, 2)) == "?x4x2x"


def test_mask_with_other_indices_is_refused():
    x = _x((3, 4))
    with pytest.raises(kiln.Unsupported, match="together with other"):
        kiln.compile(lambda x: x[x[:, 0] > 0, 1], backend="eager",
                     fullgraph=True)(x)


# ------------------------------------------------- ATen level (make_fx)


def aten_fn(x, m):
    return (x[m] * 2, torch.masked_select(x, m), torch.nonzero(m),
            torch.argwhere(x), x[m].sum(),
            x[:, m[0]] if x.ndim > 1 else x[m > 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(6,), (2, 3, 4)])
def test_aten_importer(backend, shape):
    x = with_nans(shape)
    m0 = _masks(shape)[2]
    gm = make_fx(aten_fn)(x, m0)
    targets = {str(n.target) for n in gm.graph.nodes}
    assert "aten.nonzero.default" in targets
    assert "aten.masked_select.default" in targets
    assert "aten.index.Tensor" in targets
    prog = kiln.backend(gm, [x, m0], backend=backend)
    for m in _masks(shape):
        _same(prog(x, m), aten_fn(x, m))


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_masked_select_broadcasts(backend):
    def fn(x, m):
        return torch.ops.aten.masked_select.default(x, m) + 1
    x, m = _x((3, 4)), torch.tensor([True, False, False, True])
    gm = make_fx(fn)(x, m)
    prog = kiln.backend(gm, [x, m], backend=backend)
    for mm in (m, ~m, torch.zeros(4, dtype=torch.bool)):
        _same(prog(x, mm), fn(x, mm))


_EMPTY_COUNT_VIEW = r"""
import torch, kiln
def f(x, m):
    y = x[m]
    return y.view(y.shape[0], -1) * 2, y.reshape(-1, 3).sum(0)
x = torch.randn(4, 3)
cf = kiln.compile(f, backend=%r, fullgraph=True)
for m in ([True, False, True, True], [False, True, False, False]):
    m = torch.tensor(m)
    for a, b in zip(cf(x, m), f(x, m)):
        assert a.shape == b.shape and torch.allclose(a, b)
try:
    cf(x, torch.zeros(4, dtype=torch.bool))
except kiln.KilnError as e:
    print("ERROR", str(e).splitlines()[0])
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_a_count_with_minus_one_when_the_count_is_zero(backend):
    # y.view(u, -1) with u a count: the -1 was total // u in index
    # arithmetic, a division by zero for an empty mask (SIGFPE: the CPU
    # backend's process died; the interpreter: "integer division by
    # zero"). kt.reshape infers it now and raises PyTorch's error
    # ("cannot reshape tensor of 0 elements into shape [0, -1]").
    import os
    import subprocess
    import sys
    with pytest.raises(RuntimeError, match="cannot reshape tensor of 0 "
                       "elements"):
        torch.randn(0, 3).view(0, -1)
    p = subprocess.run([sys.executable, "-c", _EMPTY_COUNT_VIEW % backend],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert "cannot reshape tensor of shape [0, 3] (0 elements)" in \
        p.stdout, p.stdout
