//===- KTShapeOps.td - kt Shape ops --------------------------*- tablegen -*-===//
//
// Part of Kiln. Ops that rearrange, select or pad elements without arithmetic:
// reshape, transpose, permute, expand, squeeze, unsqueeze, slice, select,
// concat, stack, gather, scatter, index_select, pad, flip.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTSHAPEOPS_TD
#define KILN_DIALECT_KT_IR_KTSHAPEOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// A shape op whose result type is inferred by `inferShapeOp(ctx, loc,
// adaptor, types)`, overloaded per op in KTShapeOps.cpp (which also verifies).
class KT_ShapeOp<string mnemonic, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_ShapeTrait])> {
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferShapeOp(ctx, loc, adaptor, types);
    }
  }];
}

def KT_ReshapeOp : KT_ShapeOp<"reshape"> {
  let summary = "reshape (torch.reshape)";
  let description = [{
    The elements of `self` in row-major order, with the shape `shape`.

    An entry of `shape` is a static size (>= 0), -1 (the one size inferred
    from the element count), or -2: a size given at run time by the next
    `index` operand of `sizes` (in order). `sizes` carries symbolic sizes,
    such as a dim of `self` (`tensor.dim`) or a product of dims of the
    program's inputs (`arith.muli` of `tensor.dim`s): `x.view(B * T, C)` or
    `x.view(B, T, H, D)` with `B` and `T` both dynamic is one op with every
    size symbolic, where one -1 could only carry one of them.

    1. Every entry of `shape` is >= 0, -1 or -2, with at most one -1.
    2. The number of `sizes` operands equals the number of -2 entries.
    3. A -1 entry is ambiguous (rejected) when the other entries are static
       and multiply to 0 (with -2 entries: when they are 0 at run time).
    4. When `self` has a static shape and no entry is -2, its element count
       equals the product of `shape` (with -1 inferred: the count is
       divisible by the product of the other entries).

    A -2 entry is `?` in the result type unless its operand's value is known
    statically (a constant, `tensor.dim` of a static dim, arith add / sub /
    mul / div / rem of such values: the sizes of a capture whose dims are
    static in this program); a
    -1 entry is `?` when `self` has a `?` dim or `shape` has a -2 entry.
    Otherwise the element count is checked when the op runs ("not divisible"
    / "cannot reshape" runtime errors; a negative run-time size is an error).

    ```mlir
    %r = kt.reshape %x {shape = [3, -1]} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
    %x2 = kt.abs %y : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %b = tensor.dim %x2, %c0 : tensor<?x?x64xf32>
    %t = tensor.dim %x2, %c1 : tensor<?x?x64xf32>
    %bt = arith.muli %b, %t : index
    %m = kt.reshape %x2, %bt {shape = [-2, 64]} : (tensor<?x?x64xf32>, index) -> tensor<?x64xf32>
    %s = kt.reshape %m, %b, %t {shape = [-2, -2, 4, -1]} : (tensor<?x64xf32>, index, index) -> tensor<?x?x4x16xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, Variadic<Index>:$sizes,
                       I64ArrayAttr:$shape);
  let hasFolder = 1;
}

def KT_TransposeOp : KT_ShapeOp<"transpose"> {
  let summary = "swap two dims (torch.transpose)";
  let description = [{
    `self` with dims `dim0` and `dim1` swapped.

    1. `dim0` and `dim1` are in [-rank, rank) (a rank-0 tensor accepts 0 and -1).

    ```mlir
    %r = kt.transpose %x {dim0 = 0, dim1 = -1} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64Attr:$dim0, I64Attr:$dim1);
  let hasFolder = 1;
}

def KT_PermuteOp : KT_ShapeOp<"permute"> {
  let summary = "permute dims (torch.permute)";
  let description = [{
    Result dim `i` is dim `dims[i]` of `self`.

    1. `dims` has one entry per dim of `self`, each in [-rank, rank).
    2. `dims` is a permutation (no dim appears twice).

    ```mlir
    %r = kt.permute %x {dims = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64ArrayAttr:$dims);
  let hasFolder = 1;
}

def KT_ExpandOp : KT_ShapeOp<"expand"> {
  let summary = "broadcast to a larger shape (torch.Tensor.expand)";
  let description = [{
    `self` broadcast to `size`. The result is a fresh tensor (value semantics).

    1. `size` has at least as many entries as `self` has dims; extra entries
       are new leading dims.
    2. A new leading dim is >= 0 (-1 is not allowed there).
    3. For an existing dim, -1 keeps its size; otherwise the entry is >= 0
       and the dim of `self` is 1 or equal to it (a `?` dim is checked when
       the op runs).

    ```mlir
    %r = kt.expand %x {size = [2, -1, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64ArrayAttr:$size);
  let hasFolder = 1;
}

def KT_SqueezeOp : KT_ShapeOp<"squeeze"> {
  let summary = "remove size-1 dims (torch.squeeze)";
  let description = [{
    Removes the dims listed in `dim` whose size is 1 (a listed dim of another
    size is kept, as in PyTorch); without `dim`, removes every size-1 dim.

    1. Each entry of `dim` is in [-rank, rank) and appears once.

    A `?` dim is kept in the result type (its size is unknown). If a `?` dim
    that would be squeezed turns out to be 1 when the op runs, the op fails
    with a runtime error rather than return a result whose rank differs from
    PyTorch's.

    ```mlir
    %r = kt.squeeze %x {dim = [0]} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, OptionalAttr<I64ArrayAttr>:$dim);
}

def KT_UnsqueezeOp : KT_ShapeOp<"unsqueeze"> {
  let summary = "insert a size-1 dim (torch.unsqueeze)";
  let description = [{
    Inserts a dim of size 1 at position `dim` of the result.

    1. `dim` is in [-rank-1, rank] (negative counts from the end of the
       result).

    ```mlir
    %r = kt.unsqueeze %x {dim = -1} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64Attr:$dim);
}

def KT_SliceOp : KT_ShapeOp<"slice"> {
  let summary = "strided slice along one dim (torch.slice, x[start:end:step])";
  let description = [{
    Elements `start, start+step, ...` (< `end`) of `self` along `dim`, with
    Python slice rules: negative `start`/`end` count from the end, out-of-range
    values clamp to [0, size], `end < start` gives an empty dim. `start`
    defaults to 0 and `end` to the size of the dim.

    1. `self` has rank >= 1 and `dim` is in [-rank, rank).
    2. `step` is > 0.

    Dynamic bounds: with the unit attribute `dynamic_start` (`dynamic_end`)
    the start (end) is not the attribute but an `index` operand of `bounds`
    given at run time (the start first when both are dynamic), with the same
    rules (a negative value counts from the end, values clamp). `bounds`
    carries symbolic sizes such as `tensor.dim` of another input (GPT-2's
    causal mask `bias[:, :, :T, :T]` with `T = x.size(1)`), or arith of them
    (`T - 1`, `T floordiv 2`). `kt.slice_scatter` takes the same dynamic
    bounds (a write through such a slice, and this op's gradient).

    1. `self` has rank >= 1 and `dim` is in [-rank, rank).
    2. `step` is > 0.
    3. `bounds` has one operand per dynamic bound; a dynamic bound has no
       attribute (`dynamic_start` excludes `start`, `dynamic_end` excludes
       `end`).

    With a `?` dim the sliced dim is `?`; with a dynamic bound it is `?`
    unless the operand's value and the dim are known statically (a
    constant, `tensor.dim` of a static dim, arith of such values).

    ```mlir
    %r = kt.slice %x {dim = 1, start = 1, end = -1, step = 2} : (tensor<2x8xf32>) -> tensor<2x3xf32>
    %h = kt.slice %z, %t {dim = 1, dynamic_end} : (tensor<2x?xf32>, index) -> tensor<2x?xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, Variadic<Index>:$bounds,
                   DefaultValuedAttr<I64Attr, "0">:$dim,
                   OptionalAttr<I64Attr>:$start,
                   OptionalAttr<I64Attr>:$end,
                   DefaultValuedAttr<I64Attr, "1">:$step,
                   UnitAttr:$dynamic_start,
                   UnitAttr:$dynamic_end);
}

def KT_SelectOp : KT_ShapeOp<"select"> {
  let summary = "index one position of a dim, removing it (torch.select)";
  let description = [{
    `self` at position `index` of `dim`; the dim is removed.

    1. `self` has rank >= 1 and `dim` is in [-rank, rank).
    2. When the dim is static with size n, `index` is in [-n, n) (negative
       counts from the end). For a `?` dim it is checked when the op runs.

    ```mlir
    %r = kt.select %x {dim = 0, index = -1} : (tensor<2x3xf32>) -> tensor<3xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64Attr:$dim, I64Attr:$index);
}

def KT_ConcatOp : KT_ShapeOp<"concat"> {
  let summary = "concatenate along a dim (torch.cat)";
  let description = [{
    The operands joined along `dim`.

    1. There is at least one operand; operands share an element type.
    2. Operands have rank >= 1 and the same rank, except that (as in PyTorch)
       operands of type `tensor<0xT>` are ignored when other operands have
       another rank.
    3. `dim` is in [-rank, rank).
    4. All dims other than `dim` are equal (a `?` is checked when the op runs).

    ```mlir
    %r = kt.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<KT_Tensor>:$tensors,
                   DefaultValuedAttr<I64Attr, "0">:$dim);
}

def KT_StackOp : KT_ShapeOp<"stack"> {
  let summary = "stack along a new dim (torch.stack)";
  let description = [{
    The operands joined along a new dim inserted at `dim`.

    1. There is at least one operand; operands share an element type.
    2. All operands have the same shape (a `?` is checked when the op runs).
    3. `dim` is in [-rank-1, rank].

    ```mlir
    %r = kt.stack %a, %b {dim = -1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32>
    ```
  }];
  let arguments = (ins Variadic<KT_Tensor>:$tensors,
                   DefaultValuedAttr<I64Attr, "0">:$dim);
}

def KT_GatherOp : KT_ShapeOp<"gather"> {
  let summary = "gather along a dim (torch.gather)";
  let description = [{
    `result[i][j][k] = self[index[i][j][k]][j][k]` for `dim = 0` (and so on).
    The result has the shape of `index`.

    1. `dim` is in [-rank, rank) of `self`.
    2. `index` (i64 or i32) has the rank of `self` (rank 0 and rank 1 count as
       equal, as in PyTorch).
    3. Unless `index` is empty, `index.size(d) <= self.size(d)` for every
       `d != dim` (a `?` is checked when the op runs).

    Each index must be in [0, self.size(dim)); negative or larger indices are
    runtime errors (as torch.gather).

    ```mlir
    %r = kt.gather %x, %i {dim = 1} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_IndexTensor:$index, I64Attr:$dim);
}

def KT_ScatterOp : KT_ShapeOp<"scatter"> {
  let summary = "write or reduce src into self at indices along a dim (torch.scatter, scatter_add, scatter_reduce)";
  let description = [{
    A copy of `self` into which each element of `src` at a position `p` of
    `index` is combined: for `dim = 0`, `result[index[i][j]][j] <- src[i][j]`
    (and so on for other dims), visiting the positions of `index` in
    row-major order. `reduce` says how:

    * `none` (torch.scatter): the value is written; when an index repeats
      the last write in row-major order wins (PyTorch's CPU order; PyTorch
      calls the order undefined);
    * `sum` (torch.scatter_add, scatter_reduce "sum"), `prod`, `amax`,
      `amin`: the value is combined with what is there, in the element type
      (rounded at each step as PyTorch's CPU kernel; integers wrap; `amax`
      and `amin` propagate NaN; on i1 `sum`/`amax` are `or`, `prod`/`amin`
      are `and`);
    * `mean`: the sum divided by the number of values combined at that
      position (counting `self`'s own value when `include_self`), floor
      division for integers, as PyTorch.

    With `include_self = false` a position that some index names starts from
    the reduction's identity instead of `self`'s value (0 for sum/mean, 1 for
    prod, -inf / the lowest value for amax, +inf / the highest for amin);
    positions no index names keep `self`'s value. `include_self` applies to
    the reductions only.

    Scalar-value forms (`scatter(dim, index, value)`) use a `src` filled with
    the value. `index_add`, `index_copy` and `index_fill` are `kt.scatter`
    with `index` broadcast along `dim` (the Python importer builds them so).

    1. `dim` is in [-rank, rank) of `self`.
    2. `src` has the element type of `self`; `index` (i64 or i32), `self` and
       `src` have the same rank (rank 0 and rank 1 count as equal, as in
       PyTorch).
    3. Unless `index` is empty, `index.size(d) <= src.size(d)` for every `d`
       and `index.size(d) <= self.size(d)` for every `d != dim` (a `?` is
       checked when the op runs).
    4. `reduce = mean` needs a numeric (not i1) element type.
    5. The result has the type of `self`.

    Each index must be in [0, self.size(dim)); negative or larger indices are
    run-time errors at the op's location (as torch.scatter).

    ```mlir
    %r = kt.scatter %x, %i, %s {dim = 1 : i64, reduce = #kt.scatter_reduce<sum>, include_self = false} : (tensor<2x5xf32>, tensor<2x3xi64>, tensor<2x4xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_IndexTensor:$index, KT_Tensor:$src,
                   I64Attr:$dim,
                   DefaultValuedAttr<KT_ScatterReduceAttr,
                                     "::kiln::kt::ScatterReduce::none">:$reduce,
                   DefaultValuedAttr<BoolAttr, "true">:$include_self);
}

def KT_IndexSelectOp : KT_ShapeOp<"index_select"> {
  let summary = "select positions along a dim (torch.index_select)";
  let description = [{
    `self` restricted to positions `index` of `dim`; the dim of the result has
    `index`'s element count.

    1. `dim` is in [-rank, rank) of `self`.
    2. `index` (i64 or i32) has rank 0 or 1.
    3. When `self` has rank 0, `index` has one element.

    Each index must be in [0, self.size(dim)); negative or larger indices are
    runtime errors (as torch.index_select).

    ```mlir
    %r = kt.index_select %x, %i {dim = 0} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_IndexTensor:$index, I64Attr:$dim);
}

def KT_PadOp : KT_ShapeOp<"pad"> {
  let summary = "constant padding (torch.nn.functional.pad, mode='constant')";
  let description = [{
    `pad = [lo_last, hi_last, lo_prev, hi_prev, ...]` adds `lo` elements
    before and `hi` after each dim, starting from the last dim. Negative
    values crop, before any padding (as PyTorch, which narrows first). New
    elements are `value` (converted to the element type: truncated toward
    zero for integers, `value != 0` for i1).

    1. `pad` has an even number of entries, at most 2 * rank.
    2. The crops of each static dim (its negative amounts) take no more
       than it holds, even where its other amount pads (`[2, -1]` on a dim
       of size 0 is an error, as in PyTorch); a `?` dim is checked when the
       op runs (a run-time error in the interpreter and in compiled code).

    ```mlir
    %r = kt.pad %x {pad = [1, 2, -1, 0], value = 5.0 : f64} : (tensor<3x4xf32>) -> tensor<2x7xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64ArrayAttr:$pad,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
}

def KT_FlipOp : KT_ShapeOp<"flip"> {
  let summary = "reverse the order along dims (torch.flip)";
  let description = [{
    `self` with the elements reversed along each dim in `dims`.

    1. Each entry of `dims` is in [-rank, rank) and appears once.

    ```mlir
    %r = kt.flip %x {dims = [0, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64ArrayAttr:$dims);
}

def KT_CheckOp : KT_ShapeOp<"check"> {
  let summary = "self, after a run-time check of a condition on values";
  let description = [{
    `self` unchanged when every element of `cond` is true; otherwise a
    run-time error at the op's location with `message` (in the interpreter
    and in compiled code). The importer uses it for checks of values that a
    kt op's own semantics do not include, where PyTorch raises on the data:
    `embedding_bag`'s offsets (the first is 0, they do not decrease, none
    is past the end of the input). The checked value flows through the op,
    so the check stays as long as its result is used, and runs before the
    ops that use it. Its gradient is the identity for a float `self`.

    1. `cond` is an i1 tensor (any shape; an empty `cond` holds).
    2. `message` is not empty.
    3. The result has the type of `self`.

    ```mlir
    %r = kt.check %offsets, %ok {message = "offsets[0] has to be 0"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_BoolTensor:$cond, StrAttr:$message);
}

def KT_SliceScatterOp : KT_ShapeOp<"slice_scatter"> {
  let summary = "self with a strided slice replaced by src (torch.slice_scatter)";
  let description = [{
    A copy of `self` in which the elements `self[..., start:end:step, ...]`
    (along `dim`, the positions `kt.slice` with the same attributes reads) are
    replaced by `src`. The value form of a write through `kt.view_slice`
    (`kiln-functionalize` produces it).

    1. The attributes and the dynamic bounds (`index` operands after `src`
       with `dynamic_start` / `dynamic_end`) follow the rules of `kt.slice`.
    2. `src` has the element type of `self` and the shape of that slice (a
       `?` is checked when the op runs).

    The gradient of `kt.slice` with dynamic bounds is this op with the same
    bounds over zeros.

    ```mlir
    %r = kt.slice_scatter %x, %v {dim = 1, start = 1, end = 3} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
    %z = kt.slice_scatter %x, %w, %t {dim = 1, dynamic_end} : (tensor<2x4xf32>, tensor<2x?xf32>, index) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_Tensor:$src, Variadic<Index>:$bounds,
                   DefaultValuedAttr<I64Attr, "0">:$dim,
                   OptionalAttr<I64Attr>:$start,
                   OptionalAttr<I64Attr>:$end,
                   DefaultValuedAttr<I64Attr, "1">:$step,
                   UnitAttr:$dynamic_start,
                   UnitAttr:$dynamic_end);
}

def KT_SelectScatterOp : KT_ShapeOp<"select_scatter"> {
  let summary = "self with one index of a dim replaced by src (torch.select_scatter)";
  let description = [{
    A copy of `self` in which `self.select(dim, index)` is replaced by `src`.
    The value form of a write through `kt.view_select`.

    1. The attributes follow the rules of `kt.select`.
    2. `src` has the element type of `self` and the shape of that selection
       (a `?` is checked when the op runs).

    ```mlir
    %r = kt.select_scatter %x, %v {dim = 0, index = -1} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, KT_Tensor:$src, I64Attr:$dim,
                   I64Attr:$index);
}

#endif // KILN_DIALECT_KT_IR_KTSHAPEOPS_TD
