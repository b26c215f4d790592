func.func @transpose_permute(%a: tensor<2x3x4xf32>, %b: tensor<?x3xi32>, %c: tensor<2x3x4xf64>, %d: tensor<?x5xi1>, %e: tensor<f32>)
    -> (tensor<4x3x2xf32>, tensor<3x?xi32>, tensor<4x2x3xf64>, tensor<5x?xi1>, tensor<f32>) {
  %0 = kt.transpose %a {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = kt.transpose %b {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<?x3xi32>) -> tensor<3x?xi32>
  %2 = kt.permute %c {dims = [2, 0, 1]} : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
  %3 = kt.permute %d {dims = [-1, 0]} : (tensor<?x5xi1>) -> tensor<5x?xi1>
  %4 = kt.permute %e {dims = []} : (tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4x3x2xf32>, tensor<3x?xi32>, tensor<4x2x3xf64>, tensor<5x?xi1>, tensor<f32>
}
