// CUDA packages (kiln-compile --backend=nvptx), checked without a GPU: the
// manifest says device cuda with the chip and the kernels' format, the
// object exports the entry's packed interface and takes the mgpu*
// functions from libkiln_rt; bad options and programs are clean errors
// that write nothing; libkiln_rt without a driver refuses to load it with
// the reason. (Runs on a GPU: test/Runtime/CUDA/package.test and
// scripts/gpu/device_check.sh.)
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --backend=nvptx --entry=prog -o %t/prog.so
// RUN: readelf -p .kiln_manifest %t/prog.so | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: "kiln_version"
// MANIFEST: "pipeline": "kiln-nvptx{chip=sm_90a features=+ptx80 emit=bin block-size=256 max-blocks=65535 fuse=true block-reduce=true matmul=cublas}"
// MANIFEST: "chip": "sm_90a",
// MANIFEST: "cpu":
// MANIFEST: "device": "cuda",
// MANIFEST: "kernel_format": "cubin",
// MANIFEST: "kernels": {{[1-9][0-9]*}},
// MANIFEST: "ptx_features": "+ptx80",
// RUN: nm -D %t/prog.so | FileCheck %s --check-prefix=SYMBOLS
// SYMBOLS-DAG: T _mlir__mlir_ciface_prog
// SYMBOLS-DAG: T kiln_package_manifest
// SYMBOLS-DAG: U mgpuLaunchKernel
// SYMBOLS-DAG: U mgpuModuleLoad
// SYMBOLS-DAG: U mgpuMemAlloc
// RUN: kiln-compile %s --backend=cuda --emit=isa --chip=sm_80 --entry=prog -o %t/ptx.so
// RUN: readelf -p .kiln_manifest %t/ptx.so | FileCheck %s --check-prefix=PTX
// PTX: "chip": "sm_80",
// PTX: "kernel_format": "ptx",
// RUN: nm -D %t/ptx.so | FileCheck %s --check-prefix=JIT
// JIT: U mgpuModuleLoadJIT
//
// A function named like a C library function (@remainder, renamed inside to
// kiln.user.remainder) keeps its name as the entry; a matmul calls cuBLAS
// through libkiln_rt unless --gpu-matmul=kernel.
// RUN: kiln-compile %s --backend=nvptx --entry=remainder,mm -o %t/libm.so
// RUN: nm -D %t/libm.so | FileCheck %s --check-prefix=RENAMED
// The manifest carries the run-time checks' messages (kernels report them
// through their device error record).
// RUN: readelf -p .kiln_manifest %t/libm.so | FileCheck %s --check-prefix=ERRORS
// ERRORS: "runtime_errors": [
// ERRORS-NEXT: nvptx.mlir:{{[0-9]+}}:{{[0-9]+}}: integer division by zero
// RENAMED-DAG: T _mlir__mlir_ciface_remainder
// RENAMED-DAG: T _mlir__mlir_ciface_mm
// RENAMED-DAG: U kiln_cuda_gemm
// RUN: kiln-compile %s --backend=nvptx --entry=mm --gpu-matmul=kernel -o %t/mm.so
// RUN: nm -D %t/mm.so | FileCheck %s --check-prefix=NOBLAS
// NOBLAS-NOT: kiln_cuda_gemm
// RUN: not kiln-compile %s --backend=nvptx --entry=mm --gpu-matmul=cudnn -o %t/none.so 2>&1 | FileCheck %s --check-prefix=MATMUL
// MATMUL: kiln-compile: error: kiln-nvptx: matmul must be cublas (cuBLAS calls through the runtime) or kernel (generated kernels), not 'cudnn'
// RUN: not kiln-compile %s --backend=nvptx --chip=gfx90a --entry=prog -o %t/none.so 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: kiln-compile: error: kiln-nvptx: chip must be sm_<major><minor> with an optional a or f (sm_80, sm_90a), not 'gfx90a'
// RUN: not kiln-compile %s --backend=nvptx --chip=sm_99 --entry=prog -o %t/none.so 2>&1 | FileCheck %s --check-prefix=CHIP99
// CHIP99: kiln-compile: error: kiln-nvptx: chip 'sm_99' is not a CUDA architecture LLVM's NVPTX backend knows; known: {{.*}}sm_90a
// CHIP99-NOT: is not a recognized processor
// RUN: not ls %t/none.so
// RUN: not kiln-compile %s --backend=nvptx --emit=fatbin --entry=prog -o %t/none.so 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: kiln-compile: error: kiln-nvptx: emit must be isa (PTX) or bin (cubin), not 'fatbin'
// RUN: not kiln-compile %s --backend=rocm --entry=prog -o %t/none.so 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: kiln-compile: error: --backend must be cpu or nvptx (alias cuda), not 'rocm'
// RUN: not kiln-compile %s --backend=nvptx --entry=on_cpu -o %t/none.so 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: kiln-compile: error: {{.*}}nvptx.mlir:[[# @LINE + 25]]:3: kg.program @on_cpu cannot be packaged: the guard wants device 'cpu'; CUDA packages take cuda tensors
// RUN: not kiln-compile %s --backend=nvptx --entry=host_read -o %t/none.so 2>&1 | FileCheck %s --check-prefix=NOLOWERING
// NOLOWERING: kiln-compile: error: kiln-nvptx failed:
// NOLOWERING: nvptx.mlir:[[# @LINE + 32]]
// RUN: not test -e %t/none.so
//
// Without a driver (CI), libkiln_rt refuses the package with the reason.
// RUN: %if !cuda-driver %{ %python_dlopen %S/Inputs/load_cuda_package.py %t/prog.so | FileCheck %s --check-prefix=NODRIVER %}
// NODRIVER: KilnRtError: cannot load CUDA package '{{.*}}prog.so': no CUDA driver

kg.program @prog(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  kg.guard_tensor %a {dtype = f32, shape = ["s0", 4], device = "cuda"} : tensor<?x4xf32>
  kg.guard_tensor %b {dtype = f32, shape = ["s0", 4], device = "cuda"} : tensor<?x4xf32>
  %r:2 = kg.graph @prog_g0(%a, %b) : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>):
    %0 = kt.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = kt.exp %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = kt.sum %1 {dim = [1], keepdim = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
    %3 = kt.div %1, %2 : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
    kg.yield %3, %x : tensor<?x4xf32>, tensor<?x4xf32>
  }
  kg.return %r#0, %r#1 : tensor<?x4xf32>, tensor<?x4xf32>
}

kg.program @on_cpu(%a: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [4], device = "cpu"} : tensor<4xf32>
  %r = kg.graph @on_cpu_g0(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %0 = kt.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %r : tensor<4xf32>
}

func.func @host_read(%x: tensor<5xf32>) -> tensor<?x1xi64> {
  %0 = kt.nonzero %x : (tensor<5xf32>) -> tensor<?x1xi64>
  return %0 : tensor<?x1xi64>
}

func.func @remainder(%x: tensor<16xi32>, %y: tensor<16xi32>) -> tensor<16xi32> {
  %0 = kt.remainder %x, %y : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
  return %0 : tensor<16xi32>
}

func.func @mm(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = kt.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
