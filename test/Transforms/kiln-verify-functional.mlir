// RUN: kiln-opt %s -split-input-file -kiln-verify-functional -verify-diagnostics

// Tests that the contract holds for the epilogue form: one leading load and
// one trailing store per ref argument.
func.func @ok(%x: !kt.ref<4xf32>, %y: !kt.ref<4xf32>, %g: tensor<4xf32>) {
  %a = kt.load %x : (!kt.ref<4xf32>) -> tensor<4xf32>
  %b = kt.load %y : (!kt.ref<4xf32>) -> tensor<4xf32>
  %c = kt.sub %a, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = kt.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  kt.store %c, %x : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
  kt.store %d, %y : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
  return
}

// -----

// Tests that every offending op is reported, not just the first.
func.func @bad(%x: !kt.ref<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %a = kt.load %x : (!kt.ref<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'kt.sub_' uses a !kt.ref after functionalization}}
  kt.sub_ %x, %g : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
  // expected-error @+1 {{'kt.alloc_ref' uses a !kt.ref after functionalization}}
  %b = kt.alloc_ref %g : (tensor<4xf32>) -> !kt.ref<4xf32>
  // expected-error @+1 {{'kt.store' uses a !kt.ref after functionalization}}
  kt.store %a, %x : (tensor<4xf32>, !kt.ref<4xf32>) -> ()
  // expected-error @+1 {{'kt.load' uses a !kt.ref after functionalization}}
  %c = kt.load %x : (!kt.ref<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @view_left(%x: !kt.ref<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kt.view_slice' uses a !kt.ref after functionalization}}
  %v = kt.view_slice %x {end = 2} : (!kt.ref<4xf32>) -> !kt.ref<2xf32>
  // expected-error @+1 {{'kt.load' uses a !kt.ref after functionalization}}
  %a = kt.load %v : (!kt.ref<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

// -----

func.func @graph_region(%w: !kt.ref<4xf32>, %g: tensor<4xf32>) {
  return
}
kg.program @p(%w: !kt.ref<4xf32>, %g: tensor<4xf32>) {
  kg.graph @p_g0(%w, %g) : (!kt.ref<4xf32>, tensor<4xf32>) -> () {
  ^bb0(%w0: !kt.ref<4xf32>, %g0: tensor<4xf32>):
    // expected-error @+1 {{'kt.sub_' uses a !kt.ref after functionalization}}
    kt.sub_ %w0, %g0 : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
    kg.yield
  }
  kg.return
}
