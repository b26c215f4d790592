//===- Shape.cpp - kt shape and creation ops to tensor/linalg -------------===//
//
// Part of Kiln. reshape is collapse-to-1-D then expand (views after
// bufferization); transpose/permute are linalg.transpose; expand is a
// broadcasting copy; squeeze/unsqueeze are collapse/expand_shape; slice and
// select are tensor.extract_slice (Python slice rules, computed at run time
// for `?` dims); concat is insert_slices into one tensor.empty; pad is a
// crop (extract_slice) then tensor.pad; flip is a generic reading the input
// with tensor.extract at mirrored indices. constant, full and arange become
// arith.constant, linalg.fill and an index-based generic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/KTToLinalg.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace {

/// `v` with the size-1 dims `unitDims` (sorted, of `v`) removed.
Value removeUnitDims(OpBuilder &b, Location loc, Value v, RankedTensorType type,
                     ArrayRef<int64_t> unitDims) {
  auto src = cast<RankedTensorType>(v.getType());
  if (unitDims.empty())
    return castTo(b, loc, v, type);
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  if (src.getRank() > (int64_t)unitDims.size()) {
    ReassociationIndices current;
    int64_t kept = 0, nKept = src.getRank() - unitDims.size();
    for (int64_t i = 0; i < src.getRank(); ++i) {
      current.push_back(i);
      if (!llvm::is_contained(unitDims, i)) {
        shape.push_back(src.getDimSize(i));
        if (++kept < nKept) {
          groups.push_back(current);
          current.clear();
        }
      }
    }
    groups.push_back(current);
  }
  Value r = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, src.getElementType()), v, groups);
  return castTo(b, loc, r, type);
}

