func.func private @upd(%p: !kt.ref<3xf32>, %q: !kt.ref<3xf32>, %g: tensor<3xf32>) attributes {kg.graph_function} {
  kt.sub_ %p, %g : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  kt.sub_ %q, %g : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
  return
}
kg.program @shared_callee(%a: !kt.ref<3xf32>, %b: !kt.ref<3xf32>, %g: tensor<3xf32>) {
  kg.graph @upd(%a, %b, %g) : (!kt.ref<3xf32>, !kt.ref<3xf32>, tensor<3xf32>) -> ()
  kg.graph @upd(%a, %a, %g) : (!kt.ref<3xf32>, !kt.ref<3xf32>, tensor<3xf32>) -> ()
  kg.return
}
