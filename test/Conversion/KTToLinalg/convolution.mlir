// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -linalg-generalize-named-ops | FileCheck %s --check-prefix=GEN

// Tests that conv2d zero-pads H and W, starts the accumulator at the bias
// broadcast along dim 1 and uses conv_2d_nchw_fchw with strides/dilations.
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv2d
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 2] high[0, 0, 1, 2]
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x10x12xf32>
// CHECK: %[[B:.+]] = linalg.generic {indexing_maps = [#[[CH]], #{{.+}}]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %{{.+}} : tensor<1x3x10x12xf32>, tensor<6x3x3x3xf32>) outs(%[[B]] : tensor<1x6x4x4xf32>)
// CHECK-NOT: kt.
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %r = kt.conv2d %x, %w, %b {padding = [1, 2], stride = [2, 2], dilation = [1, 2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %r : tensor<1x6x4x4xf32>
}

// -----

// Tests that groups split the channels into [N, G, C/G, ...] and use
// conv_2d_ngchw_gfchw; f16 operands are widened to f32 and the result
// rounded once; an unbatched input gains and loses a unit batch dim.
// CHECK-LABEL: func.func @conv2d_groups_f16_unbatched
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] output_shape [1, 4, 5, 5] : tensor<4x5x5xf16> into tensor<1x4x5x5xf16>
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: linalg.fill
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 5, 5] : tensor<1x4x5x5xf32> into tensor<1x2x2x5x5xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-SAME: -> tensor<1x2x3x3x3xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<1x6x3x3xf16> into tensor<6x3x3xf16>
func.func @conv2d_groups_f16_unbatched(%x: tensor<4x5x5xf16>, %w: tensor<6x2x3x3xf16>) -> tensor<6x3x3xf16> {
  %r = kt.conv2d %x, %w {groups = 2} : (tensor<4x5x5xf16>, tensor<6x2x3x3xf16>) -> tensor<6x3x3xf16>
  return %r : tensor<6x3x3xf16>
}

// -----

// Tests that dynamic spatial dims compute the output size with index arith
// (floor division by the stride).
// CHECK-LABEL: func.func @conv2d_dynamic
// CHECK: tensor.dim %{{.+}}, %c2
// CHECK: arith.floordivsi
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-SAME: -> tensor<?x4x?x?xf32>
func.func @conv2d_dynamic(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %r = kt.conv2d %x, %w {stride = [2]} : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  return %r : tensor<?x4x?x?xf32>
}

// -----

// Tests that max_pool2d pads with -inf (extra high padding for the ceil_mode
// window), fills with -inf and uses pooling_nchw_max, whose body is the
// NaN-propagating arith.maximumf.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]]
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: -> tensor<1x2x3x3xf32>
// GEN-LABEL: func.func @max_pool_ceil
// GEN: arith.maximumf
func.func @max_pool_ceil(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %r = kt.max_pool2d %x {kernel_size = [2, 2], ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// -----

// Tests that avg_pool2d sums a zero-padded bf16 input in f32 and divides by
// the per-window count computed from linalg.index (count_include_pad =
// false), selecting 0 for windows without input elements.
// CHECK-LABEL: func.func @avg_pool_bf16
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.pooling_nchw_sum
// CHECK-SAME: -> tensor<2x3x4x4xf32>
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: arith.sitofp
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @avg_pool_bf16(%x: tensor<2x3x7x7xbf16>) -> tensor<2x3x4x4xbf16> {
  %r = kt.avg_pool2d %x {kernel_size = [3], stride = [2], padding = [1], count_include_pad = false} : (tensor<2x3x7x7xbf16>) -> tensor<2x3x4x4xbf16>
  return %r : tensor<2x3x4x4xbf16>
}

// -----

// Tests that divisor_override divides by the constant.
// CHECK-LABEL: func.func @avg_pool_override
// CHECK: linalg.pooling_nchw_sum
// CHECK: linalg.generic
// CHECK: %[[D:.+]] = arith.constant 5 : index
// CHECK: arith.index_cast %[[D]]
func.func @avg_pool_override(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %r = kt.avg_pool2d %x {kernel_size = [2], divisor_override = 5} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

// Tests that conv_transpose2d is a stride-1 convolution (dilation kept) of
// the input interleaved with stride - 1 zeros (a strided insert_slice into
// zeros) and padded by dilation * (k - 1) - padding before and that plus
// output_padding after (H: 1 and 2, W: 2 and 2), with the weight flipped
// and its channel dims swapped per group ([C_in, C_out/G, ..] ->
// [C_out, C_in/G, ..]), accumulating onto the bias.
// CHECK-LABEL: func.func @conv_transpose2d
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x4x8x17xf32>
// CHECK: %[[I:.+]] = tensor.insert_slice %{{.+}} into %[[Z]][0, 0, 1, 2] [1, 4, 3, 5] [1, 1, 2, 3] : tensor<1x4x3x5xf32> into tensor<1x4x8x17xf32>
// CHECK: %[[WF:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<6x2x2x3xf32>)
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: tensor.extract %{{.+}} : tensor<4x3x2x3xf32>
// CHECK: tensor.expand_shape %[[I]] {{.+}} into tensor<1x2x2x8x17xf32>
// CHECK: tensor.expand_shape %[[WF]] {{.+}} into tensor<2x3x2x2x3xf32>
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: -> tensor<1x2x3x7x13xf32>
// CHECK-NOT: kt.
func.func @conv_transpose2d(%x: tensor<1x4x3x5xf32>, %w: tensor<4x3x2x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x7x13xf32> {
  %r = kt.conv_transpose2d %x, %w, %b {stride = [2, 3], padding = [0, 2], output_padding = [1, 0], dilation = [1, 2], groups = 2} : (tensor<1x4x3x5xf32>, tensor<4x3x2x3xf32>, tensor<6xf32>) -> tensor<1x6x7x13xf32>
  return %r : tensor<1x6x7x13xf32>
}

// -----

// Tests that a padding larger than dilation * (k - 1) crops the
// interleaved input (H: 3 > 2, so the row before the first is dropped) and
// that an unbatched input gains and loses a unit batch dim.
// CHECK-LABEL: func.func @conv_transpose2d_crop
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 1] [1, 2, 5, 4] [1, 1, 2, 1] : tensor<1x2x5x4xf32> into tensor<1x2x9x6xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 1, 0] [1, 2, 7, 6] [1, 1, 1, 1] : tensor<1x2x9x6xf32> to tensor<1x2x7x6xf32>
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_transpose = array<i64: 2, 1, 3, 1, 0, 0>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %{{.+}} : tensor<1x2x7x6xf32>, tensor<1x2x3x3xf32>) outs(%{{.+}} : tensor<1x1x5x4xf32>)
// CHECK: tensor.collapse_shape %{{.+}} : tensor<1x1x5x4xf32> into tensor<1x5x4xf32>
func.func @conv_transpose2d_crop(%x: tensor<2x5x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x5x4xf32> {
  %r = kt.conv_transpose2d %x, %w {stride = [2, 1], padding = [3, 1]} : (tensor<2x5x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x5x4xf32>
  return %r : tensor<1x5x4xf32>
}
