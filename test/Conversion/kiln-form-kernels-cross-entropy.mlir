// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg=softmax-stores-exp -kiln-form-kernels | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg="softmax-stores-exp online-row-stats" -kiln-form-kernels | FileCheck %s --check-prefix=ONLINE
// RUN: kiln-opt %s -split-input-file -kiln-cpu=threads=2 -mlir-print-ir-before=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU

// Kernel formation of cross_entropy (issue 13, section 4): kiln-fuse makes
// the op a group of its own, and its per-row loops (the max, the sum of
// exp, log(sum), the per-row loss) become ONE forall over blocks of 16 rows,
// so the passes over a block after the first read it from cache. A mean or
// sum over the rows (a rank-0 reduction) runs after the kernel over the
// per-row losses; the rank-0 reduction does not absorb the per-row generic
// (it would leave the row statistics two kernels of their own, the max
// computed twice). Through kiln-cpu (online-row-stats), the kernel's max
// and sum of exp are one generic with two results, lowered to vector loops
// that read each row once (OnlineRowStats.cpp).

// Tests that a mean over class-index targets is one forall over blocks of
// 16 rows (37: a partial tile) whose body computes the block's max, the sum
// of exp (f32 exp, f64 sum) and the per-row loss and weight (with the
// target range check); nothing of the rows is computed outside the loop,
// and after it one rank-0 reduction of the per-row losses and weights and
// the division.
// CHECK-LABEL: func.func @ce_mean
// CHECK-NOT: linalg.generic
// CHECK: %[[K:.+]]:2 = scf.forall (%[[I:.+]]) = (0) to (37) step (16) shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<37xf64>, tensor<37xf64>)
// CHECK: %[[X:.+]] = tensor.extract_slice %arg0[%[[I]], 0] [%{{.+}}, 1000] [1, 1]
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x1000xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<?x1000xf32>, tensor<?xf32>)
// CHECK: math.exp {{.*}} : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.+}}, %[[MAX]], %[[SUM]] :
// CHECK: math.log {{.*}} : f64
// CHECK: func.call @kiln_cpu_runtime_error
// CHECK: tensor.extract %arg0
// CHECK: } {kiln.kernel = "fused_cross_entropy_0"}
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[K]]#0, %[[K]]#1 : tensor<37xf64>, tensor<37xf64>)
// CHECK-NOT: func.call
// CHECK: arith.divf
// CHECK: tensor.from_elements
// With online-row-stats the max and the sum of exp are one generic with two
// results (the online step, its exp marked), tiled into the same kernel.
// ONLINE-LABEL: func.func @ce_mean
// ONLINE: scf.forall (%[[I:.+]]) = (0) to (37) step (16)
// ONLINE: %[[X:.+]] = tensor.extract_slice %arg0[%[[I]], 0] [%{{.+}}, 1000] [1, 1]
// ONLINE: %[[MS:.+]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x1000xf32>) outs(%{{.+}}, %{{.+}} : tensor<?xf32>, tensor<?xf64>)
// ONLINE-NOT: arith.maxnumf
// ONLINE: math.exp {{.*}} {kiln.online_lse} : f32
// ONLINE-NOT: linalg.generic {{.*}}"reduction"
// ONLINE: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.+}}, %[[MS]]#0, %[[MS]]#1 :
// ONLINE: math.log {{.*}} : f64
// ONLINE: } {kiln.kernel = "fused_cross_entropy_0"}
// Through kiln-cpu: per row of the block, blocks of 16 vector steps, each
// step the row's only read (64 f32 lanes) and one exp; the masked last step
// (1000 = 15 * 64 + 40); the lanes merged once per row.
// CPU-LABEL: func.func private @fused_cross_entropy_0
// CPU: scf.forall
// CPU-NOT: vector.multi_reduction
// CPU: scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %c1 iter_args
// CPU: scf.for %[[J:.+]] = %c0 to %c960 step %c64 iter_args({{.*}}) -> (vector<64xf32>, vector<64xf32>)
// CPU-NEXT: vector.transfer_read %{{.+}}[%[[R]], %[[J]]]{{.*}} : tensor<?x1000xf32>, vector<64xf32>
// CPU-NOT: vector.transfer_read
// CPU: math.exp {{.*}} : vector<64xf32>
// CPU-NOT: vector.transfer_read
// CPU: scf.yield
// CPU: vector.constant_mask [40] : vector<64xi1>
// CPU: vector.transfer_read %{{.+}}[%[[R]], %c960]
// CPU: vector.reduction <maxnumf>
// CPU: vector.reduction <add>, %{{.+}} : vector<64xf64> into f64
// CPU: } {kiln.kernel = "fused_cross_entropy_0"}
func.func @ce_mean(%x: tensor<37x1000xf32>, %t: tensor<37xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<37x1000xf32>, tensor<37xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that `none` is one forall over blocks of 16 rows (as the row
// reductions themselves would be tiled, not as a 1-D pointwise op: 1024
// rows) holding the row statistics, the per-row loss and its rounding, and
// that the target range check runs only in the kernel (the per-row generic
// that holds it is not folded into the rounding one, which would leave a
// copy outside the kernel for its side effect).
// CHECK-LABEL: func.func @ce_none
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%{{.+}}) = (0) to (2000) step (16)
// CHECK: arith.maxnumf
// CHECK: math.exp {{.*}} : f32
// CHECK: func.call @kiln_cpu_runtime_error
// CHECK: arith.truncf {{.*}} : f64 to f32
// CHECK: } {kiln.kernel = "fused_cross_entropy_0"}
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @ce_none(%x: tensor<2000x10xf32>, %t: tensor<2000xi64>) -> tensor<2000xf32> {
  %r = kt.cross_entropy %x, %t {reduction = #kt.reduction<none>} : (tensor<2000x10xf32>, tensor<2000xi64>) -> tensor<2000xf32>
  return %r : tensor<2000xf32>
}

// -----

// Tests that label smoothing's reduction over the classes (-w[c] logp[c],
// reading log(sum) per row) is in the kernel with the other row loops.
// CHECK-LABEL: func.func @ce_smooth
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%{{.+}}) = (0) to (64) step (16)
// CHECK: arith.maxnumf
// CHECK: math.exp {{.*}} : f32
// CHECK: math.log {{.*}} : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %{{.+}}, %{{.+}}, %arg2 : tensor<16x300xf32>, tensor<16xf32>, tensor<16xf64>, tensor<300xf32>)
// CHECK: } {kiln.kernel = "fused_cross_entropy_0"}
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CPU-LABEL: func.func private @fused_cross_entropy_0
// CPU: scf.forall
// CPU: math.exp {{.*}} : vector<64xf32>
// CPU: } {kiln.kernel = "fused_cross_entropy_0"}
func.func @ce_smooth(%x: tensor<64x300xf32>, %t: tensor<64xi64>, %w: tensor<300xf32>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t, %w {reduction = #kt.reduction<sum>, ignore_index = 3, label_smoothing = 1.000000e-01 : f64} : (tensor<64x300xf32>, tensor<64xi64>, tensor<300xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that probability targets read the target's block in the kernel
// (-t logp per row after the statistics).
// CHECK-LABEL: func.func @ce_prob
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.+]]) = (0) to (64) step (16)
// CHECK: math.exp {{.*}} : f32
// CHECK: %[[T:.+]] = tensor.extract_slice %arg1[%[[I]], 0] [16, 300] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]] :
// CHECK: } {kiln.kernel = "fused_cross_entropy_0"}
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
func.func @ce_prob(%x: tensor<64x300xf32>, %t: tensor<64x300xf32>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<64x300xf32>, tensor<64x300xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests `?` rows and classes: one kernel up to the run-time row count.
// CHECK-LABEL: func.func @ce_dyn
// CHECK: scf.forall (%{{.+}}) = (0) to (%{{.+}}) step (16)
// CHECK: ins(%{{.+}} : tensor<?x?xf32>)
// CHECK: math.exp {{.*}} : f32
// CHECK: } {kiln.kernel = "fused_cross_entropy_0"}
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
func.func @ce_dyn(%x: tensor<?x?xf32>, %t: tensor<?xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<f32>
  return %r : tensor<f32>
}
