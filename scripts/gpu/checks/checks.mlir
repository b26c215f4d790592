// Programs for scripts/gpu/run_checks.py (the GPU check's run-time errors
// and library calls), compiled by scripts/gpu/prepare.sh into
// .gpu/checks/checks.so.
func.func @gather(%x: tensor<4x5xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %0 = kt.gather %x, %i {dim = 1} : (tensor<4x5xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @embedding(%w: tensor<10x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = kt.embedding %w, %i : (tensor<10x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
func.func @remainder(%x: tensor<1000xi32>, %y: tensor<1000xi32>) -> tensor<1000xi32> {
  %0 = kt.remainder %x, %y : (tensor<1000xi32>, tensor<1000xi32>) -> tensor<1000xi32>
  return %0 : tensor<1000xi32>
}
func.func @linear(%x: tensor<?x96xf32>, %w: tensor<40x96xf32>, %b: tensor<40xf32>) -> tensor<?x40xf32> {
  %0 = kt.linear %x, %w, %b : (tensor<?x96xf32>, tensor<40x96xf32>, tensor<40xf32>) -> tensor<?x40xf32>
  return %0 : tensor<?x40xf32>
}
func.func @bmm64(%a: tensor<3x17x33xf64>, %b: tensor<3x33x9xf64>) -> tensor<3x17x9xf64> {
  %0 = kt.matmul %a, %b : (tensor<3x17x33xf64>, tensor<3x33x9xf64>) -> tensor<3x17x9xf64>
  return %0 : tensor<3x17x9xf64>
}
func.func @matmul_empty_k(%a: tensor<5x0xf32>, %b: tensor<0x7xf32>) -> tensor<5x7xf32> {
  %0 = kt.matmul %a, %b : (tensor<5x0xf32>, tensor<0x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}
