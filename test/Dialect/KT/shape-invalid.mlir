// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @reshape_two_inferred(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op shape has more than one -1 entry}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [-1, -1]} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reshape_negative(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op shape entry -3 is invalid (expected >= 0, -1 or -2)}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [-3, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_missing_size(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op shape has 1 -2 entries but 0 size operands were given}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [-2, 3]} : (tensor<2x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @reshape_extra_size(%a: tensor<2x3xf32>, %n: index) {
  // expected-error @+2 {{'kt.reshape' op shape has 0 -2 entries but 1 size operands were given}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a, %n {shape = [2, 3]} : (tensor<2x3xf32>, index) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_negative_size(%a: tensor<2x3xf32>) {
  %c = arith.constant -6 : index
  // expected-error @+2 {{'kt.reshape' op size operand #0 is -6 (expected >= 0)}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a, %c {shape = [-2]} : (tensor<2x3xf32>, index) -> tensor<?xf32>
  return
}

// -----

func.func @reshape_size_not_index(%a: tensor<2x3xf32>, %n: i64) {
  // expected-error @+1 {{'kt.reshape' op operand #1 must be variadic of index}}
  %0 = kt.reshape %a, %n {shape = [-2]} : (tensor<2x3xf32>, i64) -> tensor<?xf32>
  return
}

// -----

func.func @view_reshape_missing_size(%r: !kt.ref<2x3xf32>) {
  %c = arith.constant 2 : index
  // expected-error @+2 {{'kt.view_reshape' op shape has 2 -2 entries but 1 size operands were given}}
  // expected-error @+1 {{'kt.view_reshape' op failed to infer returned types}}
  %0 = kt.view_reshape %r, %c {shape = [-2, -2]} : (!kt.ref<2x3xf32>, index) -> !kt.ref<2x?xf32>
  return
}

// -----

func.func @reshape_ambiguous(%a: tensor<0x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op shape 0x-1 is ambiguous}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [0, -1]} : (tensor<0x3xf32>) -> tensor<0x?xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op cannot reshape 2x3 (6 elements) into shape 4x2 (8 elements)}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [4, 2]} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_not_divisible(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op cannot reshape 2x3 (6 elements) into shape 4x-1}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [4, -1]} : (tensor<2x3xf32>) -> tensor<4x?xf32>
  return
}

// -----

