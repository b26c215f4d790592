// RUN: kiln-opt %s -kiln-fuse | FileCheck %s --check-prefix=ALL
// RUN: kiln-opt %s -kiln-fuse="contractions=false" | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s -kiln-cpu="fuse=true" -mlir-print-ir-after=kiln-fuse -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s -kiln-cpu="fuse=true matmul=generated" -mlir-print-ir-after=kiln-fuse -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALL

// Tests kiln-fuse's contractions option: by default a linear joins its GELU
// and residual-add epilogue in one kernel; with contractions=false (what
// kiln-cpu uses unless matmul=generated, so that the product stays an
// OpenBLAS call) the linear stays alone and only the epilogue is fused.
// ALL-LABEL: func.func @mlp
// ALL: kt.fusion "fused_linear_gelu_add_0"
// NONE-LABEL: func.func @mlp
// NONE: kt.linear
// NONE: kt.fusion "fused_gelu_add_0"
// NONE-NOT: kt.linear
func.func @mlp(%x: tensor<64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<64x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %1 = kt.gelu %0 : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %2 = kt.add %1, %x : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %2 : tensor<64x32xf32>
}
