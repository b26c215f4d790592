// RUN: kiln-opt %s -kiln-cpu-alloc-sites | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu | FileCheck %s --check-prefix=PIPE

// Each memref.alloc gets a call naming its site (a run-time error template
// at its location, with the buffer's type); identical sites share a
// template. In kiln-cpu the call stays right before the malloc it names.

// CHECK: module attributes {kiln.runtime_errors = ["sites.mlir:20:3: cannot allocate {0:bytes} for tensor<4x?xf32> in compiled code: out of memory", "sites.mlir:30:5: cannot allocate {0:bytes} for tensor<8xi8> in compiled code: out of memory"]}
// CHECK: func.func private @kiln_cpu_alloc_site(i64)
// CHECK-LABEL: func.func @f
// CHECK: %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @kiln_cpu_alloc_site(%[[S0]]) : (i64) -> ()
// CHECK-NEXT: memref.alloc(%{{.*}}) : memref<4x?xf32>
// CHECK: %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @kiln_cpu_alloc_site(%[[S1]]) : (i64) -> ()
// CHECK-NEXT: memref.alloc() {alignment = 64 : i64} : memref<8xi8>
func.func @f(%n: index) -> (memref<4x?xf32>, memref<8xi8>) {
  %a = memref.alloc(%n) : memref<4x?xf32> loc("sites.mlir":20:3)
  %b = memref.alloc() {alignment = 64 : i64} : memref<8xi8> loc("sites.mlir":30:5)
  return %a, %b : memref<4x?xf32>, memref<8xi8>
}

// PIPE: llvm.func @kiln_cpu_alloc_site(i64)
// PIPE-LABEL: llvm.func @f(
// PIPE: llvm.call @kiln_cpu_alloc_site
// PIPE-NOT: llvm.call
// PIPE: llvm.call @malloc
// PIPE: llvm.call @kiln_cpu_alloc_site
// PIPE-NOT: llvm.call
// PIPE: llvm.call @malloc
