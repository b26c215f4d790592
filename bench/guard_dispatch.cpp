//===- guard_dispatch.cpp - Guard evaluation and dispatch benchmark -------===//
//
// Part of Kiln.
//
// Measures the runtime's per-call cost on a cache hit for a program with 8
// tensor inputs (rank 2-3, symbolic dims shared between inputs, strides not
// guarded) whose cache holds 4 entries (f32, f64, i64, i32):
//
//   (a) guard evaluation + entry lookup (Session::lookup), hitting the first
//       and the last entry;
//   (b) Session::call on a hit for a trivial program (a graph returning an
//       input), minus the same program run directly in the interpreter.
//
// Following the project rule, each figure is printed with its ratio to a
// baseline measured in the same process: copying the 8 ArgView structs, and
// a std::unordered_map<std::string, int> lookup of the program name.
// Medians over many batches. Target: (a) under 1 microsecond.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Runtime/Session.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

using namespace kiln;
using namespace kiln::runtime;
using interp::DType;
using interp::Tensor;

namespace {

// 8 inputs; s0 and s1 are symbolic and shared between inputs.
const char *kProgram = R"mlir(
kg.program @dispatch(%a: tensor<?x16xf32>, %b: tensor<?x16xf32>,
                     %c: tensor<4x?xf32>, %d: tensor<4x?x2xf32>,
                     %e: tensor<8x8xf32>, %f: tensor<2x3x4xf32>,
                     %g: tensor<?x4xf32>, %h: tensor<2x2x2xf32>) -> tensor<?x16xf32> {
  kg.guard_tensor %a {dtype = f32, shape = ["s0", 16]} : tensor<?x16xf32>
  kg.guard_tensor %b {dtype = f32, shape = ["s0", 16]} : tensor<?x16xf32>
  kg.guard_tensor %c {dtype = f32, shape = [4, "s1"]} : tensor<4x?xf32>
  kg.guard_tensor %d {dtype = f32, shape = [4, "s1", 2]} : tensor<4x?x2xf32>
  kg.guard_tensor %e {dtype = f32, shape = [8, 8]} : tensor<8x8xf32>
  kg.guard_tensor %f {dtype = f32, shape = [2, 3, 4]} : tensor<2x3x4xf32>
  kg.guard_tensor %g {dtype = f32, shape = ["s0", 4]} : tensor<?x4xf32>
  kg.guard_tensor %h {dtype = f32, shape = [2, 2, 2]} : tensor<2x2x2xf32>
  kg.guard_shape_relation "s0 >= 2"
  %y = kg.graph @dispatch_g0(%a) : (tensor<?x16xf32>) -> tensor<?x16xf32> {
  ^bb0(%x: tensor<?x16xf32>):
    kg.yield %x : tensor<?x16xf32>
  }
  kg.return %y : tensor<?x16xf32>
}
)mlir";

/// Prevents the compiler from dropping a computed value.
template <typename T> void keep(const T &v) {
  asm volatile("" : : "g"(&v) : "memory");
}

/// Median over `batches` of the per-iteration time of `fn` (ns).
template <typename F> double medianNs(int batches, int iters, F &&fn) {
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      fn();
    auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                      iters);
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2,
                   samples.end());
  return samples[samples.size() / 2];
}

struct Inputs {
  std::vector<Tensor> tensors;
  std::vector<ArgView> views;
};

Inputs makeInputs(DType dtype, int64_t s0, int64_t s1) {
  std::vector<std::vector<int64_t>> shapes = {
      {s0, 16}, {s0, 16}, {4, s1}, {4, s1, 2}, {8, 8}, {2, 3, 4}, {s0, 4},
      {2, 2, 2}};
  Inputs in;
  for (auto &shape : shapes)
    in.tensors.push_back(llvm::cantFail(Tensor::create(dtype, shape)));
  for (Tensor &t : in.tensors)
    in.views.push_back(viewOf(t));
  return in;
}

