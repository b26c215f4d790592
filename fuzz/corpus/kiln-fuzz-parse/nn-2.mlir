func.func @matmul_dynamic_int(%a: tensor<?x2x?xi64>, %b: tensor<3x4xi64>,
                              %c: tensor<2x3xi32>, %d: tensor<3x?xi32>,
                              %e: tensor<1x2x3xf16>, %f: tensor<?x3x4xf16>,
                              %g: tensor<0x2x0xbf16>, %h: tensor<0x5xbf16>) {
  %0 = kt.matmul %a, %b : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<?x2x4xi64>
  %1 = kt.matmul %a, %b : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<5x2x4xi64>
  %2 = kt.matmul %c, %d : (tensor<2x3xi32>, tensor<3x?xi32>) -> tensor<2x?xi32>
  %3 = kt.matmul %e, %f : (tensor<1x2x3xf16>, tensor<?x3x4xf16>) -> tensor<?x2x4xf16>
  %4 = kt.matmul %g, %h : (tensor<0x2x0xbf16>, tensor<0x5xbf16>) -> tensor<0x2x5xbf16>
  return
}
