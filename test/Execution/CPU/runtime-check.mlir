// kt.check: `self` when every element of `cond` holds, else the op's
// message at its location, in the interpreter and in compiled code (the
// importer's checks of embedding_bag's offsets are this op).
// RUN: not kiln-run %s --entry=fails --backend=cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not kiln-run %s --entry=fails 2>&1 | FileCheck %s --check-prefix=INTERP
// RUN: kiln-run %s --entry=holds --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --entry=holds --print 2>&1 | FileCheck %s --check-prefix=OK
// RUN: not kiln-run %s --entry=dynamic_bad --backend=cpu 2>&1 | FileCheck %s --check-prefix=DYN
// RUN: not kiln-run %s --entry=dynamic_bad 2>&1 | FileCheck %s --check-prefix=DYN-INTERP
// RUN: kiln-run %s --entry=dynamic_ok --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=DYN-OK
// RUN: kiln-run %s --entry=dynamic_ok --print 2>&1 | FileCheck %s --check-prefix=DYN-OK

// CPU: kiln-run: error: running @fails on the CPU backend failed: {{.*}}runtime-check.mlir:[[# @LINE + 5]]:8: offsets have to be non-decreasing
// INTERP: runtime-check.mlir:[[# @LINE + 4]]:8: error: offsets have to be non-decreasing
func.func @fails() -> tensor<3xi64> {
  %o = kt.constant {value = dense<[0, 3, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %c = kt.constant {value = dense<[true, true, false]> : tensor<3xi1>} : () -> tensor<3xi1>
  %r = kt.check %o, %c {message = "offsets have to be non-decreasing"} : (tensor<3xi64>, tensor<3xi1>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// OK: [0, 2, 3]
func.func @holds() -> tensor<3xi64> {
  %o = kt.constant {value = dense<[0, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %c = kt.constant {value = dense<true> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
  %r = kt.check %o, %c {message = "never"} : (tensor<3xi64>, tensor<2x2xi1>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// The condition computed on `?` dims: offsets[1:] >= offsets[:-1].
// DYN: running @dynamic_bad on the CPU backend failed: {{.*}}runtime-check.mlir:[[# @LINE + 6]]:8: offsets decrease
// DYN-INTERP: runtime-check.mlir:[[# @LINE + 5]]:8: error: offsets decrease
func.func @nondecreasing(%o: tensor<?xi64>) -> tensor<?xi64> {
  %hi = kt.slice %o {dim = 0, start = 1} : (tensor<?xi64>) -> tensor<?xi64>
  %lo = kt.slice %o {dim = 0, end = -1} : (tensor<?xi64>) -> tensor<?xi64>
  %c = kt.ge %hi, %lo : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
  %r = kt.check %o, %c {message = "offsets decrease"} : (tensor<?xi64>, tensor<?xi1>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

func.func @dynamic_bad() -> tensor<?xi64> {
  %o = kt.constant {value = dense<[0, 2, 1, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %d = tensor.cast %o : tensor<4xi64> to tensor<?xi64>
  %r = func.call @nondecreasing(%d) : (tensor<?xi64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// DYN-OK: [0, 2, 2, 5]
func.func @dynamic_ok() -> tensor<?xi64> {
  %o = kt.constant {value = dense<[0, 2, 2, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %d = tensor.cast %o : tensor<4xi64> to tensor<?xi64>
  %r = func.call @nondecreasing(%d) : (tensor<?xi64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}
