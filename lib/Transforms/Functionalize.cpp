//===- Functionalize.cpp - Remove refs, views and in-place ops ------------===//
//
// Part of Kiln. kiln-functionalize and kiln-verify-functional: the rewrite of
// mutation and aliasing (!kt.ref, kt.view_*, kt.store, in-place ops) into
// value ops, and the check of its contract (docs/functionalization.md).
//
// Each base buffer (a ref argument of the body, or a kt.alloc_ref) has a
// current value. A ref is a base plus the chain of views that produced it. A
// read applies the value form of each view (kt.slice for kt.view_slice, ...)
// to the base's current value. A write computes the new value of the view,
// then walks the chain back to the base with the inverse of each view
// (kt.slice_scatter, kt.select_scatter, the inverse reshape/transpose/
// permute/squeeze/unsqueeze) and makes the result the base's current value.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Functionalize.h"
#include "kiln/Transforms/Passes.h"

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTBuilder.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNFUNCTIONALIZEPASS
#define GEN_PASS_DEF_KILNVERIFYFUNCTIONALPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::kt;

namespace {

bool isRef(Value v) { return isa<RefType>(v.getType()); }

/// The rewrite of one block.
class Functionalizer {
public:
  explicit Functionalizer(Block &block)
      : block(block), b(block.getParentOp()->getContext()) {}

  LogicalResult run();

private:
  struct RefInfo {
    Value base;
    SmallVector<Operation *> chain; // views from the base to this ref
  };

  LogicalResult rewrite(Operation *op);
  SmallVector<Value> readLevels(Value ref, Location loc);
  Value read(Value ref, Location loc) { return readLevels(ref, loc).back(); }
  LogicalResult write(Value ref, Value newValue, Location loc,
                      SmallVector<Value> levels = {});
  Value applyView(Operation *view, Value v, Location loc);
  FailureOr<Value> inverseView(Operation *view, Value source, Value v,
                               Location loc);
  Value broadcastTo(Value src, Value like, Location loc);
  Value castTo(Value v, Type type, Location loc);

