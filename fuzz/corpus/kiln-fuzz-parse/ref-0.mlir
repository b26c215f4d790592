func.func @in_place(%r: !kt.ref<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xf32>, %s: tensor<f32>,
                    %col: tensor<2x1xf32>, %i: !kt.ref<4xi64>, %iv: tensor<4xi64>,
                    %idx: tensor<2xi64>, %sv: tensor<i64>, %rows: tensor<2x1xi64>, %cols: tensor<4xi32>,
                    %vals: tensor<4xf32>, %idx5: tensor<5xi64>, %v53: tensor<5x3xf32>) {
  kt.add_ %r, %b : (!kt.ref<2x3xf32>, tensor<3xf32>) -> ()
  kt.sub_ %r, %c : (!kt.ref<2x3xf32>, tensor<2x3xf32>) -> ()
  kt.mul_ %r, %s : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
  kt.div_ %r, %col : (!kt.ref<2x3xf32>, tensor<2x1xf32>) -> ()
  kt.div_ %i, %iv {rounding_mode = #kt.rounding_mode<floor>} : (!kt.ref<4xi64>, tensor<4xi64>) -> ()
  %v = kt.view_slice %r {dim = 0, start = 1, end = 2} : (!kt.ref<2x3xf32>) -> !kt.ref<1x3xf32>
  kt.copy_ %v, %b : (!kt.ref<1x3xf32>, tensor<3xf32>) -> ()
  kt.zero_ %r : (!kt.ref<2x3xf32>) -> ()
  kt.fill_ %r, %s : (!kt.ref<2x3xf32>, tensor<f32>) -> ()
  kt.relu_ %r : (!kt.ref<2x3xf32>) -> ()
  kt.index_put_ %i, %idx, %sv : (!kt.ref<4xi64>, tensor<2xi64>, tensor<i64>) -> ()
  kt.index_put_ %r, %rows, %cols, %vals {accumulate = true} : (!kt.ref<2x3xf32>, tensor<2x1xi64>, tensor<4xi32>, tensor<4xf32>) -> ()
  kt.index_put_ %r, %idx5, %v53 : (!kt.ref<2x3xf32>, tensor<5xi64>, tensor<5x3xf32>) -> ()
  return
}
