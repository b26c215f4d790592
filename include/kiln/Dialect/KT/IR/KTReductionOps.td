//===- KTReductionOps.td - kt Reduction ops ----------------*- tablegen -*-===//
//
// Part of Kiln. Reductions over a list of dims (sum, mean, amax, amin, prod,
// var, logsumexp, any, all), over one dim (argmax, argmin), and the
// cumulative scans along one dim (cumsum, cumprod, logcumsumexp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTREDUCTIONOPS_TD
#define KILN_DIALECT_KT_IR_KTREDUCTIONOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// Result element type rules of reductions (see inferReduction in
// KTReductionOps.cpp): 0 = the operand's, 1 = i64 for integer/i1 operands
// (else the operand's), 2 = i1, 3 = i64.
defvar KT_ReduceSameElem = 0;
defvar KT_ReduceIntToI64 = 1;
defvar KT_ReduceBoolElem = 2;
defvar KT_ReduceIndexElem = 3;

// Shared text of several descriptions. Spliced with !strconcat: on the right
// of TableGen's paste operator `#` a global defvar is read as its own name,
// and the docs showed "KT_ReduceDimDoc" instead of this text.
defvar KT_ReduceDimDoc = [{
    Common rules: `dim` lists the reduced dims (negative dims count from the
    end); absent or empty, every dim is reduced. With `keepdim` the reduced
    dims stay with extent 1; otherwise they are removed. Rank-0 operands
    accept `dim = [0]` or `[-1]`.

    1. Every entry of `dim` is in [-rank, rank) ([-1, 0] for rank 0).
    2. No dim appears twice (after normalization).
}];

// A reduction over `dim` (an optional list) with `keepdim`.
class KT_ReduceOp<string mnemonic, Type operandType, int elemRule,
                  dag extraArgs = (ins)>
    : KT_InferredOp<mnemonic, [KT_ReductionTrait]> {
  let arguments = !con((ins operandType:$self,
                            OptionalAttr<I64ArrayAttr>:$dim,
                            DefaultValuedAttr<BoolAttr, "false">:$keepdim),
                       extraArgs);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferReduction(ctx, loc, getOperationName(),
          adaptor.getSelf().getType(), adaptor.getDimAttr(), adaptor.getKeepdim(),
          }] # elemRule # [{, types);
    }
  }];
}

def KT_SumOp : KT_ReduceOp<"sum", KT_Tensor, KT_ReduceIntToI64> {
  let summary = "sum over dims (torch.sum)";
  let description = !strconcat([{
    Sum of the elements over `dim`. Floats accumulate in double and round to
    the operand's type; integer and `i1` operands give `i64` (wrapping on
    overflow), as in PyTorch. An empty reduction gives 0.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.sum %x {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
  }]);
}

def KT_MeanOp : KT_ReduceOp<"mean", KT_FloatTensor, KT_ReduceSameElem> {
  let summary = "mean over dims (torch.mean)";
  let description = !strconcat([{
    Arithmetic mean over `dim` (accumulated in double), float operands only.
    An empty reduction gives NaN.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.mean %x {dim = [-1]} : (tensor<2x?xf32>) -> tensor<2xf32>
    ```
  }]);
}

def KT_AmaxOp : KT_ReduceOp<"amax", KT_Tensor, KT_ReduceSameElem> {
  let summary = "maximum over dims (torch.amax)";
  let description = !strconcat([{
    Maximum over `dim`; the result keeps the operand's element type. NaN
    propagates, and `-0.0 < +0.0` (`kt.maximum`; the result does not depend
    on the order of the elements). Reducing a dim of extent 0 (or, with no `dim`, an empty
    tensor) is a run-time error, as in PyTorch.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.amax %x {dim = [0, 1]} : (tensor<2x3x4xi32>) -> tensor<4xi32>
    ```
  }]);
}

def KT_AminOp : KT_ReduceOp<"amin", KT_Tensor, KT_ReduceSameElem> {
  let summary = "minimum over dims (torch.amin)";
  let description = !strconcat([{
    Minimum over `dim`; the result keeps the operand's element type. NaN
    propagates, and `-0.0 < +0.0` (`kt.minimum`; the result does not depend
    on the order of the elements). Reducing a dim of extent 0 (or, with no `dim`, an empty
    tensor) is a run-time error, as in PyTorch.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.amin %x : (tensor<2x3xf16>) -> tensor<f16>
    ```
  }]);
}

def KT_ProdOp : KT_ReduceOp<"prod", KT_Tensor, KT_ReduceIntToI64> {
  let summary = "product over dims (torch.prod)";
  let description = !strconcat([{
    Product over `dim`. Floats accumulate in double; integer and `i1`
    operands give `i64` (wrapping on overflow). An empty reduction gives 1.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.prod %x {dim = [0]} : (tensor<3x2xi32>) -> tensor<2xi64>
    ```
  }]);
}

