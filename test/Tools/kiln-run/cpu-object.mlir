// RUN: kiln-run %s --backend=cpu --random-inputs --stats --repeat=3 --emit-object=%t.o | FileCheck %s
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=NM
// RUN: kiln-run %s --backend=cpu --random-inputs --stats --cpu-threads=1 | FileCheck %s --check-prefix=CACHE
// RUN: not kiln-run %s --backend=cpu --random-inputs --matmul=mkl 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kiln-run %s --backend=cpu --random-inputs --stats --conv-channels-last=false | FileCheck %s --check-prefix=NOCL
// RUN: kiln-run %s --backend=cpu --random-inputs --stats --cpu-fast-exp=false | FileCheck %s --check-prefix=NOFASTEXP

// Tests kiln-run's CPU options: --emit-object writes the JIT's machine code
// as an ELF object with the entry and its C wrapper; --repeat prints the
// median call time; --stats shows the pipeline and the compiled-kernel cache
// (the second compile of the same module and options is a hit).

// CHECK: compile time: kiln-cpu {{[0-9.]+}} s, jit {{[0-9.]+}} s
// CHECK: pipeline: kiln-cpu{optimize=true threads=0 matmul=auto sgemm=auto conv=auto fuse=true}
// CHECK: object file: {{.*}}.o
// CHECK: kernel cache: 0 hits, 0 misses, 0 entries
// CHECK: call time: median {{[0-9.]+}} s, min {{[0-9.]+}} s, max {{[0-9.]+}} s over 3 calls
// CHECK: kernel time: median {{[0-9.]+}} s, min {{[0-9.]+}} s, max {{[0-9.]+}} s over 3 calls

// NM-DAG: T _mlir_ciface_main
// NM-DAG: T main

// CACHE: pipeline: kiln-cpu{optimize=true threads=1 matmul=auto sgemm=auto conv=auto fuse=true}
// CACHE: kernel cache: 1 hits, 1 misses, 1 entries

// NOCL: pipeline: kiln-cpu{optimize=true threads=0 matmul=auto sgemm=auto conv=auto fuse=true conv-channels-last=false}

// NOFASTEXP: pipeline: kiln-cpu{optimize=true threads=0 matmul=auto sgemm=auto conv=auto fuse=true fast-exp=false}

// BAD: kiln-run: error: --matmul must be auto, openblas or generated, not 'mkl'
func.func @main(%x: tensor<64x40xf32>, %w: tensor<40x24xf32>) -> tensor<64x24xf32> {
  %0 = kt.matmul %x, %w : (tensor<64x40xf32>, tensor<40x24xf32>) -> tensor<64x24xf32>
  %1 = kt.relu %0 : (tensor<64x24xf32>) -> tensor<64x24xf32>
  return %1 : tensor<64x24xf32>
}