func.func @reshape_wrong_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.reshape' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'kt.reshape' op failed to infer returned types}}
  %0 = kt.reshape %a {shape = [3, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_dim(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.transpose' op dim1 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.transpose' op failed to infer returned types}}
  %0 = kt.transpose %a {dim0 = 0 : i64, dim1 = 2 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @permute_length(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.permute' op dims has 1 entries but self has rank 2}}
  // expected-error @+1 {{'kt.permute' op failed to infer returned types}}
  %0 = kt.permute %a {dims = [0]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @permute_repeat(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.permute' op dim 1 appears twice}}
  // expected-error @+1 {{'kt.permute' op failed to infer returned types}}
  %0 = kt.permute %a {dims = [1, -1]} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @permute_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.permute' op dim -3 is out of range for rank 2}}
  // expected-error @+1 {{'kt.permute' op failed to infer returned types}}
  %0 = kt.permute %a {dims = [-3, 0]} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @expand_fewer(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.expand' op size has 1 entries, fewer than the rank 2 of self}}
  // expected-error @+1 {{'kt.expand' op failed to infer returned types}}
  %0 = kt.expand %a {size = [3]} : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @expand_new_dim_minus_one(%a: tensor<3xf32>) {
  // expected-error @+2 {{'kt.expand' op size -1 of new leading dim 0 is invalid}}
  // expected-error @+1 {{'kt.expand' op failed to infer returned types}}
  %0 = kt.expand %a {size = [-1, 3]} : (tensor<3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @expand_negative(%a: tensor<1xf32>) {
  // expected-error @+2 {{'kt.expand' op size -2 at dim 0 is invalid}}
  // expected-error @+1 {{'kt.expand' op failed to infer returned types}}
  %0 = kt.expand %a {size = [-2]} : (tensor<1xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @expand_non_one(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.expand' op dim 0 of self has size 2 and cannot be expanded to 4}}
  // expected-error @+1 {{'kt.expand' op failed to infer returned types}}
  %0 = kt.expand %a {size = [4, 3]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @squeeze_range(%a: tensor<1x3xf32>) {
  // expected-error @+2 {{'kt.squeeze' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.squeeze' op failed to infer returned types}}
  %0 = kt.squeeze %a {dim = [2]} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @squeeze_repeat(%a: tensor<1x3xf32>) {
  // expected-error @+2 {{'kt.squeeze' op dim 0 appears twice}}
  // expected-error @+1 {{'kt.squeeze' op failed to infer returned types}}
  %0 = kt.squeeze %a {dim = [0, -2]} : (tensor<1x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @squeeze_non_one_kept(%a: tensor<2x3xf32>) {
  // Squeezing a dim that is not 1 is a no-op, so the result keeps it.
  // expected-error @+2 {{'kt.squeeze' op inferred type(s) 'tensor<2x3xf32>' are incompatible}}
  // expected-error @+1 {{'kt.squeeze' op failed to infer returned types}}
  %0 = kt.squeeze %a {dim = [0]} : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @unsqueeze_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.unsqueeze' op dim 3 is out of range for rank 2 (expected [-3, 2])}}
  // expected-error @+1 {{'kt.unsqueeze' op failed to infer returned types}}
  %0 = kt.unsqueeze %a {dim = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  return
}

// -----

func.func @slice_rank0(%a: tensor<f32>) {
  // expected-error @+2 {{'kt.slice' op cannot slice a rank-0 tensor}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @slice_dim(%a: tensor<4xf32>) {
  // expected-error @+2 {{'kt.slice' op dim 1 is out of range for rank 1}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a {dim = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_dynamic_missing_operand(%a: tensor<4xf32>) {
  // expected-error @+2 {{'kt.slice' op has 1 dynamic bounds (dynamic_start / dynamic_end) but 0 'bounds' operands}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a {dynamic_end} : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @slice_operand_without_dynamic(%a: tensor<4xf32>, %n: index) {
  // expected-error @+2 {{'kt.slice' op has 1 dynamic bounds (dynamic_start / dynamic_end) but 2 'bounds' operands}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a, %n, %n {dynamic_end} : (tensor<4xf32>, index, index) -> tensor<?xf32>
  return
}

// -----

func.func @slice_dynamic_and_static_end(%a: tensor<4xf32>, %n: index) {
  // expected-error @+2 {{'kt.slice' op has both 'end' and 'dynamic_end'}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a, %n {end = 2 : i64, dynamic_end} : (tensor<4xf32>, index) -> tensor<?xf32>
  return
}

// -----

func.func @slice_dynamic_and_static_start(%a: tensor<4xf32>, %n: index) {
  // expected-error @+2 {{'kt.slice' op has both 'start' and 'dynamic_start'}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a, %n {start = 2 : i64, dynamic_start} : (tensor<4xf32>, index) -> tensor<?xf32>
  return
}

// -----

func.func @slice_bound_not_index(%a: tensor<4xf32>, %n: i64) {
  // expected-error @+1 {{'kt.slice' op operand #1 must be variadic of index, but got 'i64'}}
  %0 = kt.slice %a, %n {dynamic_end} : (tensor<4xf32>, i64) -> tensor<?xf32>
  return
}

// -----

func.func @slice_dynamic_static_result_wrong(%a: tensor<4xf32>) {
  %c2 = arith.constant 2 : index
  // expected-error @+2 {{'kt.slice' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a, %c2 {dynamic_end} : (tensor<4xf32>, index) -> tensor<3xf32>
  return
}

// -----

func.func @slice_scatter_dynamic_missing_operand(%a: tensor<4xf32>, %v: tensor<?xf32>) {
  // expected-error @+2 {{'kt.slice_scatter' op has 2 dynamic bounds (dynamic_start / dynamic_end) but 0 'bounds' operands}}
  // expected-error @+1 {{'kt.slice_scatter' op failed to infer returned types}}
  %0 = kt.slice_scatter %a, %v {dynamic_start, dynamic_end} : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_scatter_dynamic_src_shape(%a: tensor<4xf32>, %v: tensor<3xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @+2 {{'kt.slice_scatter' op src has shape 3 but the slice of self has shape 1}}
  // expected-error @+1 {{'kt.slice_scatter' op failed to infer returned types}}
  %0 = kt.slice_scatter %a, %v, %c1 {end = -2, dynamic_start} : (tensor<4xf32>, tensor<3xf32>, index) -> tensor<4xf32>
  return
}

// -----

func.func @slice_step(%a: tensor<4xf32>) {
  // expected-error @+2 {{'kt.slice' op step 0 must be > 0}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a {step = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_negative_step(%a: tensor<4xf32>) {
  // expected-error @+2 {{'kt.slice' op step -1 must be > 0}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a {step = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_wrong_length(%a: tensor<10xf32>) {
  // expected-error @+2 {{'kt.slice' op inferred type(s) 'tensor<3xf32>' are incompatible}}
  // expected-error @+1 {{'kt.slice' op failed to infer returned types}}
  %0 = kt.slice %a {start = 1 : i64, end = 8 : i64, step = 3 : i64} : (tensor<10xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @select_rank0(%a: tensor<f32>) {
  // expected-error @+2 {{'kt.select' op cannot select from a rank-0 tensor}}
  // expected-error @+1 {{'kt.select' op failed to infer returned types}}
  %0 = kt.select %a {dim = 0 : i64, index = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @select_dim(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.select' op dim -3 is out of range for rank 2}}
  // expected-error @+1 {{'kt.select' op failed to infer returned types}}
  %0 = kt.select %a {dim = -3 : i64, index = 0 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @select_index(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.select' op index -4 is out of range for dim 1 of size 3}}
  // expected-error @+1 {{'kt.select' op failed to infer returned types}}
  %0 = kt.select %a {dim = 1 : i64, index = -4 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @concat_none() {
  // expected-error @+2 {{'kt.concat' op requires at least one operand}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_elem(%a: tensor<2xf32>, %b: tensor<2xf64>) {
  // expected-error @+2 {{'kt.concat' op operand #1 has element type f64 but operand #0 has f32}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat %a, %b : (tensor<2xf32>, tensor<2xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_rank0(%a: tensor<f32>) {
  // expected-error @+2 {{'kt.concat' op operand #0 has rank 0; rank-0 tensors cannot be concatenated}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat %a, %a : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'kt.concat' op operand #1 has rank 1 but operand #0 has rank 2}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.concat' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat %a, %a {dim = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{'kt.concat' op operand #1 has size 4 at dim 1 but an earlier operand has 3 (only dim 0 may differ)}}
  // expected-error @+1 {{'kt.concat' op failed to infer returned types}}
  %0 = kt.concat %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @stack_none() {
  // expected-error @+2 {{'kt.stack' op requires at least one operand}}
  // expected-error @+1 {{'kt.stack' op failed to infer returned types}}
  %0 = kt.stack : () -> tensor<0xf32>
  return
}

// -----

func.func @stack_elem(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+2 {{'kt.stack' op operand #1 has element type i32}}
  // expected-error @+1 {{'kt.stack' op failed to infer returned types}}
  %0 = kt.stack %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @stack_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{'kt.stack' op operand #1 has shape 2x4 but operand #0 has 2x3}}
  // expected-error @+1 {{'kt.stack' op failed to infer returned types}}
  %0 = kt.stack %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @stack_dim(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.stack' op dim -4 is out of range for rank 2 (expected [-3, 2])}}
  // expected-error @+1 {{'kt.stack' op failed to infer returned types}}
  %0 = kt.stack %a, %a {dim = -4 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @gather_dim(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+2 {{'kt.gather' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.gather' op failed to infer returned types}}
  %0 = kt.gather %a, %i {dim = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_rank(%a: tensor<2x3xf32>, %i: tensor<6xi64>) {
  // expected-error @+2 {{'kt.gather' op index has rank 1 but self has rank 2}}
  // expected-error @+1 {{'kt.gather' op failed to infer returned types}}
  %0 = kt.gather %a, %i {dim = 0 : i64} : (tensor<2x3xf32>, tensor<6xi64>) -> tensor<6xf32>
  return
}

// -----

func.func @gather_size(%a: tensor<2x3xf32>, %i: tensor<3x3xi64>) {
  // expected-error @+2 {{'kt.gather' op index size 3 at dim 0 exceeds self size 2}}
  // expected-error @+1 {{'kt.gather' op failed to infer returned types}}
  %0 = kt.gather %a, %i {dim = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xi64>) -> tensor<3x3xf32>
  return
}

// -----

func.func @gather_index_type(%a: tensor<2x3xf32>, %i: tensor<2x3xf32>) {
  // expected-error @+1 {{'kt.gather' op operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = kt.gather %a, %i {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @index_select_dim(%a: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'kt.index_select' op dim -3 is out of range for rank 2}}
  // expected-error @+1 {{'kt.index_select' op failed to infer returned types}}
  %0 = kt.index_select %a, %i {dim = -3 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @index_select_rank(%a: tensor<2x3xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+2 {{'kt.index_select' op index has rank 2 (expected 0 or 1)}}
  // expected-error @+1 {{'kt.index_select' op failed to infer returned types}}
  %0 = kt.index_select %a, %i {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @index_select_scalar_self(%a: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'kt.index_select' op index has 2 elements but self has rank 0 (expected 1)}}
  // expected-error @+1 {{'kt.index_select' op failed to infer returned types}}
  %0 = kt.index_select %a, %i {dim = 0 : i64} : (tensor<f32>, tensor<2xi64>) -> tensor<f32>
  return
}

// -----

func.func @pad_odd(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.pad' op pad has 3 entries (expected an even number)}}
  // expected-error @+1 {{'kt.pad' op failed to infer returned types}}
  %0 = kt.pad %a {pad = [1, 1, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pad_too_long(%a: tensor<3xf32>) {
  // expected-error @+2 {{'kt.pad' op pad has 4 entries but self has rank 1 (at most 2)}}
  // expected-error @+1 {{'kt.pad' op failed to infer returned types}}
  %0 = kt.pad %a {pad = [1, 1, 1, 1]} : (tensor<3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @pad_negative_size(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.pad' op dim 1 of size 3 padded by (-2, -2) crops 4 elements, more than it holds}}
  // expected-error @+1 {{'kt.pad' op failed to infer returned types}}
  %0 = kt.pad %a {pad = [-2, -2]} : (tensor<2x3xf32>) -> tensor<2x0xf32>
  return
}

// -----

// Crops come first: cropping an empty dim fails even where the padding of
// its other side would give a size of 1 (rl23's fuzz seed 1611).
func.func @pad_crops_an_empty_dim(%a: tensor<0xi16>) {
  // expected-error @+2 {{'kt.pad' op dim 0 of size 0 padded by (2, -1) crops 1 elements, more than it holds}}
  // expected-error @+1 {{'kt.pad' op failed to infer returned types}}
  %0 = kt.pad %a {pad = [2, -1]} : (tensor<0xi16>) -> tensor<1xi16>
  return
}

// -----

func.func @pad_crops_too_small_a_dim(%a: tensor<4x3xf32>) {
  // expected-error @+2 {{'kt.pad' op dim 1 of size 3 padded by (-4, 5) crops 4 elements, more than it holds}}
  // expected-error @+1 {{'kt.pad' op failed to infer returned types}}
  %0 = kt.pad %a {pad = [-4, 5, 1, 1]} : (tensor<4x3xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @flip_repeat(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.flip' op dim 1 appears twice}}
  // expected-error @+1 {{'kt.flip' op failed to infer returned types}}
  %0 = kt.flip %a {dims = [1, -1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @flip_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.flip' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'kt.flip' op failed to infer returned types}}
  %0 = kt.flip %a {dims = [2]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @scatter_dim(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+2 {{'kt.scatter' op dim -3 is out of range for rank 2}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %a {dim = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @scatter_src_type(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>, %s: tensor<2x3xf64>) {
  // expected-error @+2 {{'kt.scatter' op src has element type 'f64' but self has 'f32' (they must be equal)}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @scatter_index_rank(%a: tensor<2x3xf32>, %i: tensor<6xi64>) {
  // expected-error @+2 {{'kt.scatter' op index has rank 1 but self has rank 2 (they must be equal)}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %a {dim = 0 : i64} : (tensor<2x3xf32>, tensor<6xi64>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @scatter_src_rank(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>, %s: tensor<6xf32>) {
  // expected-error @+2 {{'kt.scatter' op src has rank 1 but self has rank 2 (they must be equal)}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<6xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @scatter_index_vs_src(%a: tensor<4x3xf32>, %i: tensor<3x3xi64>, %s: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.scatter' op index size 3 at dim 0 exceeds src size 2 (index 3x3, src 2x3)}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<4x3xf32>, tensor<3x3xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @scatter_index_vs_self(%a: tensor<4x3xf32>, %i: tensor<2x4xi64>, %s: tensor<2x5xf32>) {
  // expected-error @+2 {{'kt.scatter' op index size 4 at dim 1 exceeds self size 3 (index 2x4, self 4x3, dim 0)}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<4x3xf32>, tensor<2x4xi64>, tensor<2x5xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @scatter_bool_mean(%a: tensor<4xi1>, %i: tensor<2xi64>, %s: tensor<2xi1>) {
  // expected-error @+2 {{'kt.scatter' op reduce = mean needs a numeric element type, not i1}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<mean>} : (tensor<4xi1>, tensor<2xi64>, tensor<2xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @scatter_float_index(%a: tensor<4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'kt.scatter' op operand #1 must be ranked tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = kt.scatter %a, %i, %i {dim = 0 : i64} : (tensor<4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_result_type(%a: tensor<4xf32>, %i: tensor<2xi64>, %s: tensor<2xf32>) {
  // expected-error @+2 {{'kt.scatter' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'kt.scatter' op failed to infer returned types}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @scatter_bad_reduce(%a: tensor<4xf32>, %i: tensor<2xi64>, %s: tensor<2xf32>) {
  // expected-error @+2 {{expected ::kiln::kt::ScatterReduce to be one of: none, sum, prod, mean, amax, amin}}
  // expected-error @+1 {{failed to parse KT_ScatterReduceAttr parameter 'value'}}
  %0 = kt.scatter %a, %i, %s {dim = 0 : i64, reduce = #kt.scatter_reduce<max>} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @check_empty_message(%a: tensor<3xi64>, %c: tensor<i1>) {
  // expected-error @+2 {{'kt.check' op requires a non-empty 'message'}}
  // expected-error @+1 {{'kt.check' op failed to infer returned types}}
  %0 = kt.check %a, %c {message = ""} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
  return
}

// -----

func.func @check_cond_not_bool(%a: tensor<3xi64>, %c: tensor<3xi64>) {
  // expected-error @+1 {{'kt.check' op operand #1 must be ranked tensor of 1-bit signless integer values}}
  %0 = kt.check %a, %c {message = "m"} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return
}

// -----

func.func @check_no_message(%a: tensor<3xi64>, %c: tensor<i1>) {
  // expected-error @+1 {{'kt.check' op requires attribute 'message'}}
  %0 = kt.check %a, %c : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64>
  return
}

// -----

func.func @check_result_type(%a: tensor<3xi64>, %c: tensor<i1>) {
  // expected-error @+2 {{'kt.check' op inferred type(s) 'tensor<3xi64>' are incompatible with return type(s) of operation 'tensor<3xi32>'}}
  // expected-error @+1 {{'kt.check' op failed to infer returned types}}
  %0 = kt.check %a, %c {message = "m"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi32>
  return
}
