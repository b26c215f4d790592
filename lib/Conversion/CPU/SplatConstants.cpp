//===- SplatConstants.cpp - Splat tensor constants as fills ---------------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h
// (splatConstantsAsFills). One-shot bufferization turns a tensor
// arith.constant into a memref.global and the LLVM translation writes out
// every element, whatever the size: `kt.constant dense<1.5> :
// tensor<2147483648xf32>` became an 8 GiB array at compile time. A splat
// stays one scalar: a fill of a fresh tensor.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

unsigned kiln::cpu::splatConstantsAsFills(Operation *root) {
  SmallVector<arith::ConstantOp> splats;
  root->walk([&](arith::ConstantOp c) {
    auto type = dyn_cast<RankedTensorType>(c.getType());
    auto value = dyn_cast<SplatElementsAttr>(c.getValue());
    if (type && value && type.hasStaticShape())
      splats.push_back(c);
  });
  for (arith::ConstantOp c : splats) {
    OpBuilder b(c);
    Location loc = c.getLoc();
    auto type = cast<RankedTensorType>(c.getType());
    auto value = cast<SplatElementsAttr>(c.getValue());
    Value scalar = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(value.getSplatValue<Attribute>()));
    Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                         type.getElementType(),
                                         type.getEncoding());
    Value fill = linalg::FillOp::create(b, loc, scalar, init).getResult(0);
    c.replaceAllUsesWith(fill);
    c.erase();
  }
  return splats.size();
}
