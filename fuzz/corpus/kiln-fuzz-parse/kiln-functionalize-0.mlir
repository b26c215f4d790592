func.func @t_slice_add(%x: !kt.ref<3x4xf32>, %y: tensor<3xf32>) {
  %t = kt.view_transpose %x {dim0 = 0, dim1 = 1} : (!kt.ref<3x4xf32>) -> !kt.ref<4x3xf32>
  %v = kt.view_slice %t {start = 1, end = 3} : (!kt.ref<4x3xf32>) -> !kt.ref<2x3xf32>
  kt.add_ %v, %y : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
  return
}
