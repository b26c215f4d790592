// RUN: kiln-opt %s -kiln-split-graphs="disallow=func.call,math.exp,kt.abs" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-eager{disallow=func.call,math.exp,kt.abs})" | FileCheck %s --check-prefix=EAGER
// RUN: kiln-opt %s -verify-diagnostics -kiln-split-graphs="disallow=func.no_such_op,nodialect.op,kt.abs"

// Tests that the names in `disallow` resolve against every registered
// dialect, not only the ones the input happened to load: this input loads
// neither func nor math, and func.call and math.exp are graph ops all the
// same (accepted; kt.abs still splits the graph). An unknown op of a
// registered dialect and a name of no registered dialect are still errors.
// CHECK-LABEL: kg.program @no_func_dialect
// CHECK: kg.graph @no_func_dialect_g0
// CHECK: kg.break "disallowed op kt.abs"
// CHECK: kg.graph @no_func_dialect_g0_1
// EAGER-LABEL: kg.program @no_func_dialect
// EAGER: kg.break "disallowed op kt.abs"
// expected-error@below {{disallow: 'func.no_such_op' is not a registered op}}
// expected-error@below {{disallow: 'nodialect.op' is not a registered op}}
module {
  kg.program @no_func_dialect(%x: tensor<4xf32>) -> tensor<4xf32> {
    kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
    %y = kg.graph @no_func_dialect_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      %1 = kt.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
      %2 = kt.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %2 : tensor<4xf32>
    }
    kg.return %y : tensor<4xf32>
  }
}
