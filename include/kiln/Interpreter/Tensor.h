//===- Tensor.h - Host tensors of the reference interpreter -----*- C++ -*-===//
//
// Part of Kiln. A `Tensor` is a dense, contiguous, row-major host buffer with
// an element type (`DType`) and a shape. Tensors are immutable once a kernel
// has produced them; copies share the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INTERPRETER_TENSOR_H
#define KILN_INTERPRETER_TENSOR_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::interp {

/// Element types the interpreter stores. `index` values are stored as I64.
/// I8 and I16 are PyTorch's int8 and int16 (MLIR's signless i8 and i16,
/// read as signed); U8 is uint8 (MLIR's unsigned `ui8`, read as unsigned):
/// getI returns 0..255 for it, so every int64 kernel computes uint8's
/// unsigned comparisons, division, max/min and casts, and setI wraps.
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, I1, I8, U8, I16 };

size_t dtypeSize(DType dt);
bool isFloatDType(DType dt);
/// The smallest and largest value of an integer dtype (I1: 0 and 1).
int64_t intDTypeMin(DType dt);
int64_t intDTypeMax(DType dt);
llvm::StringRef dtypeName(DType dt);
/// The DType of an MLIR element type (f32 ... i1, index), if it has one.
std::optional<DType> dtypeFromType(mlir::Type type);
mlir::Type dtypeToType(DType dt, mlir::MLIRContext *ctx);

/// IEEE half and bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBF16(float f);
/// Rounds `v` to the precision of the float dtype `dt` (identity for F64).
double roundToDType(double v, DType dt);

/// Number of elements of the shape of an existing tensor (0 if a dim is 0).
/// For a shape that comes from elsewhere, use `tensorSize`.
int64_t numElements(llvm::ArrayRef<int64_t> shape);
/// Row-major strides (in elements) of a shape.
llvm::SmallVector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> shape);
/// Whether elements laid out by `strides` are row-major and dense: the
/// contiguous strides, except that a dim of size 1 may have any stride (so
/// the elements are one block of `numElements(shape)` from the offset).
bool isRowMajor(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides);

/// The elements and bytes of a dense tensor.
struct TensorSize {
  int64_t elements = 0;
  int64_t bytes = 0;
};
/// The size of a dense tensor of `shape` with elements of `elementBytes`
/// bytes; std::nullopt when a dim is negative or the element or byte count
/// exceeds INT64_MAX (no such tensor can exist). Every size that comes from
/// outside (a .npy header, a DLPack tensor, a tensor type, the shape an op
/// computes) is checked with it before anything is allocated or read.
std::optional<TensorSize> tensorSize(llvm::ArrayRef<int64_t> shape,
                                     size_t elementBytes);
/// `tensor<2x3xf32>`: a tensor's dtype and shape for messages.
std::string tensorTypeString(DType dt, llvm::ArrayRef<int64_t> shape);
/// "4398046511104 bytes (4.0 TiB)" for messages.
std::string byteCountString(uint64_t bytes);

