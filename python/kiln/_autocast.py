"""`torch.autocast("cpu")` captured: the casts PyTorch 1.13's CPU autocast
makes, as `kt.cast` ops of the program.

Under CPU autocast (PyTorch 1.13 takes `dtype=torch.bfloat16` only) each
ATen op follows one of three policies (aten/src/ATen/autocast_mode.cpp):

* lower precision: its floating tensor arguments other than float64 are
  cast to the autocast dtype, so it computes and returns bfloat16
  (convolutions, linear and the matrix products);
* float32: its floating arguments other than float64 are cast to float32
  (the losses, 3-D pooling, reflection/replication padding, transposed
  convolutions, ...);
* every other op runs on its arguments' dtypes as it would without
  autocast (type promotion decides: `bf16 + f32` is f32).

The importer asks `policy(node, root)` for every op node made under
autocast (the tracer marks them, `node.meta["kiln_autocast"]`) and casts
the arguments with `cast_args` before the op's converter runs; a module the
importer converts whole (nn.Linear, nn.Conv2d, nn.MultiheadAttention) has
its parameters cast as its functional form would (`module_dtype`). The
tables below are by torch-level callable, Tensor method name and module
class; test_autocast.py checks every entry against eager PyTorch's result
dtypes under autocast, and the OpInfo ops whose dtype autocast changes
against the tables."""

import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

LOWER = "lower"
FP32 = "fp32"
REFUSED = "refused"


def _present(*targets):
    return {t for t in targets if t is not None}


def _g(ns, name):
    return getattr(ns, name, None)


_LOWER_NAMES = ("mm", "matmul", "bmm", "addmm", "baddbmm", "addbmm",
                "conv1d", "conv2d", "conv3d", "conv_tbc", "einsum",
                "tensordot", "chain_matmul")

LOWER_FUNCTIONS = _present(
    *(_g(torch, n) for n in _LOWER_NAMES),
    *(_g(F, n) for n in _LOWER_NAMES),
    F.linear, _g(torch._C._nn, "linear"), operator.matmul,
    _g(torch.linalg, "multi_dot"), _g(torch.linalg, "matmul"),
    # (composites whose every floating op is a product: inner, matrix_power)
    _g(torch, "inner"), _g(torch, "matrix_power"),
    _g(torch.linalg, "matrix_power"))

LOWER_METHODS = {"mm", "matmul", "bmm", "addmm", "baddbmm", "addbmm",
                 "__matmul__", "__rmatmul__", "inner", "matrix_power"}

# Composites that autocast changes only in part (cov: the mean in float32,
# then a product in bfloat16): no cast of their arguments says what eager
# computes, so they are refused under autocast (a graph break runs them
# eagerly, under autocast).
REFUSED_FUNCTIONS = _present(_g(torch, "cov"), _g(torch, "corrcoef"))
REFUSED_METHODS = {"cov", "corrcoef"}

LOWER_MODULES = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d,
                 nn.MultiheadAttention)

_FP32_F = ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "poisson_nll_loss",
           "gaussian_nll_loss",
           "hinge_embedding_loss", "soft_margin_loss", "margin_ranking_loss",
           "cosine_embedding_loss", "triplet_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "max_pool3d", "max_pool3d_with_indices",
           "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "fractional_max_pool2d", "fractional_max_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "grid_sample",
           "ctc_loss")
_FP32_TORCH = ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
               "prod", "cdist", "trace", "max_pool3d", "avg_pool3d",
               "adaptive_avg_pool3d", "adaptive_max_pool3d", "grid_sampler",
               "quantile", "nanquantile", "cholesky", "inverse", "pinverse",
               "stft", "polar", "kl_div", "binary_cross_entropy_with_logits",
               "poisson_nll_loss", "hinge_embedding_loss",
               "margin_ranking_loss", "cosine_embedding_loss",
               "triplet_margin_loss", "ctc_loss")
_FP32_LINALG = ("matrix_norm", "det", "slogdet", "inv", "cholesky", "svd",
                "svdvals", "eig", "eigvals", "eigh", "eigvalsh", "lstsq",
                "solve", "qr", "pinv", "matrix_rank", "cond")

