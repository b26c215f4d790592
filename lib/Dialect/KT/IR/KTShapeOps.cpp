//===- KTShapeOps.cpp - kt Shape ops ---------------------------------------===//
//
// Part of Kiln. Verifiers, type inference, folders and canonicalizations of
// the ops in KTShapeOps.td. Verification happens in result-type inference
// (`inferShapeOp`), which the InferTypeOpInterface verifier runs with the
// op's location.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KT/IR/KTOps.h"
#include "kiln/Dialect/KT/IR/KTViewInference.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln::kt;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

bool isDyn(int64_t d) { return ShapedType::isDynamic(d); }

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }
RankedTensorType tensorOf(Type t) { return cast<RankedTensorType>(t); }

/// Normalizes a dim that indexes the result of an insertion (unsqueeze,
/// stack): range [-rank-1, rank].
FailureOr<int64_t> normalizeInsertDim(int64_t dim, int64_t rank,
                                      std::optional<Location> loc,
                                      StringRef opName) {
  if (dim < -rank - 1 || dim > rank)
    return emitKTError(loc, opName, "dim ", dim, " is out of range for rank ",
                       rank, " (expected [", -rank - 1, ", ", rank, "])");
  return dim < 0 ? dim + rank + 1 : dim;
}

/// Length of x[start:end:step] along a dim of `size` (Python/PyTorch slice
/// rules, step > 0).
int64_t sliceLength(int64_t size, std::optional<int64_t> startOpt,
                    std::optional<int64_t> endOpt, int64_t step) {
  int64_t start = startOpt.value_or(0);
  int64_t end = endOpt.value_or(size);
  if (start < 0)
    start += size;
  if (end < 0)
    end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return end == start ? 0 : (end - start - 1) / step + 1;
}

LogicalResult push(SmallVectorImpl<Type> &types, ArrayRef<int64_t> shape,
                   Type elem) {
  types.push_back(RankedTensorType::get(shape, elem));
  return success();
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

/// The value of an `index` size when it is known statically: a constant,
/// `tensor.dim` of a static dim, or arith add/sub/mul/div/rem of such
/// values (a size operand computed from inputs whose dims are static in
/// this program, as the runtime's type refinement sees it before folding).
std::optional<int64_t> staticIndexValue(Value v, int depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return std::nullopt;
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    auto t = dyn_cast<RankedTensorType>(dim.getSource().getType());
    std::optional<int64_t> i = getConstantIntValue(dim.getIndex());
    if (t && i && *i >= 0 && *i < t.getRank() && !t.isDynamicDim(*i))
      return t.getDimSize(*i);
    return std::nullopt;
  }
  if (def->getNumOperands() != 2 || def->getName().getDialectNamespace() != "arith")
    return std::nullopt;
  std::optional<int64_t> a = staticIndexValue(def->getOperand(0), depth + 1);
  std::optional<int64_t> b = staticIndexValue(def->getOperand(1), depth + 1);
  if (!a || !b)
    return std::nullopt;
  StringRef op = def->getName().stripDialect();
  if (op == "addi")
    return *a + *b;
  if (op == "subi")
    return *a - *b;
  if (op == "muli")
    return *a * *b;
  if ((op == "floordivsi" || op == "divsi" || op == "divui") && *b > 0 &&
      *a >= 0)
    return *a / *b;
  if ((op == "remsi" || op == "remui") && *b > 0 && *a >= 0)
    return *a % *b;
  return std::nullopt;
}

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, ReshapeOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  if (!adaptor.getShapeAttr())
    return emitKTError(loc, name, "requires attribute 'shape'");
  SmallVector<int64_t> shape = getI64Array(adaptor.getShapeAttr());
  // The index operands after `self` (kt.reshape's `sizes`; a view op's
  // adaptor has the same operand list).
  ValueRange sizes = adaptor.getOperands().drop_front();
  int64_t inferIdx = -1, prod = 1, numSized = 0;
  SmallVector<int64_t> result(shape);
  for (auto [i, s] : llvm::enumerate(shape)) {
    if (s == -1) {
      if (inferIdx >= 0)
        return emitKTError(loc, name, "shape has more than one -1 entry");
      inferIdx = i;
      continue;
    }
    if (s == -2) {
      // A size operand: `?` unless it is a constant.
      if (numSized < (int64_t)sizes.size()) {
        std::optional<int64_t> c = staticIndexValue(sizes[numSized]);
        if (c && *c < 0)
          return emitKTError(loc, name, "size operand #", numSized, " is ",
                             *c, " (expected >= 0)");
        result[i] = c ? *c : kDyn;
      }
      ++numSized;
      continue;
    }
    if (s < 0)
      return emitKTError(loc, name, "shape entry ", s,
                         " is invalid (expected >= 0, -1 or -2)");
    prod *= s;
  }
  if (numSized != (int64_t)sizes.size())
    return emitKTError(loc, name, "shape has ", numSized,
                       " -2 entries but ", sizes.size(),
                       " size operands were given");
  for (Value v : sizes)
    if (!v.getType().isIndex())
      return emitKTError(loc, name, "size operands must be of type index");
  bool allStatic = llvm::none_of(result, isDyn);
  if (allStatic)
    for (auto [i, s] : llvm::enumerate(result))
      if (shape[i] == -2)
        prod *= s;
  if (inferIdx >= 0 && prod == 0 && allStatic)
    return emitKTError(loc, name, "shape ", shapeToString(shape),
                       " is ambiguous: the -1 entry can be any value when the "
                       "other entries multiply to 0");
  if (in.hasStaticShape() && allStatic) {
    int64_t n = in.getNumElements();
    if (inferIdx >= 0) {
      if (n % prod != 0)
        return emitKTError(loc, name, "cannot reshape ",
                           shapeToString(in.getShape()), " (", n,
                           " elements) into shape ", shapeToString(result));
      result[inferIdx] = n / prod;
    } else if (n != prod) {
      return emitKTError(loc, name, "cannot reshape ",
                         shapeToString(in.getShape()), " (", n,
                         " elements) into shape ", shapeToString(result), " (",
                         prod, " elements)");
    }
  } else if (inferIdx >= 0) {
    result[inferIdx] = kDyn;
  }
  return push(types, result, in.getElementType());
}

