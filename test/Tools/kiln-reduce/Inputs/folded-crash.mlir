// A 64x64 block for kiln-reduce's form-kernels-crash.test: among a dozen ops,
// a double negation (%9, %10) of an argument whose outer kt.neg folds to
// its group's input while %9 is a second result of the group. kiln-form-kernels with its
// test-only option test-restore-folded-result-crash (the defect fixed in
// 0780d11, issue 14 #5) crashes on it.
func.func @block(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %1 = kt.gelu %0 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = kt.matmul %1, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = kt.softmax %2 {dim = -1} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %4 = kt.sum %3 {dim = [1]} : (tensor<64x64xf32>) -> tensor<64xf32>
  %5 = kt.tanh %3 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %6 = kt.add %5, %0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %7 = kt.relu %6 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %8 = kt.exp %4 : (tensor<64xf32>) -> tensor<64xf32>
  %9 = kt.neg %w : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %10 = kt.neg %9 : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %11 = kt.mul %7, %1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %11, %8, %10, %9 : tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
