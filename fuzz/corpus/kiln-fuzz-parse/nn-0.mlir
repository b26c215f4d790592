func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>,
                  %v: tensor<3xf64>, %wd: tensor<4x3xf64>,
                  %xd: tensor<?x?xf32>, %wdd: tensor<?x?xf32>, %bd: tensor<7xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  %1 = kt.linear %x, %w : (tensor<2x5x3xf32>, tensor<4x3xf32>) -> tensor<2x5x4xf32>
  %2 = kt.linear %v, %wd : (tensor<3xf64>, tensor<4x3xf64>) -> tensor<4xf64>
  %3 = kt.linear %xd, %wdd, %bd : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<7xf32>) -> tensor<?x7xf32>
  return
}