struct ReshapeLowering : public OpConversionPattern<kt::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ReshapeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    Type elem = xt.getElementType();
    if (xt == rt) {
      rw.replaceOp(op, x);
      return success();
    }
    // To 1-D.
    Value flat;
    if (xt.getRank() == 0) {
      flat = tensor::ExpandShapeOp::create(
          rw, loc, RankedTensorType::get({1}, elem), x,
          ArrayRef<ReassociationIndices>{},
          ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
    } else if (llvm::is_contained(xt.getShape(), 0)) {
      // A static 0 among `?` dims: no elements. An empty 1-D tensor, not a
      // collapse_shape (canonicalized to a static 0 result of a group with
      // `?` dims, which memref.collapse_shape rejects after bufferization).
      int64_t n =
          xt.hasStaticShape() ? xt.getNumElements() : ShapedType::kDynamic;
      flat = castTo(rw, loc,
                    tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{0},
                                            elem),
                    RankedTensorType::get({n}, elem));
    } else {
      ReassociationIndices all;
      for (int64_t i = 0; i < xt.getRank(); ++i)
        all.push_back(i);
      int64_t n =
          xt.hasStaticShape() ? xt.getNumElements() : ShapedType::kDynamic;
      flat = tensor::CollapseShapeOp::create(
          rw, loc, RankedTensorType::get({n}, elem), x,
          ArrayRef<ReassociationIndices>{all});
    }
    // The size operands (-2 entries), in order.
    ValueRange sizeOps = adaptor.getSizes();
    // The product of the entries other than -1: static entries folded into
    // `prod`, the size operands multiplied in at run time.
    int64_t prod = 1;
    bool infer = false;
    Value prodV;
    {
      size_t next = 0;
      for (auto a : op.getShape()) {
        int64_t sz = cast<IntegerAttr>(a).getInt();
        if (sz == -1)
          infer = true;
        else if (sz == -2)
          prodV = prodV ? arith::MulIOp::create(rw, loc, prodV, sizeOps[next++])
                              .getResult()
                        : sizeOps[next++];
        else
          prod *= sz;
      }
      if (prodV && prod != 1)
        prodV = arith::MulIOp::create(rw, loc, prodV, indexConst(rw, loc, prod));
    }
    if (!xt.hasStaticShape() || prodV) {
      // The element count against the target shape (the interpreter's
      // messages); a failed check goes on with a zero 1-D tensor of a valid
      // count.
      SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
      Value n = indexConst(rw, loc, 1);
      for (OpFoldResult sz : xs)
        n = arith::MulIOp::create(rw, loc, n, indexValue(rw, loc, sz));
      std::string shapeText = "[";
      for (auto [i, a] : llvm::enumerate(op.getShape())) {
        int64_t sz = cast<IntegerAttr>(a).getInt();
        shapeText += (i ? ", " : "") + (sz == -2 ? std::string("?")
                                                 : std::to_string(sz));
      }
      shapeText += "]";
      SmallVector<Value> values;
      std::string text = "cannot reshape tensor of shape " +
                         shapeTemplate(xt.getShape(), xs, values);
      std::string nText = "?";
      if (values.size() < kRuntimeErrorValues) {
        nText = "{" + std::to_string(values.size()) + "}";
        values.push_back(n);
      }
      text += " (" + nText + " elements) into shape " + shapeText;
      Value bad, safeN;
      Value zero = indexConst(rw, loc, 0);
      if (infer && prodV) {
        std::string pText = "?";
        if (values.size() < kRuntimeErrorValues) {
          pText = "{" + std::to_string(values.size()) + "}";
          values.push_back(prodV);
        }
        text += ": " + nText + " is not divisible by " + pText;
        Value isZero = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq,
                                             prodV, zero);
        Value div = arith::SelectOp::create(rw, loc, isZero,
                                            indexConst(rw, loc, 1), prodV);
        Value rem = arith::RemUIOp::create(rw, loc, n, div);
        Value remBad = arith::CmpIOp::create(
            rw, loc, arith::CmpIPredicate::ne, rem, zero);
        bad = arith::OrIOp::create(rw, loc, isZero, remBad);
        safeN = arith::SelectOp::create(
            rw, loc, isZero, zero,
            arith::SubIOp::create(rw, loc, n, rem).getResult());
      } else if (infer) {
        text += ": " + nText + " is not divisible by " + std::to_string(prod);
        if (prod == 0) {
          bad = arith::ConstantOp::create(rw, loc, rw.getBoolAttr(true));
          safeN = indexConst(rw, loc, 0);
        } else {
          Value rem = arith::RemUIOp::create(rw, loc, n, indexConst(rw, loc, prod));
          bad = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ne, rem,
                                      indexConst(rw, loc, 0));
          safeN = arith::SubIOp::create(rw, loc, n, rem);
        }
      } else {
        Value target = prodV ? prodV : indexConst(rw, loc, prod);
        if (prodV && values.size() < kRuntimeErrorValues) {
          text += " ({" + std::to_string(values.size()) + "} elements)";
          values.push_back(prodV);
        }
        bad = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ne, n,
                                    target);
        safeN = target;
      }
      if (checkAtRunTime(rw, loc, bad, text, values))
        flat = castTo(
            rw, loc,
            safeOperand(rw, loc, flat, bad,
                        {arith::SelectOp::create(rw, loc, bad, safeN, n)
                             .getResult()}),
            flat.getType());
    }
    if (rt.getRank() == 0) {
      flat = castTo(rw, loc, flat, RankedTensorType::get({1}, elem));
      rw.replaceOp(op,
                   tensor::CollapseShapeOp::create(
                       rw, loc, rt, flat, ArrayRef<ReassociationIndices>{}));
      return success();
    }
    // The 1-D tensor's static size must agree with the result's.
    int64_t n =
        rt.hasStaticShape() ? rt.getNumElements() : ShapedType::kDynamic;
    flat = castTo(rw, loc, flat, RankedTensorType::get({n}, elem));
    // Output sizes: attribute entries, -1 inferred from the element count.
    // -2 entries are the size operands (or the result type's static size).
    SmallVector<OpFoldResult> sizes;
    int64_t known = 1;
    int64_t inferAt = -1;
    size_t nextSize = 0;
    for (auto [i, a] : llvm::enumerate(op.getShape())) {
      int64_t s = cast<IntegerAttr>(a).getInt();
      if (s == -1) {
        inferAt = i;
        sizes.push_back(OpFoldResult());
      } else if (s == -2) {
        Value v = sizeOps[nextSize++];
        sizes.push_back(ShapedType::isDynamic(rt.getDimSize(i))
                            ? OpFoldResult(v)
                            : OpFoldResult(rw.getIndexAttr(rt.getDimSize(i))));
      } else {
        known *= s;
        sizes.push_back(rw.getIndexAttr(s));
      }
    }
    if (inferAt >= 0) {
      if (!ShapedType::isDynamic(rt.getDimSize(inferAt))) {
        sizes[inferAt] = rw.getIndexAttr(rt.getDimSize(inferAt));
      } else {
        Value numel = tensor::DimOp::create(rw, loc, flat, 0);
        Value div = indexConst(rw, loc, known ? known : 1);
        if (prodV) {
          // The run-time product (a zero one failed the check above).
          Value isZero = arith::CmpIOp::create(
              rw, loc, arith::CmpIPredicate::eq, prodV,
              indexConst(rw, loc, 0));
          div = arith::SelectOp::create(rw, loc, isZero,
                                        indexConst(rw, loc, 1), prodV);
        }
        sizes[inferAt] =
            arith::DivUIOp::create(rw, loc, numel, div).getResult();
      }
    }
    if (rt.getNumDynamicDims() > 1) {
      // Several `?` result dims: tensor.reshape with a shape tensor (a
      // memref.expand_shape into several `?` dims crashes MLIR 22's
      // expand-strided-metadata, see TileAndVectorize.cpp).
      SmallVector<Value> sizeValues;
      for (OpFoldResult sz : sizes)
        sizeValues.push_back(indexValue(rw, loc, sz));
      Value shapeT = tensor::FromElementsOp::create(
          rw, loc, RankedTensorType::get({rt.getRank()}, rw.getIndexType()),
          sizeValues);
      rw.replaceOp(op, tensor::ReshapeOp::create(rw, loc, rt, flat, shapeT));
      return success();
    }
    ReassociationIndices all;
    for (int64_t i = 0; i < rt.getRank(); ++i)
      all.push_back(i);
    rw.replaceOp(
        op, tensor::ExpandShapeOp::create(
                rw, loc, rt, flat, ArrayRef<ReassociationIndices>{all}, sizes));
    return success();
  }
};

Value permute(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm,
              RankedTensorType rt) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= (int64_t)i == p;
  if (identity)
    return castTo(b, loc, x, rt);
  SmallVector<OpFoldResult> xs = getSizes(b, loc, x);
  SmallVector<OpFoldResult> sizes;
  for (int64_t p : perm)
    sizes.push_back(xs[p]);
  Value init = emptyLike(b, loc, rt, sizes);
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

