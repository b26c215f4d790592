//===- BufferPool.cpp - Reused large buffers for JIT-compiled code --------===//
//
// Part of Kiln. See kiln/Backend/CPU/BufferPool.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backend/CPU/BufferPool.h"
#include "kiln/rt/MemrefCopy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"

llvm::orc::SymbolMap
kiln::cpu::bufferPoolSymbols(llvm::orc::MangleAndInterner &interner) {
  llvm::orc::SymbolMap map;
  map[interner("malloc")] = {llvm::orc::ExecutorAddr::fromPtr(&kiln_rt_malloc),
                             llvm::JITSymbolFlags::Exported};
  map[interner("aligned_alloc")] = {
      llvm::orc::ExecutorAddr::fromPtr(&kiln_rt_aligned_alloc),
      llvm::JITSymbolFlags::Exported};
  map[interner("free")] = {llvm::orc::ExecutorAddr::fromPtr(&kiln_rt_free),
                           llvm::JITSymbolFlags::Exported};
  // memref.copy of views that are not both contiguous: row by row
  // (kiln/rt/MemrefCopy.h) instead of libmlir_c_runner_utils' element loop.
  map[interner("memrefCopy")] = {
      llvm::orc::ExecutorAddr::fromPtr(&kiln_rt_memref_copy),
      llvm::JITSymbolFlags::Exported};
  // The same functions under their own names: code compiled for a
  // package object calls these (CompileOptions::packageObject).
  map[interner("kiln_rt_malloc")] = map[interner("malloc")];
  map[interner("kiln_rt_aligned_alloc")] = map[interner("aligned_alloc")];
  map[interner("kiln_rt_free")] = map[interner("free")];
  return map;
}

void kiln::cpu::registerBufferPoolSymbols(mlir::ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    return bufferPoolSymbols(interner);
  });
}
