"""One small case per ATen operator of python/kiln/core_aten_ops.txt: the
arguments of one call (tensors built here, with a fixed seed), used by
test/python/test_core_aten.py (run through Kiln, compared with eager
PyTorch) and scripts/gen-core-aten-table.py (which kt ops each op becomes).

`cases()` returns {"<op>.<overload>": Case}. A Case calls the operator
`target(name)` on `args`/`kwargs`; `ref` (optional) computes the expected
result where eager PyTorch 1.13 lacks the operator (it is then called by a
stand-in target, see `target`); `check` (optional) replaces the comparison
for random operators (it gets Kiln's result and the arguments)."""

import math
import types

import torch
import torch.fx as fx
from torch.fx.experimental import proxy_tensor
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.shape_prop import _extract_tensor_metadata
from torch.utils import _pytree as pytree

from kiln._aten import overload_name

aten = torch.ops.aten


class Case:
    def __init__(self, name, args, kwargs=None, ref=None, check=None,
                 tol=None):
        self.name = name
        self.args = list(args)
        self.kwargs = dict(kwargs or {})
        self.ref = ref
        self.check = check
        self.tol = tol


class AbsentOverload(torch._ops.OpOverload):
    """A stand-in target for an operator PyTorch 1.13 does not have: an
    OpOverload by type, with the operator's name, that calls `ref` when
    run. It is never registered with the dispatcher."""

    def __init__(self, name, ref):  # noqa: no OpOverload.__init__
        op, ov = name.split(".")
        self._overloadpacket = types.SimpleNamespace(__name__=op)
        self._overloadname = ov
        self._ref = ref
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self._ref(*args, **kwargs)

    def __repr__(self):
        return "aten.%s.%s" % (self._overloadpacket.__name__,
                               self._overloadname)

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def target(name, ref=None):
    op, ov = name.split(".")
    packet = getattr(aten, op, None)
    o = getattr(packet, ov, None) if packet is not None else None
    if o is None:
        if ref is None:
            raise KeyError("aten.%s is not in this PyTorch; its case needs "
                           "a ref" % name)
        return AbsentOverload(name, ref)
    return o


def is_tensor(x):
    return isinstance(x, torch.Tensor)


def build_graph(cases, trace=True):
    """One GraphModule computing every case: make_fx of a function calling
    each case's operator, plus explicit nodes for the operators that do not
    appear in it (trace=False: explicit nodes only, and `gm` is just an
    object with the graph). Returns (gm, flat inputs, [(case, output
    index)])."""
    flat, specs = [], []
    for c in cases:
        leaves, spec = pytree.tree_flatten((c.args, c.kwargs))
        tensors = [l for l in leaves if is_tensor(l)]
        idx = list(range(len(flat), len(flat) + len(tensors)))
        flat.extend(tensors)
        specs.append((leaves, spec, idx))

    def call(c, leaves, spec, idx, tensors):
        leaves = list(leaves)
        pos = [j for j, l in enumerate(leaves) if is_tensor(l)]
        for i, j in zip(idx, pos):
            leaves[j] = tensors[i]
        args, kwargs = pytree.tree_unflatten(leaves, spec)
        if c.name.split(".")[0].endswith("_"):
            # An in-place overload writes a copy made in the graph (same
            # reason as out= below).
            args = [args[0].clone()] + list(args[1:])
        if "out" in kwargs:
            # An out= overload writes a tensor of the graph (an input
            # written in place would be a !kt.ref argument, which the cpu
            # backend does not take yet).
            kwargs = dict(kwargs, out=torch.zeros_like(kwargs["out"]))
        return target(c.name, c.ref)(*args, **kwargs)

    # One make_fx pass over every case. A case whose call fails while
    # tracing (PyTorch 1.13's make_fx fails on a few composite overloads:
    # bitwise_or.Scalar's decomposition passes a Python scalar as a
    # Tensor), whose operator 1.13 lacks, or whose own nodes do not include
    # its operator (make_fx decomposed it, or evaluated a size) gets an
    # explicit node instead.
    real = [k for k, c in enumerate(cases) if trace and
            not isinstance(target(c.name, c.ref), AbsentOverload)]
    own = {}

    def f(*tensors):
        mode = proxy_tensor._get_current_dispatch_mode()
        graph = mode.tracer.graph
        outs = []
        for k in real:
            before = len(graph.nodes)
            try:
                outs.append(call(cases[k], *specs[k], tensors))
            except Exception:  # noqa: PyTorch's tracing error, any type
                outs.append(None)
                continue
            own[k] = {overload_name(n.target)
                      for n in list(graph.nodes)[before:]
                      if n.op == "call_function"}
        return tuple(outs)

    if trace:
        gm = make_fx(f)(*[t.clone() for t in flat])
        g = gm.graph
    else:
        g = fx.Graph()
        for i in range(len(flat)):
            g.placeholder("arg%d" % i)
        g.output(())
        gm = types.SimpleNamespace(graph=g)
    manual = [k for k, c in enumerate(cases)
              if k not in own or c.name not in own[k]]
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    output = [n for n in g.nodes if n.op == "output"][0]
    outs = list(output.args[0])
    order = [(cases[k], i) for i, k in enumerate(real)]
    with g.inserting_before(output):
        for k in manual:
            c = cases[k]
            leaves, spec, idx = specs[k]
            leaves = list(leaves)
            pos = [j for j, l in enumerate(leaves) if is_tensor(l)]
            for i, j in zip(idx, pos):
                leaves[j] = placeholders[i]
            args, kwargs = pytree.tree_unflatten(leaves, spec)
            if c.name.split(".")[0].endswith("_"):
                # An in-place overload writes a copy (as in `call`), with
                # make_fx's tensor_meta (a new contiguous tensor).
                copy = g.call_function(aten.clone.default, (args[0],))
                copy.meta["tensor_meta"] = _extract_tensor_metadata(
                    flat[idx[0]].clone())
                args = [copy] + list(args[1:])
            node = g.call_function(target(c.name, c.ref),
                                   tuple(args), kwargs)
            if k in real:
                # Replace the decomposed computation's output.
                outs[real.index(k)] = node
            else:
                order.append((c, len(outs)))
                outs.append(node)
    output.args = (tuple(outs),)
    g.eliminate_dead_code()
    return gm, flat, order


