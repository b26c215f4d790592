// RUN: kiln-opt %s -split-input-file -kiln-autodiff | FileCheck %s

// Tests that a unary op gets a joint function taking the output cotangent
// and returning the output and the input gradient (d sin = cos), and that
// the original function loses the kg.differentiate attribute, and that the
// joint describes itself (kg.joint: primal and output counts, source).
// CHECK-LABEL: func.func @sine(
// CHECK-NOT: kg.differentiate
// CHECK-LABEL: func.func @sine_joint(
// CHECK-SAME: %[[X:.+]]: tensor<3xf64>, %[[CT:.+]]: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
// CHECK-SAME: attributes {kg.joint = {num_outputs = 1 : i64, num_primals = 1 : i64, source = @sine}}
// CHECK-NEXT: %[[Y:.+]] = kt.sin %[[X]]
// CHECK-NEXT: %[[C:.+]] = kt.cos %[[X]]
// CHECK-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[C]]
// CHECK-NEXT: return %[[Y]], %[[G]] : tensor<3xf64>, tensor<3xf64>
func.func @sine(%x: tensor<3xf64>) -> tensor<3xf64> attributes {kg.differentiate} {
  %0 = kt.sin %x : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Tests that a value used twice gets its gradients summed with kt.add, and
// that a broadcast operand's gradient is summed back to its shape.
// CHECK-LABEL: func.func @used_twice_joint(
// CHECK-SAME: %[[X:.+]]: tensor<2x3xf64>, %[[B:.+]]: tensor<3xf64>, %[[CT:.+]]: tensor<2x3xf64>)
// CHECK: %[[M:.+]] = kt.mul %[[X]], %[[X]]
// CHECK: %[[Y:.+]] = kt.add %[[M]], %[[B]]
// CHECK: %[[GB:.+]] = kt.sum %[[CT]] {{.*}}: (tensor<2x3xf64>) -> tensor<3xf64>
// CHECK: %[[G1:.+]] = kt.mul %[[CT]], %[[X]]
// CHECK: %[[G2:.+]] = kt.mul %[[CT]], %[[X]]
// CHECK: %[[GX:.+]] = kt.add %[[G1]], %[[G2]]
// CHECK: return %[[Y]], %[[GX]], %[[GB]]
func.func @used_twice(%x: tensor<2x3xf64>, %b: tensor<3xf64>) -> tensor<2x3xf64> attributes {kg.differentiate} {
  %0 = kt.mul %x, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = kt.add %0, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  return %1 : tensor<2x3xf64>
}

// -----

// Tests that kg.requires_grad = false drops an argument's gradient, that an
// integer argument (the target) requires no grad by default, and that an
// integer result gets no cotangent argument.
// CHECK-LABEL: func.func @loss_joint(
// CHECK-SAME: %{{.+}}: tensor<4x5xf64>, %{{.+}}: tensor<5xf64> {kg.requires_grad = false}, %{{.+}}: tensor<4xi64>, %[[CT:.+]]: tensor<f64>)
// CHECK-SAME: -> (tensor<f64>, tensor<4xi64>, tensor<4x5xf64>)
// CHECK-SAME: kg.joint = {num_outputs = 2 : i64, num_primals = 3 : i64, source = @loss}
// CHECK: kt.cross_entropy
// CHECK: kt.argmax
// CHECK: kt.log_softmax
// CHECK: return
func.func @loss(%x: tensor<4x5xf64>, %w: tensor<5xf64> {kg.requires_grad = false}, %t: tensor<4xi64>) -> (tensor<f64>, tensor<4xi64>) attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t, %w : (tensor<4x5xf64>, tensor<4xi64>, tensor<5xf64>) -> tensor<f64>
  %1 = kt.argmax %x {dim = 1 : i64} : (tensor<4x5xf64>) -> tensor<4xi64>
  return %0, %1 : tensor<f64>, tensor<4xi64>
}

// -----

