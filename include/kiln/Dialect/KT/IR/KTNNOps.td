//===- KTNNOps.td - kt NN ops --------------------------*- tablegen -*-===//
//
// Part of Kiln. Linear algebra (matmul, linear), convolution (conv2d, conv_transpose2d),
// pooling (max_pool2d, avg_pool2d and their backward ops) and embedding lookup, each with the
// semantics of the PyTorch op of the same name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTNNOPS_TD
#define KILN_DIALECT_KT_IR_KTNNOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// An NN op whose result type is computed by `::kiln::kt::infer<Name>` in
// KTNNOps.cpp.
class KT_NNOp<string mnemonic, string inferFn, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, traits> {
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::}] # inferFn # [{(ctx, loc, getOperationName(),
                                              adaptor, types);
    }
  }];
}

def KT_MatmulOp : KT_NNOp<"matmul", "inferMatmul", [KT_ContractionTrait]> {
  let summary = "matrix product with torch.matmul rank rules (torch.matmul)";
  let description = [{
    The matrix product of `self` and `other` following `torch.matmul`:

    * 1-D x 1-D: dot product, a rank-0 result.
    * 2-D x 2-D: the matrix product `[M, K] x [K, N] -> [M, N]`.
    * 1-D x N-D (N >= 2): `self` is treated as `[1, K]`; the prepended dim is
      removed from the result.
    * N-D x 1-D (N >= 2): `other` is treated as `[K, 1]`; the appended dim is
      removed from the result.
    * Otherwise a batched product: the batch dims (all but the last two) are
      broadcast like NumPy; result `batch + [M, N]`.

    Constraints:

    1. `self` and `other` have rank >= 1 and share an element type (float or
       i32/i64; not i1).
    2. The contracting dims (last of `self`, second to last of `other`, or the
       only dim of a 1-D operand) are equal. A `?` contracting dim is checked
       when the op runs.
    3. The batch dims are broadcast-compatible.

    Integer products wrap on overflow like PyTorch. A zero-size contracting
    dim gives zeros.

    ```mlir
    %r = kt.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
    ```
  }];
  let arguments = (ins KT_NumericTensor:$self, KT_NumericTensor:$other);
}

