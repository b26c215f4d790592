//===- KTViewInference.h - Shape rules shared by views and value ops -*- C++ -*-===//
//
// Part of Kiln. The shape ops that have a view form on refs (kt.view_reshape
// ... kt.view_unsqueeze) share one shape rule with it: `inferViewShape` runs
// the value op's rule on a given input tensor type and reports errors under a
// given op name. `inferView` is the result-type inference of a view op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KT_IR_KTVIEWINFERENCE_H
#define KILN_DIALECT_KT_IR_KTVIEWINFERENCE_H

#include "kiln/Dialect/KT/IR/KTOps.h"

namespace kiln::kt {

#define KT_DECLARE_VIEW_SHAPE_RULE(OP)                                         \
  mlir::LogicalResult inferViewShape(                                          \
      std::optional<mlir::Location> loc, llvm::StringRef name,                 \
      mlir::RankedTensorType in, OP::Adaptor adaptor,                          \
      llvm::SmallVectorImpl<mlir::Type> &types);
KT_DECLARE_VIEW_SHAPE_RULE(ReshapeOp)
KT_DECLARE_VIEW_SHAPE_RULE(TransposeOp)
KT_DECLARE_VIEW_SHAPE_RULE(PermuteOp)
KT_DECLARE_VIEW_SHAPE_RULE(ExpandOp)
KT_DECLARE_VIEW_SHAPE_RULE(SqueezeOp)
KT_DECLARE_VIEW_SHAPE_RULE(UnsqueezeOp)
KT_DECLARE_VIEW_SHAPE_RULE(SliceOp)
KT_DECLARE_VIEW_SHAPE_RULE(SelectOp)
#undef KT_DECLARE_VIEW_SHAPE_RULE

} // namespace kiln::kt

#endif // KILN_DIALECT_KT_IR_KTVIEWINFERENCE_H
