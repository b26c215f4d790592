// kiln-decompose on nll_loss and cross_entropy (kept log_softmax shows the
// chain cross_entropy -> log_softmax + nll_loss -> primitives).
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s
// RUN: kiln-opt %s -kiln-decompose=keep=kt.log_softmax,kt.nll_loss | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s -kiln-decompose | FileCheck %s --check-prefix=NONE
// NONE-NOT: kt.nll_loss
// NONE-NOT: kt.cross_entropy
// NONE-NOT: kt.log_softmax

// Ignored targets index 0 and are zeroed with where; mean divides by the
// count of kept elements.
// CHECK-LABEL: func.func @nll
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64>)
// CHECK: %[[IGN:.*]] = kt.full {dtype = i64, size = [], value = 1.000000e+00 : f64}
// CHECK: %[[VALID:.*]] = kt.ne %[[T]], %[[IGN]] : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
// CHECK: %[[ZI:.*]] = kt.full {dtype = i64, size = [], value = 0.000000e+00 : f64}
// CHECK: %[[SAFE:.*]] = kt.where %[[VALID]], %[[T]], %[[ZI]]
// CHECK: %[[CNT:.*]] = kt.cast %[[VALID]] {dtype = f32} : (tensor<4xi1>) -> tensor<4xf32>
// CHECK: %[[IDX:.*]] = kt.unsqueeze %[[SAFE]] {dim = 1 : i64} : (tensor<4xi64>) -> tensor<4x1xi64>
// CHECK: %[[G:.*]] = kt.gather %[[X]], %[[IDX]] {dim = 1 : i64} : (tensor<4x3xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
// CHECK: %[[GS:.*]] = kt.squeeze %[[G]] {dim = [1]}
// CHECK: %[[L:.*]] = kt.neg %[[GS]]
// CHECK: %[[LZ:.*]] = kt.where %[[VALID]], %[[L]], %{{.*}} : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[S:.*]] = kt.sum %[[LZ]] : (tensor<4xf32>) -> tensor<f32>
// CHECK: %[[N:.*]] = kt.sum %[[CNT]] : (tensor<4xf32>) -> tensor<f32>
// CHECK: %[[R:.*]] = kt.div %[[S]], %[[N]]
// CHECK: return %[[R]]
func.func @nll(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t {ignore_index = 1} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The class weight of each target is an embedding lookup in [C, 1].
// CHECK-LABEL: func.func @nll_weight
// CHECK-SAME: %[[W:[^:]*]]: tensor<3xf32>)
// CHECK: %[[TBL:.*]] = kt.unsqueeze %[[W]] {dim = 1 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[E:.*]] = kt.embedding %[[TBL]], %{{.*}} : (tensor<3x1xf32>, tensor<4xi64>) -> tensor<4x1xf32>
// CHECK: %[[WT:.*]] = kt.squeeze %[[E]] {dim = [1]}
// CHECK: %[[WTZ:.*]] = kt.where %{{.*}}, %[[WT]], %{{.*}}
// CHECK: kt.gather
// CHECK: %[[NEG:.*]] = kt.neg
// CHECK: %[[L:.*]] = kt.mul %[[NEG]], %[[WTZ]]
// CHECK: %[[LZ:.*]] = kt.where %{{.*}}, %[[L]], %{{.*}}
// CHECK: %[[R:.*]] = kt.sum %[[LZ]] : (tensor<4xf32>) -> tensor<f32>
// CHECK: return %[[R]]
func.func @nll_weight(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t, %w {reduction = #kt.reduction<sum>} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// KEEP-LABEL: func.func @ce_ls
// KEEP-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64>)
// KEEP: %[[LP:.*]] = kt.log_softmax %[[X]] {dim = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// KEEP: %[[NLL:.*]] = kt.nll_loss %[[LP]], %[[T]] : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
// KEEP: %[[M:.*]] = kt.mean %[[LP]] {dim = [1]} : (tensor<4x3xf32>) -> tensor<4xf32>
// KEEP: %[[SM:.*]] = kt.neg %[[M]]
// KEEP: %[[SMZ:.*]] = kt.where %{{.*}}, %[[SM]], %{{.*}}
// KEEP: %[[SS:.*]] = kt.sum %[[SMZ]]
// KEEP: %[[SD:.*]] = kt.div %[[SS]], %{{.*}}
// KEEP: %[[A:.*]] = kt.full {dtype = f32, size = [], value = 9.000000e-01 : f64}
// KEEP: %[[NA:.*]] = kt.mul %[[NLL]], %[[A]]
// KEEP: %[[B:.*]] = kt.full {dtype = f32, size = [], value = 1.000000e-01 : f64}
// KEEP: %[[SB:.*]] = kt.mul %[[SD]], %[[B]]
// KEEP: %[[R:.*]] = kt.add %[[NA]], %[[SB]]
// KEEP: return %[[R]]
// CHECK-LABEL: func.func @ce_ls
// CHECK: kt.amax
// CHECK: kt.exp
// CHECK: kt.log
// CHECK: kt.gather
// CHECK: kt.mean
func.func @ce_ls(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.1 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Probability targets, f16 computed in f32: -sum_c(logp * t) then mean.
// KEEP-LABEL: func.func @ce_prob_f16
// KEEP-SAME: (%[[X:.*]]: tensor<4x5xf16>, %[[P:.*]]: tensor<4x5xf16>)
// KEEP: %[[XC:.*]] = kt.cast %[[X]] {dtype = f32}
// KEEP: %[[LP:.*]] = kt.log_softmax %[[XC]] {dim = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
// KEEP: %[[PC:.*]] = kt.cast %[[P]] {dtype = f32}
// KEEP: %[[PR:.*]] = kt.mul %[[LP]], %[[PC]]
// KEEP: %[[S:.*]] = kt.sum %[[PR]] {dim = [1]} : (tensor<4x5xf32>) -> tensor<4xf32>
// KEEP: %[[L:.*]] = kt.neg %[[S]]
// KEEP: %[[M:.*]] = kt.mean %[[L]] : (tensor<4xf32>) -> tensor<f32>
// KEEP: %[[R:.*]] = kt.cast %[[M]] {dtype = f16} : (tensor<f32>) -> tensor<f16>
// KEEP: return %[[R]]
func.func @ce_prob_f16(%x: tensor<4x5xf16>, %p: tensor<4x5xf16>) -> tensor<f16> {
  %0 = kt.cross_entropy %x, %p : (tensor<4x5xf16>, tensor<4x5xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}
