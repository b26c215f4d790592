// UNSUPPORTED: sanitize-address
// RUN: ulimit -v 4000000 && kiln-opt %s -kiln-cpu | mlir-translate --mlir-to-llvmir | FileCheck %s

// Tests that a splat kt.constant of 2^31 f32 (8 GiB) compiles in little
// memory (the address space is limited to 4 GB): it is a fill loop, not a
// global array of its elements (which bufferization and the LLVM
// translation used to write out).
// ASan reserves terabytes of shadow address space: no run under `ulimit -v`.
// CHECK-NOT: x float]
// CHECK: define {{.*}} @big(
// CHECK: call ptr @malloc(i64
// CHECK: store <{{[0-9]+}} x float> splat (float 1.500000e+00)
// ASan reserves terabytes of shadow address space: no run under `ulimit -v`.
// CHECK-NOT: x float]
func.func @big() -> tensor<2147483648xf32> {
  %c = kt.constant {value = dense<1.5> : tensor<2147483648xf32>} : () -> tensor<2147483648xf32>
  return %c : tensor<2147483648xf32>
}
