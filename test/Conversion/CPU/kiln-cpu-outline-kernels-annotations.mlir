// RUN: kiln-opt %s -kiln-cpu-outline-kernels=stats=true | FileCheck %s
// RUN: kiln-opt %s -kiln-cpu | FileCheck %s --check-prefix=LLVM

// Capture annotations (`kg.nn_module_stack`, `kg.source_fn`: where an op
// came from, as torch.fx's importer writes them) do not make kernels
// different: the repeated layers of an imported model share one function.
// A real attribute (eps) does. The caller (glue: calls and descriptors) is
// tuned generically (no post-RA scheduling) and not optimized (optnone:
// LLVM's -O3 and machine code at -O0 for it), the kernels are not.

// CHECK: kiln-cpu-outline-kernels: 3 kernels, 3 reused, 6 calls
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: attributes {passthrough = {{\[}}["tune-cpu", "generic"], "optnone", "noinline"]}
// (Each kernel returns only the used result: kiln-cpu-outline-kernels-dead-results.mlir.)
// CHECK: %[[A:.*]] = call @kernel_batch_norm_train(%arg0, %arg1, %arg2)
// CHECK: %[[B:.*]] = call @kernel_batch_norm_train(%[[A]], %arg1, %arg2)
// CHECK: %[[C:.*]] = call @kernel_batch_norm_train_0(%[[B]], %arg1, %arg2)
// CHECK: %[[R0:.*]] = call @block_0(%[[C]])
// CHECK: %[[R1:.*]] = call @block_0(%[[R0]])
// CHECK: %[[R2:.*]] = call @block_0(%[[R1]])
// CHECK: func.func private @kernel_batch_norm_train(
// CHECK-SAME: attributes {kiln.kernel_function, passthrough = ["noinline"]}
// CHECK-NEXT: kt.batch_norm_train {{.*}}kg.nn_module_stack = ["layer1"]
// CHECK: func.func private @kernel_batch_norm_train_0(
// CHECK-NEXT: kt.batch_norm_train {{.*}}eps = 1.000000e-03
// CHECK: func.func private @block_0(
// CHECK-NOT: func.func

// LLVM: llvm.func @layers(
// LLVM-SAME: passthrough = {{\[}}["tune-cpu", "generic"], "optnone", "noinline"]
// LLVM: llvm.func @kernel_batch_norm_train(
// LLVM-SAME: passthrough = ["noinline"]
func.func @layers(%x: tensor<4x3x5x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<4x3x5x5xf32> {
  %y0, %m0, %i0 = kt.batch_norm_train %x weight %w bias %b {kg.nn_module_stack = ["layer1"], kg.source_fn = "bn1"} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  %y1, %m1, %i1 = kt.batch_norm_train %y0 weight %w bias %b {kg.nn_module_stack = ["layer2"], kg.source_fn = "bn2"} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  // Another eps: another kernel.
  %y2, %m2, %i2 = kt.batch_norm_train %y1 weight %w bias %b {eps = 1.0e-3 : f64, kg.nn_module_stack = ["layer3"]} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  // Fused groups whose members carry different annotations.
  %r0 = kt.fusion "block_0" (%y2) : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  ^bb0(%v: tensor<4x3x5x5xf32>):
    %e = kt.exp %v {kg.nn_module_stack = ["block0"]} : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    %n = kt.relu %e {kg.nn_module_stack = ["block0", "act"]} : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    kt.yield %n : tensor<4x3x5x5xf32>
  }
  %r1 = kt.fusion "block_1" (%r0) : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  ^bb0(%v: tensor<4x3x5x5xf32>):
    %e = kt.exp %v {kg.nn_module_stack = ["block1"]} : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    %n = kt.relu %e {kg.nn_module_stack = ["block1", "act"]} : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    kt.yield %n : tensor<4x3x5x5xf32>
  }
  %r2 = kt.fusion "block_2" (%r1) : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  ^bb0(%v: tensor<4x3x5x5xf32>):
    %e = kt.exp %v : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    %n = kt.relu %e : (tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32>
    kt.yield %n : tensor<4x3x5x5xf32>
  }
  return %r2 : tensor<4x3x5x5xf32>
}
