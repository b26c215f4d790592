// RUN: kiln-opt %s -verify-diagnostics -kiln-decompose="keep=func.call,kt.softmax"

// Tests that the names in `keep` resolve against every registered dialect:
// this input loads no func dialect, and func.call is a known op without a
// decomposition (not "not a registered op", which depended on whether the
// input happened to load func).
// expected-error@below {{kiln-decompose: 'keep' names 'func.call', which has no decomposition (decomposable ops: }}
module {
  kg.program @keep_func_call(%x: tensor<4xf32>) -> tensor<4xf32> {
    kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
    %y = kg.graph @keep_func_call_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.softmax %a {dim = 0} : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    kg.return %y : tensor<4xf32>
  }
}
