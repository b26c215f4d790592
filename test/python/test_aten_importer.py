"""The ATen-level importer's conversions of ops the torch-level importer
already had (issue 16; python/kiln/_aten.py, "ops the torch-level importer
converts"): each overload called directly in an FX graph (the way make_fx,
AOTAutograd and torch.export graphs call it), run through
`kiln.backend(gm, ...)` on the interpreter ("eager") and the compiled CPU
backend ("cpu"), compared with the same overload run by eager PyTorch:
odd shapes, empty tensors, negative dims, each overload's own arguments
(correction, decimals, output_size / scale_factors, out_int32, ...), and
the refusals' messages. make_fx graphs of the torch functions are checked
too (what the OpInfo sweep runs, docs/opinfo.md)."""

import operator

import pytest
import torch
import torch.fx as fx
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

BACKENDS = ("eager", "cpu")
aten = torch.ops.aten


def _graph(target, args, kwargs):
    """An FX graph calling `target(*args, **kwargs)`, each tensor among
    the arguments a placeholder; (graph module, the tensors)."""
    g = fx.Graph()
    tensors = []

    def sub(a):
        if isinstance(a, torch.Tensor):
            tensors.append(a)
            return g.placeholder("t%d" % (len(tensors) - 1))
        if isinstance(a, (list, tuple)):
            return type(a)(sub(v) for v in a)
        return a
    args = sub(list(args))
    kwargs = {k: sub(v) for k, v in kwargs.items()}
    n = g.call_function(target, tuple(args), kwargs)
    rets = target._schema.returns
    if len(rets) > 1:
        n = tuple(g.call_function(operator.getitem, (n, i))
                  for i in range(len(rets)))
    g.output(n)
    return fx.GraphModule(torch.nn.Module(), g), tensors


def _run(backend, target, *args, **kwargs):
    gm, tensors = _graph(target, args, kwargs)
    return kiln.backend(gm, list(tensors), backend=backend)(*tensors)


def _same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got, want, equal_nan=True)


def _check(backend, target, *args, **kwargs):
    want = target(*args, **kwargs)
    _same(_run(backend, target, *args, **kwargs), want)


def _refused(target, *args, match, **kwargs):
    with pytest.raises(kiln.Unsupported, match=match):
        _run("eager", target, *args, **kwargs)


