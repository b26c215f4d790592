// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{!kt.ref element type 'ui16' is not a kt element type}}
func.func @bad_elem(%r: !kt.ref<4xui16>) {
  return
}

// -----

func.func @load_type(%r: !kt.ref<4xf32>) {
  // expected-error @+1 {{'kt.load' op result type 'tensor<3xf32>' differs from the ref's tensor type 'tensor<4xf32>'}}
  %v = kt.load %r : (!kt.ref<4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @load_not_ref(%r: tensor<4xf32>) {
  // expected-error @+1 {{'kt.load' op operand #0 must be}}
  %v = kt.load %r : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @store_shape(%r: !kt.ref<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'kt.store' op value shape 3 differs from the ref shape 4}}
  kt.store %v, %r : (tensor<3xf32>, !kt.ref<4xf32>) -> ()
  return
}

// -----

func.func @store_rank(%r: !kt.ref<4xf32>, %v: tensor<1x4xf32>) {
  // expected-error @+1 {{'kt.store' op value shape 1x4 differs from the ref shape 4}}
  kt.store %v, %r : (tensor<1x4xf32>, !kt.ref<4xf32>) -> ()
  return
}

// -----

func.func @store_dtype(%r: !kt.ref<4xf32>, %v: tensor<4xf64>) {
  // expected-error @+1 {{'kt.store' op value has element type 'f64' but the ref has 'f32' (insert kt.cast)}}
  kt.store %v, %r : (tensor<4xf64>, !kt.ref<4xf32>) -> ()
  return
}

// -----

func.func @alloc_type(%v: tensor<4xf32>) {
  // expected-error @+1 {{'kt.alloc_ref' op result type '!kt.ref<?xf32>' differs from '!kt.ref<4xf32>', the ref type of the initial value}}
  %r = kt.alloc_ref %v : (tensor<4xf32>) -> !kt.ref<?xf32>
  return
}

// -----

func.func @view_reshape(%r: !kt.ref<2x3xf32>) {
  // expected-error @+2 {{'kt.view_reshape' op cannot reshape 2x3 (6 elements) into shape 4x2 (8 elements)}}
  // expected-error @+1 {{'kt.view_reshape' op failed to infer returned types}}
  %v = kt.view_reshape %r {shape = [4, 2]} : (!kt.ref<2x3xf32>) -> !kt.ref<4x2xf32>
  return
}

// -----

func.func @view_transpose(%r: !kt.ref<2x3xf32>) {
  // expected-error @+2 {{'kt.view_transpose' op dim1 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.view_transpose' op failed to infer returned types}}
  %v = kt.view_transpose %r {dim0 = 0, dim1 = 2} : (!kt.ref<2x3xf32>) -> !kt.ref<3x2xf32>
  return
}

// -----

func.func @view_permute(%r: !kt.ref<2x3xf32>) {
  // expected-error @+2 {{'kt.view_permute' op dim 0 appears twice}}
  // expected-error @+1 {{'kt.view_permute' op failed to infer returned types}}
  %v = kt.view_permute %r {dims = [0, 0]} : (!kt.ref<2x3xf32>) -> !kt.ref<2x2xf32>
  return
}

// -----

func.func @view_slice_step(%r: !kt.ref<4xf32>) {
  // expected-error @+2 {{'kt.view_slice' op step 0 must be > 0}}
  // expected-error @+1 {{'kt.view_slice' op failed to infer returned types}}
  %v = kt.view_slice %r {step = 0} : (!kt.ref<4xf32>) -> !kt.ref<4xf32>
  return
}

// -----

func.func @view_select_index(%r: !kt.ref<2x3xf32>) {
  // expected-error @+2 {{'kt.view_select' op index 2 is out of range for dim 0 of size 2}}
  // expected-error @+1 {{'kt.view_select' op failed to infer returned types}}
  %v = kt.view_select %r {dim = 0, index = 2} : (!kt.ref<2x3xf32>) -> !kt.ref<3xf32>
  return
}

// -----

func.func @view_expand(%r: !kt.ref<3x2xf32>) {
  // expected-error @+2 {{'kt.view_expand' op dim 1 of self has size 2 and cannot be expanded to 4}}
  // expected-error @+1 {{'kt.view_expand' op failed to infer returned types}}
  %v = kt.view_expand %r {size = [3, 4]} : (!kt.ref<3x2xf32>) -> !kt.ref<3x4xf32>
  return
}

// -----

func.func @view_squeeze(%r: !kt.ref<3x1xf32>) {
  // expected-error @+2 {{'kt.view_squeeze' op dim 5 is out of range for rank 2}}
  // expected-error @+1 {{'kt.view_squeeze' op failed to infer returned types}}
  %v = kt.view_squeeze %r {dim = [5]} : (!kt.ref<3x1xf32>) -> !kt.ref<3x1xf32>
  return
}

// -----

func.func @view_unsqueeze(%r: !kt.ref<3xf32>) {
  // expected-error @+2 {{'kt.view_unsqueeze' op dim 3 is out of range for rank 1 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.view_unsqueeze' op failed to infer returned types}}
  %v = kt.view_unsqueeze %r {dim = 3} : (!kt.ref<3xf32>) -> !kt.ref<3x1xf32>
  return
}

// -----

func.func @view_wrong_result(%r: !kt.ref<2x3xf32>) {
  // expected-error @+2 {{'kt.view_transpose' op failed to infer returned types}}
  // expected-error @+1 {{'kt.view_transpose' op inferred type(s) '!kt.ref<3x2xf32>' are incompatible with return type(s) of operation '!kt.ref<2x3xf32>'}}
  %v = kt.view_transpose %r {dim0 = 0, dim1 = 1} : (!kt.ref<2x3xf32>) -> !kt.ref<2x3xf32>
  return
}

// -----

func.func @view_missing_attr(%r: !kt.ref<2x3xf32>) {
  // expected-error @+1 {{'kt.view_select' op requires attribute 'dim'}}
  %v = kt.view_select %r {index = 0} : (!kt.ref<2x3xf32>) -> !kt.ref<3xf32>
  return
}

// -----

func.func @add_broadcast_dest(%r: !kt.ref<3xf32>, %o: tensor<2x3xf32>) {
  // expected-error @+1 {{'kt.add_' op other of shape 2x3 does not broadcast to the destination shape 3 (the destination's shape cannot change)}}
  kt.add_ %r, %o : (!kt.ref<3xf32>, tensor<2x3xf32>) -> ()
  return
}

// -----

func.func @mul_dtype(%r: !kt.ref<3xf32>, %o: tensor<3xf64>) {
  // expected-error @+1 {{'kt.mul_' op other has element type 'f64' but the destination has 'f32' (insert kt.cast)}}
  kt.mul_ %r, %o : (!kt.ref<3xf32>, tensor<3xf64>) -> ()
  return
}

// -----

func.func @sub_bool(%r: !kt.ref<3xi1>, %o: tensor<3xi1>) {
  // expected-error @+1 {{'kt.sub_' op operand #1 must be}}
  kt.sub_ %r, %o : (!kt.ref<3xi1>, tensor<3xi1>) -> ()
  return
}

// -----

func.func @div_int(%r: !kt.ref<3xi64>, %o: tensor<3xi64>) {
  // expected-error @+1 {{'kt.div_' op true division needs float operands, got 'i64': insert kt.cast or set rounding_mode}}
  kt.div_ %r, %o : (!kt.ref<3xi64>, tensor<3xi64>) -> ()
  return
}

// -----

func.func @copy_shape(%r: !kt.ref<2x3xf32>, %o: tensor<4xf32>) {
  // expected-error @+1 {{'kt.copy_' op src of shape 4 does not broadcast to the destination shape 2x3}}
  kt.copy_ %r, %o : (!kt.ref<2x3xf32>, tensor<4xf32>) -> ()
  return
}

// -----

func.func @fill_rank(%r: !kt.ref<2x3xf32>, %o: tensor<1xf32>) {
  // expected-error @+1 {{'kt.fill_' op value must be a rank-0 tensor, got rank 1}}
  kt.fill_ %r, %o : (!kt.ref<2x3xf32>, tensor<1xf32>) -> ()
  return
}

// -----

func.func @fill_dtype(%r: !kt.ref<2x3xf32>, %o: tensor<i64>) {
  // expected-error @+1 {{'kt.fill_' op value has element type 'i64' but the destination has 'f32' (insert kt.cast)}}
  kt.fill_ %r, %o : (!kt.ref<2x3xf32>, tensor<i64>) -> ()
  return
}

// -----

func.func @relu_bool(%r: !kt.ref<2xi1>) {
  // expected-error @+1 {{'kt.relu_' op destination has element type i1 (expected a numeric element type)}}
  kt.relu_ %r : (!kt.ref<2xi1>) -> ()
  return
}

// -----

func.func @index_put_none(%r: !kt.ref<4xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'kt.index_put_' op needs at least one index tensor}}
  kt.index_put_ %r, %v : (!kt.ref<4xf32>, tensor<f32>) -> ()
  return
}

