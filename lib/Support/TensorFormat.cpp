//===- TensorFormat.cpp - Stable text form of tensors ---------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/TensorFormat.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace llvm;
using kiln::interp::DType;
using kiln::interp::Tensor;

namespace kiln {

void printElement(raw_ostream &os, const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::I1:
    os << (t.getB(i) ? "true" : "false");
    return;
  case DType::I8:
  case DType::U8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
    os << t.getI(i);
    return;
  default:
    break;
  }
  double v = t.getF(i);
  if (std::isnan(v)) {
    os << "nan";
    return;
  }
  if (std::isinf(v)) {
    os << (v < 0 ? "-inf" : "inf");
    return;
  }
  const char *fmt = t.dtype() == DType::F64   ? "%.15g"
                    : t.dtype() == DType::F32 ? "%.7g"
                                              : "%.4g";
  os << format(fmt, v);
}

static void printRec(raw_ostream &os, const Tensor &t, int64_t dim,
                     int64_t &next, int indent) {
  if (dim == t.rank()) {
    printElement(os, t, next++);
    return;
  }
  os << '[';
  for (int64_t i = 0; i < t.dim(dim); ++i) {
    if (i) {
      os << ',';
      if (dim + 1 == t.rank())
        os << ' ';
      else
        os << '\n' << std::string(indent + 1, ' ');
    }
    printRec(os, t, dim + 1, next, indent + 1);
  }
  os << ']';
}

void printTensorValues(raw_ostream &os, const Tensor &t) {
  int64_t next = 0;
  printRec(os, t, 0, next, 0);
}

} // namespace kiln