//===----------------------------------------------------------------------===//
// transpose / permute
//===----------------------------------------------------------------------===//

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, TransposeOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  if (!adaptor.getDim0Attr() || !adaptor.getDim1Attr())
    return emitKTError(loc, name, "requires attributes 'dim0' and 'dim1'");
  int64_t rank = in.getRank();
  FailureOr<int64_t> d0 =
      normalizeDim((int64_t)adaptor.getDim0(), rank, loc, name, "dim0");
  if (failed(d0))
    return failure();
  FailureOr<int64_t> d1 =
      normalizeDim((int64_t)adaptor.getDim1(), rank, loc, name, "dim1");
  if (failed(d1))
    return failure();
  SmallVector<int64_t> shape(in.getShape());
  if (rank > 0)
    std::swap(shape[*d0], shape[*d1]);
  return push(types, shape, in.getElementType());
}

FailureOr<SmallVector<int64_t>> permutation(ArrayAttr attr, int64_t rank,
                                            std::optional<Location> loc,
                                            StringRef name) {
  SmallVector<int64_t> dims = getI64Array(attr);
  if ((int64_t)dims.size() != rank)
    return emitKTError(loc, name, "dims has ", dims.size(),
                       " entries but self has rank ", rank);
  if (rank == 0)
    return SmallVector<int64_t>();
  return normalizeDims(dims, rank, loc, name, "dim");
}

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, PermuteOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  if (!adaptor.getDimsAttr())
    return emitKTError(loc, name, "requires attribute 'dims'");
  FailureOr<SmallVector<int64_t>> perm =
      permutation(adaptor.getDimsAttr(), in.getRank(), loc, name);
  if (failed(perm))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : *perm)
    shape.push_back(in.getDimSize(p));
  return push(types, shape, in.getElementType());
}