  Block &block;
  OpBuilder b;
  DenseMap<Value, RefInfo> refs;
  DenseMap<Value, Value> current; // base -> current value
  DenseMap<Value, Value> initial; // ref argument -> its leading load
  SmallVector<Operation *> dead;  // ref ops to erase, in program order
};

/// The attributes of `op` as a list (inherent ones, from its properties).
SmallVector<NamedAttribute> attrsOf(Operation *op) {
  SmallVector<NamedAttribute> out;
  if (auto d = dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    llvm::append_range(out, d.getValue());
  return out;
}

Value Functionalizer::castTo(Value v, Type type, Location loc) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

Value Functionalizer::applyView(Operation *view, Value v, Location loc) {
  SmallVector<NamedAttribute> attrs = attrsOf(view);
  ValueRange in(v);
  return TypeSwitch<Operation *, Value>(view)
      .Case([&](ViewReshapeOp r) {
        SmallVector<Value> operands{v};
        llvm::append_range(operands, r.getSizes());
        return ReshapeOp::create(b, loc, operands, attrs);
      })
      .Case([&](ViewTransposeOp) {
        return TransposeOp::create(b, loc, in, attrs);
      })
      .Case([&](ViewPermuteOp) { return PermuteOp::create(b, loc, in, attrs); })
      .Case([&](ViewSliceOp) { return SliceOp::create(b, loc, in, attrs); })
      .Case([&](ViewSelectOp) { return SelectOp::create(b, loc, in, attrs); })
      .Case([&](ViewExpandOp) { return ExpandOp::create(b, loc, in, attrs); })
      .Case([&](ViewSqueezeOp) { return SqueezeOp::create(b, loc, in, attrs); })
      .Case([&](ViewUnsqueezeOp) {
        return UnsqueezeOp::create(b, loc, in, attrs);
      })
      .Default([](Operation *) -> Value { llvm_unreachable("not a view"); });
}

FailureOr<Value> Functionalizer::inverseView(Operation *view, Value source,
                                             Value v, Location loc) {
  auto srcType = cast<RefType>(view->getOperand(0).getType());
  int64_t rank = srcType.getRank();
  auto i64 = [&](int64_t x) { return b.getI64IntegerAttr(x); };
  return TypeSwitch<Operation *, FailureOr<Value>>(view)
      .Case([&](ViewSliceOp) -> FailureOr<Value> {
        return SliceScatterOp::create(b, loc, ValueRange{source, v},
                                      attrsOf(view))
            .getResult();
      })
      .Case([&](ViewSelectOp) -> FailureOr<Value> {
        return SelectScatterOp::create(b, loc, ValueRange{source, v},
                                       attrsOf(view))
            .getResult();
      })
      .Case([&](ViewTransposeOp) -> FailureOr<Value> {
        return TransposeOp::create(b, loc, ValueRange{v}, attrsOf(view))
            .getResult();
      })
      .Case([&](ViewPermuteOp p) -> FailureOr<Value> {
        SmallVector<int64_t> perm = getI64Array(p.getDimsAttr());
        SmallVector<int64_t> inv(perm.size());
        for (auto [i, d] : llvm::enumerate(perm))
          inv[kt::wrapDim(d, rank)] = i;
        return PermuteOp::create(
                   b, loc, ValueRange{v},
                   {b.getNamedAttr("dims", b.getI64ArrayAttr(inv))})
            .getResult();
      })
      .Case([&](ViewReshapeOp) -> FailureOr<Value> {
        // Back to the base's shape (its `?` dims measured on `source`).
        return KTBuilder(b, loc).reshapeLike(v, source);
      })
      .Case([&](ViewSqueezeOp sq) -> FailureOr<Value> {
        // Re-insert the removed dims (static size-1 dims that were listed).
        SmallVector<int64_t> dims;
        if (sq.getDimAttr())
          for (int64_t d : getI64Array(sq.getDimAttr()))
            dims.push_back(kt::wrapDim(d, rank));
        Value r = v;
        for (int64_t d = 0; d < rank; ++d)
          if (srcType.getDimSize(d) == 1 &&
              (!sq.getDimAttr() || llvm::is_contained(dims, d)))
            r = UnsqueezeOp::create(b, loc, ValueRange{r},
                                    {b.getNamedAttr("dim", i64(d))});
        return r;
      })
      .Case([&](ViewUnsqueezeOp u) -> FailureOr<Value> {
        int64_t d = (int64_t)u.getDim();
        if (d < 0)
          d += rank + 1;
        return SqueezeOp::create(
                   b, loc, ValueRange{v},
                   {b.getNamedAttr("dim", b.getI64ArrayAttr({d}))})
            .getResult();
      })
      .Case([&](ViewExpandOp) -> FailureOr<Value> {
        return view->emitError(
            "cannot functionalize a write through an expanded view "
            "(kt.view_expand): several positions share one element (PyTorch "
            "rejects in-place writes to expanded tensors too)");
      })
      .Default([](Operation *) -> FailureOr<Value> {
        llvm_unreachable("not a view");
      });
}

/// The values of every level of the chain of `ref`: the base's current value,
/// then each view applied in turn (the last one is the value of `ref`).
SmallVector<Value> Functionalizer::readLevels(Value ref, Location loc) {
  const RefInfo &info = refs.lookup(ref);
  SmallVector<Value> levels{current.lookup(info.base)};
  for (Operation *view : info.chain)
    levels.push_back(applyView(view, levels.back(), loc));
  return levels;
}

/// `levels`: the values of the chain before the write (from readLevels),
/// computed here when not given.
LogicalResult Functionalizer::write(Value ref, Value newValue, Location loc,
                                    SmallVector<Value> levels) {
  RefInfo info = refs.lookup(ref);
  if (levels.empty())
    levels = readLevels(ref, loc);
  Value v = newValue;
  for (int64_t i = (int64_t)info.chain.size() - 1; i >= 0; --i) {
    FailureOr<Value> up = inverseView(info.chain[i], levels[i], v, loc);
    if (failed(up))
      return failure();
    v = *up;
  }
  current[info.base] =
      castTo(v, cast<RefType>(info.base.getType()).getTensorType(), loc);
  return success();
}

/// `src` broadcast to the shape of `like` (the value of the destination):
/// kt.where(true, src, like), with the mask's dynamic sizes from tensor.dim.
Value Functionalizer::broadcastTo(Value src, Value like, Location loc) {
  auto likeT = cast<RankedTensorType>(like.getType());
  // The same type is the same shape only when it has no `?`: a `?` of src
  // may be 1 at run time where like's is not (`x.copy_(y)` with y of shape
  // [1, 5] into x of [2, 5], both typed ?x?, as a dynamic entry has them).
  if (src.getType() == likeT && likeT.hasStaticShape())
    return src;
  SmallVector<int64_t> size;
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < likeT.getRank(); ++d) {
    if (ShapedType::isDynamic(likeT.getDimSize(d))) {
      size.push_back(-1);
      dyn.push_back(tensor::DimOp::create(b, loc, like, d));
    } else {
      size.push_back(likeT.getDimSize(d));
    }
  }
  Value mask = FullOp::create(
      b, loc, ValueRange(dyn),
      {b.getNamedAttr("size", b.getI64ArrayAttr(size)),
       b.getNamedAttr("value", b.getF64FloatAttr(1.0)),
       b.getNamedAttr("dtype", TypeAttr::get(b.getI1Type()))});
  return WhereOp::create(b, loc, ValueRange{mask, src, like});
}

/// The value form of kt.index_put_ on the value `self`: the index tensors
/// wrapped (negative from the end), broadcast to B and linearized over the
/// indexed leading dims (each range-checked against its own dim by a
/// kt.index_select of an iota laid along that dim, when there are several),
/// then one kt.scatter (sum with accumulate) of `values` broadcast to
/// B ++ rest into `self` reshaped to [N] ++ rest. Static shapes only (fails
/// with an error at `op` otherwise).
static FailureOr<Value> indexPutValue(IndexPutInPlaceOp op, OpBuilder &b,
                                      Value self) {
  kt::KTBuilder kb(b, op.getLoc());
  auto st = cast<RankedTensorType>(self.getType());
  auto ok = [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  };
  if (!st.hasStaticShape() || !ok(op.getValues().getType()) ||
      !llvm::all_of(op.getIndices().getTypes(), ok))
    return op->emitError("cannot functionalize kt.index_put_ with a ? dim "
                         "(self, indices and values must be static)"),
           failure();
  int64_t k = op.getIndices().size(), rank = st.getRank();
  SmallVector<int64_t> B;
  for (Value i : op.getIndices()) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(i.getType()).getShape();
    if (s.size() > B.size())
      B.insert(B.begin(), s.size() - B.size(), 1);
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t &d = B[B.size() - s.size() + j];
      if (d == 1)
        d = s[j];
    }
  }
  int64_t N = 1, M = 1;
  for (int64_t d = 0; d < k; ++d)
    N *= st.getDimSize(d);
  for (int64_t d : B)
    M *= d;
  SmallVector<int64_t> rest(st.getShape().drop_front(k));
  Type i64 = b.getI64Type();
  Value lin;
  int64_t stride = N;
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    int64_t n = st.getDimSize(d);
    stride = n ? stride / n : 0;
    Value t = index;
    if (cast<RankedTensorType>(t.getType()).getElementType() != i64)
      t = kb.cast(t, i64);
    t = kb.where(kb.lt(t, kb.scalar(0, i64)), kb.add(t, kb.scalar(n, i64)), t);
    if (cast<RankedTensorType>(t.getType()).getShape() != ArrayRef(B))
      t = kb.op<ExpandOp>({t}, {kb.attr("size", kb.i64s(B))});
    t = kb.reshape(t, {M});
    if (k > 1) {
      // The range check of this index against its own dim d (the linear
      // index could be in range when it is not).
      SmallVector<int64_t> at(d + 1, 1);
      at[d] = n;
      Value table = kb.reshape(kb.arange(n, i64), at);
      t = kb.op<IndexSelectOp>(
          {table, t}, {kb.attr("dim", b.getI64IntegerAttr(d))});
      t = kb.reshape(t, {M});
    }
    if (stride != 1)
      t = kb.mul(t, kb.scalar(stride, i64));
    lin = lin ? kb.add(lin, t) : t;
  }
  SmallVector<int64_t> collapsed{N}, idxShape{M}, src{M}, full(B);
  collapsed.append(rest);
  idxShape.append(rest.size(), 1);
  src.append(rest);
  full.append(rest);
  Value index = kb.reshape(lin, idxShape);
  if (!rest.empty())
    index = kb.op<ExpandOp>({index}, {kb.attr("size", kb.i64s(src))});
  Value vals = op.getValues();
  if (cast<RankedTensorType>(vals.getType()).getShape() != ArrayRef(full))
    vals = kb.op<ExpandOp>({vals}, {kb.attr("size", kb.i64s(full))});
  vals = kb.reshape(vals, src);
  SmallVector<NamedAttribute> attrs{
      kb.attr("dim", b.getI64IntegerAttr(0))};
  if (op.getAccumulate())
    attrs.push_back(kb.attr("reduce", ScatterReduceAttr::get(
                                          b.getContext(), ScatterReduce::sum)));
  Value r = kb.op<ScatterOp>({kb.reshape(self, collapsed), index, vals}, attrs);
  (void)rank;
  return kb.reshape(r, st.getShape());
}

