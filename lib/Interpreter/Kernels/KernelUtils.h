//===- KernelUtils.h - Helpers for interpreter kernels ----------*- C++ -*-===//
//
// Part of Kiln. Private to lib/Interpreter: how kernels attach to ops, and the
// broadcasting / indexing helpers they share.
//
// A kernel is a free function
//   LogicalResult interpretFoo(FooOp op, ArrayRef<Tensor> operands,
//                              SmallVectorImpl<Tensor> &results);
// attached with `attachKernel<FooOp, interpretFoo>(ctx)`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_INTERPRETER_KERNELS_KERNELUTILS_H
#define KILN_LIB_INTERPRETER_KERNELS_KERNELUTILS_H

#include "kiln/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>
#include <string>

#include <cmath>
#include <limits>

namespace kiln::interp {

/// The external model that runs `Fn` for ops of type `OpT`.
template <typename OpT, auto Fn>
struct KernelModel
    : public InterpretableOpInterface::ExternalModel<KernelModel<OpT, Fn>, OpT> {
  mlir::LogicalResult interpret(mlir::Operation *op,
                                llvm::ArrayRef<Tensor> operands,
                                llvm::SmallVectorImpl<Tensor> &results) const {
    return Fn(mlir::cast<OpT>(op), operands, results);
  }
};

template <typename OpT, auto Fn> void attachKernel(mlir::MLIRContext *ctx) {
  OpT::template attachInterface<KernelModel<OpT, Fn>>(*ctx);
}

// Registration hooks, one per kernel file (called by Registration.cpp).
void registerElementwiseKernels(mlir::DialectRegistry &registry);
void registerCreationKernels(mlir::DialectRegistry &registry);
void registerReductionKernels(mlir::DialectRegistry &registry);
void registerNNKernels(mlir::DialectRegistry &registry);
void registerNormKernels(mlir::DialectRegistry &registry);
void registerShapeKernels(mlir::DialectRegistry &registry);
void registerArithKernels(mlir::DialectRegistry &registry);
void registerRefKernels(mlir::DialectRegistry &registry);
void registerFusionKernels(mlir::DialectRegistry &registry);

/// DType of result `i` of `op` (a ranked tensor or scalar of a kt type).
DType resultDType(mlir::Operation *op, unsigned i = 0);
/// Element type of result `i` of `op`.
mlir::Type resultElementType(mlir::Operation *op, unsigned i = 0);

/// Allocates the zero-filled tensor a kernel computes into: result #`result`
/// of `op` (the default, #0), or with std::nullopt a temporary. When the size
/// overflows or the memory cannot be allocated, emits "result #0: cannot
/// allocate N bytes (...) for tensor<...>: out of memory" at `op` and fails:
/// the kernel then returns failure without writing anything (Tensor::create
/// is the only way to allocate, so no kernel can write through a failed
/// allocation).
mlir::LogicalResult allocTensor(mlir::Operation *op, Tensor &out, DType dt,
                                llvm::ArrayRef<int64_t> shape,
                                std::optional<unsigned> result = 0);
/// The same for a tensor made by a fallible Tensor method (convertTo,
/// loadRef, clone).
mlir::LogicalResult takeTensor(mlir::Operation *op, llvm::Expected<Tensor> t,
                               Tensor &out, std::optional<unsigned> result = 0);

/// NumPy broadcasting of runtime shapes; on mismatch emits "'<op>' op
/// operands are not broadcast-compatible at run time: ..." and fails.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastRuntimeShapes(mlir::Operation *op, llvm::ArrayRef<Tensor> inputs);

/// Strides (in elements) to read a tensor of `inShape` as if broadcast to
/// `outShape`: 0 along broadcast dims.
llvm::SmallVector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> inShape,
                                            llvm::ArrayRef<int64_t> outShape);

/// Calls `fn(outIndex, offsets)` for each element of `outShape` in row-major
/// order, where offsets[k] is the linear element offset into input k given its
/// (broadcast) strides.
template <typename Fn>
void forEachBroadcast(llvm::ArrayRef<int64_t> outShape,
                      llvm::ArrayRef<llvm::SmallVector<int64_t>> strides,
                      Fn &&fn) {
  int64_t total = numElements(outShape);
  size_t rank = outShape.size(), n = strides.size();
  llvm::SmallVector<int64_t> idx(rank, 0), offs(n, 0);
  for (int64_t out = 0; out < total; ++out) {
    fn(out, llvm::ArrayRef<int64_t>(offs));
    for (int64_t d = (int64_t)rank - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d]) {
        for (size_t k = 0; k < n; ++k)
          offs[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < n; ++k)
        offs[k] -= strides[k][d] * (outShape[d] - 1);
      idx[d] = 0;
    }
  }
}

/// "[2, 3]": a runtime shape for error messages.
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

/// PyTorch's slice bounds on a dim of `size`: `start` (absent: 0) and `end`
/// (absent: size), negative ones counted from the end, clamped to the dim;
/// `length` is the number of elements taken every `step`.
struct SliceBounds {
  int64_t start, length;
};
SliceBounds sliceBounds(int64_t size, std::optional<int64_t> start,
                        std::optional<int64_t> end, int64_t step);
