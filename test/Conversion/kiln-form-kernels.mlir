// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-to-linalg -kiln-form-kernels | FileCheck %s

// Tests that a 10-op pointwise chain becomes ONE linalg.generic in one
// scf.forall kernel over row blocks (37 rows: 16, 16, 5), with the group's
// name; no kt op and no other linalg op remains.
// CHECK-LABEL: func.func @chain10
// CHECK-NOT: linalg.
// CHECK: scf.forall (%{{.*}}) = (0) to (37) step (16)
// CHECK: affine.min
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x53xf32>, tensor<?x53xf32>)
// CHECK-COUNT-10: {{arith|math}}.
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.
// CHECK: tensor.parallel_insert_slice
// CHECK: } {kiln.kernel = "fused_add_neg_exp_mul_tanh_etc_0"}
// CHECK-NOT: linalg.
// CHECK-NOT: kt.
// CHECK: return
func.func @chain10(%x: tensor<37x53xf32>, %y: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %0 = kt.add %x, %y : (tensor<37x53xf32>, tensor<37x53xf32>) -> tensor<37x53xf32>
  %1 = kt.neg %0 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %2 = kt.exp %1 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %3 = kt.mul %2, %y : (tensor<37x53xf32>, tensor<37x53xf32>) -> tensor<37x53xf32>
  %4 = kt.tanh %3 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %5 = kt.sin %4 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %6 = kt.cos %5 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %7 = kt.sqrt %6 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %8 = kt.log1p %7 : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %9 = kt.sub %8, %x : (tensor<37x53xf32>, tensor<37x53xf32>) -> tensor<37x53xf32>
  return %9 : tensor<37x53xf32>
}

// -----

// Tests that softmax over rows is one forall over row blocks whose body
// computes the max, the sum of exp and the normalization of its rows (from
// one slice of the input); nothing is computed outside the loop. 1/sum is
// computed once per row (its own generic over the tile's rows), not folded
// into the normalization, where it would be an f64 divide per element.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.*]]) = (0) to (37) step (16)
// CHECK: %[[X:.*]] = tensor.extract_slice %arg0[%[[I]], 0] [%{{.*}}, 1000] [1, 1]
// CHECK: linalg.fill
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x1000xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.fill
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] :
// CHECK: math.exp
// CHECK: %[[RCP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<?xf64>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[RCP]] :
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: } {kiln.kernel = "fused_softmax_0"}
// CHECK-NOT: linalg.
// CHECK: return
func.func @softmax_rows(%x: tensor<37x1000xf32>) -> tensor<37x1000xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<37x1000xf32>) -> tensor<37x1000xf32>
  return %0 : tensor<37x1000xf32>
}

// -----

// Tests softmax over dim 0: the kernel tiles the columns (the rows of the
// reductions), so the reductions are still inside the loop.
// CHECK-LABEL: func.func @softmax_dim0
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[J:.*]]) = (0) to (40) step (16)
// CHECK: tensor.extract_slice %arg0[0, %[[J]]] [6, %{{.*}}] [1, 1]
// CHECK-COUNT-3: linalg.generic
// CHECK: } {kiln.kernel = "fused_softmax_0"}
func.func @softmax_dim0(%x: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %0 = kt.softmax %x {dim = 0} : (tensor<6x40xf32>) -> tensor<6x40xf32>
  return %0 : tensor<6x40xf32>
}

// -----

// Tests softmax written out with keepdim reductions: the unit dims of the
// kept results fold into the consumers, and the group is the same one
// kernel as the composite.
// CHECK-LABEL: func.func @softmax_written_out
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.expand_shape
// CHECK: scf.forall
// CHECK-COUNT-3: linalg.generic
// CHECK: } {kiln.kernel = "fused_amax_sub_exp_sum_div_0"}
// CHECK-NOT: linalg.
func.func @softmax_written_out(%x: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %0 = kt.amax %x {dim = [1], keepdim = true} : (tensor<37x29xf32>) -> tensor<37x1xf32>
  %1 = kt.sub %x, %0 : (tensor<37x29xf32>, tensor<37x1xf32>) -> tensor<37x29xf32>
  %2 = kt.exp %1 : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %3 = kt.sum %2 {dim = [1], keepdim = true} : (tensor<37x29xf32>) -> tensor<37x1xf32>
  %4 = kt.div %2, %3 : (tensor<37x29xf32>, tensor<37x1xf32>) -> tensor<37x29xf32>
  return %4 : tensor<37x29xf32>
}