def KT_LinearOp : KT_NNOp<"linear", "inferLinear", [KT_ContractionTrait]> {
  let summary = "affine map y = input @ weight^T + bias (torch.nn.functional.linear)";
  let description = [{
    `result = input @ weight^T + bias` with `input` of shape
    `[..., in_features]`, `weight` of shape `[out_features, in_features]` and
    the optional `bias` of shape `[out_features]`; the result has shape
    `[..., out_features]`.

    Constraints:

    1. Operands are float tensors of one element type.
    2. `input` has rank >= 1; `weight` has rank 2; `bias`, when present, has
       rank 1.
    3. `input`'s last dim equals `weight`'s dim 1 (`in_features`).
    4. `bias`'s size equals `weight`'s dim 0 (`out_features`).

    `?` dims in rules 3 and 4 are checked when the op runs.

    ```mlir
    %r = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input, KT_FloatTensor:$weight,
                   Optional<KT_FloatTensor>:$bias);
}

def KT_Conv2dOp : KT_NNOp<"conv2d", "inferConv2d", [KT_ContractionTrait]> {
  let summary = "2-D convolution (torch.nn.functional.conv2d)";
  let description = [{
    A 2-D cross-correlation of `input` (`[N, C, H, W]`, or unbatched
    `[C, H, W]`) with `weight` (`[O, C / groups, kH, kW]`) plus the optional
    `bias` (`[O]`). The result is `[N, O, OH, OW]` (or `[O, OH, OW]`) with
    `OH = floor((H + 2 * padding[0] - dilation[0] * (kH - 1) - 1) / stride[0]) + 1`
    and likewise for `OW`.

    Attributes (each list has 2 entries `[h, w]`, or 1 entry used for both):
    `stride` (default `[1, 1]`), `padding` (default `[0, 0]`, zero padding),
    `dilation` (default `[1, 1]`), `groups` (default 1).

    Constraints:

    1. Operands are float tensors of one element type.
    2. `input` has rank 3 or 4; `weight` has rank 4; `bias` has rank 1.
    3. `stride`, `padding`, `dilation` have 1 or 2 entries; stride and
       dilation are >= 1, padding >= 0; `groups` >= 1.
    4. The input channels `C` are divisible by `groups` and
       `C / groups` equals `weight`'s dim 1.
    5. `O` is divisible by `groups`; `bias`'s size equals `O`.
    6. The (padded) input is at least as large as the dilated kernel, so the
       output size is >= 1.

    `?` dims are checked when the op runs.

    ```mlir
    %r = kt.conv2d %x, %w, %b {padding = [1, 1], stride = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input, KT_FloatTensor:$weight,
                   Optional<KT_FloatTensor>:$bias,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   OptionalAttr<I64ArrayAttr>:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
    ::llvm::SmallVector<int64_t, 2> getDilationHW();
  }];
}

def KT_ConvTranspose2dOp
    : KT_NNOp<"conv_transpose2d", "inferConvTranspose2d", [KT_ContractionTrait]> {
  let summary = "2-D transposed convolution (torch.nn.functional.conv_transpose2d)";
  let description = [{
    The adjoint of `kt.conv2d` with respect to its input (a "deconvolution"):
    `input` (`[N, C_in, H, W]`, or unbatched `[C_in, H, W]`), `weight`
    (`[C_in, C_out / groups, kH, kW]`) and the optional `bias` (`[C_out]`).
    Each input element scatters `input[n, c, h, w] * weight[c, o, i, j]` to
    output position `(h * stride[0] - padding[0] + i * dilation[0],
    w * stride[1] - padding[1] + j * dilation[1])` of channel
    `g * C_out / groups + o` (`g = c / (C_in / groups)`). The result is
    `[N, C_out, OH, OW]` (or `[C_out, OH, OW]`) with
    `OH = (H - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kH - 1) + output_padding[0] + 1`
    and likewise for `OW`.

    Attributes (each list has 2 entries `[h, w]`, or 1 entry used for both):
    `stride` (default `[1, 1]`), `padding` (default `[0, 0]`),
    `output_padding` (default `[0, 0]`), `dilation` (default `[1, 1]`),
    `groups` (default 1).

    Constraints:

    1. Operands are float tensors of one element type.
    2. `input` has rank 3 or 4; `weight` has rank 4; `bias` has rank 1.
    3. `stride`, `padding`, `output_padding`, `dilation` have 1 or 2
       entries; stride and dilation are >= 1, padding and output_padding
       >= 0; `groups` >= 1.
    4. `output_padding` is smaller than `stride` or `dilation` (PyTorch's
       rule).
    5. The input channels `C_in` equal `weight`'s dim 0 and are divisible by
       `groups`.
    6. `bias`'s size equals `C_out = weight.shape[1] * groups`.
    7. The output size is >= 1.

    `?` dims are checked when the op runs.

    ```mlir
    %r = kt.conv_transpose2d %x, %w, %b {output_padding = [1, 1], padding = [1, 1], stride = [2, 2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$input, KT_FloatTensor:$weight,
                   Optional<KT_FloatTensor>:$bias,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   OptionalAttr<I64ArrayAttr>:$output_padding,
                   OptionalAttr<I64ArrayAttr>:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
    ::llvm::SmallVector<int64_t, 2> getOutputPaddingHW();
    ::llvm::SmallVector<int64_t, 2> getDilationHW();
  }];
}

def KT_MaxPool2dOp : KT_NNOp<"max_pool2d", "inferMaxPool2d", [KT_ReductionTrait]> {
  let summary = "2-D max pooling (torch.nn.functional.max_pool2d)";
  let description = [{
    The maximum over each (dilated) window of `self` (`[N, C, H, W]` or
    `[C, H, W]`). Padding positions are not part of any window (implicit
    -inf). NaN propagates: a window holding a NaN yields NaN; `-0.0 < +0.0`
    (`kt.maximum`). Only the values
    are returned (`return_indices=False`).

    `OH = floor_or_ceil((H + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1) / stride[0]) + 1`;
    with `ceil_mode`, the last window is dropped when it would start at or past
    `H + padding[0]` (PyTorch's rule). Likewise for `OW`.

    Attributes (2 entries `[h, w]`, or 1 used for both): `kernel_size`
    (required), `stride` (default, also when empty: `kernel_size`), `padding`
    (default `[0, 0]`), `dilation` (default `[1, 1]`); `ceil_mode` (default
    false).

    Constraints:

    1. `self` is a float tensor of rank 3 or 4.
    2. Each list attribute has 1 or 2 entries (`stride` may be empty);
       `kernel_size`, `stride`, `dilation` are >= 1, `padding` >= 0.
    3. `padding` is at most half of `kernel_size`.
    4. The output size is >= 1.

    ```mlir
    %r = kt.max_pool2d %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$self,
                   I64ArrayAttr:$kernel_size,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   OptionalAttr<I64ArrayAttr>:$dilation,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getKernelHW();
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
    ::llvm::SmallVector<int64_t, 2> getDilationHW();
  }];
}

def KT_AvgPool2dOp : KT_NNOp<"avg_pool2d", "inferAvgPool2d", [KT_ReductionTrait]> {
  let summary = "2-D average pooling (torch.nn.functional.avg_pool2d)";
  let description = [{
    The average over each window of `self` (`[N, C, H, W]` or `[C, H, W]`),
    zero padded by `padding`. Output size as for `kt.max_pool2d` (dilation 1).
    The divisor of a window that starts at `hs = oh * stride - pad` is, as in
    PyTorch:

    * `divisor_override` when given;
    * else with `count_include_pad` (default true): the window size clipped to
      the padded input, `(min(hs + kH, H + padH) - hs) * (...)`;
    * else the number of input (non-padding) elements in the window.

    A window with no input element (possible with `ceil_mode`) yields 0.
    For `i64` (as PyTorch on CPU; PyTorch has no other integer avg_pool2d)
    the window sum wraps on overflow and is divided with truncation toward
    zero.

    Attributes: `kernel_size` (required), `stride` (default, also when empty:
    `kernel_size`), `padding` (default `[0, 0]`), `ceil_mode` (default false),
    `count_include_pad` (default true), `divisor_override` (optional).

    Constraints:

    1. `self` is a float or `i64` tensor of rank 3 or 4.
    2. Each list attribute has 1 or 2 entries (`stride` may be empty);
       `kernel_size` and `stride` are >= 1, `padding` >= 0.
    3. `padding` is at most half of `kernel_size`.
    4. `divisor_override`, when given, is not 0.
    5. The output size is >= 1.

    ```mlir
    %r = kt.avg_pool2d %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, F64, F16, BF16, I64]>:$self,
                   I64ArrayAttr:$kernel_size,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                   OptionalAttr<I64Attr>:$divisor_override);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getKernelHW();
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
  }];
}

def KT_MaxPool2dBackwardOp
    : KT_NNOp<"max_pool2d_backward", "inferMaxPool2dBackward", [KT_ReductionTrait]> {
  let summary = "gradient of kt.max_pool2d (aten max_pool2d_with_indices_backward)";
  let description = [{
    The input gradient of `kt.max_pool2d(self)` with the same attributes for
    the output gradient `grad_output`: each `grad_output` element is added at
    the position of its window's maximum, chosen as PyTorch's CPU kernel
    does (the indices that `max_pool2d_with_indices` would return): the
    window's in-bounds positions in row-major order, a position taking over
    when its value is greater than the running maximum or is NaN (so the
    first maximum, or the last NaN); a window whose values are all `-inf`
    sends its gradient to its first in-bounds position. The result has
    `self`'s shape and element type.

    Attributes as `kt.max_pool2d`.

    Constraints:

    1. `grad_output` and `self` are float tensors of one element type and
       of rank 3 or 4 (the same rank).
    2. The attributes satisfy `kt.max_pool2d`'s rules for `self`.
    3. `grad_output` has the shape of `kt.max_pool2d(self)` (a `?` dim is
       checked when the op runs).

    ```mlir
    %r = kt.max_pool2d_backward %g, %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$grad_output, KT_FloatTensor:$self,
                   I64ArrayAttr:$kernel_size,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   OptionalAttr<I64ArrayAttr>:$dilation,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getKernelHW();
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
    ::llvm::SmallVector<int64_t, 2> getDilationHW();
  }];
}

def KT_AvgPool2dBackwardOp
    : KT_NNOp<"avg_pool2d_backward", "inferAvgPool2dBackward", [KT_ReductionTrait]> {
  let summary = "gradient of kt.avg_pool2d (aten avg_pool2d_backward)";
  let description = [{
    The input gradient of `kt.avg_pool2d(self)` with the same attributes for
    the output gradient `grad_output`: every input position of a window
    receives `grad_output / divisor` of that window, the divisor being the
    forward's (`divisor_override`, `count_include_pad`, windows clipped to
    the padded input; a window with no input element contributes nothing).
    Only `self`'s shape is read. The result has `self`'s shape and element
    type.

    Attributes as `kt.avg_pool2d`.

    Constraints:

    1. `grad_output` and `self` are float tensors of one element type and
       of rank 3 or 4 (the same rank).
    2. The attributes satisfy `kt.avg_pool2d`'s rules for `self`.
    3. `grad_output` has the shape of `kt.avg_pool2d(self)` (a `?` dim is
       checked when the op runs).

    ```mlir
    %r = kt.avg_pool2d_backward %g, %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$grad_output, KT_FloatTensor:$self,
                   I64ArrayAttr:$kernel_size,
                   OptionalAttr<I64ArrayAttr>:$stride,
                   OptionalAttr<I64ArrayAttr>:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                   OptionalAttr<I64Attr>:$divisor_override);
  let extraClassDeclaration = [{
    /// The attributes as [h, w] pairs with the defaults applied.
    ::llvm::SmallVector<int64_t, 2> getKernelHW();
    ::llvm::SmallVector<int64_t, 2> getStrideHW();
    ::llvm::SmallVector<int64_t, 2> getPaddingHW();
  }];
}

def KT_EmbeddingOp : KT_NNOp<"embedding", "inferEmbedding", [KT_ShapeTrait]> {
  let summary = "table lookup (torch.nn.functional.embedding)";
  let description = [{
    `result[i..., :] = weight[indices[i...], :]`: gathers rows of `weight`
    (`[num_embeddings, embedding_dim]`); the result has shape
    `indices.shape + [embedding_dim]` and `weight`'s element type. A
    gather-like shape op (forward only: `padding_idx`, `max_norm` and the
    other training options of PyTorch do not change the forward values and
    are not modeled).

    Constraints:

    1. `weight` has rank 2; `indices` is i32 or i64 of any rank.

    Every index must be in `[0, num_embeddings)`; an index out of range is an
    error when the op runs (PyTorch raises too; negative indices are not
    wrapped).

    ```mlir
    %r = kt.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$weight, KT_IndexTensor:$indices);
}

#endif // KILN_DIALECT_KT_IR_KTNNOPS_TD
