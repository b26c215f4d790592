// RUN: kiln-opt %s -verify-diagnostics -kiln-split-graphs="disallow=kt.no_such_op,torch.print,kg.host_call,kg.break,kg.yield"

// Tests that naming something that is not a graph op is an error on the
// module, one per bad name, pointing to kg.break (disable) instead.
// expected-error@below {{disallow: 'kt.no_such_op' is not a registered op, so it cannot be in a graph; disallow_in_graph takes graph ops such as kt.abs (to keep a function out of graphs, run it in a kg.break: disable)}}
// expected-error@below {{disallow: 'torch.print' is not a registered op}}
// expected-error@below {{disallow: 'kg.host_call' is not an op that can appear in a graph (a host-only op); to run code on the host use a kg.break (disable) instead}}
// expected-error@below {{disallow: 'kg.break' is not an op that can appear in a graph (a host-only op)}}
// expected-error@below {{disallow: 'kg.yield' is not an op that can appear in a graph (a host-only op)}}
module {
  kg.program @bad_names(%x: tensor<4xf32>) -> tensor<4xf32> {
    kg.return %x : tensor<4xf32>
  }
}
