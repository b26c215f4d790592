//===- RuntimeChecks.cpp - Run-time error checks in lowered code ----------===//
//
// Part of Kiln. See kiln/Conversion/KTToLinalg/RuntimeChecks.h for the
// contract with the backend.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "kiln/Conversion/KTToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace kiln;

/// "file:line:col" of the first file location in `loc`, else its printed
/// form.
static std::string locationText(Location loc) {
  std::string s;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      s = (f.getFilename().getValue() + ":" + Twine(f.getLine()) + ":" +
           Twine(f.getColumn()))
              .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (s.empty()) {
    llvm::raw_string_ostream os(s);
    os << loc;
  }
  return s;
}

/// Declares the error function in `module` and appends the message; returns
/// its id. `setAttr` stores the new message array.
static int64_t
registerIn(OpBuilder &b, ModuleOp module, Location loc, StringRef text,
           llvm::function_ref<void(ArrayAttr)> setAttr) {
  MLIRContext *ctx = b.getContext();
  if (!module.lookupSymbol(kRuntimeErrorFn)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<Type> args(kRuntimeErrorValues + 1, b.getI64Type());
    auto fn = func::FuncOp::create(b, module.getLoc(), kRuntimeErrorFn,
                                   FunctionType::get(ctx, args, {}));
    fn.setPrivate();
  }
  SmallVector<Attribute> msgs;
  if (auto a = module->getAttrOfType<ArrayAttr>(kRuntimeErrorsAttr))
    msgs.assign(a.begin(), a.end());
  std::string msg = locationText(loc) + ": " + text.str();
  // The same check of the same op (e.g. one per operand) shares its id.
  for (auto [i, m] : llvm::enumerate(msgs))
    if (cast<StringAttr>(m).getValue() == msg)
      return (int64_t)i;
  msgs.push_back(StringAttr::get(ctx, msg));
  setAttr(ArrayAttr::get(ctx, msgs));
  return (int64_t)msgs.size() - 1;
}

int64_t kiln::addRuntimeErrorTemplate(ModuleOp module, Location loc,
                                      StringRef text) {
  OpBuilder b(module.getContext());
  return registerIn(b, module, loc, text, [&](ArrayAttr a) {
    module->setAttr(kRuntimeErrorsAttr, a);
  });
}

int64_t lowering::registerRuntimeError(RewriterBase &rw, Operation *op,
                                       StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  return registerIn(rw, module, op->getLoc(), text, [&](ArrayAttr a) {
    rw.modifyOpInPlace(module,
                       [&] { module->setAttr(kRuntimeErrorsAttr, a); });
  });
}

int64_t lowering::registerRuntimeError(OpBuilder &b, Location loc,
                                       StringRef text) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto module = dyn_cast<ModuleOp>(parent);
  if (!module)
    module = parent->getParentOfType<ModuleOp>();
  return registerIn(b, module, loc, text, [&](ArrayAttr a) {
    module->setAttr(kRuntimeErrorsAttr, a);
  });
}

void lowering::emitRuntimeCheck(OpBuilder &b, Location loc, Value failed,
                                int64_t id, ValueRange values) {
  assert(values.size() <= kRuntimeErrorValues && "too many values");
  Type i64 = b.getI64Type();
  SmallVector<Value> args;
  args.push_back(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(id)));
  Value zero;
  for (unsigned k = 0; k < kRuntimeErrorValues; ++k) {
    Value v = k < values.size() ? values[k] : Value();
    if (!v) {
      if (!zero)
        zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
      args.push_back(zero);
    } else if (v.getType().isIndex()) {
      args.push_back(arith::IndexCastOp::create(b, loc, i64, v));
    } else {
      args.push_back(convertScalar(b, loc, v, i64));
    }
  }
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &nb, Location nl) {
    func::CallOp::create(nb, nl, kRuntimeErrorFn, TypeRange{}, args);
    scf::YieldOp::create(nb, nl);
  });
}

void lowering::emitRuntimeCheck(OpBuilder &b, Location loc, Value failed,
                                int64_t id, Value a, Value bv) {
  emitRuntimeCheck(b, loc, failed, id, ValueRange{a, bv});
}

bool lowering::checkAtRunTime(OpBuilder &b, Location loc, Value failed,
                              StringRef text, ValueRange values) {
  if (matchPattern(failed, m_Zero()))
    return false;
  int64_t id = registerRuntimeError(b, loc, text);
  emitRuntimeCheck(b, loc, failed, id, values);
  return true;
}

