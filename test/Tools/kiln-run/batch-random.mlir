// `kiln-run --batch` with `random:SEED` in place of the input paths: the
// inputs --random-inputs --seed=SEED makes (the same values, byte for byte),
// on the interpreter and on the CPU backend; a bad seed or a `?` dim is the
// run's error.txt. (test/lib/pass_semantics.py batches its runs this way.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-run %s --entry=f --random-inputs --seed=7 --output-dir=%t/one7
// RUN: kiln-run %s --entry=f --random-inputs --seed=8 --output-dir=%t/one8
// RUN: kiln-run %s --entry=ints --random-inputs --seed=7 --output-dir=%t/ints7
// RUN: printf 'f\t%t/b7\trandom:7\nf\t%t/b8\trandom:8\nints\t%t/bi7\trandom:7\nf\t%t/bad\trandom:x\ndyn\t%t/dyn\trandom:1\n' > %t/spec
// RUN: kiln-run %s --batch=%t/spec
// RUN: cmp %t/one7/result0.npy %t/b7/result0.npy
// RUN: cmp %t/one8/result0.npy %t/b8/result0.npy
// RUN: cmp %t/ints7/result0.npy %t/bi7/result0.npy
// RUN: not cmp -s %t/b7/result0.npy %t/b8/result0.npy
// RUN: FileCheck %s --check-prefix=BAD < %t/bad/error.txt
// RUN: FileCheck %s --check-prefix=DYN < %t/dyn/error.txt
// RUN: rm -rf %t/b7 %t/b8 && kiln-run %s --batch=%t/spec --backend=cpu
// RUN: cmp %t/one7/result0.npy %t/b7/result0.npy
// RUN: cmp %t/one8/result0.npy %t/b8/result0.npy
// The compile options of a single run apply to a batch (they were ignored):
// RUN: not kiln-run %s --batch=%t/spec --backend=cpu --matmul=bogus 2>&1 | FileCheck %s --check-prefix=MATMUL
// RUN: rm -rf %t/b7 && kiln-run %s --batch=%t/spec --backend=cpu --matmul=generated --cpu-fuse=false --cpu-optimize=false
// RUN: cmp %t/one7/result0.npy %t/b7/result0.npy
// MATMUL: kiln-run: error: --matmul must be auto, openblas or generated, not 'bogus'
// BAD: input 'random:x': expected random:SEED (an integer)
// DYN: argument #0 of @dyn has a dynamic dim; pass --input files instead

func.func @f(%x: tensor<3x4xf32>, %y: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = kt.mul %x, %y : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func @ints(%x: tensor<5xi64>, %b: tensor<5xi1>) -> tensor<5xi64> {
  %0 = kt.where %b, %x, %x : (tensor<5xi1>, tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}
func.func @dyn(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = kt.neg %x : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
