// Tests that the kiln-eager pipeline keeps the meaning of a program: the IR
// before and after (split at a disallowed op, an allow_in_graph call traced
// through, graphs outlined, kg.is_compiling folded) gives the same results in
// the reference interpreter, on the same random inputs, for seeds that take
// both branches of the data-dependent jump.
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-eager{disallow=kt.abs,kt.sum})' -mlir-print-debuginfo -o %t.mlir
// RUN: kiln-opt %t.mlir -kiln-explain -o /dev/null | FileCheck %s
// RUN: kiln-run %s --entry=toy_example --random-inputs --seed=1 --print > %t.before1
// RUN: kiln-run %t.mlir --entry=toy_example --random-inputs --seed=1 --print > %t.after1
// RUN: %python -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" %t.before1 %t.after1
// RUN: kiln-run %s --entry=toy_example --random-inputs --seed=2 --print > %t.before2
// RUN: kiln-run %t.mlir --entry=toy_example --random-inputs --seed=2 --print > %t.after2
// RUN: %python -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" %t.before2 %t.after2
// RUN: kiln-run %s --entry=toy_example --random-inputs --seed=3 --print > %t.before3
// RUN: kiln-run %t.mlir --entry=toy_example --random-inputs --seed=3 --print > %t.after3
// RUN: %python -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" %t.before3 %t.after3

// The kt.abs inside the allow_in_graph function is not split out: the
// function is a black box at capture level and is traced through after the
// split, so kt.abs ends up in the first graph.
// CHECK-LABEL: Program: @toy_example
// CHECK-NEXT: Graph Count: 4
// CHECK-NEXT: Graph Break Count: 3
// CHECK: Reason: disallowed op kt.sum
// CHECK-NEXT: User Stack:
// CHECK-NEXT: toy.py:4:7
// CHECK: Reason: call_function print
// CHECK: Reason: generic_jump
// CHECK: Graph 1: @toy_example_g0
// CHECK-NEXT: kt.constant
// CHECK-NEXT: kt.abs
// CHECK-NEXT: kt.add
// CHECK-NEXT: kt.div
// CHECK-NEXT: Graph 2: @toy_example_g0_1
func.func private @abs_plus_one(%a: tensor<10xf32>) -> tensor<10xf32> attributes {kg.allow_in_graph} {
  %abs = kt.abs %a : (tensor<10xf32>) -> tensor<10xf32> loc("helper.py":1:8)
  %one = kt.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32> loc("helper.py":1:20)
  %den = kt.add %abs, %one : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32> loc("helper.py":1:8)
  return %den : tensor<10xf32>
}
kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
  kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
  %x, %neg = kg.graph @toy_example_g0(%a, %b) : (tensor<10xf32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<i1>) {
  ^bb0(%a0: tensor<10xf32>, %b0: tensor<10xf32>):
    %den = func.call @abs_plus_one(%a0) : (tensor<10xf32>) -> tensor<10xf32> loc("toy.py":2:13)
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
