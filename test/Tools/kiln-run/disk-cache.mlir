// RUN: rm -rf %t && mkdir -p %t
// RUN: env KILN_LOGS=codegen kiln-run %s --backend=cpu --random-inputs --stats --cache-dir=%t/cache 2>%t/cold.log | FileCheck %s --check-prefix=COLD
// RUN: FileCheck %s --check-prefix=COLDLOG < %t/cold.log
// RUN: env KILN_LOGS=codegen KILN_CACHE_DIR=%t/cache kiln-run %s --backend=cpu --random-inputs --stats 2>%t/warm.log | FileCheck %s --check-prefix=WARM
// RUN: FileCheck %s --check-prefix=WARMLOG < %t/warm.log
// RUN: ls %t/cache | FileCheck %s --check-prefix=FILES
// Off: --cache-dir= (empty) and off, KILN_CACHE_DIR=off and empty.
// RUN: kiln-run %s --backend=cpu --random-inputs --stats --cache-dir= | FileCheck %s --check-prefix=OFF
// RUN: kiln-run %s --backend=cpu --random-inputs --stats --cache-dir=off | FileCheck %s --check-prefix=OFF
// RUN: env KILN_CACHE_DIR=off kiln-run %s --backend=cpu --random-inputs --stats | FileCheck %s --check-prefix=OFF
// RUN: env KILN_CACHE_DIR= kiln-run %s --backend=cpu --random-inputs --stats | FileCheck %s --check-prefix=OFF
// The default: $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln.
// RUN: env -u KILN_CACHE_DIR XDG_CACHE_HOME=%t/xdg kiln-run %s --backend=cpu --random-inputs --stats | FileCheck %s --check-prefix=XDG -DDIR=%t
// RUN: env -u KILN_CACHE_DIR -u XDG_CACHE_HOME HOME=%t/home kiln-run %s --backend=cpu --random-inputs --stats | FileCheck %s --check-prefix=HOME -DDIR=%t
// RUN: ls %t/xdg/kiln | FileCheck %s --check-prefix=FILES
// RUN: ls %t/home/.cache/kiln | FileCheck %s --check-prefix=FILES

// Tests the compiled-code disk cache of the CPU backend (docs/codegen.md,
// "Disk cache"): the first process compiles and stores, the second loads
// the code instead of compiling (no pipeline time), reports the hit in
// --stats and logs it with the key's prefix under KILN_LOGS=codegen.

// COLD: compile time: kiln-cpu {{[0-9.]+}} s, jit {{[0-9.]+}} s{{$}}
// COLD: kernel cache: 1 hits, 1 misses, 1 entries
// COLD: disk cache: 0 hits, 1 misses, 0 corrupt, 1 stores, 0 evictions, 0 bytes read, [[BYTES:[0-9]+]] bytes written ({{.*}}cache)
// COLDLOG: [kiln:codegen] disk cache miss [[KEY:[0-9a-f]{16}]]
// COLDLOG: [kiln:codegen] disk cache store [[KEY]] ({{[0-9]+}} bytes, {{.*}}cache/[[KEY]]{{[0-9a-f]+}}.kcode)
// COLDLOG: [kiln:codegen] compiled @main for the cpu

// WARM: compile time: kiln-cpu 0.000000 s, jit {{[0-9.]+}} s (code loaded from the disk cache)
// WARM: kernels: 2 compiled
// WARM: disk cache: 1 hits, 0 misses, 0 corrupt, 0 stores, 0 evictions, {{[0-9]+}} bytes read, 0 bytes written ({{.*}}cache)
// WARMLOG: [kiln:codegen] disk cache hit [[KEY:[0-9a-f]{16}]] ({{[0-9]+}} bytes
// WARMLOG: [kiln:codegen] loaded @main from the disk cache: 2 kernel function(s)
// WARMLOG-NOT: compiled @main for the cpu

// FILES-NOT: .tmp-
// FILES: {{^[0-9a-f]{64}\.kcode$}}
// FILES-NOT: .tmp-

// OFF: disk cache: 0 hits, 0 misses, 0 corrupt, 0 stores, 0 evictions, 0 bytes read, 0 bytes written (off)

// XDG: disk cache: 0 hits, 1 misses, 0 corrupt, 1 stores, {{.*}} ([[DIR]]/xdg/kiln)
// HOME: disk cache: 0 hits, 1 misses, 0 corrupt, 1 stores, {{.*}} ([[DIR]]/home/.cache/kiln)
func.func @main(%x: tensor<64x40xf32>, %w: tensor<40x24xf32>) -> tensor<64x24xf32> {
  %0 = kt.matmul %x, %w : (tensor<64x40xf32>, tensor<40x24xf32>) -> tensor<64x24xf32>
  %1 = kt.relu %0 : (tensor<64x24xf32>) -> tensor<64x24xf32>
  return %1 : tensor<64x24xf32>
}
