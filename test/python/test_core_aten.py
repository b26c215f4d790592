"""PyTorch's Core ATen opset (python/kiln/core_aten_ops.txt) through Kiln's
ATen-level importer (kiln/_aten.py).

* The hole test: every operator of the list either has a converter and a
  case in core_aten_cases.py, or a reason in `_aten.UNSUPPORTED` (the one
  place that says why; docs/core-aten.md shows it). A new operator in the
  list without either fails.
* The sweep: every case goes into ONE graph made by make_fx (operators that
  PyTorch 1.13's make_fx decomposes or does not have, and the size
  operators that it evaluates, are added to that graph as explicit nodes),
  which Kiln runs on the interpreter (`eager`) and the `cpu` backend, each
  case compared with eager PyTorch by the `same()` rule of models.py
  (random operators: by their `check`). One graph per backend keeps the
  compile time small.
* docs/core-aten.md is up to date (scripts/gen-core-aten-table.py --check).
"""

import copy
import os
import subprocess
import sys

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils import _pytree as pytree

import kiln
from kiln import _aten

import core_aten_cases
from core_aten_cases import build_graph, is_tensor
from models import same

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))

OPS = _aten.core_ops()
CASES = core_aten_cases.cases()


def test_every_op_has_a_converter_and_case_or_a_reason():
    holes = []
    for name, _schema, _section in OPS:
        conv = name in _aten.ATEN
        reason = _aten.UNSUPPORTED.get(name)
        if conv and reason:
            holes.append("%s: both a converter and a reason" % name)
        elif not conv and not reason:
            holes.append("%s: no converter and no reason" % name)
        elif conv and name not in CASES:
            holes.append("%s: a converter but no case in "
                         "core_aten_cases.py" % name)
        elif reason and not reason.strip():
            holes.append("%s: an empty reason" % name)
    listed = {n for n, _, _ in OPS}
    stale = sorted(n for n in _aten.UNSUPPORTED if n not in listed)
    assert not stale, "reasons for ops not in the list: %s" % stale
    assert not holes, "\n".join(holes)


def test_the_list_is_the_core_opset():
    core = [n for n, _, s in OPS if s == "core"]
    assert len(core) == len(set(core)), "duplicate ops in the list"
    # The docs' list, as checked in: a change must be deliberate.
    assert len(core) == 193


def _supported_cases():
    """The cases of supported ops in list order (an op's variants, keyed
    "<op>.<overload>#<variant>", after its first case)."""
    order = {n: i for i, (n, _, _) in enumerate(OPS)}
    keys = [k for k in CASES if k.split("#")[0] in _aten.ATEN]
    keys.sort(key=lambda k: (order.get(k.split("#")[0], len(order)), k))
    return [CASES[k] for k in keys]


def _expected(c):
    args, kwargs = copy.deepcopy((c.args, c.kwargs))
    return core_aten_cases.target(c.name, c.ref)(*args, **kwargs)


def _fp64(c):
    def up(x):
        return x.double() if is_tensor(x) and x.is_floating_point() \
            else x
    args, kwargs = pytree.tree_map(up, copy.deepcopy((c.args, c.kwargs)))
    kwargs = {k: (torch.float64 if v is torch.float32 else v)
              for k, v in kwargs.items()}
    return core_aten_cases.target(c.name, c.ref)(*args, **kwargs)


