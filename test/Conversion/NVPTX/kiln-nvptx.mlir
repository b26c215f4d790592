// RUN: kiln-opt %s -kiln-nvptx | FileCheck %s
// RUN: kiln-opt %s -kiln-nvptx | FileCheck %s --check-prefix=BIN
// RUN: kiln-opt %s -kiln-nvptx | mlir-translate-22 --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// RUN: kiln-opt %s -kiln-nvptx='chip=sm_80 emit=isa' | FileCheck %s --check-prefix=SM80
// RUN: not kiln-opt %s -kiln-nvptx='chip=gfx90a' 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not kiln-opt %s -kiln-nvptx='features=ptx80' 2>&1 | FileCheck %s --check-prefix=FEATURES
// RUN: not kiln-opt %s -kiln-nvptx='chip=sm_99' 2>&1 | FileCheck %s --check-prefix=CHIP99
// RUN: not kiln-opt %s -kiln-nvptx='features=+ptx99' 2>&1 | FileCheck %s --check-prefix=PTX99
// RUN: not kiln-opt %s -kiln-nvptx='chip=sm_100a features=+ptx80' 2>&1 | FileCheck %s --check-prefix=PTXMIN
// RUN: not kiln-opt %s -kiln-nvptx='emit=fatbin' 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not kiln-opt %s -kiln-nvptx='block-size=2048' 2>&1 | FileCheck %s --check-prefix=BLOCK

// kiln-nvptx end to end: a fused pointwise chain with dynamic dims becomes
// kernels (grid-stride loops over the linearized elements) in a
// gpu.binary of sm_90a PTX, and host code fully lowered to the LLVM dialect
// that allocates device buffers and launches them through the mgpu*
// runtime functions.

// BIN: gpu.binary @chain_kernel
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// BIN-SAME: assembly = "
// BIN-SAME: .target sm_90a
// BIN-SAME: .visible .entry chain_kernel(
// BIN-SAME: ex2.approx
// CHECK-LABEL: llvm.func @chain(
// CHECK-NOT: gpu.alloc
// CHECK-NOT: unrealized_conversion_cast
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @chain_kernel::@chain_kernel blocks in
// CHECK: llvm.return

// LLVM-DAG: call ptr @mgpuModuleLoadJIT
// LLVM-DAG: call ptr @mgpuMemAlloc
// LLVM-DAG: call void @mgpuLaunchKernel

// SM80: .target sm_80

// CHIP: kiln-nvptx: chip must be sm_<major><minor> with an optional a or f (sm_80, sm_90a), not 'gfx90a'
// FEATURES: kiln-nvptx: features must be +ptx<version> (+ptx80), not 'ptx80'
// Of the right form but unknown to LLVM's NVPTX backend: rejected before any
// PTX is written (it used to say `.target sm_99`, or drop +ptx99 for 8.0).
// CHIP99: kiln-nvptx: chip 'sm_99' is not a CUDA architecture LLVM's NVPTX backend knows; known: {{.*}}sm_90a
// PTX99: kiln-nvptx: features '+ptx99' names a PTX version LLVM's NVPTX backend does not know; known: {{.*}}ptx80
// A known chip with a PTX version too old for it: LLVM's own message.
// PTXMIN: error: PTX version 8.0 does not support target 'sm_100a'. Minimum required PTX version is 8.6
// EMIT: kiln-nvptx: emit must be isa (PTX) or bin (cubin), not 'fatbin'
// BLOCK: kiln-nvptx: block-size must be in [1, 1024], not 2048
func.func @chain(%a: tensor<?x256xf32>, %b: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %0 = kt.add %a, %b : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
  %1 = kt.exp %0 : (tensor<?x256xf32>) -> tensor<?x256xf32>
  %2 = kt.mul %1, %a : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
  return %2 : tensor<?x256xf32>
}