LogicalResult Functionalizer::rewrite(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  auto refOf = [&](Value v) -> LogicalResult {
    if (!refs.count(v))
      return op->emitError("cannot functionalize: the ref operand is not "
                           "derived from an argument of this body or a "
                           "kt.alloc_ref in it");
    return success();
  };
  // An in-place op: self = fn(current value of self).
  auto inPlace = [&](Value self,
                     function_ref<Value(Value)> fn) -> LogicalResult {
    if (failed(refOf(self)))
      return failure();
    SmallVector<Value> levels = readLevels(self, loc);
    dead.push_back(op);
    return write(self, fn(levels.back()), loc, levels);
  };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AllocRefOp a) {
        refs[a.getResult()] = {a.getResult(), {}};
        current[a.getResult()] = a.getValue();
        dead.push_back(op);
        return success();
      })
      .Case<ViewReshapeOp, ViewTransposeOp, ViewPermuteOp, ViewSliceOp,
            ViewSelectOp, ViewExpandOp, ViewSqueezeOp, ViewUnsqueezeOp>(
          [&](Operation *view) {
            Value src = view->getOperand(0);
            if (failed(refOf(src)))
              return failure();
            RefInfo info = refs.lookup(src);
            info.chain.push_back(view);
            refs[view->getResult(0)] = info;
            dead.push_back(op);
            return success();
          })
      .Case([&](LoadOp l) {
        if (failed(refOf(l.getRef())))
          return failure();
        Value v = castTo(read(l.getRef(), loc), l.getType(), loc);
        l.getResult().replaceAllUsesWith(v);
        dead.push_back(op);
        return success();
      })
      .Case([&](StoreOp s) {
        if (failed(refOf(s.getRef())))
          return failure();
        dead.push_back(op);
        return write(s.getRef(), s.getValue(), loc);
      })
      .Case([&](AddInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return AddOp::create(b, loc, ValueRange{v, o.getOther()});
        });
      })
      .Case([&](SubInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return SubOp::create(b, loc, ValueRange{v, o.getOther()});
        });
      })
      .Case([&](MulInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return MulOp::create(b, loc, ValueRange{v, o.getOther()});
        });
      })
      .Case([&](DivInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          SmallVector<NamedAttribute> attrs;
          if (o.getRoundingModeAttr())
            attrs.push_back(
                b.getNamedAttr("rounding_mode", o.getRoundingModeAttr()));
          return DivOp::create(b, loc, ValueRange{v, o.getOther()}, attrs);
        });
      })
      .Case([&](ReluInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return ReluOp::create(b, loc, ValueRange{v});
        });
      })
      .Case([&](CopyInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return broadcastTo(o.getSrc(), v, loc);
        });
      })
      .Case([&](FillInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          return broadcastTo(o.getValue(), v, loc);
        });
      })
      .Case([&](ZeroInPlaceOp o) {
        return inPlace(o.getSelf(), [&](Value v) {
          Type elem = cast<RankedTensorType>(v.getType()).getElementType();
          auto t = RankedTensorType::get({}, elem);
          Value zero = ConstantOp::create(
              b, loc, t, DenseElementsAttr::get(t, b.getZeroAttr(elem)));
          return broadcastTo(zero, v, loc);
        });
      })
      .Case([&](IndexPutInPlaceOp o) -> LogicalResult {
        if (failed(refOf(o.getSelf())))
          return failure();
        SmallVector<Value> levels = readLevels(o.getSelf(), loc);
        FailureOr<Value> v = indexPutValue(o, b, levels.back());
        if (failed(v))
          return failure();
        dead.push_back(op);
        return write(o.getSelf(), *v, loc, levels);
      })
      .Default([&](Operation *) -> LogicalResult {
        for (Value v : op->getOperands())
          if (isRef(v))
            return op->emitError("cannot functionalize '")
                   << op->getName()
                   << "': it takes a !kt.ref operand (only kt ref ops may; "
                      "kt.load the ref first)";
        return success();
      });
}

