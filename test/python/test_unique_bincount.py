"""Data-dependent sizes (issue 16): torch.unique (dim=None),
torch.unique_consecutive (dim=None) and torch.bincount compiled. unique's
and unique_consecutive's length is kt.nonzero's count of the run starts,
bincount's kt.bincount's length max(max(x) + 1, minlength): both are
"unbacked" sizes (kiln._symbolic.Unbacked), `?` in the IR, never guarded.
Both importers (kiln.compile's torch-level converters and the ATen importer
of make_fx graphs through kiln.backend: aten._unique2,
aten.unique_consecutive, aten.bincount), both backends ("eager" is the
interpreter, "cpu" the compiled code); results are compared with PyTorch
eager (values, shapes, dtypes), and with NumPy where PyTorch 1.13's CPU
kernel has no defined answer (NaN in torch.unique: its hash set and
std::sort put NaNs anywhere and its inverse maps them to other values;
Kiln sorts NaN last and keeps every NaN distinct, as np.unique with
equal_nan=False)."""

import math

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

BACKENDS = ["eager", "cpu"]


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), \
            (got, want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if not isinstance(want, torch.Tensor):
        assert got == want
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got, want, equal_nan=True)
    # -0.0 and 0.0: the same sign as PyTorch's (the first in input order).
    if want.is_floating_point():
        assert torch.equal(torch.signbit(got), torch.signbit(want))


def _programs(compiled):
    return list(compiled._kiln.programs.values())


def _compiles(compiled):
    return [p.stats()["compiles"] for p in _programs(compiled)]


def _inputs():
    """Same-shape inputs (6 elements) with 0 to 6 distinct values."""
    g = torch.Generator().manual_seed(0)
    return [torch.full((6,), 2.5),                       # all equal
            torch.tensor([6.0, -1.0, 3.5, 0.25, 9.0, -7.0]),  # all distinct
            torch.tensor([3.0, 1.0, 3.0, 2.0, 2.0, 2.0]),
            torch.randint(0, 3, (6,), generator=g).float(),
            torch.tensor([0.0, -0.0, 1.0, -0.0, 0.0, 1.0]),
            torch.tensor([-0.0, 0.0, 0.0, 5.0, 5.0, -0.0])]


def all_unique(x):
    return (torch.unique(x), torch.unique(x, return_inverse=True),
            torch.unique(x, return_counts=True),
            torch.unique(x, return_inverse=True, return_counts=True),
            x.unique(sorted=True, return_counts=True),
            torch.unique_consecutive(x),
            torch.unique_consecutive(x, return_inverse=True),
            torch.unique_consecutive(x, return_counts=True),
            torch.unique_consecutive(x, return_inverse=True,
                                     return_counts=True),
            x.unique_consecutive(return_counts=True))


# ------------------------------------------------ kiln.compile (torch level)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_one_compile_for_every_count(backend):
    f = kiln.compile(all_unique, backend=backend, fullgraph=True)
    for x in _inputs():
        _same(f(x), all_unique(x))
    [prog] = _programs(f)
    # 1 to 6 distinct values, one compile: the count is not guarded.
    assert prog.stats()["compiles"] == 1
    assert prog.recompile_reasons() == []
    ir = prog.session.entry_ir(prog.name, 0)
    assert "kt.nonzero" in ir and "kt.argsort" in ir
    assert "tensor<?xf32>" in ir


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int32,
                                   torch.uint8, torch.int8, torch.bool])