FP32_FUNCTIONS = _present(
    *(_g(F, n) for n in _FP32_F), *(_g(torch, n) for n in _FP32_TORCH),
    *(_g(torch.linalg, n) for n in _FP32_LINALG),
    *(_g(torch._C._nn, n) for n in (
        "cross_entropy_loss", "nll_loss", "nll_loss2d", "nll_loss_nd",
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
        "binary_cross_entropy", "soft_margin_loss", "multilabel_margin_loss",
        "multi_margin_loss", "avg_pool3d", "adaptive_avg_pool3d",
        "adaptive_max_pool3d", "max_pool3d_with_indices", "max_unpool2d",
        "max_unpool3d", "reflection_pad1d", "reflection_pad2d",
        "replication_pad1d", "replication_pad2d", "replication_pad3d",
        "fractional_max_pool2d", "fractional_max_pool3d")))

FP32_METHODS = {"prod", "trace", "cholesky", "inverse", "pinverse",
                "quantile", "nanquantile", "stft"}

FP32_MODULES = tuple(c for c in (
    nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d,
    nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool3d,
    nn.FractionalMaxPool2d, nn.FractionalMaxPool3d,
    nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d,
    nn.ReflectionPad1d, nn.ReflectionPad2d,
    nn.ReplicationPad1d, nn.ReplicationPad2d, nn.ReplicationPad3d,
    nn.CrossEntropyLoss, nn.NLLLoss, nn.MSELoss, nn.L1Loss, nn.SmoothL1Loss,
    nn.HuberLoss, nn.KLDivLoss, nn.BCELoss, nn.BCEWithLogitsLoss,
    nn.PoissonNLLLoss, nn.GaussianNLLLoss, nn.HingeEmbeddingLoss,
    nn.SoftMarginLoss, nn.MarginRankingLoss, nn.CosineEmbeddingLoss,
    nn.TripletMarginLoss, nn.MultiLabelMarginLoss,
    nn.MultiLabelSoftMarginLoss, nn.MultiMarginLoss, nn.CTCLoss)
    if c is not None)


def _pad_policy(args, kwargs):
    """F.pad: reflection padding of 1-D and 2-D (2 or 4 pad entries) and
    replication padding run in float32; constant, circular and 3-D
    reflection padding follow their input."""
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    pad = kwargs.get("pad", args[1] if len(args) > 1 else ())
    if mode == "replicate":
        return FP32
    if mode == "reflect" and len(pad) in (2, 4):
        return FP32
    return None


# The tables by lookup: torch callable -> policy, Tensor method -> policy.
_BY_FUNCTION = {**{t: REFUSED for t in REFUSED_FUNCTIONS},
                **{t: FP32 for t in FP32_FUNCTIONS},
                **{t: LOWER for t in LOWER_FUNCTIONS}}
_BY_METHOD = {**{t: REFUSED for t in REFUSED_METHODS},
              **{t: FP32 for t in FP32_METHODS},
              **{t: LOWER for t in LOWER_METHODS}}


def policy(node, root, args, kwargs):
    """LOWER, FP32, REFUSED or None (the op follows its arguments' dtypes)
    for an op node made under CPU autocast."""
    t = node.target
    if node.op == "call_function":
        if t is F.pad or t is _g(torch._C._nn, "pad"):
            return _pad_policy(args, kwargs)
        try:
            return _BY_FUNCTION.get(t)
        except TypeError:  # unhashable target
            return None
    if node.op == "call_method":
        return _BY_METHOD.get(t)
    if node.op == "call_module":
        m = root.get_submodule(t)
        if isinstance(m, LOWER_MODULES):
            return LOWER
        if isinstance(m, FP32_MODULES):
            return FP32
    return None


def target_dtype(pol, autocast_dtype):
    return autocast_dtype if pol == LOWER else torch.float32


def eligible(dtype, target):
    """Whether autocast casts a tensor of `dtype` for a policy casting to
    `target`: floating, not float64, not already `target`."""
    return (dtype.is_floating_point and dtype != torch.float64
            and dtype != target)


def cast_args(b, pol, autocast_dtype, args, kwargs, is_tensor, cast):
    """args and kwargs with every eligible tensor (in lists and tuples too:
    einsum's operands, multi_dot's list) cast for the policy."""
    target = target_dtype(pol, autocast_dtype)

    def conv(v):
        if is_tensor(v) and not v.scalar and eligible(v.dtype, target):
            return cast(b, v, target)
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(conv(x) for x in v)
        return v

    return (tuple(conv(a) for a in args),
            {k: conv(v) for k, v in kwargs.items()})
