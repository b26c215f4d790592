// REQUIRES: ptxas
// RUN: kiln-opt %s -kiln-nvptx='emit=isa' -mlir-print-ir-after=kiln-nvptx-map-reductions -mlir-disable-threading -o %t.mlir 2>&1 | FileCheck %s
// RUN: kiln-opt %s -kiln-nvptx='emit=isa block-reduce=false' -mlir-print-ir-after=kiln-nvptx-map-to-gpu -mlir-disable-threading 2>&1 -o /dev/null | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t.ptx && %python %S/../../../scripts/extract_ptx.py %t.mlir %t.ptx
// RUN: cat %t.ptx/*.ptx | FileCheck %s --check-prefix=PTX
// RUN: ptxas -arch=sm_90a %t.ptx/*.ptx -o /dev/null

// kiln-nvptx end to end on the reductions of softmax (a max, then a sum in
// f64 of exp(x - max) fused into it) and a dynamic sum (f64 accumulation, as on the CPU): each becomes a
// block-per-row kernel with a block all-reduce, lowered to warp shuffles and
// shared memory; the kernels assemble for sm_90a. With block-reduce=false
// the pass is not in the pipeline (one thread per row).

// CHECK-LABEL: func.func @softmax
// CHECK: gpu.launch
// CHECK: gpu.all_reduce maximumf
// CHECK: gpu.launch
// CHECK: iter_args({{.*}}) -> (f64)
// CHECK: math.exp
// CHECK: gpu.all_reduce add
// CHECK-LABEL: func.func @row_sum
// CHECK: memref.dim
// CHECK: gpu.launch
// CHECK: iter_args({{.*}}) -> (f64)
// CHECK: gpu.all_reduce add
// OFF-NOT: gpu.all_reduce
// OFF: func.func @softmax
// OFF: gpu.launch
// OFF-NOT: gpu.all_reduce
// PTX: .entry softmax_kernel
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
func.func @softmax(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %0 = kt.softmax %x {dim = 1} : (tensor<64x1000xf32>) -> tensor<64x1000xf32>
  return %0 : tensor<64x1000xf32>
}

func.func @row_sum(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = kt.sum %x {dim = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
