//===- NVPTXBackend.h - Compiled GPU code as a host object ------*- C++ -*-===//
//
// Part of Kiln. The GPU counterpart of kiln/Backend/CPU for ahead-of-time
// use (packages, docs/packages.md and docs/gpu.md): the entries of a module
// through the kiln-nvptx pipeline, then LLVM IR of the host code with the
// kernels embedded (a gpu.binary: PTX or cubin, loaded by a global
// constructor through mgpuModuleLoad*), and a position-independent object
// for the host CPU. Its undefined symbols are the mgpu* functions of
// runtime/cuda (libkiln_rt defines them) and the C library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKEND_NVPTX_NVPTXBACKEND_H
#define KILN_BACKEND_NVPTX_NVPTXBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace kiln::nvptx {

/// kiln-nvptx's options (docs/gpu.md) for compiled code.
struct CodeOptions {
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  std::string emit = "bin"; ///< "bin" (cubin by ptxas) or "isa" (PTX, JIT)
  unsigned blockSize = 256;
  unsigned maxBlocks = 65535;
  bool fuse = true;
  bool blockReduce = true;        ///< row reductions a block per row
  std::string matmul = "cublas";  ///< "cublas" or "kernel"
};

/// The pipeline string of `options` ("kiln-nvptx{chip=... ...}"): what a
/// package's manifest records.
std::string pipelineString(const CodeOptions &options);

/// Checks the options as the kiln-nvptx pipeline does; the message names
/// the bad one.
mlir::LogicalResult verifyOptions(const CodeOptions &options,
                                  std::string &error);

/// Compiles the func.func `entries` of `module` (changed in place; other
/// functions they do not call are dropped) with kiln-nvptx and writes an
/// object for the host CPU (PIC, small code model) at `objectPath`. Each
/// entry is callable as `_mlir__mlir_ciface_<entry>(void **args)` with
/// args[0] = the address of a pointer to the result descriptors and
/// args[1 + i] = the address of a pointer to argument i's memref
/// descriptor (device pointers), as CPU packages. `kernels` (optional)
/// receives the number of kernels.
mlir::LogicalResult compileObject(mlir::ModuleOp module,
                                  llvm::ArrayRef<std::string> entries,
                                  const CodeOptions &options,
                                  llvm::StringRef objectPath,
                                  std::string &error,
                                  unsigned *kernels = nullptr);

/// Registers what compileObject needs in a context (the pipeline's
/// dialects, their LLVM IR translations, the NVVM target and GPU
/// offloading).
void registerDialects(mlir::DialectRegistry &registry);

} // namespace kiln::nvptx

#endif // KILN_BACKEND_NVPTX_NVPTXBACKEND_H
