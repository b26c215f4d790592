// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu -o /dev/null

// Declared result types less static than the inferred ones (accepted by the
// verifiers: they are compatible): the lowering builds the inferred type and
// casts to the declared one for the users (kiln::refineKTResultTypes). It
// used to build an invalid tensor.expand_shape from the declared type.
// Execution of every op this way: test/Execution/CPU/less_static_results.py.

// Tests kt.sum with keepdim declaring tensor<?x1xf32> for tensor<2x1xf32>.
// CHECK-LABEL: func.func @sum_keepdim
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[E]] : tensor<2x1xf32> to tensor<?x1xf32>
// CHECK: return %[[C]] : tensor<?x1xf32>
func.func @sum_keepdim(%x: tensor<2x3xf32>) -> tensor<?x1xf32> {
  %0 = kt.sum %x {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// Tests kt.logsumexp with keepdim declaring every dim `?`, consumed by
// another kt op that reads the declared type.
// CHECK-LABEL: func.func @logsumexp_keepdim
// CHECK: tensor.expand_shape %{{.*}} : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[C:.*]] = tensor.cast %{{.*}} : tensor<4x1xf32> to tensor<?x?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<?x?xf32>)
func.func @logsumexp_keepdim(%x: tensor<4x5xf32>) -> tensor<?x?xf32> {
  %0 = kt.logsumexp %x {dim = [1], keepdim = true} : (tensor<4x5xf32>) -> tensor<?x?xf32>
  %1 = kt.neg %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Tests that a declared type more static than the inferred one (a size
// where inference gives `?`: checked at run time) is kept as it is.
// CHECK-LABEL: func.func @more_static
// CHECK: math.exp
// CHECK: } -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}} : tensor<3xf32>
func.func @more_static(%x: tensor<?xf32>) -> tensor<3xf32> {
  %0 = kt.exp %x : (tensor<?xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
