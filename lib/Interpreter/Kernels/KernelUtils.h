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

/// Converts a linear row-major index to a multi-index.
void delinearize(int64_t linear, llvm::ArrayRef<int64_t> shape,
                 llvm::SmallVectorImpl<int64_t> &idx);

} // namespace kiln::interp

#endif // KILN_LIB_INTERPRETER_KERNELS_KERNELUTILS_H
