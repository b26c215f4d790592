//===- SpecialFunctions.cpp - kt.special / kt.zeta in kernels -------------===//
//
// Part of Kiln. See kiln/Conversion/NVPTX/NVPTXCodegen.h
// (specialCallsToDevice).
//
// The CPU lowering of kt.special / kt.zeta calls the runtime's
// double-precision functions kiln_cpu_special_<fn> (runtime/include/kiln/
// rt/SpecialFunctions.h), which kernels cannot call. The build compiles the
// same source for the device (runtime/cuda/SpecialFunctionsDevice.cu ->
// kiln_special_device.bc, kiln_gpu_special_<fn>): a kernel's call is
// renamed and the pipeline links the bitcode. Without that build, the
// functions CUDA's libdevice has call it; the others are refused.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/NVPTX/NVPTXCodegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

std::string kiln::nvptx::specialDeviceLibrary() {
  if (const char *env = std::getenv("KILN_SPECIAL_DEVICE_BC")) {
    std::string path = env;
    if (path.empty() || path == "off")
      return "";
    return path;
  }
#ifdef KILN_SPECIAL_DEVICE_BC
  if (llvm::sys::fs::exists(KILN_SPECIAL_DEVICE_BC))
    return KILN_SPECIAL_DEVICE_BC;
#endif
  return "";
}

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

unsigned kiln::nvptx::specialCallsToDevice(func::FuncOp fn,
                                           bool deviceLibrary) {
  auto module = fn->getParentOfType<ModuleOp>();
  if (!module)
    return 0;
  unsigned n = 0;
  fn.walk([&](func::CallOp call) {
    if (!call->getParentOfType<gpu::LaunchOp>())
      return;
    StringRef callee = call.getCallee();
    std::string target;
    if (deviceLibrary && callee.starts_with("kiln_cpu_special_"))
      target = ("kiln_gpu_special_" +
                callee.drop_front(StringRef("kiln_cpu_special_").size()))
                   .str();
    else
      target = libdeviceSpecialFunction(callee).str();
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

unsigned kiln::nvptx::linkSpecialLibrary(ModuleOp module, StringRef path) {
  unsigned n = 0;
  MLIRContext *ctx = module.getContext();
  module.walk([&](gpu::GPUModuleOp gm) {
    bool calls = false;
    gm.walk([&](Operation *op) {
      auto sym = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (sym && sym.getValue().starts_with("kiln_gpu_special_"))
        calls = true;
    });
    if (!calls || !gm.getTargetsAttr())
      return;
    SmallVector<Attribute> targets;
    for (Attribute a : gm.getTargetsAttr()) {
      auto t = dyn_cast<NVVM::NVVMTargetAttr>(a);
      if (!t) {
        targets.push_back(a);
        continue;
      }
      SmallVector<Attribute> files;
      if (t.getLink())
        files.append(t.getLink().begin(), t.getLink().end());
      files.push_back(StringAttr::get(ctx, path));
      targets.push_back(NVVM::NVVMTargetAttr::get(
          ctx, t.getO(), t.getTriple(), t.getChip(), t.getFeatures(),
          t.getFlags(), ArrayAttr::get(ctx, files), t.getVerifyTarget()));
    }
    gm.setTargetsAttr(ArrayAttr::get(ctx, targets));
    ++n;
  });
  return n;
}
