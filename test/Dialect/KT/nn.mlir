// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// Tests that the NN ops (matmul, linear, conv2d, conv_transpose2d, max_pool2d,
// max_pool2d_backward, avg_pool2d_backward, avg_pool2d,
// embedding) verify, infer their result types and round-trip.

// CHECK-LABEL: func.func @matmul_ranks
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<5x3x4xf32>) -> tensor<5x4xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<7x1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<7x5x2x4xf32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<6x3x4xf32>) -> tensor<6x2x4xf32>
func.func @matmul_ranks(%v: tensor<3xf32>, %m: tensor<2x3xf32>, %n: tensor<3x4xf32>,
                        %b: tensor<5x3x4xf32>, %c: tensor<5x2x3xf32>,
                        %d: tensor<7x1x2x3xf32>, %e: tensor<6x3x4xf32>) {
  %0 = kt.matmul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %1 = kt.matmul %m, %n : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = kt.matmul %v, %n : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %3 = kt.matmul %m, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  %4 = kt.matmul %v, %b : (tensor<3xf32>, tensor<5x3x4xf32>) -> tensor<5x4xf32>
  %5 = kt.matmul %c, %v : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  %6 = kt.matmul %d, %b : (tensor<7x1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<7x5x2x4xf32>
  %7 = kt.matmul %m, %e : (tensor<2x3xf32>, tensor<6x3x4xf32>) -> tensor<6x2x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @matmul_dynamic_int
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<?x2x4xi64>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<5x2x4xi64>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3x?xi32>) -> tensor<2x?xi32>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<1x2x3xf16>, tensor<?x3x4xf16>) -> tensor<?x2x4xf16>
// CHECK: kt.matmul %{{.*}}, %{{.*}} : (tensor<0x2x0xbf16>, tensor<0x5xbf16>) -> tensor<0x2x5xbf16>
func.func @matmul_dynamic_int(%a: tensor<?x2x?xi64>, %b: tensor<3x4xi64>,
                              %c: tensor<2x3xi32>, %d: tensor<3x?xi32>,
                              %e: tensor<1x2x3xf16>, %f: tensor<?x3x4xf16>,
                              %g: tensor<0x2x0xbf16>, %h: tensor<0x5xbf16>) {
  %0 = kt.matmul %a, %b : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<?x2x4xi64>
  // A written type may refine an inferred `?`.
  %1 = kt.matmul %a, %b : (tensor<?x2x?xi64>, tensor<3x4xi64>) -> tensor<5x2x4xi64>
  %2 = kt.matmul %c, %d : (tensor<2x3xi32>, tensor<3x?xi32>) -> tensor<2x?xi32>
  %3 = kt.matmul %e, %f : (tensor<1x2x3xf16>, tensor<?x3x4xf16>) -> tensor<?x2x4xf16>
  %4 = kt.matmul %g, %h : (tensor<0x2x0xbf16>, tensor<0x5xbf16>) -> tensor<0x2x5xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK: kt.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
// CHECK: kt.linear %{{.*}}, %{{.*}} : (tensor<2x5x3xf32>, tensor<4x3xf32>) -> tensor<2x5x4xf32>
// CHECK: kt.linear %{{.*}}, %{{.*}} : (tensor<3xf64>, tensor<4x3xf64>) -> tensor<4xf64>
// CHECK: kt.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<7xf32>) -> tensor<?x7xf32>
func.func @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>,
                  %v: tensor<3xf64>, %wd: tensor<4x3xf64>,
                  %xd: tensor<?x?xf32>, %wdd: tensor<?x?xf32>, %bd: tensor<7xf32>) {
  %0 = kt.linear %x, %w, %b : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  %1 = kt.linear %x, %w : (tensor<2x5x3xf32>, tensor<4x3xf32>) -> tensor<2x5x4xf32>
  %2 = kt.linear %v, %wd : (tensor<3xf64>, tensor<4x3xf64>) -> tensor<4xf64>
  %3 = kt.linear %xd, %wdd, %bd : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<7xf32>) -> tensor<?x7xf32>
  return
}

// -----