struct TransposeLowering : public OpConversionPattern<kt::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = rt.getRank();
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    if (rank > 0)
      std::swap(perm[kt::wrapDim(op.getDim0(), rank)],
                perm[kt::wrapDim(op.getDim1(), rank)]);
    rw.replaceOp(op, permute(rw, op.getLoc(), adaptor.getSelf(), perm, rt));
    return success();
  }
};

struct PermuteLowering : public OpConversionPattern<kt::PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::PermuteOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<int64_t> perm;
    for (Attribute a : op.getDims())
      perm.push_back(kt::wrapDim(cast<IntegerAttr>(a).getInt(), rt.getRank()));
    rw.replaceOp(op, permute(rw, op.getLoc(), adaptor.getSelf(), perm, rt));
    return success();
  }
};

struct ExpandLowering : public OpConversionPattern<kt::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    int64_t lead = rt.getRank() - xt.getRank();
    SmallVector<OpFoldResult> sizes;
    for (auto [j, a] : llvm::enumerate(op.getSize())) {
      int64_t s = cast<IntegerAttr>(a).getInt();
      int64_t i = (int64_t)j - lead;
      if (s == -1 && i >= 0)
        sizes.push_back(xs[i]);
      else
        sizes.push_back(rw.getIndexAttr(s));
      // Only size-1 dims expand (a `?` dim is checked at run time; a
      // failed check goes on with zeros: broadcastDynamicDims).
      if (s != -1 && i >= 0 && xt.isDynamicDim(i)) {
        Value bad = boolAnd(
            rw, loc, indexCmp(rw, loc, arith::CmpIPredicate::ne, xs[i],
                              rw.getIndexAttr(s)),
            indexCmp(rw, loc, arith::CmpIPredicate::ne, xs[i],
                     rw.getIndexAttr(1)));
        checkAtRunTime(rw, loc, bad,
                       "dim " + std::to_string(i) +
                           " of self has size {0} at run time and cannot be "
                           "expanded to " +
                           std::to_string(s) + " (only size-1 dims expand)",
                       {getValueOrCreateConstantIndexOp(rw, loc, xs[i])});
      }
    }
    checkResultShape(rw, loc, 0, rt, sizes);
    rw.replaceOp(op, broadcastTo(rw, loc, x, rt, sizes));
    return success();
  }
};

struct SqueezeLowering : public OpConversionPattern<kt::SqueezeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::SqueezeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<int64_t> units;
    for (int64_t i = 0; i < xt.getRank(); ++i) {
      bool listed = true;
      if (std::optional<ArrayAttr> dims = op.getDim()) {
        listed = false;
        for (Attribute a : *dims)
          listed |=
              kt::wrapDim(cast<IntegerAttr>(a).getInt(), xt.getRank()) == i;
      }
      if (listed && xt.getDimSize(i) == 1)
        units.push_back(i);
      // A listed `?` dim of size 1 is an error (the result type keeps it).
      if (listed && xt.isDynamicDim(i))
        checkAtRunTime(
            rw, op.getLoc(),
            arith::CmpIOp::create(
                rw, op.getLoc(), arith::CmpIPredicate::eq,
                tensor::DimOp::create(rw, op.getLoc(), x, i),
                arith::ConstantIndexOp::create(rw, op.getLoc(), 1)),
            "dynamic dim " + std::to_string(i) +
                " has size 1 at run time; kt.squeeze keeps `?` dims in its "
                "result type, so it cannot squeeze it as PyTorch would "
                "(make the dim static or use kt.reshape)",
            {});
    }
    rw.replaceOp(op, removeUnitDims(rw, op.getLoc(), x, rt, units));
    return success();
  }
};

struct UnsqueezeLowering : public OpConversionPattern<kt::UnsqueezeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::UnsqueezeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t d = op.getDim();
    if (d < 0)
      d += rt.getRank();
    rw.replaceOp(op,
                 insertUnitDims(rw, op.getLoc(), adaptor.getSelf(), rt, {d}));
    return success();
  }
};

/// Python's slice index normalization: v < 0 counts from the end, then
/// clamped to [0, n].
Value normalizeSliceIndex(OpBuilder &b, Location loc, int64_t v, Value n) {
  Value c = indexConst(b, loc, v < 0 ? -v : v);
  Value r;
  if (v < 0) {
    // max(n - |v|, 0) without unsigned wrap: n >= |v| ? n - |v| : 0.
    Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, n, c);
    r = arith::SelectOp::create(b, loc, ge, arith::SubIOp::create(b, loc, n, c),
                                indexConst(b, loc, 0));
  } else {
    r = arith::MinSIOp::create(b, loc, c, n);
  }
  return r;
}

/// The window of x[..., start:end:step, ...] along dim `d` as the offsets,
/// sizes and strides of a tensor.extract_slice / insert_slice. `len` is the
/// static length of the window when known (else `?`).
struct SliceWindow {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
/// The window of all of `x`.
SliceWindow wholeWindow(OpBuilder &rw, Location loc, Value x) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SliceWindow w;
  w.sizes = getSizes(rw, loc, x);
  w.offsets.assign(rank, rw.getIndexAttr(0));
  w.strides.assign(rank, rw.getIndexAttr(1));
  return w;
}
/// `v` (an index value, signed) with the Python slice rules on a dim of size
/// `n`: v < 0 counts from the end, then clamped to [0, n].
Value normalizeSliceIndex(OpBuilder &b, Location loc, Value v, Value n) {
  Value zero = indexConst(b, loc, 0);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, neg, arith::AddIOp::create(b, loc, v, n), v);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, wrapped, zero), n);
}

