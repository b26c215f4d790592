func.func @views(%r: !kt.ref<2x3x4xf32>, %s: !kt.ref<3x1xf32>, %d: !kt.ref<?x4xf32>) {
  %0 = kt.view_reshape %r {shape = [3, -1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x8xf32>
  %1 = kt.view_transpose %r {dim0 = 0, dim1 = -1} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x3x2xf32>
  %2 = kt.view_permute %r {dims = [2, 0, 1]} : (!kt.ref<2x3x4xf32>) -> !kt.ref<4x2x3xf32>
  %3 = kt.view_slice %r {dim = 1, start = 1, end = -1, step = 2} : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x1x4xf32>
  %4 = kt.view_slice %r : (!kt.ref<2x3x4xf32>) -> !kt.ref<2x3x4xf32>
  %5 = kt.view_select %r {dim = 0, index = -1} : (!kt.ref<2x3x4xf32>) -> !kt.ref<3x4xf32>
  %6 = kt.view_expand %s {size = [2, -1, 4]} : (!kt.ref<3x1xf32>) -> !kt.ref<2x3x4xf32>
  %7 = kt.view_squeeze %s {dim = [1]} : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
  %8 = kt.view_squeeze %s : (!kt.ref<3x1xf32>) -> !kt.ref<3xf32>
  %9 = kt.view_unsqueeze %s {dim = -1} : (!kt.ref<3x1xf32>) -> !kt.ref<3x1x1xf32>
  %10 = kt.view_slice %d {dim = 0, start = 1} : (!kt.ref<?x4xf32>) -> !kt.ref<?x4xf32>
  %11 = kt.view_reshape %d {shape = [-1]} : (!kt.ref<?x4xf32>) -> !kt.ref<?xf32>
  return
}