/// sliceBounds of a slice op (kt.slice, kt.view_slice, kt.slice_scatter)
/// on a dim of `size`.
template <typename OpT> SliceBounds sliceBoundsOf(OpT op, int64_t size) {
  std::optional<int64_t> start, end;
  if (auto s = op.getStart())
    start = (int64_t)*s;
  if (auto e = op.getEnd())
    end = (int64_t)*e;
  return sliceBounds(size, start, end, (int64_t)op.getStep());
}

/// A strided view of a buffer (PyTorch's as_strided): element `idx` of
/// `shape` is element `offset + sum_k idx[k] * strides[k]` of the buffer.
/// The view ops compute their layout with it, over a contiguous tensor (the
/// copying shape ops: kt.slice, kt.permute, ...) or over a ref's layout (the
/// kt.view_* ops).
struct StridedView {
  llvm::SmallVector<int64_t> shape, strides;
  int64_t offset = 0;

  /// The row-major layout of a contiguous tensor of `shape`.
  static StridedView contiguous(llvm::ArrayRef<int64_t> shape);
  /// The layout of the ref `ref`.
  static StridedView ofRef(const Tensor &ref);

  /// Result dim i is dim perm[i].
  StridedView permuted(llvm::ArrayRef<int64_t> perm) const;
  /// Dim `d` restricted to `b.length` elements from `b.start`, every `step`.
  StridedView sliced(int64_t d, SliceBounds b, int64_t step) const;
  /// Dim `d` fixed at `index` (in range) and dropped.
  StridedView selected(int64_t d, int64_t index) const;
  /// Expanded to `size` (kt.expand's list: -1 keeps a dim; new leading dims
  /// and expanded size-1 dims read with stride 0). Fails, with the error at
  /// `op`, when a dim of size other than 1 would change.
  mlir::FailureOr<StridedView> expanded(mlir::Operation *op,
                                        llvm::ArrayRef<int64_t> size) const;
  /// Squeezed over `dimAttr` (absent: every dim): the listed dims of size 1
  /// are dropped. Fails, with the error at `op`, when such a dim is `?` in
  /// `typeShape` (the op keeps `?` dims in its result type; the message
  /// points to `reshapeOp` instead).
  mlir::FailureOr<StridedView> squeezed(mlir::Operation *op,
                                        mlir::ArrayAttr dimAttr,
                                        llvm::ArrayRef<int64_t> typeShape,
                                        llvm::StringRef reshapeOp) const;
};

/// The sizes of a reshape of `inShape` to `shape` (kt.reshape's list: one
/// entry may be -1, inferred). Fails, with "cannot <what> of shape ...
/// (<n> elements) <prep> shape ..." at `op`, when they do not hold the same
/// number of elements.
mlir::FailureOr<llvm::SmallVector<int64_t>>
reshapeSizes(mlir::Operation *op, llvm::ArrayRef<int64_t> inShape,
             llvm::ArrayRef<int64_t> shape, llvm::StringRef what,
             llvm::StringRef prep);

/// kt.reshape's `shape` with each -2 entry replaced by the value of the next
/// `index` operand of `sizes` (its run-time size). Fails at `op` on a
/// negative size.
mlir::FailureOr<llvm::SmallVector<int64_t>>
substituteSizes(mlir::Operation *op, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<Tensor> sizes);

/// Calls `fn(linear, offset)` for each element of `view` in row-major order,
/// where `offset` is its element offset in the buffer.
template <typename Fn> void forEachStrided(const StridedView &view, Fn &&fn) {
  llvm::SmallVector<int64_t> strides(view.strides);
  forEachBroadcast(view.shape, {strides},
                   [&](int64_t linear, llvm::ArrayRef<int64_t> offs) {
                     fn(linear, view.offset + offs[0]);
                   });
}

/// The permutation of `rank` dims that swaps dims `d0` and `d1` (negative
/// ones counted from the end).
llvm::SmallVector<int64_t> transposePerm(int64_t rank, int64_t d0, int64_t d1);
/// `dims` with negative dims of a rank-`rank` tensor counted from the end.
llvm::SmallVector<int64_t> wrapDims(llvm::ArrayRef<int64_t> dims, int64_t rank);

/// Converts a linear row-major index to a multi-index.
void delinearize(int64_t linear, llvm::ArrayRef<int64_t> shape,
                 llvm::SmallVectorImpl<int64_t> &idx);

/// The kt dialect's maximum / minimum (IEEE 754-2019 maximum / minimum, as
/// arith.maximumf / arith.minimumf): NaN if either operand is NaN, and
/// -0.0 is smaller than +0.0, so the result never depends on the operand
/// order (kt.maximum, kt.minimum, kt.amax, kt.amin, kt.max_pool2d).
inline double ieeeMaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double ieeeMinimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

} // namespace kiln::interp

#endif // KILN_LIB_INTERPRETER_KERNELS_KERNELUTILS_H
