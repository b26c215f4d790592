// RUN: kiln-opt %s -kiln-aot-autograd=partition=save-all | FileCheck %s --check-prefixes=CHECK,SAVE
// RUN: kiln-opt %s -kiln-aot-autograd=partition=recompute-all | FileCheck %s --check-prefixes=CHECK,RECOMPUTE
// RUN: kiln-opt %s -kiln-aot-autograd="partition=mincut report" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager)' | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager{partition=none})' | FileCheck %s --check-prefix=NONE

// Tests kiln-aot-autograd with a partition policy (the kiln-aot-eager rung):
// the seeded joint is split by kiln-partition into @g_fwd (outputs, then
// saved values), called where the loss's graph was, and @g_bwd (saved values
// -> gradients), called where the kg.grad was.

// CHECK-LABEL: func.func private @step_g0_fwd(
// CHECK-SAME:     -> (tensor<f32>, {{.*}}) attributes {kg.graph_function, kg.num_outputs = 1 : i64, kg.num_saved = [[S:[0-9]+]] : i64}
// SAVE:          kt.tanh
// SAVE:          kt.mul
// RECOMPUTE-NOT: kt.full
// CHECK:         return
// CHECK-LABEL: func.func private @step_g0_bwd(
// CHECK-SAME:     -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.graph_function, kg.num_saved = [[S]] : i64}
// The seed of the backward, 1, is a constant of the backward.
// RECOMPUTE:     kt.tanh
// RECOMPUTE:     kt.full {dtype = f32, size = [], value = 1.000000e+00 : f64}
// CHECK:         return
// CHECK-LABEL: kg.program @step
// CHECK:         %[[F:.*]]:{{[0-9]+}} = kg.graph @step_g0_fwd(%w, %v, %x)
// CHECK-NEXT:    kg.break "call_function print"
// CHECK:         %[[B:.*]]:2 = kg.graph @step_g0_bwd(%[[F]]#1
// CHECK:         kg.return %[[F]]#0, %[[B]]#0, %[[B]]#1

// REPORT: remark: kiln-aot-autograd: @step_g0: policy=mincut saved {{[0-9]+}} values

// kiln-aot-eager partitions with mincut by default.
// PIPE:   func.func private @step_g0_fwd(
// PIPE:   func.func private @step_g0_bwd(
// PIPE:   kg.graph @step_g0_fwd(
// PIPE:   kg.graph @step_g0_bwd(

// NONE-NOT: _fwd
// NONE:     kg.graph @step_g0_joint(
kg.program @step(%w: tensor<3xf32>, %v: tensor<3xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %l = kg.graph @step_g0(%w, %v, %x) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>):
    %0 = kt.tanh %a : (tensor<3xf32>) -> tensor<3xf32>
    %1 = kt.mul %0, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %2 = kt.mul %1, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %3 = kt.sum %2 {dim = [0]} : (tensor<3xf32>) -> tensor<f32>
    kg.yield %3 : tensor<f32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%l) : (tensor<f32>) -> ()
  }
  %g:2 = kg.grad %l wrt(%w, %v) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  kg.return %l, %g#0, %g#1 : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
