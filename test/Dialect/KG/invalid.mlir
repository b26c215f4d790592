// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that a guard after a non-guard op is rejected, with a note at the
// first non-guard op.
kg.program @guard_after_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@below {{first non-guard op: 'kg.is_compiling'}}
  %c = kg.is_compiling
  // expected-error@below {{'kg.guard_tensor' op must come before every non-guard op of the program (guards stand at program entry)}}
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a graph holding a host op is rejected.
kg.program @host_op_in_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op holds the host op 'kg.host_call'; host code belongs in a kg.break between graphs}}
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-note@below {{host op here}}
    kg.host_call @print(%a) : (tensor<4xf32>) -> ()
    kg.yield %a : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a break nested in a graph is rejected (a host op in a graph).
kg.program @break_in_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op holds the host op 'kg.break'}}
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-note@below {{host op here}}
    kg.break "graph_break()" {
    }
    kg.yield %a : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a graph cannot capture a value from above (IsolatedFromAbove).
kg.program @captures(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@below {{required by region isolation constraints}}
  %y = kg.graph @g() : () -> tensor<4xf32> {
    // expected-error@below {{using value defined outside the region}}
    %0 = kt.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a graph region must end with kg.yield (no terminator at all).
kg.program @graph_no_terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op region must end with kg.yield}}
  %y = "kg.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  }) {callee = @g} : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a graph region must end with kg.yield, not another terminator.
kg.program @graph_wrong_terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op region must end with kg.yield}}
  %y = "kg.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    "scf.yield"(%a) : (tensor<4xf32>) -> ()
  }) {callee = @g} : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a graph region has exactly one block.
kg.program @graph_two_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op region must have exactly one block}}
  %y = "kg.graph"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    cf.br ^bb1
  ^bb1:
    kg.yield %a : tensor<4xf32>
  }) {callee = @g} : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that kg.yield types must equal the graph result types.
kg.program @yield_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op kg.yield types ('tensor<4xf32>') differ from result types ('tensor<4xf64>')}}
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf32>):
    kg.yield %a : tensor<4xf32>
  }
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that the graph region's argument count must match the inputs.
kg.program @arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op region has 0 arguments for 1 inputs}}
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    %0 = kt.constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that the graph region's argument types must match the inputs.
kg.program @arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op region argument #0 has type 'tensor<4xf64>' but input #0 has type 'tensor<4xf32>'}}
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf64>):
    %0 = kt.constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that an outlined graph must name a func.func of the module.
kg.program @callee_missing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.graph' op outlined graph 'nowhere' is not a func.func in the module}}
  %y = kg.graph @nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that an outlined graph's function must have the call's type.
func.func private @wrong_type_g0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
  return %a : tensor<4xf32>
}
kg.program @callee_wrong_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@below {{'kg.graph' op graph function 'wrong_type_g0' has type '(tensor<4xf32>) -> tensor<4xf32>' but the call is ('tensor<4xf32>') -> ('tensor<4xf64>')}}
  %y = kg.graph @wrong_type_g0(%x) : (tensor<4xf32>) -> tensor<4xf64>
  kg.return %y : tensor<4xf64>
}

// -----

