//===- KTBase.td - The kt dialect, its types and base op classes -*- tablegen -*-===//
//
// Part of Kiln. The `kt` dialect holds tensor ops with value semantics whose
// names and meaning are those of the PyTorch (ATen) op of the same name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTBASE_TD
#define KILN_DIALECT_KT_IR_KTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "kiln/Dialect/KT/IR/KTInterfaces.td"

def KT_Dialect : Dialect {
  let name = "kt";
  let cppNamespace = "::kiln::kt";
  let summary = "Tensor ops with PyTorch (ATen) semantics and value semantics";
  let description = [{
    The `kt` dialect holds ops on builtin ranked tensors (`tensor<4x?xf32>`,
    rank 0 for scalars) with value semantics. Each op is named and defined like
    the PyTorch op of the same name; attribute names are PyTorch's argument
    names (`dim`, `keepdim`, `stride`, `padding`, ...).

    Rules shared by every op:

    1. Element types are `f32`, `f64`, `f16`, `bf16`, `i64`, `i32`, `i16`,
       `i8`, `ui8` and `i1`. Operands of one op share an element type;
       conversions are explicit (`kt.cast`). A frontend applies PyTorch's
       type promotion when it builds the IR. The integers are PyTorch's:
       `i64`, `i32`, `i16` and `i8` (signless) are the signed int64 ...
       int8; `ui8` (MLIR's unsigned 8-bit integer) is uint8. Integer
       arithmetic wraps (two's complement: `127 + 1` is `-128` in `i8`,
       `255 + 1` is `0` in `ui8`); on `ui8` comparisons, division,
       remainder, max/min, `abs`/`sign`, the reductions' max/min/argmax and
       casts (to floats and wider integers) are unsigned. Float to integer
       casts truncate toward zero (a value outside the integer's range is
       undefined in PyTorch; Kiln wraps it from int64). `sum` and `prod` of
       any integer or `i1` give `i64`. After lowering to linalg every
       integer is signless: the lowering picks the unsigned arith ops for
       `ui8` and then makes the type `i8` (docs/codegen.md).
    2. Binary ops broadcast like NumPy. Result types are inferred for static and
       dynamic (`?`) dims. A `?` that must equal another dim is checked when the
       op runs, with an error naming the op.
    3. Negative `dim` attributes count from the end, as in PyTorch, and are
       accepted everywhere a dim is.
    4. Random ops take an explicit seed operand (a rank-0 `i64` tensor), so a
       graph stays pure and recomputation is reproducible.
    5. The one exception to value semantics: `!kt.ref` values and the ref
       ops (`kt.load`, `kt.store`, `kt.alloc_ref`, the `kt.view_*` views and
       the in-place ops `kt.add_`, `kt.copy_`, ...) model PyTorch's mutation
       and aliasing. `kiln-functionalize` rewrites them into value ops.
    6. An op takes only the attributes it defines: any other attribute
       without a dialect prefix (`kt.round {decimals = 2}`, a misspelled
       `keepdims`) is a verifier error naming it and listing the op's own.
       Annotations carry a dialect prefix (`kg.source_fn`, `kiln.kernel`) and
       are kept. The same holds for kg ops.
    7. Accumulation: a reduction over float data (`f32`, `f16`, `bf16`,
       `f64`) accumulates in `f64` and rounds once to its result type. This
       holds for `sum`, `mean`, `prod`, `var`, `logsumexp`, the sums inside
       `softmax`, `log_softmax`, `layer_norm`, `nll_loss`, `cross_entropy`
       and `scaled_dot_product_attention`'s softmax, and so for the sums
       autodiff emits for broadcast gradients (`kt.sum`). The pointwise work
       around a sum (an `exp`, a deviation, a normalization) is done in the
       compute type (`f32` for `f16`/`bf16`) and rounded once. The
       interpreter adds every term in `f64`; the CPU backend's vectorized
       sums of `f32` terms are cascaded: the terms of each block of a row
       (8 vector steps: 256 elements with AVX2, 512 with AVX-512) are added
       in `f32`, per vector lane and then across the lanes, and the block
       sums accumulate in `f64`. Either way the error of a sum of n terms
       stays within a small multiple of 2^-24 * sum(|x|) for every n (plain
       `f32` accumulation grows with n), no worse than PyTorch's cascade
       sums. The order of the additions is otherwise unspecified. Products
       (`matmul`, `linear`, `conv2d`, attention's two products) and
       `avg_pool2d`'s windows accumulate in the compute type on the CPU
       backend, as BLAS and PyTorch do; the interpreter computes every op in
       `f64`.
    7. Signed zeros and NaN: `maximum`, `minimum`, `amax`, `amin` and
       `max_pool2d` are IEEE 754-2019 maximum / minimum (as
       `arith.maximumf` / `arith.minimumf`): NaN in any operand gives NaN,
       and `-0.0` is smaller than `+0.0`, so `maximum(-0.0, 0.0)` is `0.0`
       and `minimum(-0.0, 0.0)` is `-0.0` in either order, and a reduction's
       result does not depend on the order of its elements. (PyTorch 1.13's
       CPU kernels give either zero, depending on the op, the operand order
       and the tensor's size.) `clamp` and `relu` compare with `<` and `>`
       as PyTorch does: a bound equal to the element leaves the element
       (`clamp(-0.0, min=0.0)` and `relu(-0.0)` are `-0.0`). Pointwise
       functions keep the sign of zero as PyTorch does: `erf`, `tanh`,
       `sin`, `expm1`, `log1p`, `sqrt`, `silu`, `gelu` and `neg(0.0)` give
       `-0.0` for `-0.0`; `floor`, `ceil` and `round` of `-0.0` and of
       values in (-1, 0) (`ceil(-0.5)`, `round(-0.5)`) give `-0.0`;
       `rsqrt(-0.0)` and `reciprocal(-0.0)` are `-inf`; `abs(-0.0)` and
       `sign(-0.0)` are `0.0`.

    Every op prints in one uniform form: operands, the attribute dictionary,
    then the functional type:

    ```mlir
    %r = kt.sum %x {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// An enum attribute of kt, written in the usual MLIR form
// `#kt.<mnemonic><case>` (`#kt.approximate<tanh>`), the form the generated
// docs show; EnumAttr's default format would give `#kt<approximate tanh>`.
class KT_EnumAttr<EnumInfo info, string mnemonic, string example>
    : EnumAttr<KT_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    Cases: }] # !interleave(!foreach(c, info.enumerants, "`" # c.str # "`"),
                           ", ") # [{.

    ```mlir
    }] # example # [{
    ```
  }];
}