// -----

func.func @index_put_too_many(%r: !kt.ref<4xf32>, %i: tensor<2xi64>, %v: tensor<f32>) {
  // expected-error @+1 {{'kt.index_put_' op has 2 index tensors but the destination has rank 1}}
  kt.index_put_ %r, %i, %i, %v : (!kt.ref<4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<f32>) -> ()
  return
}

// -----

func.func @index_put_bcast(%r: !kt.ref<4x4xf32>, %i: tensor<2xi64>, %j: tensor<3xi64>, %v: tensor<f32>) {
  // expected-error @+1 {{'kt.index_put_' op operands #0 and #1 are not broadcast-compatible}}
  kt.index_put_ %r, %i, %j, %v : (!kt.ref<4x4xf32>, tensor<2xi64>, tensor<3xi64>, tensor<f32>) -> ()
  return
}

// -----

func.func @index_put_values(%r: !kt.ref<4x3xf32>, %i: tensor<2xi64>, %v: tensor<2x4xf32>) {
  // expected-error @+1 {{'kt.index_put_' op values of shape 2x4 does not broadcast to the destination shape 2x3}}
  kt.index_put_ %r, %i, %v : (!kt.ref<4x3xf32>, tensor<2xi64>, tensor<2x4xf32>) -> ()
  return
}

// -----

func.func @index_put_float_index(%r: !kt.ref<4xf32>, %i: tensor<2xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'kt.index_put_' op operand #1 must be variadic of}}
  kt.index_put_ %r, %i, %v : (!kt.ref<4xf32>, tensor<2xf32>, tensor<f32>) -> ()
  return
}
