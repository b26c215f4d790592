//===- kiln-opt.cpp - Kiln's optimizer driver -----------------------------===//
//
// Part of Kiln. `mlir-opt` with every upstream dialect and pass plus Kiln's
// dialects and passes; every usual mlir-opt flag works.
//
//===----------------------------------------------------------------------===//

#include "kiln/Autodiff/VJPInterface.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kiln::registerKilnPasses();
  kiln::registerKilnConversionPasses();
  kiln::registerKilnCPUPipeline();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<kiln::kt::KTDialect, kiln::kg::KGDialect>();
  kiln::autodiff::registerVJPInterfaces(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