//===----------------------------------------------------------------------===//
// expand
//===----------------------------------------------------------------------===//

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, ExpandOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  if (!adaptor.getSizeAttr())
    return emitKTError(loc, name, "requires attribute 'size'");
  SmallVector<int64_t> size = getI64Array(adaptor.getSizeAttr());
  int64_t rank = in.getRank(), n = size.size();
  if (n < rank)
    return emitKTError(loc, name, "size has ", n,
                       " entries, fewer than the rank ", rank, " of self");
  int64_t lead = n - rank;
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = size[i];
    if (i < lead) {
      if (s < 0)
        return emitKTError(loc, name, "size ", s, " of new leading dim ", i,
                           " is invalid (expected >= 0; -1 is not allowed "
                           "for a new dim)");
      result.push_back(s);
      continue;
    }
    int64_t d = in.getDimSize(i - lead);
    if (s == -1) {
      result.push_back(d);
      continue;
    }
    if (s < 0)
      return emitKTError(loc, name, "size ", s, " at dim ", i,
                         " is invalid (expected >= 0 or -1)");
    if (!isDyn(d) && d != 1 && d != s)
      return emitKTError(loc, name, "dim ", i - lead, " of self has size ", d,
                         " and cannot be expanded to ", s,
                         " (only size-1 dims expand)");
    result.push_back(s);
  }
  return push(types, result, in.getElementType());
}

//===----------------------------------------------------------------------===//
// squeeze / unsqueeze
//===----------------------------------------------------------------------===//

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, SqueezeOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  int64_t rank = in.getRank();
  SmallVector<int64_t> dims;
  if (adaptor.getDimAttr()) {
    FailureOr<SmallVector<int64_t>> nd =
        normalizeDims(getI64Array(adaptor.getDimAttr()), rank, loc, name);
    if (failed(nd))
      return failure();
    dims = *nd;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  }
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = in.getDimSize(i);
    if (d == 1 && llvm::is_contained(dims, i))
      continue;
    result.push_back(d);
  }
  return push(types, result, in.getElementType());
}

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, UnsqueezeOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  if (!adaptor.getDimAttr())
    return emitKTError(loc, name, "requires attribute 'dim'");
  FailureOr<int64_t> d =
      normalizeInsertDim((int64_t)adaptor.getDim(), in.getRank(), loc, name);
  if (failed(d))
    return failure();
  SmallVector<int64_t> shape(in.getShape());
  shape.insert(shape.begin() + *d, 1);
  return push(types, shape, in.getElementType());
}

//===----------------------------------------------------------------------===//
// slice / select
//===----------------------------------------------------------------------===//

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, SliceOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  int64_t rank = in.getRank();
  if (rank == 0)
    return emitKTError(loc, name, "cannot slice a rank-0 tensor");
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  int64_t step = (int64_t)adaptor.getStep();
  if (step <= 0)
    return emitKTError(loc, name, "step ", step, " must be > 0");
  // Dynamic bounds: one `index` operand per `dynamic_start` /
  // `dynamic_end`, in that order (a view op or kt.slice_scatter passes no
  // operand after `self` and has no dynamic attribute).
  bool dynStart = (bool)adaptor.getDynamicStartAttr();
  bool dynEnd = (bool)adaptor.getDynamicEndAttr();
  if (dynStart && adaptor.getStartAttr())
    return emitKTError(loc, name,
                       "has both 'start' and 'dynamic_start' (a dynamic start "
                       "is the first 'bounds' operand)");
  if (dynEnd && adaptor.getEndAttr())
    return emitKTError(loc, name,
                       "has both 'end' and 'dynamic_end' (a dynamic end is "
                       "the last 'bounds' operand)");
  ValueRange bounds = adaptor.getOperands().drop_front();
  int64_t numDyn = (int64_t)dynStart + (int64_t)dynEnd;
  if ((int64_t)bounds.size() != numDyn)
    return emitKTError(loc, name, "has ", numDyn,
                       " dynamic bounds (dynamic_start / dynamic_end) but ",
                       bounds.size(), " 'bounds' operands");
  for (Value v : bounds)
    if (!v.getType().isIndex())
      return emitKTError(loc, name, "a 'bounds' operand has type ",
                         v.getType(), " (expected index)");
  SmallVector<int64_t> shape(in.getShape());
  int64_t size = shape[*d];
  std::optional<int64_t> start, end;
  bool known = !isDyn(size);
  if (dynStart)
    known = known && (start = staticIndexValue(bounds.front())).has_value();
  else if (adaptor.getStartAttr())
    start = adaptor.getStartAttr().getInt();
  if (dynEnd)
    known = known && (end = staticIndexValue(bounds.back())).has_value();
  else if (adaptor.getEndAttr())
    end = adaptor.getEndAttr().getInt();
  shape[*d] = known ? sliceLength(size, start, end, step) : kDyn;
  return push(types, shape, in.getElementType());
}