def _compare(c, actual):
    if c.check is not None:
        try:
            c.check(actual, c.args, c.kwargs)
        except AssertionError as e:
            return "check failed: %s" % e
        return None
    expected = _expected(c)
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if len(a_leaves) != len(e_leaves):
        return "%d results, expected %d" % (len(a_leaves), len(e_leaves))
    ref_leaves = None
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if not is_tensor(e):
            if a != e:
                return "result %d: %r, expected %r" % (i, a, e)
            continue
        if not is_tensor(a):
            return "result %d: %r, expected a tensor" % (i, a)
        if not e.is_floating_point():
            if a.dtype != e.dtype or a.shape != e.shape or \
                    not torch.equal(a, e):
                return "result %d: %s %s differs from %s %s" % (
                    i, a.dtype, tuple(a.shape), e.dtype, tuple(e.shape))
            continue
        if a.dtype != e.dtype or a.shape != e.shape:
            return "result %d: %s %s, expected %s %s" % (
                i, a.dtype, tuple(a.shape), e.dtype, tuple(e.shape))
        # NaN where eager has NaN (same() compares the rest).
        nan = torch.isnan(e)
        if not torch.equal(torch.isnan(a), nan):
            return "result %d: NaN at other positions than eager's" % i
        if ref_leaves is None:
            ref_leaves = pytree.tree_flatten(_fp64(c))[0]
        ref = ref_leaves[i]
        if nan.any():
            a, e = a.masked_fill(nan, 0), e.masked_fill(nan, 0)
            ref = ref.masked_fill(nan, 0) if is_tensor(ref) else ref
        ok, msg = same(a, e, ref)
        if not ok:
            return "result %d: %s" % (i, msg)
    return None


def _run(gm, flat, backend):
    inputs = [t.clone() for t in flat]
    prog = kiln.backend(gm, inputs, backend=backend)
    return prog(*inputs)


def _run_one(c, backend):
    gm, flat, order = build_graph([c])
    return _run(gm, flat, backend)[order[0][1]]


_GRAPHS = {}


def _graph(cases):
    key = tuple(c.name for c in cases)
    if key not in _GRAPHS:
        _GRAPHS[key] = build_graph(cases)
    return _GRAPHS[key]


def _sweep(cases, backend):
    gm, flat, order = _graph(cases)
    try:
        outs = _run(gm, flat, backend)
    except Exception:  # noqa: find the culprits
        failures = []
        for c in cases:
            try:
                _run_one(c, backend)
            except Exception as e:  # noqa: report every failure
                failures.append("%s: %s" % (c.name, str(e).splitlines()[0]))
        assert not failures, "\n".join(failures)
        raise
    failures = []
    for c, i in order:
        msg = _compare(c, outs[i])
        if msg:
            failures.append("%s: %s" % (c.name, msg))
    assert not failures, "\n".join(failures)


# The cpu backend's machine code for every case at once takes about a
# minute on this loaded 2-core machine (LLVM, one kernel per fused group):
# CI runs a fixed sample (every CPU_SAMPLE-th supported op, by list order)
# and the full sweep is marked slow (KILN_SLOW_TESTS=1 runs it).
CPU_SAMPLE = 4


def test_core_aten_ops_match_pytorch_eager():
    _sweep(_supported_cases(), "eager")


def test_core_aten_ops_match_pytorch_cpu_sample():
    _sweep(_supported_cases()[::CPU_SAMPLE], "cpu")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KILN_SLOW_TESTS"),
                    reason="slow: set KILN_SLOW_TESTS=1")
def test_core_aten_ops_match_pytorch_cpu_all():
    _sweep(_supported_cases(), "cpu")


def test_unsupported_op_names_the_reason():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.ops.aten._fft_r2c.default,
                             (x, [0], 0, True)))
    gm = fx.GraphModule(torch.nn.Module(), g)
    with pytest.raises(kiln.Unsupported, match=r"aten._fft_r2c.default: its "
                       r"result would be complex: complex dtypes are not "
                       r"supported"):
        kiln.backend(gm, [torch.randn(3)], backend="eager")


def _graph_of(fn, *inputs):
    return make_fx(fn)(*inputs)


