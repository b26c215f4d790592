// A function kiln-cpu cannot compile: a ref used inside a nested region,
// which functionalization (the CPU backend's value form) refuses.
func.func @f(%a: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = kt.alloc_ref %a : (tensor<2xf32>) -> !kt.ref<2xf32>
  scf.if %c {
    kt.zero_ %r : (!kt.ref<2xf32>) -> ()
  }
  %v = kt.load %r : (!kt.ref<2xf32>) -> tensor<2xf32>
  return %v : tensor<2xf32>
}
