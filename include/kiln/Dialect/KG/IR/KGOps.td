//===- KGOps.td - The kg dialect: captured programs --------*- tablegen -*-===//
//
// Part of Kiln. A captured program (what TorchDynamo produces): guards at
// entry, graphs of kt ops compiled as units, graph-break regions run on the
// host, and host control flow.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KG_IR_KGOPS_TD
#define KILN_DIALECT_KG_IR_KGOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def KG_Dialect : Dialect {
  let name = "kg";
  let cppNamespace = "::kiln::kg";
  let summary = "Captured programs: guards, graphs, graph breaks, host code";
  let description = [{
    The `kg` dialect is the capture level of Kiln, the IR that TorchDynamo's
    output maps to. A `kg.program` is one captured entry point. Its body is
    host code:

    1. guards first (`kg.guard_*`): what must hold of the inputs for this
       compiled program to be reused;
    2. then graph calls (`kg.graph`, regions of `kt` ops compiled as one
       unit), graph-break regions (`kg.break`, run on the host, each with the
       reason for the break), host callbacks (`kg.host_call`), crossings
       between tensors and host scalars (`kg.to_host`, `kg.from_host`), and
       host control flow (`scf` on host scalars);
    3. and `kg.return`.

    As for kt ops, an op takes only the attributes it defines; annotations
    carry a dialect prefix (`kg.source_fn`, `kg.nn_module_stack`).

    ```mlir
    kg.program @toy_example(%a: tensor<10xf32>, %b: tensor<10xf32>) -> tensor<10xf32> {
      kg.guard_tensor %a {dtype = f32, shape = [10]} : tensor<10xf32>
      kg.guard_tensor %b {dtype = f32, shape = [10]} : tensor<10xf32>
      %x = kg.graph @toy_example_g0(%a) : (tensor<10xf32>) -> tensor<10xf32> {
      ^bb0(%arg0: tensor<10xf32>):
        %0 = kt.abs %arg0 : (tensor<10xf32>) -> tensor<10xf32>
        kg.yield %0 : tensor<10xf32>
      }
      kg.break "call_function print" {
        kg.host_call @print() : () -> ()
      }
      kg.return %x : tensor<10xf32>
    }
    ```
  }];
  // kg.is_compiling folds to an i1 constant, materialized as arith.constant.
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

// No attribute the op does not define (kt::verifyKnownAttributes, shared
// with every kt op).
def KG_KnownAttributesOnly : NativeOpTrait<"KnownAttributesOnly"> {
  let cppNamespace = "::kiln::kt";
}

class KG_Op<string mnemonic, list<Trait> traits = []>
    : Op<KG_Dialect, mnemonic, !listconcat(traits, [KG_KnownAttributesOnly])>;

// A host scalar: what kg.to_host produces and scf branches on.
def KG_HostScalar : AnyTypeOf<[I1, I32, I64, Index, F32, F64]>;

//===----------------------------------------------------------------------===//
// Program structure
//===----------------------------------------------------------------------===//

