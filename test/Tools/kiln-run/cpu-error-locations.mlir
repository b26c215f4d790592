// RUN: not kiln-run %s --entry=named --backend=cpu --random-inputs 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not kiln-run %s --entry=named_file --backend=cpu --random-inputs 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not kiln-run %s --entry=plain --backend=cpu --random-inputs 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: not kiln-run %s --entry=kt_named --backend=cpu --random-inputs 2>&1 | FileCheck %s --check-prefix=KT

// Tests that a kiln-cpu failure names the failing op's own location: the
// name of a NameLoc from an importer (it used to print "loc(unknown)"), the
// file location inside a NameLoc, or the op's file:line:col.

// NAMED: model.layer0.neg: 'arith.negf' op on tensors is not supported by kiln-cpu
// NAMED-NEXT: kiln-run: error: kiln-cpu failed on @named
func.func @named(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kt.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = arith.negf %0 : tensor<4xf32> loc("model.layer0.neg")
  return %1 : tensor<4xf32>
}

// FILE: model.py:12:3: 'arith.negf' op on tensors is not supported by kiln-cpu
func.func @named_file(%x: tensor<4xf32>) -> tensor<4xf32> {
  %1 = arith.negf %x : tensor<4xf32> loc("model.layer1.neg"("model.py":12:3))
  return %1 : tensor<4xf32>
}

// PLAIN: cpu-error-locations.mlir:[[@LINE+2]]:8: 'arith.negf' op on tensors is not supported by kiln-cpu
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %1 = arith.negf %x : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// A ref op the CPU backend's functionalization refuses (a ref inside a
// nested region) is named the same way.
// KT: model.zero_: cannot functionalize a !kt.ref used inside a nested region
func.func @kt_named(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = kt.alloc_ref %x : (tensor<4xf32>) -> !kt.ref<4xf32>
  scf.if %c {
    kt.zero_ %r : (!kt.ref<4xf32>) -> () loc("model.zero_")
  }
  %v = kt.load %r : (!kt.ref<4xf32>) -> tensor<4xf32>
  return %v : tensor<4xf32>
}
