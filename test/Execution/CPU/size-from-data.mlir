// A size read from data (`torch.zeros(t.item())`, docs/python.md "Python
// numbers"): the importer gives kt.full the 0-d value as an index
// (tensor.extract + arith.index_cast); kt.full checks it when the program
// runs, so a negative value is an error on both backends at the op's
// location. Later uses of the size read the new tensor's dim (after the
// check), even when that tensor is otherwise unused.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; [np.save('%t/v%%s.npy' %% n, np.array(v, np.int64)) for n, v in (('3', 3), ('0', 0), ('m3', -3))]; np.save('%t/f5.npy', np.arange(5, dtype=np.float32))"

// RUN: kiln-run %s --entry=zeros_of --input=%t/v3.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --entry=zeros_of --input=%t/v3.npy --print 2>&1 | FileCheck %s --check-prefix=OK
// RUN: kiln-run %s --entry=zeros_of --input=%t/v0.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=OK0
// RUN: not kiln-run %s --entry=zeros_of --input=%t/vm3.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not kiln-run %s --entry=zeros_of --input=%t/vm3.npy 2>&1 | FileCheck %s --check-prefix=NEG
// OK: result0: tensor<?x2xf32>
// OK-NEXT: {{\[}}[1.5, 1.5],
// OK-NEXT:  [1.5, 1.5],
// OK-NEXT:  [1.5, 1.5]]
// OK0: result0: tensor<?x2xf32>
// OK0-NEXT: []
// NEG: size-from-data.mlir:[[# @LINE + 8]]:8: {{(error: )?}}dynamic size -3 (dim 0) must be non-negative
// Not on the GPU (docs/gpu.md: tensor.extract): refused at the extract, no
// crash.
// RUN: not kiln-compile %s -o %t/g.so --backend=nvptx --emit=isa --chip=sm_80 --entry=zeros_of 2>&1 | FileCheck %s --check-prefix=GPU
// GPU: size-from-data.mlir:[[# @LINE + 2]]:8: kiln-nvptx: the host uses a value this op computes from device memory; not supported
func.func @zeros_of(%t: tensor<i64>) -> tensor<?x2xf32> {
  %e = tensor.extract %t[] : tensor<i64>
  %n = arith.index_cast %e : i64 to index
  %r = kt.full %n {size = [-1, 2], value = 1.5, dtype = f32} : (index) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// x[:torch.zeros(n).shape[0]]: the slice bound is dim 0 of the kt.full (so
// the full stays, and its check runs first).
// RUN: kiln-run %s --entry=slice_by_shape --input=%t/f5.npy --input=%t/v3.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=SL
// RUN: not kiln-run %s --entry=slice_by_shape --input=%t/f5.npy --input=%t/vm3.npy --backend=cpu 2>&1 | FileCheck %s --check-prefix=SL-NEG
// RUN: not kiln-run %s --entry=slice_by_shape --input=%t/f5.npy --input=%t/vm3.npy 2>&1 | FileCheck %s --check-prefix=SL-NEG
// SL: result0: tensor<?xf32>
// SL-NEXT: [0, 1, 2]
// SL-NEG: size-from-data.mlir:[[# @LINE + 5]]:8: {{(error: )?}}dynamic size -3 (dim 0) must be non-negative
func.func @slice_by_shape(%x: tensor<5xf32>, %t: tensor<i64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %t[] : tensor<i64>
  %n = arith.index_cast %e : i64 to index
  %z = kt.full %n {size = [-1], value = 0.0, dtype = f32} : (index) -> tensor<?xf32>
  %d = tensor.dim %z, %c0 : tensor<?xf32>
  %r = kt.slice %x, %d {dim = 0, start = 0, dynamic_end} : (tensor<5xf32>, index) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// x[:n] (and x[n:]) with n read from data: kt.slice applies Python's rules
// to the dynamic bound when it runs (-3 counts from the end).
// RUN: kiln-run %s --entry=slice_by_value --input=%t/f5.npy --input=%t/vm3.npy --backend=cpu --print 2>&1 | FileCheck %s --check-prefix=SV
// RUN: kiln-run %s --entry=slice_by_value --input=%t/f5.npy --input=%t/vm3.npy --print 2>&1 | FileCheck %s --check-prefix=SV
// SV: result0: tensor<?xf32>
// SV-NEXT: [0, 1]
// SV: result1: tensor<?xf32>
// SV-NEXT: [2, 3, 4]
func.func @slice_by_value(%x: tensor<5xf32>, %t: tensor<i64>) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = tensor.extract %t[] : tensor<i64>
  %n = arith.index_cast %e : i64 to index
  %a = kt.slice %x, %n {dim = 0, start = 0, dynamic_end} : (tensor<5xf32>, index) -> tensor<?xf32>
  %b = kt.slice %x, %n {dim = 0, dynamic_start} : (tensor<5xf32>, index) -> tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}
