//===- Passes.td - Kiln conversion passes ------------------*- tablegen -*-===//
//
// Part of Kiln. Lowerings out of the kt dialect (one folder per lowering, all
// declared here) and the verify passes at the codegen phase boundaries.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnLowerToLinalgPass : Pass<"kiln-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "lower kt ops to linalg, tensor, arith and math on tensors";
  let description = [{
    A dialect conversion driven by `populateKTToLinalgPatterns` (see
    `kiln/Conversion/KTToLinalg/KTToLinalg.h`). Every pointwise op becomes a
    `linalg.generic` whose indexing maps broadcast the operands (a static
    size-1 dim reads index 0; a dynamic dim is assumed not to broadcast),
    reductions become `linalg.generic`s with reduction iterators, `matmul`
    and `linear` become `linalg.matmul` / `linalg.batch_matmul` /
    `linalg.dot` (with `linalg.transpose`, broadcasts and
    `tensor.collapse_shape`), softmax and log_softmax become three generics,
    and shape ops become `tensor` ops (`collapse_shape`, `expand_shape`,
    `extract_slice`, `insert_slice`, `pad`) or `linalg.transpose`. f16 and
    bf16 are computed in f32 ("opmath", as PyTorch) and rounded once.

    Without `allow-partial`, a kt op with no lowering (or a case a pattern
    does not handle) fails the pass with `failed to legalize operation
    'kt.<name>'`; with it, such ops stay and `kiln-verify-no-kt` reports them.

    Before:

    ```mlir
    %r = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```

    After:

    ```mlir
    %e = tensor.empty() : tensor<2x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<2x3xf32>
    ```
  }];
  let options = [
    Option<"allowPartial", "allow-partial", "bool", /*default=*/"false",
           "Leave kt ops without a lowering in place instead of failing">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnVerifyNoKTPass : Pass<"kiln-verify-no-kt", "::mlir::ModuleOp"> {
  let summary = "check the codegen contract: no kt op remains";
  let description = [{
    The backend contract after `kiln-lower-to-linalg` (torch-mlir's
    "backend contract" style): emits `'kt.<name>' op was not lowered to
    linalg` at every remaining kt op (all of them, not just the first) and
    fails if there was one. Functions that are not graph code (`kg.program`
    bodies) are not checked.
  }];
}

#endif // KILN_CONVERSION_PASSES_TD