def test_unique_dtypes_and_2d(backend, dtype):
    f = kiln.compile(all_unique, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 4, (3, 5), generator=g)
    if dtype == torch.int8:
        x = x - 2
    x = x.to(dtype)
    # 2-D: flattened (dim=None); the inverse has x's shape.
    _same(f(x), all_unique(x))
    _same(f(x.t().contiguous()), all_unique(x.t().contiguous()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_empty_and_rank_0(backend):
    f = kiln.compile(all_unique, backend=backend, fullgraph=True)
    for x in (torch.tensor([]), torch.zeros(2, 0), torch.tensor(4.0),
              torch.tensor([], dtype=torch.int64)):
        _same(f(x), all_unique(x))


def _np_unique(x):
    """np.unique with every NaN distinct (sorted last), flattened."""
    v, i, c = np.unique(x.numpy().reshape(-1), return_inverse=True,
                        return_counts=True, equal_nan=False)
    return (torch.from_numpy(v), torch.from_numpy(i).reshape(x.shape),
            torch.from_numpy(c))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_nan_against_numpy(backend):
    f = kiln.compile(lambda x: torch.unique(x, return_inverse=True,
                                            return_counts=True),
                     backend=backend, fullgraph=True)
    nan = math.nan
    for x in (torch.tensor([1.0, nan, 2.0, nan, 1.0, math.inf]),
              torch.tensor([[nan, nan], [nan, -math.inf]]),
              torch.tensor([nan])):
        v, i, c = f(x)
        _same((v, i, c), _np_unique(x))
        # Every element is its value's (NaN with itself).
        torch.testing.assert_close(v[i], x, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_consecutive_runs_and_nan(backend):
    f = kiln.compile(all_unique, backend=backend, fullgraph=True)
    nan = math.nan
    for x in (torch.tensor([1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 3.0]),
              torch.tensor([nan, nan, 1.0, 1.0, -0.0, 0.0, 0.0, nan]),
              torch.tensor([[5, 5, 5, 4], [4, 4, 5, 5]])):
        # unique_consecutive: PyTorch's NaNs are distinct (NaN != NaN) too.
        want = all_unique(x)[5:]
        _same(f(x)[5:], want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_sorted_false_is_sorted(backend):
    # PyTorch leaves the order of sorted=False to the kernel (1.13's CPU one
    # is a hash set's); Kiln's is the sorted one, with the same inverse.
    f = kiln.compile(lambda x: torch.unique(x, sorted=False,
                                            return_inverse=True,
                                            return_counts=True),
                     backend=backend, fullgraph=True)
    x = torch.tensor([[3, 1, 3], [7, 1, 0]])
    _same(f(x), torch.unique(x, sorted=True, return_inverse=True,
                             return_counts=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ops_after_the_results(backend):
    def fn(x, y):
        v, inv, cnt = torch.unique(x, return_inverse=True, return_counts=True)
        c = torch.unique_consecutive(x)
        b = torch.bincount(y)
        return (v.sum(), v * 2.5, v[inv], (v[inv] - x).abs().sum(),
                cnt.sum(), cnt.float() / cnt.sum(), c.mean(),
                torch.exp(c) + 1, b * 2, b.sum(), b.float().max(),
                torch.zeros(c.shape[0]) + c, torch.ones_like(b) * 3,
                v.unsqueeze(0) * x[:1].reshape(1, 1))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(2)
    for k in range(3):
        x = torch.randint(0, 2 + 3 * k, (8,), generator=g).float()
        y = torch.randint(0, 1 + 5 * k, (9,), generator=g)
        _same(f(x, y), fn(x, y))
    assert _compiles(f) == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_of_a_masked_select(backend):
    # An unbacked size feeding another: unique of x[m] (the count of m).
    def fn(x, m):
        return torch.unique(x[m], return_counts=True), \
            torch.bincount(x[m].long(), minlength=3)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = torch.tensor([3.0, 1.0, 3.0, 2.0, 0.0, 2.0])
    for m in (x > 1, x >= 0, x < 0):
        _same(f(x, m), fn(x, m))
    assert _compiles(f) == [1]


# ------------------------------------------------------------ with a dim


def unique_dims(x):
    return (torch.unique(x, dim=0, return_inverse=True, return_counts=True),
            torch.unique(x, dim=1),
            torch.unique(x, dim=-1, return_counts=True),
            x.unique(dim=0, return_inverse=True),
            torch.unique_consecutive(x, dim=0, return_inverse=True,
                                     return_counts=True),
            torch.unique_consecutive(x, dim=-1, return_counts=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_unique_dim_one_compile_for_every_count(backend, dtype):
    # Slices along dim: rows sorted lexicographically (PyTorch's order),
    # their count unbacked (one compile for 1 to 6 distinct rows).
    f = kiln.compile(unique_dims, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(5)
    xs = [torch.zeros(6, 3), torch.eye(6)[:, :3] * 2 - 1,
          torch.tensor([[1, 2, 0], [0, 5, 1], [1, 2, 0], [1, -1, 1],
                        [1, 2, 0], [0, 5, 1]])]
    xs += [torch.randint(0, 2, (6, 3), generator=g) for _ in range(2)]
    for x in xs:
        x = x.to(dtype)
        _same(f(x), unique_dims(x))
    assert _compiles(f) == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_dim_3d_and_empty(backend):
    # PyTorch lays the slices out as x.transpose(dim, 0) flattened.
    def fn(x):
        return tuple(torch.unique(x, dim=d, return_inverse=True,
                                  return_counts=True) for d in range(3)) + \
            (torch.unique_consecutive(x, dim=2, return_counts=True),)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(6)
    x = torch.randint(0, 2, (3, 4, 2), generator=g)
    _same(f(x), fn(x))
    e = lambda x: torch.unique(x, dim=0, return_inverse=True,
                               return_counts=True)
    x = torch.zeros(0, 3)
    _same(kiln.compile(e, backend=backend, fullgraph=True)(x), e(x))


# ---------------------------------------------------------------- bincount


def bincounts(x, w32, w64):
    return (torch.bincount(x), torch.bincount(x, minlength=2),
            torch.bincount(x, minlength=40), torch.bincount(x, w32),
            torch.bincount(x, weights=w64, minlength=30), x.bincount(w32),
            torch.bincount(x, w32.to(torch.float16)),
            torch.bincount(x, w64.to(torch.int32)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_one_compile_for_every_length(backend):
    f = kiln.compile(bincounts, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(3)
    for hi in (1, 5, 37, 100):
        x = torch.randint(0, hi, (12,), generator=g)
        w32 = torch.randn(12, generator=g)
        w64 = torch.randn(12, generator=g, dtype=torch.float64) * 10
        # result dtypes: int64, float32 (f32 weights), float64 (others).
        _same(f(x, w32, w64), bincounts(x, w32, w64))
    [prog] = _programs(f)
    assert prog.stats()["compiles"] == 1
    assert prog.recompile_reasons() == []
    ir = prog.session.entry_ir(prog.name, 0)
    assert "kt.bincount" in ir and "tensor<?xf32>" in ir


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.int8,
                                   torch.uint8])
def test_bincount_int_dtypes(backend, dtype):
    fn = lambda x, w: (torch.bincount(x), torch.bincount(x, w, 4))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = torch.tensor([3, 0, 3, 7, 1, 127], dtype=dtype)
    w = torch.linspace(-1, 2, 6)
    _same(f(x, w), fn(x, w))
    if dtype == torch.uint8:
        x = torch.tensor([200, 255, 3], dtype=dtype)
        _same(f(x, w[:3]), fn(x, w[:3]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_empty(backend):
    # An empty input: minlength zeros, int64 even with weights (PyTorch).
    fn = lambda x, w: (torch.bincount(x), torch.bincount(x, minlength=5),
                       torch.bincount(x, w, minlength=3),
                       torch.bincount(x, w.double()))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x, w = torch.tensor([], dtype=torch.int64), torch.tensor([])
    _same(f(x, w), fn(x, w))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_f32_weights_add_in_f32(backend):
    # PyTorch's CPU kernel adds float32 weights in float32, in order.
    fn = lambda x, w: torch.bincount(x, w)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = torch.tensor([0, 0, 0, 0, 1])
    w = torch.tensor([1.0, 1e-8, 1e-8, 1e-8, 3.0])
    _same(f(x, w), fn(x, w))
    assert f(x, w)[0].item() == 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_negative_is_a_run_time_error(backend):
    f = kiln.compile(lambda x: torch.bincount(x) * 2, backend=backend,
                     fullgraph=True)
    _same(f(torch.tensor([1, 2])), torch.bincount(torch.tensor([1, 2])) * 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([1, -2]))
    with pytest.raises(kiln.KilnError, match="bincount only supports "
                       "non-negative inputs: self\\[1\\] is -2"):
        f(torch.tensor([1, -2]))


def test_bad_inputs_are_refused_with_fullgraph():
    x = torch.tensor([1, 2])
    for fn, msg in (
            (lambda x: torch.bincount(x.float()), "1-d non-negative integral"),
            (lambda x: torch.bincount(x.view(1, 2)), "1-d non-negative"),
            (lambda x: torch.bincount(x > 0), "1-d non-negative"),
            (lambda x: torch.bincount(x, torch.ones(3)), "same length"),
            (lambda x: torch.bincount(x, minlength=-1), "minlength"),
            (lambda x: torch.unique(x.view(2, 1)[:, :0], dim=0),
             "0 sized dimensions"),
            (lambda x: torch.unique_consecutive(x[0], dim=0), "0-d")):
        with pytest.raises(kiln.Unsupported, match=msg):
            kiln.compile(fn, backend="eager", fullgraph=True)(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_are_graph_breaks(backend):
    # Without fullgraph the op runs eagerly: PyTorch's result or error.
    x = torch.tensor([[1, 2], [2, 2]])
    fn = lambda x: (torch.unique(x, dim=0, return_counts=True), x * 2)
    _same(kiln.compile(fn, backend=backend)(x), fn(x))
    h = kiln.compile(lambda x: torch.unique(x[:, :0], dim=0), backend=backend)
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        h(x)
    g = kiln.compile(lambda x: torch.bincount(x.float()), backend=backend)
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        g(x[0])


def test_size_as_python_number_is_refused_with_fullgraph():
    x = torch.tensor([3, 1, 3])
    for fn in (lambda x: x + len(torch.unique(x)),
               lambda x: x * torch.bincount(x).shape[0],
               lambda x: x if torch.unique_consecutive(x).shape[0] > 2
               else -x):
        with pytest.raises(kiln.Unsupported,
                           match="data-dependent size|depends on the data"):
            kiln.compile(fn, backend="eager", fullgraph=True)(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_size_as_python_number_is_a_graph_break(backend):
    def fn(x):
        u = torch.unique(x)
        return (x + len(u), torch.bincount(x).shape[0] * u.sum(),
                torch.zeros(torch.unique_consecutive(x).shape[0]))
    f = kiln.compile(fn, backend=backend)
    for x in (torch.tensor([3, 1, 3]), torch.tensor([0, 0, 1])):
        _same(f(x), fn(x))


# ------------------------------------------------- ATen level (make_fx)


def aten_fn(x, i, w):
    v, inv, cnt = torch.unique(x, return_inverse=True, return_counts=True)
    return (v, inv, cnt, torch.unique(x), v[inv] * 2,
            torch.unique(x, dim=1, return_inverse=True, return_counts=True),
            torch.unique_consecutive(x, return_inverse=True,
                                     return_counts=True),
            torch.unique_consecutive(x), torch.bincount(i),
            torch.bincount(i, w, minlength=9), cnt.sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_importer(backend):
    g = torch.Generator().manual_seed(4)
    x = torch.randint(0, 4, (2, 5), generator=g).float()
    i = torch.randint(0, 6, (7,), generator=g)
    w = torch.rand(7, generator=g)
    gm = make_fx(aten_fn)(x, i, w)
    targets = {str(n.target) for n in gm.graph.nodes}
    assert {"aten._unique2.default", "aten.unique_consecutive.default",
            "aten.unique_dim.default", "aten.bincount.default"} <= targets
    prog = kiln.backend(gm, [x, i, w], backend=backend)
    for k in range(4):
        x = torch.randint(0, 1 + 3 * k, (2, 5), generator=g).float()
        i = torch.randint(0, 1 + 6 * k, (7,), generator=g)
        _same(prog(x, i, w), aten_fn(x, i, w))


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_unique_nan_and_empty(backend):
    fn = lambda x: torch.ops.aten._unique2.default(x, True, True, True)
    x = torch.tensor([2.0, math.nan, 2.0, math.nan])
    prog = kiln.backend(make_fx(fn)(x), [x], backend=backend)
    _same(prog(x), _np_unique(x))
    e = torch.tensor([])
    prog = kiln.backend(make_fx(fn)(e), [e], backend=backend)
    _same(prog(e), fn(e))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_no_gradients_as_pytorch(backend):
    # PyTorch: "the derivative for '_unique2' / 'bincount' is not
    # implemented" on backward; Kiln fails too (unique's values carry no
    # gradient; kt.bincount has no vector-Jacobian rule), never a gradient.
    x = torch.tensor([3.0, 1.0, 3.0], requires_grad=True)
    i = torch.tensor([0, 1, 1])
    for fn, args in ((lambda x: torch.unique(x).sum(), (x,)),
                     (lambda i, w: torch.bincount(i, w).sum(), (i, x))):
        with pytest.raises(RuntimeError, match="not implemented"):
            fn(*args).backward()
        with pytest.raises(RuntimeError, match="grad|vector-Jacobian"):
            kiln.compile(fn, backend=backend, fullgraph=True)(
                *args).backward()
        assert x.grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_tensor_of_a_data_dependent_length(backend):
    # One index tensor whose length is unbacked (a 1-D nonzero's column)
    # and an index into a dim of unbacked length (values[inverse]): neither
    # is specialized, one compile.
    def fn(x, m):
        v, inv = torch.unique(x, return_inverse=True)
        return (x[torch.nonzero(m, as_tuple=True)] * 2,
                x[torch.nonzero(m).view(-1)] - 1, v[inv], v[-1:] * 2,
                v[inv[:2]] + 1)
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    x = torch.tensor([0.5, -1.0, 2.0, 0.5, 3.0, -1.0])
    for m in (x > 0, x > 5, x > -5):
        _same(f(x, m), fn(x, m))
    assert _compiles(f) == [1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_input_sizes(backend):
    # After one recompile the input dims are dynamic (automatic dynamic
    # shapes): every later size, 0 and 1 included, runs the same program;
    # bincount without weights does not specialize its input's length.
    def fn(x, i):
        return (torch.unique(x, return_inverse=True, return_counts=True),
                torch.unique(x.view(-1, 1), dim=0), torch.unique_consecutive(x),
                torch.bincount(i, minlength=2))
    f = kiln.compile(fn, backend=backend, fullgraph=True)
    g = torch.Generator().manual_seed(7)
    for n in (5, 7, 9, 0, 1, 12):
        x = torch.randint(0, 4, (n,), generator=g).float()
        i = torch.randint(0, 6, (n + 1,), generator=g)
        _same(f(x, i), fn(x, i))
    assert _compiles(f) == [2]
