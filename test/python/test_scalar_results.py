"""Python numbers read from tensor data (`aten._local_scalar_dense`,
`Tensor.item()`) and `aten.resize_` in Kiln's ATen-level importer
(kiln/_aten.py), on the eager, aot_eager and cpu backends, every result
compared with eager PyTorch (issue 16 section 2; docs/python.md "The FX
backend entry point").

PyTorch 1.13's make_fx cannot trace `.item()` (it raises on a tracing
tensor's value), so the graphs with `_local_scalar_dense` are written with
torch.fx's Graph API, as TorchDynamo + AOTAutograd would produce them with
`capture_scalar_outputs`; the resize_ graphs come from make_fx.
"""

import operator
import re

import pytest
import torch
import torch.fx as fx
from torch.fx.experimental.proxy_tensor import make_fx

import kiln

aten = torch.ops.aten
BACKENDS = ["eager", "aot_eager", "cpu"]


def _graph(body, n_inputs):
    """A GraphModule of `body(g, *placeholders)` (returns the outputs)."""
    g = fx.Graph()
    xs = [g.placeholder("x%d" % i) for i in range(n_inputs)]
    g.output(body(g, *xs))
    return fx.GraphModule(torch.nn.Module(), g)


def _item_graph():
    """s = x.item(); (s, y * s, y * s as mul.Scalar, y > s, s * 2, s > 0,
    s / 2, -s, y + s)."""
    def body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        return (s,
                g.call_function(aten.mul.Tensor, (y, s)),
                g.call_function(aten.mul.Scalar, (y, s)),
                g.call_function(aten.gt.Scalar, (y, s)),
                g.call_function(operator.mul, (s, 2)),
                g.call_function(operator.gt, (s, 0)),
                g.call_function(operator.truediv, (s, 2)),
                g.call_function(operator.neg, (s,)),
                g.call_function(aten.add.Tensor, (y, s)))
    return _graph(body, 2)


def _item_eager(x, y):
    s = x.item()
    return (s, y * s, aten.mul.Scalar(y, s), y > s, s * 2, s > 0, s / 2,
            -s, y + s)


def _assert_same(got, want):
    assert len(got) == len(want)
    for i, (a, e) in enumerate(zip(got, want)):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), (i, a)
            assert a.dtype == e.dtype and a.shape == e.shape, (i, a, e)
            torch.testing.assert_close(a, e, rtol=1e-6, atol=0)
        else:
            # The Python type .item() gives (int, float or bool), and the
            # value.
            assert type(a) is type(e), (i, a, e)
            assert a == e, (i, a, e)


