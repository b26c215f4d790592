//===- SpecialFunctions.cpp - kt.special in kernels through libdevice -----===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h
// (specialCallsToLibdevice).
//
// The CPU lowering of kt.special calls the runtime's double-precision
// functions kiln_cpu_special_<fn> (runtime/include/kiln/rt/
// SpecialFunctions.h), which kernels cannot call. Those that CUDA's
// libdevice has (same function, double precision) call it instead; the
// binary links libdevice as for every other math function. The others stay
// host calls, and kiln-nvptx refuses the kernel naming the function.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

StringRef kiln::nvptx::libdeviceSpecialFunction(StringRef runtimeFn) {
  if (!runtimeFn.consume_front("kiln_cpu_special_"))
    return {};
  // libdevice's definitions (libdevice.10.bc, "double" forms): same
  // function of one double as the runtime's, PyTorch's meaning included
  // (ndtr = normcdf, ndtri = normcdfinv, i0/i1 = cyl_bessel_i0/i1).
  return llvm::StringSwitch<StringRef>(runtimeFn)
      .Case("lgamma", "__nv_lgamma")
      .Case("erfc", "__nv_erfc")
      .Case("erfinv", "__nv_erfinv")
      .Case("erfcx", "__nv_erfcx")
      .Case("ndtr", "__nv_normcdf")
      .Case("ndtri", "__nv_normcdfinv")
      .Case("i0", "__nv_cyl_bessel_i0")
      .Case("i1", "__nv_cyl_bessel_i1")
      .Case("bessel_j0", "__nv_j0")
      .Case("bessel_j1", "__nv_j1")
      .Case("bessel_y0", "__nv_y0")
      .Case("bessel_y1", "__nv_y1")
      .Default({});
}

unsigned kiln::nvptx::specialCallsToLibdevice(func::FuncOp fn) {
  auto module = fn->getParentOfType<ModuleOp>();
  if (!module)
    return 0;
  unsigned n = 0;
  fn.walk([&](func::CallOp call) {
    if (!call->getParentOfType<gpu::LaunchOp>())
      return;
    StringRef target = libdeviceSpecialFunction(call.getCallee());
    if (target.empty())
      return;
    if (!module.lookupSymbol(target)) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      auto decl = func::FuncOp::create(b, module.getLoc(), target,
                                       call.getCalleeType());
      decl.setPrivate();
    }
    call.setCallee(target);
    ++n;
  });
  return n;
}
