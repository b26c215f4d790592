// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg=softmax-stores-exp -kiln-form-kernels | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu=threads=2 -mlir-print-ir-before=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: kiln-opt %s -split-input-file -kiln-cpu="threads=2 fuse=false" -mlir-print-ir-before=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFUSE

// Kernel formation of softmax lowered with softmax-stores-exp (as kiln-cpu
// does with fuse=true): exp once per element, into the kernel's result tile.
// Through kiln-cpu, the vectorized kernels before bufferization hold one
// vector exp each; without kernel formation (fuse=false) kiln-cpu keeps the
// recomputing form, two exps (a stored e would be a whole tensor's extra
// trip through memory).

// Tests that softmax over rows is one forall over row blocks whose body
// computes the max, e = exp(x - max) once into the kernel's result tile (the
// slice of the forall's shared output), the sum of e, and the normalization
// in place; nothing is computed outside the loop. Tiling fuses e twice (for
// the sum and as the normalization's destination, the first copy writing a
// scratch tile): the copies are merged into the one writing the result, so
// exp appears once.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.*]]) = (0) to (37) step (16) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[X:.*]] = tensor.extract_slice %arg0[%[[I]], 0] [%{{.*}}, 1000] [1, 1]
// CHECK: linalg.fill
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x1000xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [%{{.*}}, 1000] [1, 1]
// CHECK: %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]] : {{.*}}) outs(%[[DST]] : tensor<?x1000xf32>)
// CHECK: math.exp {{.*}} {kiln.materialize}
// CHECK-NOT: math.exp
// CHECK: linalg.fill
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<?x1000xf32>)
// CHECK: %[[RCP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<?xf64>)
// CHECK: arith.divf
// CHECK: %[[N:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[RCP]] : tensor<?xf32>) outs(%[[E]] : tensor<?x1000xf32>)
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK: tensor.parallel_insert_slice %[[N]] into %[[OUT]]
// CHECK: } {kiln.kernel = "fused_softmax_0"}
// CHECK-NOT: linalg.
// CHECK-NOT: math.exp
// CHECK: return
// CPU-LABEL: func.func private @fused_softmax_0
// CPU-COUNT-1: math.exp {{.*}} : vector<
// CPU-NOT: math.exp
// CPU: return
// NOFUSE-LABEL: func.func @softmax_rows
// NOFUSE-NOT: kiln.materialize
// NOFUSE-COUNT-2: math.exp {{.*}} : vector<
// NOFUSE: return
func.func @softmax_rows(%x: tensor<37x1000xf32>) -> tensor<37x1000xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<37x1000xf32>) -> tensor<37x1000xf32>
  return %0 : tensor<37x1000xf32>
}

// -----

// Tests softmax over dim 0: the normalization reads only 1/sum (a pointwise
// op of the sum), which still names the columns as the rows to tile, so the
// reductions stay inside the loop.
// CHECK-LABEL: func.func @softmax_dim0
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[J:.*]]) = (0) to (40) step (16)
// CHECK: tensor.extract_slice %arg0[0, %[[J]]] [6, %{{.*}}] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: math.exp {{.*}} {kiln.materialize}
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: } {kiln.kernel = "fused_softmax_0"}
// CPU-LABEL: func.func private @fused_softmax_0
// CPU-COUNT-1: math.exp {{.*}} : vector<
// CPU-NOT: math.exp
// CPU: return
func.func @softmax_dim0(%x: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %0 = kt.softmax %x {dim = 0} : (tensor<6x40xf32>) -> tensor<6x40xf32>
  return %0 : tensor<6x40xf32>
}

// -----

// Tests a masked softmax (GPT-2's scale and mask as a prologue): the
// prologue is fused into the max and into e (the marker on e's exp survives
// that fusion, which builds a new generic), and e is still stored once.
// CHECK-LABEL: func.func @masked
// CHECK: scf.forall
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xi1>, tensor<?x64xf32>, tensor<f32>, tensor<f32>)
// CHECK: arith.select
// CHECK: arith.maxnumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}} : tensor<?x64xi1>, tensor<?x64xf32>, tensor<f32>, tensor<f32>, tensor<?xf32>)
// CHECK: arith.select
// CHECK: math.exp {{.*}} {kiln.materialize}
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] : tensor<?x64xf32>)
// CHECK-NOT: math.exp
// CHECK: } {kiln.kernel = "fused_mul_where_softmax_0"}
// CPU-LABEL: func.func private @fused_mul_where_softmax_0
// CPU-COUNT-1: math.exp {{.*}} : vector<
// CPU-NOT: math.exp
// CPU: return
func.func @masked(%x: tensor<4x64xf32>, %m: tensor<4x64xi1>) -> tensor<4x64xf32> {
  %c = kt.constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %ninf = kt.constant {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %0 = kt.mul %x, %c : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %1 = kt.where %m, %0, %ninf : (tensor<4x64xi1>, tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %2 = kt.softmax %1 {dim = 1} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  return %2 : tensor<4x64xf32>
}

// -----

// Tests log_softmax over rows: e stored once into the result tile, its sum,
// log(sum), and the result in place over e (no second exp).
// CHECK-LABEL: func.func @log_softmax_rows
// CHECK: scf.forall (%[[I:.*]]) = (0) to (37) step (16) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[DST:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0]
// CHECK: %[[E:.*]] = linalg.generic {{.*}} outs(%[[DST]] : tensor<?x1000xf32>)
// CHECK: math.exp {{.*}} {kiln.materialize}
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] : tensor<?x1000xf32>)
// CHECK: math.log
// CHECK: %[[N:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?x1000xf32>)
// CHECK: arith.select
// CHECK: tensor.parallel_insert_slice %[[N]] into %[[OUT]]
// CHECK: } {kiln.kernel = "fused_log_softmax_0"}
// Through kiln-cpu (online-row-stats, the input a kernel argument) the max
// and the sum of exp are one read of the row (the online step: one exp per
// vector step, plus the rescales of its block and lane sums), and the
// result pass x - max - log(sum) has no exp.
// CPU-LABEL: func.func private @fused_log_softmax_0
// CPU: scf.for {{.*}} -> (vector<64xf32>, vector<64xf32>)
// CPU-NEXT: vector.transfer_read
// CPU-NOT: vector.transfer_read
// CPU: math.exp {{.*}} : vector<64xf32>
// CPU-NOT: vector.transfer_read
// CPU: scf.yield
// CPU: vector.reduction <add>
// CPU: math.exp {{.*}} : f32
// CPU-NOT: math.exp
// CPU: vector.transfer_write {{.*}} : vector<1x32xf32>, tensor<1x?xf32>
// CPU-NOT: math.exp
// CPU: return
func.func @log_softmax_rows(%x: tensor<37x1000xf32>) -> tensor<37x1000xf32> {
  %0 = kt.log_softmax %x {dim = 1} : (tensor<37x1000xf32>) -> tensor<37x1000xf32>
  return %0 : tensor<37x1000xf32>
}

// -----

// Tests a softmax with an epilogue: the recomputing form (exp in the sum
// and in the fused normalization + epilogue), one output.
// CHECK-LABEL: func.func @epilogue
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64xf32>)
// CHECK-NOT: kiln.materialize
// CHECK: } {kiln.kernel = "fused_softmax_mul_0"}
func.func @epilogue(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %1 = kt.mul %0, %y : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %1 : tensor<4x64xf32>
}
