// Tests of test/lib/pass_semantics.py, the helper that checks that a pass
// keeps the meaning of functions (same interpreter results before and after,
// on the same random inputs).
//
// A pipeline that keeps the semantics passes, for static and `?` dims, float
// and integer results.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(canonicalize,cse)' --entry=f --entry=ints --seeds=2 | FileCheck %s --check-prefix=OK
// OK: ok f seed=0 (result0, result1)
// OK: ok f seed=1 (result0, result1)
// OK: ok ints seed=0 (result0)
// OK: ok ints seed=1 (result0)
// OK: 4 passed, 0 failed
//
// Dynamic dims: the inputs are made by the helper (sizes from --input-dims).
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(cse)' --entry=dyn --input-dims=5,2 | FileCheck %s --check-prefix=DYN
// DYN-COUNT-3: ok dyn seed=
// DYN: 3 passed, 0 failed
//
// Without --entry every public function is checked.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(cse)' --seeds=1 --input-dims=4 | FileCheck %s --check-prefix=ALL
// ALL: ok f seed=0
// ALL: ok ints seed=0
// ALL: ok dyn seed=0
// ALL: ok mutate seed=0
// ALL: 4 passed, 0 failed
//
// The helper CAN fail: a module whose @f computes tanh instead of exp, and
// whose @ints adds 1 (an integer off by one, compared bitwise).
// RUN: sed -e 's/kt.exp/kt.tanh/' -e 's/kt.add %i, %i/kt.add %i, %one/' %s > %t.other.mlir
// RUN: not %python -m pass_semantics %s --after-file=%t.other.mlir --entry=f --entry=ints --seeds=2 | FileCheck %s --check-prefix=BAD
// BAD: FAIL f seed=0: result0: {{[0-9]+}}/12 elements differ, first at ({{.*}}): before {{.*}} after {{.*}} (max abs err {{.*}}, rtol 1e-05, atol 1e-05); result1:
// BAD: FAIL f seed=1
// BAD: FAIL ints seed=0: result0: {{[0-9]}}/6 elements differ, first at ({{.*}}): before {{[0-9]+}} after {{[0-9]+}}
// BAD: FAIL ints seed=1
// BAD: 0 passed, 4 failed
//
// A renamed entry: --after-entry picks the function to run after the pass.
// RUN: sed -e 's/@f(/@f_renamed(/' %s > %t.renamed.mlir
// RUN: %python -m pass_semantics %s --after-file=%t.renamed.mlir --entry=f --after-entry=f_renamed --seeds=1 | FileCheck %s --check-prefix=RENAMED
// RENAMED: ok f seed=0
// RENAMED: 1 passed, 0 failed
// RUN: not %python -m pass_semantics %s --after-file=%t.renamed.mlir --entry=f --seeds=1 | FileCheck %s --check-prefix=MISSING
// MISSING: FAIL f seed=0: kiln-run --batch: @f: no function named 'f'
// MISSING: 0 passed, 1 failed
//
// A tool error (an unknown pass) fails and prints the tool's stderr.
// RUN: not %python -m pass_semantics %s --pipeline='builtin.module(no-such-pass)' --entry=f | FileCheck %s --check-prefix=TOOL
// TOOL: ERROR kiln-opt exited 1:
// TOOL: no-such-pass
// TOOL: 0 passed, 1 failed
//
// A result that changes its dtype is a failure, not a silent conversion.
// RUN: sed -e 's/2x3xi64/2x3xi32/g' %s > %t.dtype.mlir
// RUN: not %python -m pass_semantics %s --after-file=%t.dtype.mlir --entry=ints --seeds=1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: FAIL ints seed=0: result0: dtype int32 != int64
//
// Ref arguments: their final contents (arg<i>.npy) are compared too, also
// with `?` dims (helper-made inputs).
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(cse)' --entry=mutate --seeds=2 --input-dims=3 | FileCheck %s --check-prefix=REF
// REF: ok mutate seed=0 (arg0, result0)
// REF: 2 passed, 0 failed
// RUN: sed -e 's/kt.add_ %r, %y/kt.add_ %r, %r2/' %s > %t.ref.mlir
// RUN: not %python -m pass_semantics %s --after-file=%t.ref.mlir --entry=mutate --seeds=1 --input-dims=3 | FileCheck %s --check-prefix=REFBAD
// REFBAD: FAIL mutate seed=0: arg0: 3/3 elements differ
//
// --backend-after=cpu runs the transformed module with the CPU backend.
// RUN: %python -m pass_semantics %s --pipeline='builtin.module(cse)' --entry=f --entry=dyn --input-dims=2 --backend-after=cpu --seeds=1 | FileCheck %s --check-prefix=CPU
// CPU: 2 passed, 0 failed

func.func @f(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %e = kt.exp %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %a = kt.add %e, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %b = kt.add %e, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %a, %b : tensor<3x4xf32>, tensor<3x4xf32>
}

func.func @ints(%i: tensor<2x3xi64>, %one: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %s = kt.add %i, %i : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  return %s : tensor<2x3xi64>
}

func.func @dyn(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %e = kt.exp %x : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %a = kt.add %e, %x : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %a : tensor<?x?xf64>
}

func.func @mutate(%r: !kt.ref<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r2 = kt.load %r : (!kt.ref<?xf32>) -> tensor<?xf32>
  kt.add_ %r, %y : (!kt.ref<?xf32>, tensor<?xf32>) -> ()
  %e = kt.exp %y : (tensor<?xf32>) -> tensor<?xf32>
  return %e : tensor<?xf32>
}
