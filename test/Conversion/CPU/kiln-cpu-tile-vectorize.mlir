// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-vectorize="threads=2 vector-bits=256" | FileCheck %s

// Tests the thread and register tiles of kiln-cpu-tile-vectorize: a
// pointwise op gets an scf.forall of 2 threads over rows and 16-wide
// (2 x 256-bit) vector rows; a row reduction becomes a partial reduction
// into a 32-wide accumulator plus a merge, and so does a full or multi-dim
// reduction whose innermost dim is reduced; small ops stay on one thread.

// The thread's 256x128 slice is contiguous, so its two loops collapse into
// one of 32768 elements (tensor.collapse_shape of the slices).
// CHECK-LABEL: func.func @pointwise
// CHECK: scf.forall (%{{.*}}) = (0) to (512) step (256)
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0, 1]] : tensor<256x128xf32> into tensor<32768xf32>
// CHECK: scf.for {{.*}} to %c32768 step %c16
// CHECK: vector.transfer_read {{.*}} vector<16xf32>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write
// CHECK: scf.forall.in_parallel
func.func @pointwise(%x: tensor<512x128xf32>) -> tensor<512x128xf32> {
  %e = tensor.empty() : tensor<512x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x128xf32>) outs(%e : tensor<512x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<512x128xf32>
  return %r : tensor<512x128xf32>
}

// -----

// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: vector.transfer_write {{.*}} : vector<1x32xf32>, tensor<1x32xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK: arith.addf {{.*}} : vector<1x32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x32xf32> to vector<1xf32>
func.func @row_sum(%x: tensor<256x1000xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x1000xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

// Tests that an f32 row sum into f64 accumulators (the accumulation rule)
// is cascaded: blocks of 8 steps of 4 registers of f32 (256 elements) are
// summed in f32 (32 lanes, then across them), and each block sum is widened
// and added to the f64 accumulator. The row of 1000 ends in a partial
// (masked) block.
// CHECK-LABEL: func.func @row_sum_f64_acc
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c256 iter_args(%{{.*}}) -> (tensor<1xf64>)
// CHECK: linalg.fill {{.*}} -> tensor<1xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x32xf32>, tensor<1x32xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK: vector.create_mask
// CHECK: arith.addf {{.*}} : vector<1x32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x32xf32> to vector<1xf32>
// CHECK: arith.extf {{.*}} : vector<1xf32> to vector<1xf64>
// CHECK: arith.addf {{.*}} : vector<1xf64>
func.func @row_sum_f64_acc(%x: tensor<256x1000xf32>) -> tensor<256xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<256xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<256xf64>) -> tensor<256xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x1000xf32>) outs(%f : tensor<256xf64>) {
  ^bb0(%a: f32, %o: f64):
    %w = arith.extf %a : f32 to f64
    %v = arith.addf %o, %w : f64
    linalg.yield %v : f64
  } -> tensor<256xf64>
  return %r : tensor<256xf64>
}

// -----

// Tests that a full reduction (every dim reduced, no parallel dim) is
// vectorized: its three contiguous loops collapse into one of 262144
// elements, stepped in cascade blocks of 256, each a partial reduction into
// 32 f32 lanes merged into the f64 sum.
// CHECK-LABEL: func.func @full_sum
// CHECK-NOT: scf.forall
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<8x128x256xf32> into tensor<262144xf32>
// CHECK: scf.for {{.*}} to %c262144 step %c256
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, tensor<32xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK: arith.addf {{.*}} : vector<32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [0] : vector<32xf32> to f32
// CHECK: arith.extf {{.*}} : f32 to f64
// CHECK: arith.addf {{.*}} : f64
func.func @full_sum(%x: tensor<8x128x256xf32>) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x : tensor<8x128x256xf32>) outs(%f : tensor<f64>) {
  ^bb0(%a: f32, %o: f64):
    %w = arith.extf %a : f32 to f64
    %v = arith.addf %o, %w : f64
    linalg.yield %v : f64
  } -> tensor<f64>
  return %r : tensor<f64>
}

// -----

// Tests a reduction over dims [0, 2] (the innermost reduced, a parallel dim
// between): per element of dim 1, the outer reduced dim steps by 1 and the
// innermost in cascade blocks.
// CHECK-LABEL: func.func @outer_inner_sum
// CHECK: scf.forall
// CHECK: scf.for {{.*}} step %c1
// CHECK: scf.for {{.*}} step %c1
// CHECK: scf.for {{.*}} step %c256
// CHECK: scf.for {{.*}} step %c32
// CHECK: arith.addf {{.*}} : vector<1x1x32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} : vector<1x1x32xf32> to vector<1xf32>
// CHECK: arith.addf {{.*}} : vector<1xf64>
func.func @outer_inner_sum(%x: tensor<64x16x2048xf32>) -> tensor<16xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<16xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<16xf64>) -> tensor<16xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>],
                       iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<64x16x2048xf32>) outs(%f : tensor<16xf64>) {
  ^bb0(%a: f32, %o: f64):
    %w = arith.extf %a : f32 to f64
    %v = arith.addf %o, %w : f64
    linalg.yield %v : f64
  } -> tensor<16xf64>
  return %r : tensor<16xf64>
}

// -----

// Tests that a column sum into f64 accumulators vectorizes 16 columns (2
// registers of its f32 input), and that an f32 op reading a per-row f64
// statistic (broadcast) keeps 16-wide f32 vectors.
// CHECK-LABEL: func.func @column_sum_f64_acc
// CHECK: arith.extf {{.*}} : vector<1x16xf32> to vector<1x16xf64>
// CHECK: vector.multi_reduction <add>, {{.*}} [0] : vector<1x16xf64> to vector<16xf64>
func.func @column_sum_f64_acc(%x: tensor<4096x64xf32>) -> tensor<64xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<64xf64>) -> tensor<64xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4096x64xf32>) outs(%f : tensor<64xf64>) {
  ^bb0(%a: f32, %o: f64):
    %w = arith.extf %a : f32 to f64
    %v = arith.addf %o, %w : f64
    linalg.yield %v : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}