int fail(const std::string &msg) {
  llvm::errs() << "guard_dispatch: " << msg << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  int batches = argc > 1 ? std::atoi(argv[1]) : 200;
  const int lookupIters = 2000, callIters = 200;

  Session session;
  std::string error;
  if (failed(session.loadModule(kProgram, "dispatch.mlir", error)))
    return fail(error);
  session.setWarningHandler([](llvm::StringRef) {});

  // Warm the cache: 4 entries, one per dtype.
  DType dtypes[] = {DType::F32, DType::F64, DType::I64, DType::I32};
  std::vector<Inputs> inputs;
  for (DType dt : dtypes)
    inputs.push_back(makeInputs(dt, 5, 3));
  for (Inputs &in : inputs)
    if (failed(session.call("dispatch", in.views, error)))
      return fail(error);
  const ProgramStats *st = session.stats("dispatch");
  if (!st || st->compiles != 4)
    return fail("expected 4 entries after warm-up");
  // The hits: other sizes of the symbolic dims, same dtypes.
  Inputs first = makeInputs(DType::F32, 7, 6);
  Inputs last = makeInputs(DType::I32, 7, 6);
  if (session.lookup("dispatch", first.views) != 0 ||
      session.lookup("dispatch", last.views) != 3)
    return fail("lookup does not hit the expected entries");

  // Baselines.
  ArgView copies[8];
  double copyNs = medianNs(batches, lookupIters, [&] {
    std::copy(last.views.begin(), last.views.end(), copies);
    keep(copies);
  });
  std::unordered_map<std::string, int> names = {
      {"dispatch", 0}, {"other", 1}, {"toy_example", 2}, {"forward", 3}};
  double mapNs = medianNs(batches, lookupIters, [&] {
    auto it = names.find("dispatch");
    keep(it);
  });

  // (a) guard evaluation + lookup.
  double lookupFirstNs = medianNs(batches, lookupIters, [&] {
    int e = session.lookup("dispatch", first.views);
    keep(e);
  });
  double lookupLastNs = medianNs(batches, lookupIters, [&] {
    int e = session.lookup("dispatch", last.views);
    keep(e);
  });

  // (b) Session::call on a hit vs the same program run in the interpreter.
  uint64_t hitsBefore = st->hits;
  double callNs = medianNs(batches / 4 + 1, callIters, [&] {
    auto r = session.call("dispatch", last.views, error);
    keep(r);
  });
  if (st->compiles != 4 || st->hits == hitsBefore)
    return fail("Session::call did not hit");

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kProgram, session.getContext());
  auto program = module->lookupSymbol<kg::ProgramOp>("dispatch");
  auto noop = [](mlir::Operation &, llvm::ArrayRef<Tensor>,
                 llvm::SmallVectorImpl<Tensor> &,
                 interp::Interpreter &) { return mlir::success(); };
  std::vector<Tensor> f32Tensors = makeInputs(DType::F32, 7, 6).tensors;
  double interpNs = medianNs(batches / 4 + 1, callIters, [&] {
    interp::Interpreter in(*module);
    for (const char *g : {"kg.guard_tensor", "kg.guard_shape_relation"})
      in.setHandler(g, noop);
    in.setHandler("kg.graph", [](mlir::Operation &op, llvm::ArrayRef<Tensor> xs,
                                 llvm::SmallVectorImpl<Tensor> &rs,
                                 interp::Interpreter &it) {
      auto r = it.runBlock(llvm::cast<kg::GraphOp>(op).getBody().front(), xs);
      if (mlir::failed(r))
        return mlir::failure();
      rs.append(r->begin(), r->end());
      return mlir::success();
    });
    auto r = in.call(program, f32Tensors);
    keep(r);
  });

  auto line = [&](const char *what, double ns) {
    std::printf("%-52s %9.1f ns  %7.1fx copy-8-views  %7.1fx unordered_map\n",
                what, ns, ns / copyNs, ns / mapNs);
  };
  std::printf("guard_dispatch: 8 tensor inputs, 4 cache entries, median of "
              "%d batches\n", batches);
  line("baseline: copy 8 ArgViews", copyNs);
  line("baseline: unordered_map<string,int> find", mapNs);
  line("(a) lookup, hit on entry 0 of 4", lookupFirstNs);
  line("(a) lookup, hit on entry 3 of 4", lookupLastNs);
  line("(b) Session::call, hit on entry 3 of 4", callNs);
  line("    the same program in the interpreter", interpNs);
  line("(b) Session::call overhead (call - interpreter)", callNs - interpNs);
  std::printf("target: (a) < 1000 ns: %s\n",
              lookupLastNs < 1000 ? "met" : "MISSED");
  return 0;
}
