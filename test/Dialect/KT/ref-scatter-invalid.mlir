// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @slice_scatter_shape(%x: tensor<2x4xf32>, %v: tensor<2x3xf32>) {
  // expected-error @+2 {{'kt.slice_scatter' op src has shape 2x3 but the slice of self has shape 2x2}}
  // expected-error @+1 {{'kt.slice_scatter' op failed to infer returned types}}
  %0 = kt.slice_scatter %x, %v {dim = 1, start = 1, end = 3} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_scatter_dtype(%x: tensor<4xf32>, %v: tensor<4xf64>) {
  // expected-error @+2 {{'kt.slice_scatter' op src has element type 'f64' but self has 'f32' (insert kt.cast)}}
  // expected-error @+1 {{'kt.slice_scatter' op failed to infer returned types}}
  %0 = kt.slice_scatter %x, %v : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_scatter_step(%x: tensor<4xf32>, %v: tensor<4xf32>) {
  // expected-error @+2 {{'kt.slice_scatter' op step 0 must be > 0}}
  // expected-error @+1 {{'kt.slice_scatter' op failed to infer returned types}}
  %0 = kt.slice_scatter %x, %v {step = 0} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_scatter_index(%x: tensor<2x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+2 {{'kt.select_scatter' op index 2 is out of range for dim 0 of size 2}}
  // expected-error @+1 {{'kt.select_scatter' op failed to infer returned types}}
  %0 = kt.select_scatter %x, %v {dim = 0, index = 2} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @select_scatter_shape(%x: tensor<2x4xf32>, %v: tensor<2xf32>) {
  // expected-error @+2 {{'kt.select_scatter' op src has shape 2 but the selection of self has shape 4}}
  // expected-error @+1 {{'kt.select_scatter' op failed to infer returned types}}
  %0 = kt.select_scatter %x, %v {dim = 0, index = 0} : (tensor<2x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return
}
