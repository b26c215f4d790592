//===- PadToCopy.cpp - tensor.pad as a vectorizable fill + copy -----------===//
//
// Part of Kiln. See kiln/Conversion/CPU/CPUCodegen.h. Every tensor.pad whose
// padding value is the same for all elements (a constant, or any value
// defined outside the pad's region) becomes fill + linalg.copy into the
// interior (padAsFillAndCopy), which kiln-cpu-tile-vectorize tiles,
// vectorizes and threads. Pads whose region computes the value per element
// stay as they are.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/CPU/CPUCodegen.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

unsigned kiln::cpu::padsAsFillAndCopy(Operation *root) {
  SmallVector<tensor::PadOp> pads;
  root->walk([&](tensor::PadOp pad) {
    if (pad.getConstantPaddingValue())
      pads.push_back(pad);
  });
  IRRewriter rw(root->getContext());
  unsigned n = 0;
  for (tensor::PadOp pad : pads)
    n += succeeded(padAsFillAndCopy(rw, pad));
  return n;
}