// CHECK-LABEL: func.func @conv2d
// Default-valued groups = 1 is elided when printed.
// CHECK: kt.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = [1, 1], padding = [1, 1], stride = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
// CHECK: kt.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
// CHECK: kt.conv2d %{{.*}}, %{{.*}} {dilation = [2], padding = [2, 1], stride = [1, 3]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x8x2xf32>
// CHECK: kt.conv2d %{{.*}}, %{{.*}} {groups = 3 : i64} : (tensor<2x6x5x5xf32>, tensor<9x2x3x3xf32>) -> tensor<2x9x3x3xf32>
// CHECK: kt.conv2d %{{.*}}, %{{.*}} : (tensor<3x8x8xf16>, tensor<6x3x3x3xf16>) -> tensor<6x6x6xf16>
// CHECK: kt.conv2d %{{.*}}, %{{.*}} {padding = [1]} : (tensor<?x3x?x8xbf16>, tensor<6x3x3x3xbf16>) -> tensor<?x6x?x8xbf16>
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>,
                  %xg: tensor<2x6x5x5xf32>, %wg: tensor<9x2x3x3xf32>,
                  %xu: tensor<3x8x8xf16>, %wu: tensor<6x3x3x3xf16>,
                  %xd: tensor<?x3x?x8xbf16>, %wd: tensor<6x3x3x3xbf16>) {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 1} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %1 = kt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  %2 = kt.conv2d %x, %w {stride = [1, 3], padding = [2, 1], dilation = [2]} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x8x2xf32>
  %3 = kt.conv2d %xg, %wg {groups = 3} : (tensor<2x6x5x5xf32>, tensor<9x2x3x3xf32>) -> tensor<2x9x3x3xf32>
  %4 = kt.conv2d %xu, %wu : (tensor<3x8x8xf16>, tensor<6x3x3x3xf16>) -> tensor<6x6x6xf16>
  %5 = kt.conv2d %xd, %wd {padding = [1]} : (tensor<?x3x?x8xbf16>, tensor<6x3x3x3xbf16>) -> tensor<?x6x?x8xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @conv_transpose2d
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {output_padding = [1, 1], padding = [1, 1], stride = [2, 2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}} {dilation = [2], groups = 2 : i64, stride = [1, 3]} : (tensor<2x4x3x5xf32>, tensor<4x3x2x2xf32>) -> tensor<2x6x5x15xf32>
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<6x4x4xf16>, tensor<6x3x3x3xf16>) -> tensor<3x6x6xf16>
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}} {padding = [1]} : (tensor<?x6x?x4xbf16>, tensor<6x3x3x3xbf16>) -> tensor<?x3x?x4xbf16>
// CHECK: kt.conv_transpose2d %{{.*}}, %{{.*}} {padding = [2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x2x2xf32>
func.func @conv_transpose2d(%x: tensor<1x6x4x4xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<3xf32>,
                            %xg: tensor<2x4x3x5xf32>, %wg: tensor<4x3x2x2xf32>,
                            %xu: tensor<6x4x4xf16>, %wu: tensor<6x3x3x3xf16>,
                            %xd: tensor<?x6x?x4xbf16>, %wd: tensor<6x3x3x3xbf16>) {
  %0 = kt.conv_transpose2d %x, %w, %b {output_padding = [1, 1], padding = [1, 1], stride = [2, 2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  %1 = kt.conv_transpose2d %x, %w : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  %2 = kt.conv_transpose2d %xg, %wg {groups = 2, stride = [1, 3], dilation = [2]} : (tensor<2x4x3x5xf32>, tensor<4x3x2x2xf32>) -> tensor<2x6x5x15xf32>
  %3 = kt.conv_transpose2d %xu, %wu : (tensor<6x4x4xf16>, tensor<6x3x3x3xf16>) -> tensor<3x6x6xf16>
  %4 = kt.conv_transpose2d %xd, %wd {padding = [1]} : (tensor<?x6x?x4xbf16>, tensor<6x3x3x3xbf16>) -> tensor<?x3x?x4xbf16>
  %5 = kt.conv_transpose2d %x, %w {padding = [2]} : (tensor<1x6x4x4xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x2x2xf32>
  return
}

// -----

// CHECK-LABEL: func.func @pool2d_backward
// CHECK: kt.max_pool2d_backward %{{.*}}, %{{.*}} {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: kt.max_pool2d_backward %{{.*}}, %{{.*}} {ceil_mode = true, dilation = [2], kernel_size = [2]} : (tensor<4x?x?xf16>, tensor<4x?x?xf16>) -> tensor<4x?x?xf16>
// CHECK: kt.avg_pool2d_backward %{{.*}}, %{{.*}} {count_include_pad = false, kernel_size = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: kt.avg_pool2d_backward %{{.*}}, %{{.*}} {ceil_mode = true, divisor_override = 3 : i64, kernel_size = [3, 2], stride = [2, 1]} : (tensor<1x4x4x7xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
func.func @pool2d_backward(%g: tensor<1x4x4x4xf32>, %x: tensor<1x4x8x8xf32>,
                           %gd: tensor<4x?x?xf16>, %xd: tensor<4x?x?xf16>,
                           %g2: tensor<1x4x4x7xf32>) {
  %0 = kt.max_pool2d_backward %g, %x {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %1 = kt.max_pool2d_backward %gd, %xd {kernel_size = [2], dilation = [2], ceil_mode = true} : (tensor<4x?x?xf16>, tensor<4x?x?xf16>) -> tensor<4x?x?xf16>
  %2 = kt.avg_pool2d_backward %g, %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = kt.avg_pool2d_backward %g2, %x {kernel_size = [3, 2], stride = [2, 1], ceil_mode = true, divisor_override = 3} : (tensor<1x4x4x7xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @max_pool2d
// CHECK: kt.max_pool2d %{{.*}} {kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK: kt.max_pool2d %{{.*}} {kernel_size = [2]} : (tensor<4x7x9xf32>) -> tensor<4x3x4xf32>
// CHECK: kt.max_pool2d %{{.*}} {ceil_mode = true, kernel_size = [2, 2]} : (tensor<4x7x9xf32>) -> tensor<4x4x5xf32>
// CHECK: kt.max_pool2d %{{.*}} {dilation = [2, 1], kernel_size = [2, 3], stride = []} : (tensor<4x7x9xf32>) -> tensor<4x3x3xf32>
// CHECK: kt.max_pool2d %{{.*}} {kernel_size = [3, 3], stride = [1, 1]} : (tensor<?x4x?x8xf64>) -> tensor<?x4x?x6xf64>
func.func @max_pool2d(%x: tensor<1x4x8x8xf32>, %y: tensor<4x7x9xf32>, %z: tensor<?x4x?x8xf64>) {
  %0 = kt.max_pool2d %x {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = kt.max_pool2d %y {kernel_size = [2]} : (tensor<4x7x9xf32>) -> tensor<4x3x4xf32>
  %2 = kt.max_pool2d %y {kernel_size = [2, 2], ceil_mode = true} : (tensor<4x7x9xf32>) -> tensor<4x4x5xf32>
  %3 = kt.max_pool2d %y {kernel_size = [2, 3], stride = [], dilation = [2, 1], ceil_mode = false} : (tensor<4x7x9xf32>) -> tensor<4x3x3xf32>
  %4 = kt.max_pool2d %z {kernel_size = [3, 3], stride = [1, 1]} : (tensor<?x4x?x8xf64>) -> tensor<?x4x?x6xf64>
  return
}

// -----

// CHECK-LABEL: func.func @avg_pool2d
// CHECK: kt.avg_pool2d %{{.*}} {count_include_pad = false, kernel_size = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK: kt.avg_pool2d %{{.*}} {ceil_mode = true, divisor_override = 3 : i64, kernel_size = [3, 3], padding = [1, 1], stride = [2, 2]} : (tensor<4x7x9xf32>) -> tensor<4x4x5xf32>
// CHECK: kt.avg_pool2d %{{.*}} {kernel_size = [3]} : (tensor<?x4x?x?xbf16>) -> tensor<?x4x?x?xbf16>
// CHECK: kt.avg_pool2d %{{.*}} {kernel_size = [2]} : (tensor<2x?x7x?xi64>) -> tensor<2x?x3x?xi64>
func.func @avg_pool2d(%x: tensor<1x4x8x8xf32>, %y: tensor<4x7x9xf32>, %z: tensor<?x4x?x?xbf16>, %w: tensor<2x?x7x?xi64>) {
  %0 = kt.avg_pool2d %x {kernel_size = [2, 2], count_include_pad = false} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = kt.avg_pool2d %y {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1], ceil_mode = true, divisor_override = 3} : (tensor<4x7x9xf32>) -> tensor<4x4x5xf32>
  %2 = kt.avg_pool2d %z {kernel_size = [3]} : (tensor<?x4x?x?xbf16>) -> tensor<?x4x?x?xbf16>
  %3 = kt.avg_pool2d %w {kernel_size = [2]} : (tensor<2x?x7x?xi64>) -> tensor<2x?x3x?xi64>
  return
}

// -----

// CHECK-LABEL: func.func @embedding
// CHECK: kt.embedding %{{.*}}, %{{.*}} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK: kt.embedding %{{.*}}, %{{.*}} : (tensor<10x4xf32>, tensor<i32>) -> tensor<4xf32>
// CHECK: kt.embedding %{{.*}}, %{{.*}} : (tensor<?x?xi64>, tensor<?xi32>) -> tensor<?x?xi64>
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>, %j: tensor<i32>,
                     %wd: tensor<?x?xi64>, %k: tensor<?xi32>) {
  %0 = kt.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = kt.embedding %w, %j : (tensor<10x4xf32>, tensor<i32>) -> tensor<4xf32>
  %2 = kt.embedding %wd, %k : (tensor<?x?xi64>, tensor<?xi32>) -> tensor<?x?xi64>
  return
}