SliceWindow sliceWindow(OpBuilder &rw, Location loc, Value x, int64_t d,
                        std::optional<int64_t> startAttr,
                        std::optional<int64_t> endAttr, int64_t step,
                        int64_t len, Value startVal = {},
                        Value endVal = {}) {
  auto xt = cast<RankedTensorType>(x.getType());
  SliceWindow w = wholeWindow(rw, loc, x);
  if (!ShapedType::isDynamic(len) && !xt.isDynamicDim(d) && !startVal &&
      !endVal) {
    // Static: fold the Python rules here.
    int64_t n = xt.getDimSize(d);
    auto norm = [&](int64_t v) {
      if (v < 0)
        v += n;
      return std::clamp<int64_t>(v, 0, n);
    };
    int64_t start = norm(startAttr.value_or(0));
    // An empty slice starts at 0 so the offset stays in bounds.
    w.offsets[d] = rw.getIndexAttr(len == 0 ? 0 : start);
    w.sizes[d] = rw.getIndexAttr(len);
    w.strides[d] = rw.getIndexAttr(step);
    return w;
  }
  Value n = indexValue(rw, loc, w.sizes[d]);
  Value start = startVal    ? normalizeSliceIndex(rw, loc, startVal, n)
                : startAttr ? normalizeSliceIndex(rw, loc, *startAttr, n)
                            : indexConst(rw, loc, 0);
  Value end = endVal    ? normalizeSliceIndex(rw, loc, endVal, n)
              : endAttr ? normalizeSliceIndex(rw, loc, *endAttr, n)
                        : n;
  // len = end > start ? ceil((end - start) / step) : 0.
  Value diff = arith::SubIOp::create(rw, loc, end, start);
  Value dynLen = arith::CeilDivSIOp::create(rw, loc, diff, indexConst(rw, loc, step));
  Value pos =
      arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sgt, end, start);
  dynLen = arith::SelectOp::create(rw, loc, pos, dynLen, indexConst(rw, loc, 0));
  // An empty slice starts at 0 so the offset stays in bounds.
  start = arith::SelectOp::create(rw, loc, pos, start, indexConst(rw, loc, 0));
  w.offsets[d] = start;
  w.sizes[d] = dynLen;
  w.strides[d] = rw.getIndexAttr(step);
  return w;
}

/// The window of x[..., index, ...] along dim `d` (a negative `index` counts
/// from the end): size 1 at dim `d`, to be dropped by the user.
SliceWindow selectWindow(OpBuilder &rw, Location loc, Value x, int64_t d,
                         int64_t index) {
  auto xt = cast<RankedTensorType>(x.getType());
  SliceWindow w = wholeWindow(rw, loc, x);
  if (index >= 0)
    w.offsets[d] = rw.getIndexAttr(index);
  else if (!xt.isDynamicDim(d))
    w.offsets[d] = rw.getIndexAttr(index + xt.getDimSize(d));
  else
    w.offsets[d] = arith::AddIOp::create(rw, loc,
                                         indexValue(rw, loc, w.sizes[d]),
                                         indexConst(rw, loc, index))
                       .getResult();
  w.sizes[d] = rw.getIndexAttr(1);
  return w;
}

/// tensor.extract_slice, or a tensor.empty of the slice's sizes when the
/// source or the slice is statically empty: MLIR 22's verifier rejects any
/// static offset into a source dim of size 0.
static Value extractSlice(OpBuilder &b, Location loc, Value x,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes,
                          ArrayRef<OpFoldResult> strides) {
  auto xt = cast<RankedTensorType>(x.getType());
  bool empty = llvm::is_contained(xt.getShape(), 0) ||
               llvm::any_of(sizes, [](OpFoldResult s) {
                 std::optional<int64_t> c = getConstantIntValue(s);
                 return c && *c == 0;
               });
  if (empty)
    return tensor::EmptyOp::create(b, loc, sizes, xt.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
}

struct SliceLowering : public OpConversionPattern<kt::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t d = kt::wrapDim(op.getDim(), xt.getRank());
    // Dynamic bounds (`bounds` operands, the start first) are index values
    // normalized at run time like the attributes.
    ValueRange dyn = adaptor.getBounds();
    Value startVal = op.getDynamicStart() ? dyn.front() : Value();
    Value endVal = op.getDynamicEnd() ? dyn.back() : Value();
    SliceWindow w = sliceWindow(rw, loc, x, d, op.getStart(), op.getEnd(),
                                op.getStep(), rt.getDimSize(d), startVal,
                                endVal);
    Value r = extractSlice(rw, loc, x, w.offsets, w.sizes, w.strides);
    rw.replaceOp(op, castTo(rw, loc, r, rt));
    return success();
  }
};

