//===- KTCreationOps.td - kt creation and type ops ---------*- tablegen -*-===//
//
// Part of Kiln. Ops that create tensors (constant, full, arange, random ops)
// and dropout.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTCREATIONOPS_TD
#define KILN_DIALECT_KT_IR_KTCREATIONOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

def KT_ConstantOp : KT_Op<"constant", [KT_CreationTrait, ConstantLike]> {
  let summary = "a tensor constant (torch.tensor)";
  let description = [{
    A tensor given by a dense elements attribute. The result type is the
    attribute's type.

    1. `value` is a dense elements attribute of a kt element type with a static
       shape equal to the result type.

    ```mlir
    %c = kt.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  // No operands: the uniform form without the empty operand list.
  let assemblyFormat = "attr-dict `:` functional-type(operands, results)";
  let results = (outs KT_Tensor:$result);
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "::mlir::DenseElementsAttr":$value), [{
      build($_builder, $_state, type, ::llvm::cast<::mlir::ElementsAttr>(value));
    }]>];
}

// A creation op whose result shape is `size` (-1 entries taken in order from
// the `index` operands `dynamic_sizes`) and element type `dtype`.
class KT_SizedCreationOp<string mnemonic, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_CreationTrait])> {
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferSizedCreation(ctx, loc, getOperationName(),
          adaptor.getSize(), adaptor.getDynamicSizes().size(),
          adaptor.getDtype(), types);
    }
  }];
}

def KT_FullOp : KT_SizedCreationOp<"full"> {
  let summary = "a tensor filled with one value (torch.full)";
  let description = [{
    A tensor of shape `size` and element type `dtype` whose elements all equal
    `value`. An entry -1 of `size` is a dynamic dim whose extent is the next
    `index` operand of `dynamic_sizes` (in order).

    1. Every entry of `size` is >= 0 or -1.
    2. The number of `dynamic_sizes` equals the number of -1 entries.
    3. `dtype` is a kt element type.
    4. `value` is integral for integer `dtype`s and 0 or 1 for `i1`.
    5. A dynamic size that is negative at run time is an error.

    ```mlir
    %r = kt.full %d {size = [-1, 3], value = 1.5, dtype = f32} : (index) -> tensor<?x3xf32>
    ```
  }];
  // The dynamic sizes are often absent: print no empty operand list then.
  let assemblyFormat = [{
    ($dynamic_sizes^)? attr-dict `:` functional-type(operands, results)
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes, I64ArrayAttr:$size,
                       F64Attr:$value, TypeAttr:$dtype);
  let hasVerifier = 1;
}

def KT_ArangeOp : KT_InferredOp<"arange", [KT_CreationTrait]> {
  let summary = "evenly spaced values in [start, end) (torch.arange)";
  let description = [{
    A rank-1 tensor of length `ceil((end - start) / step)` (computed in double)
    with element `i` equal to `start + i * step`. As in PyTorch (CPU), the
    value is computed in double for f32/f64/integer results and in float for
    f16/bf16 results, then rounded to `dtype`.

    1. `step` is not zero.
    2. `end - start` is zero or has the sign of `step`.
    3. `start`, `end` and `step` are finite.
    4. `dtype` is a numeric kt element type (not `i1`); for integer `dtype`s
       `start`, `end` and `step` are integral.

    ```mlir
    %r = kt.arange {start = 0.0, end = 5.0, step = 2.0, dtype = i64} : () -> tensor<3xi64>
    ```
  }];
  // No operands: the uniform form without the empty operand list.
  let assemblyFormat = "attr-dict `:` functional-type(operands, results)";
  let arguments = (ins DefaultValuedAttr<F64Attr, "0.0">:$start, F64Attr:$end,
                       DefaultValuedAttr<F64Attr, "1.0">:$step, TypeAttr:$dtype);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferArange(ctx, loc, getOperationName(),
          adaptor.getStart().convertToDouble(),
          adaptor.getEnd().convertToDouble(),
          adaptor.getStep().convertToDouble(), adaptor.getDtype(), types);
    }
  }];
}

// Shared text of several descriptions. Spliced with !strconcat: on the right
// of TableGen's paste operator `#` a global defvar is read as its own name,
// and the docs showed "KT_PhiloxDoc" instead of this text.
defvar KT_PhiloxDoc = [{
    Generator (the contract every backend must reproduce bit for bit):
    Philox4x32-10 (Salmon et al. 2011, as in PyTorch/cuRAND) with multipliers
    0xD2511F53, 0xCD9E8D57 and key increments 0x9E3779B9, 0xBB67AE85, key
    `(seed & 0xffffffff, seed >> 32)` (seed taken as uint64) and, for element
    `i` in row-major order, counter `(i & 0xffffffff, i >> 32, 0, 0)`, giving
    32-bit outputs `out0..out3`.

    * uniform for f32/f16/bf16: `u = (out0 >> 8) * 2^-24` in [0, 1).
    * uniform for f64: `u = ((out0 >> 5) * 2^26 + (out1 >> 6)) * 2^-53` in
      [0, 1) (27 + 26 bits).
    * normal (Box-Muller, cosine branch), `z = sqrt(-2 ln u1) * cos(2 pi u2)`
      computed in double: for f32/f16/bf16 `u1 = ((out0 >> 8) + 1) * 2^-24` in
      (0, 1], `u2 = (out1 >> 8) * 2^-24`; for f64
      `u1 = ((out0 >> 5) * 2^26 + (out1 >> 6) + 1) * 2^-53`,
      `u2 = ((out2 >> 5) * 2^26 + (out3 >> 6)) * 2^-53`.

    Values are rounded (nearest even) to `dtype`. The values differ from
    torch's, which uses another counter layout.
}];

def KT_RandOp : KT_SizedCreationOp<"rand"> {
  let summary = "uniform random values in [0, 1) (torch.rand)";
  let description = !strconcat([{
    A tensor of shape `size` (-1 entries from `dynamic_sizes`, as `kt.full`)
    and float type `dtype` with element `i` the uniform value `u` of the
    generator below for `seed`.

    1. `seed` is a rank-0 i64 tensor.
    2. Every entry of `size` is >= 0 or -1, and the number of
       `dynamic_sizes` equals the number of -1 entries.
    3. `dtype` is f32, f64, f16 or bf16.
  }], KT_PhiloxDoc, [{
    ```mlir
    %r = kt.rand %seed, %d {size = [-1, 4], dtype = f32} : (tensor<i64>, index) -> tensor<?x4xf32>
    ```
  }]);
  let arguments = (ins KT_SeedTensor:$seed, Variadic<Index>:$dynamic_sizes,
                       I64ArrayAttr:$size, TypeAttr:$dtype);
}

def KT_RandnOp : KT_SizedCreationOp<"randn"> {
  let summary = "standard normal random values (torch.randn)";
  let description = !strconcat([{
    A tensor of shape `size` (-1 entries from `dynamic_sizes`, as `kt.full`)
    and float type `dtype` with element `i` the normal value `z` of the
    generator below for `seed`.

    1. `seed` is a rank-0 i64 tensor.
    2. Every entry of `size` is >= 0 or -1, and the number of
       `dynamic_sizes` equals the number of -1 entries.
    3. `dtype` is f32, f64, f16 or bf16.
  }], KT_PhiloxDoc, [{
    ```mlir
    %r = kt.randn %seed {size = [2, 3], dtype = f64} : (tensor<i64>) -> tensor<2x3xf64>
    ```
  }]);
  let arguments = (ins KT_SeedTensor:$seed, Variadic<Index>:$dynamic_sizes,
                       I64ArrayAttr:$size, TypeAttr:$dtype);
}

def KT_DropoutOp : KT_InferredOp<"dropout", [KT_CreationTrait]> {
  let summary = "random zeroing with rescaling (torch.nn.functional.dropout)";
  let description = !strconcat([{
    With `train = true`, element `i` is kept when the uniform value `u_i` of
    the generator below (for `seed` and the dtype of `self`) satisfies
    `u_i >= p`; the result is `self * m_i` with `m_i = 1 / (1 - p)` for kept
    and `0` for dropped elements (so, as in PyTorch, a dropped NaN or inf gives
    NaN). `p = 1` gives `self * 0`. With `train = false` the result is `self`.
    The result has the type of `self`.

    1. `self` is a float tensor; `seed` is a rank-0 i64 tensor.
    2. `0 <= p <= 1`.
  }], KT_PhiloxDoc, [{
    ```mlir
    %r = kt.dropout %x, %seed {p = 0.25, train = true} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
    ```
  }]);
  let arguments = (ins KT_FloatTensor:$self, KT_SeedTensor:$seed,
                       DefaultValuedAttr<F64Attr, "0.5">:$p,
                       DefaultValuedAttr<BoolAttr, "true">:$train);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      double p = adaptor.getP().convertToDouble();
      if (!(p >= 0.0 && p <= 1.0))
        return ::kiln::kt::emitKTError(loc, getOperationName(), "p ", p,
                                       " must be in [0, 1]");
      types.push_back(adaptor.getSelf().getType());
      return ::mlir::success();
    }
  }];
}

#endif // KILN_DIALECT_KT_IR_KTCREATIONOPS_TD
