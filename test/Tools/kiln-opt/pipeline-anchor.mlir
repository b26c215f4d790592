// Kiln's named pipelines (their passes run on a builtin.module) nested under
// another op are an error naming the pipeline, not LLVM's fatal error "Can't
// add pass ... restricted to 'builtin.module' on a PassManager intended to
// run on 'func.func'" (which ended kiln-opt, and a process using the C API,
// before). At the top level, or op-agnostic, they still run.
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-eager))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EAGER
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-aot-eager))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=AOT
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-cpu{fuse=false}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-nvptx))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVPTX
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-eager)' | FileCheck %s --check-prefix=OK
// RUN: kiln-opt %s --pass-pipeline='any(kiln-eager)' | FileCheck %s --check-prefix=OK

// EAGER: error: kiln-eager runs on a builtin.module and cannot be nested under 'func.func': put it at the top level of the pipeline
// EAGER-NOT: fatal error
// AOT: error: kiln-aot-eager runs on a builtin.module and cannot be nested under 'func.func'
// AOT-NOT: fatal error
// CPU: error: kiln-cpu runs on a builtin.module and cannot be nested under 'func.func'
// CPU-NOT: fatal error
// NVPTX: error: kiln-nvptx runs on a builtin.module and cannot be nested under 'func.func'
// NVPTX-NOT: fatal error
// OK: kt.sin
func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kt.sin %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