/// The type a tensor.insert_slice source must have for `sizes` (static where
/// a size is constant), without the dims in `dropped`.
RankedTensorType windowType(ArrayRef<OpFoldResult> sizes, Type elem,
                            ArrayRef<int64_t> dropped = {}) {
  SmallVector<int64_t> shape;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    if (llvm::is_contained(dropped, (int64_t)i))
      continue;
    std::optional<int64_t> c = getConstantIntValue(s);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  return RankedTensorType::get(shape, elem);
}

/// `src` inserted into `x` at the window `w` (tensor.insert_slice), or `x`
/// itself where the run-time check `failed` (null: none) is true: a failed
/// scatter never writes outside self.
static Value insertWindow(OpBuilder &b, Location loc, Value src, Value x,
                          const SliceWindow &w, Value failed) {
  // An empty self (a static 0 dim) has nothing to write: x itself. (MLIR
  // 22's tensor.insert_slice verifier rejects any static offset into a
  // 0-size dim, "offset 0 is out-of-bounds: 0 >= 0", even for an empty
  // slice.)
  if (llvm::is_contained(cast<RankedTensorType>(x.getType()).getShape(), 0))
    return x;
  auto insert = [&](OpBuilder &ib, Location il) -> Value {
    return tensor::InsertSliceOp::create(ib, il, src, x, w.offsets, w.sizes,
                                         w.strides);
  };
  if (!failed)
    return insert(b, loc);
  return scf::IfOp::create(
             b, loc, failed,
             [&](OpBuilder &tb, Location tl) { scf::YieldOp::create(tb, tl, x); },
             [&](OpBuilder &eb, Location el) {
               scf::YieldOp::create(eb, el, insert(eb, el));
             })
      .getResult(0);
}

struct SliceScatterLowering : public OpConversionPattern<kt::SliceScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::SliceScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf(), src = adaptor.getSrc();
    auto xt = cast<RankedTensorType>(x.getType());
    auto st = cast<RankedTensorType>(src.getType());
    int64_t d = kt::wrapDim(op.getDim(), xt.getRank());
    ValueRange dyn = adaptor.getBounds();
    Value startVal = op.getDynamicStart() ? dyn.front() : Value();
    Value endVal = op.getDynamicEnd() ? dyn.back() : Value();
    SliceWindow w = sliceWindow(rw, loc, x, d, op.getStart(), op.getEnd(),
                                op.getStep(), st.getDimSize(d), startVal,
                                endVal);
    // src must have the window's shape at run time (the interpreter's
    // message); a failed check leaves self unchanged (no insert).
    SmallVector<OpFoldResult> ss = getSizes(rw, loc, src);
    Value bad;
    for (int64_t k = 0; k < st.getRank(); ++k)
      bad = boolOr(rw, loc, bad,
                   indexCmp(rw, loc, arith::CmpIPredicate::ne, ss[k],
                            w.sizes[k]));
    SmallVector<Value> values;
    std::string text =
        "src has shape " + shapeTemplate(st.getShape(), ss, values) +
        " but the slice of self has shape " +
        shapeTemplate(SmallVector<int64_t>(st.getRank(), ShapedType::kDynamic),
                      w.sizes, values) +
        " at run time";
    bool checked = bad && checkAtRunTime(rw, loc, bad, text, values);
    Value s = castTo(rw, loc, src, windowType(w.sizes, xt.getElementType()));
    Value r = insertWindow(rw, loc, s, x, w, checked ? bad : Value());
    rw.replaceOp(op, castTo(rw, loc, r, op.getResult().getType()));
    return success();
  }
};

/// The run-time check of a select index against a `?` dim of `size` (the
/// interpreter's message, then `suffix`): the failed flag, or null when the
/// check folds away.
Value checkIndexInDim(OpBuilder &b, Location loc, OpFoldResult size,
                      int64_t index, int64_t d, StringRef suffix) {
  Value sz = indexValue(b, loc, size);
  int64_t need = index >= 0 ? index + 1 : -index;
  Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, sz,
                                    indexConst(b, loc, need));
  if (!checkAtRunTime(b, loc, bad,
                      "index " + std::to_string(index) +
                          " is out of range for dim " + std::to_string(d) +
                          " of size {0}" + suffix.str(),
                      {sz}))
    return Value();
  return bad;
}

struct SelectScatterLowering
    : public OpConversionPattern<kt::SelectScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::SelectScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf(), src = adaptor.getSrc();
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t d = kt::wrapDim(op.getDim(), xt.getRank());
    int64_t index = op.getIndex();
    SliceWindow w = selectWindow(rw, loc, x, d, index);
    // Run-time checks (the interpreter's messages): the index against a
    // `?` dim, then src against the selection's shape; a failed one leaves
    // self unchanged (no insert).
    Value failed;
    SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
    if (xt.isDynamicDim(d))
      failed = checkIndexInDim(rw, loc, xs[d], index, d, " at run time");
    {
      auto st = cast<RankedTensorType>(src.getType());
      SmallVector<OpFoldResult> ss = getSizes(rw, loc, src);
      SmallVector<OpFoldResult> part(xs);
      part.erase(part.begin() + d);
      Value bad;
      for (int64_t k = 0; k < st.getRank(); ++k)
        bad = boolOr(rw, loc, bad,
                     indexCmp(rw, loc, arith::CmpIPredicate::ne, ss[k],
                              part[k]));
      SmallVector<Value> values;
      std::string text =
          "src has shape " + shapeTemplate(st.getShape(), ss, values) +
          " but the selection of self has shape " +
          shapeTemplate(
              SmallVector<int64_t>(st.getRank(), ShapedType::kDynamic), part,
              values) +
          " at run time";
      if (bad && checkAtRunTime(rw, loc, bad, text, values))
        failed = boolOr(rw, loc, failed, bad);
    }
    // The source lacks dim d: a rank-reducing insert.
    Value s =
        castTo(rw, loc, src, windowType(w.sizes, xt.getElementType(), {d}));
    Value r = insertWindow(rw, loc, s, x, w, failed);
    rw.replaceOp(op, castTo(rw, loc, r, op.getResult().getType()));
    return success();
  }
};

