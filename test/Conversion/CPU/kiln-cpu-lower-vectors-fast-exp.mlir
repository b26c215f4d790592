// RUN: kiln-opt %s -split-input-file -kiln-cpu-lower-vectors="fast-exp=avx512" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-lower-vectors="fast-exp=false" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file -kiln-cpu-lower-vectors="fast-exp=avx512 approximate-math=false" | FileCheck %s --check-prefix=LIBM

// The AVX-512 f32 exp of kiln-cpu-lower-vectors (FastExp.cpp,
// docs/codegen.md "A cheaper f32 exp on AVX-512"): NaN-keeping clamp to
// [-104, 89], n = rint(x log2 e) with the 1.5 * 2^23 constant, two
// Cody-Waite steps, a degree-6 polynomial in 6 fma, vscalefps. fast-exp=false
// keeps MLIR's polynomial approximation (its 2^n from integer exponent bits:
// arith.shli, bitcast); approximate-math=false leaves math.exp (libm).

// Tests the whole sequence on one register.
// CHECK-LABEL: func.func @exp_one_register
// CHECK-SAME: (%[[X:.*]]: vector<16xf32>)
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<8.900000e+01> : vector<16xf32>
// CHECK-DAG: %[[LO:.*]] = arith.constant dense<-1.040000e+02> : vector<16xf32>
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<0x4B400000> : vector<16xf32>
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<16xf32>
// CHECK-DAG: %[[LN2HI:.*]] = arith.constant dense<-0.693145751> : vector<16xf32>
// CHECK-DAG: %[[LN2LO:.*]] = arith.constant dense<-1.42860677E-6> : vector<16xf32>
// CHECK-DAG: %[[C6:.*]] = arith.constant dense<0.00138436537> : vector<16xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[MASK:.*]] = arith.constant -1 : i16
// CHECK-DAG: %[[ROUND:.*]] = arith.constant 4 : i32
// CHECK: %[[A:.*]] = arith.minimumf %[[X]], %[[HI]] : vector<16xf32>
// CHECK: %[[C:.*]] = arith.maximumf %[[A]], %[[LO]] : vector<16xf32>
// CHECK: %[[T:.*]] = llvm.intr.fma(%[[C]], %[[LOG2E]], %[[SHIFT]])
// CHECK: %[[N:.*]] = arith.subf %[[T]], %[[SHIFT]] : vector<16xf32>
// CHECK: %[[R1:.*]] = llvm.intr.fma(%[[N]], %[[LN2HI]], %[[C]])
// CHECK: %[[R:.*]] = llvm.intr.fma(%[[N]], %[[LN2LO]], %[[R1]])
// CHECK: %[[P1:.*]] = llvm.intr.fma(%[[C6]], %[[R]], %{{.*}})
// CHECK-COUNT-4: llvm.intr.fma(%{{.*}}, %[[R]], %{{.*}})
// CHECK: %[[P:.*]] = llvm.intr.fma(%{{.*}}, %[[R]], %[[ONE]])
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P]], %[[N]], %{{.*}}, %[[MASK]], %[[ROUND]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// CHECK: return %[[E]]
// CHECK-NOT: math.exp
// OFF-LABEL: func.func @exp_one_register
// OFF-NOT: scalef
// OFF: arith.shli
// OFF: arith.bitcast
// OFF-NOT: math.exp
// LIBM-LABEL: func.func @exp_one_register
// LIBM-NOT: scalef
// LIBM: math.exp
func.func @exp_one_register(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// Tests that a vector of two registers is scaled in two 16-lane pieces.
// CHECK-LABEL: func.func @exp_two_registers
// CHECK: arith.minimumf %{{.*}} : vector<32xf32>
// CHECK: %[[P0:.*]] = vector.extract_strided_slice %[[P:.*]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
// CHECK: %[[N0:.*]] = vector.extract_strided_slice %[[N:.*]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xf32> to vector<16xf32>
// CHECK: %[[E0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P0]], %[[N0]],
// CHECK: %[[R0:.*]] = vector.insert_strided_slice %[[E0]], %{{.*}} {offsets = [0], strides = [1]} : vector<16xf32> into vector<32xf32>
// CHECK: vector.extract_strided_slice %[[P]] {offsets = [16], sizes = [16], strides = [1]}
// CHECK: vector.extract_strided_slice %[[N]] {offsets = [16], sizes = [16], strides = [1]}
// CHECK: %[[E1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK: %[[R1:.*]] = vector.insert_strided_slice %[[E1]], %[[R0]] {offsets = [16], strides = [1]} : vector<16xf32> into vector<32xf32>
// CHECK: return %[[R1]]
// OFF-LABEL: func.func @exp_two_registers
// OFF-NOT: scalef
// OFF: return
func.func @exp_two_registers(%x: vector<32xf32>) -> vector<32xf32> {
  %r = math.exp %x : vector<32xf32>
  return %r : vector<32xf32>
}

// -----

// Tests that a short last piece is padded with zeros into one register and
// cut back.
// CHECK-LABEL: func.func @exp_padded
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK: %[[PT:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [16], sizes = [4], strides = [1]} : vector<20xf32> to vector<4xf32>
// CHECK: %[[NT:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [16], sizes = [4], strides = [1]} : vector<20xf32> to vector<4xf32>
// CHECK: %[[PP:.*]] = vector.insert_strided_slice %[[PT]], %[[Z]] {offsets = [0], strides = [1]} : vector<4xf32> into vector<16xf32>
// CHECK: %[[NP:.*]] = vector.insert_strided_slice %[[NT]], %[[Z]] {offsets = [0], strides = [1]} : vector<4xf32> into vector<16xf32>
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[PP]], %[[NP]],
// CHECK: %[[ET:.*]] = vector.extract_strided_slice %[[E]] {offsets = [0], sizes = [4], strides = [1]} : vector<16xf32> to vector<4xf32>
// CHECK: vector.insert_strided_slice %[[ET]], %{{.*}} {offsets = [16], strides = [1]} : vector<4xf32> into vector<20xf32>
func.func @exp_padded(%x: vector<20xf32>) -> vector<20xf32> {
  %r = math.exp %x : vector<20xf32>
  return %r : vector<20xf32>
}

// -----

// Tests a scalar exp (the code of loops that are not vectorized): lane 0 of
// a register.
// CHECK-LABEL: func.func @exp_scalar
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: arith.minimumf %[[X]], %{{.*}} : f32
// CHECK: %[[PV:.*]] = vector.insert %{{.*}}, %[[Z:.*]] [0] : f32 into vector<16xf32>
// CHECK: %[[NV:.*]] = vector.insert %{{.*}}, %[[Z]] [0] : f32 into vector<16xf32>
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[PV]], %[[NV]],
// CHECK: %[[R:.*]] = vector.extract %[[E]][0] : f32 from vector<16xf32>
// CHECK: return %[[R]]
func.func @exp_scalar(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// -----

// Tests that an n-D vector is flattened, scaled and shaped back.
// CHECK-LABEL: func.func @exp_2d
// CHECK: vector.shape_cast %{{.*}} : vector<2x16xf32> to vector<32xf32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK: vector.shape_cast %{{.*}} : vector<32xf32> to vector<2x16xf32>
func.func @exp_2d(%x: vector<2x16xf32>) -> vector<2x16xf32> {
  %r = math.exp %x : vector<2x16xf32>
  return %r : vector<2x16xf32>
}

// -----

// Tests that the upper clamp is left out for an argument that cannot be
// positive, -|y| (cross_entropy's online step): NaN still goes through the
// NaN-keeping maximumf.
// CHECK-LABEL: func.func @exp_nonpositive
// CHECK: %[[A:.*]] = llvm.intr.fabs
// CHECK: %[[N:.*]] = arith.negf %[[A]]
// CHECK-NOT: arith.minimumf
// CHECK: arith.maximumf %[[N]], %{{.*}} : vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
func.func @exp_nonpositive(%x: vector<16xf32>) -> vector<16xf32> {
  %a = math.absf %x : vector<16xf32>
  %n = arith.negf %a : vector<16xf32>
  %r = math.exp %n : vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// Tests that f64 exp is left to libm (no approximation of f64 functions).
// CHECK-LABEL: func.func @exp_f64
// CHECK-NOT: scalef
// CHECK: math.exp %{{.*}} : vector<8xf64>
func.func @exp_f64(%x: vector<8xf64>) -> vector<8xf64> {
  %r = math.exp %x : vector<8xf64>
  return %r : vector<8xf64>
}