def KT_VarOp : KT_ReduceOp<"var", KT_FloatTensor, KT_ReduceSameElem,
                           (ins DefaultValuedAttr<F64Attr, "1.0">:$correction)> {
  let summary = "variance over dims (torch.var)";
  let description = !strconcat([{
    `sum((x - mean)^2) / max(0, N - correction)` over `dim`, where `N` is the
    number of reduced elements, computed in double (two passes). As in
    PyTorch, `N - correction <= 0` divides by 0 (inf, or NaN when the sum of
    squares is 0) and an empty reduction gives NaN. Float operands only.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.var %x {dim = [1], correction = 0.0} : (tensor<2x3xf64>) -> tensor<2xf64>
    ```
  }]);
}

def KT_LogsumexpOp : KT_ReduceOp<"logsumexp", KT_FloatTensor, KT_ReduceSameElem> {
  let summary = "log of the sum of exponentials over dims (torch.logsumexp)";
  let description = !strconcat([{
    `m + log(sum(exp(x - m)))` over `dim`, with `m` the maximum, replaced by 0
    when it is infinite (so all -inf gives -inf and any +inf gives +inf, as in
    PyTorch). NaN propagates; an empty reduction gives -inf. Float operands
    only; the sum accumulates in `f64` (the dialect's accumulation rule).
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.logsumexp %x {dim = [1], keepdim = true} : (tensor<?x8xbf16>) -> tensor<?x1xbf16>
    ```
  }]);
}