def KT_GeluApproximate : I32EnumAttr<"GeluApproximate",
    "approximation used by kt.gelu", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_GeluApproximateAttr : KT_EnumAttr<KT_GeluApproximate, "approximate",
    "%r = kt.gelu %a {approximate = #kt.approximate<tanh>} : (tensor<4xf32>) -> tensor<4xf32>">;

def KT_SpecialFn : I32EnumAttr<"SpecialFn",
    "the special function kt.special computes", [
      I32EnumAttrCase<"lgamma", 0>,
      I32EnumAttrCase<"digamma", 1>,
      I32EnumAttrCase<"polygamma", 2>,
      I32EnumAttrCase<"erfc", 3>,
      I32EnumAttrCase<"erfinv", 4>,
      I32EnumAttrCase<"erfcx", 5>,
      I32EnumAttrCase<"ndtr", 6>,
      I32EnumAttrCase<"ndtri", 7>,
      I32EnumAttrCase<"log_ndtr", 8>,
      I32EnumAttrCase<"i0", 9>,
      I32EnumAttrCase<"i0e", 10>,
      I32EnumAttrCase<"i1", 11>,
      I32EnumAttrCase<"i1e", 12>,
      I32EnumAttrCase<"bessel_j0", 13>,
      I32EnumAttrCase<"bessel_j1", 14>,
      I32EnumAttrCase<"bessel_y0", 15>,
      I32EnumAttrCase<"bessel_y1", 16>,
      I32EnumAttrCase<"modified_bessel_k0", 17>,
      I32EnumAttrCase<"modified_bessel_k1", 18>,
      I32EnumAttrCase<"scaled_modified_bessel_k0", 19>,
      I32EnumAttrCase<"scaled_modified_bessel_k1", 20>,
      I32EnumAttrCase<"spherical_bessel_j0", 21>,
      I32EnumAttrCase<"airy_ai", 22>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_SpecialFnAttr : KT_EnumAttr<KT_SpecialFn, "special_fn",
    "%r = kt.special %a {fn = #kt.special_fn<lgamma>} : (tensor<4xf32>) -> tensor<4xf32>">;

def KT_Reduction : I32EnumAttr<"Reduction",
    "loss reduction (PyTorch `reduction=`)", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_ReductionAttr : KT_EnumAttr<KT_Reduction, "reduction",
    "%l = kt.nll_loss %x, %t {reduction = #kt.reduction<sum>} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>">;

def KT_NormActivation : I32EnumAttr<"NormActivation",
    "the activation after a normalization whose gradient mask "
    "kt.batch_norm_backward applies", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"relu6", 2>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_NormActivationAttr : KT_EnumAttr<KT_NormActivation, "activation",
    "%gx, %gw, %gb = kt.batch_norm_backward %gy, %x, %m, %r weight %w bias %b {activation = #kt.activation<relu6>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)">;

def KT_RoundingMode : I32EnumAttr<"RoundingMode",
    "rounding of kt.div (PyTorch `rounding_mode=`)", [
      I32EnumAttrCase<"trunc", 0>,
      I32EnumAttrCase<"floor", 1>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_RoundingModeAttr : KT_EnumAttr<KT_RoundingMode, "rounding_mode",
    "%r = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>">;

def KT_ScatterReduce : I32EnumAttr<"ScatterReduce",
    "how kt.scatter combines values (PyTorch scatter_reduce `reduce=`)", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"prod", 2>,
      I32EnumAttrCase<"mean", 3>,
      I32EnumAttrCase<"amax", 4>,
      I32EnumAttrCase<"amin", 5>]> {
  let cppNamespace = "::kiln::kt";
  let genSpecializedAttr = 0;
}
def KT_ScatterReduceAttr : KT_EnumAttr<KT_ScatterReduce, "scatter_reduce",
    "%r = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<4xf32>, tensor<6xi64>, tensor<6xf32>) -> tensor<4xf32>">;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def KT_FloatElem : AnyTypeOf<[F32, F64, F16, BF16]>;
// PyTorch's integer dtypes: int64, int32, int16, int8 (signless, read as
// signed) and uint8 (`ui8`, MLIR's unsigned 8-bit integer; see
// docs/dialects/kt.md, "Element types").
def KT_IntElem : AnyTypeOf<[I64, I32, I16, I8, UI8]>;
def KT_Elem : AnyTypeOf<[F32, F64, F16, BF16, I64, I32, I16, I8, UI8, I1]>;

def KT_Tensor : RankedTensorOf<[F32, F64, F16, BF16, I64, I32, I16, I8, UI8,
                                I1]>;
def KT_FloatTensor : RankedTensorOf<[F32, F64, F16, BF16]>;
def KT_NumericTensor : RankedTensorOf<[F32, F64, F16, BF16, I64, I32, I16, I8,
                                       UI8]>;
def KT_BoolTensor : RankedTensorOf<[I1]>;
// Integers and bools: the operands of the bitwise ops.
def KT_IntOrBoolTensor : RankedTensorOf<[I64, I32, I16, I8, UI8, I1]>;
def KT_IndexTensor : RankedTensorOf<[I64, I32]>;
// A rank-0 i64 tensor: the seed of a random op.
def KT_SeedTensor : 0DTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Attribute helpers
//===----------------------------------------------------------------------===//

// Dim lists (PyTorch `dim: int[]`) use the upstream `I64ArrayAttr`, printed
// `dim = [0, -1]`; single dims use `I64Attr`, printed `dim = -1`.

//===----------------------------------------------------------------------===//
// Op kind traits (read by KT_OpKindInterface)
//===----------------------------------------------------------------------===//

def KT_PointwiseTrait : NativeOpTrait<"PointwiseOpTrait"> {
  let cppNamespace = "::kiln::kt";
}
def KT_ReductionTrait : NativeOpTrait<"ReductionOpTrait"> {
  let cppNamespace = "::kiln::kt";
}
def KT_ContractionTrait : NativeOpTrait<"ContractionOpTrait"> {
  let cppNamespace = "::kiln::kt";
}
def KT_ShapeTrait : NativeOpTrait<"ShapeOpTrait"> {
  let cppNamespace = "::kiln::kt";
}
def KT_CreationTrait : NativeOpTrait<"CreationOpTrait"> {
  let cppNamespace = "::kiln::kt";
}
def KT_CompositeTrait : NativeOpTrait<"CompositeOpTrait"> {
  let cppNamespace = "::kiln::kt";
}

// No attribute the op does not define (kt::verifyKnownAttributes): every kt
// and kg op carries it.
def KT_KnownAttributesOnly : NativeOpTrait<"KnownAttributesOnly"> {
  let cppNamespace = "::kiln::kt";
}

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

// Every kt op: value semantics (Pure), an op kind, only its own attributes.
class KT_Op<string mnemonic, list<Trait> traits = []>
    : Op<KT_Dialect, mnemonic,
         !listconcat(traits, [Pure, KT_OpKindInterface,
                              KT_KnownAttributesOnly])> {
  // Uniform form: operands, attributes, functional type.
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// A kt op whose result types are inferred from operands and attributes.
// `inferReturnTypes` is implemented per op (or per class) in C++; results may
// refine a `?` of the inferred type to a static size (see
// `kt::isCompatibleInferredTypes`).
class KT_InferredOp<string mnemonic, list<Trait> traits = []>
    : KT_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptorWithIsCompatible])> {
  // The definition of `inferReturnTypes` (declared by the trait); set by each
  // op or op class.
  code inferImpl = [{}];
  let extraClassDefinition = inferImpl # [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::kiln::kt::isCompatibleInferredTypes(l, r);
    }
  }];
}

#endif // KILN_DIALECT_KT_IR_KTBASE_TD
