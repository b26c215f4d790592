// RUN: kiln-opt %s -split-input-file -kiln-functionalize -verify-diagnostics

func.func @expand_write(%x: !kt.ref<3x1xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{cannot functionalize a write through an expanded view (kt.view_expand)}}
  %e = kt.view_expand %x {size = [3, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<3x4xf32>
  kt.add_ %e, %c : (!kt.ref<3x4xf32>, tensor<f32>) -> ()
  return
}

// -----

func.func @index_put(%x: !kt.ref<?xf32>, %i: tensor<2xi64>, %v: tensor<f32>) {
  // expected-error @+1 {{cannot functionalize kt.index_put_ with a ? dim}}
  kt.index_put_ %x, %i, %v : (!kt.ref<?xf32>, tensor<2xi64>, tensor<f32>) -> ()
  return
}

// -----

func.func @nested(%x: !kt.ref<4xf32>, %c: i1, %y: tensor<4xf32>) {
  scf.if %c {
    // expected-error @+1 {{cannot functionalize a !kt.ref used inside a nested region}}
    kt.add_ %x, %y : (!kt.ref<4xf32>, tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func private @callee(!kt.ref<4xf32>)
func.func @call(%x: !kt.ref<4xf32>) {
  // expected-error @+1 {{cannot functionalize 'func.call': it takes a !kt.ref operand}}
  func.call @callee(%x) : (!kt.ref<4xf32>) -> ()
  return
}

// -----

func.func @returns_ref(%x: !kt.ref<4xf32>) -> !kt.ref<4xf32> {
  %v = kt.view_slice %x : (!kt.ref<4xf32>) -> !kt.ref<4xf32>
  // expected-error @+1 {{cannot functionalize: the body returns a !kt.ref}}
  return %v : !kt.ref<4xf32>
}

