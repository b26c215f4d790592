//===- NPY.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Part of Kiln. Reads and writes NumPy `.npy` files (format versions 1-3,
// little endian, C order) as interpreter tensors.
//
// dtypes: '<f4' f32, '<f8' f64, '<f2' f16, '<i8' i64, '<i4' i32, '|b1' i1.
// NumPy has no bfloat16: bf16 tensors are written as '<f4' (exact), and a
// '<f4' file is accepted for a bf16 input (rounded to nearest even).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_NPY_H
#define KILN_SUPPORT_NPY_H

#include "kiln/Interpreter/Tensor.h"

#include "llvm/Support/Error.h"

namespace kiln {

/// Parses the bytes of a .npy file. Errors name what is wrong ("not a .npy
/// file (bad magic)", "unsupported dtype '>f4' (big endian)", "truncated:
/// expected 24 data bytes, found 20").
llvm::Expected<interp::Tensor> parseNPY(llvm::StringRef bytes);

/// Reads a .npy file.
llvm::Expected<interp::Tensor> readNPY(llvm::StringRef path);

/// Serializes a tensor as .npy bytes.
std::string serializeNPY(const interp::Tensor &t);

/// Writes a tensor to `path` atomically (a temporary file in the same
/// directory, then a rename), so a failure never leaves a partial file.
llvm::Error writeNPY(llvm::StringRef path, const interp::Tensor &t);

} // namespace kiln

#endif // KILN_SUPPORT_NPY_H