LogicalResult Functionalizer::run() {
  // Refs must not cross into nested regions (scf.if, scf.for, ...).
  bool nested = false;
  for (Operation &op : block)
    for (Region &r : op.getRegions())
      r.walk([&](Operation *inner) {
        for (Value v : llvm::concat<Value>(inner->getOperands(),
                                           inner->getResults()))
          if (isRef(v)) {
            inner->emitError("cannot functionalize a !kt.ref used inside a "
                             "nested region; only straight-line ref code "
                             "is supported");
            nested = true;
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
  if (nested)
    return failure();

  // The leading loads of the ref arguments.
  b.setInsertionPointToStart(&block);
  SmallVector<BlockArgument> refArgs;
  for (BlockArgument arg : block.getArguments()) {
    if (!isRef(arg) || arg.use_empty())
      continue;
    refArgs.push_back(arg);
    Value load = LoadOp::create(b, arg.getLoc(),
                                cast<RefType>(arg.getType()).getTensorType(),
                                arg);
    refs[arg] = {arg, {}};
    current[arg] = initial[arg] = load;
  }
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    if (!llvm::any_of(initial, [&](auto &kv) {
          return kv.second.getDefiningOp() == &op;
        }))
      ops.push_back(&op);
  for (Operation *op : ops)
    if (failed(rewrite(op)))
      return failure();
  Operation *term = block.getTerminator();
  for (Value v : term->getOperands())
    if (isRef(v))
      return term->emitError("cannot functionalize: the body returns a "
                             "!kt.ref (return a kt.load of it instead)");

  // The epilogue: one store of the final value per mutated ref argument.
  b.setInsertionPoint(term);
  for (BlockArgument arg : refArgs)
    if (current[arg] != initial[arg])
      StoreOp::create(b, term->getLoc(), current[arg], arg);

  // Erase the ref ops (uses first), then leading loads nobody reads.
  for (Operation *op : llvm::reverse(dead)) {
    for (Value r : op->getResults())
      if (!r.use_empty()) {
        // A view or alloc whose result is still used by a rewritten op
        // cannot happen: every ref user is rewritten before.
        return op->emitError("internal error: ref still used after "
                             "functionalization");
      }
    op->erase();
  }
  for (BlockArgument arg : refArgs) {
    Operation *load = initial[arg].getDefiningOp();
    if (load->use_empty())
      load->erase();
  }
  return success();
}

/// The bodies the passes work on: func.func bodies and kg.graph regions.
void forEachBody(Operation *root, function_ref<void(Block &)> fn) {
  root->walk([&](Operation *op) {
    if (auto f = dyn_cast<func::FuncOp>(op)) {
      if (!f.isExternal())
        fn(f.getBody().front());
    } else if (auto g = dyn_cast<kg::GraphOp>(op)) {
      if (!g.getBody().empty())
        fn(g.getBody().front());
    }
  });
}

} // namespace

LogicalResult kiln::functionalizeBlock(Block &block) {
  return Functionalizer(block).run();
}

LogicalResult kiln::mergeRepeatedRefOperands(ModuleOp module) {
  SmallVector<kg::GraphOp> graphs;
  module.walk([&](kg::GraphOp g) { graphs.push_back(g); });
  SymbolTable symbols(module);
  bool ok = true;
  for (kg::GraphOp graph : graphs) {
    // Positions j whose operand is a ref already passed at an earlier i.
    SmallVector<std::pair<unsigned, unsigned>> repeats;
    OperandRange inputs = graph.getInputs();
    for (unsigned j = 0; j < inputs.size(); ++j) {
      if (!isRef(inputs[j]))
        continue;
      for (unsigned i = 0; i < j; ++i)
        if (inputs[i] == inputs[j]) {
          repeats.push_back({j, i});
          break;
        }
    }
    if (repeats.empty())
      continue;
    Block *body = nullptr;
    if (!graph.isOutlined()) {
      body = &graph.getBody().front();
    } else {
      auto callee = symbols.lookup<func::FuncOp>(graph.getCallee());
      if (!callee || callee.isExternal())
        continue; // the verifier reports a missing callee
      // A graph function called from elsewhere too gets a copy for this
      // call site.
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(callee, module);
      if (!uses || std::distance(uses->begin(), uses->end()) != 1) {
        func::FuncOp copy = callee.clone();
        copy.setName((callee.getName() + "_aliased").str());
        symbols.insert(copy, std::next(Block::iterator(callee)));
        graph.setCalleeAttr(FlatSymbolRefAttr::get(copy.getNameAttr()));
        callee = copy;
      }
      body = &callee.getBody().front();
    }
    for (auto [j, i] : repeats) {
      if (j >= body->getNumArguments())
        break;
      BlockArgument dup = body->getArgument(j), first = body->getArgument(i);
      if (dup.getType() != first.getType()) {
        graph.emitError("passes one ref as inputs #")
            << i << " and #" << j << " of types " << first.getType()
            << " and " << dup.getType()
            << ": kiln-functionalize needs the same type to treat them as "
               "one buffer";
        ok = false;
        continue;
      }
      dup.replaceAllUsesWith(first);
    }
  }
  return success(ok);
}

LogicalResult kiln::functionalize(ModuleOp module) {
  if (failed(mergeRepeatedRefOperands(module)))
    return failure();
  bool ok = true;
  forEachBody(module, [&](Block &block) {
    bool hasRef = llvm::any_of(block.getArguments(), isRef);
    block.walk([&](Operation *op) {
      hasRef |= llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RefType>) ||
                llvm::any_of(op->getResultTypes(), llvm::IsaPred<RefType>);
    });
    if (hasRef && failed(functionalizeBlock(block)))
      ok = false;
  });
  return success(ok);
}

LogicalResult kiln::verifyFunctional(Operation *root) {
  unsigned errors = 0;
  forEachBody(root, [&](Block &block) {
    // The allowed uses: per ref argument, the first load among the leading
    // loads of the body and the first store among the trailing stores.
    DenseSet<Operation *> allowed;
    DenseSet<Value> loaded, stored;
    for (Operation &op : block) {
      auto l = dyn_cast<LoadOp>(op);
      if (!l)
        break;
      auto arg = dyn_cast<BlockArgument>(l.getRef());
      if (arg && arg.getOwner() == &block && loaded.insert(arg).second)
        allowed.insert(&op);
    }
    for (Operation &op : llvm::reverse(block.without_terminator())) {
      auto st = dyn_cast<StoreOp>(op);
      if (!st)
        break;
      auto arg = dyn_cast<BlockArgument>(st.getRef());
      if (arg && arg.getOwner() == &block && stored.insert(arg).second)
        allowed.insert(&op);
    }
    block.walk([&](Operation *op) {
      if (allowed.contains(op))
        return;
      if (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RefType>) ||
          llvm::any_of(op->getResultTypes(), llvm::IsaPred<RefType>)) {
        op->emitError("'")
            << op->getName()
            << "' uses a !kt.ref after functionalization (only one leading "
               "kt.load and one trailing kt.store per ref argument may "
               "remain; run kiln-functionalize)";
        ++errors;
      }
    });
  });
  return success(errors == 0);
}