LogicalResult inferShapeFor(std::optional<Location> loc, StringRef name,
                            RankedTensorType in, SelectOp::Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  int64_t rank = in.getRank();
  if (rank == 0)
    return emitKTError(loc, name, "cannot select from a rank-0 tensor");
  if (!adaptor.getDimAttr() || !adaptor.getIndexAttr())
    return emitKTError(loc, name, "requires attributes 'dim' and 'index'");
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  int64_t size = in.getDimSize(*d), index = (int64_t)adaptor.getIndex();
  if (!isDyn(size) && (index < -size || index >= size))
    return emitKTError(loc, name, "index ", index,
                       " is out of range for dim ", *d, " of size ", size);
  SmallVector<int64_t> shape(in.getShape());
  shape.erase(shape.begin() + *d);
  return push(types, shape, in.getElementType());
}

//===----------------------------------------------------------------------===//
// concat / stack
//===----------------------------------------------------------------------===//

/// PyTorch's legacy rule: a 1-D tensor of size 0 is skipped by torch.cat.
bool isSkippedCatType(RankedTensorType t) {
  return t.getRank() == 1 && t.getDimSize(0) == 0;
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           ConcatOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = ConcatOp::getOperationName();
  TypeRange tys = adaptor.getTensors().getTypes();
  if (tys.empty())
    return emitKTError(loc, name, "requires at least one operand");
  if (failed(checkSameElementType(tys, loc, name)))
    return failure();
  // The reference operand: the first one that is not a skipped 1-D empty
  // tensor (or the first one if all are).
  int64_t ref = 0;
  for (auto [i, t] : llvm::enumerate(tys))
    if (!isSkippedCatType(tensorOf(t))) {
      ref = i;
      break;
    }
  auto refT = tensorOf(tys[ref]);
  int64_t rank = refT.getRank();
  if (rank == 0)
    return emitKTError(loc, name, "operand #", ref,
                       " has rank 0; rank-0 tensors cannot be concatenated");
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  SmallVector<int64_t> shape(refT.getShape());
  shape[*d] = 0;
  for (auto [i, t] : llvm::enumerate(tys)) {
    auto tt = tensorOf(t);
    if (tt.getRank() != rank) {
      if (isSkippedCatType(tt))
        continue;
      return emitKTError(loc, name, "operand #", i, " has rank ",
                         tt.getRank(), " but operand #", ref, " has rank ",
                         rank);
    }
    for (int64_t k = 0; k < rank; ++k) {
      int64_t s = tt.getDimSize(k);
      if (k == *d) {
        shape[k] = (isDyn(s) || isDyn(shape[k])) ? kDyn : shape[k] + s;
        continue;
      }
      if (isDyn(s))
        continue;
      if (isDyn(shape[k])) {
        shape[k] = s;
        continue;
      }
      if (shape[k] != s)
        return emitKTError(loc, name, "operand #", i, " has size ", s,
                           " at dim ", k, " but an earlier operand has ",
                           shape[k], " (only dim ", *d, " may differ)");
    }
  }
  return push(types, shape, refT.getElementType());
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           StackOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = StackOp::getOperationName();
  TypeRange tys = adaptor.getTensors().getTypes();
  if (tys.empty())
    return emitKTError(loc, name, "requires at least one operand");
  if (failed(checkSameElementType(tys, loc, name)))
    return failure();
  auto first = tensorOf(tys[0]);
  int64_t rank = first.getRank();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, t] : llvm::enumerate(tys)) {
    auto tt = tensorOf(t);
    if (tt.getRank() != rank)
      return emitKTError(loc, name, "operand #", i, " has shape ",
                         shapeToString(tt.getShape()), " but operand #0 has ",
                         shapeToString(first.getShape()),
                         "; stacked tensors must have equal shapes");
    for (int64_t k = 0; k < rank; ++k) {
      int64_t s = tt.getDimSize(k);
      if (isDyn(s))
        continue;
      if (isDyn(shape[k]))
        shape[k] = s;
      else if (shape[k] != s)
        return emitKTError(loc, name, "operand #", i, " has shape ",
                           shapeToString(tt.getShape()),
                           " but operand #0 has ",
                           shapeToString(first.getShape()),
                           "; stacked tensors must have equal shapes");
    }
  }
  FailureOr<int64_t> d =
      normalizeInsertDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  shape.insert(shape.begin() + *d, (int64_t)tys.size());
  return push(types, shape, first.getElementType());
}

