func.func @g_outlined(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> tensor<?x4xf32> attributes {kg.graph_function} {
  %0 = kt.add %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
kg.program @guards(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>, %n: i64) -> tensor<i64> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0", 4], strides = [4, 1], requires_grad = true} : tensor<?x4xf32>
  kg.guard_identity %w : tensor<4x4xf32>
  kg.guard_value %n {value = 3 : i64} : i64
  kg.guard_shape_relation "s0 >= 2"
  %y = kg.graph @g_outlined(%x, %w) : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %c = kg.is_compiling
  %t = kg.from_host %n : i64 -> tensor<i64>
  kg.return %t : tensor<i64>
}