FailureOr<func::FuncOp>
kiln::buildValueForm(func::FuncOp fn, StringRef name,
                     SmallVectorImpl<unsigned> &storedArgs) {
  storedArgs.clear();
  auto fail = [&](Operation *op, const Twine &msg) {
    op->emitError(msg);
    return failure();
  };
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return fail(fn, "@" + fn.getSymName() +
                        " is not a one-block function (no value form)");
  OpBuilder b(fn->getContext());
  b.setInsertionPointAfter(fn);
  auto copy = cast<func::FuncOp>(b.clone(*fn));
  copy.setSymName(name);
  copy.setPrivate();
  Block &block = copy.getBody().front();
  // The body in the epilogue form first (a no-op when it already is).
  if (failed(functionalizeBlock(block))) {
    copy.erase();
    return failure();
  }
  Operation *term = block.getTerminator();
  SmallVector<Value> stored;
  SmallVector<Operation *> dead;
  SmallVector<Type> argTypes;
  for (BlockArgument arg : block.getArguments()) {
    auto ref = dyn_cast<RefType>(arg.getType());
    if (!ref) {
      argTypes.push_back(arg.getType());
      continue;
    }
    Value value;
    SmallVector<Operation *> users(arg.getUsers().begin(),
                                   arg.getUsers().end());
    arg.setType(ref.getTensorType());
    for (Operation *user : users) {
      if (auto load = dyn_cast<LoadOp>(user)) {
        // Every load reads the argument's value: writes are trailing.
        load.getResult().replaceAllUsesWith(arg);
        dead.push_back(load);
      } else if (auto store = dyn_cast<StoreOp>(user)) {
        bool trailing = true;
        for (Operation *n = store->getNextNode(); n && n != term;
             n = n->getNextNode())
          trailing &= isa<StoreOp>(n);
        if (value || !trailing || store.getRef() != arg)
          return copy.erase(),
                 fail(user, "'kt.store' that is not one trailing store of "
                            "a ref argument (run kiln-functionalize)");
        value = store.getValue();
        dead.push_back(store);
      } else {
        return copy.erase(),
               fail(user, "'" + user->getName().getStringRef() +
                              "' uses a ref argument (run "
                              "kiln-functionalize)");
      }
    }
    if (value) {
      stored.push_back(value);
      storedArgs.push_back(arg.getArgNumber());
    }
    argTypes.push_back(ref.getTensorType());
  }
  for (Operation *op : dead)
    op->erase();
  for (Operation &op : block)
    for (Value v : op.getOperands())
      if (isa<RefType>(v.getType()))
        return copy.erase(), fail(&op, "a ref that is not an argument "
                                       "(run kiln-functionalize)");
  term->insertOperands(term->getNumOperands(), stored);
  copy.setFunctionType(b.getFunctionType(
      argTypes, llvm::to_vector(term->getOperandTypes())));
  return copy;
}

namespace {
struct KilnFunctionalizePass
    : public kiln::impl::KilnFunctionalizePassBase<KilnFunctionalizePass> {
  void runOnOperation() override {
    if (failed(functionalize(getOperation())))
      signalPassFailure();
  }
};

struct KilnVerifyFunctionalPass
    : public kiln::impl::KilnVerifyFunctionalPassBase<
          KilnVerifyFunctionalPass> {
  void runOnOperation() override {
    if (failed(verifyFunctional(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