std::string lowering::shapeTemplate(ArrayRef<int64_t> shape,
                                    ArrayRef<OpFoldResult> sizes,
                                    SmallVectorImpl<Value> &values,
                                    StringRef sep, StringRef open,
                                    StringRef close) {
  std::string s = open.str();
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += sep.str();
    std::optional<int64_t> c =
        ShapedType::isDynamic(d) ? getConstantIntValue(sizes[i]) : d;
    if (c) {
      s += std::to_string(*c);
    } else if (values.size() < kRuntimeErrorValues) {
      s += "{" + std::to_string(values.size()) + "}";
      values.push_back(cast<Value>(sizes[i]));
    } else {
      s += "?";
    }
  }
  return s + close.str();
}

Value lowering::indexCmp(OpBuilder &b, Location loc, arith::CmpIPredicate pred,
                         OpFoldResult x, OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy) {
    bool r;
    switch (pred) {
    case arith::CmpIPredicate::eq: r = *cx == *cy; break;
    case arith::CmpIPredicate::ne: r = *cx != *cy; break;
    case arith::CmpIPredicate::slt: r = *cx < *cy; break;
    case arith::CmpIPredicate::sle: r = *cx <= *cy; break;
    case arith::CmpIPredicate::sgt: r = *cx > *cy; break;
    case arith::CmpIPredicate::sge: r = *cx >= *cy; break;
    default: llvm_unreachable("unsupported predicate");
    }
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(r));
  }
  Value vx = getValueOrCreateConstantIndexOp(b, loc, x);
  Value vy = getValueOrCreateConstantIndexOp(b, loc, y);
  // The same value, or tensor.dim of the same tensor and dim.
  auto sameDim = [](Value p, Value q) {
    if (p == q)
      return true;
    auto dp = p.getDefiningOp<tensor::DimOp>();
    auto dq = q.getDefiningOp<tensor::DimOp>();
    if (!dp || !dq || dp.getSource() != dq.getSource())
      return false;
    std::optional<int64_t> ip = dp.getConstantIndex(),
                           iq = dq.getConstantIndex();
    return ip && iq && *ip == *iq;
  };
  if (sameDim(vx, vy) && (pred == arith::CmpIPredicate::eq ||
                          pred == arith::CmpIPredicate::ne))
    return arith::ConstantOp::create(
        b, loc, b.getBoolAttr(pred == arith::CmpIPredicate::eq));
  return arith::CmpIOp::create(b, loc, pred, vx, vy);
}

Value lowering::boolOr(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x || matchPattern(x, m_Zero()))
    return y;
  if (!y || matchPattern(y, m_Zero()))
    return x;
  if (matchPattern(x, m_One()))
    return x;
  if (matchPattern(y, m_One()))
    return y;
  return arith::OrIOp::create(b, loc, x, y);
}

Value lowering::boolAnd(OpBuilder &b, Location loc, Value x, Value y) {
  if (matchPattern(x, m_Zero()) || matchPattern(y, m_One()))
    return x;
  if (matchPattern(y, m_Zero()) || matchPattern(x, m_One()))
    return y;
  return arith::AndIOp::create(b, loc, x, y);
}

void lowering::checkResultShape(OpBuilder &b, Location loc, unsigned index,
                                RankedTensorType type,
                                ArrayRef<OpFoldResult> sizes) {
  Value failed;
  for (auto [j, d] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(d))
      failed = boolOr(b, loc, failed,
                      indexCmp(b, loc, arith::CmpIPredicate::ne, sizes[j],
                               b.getIndexAttr(d)));
  if (!failed)
    return;
  SmallVector<Value> values;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "result #" << index << " at run time: expected " << type << ", got "
     << type.getElementType() << " tensor of shape ";
  if (type.getRank() == 0)
    os << "[] (rank 0)";
  else
    os << shapeTemplate(
        SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic), sizes,
        values, "x", "", "");
  checkAtRunTime(b, loc, failed, text, values);
}

