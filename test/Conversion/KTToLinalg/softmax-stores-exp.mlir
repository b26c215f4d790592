// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg=softmax-stores-exp | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-lower-to-linalg | FileCheck %s --check-prefix=DEFAULT
// RUN: not kiln-opt %s -kiln-lower-to-linalg=softmax-stores-exp=maybe 2>&1 | FileCheck %s --check-prefix=BADOPT

// kiln-lower-to-linalg{softmax-stores-exp} (set by kiln-cpu with fuse=true):
// softmax computes e = exp(x - max) once into a stored tensor (its math.exp
// marked kiln.materialize, so kernel formation never folds it into its
// readers), sums e, and multiplies e in place by 1/sum; log_softmax stores
// e too and writes x - max - log(sum) over it. Without the option (the
// default, the GPU pipeline) softmax's normalization computes exp again
// and log_softmax writes a fresh tensor.

// BADOPT: for the --softmax-stores-exp option: 'maybe' is invalid value for boolean argument

// Tests the stored-exp form of a softmax over the last dim, its row max
// with maxnumf (NaN skipped: it reaches every result through exp and the
// sum; maximumf by default).
// CHECK-LABEL: func.func @softmax_last
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}}["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: %[[E:.+]] = linalg.generic {{.+}}["parallel", "parallel"]} ins(%{{.+}}, %[[MAX]] : tensor<2x8xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp %{{.+}} {kiln.materialize} : f32
// CHECK: linalg.generic {{.+}}["parallel", "reduction"]} ins(%[[E]] : tensor<2x8xf32>) outs(%{{.+}} : tensor<2xf64>)
// CHECK-NOT: math.exp
// CHECK: arith.extf
// CHECK-NEXT: arith.addf %{{.+}} : f64
// CHECK: %[[R:.+]] = linalg.generic {{.+}}["parallel"]} ins(%{{.*}} : tensor<2xf64>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.divf %{{.+}} : f64
// CHECK: arith.truncf
// CHECK: linalg.generic {{.+}}["parallel", "parallel"]} ins(%[[R]] : tensor<2xf32>) outs(%[[E]] : tensor<2x8xf32>)
// CHECK-NOT: math.exp
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK-NOT: math.exp
// CHECK: return
// DEFAULT-LABEL: func.func @softmax_last
// DEFAULT-NOT: kiln.materialize
// DEFAULT: arith.maximumf
// DEFAULT: math.exp
// DEFAULT: math.exp
// DEFAULT-NEXT: arith.mulf
// DEFAULT: return
func.func @softmax_last(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kt.softmax %a {dim = -1} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests dim 0 and `?` dims: e is read along the same maps as the input.
// CHECK-LABEL: func.func @softmax_dim0_dynamic
// CHECK: linalg.generic {{.+}}["reduction", "parallel"]
// CHECK: %[[E:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: math.exp %{{.+}} {kiln.materialize} : f32
// CHECK: linalg.generic {{.+}}["reduction", "parallel"]} ins(%[[E]] : tensor<?x?xf32>)
// CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<?x?xf32>)
// CHECK-NOT: math.exp
// CHECK: return
func.func @softmax_dim0_dynamic(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kt.softmax %a {dim = 0} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Tests that an f16 softmax keeps e in f32 and rounds e * (1/sum) once into
// a new f16 tensor (not in place: e is f32).
// CHECK-LABEL: func.func @softmax_f16
// CHECK: %[[E:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<3x5xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: math.exp %{{.+}} {kiln.materialize} : f32
// CHECK: linalg.generic {{.+}} ins(%[[E]], %{{.+}} : tensor<3x5xf32>, tensor<3xf32>) outs(%{{.+}} : tensor<3x5xf16>)
// CHECK: arith.mulf %{{.+}} : f32
// CHECK-NEXT: arith.truncf %{{.+}} : f32 to f16
func.func @softmax_f16(%a: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %0 = kt.softmax %a {dim = 1} : (tensor<3x5xf16>) -> tensor<3x5xf16>
  return %0 : tensor<3x5xf16>
}

// -----

// Tests log_softmax under the option: e = exp(x - max) stored too (only so
// that the exp pass writes the output tile), the sum of e, log(sum) per
// row, and x - max - log(sum) in place into e, taking e where e is NaN
// (exactly where the result is NaN anyway), with no exp; f16 keeps the
// recomputing form (e in f32 is not the result's tile).
// CHECK-LABEL: func.func @log_softmax_last
// CHECK: arith.maxnumf
// CHECK: %[[E:.+]] = linalg.generic {{.+}}["parallel", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<2x8xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK: math.exp %{{.+}} {kiln.materialize} : f32
// CHECK: linalg.generic {{.+}}["parallel", "reduction"]} ins(%[[E]] : tensor<2x8xf32>)
// CHECK-NOT: math.exp
// CHECK: %[[L:.+]] = linalg.generic {{.+}}["parallel"]} ins(%{{.*}} : tensor<2xf64>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: math.log %{{.+}} : f64
// CHECK: linalg.generic {{.+}}["parallel", "parallel"]} ins(%{{.+}}, %{{.+}}, %[[L]] : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>) outs(%[[E]] : tensor<2x8xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %[[OUT:.+]]: f32):
// CHECK-NOT: math.exp
// CHECK: arith.subf
// CHECK-NEXT: %[[Y:.+]] = arith.subf
// CHECK-NEXT: %[[NAN:.+]] = arith.cmpf uno, %[[OUT]], %[[OUT]] : f32
// CHECK-NEXT: arith.select %[[NAN]], %[[OUT]], %[[Y]] : f32
// CHECK-NOT: math.exp
// CHECK: return
// DEFAULT-LABEL: func.func @log_softmax_last
// DEFAULT-NOT: kiln.materialize
// DEFAULT: math.exp
// DEFAULT-NOT: math.exp
// DEFAULT: arith.subf
// DEFAULT-NEXT: arith.subf
// DEFAULT: return
func.func @log_softmax_last(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kt.log_softmax %a {dim = -1} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests that a softmax whose result another kt op reads (an epilogue, in a
// kernel) keeps the recomputing form: the in-place normalization cannot be
// fused into the epilogue (e would become a scratch tile besides the
// output, with copies).
// CHECK-LABEL: func.func @softmax_epilogue
// CHECK-NOT: kiln.materialize
// CHECK: math.exp
// CHECK: math.exp
// CHECK-NEXT: arith.mulf
// CHECK: return
func.func @softmax_epilogue(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kt.softmax %a {dim = -1} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = kt.mul %0, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax_f16
// CHECK-NOT: kiln.materialize
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: return
func.func @log_softmax_f16(%a: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %0 = kt.log_softmax %a {dim = 1} : (tensor<3x5xf16>) -> tensor<3x5xf16>
  return %0 : tensor<3x5xf16>
}
