//===- Guards.h - Compiled guard check lists --------------------*- C++ -*-===//
//
// Part of Kiln. The guards of a cache entry, compiled from the kg.guard_* ops
// of its specialized program into a flat list of checks, so a call evaluates
// them without walking IR or allocating.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_GUARDS_H
#define KILN_RUNTIME_GUARDS_H

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Interpreter/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::runtime {

/// A program argument as the runtime sees it, without copying: a tensor
/// (dtype, shape, strides, data pointer, device, requires_grad) or a host
/// scalar.
struct ArgView {
  bool isTensor = true;
  interp::DType dtype = interp::DType::F32;
  llvm::ArrayRef<int64_t> shape;
  /// Element strides; empty means contiguous row-major.
  llvm::ArrayRef<int64_t> strides;
  const void *data = nullptr;
  llvm::StringRef device = "cpu";
  bool requiresGrad = false;
  /// The value of a scalar (isTensor == false): ints and bools in intValue,
  /// floats in floatValue.
  int64_t intValue = 0;
  double floatValue = 0.0;

  /// The stride of dim `d` (contiguous when `strides` is empty).
  int64_t stride(unsigned d) const;
};

/// One check of the flat list.
struct GuardCheck {
  enum class Kind : uint8_t {
    IsTensor,     // arg is a tensor
    IsScalar,     // arg is a host scalar of dtype `value`
    DType,        // tensor dtype == value
    Rank,         // rank == value
    DimEq,        // shape[dim] == value
    DimBind,      // symbols[value] = shape[dim]
    DimSame,      // shape[dim] == symbols[value]
    Stride,       // stride(dim) == value
    Device,       // device == devices[value]
    RequiresGrad, // requires_grad == value
    Identity,     // data == pointers[value]
    IntValue,     // scalar int == value
    FloatValue,   // scalar float == fvalue
    Relation,     // lhs pred rhs over symbols / constants
  };
  Kind kind;
  uint8_t pred = 0;     // Relation: kg::ShapeRelation::Pred
  bool lhsIsSym = false, rhsIsSym = false;
  uint16_t arg = 0;
  int32_t dim = 0;
  int64_t value = 0;    // see Kind; Relation: lhs
  int64_t value2 = 0;   // Relation: rhs
  double fvalue = 0.0;
};

struct ArgAliasing;

class CompiledGuards {
public:
  CompiledGuards();
  CompiledGuards(CompiledGuards &&);
  CompiledGuards &operator=(CompiledGuards &&);
  ~CompiledGuards();

  /// Compiles the guards of `program` (a specialized entry): its argument
  /// types (dtype, rank, static dims), every kg.guard_* op, and the backend.
  /// Identity guards record the data pointers of `args`.
  static mlir::FailureOr<CompiledGuards>
  compile(kg::ProgramOp program, llvm::ArrayRef<ArgView> args,
          std::string &error);

  /// True when every check holds. Allocation-free, except for programs with
  /// more than 8 ref arguments (the aliasing check).
  bool check(llvm::ArrayRef<ArgView> args, llvm::StringRef backend) const;

  /// The first failing check, in the form users know from TorchDynamo:
  /// "tensor 'a' size mismatch at index 0. expected 10, actual 20".
  /// Empty when all checks hold.
  std::string failureReason(llvm::ArrayRef<ArgView> args,
                            llvm::StringRef backend) const;

  /// The checks as code, one per line, in evaluation order (what
  /// KILN_LOGS=guards prints), e.g. "x.dtype == f32", "x.size(0) == 4",
  /// "x.size(1) == s0", "s0 <= 64", "backend == cpu".
  std::string describe() const;

  size_t size() const { return checks.size(); }
  llvm::StringRef backend() const { return backendName; }

private:
  /// Returns the index of the first failing check, or -1.
  int firstFailure(llvm::ArrayRef<ArgView> args, int64_t *symbols) const;

  std::vector<GuardCheck> checks;
  std::vector<std::string> argNames;
  std::vector<std::string> symbolNames;
  std::vector<std::string> devices;
  std::vector<const void *> pointers;
  std::string backendName;
  unsigned numArgs = 0;
  /// Which arguments are refs, and (with two or more) how the call the
  /// entry was compiled for aliased them: a call whose ref arguments share
  /// memory differently fails the guards (see Aliasing.h).
  llvm::SmallVector<bool, 8> isRef;
  unsigned numRefs = 0;
  std::unique_ptr<ArgAliasing> aliasing;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_GUARDS_H
