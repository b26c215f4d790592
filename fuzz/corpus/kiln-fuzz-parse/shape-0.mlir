func.func @reshape(%a: tensor<2x3x4xf32>, %b: tensor<1x1xi64>, %c: tensor<?x2x2xf16>, %d: tensor<?xbf16>, %e: tensor<3x0xi1>)
    -> (tensor<3x8xf32>, tensor<i64>, tensor<?x4xf16>, tensor<2x3xbf16>, tensor<0x5xi1>) {
  %0 = kt.reshape %a {shape = [3, -1]} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
  %1 = kt.reshape %b {shape = []} : (tensor<1x1xi64>) -> tensor<i64>
  %2 = kt.reshape %c {shape = [-1, 4]} : (tensor<?x2x2xf16>) -> tensor<?x4xf16>
  %3 = kt.reshape %d {shape = [2, 3]} : (tensor<?xbf16>) -> tensor<2x3xbf16>
  %4 = kt.reshape %e {shape = [0, 5]} : (tensor<3x0xi1>) -> tensor<0x5xi1>
  return %0, %1, %2, %3, %4 : tensor<3x8xf32>, tensor<i64>, tensor<?x4xf16>, tensor<2x3xbf16>, tensor<0x5xi1>
}
