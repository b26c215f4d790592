"""Bad arguments a user can write (issue 15 section 3), through
kiln.compile on both backends against eager PyTorch 1.13 on the CPU: where
eager raises, a KilnError of the same meaning at the user's line (never a
crash, a Python traceback of another kind or a silent result); where eager
returns, the same result.

What these found (2026-11-29, rl23), each case below failing before:
* `embedding_bag`'s offsets were not checked when the program ran: offsets
  past the input's end gave empty bags, decreasing or negative offsets a
  wrong bagging (kt.searchsorted of unsorted starts), where PyTorch raises;
  offsets[0] > 0 failed with kt.scatter's "index -1 is out of bounds".
  They are now kt.check ops (a run-time check of a condition on values,
  reported at the user's line by the interpreter and compiled code).
* `include_last_offset=True` with a last offset short of the input's length
  put the rows after it into the last bag; PyTorch leaves them out of the
  bag's sum (and, its quirk, still counts them in mode="mean"'s divisor).
* a convolution with an empty kernel (`nn.Conv2d(2, 3, (0, 2))`, a weight
  of kernel size 0) gave a result where PyTorch raises, and training it
  aborted the process (kiln-autodiff built a kt.conv2d that did not verify:
  "LLVM ERROR: Failed to infer result type(s)").
* PyTorch's own argument checks raised while tracing (a pooling stride of
  0 in torch.nn.functional) were reported at the line inside
  torch/nn/functional.py, not the user's.
* `adaptive_avg_pool1d(x, 0)` of a dim marked dynamic raised "marked
  dynamic, but the program needs its size" where PyTorch returns an empty
  result.
"""

import os
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln

BACKENDS = ["eager", "cpu"]
HERE = os.path.basename(__file__)


def compare(f, args, backend, match=None, dynamic=()):
    """`f` compiled once and called on `args` (the dims `dynamic`, pairs
    (arg, dim), marked dynamic) against eager: the same result, or a
    KilnError at this file's line whose message matches `match` where eager
    raises. Returns the KilnError's message (or None)."""
    try:
        want = f(*[a.clone() for a in args])
        raised = None
    except (RuntimeError, IndexError, ValueError) as e:
        raised = e
    call = [a.clone() for a in args]
    for i, d in dynamic:
        kiln.mark_dynamic(call[i], d)
    g = kiln.compile(f, backend=backend)
    if raised is None:
        got = g(*call)
        torch.testing.assert_close(got, want, equal_nan=True)
        return None
    with pytest.raises(kiln.KilnError, match=match) as info:
        g(*call)
    message = str(info.value)
    if not isinstance(f, nn.Module):
        # The user's line (a module compiled itself has none: its forward's
        # line in PyTorch's file).
        assert HERE in message, message
    return message


# ------------------------------------------------ embedding_bag's offsets

W = torch.randn(10, 3, dtype=torch.float64)
IDX = torch.tensor([1, 2, 3, 4, 5])