struct SelectLowering : public OpConversionPattern<kt::SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::SelectOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t d = kt::wrapDim(op.getDim(), xt.getRank());
    int64_t index = op.getIndex();
    if (xt.isDynamicDim(d)) {
      // The index against a `?` dim (the interpreter's message); a failed
      // check goes on with a zero operand just large enough.
      SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
      if (Value bad = checkIndexInDim(rw, loc, xs[d], index, d, "")) {
        int64_t need = index >= 0 ? index + 1 : -index;
        xs[d] = arith::SelectOp::create(rw, loc, bad,
                                        indexConst(rw, loc, need),
                                        indexValue(rw, loc, xs[d]))
                    .getResult();
        x = castTo(rw, loc, safeOperand(rw, loc, x, bad, xs), xt);
      }
    }
    SliceWindow w = selectWindow(rw, loc, x, d, index);
    Value r = extractSlice(rw, loc, x, w.offsets, w.sizes, w.strides);
    rw.replaceOp(op, removeUnitDims(rw, loc, r, rt, {d}));
    return success();
  }
};

struct ConcatLowering : public OpConversionPattern<kt::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ConcatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = rt.getRank();
    int64_t d = kt::wrapDim(op.getDim(), rank);
    // PyTorch ignores 1-D empty operands of another rank.
    SmallVector<Value> parts;
    // Statically empty parts add nothing (and an insert at offset == size
    // does not verify); if all are empty, every offset is 0.
    SmallVector<Value> ranked;
    for (Value v : adaptor.getTensors()) {
      auto vt = cast<RankedTensorType>(v.getType());
      if (vt.getRank() != rank)
        continue;
      ranked.push_back(v);
      if (vt.getDimSize(d) != 0)
        parts.push_back(v);
    }
    if (parts.empty())
      parts = ranked;
    // Operands must agree in every dim but `dim` at run time (the
    // interpreter's message, against the first operand); a failed check
    // goes on with a zero operand of the first one's sizes there.
    if (!ranked.empty()) {
      Value ref = ranked.front();
      auto refType = cast<RankedTensorType>(ref.getType());
      SmallVector<OpFoldResult> refSizes = getSizes(rw, loc, ref);
      DenseMap<Value, Value> safe;
      for (Value v : ranked) {
        auto vt = cast<RankedTensorType>(v.getType());
        SmallVector<OpFoldResult> vs = getSizes(rw, loc, v);
        Value anyBad;
        for (int64_t k = 0; k < rank; ++k) {
          if (k == d)
            continue;
          Value bad =
              indexCmp(rw, loc, arith::CmpIPredicate::ne, vs[k], refSizes[k]);
          if (matchPattern(bad, m_Zero()))
            continue;
          SmallVector<Value> values;
          std::string text =
              "operand shapes " +
              shapeTemplate(refType.getShape(), refSizes, values) + " and " +
              shapeTemplate(vt.getShape(), vs, values) + " differ at dim " +
              std::to_string(k) + " at run time (only dim " +
              std::to_string(d) + " may differ)";
          checkAtRunTime(rw, loc, bad, text, values);
          anyBad = boolOr(rw, loc, anyBad, bad);
        }
        if (anyBad) {
          SmallVector<OpFoldResult> ss = refSizes;
          ss[d] = vs[d];
          safe[v] = safeOperand(rw, loc, v, anyBad, ss);
        }
      }
      for (Value &v : parts)
        if (Value s = safe.lookup(v))
          v = s;
    }
    // Offsets along `dim` stay constants while the sizes are static.
    auto addSize = [&](OpFoldResult acc, Value v) -> OpFoldResult {
      auto vt = cast<RankedTensorType>(v.getType());
      std::optional<int64_t> a = getConstantIntValue(acc);
      if (a && !vt.isDynamicDim(d))
        return rw.getIndexAttr(*a + vt.getDimSize(d));
      return arith::AddIOp::create(rw, loc, indexValue(rw, loc, acc),
                                   tensor::DimOp::create(rw, loc, v, d))
          .getResult();
    };
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, parts.front());
    OpFoldResult total = rw.getIndexAttr(0);
    for (Value v : parts)
      total = addSize(total, v);
    sizes[d] = total;
    Value out = emptyLike(rw, loc, rt, sizes);
    // A statically empty result has nothing to insert (and inserts into a
    // dim of size 0 do not verify).
    if (llvm::is_contained(rt.getShape(), 0)) {
      rw.replaceOp(op, out);
      return success();
    }
    OpFoldResult offset = rw.getIndexAttr(0);
    for (Value v : parts) {
      SmallVector<OpFoldResult> offs(rank, rw.getIndexAttr(0));
      offs[d] = offset;
      SmallVector<OpFoldResult> vs = getSizes(rw, loc, v);
      SmallVector<OpFoldResult> strides(rank, rw.getIndexAttr(1));
      out = tensor::InsertSliceOp::create(rw, loc, v, out, offs, vs, strides);
      offset = addSize(offset, v);
    }
    rw.replaceOp(op, out);
    return success();
  }
};

