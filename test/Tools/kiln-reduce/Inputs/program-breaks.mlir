// kiln-reduce's program.test: a kg.program with guards, three graphs and a
// break; kiln-cpu rejects the arith.negf in @p_g1.
kg.program @p(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  kg.guard_tensor %x {dtype = f32, shape = [4, 8]} : tensor<4x8xf32>
  kg.guard_tensor %w {dtype = f32, shape = [8, 8]} : tensor<8x8xf32>
  %y = kg.graph @p_g0(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %0 = kt.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = kt.exp %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kg.yield %1 : tensor<4x8xf32>
  }
  %r = kg.break "disallowed op kt.abs" -> tensor<4x8xf32> {
    %0 = kt.abs %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kg.yield %0 : tensor<4x8xf32>
  }
  %z = kg.graph @p_g1(%r) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %0 = kt.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = arith.negf %0 : tensor<4x8xf32>
    %2 = kt.tanh %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kg.yield %2 : tensor<4x8xf32>
  }
  %u = kg.graph @p_g2(%z, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %0 = kt.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    kg.yield %0 : tensor<4x8xf32>
  }
  kg.return %y, %u : tensor<4x8xf32>, tensor<4x8xf32>
}