def KT_AnyOp : KT_ReduceOp<"any", KT_Tensor, KT_ReduceBoolElem> {
  let summary = "whether any element is nonzero over dims (torch.any)";
  let description = !strconcat([{
    True when some element over `dim` is nonzero (NaN counts as nonzero).
    Every element type; the result is `i1`. An empty reduction gives false.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.any %x {dim = [0]} : (tensor<3x2xf32>) -> tensor<2xi1>
    ```
  }]);
}

def KT_AllOp : KT_ReduceOp<"all", KT_Tensor, KT_ReduceBoolElem> {
  let summary = "whether every element is nonzero over dims (torch.all)";
  let description = !strconcat([{
    True when every element over `dim` is nonzero (NaN counts as nonzero).
    Every element type; the result is `i1`. An empty reduction gives true.
  }], KT_ReduceDimDoc, [{
    ```mlir
    %r = kt.all %x : (tensor<3x2xi1>) -> tensor<i1>
    ```
  }]);
}

// argmax / argmin over one optional dim.
class KT_ArgReduceOp<string mnemonic> : KT_InferredOp<mnemonic, [KT_ReductionTrait]> {
  let arguments = (ins KT_NumericTensor:$self, OptionalAttr<I64Attr>:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferArgReduction(ctx, loc, getOperationName(),
          adaptor.getSelf().getType(), adaptor.getDimAttr(),
          adaptor.getKeepdim(), types);
    }
  }];
}

defvar KT_ArgDoc = [{
    The result is `i64`. With `dim`, the index along `dim` (the result has the
    shape of `kt.amax` over `[dim]`); without `dim`, the index into the
    row-major flattened tensor, as a rank-0 tensor (an all-ones shape of the
    operand's rank with `keepdim`). Ties give the first index; NaN counts as
    larger (argmax) / smaller (argmin) than every number, so the first NaN
    wins, as in PyTorch. An empty reduced dim (or, without `dim`, an empty
    tensor) is a run-time error. Numeric operands (not `i1`).

    1. `dim` is in [-rank, rank) ([-1, 0] for rank 0).
}];

def KT_ArgmaxOp : KT_ArgReduceOp<"argmax"> {
  let summary = "index of the maximum (torch.argmax)";
  let description = KT_ArgDoc # [{
    ```mlir
    %r = kt.argmax %x {dim = 1, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xi64>
    ```
  }];
}

def KT_ArgminOp : KT_ArgReduceOp<"argmin"> {
  let summary = "index of the minimum (torch.argmin)";
  let description = KT_ArgDoc # [{
    ```mlir
    %r = kt.argmin %x : (tensor<2x3xi64>) -> tensor<i64>
    ```
  }];
}

// Cumulative scans along one dim: the result has the operand's type.
class KT_CumulativeOp<string mnemonic, Type operandType>
    : KT_InferredOp<mnemonic, [KT_ReductionTrait]> {
  let arguments = (ins operandType:$self, I64Attr:$dim);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferCumulative(loc, getOperationName(),
          adaptor.getSelf().getType(), adaptor.getDim(), types);
    }
  }];
}

defvar KT_CumulativeDoc = [{
    Element `i` along `dim` combines elements `0..i` along `dim`; the other
    dims are independent. A rank-0 operand is its own result. The result
    has the operand's type (PyTorch's integer promotion to int64 and its
    `dtype=` argument are a `kt.cast` of the operand).

    1. `dim` is in [-rank, rank) ([-1, 0] for rank 0).
    2. The result has the type of `self`.
}];

def KT_CumsumOp : KT_CumulativeOp<"cumsum", KT_NumericTensor> {
  let summary = "cumulative sum along a dim (torch.cumsum)";
  let description = !strconcat([{
    `result[..., i, ...] = sum(self[..., 0..i, ...])` along `dim`, accumulated
    as PyTorch on CPU: in double for f32/f64, in f32 for f16/bf16, each
    partial sum rounded to the operand type when stored; integers wrap.
  }], KT_CumulativeDoc, [{
    ```mlir
    %r = kt.cumsum %x {dim = 1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
    ```
  }]);
}

def KT_CumprodOp : KT_CumulativeOp<"cumprod", KT_NumericTensor> {
  let summary = "cumulative product along a dim (torch.cumprod)";
  let description = !strconcat([{
    `result[..., i, ...] = prod(self[..., 0..i, ...])` along `dim`,
    accumulated as `kt.cumsum`; integers wrap.
  }], KT_CumulativeDoc, [{
    ```mlir
    %r = kt.cumprod %x {dim = -1} : (tensor<3x4xi64>) -> tensor<3x4xi64>
    ```
  }]);
}

def KT_LogcumsumexpOp : KT_CumulativeOp<"logcumsumexp", KT_FloatTensor> {
  let summary = "cumulative log-sum-exp along a dim (torch.logcumsumexp)";
  let description = !strconcat([{
    `result[..., i, ...] = log(sum(exp(self[..., 0..i, ...])))` along `dim`,
    computed stably as PyTorch: `acc = log_add_exp(x_i, acc)` from
    `acc = -inf`, with `log_add_exp(x, y) = max + log1p(exp(min - max))`
    (NaN propagates; when both are the same infinity the result is `x`).
    Accumulates in double for f32/f64, f32 for f16/bf16. Float operands
    only.
  }], KT_CumulativeDoc, [{
    ```mlir
    %r = kt.logcumsumexp %x {dim = 0} : (tensor<5x3xf32>) -> tensor<5x3xf32>
    ```
  }]);
}

// Sorting along one dim.
def KT_ArgsortOp : KT_InferredOp<"argsort", [KT_ReductionTrait]> {
  let summary = "stable sorting permutation along a dim (torch.argsort, torch.sort)";
  let description = [{
    The `i64` indices that sort `self` along `dim`: `result[..., i, ...]` is
    the position along `dim` of the `i`-th element of the sorted slice.
    The sort is always stable (equal elements keep their input order, as
    PyTorch's `stable=True`, also with `descending`), so results are
    deterministic. NaN sorts as larger than every number (last ascending,
    first descending), as PyTorch; `-0.0` and `0.0` are equal. `i1` sorts
    `false` before `true`. A rank-0 operand gives `0`.

    `torch.sort`'s values are `kt.gather(self, argsort(self), dim)`,
    `torch.topk`/`kthvalue` slice the permutation before the gather (the
    importer builds them that way; see docs/python.md).

    1. `dim` is in [-rank, rank) ([-1, 0] for rank 0).
    2. The result has the shape of `self` and element type `i64`.

    ```mlir
    %i = kt.argsort %x {dim = -1, descending = true} : (tensor<4x?xf32>) -> tensor<4x?xi64>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, I64Attr:$dim,
                       DefaultValuedAttr<BoolAttr, "false">:$descending);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferArgsort(ctx, loc, getOperationName(),
          adaptor.getSelf().getType(), adaptor.getDim(), types);
    }
  }];
}

def KT_SearchsortedOp : KT_InferredOp<"searchsorted", [KT_ShapeTrait]> {
  let summary = "insertion positions in sorted sequences (torch.searchsorted, torch.bucketize)";
  let description = [{
    For each element `v` of `values`, the position in its sequence of
    `sorted_sequence` (the innermost dim) where `v` would be inserted to
    keep it sorted: the first `i` with `seq[i] >= v` (`right = false`,
    PyTorch's side "left") or `seq[i] > v` (`right = true`), `M` (the
    sequence length) when there is none. A 1-D `sorted_sequence` is searched
    for every element of `values` (any rank, rank 0 included); an N-D one
    has one sequence per index of its leading dims, and `values` has the
    same leading dims (the last dim of `values` is free). The search is
    PyTorch's binary search step for step (`!(seq[mid] >= v)` moves right),
    so unsorted sequences and NaN give PyTorch's answers too: a NaN value
    lands at `M`. `torch.bucketize(input, boundaries, right)` is
    `searchsorted(boundaries, input, right)`; `out_int32` and `sorter` are
    a `kt.cast` of the result and a `kt.gather` of the sequence (the
    importer's; docs/python.md). The result is `i64` with the shape of
    `values`.

    1. `sorted_sequence` has rank >= 1 and the element type of `values`
       (numeric: no `i1`, as PyTorch).
    2. With rank > 1, `values` has the same rank and the same leading dims
       (a `?` is checked when the op runs).

    ```mlir
    %i = kt.searchsorted %s, %v {right = true} : (tensor<5xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
    ```
  }];
  let arguments = (ins KT_NumericTensor:$sorted_sequence,
                       KT_NumericTensor:$values,
                       DefaultValuedAttr<BoolAttr, "false">:$right);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferSearchsorted(ctx, loc, getOperationName(),
          adaptor.getSortedSequence().getType(), adaptor.getValues().getType(),
          types);
    }
  }];
}