void lowering::checkBroadcastCompatible(OpBuilder &b, Location loc,
                                        ValueRange operands,
                                        RankedTensorType resultType) {
  int64_t rank = 0;
  for (Value v : operands)
    rank = std::max(rank, cast<RankedTensorType>(v.getType()).getRank());
  // The running broadcast size per dim: a constant, a value, or (lazily, so
  // that a lone operand creates no tensor.dim it does not need) dim `dim`
  // of `src`.
  struct Size {
    OpFoldResult size;
    Value src;
    int64_t dim = 0;
  };
  SmallVector<Size> r(rank, Size{b.getIndexAttr(1), Value(), 0});
  auto get = [&](Size &s) -> OpFoldResult {
    if (s.src) {
      s.size = tensor::DimOp::create(b, loc, s.src, s.dim).getResult();
      s.src = Value();
    }
    return s.size;
  };
  for (auto [k, v] : llvm::enumerate(operands)) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t off = rank - t.getRank();
    for (int64_t j = 0; j < t.getRank(); ++j) {
      Size &cur = r[off + j];
      std::optional<int64_t> cc =
          cur.src ? std::nullopt : getConstantIntValue(cur.size);
      Size d = t.isDynamicDim(j)
                   ? Size{OpFoldResult(), v, j}
                   : Size{b.getIndexAttr(t.getDimSize(j)), Value(), 0};
      std::optional<int64_t> cd =
          d.src ? std::nullopt : getConstantIntValue(d.size);
      // Nothing to check against a 1 (or a static pair: the verifier
      // checked it); a 1 does not change the broadcast size.
      if (cc && *cc == 1) {
        cur = d;
        continue;
      }
      if (cd && (*cd == 1 || cc))
        continue;
      OpFoldResult dv = get(d), cv = get(cur);
      Value failed = boolAnd(
          b, loc, indexCmp(b, loc, arith::CmpIPredicate::ne, dv, cv),
          indexCmp(b, loc, arith::CmpIPredicate::ne, dv, b.getIndexAttr(1)));
      if (!cc)
        failed = boolAnd(b, loc, failed,
                         indexCmp(b, loc, arith::CmpIPredicate::ne, cv,
                                  b.getIndexAttr(1)));
      checkAtRunTime(b, loc, failed,
                     "operands are not broadcast-compatible at run time: dim " +
                         std::to_string(off + j) + " is {0} vs {1} (operand #" +
                         std::to_string(k) + ")",
                     {indexValue(b, loc, cv), indexValue(b, loc, dv)});
      if (!cc)
        cur.size = arith::SelectOp::create(
                       b, loc,
                       indexCmp(b, loc, arith::CmpIPredicate::eq, cv,
                                b.getIndexAttr(1)),
                       indexValue(b, loc, dv), indexValue(b, loc, cv))
                       .getResult();
    }
  }
  // The result against its type's static dims.
  if (resultType.getRank() != rank)
    return;
  bool needed = false;
  for (int64_t j = 0; j < rank; ++j) {
    std::optional<int64_t> c =
        r[j].src ? std::nullopt : getConstantIntValue(r[j].size);
    needed |= !resultType.isDynamicDim(j) &&
              (!c || *c != resultType.getDimSize(j));
  }
  if (!needed)
    return;
  SmallVector<OpFoldResult> sizes;
  for (Size &s : r)
    sizes.push_back(get(s));
  checkResultShape(b, loc, 0, resultType, sizes);
}

Value lowering::safeOperand(OpBuilder &b, Location loc, Value v, Value failed,
                            ArrayRef<OpFoldResult> sizes) {
  if (!failed || matchPattern(failed, m_Zero()))
    return v;
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(t.getShape())) {
    std::optional<int64_t> c = getConstantIntValue(sizes[i]);
    shape.push_back(c && *c == d ? d : ShapedType::kDynamic);
  }
  auto type = RankedTensorType::get(shape, t.getElementType());
  return scf::IfOp::create(
             b, loc, failed,
             [&](OpBuilder &tb, Location tl) {
               Value init = emptyLike(tb, tl, type, sizes);
               Value z = linalg::FillOp::create(
                             tb, tl,
                             scalarConst(tb, tl, t.getElementType(), 0), init)
                             .getResult(0);
               scf::YieldOp::create(tb, tl, z);
             },
             [&](OpBuilder &eb, Location el) {
               scf::YieldOp::create(eb, el, castTo(eb, el, v, type));
             })
      .getResult(0);
}

SmallVector<OpFoldResult>
lowering::checkCreationSizes(OpBuilder &b, Location loc, RankedTensorType type,
                             ArrayAttr sizeAttr, ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> sizes;
  size_t next = 0;
  for (auto [i, a] : llvm::enumerate(sizeAttr)) {
    int64_t s = cast<IntegerAttr>(a).getInt();
    int64_t expected = type.getDimSize(i);
    if (s != -1) {
      sizes.push_back(b.getIndexAttr(s));
      continue;
    }
    Value d = dynamicSizes[next++];
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    checkAtRunTime(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, zero),
        "dynamic size {0} (dim " + std::to_string(i) + ") must be non-negative",
        {d});
    if (!ShapedType::isDynamic(expected)) {
      checkAtRunTime(b, loc,
                     indexCmp(b, loc, arith::CmpIPredicate::ne, d,
                              b.getIndexAttr(expected)),
                     "dim " + std::to_string(i) +
                         " has size {0} at run time but the result type has " +
                         std::to_string(expected),
                     {d});
      // The type's size: the tensor matches its type whatever happened.
      sizes.push_back(b.getIndexAttr(expected));
      continue;
    }
    // A negative size makes an empty tensor.
    sizes.push_back(arith::MaxSIOp::create(b, loc, d, zero).getResult());
  }
  return sizes;
}