@pytest.mark.parametrize("fn, message", [
    # A non-contiguous result (exp keeps the transpose's strides) has a
    # storage layout Kiln's values do not record: refused, not a wrong
    # answer. (Views of a contiguous base are read: test_as_strided.py.)
    (lambda x: torch.ops.aten.as_strided.default(x.t().exp(), [2, 2],
                                                 [1, 2]),
     "as_strided of a view"),
    (lambda x: torch.ops.aten.grid_sampler_2d.default(
        x.view(1, 1, 3, 4), x.view(1, 3, 2, 2)[..., :2] * 0, 2, 0, False),
     "bicubic"),
    # A boolean mask with another index tensor (x[m, i]): kt.nonzero and
    # a gather cover a mask alone (test_data_dependent.py). (An all-true
    # mask: make_fx runs the op, whose 3 rows must broadcast with i's 3.)
    (lambda x: torch.ops.aten.index.Tensor(
        x, [x[:, 0] == x[:, 0], torch.tensor([0, 1, 2])]),
     "boolean mask together"),
])
def test_refused_with_a_reason(fn, message):
    x = torch.randn(3, 4)
    gm = _graph_of(fn, x)
    with pytest.raises(kiln.Unsupported, match=message):
        kiln.backend(gm, [x], backend="eager")


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_avg_pool3d_int64_and_divisor_override(backend):
    # Refused before issue 16 batch 8 (two 2-D pools would truncate twice,
    # and divisor_override is not a product of 2-D divisors): the window
    # sums divided once, as PyTorch.
    def fn(x):
        a = torch.ops.aten.avg_pool3d.default(
            x.view(1, 1, 1, 3, 4), [1, 1, 1], [], 0, False, True, 3)
        b = torch.ops.aten.avg_pool3d.default(
            (x * 4).long().view(1, 1, 1, 3, 4), [1, 2, 2])
        c = torch.ops.aten.avg_pool3d.default(
            (x * 9).long().view(1, 1, 3, 4), [1, 2, 3], [1, 1, 1], [0, 1, 1],
            True, False, -2)
        return a, b, c
    x = torch.randn(3, 4)
    gm = _graph_of(fn, x)
    got = kiln.backend(gm, [x], backend=backend)(x)
    for g, w in zip(got, fn(x)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w)


def test_as_strided_past_the_storage_is_refused():
    # PyTorch itself refuses this call, so make_fx cannot record it: a
    # hand-built graph.
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.ops.aten.as_strided.default,
                             (x, [4, 4], [4, 1])))
    gm = fx.GraphModule(torch.nn.Module(), g)
    with pytest.raises(kiln.Unsupported, match="reads past the end"):
        kiln.backend(gm, [torch.randn(3, 4)], backend="eager")


def test_native_batch_norm_training_writes_running_stats():
    """native_batch_norm in training updates its running statistics in
    place (as eager's kernel): on the interpreter and on the cpu backend
    the inputs are written with eager's values."""
    def f(x, rm, rv):
        return torch.ops.aten.native_batch_norm.default(
            x, None, None, rm, rv, True, 0.1, 1e-5)

    x = torch.randn(4, 3, 2, 2)
    rm, rv = torch.randn(3), torch.rand(3) + 0.5
    gm = make_fx(f)(x, rm.clone(), rv.clone())
    rm_e, rv_e = rm.clone(), rv.clone()
    expected = f(x, rm_e, rv_e)
    rm_k, rv_k = rm.clone(), rv.clone()
    with torch.no_grad():
        actual = kiln.backend(gm, [x, rm_k, rv_k], backend="eager")(
            x, rm_k, rv_k)
    torch.testing.assert_close(actual[0], expected[0])
    torch.testing.assert_close(rm_k, rm_e)
    torch.testing.assert_close(rv_k, rv_e)
    # The cpu backend compiles a graph that writes its arguments as one that
    # returns their final values, written back by the runtime.
    rm_c, rv_c = rm.clone(), rv.clone()
    with torch.no_grad():
        actual = kiln.backend(gm, [x, rm_c, rv_c], backend="cpu")(
            x, rm_c, rv_c)
    torch.testing.assert_close(actual[0], expected[0])
    torch.testing.assert_close(rm_c, rm_e)
    torch.testing.assert_close(rv_c, rv_e)


