// A run-time error names the failing op by its location, on both backends,
// and carries no generic print of the op: for a compiled graph that note was
// the whole kg.graph with `<<UNKNOWN SSA VALUE>>` operands.
// RUN: not kiln-run %s --entry=p 2>&1 | FileCheck %s --check-prefix=INTERP --implicit-check-not="current operation"
// RUN: not kiln-run %s --entry=p --backend=cpu 2>&1 | FileCheck %s --check-prefix=CPU --implicit-check-not="current operation" --implicit-check-not=UNKNOWN

// INTERP: runtime-error-notes.mlir:[[# @LINE + 8]]:10: target 7 is out of range [0, 4) (ignore_index is -100){{$}}
// INTERP-NEXT: kiln-run: error: call #0 of @p failed
// CPU: runtime-error-notes.mlir:[[# @LINE + 3]]:8: compiled graph @g failed: {{.*}}runtime-error-notes.mlir:[[# @LINE + 6]]:10: target 7 is out of range [0, 4) (ignore_index is -100){{$}}
// CPU-NEXT: kiln-run: error: call #0 of @p failed
kg.program @p() -> tensor<f32> {
  %l = kg.graph @g() : () -> tensor<f32> {
    %a = kt.constant {value = dense<0.5> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
    %b = kt.constant {value = dense<[1, 7, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
    %r = kt.nll_loss %a, %b : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
    kg.yield %r : tensor<f32>
  }
  kg.return %l : tensor<f32>
}
