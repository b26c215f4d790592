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
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Parses the bytes of a .npy file. Errors name what is wrong ("not a .npy
/// file (bad magic)", "unsupported dtype '>f4' (big endian)", "truncated .npy
/// data: expected 24 bytes, found 20", "the header declares
/// tensor<4294967296x4294967296xf32>, which has more than 2^63 - 1 bytes").
/// The size the header declares is checked (for overflow, then against the
/// data there is) before the tensor is allocated.
llvm::Expected<interp::Tensor> parseNPY(llvm::StringRef bytes);

/// Reads a .npy file: its header, then, once the declared size matches the
/// file's size, the data straight into the tensor. A path that is not a
/// regular file (a directory, /dev/zero, a FIFO) is an error. Errors start
/// with the path.
llvm::Expected<interp::Tensor> readNPY(llvm::StringRef path);

/// Writes a tensor as .npy bytes to `os`.
void writeNPY(llvm::raw_ostream &os, const interp::Tensor &t);

/// Writes a tensor to `path` atomically (a temporary file in the same
/// directory, then a rename; see kiln/Support/OutputFiles.h), so a failure
/// never leaves a partial file. Several files that belong together go
/// through one OutputFileSet instead.
llvm::Error writeNPY(llvm::StringRef path, const interp::Tensor &t);

} // namespace kiln

#endif // KILN_SUPPORT_NPY_H