// Indices of the non-zero elements: a result size only known when it runs.
def KT_NonzeroOp : KT_InferredOp<"nonzero", [KT_ShapeTrait]> {
  let summary = "indices of the non-zero elements (torch.nonzero, torch.argwhere)";
  let description = [{
    The `i64` indices of the elements of `self` that are not zero, one row
    per element in row-major order: the result is `tensor<?xRxi64>` for a
    rank-`R` operand, and its first dim (the count) depends on the data, so
    it is always `?` and is known only when the op runs (an "unbacked"
    size). `-0.0` is zero; NaN is not zero; `i1` `true` is not zero. A
    rank-0 operand gives `tensor<?x0xi64>` (one row when it is non-zero).
    `torch.argwhere` is the same op; `masked_select(x, m)` and `x[m]` are
    a gather of `x` by its rows (the importer's; docs/python.md).

    1. The result has rank `rank(self) + 1`, a `?` first dim, second dim
       `rank(self)` and element type `i64` (inferred; a written static count
       is checked when the op runs, like any refined `?`).

    ```mlir
    %i = kt.nonzero %x : (tensor<3x?xf32>) -> tensor<?x2xi64>
    ```
  }];
  let arguments = (ins KT_Tensor:$self);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferNonzero(ctx, adaptor.getSelf().getType(), types);
    }
  }];
}

// Counts (or weight sums) per non-negative value: a length only known when
// it runs.
def KT_BincountOp : KT_InferredOp<"bincount", [KT_ShapeTrait]> {
  let summary = "occurrences of each non-negative integer (torch.bincount)";
  let description = [{
    `result[k]` is the number of elements of `self` equal to `k` or, with
    `weights`, the sum of `weights[i]` over the positions `i` with
    `self[i] == k` (added in order of `i`, in the element type of
    `weights`, as PyTorch's CPU kernel). The result has length
    `max(max(self) + 1, minlength)` (`minlength` for an empty `self`): it
    depends on the data, so it is always `?` and known only when the op
    runs (an "unbacked" size, like `kt.nonzero`'s count). The element type
    is `i64` without `weights` and that of `weights` with them (the
    importer casts other weights to `f64`, as PyTorch; docs/python.md).

    1. `self` is a rank-1 integer tensor (no `i1`, as PyTorch).
    2. `weights`, when present, is a rank-1 `f32` or `f64` tensor of the
       length of `self` (a `?` is checked when the op runs).
    3. `minlength` is >= 0.
    4. The result is `tensor<?xT>` (inferred; a written static length is
       checked when the op runs).
    5. A negative element of `self` is an error when the op runs
       ("bincount only supports non-negative inputs").

    ```mlir
    %r = kt.bincount %x, %w {minlength = 4} : (tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64, I32, I16, I8, UI8]>:$self,
                       Optional<RankedTensorOf<[F32, F64]>>:$weights,
                       DefaultValuedAttr<I64Attr, "0">:$minlength);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferBincount(ctx, loc, getOperationName(),
          adaptor.getSelf().getType(),
          adaptor.getWeights() ? adaptor.getWeights().getType()
                               : ::mlir::Type(),
          adaptor.getMinlength(), types);
    }
  }];
}

#endif // KILN_DIALECT_KT_IR_KTREDUCTIONOPS_TD