OFFSET_ERRORS = [
    ([1, 3], r"offsets\[0\] has to be 0"),
    ([5], r"offsets\[0\] has to be 0"),
    ([0, 7], r"offsets\[-1\] can not be greater than input's length 5"),
    ([0, 3, 2], "offsets have to be non-decreasing"),
    ([0, -1], "offsets have to be non-decreasing"),
    ([0, 6, 5], "offsets have to be non-decreasing"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("offsets,match", OFFSET_ERRORS)
def test_embedding_bag_bad_offsets(backend, mode, last, offsets, match):
    # f32: eager's f64 kernel does not check the order (decreasing offsets
    # make overlapping bags there); Kiln raises for every dtype.
    def f(i, w, o):
        return F.embedding_bag(i, w, o, mode=mode, include_last_offset=last)
    msg = compare(f, (IDX, W.float(), torch.tensor(offsets)), backend, match)
    assert msg is not None
    with pytest.raises(kiln.KilnError, match=match):
        kiln.compile(f, backend=backend)(IDX, W, torch.tensor(offsets))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("offsets,match", OFFSET_ERRORS)
def test_embedding_bag_max_bad_offsets(backend, offsets, match):
    # Eager's max mode does not check the order (it reads out of bounds or
    # corrupts the heap): Kiln raises as the other modes do, and eager is
    # not called.
    def f(i, w, o):
        return F.embedding_bag(i, w, o, mode="max")
    with pytest.raises(kiln.KilnError, match=match) as info:
        kiln.compile(f, backend=backend)(IDX, W, torch.tensor(offsets))
    assert HERE in str(info.value)


GOOD_OFFSETS = [([0, 5], False), ([0, 2, 3], False), ([0], False),
                ([], False), ([0, 0, 5], False), ([0, 5, 5], False),
                ([0, 2, 3], True), ([0, 0, 5], True), ([0], True),
                ([0, 1, 1], True), ([0, 5], True)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets,last", GOOD_OFFSETS)
def test_embedding_bag_good_offsets(backend, mode, offsets, last):
    if mode == "max" and last and offsets[-1] < 5:
        pytest.skip("eager's max mode corrupts the heap on a last offset "
                    "short of the input (PyTorch 1.13)")

    if offsets == [] and mode == "max":
        pytest.skip("eager's max mode reads out of bounds without offsets")

    def f(i, w, o):
        return F.embedding_bag(i, w, o, mode=mode, include_last_offset=last)
    # f32: eager's f64 kernel dies of SIGSEGV on empty offsets.
    compare(f, (IDX, W.float(), torch.tensor(offsets, dtype=torch.long)),
            backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_embedding_bag_checked_offsets_train(backend):
    # The checks pass the offsets through (kt.check's gradient is the
    # identity for floats; offsets have none): the weight's gradient is
    # eager's, and a bad offset still fails the training call.
    w = nn.Parameter(W.clone())
    w2 = nn.Parameter(W.clone())
    per = torch.randn(5, dtype=torch.float64)

    def loss(weight, i, o, p):
        return (F.embedding_bag(i, weight, o, mode="sum",
                                per_sample_weights=p) ** 2).sum()
    o = torch.tensor([0, 2, 2])
    loss(w2, IDX, o, per).backward()
    g = kiln.compile(loss, backend=backend)
    g(w, IDX, o, per).backward()
    torch.testing.assert_close(w.grad, w2.grad)
    with pytest.raises(kiln.KilnError, match="non-decreasing"):
        g(w, IDX, torch.tensor([0, 3, 1]), per)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aten_embedding_bag_offsets(backend):
    # The ATen-level converter (aten._embedding_bag) checks the same.
    aten = torch.ops.aten
    from test_aten_importer import _run  # one aten op as an FX graph
    w, i = W.float(), IDX
    for offsets, match in OFFSET_ERRORS[:4]:
        with pytest.raises(kiln.KilnError, match=match):
            _run(backend, aten._embedding_bag.default, w, i,
                 torch.tensor(offsets))
    # include_last_offset with a short last offset: the rows after it are
    # in no bag (eager's sum).
    o = torch.tensor([0, 2, 3])
    want = aten._embedding_bag.default(w, i, o, False, 0, False, None, True)
    got = _run(backend, aten._embedding_bag.default, w, i, o, False, 0,
               False, None, True)
    torch.testing.assert_close(got[0], want[0])


# ------------------------------------------- indices out of range at run time

X = torch.randn(4, 3)
INDEX_CASES = {
    "embedding": (lambda x, i: F.embedding(i, x), [[1, 4]], "out of range"),
    "embedding_bag": (lambda x, i: F.embedding_bag(i, x, torch.tensor([0])),
                      [1, 4], "out of range"),
    "gather": (lambda x, i: torch.gather(x, 0, i), [[4, 0, 0]],
               "out of bounds"),
    "index_select": (lambda x, i: torch.index_select(x, 0, i), [4],
                     "out of range"),
    "scatter": (lambda x, i: torch.zeros(4, 3).scatter(0, i, x[:1]),
                [[4, 0, 0]], "out of bounds"),
    "scatter_add": (lambda x, i: torch.zeros(4, 3).scatter_add(0, i, x[:1]),
                    [[4, 0, 0]], "out of bounds"),
    "scatter_reduce": (lambda x, i: torch.zeros(4, 3).scatter_reduce(
        0, i, x[:1], "amax"), [[4, 0, 0]], "out of bounds"),
    "index_add": (lambda x, i: torch.zeros(4, 3).index_add(0, i, x[:1]), [4],
                  "out of bounds"),
    "index_copy": (lambda x, i: torch.zeros(4, 3).index_copy(0, i, x[:1]),
                   [4], "out of bounds"),
    "index_fill": (lambda x, i: x.index_fill(0, i, 1.0), [4],
                   "out of (bounds|range)"),
    "take": (lambda x, i: torch.take(x, i), [12], "out of range"),
    "getitem": (lambda x, i: x[i], [4], "out of range"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("name", sorted(INDEX_CASES))
def test_index_out_of_range(backend, sign, name):
    f, index, match = INDEX_CASES[name]
    index = torch.tensor(index)
    if sign < 0:
        # Past the negative end (-size - 1) where the op wraps negatives,
        # else -1.
        wraps = name in ("take", "getitem")
        index = torch.where(index > 0, -index - 1 if wraps else
                            torch.full_like(index, -1), index)
    compare(f, (X, index), backend, match)


# ------------------------------------------------- argument checks, messages

# A batch of 2: a dynamic dim of size 1 is specialized (broadcasting).
X1 = torch.randn(2, 2, 8)
X2 = torch.randn(2, 2, 8, 8)
X3 = torch.randn(2, 2, 4, 4, 4)

# Eager's message for an empty kernel depends on its path (oneDNN for a
# batch above 1).
EMPTY_KERNEL = ("kernel size should be greater than zero|could not create a "
                "descriptor for a dilated convolution")

ARG_CASES = {
    # pooling: stride or kernel size 0 (PyTorch's checks, in
    # torch.nn.functional or the operator)
    "max_pool1d stride 0": (lambda x: F.max_pool1d(x, 2, stride=0), X1,
                            "stride must be greater than zero"),
    "max_pool1d kernel 0": (lambda x: F.max_pool1d(x, 0), X1,
                            "kernel_size must be greater than zero"),
    "avg_pool1d stride 0": (lambda x: F.avg_pool1d(x, 2, stride=0), X1,
                            "stride should not be zero"),
    "avg_pool1d kernel 0": (lambda x: F.avg_pool1d(x, 0), X1,
                            "stride should not be zero"),
    "max_pool2d stride 0": (lambda x: F.max_pool2d(x, 2, stride=0), X2,
                            "stride should not be zero"),
    "max_pool2d kernel (2, 0)": (lambda x: F.max_pool2d(x, (2, 0)), X2,
                                 "stride should not be zero"),
    "avg_pool2d kernel 0": (lambda x: F.avg_pool2d(x, 0), X2,
                            "stride should not be zero"),
    "max_pool3d stride 0": (lambda x: F.max_pool3d(x, 2, stride=0), X3,
                            "stride should not be zero"),
    "avg_pool3d stride 0": (lambda x: F.avg_pool3d(x, 2, stride=0), X3,
                            "stride should not be zero"),
    "lp_pool2d kernel 0": (lambda x: F.lp_pool2d(x, 2, 0), X2,
                           "stride should not be zero"),
    "lp_pool1d stride 0": (lambda x: F.lp_pool1d(x, 2, 2, stride=0), X1,
                           "stride should not be zero"),
    "MaxPool2d(0)": (nn.MaxPool2d(0), X2, "stride should not be zero"),
    "AvgPool1d stride 0": (nn.AvgPool1d(2, stride=0), X1,
                           "stride should not be zero"),
    "max_pool2d dilation 0": (lambda x: F.max_pool2d(x, 2, dilation=0), X2,
                              "dilation"),
    "avg_pool2d divisor 0": (
        lambda x: F.avg_pool2d(x, 2, divisor_override=0), X2,
        "divisor"),
    "unfold stride 0": (lambda x: F.unfold(x, 2, stride=0), X2,
                        "stride should be greater than zero"),
    "unfold kernel 0": (lambda x: F.unfold(x, 0), X2,
                        "kernel size should be greater than zero"),
    "Tensor.unfold step 0": (lambda x: x.unfold(2, 2, 0), X1,
                             "step is 0 but must be > 0"),
    # convolution: stride, dilation, groups, padding, kernel size
    "conv1d stride 0": (lambda x: F.conv1d(x, torch.ones(3, 2, 3), stride=0),
                        X1, "non-positive stride"),
    "conv2d stride 0": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 3, 3), stride=0), X2,
        "non-positive stride"),
    "conv3d stride 0": (
        lambda x: F.conv3d(x, torch.ones(3, 2, 2, 2, 2), stride=0), X3,
        "non-positive stride"),
    "conv2d dilation 0": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 3, 3), dilation=0), X2,
        "dilation"),
    "conv2d groups 0": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 3, 3), groups=0), X2,
        "groups"),
    "conv2d padding -1": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 3, 3), padding=-1), X2,
        "padding"),
    "conv_transpose2d stride 0": (
        lambda x: F.conv_transpose2d(x, torch.ones(2, 3, 3, 3), stride=0),
        X2, "stride"),
    "conv1d kernel 0": (lambda x: F.conv1d(x, torch.ones(3, 2, 0)), X1,
                        EMPTY_KERNEL),
    "conv2d kernel 0": (lambda x: F.conv2d(x, torch.ones(3, 2, 0, 2)), X2,
                        EMPTY_KERNEL),
    "conv_transpose2d kernel 0": (
        lambda x: F.conv_transpose2d(x, torch.ones(2, 3, 2, 0)), X2,
        EMPTY_KERNEL),
    "conv3d kernel 0": (lambda x: F.conv3d(x, torch.ones(3, 2, 0, 2, 2)), X3,
                        EMPTY_KERNEL),
    "Conv2d kernel (0, 2)": (nn.Conv2d(2, 3, (0, 2)), X2,
                             EMPTY_KERNEL),
    # empty convolution operands (PyTorch 1.13: no input channels give an
    # empty [N, 0, H, W] result; no output channels, or an empty spatial
    # dim with a batch and channels, are errors)
    "conv2d no input channels": (
        lambda x: F.conv2d(x, torch.ones(3, 0, 2, 2), torch.ones(3),
                           padding=1), torch.randn(2, 0, 4, 4), None),
    "conv1d no input channels": (
        lambda x: F.conv1d(x, torch.ones(3, 0, 2)), torch.randn(2, 0, 4),
        None),
    "conv2d empty batch": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 2, 2), torch.ones(3)),
        torch.randn(0, 2, 4, 4), None),
    "conv2d no output channels": (
        lambda x: F.conv2d(x, torch.ones(0, 2, 2, 2)), X2,
        "expected weight to be at least 1 at dimension 0"),
    "conv2d empty spatial dim": (
        lambda x: F.conv2d(x, torch.ones(3, 2, 2, 2), padding=1),
        torch.randn(2, 2, 0, 4), "Only zero batch or zero channel inputs"),
    "conv_transpose2d no input channels": (
        lambda x: F.conv_transpose2d(x, torch.ones(0, 1, 2, 2)),
        torch.randn(2, 0, 4, 4),
        "expected weight to be at least 1 at dimension 0"),
    "conv_transpose2d no output channels": (
        lambda x: F.conv_transpose2d(x, torch.ones(2, 0, 2, 2)), X2,
        "non-empty 2D or 4D weight tensor expected"),
    # adaptive pooling to 0 (eager returns an empty result) and below
    "adaptive_avg_pool1d 0": (lambda x: F.adaptive_avg_pool1d(x, 0), X1,
                              None),
    "adaptive_max_pool1d 0": (lambda x: F.adaptive_max_pool1d(x, 0), X1,
                              None),
    "adaptive_avg_pool2d (2, 0)": (lambda x: F.adaptive_avg_pool2d(x, (2, 0)),
                                   X2, None),
    "adaptive_avg_pool1d -1": (lambda x: F.adaptive_avg_pool1d(x, -1), X1,
                               "greater than or equal to 0"),
    # reshape of an empty tensor with -1 (ambiguous)
    "reshape [-1, 0]": (lambda x: x.reshape(-1, 0), torch.randn(0, 4),
                        "the unspecified dimension size -1 can be any value"),
    "view [0, -1]": (lambda x: x.view(0, -1), torch.randn(0, 4),
                     "the unspecified dimension size -1 can be any value"),
    # sizes and counts
    "chunk 0": (lambda x: x.chunk(0)[0], X1, "chunks"),
    "split 0": (lambda x: x.split(0)[0], X1, "split_size"),
    "tensor_split 0": (lambda x: x.tensor_split(0)[0], X1,
                       "number of sections"),
    "repeat_interleave -1": (lambda x: x.repeat_interleave(-1), X1,
                             "repeats can not be negative"),
    "pixel_shuffle 0": (lambda x: F.pixel_shuffle(x, 0), X2,
                        "upscale_factor"),
    "interpolate size 0": (lambda x: F.interpolate(x, size=0), X2,
                           "sizes should be greater than 0"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", ["static", "batch", "last"])
@pytest.mark.parametrize("name", sorted(ARG_CASES))
def test_bad_arguments(backend, dynamic, name):
    f, x, match = ARG_CASES[name]
    dims = {"static": (), "batch": ((0, 0),),
            "last": ((0, x.dim() - 1),)}[dynamic]
    # A dim of size 0 is not marked (the importer specializes it:
    # test_zero_sizes.py covers empty dynamic dims).
    dims = tuple((i, d) for i, d in dims if x.shape[d] != 0)
    compare(f, (x,), backend, match, dims)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytorch_argument_checks_name_the_users_line(backend):
    # The check raised inside torch/nn/functional.py: the error is at the
    # call in this file and names the PyTorch function that raised.
    def f(x):
        return F.max_pool2d(x, 2, stride=0)  # the user's line
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(kiln.KilnError) as info:
        kiln.compile(f, backend=backend)(X2)
    msg = str(info.value)
    assert msg.startswith("%s:%d:" % (__file__, line)), msg
    assert "stride should not be zero" in msg
    assert "torch/nn/functional.py" in msg and "max_pool2d" in msg


@pytest.mark.parametrize("backend", BACKENDS)
def test_adaptive_pool_to_zero_of_an_empty_dynamic_dim(backend):
    # Pooled to 0, the dim stays dynamic (one compile for every size), and
    # an input dim of size 0 is still PyTorch's error, on every call.
    def f(x):
        return F.adaptive_avg_pool1d(x, 0)
    g = kiln.compile(f, backend=backend)
    for n in (8, 3, 0, 5):
        x = torch.randn(1, 2, n)
        kiln.mark_dynamic(x, 2)
        if n == 0:
            with pytest.raises(RuntimeError):
                f(x)
            with pytest.raises(kiln.KilnError,
                               match="non-zero size for non-batch"):
                g(x)
            continue
        torch.testing.assert_close(g(x), f(x))


# ------------------------------ every Tensor method the importer converts
#
# Each method of the converter table (kiln._ops.METHODS) called on a [3, 4]
# float tensor with arguments a user can get wrong: a dim out of range
# (positive, negative, as a keyword), a tensor of a mismatched shape, an
# empty list. Compiled (eager backend) against eager PyTorch: Kiln may raise
# only a KilnError or eager's own exception type (never another traceback
# or a crash), and where eager raises a RuntimeError, IndexError or
# ValueError (a check of the values) Kiln must raise too. Where eager raises
# a TypeError (an argument the method does not take: `x.relu(7)`, an unknown
# keyword, a string for a dim), Kiln raises a TypeError too: PyTorch's own
# argument parser judges each call at capture (kiln._signatures); before,
# 40 such calls of the converters returned a result.

def _methods():
    import kiln._decomp  # noqa: F401  (registers the decomposed methods)
    from kiln import _ops
    return sorted(m for m in _ops.METHODS
                  if not m.endswith("_") and not m.startswith("__"))


BAD_CALLS = {
    "dim=7": lambda m: lambda t: getattr(t, m)(7),
    "dim=-9": lambda m: lambda t: getattr(t, m)(-9),
    "dim=7 keyword": lambda m: lambda t: getattr(t, m)(dim=7),
    "mismatched shape": lambda m: lambda t: getattr(t, m)(torch.ones(5, 2)),
    "empty list": lambda m: lambda t: getattr(t, m)([]),
    "unknown keyword": lambda m: lambda t: getattr(t, m)(bogus=1),
    "a string": lambda m: lambda t: getattr(t, m)("a"),
    "four ints": lambda m: lambda t: getattr(t, m)(0, 7, 7, 7),
}

# Where eager's "check" is PyTorch 1.13 failing on a valid call: diag with
# an offset past the matrix ("numel: integer multiplication overflow";
# torch.diagonal gives an empty result, as Kiln), `to` with an int (a
# device index; Kiln runs on the CPU and ignores devices).
KNOWN_EAGER_BUGS = {("diag", "dim=7"), ("diag", "dim=-9"), ("to", "dim=-9"),
                    ("to", "dim=7")}


@pytest.mark.parametrize("call", sorted(BAD_CALLS))
def test_every_method_with_bad_arguments(call):
    x = torch.randn(3, 4)
    wrong = []
    for m in _methods():
        if not hasattr(torch.Tensor, m):
            continue
        f = BAD_CALLS[call](m)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f(x.clone())
            eager = None
        except Exception as e:  # noqa: BLE001  (any eager exception)
            eager = e
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kiln.compile(f, backend="eager")(x.clone())
            got = None
        except kiln.KilnError as e:
            got = e
        except Exception as e:  # noqa: BLE001
            if eager is None or type(e) is not type(eager):
                wrong.append("%s(%s): %s: %s" % (m, call, type(e).__name__,
                                                 e))
            continue
        if isinstance(eager, TypeError):
            if not isinstance(got, TypeError):
                wrong.append("%s(%s): eager raised TypeError: %s; Kiln %s" % (
                    m, call, eager, "returned" if got is None else
                    "raised %s: %s" % (type(got).__name__, got)))
        elif eager is None and isinstance(got, TypeError):
            wrong.append("%s(%s): eager returned; Kiln raised %s" % (
                m, call, got))
        elif eager is not None and got is None:
            if (m, call) not in KNOWN_EAGER_BUGS:
                wrong.append("%s(%s): eager raised %s: %s; Kiln returned" % (
                    m, call, type(eager).__name__, eager))
    assert not wrong, "\n".join(wrong)


# --------------------------- arguments PyTorch's argument parser refuses

def _relu7(x):
    return x.relu(7) + 1


def _int7(x):
    return x.int(7)


def _maximum7(x):
    return x.maximum(7)


def _sum_bogus(x):
    return x.sum(bogus=1)


def _torch_maximum7(x):
    return torch.maximum(x, 7)


def _torch_relu_string(x):
    return torch.relu(x, "a")


def _nn_gelu_extra(x):
    return torch._C._nn.gelu(x, "tanh", 7)


def _contiguous7(x):
    return (x * 2).contiguous(7)


def _after_good_ops(x):
    y = torch.sin(x) * 2
    return y.logical_and(7)


PARSER_REFUSED = [_relu7, _int7, _maximum7, _sum_bogus, _torch_maximum7,
                  _torch_relu_string, _nn_gelu_extra, _contiguous7,
                  _after_good_ops]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("f", PARSER_REFUSED, ids=lambda f: f.__name__)
def test_call_the_parser_refuses_raises_type_error(f, fullgraph):
    # Converters took and ignored extra or mistyped arguments (`x.relu(7)`
    # returned relu(x)); eager PyTorch raises TypeError. Kiln raises a
    # TypeError (a KilnError too) at the user's line, with eager's message.
    x = torch.randn(3, 4)
    with pytest.raises(TypeError) as eager:
        f(x)
    g = kiln.compile(f, backend="eager", fullgraph=fullgraph)
    with pytest.raises(TypeError) as info:
        g(x)
    assert isinstance(info.value, kiln.ArgumentTypeError)
    message = str(info.value)
    assert HERE in message, message
    # eager's own words (the function's name differs: Tensor.relu / relu)
    words = str(eager.value).split("(")[-1].split(")")[0]
    assert words in message, (message, str(eager.value))


@pytest.mark.parametrize("backend", BACKENDS)
def test_good_calls_unchanged_by_the_parser_check(backend):
    # The check runs PyTorch's parser on meta stand-ins: calls eager takes
    # (keywords, dtypes, sizes from the input, a dynamic dim, .to/.type,
    # a Python number read from data) still compile whole, as before.
    def f(x, y):
        a = x.sum(dim=1, keepdim=True).to(torch.float64).float()
        b = torch.maximum(x, y).relu().view(x.shape[0], -1)
        c = x.type(torch.float32).to("cpu").contiguous().int().float()
        d = torch._C._nn.gelu(x, approximate="tanh")
        e = x.new_zeros(x.shape[0], 2).sum() + y.amax().item()
        return a + b + c + d + e
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    want = f(x, y)
    g = kiln.compile(f, backend=backend)
    torch.testing.assert_close(g(x, y), want)
    x2 = torch.randn(5, 4)
    kiln.mark_dynamic(x2, 0)
    y2 = torch.randn(5, 4)
    kiln.mark_dynamic(y2, 0)
    torch.testing.assert_close(g(x2, y2), f(x2, y2))
    explained = kiln.explain(lambda x: torch.maximum(x, x).relu().int(), x)
    assert explained.graph_break_count == 0, explained


# ------------------------------------------------ F.pad cropping too much

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,pad", [(0, [2, -1]), (2, [1, -3]), (3, [-2, -2]),
                                   (2, [2, -1]), (3, [-1, -1]),
                                   (0, [0, 0])])
def test_pad_crops_more_than_the_dim(backend, n, pad):
    # Negative amounts crop; cropping more than the dim holds is PyTorch's
    # error ("start (0) + length (-1) exceeds dimension size"), where the
    # importer made a result of the negative size's complement (a size-1
    # result for [2, -1] on an empty tensor; rl23's fuzz seed 1611).
    compare(lambda x: F.pad(x, pad) * 2, (torch.ones(n),), backend,
            match="exceeds dimension size")


@pytest.mark.parametrize("backend", BACKENDS)
def test_pad_crop_checked_at_a_dynamic_size(backend):
    # The crop is checked on every call where the dim is dynamic.
    g = kiln.compile(lambda x: F.pad(x, [1, -3]) + 1, backend=backend)
    x = torch.ones(5)
    kiln.mark_dynamic(x, 0)
    torch.testing.assert_close(g(x), F.pad(x, [1, -3]) + 1)
    y = torch.ones(2)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        F.pad(y, [1, -3])
    with pytest.raises(kiln.KilnError, match="crops more than dim 0 of the "
                       r"input of shape \[2\] holds") as info:
        g(y)
    assert HERE in str(info.value)
