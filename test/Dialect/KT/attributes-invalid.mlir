// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that an attribute the op does not define is an error naming it, for
// an op with no attributes (kt.round takes no `decimals`: it would round to
// an integer and drop it).
func.func @round_decimals(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kt.round' op has no attribute 'decimals' (attributes: none; an annotation needs a dialect prefix, as in 'kiln.note')}}
  %0 = kt.round %a {decimals = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a misspelled attribute is an error listing the op's own.
func.func @sum_keepdims(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kt.sum' op has no attribute 'keepdims' (attributes: dim, keepdim; an annotation needs a dialect prefix, as in 'kiln.note')}}
  %0 = kt.sum %a {dim = [1], keepdims = true} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests a misspelled attribute of an op with a custom printer path (a
// creation op with required attributes).
func.func @full_values() -> tensor<2xf32> {
  // expected-error @+1 {{'kt.full' op has no attribute 'values'}}
  %0 = kt.full {size = [2], value = 1.0, dtype = f32, values = 2.0} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests the ref ops (another base class): kt.load and an in-place op.
func.func @load_unknown(%r: !kt.ref<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kt.load' op has no attribute 'volatile' (attributes: none;}}
  %0 = kt.load %r {volatile} : (!kt.ref<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_inplace_alpha(%r: !kt.ref<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kt.add_' op has no attribute 'alpha'}}
  kt.add_ %r, %b {alpha = 2.0} : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// Tests the views (another base class).
func.func @view_transpose_unknown(%r: !kt.ref<2x3xf32>) -> !kt.ref<3x2xf32> {
  // expected-error @+1 {{'kt.view_transpose' op has no attribute 'dims' (attributes: dim0, dim1;}}
  %0 = kt.view_transpose %r {dim0 = 0, dim1 = 1, dims = [1, 0]} : (!kt.ref<2x3xf32>) -> !kt.ref<3x2xf32>
  return %0 : !kt.ref<3x2xf32>
}

// -----

// Tests kt.fusion and kt.yield.
func.func @fusion_unknown(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kt.fusion' op has no attribute 'inline' (attributes: kernel;}}
  %r = kt.fusion "f_k0_neg" (%a) {inline} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    kt.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_unknown(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = kt.fusion "f_k0_neg" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{'kt.yield' op has no attribute 'note'}}
    kt.yield {note = "x"} %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that the list leaves out the operand segment sizes ODS keeps for an
// op with optional operands (not an attribute anyone writes).
func.func @layer_norm_unknown(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kt.layer_norm' op has no attribute 'elementwise_affine' (attributes: eps, normalized_shape; an annotation}}
  %0 = kt.layer_norm %a {normalized_shape = [4], eps = 1.0e-5 : f64, elementwise_affine = false} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
