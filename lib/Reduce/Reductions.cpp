//===- Reductions.cpp - Kiln's reductions for kiln-reduce -----------------===//
//
// Part of Kiln. See kiln/Reduce/Reductions.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Reduce/Reductions.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KT/IR/KTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Reducer/ReductionPatternInterface.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

Value reduce::createSplatConstant(OpBuilder &b, Location loc, Type type,
                                  double value) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return nullptr;
  Type elem = tensor.getElementType();
  Attribute scalar;
  if (auto f = dyn_cast<FloatType>(elem))
    scalar = b.getFloatAttr(f, value);
  else if (auto i = dyn_cast<IntegerType>(elem))
    scalar = b.getIntegerAttr(i, static_cast<int64_t>(value));
  else
    return nullptr;
  auto attr = DenseElementsAttr::get(tensor, scalar);
  return kt::ConstantOp::create(b, loc, tensor, attr).getResult();
}

void reduce::eraseDeadOps(func::FuncOp fn) {
  // Last first: erasing an op can only make earlier ops dead.
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

void reduce::eraseUnusedArguments(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  llvm::BitVector unused(body.getNumArguments());
  for (BlockArgument a : body.getArguments())
    unused[a.getArgNumber()] = a.use_empty();
  if (unused.none())
    return;
  (void)fn.eraseArguments(unused);
}

unsigned reduce::countOps(ModuleOp module) {
  unsigned n = 0;
  module.walk([&](Operation *op) { n += !isa<ModuleOp, func::FuncOp>(op); });
  return n;
}

//===----------------------------------------------------------------------===//
// MLIR's reduce machinery: the kt dialect's reduction patterns
//===----------------------------------------------------------------------===//

namespace {

/// Whether `op` is a kt op that a reduction pattern may replace.
bool replaceableKTOp(Operation *op) {
  return isa_and_nonnull<kt::KTDialect>(op->getDialect()) &&
         op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         !op->hasTrait<OpTrait::ConstantLike>() && isMemoryEffectFree(op) &&
         !op->use_empty();
}

/// The value that replaces `op`'s result: an operand of the result's type
/// (`forward`), else a zeros splat `kt.constant` created before `op`.
Value replacementFor(Operation *op, OpBuilder &b, bool forward) {
  Type type = op->getResult(0).getType();
  if (forward) {
    for (Value v : op->getOperands())
      if (v.getType() == type)
        return v;
    return nullptr;
  }
  b.setInsertionPoint(op);
  return reduce::createSplatConstant(b, op->getLoc(), type, 0.0);
}

/// Replaces a kt op's result by an operand of its type (`forward`, benefit
/// 2) or by a zeros splat (benefit 1). With a tester, only where the module
/// stays interesting: the rewrite is tried on a copy of the module first.
/// (MLIR's reduction tree replays the patterns on its root's ops at the end
/// and requires the result to be interesting.)
struct ReplaceKTResult : public RewritePattern {
  ReplaceKTResult(MLIRContext *ctx, bool forward, const Tester *tester)
      : RewritePattern(MatchAnyOpTypeTag(), forward ? 2 : 1, ctx),
        forward(forward), tester(tester) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rw) const override {
    if (!replaceableKTOp(op))
      return failure();
    if (tester) {
      auto module = op->getParentOfType<ModuleOp>();
      if (!module)
        return failure();
      // The op's place in the module's walk locates it in a copy.
      unsigned index = 0, at = 0;
      module.walk([&](Operation *o) {
        if (o == op)
          at = index;
        ++index;
      });
      OwningOpRef<ModuleOp> copy = module.clone();
      Operation *twin = nullptr;
      index = 0;
      copy->walk([&](Operation *o) {
        if (index++ == at)
          twin = o;
      });
      OpBuilder b(twin);
      Value with = replacementFor(twin, b, forward);
      if (!with)
        return failure();
      twin->getResult(0).replaceAllUsesWith(with);
      twin->erase();
      if (tester->isInteresting(*copy).first != Tester::Interestingness::True)
        return failure();
    }
    Value with = replacementFor(op, rw, forward);
    if (!with)
      return failure();
    rw.replaceOp(op, with);
    return success();
  }
  bool forward;
  const Tester *tester;
};

struct KTReductionPatterns : public DialectReductionPatternInterface {
  KTReductionPatterns(Dialect *dialect)
      : DialectReductionPatternInterface(dialect) {}
  // The patterns are tried with MLIR's tester only (see ReplaceKTResult).
  void populateReductionPatterns(RewritePatternSet &) const override {}
  void populateReductionPatternsWithTester(RewritePatternSet &patterns,
                                           Tester &tester) const override {
    reduce::populateKTReductionPatterns(patterns, &tester);
  }
};

} // namespace

