//===- TensorFormat.h - Stable text form of tensors -------------*- C++ -*-===//
//
// Part of Kiln. The text `kiln-run --print` writes, stable so FileCheck can
// match it:
//
//   result0: tensor<2x3xf32>
//   [[1, 2.5, -0],
//    [nan, inf, -inf]]
//
// Floats print with %.7g (f32), %.4g (f16, bf16) or %.15g (f64); integers in
// decimal; i1 as true/false. The innermost dim is one line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_TENSORFORMAT_H
#define KILN_SUPPORT_TENSORFORMAT_H

#include "kiln/Interpreter/Tensor.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Prints the elements of `t` (nested brackets, no header line).
void printTensorValues(llvm::raw_ostream &os, const interp::Tensor &t);

/// Prints one element.
void printElement(llvm::raw_ostream &os, const interp::Tensor &t, int64_t i);

} // namespace kiln

#endif // KILN_SUPPORT_TENSORFORMAT_H