//===----------------------------------------------------------------------===//
// gather / index_select
//===----------------------------------------------------------------------===//

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           GatherOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = GatherOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  auto idx = tensorOf(adaptor.getIndex().getType());
  if (!adaptor.getDimAttr())
    return emitKTError(loc, name, "requires attribute 'dim'");
  int64_t rank = in.getRank();
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  int64_t r1 = std::max<int64_t>(rank, 1),
          r2 = std::max<int64_t>(idx.getRank(), 1);
  if (r1 != r2)
    return emitKTError(loc, name, "index has rank ", idx.getRank(),
                       " but self has rank ", rank,
                       " (they must be equal)");
  bool empty = llvm::is_contained(idx.getShape(), 0);
  if (!empty && rank == idx.getRank()) {
    for (int64_t k = 0; k < rank; ++k) {
      int64_t a = idx.getDimSize(k), b = in.getDimSize(k);
      if (k == *d || isDyn(a) || isDyn(b))
        continue;
      if (a > b)
        return emitKTError(loc, name, "index size ", a, " at dim ", k,
                           " exceeds self size ", b, " (index ",
                           shapeToString(idx.getShape()), ", self ",
                           shapeToString(in.getShape()), ", dim ", *d, ")");
    }
  }
  return push(types, idx.getShape(), in.getElementType());
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           ScatterOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = ScatterOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  auto idx = tensorOf(adaptor.getIndex().getType());
  auto src = tensorOf(adaptor.getSrc().getType());
  if (!adaptor.getDimAttr())
    return emitKTError(loc, name, "requires attribute 'dim'");
  int64_t rank = in.getRank();
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  if (src.getElementType() != in.getElementType())
    return emitKTError(loc, name, "src has element type ",
                       src.getElementType(), " but self has ",
                       in.getElementType(), " (they must be equal)");
  ScatterReduce reduce = ScatterReduce::none;
  if (auto r = adaptor.getReduceAttr())
    reduce = r.getValue();
  if (reduce == ScatterReduce::mean && in.getElementType().isInteger(1))
    return emitKTError(loc, name,
                       "reduce = mean needs a numeric element type, not i1");
  auto eff = [](RankedTensorType t) { return std::max<int64_t>(t.getRank(), 1); };
  if (eff(idx) != eff(in))
    return emitKTError(loc, name, "index has rank ", idx.getRank(),
                       " but self has rank ", rank, " (they must be equal)");
  if (eff(src) != eff(in))
    return emitKTError(loc, name, "src has rank ", src.getRank(),
                       " but self has rank ", rank, " (they must be equal)");
  bool empty = llvm::is_contained(idx.getShape(), 0);
  if (!empty) {
    for (int64_t k = 0; k < idx.getRank(); ++k) {
      int64_t a = idx.getDimSize(k);
      if (isDyn(a))
        continue;
      int64_t s = src.getRank() == idx.getRank() ? src.getDimSize(k) : 1;
      if (!isDyn(s) && a > s)
        return emitKTError(loc, name, "index size ", a, " at dim ", k,
                           " exceeds src size ", s, " (index ",
                           shapeToString(idx.getShape()), ", src ",
                           shapeToString(src.getShape()), ")");
      int64_t b = rank == idx.getRank() ? in.getDimSize(k) : 1;
      if (k != *d && !isDyn(b) && a > b)
        return emitKTError(loc, name, "index size ", a, " at dim ", k,
                           " exceeds self size ", b, " (index ",
                           shapeToString(idx.getShape()), ", self ",
                           shapeToString(in.getShape()), ", dim ", *d, ")");
    }
  }
  types.push_back(in);
  return success();
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           IndexSelectOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = IndexSelectOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  auto idx = tensorOf(adaptor.getIndex().getType());
  if (!adaptor.getDimAttr())
    return emitKTError(loc, name, "requires attribute 'dim'");
  int64_t rank = in.getRank();
  FailureOr<int64_t> d =
      normalizeDim((int64_t)adaptor.getDim(), rank, loc, name);
  if (failed(d))
    return failure();
  if (idx.getRank() > 1)
    return emitKTError(loc, name, "index has rank ", idx.getRank(),
                       " (expected 0 or 1)");
  int64_t n = idx.getRank() == 0 ? 1 : idx.getDimSize(0);
  if (rank == 0) {
    if (!isDyn(n) && n != 1)
      return emitKTError(loc, name, "index has ", n,
                         " elements but self has rank 0 (expected 1)");
    return push(types, {}, in.getElementType());
  }
  SmallVector<int64_t> shape(in.getShape());
  shape[*d] = n;
  return push(types, shape, in.getElementType());
}

