// RUN: kiln-opt %s -kiln-lower-to-linalg | FileCheck %s

// Completeness: one instance of every value-semantics kt op (the examples
// of docs/dialects/kt.md), lowered without allow-partial. A new op without a
// lowering fails this test (all_ops_listed.py checks that every op of
// docs/dialects/kt.md is listed). Ref ops (alloc_ref, load, store, view_*, the
// in-place `*_` ops) are functionalized before lowering and are not listed.
// CHECK-NOT: kt.

// CHECK-LABEL: func.func @abs
// CHECK-NOT: kt.
func.func @abs(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.abs %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @add
// CHECK-NOT: kt.
func.func @add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @all
// CHECK-NOT: kt.
func.func @all(%x: tensor<3x2xi1>) -> tensor<i1> {
  %r = kt.all %x : (tensor<3x2xi1>) -> tensor<i1>
  return %r : tensor<i1>
}

// CHECK-LABEL: func.func @amax
// CHECK-NOT: kt.
func.func @amax(%x: tensor<2x3x4xi32>) -> tensor<4xi32> {
  %r = kt.amax %x {dim = [0, 1]} : (tensor<2x3x4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @amin
// CHECK-NOT: kt.
func.func @amin(%x: tensor<2x3xf16>) -> tensor<f16> {
  %r = kt.amin %x : (tensor<2x3xf16>) -> tensor<f16>
  return %r : tensor<f16>
}

// CHECK-LABEL: func.func @any
// CHECK-NOT: kt.
func.func @any(%x: tensor<3x2xf32>) -> tensor<2xi1> {
  %r = kt.any %x {dim = [0]} : (tensor<3x2xf32>) -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// CHECK-LABEL: func.func @arange
// CHECK-NOT: kt.
func.func @arange() -> tensor<3xi64> {
  %r = kt.arange {start = 0.0, end = 5.0, step = 2.0, dtype = i64} : () -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// CHECK-LABEL: func.func @argmax
// CHECK-NOT: kt.
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %r = kt.argmax %x {dim = 1, keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return %r : tensor<2x1xi64>
}

// CHECK-LABEL: func.func @argmin
// CHECK-NOT: kt.
func.func @argmin(%x: tensor<2x3xi64>) -> tensor<i64> {
  %r = kt.argmin %x : (tensor<2x3xi64>) -> tensor<i64>
  return %r : tensor<i64>
}

// CHECK-LABEL: func.func @atan2
// CHECK-NOT: kt.
func.func @atan2(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.atan2 %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @avg_pool2d
// CHECK-NOT: kt.
func.func @avg_pool2d(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %r = kt.avg_pool2d %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @avg_pool2d_backward
// CHECK-NOT: kt.
func.func @avg_pool2d_backward(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %r = kt.avg_pool2d_backward %g, %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK-NOT: kt.
func.func @batch_norm(%x: tensor<2x3x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %r = kt.batch_norm %x, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @batch_norm_backward
// CHECK-NOT: kt.
func.func @batch_norm_backward(%g: tensor<2x3x4xf32>, %x: tensor<2x3x4xf32>, %m: tensor<3xf32>, %r: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = kt.batch_norm_backward %g, %x, %m, %r weight %w : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @batch_norm_train
// CHECK-NOT: kt.
func.func @batch_norm_train(%x: tensor<?x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = kt.batch_norm_train %x weight %w bias %b {eps = 1.0e-3} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @bitwise_and
// CHECK-NOT: kt.
func.func @bitwise_and(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  %r = kt.bitwise_and %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @bitwise_not
// CHECK-NOT: kt.
func.func @bitwise_not(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.bitwise_not %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @bitwise_or
// CHECK-NOT: kt.
func.func @bitwise_or(%a: tensor<2x3xi1>, %b: tensor<3xi1>) -> tensor<2x3xi1> {
  %r = kt.bitwise_or %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @bitwise_xor
// CHECK-NOT: kt.
func.func @bitwise_xor(%a: tensor<?x3xi32>, %b: tensor<3xi32>) -> tensor<?x3xi32> {
  %r = kt.bitwise_xor %a, %b : (tensor<?x3xi32>, tensor<3xi32>) -> tensor<?x3xi32>
  return %r : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @cast
// CHECK-NOT: kt.
func.func @cast(%a: tensor<4xf32>) -> tensor<4xi32> {
  %r = kt.cast %a {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @ceil
// CHECK-NOT: kt.
func.func @ceil(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.ceil %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @clamp
// CHECK-NOT: kt.
func.func @clamp(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.clamp %a {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK-NOT: kt.
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %r = kt.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @constant
// CHECK-NOT: kt.
func.func @constant() -> tensor<2xf32> {
  %c = kt.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// CHECK-LABEL: func.func @conv2d
// CHECK-NOT: kt.
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %r = kt.conv2d %x, %w, %b {padding = [1, 1], stride = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %r : tensor<1x6x4x4xf32>
}

// CHECK-LABEL: func.func @conv_transpose2d
// CHECK-NOT: kt.
func.func @conv_transpose2d(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x8x8xf32> {
  %r = kt.conv_transpose2d %x, %w, %b {output_padding = [1, 1], padding = [1, 1], stride = [2, 2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}

// CHECK-LABEL: func.func @cos
// CHECK-NOT: kt.
func.func @cos(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.cos %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK-NOT: kt.
func.func @cross_entropy(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %r = kt.cross_entropy %x, %t {label_smoothing = 1.000000e-01 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @cumprod
// CHECK-NOT: kt.
func.func @cumprod(%x: tensor<3x4xi64>) -> tensor<3x4xi64> {
  %r = kt.cumprod %x {dim = -1} : (tensor<3x4xi64>) -> tensor<3x4xi64>
  return %r : tensor<3x4xi64>
}

// CHECK-LABEL: func.func @argsort
// CHECK-NOT: kt.
// CHECK: scf.while
// CHECK-NOT: kt.
func.func @argsort(%x: tensor<2x?xf16>, %b: tensor<5xi1>, %s: tensor<f32>) -> (tensor<2x?xi64>, tensor<5xi64>, tensor<i64>) {
  %r = kt.argsort %x {dim = 1, descending = true} : (tensor<2x?xf16>) -> tensor<2x?xi64>
  %q = kt.argsort %b {dim = 0} : (tensor<5xi1>) -> tensor<5xi64>
  %t = kt.argsort %s {dim = 0} : (tensor<f32>) -> tensor<i64>
  return %r, %q, %t : tensor<2x?xi64>, tensor<5xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @searchsorted
// CHECK-NOT: kt.
// CHECK: scf.while
// CHECK-NOT: kt.
func.func @searchsorted(%s: tensor<2x?xbf16>, %v: tensor<?x3xbf16>, %t: tensor<5xi32>, %w: tensor<i32>) -> (tensor<?x3xi64>, tensor<i64>) {
  %r = kt.searchsorted %s, %v {right = true} : (tensor<2x?xbf16>, tensor<?x3xbf16>) -> tensor<?x3xi64>
  %q = kt.searchsorted %t, %w : (tensor<5xi32>, tensor<i32>) -> tensor<i64>
  return %r, %q : tensor<?x3xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @nonzero
// CHECK-NOT: kt.
// CHECK: scf.for
// CHECK: tensor.empty(%{{.*}}) : tensor<?x2xi64>
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NOT: kt.
func.func @nonzero(%x: tensor<3x?xf32>, %b: tensor<i1>) -> (tensor<?x2xi64>, tensor<?x0xi64>) {
  %r = kt.nonzero %x : (tensor<3x?xf32>) -> tensor<?x2xi64>
  %q = kt.nonzero %b : (tensor<i1>) -> tensor<?x0xi64>
  return %r, %q : tensor<?x2xi64>, tensor<?x0xi64>
}

// CHECK-LABEL: func.func @bincount
// CHECK-NOT: kt.
// CHECK: scf.for
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NOT: kt.
func.func @bincount(%x: tensor<?xi32>, %w: tensor<?xf32>) -> (tensor<?xi64>, tensor<?xf32>) {
  %r = kt.bincount %x {minlength = 3} : (tensor<?xi32>) -> tensor<?xi64>
  %q = kt.bincount %x, %w : (tensor<?xi32>, tensor<?xf32>) -> tensor<?xf32>
  return %r, %q : tensor<?xi64>, tensor<?xf32>
}

// CHECK-LABEL: func.func @cumsum
// CHECK-NOT: kt.
func.func @cumsum(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %r = kt.cumsum %x {dim = 1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @div
// CHECK-NOT: kt.
func.func @div(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  %r = kt.div %a, %b {rounding_mode = #kt.rounding_mode<floor>} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @dropout
// CHECK-NOT: kt.
func.func @dropout(%x: tensor<4x?xf32>, %seed: tensor<i64>) -> tensor<4x?xf32> {
  %r = kt.dropout %x, %seed {p = 0.25, train = true} : (tensor<4x?xf32>, tensor<i64>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @embedding
// CHECK-NOT: kt.
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %r = kt.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @eq
// CHECK-NOT: kt.
func.func @eq(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.eq %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @erf
// CHECK-NOT: kt.
func.func @erf(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.erf %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @exp
// CHECK-NOT: kt.
func.func @exp(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @expand
// CHECK-NOT: kt.
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %r = kt.expand %x {size = [2, -1, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @expm1
// CHECK-NOT: kt.
func.func @expm1(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.expm1 %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @check
// CHECK-NOT: kt.
func.func @check(%o: tensor<3xi64>, %c: tensor<i1>) -> tensor<3xi64> {
  %r = kt.check %o, %c {message = "offsets[0] has to be 0"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// CHECK-LABEL: func.func @flip
// CHECK-NOT: kt.
func.func @flip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kt.flip %x {dims = [0, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @floor
// CHECK-NOT: kt.
func.func @floor(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.floor %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @fmod
// CHECK-NOT: kt.
func.func @fmod(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  %r = kt.fmod %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @full
// CHECK-NOT: kt.
func.func @full(%d: index) -> tensor<?x3xf32> {
  %r = kt.full %d {size = [-1, 3], value = 1.5, dtype = f32} : (index) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @gather
// CHECK-NOT: kt.
func.func @gather(%x: tensor<2x3xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  %r = kt.gather %x, %i {dim = 1} : (tensor<2x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @ge
// CHECK-NOT: kt.
func.func @ge(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.ge %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @gelu
// CHECK-NOT: kt.
func.func @gelu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.gelu %a {approximate = #kt.approximate<tanh>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @gt
// CHECK-NOT: kt.
func.func @gt(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.gt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @index_select
// CHECK-NOT: kt.
func.func @index_select(%x: tensor<4x3xf32>, %i: tensor<5xi64>) -> tensor<5x3xf32> {
  %r = kt.index_select %x, %i {dim = 0} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// CHECK-LABEL: func.func @isnan
// CHECK-NOT: kt.
func.func @isnan(%a: tensor<4xf32>) -> tensor<4xi1> {
  %r = kt.isnan %a : (tensor<4xf32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: kt.
func.func @layer_norm(%x: tensor<2x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %r = kt.layer_norm %x weight %w bias %b {normalized_shape = [4], eps = 1.0e-05 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @le
// CHECK-NOT: kt.
func.func @le(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.le %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @linear
// CHECK-NOT: kt.
func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4xf32> {
  %r = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  return %r : tensor<2x5x4xf32>
}

// CHECK-LABEL: func.func @log
// CHECK-NOT: kt.
func.func @log(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.log %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @log1p
// CHECK-NOT: kt.
func.func @log1p(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.log1p %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @log_softmax
// CHECK-NOT: kt.
func.func @log_softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kt.log_softmax %x {dim = 1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @logcumsumexp
// CHECK-NOT: kt.
func.func @logcumsumexp(%x: tensor<5x3xbf16>) -> tensor<5x3xbf16> {
  %r = kt.logcumsumexp %x {dim = 0} : (tensor<5x3xbf16>) -> tensor<5x3xbf16>
  return %r : tensor<5x3xbf16>
}

// CHECK-LABEL: func.func @logical_and
// CHECK-NOT: kt.
func.func @logical_and(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.logical_and %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @logical_not
// CHECK-NOT: kt.
func.func @logical_not(%a: tensor<4xf32>) -> tensor<4xi1> {
  %r = kt.logical_not %a : (tensor<4xf32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// CHECK-LABEL: func.func @logical_or
// CHECK-NOT: kt.
func.func @logical_or(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.logical_or %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @logical_xor
// CHECK-NOT: kt.
func.func @logical_xor(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.logical_xor %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @logsumexp
// CHECK-NOT: kt.
func.func @logsumexp(%x: tensor<?x8xbf16>) -> tensor<?x1xbf16> {
  %r = kt.logsumexp %x {dim = [1], keepdim = true} : (tensor<?x8xbf16>) -> tensor<?x1xbf16>
  return %r : tensor<?x1xbf16>
}

// CHECK-LABEL: func.func @lt
// CHECK-NOT: kt.
func.func @lt(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.lt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: kt.
func.func @matmul(%a: tensor<8x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<8x2x4xf32> {
  %r = kt.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
  return %r : tensor<8x2x4xf32>
}

// CHECK-LABEL: func.func @max_pool2d
// CHECK-NOT: kt.
func.func @max_pool2d(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %r = kt.max_pool2d %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @max_pool2d_backward
// CHECK-NOT: kt.
func.func @max_pool2d_backward(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %r = kt.max_pool2d_backward %g, %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @maximum
// CHECK-NOT: kt.
func.func @maximum(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mean
// CHECK-NOT: kt.
func.func @mean(%x: tensor<2x?xf32>) -> tensor<2xf32> {
  %r = kt.mean %x {dim = [-1]} : (tensor<2x?xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// CHECK-LABEL: func.func @minimum
// CHECK-NOT: kt.
func.func @minimum(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul
// CHECK-NOT: kt.
func.func @mul(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @ne
// CHECK-NOT: kt.
func.func @ne(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = kt.ne %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @neg
// CHECK-NOT: kt.
func.func @neg(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.neg %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @nll_loss
// CHECK-NOT: kt.
func.func @nll_loss(%x: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %r = kt.nll_loss %x, %t {reduction = #kt.reduction<sum>, ignore_index = 0} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @pad
// CHECK-NOT: kt.
func.func @pad(%x: tensor<3x4xf32>) -> tensor<2x7xf32> {
  %r = kt.pad %x {pad = [1, 2, -1, 0], value = 5.0 : f64} : (tensor<3x4xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}

// CHECK-LABEL: func.func @permute
// CHECK-NOT: kt.
func.func @permute(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %r = kt.permute %x {dims = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %r : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @pow
// CHECK-NOT: kt.
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @prod
// CHECK-NOT: kt.
func.func @prod(%x: tensor<3x2xi32>) -> tensor<2xi64> {
  %r = kt.prod %x {dim = [0]} : (tensor<3x2xi32>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// CHECK-LABEL: func.func @rand
// CHECK-NOT: kt.
func.func @rand(%seed: tensor<i64>, %d: index) -> tensor<?x4xf32> {
  %r = kt.rand %seed, %d {size = [-1, 4], dtype = f32} : (tensor<i64>, index) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @randn
// CHECK-NOT: kt.
func.func @randn(%seed: tensor<i64>) -> tensor<2x3xf64> {
  %r = kt.randn %seed {size = [2, 3], dtype = f64} : (tensor<i64>) -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}

// CHECK-LABEL: func.func @reciprocal
// CHECK-NOT: kt.
func.func @reciprocal(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.reciprocal %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-NOT: kt.
func.func @relu(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.relu %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @remainder
// CHECK-NOT: kt.
func.func @remainder(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.remainder %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape
// CHECK-NOT: kt.
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<3x8xf32> {
  %r = kt.reshape %x {shape = [3, -1]} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @round
// CHECK-NOT: kt.
func.func @round(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.round %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @rsqrt
// CHECK-NOT: kt.
func.func @rsqrt(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.rsqrt %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @scaled_dot_product_attention
// CHECK-NOT: kt.
func.func @scaled_dot_product_attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %r = kt.scaled_dot_product_attention %q, %k, %v {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}

// CHECK-LABEL: func.func @select
// CHECK-NOT: kt.
func.func @select(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %r = kt.select %x {dim = 0, index = -1} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @sigmoid
// CHECK-NOT: kt.
func.func @sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @sign
// CHECK-NOT: kt.
func.func @sign(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = kt.sign %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @silu
// CHECK-NOT: kt.
func.func @silu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.silu %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @sin
// CHECK-NOT: kt.
func.func @sin(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.sin %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-NOT: kt.
func.func @slice(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  %r = kt.slice %x {dim = 1, start = 1, end = -1, step = 2} : (tensor<2x8xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: kt.
func.func @softmax(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %r = kt.softmax %x {dim = -1} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @special
// CHECK-NOT: kt.
func.func @special(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.special %a {fn = #kt.special_fn<polygamma>, n = 2} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @sqrt
// CHECK-NOT: kt.
func.func @sqrt(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.sqrt %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @squeeze
// CHECK-NOT: kt.
func.func @squeeze(%x: tensor<1x3x1xf32>) -> tensor<3x1xf32> {
  %r = kt.squeeze %x {dim = [0]} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  return %r : tensor<3x1xf32>
}

// CHECK-LABEL: func.func @stack
// CHECK-NOT: kt.
func.func @stack(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3x2xf32> {
  %r = kt.stack %a, %b {dim = -1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32>
  return %r : tensor<2x3x2xf32>
}

// CHECK-LABEL: func.func @sub
// CHECK-NOT: kt.
func.func @sub(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sum
// CHECK-NOT: kt.
func.func @sum(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = kt.sum %x {dim = [1], keepdim = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// CHECK-LABEL: func.func @tanh
// CHECK-NOT: kt.
func.func @tanh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK-NOT: kt.
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %r = kt.transpose %x {dim0 = 0, dim1 = -1} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %r : tensor<4x3x2xf32>
}

// CHECK-LABEL: func.func @unsqueeze
// CHECK-NOT: kt.
func.func @unsqueeze(%x: tensor<2x3xf32>) -> tensor<2x3x1xf32> {
  %r = kt.unsqueeze %x {dim = -1} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  return %r : tensor<2x3x1xf32>
}

// CHECK-LABEL: func.func @var
// CHECK-NOT: kt.
func.func @var(%x: tensor<2x3xf64>) -> tensor<2xf64> {
  %r = kt.var %x {dim = [1], correction = 0.0} : (tensor<2x3xf64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
}

// CHECK-LABEL: func.func @where
// CHECK-NOT: kt.
func.func @where(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = kt.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @select_scatter
// CHECK-NOT: kt.
func.func @select_scatter(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = kt.select_scatter %x, %v {dim = 0, index = -1} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @slice_scatter
// CHECK-NOT: kt.
func.func @slice_scatter(%x: tensor<2x4xf32>, %v: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = kt.slice_scatter %x, %v {dim = 1, start = 1, end = 3} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @scatter
// CHECK-NOT: kt.
// CHECK: scf.for
func.func @scatter(%x: tensor<4xf32>, %i: tensor<6xi64>, %s: tensor<6xf32>) -> tensor<4xf32> {
  %r = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<amax>} : (tensor<4xf32>, tensor<6xi64>, tensor<6xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Rank >= 2: the columns (the coordinates outside `dim`) in parallel, each a
// sequential loop along `dim` on its own column; mean's counts too.
// CHECK-LABEL: func.func @scatter_columns
// CHECK: scf.forall (%[[J:.*]]) in (3) shared_outs(%[[OUT:.*]] = %{{.*}}, %[[CNT:.*]] = %{{.*}})
// CHECK: %[[COL:.*]] = tensor.extract_slice %[[OUT]][0, %[[J]]] [4, 1] [1, 1] : tensor<4x6xf32> to tensor<4x1xf32>
// CHECK: tensor.extract_slice %[[CNT]][0, %[[J]]] [4, 1] [1, 1] : tensor<4x6xi64> to tensor<4x1xi64>
// CHECK: scf.for
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][0, %[[J]]] [4, 1] [1, 1]
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[CNT]][0, %[[J]]] [4, 1] [1, 1]
// CHECK: arith.divf
func.func @scatter_columns(%x: tensor<4x6xf32>, %i: tensor<5x3xi64>, %s: tensor<5x3xf32>) -> tensor<4x6xf32> {
  %r = kt.scatter %x, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<mean>} : (tensor<4x6xf32>, tensor<5x3xi64>, tensor<5x3xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @zeta
// CHECK-NOT: kt.
func.func @zeta(%a: tensor<2x3xf64>, %b: tensor<3xf64>) -> tensor<2x3xf64> {
  %r = kt.zeta %a, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}
