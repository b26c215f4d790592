// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @dim_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.sum' op dim 2 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.sum' op failed to infer returned types}}
  %0 = kt.sum %x {dim = [2]} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dim_negative_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.amax' op dim -3 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.amax' op failed to infer returned types}}
  %0 = kt.amax %x {dim = [-3]} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dim_twice(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.mean' op dim 1 appears twice}}
  // expected-error @+1 {{'kt.mean' op failed to infer returned types}}
  %0 = kt.mean %x {dim = [1, -1]} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @wrong_result_shape(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kt.sum' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kt.sum' op failed to infer returned types}}
  %0 = kt.sum %x {dim = [1]} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @sum_int_result(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  // expected-error @+2 {{'kt.sum' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<2xi32>'}}
  // expected-error @+1 {{'kt.sum' op failed to infer returned types}}
  %0 = kt.sum %x {dim = [1]} : (tensor<2x3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @any_result(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.any' op inferred type(s) 'tensor<2xi1>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'kt.any' op failed to infer returned types}}
  %0 = kt.any %x {dim = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @mean_int(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{'kt.mean' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x3xi64>'}}
  %0 = kt.mean %x {dim = [1]} : (tensor<2x3xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @var_int(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kt.var' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x3xi32>'}}
  %0 = kt.var %x {dim = [1]} : (tensor<2x3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @logsumexp_int(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{'kt.logsumexp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x3xi64>'}}
  %0 = kt.logsumexp %x {dim = [1]} : (tensor<2x3xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @argmax_dim(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+2 {{'kt.argmax' op dim 2 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.argmax' op failed to infer returned types}}
  %0 = kt.argmax %x {dim = 2} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @argmin_bool(%x: tensor<2x3xi1>) -> tensor<2xi64> {
  // expected-error @+1 {{'kt.argmin' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values, but got 'tensor<2x3xi1>'}}
  %0 = kt.argmin %x {dim = 1} : (tensor<2x3xi1>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @argmax_result(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{'kt.argmax' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'kt.argmax' op failed to infer returned types}}
  %0 = kt.argmax %x {dim = 1} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @argmax_keepdim_flat(%x: tensor<2x3xf32>) -> tensor<i64> {
  // expected-error @+2 {{'kt.argmax' op inferred type(s) 'tensor<1x1xi64>' are incompatible with return type(s) of operation 'tensor<i64>'}}
  // expected-error @+1 {{'kt.argmax' op failed to infer returned types}}
  %0 = kt.argmax %x {keepdim = true} : (tensor<2x3xf32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @cumsum_dim_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'kt.cumsum' op dim 2 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.cumsum' op failed to infer returned types}}
  %0 = kt.cumsum %x {dim = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cumprod_rank0_dim(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{'kt.cumprod' op dim 1 is out of range for rank 0 (expected [-1, 0])}}
  // expected-error @+1 {{'kt.cumprod' op failed to infer returned types}}
  %0 = kt.cumprod %x {dim = 1} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cumsum_bool(%x: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{'kt.cumsum' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values}}
  %0 = kt.cumsum %x {dim = 0} : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @logcumsumexp_int(%x: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.logcumsumexp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %0 = kt.logcumsumexp %x {dim = 0} : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @cumsum_result_type(%x: tensor<3xi32>) -> tensor<3xi64> {
  // expected-error @+2 {{'kt.cumsum' op inferred type(s) 'tensor<3xi32>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  // expected-error @+1 {{'kt.cumsum' op failed to infer returned types}}
  %0 = kt.cumsum %x {dim = 0} : (tensor<3xi32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @cumsum_missing_dim(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kt.cumsum' op requires attribute 'dim'}}
  %0 = kt.cumsum %x : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @argsort_dim_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xi64> {
  // expected-error @+2 {{'kt.argsort' op dim -3 is out of range for rank 2 (expected [-2, 1])}}
  // expected-error @+1 {{'kt.argsort' op failed to infer returned types}}
  %0 = kt.argsort %x {dim = -3} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @argsort_rank0_dim(%x: tensor<f32>) -> tensor<i64> {
  // expected-error @+2 {{'kt.argsort' op dim 1 is out of range for rank 0 (expected [-1, 0])}}
  // expected-error @+1 {{'kt.argsort' op failed to infer returned types}}
  %0 = kt.argsort %x {dim = 1} : (tensor<f32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @argsort_result_type(%x: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+2 {{'kt.argsort' op inferred type(s) 'tensor<3xi64>' are incompatible with return type(s) of operation 'tensor<3xi32>'}}
  // expected-error @+1 {{'kt.argsort' op failed to infer returned types}}
  %0 = kt.argsort %x {dim = 0} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @argsort_shape(%x: tensor<3x2xf32>) -> tensor<2x3xi64> {
  // expected-error @+2 {{'kt.argsort' op inferred type(s) 'tensor<3x2xi64>' are incompatible with return type(s) of operation 'tensor<2x3xi64>'}}
  // expected-error @+1 {{'kt.argsort' op failed to infer returned types}}
  %0 = kt.argsort %x {dim = 0} : (tensor<3x2xf32>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @argsort_descending_not_bool(%x: tensor<3xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.argsort' op attribute 'descending' failed to satisfy constraint: bool attribute}}
  %0 = kt.argsort %x {dim = 0, descending = 1} : (tensor<3xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @searchsorted_rank0(%s: tensor<f32>, %v: tensor<3xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{'kt.searchsorted' op sorted_sequence must have rank >= 1, got rank 0}}
  // expected-error @+1 {{'kt.searchsorted' op failed to infer returned types}}
  %0 = kt.searchsorted %s, %v : (tensor<f32>, tensor<3xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @searchsorted_dtypes(%s: tensor<4xf32>, %v: tensor<3xf64>) -> tensor<3xi64> {
  // expected-error @+2 {{'kt.searchsorted' op sorted_sequence has element type 'f32' but values has 'f64' (they must be equal)}}
  // expected-error @+1 {{'kt.searchsorted' op failed to infer returned types}}
  %0 = kt.searchsorted %s, %v : (tensor<4xf32>, tensor<3xf64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @searchsorted_nd_rank(%s: tensor<2x4xf32>, %v: tensor<3xf32>) -> tensor<3xi64> {
  // expected-error @+2 {{'kt.searchsorted' op values has rank 1 but an N-D sorted_sequence has rank 2 (they must be equal)}}
  // expected-error @+1 {{'kt.searchsorted' op failed to infer returned types}}
  %0 = kt.searchsorted %s, %v : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @searchsorted_nd_lead(%s: tensor<2x5x4xf32>, %v: tensor<2x3x1xf32>) -> tensor<2x3x1xi64> {
  // expected-error @+2 {{'kt.searchsorted' op leading dim 1 of sorted_sequence is 5 but of values 3 (they must be equal)}}
  // expected-error @+1 {{'kt.searchsorted' op failed to infer returned types}}
  %0 = kt.searchsorted %s, %v : (tensor<2x5x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xi64>
  return %0 : tensor<2x3x1xi64>
}

// -----

func.func @searchsorted_bool(%s: tensor<4xi1>, %v: tensor<3xi1>) -> tensor<3xi64> {
  // expected-error @+1 {{'kt.searchsorted' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 16-bit signless integer or 8-bit signless integer or 8-bit unsigned integer values}}
  %0 = kt.searchsorted %s, %v : (tensor<4xi1>, tensor<3xi1>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @searchsorted_result(%s: tensor<4xf32>, %v: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+2 {{'kt.searchsorted' op inferred type(s) 'tensor<3xi64>' are incompatible with return type(s) of operation 'tensor<3xi32>'}}
  // expected-error @+1 {{'kt.searchsorted' op failed to infer returned types}}
  %0 = kt.searchsorted %s, %v : (tensor<4xf32>, tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @nonzero_rank(%x: tensor<3x4xf32>) -> tensor<?x1xi64> {
  // expected-error @+2 {{'kt.nonzero' op inferred type(s) 'tensor<?x2xi64>' are incompatible with return type(s) of operation 'tensor<?x1xi64>'}}
  // expected-error @+1 {{'kt.nonzero' op failed to infer returned types}}
  %0 = kt.nonzero %x : (tensor<3x4xf32>) -> tensor<?x1xi64>
  return %0 : tensor<?x1xi64>
}

// -----

func.func @nonzero_dtype(%x: tensor<3xf32>) -> tensor<?x1xi32> {
  // expected-error @+2 {{'kt.nonzero' op inferred type(s) 'tensor<?x1xi64>' are incompatible with return type(s) of operation 'tensor<?x1xi32>'}}
  // expected-error @+1 {{'kt.nonzero' op failed to infer returned types}}
  %0 = kt.nonzero %x : (tensor<3xf32>) -> tensor<?x1xi32>
  return %0 : tensor<?x1xi32>
}

// -----

func.func @nonzero_complex(%x: tensor<3xcomplex<f32>>) -> tensor<?x1xi64> {
  // expected-error @+1 {{'kt.nonzero' op operand #0 must be ranked tensor of}}
  %0 = kt.nonzero %x : (tensor<3xcomplex<f32>>) -> tensor<?x1xi64>
  return %0 : tensor<?x1xi64>
}

// -----

func.func @bincount_rank(%x: tensor<2x3xi64>) -> tensor<?xi64> {
  // expected-error @+2 {{'kt.bincount' op self must have rank 1, got rank 2}}
  // expected-error @+1 {{'kt.bincount' op failed to infer returned types}}
  %0 = kt.bincount %x : (tensor<2x3xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @bincount_float(%x: tensor<3xf32>) -> tensor<?xi64> {
  // expected-error @+1 {{'kt.bincount' op operand #0 must be ranked tensor of}}
  %0 = kt.bincount %x : (tensor<3xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @bincount_bool(%x: tensor<3xi1>) -> tensor<?xi64> {
  // expected-error @+1 {{'kt.bincount' op operand #0 must be ranked tensor of}}
  %0 = kt.bincount %x : (tensor<3xi1>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @bincount_weights_rank(%x: tensor<3xi64>, %w: tensor<3x1xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{'kt.bincount' op weights must have rank 1, got rank 2}}
  // expected-error @+1 {{'kt.bincount' op failed to infer returned types}}
  %0 = kt.bincount %x, %w : (tensor<3xi64>, tensor<3x1xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @bincount_weights_length(%x: tensor<3xi64>, %w: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{'kt.bincount' op weights have length 4 but self has length 3 (they must be equal)}}
  // expected-error @+1 {{'kt.bincount' op failed to infer returned types}}
  %0 = kt.bincount %x, %w : (tensor<3xi64>, tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @bincount_weights_dtype(%x: tensor<3xi64>, %w: tensor<3xf16>) -> tensor<?xf16> {
  // expected-error @+1 {{'kt.bincount' op operand #1 must be ranked tensor of 32-bit float or 64-bit float values}}
  %0 = kt.bincount %x, %w : (tensor<3xi64>, tensor<3xf16>) -> tensor<?xf16>
  return %0 : tensor<?xf16>
}

// -----

func.func @bincount_minlength(%x: tensor<3xi64>) -> tensor<?xi64> {
  // expected-error @+2 {{'kt.bincount' op minlength must be >= 0, got -1}}
  // expected-error @+1 {{'kt.bincount' op failed to infer returned types}}
  %0 = kt.bincount %x {minlength = -1} : (tensor<3xi64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @bincount_result_dtype(%x: tensor<3xi64>, %w: tensor<3xf32>) -> tensor<?xf64> {
  // expected-error @+2 {{'kt.bincount' op inferred type(s) 'tensor<?xf32>' are incompatible with return type(s) of operation 'tensor<?xf64>'}}
  // expected-error @+1 {{'kt.bincount' op failed to infer returned types}}
  %0 = kt.bincount %x, %w : (tensor<3xi64>, tensor<3xf32>) -> tensor<?xf64>
  return %0 : tensor<?xf64>
}