//===----------------------------------------------------------------------===//
// pad / flip
//===----------------------------------------------------------------------===//

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           PadOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = PadOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  if (!adaptor.getPadAttr())
    return emitKTError(loc, name, "requires attribute 'pad'");
  SmallVector<int64_t> pad = getI64Array(adaptor.getPadAttr());
  int64_t rank = in.getRank();
  if (pad.size() % 2 != 0)
    return emitKTError(loc, name, "pad has ", pad.size(),
                       " entries (expected an even number)");
  if ((int64_t)pad.size() > 2 * rank)
    return emitKTError(loc, name, "pad has ", pad.size(),
                       " entries but self has rank ", rank, " (at most ",
                       2 * rank, ")");
  SmallVector<int64_t> shape(in.getShape());
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    int64_t k = rank - 1 - p;
    if (isDyn(shape[k]))
      continue;
    // Negative amounts crop first (PyTorch narrows, then pads): the crops
    // may not take more than the dim holds, even where the padding of the
    // other side would make up for it ([2, -1] on a dim of size 0).
    int64_t lo = pad[2 * p], hi = pad[2 * p + 1];
    int64_t crop = -std::min<int64_t>(lo, 0) - std::min<int64_t>(hi, 0);
    if (crop > shape[k])
      return emitKTError(loc, name, "dim ", k, " of size ", shape[k],
                         " padded by (", lo, ", ", hi, ") crops ", crop,
                         " elements, more than it holds");
    shape[k] = shape[k] + lo + hi;
  }
  return push(types, shape, in.getElementType());
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           FlipOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = FlipOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  if (!adaptor.getDimsAttr())
    return emitKTError(loc, name, "requires attribute 'dims'");
  if (failed(normalizeDims(getI64Array(adaptor.getDimsAttr()), in.getRank(),
                           loc, name)))
    return failure();
  return push(types, in.getShape(), in.getElementType());
}

LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                           CheckOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  StringRef name = CheckOp::getOperationName();
  auto in = tensorOf(adaptor.getSelf().getType());
  if (!adaptor.getMessageAttr() || adaptor.getMessage().empty())
    return emitKTError(loc, name, "requires a non-empty 'message'");
  return push(types, in.getShape(), in.getElementType());
}

} // namespace

