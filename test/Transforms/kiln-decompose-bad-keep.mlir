// RUN: kiln-opt %s -verify-diagnostics -kiln-decompose="keep=kt.softmax,kt.sofmax,kt.exp,torch.print"

// Tests that unknown names and ops without a decomposition in `keep` are
// errors naming them, on the module, one per bad name.
// expected-error@below {{kiln-decompose: 'keep' names 'kt.sofmax', which is not a registered op}}
// expected-error@below {{kiln-decompose: 'keep' names 'kt.exp', which has no decomposition (decomposable ops: kt.batch_norm, kt.cross_entropy, kt.gelu, kt.layer_norm, kt.linear, kt.log_softmax, kt.logsumexp, kt.nll_loss, kt.scaled_dot_product_attention, kt.silu, kt.softmax, kt.var)}}
// expected-error@below {{kiln-decompose: 'keep' names 'torch.print', which is not a registered op}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = kt.softmax %x {dim = 0} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
