//===- KTNormOps.td - kt Norm ops --------------------------*- tablegen -*-===//
//
// Part of Kiln. Softmax, normalization, losses and attention. All are
// composite ops: a decomposition pass expands them into primitives; the
// interpreter runs them directly (in double, rounded to the result dtype).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTNORMOPS_TD
#define KILN_DIALECT_KT_IR_KTNORMOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// A composite op whose result types are inferred by the C++ function
// `<inferFn>(loc, opName, adaptor, types)` of KTNormOps.cpp (which also holds
// every verifier rule).
class KT_NormOp<string mnemonic, string inferFn, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_CompositeTrait])> {
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return }] # inferFn # [{(loc, getOperationName(), adaptor, types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

def KT_SoftmaxOp : KT_NormOp<"softmax", "inferSoftmaxLike"> {
  let summary = "softmax along a dim (torch.softmax)";
  let description = [{
    `result = exp(self - max) / sum(exp(self - max))` along `dim`, where `max`
    is the maximum along `dim` (numerically stable). A slice that is all
    `-inf` gives NaN, and a NaN makes its whole slice NaN, as in PyTorch.
    The sum accumulates in `f64` (the dialect's accumulation rule).

    1. `self` is a float tensor (any rank; rank 0 gives 1).
    2. `dim` is in `[-rank, rank)` (rank 0 accepts -1 and 0).

    The result has the type of `self`.

    ```mlir
    %r = kt.softmax %x {dim = -1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$self, I64Attr:$dim);
  let results = (outs KT_FloatTensor:$result);
}

def KT_LogSoftmaxOp : KT_NormOp<"log_softmax", "inferSoftmaxLike"> {
  let summary = "log of softmax along a dim (torch.log_softmax)";
  let description = [{
    `result = self - max - log(sum(exp(self - max)))` along `dim`.
    Slices that are all `-inf`, or contain NaN, give NaN as in PyTorch.
    The sum accumulates in `f64` (the dialect's accumulation rule).

    1. `self` is a float tensor (any rank; rank 0 gives 0).
    2. `dim` is in `[-rank, rank)` (rank 0 accepts -1 and 0).

    ```mlir
    %r = kt.log_softmax %x {dim = 1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$self, I64Attr:$dim);
  let results = (outs KT_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// layer_norm, batch_norm
//===----------------------------------------------------------------------===//

def KT_LayerNormOp : KT_NormOp<"layer_norm", "inferLayerNorm",
                               [AttrSizedOperandSegments]> {
  let summary = "layer normalization (torch.nn.functional.layer_norm)";
  let description = [{
    Normalizes over the trailing `len(normalized_shape)` dims of `input`:
    `result = (input - mean) / sqrt(var + eps) * weight + bias`, with the
    biased variance; the sums of the mean and the variance accumulate in
    `f64` (the dialect's accumulation rule). `weight` and `bias` are optional (absent: 1 and 0); in
    the custom form each is introduced by its keyword, so either may be
    left out (the generic form carries
    `operandSegmentSizes = array<i32: 1, W, B>`).

    1. `input`, `weight` and `bias` share a float element type.
    2. `normalized_shape` is not empty and has at most rank(input) entries.
    3. `normalized_shape` equals the trailing dims of `input` (a `?` dim is
       checked at run time).
    4. `weight` and `bias`, when present, have shape `normalized_shape`.

    ```mlir
    %r = kt.layer_norm %x weight %w bias %b {normalized_shape = [4], eps = 1.0e-05 : f64}
        : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %n = kt.layer_norm %x bias %b {normalized_shape = [4]}
        : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input,
                       Optional<KT_FloatTensor>:$weight,
                       Optional<KT_FloatTensor>:$bias,
                       I64ArrayAttr:$normalized_shape,
                       DefaultValuedAttr<F64Attr, "1e-5">:$eps);
  let results = (outs KT_FloatTensor:$result);
  // Two optional operands: keywords say which are present.
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def KT_BatchNormOp : KT_NormOp<"batch_norm", "inferBatchNorm",
                               [AttrSizedOperandSegments]> {
  let summary = "batch normalization, inference form "
                "(torch.nn.functional.batch_norm with training=False)";
  let description = [{
    The inference form of batch normalization over channel dim 1:
    `result = (input - running_mean[c]) / sqrt(running_var[c] + eps)
              * weight[c] + bias[c]`.
    `weight` and `bias` are optional (absent: 1 and 0). Training mode (batch
    statistics) is `kt.batch_norm_train`, whose gradient is
    `kt.batch_norm_backward`; the running statistics' update is the
    frontend's (kt arithmetic on `save_mean` / `save_invstd`). In
    the custom form `weight` and `bias` are introduced by their keywords (the
    generic form carries `operandSegmentSizes = array<i32: 1, 1, 1, W, B>`).

    1. `input` has rank >= 2 (`[N, C, ...]`).
    2. All operands share a float element type.
    3. `running_mean`, `running_var`, `weight` and `bias` have shape `[C]`.

    ```mlir
    %r = kt.batch_norm %x, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
    %s = kt.batch_norm %x, %m, %v weight %w bias %b {eps = 1.0e-03 : f64}
        : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input,
                       KT_FloatTensor:$running_mean,
                       KT_FloatTensor:$running_var,
                       Optional<KT_FloatTensor>:$weight,
                       Optional<KT_FloatTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1e-5">:$eps);
  let results = (outs KT_FloatTensor:$result);
  // Two optional operands: keywords say which are present.
  let assemblyFormat = [{
    $input `,` $running_mean `,` $running_var (`weight` $weight^)?
    (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

// Training-mode batch normalization: whole ops for the forward (batch
// statistics) and the backward. They are per-channel reductions followed by
// one pointwise pass (kind reduction, not composite: nothing decomposes
// them; the CPU lowers them directly).
class KT_NormReductionOp<string mnemonic, string inferFn,
                         list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_ReductionTrait])> {
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return }] # inferFn # [{(loc, getOperationName(), adaptor, types);
    }
  }];
}

def KT_BatchNormTrainOp : KT_NormReductionOp<"batch_norm_train",
                                             "inferBatchNormTrain",
                                             [AttrSizedOperandSegments]> {
  let summary = "batch normalization with batch statistics "
                "(aten native_batch_norm with training=True)";
  let description = [{
    Normalizes `input` (`[N, C, *]`) per channel (dim 1) with the statistics
    of the batch: over every dim but 1 (`M = N * prod(*)` elements per
    channel), `save_mean[c] = mean(input[:, c])`, the biased variance
    `var[c] = mean((input[:, c] - save_mean[c])^2)` (two passes, not
    `E[x^2] - E[x]^2`), `save_invstd[c] = 1 / sqrt(var[c] + eps)` and
    `result = (input - save_mean[c]) * save_invstd[c] * weight[c] + bias[c]`.
    `weight` and `bias` are optional (absent: 1 and 0); in the custom form
    each is introduced by its keyword (the generic form carries
    `operandSegmentSizes = array<i32: 1, W, B>`). `save_mean` and
    `save_invstd` are what `kt.batch_norm_backward` takes; the running
    statistics are not this op's business (a frontend updates them from
    `save_mean` and the unbiased variance `(1 / save_invstd^2 - eps) * M /
    (M - 1)`). The sums accumulate in `f64` (the dialect's accumulation
    rule); `f16`/`bf16` inputs compute in `f32`. An input with `M = 0`
    gives NaN statistics (PyTorch refuses `M = 1` in its frontend).

    1. `input` has rank >= 2 (`[N, C, ...]`); `N`, `C` and the other dims
       may be `?`.
    2. `weight` and `bias`, when present, have shape `[C]` and the element
       type of `input`.

    `result` has the type of `input`; `save_mean` and `save_invstd` have
    shape `[C]` and the statistics type: `f64` for an `f64` input, else
    `f32` (as PyTorch's accumulate type).

    ```mlir
    %y, %m, %r = kt.batch_norm_train %x weight %w bias %b {eps = 1.0e-03 : f64}
        : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input,
                       Optional<KT_FloatTensor>:$weight,
                       Optional<KT_FloatTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1e-5">:$eps);
  let results = (outs KT_FloatTensor:$result, KT_FloatTensor:$save_mean,
                      KT_FloatTensor:$save_invstd);
  // Two optional operands: keywords say which are present.
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def KT_BatchNormBackwardOp : KT_NormReductionOp<"batch_norm_backward",
                                                "inferBatchNormBackward",
                                                [AttrSizedOperandSegments]> {
  let summary = "gradient of kt.batch_norm_train "
                "(aten native_batch_norm_backward with train=True)";
  let description = [{
    The gradients of `kt.batch_norm_train` given the gradient `grad_output`
    of its `result`, its `input`, `weight` (optional: absent is 1) and its
    `save_mean` / `save_invstd`. With `M` the elements per channel,
    `xhat = (input - save_mean[c]) * save_invstd[c]`, per channel
    `sum_dy[c] = sum(grad_output[:, c])` and
    `dot[c] = sum(grad_output[:, c] * (input[:, c] - save_mean[c]))`:

    * `grad_input = (grad_output - sum_dy[c] / M - xhat * dot[c] *
      save_invstd[c] / M) * save_invstd[c] * weight[c]`;
    * `grad_weight = dot * save_invstd` (the gradient of `weight`, also
      when `weight` is absent);
    * `grad_bias = sum_dy`.

    All three are always produced (the two reductions that `grad_input`
    needs are `grad_bias` and `grad_weight`, so none costs extra); a result
    without uses is simply not read. The sums accumulate in `f64` (the
    dialect's accumulation rule); `f16`/`bf16` compute in `f32`.

    `activation` (default `none`) folds in the gradient of an activation
    applied to the forward's result: `grad_output` is then the gradient of
    the activation's result, and every `grad_output` above (both sums and
    `grad_input`) reads `grad_output` where the mask holds and 0 elsewhere.
    The mask is taken on the forward's result recomputed from the operands,
    `y = (input - save_mean[c]) * save_invstd[c] * weight[c] + bias[c]`
    (rounded to the element type, as the forward stores it): `relu` keeps
    `y > 0` (`kt.relu`'s rule, threshold_backward), `relu6` keeps
    `0 <= y <= 6` (the rule of `kt.clamp` with min 0 and max 6, which is
    how `F.relu6` / `F.hardtanh(0, 6)` are captured; PyTorch's
    hardtanh_backward drops the two end points as well). `bias` (optional:
    absent is 0) is read only by the mask. kiln-autodiff emits this form
    for `kt.batch_norm_train` followed by `kt.relu` or `kt.clamp` 0..6 (see
    docs/codegen.md, "Convolution training, round 10"): the backward then
    reads neither the forward's result nor a separate mask.


    1. `input` has rank >= 2 (`[N, C, ...]`).
    2. `grad_output` has the shape and element type of `input` (a `?` dim
       is checked at run time).
    3. `save_mean` and `save_invstd` have shape `[C]` and the statistics
       type of `kt.batch_norm_train` (`f64` for an `f64` input, else `f32`).
    4. `weight` and `bias`, when present, have shape `[C]` and the element
       type of `input`.
    5. `bias` is given only with an `activation` other than `none` (nothing
       else reads it).

    `grad_input` has the type of `input`; `grad_weight` and `grad_bias`
    have shape `[C]` and the element type of `input`. In the custom form
    `weight` and `bias` are introduced by their keywords (the generic form
    carries `operandSegmentSizes = array<i32: 1, 1, 1, 1, W, B>`).

    ```mlir
    %gx, %gw, %gb = kt.batch_norm_backward %gy, %x, %m, %r weight %w
        : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
    %hx, %hw, %hb = kt.batch_norm_backward %gy, %x, %m, %r weight %w bias %b {activation = #kt.activation<relu6>}
        : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins KT_FloatTensor:$grad_output, KT_FloatTensor:$input,
                       KT_FloatTensor:$save_mean, KT_FloatTensor:$save_invstd,
                       Optional<KT_FloatTensor>:$weight,
                       Optional<KT_FloatTensor>:$bias,
                       DefaultValuedAttr<KT_NormActivationAttr,
                         "::kiln::kt::NormActivation::none">:$activation);
  let results = (outs KT_FloatTensor:$grad_input, KT_FloatTensor:$grad_weight,
                      KT_FloatTensor:$grad_bias);
  // Two optional operands: keywords say which are present.
  let assemblyFormat = [{
    $grad_output `,` $input `,` $save_mean `,` $save_invstd
    (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def KT_NllLossOp : KT_NormOp<"nll_loss", "inferNllLoss"> {
  let summary = "negative log likelihood loss (torch.nn.functional.nll_loss)";
  let description = [{
    `input` holds log-probabilities with the class dim at 1 (`[N, C]`,
    `[N, C, d1, ...]`) or 0 (`[C]`); `target` holds class indices (`[N]`,
    `[N, d1, ...]`, `[]`). Each element's loss is `-weight[t] * input[.., t, ..]`
    (0 where `t == ignore_index`). `reduction`: `none` gives the losses (shape
    of `target`), `sum` their sum, `mean` their sum divided by the sum of
    `weight[t]` over non-ignored elements (NaN when all are ignored).
    A target outside `[0, C)` that is not `ignore_index` is a run-time error.

    1. `input` is a float tensor of rank >= 1; `target` is `i64` or `i32`.
    2. `target` has rank 0 when `input` has rank 1, else the shape of `input`
       without dim 1.
    3. `weight`, when present, has shape `[C]` and the element type of
       `input`.

    ```mlir
    %r = kt.nll_loss %x, %t {reduction = #kt.reduction<sum>, ignore_index = 0}
        : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input, KT_IndexTensor:$target,
                       Optional<KT_FloatTensor>:$weight,
                       DefaultValuedAttr<KT_ReductionAttr,
                                         "::kiln::kt::Reduction::mean">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs KT_FloatTensor:$result);
}

def KT_CrossEntropyOp : KT_NormOp<"cross_entropy", "inferCrossEntropy"> {
  let summary = "cross entropy loss on logits "
                "(torch.nn.functional.cross_entropy)";
  let description = [{
    `input` holds unnormalized logits laid out as for `kt.nll_loss` (class dim
    1, or 0 for rank 1). `target` is either class indices (integer; as
    `kt.nll_loss` on `log_softmax(input)`) or class probabilities (float, same
    shape as `input`). `label_smoothing` mixes the target with the uniform
    distribution exactly as PyTorch does, including its treatment of `weight`
    and `ignore_index` (class-index targets) and of `mean` (probability
    targets: divided by the number of elements without the class dim).

    1. `input` is a float tensor of rank >= 1.
    2. Integer `target`: shape as for `kt.nll_loss`.
    3. Float `target`: same shape and element type as `input`, and
       `ignore_index` is negative (PyTorch does not support it there).
    4. `weight`, when present, has shape `[C]` and the element type of `input`.
    5. `label_smoothing` is in `[0, 1]`.

    ```mlir
    %r = kt.cross_entropy %x, %t {label_smoothing = 1.000000e-01 : f64}
        : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input, KT_NumericTensor:$target,
                       Optional<KT_FloatTensor>:$weight,
                       DefaultValuedAttr<KT_ReductionAttr,
                                         "::kiln::kt::Reduction::mean">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs KT_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def KT_ScaledDotProductAttentionOp
    : KT_NormOp<"scaled_dot_product_attention", "inferSDPA"> {
  let summary = "scaled dot-product attention "
                "(torch.nn.functional.scaled_dot_product_attention)";
  let description = [{
    `result = softmax(query @ key^T * scale + bias, dim=-1) @ value` where
    `scale` defaults to `1/sqrt(E)` and `bias` comes from `attn_mask` (`i1`:
    false positions get `-inf`; float: added) or from `is_causal` (positions
    above the diagonal of `tril(ones(L, S))`, aligned top-left, get `-inf`).
    Rows with every position masked give NaN, as in PyTorch. The softmax's
    sum accumulates in `f64` (the dialect's accumulation rule). Batch dims of
    all operands broadcast like NumPy. Dropout is not supported
    (`dropout_p` must be 0): apply `kt.dropout` with an explicit seed.

    1. `query` `[..., L, E]`, `key` `[..., S, E]`, `value` `[..., S, Ev]` have
       rank >= 2 and share a float element type.
    2. `query` and `key` have the same `E`; `key` and `value` the same `S`.
    3. Batch dims (all but the last two) of all operands broadcast.
    4. `attn_mask` is `i1` or the element type of `query`, and broadcasts to
       `[..., L, S]`.
    5. `is_causal` and `attn_mask` are not both given.
    6. `dropout_p` is 0.

    The result is `[broadcast batch..., L, Ev]`.

    ```mlir
    %r = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true}
        : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$query, KT_FloatTensor:$key,
                       KT_FloatTensor:$value,
                       Optional<KT_Tensor>:$attn_mask,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs KT_FloatTensor:$result);
}

#endif // KILN_DIALECT_KT_IR_KTNORMOPS_TD