void reduce::populateKTReductionPatterns(RewritePatternSet &patterns,
                                         const Tester *tester) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReplaceKTResult>(ctx, /*forward=*/true, tester);
  patterns.add<ReplaceKTResult>(ctx, /*forward=*/false, tester);
}

void reduce::registerReductionPatternInterfaces(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, kt::KTDialect *dialect) {
    dialect->addInterfaces<KTReductionPatterns>();
  });
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

LogicalResult reduce::retypeArguments(func::FuncOp fn,
                                      ArrayRef<Type> argTypes) {
  Block &body = fn.getBody().front();
  if (argTypes.size() != body.getNumArguments())
    return failure();
  for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
    arg.setType(type);
  MLIRContext *ctx = fn.getContext();
  for (Operation &op : body.without_terminator()) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    if (!infer)
      continue; // its types stay; the verifier judges them
    SmallVector<Type> types;
    // No location: a failed inference is a rejected candidate, not an
    // error to print.
    if (failed(infer.inferReturnTypes(
            ctx, std::nullopt, op.getOperands(), op.getRawDictionaryAttrs(),
            op.getPropertiesStorage(), op.getRegions(), types)) ||
        types.size() != op.getNumResults())
      return failure();
    for (auto [r, t] : llvm::zip(op.getResults(), types))
      r.setType(t);
  }
  SmallVector<Type> results(body.getTerminator()->getOperandTypes());
  fn.setFunctionType(FunctionType::get(ctx, argTypes, results));
  return success();
}

namespace {
/// `t` with each dim mapped by `f(index, size)` (a tensor; other types
/// stay).
Type mapDims(Type t, llvm::function_ref<int64_t(unsigned, int64_t)> f) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor)
    return t;
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(tensor.getShape()))
    shape.push_back(f(i, d));
  return tensor.clone(shape);
}

int64_t halve(int64_t s) { return (s + 1) / 2; }
} // namespace