// Tests that a break needs a reason.
kg.program @no_reason(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.break' op needs a reason (why the capture broke here)}}
  kg.break "" {
  }
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a break's kg.yield types must equal its result types.
kg.program @break_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.break' op kg.yield types ('tensor<4xf32>') differ from result types ('i1')}}
  %b = kg.break "graph_break()" -> i1 {
    kg.yield %x : tensor<4xf32>
  }
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that kg.to_host's result type must be the tensor element type.
kg.program @to_host_mismatch(%t: tensor<i64>) -> i32 {
  // expected-error@below {{'kg.to_host' op result type 'i32' does not match the tensor element type 'i64'}}
  %c = kg.to_host %t : tensor<i64> -> i32
  kg.return %c : i32
}

// -----

// Tests that kg.from_host's input type must be the result element type.
kg.program @from_host_mismatch(%n: f32) -> tensor<f64> {
  // expected-error@below {{'kg.from_host' op input type 'f32' does not match the result element type 'f64'}}
  %t = kg.from_host %n : f32 -> tensor<f64>
  kg.return %t : tensor<f64>
}

// -----

// Tests that kg.guard_tensor's dtype must be the argument element type.
kg.program @guard_dtype(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op dtype 'f64' differs from the argument element type 'f32'}}
  kg.guard_tensor %x {dtype = f64, shape = [4]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that kg.guard_tensor's shape must have the argument's rank.
kg.program @guard_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op shape has 2 entries for a tensor of rank 1}}
  kg.guard_tensor %x {dtype = f32, shape = [4, 1]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a static dim must be guarded with its own size.
kg.program @guard_static_size(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op shape entry 0 is 5 but the argument dim is 4}}
  kg.guard_tensor %x {dtype = f32, shape = [5]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a shape entry may not be negative.
kg.program @guard_negative(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@below {{'kg.guard_tensor' op shape entry 0 is negative}}
  kg.guard_tensor %x {dtype = f32, shape = [-1]} : tensor<?xf32>
  kg.return %x : tensor<?xf32>
}

// -----

// Tests that a static dim cannot be guarded as symbolic.
kg.program @guard_symbolic_static(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op shape entry 0 is symbolic ('s0') but the argument dim is static (4)}}
  kg.guard_tensor %x {dtype = f32, shape = ["s0"]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a shape entry must be an integer or a symbol name.
kg.program @guard_bad_entry(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@below {{'kg.guard_tensor' op shape entry 0 must be an integer or a symbolic dim name}}
  kg.guard_tensor %x {dtype = f32, shape = [1.5]} : tensor<?xf32>
  kg.return %x : tensor<?xf32>
}

// -----

// Tests that strides must have one entry per dim.
kg.program @guard_strides_rank(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@below {{'kg.guard_tensor' op strides has 1 entries for a tensor of rank 2}}
  kg.guard_tensor %x {dtype = f32, shape = [4, 4], strides = [1]} : tensor<4x4xf32>
  kg.return %x : tensor<4x4xf32>
}

// -----

// Tests that strides must be non-negative.
kg.program @guard_strides_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op strides must be non-negative}}
  kg.guard_tensor %x {dtype = f32, shape = [4], strides = [-1]} : tensor<4xf32>
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that kg.guard_value's value must have the argument's type.
kg.program @guard_value_type(%n: i64) -> i64 {
  // expected-error@below {{'kg.guard_value' op value type 'i32' differs from the argument type 'i64'}}
  kg.guard_value %n {value = 3 : i32} : i64
  kg.return %n : i64
}

// -----

// Tests that a tensor guard must guard an argument of the program.
kg.program @guard_non_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_tensor' op guards a value that is not an argument of the program}}
  kg.guard_tensor %y {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kg.yield %a : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a value guard must guard an argument of the program.
kg.program @guard_value_non_argument(%t: tensor<i64>) -> i64 {
  // expected-error@below {{'kg.guard_value' op guards a value that is not an argument of the program}}
  kg.guard_value %n {value = 3 : i64} : i64
  %n = kg.to_host %t : tensor<i64> -> i64
  kg.return %n : i64
}

// -----

// Tests that an identity guard must guard an argument of the program.
kg.program @guard_identity_non_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_identity' op guards a value that is not an argument of the program}}
  kg.guard_identity %y : tensor<4xf32>
  %y = kg.graph @g(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kg.yield %a : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}

// -----

// Tests that a backend guard needs a backend name.
kg.program @guard_backend_empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{'kg.guard_backend' op needs a backend name}}
  kg.guard_backend {backend = ""}
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that a shape relation that does not parse is rejected.
kg.program @relation_parse(%x: tensor<?xf32>) -> tensor<?xf32> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0"]} : tensor<?xf32>
  // expected-error@below {{'kg.guard_shape_relation' op cannot parse 's0 ~ 2': expected one of == != < <= > >=}}
  kg.guard_shape_relation "s0 ~ 2"
  kg.return %x : tensor<?xf32>
}

// -----

// Tests that a shape relation's sides must be symbols or integers.
kg.program @relation_bad_term(%x: tensor<?xf32>) -> tensor<?xf32> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0"]} : tensor<?xf32>
  // expected-error@below {{'kg.guard_shape_relation' op cannot parse 's0 == 2x+': expected 'A op B' with A and B a symbolic dim or an integer}}
  kg.guard_shape_relation "s0 == 2x+"
  kg.return %x : tensor<?xf32>
}

// -----

// Tests that every symbol of a shape relation must be defined by a
// kg.guard_tensor.
kg.program @relation_undefined(%x: tensor<?xf32>) -> tensor<?xf32> {
  kg.guard_tensor %x {dtype = f32, shape = ["s0"]} : tensor<?xf32>
  // expected-error@below {{'kg.guard_shape_relation' op symbolic dim 's1' is not defined by any kg.guard_tensor}}
  kg.guard_shape_relation "s0 == s1"
  kg.return %x : tensor<?xf32>
}

// -----

// Tests that kg.return must return as many values as the program results.
kg.program @return_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error@below {{'kg.return' op returns 1 values but the program has 2 results}}
  kg.return %x : tensor<4xf32>
}

// -----

// Tests that kg.return operand types must equal the program result types.
kg.program @return_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@below {{'kg.return' op operand #0 has type 'tensor<4xf32>' but the program result type is 'tensor<4xf64>'}}
  kg.return %x : tensor<4xf32>
}
