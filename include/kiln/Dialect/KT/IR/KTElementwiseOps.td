//===- KTElementwiseOps.td - kt pointwise ops --------------*- tablegen -*-===//
//
// Part of Kiln. Elementwise unary and binary ops (binary ops broadcast like
// NumPy), `where`, `clamp` and `cast`; bitwise ops on integers and i1.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD
#define KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"

// A unary pointwise op; the result has the operand's type unless the op
// overrides `inferImpl`.
class KT_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_PointwiseTrait])> {
  let arguments = (ins operandType:$self);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getSelf().getType());
      return ::mlir::success();
    }
  }];
}

// A binary pointwise op with NumPy broadcasting. The result element type is
// the operands' (shared) element type, or i1 for comparisons.
class KT_BinaryOp<string mnemonic, Type operandType, bit boolResult = 0,
                  list<Trait> traits = []>
    : KT_InferredOp<mnemonic, !listconcat(traits, [KT_PointwiseTrait])> {
  let arguments = (ins operandType:$self, operandType:$other);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::inferBroadcastResult(
          ctx, loc, getOperationName(), adaptor.getOperands().getTypes(),
          /*boolResult=*/}] # !if(boolResult, "true", "false") # [{, types);
    }
  }];
}


// inferImpl of unary ops whose result is i1 (logical_not, isnan).
defvar KT_BoolUnaryInfer = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::ew::inferSameShapeResult(
          adaptor.getSelf().getType(), ::mlir::IntegerType::get(ctx, 1), types);
    }
  }];

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

