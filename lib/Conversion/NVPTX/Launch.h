//===- Launch.h - gpu.launch helpers of the kiln-nvptx passes ---*- C++ -*-===//
//
// Part of Kiln. Private to lib/Conversion/NVPTX.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_NVPTX_LAUNCH_H
#define KILN_LIB_CONVERSION_NVPTX_LAUNCH_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace kiln::nvptx {

/// A kernel name valid in PTX ([A-Za-z0-9_$]): the enclosing function's
/// name with other characters as '_' (a renamed reserved symbol is
/// kiln.user.<name>), then `_kernel`.
std::string kernelName(mlir::Operation *at);

/// A gpu.launch with a 1-D grid and 1-D blocks at `b`'s insertion point;
/// `inner` is set inside its body, before the terminator.
mlir::gpu::LaunchOp createLaunch(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value grid, mlir::Value block,
                                 mlir::OpBuilder &inner);

/// Whether `op` is at the host level of its function: in the body or in
/// host scf.if regions, not inside a loop or a kernel.
bool onHostLevel(mlir::Operation *op);

} // namespace kiln::nvptx

#endif // KILN_LIB_CONVERSION_NVPTX_LAUNCH_H