/// The bytes a tensor's elements live in: owned (zero-filled, from calloc,
/// so pages nobody writes are never touched), or adopted from elsewhere
/// (e.g. a compiled function's result buffer) and released by a callback
/// when the last tensor using them goes away.
class TensorStorage {
public:
  /// `bytes` (at least 1) zero-filled bytes; null when they cannot be
  /// allocated.
  static std::shared_ptr<TensorStorage> allocate(size_t bytes);
  TensorStorage(void *data, std::function<void()> release)
      : bytes(static_cast<uint8_t *>(data)), release(std::move(release)) {}
  TensorStorage(const TensorStorage &) = delete;
  TensorStorage &operator=(const TensorStorage &) = delete;
  ~TensorStorage();
  uint8_t *data() { return bytes; }
  const uint8_t *data() const { return bytes; }

private:
  TensorStorage() = default;
  uint8_t *bytes = nullptr;
  bool owned = false; ///< `bytes` came from calloc
  std::function<void()> release;
};

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor. Fails, with a message naming the tensor
  /// (`tensor<...>`) and its size, when the size overflows (see
  /// `tensorSize`) or the memory cannot be allocated; callers add what the
  /// tensor is (an op's result, an argument). This is the only way to
  /// allocate a tensor of a given shape: nothing writes through a failed
  /// allocation.
  static llvm::Expected<Tensor> create(DType dt, llvm::ArrayRef<int64_t> shape);
  /// A contiguous tensor over `data` (not copied); `release` runs when the
  /// last tensor sharing it is destroyed.
  static Tensor adopt(DType dt, llvm::ArrayRef<int64_t> shape, void *data,
                      std::function<void()> release);

  /// A rank-0 tensor holding `v` (converted to `dt`).
  static Tensor scalar(DType dt, double v);
  static Tensor scalarInt(DType dt, int64_t v);

  bool isNull() const { return !buffer; }
  DType dtype() const { return dt; }
  bool isFloat() const { return isFloatDType(dt); }
  llvm::ArrayRef<int64_t> shape() const { return dims; }
  int64_t rank() const { return dims.size(); }
  int64_t dim(int64_t i) const { return dims[i]; }
  int64_t numel() const { return count; }
  size_t byteSize() const { return count * dtypeSize(dt); }

  /// Element `i` (linear, row-major) converted to double / int64 / bool.
  /// Float to int conversion truncates toward zero.
  double getF(int64_t i) const;
  int64_t getI(int64_t i) const;
  bool getB(int64_t i) const { return getF(i) != 0.0; }
  /// Stores `v` converted to the dtype: floats round to nearest even, ints
  /// truncate toward zero (NaN stores 0), i1 stores `v != 0`.
  void setF(int64_t i, double v);
  void setI(int64_t i, int64_t v);

  /// All elements as doubles / int64.
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;

  const void *data() const { return buffer->data(); }
  void *mutableData() { return buffer->data(); }
  template <typename T> const T *ptr() const {
    return reinterpret_cast<const T *>(buffer->data());
  }
  template <typename T> T *mutablePtr() {
    return reinterpret_cast<T *>(buffer->data());
  }

  /// The same data with another shape of equal element count (no copy).
  Tensor reshaped(llvm::ArrayRef<int64_t> newShape) const;

  // Refs (values of `!kt.ref` type). A ref is a view over storage shared by
  // all of its aliases: the buffer is the whole storage, and element `idx`
  // (a multi-index over `shape()`) lives at storage index
  // `refOffset() + sum(idx[k] * refStrides()[k])`. On a ref, getF/setF/getI/
  // setI take storage indices; `loadRef` copies the contents out.

  /// True for a ref.
  bool isRef() const { return layout != nullptr; }
  /// True when both tensors live in the same storage (a ref and the tensor
  /// it was made from, two views of one base, copies of one tensor).
  bool sharesStorage(const Tensor &o) const {
    return buffer && buffer == o.buffer;
  }
  int64_t refOffset() const { return layout ? layout->offset : 0; }
  llvm::ArrayRef<int64_t> refStrides() const { return layout->strides; }
  /// A contiguous ref over the buffer of `t` (not a copy: writes through the
  /// ref change `t`). A ref is returned unchanged.
  static Tensor makeRef(const Tensor &t);
  /// A ref with another layout over the same storage.
  Tensor refView(llvm::ArrayRef<int64_t> shape, int64_t offset,
                 llvm::ArrayRef<int64_t> strides) const;
  /// The current contents of a ref as a new contiguous tensor (a plain tensor
  /// is returned unchanged). Fails like `create`.
  llvm::Expected<Tensor> loadRef() const;
  /// For a row-major ref (see isRowMajor; any offset): a plain tensor over
  /// its elements, not a copy (it keeps the storage alive), so later writes
  /// through the ref change it: for a reader that finishes before the next
  /// write (a compiled graph's inputs). Null for any other tensor.
  Tensor rowMajorRefContents() const;
  /// This tensor converted to `dt` (PyTorch `.to(dtype)` semantics). Fails
  /// like `create`.
  llvm::Expected<Tensor> convertTo(DType dt) const;
  /// A contiguous copy of the contents (a ref's contents, a plain tensor's
  /// elements) in a new buffer. Fails like `create`.
  llvm::Expected<Tensor> clone() const;

private:
  DType dt = DType::F32;
  llvm::SmallVector<int64_t, 4> dims;
  int64_t count = 0;
  std::shared_ptr<TensorStorage> buffer;
  struct RefLayout {
    int64_t offset = 0;
    llvm::SmallVector<int64_t, 4> strides;
  };
  /// Set for refs only.
  std::shared_ptr<const RefLayout> layout;
};

} // namespace kiln::interp

#endif // KILN_INTERPRETER_TENSOR_H
