kg.program @main(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>) {
  kg.graph @main_g0(%x) : (!kt.ref<3xf32>) -> () {
  ^bb0(%r: !kt.ref<3xf32>):
    %v = kt.load %r : (!kt.ref<3xf32>) -> tensor<3xf32>
    kt.copy_ %r, %v : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kg.yield
  }
  kg.graph @main_g1(%y) : (!kt.ref<3xf32>) -> () {
  ^bb0(%r: !kt.ref<3xf32>):
    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
    kt.add_ %r, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kg.yield
  }
  kg.return
}
