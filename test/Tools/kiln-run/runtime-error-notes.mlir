// A run-time error names the failing op by its location on both backends.
// A compiled graph's error carries no print of the kg.graph op: that note
// was the whole graph (a clone, its operands `<<UNKNOWN SSA VALUE>>`); the
// interpreter's note shows the one failing op.
// RUN: not kiln-run %s --entry=p 2>&1 | FileCheck %s --check-prefix=INTERP
// RUN: not kiln-run %s --entry=p --backend=cpu 2>&1 | FileCheck %s --check-prefix=CPU --implicit-check-not="current operation" --implicit-check-not=UNKNOWN

// INTERP: runtime-error-notes.mlir:[[# @LINE + 8]]:10: target 7 is out of range [0, 4) (ignore_index is -100) (note: see current operation: %{{.*}} = "kt.nll_loss"{{.*}}){{$}}
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
