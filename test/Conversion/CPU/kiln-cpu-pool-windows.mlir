// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -kiln-cpu-pad-to-copy -kiln-cpu-pool-windows | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=2" | FileCheck %s --check-prefix=LLVM

// Tests kiln-cpu-pool-windows: linalg.pooling_nchw_max / pooling_nchw_sum
// with a static window become one all-parallel linalg.generic over the
// output whose inputs are the KH*KW strided window slices of the padded
// input (offsets kh*dilation, strides = the pool's strides), combined in the
// pool's order (kh outer, kw inner) onto the init; `?` sizes come from the
// init. A stride along the width > 1 marks it kiln.scalar_loops:
// kiln-cpu-tile-vectorize threads it and leaves the body to scalar loops
// (LLVM's loop vectorizer), not to masked per-lane strided reads.

// CHECK-LABEL: func.func @max_pool
// CHECK: %[[P:.*]] = tensor.insert_slice
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK-DAG: %[[S00:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x10x10xf32> to tensor<2x3x4x4xf32>
// CHECK-DAG: %[[S01:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK-DAG: %[[S22:.*]] = tensor.extract_slice %[[P]][0, 0, 2, 2] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[S00]], %[[S01]], {{.*}}, %[[S22]] : {{.*}}) outs({{.*}}) attrs =  {kiln.scalar_loops}
// CHECK: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[OUT:.*]]: f32):
// CHECK: %[[M0:.*]] = arith.maximumf %[[OUT]], %[[A0]] : f32
// CHECK: %[[M1:.*]] = arith.maximumf %[[M0]], %[[A1]] : f32
// CHECK-COUNT-7: arith.maximumf
// CHECK: linalg.yield
// CHECK-NEXT: } -> tensor<2x3x4x4xf32>
// CHECK-NOT: linalg.pooling_nchw_max
// LLVM-LABEL: llvm.func @max_pool
// LLVM-NOT: llvm.intr.masked.load
// LLVM: llvm.intr.maximum({{.*}}) : (f32, f32) -> f32
// LLVM: llvm.return
func.func @max_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %0 = kt.max_pool2d %x {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// Dilation 2, stride 1 x 3, a 2x3 window: offsets step by the dilation.
// CHECK-LABEL: func.func @max_pool_dilated
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 5, 3] [1, 1, 1, 3]
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 0, 0, 2] [1, 2, 5, 3] [1, 1, 1, 3]
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 0, 0, 4] [1, 2, 5, 3] [1, 1, 1, 3]
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 0, 2, 4] [1, 2, 5, 3] [1, 1, 1, 3]
// CHECK: linalg.generic
// CHECK-COUNT-6: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: linalg.yield
func.func @max_pool_dilated(%x: tensor<1x2x7x11xf32>) -> tensor<1x2x5x3xf32> {
  %0 = kt.max_pool2d %x {kernel_size = [2, 3], stride = [1, 3], dilation = [2, 2]} : (tensor<1x2x7x11xf32>) -> tensor<1x2x5x3xf32>
  return %0 : tensor<1x2x5x3xf32>
}

// -----

// avg_pool2d: the sum pool becomes additions in the same order, then the
// division stays a separate op.
// CHECK-LABEL: func.func @avg_pool
// CHECK-NOT: linalg.pooling_nchw_sum
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}}) outs(
// CHECK: ^bb0(%[[B0:.*]]: f32, %[[B1:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %[[O:.*]]: f32):
// CHECK: %[[T0:.*]] = arith.addf %[[O]], %[[B0]] : f32
// CHECK: %[[T1:.*]] = arith.addf %[[T0]], %[[B1]] : f32
// CHECK-COUNT-2: arith.addf
// CHECK: linalg.yield
// CHECK-NOT: linalg.pooling_nchw_sum
func.func @avg_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2]} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// `?` batch and width: the slices' sizes are the init's dims.
// CHECK-LABEL: func.func @max_pool_dynamic
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [%{{.*}}, 3, 4, %{{.*}}] [1, 1, 2, 2] : tensor<?x3x10x?xf32> to tensor<?x3x4x?xf32>
// CHECK: linalg.generic
// CHECK-NOT: linalg.pooling_nchw_max
func.func @max_pool_dynamic(%x: tensor<?x3x8x?xf32>) -> tensor<?x3x4x?xf32> {
  %0 = kt.max_pool2d %x {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]} : (tensor<?x3x8x?xf32>) -> tensor<?x3x4x?xf32>
  return %0 : tensor<?x3x4x?xf32>
}

// -----

// A zero-size batch: nothing to slice, the pool stays (a static zero-size
// window slice would not verify).
// CHECK-LABEL: func.func @empty_batch
// CHECK: linalg.pooling_nchw_max
func.func @empty_batch(%x: tensor<0x2x4x4xf32>) -> tensor<0x2x2x2xf32> {
  %w = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<0x2x2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<0x2x4x4xf32>, tensor<2x2xf32>) outs(%e : tensor<0x2x2x2xf32>) -> tensor<0x2x2x2xf32>
  return %r : tensor<0x2x2x2xf32>
}