def KT_NegOp : KT_UnaryOp<"neg", KT_NumericTensor> {
  let summary = "elementwise negation (torch.neg)";
  let description = [{
    `result = -self`. Integers wrap (`-INT_MIN == INT_MIN`).

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.neg %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
  let hasFolder = 1;
}

def KT_AbsOp : KT_UnaryOp<"abs", KT_NumericTensor> {
  let summary = "elementwise absolute value (torch.abs)";
  let description = [{
    `result = |self|`. Integers wrap (`abs(INT_MIN) == INT_MIN`); `abs(-0.0) = 0.0`.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.abs %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_ExpOp : KT_UnaryOp<"exp", KT_FloatTensor> {
  let summary = "elementwise exponential (torch.exp)";
  let description = [{
    `result = e^self`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_LogOp : KT_UnaryOp<"log", KT_FloatTensor> {
  let summary = "elementwise natural logarithm (torch.log)";
  let description = [{
    `result = ln(self)`; `log(0) = -inf`, negative inputs give NaN.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.log %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_Log1pOp : KT_UnaryOp<"log1p", KT_FloatTensor> {
  let summary = "elementwise log(1 + x) (torch.log1p)";
  let description = [{
    `result = ln(1 + self)`, accurate near 0.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.log1p %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_Expm1Op : KT_UnaryOp<"expm1", KT_FloatTensor> {
  let summary = "elementwise exp(x) - 1 (torch.expm1)";
  let description = [{
    `result = e^self - 1`, accurate near 0.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.expm1 %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_SqrtOp : KT_UnaryOp<"sqrt", KT_FloatTensor> {
  let summary = "elementwise square root (torch.sqrt)";
  let description = [{
    `result = sqrt(self)`; negative inputs give NaN, `sqrt(-0.0) = -0.0`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.sqrt %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_RsqrtOp : KT_UnaryOp<"rsqrt", KT_FloatTensor> {
  let summary = "elementwise reciprocal square root (torch.rsqrt)";
  let description = [{
    `result = 1 / sqrt(self)`; `rsqrt(0) = inf`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.rsqrt %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_SinOp : KT_UnaryOp<"sin", KT_FloatTensor> {
  let summary = "elementwise sine (torch.sin)";
  let description = [{
    `result = sin(self)`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.sin %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_CosOp : KT_UnaryOp<"cos", KT_FloatTensor> {
  let summary = "elementwise cosine (torch.cos)";
  let description = [{
    `result = cos(self)`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.cos %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_TanhOp : KT_UnaryOp<"tanh", KT_FloatTensor> {
  let summary = "elementwise hyperbolic tangent (torch.tanh)";
  let description = [{
    `result = tanh(self)`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_SigmoidOp : KT_UnaryOp<"sigmoid", KT_FloatTensor> {
  let summary = "elementwise logistic sigmoid (torch.sigmoid)";
  let description = [{
    `result = 1 / (1 + e^-self)`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_ReluOp : KT_UnaryOp<"relu", KT_NumericTensor> {
  let summary = "elementwise rectified linear unit (torch.relu)";
  let description = [{
    `result = self < 0 ? 0 : self`; NaN and `-0.0` pass through unchanged.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.relu %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_SiluOp : KT_UnaryOp<"silu", KT_FloatTensor> {
  let summary = "elementwise SiLU / swish (torch.nn.functional.silu)";
  let description = [{
    `result = self * sigmoid(self)`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.silu %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_ErfOp : KT_UnaryOp<"erf", KT_FloatTensor> {
  let summary = "elementwise error function (torch.erf)";
  let description = [{
    `result = erf(self)`; `erf(-0.0) = -0.0`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.erf %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_SpecialOp : KT_UnaryOp<"special", KT_FloatTensor> {
  let summary = "elementwise special function (torch.lgamma, torch.special.*)";
  let description = [{
    `result = fn(self)` for the special function `fn`, with PyTorch 1.13's
    values at poles and outside the domain:

    | `fn` | PyTorch | notes |
    | --- | --- | --- |
    | `lgamma` | `torch.lgamma` | `+inf` at 0 and the negative integers |
    | `digamma` | `torch.digamma`, `special.psi` | `-inf` at `+0`, `+inf` at `-0`, NaN at the negative integers |
    | `polygamma` | `torch.polygamma(n, x)` | `n = 0` is digamma, `n = 1` trigamma, `n >= 2` `(-1)^(n+1) n! zeta(n+1, x)` |
    | `erfc` | `torch.erfc` | `1 - erf(x)` without cancellation |
    | `erfinv` | `torch.erfinv` | `+-inf` at `+-1`, NaN outside `[-1, 1]` |
    | `erfcx` | `special.erfcx` | `exp(x^2) erfc(x)` |
    | `ndtr` | `special.ndtr` | the standard normal CDF |
    | `ndtri` | `special.ndtri` | its inverse; `-inf` at 0, `+inf` at 1 |
    | `log_ndtr` | `special.log_ndtr` | `log(ndtr(x))`, accurate for very negative x |
    | `i0`, `i1` | `torch.i0`, `special.i1` | modified Bessel functions of the first kind |
    | `i0e`, `i1e` | `special.i0e`, `special.i1e` | `exp(-|x|) i0(x)`, `exp(-|x|) i1(x)` |
    | `bessel_j0`, `bessel_j1` | `special.bessel_j0`, `special.bessel_j1` | Bessel functions of the first kind; 0 at `+-inf` |
    | `bessel_y0`, `bessel_y1` | `special.bessel_y0`, `special.bessel_y1` | of the second kind; `-inf` at 0, NaN for `x < 0` |
    | `modified_bessel_k0`, `modified_bessel_k1` | `special.modified_bessel_k0`, `_k1` | modified, second kind; `+inf` at 0, NaN for `x < 0` |
    | `scaled_modified_bessel_k0`, `scaled_modified_bessel_k1` | `special.scaled_modified_bessel_k0`, `_k1` | `exp(x) k0(x)`, `exp(x) k1(x)` |
    | `spherical_bessel_j0` | `special.spherical_bessel_j0` | `sin(x) / x`, 1 at 0 |
    | `airy_ai` | `special.airy_ai` | the Airy function Ai |

    Computed in double precision and rounded to the element type (f16/bf16
    through f32, as PyTorch rounds its float result)
    (kiln/rt/SpecialFunctions.h has the algorithms; both backends run the
    same code).

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. `n` is given (and `>= 0`) exactly when `fn` is `polygamma`.
    3. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.special %a {fn = #kt.special_fn<polygamma>, n = 2} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$self, KT_SpecialFnAttr:$fn,
                   OptionalAttr<I64Attr>:$n);
  let hasVerifier = 1;
}

def KT_ReciprocalOp : KT_UnaryOp<"reciprocal", KT_FloatTensor> {
  let summary = "elementwise reciprocal (torch.reciprocal)";
  let description = [{
    `result = 1 / self`; `1 / -0.0 = -inf`.

    1. `self` has a floating-point element type (PyTorch promotes integers to float; insert `kt.cast`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.reciprocal %a : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def KT_FloorOp : KT_UnaryOp<"floor", KT_NumericTensor> {
  let summary = "elementwise round toward -inf (torch.floor)";
  let description = [{
    `result = floor(self)`; identity on integers.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.floor %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_CeilOp : KT_UnaryOp<"ceil", KT_NumericTensor> {
  let summary = "elementwise round toward +inf (torch.ceil)";
  let description = [{
    `result = ceil(self)`; identity on integers.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.ceil %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_RoundOp : KT_UnaryOp<"round", KT_NumericTensor> {
  let summary = "elementwise round half to even (torch.round)";
  let description = [{
    `result = round(self)`, ties to even (`round(2.5) = 2`, `round(-0.5) = -0.0`); identity on integers.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.round %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_SignOp : KT_UnaryOp<"sign", KT_NumericTensor> {
  let summary = "elementwise sign (torch.sign)";
  let description = [{
    `result = (self > 0) - (self < 0)`: -1, 0 or 1 in the operand type; `sign(NaN) = 0`, `sign(-0.0) = 0`.

    1. `self` has a numeric element type (float or `i32`/`i64`, not `i1`).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.sign %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_LogicalNotOp : KT_UnaryOp<"logical_not", KT_Tensor> {
  let summary = "elementwise logical negation (torch.logical_not)";
  let description = [{
    `result = (self == 0)` as `i1` (`logical_not(NaN) = false`).

    1. `self` has any kt element type, including `i1`.
    2. The result has the shape of `self` and element type `i1`.

    ```mlir
    %r = kt.logical_not %a : (tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let inferImpl = KT_BoolUnaryInfer;
}

def KT_BitwiseNotOp : KT_UnaryOp<"bitwise_not", KT_IntOrBoolTensor> {
  let summary = "elementwise bitwise negation (torch.bitwise_not)";
  let description = [{
    `result = ~self`: every bit flipped for integers (`~x == -x - 1`),
    logical negation for `i1`.

    1. `self` has an integer or `i1` element type (PyTorch rejects floats).
    2. The result has the shape of `self` and its element type.

    ```mlir
    %r = kt.bitwise_not %a : (tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
}

def KT_IsnanOp : KT_UnaryOp<"isnan", KT_Tensor> {
  let summary = "elementwise NaN test (torch.isnan)";
  let description = [{
    `result = (self != self)` as `i1`; false for integers and `i1`.

    1. `self` has any kt element type, including `i1`.
    2. The result has the shape of `self` and element type `i1`.

    ```mlir
    %r = kt.isnan %a : (tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let inferImpl = KT_BoolUnaryInfer;
}


def KT_GeluOp : KT_UnaryOp<"gelu", KT_FloatTensor> {
  let summary = "elementwise GELU (torch.nn.functional.gelu)";
  let description = [{
    With `approximate = none` (the default, not printed):
    `result = 0.5 * x * (1 + erf(x / sqrt(2)))`.
    With `approximate = #kt.approximate<tanh>`:
    `result = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
    Both give `-0.0` for `-0.0` (`x` times a positive factor; PyTorch 1.13's
    CPU kernel gives `+0.0` without approximation and `-0.0` with tanh).

    1. `self` has a floating-point element type.
    2. The result has the type of `self`.

    ```mlir
    %r = kt.gelu %a {approximate = #kt.approximate<tanh>} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins KT_FloatTensor:$self,
      DefaultValuedAttr<KT_GeluApproximateAttr,
                        "::kiln::kt::GeluApproximate::none">:$approximate);
}

def KT_ClampOp : KT_UnaryOp<"clamp", KT_NumericTensor> {
  let summary = "elementwise clamp to [min, max] (torch.clamp)";
  let description = [{
    `result = min(max(self, min), max)`, where a missing bound is not applied,
    computed as PyTorch does: `y = self < min ? min : self`, then
    `y > max ? max : y`. A bound equal to the element leaves the element
    (`clamp(-0.0, min=0.0) = -0.0`, unlike `maximum`). NaN propagates. A
    NaN bound is ignored when it is the only bound; with both bounds it
    makes every element NaN. When `min > max` every element is `max` (as
    PyTorch).

    1. `self` has a numeric element type (not `i1`).
    2. At least one of `min` and `max` is given.
    3. For integer `self`, `min` and `max` are integral values.
    4. The result has the type of `self`.

    ```mlir
    %r = kt.clamp %a {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins KT_NumericTensor:$self, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

def KT_CastOp : KT_UnaryOp<"cast", KT_Tensor> {
  let summary = "elementwise type conversion (torch.Tensor.to(dtype))";
  let description = [{
    Converts each element to `dtype` with PyTorch `.to(dtype)` semantics:
    float to integer truncates toward zero, anything to `i1` is `!= 0` (NaN
    is true), `i1` to a number is 0 or 1, float to float rounds to nearest
    even.

    1. `dtype` is a kt element type (f32, f64, f16, bf16, i64, i32, i16, i8, ui8, i1).
    2. The result has the shape of `self` and element type `dtype`.

    ```mlir
    %r = kt.cast %a {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
    ```
  }];
  let arguments = (ins KT_Tensor:$self, TypeAttr:$dtype);
  let hasFolder = 1;
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::ew::inferCastResult(loc, getOperationName(),
          adaptor.getSelf().getType(), adaptor.getDtype(), types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

def KT_AddOp : KT_BinaryOp<"add", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise addition (torch.add) with broadcasting";
  let description = [{
    `result = self + other`. Integers wrap on overflow.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let hasFolder = 1;
}

def KT_SubOp : KT_BinaryOp<"sub", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise subtraction (torch.sub) with broadcasting";
  let description = [{
    `result = self - other`. Integers wrap on overflow.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let hasFolder = 1;
}

def KT_MulOp : KT_BinaryOp<"mul", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise multiplication (torch.mul) with broadcasting";
  let description = [{
    `result = self * other`. Integers wrap on overflow.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let hasFolder = 1;
}

def KT_PowOp : KT_BinaryOp<"pow", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise power (torch.pow) with broadcasting";
  let description = [{
    `result = self ^ other`. For integers the result is an integer computed with wrap-around; as torch.pow(Tensor, Tensor), a negative exponent gives `1` for base 1, `+-1` for base -1 and `0` otherwise.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_MaximumOp : KT_BinaryOp<"maximum", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise maximum (torch.maximum) with broadcasting";
  let description = [{
    `result = max(self, other)`; NaN in either operand gives NaN, and
    `-0.0 < +0.0` (`maximum(-0.0, 0.0) = 0.0` in either order; the
    dialect's rule 7).

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_MinimumOp : KT_BinaryOp<"minimum", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise minimum (torch.minimum) with broadcasting";
  let description = [{
    `result = min(self, other)`; NaN in either operand gives NaN, and
    `-0.0 < +0.0` (`minimum(-0.0, 0.0) = -0.0` in either order; the
    dialect's rule 7).

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_RemainderOp : KT_BinaryOp<"remainder", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise Python-style remainder (torch.remainder) with broadcasting";
  let description = [{
    `result = self - floor(self / other) * other`: the result has the sign of `other` (Python `%`). Float `x % 0` is NaN; integer remainder by zero is a runtime error ("integer division by zero").

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.remainder %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_Atan2Op : KT_BinaryOp<"atan2", KT_FloatTensor, /*boolResult=*/0> {
  let summary = "elementwise two-argument arctangent (torch.atan2) with broadcasting";
  let description = [{
    `result = atan2(self, other)`: the angle of the point `(other, self)` in
    `[-pi, pi]`, with C's signed-zero rules (`atan2(0.0, -0.0) = pi`,
    `atan2(-0.0, -0.0) = -pi`); NaN in either operand gives NaN. f16/bf16
    compute in f32.

    1. `self` and `other` share a floating-point element type (PyTorch
       promotes integers to float; insert `kt.cast`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.atan2 %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
}

def KT_ZetaOp : KT_BinaryOp<"zeta", KT_FloatTensor, /*boolResult=*/0> {
  let summary = "elementwise Hurwitz zeta function (torch.special.zeta) with broadcasting";
  let description = [{
    `result = sum_{k >= 0} (k + other)^-self` (`zeta(x, q)`, x = `self`,
    q = `other`): `+inf` at `x = 1` and where `q` is a non-positive integer,
    NaN for `x < 1` and where `q < 0` and `x` is not an integer. Computed in
    double precision and rounded (f16/bf16 through f32).

    1. `self` and `other` have the same floating-point element type.
    2. Their shapes broadcast; the result has the broadcast shape.

    ```mlir
    %r = kt.zeta %a, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
    ```
  }];
}

def KT_FmodOp : KT_BinaryOp<"fmod", KT_NumericTensor, /*boolResult=*/0> {
  let summary = "elementwise C-style remainder (torch.fmod) with broadcasting";
  let description = [{
    `result = self - trunc(self / other) * other` (C `fmod`): the result has
    the sign of `self`, unlike `kt.remainder`. Float `x fmod 0` and
    `inf fmod y` are NaN, `x fmod inf = x`. Integer `fmod` by zero is a
    runtime error ("integer division by zero", PyTorch's
    ZeroDivisionError); `INT_MIN fmod -1` is 0.

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.fmod %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    ```
  }];
}

def KT_EqOp : KT_BinaryOp<"eq", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise equality (torch.eq) with broadcasting";
  let description = [{
    `result = (self == other)` as `i1`; NaN compares unequal.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.eq %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_NeOp : KT_BinaryOp<"ne", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise inequality (torch.ne) with broadcasting";
  let description = [{
    `result = (self != other)` as `i1`; NaN compares unequal.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.ne %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_LtOp : KT_BinaryOp<"lt", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise less-than (torch.lt) with broadcasting";
  let description = [{
    `result = (self < other)` as `i1`; false when either is NaN.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.lt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_LeOp : KT_BinaryOp<"le", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise less-or-equal (torch.le) with broadcasting";
  let description = [{
    `result = (self <= other)` as `i1`; false when either is NaN.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.le %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_GtOp : KT_BinaryOp<"gt", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise greater-than (torch.gt) with broadcasting";
  let description = [{
    `result = (self > other)` as `i1`; false when either is NaN.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.gt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_GeOp : KT_BinaryOp<"ge", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise greater-or-equal (torch.ge) with broadcasting";
  let description = [{
    `result = (self >= other)` as `i1`; false when either is NaN.

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.ge %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_LogicalAndOp : KT_BinaryOp<"logical_and", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise logical and (torch.logical_and) with broadcasting";
  let description = [{
    `result = (self != 0) && (other != 0)` as `i1` (NaN counts as true).

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.logical_and %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_LogicalOrOp : KT_BinaryOp<"logical_or", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise logical or (torch.logical_or) with broadcasting";
  let description = [{
    `result = (self != 0) || (other != 0)` as `i1` (NaN counts as true).

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.logical_or %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_BitwiseAndOp : KT_BinaryOp<"bitwise_and", KT_IntOrBoolTensor, /*boolResult=*/0> {
  let summary = "elementwise bitwise and (torch.bitwise_and) with broadcasting";
  let description = [{
    `result = self & other` bit by bit (two's complement for integers;
    logical and for `i1`).

    1. `self` and `other` share an integer or `i1` element type (PyTorch
       rejects floats).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.bitwise_and %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    ```
  }];
}

def KT_BitwiseOrOp : KT_BinaryOp<"bitwise_or", KT_IntOrBoolTensor, /*boolResult=*/0> {
  let summary = "elementwise bitwise or (torch.bitwise_or) with broadcasting";
  let description = [{
    `result = self | other` bit by bit (two's complement for integers;
    logical or for `i1`).

    1. `self` and `other` share an integer or `i1` element type (PyTorch
       rejects floats).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.bitwise_or %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    ```
  }];
}

def KT_BitwiseXorOp : KT_BinaryOp<"bitwise_xor", KT_IntOrBoolTensor, /*boolResult=*/0> {
  let summary = "elementwise bitwise exclusive or (torch.bitwise_xor) with broadcasting";
  let description = [{
    `result = self ^ other` bit by bit (two's complement for integers;
    logical exclusive or for `i1`).

    1. `self` and `other` share an integer or `i1` element type (PyTorch
       rejects floats).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and the operands' element type.

    ```mlir
    %r = kt.bitwise_xor %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    ```
  }];
}

def KT_LogicalXorOp : KT_BinaryOp<"logical_xor", KT_Tensor, /*boolResult=*/1> {
  let summary = "elementwise logical exclusive or (torch.logical_xor) with broadcasting";
  let description = [{
    `result = (self != 0) != (other != 0)` as `i1` (NaN counts as true).

    1. `self` and `other` share an element type (any, including `i1`).
    2. Their shapes are broadcast-compatible (NumPy rules); the result has the
       broadcast shape and element type `i1`.

    ```mlir
    %r = kt.logical_xor %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
}

def KT_DivOp : KT_BinaryOp<"div", KT_NumericTensor> {
  let summary = "elementwise division with broadcasting (torch.div)";
  let description = [{
    Without `rounding_mode`: true division `self / other` (IEEE: `x / 0` is
    `+-inf` or NaN). With `rounding_mode = #kt.rounding_mode<trunc>` the
    quotient is rounded toward zero, with `#kt.rounding_mode<floor>` toward
    -inf (Python `//`). Integer division by zero is a runtime error
    ("integer division by zero").

    1. `self` and `other` share a numeric element type (not `i1`).
    2. Their shapes are broadcast-compatible; the result has the broadcast
       shape and their element type.
    3. Integer operands require `rounding_mode` (torch.div promotes integers
       to float for true division: insert `kt.cast` or set `rounding_mode`).

    ```mlir
    %r = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    ```
  }];
  let arguments = (ins KT_NumericTensor:$self, KT_NumericTensor:$other,
                       OptionalAttr<KT_RoundingModeAttr>:$rounding_mode);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// where
//===----------------------------------------------------------------------===//

def KT_WhereOp : KT_InferredOp<"where", [KT_PointwiseTrait]> {
  let summary = "elementwise selection with broadcasting (torch.where)";
  let description = [{
    `result = condition ? self : other`, the three operands broadcast together.

    1. `condition` has element type `i1`.
    2. `self` and `other` share an element type (any kt type).
    3. The three shapes are broadcast-compatible; the result has the broadcast
       shape and the element type of `self`.

    ```mlir
    %r = kt.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins KT_BoolTensor:$condition, KT_Tensor:$self,
                       KT_Tensor:$other);
  let results = (outs KT_Tensor:$result);
  let inferImpl = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::kt::ew::inferWhereResult(ctx, loc, getOperationName(),
          adaptor.getOperands().getTypes(), types);
    }
  }];
}

#endif // KILN_DIALECT_KT_IR_KTELEMENTWISEOPS_TD
