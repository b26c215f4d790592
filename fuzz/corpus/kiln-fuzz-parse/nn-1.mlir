func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>,
                  %xg: tensor<2x6x5x5xf32>, %wg: tensor<9x2x3x3xf32>,
                  %xu: tensor<3x8x8xf16>, %wu: tensor<6x3x3x3xf16>,
                  %xd: tensor<?x3x?x8xbf16>, %wd: tensor<6x3x3x3xbf16>) {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 1} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %1 = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  %2 = kt.conv2d %x, %w {stride = [1, 3], padding = [2, 1], dilation = [2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x8x2xf32>
  %3 = kt.conv2d %xg, %wg {groups = 3} : (tensor<2x6x5x5xf32>, tensor<9x2x3x3xf32>) -> tensor<2x9x3x3xf32>
  %4 = kt.conv2d %xu, %wu : (tensor<3x8x8xf16>, tensor<6x3x3x3xf16>) -> tensor<6x6x6xf16>
  %5 = kt.conv2d %xd, %wd {padding = [1]} : (tensor<?x3x?x8xbf16>, tensor<6x3x3x3xbf16>) -> tensor<?x6x?x8xbf16>
  return
}