def _x(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(*shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    return torch.randint(-5, 6, shape, dtype=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions(backend):
    torch.manual_seed(0)
    x, e = _x(3, 5), _x(0, 4)
    b = _x(2, 3, 5, dtype=torch.bool)
    for t in (x, e, b, _x(3, 5, dtype=torch.int64)):
        _check(backend, aten.all.default, t)
        _check(backend, aten.all.dim, t, -1)
        _check(backend, aten.all.dim, t, 0, True)
        _check(backend, aten.count_nonzero.default, t)
        _check(backend, aten.count_nonzero.default, t, -2)
        _check(backend, aten.count_nonzero.dim_IntList, t, [0, -1])
        _check(backend, aten.count_nonzero.dim_IntList, t, [])
    x[1, 2] = float("nan")
    for t in (x, _x(2, 3, 7, dtype=torch.int64)):
        _check(backend, aten.aminmax.default, t)
        _check(backend, aten.aminmax.default, t, dim=-1)
        _check(backend, aten.aminmax.default, t, dim=0, keepdim=True)
    _check(backend, aten.aminmax.default, e, dim=-1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_var_std_family(backend):
    torch.manual_seed(1)
    x = _x(3, 7, 5, dtype=torch.float64)
    for t in (x, _x(4, 1), _x(1)):
        _check(backend, aten.var.default, t)
        _check(backend, aten.var.default, t, False)
        for op in (aten.std, aten.var_mean, aten.std_mean):
            _check(backend, op.default, t)
            _check(backend, op.default, t, False)
            _check(backend, op.dim, t, [-1])
            _check(backend, op.dim, t, None, False, True)
            _check(backend, op.dim, t, [], True)
            for c in (None, 0, 1, 2):
                _check(backend, op.correction, t, [0], correction=c)
                _check(backend, op.correction, t, None, correction=c,
                       keepdim=True)
    for op in (aten.std, aten.var_mean, aten.std_mean):
        _check(backend, op.correction, x, [0, -1], correction=3)
        _check(backend, op.dim, x, [1, -1], True, True)
        _check(backend, op.correction, _x(0, 3), [-1], correction=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pointwise_and_indexing(backend):
    torch.manual_seed(2)
    a, c = _x(3, 5), _x(5)
    i, j = _x(3, 5, dtype=torch.int64), _x(3, 1, dtype=torch.int64)
    j[j == 0] = 3
    _check(backend, aten.floor_divide.default, a, c)
    _check(backend, aten.floor_divide.default, i, j)
    _check(backend, aten.floor_divide.Scalar, a, 0.7)
    _check(backend, aten.floor_divide.Scalar, i, -2)
    _check(backend, aten.floor_divide.default, _x(0, 5), c)
    for d in (6, 3, 0, -2):
        _check(backend, aten.round.decimals, _x(3, 4) * 123.456, decimals=d)
    _check(backend, aten.round.decimals,
           _x(3, 4, dtype=torch.float64) * 1e4, decimals=-3)
    # bfloat16 (PyTorch rounds 10^d and x * 10^d to bfloat16): bit for bit,
    # at the ATen level and through torch.round.
    xb = (_x(500) * torch.logspace(-3, 5, 500)).bfloat16()
    for d in (1, 2, 4, -1, -3, 40):
        want = torch.round(xb, decimals=d)
        for got in (_run(backend, aten.round.decimals, xb, decimals=d),
                    kiln.compile(lambda x: torch.round(x, decimals=d),
                                 backend=backend, fullgraph=True)(xb)):
            assert got.dtype == torch.bfloat16
            assert torch.equal(got.float().nan_to_num(7.0),
                               want.float().nan_to_num(7.0)), d
    x = _x(4, 3, 5)
    idx = torch.tensor([3, 0, 2])
    for dim in (0, -3):
        _check(backend, aten.index_add.default, x, dim, idx, _x(3, 3, 5))
        _check(backend, aten.index_add.default, x, dim, idx, _x(3, 3, 5),
               alpha=2.5)
        _check(backend, aten.index_copy.default, x, dim, idx, _x(3, 3, 5))
    idx2 = torch.tensor([4, 0])
    _check(backend, aten.index_add.default, x, -1, idx2, _x(4, 3, 2))
    _check(backend, aten.index_copy.default, x, 2, idx2, _x(4, 3, 2))
    _check(backend, aten.index_fill.int_Scalar, x, 1, torch.tensor([0, -1]),
           -7.5)
    _check(backend, aten.index_fill.int_Tensor, x, -1, torch.tensor([1]),
           torch.tensor(3.0))
    _check(backend, aten.index_fill.int_Scalar, _x(0, 3), 1,
           torch.tensor([2]), 1.0)
    _check(backend, aten.index_add.default, _x(4, 3, dtype=torch.int64), 0,
           torch.tensor([1, 1]), _x(2, 3, dtype=torch.int64), alpha=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sorting_and_scans(backend):
    torch.manual_seed(3)
    x = torch.randperm(35).reshape(5, 7).float()
    _check(backend, aten.kthvalue.default, x, 3)
    _check(backend, aten.kthvalue.default, x, 1, 0)
    _check(backend, aten.kthvalue.default, x, 5, -2, True)
    _check(backend, aten.kthvalue.default, torch.randperm(9), 4)
    for t in (_x(3, 6), _x(2, 0, 3), _x(4, dtype=torch.float64) * 50):
        for d in range(-t.ndim, t.ndim):
            _check(backend, aten.logcumsumexp.default, t, d)
    seq = torch.sort(_x(7)).values
    v = _x(3, 4)
    v[0, 0] = seq[2]
    for right in (False, True):
        for out_int32 in (False, True):
            _check(backend, aten.searchsorted.Tensor, seq, v,
                   out_int32=out_int32, right=right)
            _check(backend, aten.bucketize.Tensor, v, seq,
                   out_int32=out_int32, right=right)
        _check(backend, aten.searchsorted.Scalar, seq, 0.25, right=right)
        _check(backend, aten.bucketize.Scalar, 0.25, seq, right=right)
    _check(backend, aten.searchsorted.Tensor, seq, v, side="right")
    s2 = torch.sort(_x(3, 6), -1).values
    _check(backend, aten.searchsorted.Tensor, s2, _x(3, 2))
    order = torch.argsort(seq.flip(0))
    _check(backend, aten.searchsorted.Tensor, seq.flip(0), v, sorter=order)
    _check(backend, aten.searchsorted.Tensor, seq, _x(0, 2))
    _check(backend, aten.bucketize.Tensor, torch.tensor([[1, 5], [9, 2]]),
           torch.tensor([0, 2, 4, 8]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_matrices(backend):
    torch.manual_seed(4)
    for x in (_x(4, 6), _x(6, 4, dtype=torch.int64), _x(0, 3),
              _x(2, 3, 5), _x(3, 3, dtype=torch.bool)):
        for k in (0, 2, -1, -7, 9):
            _check(backend, aten.tril.default, x, k)
            _check(backend, aten.triu.default, x, k)
    for x in (_x(4, 6), _x(5, 2, dtype=torch.int64), _x(0, 3),
              _x(3, 3, dtype=torch.int8)):
        _check(backend, aten.trace.default, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_creation(backend):
    for n, m in ((3, None), (0, None), (4, 2), (2, 5), (3, 0)):
        for dt in (None, torch.int64, torch.bool, torch.float64):
            args = (n,) if m is None else (n, m)
            op = aten.eye.default if m is None else aten.eye.m
            _check(backend, op, *args, dtype=dt)
    for steps in (0, 1, 2, 7, 100):
        _check(backend, aten.linspace.default, -1.5, 3, steps)
        _check(backend, aten.linspace.default, 0, 10, steps,
               dtype=torch.int64)
        _check(backend, aten.logspace.default, -2, 2, steps)
        _check(backend, aten.logspace.default, 1, 3, steps, 2.0,
               dtype=torch.float64)
    _check(backend, aten.linspace.default, 3, -100, 13, dtype=torch.int32)
    for row, col, off in ((4, 3, 0), (3, 5, 1), (5, 5, -2), (0, 3, 0),
                          (3, 3, 9), (4, 2, -9)):
        _check(backend, aten.tril_indices.default, row, col, off)
        _check(backend, aten.triu_indices.default, row, col, off)
    _check(backend, aten.tril_indices.default, 3, 4, dtype=torch.int32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_upsample(backend):
    torch.manual_seed(5)
    x1, x2, x3 = _x(2, 3, 5), _x(1, 2, 3, 5), _x(1, 2, 3, 2, 4)
    _check(backend, aten.upsample_nearest1d.vec, x1, [7], None)
    _check(backend, aten.upsample_nearest1d.vec, x1, None, [1.7])
    _check(backend, aten.upsample_nearest1d.default, x1, [3])
    _check(backend, aten.upsample_nearest1d.default, x1, [9], 1.8)
    _check(backend, aten.upsample_nearest2d.vec, x2, None, [2.0, 0.6])
    _check(backend, aten.upsample_nearest2d.default, x2, [4, 9])
    _check(backend, aten.upsample_nearest3d.vec, x3, [5, 3, 7], None)
    _check(backend, aten.upsample_nearest3d.default, x3, [2, 4, 3],
           None, 1.5, None)
    _check(backend, aten.upsample_nearest3d.vec,
           _x(2, 3, 3, 2, 4, dtype=torch.float64), None, [1.5, 2.0, 0.5])
    for ac in (False, True):
        _check(backend, aten.upsample_linear1d.vec, x1, [8], ac, None)
        _check(backend, aten.upsample_linear1d.vec, x1, None, ac, [0.5])
        _check(backend, aten.upsample_linear1d.default, x1, [11], ac)
        _check(backend, aten.upsample_linear1d.default, x1, [11], ac, 2.5)
        _check(backend, aten.upsample_bilinear2d.default, x2, [5, 4], ac)
        _check(backend, aten.upsample_bicubic2d.vec, x2, [6, 7], ac, None)
        _check(backend, aten.upsample_bicubic2d.vec, x2, None, ac,
               [1.5, 0.8])
        _check(backend, aten.upsample_bicubic2d.default, x2, [2, 9], ac,
               None, 2.0)
        _check(backend, aten.upsample_trilinear3d.vec, x3, [4, 3, 5], ac,
               None)
        _check(backend, aten.upsample_trilinear3d.default, x3, [2, 5, 5],
               ac, 0.5, None, None)
    # An empty batch.
    _check(backend, aten.upsample_bicubic2d.vec, _x(0, 2, 3, 4), [5, 5],
           False, None)
    _check(backend, aten.upsample_nearest1d.vec, _x(0, 2, 3), [5], None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nn_ops(backend):
    torch.manual_seed(6)
    for x, r in ((_x(2, 8, 3, 5), 2), (_x(18, 2, 3, dtype=torch.int64), 3),
                 (_x(3, 1, 4, 4, 2), 1), (_x(0, 4, 1, 1), 2)):
        _check(backend, aten.pixel_shuffle.default, x, r)
    # (Not an empty input: PyTorch 1.13's pixel_unshuffle returns a copy of
    # an empty input, its shape unchanged; Kiln's has the unshuffled
    # shape, as pixel_shuffle's.)
    for x, r in ((_x(2, 3, 4, 6), 2), (_x(1, 6, 9), 3),
                 (_x(2, 1, 2, 2, dtype=torch.bool), 2)):
        _check(backend, aten.pixel_unshuffle.default, x, r)
    x = _x(3, 5)
    t = torch.tensor([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0]])
    for red in (0, 1, 2):
        _check(backend, aten.multilabel_margin_loss_forward.default, x, t,
               red)
        _check(backend, aten.multilabel_margin_loss_forward.default, x[0],
               t[0], red)
    w = _x(10, 3)
    idx, offs = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    for mode in (0, 1, 2):
        _check(backend, aten._embedding_bag_forward_only.default, w, idx,
               offs, False, mode)
        _check(backend, aten._embedding_bag_forward_only.default, w, idx,
               torch.tensor([0, 3, 3, 8]), False, mode, False, None, True)
    x = _x(2, 3, 4)
    _check(backend, aten.repeat_interleave.self_int, x, 2)
    _check(backend, aten.repeat_interleave.self_int, x, 3, -1)
    _check(backend, aten.repeat_interleave.self_int, x, 0, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_make_fx_graphs_of_torch_functions(backend):
    """The graphs the OpInfo sweep's "aten" column runs."""
    torch.manual_seed(7)
    x = _x(3, 4, 5)
    fns = (
        lambda x: torch.std(x, dim=-1, correction=0),
        lambda x: torch.var_mean(x, dim=(0, 2), unbiased=False),
        lambda x: torch.std_mean(x, dim=1, keepdim=True),
        lambda x: torch.tril(x, -1) + torch.triu(x, 2),
        lambda x: torch.trace(x[0]),
        lambda x: torch.round(x * 100, decimals=-1),
        lambda x: torch.kthvalue(x, 2, dim=1)[0],
        lambda x: torch.logcumsumexp(x, -2),
        lambda x: x.all(dim=2) | (torch.count_nonzero(x > 0, dim=2) > 2),
        lambda x: torch.aminmax(x, dim=-1).max,
        lambda x: x + torch.linspace(0, 1, 5) + torch.eye(4, 5),
        lambda x: torch.nn.functional.interpolate(x, scale_factor=2.5,
                                                  mode="linear"),
        lambda x: torch.nn.functional.interpolate(x[None], size=(4, 7),
                                                  mode="bicubic"),
        lambda x: torch.nn.functional.pixel_shuffle(x[None, :, :4, :4].
                                                    repeat(1, 4, 1, 1), 2),
    )
    for fn in fns:
        _make_fx_check(backend, fn, x)
    # make_fx's circular pad: copy_ into slices of new_empty (the OpInfo
    # sweep recorded it as refused before; an empty batch too).
    for t in (x, _x(0, 3, 3)):
        _make_fx_check(backend, lambda x: torch.nn.functional.pad(
            x, (1, 2), mode="circular"), t)


def _make_fx_check(backend, fn, x):
    gm = make_fx(fn)(x)
    got = kiln.backend(gm, [x], backend=backend)(x)
    want = fn(x)
    if isinstance(want, tuple):
        got = tuple(got)
    _same(got, want)


def test_refusals():
    x = _x(2, 3)
    _refused(aten.eye.default, -1, match="n must be greater or equal to 0")
    _refused(aten.eye.m, 2, -3, match="m must be greater or equal to 0")
    _refused(aten.linspace.default, 0, 1, 100000,
             match="aten.linspace.default with steps = 100000")
    _refused(aten.logspace.default, 0, 1, 1 << 17, match="steps = 131072")
    _refused(aten.tril_indices.default, 1000, 1000,
             match="tril_indices.default with row x col = 500500")
    _refused(aten.linspace.default, 0, 1, -1,
             match="number of steps must be non-negative")
    _refused(aten.repeat_interleave.Tensor, torch.tensor([1, 2]),
             match="aten.repeat_interleave.Tensor: the result's size is "
             "the sum of the values of its repeats tensor .data-dependent.")
    _refused(aten.repeat_interleave.Tensor, torch.tensor([1, 2]),
             output_size=3, match="output_size=3 would not check the "
             "values")
    _refused(aten.upsample_nearest1d.vec, _x(1, 2, 3), [4], [1.5],
             match="Must specify exactly one of output_size and "
             "scale_factors")
    _refused(aten.upsample_linear1d.vec, _x(1, 2, 3), None, False, None,
             match="Must specify exactly one of output_size and "
             "scale_factors")
    _refused(aten.upsample_bicubic2d.vec, _x(1, 2, 3), [4, 4], False, None,
             match="upsample_bicubic2d expects a 4D input, got rank 3")
    _refused(aten.kthvalue.default, x, 4,
             match="selected number k = 4 out of range for dim 1 of size 3")
    _refused(aten.round.decimals, _x(3, dtype=torch.int64), decimals=2,
             match="round with decimals=2 of a torch.int64 tensor")
    _refused(aten.round.decimals, _x(3, dtype=torch.float16), decimals=-1,
             match="round with decimals=-1 of a torch.float16 tensor")
    _refused(aten.bucketize.Tensor, x, _x(2, 2),
             match="boundaries must be 1-D, got 2 dims")
    _refused(aten.searchsorted.Tensor, torch.tensor([1, 2]), x, side="up",
             match="side can only be 'left' or 'right'")
    _refused(aten.trace.default, _x(2, 2, 2), match="expected a matrix")
    _refused(aten.pixel_shuffle.default, _x(1, 3, 2, 2), 2,
             match="divisible by the square of upscale_factor")
    _refused(aten.pixel_unshuffle.default, _x(1, 3, 3, 2), 2,
             match="divisible by downscale_factor")
    _refused(aten.repeat_interleave.self_int, x, -1,
             match="repeats can not be negative")
    _refused(aten.multilabel_margin_loss_forward.default,
             _x(2, 3, dtype=torch.int64), torch.zeros(2, 3, dtype=torch.int64),
             1, match="multilabel_margin_loss of a torch.int64 input")
    _refused(aten.multilabel_margin_loss_forward.default, x,
             torch.zeros(2, 3, dtype=torch.int64), 5,
             match="a loss reduction 5")


def test_refusals_pytorch_raises_for():
    """Bad input eager PyTorch rejects: a clean kiln.Unsupported at import
    (before: count_nonzero / sum over a repeated dim answered, an integer
    std and a bool floor_divide failed in the kt verifier at load, a
    multilabel target of another shape failed in a reshape)."""
    x = _x(3, 4)
    i = _x(3, 4, dtype=torch.int64)
    bools = torch.ones(3, dtype=torch.bool)
    for op, args, kwargs, match in (
            (aten.count_nonzero.dim_IntList, (x, [0, -2]), {},
             "dim 0 appears multiple times in the list of dims"),
            (aten.sum.dim_IntList, (x, [1, 1]), {},
             "dim 1 appears multiple times"),
            (aten.std.correction, (i, [0]), {"correction": 1},
             "std and var only support floating point"),
            (aten.var_mean.correction, (bools, None), {},
             "std and var only support floating point"),
            (aten.std_mean.dim, (i, [1]), {},
             "std and var only support floating point"),
            (aten.floor_divide.default, (bools, bools), {},
             "rounding_mode='floor' .* of bool operands"),
            (aten.multilabel_margin_loss_forward.default,
             (x, torch.zeros(3, 5, dtype=torch.int64), 1), {},
             r"target must have the input's shape .* got input \[3, 4\] "
             r"and target \[3, 5\]")):
        with pytest.raises(Exception):
            op(*args, **kwargs)
        _refused(op, *args, match=match, **kwargs)
    # The torch-level converters are the same code.
    for fn, t, match in (
            (lambda t: torch.count_nonzero(t, dim=(1, -1)), x,
             "dim 1 appears multiple times"),
            (lambda t: t.std(), i, "std and var only support"),
            (lambda t: t // t, bools, "of bool operands")):
        with pytest.raises(Exception):
            fn(t)
        with pytest.raises(kiln.Unsupported, match=match):
            kiln.compile(fn, backend="eager", fullgraph=True)(t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeat_interleave_of_a_filled_repeats_tensor(backend):
    """make_fx records x.repeat_interleave(n) as index_select by
    repeat_interleave.Tensor(expand(fill_(empty([1]), n))): converted,
    the fill's literal being the repeats' every value."""
    torch.manual_seed(8)
    for x, n, dim in ((_x(2, 3, 4), 2, None), (_x(2, 3, 4), 3, -1),
                      (_x(5), 1, 0), (_x(3, 2), 0, 1), (_x(0, 3), 2, 0),
                      (torch.tensor(1.5), 4, None),
                      (_x(2, 3, dtype=torch.int64), 2, -2)):
        _make_fx_check(backend, lambda t: t.repeat_interleave(n, dim=dim), x)
    # A hand-made graph: full([3], 2, int32) -> repeat_interleave.Tensor.
    g = fx.Graph()
    r = g.call_function(aten.full.default, ([3], 2),
                        {"dtype": torch.int32})
    g.output(g.call_function(aten.repeat_interleave.Tensor, (r,),
                             {"output_size": 6}))
    gm = fx.GraphModule(torch.nn.Module(), g)
    got = kiln.backend(gm, [], backend=backend)()
    _same(got, torch.repeat_interleave(torch.full([3], 2,
                                                  dtype=torch.int32)))


def test_repeat_interleave_refusals():
    # A repeats tensor written again after its fill: its values are not
    # the literal's (refused, not answered with the fill).
    g = fx.Graph()
    e = g.call_function(aten.empty.memory_format, ([2],),
                        {"dtype": torch.int64})
    f = g.call_function(aten.fill_.Scalar, (e, 2))
    g.call_function(aten.add_.Tensor, (e, 1))
    g.output(g.call_function(aten.repeat_interleave.Tensor, (f,)))
    gm = fx.GraphModule(torch.nn.Module(), g)
    with pytest.raises(kiln.Unsupported, match="data-dependent"):
        kiln.backend(gm, [], backend="eager")()
    g = fx.Graph()
    e = g.call_function(aten.empty.memory_format, ([2],),
                        {"dtype": torch.int64})
    f = g.call_function(aten.fill_.Scalar, (e, 2))
    v = g.call_function(aten.expand.default, (f, [2]))
    g.call_function(aten.mul_.Tensor, (f, 3))
    g.output(g.call_function(aten.repeat_interleave.Tensor, (v,)))
    gm = fx.GraphModule(torch.nn.Module(), g)
    with pytest.raises(kiln.Unsupported, match="data-dependent"):
        kiln.backend(gm, [], backend="eager")()
    for fill, size, match in ((-1, None, "repeats can not be negative"),
                              (2, 5, "output_size 5 is not the sum of the "
                               "repeats, 6")):
        g = fx.Graph()
        r = g.call_function(aten.full.default, ([3], fill),
                            {"dtype": torch.int64})
        g.output(g.call_function(aten.repeat_interleave.Tensor, (r,),
                                 {"output_size": size}))
        gm = fx.GraphModule(torch.nn.Module(), g)
        with pytest.raises(kiln.Unsupported, match=match):
            kiln.backend(gm, [], backend="eager")()
    _refused(aten.repeat_interleave.Tensor, torch.tensor([[1, 2]]),
             match="only accepts a 1-D int32 or int64 repeats tensor")

