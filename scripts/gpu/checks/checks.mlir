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
// gpu28: losses (the target check in kernels), kt.check, random ops (the
// interpreter's Philox stream), special functions through libdevice.
func.func @nll_w(%x: tensor<?x5xf32>, %t: tensor<?xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = kt.nll_loss %x, %t, %w {ignore_index = 2} : (tensor<?x5xf32>, tensor<?xi64>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @ce_ls(%x: tensor<?x5xf32>, %t: tensor<?xi64>) -> (tensor<f32>, tensor<?xf32>) {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 0.1} : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<f32>
  %1 = kt.cross_entropy %x, %t {reduction = #kt.reduction<none>} : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<?xf32>
  return %0, %1 : tensor<f32>, tensor<?xf32>
}
func.func @nll0(%x: tensor<5xf64>, %t: tensor<i64>) -> tensor<f64> {
  %0 = kt.nll_loss %x, %t {reduction = #kt.reduction<none>} : (tensor<5xf64>, tensor<i64>) -> tensor<f64>
  return %0 : tensor<f64>
}
func.func @check(%x: tensor<?xi64>, %ok: tensor<?xi1>) -> tensor<?xi64> {
  %0 = kt.check %x, %ok {message = "offsets have to be sorted"} : (tensor<?xi64>, tensor<?xi1>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
func.func @random(%seed: tensor<i64>, %x: tensor<37x29xf32>, %y: tensor<513xf64>) -> (tensor<1000xf32>, tensor<1000xf64>, tensor<1000xf32>, tensor<1000xf64>, tensor<f32>, tensor<37x29xf32>, tensor<513xf64>, tensor<3x5xf16>) {
  %0 = kt.rand %seed {size = [1000], dtype = f32} : (tensor<i64>) -> tensor<1000xf32>
  %1 = kt.rand %seed {size = [1000], dtype = f64} : (tensor<i64>) -> tensor<1000xf64>
  %2 = kt.randn %seed {size = [1000], dtype = f32} : (tensor<i64>) -> tensor<1000xf32>
  %3 = kt.randn %seed {size = [1000], dtype = f64} : (tensor<i64>) -> tensor<1000xf64>
  %4 = kt.rand %seed {size = [], dtype = f32} : (tensor<i64>) -> tensor<f32>
  %5 = kt.dropout %x, %seed {p = 0.3} : (tensor<37x29xf32>, tensor<i64>) -> tensor<37x29xf32>
  %6 = kt.dropout %y, %seed {p = 0.75} : (tensor<513xf64>, tensor<i64>) -> tensor<513xf64>
  %7 = kt.rand %seed {size = [3, 5], dtype = f16} : (tensor<i64>) -> tensor<3x5xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1000xf32>, tensor<1000xf64>, tensor<1000xf32>, tensor<1000xf64>, tensor<f32>, tensor<37x29xf32>, tensor<513xf64>, tensor<3x5xf16>
}
func.func @special(%x: tensor<?xf64>, %p: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %0 = kt.special %x {fn = #kt.special_fn<lgamma>} : (tensor<?xf64>) -> tensor<?xf64>
  %1 = kt.special %x {fn = #kt.special_fn<erfc>} : (tensor<?xf64>) -> tensor<?xf64>
  %2 = kt.special %p {fn = #kt.special_fn<erfinv>} : (tensor<?xf64>) -> tensor<?xf64>
  %3 = kt.special %x {fn = #kt.special_fn<erfcx>} : (tensor<?xf64>) -> tensor<?xf64>
  %4 = kt.special %x {fn = #kt.special_fn<ndtr>} : (tensor<?xf64>) -> tensor<?xf64>
  %5 = kt.special %p {fn = #kt.special_fn<ndtri>} : (tensor<?xf64>) -> tensor<?xf64>
  %6 = kt.special %x {fn = #kt.special_fn<i0>} : (tensor<?xf64>) -> tensor<?xf64>
  %7 = kt.special %x {fn = #kt.special_fn<i1>} : (tensor<?xf64>) -> tensor<?xf64>
  %8 = kt.special %x {fn = #kt.special_fn<bessel_j0>} : (tensor<?xf64>) -> tensor<?xf64>
  %9 = kt.special %x {fn = #kt.special_fn<bessel_j1>} : (tensor<?xf64>) -> tensor<?xf64>
  %10 = kt.special %x {fn = #kt.special_fn<bessel_y0>} : (tensor<?xf64>) -> tensor<?xf64>
  %11 = kt.special %x {fn = #kt.special_fn<bessel_y1>} : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
func.func @special2(%x: tensor<?xf64>, %q: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %0 = kt.special %x {fn = #kt.special_fn<digamma>} : (tensor<?xf64>) -> tensor<?xf64>
  %1 = kt.special %x {fn = #kt.special_fn<polygamma>, n = 2} : (tensor<?xf64>) -> tensor<?xf64>
  %2 = kt.special %x {fn = #kt.special_fn<log_ndtr>} : (tensor<?xf64>) -> tensor<?xf64>
  %3 = kt.special %x {fn = #kt.special_fn<i0e>} : (tensor<?xf64>) -> tensor<?xf64>
  %4 = kt.special %x {fn = #kt.special_fn<i1e>} : (tensor<?xf64>) -> tensor<?xf64>
  %5 = kt.special %x {fn = #kt.special_fn<modified_bessel_k0>} : (tensor<?xf64>) -> tensor<?xf64>
  %6 = kt.special %x {fn = #kt.special_fn<modified_bessel_k1>} : (tensor<?xf64>) -> tensor<?xf64>
  %7 = kt.special %x {fn = #kt.special_fn<scaled_modified_bessel_k0>} : (tensor<?xf64>) -> tensor<?xf64>
  %8 = kt.special %x {fn = #kt.special_fn<scaled_modified_bessel_k1>} : (tensor<?xf64>) -> tensor<?xf64>
  %9 = kt.special %x {fn = #kt.special_fn<spherical_bessel_j0>} : (tensor<?xf64>) -> tensor<?xf64>
  %10 = kt.special %x {fn = #kt.special_fn<airy_ai>} : (tensor<?xf64>) -> tensor<?xf64>
  %11 = kt.zeta %q, %x : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
func.func @scatter1(%x: tensor<3x4xf32>, %i: tensor<1x1xi64>, %s: tensor<1x1xf32>) -> tensor<3x4xf32> {
  %0 = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<sum>} : (tensor<3x4xf32>, tensor<1x1xi64>, tensor<1x1xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
