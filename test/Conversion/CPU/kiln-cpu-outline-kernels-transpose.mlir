// RUN: kiln-opt %s -kiln-cpu-outline-kernels=stats=true | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu=sgemm=openblas --mlir-print-ir-after=kiln-matmul-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWERED

// A kt.transpose of the last two dims whose every user is a kt.matmul is not
// a kernel of its own: it is cloned into each product's kernel, which takes
// the transpose's input (the product then reads it with swapped maps:
// cblas's transpose flag, no copy). A transpose of other dims, or one with
// another user, stays a kernel.

// CHECK: kiln-cpu-outline-kernels: 6 kernels, 0 reused, 6 calls
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:[^:]*]]: tensor<64x48xf32>, %[[D:[^:]*]]: tensor<64x40xf32>, %[[P:[^:]*]]: tensor<2x3x32x32xf32>, %[[V:[^:]*]]: tensor<2x3x32x24xf32>, %[[Q:[^:]*]]: tensor<2x32x3x24xf32>)
// CHECK-NOT: kt.transpose
// CHECK: %[[DW:.*]] = call @kernel_matmul(%[[X]], %[[D]])
// CHECK: %[[PV:.*]] = call @kernel_matmul_0(%[[P]], %[[V]])
// CHECK: %[[VP:.*]] = call @kernel_matmul_1(%[[V]], %[[P]])
// CHECK: %[[QT:.*]] = call @kernel_transpose(%[[Q]])
// CHECK: %[[S:.*]] = call @kernel_transpose_2(%[[P]])
// CHECK: %[[A:.*]] = call @kernel_add(%[[S]], %[[P]])
// CHECK: return %[[DW]], %[[PV]], %[[VP]], %[[QT]], %[[A]]

// CHECK-LABEL: func.func private @kernel_matmul(
// CHECK-SAME: %[[KX:[^:]*]]: tensor<64x48xf32>, %[[KD:[^:]*]]: tensor<64x40xf32>) -> tensor<48x40xf32>
// CHECK-NEXT: %[[T:.*]] = kt.transpose %[[KX]] {dim0 = 0 : i64, dim1 = 1 : i64}
// CHECK-NEXT: kt.matmul %[[T]], %[[KD]]
// CHECK-LABEL: func.func private @kernel_matmul_0(
// CHECK-NEXT: %[[T0:.*]] = kt.transpose %{{.*}} {dim0 = -1 : i64, dim1 = -2 : i64}
// CHECK-NEXT: kt.matmul %[[T0]], %{{.*}}
// CHECK-LABEL: func.func private @kernel_matmul_1(
// CHECK-SAME: %[[KV:[^:]*]]: tensor<2x3x32x24xf32>, %[[KP:[^:]*]]: tensor<2x3x32x32xf32>)
// CHECK-NEXT: %[[T1:.*]] = kt.transpose %[[KV]] {dim0 = 2 : i64, dim1 = 3 : i64}
// CHECK-NEXT: %[[T2:.*]] = kt.transpose %[[KP]] {dim0 = -1 : i64, dim1 = -2 : i64}
// CHECK-NEXT: kt.matmul %[[T1]], %[[T2]]

// After kiln-matmul-to-blas no product copies a transposed operand (no
// loop before the call): one cblas_sgemm per batch element, with
// CblasTrans (112) for each transposed operand.
// LOWERED-LABEL: func.func private @kernel_matmul(
// LOWERED-NOT: vector.transfer_read
// LOWERED: func.call @cblas_sgemm(%{{.*}}, %c112_i32, %c111_i32,
// LOWERED-LABEL: func.func private @kernel_matmul_0(
// LOWERED-NOT: vector.transfer_read
// LOWERED: func.call @cblas_sgemm(%{{.*}}, %c112_i32, %c111_i32,
// LOWERED-LABEL: func.func private @kernel_matmul_1(
// LOWERED-NOT: vector.transfer_read
// LOWERED: func.call @cblas_sgemm(%{{.*}}, %c112_i32, %c112_i32_{{[0-9]+}},

func.func @f(%x: tensor<64x48xf32>, %d: tensor<64x40xf32>, %p: tensor<2x3x32x32xf32>, %v: tensor<2x3x32x24xf32>, %q: tensor<2x32x3x24xf32>) -> (tensor<48x40xf32>, tensor<2x3x32x24xf32>, tensor<2x3x24x32xf32>, tensor<2x3x32x24xf32>, tensor<2x3x32x32xf32>) {
  // The weight gradient of a linear layer: x^T d.
  %xt = kt.transpose %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<64x48xf32>) -> tensor<48x64xf32>
  %dw = kt.matmul %xt, %d : (tensor<48x64xf32>, tensor<64x40xf32>) -> tensor<48x40xf32>
  // Attention's backward: P^T dO, and a transpose read by two products.
  %pt = kt.transpose %p {dim0 = -1 : i64, dim1 = -2 : i64} : (tensor<2x3x32x32xf32>) -> tensor<2x3x32x32xf32>
  %pv = kt.matmul %pt, %v : (tensor<2x3x32x32xf32>, tensor<2x3x32x24xf32>) -> tensor<2x3x32x24xf32>
  %vt = kt.transpose %v {dim0 = 2 : i64, dim1 = 3 : i64} : (tensor<2x3x32x24xf32>) -> tensor<2x3x24x32xf32>
  %vp = kt.matmul %vt, %pt : (tensor<2x3x24x32xf32>, tensor<2x3x32x32xf32>) -> tensor<2x3x24x32xf32>
  // Not the last two dims: a kernel.
  %qt = kt.transpose %q {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x32x3x24xf32>) -> tensor<2x3x32x24xf32>
  // Another user than a product: a kernel.
  %st = kt.transpose %p {dim0 = 2 : i64, dim1 = 3 : i64} : (tensor<2x3x32x32xf32>) -> tensor<2x3x32x32xf32>
  %a = kt.add %st, %p : (tensor<2x3x32x32xf32>, tensor<2x3x32x32xf32>) -> tensor<2x3x32x32xf32>
  return %dw, %pv, %vp, %qt, %a : tensor<48x40xf32>, tensor<2x3x32x24xf32>, tensor<2x3x24x32xf32>, tensor<2x3x32x24xf32>, tensor<2x3x32x32xf32>
}