def _bn_legit_no_stats(x, w, bias, training, momentum, eps):
    return aten.native_batch_norm.default(x, w, bias, None, None, True,
                                          momentum, eps)


def _bn_legit_no_training(x, w, bias, rm, rv, momentum, eps):
    return aten.native_batch_norm.default(x, w, bias, rm, rv, False,
                                          momentum, eps)


def _bn_legit(x, w, bias, rm, rv, training, momentum, eps):
    return aten.native_batch_norm.default(x, w, bias, rm, rv, training,
                                          momentum, eps)


def _any_dims(x, dim=None, keepdim=False):
    r = x != 0
    for d in sorted(dim, reverse=True):
        r = r.any(d, keepdim=keepdim)
    return r


def _squeeze_dims(x, dim):
    for d in sorted([d % x.dim() for d in dim], reverse=True):
        x = x.squeeze(d)
    return x


def _check_rand(kind):
    def check(out, args, kwargs):
        size = args[0]
        assert tuple(out.shape) == tuple(size), out.shape
        assert out.dtype == (kwargs.get("dtype") or torch.float32)
        if kind == "rand":
            assert 0 <= out.min() and out.max() < 1
        else:
            assert abs(float(out.mean())) < 0.2 and \
                0.8 < float(out.std()) < 1.2
    return check


def _check_randperm(out, args, kwargs):
    assert out.dtype == torch.int64
    assert torch.equal(out.sort().values, torch.arange(args[0]))


def _check_bernoulli(p, dtype):
    def check(out, args, kwargs):
        assert out.dtype == dtype and out.shape == args[0].shape
        assert bool(((out == 0) | (out == 1)).all())
        assert abs(float(out.double().mean()) - p) < 0.05, out.mean()
    return check


def _check_dropout(out, args, kwargs):
    x, p, _ = args
    y, mask = out
    assert mask.dtype == torch.bool and mask.shape == x.shape
    kept = mask.float().mean().item()
    assert abs(kept - (1 - p)) < 0.1, kept
    torch.testing.assert_close(y, torch.where(mask, x / (1 - p),
                                              torch.zeros_like(x)))


