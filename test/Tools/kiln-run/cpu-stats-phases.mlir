// RUN: kiln-run %s --entry=f --backend=cpu --random-inputs --stats | FileCheck %s
// RUN: kiln-run %s --entry=f --backend=cpu --random-inputs --stats \
// RUN:   --cpu-fuse=false | FileCheck %s --check-prefix=NOFUSE

// --stats on the CPU backend: the compile time by phase (machine code is
// generated inside the compile), and the kernels compiled vs reused: the
// same block (linear, then gelu -> layer_norm -> add fused) twice is two
// kernels, each compiled once and called twice.

// CHECK: compile time: kiln-cpu {{[0-9.]+}} s, jit {{[0-9.]+}} s
// CHECK-NEXT: compile phases: fuse {{[0-9.]+}} s, outline {{[0-9.]+}} s, lower {{[0-9.]+}} s, bufferize {{[0-9.]+}} s, llvm-dialect {{[0-9.]+}} s, translate {{[0-9.]+}} s, llvm-opt {{[0-9.]+}} s, codegen {{[0-9.]+}} s
// CHECK-NEXT: kernels: 2 compiled, 2 reused (4 call sites)

// Without fusion each op is a kernel: linear, gelu, layer_norm, add.
// NOFUSE: compile phases: fuse 0.000000 s, outline
// NOFUSE-NEXT: kernels: 4 compiled, 4 reused (8 call sites)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>,
             %g: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<4x8xf32> {
  %l0 = kt.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a0 = kt.gelu %l0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n0 = kt.layer_norm %a0 weight %g bias %beta {normalized_shape = [8]} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r0 = kt.add %n0, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l1 = kt.linear %r0, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a1 = kt.gelu %l1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n1 = kt.layer_norm %a1 weight %g bias %beta {normalized_shape = [8]} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r1 = kt.add %n1, %r0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r1 : tensor<4x8xf32>
}