// slice_scatter / select_scatter: the result has the type of `self`; `src`
// has the type that kt.slice / kt.select with the same attributes produce.
static LogicalResult checkScatterSrc(std::optional<Location> loc,
                                     StringRef name, Type part, Type src,
                                     StringRef what) {
  auto p = tensorOf(part), t = tensorOf(src);
  if (p.getElementType() != t.getElementType())
    return emitKTError(loc, name, "src has element type ", t.getElementType(),
                       " but self has ", p.getElementType(),
                       " (insert kt.cast)");
  if (!isCompatibleInferredTypes(TypeRange(p), TypeRange(t)))
    return emitKTError(loc, name, "src has shape ",
                       shapeToString(t.getShape()), " but the ", what,
                       " of self has shape ", shapeToString(p.getShape()));
  return success();
}

static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  SliceScatterOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  StringRef name = SliceScatterOp::getOperationName();
  SliceOp::Properties props;
  props.dim = adaptor.getProperties().dim;
  props.start = adaptor.getProperties().start;
  props.end = adaptor.getProperties().end;
  props.step = adaptor.getProperties().step;
  props.dynamic_start = adaptor.getProperties().dynamic_start;
  props.dynamic_end = adaptor.getProperties().dynamic_end;
  // kt.slice's operands: `self` and the dynamic bounds (not `src`).
  SmallVector<Value> sliceOperands{adaptor.getSelf()};
  llvm::append_range(sliceOperands, adaptor.getBounds());
  SliceOp::Adaptor slice(sliceOperands, DictionaryAttr(), props);
  SmallVector<Type> part;
  auto in = tensorOf(adaptor.getSelf().getType());
  if (failed(inferShapeFor(loc, name, in, slice, part)) ||
      failed(checkScatterSrc(loc, name, part.front(),
                             adaptor.getSrc().getType(), "slice")))
    return failure();
  types.push_back(in);
  return success();
}

static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  SelectScatterOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  StringRef name = SelectScatterOp::getOperationName();
  SelectOp::Properties props;
  props.dim = adaptor.getProperties().dim;
  props.index = adaptor.getProperties().index;
  SelectOp::Adaptor select(adaptor.getOperands(), DictionaryAttr(), props);
  SmallVector<Type> part;
  auto in = tensorOf(adaptor.getSelf().getType());
  if (failed(inferShapeFor(loc, name, in, select, part)) ||
      failed(checkScatterSrc(loc, name, part.front(),
                             adaptor.getSrc().getType(), "selection")))
    return failure();
  types.push_back(in);
  return success();
}