// -----

// Tests that layer_norm is one kernel: mean, variance and the normalized
// result of each row block in one loop.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%{{.*}}) = (0) to (19) step (16)
// CHECK-COUNT-3: linalg.generic
// CHECK: } {kiln.kernel = "fused_layer_norm_0"}
// CHECK-NOT: linalg.
func.func @layer_norm(%x: tensor<19x33xf32>, %w: tensor<33xf32>, %b: tensor<33xf32>) -> tensor<19x33xf32> {
  %0 = kt.layer_norm %x weight %w bias %b {normalized_shape = [33]} : (tensor<19x33xf32>, tensor<33xf32>, tensor<33xf32>) -> tensor<19x33xf32>
  return %0 : tensor<19x33xf32>
}

// -----

// Tests that linear + gelu + residual add is one kernel: each row block
// computes the bias broadcast, the matmul tile and one generic for the
// epilogue. The transposed weight is read whole by every tile: it is
// computed once, before the loop.
// CHECK-LABEL: func.func @linear_gelu
// CHECK: %[[WT:.*]] = linalg.transpose
// CHECK-NOT: linalg.
// CHECK: scf.forall (%{{.*}}) = (0) to (19) step (16)
// CHECK: linalg.generic
// CHECK: linalg.matmul ins(%{{.*}}, %[[WT]] : tensor<?x13xf32>, tensor<13x29xf32>) outs(%{{.*}} : tensor<?x29xf32>)
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK: arith.addf
// CHECK: } {kiln.kernel = "fused_linear_gelu_add_0"}
// CHECK-NOT: linalg.
func.func @linear_gelu(%x: tensor<19x13xf32>, %w: tensor<29x13xf32>, %b: tensor<29xf32>, %r: tensor<19x29xf32>) -> tensor<19x29xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<19x13xf32>, tensor<29x13xf32>, tensor<29xf32>) -> tensor<19x29xf32>
  %1 = kt.gelu %0 : (tensor<19x29xf32>) -> tensor<19x29xf32>
  %2 = kt.add %1, %r : (tensor<19x29xf32>, tensor<19x29xf32>) -> tensor<19x29xf32>
  return %2 : tensor<19x29xf32>
}

// -----

// Tests a reduction with a pointwise prologue and a 1-D epilogue with ? dims:
// the prologue folds into the reduction and the epilogue root is tiled by
// tile-elements, the reduction fused into the tile (the unary epilogue's
// `?` dim is its operand's own, so it needs no run-time broadcast copy; the
// mul's operands still get one, before the forall).
// CHECK-LABEL: func.func @reduce_dynamic
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (1024)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK: math.tanh
// CHECK: } {kiln.kernel = "fused_mul_sum_tanh_0"}
func.func @reduce_dynamic(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = kt.mul %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = kt.sum %0 {dim = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  %2 = kt.tanh %1 : (tensor<?xf32>) -> tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// Tests a group with two results from different roots (horizontal): each
// root is a kernel, named <group>_0 and <group>_1.
// CHECK-LABEL: func.func @horizontal
// CHECK: scf.forall
// CHECK: } {kiln.kernel = "fused_exp_sin_0_0"}
// CHECK: scf.forall
// CHECK: } {kiln.kernel = "fused_exp_sin_0_1"}
func.func @horizontal(%x: tensor<40x8xf32>) -> (tensor<40x8xf32>, tensor<40x8xf32>) {
  %0 = kt.exp %x : (tensor<40x8xf32>) -> tensor<40x8xf32>
  %1 = kt.sin %x : (tensor<40x8xf32>) -> tensor<40x8xf32>
  return %0, %1 : tensor<40x8xf32>, tensor<40x8xf32>
}

// -----

// A group with a statically empty loop (softmax over a dim of size 0) has no
// work: it is not tiled (upstream tiling does not take zero-size ranges) and
// stays plain linalg.
// CHECK-LABEL: func.func @empty_softmax
// CHECK-NOT: scf.forall
// CHECK: return
func.func @empty_softmax(%x: tensor<2x0x3xf32>) -> tensor<2x0x3xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<2x0x3xf32>) -> tensor<2x0x3xf32>
  return %0 : tensor<2x0x3xf32>
}
