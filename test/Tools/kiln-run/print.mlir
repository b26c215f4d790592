// RUN: kiln-run %s --entry=floats --print | FileCheck %s --check-prefix=FLOATS
// RUN: kiln-run %s --entry=mixed --print | FileCheck %s --check-prefix=MIXED
// RUN: kiln-run %s --entry=scalar --print | FileCheck %s --check-prefix=SCALAR
// RUN: kiln-run %s --entry=empty --print | FileCheck %s --check-prefix=EMPTY

// Tests the stable text form of --print: nested brackets, one line per
// innermost row, nan/inf spelled out, -0 kept, %.7g for f32.
// FLOATS: result0: tensor<2x3xf32>
// FLOATS-NEXT: {{^}}{{\[\[}}1, 2.5, -0],
// FLOATS-NEXT: {{^}} [nan, inf, -inf]]
func.func @floats() -> tensor<2x3xf32> {
  %c = kt.constant {value = dense<[[1.0, 2.5, -0.0], [0x7FC00000, 0x7F800000, 0xFF800000]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// Tests integers, booleans, f64 precision and several results.
// MIXED: result0: tensor<2x2x2xi64>
// MIXED-NEXT: {{^}}{{\[\[\[}}1, -2],
// MIXED-NEXT: {{^}}  [3, 4]],
// MIXED-NEXT: {{^}} {{\[\[}}5, 6],
// MIXED-NEXT: {{^}}  [7, 9223372036854775807]]]
// MIXED-NEXT: result1: tensor<3xi1>
// MIXED-NEXT: {{^}}[true, false, true]
// MIXED-NEXT: result2: tensor<1xf64>
// MIXED-NEXT: {{^}}[0.333333333333333]
func.func @mixed() -> (tensor<2x2x2xi64>, tensor<3xi1>, tensor<1xf64>) {
  %a = kt.constant {value = dense<[[[1, -2], [3, 4]], [[5, 6], [7, 9223372036854775807]]]> : tensor<2x2x2xi64>} : () -> tensor<2x2x2xi64>
  %b = kt.constant {value = dense<[true, false, true]> : tensor<3xi1>} : () -> tensor<3xi1>
  %c = kt.constant {value = dense<0.33333333333333331> : tensor<1xf64>} : () -> tensor<1xf64>
  return %a, %b, %c : tensor<2x2x2xi64>, tensor<3xi1>, tensor<1xf64>
}

// Tests rank-0 results.
// SCALAR: result0: tensor<f32>
// SCALAR-NEXT: {{^}}-1.5{{$}}
func.func @scalar() -> tensor<f32> {
  %c = kt.constant {value = dense<-1.5> : tensor<f32>} : () -> tensor<f32>
  return %c : tensor<f32>
}

// Tests empty tensors.
// EMPTY: result0: tensor<2x0xf32>
// EMPTY-NEXT: {{^}}{{\[\[}}],
// EMPTY-NEXT: {{^}} []]
func.func @empty() -> tensor<2x0xf32> {
  %c = kt.constant {value = dense<> : tensor<2x0xf32>} : () -> tensor<2x0xf32>
  return %c : tensor<2x0xf32>
}
