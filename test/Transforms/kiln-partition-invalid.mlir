// RUN: kiln-opt %s -split-input-file -verify-diagnostics -kiln-partition
// RUN: not kiln-opt %s -split-input-file '-kiln-partition=policy=bogus' -o /dev/null 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not kiln-opt %s -split-input-file '-kiln-partition=memory-budget=1.5' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not kiln-opt %s -split-input-file '-kiln-partition=memory-budget=-0.25' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not kiln-opt %s -split-input-file '-kiln-partition=policy=save-all memory-budget=0.5' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET-POLICY

// The policy and budget checks report at each joint function.
// POLICY: error: kiln-partition: unknown policy 'bogus' (expected mincut, save-all or recompute-all)
// BUDGET: error: kiln-partition: memory budget {{.*}} is outside [0, 1]
// BUDGET-POLICY: error: kiln-partition: memory-budget applies to policy=mincut only, not save-all

// Tests that kg.joint must be a dictionary (a function that is not a joint).
// expected-error @+1 {{kiln-partition: @f_joint is not a joint function (no `kg.joint` dictionary attribute; build it with kiln-autodiff)}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that kg.joint needs its three entries.
// expected-error @+1 {{kiln-partition: `kg.joint` needs integer `num_primals`, integer `num_outputs` and a symbol `source`}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that the counts must fit the signature.
// expected-error @+1 {{kiln-partition: `kg.joint` has num_primals = 3 but the function has 2 arguments}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 3 : i64, num_outputs = 1 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// expected-error @+1 {{kiln-partition: `kg.joint` has num_outputs = 5 but the function has 2 results}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 5 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a forward output computed from a cotangent is rejected (the
// attribute does not describe the function).
// expected-error @+1 {{kiln-partition: output #0 depends on a cotangent; not a joint function}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 1 : i64, source = @f}} {
  %0 = kt.mul %x, %ct : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that the new functions may not replace existing symbols.
func.func @f_fwd() {
  return
}
// expected-error @+1 {{kiln-partition: cannot create @f_fwd: the symbol already exists}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 1 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that an op with side effects (a call) is rejected: the partition
// clones ops into both functions or drops unread ones.
func.func private @g(tensor<3xf32>) -> tensor<3xf32>
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 1 : i64, source = @f}} {
  // expected-error @+1 {{kiln-partition: 'func.call' may have side effects; a joint function to partition must be side-effect free}}
  %0 = func.call @g(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that `kg.written` (read by pass-primals) is a unit attribute on a
// primal.
// expected-error @+1 {{kiln-partition: argument #0: `kg.written` must be a unit attribute, got true}}
func.func @f_joint(%x: tensor<3xf32> {kg.written = true}, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 1 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}

// -----

// expected-error @+1 {{kiln-partition: argument #1 is a cotangent: only a primal can be `kg.written`}}
func.func @f_joint(%x: tensor<3xf32>, %ct: tensor<3xf32> {kg.written}) -> (tensor<3xf32>, tensor<3xf32>) attributes {kg.joint = {num_primals = 1 : i64, num_outputs = 1 : i64, source = @f}} {
  return %x, %ct : tensor<3xf32>, tensor<3xf32>
}