struct PadLowering : public OpConversionPattern<kt::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::PadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = xt.getRank();
    SmallVector<int64_t> lo(rank, 0), hi(rank, 0);
    SmallVector<int64_t> pad;
    for (Attribute a : op.getPad())
      pad.push_back(cast<IntegerAttr>(a).getInt());
    for (size_t k = 0; k + 1 < pad.size(); k += 2) {
      int64_t dim = rank - 1 - k / 2;
      lo[dim] = pad[k];
      hi[dim] = pad[k + 1];
    }
    // A `?` dim whose negative amounts crop more than it holds is a
    // run-time error (the interpreter's message; crops come first, so
    // [2, -1] on an empty dim fails too); a failed check goes on with a
    // zero operand just large enough to crop.
    {
      SmallVector<OpFoldResult> xs = getSizes(rw, loc, x);
      SmallVector<OpFoldResult> safe = xs;
      Value anyBad;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t need = std::max<int64_t>(-lo[i], 0) + std::max<int64_t>(-hi[i], 0);
        if (!xt.isDynamicDim(i) || need == 0)
          continue;
        Value size = getValueOrCreateConstantIndexOp(rw, loc, xs[i]);
        Value bad = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt,
                                          size, indexConst(rw, loc, need));
        checkAtRunTime(rw, loc, bad,
                       "dim " + std::to_string(i) + " of size {0} padded by (" +
                           std::to_string(lo[i]) + ", " + std::to_string(hi[i]) +
                           ") crops " + std::to_string(need) +
                           " elements, more than it holds at run time",
                       {size});
        safe[i] = arith::SelectOp::create(rw, loc, bad, indexConst(rw, loc, need), size)
                      .getResult();
        anyBad = boolOr(rw, loc, anyBad, bad);
      }
      if (anyBad)
        x = castTo(rw, loc, safeOperand(rw, loc, x, anyBad, safe), xt);
    }
    // Crop negative amounts.
    bool crop = llvm::any_of(lo, [](int64_t v) { return v < 0; }) ||
                llvm::any_of(hi, [](int64_t v) { return v < 0; });
    if (crop) {
      SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
      SmallVector<OpFoldResult> offs(rank, rw.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(rank, rw.getIndexAttr(1));
      for (int64_t i = 0; i < rank; ++i) {
        int64_t cl = std::max<int64_t>(-lo[i], 0),
                ch = std::max<int64_t>(-hi[i], 0);
        if (!cl && !ch)
          continue;
        offs[i] = rw.getIndexAttr(cl);
        if (!xt.isDynamicDim(i))
          sizes[i] = rw.getIndexAttr(xt.getDimSize(i) - cl - ch);
        else
          sizes[i] = arith::SubIOp::create(rw, loc, indexValue(rw, loc, sizes[i]),
                                           indexConst(rw, loc, cl + ch))
                         .getResult();
      }
      x = extractSlice(rw, loc, x, offs, sizes, strides);
    }
    SmallVector<OpFoldResult> low, high;
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(rw.getIndexAttr(std::max<int64_t>(lo[i], 0)));
      high.push_back(rw.getIndexAttr(std::max<int64_t>(hi[i], 0)));
    }
    Value value = scalarConst(rw, loc, xt.getElementType(),
                              op.getValue().convertToDouble());
    if (xt.getElementType().isInteger(1))
      value = scalarConst(rw, loc, xt.getElementType(),
                          op.getValue().convertToDouble() != 0);
    // A statically empty source: the result is all padding (tensor.pad of
    // it would insert an empty slice past the end of a dim, which does not
    // verify).
    auto cropped = cast<RankedTensorType>(x.getType());
    if (llvm::is_contained(cropped.getShape(), 0)) {
      SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
      SmallVector<int64_t> shape;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t extra = std::max<int64_t>(lo[i], 0) + std::max<int64_t>(hi[i], 0);
        if (!cropped.isDynamicDim(i)) {
          sizes[i] = rw.getIndexAttr(cropped.getDimSize(i) + extra);
          shape.push_back(cropped.getDimSize(i) + extra);
        } else {
          sizes[i] = arith::AddIOp::create(rw, loc, indexValue(rw, loc, sizes[i]),
                                           indexConst(rw, loc, extra))
                         .getResult();
          shape.push_back(ShapedType::kDynamic);
        }
      }
      Value r = filled(rw, loc,
                       RankedTensorType::get(shape, xt.getElementType()),
                       sizes, value);
      rw.replaceOp(op, castTo(rw, loc, r, rt));
      return success();
    }
    Value r = tensor::PadOp::create(rw, loc, Type(), x, low, high, value);
    rw.replaceOp(op, castTo(rw, loc, r, rt));
    return success();
  }
};

