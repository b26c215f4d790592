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

using namespace mlir;
using namespace kiln;

std::string kiln::formatRuntimeError(StringRef tmpl, int64_t a, int64_t b) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}' &&
        (tmpl[i + 1] == '0' || tmpl[i + 1] == '1')) {
      out += std::to_string(tmpl[i + 1] == '0' ? a : b);
      i += 2;
      continue;
    }
    out += tmpl[i];
  }
  return out;
}

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

int64_t lowering::registerRuntimeError(RewriterBase &rw, Operation *op,
                                       StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  MLIRContext *ctx = rw.getContext();
  if (!module.lookupSymbol(kRuntimeErrorFn)) {
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToStart(module.getBody());
    Type i64 = rw.getI64Type();
    auto fn = func::FuncOp::create(rw, module.getLoc(), kRuntimeErrorFn,
                                   FunctionType::get(ctx, {i64, i64, i64}, {}));
    fn.setPrivate();
  }
  SmallVector<Attribute> msgs;
  if (auto a = module->getAttrOfType<ArrayAttr>(kRuntimeErrorsAttr))
    msgs.assign(a.begin(), a.end());
  std::string msg = locationText(op->getLoc()) + ": " + text.str();
  msgs.push_back(StringAttr::get(ctx, msg));
  rw.modifyOpInPlace(module, [&] {
    module->setAttr(kRuntimeErrorsAttr, ArrayAttr::get(ctx, msgs));
  });
  return (int64_t)msgs.size() - 1;
}

void lowering::emitRuntimeCheck(OpBuilder &b, Location loc, Value failed,
                                int64_t id, Value a, Value bv) {
  Type i64 = b.getI64Type();
  auto asI64 = [&](Value v) -> Value {
    if (!v)
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    if (v.getType().isIndex())
      return arith::IndexCastOp::create(b, loc, i64, v);
    return convertScalar(b, loc, v, i64);
  };
  Value va = asI64(a), vb = asI64(bv);
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &nb, Location nl) {
    Value idv = arith::ConstantOp::create(nb, nl, nb.getI64IntegerAttr(id));
    func::CallOp::create(nb, nl, kRuntimeErrorFn, TypeRange{},
                         ValueRange{idv, va, vb});
    scf::YieldOp::create(nb, nl);
  });
}
