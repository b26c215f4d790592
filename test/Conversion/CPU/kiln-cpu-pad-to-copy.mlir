// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg -kiln-cpu-pad-to-copy | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=2" | FileCheck %s --check-prefix=LLVM

// Tests kiln-cpu-pad-to-copy: every tensor.pad with one padding value for
// all elements (max_pool2d's -inf, avg_pool2d's zeros, kt.pad's value, a
// value from outside the region; static or `?` sizes) becomes alloc_tensor +
// linalg.fill + linalg.copy into the interior + insert_slice back; a pad
// whose region computes the value per element stays. In kiln-cpu the fill
// and copy are then vectorized (no memrefCopy call is left).

// CHECK-LABEL: func.func @max_pool
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[E:.*]] = bufferization.alloc_tensor() : tensor<2x3x10x10xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[E]] : tensor<2x3x10x10xf32>)
// CHECK: %[[W:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<2x3x8x8xf32>) outs(%[[W]] : tensor<2x3x8x8xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[C]] into %[[F]][0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
// CHECK: linalg.pooling_nchw_max {{.*}} ins(%[[P]],
// CHECK-NOT: tensor.pad
// LLVM-LABEL: llvm.func @max_pool
// LLVM-NOT: memrefCopy
// LLVM: llvm.store {{.*}} : vector<{{[0-9]+}}xf32>
// LLVM-NOT: memrefCopy
// LLVM: llvm.return
func.func @max_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %0 = kt.max_pool2d %x {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @avg_pool
// CHECK-NOT: tensor.pad
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = bufferization.alloc_tensor() : tensor<1x4x9x9xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<1x4x9x9xf32>)
// CHECK: linalg.copy
// CHECK-NOT: tensor.pad
// LLVM-LABEL: llvm.func @avg_pool
// LLVM-NOT: memrefCopy
// LLVM: llvm.return
func.func @avg_pool(%x: tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kt.avg_pool2d %x {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// kt.pad (constant mode): a static f32 case with a crop and a `?` i64 case
// (the size of the `?` dim comes from tensor.dim of the source).
// CHECK-LABEL: func.func @kt_pad
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>{{.*}}, %[[B:.*]]: tensor<?x4xi64>
// CHECK-NOT: tensor.pad
// CHECK: %[[CROP:.*]] = tensor.extract_slice %[[A]][1, 0] [2, 4] [1, 1]
// CHECK: %[[FIVE:.*]] = arith.constant 5.000000e+00 : f32
// CHECK: %[[E:.*]] = bufferization.alloc_tensor() : tensor<2x7xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[FIVE]] : f32) outs(%[[E]] : tensor<2x7xf32>)
// CHECK: %[[W:.*]] = tensor.extract_slice %[[F]][0, 1] [2, 4] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[CROP]] : tensor<2x4xf32>) outs(%[[W]] : tensor<2x4xf32>)
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[C]] into %[[F]][0, 1] [2, 4] [1, 1]
// CHECK: %[[E2:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x6xi64>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%[[E2]] : tensor<?x6xi64>)
// CHECK: %[[W2:.*]] = tensor.extract_slice %[[F2]][0, 1] [%[[D:.*]], 4] [1, 1]
// CHECK: %[[C2:.*]] = linalg.copy ins(%[[B]] : tensor<?x4xi64>) outs(%[[W2]] : tensor<?x4xi64>)
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[C2]] into %[[F2]][0, 1] [%[[D]], 4] [1, 1]
// CHECK: return %[[R0]], %[[R1]]
// LLVM-LABEL: llvm.func @kt_pad
// LLVM-NOT: memrefCopy
// LLVM: llvm.return
func.func @kt_pad(%a: tensor<3x4xf32>, %b: tensor<?x4xi64>) -> (tensor<2x7xf32>, tensor<?x6xi64>) {
  %0 = kt.pad %a {pad = [1, 2, -1, 0], value = 5.0 : f64} : (tensor<3x4xf32>) -> tensor<2x7xf32>
  %1 = kt.pad %b {pad = [1, 1]} : (tensor<?x4xi64>) -> tensor<?x6xi64>
  return %0, %1 : tensor<2x7xf32>, tensor<?x6xi64>
}

// -----

// `?` amounts and a value from outside the region: rewritten (sizes
// low + size + high); a per-element value (depends on the indices): kept.
// CHECK-LABEL: func.func @dynamic_amounts
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>{{.*}}, %[[V:.*]]: f32{{.*}}, %[[L:.*]]: index{{.*}}, %[[H:.*]]: index
// CHECK: %[[D:.*]] = tensor.dim %[[X]]
// CHECK: %[[S0:.*]] = arith.addi %[[L]], %[[D]] : index
// CHECK: %[[S:.*]] = arith.addi %[[S0]], %[[H]] : index
// CHECK: %[[E:.*]] = bufferization.alloc_tensor(%[[S]]) : tensor<?xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<?xf32>)
// CHECK: %[[W:.*]] = tensor.extract_slice %[[F]][%[[L]]] [%[[D]]] [1]
// CHECK: linalg.copy ins(%[[X]] : tensor<?xf32>) outs(%[[W]] : tensor<?xf32>)
// CHECK: tensor.insert_slice
// CHECK: tensor.pad %[[X]] low[1] high[1]
// CHECK: tensor.yield
// CHECK-NOT: tensor.pad
func.func @dynamic_amounts(%x: tensor<?xf32>, %v: f32, %l: index, %h: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = tensor.pad %x low[%l] high[%h] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<?xf32> to tensor<?xf32>
  %1 = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    tensor.yield %f : f32
  } : tensor<?xf32> to tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