std::vector<reduce::TypeCandidate> reduce::typeCandidates(func::FuncOp fn) {
  std::vector<Type> current(fn.getArgumentTypes().begin(),
                            fn.getArgumentTypes().end());
  std::vector<TypeCandidate> out;
  auto add = [&](std::string what, std::vector<Type> types) {
    if (types != current)
      out.push_back({std::move(what), std::move(types)});
  };
  auto mapAll = [&](llvm::function_ref<Type(unsigned, Type)> f) {
    std::vector<Type> types;
    for (auto [i, t] : llvm::enumerate(current))
      types.push_back(f(i, t));
    return types;
  };
  // Every static dim to 1.
  add("every static dim to 1", mapAll([](unsigned, Type t) {
        return mapDims(t, [](unsigned, int64_t d) {
          return ShapedType::isDynamic(d) ? d : std::min<int64_t>(d, 1);
        });
      }));
  // Each distinct size, largest first: to 1, or halved.
  SmallVector<int64_t> sizes;
  for (Type t : current)
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      for (int64_t d : tensor.getShape())
        if (!ShapedType::isDynamic(d) && d > 1)
          sizes.push_back(d);
  llvm::sort(sizes, std::greater<int64_t>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (int64_t s : sizes)
    for (int64_t to : {int64_t(1), halve(s)})
      if (to == 1 || halve(s) != 1)
        add("every dim of size " + std::to_string(s) + " to " +
                std::to_string(to),
            mapAll([&](unsigned, Type t) {
              return mapDims(
                  t, [&](unsigned, int64_t d) { return d == s ? to : d; });
            }));
  // Each dim of each ranked argument, in order: f(argument, dim, size);
  // and the arguments' types with one dim set.
  auto forEachDim =
      [&](llvm::function_ref<void(unsigned, unsigned, int64_t)> f) {
        for (auto [a, t] : llvm::enumerate(current))
          if (auto tensor = dyn_cast<RankedTensorType>(t))
            for (auto [k, d] : llvm::enumerate(tensor.getShape()))
              f(a, k, d);
      };
  auto withDim = [&](unsigned a, unsigned k, int64_t to) {
    std::vector<Type> types = current;
    types[a] = mapDims(current[a],
                       [&](unsigned i, int64_t x) { return i == k ? to : x; });
    return types;
  };
  // Each dim of each argument: to 1, or halved.
  forEachDim([&](unsigned a, unsigned k, int64_t d) {
    if (ShapedType::isDynamic(d) || d <= 1)
      return;
    for (int64_t to : {int64_t(1), halve(d)})
      if (to == 1 || halve(d) != 1)
        add("dim " + std::to_string(k) + " of argument " + std::to_string(a) +
                " to " + std::to_string(to),
            withDim(a, k, to));
  });
  // Dynamic dims static: all, then each.
  add("every dynamic dim to 1", mapAll([](unsigned, Type t) {
        return mapDims(t, [](unsigned, int64_t d) {
          return ShapedType::isDynamic(d) ? 1 : d;
        });
      }));
  forEachDim([&](unsigned a, unsigned k, int64_t d) {
    if (ShapedType::isDynamic(d))
      add("dynamic dim " + std::to_string(k) + " of argument " +
              std::to_string(a) + " to 1",
          withDim(a, k, 1));
  });
  // Each dim dropped.
  for (auto [a, t] : llvm::enumerate(current)) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      continue;
    for (unsigned k = 0; k < tensor.getRank(); ++k) {
      SmallVector<int64_t> shape(tensor.getShape());
      shape.erase(shape.begin() + k);
      std::vector<Type> types = current;
      types[a] = tensor.clone(shape);
      add("dim " + std::to_string(k) + " of argument " + std::to_string(a) +
              " dropped",
          std::move(types));
    }
  }
  // Narrower float dtypes, all float arguments at once.
  MLIRContext *ctx = fn.getContext();
  auto narrow = [&](Type from, Type to, std::string what) {
    add(what, mapAll([&](unsigned, Type t) {
          auto tensor = dyn_cast<RankedTensorType>(t);
          if (tensor && tensor.getElementType() == from)
            return Type(tensor.clone(to));
          return t;
        }));
  };
  narrow(Float64Type::get(ctx), Float32Type::get(ctx), "f64 arguments to f32");
  narrow(Float32Type::get(ctx), Float16Type::get(ctx), "f32 arguments to f16");
  return out;
}

uint64_t reduce::argumentBits(func::FuncOp fn) {
  uint64_t total = 0;
  for (Type t : fn.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor) {
      total += 64;
      continue;
    }
    uint64_t n = 1;
    for (int64_t d : tensor.getShape())
      n *= ShapedType::isDynamic(d) ? 8 : static_cast<uint64_t>(d);
    Type elem = tensor.getElementType();
    uint64_t bits = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 64;
    // A rank counts too: dropping a dim of size 1 is a reduction.
    total += n * bits + tensor.getRank();
  }
  return total;
}
