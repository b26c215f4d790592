func.func @gather_index_select(%a: tensor<2x3xf32>, %i: tensor<2x5xi64>, %b: tensor<?x3xf16>, %j: tensor<4x?xi32>,
    %c: tensor<4x3xf32>, %k: tensor<5xi64>, %l: tensor<i32>, %m: tensor<?xi64>)
    -> (tensor<2x5xf32>, tensor<4x?xf16>, tensor<5x3xf32>, tensor<4x1xf32>, tensor<4x?xf32>) {
  %0 = kt.gather %a, %i {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  %1 = kt.gather %b, %j {dim = -2 : i64} : (tensor<?x3xf16>, tensor<4x?xi32>) -> tensor<4x?xf16>
  %2 = kt.index_select %c, %k {dim = 0 : i64} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
  %3 = kt.index_select %c, %l {dim = -1 : i64} : (tensor<4x3xf32>, tensor<i32>) -> tensor<4x1xf32>
  %4 = kt.index_select %c, %m {dim = 1 : i64} : (tensor<4x3xf32>, tensor<?xi64>) -> tensor<4x?xf32>
  return %0, %1, %2, %3, %4 : tensor<2x5xf32>, tensor<4x?xf16>, tensor<5x3xf32>, tensor<4x1xf32>, tensor<4x?xf32>
}