// The ops with a view form (kt.view_*): one shape rule for the value op and
// for the view op's verifier (KTViewInference.h), which passes its own name
// and the ref's tensor type.
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      ReshapeOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  ReshapeOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, ReshapeOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      TransposeOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  TransposeOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, TransposeOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      PermuteOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  PermuteOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, PermuteOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      ExpandOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  ExpandOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, ExpandOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      SqueezeOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  SqueezeOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, SqueezeOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      UnsqueezeOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  UnsqueezeOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, UnsqueezeOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      SliceOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  SliceOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, SliceOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}
LogicalResult kiln::kt::inferViewShape(std::optional<Location> loc,
                                      StringRef name, RankedTensorType in,
                                      SelectOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, name, in, adaptor, types);
}
static LogicalResult inferShapeOp(MLIRContext *, std::optional<Location> loc,
                                  SelectOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  return inferShapeFor(loc, SelectOp::getOperationName(),
                       tensorOf(adaptor.getSelf().getType()), adaptor, types);
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  auto inT = tensorOf(getSelf());
  auto outT = tensorOf(getType());
  // Constant: reshape the elements attribute.
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getSelf()))
    if (outT.hasStaticShape())
      return dense.reshape(outT);
  // Identity: the shape attribute names the input's shape (a -1 standing for
  // its single `?` dim), and the types agree.
  if (inT == outT && inT.hasStaticShape())
    return getSelf();
  if (inT == outT && getSizes().empty()) {
    SmallVector<int64_t> shape = getI64Array(getShapeAttr());
    bool identity = (int64_t)shape.size() == inT.getRank();
    int64_t numDyn = 0;
    for (int64_t d : inT.getShape())
      numDyn += isDyn(d);
    for (size_t i = 0; identity && i < shape.size(); ++i) {
      int64_t d = inT.getDimSize(i);
      identity = isDyn(d) ? (shape[i] == -1 && numDyn == 1) : shape[i] == d;
    }
    if (identity)
      return getSelf();
  }
  // Identity with size operands: each -2 entry is `tensor.dim self, i` at
  // its own position i, the other entries are self's static dims.
  if (inT == outT && !getSizes().empty()) {
    SmallVector<int64_t> shape = getI64Array(getShapeAttr());
    bool identity = (int64_t)shape.size() == inT.getRank();
    size_t next = 0;
    for (size_t i = 0; identity && i < shape.size(); ++i) {
      if (shape[i] == -2) {
        auto dim = getSizes()[next++].getDefiningOp<tensor::DimOp>();
        std::optional<int64_t> at =
            dim ? dim.getConstantIndex() : std::nullopt;
        identity = dim && dim.getSource() == getSelf() && at &&
                   *at == (int64_t)i;
      } else {
        identity = shape[i] == inT.getDimSize(i);
      }
    }
    if (identity)
      return getSelf();
  }
  // reshape(reshape(x)) -> reshape(x): the shape attribute only depends on
  // the element count (size operands are values of their own).
  if (auto inner = getSelf().getDefiningOp<ReshapeOp>()) {
    getSelfMutable().assign(inner.getSelf());
    return getResult();
  }
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto inT = tensorOf(getSelf());
  int64_t rank = inT.getRank();
  auto norm = [&](int64_t d) {
    int64_t b = std::max<int64_t>(rank, 1);
    return d < 0 ? d + b : d;
  };
  int64_t d0 = norm((int64_t)getDim0()), d1 = norm((int64_t)getDim1());
  if (inT == getType() &&
      (d0 == d1 || rank == 0 ||
       (inT.getDimSize(d0) == 1 && inT.getDimSize(d1) == 1)))
    return getSelf();
  // transpose(transpose(x, a, b), a, b) -> x (either order of a, b).
  if (auto inner = getSelf().getDefiningOp<TransposeOp>()) {
    auto xT = tensorOf(inner.getSelf());
    int64_t e0 = norm((int64_t)inner.getDim0()),
            e1 = norm((int64_t)inner.getDim1());
    if (xT == getType() &&
        ((d0 == e0 && d1 == e1) || (d0 == e1 && d1 == e0)))
      return inner.getSelf();
  }
  return {};
}

/// True when permuting a tensor of type `t` by `perm` leaves its data and
/// shape unchanged: the non-unit dims keep their relative order and every
/// dim keeps its size.
static bool isIdentityPermutation(RankedTensorType t, ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (t.getDimSize(p) != t.getDimSize(i))
      return false;
    if (t.getDimSize(p) == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

static SmallVector<int64_t> normalizedPerm(ArrayAttr attr, int64_t rank) {
  SmallVector<int64_t> dims = getI64Array(attr);
  for (int64_t &d : dims)
    if (d < 0)
      d += rank;
  return dims;
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  auto inT = tensorOf(getSelf());
  int64_t rank = inT.getRank();
  SmallVector<int64_t> perm = normalizedPerm(getDimsAttr(), rank);
  if (inT == getType() && isIdentityPermutation(inT, perm))
    return getSelf();
  // permute(permute(x, p), q) -> permute(x, p o q), or x when the composition
  // is the identity.
  if (auto inner = getSelf().getDefiningOp<PermuteOp>()) {
    SmallVector<int64_t> p = normalizedPerm(inner.getDimsAttr(), rank);
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(p[q]);
    Value x = inner.getSelf();
    if (llvm::equal(composed, llvm::seq<int64_t>(0, rank)) &&
        tensorOf(x) == getType())
      return x;
    getSelfMutable().assign(x);
    setDimsAttr(Builder(getContext()).getI64ArrayAttr(composed));
    return getResult();
  }
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  auto inT = tensorOf(getSelf());
  if (inT != getType())
    return {};
  SmallVector<int64_t> size = getI64Array(getSizeAttr());
  if ((int64_t)size.size() != inT.getRank())
    return {};
  for (auto [s, d] : llvm::zip(size, inT.getShape()))
    if (s != -1 && (isDyn(d) || s != d))
      return {};
  return getSelf();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/KT/IR/KTShapeOps.cpp.inc"
