// kiln-compile's failures: a clear message (with the op's location where
// there is one), a non-zero exit, and no file written or replaced.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: not kiln-compile %s -o %t/none.so 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: kiln-compile: error: name the entries to package (--entry): the module has 3 kg.program(s) and 1 public function(s)
// RUN: not kiln-compile %s --entry=nope -o %t/none.so 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: kiln-compile: error: no function with a body or kg.program named 'nope'
// RUN: not kiln-compile %s --entry=with_break -o %t/none.so 2>&1 | FileCheck %s --check-prefix=BREAK
// BREAK: kiln-compile: error: {{.*}}errors.mlir:[[# @LINE + 31]]:3: kg.program @with_break cannot be packaged: 'kg.break' is host code
// RUN: not kiln-compile %s --entry=with_value_guard -o %t/none.so 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: kiln-compile: error: {{.*}}errors.mlir:[[# @LINE + 37]]:3: kg.program @with_value_guard cannot be packaged: 'kg.guard_identity' guards host values or tensor identity
// RUN: not kiln-compile %s --entry=on_cuda -o %t/none.so 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: kiln-compile: error: {{.*}}errors.mlir:[[# @LINE + 45]]:3: kg.program @on_cuda cannot be packaged: the guard wants device 'cuda'
// RUN: not kiln-compile %s --entry=f -o %t/no/such/dir/f.so 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: kiln-compile: error: {{.*}}no/such/dir/f.so{{.*}}
// RUN: not kiln-compile %s --entry=f --linker=%t/no-such-linker -o %t/none.so 2>&1 | FileCheck %s --check-prefix=NOLINKER
// NOLINKER: kiln-compile: error: linker '{{.*}}no-such-linker' not found
// RUN: not kiln-compile %s --entry=f --linker=false -o %t/none.so 2>&1 | FileCheck %s --check-prefix=LINKFAIL
// LINKFAIL: kiln-compile: error: linking the package with '{{.*}}false' failed
// RUN: not kiln-compile %s --entry=f --matmul=fast -o %t/none.so 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: kiln-compile: error: --matmul must be auto, openblas or generated, not 'fast'
// RUN: not kiln-compile %t/missing.mlir -o %t/none.so 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: kiln-compile: error: cannot read '{{.*}}missing.mlir'
// RUN: not test -e %t/none.so
// A failed run leaves an existing output as it was.
// RUN: echo previous > %t/keep.so
// RUN: not kiln-compile %s --entry=f --linker=false -o %t/keep.so
// RUN: FileCheck %s --check-prefix=KEPT --input-file=%t/keep.so
// KEPT: previous
// RUN: ls %t | FileCheck %s --check-prefix=NOTEMP
// NOTEMP-NOT: tmp

kg.program @with_break(%a: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [4]} : tensor<4xf32>
  %x = kg.graph @with_break_g0(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a0: tensor<4xf32>):
    %y = kt.neg %a0 : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %y : tensor<4xf32>
  }
  kg.break "call_function print" {
    kg.host_call @print(%x) : (tensor<4xf32>) -> ()
  }
  kg.return %x : tensor<4xf32>
}

kg.program @with_value_guard(%a: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [4]} : tensor<4xf32>
  kg.guard_identity %a : tensor<4xf32>
  %x = kg.graph @with_value_guard_g0(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a0: tensor<4xf32>):
    %y = kt.neg %a0 : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %y : tensor<4xf32>
  }
  kg.return %x : tensor<4xf32>
}

kg.program @on_cuda(%a: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %a {dtype = f32, shape = [4], device = "cuda"} : tensor<4xf32>
  %x = kg.graph @on_cuda_g0(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a0: tensor<4xf32>):
    %y = kt.neg %a0 : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %y : tensor<4xf32>
  }
  kg.return %x : tensor<4xf32>
}

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