struct FlipLowering : public OpConversionPattern<kt::FlipOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::FlipOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getSelf();
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t rank = xt.getRank();
    SmallVector<bool> flipped(rank, false);
    for (Attribute a : op.getDims())
      if (rank > 0)
        flipped[kt::wrapDim(cast<IntegerAttr>(a).getInt(), rank)] = true;
    SmallVector<OpFoldResult> sizes = getSizes(rw, loc, x);
    SmallVector<Value> last(rank);
    for (int64_t i = 0; i < rank; ++i)
      if (flipped[i])
        last[i] = arith::SubIOp::create(rw, loc, indexValue(rw, loc, sizes[i]),
                                        indexConst(rw, loc, 1));
    Value init = emptyLike(rw, loc, xt, sizes);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value r =
        linalg::GenericOp::create(
            rw, loc, TypeRange{xt}, ValueRange{}, ValueRange{init},
            ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(rank)}, iters,
            [&](OpBuilder &b, Location l, ValueRange) {
              SmallVector<Value> ind;
              for (int64_t i = 0; i < rank; ++i) {
                Value v = linalg::IndexOp::create(b, l, i);
                if (flipped[i])
                  v = arith::SubIOp::create(b, l, last[i], v);
                ind.push_back(v);
              }
              linalg::YieldOp::create(
                  b, l, ValueRange{tensor::ExtractOp::create(b, l, x, ind)});
            })
            .getResult(0);
    rw.replaceOp(op, castTo(rw, loc, r, op.getResult().getType()));
    return success();
  }
};

struct ConstantLowering : public OpConversionPattern<kt::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value || value.getType() != op.getResult().getType())
      return rw.notifyMatchFailure(op, "value type differs from the result");
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

struct FullLowering : public OpConversionPattern<kt::FullOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::FullOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<OpFoldResult> sizes = checkCreationSizes(
        rw, loc, rt, op.getSize(), adaptor.getDynamicSizes());
    Value v = scalarConst(rw, loc, rt.getElementType(),
                          op.getValue().convertToDouble());
    rw.replaceOp(op, filled(rw, loc, rt, sizes, v));
    return success();
  }
};

struct ArangeLowering : public OpConversionPattern<kt::ArangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::ArangeOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto rt = cast<RankedTensorType>(op.getResult().getType());
    Type elem = rt.getElementType();
    // double for f32/f64/integers, float for f16/bf16 (PyTorch CPU).
    Type ct = isHalf(elem) ? rw.getF32Type() : rw.getF64Type();
    Value start = scalarConst(rw, loc, ct, op.getStart().convertToDouble());
    Value step = scalarConst(rw, loc, ct, op.getStep().convertToDouble());
    Value init = emptyLike(rw, loc, rt, {});
    Value r = linalg::GenericOp::create(
                  rw, loc, TypeRange{rt}, ValueRange{}, ValueRange{init},
                  ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(1)},
                  ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
                  [&](OpBuilder &b, Location l, ValueRange) {
                    Value i = arith::IndexCastOp::create(
                        b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 0));
                    Value fi = arith::SIToFPOp::create(b, l, ct, i);
                    Value v = arith::AddFOp::create(
                        b, l, start, arith::MulFOp::create(b, l, fi, step));
                    linalg::YieldOp::create(
                        b, l, ValueRange{convertScalar(b, l, v, elem)});
                  })
                  .getResult(0);
    rw.replaceOp(op, r);
    return success();
  }
};

/// kt.check: whether some element of `cond` is false (a linalg.generic
/// reducing every dim with `or` of the negation), then the op's message
/// where it is (checkAtRunTime); `self` is the result either way.
struct CheckLowering : public OpConversionPattern<kt::CheckOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(kt::CheckOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value cond = adaptor.getCond();
    auto ct = cast<RankedTensorType>(cond.getType());
    int64_t rank = ct.getRank();
    Type i1 = rw.getI1Type();
    Value falseV = arith::ConstantOp::create(rw, loc, rw.getBoolAttr(false));
    Value trueV = arith::ConstantOp::create(rw, loc, rw.getBoolAttr(true));
    Value init = tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{}, i1);
    init = linalg::FillOp::create(rw, loc, ValueRange{falseV}, ValueRange{init})
               .getResult(0);
    SmallVector<AffineMap> maps{
        rw.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, {}, rw.getContext())};
    SmallVector<utils::IteratorType> iters(rank,
                                           utils::IteratorType::reduction);
    Value anyFalse =
        linalg::GenericOp::create(
            rw, loc, TypeRange{init.getType()}, ValueRange{cond},
            ValueRange{init}, maps, iters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value bad = arith::XOrIOp::create(b, l, args[0], trueV);
              linalg::YieldOp::create(
                  b, l, ValueRange{arith::OrIOp::create(b, l, args[1], bad)});
            })
            .getResult(0);
    Value failed = tensor::ExtractOp::create(rw, loc, anyFalse, ValueRange{});
    checkAtRunTime(rw, loc, failed, op.getMessage(), {});
    rw.replaceOp(op, castTo(rw, loc, adaptor.getSelf(),
                            op.getResult().getType()));
    return success();
  }
};

} // namespace

void kiln::populateKTShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, PermuteLowering,
               ExpandLowering, SqueezeLowering, UnsqueezeLowering,
               SliceLowering, SelectLowering, ConcatLowering, PadLowering,
               FlipLowering, ConstantLowering, FullLowering, ArangeLowering,
               SliceScatterLowering, SelectScatterLowering, CheckLowering>(
      patterns.getContext());
}