def cases():
    g = torch.Generator().manual_seed(0)

    def R(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype)

    def U(*shape, lo=-0.9, hi=0.9):
        return torch.rand(*shape, generator=g) * (hi - lo) + lo

    def P(*shape):
        return torch.rand(*shape, generator=g) + 0.5

    def I(*shape, lo=-5, hi=6, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=g, dtype=dtype)

    def B(*shape):
        return torch.rand(*shape, generator=g) > 0.5

    C = {}

    def case(name, *args, **kw):
        variant = kw.pop("variant", None)
        key = name if variant is None else "%s#%s" % (name, variant)
        C[key] = Case(name, args, kw.pop("kwargs", None), **kw)

    x34, y34 = R(3, 4), R(3, 4)
    # ---- unary pointwise
    for n in ("abs", "ceil", "floor", "round", "neg", "relu", "sigmoid",
              "sin", "cos", "tanh", "exp", "expm1", "erf", "sign", "trunc",
              "sinh", "cosh", "tan", "atan", "asinh"):
        case("%s.default" % n, R(3, 5) * 2)
    for n in ("log", "log1p", "sqrt", "rsqrt", "reciprocal", "log2",
              "log10", "acosh"):
        case("%s.default" % n, P(3, 5) + (1.0 if n == "acosh" else 0.0))
    for n in ("asin", "acos", "atanh"):
        case("%s.default" % n, U(3, 5))
    # Domain edges, infinities, NaN and integer inputs of the
    # decompositions.
    edge = torch.tensor([1.5, -1.0, 1.0, 0.0, -2.0, math.nan, math.inf,
                         -math.inf, 1e-8, 1e20, -1e20, 3.0])
    for n in ("asin", "acos", "atan", "atanh", "asinh", "acosh", "sinh",
              "cosh", "tan", "log2", "log10", "trunc"):
        case("%s.default" % n, edge, variant="edges")
    case("log2.default", I(3, 4, lo=1, hi=9), variant="int")
    case("asin.default", U(3, 5).double(), variant="f64")
    case("bitwise_not.default", I(3, 4))
    case("logical_not.default", R(3, 4))
    special = torch.tensor([1.0, -math.inf, math.inf, math.nan, 0.0, -2.5])
    case("isnan.default", special)
    case("isinf.default", special)
    case("elu.default", R(3, 4), 1.5, 1.0, 1.0)
    case("gelu.default", R(3, 4), kwargs={"approximate": "tanh"})
    case("hardtanh.default", R(3, 4), -0.5, 0.5)
    case("leaky_relu.default", R(3, 4), 0.2)
    case("silu.default", R(3, 4))
    # ---- binary pointwise
    for n in ("add", "sub"):
        case("%s.Tensor" % n, x34, R(4), kwargs={"alpha": 2})
        case("%s.Scalar" % n, x34, 1.5, 2)
    case("rsub.Scalar", x34, 1.5)
    for n in ("mul", "div", "maximum", "minimum"):
        if n in ("mul", "div"):
            case("%s.Tensor" % n, x34, P(3, 4))
            case("%s.Scalar" % n, x34, 2.5)
        else:
            case("%s.default" % n, x34, y34)
    case("div.Tensor_mode", R(3, 4) * 5, P(3, 4),
         kwargs={"rounding_mode": "floor"})
    case("div.Scalar_mode", I(3, 4), 3, kwargs={"rounding_mode": "trunc"})
    for n in ("eq", "ne", "lt", "le", "gt", "ge"):
        case("%s.Tensor" % n, I(3, 4), I(3, 4))
        case("%s.Scalar" % n, I(3, 4), 1)
    for n in ("fmod", "remainder"):
        case("%s.Tensor" % n, R(3, 4) * 4, P(3, 4))
        case("%s.Scalar" % n, I(3, 4), 3)
    for n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        case("%s.Tensor" % n, I(3, 4), I(3, 4))
        case("%s.Scalar" % n, I(3, 4), 6)
    for n in ("logical_and", "logical_or", "logical_xor"):
        case("%s.default" % n, B(3, 4), R(3, 4))
    case("pow.Tensor_Tensor", P(3, 4), R(3, 4))
    case("pow.Tensor_Scalar", R(3, 4), 3)
    case("pow.Scalar", 2.0, R(3, 4))
    case("atan2.default", R(3, 4), R(3, 4))
    case("atan2.out", R(3, 4), R(3, 4), kwargs={"out": torch.zeros(3, 4)})
    case("where.self", B(3, 4), R(3, 4), R(4))
    case("masked_fill.Scalar", R(3, 4), B(3, 4), -1.0)
    case("clamp.default", R(3, 4), -0.5, 0.5)
    case("clamp.Tensor", R(3, 4), R(3, 4) - 0.5, R(4) + 0.5)
    # ---- reductions
    x345 = R(3, 4, 5)
    case("amax.default", x345, [1], True)
    case("amin.default", x345, [0, 2])
    case("any.default", B(3, 4))
    case("any.dim", B(3, 4), 1, True)
    case("any.dims", I(3, 4, 5, lo=0, hi=2), [0, 2],
         ref=_any_dims)
    case("argmax.default", x345, 1)
    case("argmin.default", x345, -1, True)
    case("max.dim", x345, 1)
    case("min.dim", x345, 2, True)
    case("max.default", x345)
    case("min.default", x345)
    case("mean.default", x345)
    case("mean.dim", x345, [0, 2], True)
    case("sum.default", x345)
    case("sum.dim_IntList", x345, [1])
    case("prod.default", P(3, 4))
    case("prod.dim_int", P(3, 4), 1)
    case("var.correction", x345, [1], kwargs={"correction": 0})
    case("var.dim", x345, [2], True, True)
    case("cumsum.default", I(3, 4), 1)
    case("_softmax.default", x345, 1, False)
    case("_log_softmax.default", x345, -1, False)
    case("sort.default", R(3, 6), 1, True)
    case("topk.default", R(3, 6), 2, 1)
    # ---- shapes
    case("view.default", x345, [4, -1])
    case("_unsafe_view.default", x345, [12, 5])
    case("_reshape_alias.default", x345, [5, 12], [12, 1])
    case("expand.default", R(3, 1), [2, 3, 4])
    case("permute.default", x345, [2, 0, 1])
    case("t.default", x34)
    case("transpose.int", x345, 0, 2)
    case("unsqueeze.default", x34, 1)
    case("squeeze.dim", R(3, 1, 4), 1)
    case("squeeze.default", R(3, 1, 4, 1))
    case("squeeze.dims", R(3, 1, 4, 1), [1, -1], ref=_squeeze_dims)
    case("alias.default", x34)
    case("clone.default", x34)
    case("detach.default", x34)
    case("slice.Tensor", x345, 1, 1, 9223372036854775807, 2)
    case("select.int", x345, 1, -1)
    case("split_with_sizes.default", x345, [1, 3], 1)
    case("split.Tensor", x345, 2, 0)
    case("unsafe_split.Tensor", x345, 3, 2)
    case("unbind.int", x345, 1)
    case("cat.default", [x34, y34, R(1, 4)], 0)
    case("stack.default", [x34, y34], 1)
    case("repeat.default", R(2, 3), [2, 1, 2])
    case("flip.default", x345, [0, 2])
    case("diagonal.default", x345, 1, 1, 2)
    case("constant_pad_nd.default", x34, [1, 2, 0, 1], 0.5)
    case("reflection_pad1d.default", R(2, 3, 5), [2, 1])
    case("reflection_pad2d.default", R(2, 3, 4, 5), [1, 2, 2, 1])
    case("reflection_pad3d.default", R(1, 2, 3, 4, 5), [1, 1, 2, 0, 1, 2])
    case("replication_pad2d.default", R(2, 3, 4, 5), [1, 2, 2, 1])
    case("replication_pad3d.default", R(1, 2, 3, 4, 5), [1, 1, 2, 0, 1, 2])
    case("select_scatter.default", x345, R(3, 5), 1, -2)
    case("slice_scatter.default", x345, R(3, 2, 5), 1, 1, 4, 2)
    # ---- creation
    case("_to_copy.default", x34, kwargs={"dtype": torch.float64})
    case("copy.default", x34, I(4))
    case("full.default", [2, 3], 1.5, kwargs={"dtype": torch.float32})
    case("full_like.default", I(2, 3), 7)
    case("zeros_like.default", x34)
    case("fill.Scalar", x34, 2.5)
    case("empty.memory_format", [2, 3], kwargs={"dtype": torch.float32},
         check=lambda out, a, k: (out.shape == (2, 3) and
                                  out.dtype == torch.float32) or
         (_ for _ in ()).throw(AssertionError(out)))
    case("empty_strided.default", [2, 3], [3, 1],
         kwargs={"dtype": torch.float32},
         check=lambda out, a, k: (out.shape == (2, 3)) or
         (_ for _ in ()).throw(AssertionError(out)))
    case("scalar_tensor.default", 2.5, kwargs={"dtype": torch.float64})
    case("arange.start_step", 1, 11, 3, kwargs={"dtype": torch.int64})
    case("rand.default", [200, 30], kwargs={"dtype": torch.float32},
         check=_check_rand("rand"))
    case("randn.default", [200, 30], kwargs={"dtype": torch.float32},
         check=_check_rand("randn"))
    case("randperm.default", 17, kwargs={"dtype": torch.int64},
         check=_check_randperm)
    case("bernoulli.p", torch.zeros(100, 50, dtype=torch.float64), 0.3,
         check=_check_bernoulli(0.3, torch.float64))
    case("bernoulli_.float", torch.zeros(100, 50), 0.8,
         check=_check_bernoulli(0.8, torch.float32))
    case("native_dropout.default", P(100, 40), 0.25, True,
         check=_check_dropout)
    # ---- indexing
    case("gather.default", x34, 1, I(3, 2, lo=0, hi=4))
    case("index_select.default", x345, 1, I(3, lo=0, hi=4))
    case("index.Tensor", x345, [None, I(2, 3, lo=-4, hi=4),
                                I(3, lo=0, hi=5)])
    # Data-dependent sizes (kt.nonzero's count, test_data_dependent.py).
    case("nonzero.default", torch.tensor([[0.0, 1.5, -0.0], [math.nan, 0.0,
                                                            2.0]]))
    case("index.Tensor", x345, [B(3, 4)], variant="mask")
    # unique / unique_consecutive / bincount (test_unique_bincount.py).
    case("_unique2.default", torch.tensor([[3.0, 1.0, 3.0], [-0.0, 0.0, 1.0]]),
         True, True, True)
    case("unique_dim.default", torch.tensor([[3, 1, 3], [0, 0, 0], [3, 1, 3]]),
         1, True, True, True)
    case("unique_consecutive.default",
         torch.tensor([2, 2, 5, 5, 5, 2, 7]), True, True)
    case("bincount.default", I(9, lo=0, hi=6), R(9), 8)
    case("index_put.default", R(5, 3), [I(4, lo=-5, hi=5)], R(4, 3), True)
    case("index_put.default", R(3, 4, 5), [None, I(2, 3, lo=-4, hi=4),
                                           I(3, lo=0, hi=5)], R(3),
         variant="adjacent-accumulate", kwargs={"accumulate": True})
    case("index_put.default", R(3, 4, 5), [I(2, lo=0, hi=3), None,
                                           I(2, 1, lo=-5, hi=5)],
         R(2, 2, 4), variant="non-adjacent")
    case("index_put.default", R(3, 4), [B(3, 4)], torch.tensor(2.5),
         variant="mask")
    case("index_put.default", R(3, 4), [B(3)], torch.tensor(1.5), True,
         variant="row-mask-accumulate")
    case("scatter.src", R(3, 5), 1, I(3, 2, lo=0, hi=5), R(3, 2))
    case("scatter.value", R(3, 5), 1, I(3, 2, lo=0, hi=5), 2.5)
    case("scatter_add.default", R(3, 5), 1, I(3, 4, lo=0, hi=5), R(3, 4))
    case("scatter_reduce.two", R(3, 5), 1, I(3, 4, lo=0, hi=5), R(3, 4),
         "amax", kwargs={"include_self": False})
    case("masked_scatter.default", R(3, 4), B(3, 4), R(12))
    case("masked_fill.Scalar", R(3, 4), B(3, 4), -1.0)
    case("embedding.default", R(10, 3), I(2, 4, lo=0, hi=10))
    ebw = R(10, 3)
    ebi = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    case("_embedding_bag.default", ebw, ebi, torch.tensor([0, 4, 4]),
         False, 0, False, P(8), False, -1)
    case("_embedding_bag.default", ebw, ebi, torch.tensor([0, 4, 4]),
         False, 1, variant="mean")
    case("_embedding_bag.default", ebw, ebi, torch.tensor([0, 3, 3, 6]),
         False, 2, variant="max")
    case("_embedding_bag.default", ebw, ebi, torch.tensor([0, 2, 2, 8]),
         False, 1, False, None, True, variant="mean-include-last")
    case("embedding_dense_backward.default", R(2, 4, 3),
         torch.tensor([[1, 2, 1, 0], [9, 2, 2, 1]]), 10, 2, True)
    # ---- matmul, conv
    case("mm.default", R(3, 4), R(4, 5))
    case("bmm.default", R(2, 3, 4), R(2, 4, 5))
    case("addmm.default", R(5), R(3, 4), R(4, 5),
         kwargs={"beta": 0.5, "alpha": 2})
    case("convolution.default", R(2, 4, 6, 5), R(6, 2, 3, 3), R(6),
         [2, 1], [1, 0], [1, 2], False, [0, 0], 2)
    case("convolution.default", R(2, 4, 5, 4, 6), R(6, 2, 2, 3, 2), R(6),
         [2, 1, 2], [1, 0, 1], [2, 1, 1], False, [0, 0, 0], 2,
         variant="3d")
    case("convolution.default", R(2, 4, 7), R(4, 3, 3), None, [2], [1],
         [1], True, [1], 1, variant="transposed-1d")
    case("convolution.default", R(2, 4, 3, 4, 3), R(4, 3, 3, 2, 3), R(6),
         [2, 3, 1], [1, 0, 1], [1, 2, 2], True, [1, 2, 0], 2,
         variant="transposed-3d")
    # 3-D convolution backwards (batch 7): the output gradient's shape from
    # the forward.
    for v, tr, xs, ws, st, pd, dl, op, G in (
            ("3d", False, (2, 4, 5, 4, 6), (6, 2, 2, 3, 2), [2, 1, 2],
             [1, 0, 1], [2, 1, 1], [0, 0, 0], 2),
            ("transposed-3d", True, (2, 4, 3, 4, 3), (4, 3, 3, 2, 3),
             [2, 3, 1], [1, 0, 1], [1, 2, 2], [1, 2, 0], 2)):
        cx, cw = R(*xs), R(*ws)
        cy = aten.convolution.default(cx, cw, None, st, pd, dl, tr, op, G)
        case("convolution_backward.default", R(*cy.shape), cx, cw,
             [cy.shape[1]], st, pd, dl, tr, op, G, [True, True, True],
             variant=v)
    case("index.Tensor", x345, [I(2, 1, lo=-3, hi=3), None,
                                I(4, lo=0, hi=5)], variant="non-adjacent")
    case("convolution_backward.default", R(2, 6, 3, 1), R(2, 4, 6, 5),
         R(6, 2, 3, 3), [6], [2, 1], [1, 0], [1, 2], False, [0, 0], 2,
         [True, True, True])
    # A transposed convolution's backward: x [2, 4, 5, 4] -> y [2, 6, 10, 7]
    # (stride 2x1, padding 1x0, output_padding 1x0, dilation 1x2, groups 2).
    case("convolution_backward.default", R(2, 6, 10, 8), R(2, 4, 5, 4),
         R(4, 3, 3, 3), [6], [2, 1], [1, 0], [1, 2], True, [1, 0], 2,
         [True, True, True], variant="transposed")
    case("convolution_backward.default", R(2, 6, 5), R(2, 4, 7),
         R(6, 2, 3), None, [1], [1], [2], False, [0], 2,
         [True, True, False], variant="1d")
    # ---- pooling
    case("_adaptive_avg_pool2d.default", R(2, 3, 6, 4), [3, 2])
    case("_adaptive_avg_pool2d_backward.default", R(2, 3, 3, 2),
         R(2, 3, 6, 4))
    case("adaptive_avg_pool1d.default", R(2, 3, 6), [3])
    case("_adaptive_avg_pool2d.default", R(2, 3, 7, 5), [3, 4],
         variant="uneven")
    case("_adaptive_avg_pool2d_backward.default", R(2, 3, 3, 4),
         R(2, 3, 7, 5), variant="uneven")
    case("adaptive_avg_pool1d.default", R(2, 3, 7), [5], variant="uneven")
    case("_adaptive_avg_pool3d.default", R(1, 2, 5, 4, 3), [2, 3, 2],
         variant="uneven")
    case("avg_pool1d.default", R(2, 3, 7), [3], [2], [1])
    case("avg_pool2d.default", R(2, 3, 7, 6), [3, 2], [2, 2], [1, 0])
    case("avg_pool2d_backward.default", R(2, 3, 4, 3), R(2, 3, 7, 6),
         [3, 2], [2, 2], [1, 0], False, True, None)
    case("max_pool2d_with_indices.default", R(2, 3, 7, 6), [3, 2], [2, 2],
         [1, 0])
    mp_x = R(2, 3, 7, 6)
    _, mp_i = aten.max_pool2d_with_indices.default(mp_x, [3, 2], [2, 2],
                                                   [1, 0])
    case("max_pool2d_with_indices_backward.default", R(2, 3, 4, 3), mp_x,
         [3, 2], [2, 2], [1, 0], [1, 1], False, mp_i)
    case("avg_pool3d.default", R(2, 2, 5, 6, 7), [2, 3, 2], [2, 2, 1],
         [1, 1, 0], True, False)
    case("max_pool3d_with_indices.default", R(2, 2, 5, 6, 7), [2, 3, 2],
         [2, 2, 1], [1, 1, 0], [1, 1, 2], True)
    case("_adaptive_avg_pool3d.default", R(2, 3, 4, 6, 2), [2, 3, 1])
    # 3-D pooling backward, adaptive max pooling, unpooling (batch 7).
    for v, shape, pool in (
            (None, (2, 2, 5, 6, 7), ([2, 3, 2], [2, 2, 1], [1, 1, 0], True,
                                     False)),
            ("include-pad", (1, 2, 4, 6, 5), ([2, 2, 2], [2, 2, 2],
                                              [0, 0, 1], False, True))):
        ap_x = R(*shape)
        ap_y = aten.avg_pool3d.default(ap_x, *pool)
        case("avg_pool3d_backward.default", R(*ap_y.shape), ap_x, *pool,
             None, variant=v)
    mp3_x = R(2, 2, 5, 6, 7)
    mp3_v, mp3_i = aten.max_pool3d_with_indices.default(
        mp3_x, [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 1, 2], True)
    case("max_pool3d_with_indices_backward.default", R(*mp3_v.shape), mp3_x,
         [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 1, 2], True, mp3_i)
    # Overlapping windows (stride 1): several outputs add into one input.
    ov_x = R(1, 2, 4, 4, 4)
    ov_v, ov_i = aten.max_pool3d_with_indices.default(ov_x, [2, 2, 2],
                                                      [1, 1, 1])
    case("max_pool3d_with_indices_backward.default", R(*ov_v.shape), ov_x,
         [2, 2, 2], [1, 1, 1], [0, 0, 0], [1, 1, 1], False, ov_i,
         variant="overlapping")
    case("adaptive_max_pool2d.default", R(2, 3, 7, 5), [3, 4])
    case("adaptive_max_pool2d.default", R(3, 6, 4), [3, 2],
         variant="even-3d")
    amp_x = R(2, 3, 7, 5)
    _, amp_i = aten.adaptive_max_pool2d.default(amp_x, [3, 4])
    case("adaptive_max_pool2d_backward.default", R(2, 3, 3, 4), amp_x, amp_i)
    case("adaptive_max_pool3d.default", R(1, 2, 5, 4, 3), [2, 3, 2])
    amp3_x = R(1, 2, 5, 4, 3)
    _, amp3_i = aten.adaptive_max_pool3d.default(amp3_x, [2, 3, 2])
    case("adaptive_max_pool3d_backward.default", R(1, 2, 2, 3, 2), amp3_x,
         amp3_i)
    up_v, up_i = aten.max_pool2d_with_indices.default(R(2, 3, 6, 8), [2, 2],
                                                      [2, 2])
    case("max_unpool2d.default", up_v, up_i, [6, 8])
    case("max_unpool2d.default", up_v, up_i, [7, 9], variant="larger")
    up3_v, up3_i = aten.max_pool3d_with_indices.default(
        R(1, 2, 4, 6, 4), [2, 2, 2], [2, 2, 2])
    case("max_unpool3d.default", up3_v, up3_i, [4, 6, 4], [2, 2, 2],
         [0, 0, 0])
    case("as_strided.default", x345, [3, 3], [2, 5], 1)
    grid = U(2, 3, 4, 2, lo=-1.2, hi=1.2)
    case("grid_sampler_2d.default", R(2, 3, 4, 5), grid, 0, 0, False)
    case("grid_sampler_2d.default", R(2, 3, 4, 5), grid, 1, 1, True,
         variant="nearest-border")
    case("upsample_nearest2d.vec", R(1, 2, 3, 4), [6, 6], None)
    case("upsample_bilinear2d.vec", R(1, 2, 3, 4), None, True, [2.0, 1.5])
    case("col2im.default", R(2, 3 * 4, 20), [4, 5], [2, 2], [1, 1],
         [1, 0], [1, 1])
    # ---- norms
    case("native_layer_norm.default", x345, [5], R(5), R(5), 1e-5)
    ln_x = R(3, 4, 5)
    ln_m = ln_x.mean(-1, keepdim=True)
    ln_r = torch.rsqrt(ln_x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    case("native_layer_norm_backward.default", R(3, 4, 5), ln_x, [5], ln_m,
         ln_r, R(5), R(5), [True, True, True])
    gn_x = R(2, 6, 3, 2)
    gn_w = R(6)
    case("native_group_norm.default", gn_x, gn_w, R(6), 2, 6, 6, 3, 1e-5)
    _, gn_m, gn_r = aten.native_group_norm.default(gn_x, gn_w, None, 2, 6,
                                                   6, 3, 1e-5)
    case("native_group_norm_backward.default", R(2, 6, 3, 2), gn_x, gn_m,
         gn_r, gn_w, 2, 6, 6, 3, [True, True, True])
    bn_x = R(4, 3, 2, 2)
    case("native_batch_norm.default", bn_x, R(3), R(3), None, None, True,
         0.1, 1e-5)
    case("_native_batch_norm_legit.no_stats", bn_x, R(3), R(3), True, 0.1,
         1e-5, ref=_bn_legit_no_stats)
    case("_native_batch_norm_legit_no_training.default", bn_x, R(3), R(3),
         R(3), P(3), 0.1, 1e-5, ref=_bn_legit_no_training)
    _, bn_m, bn_s = aten.native_batch_norm.default(bn_x, None, None, None,
                                                   None, True, 0.1, 1e-5)
    case("native_batch_norm_backward.default", R(4, 3, 2, 2), bn_x, R(3),
         None, None, bn_m, bn_s, True, 1e-5, [True, True, True])
    # ---- backward ops of AOT graphs
    case("threshold_backward.default", R(3, 4), R(3, 4), 0)
    sm_y = torch.softmax(R(3, 4), 1)
    case("_softmax_backward_data.default", R(3, 4), sm_y, 1, torch.float32)
    case("_log_softmax_backward_data.default", R(3, 4), sm_y.log(), 1,
         torch.float32)
    case("select_backward.default", R(3, 5), [3, 4, 5], 1, -1)
    case("slice_backward.default", R(3, 2, 5), [3, 4, 5], 1, 1, 4, 2)
    case("new_zeros.default", x34, [2, 5], kwargs={"dtype": torch.int32})
    ax = R(3, 5) * 3
    ax[0, :4] = torch.tensor([-3.0, 3.0, -1.0, 1.0])
    sg, th = torch.sigmoid(ax), torch.tanh(ax)
    case("sigmoid_backward.default", R(3, 5), sg)
    case("tanh_backward.default", R(3, 5), th)
    case("silu_backward.default", R(3, 5), ax)
    case("gelu_backward.default", R(3, 5), ax)
    case("gelu_backward.default", R(3, 5), ax,
         kwargs={"approximate": "tanh"}, variant="tanh")
    case("hardtanh_backward.default", R(3, 5), ax, -1.0, 1.0)
    case("leaky_relu_backward.default", R(3, 5), ax, 0.1, False)
    case("elu_backward.default", R(3, 5), 1.5, 1.2, 0.8, False, ax)
    case("elu_backward.default", R(3, 5), 1.5, 1.2, 0.8, True,
         torch.nn.functional.elu(ax, 1.5) * 1.2, variant="is_result")
    case("hardswish.default", ax)
    case("hardsigmoid.default", ax)
    case("hardswish_backward.default", R(3, 5), ax)
    case("hardsigmoid_backward.default", R(3, 5), ax)
    case("softplus.default", ax * 5, 2.0, 10.0)
    case("softplus_backward.default", R(3, 5), ax * 5, 2.0, 10.0)
    case("mse_loss.default", R(3, 5), R(3, 5), 1)
    case("mse_loss.default", R(3, 5), R(3, 5), 0, variant="none")
    case("mse_loss_backward.default", R(()), R(3, 5), R(3, 5), 1)
    lp = torch.log_softmax(R(4, 5), 1)
    tg = torch.tensor([1, 4, -100, 0])
    case("nll_loss_forward.default", lp, tg, P(5), 1, -100)
    case("nll_loss_forward.default", lp, tg, None, 0, -100,
         variant="none")
    case("nll_loss_forward.default", lp[0], tg[0], None, 2, -100,
         variant="1d")
    tw = P(5)
    _, total = aten.nll_loss_forward.default(lp, tg, tw, 1, -100)
    case("nll_loss_backward.default", R(()), lp, tg, tw, 1, -100, total)
    case("nll_loss_backward.default", R(4), lp, tg, None, 0, -100,
         torch.tensor(0.0), variant="none")
    # ---- distances
    case("_cdist_forward.default", R(2, 3, 4), R(2, 5, 4), 2.0, None)
    case("_pdist_forward.default", R(5, 3), 1.0)
    # ---- sizes (Python ints in the graph)
    case("sym_size.int", x345, 1)
    case("sym_numel.default", x345)
    case("sym_stride.int", x345, 0)
    case("sym_storage_offset.default", x345)
    case("sym_is_contiguous.default", x345,
         ref=lambda x, memory_format=None: x.is_contiguous())
    case("_native_batch_norm_legit.default", bn_x, R(3), R(3), None, None,
         True, 0.1, 1e-5, ref=_bn_legit)
    # ---- Python numbers from tensor data (.item()) and resize_
    case("_local_scalar_dense.default", R(()))
    case("_local_scalar_dense.default", I(1, 1), variant="int")
    case("_local_scalar_dense.default", B(1), variant="bool")
    case("resize_.default", R(2, 3), [3, 2])
    case("resize_.default", R(2, 3), [2, 2], variant="shrink")
    case("resize_.default", I(2, 3), [2, 5], variant="grow",
         check=_check_grown)
    return C


def _check_grown(out, args, kwargs):
    """resize_ to more elements: the old ones first; PyTorch leaves the
    rest uninitialized (Kiln: zeros), so they are not compared."""
    x, size = args
    assert tuple(out.shape) == tuple(size) and out.dtype == x.dtype
    assert torch.equal(out.reshape(-1)[:x.numel()], x.reshape(-1))
