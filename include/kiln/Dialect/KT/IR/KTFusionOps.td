//===- KTFusionOps.td - kt.fusion and kt.yield -------------*- tablegen -*-===//
//
// Part of Kiln. The kernel grouping made by `kiln-fuse`: a region op holding
// the kt ops of one fusion group (one future kernel), and its terminator.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTFUSIONOPS_TD
#define KILN_DIALECT_KT_IR_KTFUSIONOPS_TD

include "kiln/Dialect/KT/IR/KTBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def KT_FusionOp : Op<KT_Dialect, "fusion", [
    IsolatedFromAbove, RecursiveMemoryEffects, RecursivelySpeculatable,
    SingleBlock, KT_KnownAttributesOnly]> {
  let summary = "a fusion group: the ops of one kernel (made by kiln-fuse)";
  let description = [{
    The ops of one kernel, grouped by `kiln-fuse`. The region has one block
    whose arguments take the operands (the group's inputs, read from memory
    once) and ends in `kt.yield` of the results (the values the group
    writes: those used after it). The region is isolated from above: every
    value a member op reads from outside is an operand. `kernel` names the
    kernel (`<func>_k<index>_<ops>`, Inductor style); the op's location
    fuses the locations of its members, which keep their own.

    At the kt level the op means exactly its body (the interpreter runs the
    body); `kiln-lower-to-linalg` lowers the body in place and
    `kiln-form-kernels` turns each group into one kernel and removes the op.

    1. The block has one argument per operand, of the operand's type.
    2. The body ends in `kt.yield` whose operand types are the result types;
       there is at least one result.
    3. `kernel` is not empty; fusions do not nest.

    ```mlir
    %r = kt.fusion "f_k0_add_exp" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %0 = kt.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = kt.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
      kt.yield %1 : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
    $body
  }];
  let hasVerifier = 1;
}

def KT_YieldOp : Op<KT_Dialect, "yield", [
    Pure, HasParent<"FusionOp">, ReturnLike, Terminator,
    KT_KnownAttributesOnly]> {
  let summary = "the results of a kt.fusion";
  let description = [{
    ```mlir
    %r:2 = kt.fusion "f_k0_exp_sum" (%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
    ^bb0(%x: tensor<4xf32>):
      %0 = kt.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = kt.sum %0 : (tensor<4xf32>) -> tensor<f32>
      kt.yield %0, %1 : tensor<4xf32>, tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // KILN_DIALECT_KT_IR_KTFUSIONOPS_TD
