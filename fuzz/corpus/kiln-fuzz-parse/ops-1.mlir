kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_backend {backend = "eager"}
  %x = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
  ^bb0(%a0: tensor<10xf32>):
    %c1 = kt.constant {value = dense<1.0> : tensor<10xf32>} : () -> tensor<10xf32>
    %0 = kt.add %a0, %c1 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
    kg.yield %0 : tensor<10xf32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<10xf32>) -> ()
  } loc("t2.py":16:4)
  %s = kg.graph @toy_example_g1(%b) : (tensor<10xf32>) -> tensor<i1> {
  ^bb0(%b0: tensor<10xf32>):
    %z = kt.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %0 = kt.add %z, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %t = kt.constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    kg.yield %t : tensor<i1>
  }
  %c = kg.to_host %s : tensor<i1> -> i1
  %r = scf.if %c -> (tensor<10xf32>) {
    %y = kg.graph @toy_example_g2(%x, %b) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> {
    ^bb0(%x0: tensor<10xf32>, %b0: tensor<10xf32>):
      %0 = kt.add %x0, %b0 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
      kg.yield %0 : tensor<10xf32>
    }
    scf.yield %y : tensor<10xf32>
  } else {
    scf.yield %x : tensor<10xf32>
  }
  kg.return %r : tensor<10xf32>
}