def KG_ProgramOp : KG_Op<"program", [
    IsolatedFromAbove, Symbol, FunctionOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a captured program: guards, graphs, breaks and host code";
  let description = [{
    One captured entry point, called by the runtime with tensors and host
    scalars.

    1. The body starts with the guards (`kg.guard_*`); no other op may come
       before the last guard.
    2. It ends with `kg.return`, whose operand types are the result types.
    3. Each argument has a source name, used in guard-failure reasons
       (`tensor 'a' size mismatch at index 0. expected 10, actual 20`). It is
       taken from the SSA name in the text (`%a` gives `a`) and kept in the
       `kg.name` argument attribute, which the printer turns back into the SSA
       name.

    ```mlir
    kg.program @double(%x: tensor<4xf32>) -> tensor<4xf32> {
      kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
      %y = kg.graph @double_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4xf32>):
        %0 = kt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        kg.yield %0 : tensor<4xf32>
      }
      kg.return %y : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region MinSizedRegion<1>:$body);
  // Custom form: like func.func, plus source names of the arguments.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    /// The source name of argument `i` (`kg.name`), or "arg<i>".
    std::string getArgSourceName(unsigned i);
  }];
}

def KG_ReturnOp : KG_Op<"return", [Pure, HasParent<"ProgramOp">, ReturnLike,
                                   Terminator]> {
  let summary = "returns from a kg.program";
  let description = [{
    ```mlir
    kg.program @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
      kg.return %x : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def KG_YieldOp : KG_Op<"yield", [Pure, ParentOneOf<["GraphOp", "BreakOp"]>,
                                 ReturnLike, Terminator]> {
  let summary = "yields the results of a kg.graph or kg.break region";
  let description = [{
    ```mlir
    %y = kg.graph @g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      kg.yield %0 : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ /* nothing to do */ }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

def KG_GraphOp : KG_Op<"graph", [
    IsolatedFromAbove,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a graph of kt ops compiled as one unit";
  let description = [{
    A region of `kt` ops compiled as one unit, in one of two forms:

    * inline: the op holds the region (one block whose arguments take the
      operands, ending in `kg.yield`); `callee` is the name the graph function
      will get when `kiln-outline-graphs` moves it out;
    * outlined: no region; `callee` names a `func.func` (the graph function)
      in the enclosing module, called with the operands.

    1. The region is isolated from above: a graph captures nothing; all its
       inputs are operands.
    2. A graph holds no host ops (`kg.host_call`, `kg.break`, `kg.to_host`,
       `kg.from_host`, guards, nested `kg.graph`); these belong in a
       `kg.break`.
    3. Block argument types equal operand types; `kg.yield` operand types
       equal result types.
    4. Outlined: `callee` is a `func.func` whose type is
       `(operand types) -> (result types)`.

    ```mlir
    func.func @g1(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kg.graph_function} {
      %0 = kt.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    kg.program @two_graphs(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = kg.graph @g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4xf32>):
        %0 = kt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
        kg.yield %0 : tensor<4xf32>
      }
      %z = kg.graph @g1(%y) : (tensor<4xf32>) -> tensor<4xf32>
      kg.return %z : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
    ($body^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isOutlined() { return getBody().empty(); }
  }];
}

def KG_BreakOp : KG_Op<"break", [
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a graph break: host code run between graphs";
  let description = [{
    A region of host code that runs outside any graph, with the reason the
    capture broke there ("call_function print", "generic_jump", "disallowed op
    kt.abs", "graph_break()"); its location is the source line of the break.
    The region may use values defined above it and yields its results.

    1. `reason` is not empty.

    ```mlir
    kg.break "call_function print" {
      kg.host_call @print(%x) : (tensor<4xf32>) -> ()
    } loc("t2.py":16:4)
    ```
  }];
  let arguments = (ins StrAttr:$reason);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$reason (`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

def KG_HostCallOp : KG_Op<"host_call", []> {
  let summary = "calls a host callback registered by the embedder";
  let description = [{
    Calls the host callback registered under `callee` (a name, not a symbol of
    the module) with tensors and host scalars, and takes its results. Runs on
    the host: never inside a `kg.graph`. Calling a name no callback is
    registered under is a runtime error.

    ```mlir
    kg.host_call @print(%x) : (tensor<4xf32>) -> ()
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
}

def KG_ToHostOp : KG_Op<"to_host", [Pure]> {
  let summary = "reads a rank-0 tensor as a host scalar";
  let description = [{
    Moves a rank-0 tensor's value to the host, e.g. to branch on it (a
    data-dependent jump: the "generic_jump" break reason).

    1. The input is a rank-0 tensor whose element type is the result type
       (`index` results take `i64` tensors).

    ```mlir
    %c = kg.to_host %t : tensor<i1> -> i1
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1, I32, I64, F32, F64]>:$input);
  let results = (outs KG_HostScalar:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def KG_FromHostOp : KG_Op<"from_host", [Pure]> {
  let summary = "makes a rank-0 tensor from a host scalar";
  let description = [{
    1. The result is a rank-0 tensor whose element type is the input type
       (`index` inputs give `i64` tensors).

    ```mlir
    %t = kg.from_host %n : i64 -> tensor<i64>
    ```
  }];
  let arguments = (ins KG_HostScalar:$input);
  let results = (outs 0DTensorOf<[I1, I32, I64, F32, F64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def KG_IsCompilingOp : KG_Op<"is_compiling", [Pure]> {
  let summary = "torch.compiler.is_compiling(): true inside compiled graphs";
  let description = [{
    True inside a graph (a `kg.graph` region or a graph function, a
    `func.func` with the `kg.graph_function` attribute) and false on the host
    path of a `kg.program`; it folds to that constant wherever the answer is
    known.

    ```mlir
    %c = kg.is_compiling
    ```
  }];
  let results = (outs I1:$result);
  let assemblyFormat = "attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def KG_GradOp : KG_Op<"grad", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "torch.autograd.grad(loss, inputs): gradients of a scalar loss";
  let description = [{
    The gradients of `loss`, a scalar computed by a `kg.graph`, with respect
    to inputs of that graph: `torch.autograd.grad(loss, [w, b])` with the
    default cotangent 1. The training step of a captured program is: a graph
    computing the loss, `kg.grad`, and a graph updating the parameters (see
    `docs/training.md`).

    `kiln-lower-grad` (in every pipeline) replaces it with graph calls: the
    loss's graph becomes a call of its joint forward+backward function (or,
    partitioned, of `@<graph>_fwd`), and `kg.grad` a call of the backward.

    1. It is host code: inside a `kg.program`, never inside a `kg.graph`.
    2. `loss` is a rank-0 float tensor computed by a `kg.graph` in the same
       block.
    3. There is at least one `wrt` value, and each is an input of that graph
       with a float tensor type (or a `!kt.ref`, whose gradient is with
       respect to the value the graph reads); result `i` is the gradient of
       `wrt` operand `i`, with its tensor type (the result types are
       inferred from the `wrt` types, so specializing a program for new
       input shapes re-infers them).
    4. Each `wrt` value reaches the loss inside the graph (PyTorch: "One of
       the differentiated Tensors appears to not have been used in the
       graph"), unless `allow_unused` is set; an unused input then gets zeros
       (PyTorch gives None).

    ```mlir
    %loss = kg.graph @step_fwd(%w, %x) : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>):
      %0 = kt.linear %b, %a : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
      %1 = kt.mean %0 : (tensor<2x4xf32>) -> tensor<f32>
      kg.yield %1 : tensor<f32>
    }
    %gw = kg.grad %loss wrt(%w) : (tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$loss, Variadic<AnyType>:$wrt,
                       UnitAttr:$allow_unused);
  let results = (outs Variadic<AnyRankedTensor>:$grads);
  let assemblyFormat = [{
    $loss `wrt` `(` $wrt `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The kg.graph computing the loss (null if it is not a graph result).
    GraphOp getLossGraph();
  }];
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

class KG_GuardOp<string mnemonic, list<Trait> traits = []>
    : KG_Op<"guard_" # mnemonic, !listconcat(traits, [HasParent<"ProgramOp">])> {
  let hasVerifier = 1;
}

def KG_GuardTensorOp : KG_GuardOp<"tensor"> {
  let summary = "guards the dtype, shape, strides, device and requires_grad of a tensor input";
  let description = [{
    The compiled program may be reused only for inputs where this holds.

    * `dtype`: the element type.
    * `shape`: one entry per dim: an integer (that size exactly) or a string
      naming a symbolic dim (`"s0"`: any size, equal to every other use of
      `s0`, subject to `kg.guard_shape_relation`).
    * `strides` (optional): element strides, when they matter.
    * `device` (default `"cpu"`), `requires_grad` (default false).

    1. The input is an argument of the program: a ranked tensor or a
       `!kt.ref` (a mutable tensor such as a parameter, guarded like a
       tensor).
    2. `dtype` is the argument's element type; `shape` has its rank.
    3. A dim that is static in the argument type has that integer in `shape`.
    4. `strides`, when present, has one non-negative entry per dim.

    ```mlir
    kg.guard_tensor %a {dtype = f32, shape = ["s0", 10], requires_grad = true} : tensor<?x10xf32>
    ```
  }];
  let arguments = (ins AnyType:$input, TypeAttr:$dtype, ArrayAttr:$shape,
                       OptionalAttr<I64ArrayAttr>:$strides,
                       DefaultValuedStrAttr<StrAttr, "cpu">:$device,
                       DefaultValuedAttr<BoolAttr, "false">:$requires_grad);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def KG_GuardValueOp : KG_GuardOp<"value"> {
  let summary = "guards that a host scalar input has a specialized value";
  let description = [{
    The program was specialized for this value of a host scalar argument
    (a Python int, float or bool constant).

    1. The input is an argument of the program; `value` has its type.

    ```mlir
    kg.guard_value %n {value = 3 : i64} : i64
    ```
  }];
  let arguments = (ins KG_HostScalar:$input, TypedAttrInterface:$value);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def KG_GuardBackendOp : KG_GuardOp<"backend"> {
  let summary = "BACKEND_MATCH: the entry belongs to one backend";
  let description = [{
    The compiled entry is valid only for the session's current backend
    (`eager`, `cpu`, ...), so each backend keeps its own cache entries.

    ```mlir
    kg.guard_backend {backend = "eager"}
    ```
  }];
  let arguments = (ins StrAttr:$backend);
  let assemblyFormat = "attr-dict";
}

def KG_GuardIdentityOp : KG_GuardOp<"identity"> {
  let summary = "guards that a tensor input is the same storage (mark_static)";
  let description = [{
    The input must be the very tensor (same data pointer) the entry was
    compiled for: a tensor marked static, whose contents may be baked in.

    1. The input is an argument of the program.

    ```mlir
    kg.guard_identity %w : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def KG_GuardShapeRelationOp : KG_GuardOp<"shape_relation"> {
  let summary = "a constraint between symbolic dims";
  let description = [{
    `relation` is `A op B` where each side is a symbolic dim named in a
    `kg.guard_tensor` shape or an integer, and `op` is one of
    `== != < <= > >=`.

    1. The relation parses, and every symbol in it is defined by a
       `kg.guard_tensor` of the program.

    ```mlir
    kg.guard_tensor %a {dtype = f32, shape = ["s0", 4]} : tensor<?x4xf32>
    kg.guard_tensor %b {dtype = f32, shape = ["s1"]} : tensor<?xf32>
    kg.guard_shape_relation "s0 == s1"
    kg.guard_shape_relation "s0 >= 2"
    ```
  }];
  let arguments = (ins StrAttr:$relation);
  let assemblyFormat = "$relation attr-dict";
}

#endif // KILN_DIALECT_KG_IR_KGOPS_TD