def _train_step_graph(net, inputs, loss):
    """make_fx of a forward, loss and parameter gradients of `net` (the
    graph AOTAutograd would split): (GraphModule, flat inputs, step)."""
    params = [p.detach().clone() for p in net.parameters()]
    n = len(inputs)

    def step(*args):
        for p, v in zip(net.parameters(), args[n:]):
            p.data = v
        ws = [p.requires_grad_() for p in net.parameters()]
        value = loss(net(*args[:n]))
        return (value,) + tuple(torch.autograd.grad(value, ws))

    flat = list(inputs) + params
    return make_fx(step)(*flat), flat, step


def _mse(y):
    return F.mse_loss(y, torch.zeros_like(y))


TRAIN_NETS = {
    # conv, BatchNorm (batch statistics), ReLU, max pool, linear,
    # log_softmax: convolution_backward, native_batch_norm_backward,
    # threshold_backward, max_pool2d_with_indices_backward, ...
    "conv_bn": (lambda: nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4, track_running_stats=False), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16, 5),
        nn.LogSoftmax(-1)),
        lambda: [torch.randn(2, 3, 4, 4)], lambda y: y[:, 0].sum()),
    # BatchNorm with running statistics: native_batch_norm writes them.
    "conv_bn_running_stats": (lambda: nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()),
        lambda: [torch.randn(2, 3, 4, 4)], lambda y: y.pow(2).mean()),
    "mlp_cross_entropy": (lambda: nn.Sequential(
        nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)),
        lambda: [torch.randn(5, 8)],
        lambda y: F.cross_entropy(y, torch.tensor([0, 1, 2, 3, 0]))),
    "activations": (lambda: nn.Sequential(
        nn.Linear(8, 8), nn.SiLU(), nn.Tanh(), nn.Sigmoid(), nn.Hardtanh(),
        nn.LeakyReLU(), nn.Hardswish(), nn.ELU(), nn.Softplus()),
        lambda: [torch.randn(5, 8)], _mse),
    "group_norm_pool": (lambda: nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.GroupNorm(2, 4), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(4, 2)),
        lambda: [torch.randn(2, 3, 6, 6)], _mse),
    "transformer_layer": (lambda: nn.TransformerEncoderLayer(
        16, 2, 32, dropout=0.0, batch_first=True),
        lambda: [torch.randn(2, 5, 16)], _mse),
    "multihead_attention": (lambda: nn.MultiheadAttention(
        8, 2, batch_first=True),
        lambda: [torch.randn(2, 5, 8)] * 3, lambda y: y[0].pow(2).mean()),
    "embedding_layer_norm": (lambda: nn.Sequential(
        nn.Embedding(10, 4), nn.LayerNorm(4)),
        lambda: [torch.tensor([[1, 2], [3, 9]])], _mse),
}


@pytest.mark.parametrize("name", sorted(TRAIN_NETS))
def test_make_fx_training_step_graphs(name):
    """Forward + backward graphs of small nets as make_fx records them
    (PyTorch 1.13's AOT ops: *_backward, nll_loss_forward, ...) on the
    interpreter (and conv_bn on the cpu backend), against eager autograd."""
    make_net, make_inputs, loss = TRAIN_NETS[name]
    torch.manual_seed(0)
    net = make_net()
    gm, flat, step = _train_step_graph(net, make_inputs(), loss)
    expected = step(*flat)
    for backend in (["eager", "cpu"] if name == "conv_bn" else ["eager"]):
        inputs = [t.detach().clone() for t in flat]
        with torch.no_grad():
            actual = kiln.backend(gm, inputs, backend=backend)(*inputs)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e.detach(), rtol=1e-4, atol=1e-4)


def test_table_is_up_to_date():
    r = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts",
                                     "gen-core-aten-table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