// Tests that an argument with no path to an output gets a zero gradient, an
// argument returned as is gets the cotangent, and
// that ops off the gradient path (comparisons, floor) need no backward ops.
// CHECK-LABEL: func.func @unused_joint(
// CHECK-SAME: %[[X:.+]]: tensor<2xf32>, %[[Y:.+]]: tensor<2xf32>, %[[CT:.+]]: tensor<2xf32>)
// CHECK: %[[F:.+]] = kt.floor %[[Y]]
// CHECK: %[[Z:.+]] = kt.full {{.*}}value = 0.000000e+00 : f64{{.*}} -> tensor<2xf32>
// CHECK: return %[[X]], %[[CT]], %[[Z]]
func.func @unused(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> attributes {kg.differentiate} {
  %0 = kt.floor %y : (tensor<2xf32>) -> tensor<2xf32>
  %1 = kt.gt %0, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %x : tensor<2xf32>
}

// -----

// Tests that a reshape (a flatten) of an input with a dynamic batch dim
// differentiates: the cotangent is reshaped back with the dynamic dim as
// the one inferred size (-1).
// CHECK-LABEL: func.func @flatten_dynamic_batch_joint(
// CHECK: kt.reshape %{{.+}} {shape = [-1, 144]} : (tensor<?x4x6x6xf32>) -> tensor<?x144xf32>
// CHECK: kt.reshape %{{.+}} {shape = [-1, 4, 6, 6]} : (tensor<?x144xf32>) -> tensor<?x4x6x6xf32>
func.func @flatten_dynamic_batch(%x: tensor<?x4x6x6xf32>) -> tensor<?x144xf32> attributes {kg.differentiate} {
  %0 = kt.reshape %x {shape = [-1, 144]} : (tensor<?x4x6x6xf32>) -> tensor<?x144xf32>
  return %0 : tensor<?x144xf32>
}

// -----

// Tests that conv2d's backward is whole ops, not an expansion per kernel
// offset: the input gradient is one kt.conv_transpose2d (output_padding
// [0, 1]: the stride 2 does not divide W's last window), the weight
// gradient one kt.conv2d of x (batch and channels swapped per group) by gy
// (stride and dilation exchanged), the bias gradient one kt.sum.
// CHECK-LABEL: func.func @conv_whole_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x9x8xf32>, %[[W:[^:]+]]: tensor<6x2x3x3xf32>, %{{[^:]+}}: tensor<6xf32>, %[[G:[^:]+]]: tensor<2x6x5x2xf32>)
// CHECK: kt.conv2d %[[X]], %[[W]]
// CHECK-NEXT: %[[GX:.+]] = kt.conv_transpose2d %[[G]], %[[W]] {dilation = [1, 2], groups = 2 : i64, output_padding = [0, 1], padding = [1, 0], stride = [2, 2]} : (tensor<2x6x5x2xf32>, tensor<6x2x3x3xf32>) -> tensor<2x4x9x8xf32>
// CHECK-NEXT: %[[R:.+]] = kt.reshape %[[X]] {shape = [2, 2, 2, 9, 8]}
// CHECK-NEXT: %[[P:.+]] = kt.permute %[[R]] {dims = [2, 1, 0, 3, 4]}
// CHECK-NEXT: %[[XT:.+]] = kt.reshape %[[P]] {shape = [2, 4, 9, 8]}
// CHECK-NEXT: %[[GT:.+]] = kt.permute %[[G]] {dims = [1, 0, 2, 3]} : (tensor<2x6x5x2xf32>) -> tensor<6x2x5x2xf32>
// CHECK-NEXT: %[[C:.+]] = kt.conv2d %[[XT]], %[[GT]] {dilation = [2, 2], groups = 2 : i64, padding = [1, 0], stride = [1, 2]} : (tensor<2x4x9x8xf32>, tensor<6x2x5x2xf32>) -> tensor<2x6x3x3xf32>
// CHECK-NEXT: %[[GW:.+]] = kt.permute %[[C]] {dims = [1, 0, 2, 3]} : (tensor<2x6x3x3xf32>) -> tensor<6x2x3x3xf32>
// CHECK-NEXT: %[[GB:.+]] = kt.sum %[[G]] {dim = [0, 2, 3]}
// CHECK-NEXT: return %{{.+}}, %[[GX]], %[[GW]], %[[GB]]
func.func @conv_whole(%x: tensor<2x4x9x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x5x2xf32> attributes {kg.differentiate} {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 0], dilation = [1, 2], groups = 2} : (tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x2xf32>
  return %0 : tensor<2x6x5x2xf32>
}

// -----

// Tests that conv2d's backward takes a dynamic batch dim (a dynamic batch
// under kiln.mark_dynamic or automatic dynamic shapes): the grouped weight
// gradient's reshapes infer the batch (-1), its kt.conv2d contracts over a
// dynamic channel dim, the input gradient keeps the `?` batch.
// CHECK-LABEL: func.func @conv_dyn_batch_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x4x9x8xf32>, %[[W:[^:]+]]: tensor<6x2x3x3xf32>, %{{[^:]+}}: tensor<6xf32>, %[[G:[^:]+]]: tensor<?x6x5x2xf32>)
// CHECK: %[[GX:.+]] = kt.conv_transpose2d %[[G]], %[[W]] {{.*}} : (tensor<?x6x5x2xf32>, tensor<6x2x3x3xf32>) -> tensor<?x4x9x8xf32>
// CHECK-NEXT: %[[R:.+]] = kt.reshape %[[X]] {shape = [-1, 2, 2, 9, 8]}
// CHECK-NEXT: %[[P:.+]] = kt.permute %[[R]] {dims = [2, 1, 0, 3, 4]}
// CHECK-NEXT: %[[XT:.+]] = kt.reshape %[[P]] {shape = [2, -1, 9, 8]} : (tensor<2x2x?x9x8xf32>) -> tensor<2x?x9x8xf32>
// CHECK-NEXT: %[[GT:.+]] = kt.permute %[[G]] {dims = [1, 0, 2, 3]} : (tensor<?x6x5x2xf32>) -> tensor<6x?x5x2xf32>
// CHECK-NEXT: %[[C:.+]] = kt.conv2d %[[XT]], %[[GT]] {{.*}} : (tensor<2x?x9x8xf32>, tensor<6x?x5x2xf32>) -> tensor<2x6x3x3xf32>
// CHECK-NEXT: %[[GW:.+]] = kt.permute %[[C]] {dims = [1, 0, 2, 3]} : (tensor<2x6x3x3xf32>) -> tensor<6x2x3x3xf32>
// CHECK-NEXT: %[[GB:.+]] = kt.sum %[[G]] {dim = [0, 2, 3]} : (tensor<?x6x5x2xf32>) -> tensor<6xf32>
// CHECK-NEXT: return %{{.+}}, %[[GX]], %[[GW]], %[[GB]]
func.func @conv_dyn_batch(%x: tensor<?x4x9x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x5x2xf32> attributes {kg.differentiate} {
  %0 = kt.conv2d %x, %w, %b {stride = [2, 2], padding = [1, 0], dilation = [1, 2], groups = 2} : (tensor<?x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<?x6x5x2xf32>
  return %0 : tensor<?x6x5x2xf32>
}

// -----

// Tests conv_transpose2d's backward at a dynamic batch: the input gradient
// is a kt.conv2d keeping the `?` batch, the weight gradient contracts over
// it.
// CHECK-LABEL: func.func @convt_dyn_batch_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x3x2x3xf32>, %[[W:[^:]+]]: tensor<3x2x3x3xf32>, %[[G:[^:]+]]: tensor<?x2x7x11xf32>)
// CHECK: kt.conv2d %[[G]], %[[W]] {{.*}} : (tensor<?x2x7x11xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x3x3xf32>
// CHECK: kt.conv2d %{{.+}}, %{{.+}} {{.*}} : (tensor<2x?x7x11xf32>, tensor<3x?x2x3xf32>) -> tensor<2x3x3x5xf32>
func.func @convt_dyn_batch(%x: tensor<?x3x2x3xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<?x2x7x11xf32> attributes {kg.differentiate} {
  %0 = kt.conv_transpose2d %x, %w {stride = [1, 3], dilation = [2, 1], output_padding = [1, 2]} : (tensor<?x3x2x3xf32>, tensor<3x2x3x3xf32>) -> tensor<?x2x7x11xf32>
  return %0 : tensor<?x2x7x11xf32>
}

// -----

// Tests conv_transpose2d's backward (unbatched; output_padding 1 >= stride 1
// in H, possible with dilation 2): the input gradient is one kt.conv2d of gy
// with the same parameters, cropped to x's 2 rows (its 3rd row is the
// partial window output_padding added); the weight gradient one kt.conv2d
// with the roles of input and output exchanged, cropped to the kernel.
// CHECK-LABEL: func.func @convt_whole_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x2x3xf32>, %[[W:[^:]+]]: tensor<3x2x3x3xf32>, %[[G:[^:]+]]: tensor<2x7x11xf32>)
// CHECK: %[[X4:.+]] = kt.unsqueeze %[[X]] {dim = 0 : i64}
// CHECK-NEXT: %[[G4:.+]] = kt.unsqueeze %[[G]] {dim = 0 : i64}
// CHECK-NEXT: %[[C:.+]] = kt.conv2d %[[G4]], %[[W]] {dilation = [2, 1], padding = [0, 0], stride = [1, 3]} : (tensor<1x2x7x11xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT: %[[CR:.+]] = kt.slice %[[C]] {dim = 2 : i64, end = -1 : i64, start = 0 : i64} : (tensor<1x3x3x3xf32>) -> tensor<1x3x2x3xf32>
// CHECK-NEXT: %[[GX:.+]] = kt.squeeze %[[CR]] {dim = [0]}
// CHECK-NEXT: %[[GT:.+]] = kt.permute %[[G4]] {dims = [1, 0, 2, 3]}
// CHECK-NEXT: %[[XT:.+]] = kt.permute %[[X4]] {dims = [1, 0, 2, 3]}
// CHECK-NEXT: %[[WC:.+]] = kt.conv2d %[[GT]], %[[XT]] {dilation = [1, 3], padding = [0, 0], stride = [2, 1]} : (tensor<2x1x7x11xf32>, tensor<3x1x2x3xf32>) -> tensor<2x3x3x5xf32>
// CHECK-NEXT: %[[WP:.+]] = kt.slice %[[WC]] {dim = 3 : i64, end = -2 : i64, start = 0 : i64} : (tensor<2x3x3x5xf32>) -> tensor<2x3x3x3xf32>
// CHECK-NEXT: %[[GW:.+]] = kt.permute %[[WP]] {dims = [1, 0, 2, 3]} : (tensor<2x3x3x3xf32>) -> tensor<3x2x3x3xf32>
// CHECK-NEXT: return %{{.+}}, %[[GX]], %[[GW]]
func.func @convt_whole(%x: tensor<3x2x3xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<2x7x11xf32> attributes {kg.differentiate} {
  %0 = kt.conv_transpose2d %x, %w {stride = [1, 3], dilation = [2, 1], output_padding = [1, 2]} : (tensor<3x2x3xf32>, tensor<3x2x3x3xf32>) -> tensor<2x7x11xf32>
  return %0 : tensor<2x7x11xf32>
}

// -----

// Tests that the pools' backward is one op each, with the forward's
// attributes (and not its discardable ones), not an expansion per kernel
// offset.
// CHECK-LABEL: func.func @pools_whole_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x2x7x6xf32>, %[[G1:[^:]+]]: tensor<1x2x4x3xf32>, %[[G2:[^:]+]]: tensor<1x2x4x3xf32>)
// CHECK: %[[A:.+]] = kt.avg_pool2d_backward %[[G2]], %[[X]] {ceil_mode = true, count_include_pad = false, divisor_override = 3 : i64, kernel_size = [2, 2], stride = [2, 2]} : (tensor<1x2x4x3xf32>, tensor<1x2x7x6xf32>) -> tensor<1x2x7x6xf32>
// CHECK: %[[M:.+]] = kt.max_pool2d_backward %[[G1]], %[[X]] {dilation = [1, 2], kernel_size = [3, 2], padding = [1, 1], stride = [2, 2]} : (tensor<1x2x4x3xf32>, tensor<1x2x7x6xf32>) -> tensor<1x2x7x6xf32>
// CHECK-NOT: kg.nn_module_stack
// CHECK-NOT: kt.slice
// CHECK: return
func.func @pools_whole(%x: tensor<1x2x7x6xf32>) -> (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) attributes {kg.differentiate} {
  %0 = kt.max_pool2d %x {kernel_size = [3, 2], stride = [2, 2], padding = [1, 1], dilation = [1, 2], kg.nn_module_stack = ["pool"]} : (tensor<1x2x7x6xf32>) -> tensor<1x2x4x3xf32>
  %1 = kt.avg_pool2d %x {kernel_size = [2, 2], stride = [2, 2], ceil_mode = true, count_include_pad = false, divisor_override = 3} : (tensor<1x2x7x6xf32>) -> tensor<1x2x4x3xf32>
  return %0, %1 : tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>
}

// -----

// Tests that training-mode batch_norm's backward is one
// kt.batch_norm_backward (input, weight and bias gradients), not the VJP of
// a mean/var/rsqrt expansion.
// CHECK-LABEL: func.func @bn_train_whole_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x3x4x4xf32>, %[[W:[^:]+]]: tensor<3xf32>, %[[B:[^:]+]]: tensor<3xf32>, %[[G:[^:]+]]: tensor<?x3x4x4xf32>)
// CHECK-NEXT: %[[Y:[^,]+]], %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train %[[X]] weight %[[W]] bias %[[B]] {eps = 1.000000e-03 : f64}
// CHECK-NEXT: %[[GX:[^,]+]], %[[GW:[^,]+]], %[[GB:[^ ]+]] = kt.batch_norm_backward %[[G]], %[[X]], %[[M]], %[[R]] weight %[[W]] : (tensor<?x3x4x4xf32>, tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: return %[[Y]], %[[GX]], %[[GW]], %[[GB]] :
func.func @bn_train_whole(%x: tensor<?x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<?x3x4x4xf32> attributes {kg.differentiate} {
  %0:3 = kt.batch_norm_train %x weight %w bias %b {eps = 1.0e-3} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<?x3x4x4xf32>
}

// -----

// Tests that cotangents of the statistics add their terms to the input's
// gradient (in the statistics type, f32, cast to the f16 input's), and that
// without a weight and bias only the input gets one.
// CHECK-LABEL: func.func @bn_train_stats_joint(
// CHECK: %[[Y:[^,]+]], %[[M:[^,]+]], %[[R:[^ ]+]] = kt.batch_norm_train
// CHECK: %[[BX:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = kt.batch_norm_backward
// CHECK: kt.cast %{{.*}} {dtype = f32}
// CHECK: kt.mul %[[R]], %[[R]]
// CHECK: kt.cast %{{.*}} {dtype = f16}
// CHECK: %[[GX:.+]] = kt.add %[[BX]], %{{.*}} : (tensor<2x3x5xf16>, tensor<2x3x5xf16>) -> tensor<2x3x5xf16>
// CHECK-NEXT: return %[[Y]], %[[M]], %[[R]], %[[GX]] :
func.func @bn_train_stats(%x: tensor<2x3x5xf16>) -> (tensor<2x3x5xf16>, tensor<3xf32>, tensor<3xf32>) attributes {kg.differentiate} {
  %0:3 = kt.batch_norm_train %x : (tensor<2x3x5xf16>) -> (tensor<2x3x5xf16>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x5xf16>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a result marked `kg.requires_grad = false` (BatchNorm's
// running statistics, updated outside autograd) gets no cotangent: the
// joint takes one cotangent (for %y) and its backward has nothing of the
// running mean's update.
// CHECK-LABEL: func.func @no_grad_result_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32>, %{{[^:]+}}: tensor<3xf32> {kg.requires_grad = false}, %[[G:[^:]+]]: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>)
// CHECK: kt.batch_norm_backward %[[G]], %[[X]]
// CHECK-NOT: kt.mul
// CHECK: return
func.func @no_grad_result(%x: tensor<4x3xf32>, %rm: tensor<3xf32> {kg.requires_grad = false}) -> (tensor<4x3xf32>, tensor<3xf32> {kg.requires_grad = false}) attributes {kg.differentiate} {
  %0:3 = kt.batch_norm_train %x : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = kt.add %rm, %0#1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = kt.mul %1, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0#0, %2 : tensor<4x3xf32>, tensor<3xf32>
}

// -----

// Tests that the gradient of a pad that only adds is crops, i.e. views
// (kt.slice, one per padded dim, `end` from the end), not a kt.pad kernel
// that copies; a pad that also crops keeps a kt.pad (zeros where it
// cropped).
// CHECK-LABEL: func.func @pad_grads_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[G1:[^:]+]]: tensor<2x6x5xf32>, %[[G2:[^:]+]]: tensor<2x3x5xf32>)
// CHECK-DAG: %[[S1:.+]] = kt.slice %[[G1]] {dim = 2 : i64, end = -1 : i64, start = 0 : i64} : (tensor<2x6x5xf32>) -> tensor<2x6x4xf32>
// CHECK-DAG: %[[S2:.+]] = kt.slice %[[S1]] {dim = 1 : i64, end = -1 : i64, start = 2 : i64} : (tensor<2x6x4xf32>) -> tensor<2x3x4xf32>
// CHECK-DAG: %[[P:.+]] = kt.pad %[[G2]] {pad = [1, -2]} : (tensor<2x3x5xf32>) -> tensor<2x3x4xf32>
// CHECK: return
func.func @pad_grads(%x: tensor<2x3x4xf32>) -> (tensor<2x6x5xf32>, tensor<2x3x5xf32>) attributes {kg.differentiate} {
  %0 = kt.pad %x {pad = [0, 1, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x6x5xf32>
  %1 = kt.pad %x {pad = [-1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x3x5xf32>
  return %0, %1 : tensor<2x6x5xf32>, tensor<2x3x5xf32>
}

// -----

// Tests that an op marked kg.stop_gradient is a gradient barrier (detach,
// torch.no_grad): y = x * stop(x) has the gradient stop(x) = x, not 2x, and
// an op inside the barrier region needs no rule (nothing flows through it).
// CHECK-LABEL: func.func @stop_gradient_joint(
// CHECK-SAME: %[[X:.+]]: tensor<3xf32>, %[[CT:.+]]: tensor<3xf32>)
// CHECK: %[[D:.+]] = kt.cast %[[X]] {dtype = f32, kg.stop_gradient}
// CHECK: %[[N:.+]] = arith.negf %[[D]] {kg.stop_gradient}
// CHECK: %[[M:.+]] = kt.mul %[[X]], %[[N]]
// CHECK-NEXT: %[[G:.+]] = kt.mul %[[CT]], %[[N]]
// (The mul rule also computes the stopped operand's cotangent, unused:
// nothing adds it anywhere, and later DCE drops it.)
// CHECK-NOT: kt.add
// CHECK: return %[[M]], %[[G]]
func.func @stop_gradient(%x: tensor<3xf32>) -> tensor<3xf32> attributes {kg.differentiate} {
  %d = kt.cast %x {dtype = f32, kg.stop_gradient} : (tensor<3xf32>) -> tensor<3xf32>
  %n = arith.negf %d {kg.stop_gradient} : tensor<3xf32>
  %m = kt.mul %x, %n : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

// Tests that a result computed only from stopped values gets a zero
// gradient (the argument's gradient is zeros, as PyTorch's for an input
// that reaches the output only through detach).
// CHECK-LABEL: func.func @all_stopped_joint(
// CHECK-NOT: kt.mul
// CHECK: kt.full
// CHECK: return
func.func @all_stopped(%x: tensor<3xf32>) -> tensor<3xf32> attributes {kg.differentiate} {
  %d = kt.cast %x {dtype = f32, kg.stop_gradient} : (tensor<3xf32>) -> tensor<3xf32>
  %e = kt.exp %d : (tensor<3xf32>) -> tensor<3xf32>
  return %e : tensor<3xf32>
}

// -----

// Tests kt.slice's gradient with a dynamic bound: g scattered into zeros by
// kt.slice_scatter with the same bound operand and attributes; and
// kt.slice_scatter's, whose bounds go to both gradients (the scatter of
// zeros for self, the slice of g for src).
// CHECK-LABEL: func.func @slice_dynamic_end_joint(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x6xf32>, %[[Y:[^:]+]]: tensor<?xf32> {kg.requires_grad = false}, %[[G:[^:]+]]: tensor<3x?xf32>)
// CHECK: %[[T:.+]] = tensor.dim %[[Y]]
// CHECK: %[[Z:.+]] = kt.full {dtype = f32, size = [3, 6], value = 0.000000e+00 : f64}
// CHECK: %[[GX:.+]] = kt.slice_scatter %[[Z]], %[[G]], %[[T]] {dim = 1 : i64, dynamic_end} : (tensor<3x6xf32>, tensor<3x?xf32>, index) -> tensor<3x6xf32>
// CHECK: return %{{.+}}, %[[GX]]
// CHECK-LABEL: func.func @slice_scatter_dynamic_joint(
// CHECK-SAME: %[[T2:[^:]+]]: index, %[[G2:[^:]+]]: tensor<3x6xf32>)
// CHECK: %[[ZS:.+]] = kt.full %{{.+}} {dtype = f32, size = [3, -1]
// CHECK: %[[GS:.+]] = kt.slice_scatter %[[G2]], %[[ZS]], %[[T2]] {dim = 1 : i64, dynamic_start, step = 2 : i64}
// CHECK: %[[GV:.+]] = kt.slice %[[G2]], %[[T2]] {dim = 1 : i64, dynamic_start, step = 2 : i64} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
// CHECK: return %{{.+}}, %[[GS]], %[[GV]]
func.func @slice_dynamic_end(%x: tensor<3x6xf32>, %y: tensor<?xf32> {kg.requires_grad = false}) -> tensor<3x?xf32> attributes {kg.differentiate} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %y, %c0 : tensor<?xf32>
  %0 = kt.slice %x, %t {dim = 1, dynamic_end} : (tensor<3x6xf32>, index) -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}
func.func @slice_scatter_dynamic(%x: tensor<3x6xf32>, %v: tensor<3x?xf32>, %t: index) -> tensor<3x6xf32> attributes {kg.differentiate} {
  %0 = kt.slice_scatter %x, %v, %t {dim = 1, dynamic_start, step = 2} : (tensor<3x6xf32>, tensor<3x?xf32>, index) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Tests cross_entropy's gradient with class-index targets and no weight:
// glp - exp(log_softmax) * s, with the row sum s of glp known without a
// pass over the classes (-coef * valid: no kt.sum over the class dim), and
// the mean's 1 / (number of kept targets) zeroed when every target is
// ignored (PyTorch's zero gradient, not inf * 0 = NaN).
// CHECK-LABEL: func.func @ce_rows_joint(
// CHECK: %[[LP:.+]] = kt.log_softmax %arg0 {dim = 1 : i64}
// CHECK: %[[VALID:.+]] = kt.unsqueeze %{{.+}} {dim = 1 : i64} : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[N:.+]] = kt.sum %{{.+}} {dim = [0]} : (tensor<4xf32>) -> tensor<f32>
// CHECK: %[[NZ:.+]] = kt.ne %[[N]], %{{.+}} : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK: %[[Q:.+]] = kt.div %arg2, %[[N]]
// CHECK: %[[GL:.+]] = kt.where %[[NZ]], %[[Q]], %{{.+}}
// CHECK: %[[S0:.+]] = kt.mul %[[GL]], %[[VALID]] : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK: %[[S:.+]] = kt.neg %[[S0]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NOT: kt.sum
// CHECK: %[[P:.+]] = kt.exp %[[LP]]
// CHECK: %[[PS:.+]] = kt.mul %[[P]], %[[S]]
// CHECK: kt.sub %{{.+}}, %[[PS]]
func.func @ce_rows(%x: tensor<4x5xf32>, %t: tensor<4xi64>) -> tensor<f32> attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t {label_smoothing = 1.000000e-01 : f64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that with a weight the row sum of glp is still a kt.sum over the
// class dim (it needs w[t]).
// CHECK-LABEL: func.func @ce_rows_weighted_joint(
// CHECK: kt.log_softmax
// CHECK: kt.sum %{{.+}} {dim = [1], keepdim = true} : (tensor<4x5xf32>) -> tensor<4x1xf32>
// CHECK: kt.exp
func.func @ce_rows_weighted(%x: tensor<4x5xf32>, %t: tensor<4xi64>, %w: tensor<5xf32> {kg.requires_grad = false}) -> tensor<f32> attributes {kg.differentiate} {
  %0 = kt.cross_entropy %x, %t, %w : (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