// CHECK-LABEL: func.func @scale_rows
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: arith.mulf {{.*}} : vector<1x16xf32>
func.func @scale_rows(%x: tensor<512x128xf32>, %s: tensor<512xf64>) -> tensor<512x128xf32> {
  %e = tensor.empty() : tensor<512x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<512x128xf32>, tensor<512xf64>) outs(%e : tensor<512x128xf32>) {
  ^bb0(%a: f32, %b: f64, %o: f32):
    %t = arith.truncf %b : f64 to f32
    %v = arith.mulf %a, %t : f32
    linalg.yield %v : f32
  } -> tensor<512x128xf32>
  return %r : tensor<512x128xf32>
}

// -----

// Small ops run on one thread; a partial tail tile is masked.
// CHECK-LABEL: func.func @small_tail
// CHECK-NOT: scf.forall
// CHECK: vector.create_mask
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
func.func @small_tail(%x: tensor<3x37xf32>, %y: tensor<3x37xf32>) -> tensor<3x37xf32> {
  %e = tensor.empty() : tensor<3x37xf32>
  %r = linalg.add ins(%x, %y : tensor<3x37xf32>, tensor<3x37xf32>) outs(%e : tensor<3x37xf32>) -> tensor<3x37xf32>
  return %r : tensor<3x37xf32>
}

// -----

// A generated matmul: 8 x 16 x 1 register tiles, n loop outside m.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall
// CHECK: scf.for {{.*}} step %c16
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for
// CHECK: vector.contract {{.*}} vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul {kiln.matmul_impl = "generated"} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// Matmuls marked openblas are left for kiln-matmul-to-blas.
// CHECK-LABEL: func.func @blas
// CHECK-NOT: scf.for
// CHECK: linalg.matmul {kiln.matmul_impl = "openblas"}
func.func @blas(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul {kiln.matmul_impl = "openblas"} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// Tests that the contiguous reduced dims of a per-channel sum over N, H, W
// of NCHW (batch_norm's statistics) collapse: H and W become one reduced
// loop of 16*16 = 256 (no masked 16-wide rows), N and C stay (C is the
// parallel dim between them); the thread slice over C keeps H, W whole.
// CHECK-LABEL: func.func @channel_sum
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (32)
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0], [1], [2, 3]] : tensor<8x32x16x16xf32> into tensor<8x32x256xf32>
// CHECK-NOT: vector.create_mask
// CHECK: arith.addf {{.*}} : vector<1x1x32xf32>
// CHECK: scf.forall.in_parallel
func.func @channel_sum(%x: tensor<8x64x16x16xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<8x64x16x16xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %o, %a : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// Tests that loops are not collapsed where an operand reads them out of
// order (a transpose: d0, d1 are not contiguous in the input's map), nor
// where a slice of an operand does not take the inner dims whole (the
// kernel tile below takes 16 of 40 columns: collapsing rows and columns
// would need a copy).
// CHECK-LABEL: func.func @no_collapse
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @no_collapse(%x: tensor<256x512xf32>, %y: tensor<6x40xf32>) -> (tensor<512x256xf32>, tensor<6x16xf32>) {
  %e = tensor.empty() : tensor<512x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x512xf32>) outs(%e : tensor<512x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<512x256xf32>
  %s = tensor.extract_slice %y[0, 8] [6, 16] [1, 1] : tensor<6x40xf32> to tensor<6x16xf32>
  %e2 = tensor.empty() : tensor<6x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<6x16xf32>) outs(%e2 : tensor<6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<6x16xf32>
  return %r, %t : tensor<512x256xf32>, tensor<6x16xf32>
}

// -----

// Tests that the zero fill of a oneDNN conv's output stays a whole
// linalg.fill (kiln-cpu-conv-to-onednn drops it and lets oneDNN overwrite;
// tiled, the call would accumulate onto a separately zeroed buffer), while
// a fill with another user is tiled as before.
// CHECK-LABEL: func.func @onednn_conv_fill
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x8x7x7xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}kiln.conv_impl = "onednn"{{.*}} outs(%[[F]] :
// CHECK-NOT: linalg.fill
// CHECK: vector.transfer_write
// CHECK: return
func.func @onednn_conv_fill(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> (tensor<2x8x7x7xf32>, tensor<64x64xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, kiln.conv_impl = "onednn", strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r, %f2 : tensor<2x8x7x7xf32>, tensor<64x64xf32>
}

// -----

// A bool (i1) operand is vectorized and counts as a byte (the widest
// operand, f32, sets 16 lanes); kiln-cpu-lower-vectors turns the i1 read
// into one of bytes.
// CHECK-LABEL: func.func @masked_select
// CHECK: vector.transfer_read {{.*}} vector<16xi1>
// CHECK: arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} vector<16xf32>
func.func @masked_select(%m: tensor<512x128xi1>, %x: tensor<512x128xf32>) -> tensor<512x128xf32> {
  %e = tensor.empty() : tensor<512x128xf32>
  %c = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : tensor<512x128xi1>, tensor<512x128xf32>) outs(%e : tensor<512x128xf32>) {
  ^bb0(%b: i1, %a: f32, %o: f32):
    %v = arith.select %b, %a, %c : f32
    linalg.yield %v : f32
  } -> tensor<512x128xf32>
  return %r : tensor<512x128xf32>
}
