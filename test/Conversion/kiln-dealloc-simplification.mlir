// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-dealloc-simplification))' | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-dealloc-simplification{max-cost=2}))' | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-dealloc-simplification{max-cost=0}))' | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-dealloc-simplification{max-cost=1}))' | FileCheck %s --check-prefix=SKIP

// kiln-dealloc-simplification runs buffer-deallocation-simplification on a
// function unless the sum over its deallocs of memrefs x (memrefs +
// retained) is above max-cost (default 65536; 0: never skip). Here the
// cost is 1 x (1 + 1) = 2: simplified (the memref is the retained value:
// the dealloc goes, its ownership is the condition) unless max-cost < 2.

// DEFAULT-LABEL: func.func @one_retained
// DEFAULT-NOT:     bufferization.dealloc
// DEFAULT:         return %arg1 : i1
// SKIP-LABEL:    func.func @one_retained
// SKIP:            %[[R:.*]] = bufferization.dealloc (%arg0 : memref<2xf32>) if (%arg1) retain (%arg0 : memref<2xf32>)
// SKIP:            return %[[R]] : i1
func.func @one_retained(%m: memref<2xf32>, %c: i1) -> i1 {
  %r = bufferization.dealloc (%m : memref<2xf32>) if (%c) retain (%m : memref<2xf32>)
  return %r : i1
}

