// A function kiln-cpu cannot lower (kt.alloc_ref has no CPU lowering).
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = kt.alloc_ref %a : (tensor<2xf32>) -> !kt.ref<2xf32>
  %v = kt.load %r : (!kt.ref<2xf32>) -> tensor<2xf32>
  return %v : tensor<2xf32>
}