SCALARS = [
    ("float 0-d", torch.tensor(2.5)),
    ("float 1-element", torch.tensor([[-1.75]])),
    ("double", torch.tensor(0.1, dtype=torch.float64)),
    ("int64", torch.tensor(3)),
    ("int32 1-element", torch.tensor([-4], dtype=torch.int32)),
    ("bool", torch.tensor(True)),
    ("bool 1-element", torch.tensor([False])),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, x", SCALARS, ids=[n for n, _ in SCALARS])
@pytest.mark.parametrize("ydtype", [torch.float32, torch.int64])
def test_item_as_a_number(backend, name, x, ydtype):
    y = (torch.arange(5) - 2).to(ydtype)
    if x.dtype == torch.bool:
        y = y.float()  # (-bool is an error in Python too: see neg below)
    gm = _item_graph()
    got = kiln.backend(gm, [x, y], backend=backend)(x, y)
    _assert_same(got, _item_eager(x, y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_of_a_reduction_with_a_dynamic_dim(backend):
    # y * x.sum().item() / x.shape stays dynamic (mark_dynamic): new sizes
    # run the same compiled entry.
    def body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default,
                            (g.call_function(aten.sum.default, (x,)),))
        return (g.call_function(aten.mul.Tensor, (y, s)), s)
    gm = _graph(body, 2)
    x, y = torch.randn(6), torch.randn(6)
    kiln.mark_dynamic(x, 0)
    kiln.mark_dynamic(y, 0)
    run = kiln.backend(gm, [x, y], backend=backend)
    for n in (6, 3, 11):
        x, y = torch.randn(n), torch.randn(n)
        kiln.mark_dynamic(x, 0)
        kiln.mark_dynamic(y, 0)
        got = run(x, y)
        s = x.sum().item()
        assert type(got[1]) is float
        assert got[1] == pytest.approx(s, rel=1e-5, abs=1e-5)
        torch.testing.assert_close(got[0], y * s)
    assert run.program.stats()["compiles"] == 1


def _gt0(g, y):
    return g.call_function(aten.gt.Scalar, (y, 0))


# ATen overloads taking the number where their schema has a Scalar.
SCALAR_ARGS = {
    "clamp": lambda g, s, y: g.call_function(aten.clamp.default, (y, s)),
    "clamp_max": lambda g, s, y: g.call_function(aten.clamp_max.default,
                                                 (y, s)),
    "pow.Tensor_Scalar": lambda g, s, y: g.call_function(
        aten.pow.Tensor_Scalar, (y, s)),
    "pow.Scalar": lambda g, s, y: g.call_function(aten.pow.Scalar, (s, y)),
    "add alpha": lambda g, s, y: g.call_function(aten.add.Tensor, (y, y),
                                                 {"alpha": s}),
    "masked_fill": lambda g, s, y: g.call_function(
        aten.masked_fill.Scalar, (y, _gt0(g, y), s)),
    "leaky_relu": lambda g, s, y: g.call_function(aten.leaky_relu.default,
                                                  (y, s)),
    "div.Scalar": lambda g, s, y: g.call_function(aten.div.Scalar, (y, s)),
    "rsub.Scalar": lambda g, s, y: g.call_function(aten.rsub.Scalar,
                                                   (y, s)),
    "fill.Scalar": lambda g, s, y: g.call_function(aten.fill.Scalar, (y, s)),
    "full": lambda g, s, y: g.call_function(aten.full.default, ([2, 3], s)),
    "scalar_tensor": lambda g, s, y: g.call_function(
        aten.scalar_tensor.default, (s,)),
    "hardtanh": lambda g, s, y: g.call_function(aten.hardtanh.default,
                                                (y, s, 3.0)),
    "mul_": lambda g, s, y: g.call_function(
        aten.mul_.Tensor, (g.call_function(aten.clone.default, (y,)), s)),
}


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("op", sorted(SCALAR_ARGS))
@pytest.mark.parametrize("x", [torch.tensor(1.5), torch.tensor([2])],
                         ids=["float", "int"])
def test_item_as_a_scalar_argument(backend, op, x):
    # The reference is the same graph run by PyTorch (its
    # _local_scalar_dense gives a Python number).
    def body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        return (SCALAR_ARGS[op](g, s, y),)
    gm = _graph(body, 2)
    y = torch.arange(-2, 4).float()
    if op in ("pow.Scalar",):
        y = y.abs()
    want, = gm(x, y)
    got, = kiln.backend(gm, [x, y], backend=backend)(x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True)


def test_item_carries_no_gradient():
    # A Python number has no gradient: y gets s, x none (PyTorch: x is not
    # part of the graph of the result).
    def body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default,
                            (g.call_function(aten.sum.default, (x,)),))
        return (g.call_function(aten.mul.Tensor, (y, s)),)
    gm = _graph(body, 2)
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    out, = kiln.backend(gm, [x, y], backend="aot_eager")(x, y)
    out.sum().backward()
    torch.testing.assert_close(y.grad, torch.full((3,), x.sum().item()))
    assert x.grad is None or bool((x.grad == 0).all())


def test_item_of_two_elements_raises_as_pytorch():
    # PyTorch 1.13: Tensor.item() raises ValueError (its
    # aten._local_scalar_dense reads the first element without a check);
    # Kiln raises the same when the graph is imported (a kiln.Unsupported
    # that is also a ValueError).
    x = torch.randn(2)
    message = "only one element tensors can be converted to Python scalars"
    with pytest.raises(ValueError, match=message):
        x.item()

    def body(g, x):
        return (g.call_function(aten._local_scalar_dense.default, (x,)),)
    gm = _graph(body, 1)
    for err in (ValueError, kiln.Unsupported):
        with pytest.raises(err, match=message + r" \(aten._local_scalar_"
                           r"dense of a tensor of 2 elements\)"):
            kiln.backend(gm, [x], backend="eager")


def test_item_used_as_a_size_is_refused_naming_the_use():
    # Another use than a creation op's size, a slice bound or a view with
    # an explicit -1 (a view's sizes without one: PyTorch's -1 rule for
    # the number) is refused naming the argument.
    def body(g, x, y):
        n = g.call_function(aten._local_scalar_dense.default, (x,))
        return (g.call_function(aten.view.default, (y, [n, 2])),)
    gm = _graph(body, 2)
    with pytest.raises(kiln.Unsupported, match=r"argument 'size' \(List"
                       r"\[int\]\) of aten.view.default: a Python number read "
                       r"from tensor data \(aten._local_scalar_dense, "
                       r"`.item\(\)`\) is used as a size or dim"):
        kiln.backend(gm, [torch.tensor(3), torch.ones(6)], backend="eager")


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_in_a_view_with_minus_one(backend):
    # aten.view / reshape with [n, -1], n from aten._local_scalar_dense.
    def body(g, x, t):
        n = g.call_function(aten._local_scalar_dense.default, (t,))
        return (g.call_function(aten.view.default, (x, [n, -1])),
                g.call_function(aten.reshape.default, (x, [-1, n])))
    gm = _graph(body, 2)
    x = torch.arange(12.0)
    run = kiln.backend(gm, [x, torch.tensor(3)], backend=backend)
    for n in (3, 4, 12, 1):
        t = torch.tensor(n)
        _assert_close_outputs(run(x, t), gm(x, t))
    for n in (0, -1, 5):
        with pytest.raises(RuntimeError):
            gm(x, torch.tensor(n))
        with pytest.raises(kiln.KilnError):
            run(x, torch.tensor(n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_as_a_slice_bound(backend):
    # aten.slice.Tensor with start or end from aten._local_scalar_dense.
    def body(g, x, t):
        n = g.call_function(aten._local_scalar_dense.default, (t,))
        return (g.call_function(aten.slice.Tensor, (x, 0, 0, n)),
                g.call_function(aten.slice.Tensor, (x, 1, n, 2 ** 63 - 1)))
    gm = _graph(body, 2)
    x = torch.arange(12.0).reshape(3, 4)
    run = kiln.backend(gm, [x, torch.tensor(1)], backend=backend)
    for n in (1, -2, 0, 20, -9):
        t = torch.tensor(n)
        _assert_close_outputs(run(x, t), gm(x, t))


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_as_the_size_of_a_new_tensor(backend):
    # aten.full / zeros / ones / empty / new_zeros / new_full with a size
    # from aten._local_scalar_dense: an unbacked size, checked by kt.full
    # when the program runs (one program for every value).
    def body(g, x, y):
        n = g.call_function(aten._local_scalar_dense.default, (x,))
        s = g.call_function(aten._local_scalar_dense.default, (y,))
        return (g.call_function(aten.full.default, ([n, 2], 1.5)),
                g.call_function(aten.zeros.default, ([n],)),
                g.call_function(aten.ones.default, ([2, n],),
                                {"dtype": torch.int32}),
                g.call_function(aten.new_zeros.default, (y, [n])),
                g.call_function(aten.new_full.default, (y, [n], 4.0)),
                g.call_function(aten.full.default, ([n], s)))
    gm = _graph(body, 2)
    y = torch.tensor(2.5)
    run = kiln.backend(gm, [torch.tensor(3), y], backend=backend)
    for n in (3, 0, 6):
        x = torch.tensor(n)
        _assert_close_outputs(run(x, y), gm(x, y))
    with pytest.raises(RuntimeError, match="negative dimension"):
        gm(torch.tensor(-2), y)
    with pytest.raises(kiln.KilnError, match=r"dynamic size -2 \(dim 0\) "
                       "must be non-negative"):
        run(torch.tensor(-2), y)


def test_unsupported_python_operator_on_an_item_is_refused():
    def body(g, x):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        return (g.call_function(operator.mod, (s, 2)),)
    gm = _graph(body, 1)
    with pytest.raises(kiln.Unsupported, match="mod of a Python number read "
                       "from a tensor"):
        kiln.backend(gm, [torch.tensor(3.0)], backend="eager")


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_and_sqrt_of_an_item(backend):
    # `beta ** step` and `math.sqrt(...)` of a float read from a tensor
    # (Adam's bias corrections) are computed in the graph in float64, as
    # Python computes them; the domain errors Python raises (math.sqrt of
    # a negative number; a negative float to a non-integer power, complex
    # in Python) are run-time errors, not NaN.
    import math

    def body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        t = g.call_function(aten._local_scalar_dense.default, (y,))
        p = g.call_function(operator.pow, (0.9, s))
        q = g.call_function(operator.pow, (s, t))
        r = g.call_function(math.sqrt, (g.call_function(
            operator.sub, (1, p)),))
        return (p, q, r, g.call_function(math.sqrt, (s,)))
    gm = _graph(body, 2)
    x, y = torch.tensor(3.0), torch.tensor(2.5)
    f = kiln.backend(gm, [x, y], backend=backend)
    for a, e in ((3.0, 2.5), (7.0, 0.5), (0.0, 2.0)):
        want = (0.9 ** a, a ** e, math.sqrt(1 - 0.9 ** a), math.sqrt(a))
        assert f(torch.tensor(a), torch.tensor(e)) == pytest.approx(
            want, rel=1e-12)

    def pow_body(g, x, y):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        t = g.call_function(aten._local_scalar_dense.default, (y,))
        return (g.call_function(operator.pow, (s, t)),)
    fp = kiln.backend(_graph(pow_body, 2), [x, y], backend=backend)
    assert fp(torch.tensor(-2.0), torch.tensor(3.0))[0] == -8.0
    with pytest.raises(Exception, match="complex number in Python"):
        fp(torch.tensor(-2.0), torch.tensor(0.5))

    def sqrt_body(g, x):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        return (g.call_function(math.sqrt, (s,)),)
    fs = kiln.backend(_graph(sqrt_body, 1), [x], backend=backend)
    with pytest.raises(Exception, match="math domain error"):
        fs(torch.tensor(-1.0))


# ------------------------------------------------------------------ resize_


def _run_resize(fn, x, backend):
    gm = make_fx(fn)(x.clone())
    return kiln.backend(gm, [x], backend=backend)(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", [[3, 2], [6], [2, 3], [4], [1, 1], [0]],
                         ids=["same-numel", "flat", "same-sizes", "shrink",
                              "shrink-to-1", "empty"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_resize_same_or_smaller(backend, size, dtype):
    def fn(x):
        y = x.clone()
        y.resize_(size)
        return y, y * 2
    x = torch.arange(6).reshape(2, 3).to(dtype)
    got = _run_resize(fn, x, backend)
    want = fn(x.clone())
    for a, e in zip(got, want):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert torch.equal(a, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_resize_grow_keeps_the_old_elements_first(backend):
    # PyTorch leaves the new elements uninitialized: only the old ones are
    # compared (Kiln fills the rest with zeros; do not read them).
    def fn(x):
        y = x.clone()
        y.resize_(3, 4)
        return y
    x = torch.randn(2, 3)
    got = _run_resize(fn, x, backend)
    want = fn(x.clone())
    assert got.shape == want.shape == (3, 4)
    assert torch.equal(got.reshape(-1)[:6], want.reshape(-1)[:6])
    assert torch.equal(got.reshape(-1)[:6], x.reshape(-1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_resize_of_a_non_contiguous_view_reads_its_storage(backend):
    # x.t() resized keeps its storage: the elements in storage order, not
    # the transpose's (PyTorch's rule); the same sizes change nothing.
    def fn(x):
        a = x.t()
        a.resize_(4)
        b = x.t()
        b.resize_(3, 2)
        c = x[:, 1:]
        c.resize_(2, 2)  # from storage offset 1
        return a * 1, b * 1, c * 1
    x = torch.arange(6.0).reshape(2, 3)
    got = _run_resize(fn, x, backend)
    want = fn(x.clone())
    for a, e in zip(got, want):
        assert torch.equal(a, e), (a, e)
    assert torch.equal(want[0], torch.tensor([0.0, 1.0, 2.0, 3.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_resize_then_in_place_write(backend):
    # A resized tensor nothing else shares is written as any value.
    def fn(x):
        y = x.clone()
        y.add_(1)
        y.resize_(2, 2)
        y.mul_(3)
        return y
    x = torch.randn(2, 3)
    got = _run_resize(fn, x, backend)
    torch.testing.assert_close(got, fn(x.clone()))


def test_resize_refusals():
    x = torch.randn(2, 3)

    def of_input(x):
        x.resize_(6)
        return x * 1
    with pytest.raises(kiln.Unsupported, match="resize_ of the graph input "
                       "x_1 from \\[2, 3\\] to \\[6\\]: Kiln cannot change "
                       "the size or strides of the caller's tensor"):
        kiln.backend(make_fx(of_input)(x.clone()), [x], backend="eager")

    def view_of_a_written_result(x):
        y = x.clone()
        y.add_(1)
        z = y.t()  # a view of an in-place op's result
        z.resize_(6)
        return z * 1
    with pytest.raises(kiln.Unsupported, match="resize_ of a tensor whose "
                       "storage Kiln cannot trace"):
        kiln.backend(make_fx(view_of_a_written_result)(x.clone()), [x],
                     backend="eager")

    def shared_then_written(x):
        y = x.clone()
        v = y.view(6)
        y.resize_(2, 2)
        y.add_(1)  # v sees the write in PyTorch
        return v * 1
    with pytest.raises(kiln.Unsupported, match="an in-place write to the "
                       "result of aten.resize_"):
        kiln.backend(make_fx(shared_then_written)(x.clone()), [x],
                     backend="eager")

    # A negative size (make_fx cannot record it: eager raises).
    with pytest.raises(RuntimeError, match="numel: integer multiplication "
                       "overflow"):
        x.clone().resize_(-1, 2)
    g = fx.Graph()
    p = g.placeholder("x")
    c = g.call_function(aten.clone.default, (p,))
    g.output(g.call_function(aten.resize_.default, (c, [-1, 2])))
    with pytest.raises(kiln.Unsupported, match=r"a negative size in \[-1, "
                       r"2\] \(PyTorch 1.13 raises 'numel: integer "
                       r"multiplication overflow'\)"):
        kiln.backend(fx.GraphModule(torch.nn.Module(), g), [x],
                     backend="eager")


def _twice_shrink_grow(x):
    y = x.clone()
    y.resize_(2)
    y.resize_(6)  # the storage kept its 6 elements: x's values again
    return y * 1


def _twice_with_writes(x):
    y = x.clone()
    y.resize_(4)
    y.mul_(2)  # written into the storage's first 4 elements
    y.resize_(1, 6)
    y.add_(1)
    y.resize_(3)
    return y * 1


def _twice_grow(x):
    y = x.clone()
    y.resize_(3, 3)  # grows: elements 6..8 are new (undefined)
    y[2].fill_(7.0)
    y.resize_(2, 4)  # 8 elements of the 9: 6 old ones, 2 written
    return y * 1


def _clone_of_a_transpose(x):
    y = x.t().clone()  # keeps the transpose's strides: storage is x's order
    y.resize_(6)
    return y * 1


def _clone_of_a_transpose_shrunk_twice(x):
    y = x.t().clone()
    y.resize_(2, 2)
    y.resize_(3, 2)
    return y * 1


def _exp_of_a_transpose(x):
    y = x.t().exp()  # TensorIterator keeps the transpose's strides
    y.resize_(6)
    return y


def _permuted_clone_grown(x):
    y = x.reshape(1, 2, 3).permute(2, 0, 1).clone()
    y.resize_(8)
    return y[:6] * 1


def _channels_last_then_flat(x):
    y = x.reshape(1, 2, 3, 1).clone()
    y.resize_(1, 2, 3, 1, memory_format=torch.channels_last)
    y.add_(1)
    y.resize_(6)  # the storage in channels-last order
    return y * 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [
    _twice_shrink_grow, _twice_with_writes, _twice_grow,
    _clone_of_a_transpose, _clone_of_a_transpose_shrunk_twice,
    _exp_of_a_transpose, _permuted_clone_grown, _channels_last_then_flat],
    ids=lambda f: f.__name__.strip("_"))
def test_resize_twice_and_of_non_contiguous_results(backend, fn):
    # resize_ of a resize_'s result (the storage it left, never shrunk,
    # with the values written since) and of a result laid out by its
    # strides (x.t().clone(): its storage in stride order), against eager
    # PyTorch (both were refused: "a storage Kiln cannot trace").
    x = torch.arange(6.0).reshape(2, 3) - 2.5
    want = fn(x.clone())
    gm = make_fx(fn)(x.clone())
    got = kiln.backend(gm, [x.clone()], backend=backend)(x.clone())
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want)


def _resize_as(x):
    y = x.clone()
    y.resize_as_(torch.zeros(4))
    return y * 1


def _resize_as_of_a_transposed_clone(x):
    y = x.t().clone()
    y.resize_as_(torch.zeros(2, 2))
    return y * 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_resize_as, _resize_as_of_a_transposed_clone],
                         ids=lambda f: f.__name__.strip("_"))
def test_resize_as(backend, fn):
    # aten.resize_as_ (was "no Kiln conversion"): aten.resize_ to the
    # other tensor's sizes.
    x = torch.arange(6.0).reshape(2, 3) - 2.5
    want = fn(x.clone())
    gm = make_fx(fn)(x.clone())
    got = kiln.backend(gm, [x.clone()], backend=backend)(x.clone())
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)


def test_resize_read_through_the_old_node_is_refused():
    # A hand-written graph that reads the tensor after resize_ through the
    # node before it (make_fx always reads the resize_ node).
    g = fx.Graph()
    p = g.placeholder("x")
    c = g.call_function(aten.clone.default, (p,))
    c.meta["tensor_meta"] = None
    r = g.call_function(aten.resize_.default, (c, [4]))
    g.output((r, g.call_function(aten.mul.Tensor, (c, 2))))
    x = torch.randn(2, 3)
    with pytest.raises(kiln.Unsupported, match="mul_tensor reads the tensor "
                       "resized by resize__default through the node before "
                       "the resize"):
        kiln.backend(fx.GraphModule(torch.nn.Module(), g), [x],
                     backend="eager")


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_torch_level_resize_is_a_graph_break(backend):
    def f(x):
        y = x * 2
        y.resize_(4)
        return y + 1
    x = torch.randn(2, 3)
    got = kiln.compile(f, backend=backend)(x)
    torch.testing.assert_close(got, f(x))
    with pytest.raises(kiln.Unsupported, match="Tensor.resize_ outside an "
                       "ATen-level graph"):
        kiln.compile(f, backend=backend, fullgraph=True)(x)


# ------------------------------------ torch level: capture_scalar_outputs


@pytest.fixture
def capture_scalars():
    kiln.config.capture_scalar_outputs = True
    try:
        yield
    finally:
        kiln.config.capture_scalar_outputs = False
        kiln.reset()


def _assert_close_outputs(got, want, rtol=1e-5):
    assert len(got) == len(want)
    for a, e in zip(got, want):
        if isinstance(e, torch.Tensor):
            assert a.dtype == e.dtype and a.shape == e.shape
            torch.testing.assert_close(a, e, rtol=rtol, atol=1e-6)
        else:
            assert type(a) is type(e), (a, e)
            assert a == pytest.approx(e, rel=rtol, abs=1e-5), (a, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_captured_item_stays_in_the_graph(backend, capture_scalars):
    # No graph break (TorchDynamo's capture_scalar_outputs): one program,
    # compiled once, whatever the value; numbers come back by dtype.
    def f(x, n, m, y):
        s = x.sum().item()
        k = n.item()
        flag = m.all().item()
        return y * s + k, s, k * 2, flag, y * flag, s > 0
    cf = kiln.compile(f, backend=backend, fullgraph=True)
    y = torch.randn(4)
    for i in range(3):
        x = torch.randn(5)
        n = torch.tensor([i - 1])
        m = torch.tensor([True, i > 0])
        _assert_close_outputs(cf(x, n, m, y), f(x, n, m, y))
    (stats,) = cf._kiln.stats().values()
    assert stats["compiles"] == 1


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_with_a_dynamic_dim(backend, capture_scalars):
    def f(x):
        return x * x.mean().item()
    cf = kiln.compile(f, backend=backend, fullgraph=True)
    for n in (4, 7, 9):
        x = torch.randn(n)
        kiln.mark_dynamic(x, 0)
        torch.testing.assert_close(cf(x), f(x))
    (stats,) = cf._kiln.stats().values()
    assert stats["compiles"] == 1


def test_captured_item_branch_and_size_are_graph_breaks(capture_scalars):
    # A branch on the number, or the number as narrow's length, needs its
    # value in Python: a graph break (as TorchDynamo), Python gets the
    # number. (As the size of a new tensor or a slice bound it stays in
    # the graph: below.)
    def f(x, y):
        s = x.sum().item()
        if s > 0:
            y = y * 2
        n = (x > 0).sum().item()
        return y * s, y.view(1, -1).narrow(1, 0, n), torch.zeros(n), s, n
    cf = kiln.compile(f, backend="eager")
    y = torch.randn(4)  # n <= 4: narrow(1, 0, n) is valid
    for _ in range(3):
        x = torch.randn(4)
        _assert_close_outputs(cf(x, y), f(x, y))
    e = kiln.explain(f, torch.randn(4), y)
    assert e.graph_break_count == 2, e


_SIZE_USES = {
    # view(n, 4) with n = -1 infers n: kt.reshape would call it negative.
    "view_without_minus_one": lambda x, n: x.view(n, 4) * 2,
    "narrow": lambda x, n: x.narrow(0, 0, n) - 1,
}


@pytest.mark.parametrize("use", sorted(_SIZE_USES))
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_used_as_a_size_breaks_with_its_reason(
        backend, use, capture_scalars):
    # A size read from data used by another op than a creation op, a
    # slice or a view/reshape with an explicit -1 (x.view(n, 4), narrow:
    # PyTorch's -1 rule and negative-length error) is a graph break whose
    # reason says so (it was "TypeError: int() argument must
    # be ... not 'TensorVal'"); after the break the op runs eagerly on the
    # number, so results and errors are PyTorch's, for every value.
    g = _SIZE_USES[use]

    def f(x, t):
        return g(x, t.item())
    cf = kiln.compile(f, backend=backend)
    x = torch.arange(12.0)
    for n in (3, 0, 4, -1, -2, 5, 12):
        t = torch.tensor(n)
        try:
            want = f(x, t)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=re.escape(str(e))):
                cf(x, t)
            continue
        got = cf(x, t)
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want)
    e = kiln.explain(f, x, torch.tensor(3))
    assert e.graph_break_count == 1, e
    why = str(e.break_reasons[0])
    assert "a Python number read from tensor data" in why, why
    assert ("is used as a size" in why or "needed as a constant" in why) \
        and "TypeError" not in why, why
    with pytest.raises(kiln.Unsupported, match="a Python number read from "
                       "tensor data"):
        kiln.compile(f, backend=backend, fullgraph=True)(x, torch.tensor(3))


_CREATION_USES = {
    "zeros": lambda x, n: torch.zeros(n) + x.sum(),
    "ones2": lambda x, n: torch.ones(n, 2, dtype=torch.int32),
    # (empty's values are undefined: its shape.)
    "empty": lambda x, n: torch.ones(torch.empty(2, n).shape),
    "full": lambda x, n: torch.full((n,), 2.5),
    "full_item": lambda x, n: torch.full((n, 2), x.sum().item()),
    "new_zeros": lambda x, n: x.new_zeros(n, 2) + 1,
    "new_full": lambda x, n: x.new_full((3, n), -1.0),
    "twice": lambda x, n: torch.zeros(n) + torch.ones(n),
    # The size read back from the new tensor: after kt.full's check, even
    # when the tensor itself is dead (x[:-3] is not what PyTorch raises).
    "slice_by_shape": lambda x, n: x[:torch.zeros(n).shape[0]] * 2,
}


@pytest.mark.parametrize("use", sorted(_CREATION_USES))
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_as_the_size_of_a_new_tensor(backend, use,
                                                    capture_scalars):
    # torch.zeros(n) & co. with n = t.item(): an unbacked size read from
    # the value when the program runs (no graph break, one compile for
    # every value); kt.full checks it, so a negative one raises, as
    # PyTorch does (its message: "Trying to create tensor with negative
    # dimension -3").
    g = _CREATION_USES[use]

    def f(x, t):
        return g(x, t.item())
    cf = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.arange(12.0)
    for n in (3, 0, 1, 7):
        for dt in (torch.int64, torch.int32):
            t = torch.tensor(n, dtype=dt)
            want, got = f(x, t), cf(x, t)
            assert got.dtype == want.dtype and got.shape == want.shape
            torch.testing.assert_close(got, want)
    (stats,) = cf._kiln.stats().values()
    assert stats["compiles"] == 2, stats  # one per dtype of t, any value
    with pytest.raises(RuntimeError, match="negative dimension -3"):
        f(x, torch.tensor(-3))
    with pytest.raises(kiln.KilnError, match=r"dynamic size -3 \(dim \d\) "
                       "must be non-negative"):
        cf(x, torch.tensor(-3))


_SLICE_USES = {
    "stop": lambda x, n: x[:n] * 2,
    "start": lambda x, n: x[n:] + 1,
    "both": lambda x, n: x[n:n + 4],
    "negated": lambda x, n: x[-n:],
    "step": lambda x, n: x[n::2],
    "dim1": lambda x, n: x.view(3, 4)[:, :n].sum(1),
    "twice": lambda x, n: x[:n] + x[:n],
}


@pytest.mark.parametrize("use", sorted(_SLICE_USES))
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_as_a_slice_bound(backend, use, capture_scalars):
    # x[:n] with n = t.item(): an unbacked bound that kt.slice applies with
    # Python's rules when it runs (negative from the end, clamped), one
    # compile for every value (it was a graph break).
    g = _SLICE_USES[use]

    def f(x, t):
        return g(x, t.item())
    cf = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.arange(12.0)
    for n in (3, 0, -2, 12, 20, -20, 5):
        t = torch.tensor(n)
        want, got = f(x, t), cf(x, t)
        assert got.shape == want.shape and torch.equal(got, want), (n, got)
    (stats,) = cf._kiln.stats().values()
    assert stats["compiles"] == 1, stats


_VIEW_USES = {
    "view": lambda x, n: x.view(n, -1) * 2,
    "reshape": lambda x, n: x.reshape(-1, n) + 1,
    "view3": lambda x, n: x.view(2, n, -1).sum(2),
}


@pytest.mark.parametrize("use", sorted(_VIEW_USES))
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_in_a_view_with_minus_one(backend, use,
                                                capture_scalars):
    # x.view(n, -1) with n = t.item(): n is a size kt.reshape takes when it
    # runs (negative: an error, as PyTorch's "only one dimension can be
    # inferred" / "invalid shape dimension"), the -1 is inferred by
    # kt.reshape (0 elements elsewhere, or not divisible: an error, as
    # PyTorch's). Every value: PyTorch's result, or an error where PyTorch
    # raises one; one compile.
    g = _VIEW_USES[use]

    def f(x, t):
        return g(x, t.item())
    cf = kiln.compile(f, backend=backend, fullgraph=True)
    x = torch.arange(12.0)
    for n in (3, 4, 0, -1, -2, 5, 12, 1):
        t = torch.tensor(n)
        try:
            want = f(x, t)
        except RuntimeError:
            with pytest.raises(kiln.KilnError):
                cf(x, t)
            continue
        got = cf(x, t)
        assert got.shape == want.shape and torch.equal(got, want), (n, got)
    (stats,) = cf._kiln.stats().values()
    assert stats["compiles"] == 1, stats


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_captured_item_sizes_in_training(backend, capture_scalars):
    # Sizes read from data in a differentiated program (a slice bound, a
    # new tensor's size, a view next to -1): gradients as PyTorch's.
    def g(w, t):
        n = t.item()
        return ((w[:n] * 2).sum() + (torch.ones(n) * w[0]).sum() +
                (w.view(n, -1).sum(0) ** 2).sum())
    cf = kiln.compile(g, backend=backend, fullgraph=True)
    for n in (3, 4, 2):
        w1 = torch.randn(12, requires_grad=True)
        w2 = w1.detach().clone().requires_grad_()
        t = torch.tensor(n)
        a = cf(w1, t)
        a.backward()
        b = g(w2, t)
        b.backward()
        torch.testing.assert_close(a, b)
        torch.testing.assert_close(w1.grad, w2.grad)
    with pytest.raises(kiln.KilnError):
        cf(torch.randn(12, requires_grad=True), torch.tensor(-3))


def test_captured_float_item_as_a_size_is_refused(capture_scalars):
    def f(x, t):
        return torch.zeros(t.item()) + x
    with pytest.raises(TypeError):
        f(torch.ones(2), torch.tensor(2.0))
    with pytest.raises(kiln.Unsupported, match=r"a float read from tensor "
                       r"data \(`.item\(\)`\) is used as a size"):
        kiln.compile(f, backend="eager", fullgraph=True)(
            torch.ones(2), torch.tensor(2.0))


def test_captured_item_training(capture_scalars):
    # The number carries no gradient: w gets y * s, x only its own use.
    def f(x, w):
        s = x.detach().abs().max().item()
        return (w * s + x).sum()
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    kiln.compile(f, backend="aot_eager")(x, w).backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    f(x, w).backward()
    torch.testing.assert_close(gx, x.grad)
    torch.testing.assert_close(gw, w.grad)


@pytest.mark.parametrize("backend", ["aot_eager", "cpu"])
def test_captured_item_of_the_loss_in_a_training_step(backend,
                                                      capture_scalars):
    # `return loss, loss.item()`: the loss trains, the number is a float.
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2)

    def step(x):
        loss = m(x).pow(2).mean()
        return loss, loss.item()
    x = torch.randn(3, 4)
    loss, v = kiln.compile(step, backend=backend)(x)
    loss.backward()
    got = m.weight.grad.clone()
    m.weight.grad = None
    want_loss, want_v = step(x)
    want_loss.backward()
    assert type(v) is float and v == pytest.approx(want_v, rel=1e-5)
    torch.testing.assert_close(got, m.weight.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_level_graph_with_item_through_the_backend_entry(backend):
    # A torch-level graph holding Tensor.item (what TorchDynamo hands a
    # backend with capture_scalar_outputs), given to kiln.backend: the
    # config setting is the tracer's; the entry converts what it gets.
    def f(x, y):
        s = x.sum().item()
        return y * s, s, s > 0
    gm = fx.symbolic_trace(f)
    assert any(n.target == "item" for n in gm.graph.nodes)
    x, y = torch.randn(3), torch.randn(3)
    _assert_close_outputs(kiln.backend(gm, [x, y], backend=backend)(x, y),
                          f(x, y))


def test_captured_item_in_python_builtins(capture_scalars):
    # Python's own uses of the number (int(), float(), round(), abs(),
    # math.sqrt, formatting, range) work as with the plain number: abs()
    # stays in the graph, the others are graph breaks that hand Python the
    # number. Before KilnProxy had __abs__ / __round__, and int() of a
    # float, these failed the capture ("cannot trace").
    import math

    def f(x, n):
        s = x.sum().item()
        k = n.item()
        acc = x * 0
        for i in range(k):
            acc = acc + x * i
        return (acc * float(s), int(k), round(s, 2), int(s), abs(s),
                math.sqrt(abs(s)), "%.2f" % s, abs(-k))
    cf = kiln.compile(f, backend="eager")
    for k in (2, 3):
        x, n = torch.randn(3), torch.tensor(k)
        _assert_close_outputs(cf(x, n), f(x, n))


def test_abs_of_a_traced_tensor():
    # abs(x) of a tensor (Tensor.__abs__ in eager) is captured: torch.fx's
    # Proxy had no __abs__, so it failed the capture before.
    def f(x):
        return abs(x) + 1
    x = torch.randn(5)
    torch.testing.assert_close(kiln.compile(f, fullgraph=True)(x), f(x))


def test_captured_item_of_two_elements_raises_as_pytorch(capture_scalars):
    def f(x):
        return x.item()
    message = "only one element tensors can be converted to Python scalars"
    for fullgraph in (False, True):
        with pytest.raises(ValueError, match=message):
            kiln.compile(f, backend="eager", fullgraph=fullgraph)(
                torch.randn(2))
        kiln.reset()


def test_item_is_a_graph_break_by_default():
    assert kiln.config.capture_scalar_outputs is False

    def f(x, y):
        return y * x.sum().item()
    e = kiln.explain(f, torch.randn(3), torch.randn(3))
    assert e.graph_break_count == 1
    assert "Tensor.item()" in e.break_reasons[0].reason
    with pytest.raises(kiln.Unsupported, match="Tensor.item"):
        kiln.compile(f, fullgraph=True)(torch.randn(3), torch.randn(3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_resize_with_a_memory_format(backend):
    # channels_last strides over the storage: the same sizes change the
    # values too (PyTorch restrides); contiguous_format on a permuted view
    # reads its storage in order.
    def fn(x):
        a = x.clone()
        a.resize_(1, 2, 3, 4, memory_format=torch.channels_last)
        c = x.clone()
        c.resize_(1, 3, 2, 4, memory_format=torch.channels_last)
        p = x.permute(0, 2, 3, 1)
        p.resize_(1, 3, 4, 2, memory_format=torch.contiguous_format)
        q = x.permute(0, 2, 3, 1)
        q.resize_(1, 3, 4, 2)  # same sizes, no format: unchanged
        return a * 1, c * 1, p * 1, q * 1
    x = torch.arange(24.0).reshape(1, 2, 3, 4)
    got = _run_resize(fn, x, backend)
    want = fn(x.clone())
    assert not torch.equal(want[0], x)
    for a, e in zip(got, want):
        assert a.shape == e.shape and torch.equal(a, e), (a, e)

    def grow(x):
        a = x.clone()
        a.resize_(1, 3, 3, 4, memory_format=torch.channels_last)
        return a * 1
    got = _run_resize(grow, x, backend)
    want = grow(x.clone())
    # The old elements: storage positions below 24 (channels-last order).
    old = (torch.arange(36).reshape(1, 3, 4, 3).permute(0, 3, 1, 2) < 24)
    assert torch.equal(got[old], want[old])


def test_resize_memory_format_errors_as_pytorch():
    x = torch.randn(2, 3)
    for fmt, message in ((torch.channels_last, "required rank 4 tensor to "
                          "use channels_last format"),
                         (torch.preserve_format, "Unsupported memory "
                          "format")):
        with pytest.raises(RuntimeError, match=message):
            x.clone().resize_(6, memory_format=fmt)
        g = fx.Graph()
        p = g.placeholder("x")
        c = g.call_function(aten.clone.default, (p,))
        g.output(g.call_function(aten.resize_.default, (c, [6]),
                                 {"memory_format": fmt}))
        with pytest.raises(kiln.Unsupported, match=message):
            kiln.backend(fx.GraphModule(torch.nn.Module(), g), [x],
                         backend="eager")


def test_item_fill_of_a_negative_size_raises_as_pytorch():
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.full([-1], 1.5)

    def body(g, x):
        s = g.call_function(aten._local_scalar_dense.default, (x,))
        return (g.call_function(aten.full.default, ([-1], s)),)
    with pytest.raises(kiln.Unsupported, match="Trying to create tensor "
                       "with negative dimension"):
        kiln.backend(_graph(body, 1), [torch.tensor(1.5)], backend="eager")
