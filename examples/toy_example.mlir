// The torch.compile FAQ's toy_example, as TorchDynamo captures it:
//
//   def toy_example(a, b):
//       x = a / (torch.abs(a) + 1)
//       print(x)                      # graph break: call_function print
//       if b.sum() < 0:               # graph break: generic_jump
//           b = b * -1
//       return x * b
//
// Run it (both branches, then a recompile for a new shape):
//   /usr/bin/python3 examples/toy_inputs.py toy-inputs   (see that file for the kiln-run line)
kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  %x, %neg = kg.graph @toy_example_g0(%a, %b) : (tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<i1>) {
  ^bb0(%a0: tensor<10xf32>, %b0: tensor<10xf32>):
    %abs = kt.abs %a0 : (tensor<10xf32>) -> tensor<10xf32> loc("toy.py":2:13)
    %one = kt.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32> loc("toy.py":2:28)
    %den = kt.add %abs, %one : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32> loc("toy.py":2:13)
    %x0 = kt.div %a0, %den : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> loc("toy.py":2:8)
    %s = kt.sum %b0 : (tensor<10xf32>) -> tensor<f32> loc("toy.py":4:7)
    %zero = kt.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32> loc("toy.py":4:18)
    %lt = kt.lt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("toy.py":4:7)
    kg.yield %x0, %lt : tensor<10xf32>, tensor<i1>
  } loc("toy.py":1:0)
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<10xf32>) -> () loc("toy.py":3:4)
  } loc("toy.py":3:4)
  %c = kg.to_host %neg : tensor<i1> -> i1 loc("toy.py":4:4)
  %r = scf.if %c -> (tensor<10xf32>) {
    %y = kg.graph @toy_example_g1(%x, %b) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> {
    ^bb0(%x0: tensor<10xf32>, %b0: tensor<10xf32>):
      %m1 = kt.constant {value = dense<-1.0> : tensor<f32>} : () -> tensor<f32> loc("toy.py":5:16)
      %nb = kt.mul %b0, %m1 : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32> loc("toy.py":5:12)
      %p = kt.mul %x0, %nb : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> loc("toy.py":6:11)
      kg.yield %p : tensor<10xf32>
    } loc("toy.py":5:8)
    scf.yield %y : tensor<10xf32>
  } else {
    %y = kg.graph @toy_example_g2(%x, %b) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> {
    ^bb0(%x0: tensor<10xf32>, %b0: tensor<10xf32>):
      %p = kt.mul %x0, %b0 : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32> loc("toy.py":6:11)
      kg.yield %p : tensor<10xf32>
    } loc("toy.py":6:4)
    scf.yield %y : tensor<10xf32>
  } loc("toy.py":4:4)
  kg.return %r : tensor<10xf32>
}
