kg.program @same_ref_twice(%a: !kt.ref<3xf32>) -> tensor<3xf32> {
  %r = kg.graph @same_ref_twice_g(%a, %a) : (!kt.ref<3xf32>, !kt.ref<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: !kt.ref<3xf32>, %y: !kt.ref<3xf32>):
    %one = kt.full {size = [3], value = 1.0, dtype = f32} : () -> tensor<3xf32>
    %two = kt.full {size = [3], value = 2.0, dtype = f32} : () -> tensor<3xf32>
    kt.add_ %x, %one : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    kt.mul_ %y, %two : (!kt.ref<3xf32>, tensor<3xf32>) -> ()
    %v = kt.load %x : (!kt.ref<3xf32>) -> tensor<3xf32>
    kg.yield %v : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}
