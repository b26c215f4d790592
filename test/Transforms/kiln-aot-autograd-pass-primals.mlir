// RUN: kiln-opt %s -kiln-aot-autograd="partition=mincut pass-primals" | FileCheck %s
// RUN: kiln-opt %s -kiln-aot-autograd="partition=recompute-all pass-primals" | FileCheck %s --check-prefix=RECOMPUTE
// RUN: kiln-opt %s -kiln-aot-autograd="partition=mincut pass-primals report" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-aot-eager{pass-primals})' | FileCheck %s --check-prefix=PIPE
// RUN: kiln-opt %s -kiln-aot-autograd=partition=mincut | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt %s -kiln-aot-autograd=pass-primals 2>&1 | FileCheck %s --check-prefix=NONE

// Tests kiln-aot-autograd's `pass-primals` (kiln-partition's option on the
// kg.grad path): a graph input the backward reads is not a forward result
// (a copy per call once bufferized); the forward lists it in
// kg.saved_primals and the backward's graph call takes the program's value
// itself as its first saved arguments, then the forward's saved results.
// Without the option the forward returns it.

// mincut: the backward reads x (the weight gradient x^T g) and the saved
// tanh; x is passed, tanh returned.
// CHECK-LABEL: func.func private @step_g0_fwd(
// CHECK-SAME: -> (tensor<f32>, tensor<4x16xf32>) attributes {kg.graph_function, kg.num_outputs = 1 : i64, kg.num_saved = 1 : i64, kg.saved_primals = array<i64: 1>}
// CHECK-LABEL: func.func private @step_g0_bwd(
// CHECK-SAME: %{{[^:]+}}: tensor<4x8xf32>, %{{[^:]+}}: tensor<4x16xf32>) -> tensor<8x16xf32> attributes {kg.graph_function, kg.num_saved = 2 : i64}
// CHECK-LABEL: kg.program @step(
// CHECK: %[[F:.*]]:2 = kg.graph @step_g0_fwd(%w, %x)
// CHECK: %[[B:.*]] = kg.graph @step_g0_bwd(%x, %[[F]]#1)
// CHECK: kg.return %[[F]]#0, %[[B]]

// recompute-all: the forward returns only the loss; both inputs passed.
// RECOMPUTE-LABEL: func.func private @step_g0_fwd(
// RECOMPUTE-SAME: -> tensor<f32> attributes {kg.graph_function, kg.num_outputs = 1 : i64, kg.num_saved = 0 : i64, kg.saved_primals = array<i64: 0, 1>}
// RECOMPUTE: %[[F:.*]] = kg.graph @step_g0_fwd(%w, %x)
// RECOMPUTE: kg.graph @step_g0_bwd(%w, %x) :

// REPORT: remark: kiln-aot-autograd: @step_g0: policy=mincut saved 2 values {{.*}}(1 primals passed by the caller, not returned)

// PIPE: kg.graph @step_g0_bwd(%x, %{{.*}}#1)

// OFF-LABEL: func.func private @step_g0_fwd(
// OFF-SAME: -> (tensor<f32>, tensor<4x8xf32>, tensor<4x16xf32>) attributes {kg.graph_function, kg.num_outputs = 1 : i64, kg.num_saved = 2 : i64} {
// OFF-NOT: kg.saved_primals
// OFF: return %{{.*}}, %arg1, %{{.*}} :
// OFF: kg.graph @step_g0_bwd(%{{.*}}#1, %{{.*}}#2)

// NONE: error: pass-primals needs a partition policy (save-all, recompute-all or mincut): partition=none calls the joint, which saves nothing
kg.program @step(%w: tensor<8x16xf32>, %x: tensor<4x8xf32>) -> (tensor<f32>, tensor<8x16xf32>) {
  %l = kg.graph @step_g0(%w, %x) : (tensor<8x16xf32>, tensor<4x8xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<8x16xf32>, %c: tensor<4x8xf32>):
    %0 = kt.matmul %c, %a : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = kt.tanh %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = kt.sum %1 : (tensor<4x16xf32>) -> tensor<f32>
    kg.yield %2 : tensor<f32>
  }
  %g = kg.grad %l wrt(%w) : (tensor<f32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  kg.return %l, %g : tensor<f32>, tensor<8x16xf32>
}
