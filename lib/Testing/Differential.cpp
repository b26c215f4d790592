//===- Differential.cpp - Interpreter vs CPU backend on one program -------===//
//
// Part of Kiln. See kiln/Testing/Differential.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Testing/Differential.h"

#include "kiln/Dialect/KG/IR/KGDialect.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Interpreter/Interpreter.h"
#include "kiln/Runtime/Session.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::testing;

void kiln::testing::registerTestingDialects(DialectRegistry &registry) {
  registry.insert<kt::KTDialect, kg::KGDialect, func::FuncDialect,
                  arith::ArithDialect, scf::SCFDialect, tensor::TensorDialect>();
  interp::registerInterpreterInterfaces(registry);
  cpu::registerCPUBackendDialects(registry);
}

llvm::StringRef kiln::testing::outcomeName(Outcome o) {
  switch (o) {
  case Outcome::Match: return "match";
  case Outcome::Invalid: return "invalid program";
  case Outcome::InterpreterError: return "interpreter error";
  case Outcome::Unsupported: return "unsupported by the CPU backend";
  case Outcome::Mismatch: return "mismatch";
  case Outcome::BothFailed: return "both failed (a size-0 dim)";
  }
  return "?";
}

DiffCase kiln::testing::diffCaseFromFuzzInput(llvm::ArrayRef<uint8_t> bytes) {
  DiffCase c;
  uint8_t first = bytes.empty() ? 0 : bytes.front();
  GeneratorOptions gen;
  gen.zeroDims = first & 0x40;
  c.program = generateProgram(bytes.drop_front(bytes.empty() ? 0 : 1), gen);
  c.options.seed = first & 0x3f;
  c.options.compile.optimize = !(first & 0x80);
  c.options.compile.threads = 1;
  c.options.compile.useCache = false;
  return c;
}

namespace {

/// A call's arguments in memory: each argument a view (byte offset,
/// element strides) into a buffer of its own, or (aliasing calls) into a
/// buffer shared with another argument. Bytes of a buffer that no view
/// covers hold a sentinel, checked untouched after each call.
struct CallMemory {
  std::vector<std::vector<uint8_t>> buffers;
  struct Arg {
    size_t buffer = 0;
    size_t byteOffset = 0;
    llvm::SmallVector<int64_t> strides; ///< empty: row-major
  };
  std::vector<Arg> args;

  /// The call's views of the arguments (valid while this is not moved).
  std::vector<runtime::ArgView> views(llvm::ArrayRef<interp::Tensor> inputs) {
    std::vector<runtime::ArgView> vs;
    for (auto [i, t] : llvm::enumerate(inputs)) {
      runtime::ArgView v;
      v.dtype = t.dtype();
      v.shape = t.shape();
      v.strides = args[i].strides;
      v.data = buffers[args[i].buffer].data() + args[i].byteOffset;
      vs.push_back(v);
    }
    return vs;
  }
};

constexpr uint8_t kSentinel = 0xA5;

/// How ref arguments of rank >= 1 lie in memory (plain ones are row-major).
enum class RefLayout {
  RowMajor,
  EveryOther,  ///< row-major order, every other element (strides doubled)
  ColumnMajor, ///< dims reversed in memory (a transposed tensor's view)
};

/// The element offset of row-major element `k` under `strides`.
int64_t elementOffset(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> strides, int64_t k) {
  if (strides.empty())
    return k;
  int64_t off = 0;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    off += (k % shape[d]) * strides[d];
    k /= shape[d];
  }
  return off;
}

/// Lays out `inputs`. Argument `tieTo[i]` != i is the same view as
/// argument tieTo[i]. With `overlap` = (a, b), ref b lies in ref a's buffer
/// from a's middle element on (both row-major): the two overlap partly.
CallMemory layOut(const GeneratedProgram &program,
                  llvm::ArrayRef<interp::Tensor> inputs, RefLayout layout,
                  llvm::ArrayRef<unsigned> tieTo,
                  std::pair<int, int> overlap = {-1, -1}) {
  CallMemory m;
  m.args.resize(inputs.size());
  auto place = [&](unsigned i, size_t buffer, size_t byteOffset) {
    const interp::Tensor &t = inputs[i];
    CallMemory::Arg &arg = m.args[i];
    arg.buffer = buffer;
    arg.byteOffset = byteOffset;
    size_t es = interp::dtypeSize(t.dtype());
    if (program.args[i].isRef && t.rank() >= 1 && t.numel() > 0 &&
        int(i) != overlap.first && int(i) != overlap.second) {
      if (layout == RefLayout::EveryOther) {
        arg.strides.assign(t.rank(), 2);
        for (int64_t d = t.rank() - 2; d >= 0; --d)
          arg.strides[d] = arg.strides[d + 1] * t.dim(d + 1);
      } else if (layout == RefLayout::ColumnMajor && t.rank() >= 2) {
        arg.strides.assign(t.rank(), 1);
        for (int64_t d = 1; d < t.rank(); ++d)
          arg.strides[d] = arg.strides[d - 1] * t.dim(d - 1);
      }
    }
    int64_t span = 0;
    for (int64_t k = 0; k < t.numel(); ++k)
      span = std::max(span, elementOffset(t.shape(), arg.strides, k) + 1);
    std::vector<uint8_t> &b = m.buffers[buffer];
    // At least one byte: an empty tensor still has an address.
    size_t end = byteOffset + std::max<size_t>(1, span * es);
    if (b.size() < end)
      b.resize(end, kSentinel);
    const uint8_t *src = t.numel() ? static_cast<const uint8_t *>(t.data())
                                   : nullptr;
    for (int64_t k = 0; k < t.numel(); ++k)
      std::memcpy(&b[byteOffset +
                     elementOffset(t.shape(), arg.strides, k) * es],
                  src + k * es, es);
  };
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (tieTo[i] != i || int(i) == overlap.second)
      continue;
    m.buffers.emplace_back();
    place(i, m.buffers.size() - 1, 0);
  }
  if (overlap.second >= 0) {
    const interp::Tensor &a = inputs[overlap.first];
    place(overlap.second, m.args[overlap.first].buffer,
          interp::dtypeSize(a.dtype()) * (a.numel() / 2));
  }
  for (unsigned i = 0; i < inputs.size(); ++i)
    if (tieTo[i] != i)
      m.args[i] = m.args[tieTo[i]];
  return m;
}

/// The contents of argument `i` as the caller sees them now.
interp::Tensor readBack(const CallMemory &m, const interp::Tensor &like,
                        unsigned i) {
  interp::Tensor t = cantFail(interp::Tensor::create(like.dtype(), like.shape()));
  if (t.numel() == 0)
    return t;
  size_t es = interp::dtypeSize(like.dtype());
  const CallMemory::Arg &a = m.args[i];
  const uint8_t *b = m.buffers[a.buffer].data() + a.byteOffset;
  for (int64_t k = 0; k < t.numel(); ++k)
    std::memcpy(static_cast<uint8_t *>(t.mutableData()) + k * es,
                b + elementOffset(t.shape(), a.strides, k) * es, es);
  return t;
}

/// The bytes that no argument's view covers still hold the sentinel.
bool gapsIntact(const CallMemory &m, llvm::ArrayRef<interp::Tensor> inputs,
                std::string &why) {
  std::vector<std::vector<bool>> covered;
  for (const std::vector<uint8_t> &b : m.buffers)
    covered.emplace_back(b.size(), false);
  for (auto [i, a] : llvm::enumerate(m.args)) {
    size_t es = interp::dtypeSize(inputs[i].dtype());
    for (int64_t k = 0; k < inputs[i].numel(); ++k)
      for (size_t e = 0; e < es; ++e)
        covered[a.buffer][a.byteOffset +
                          elementOffset(inputs[i].shape(), a.strides, k) * es +
                          e] = true;
  }
  for (auto [n, b] : llvm::enumerate(m.buffers))
    for (size_t k = 0; k < b.size(); ++k)
      if (!covered[n][k] && b[k] != kSentinel) {
        why = "byte " + std::to_string(k) + " of buffer " + std::to_string(n) +
              ", outside every argument's view, was written";
        return false;
      }
  return true;
}

/// Plain (value) arguments that share memory with no ref still hold their
/// inputs: programs never write their value arguments.
bool plainUnchanged(const GeneratedProgram &program,
                    llvm::ArrayRef<interp::Tensor> inputs,
                    llvm::ArrayRef<interp::Tensor> after,
                    llvm::ArrayRef<unsigned> tieTo, std::string &why) {
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (program.args[i].isRef || tieTo[i] != i)
      continue;
    std::string w;
    if (!sameTensor(inputs[i], after[i], w, 0.0)) {
      why = "plain argument " + std::to_string(i) + " was written: " + w;
      return false;
    }
  }
  return true;
}

/// What one call gave: its results, the arguments' contents after it, and
/// what the host callback at the graph breaks saw.
struct CallResult {
  bool ok = false;
  std::string error;
  llvm::SmallVector<interp::Tensor> results, args;
  std::vector<interp::Tensor> sink;
};

/// Both backends' sessions on one program.
struct SessionPair {
  runtime::Session eager, cpu;
  std::vector<interp::Tensor> eagerSink, cpuSink;
};

LogicalResult setUp(runtime::Session &s, std::vector<interp::Tensor> &sink,
                    const GeneratedProgram &program, llvm::StringRef backend,
                    const DiffOptions &options, std::string &error,
                    bool dynamic = false) {
  s.setWarningHandler([](llvm::StringRef) {});
  s.registerHostCallback(
      "sink", [&sink](llvm::ArrayRef<interp::Tensor> inputs,
                      llvm::SmallVectorImpl<interp::Tensor> &,
                      std::string &error) -> LogicalResult {
        for (const interp::Tensor &t : inputs) {
          llvm::Expected<interp::Tensor> c = t.clone();
          if (!c) {
            error = llvm::toString(c.takeError());
            return failure();
          }
          sink.push_back(std::move(*c));
        }
        return success();
      });
  if (failed(s.setOption("cache_dir", "off", error)))
    return failure();
  if (dynamic && failed(s.setOption("dynamic", "dynamic", error)))
    return failure();
  if (backend == "cpu") {
    std::string pipeline = "kiln-cpu{threads=" +
                           std::to_string(options.compile.threads) +
                           (options.compile.optimize ? "" : " optimize=false") +
                           "}";
    if (failed(s.setOption("pipeline", pipeline, error)))
      return failure();
  }
  return s.loadModule(program.text, "generated.mlir", error);
}

CallResult callOnce(runtime::Session &s, std::vector<interp::Tensor> &sink,
                    CallMemory &m, llvm::ArrayRef<interp::Tensor> inputs) {
  CallResult r;
  size_t before = sink.size();
  FailureOr<llvm::SmallVector<interp::Tensor>> got =
      s.call("main", m.views(inputs), r.error);
  r.ok = succeeded(got);
  if (r.ok)
    r.results = std::move(*got);
  for (unsigned i = 0; i < inputs.size(); ++i)
    r.args.push_back(readBack(m, inputs[i], i));
  r.sink.assign(sink.begin() + before, sink.end());
  return r;
}

/// Compares what the eager backend (the interpreter) and the cpu backend
/// gave for one call; says what differs in `why`.
bool sameCall(const GeneratedProgram &program, const CallResult &want,
              const CallResult &got, std::string &why) {
  if (want.ok != got.ok) {
    why = want.ok ? "the cpu call failed: " + got.error
                  : "the eager call failed (" + want.error +
                        "), the cpu call succeeded";
    return false;
  }
  if (!want.ok)
    return true;
  if (want.results.size() != got.results.size()) {
    why = "result counts differ";
    return false;
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(want.results, got.results))) {
    std::string w;
    double scale = i < program.tolerance.size() ? program.tolerance[i] : 1.0;
    if (!sameTensor(std::get<0>(pair), std::get<1>(pair), w, scale)) {
      why = "result " + std::to_string(i) + ": " + w;
      return false;
    }
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(want.args, got.args))) {
    std::string w;
    if (!sameTensor(std::get<0>(pair), std::get<1>(pair), w,
                    program.args[i].tolerance)) {
      why = std::string(program.args[i].isRef ? "ref" : "plain") +
            " argument " + std::to_string(i) + " after the call: " + w;
      return false;
    }
  }
  if (want.sink.size() != got.sink.size()) {
    why = "the graph breaks' host calls saw " +
          std::to_string(want.sink.size()) + " vs " +
          std::to_string(got.sink.size()) + " tensors";
    return false;
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(want.sink, got.sink))) {
    std::string w;
    if (!sameTensor(std::get<0>(pair), std::get<1>(pair), w, 1e3)) {
      why = "host call input " + std::to_string(i) + ": " + w;
      return false;
    }
  }
  return true;
}

/// `text` with every graph operand `%from` made `%to` (what a call that
/// passes one tensor for both ref arguments means).
std::string tieRefs(llvm::StringRef text, llvm::StringRef from,
                    llvm::StringRef to) {
  std::string out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    std::string l = line.str();
    if (line.contains("kg.graph @")) {
      size_t open = l.find('('), close = l.find(')', open);
      std::string list = l.substr(open, close - open + 1);
      std::string tied;
      for (size_t i = 0; i < list.size();) {
        size_t j = i;
        if (list[i] == '%')
          while (++j < list.size() && (isalnum(list[j]) || list[j] == '_'))
            ;
        if (j > i && llvm::StringRef(list).slice(i, j) == from) {
          tied += to.str();
          i = j;
        } else {
          tied += list[i++];
        }
      }
      l = l.substr(0, open) + tied + l.substr(close + 1);
    }
    out += l + "\n";
  }
  return out;
}

/// The eager call `want` that passed one tensor for refs `a` and `b` gave
/// what the program whose graphs take ref `a` for both gives (a fresh
/// session, each argument its own buffer).
bool checkTied(const GeneratedProgram &program, const DiffOptions &options,
               llvm::ArrayRef<interp::Tensor> inputs, unsigned a, unsigned b,
               const CallResult &want, std::string &why) {
  unsigned numPlain = llvm::count_if(
      program.args, [](const GeneratedArg &g) { return !g.isRef; });
  GeneratedProgram tied = program;
  tied.text = tieRefs(program.text, "%r" + std::to_string(b - numPlain),
                      "%r" + std::to_string(a - numPlain));
  runtime::Session s;
  std::vector<interp::Tensor> sink;
  std::string error;
  if (failed(setUp(s, sink, tied, "eager", options, error))) {
    why = "the program with both refs one does not load: " + error;
    return false;
  }
  std::vector<unsigned> distinct(inputs.size());
  for (unsigned i = 0; i < inputs.size(); ++i)
    distinct[i] = i;
  CallMemory m = layOut(tied, inputs, RefLayout::RowMajor, distinct);
  CallResult ref = callOnce(s, sink, m, inputs);
  if (!ref.ok) {
    why = "the program with both refs one fails: " + ref.error;
    return false;
  }
  // Argument b of the reference call is not used; in `want` it is a.
  ref.args[b] = ref.args[a];
  if (!sameCall(program, ref, want, why)) {
    why = "one tensor for refs " + std::to_string(a) + " and " +
          std::to_string(b) + " differs from the program that uses ref " +
          std::to_string(a) + " for both: " + why;
    return false;
  }
  return true;
}

Outcome checkKGProgram(const GeneratedProgram &program,
                       const DiffOptions &options,
                       llvm::SmallVectorImpl<interp::Tensor> &inputs,
                       llvm::raw_ostream &os) {
  size_t numArgs = program.args.size();
  std::vector<unsigned> distinct(numArgs);
  for (unsigned i = 0; i < numArgs; ++i)
    distinct[i] = i;
  // The calls: each argument its own buffer (twice: the second call starts
  // from the refs the first left, and hits the entry), strided refs, one
  // tensor for two refs of one type, and a ref's tensor passed for a plain
  // argument too.
  struct Scenario {
    std::string name;
    RefLayout layout = RefLayout::RowMajor;
    std::vector<unsigned> tieTo;
    std::pair<int, int> overlap = {-1, -1};
  };
  std::vector<Scenario> scenarios = {
      {"row-major", RefLayout::RowMajor, distinct},
      {"strided refs (every other element)", RefLayout::EveryOther, distinct},
      {"strided refs (column-major)", RefLayout::ColumnMajor, distinct}};
  int tiedA = -1, tiedB = -1;
  for (unsigned j = 0; j < numArgs && tiedA < 0; ++j)
    for (unsigned i = 0; i < j && tiedA < 0; ++i)
      if (program.args[i].isRef && program.args[j].isRef &&
          program.args[i].dtype == program.args[j].dtype &&
          program.args[i].shape == program.args[j].shape) {
        tiedA = i;
        tiedB = j;
        Scenario s{"refs " + std::to_string(i) + " and " + std::to_string(j) +
                       " one tensor",
                   RefLayout::RowMajor, distinct};
        s.tieTo[j] = i;
        scenarios.push_back(std::move(s));
      }
  bool overlapDone = false;
  for (unsigned j = 0; j < numArgs && !overlapDone; ++j)
    for (unsigned i = 0; i < numArgs && !overlapDone; ++i)
      if (i != j && program.args[i].isRef && program.args[j].isRef &&
          program.args[i].dtype == program.args[j].dtype &&
          inputs[i].numel() >= 2 && inputs[j].numel() >= 1) {
        Scenario s{"ref " + std::to_string(j) + " overlapping ref " +
                       std::to_string(i) + " from its middle element",
                   RefLayout::RowMajor, distinct, {int(i), int(j)}};
        scenarios.push_back(std::move(s));
        overlapDone = true;
      }
  for (unsigned j = 0; j < numArgs; ++j)
    if (!program.args[j].isRef) {
      bool found = false;
      for (unsigned i = 0; i < numArgs && !found; ++i)
        if (program.args[i].isRef &&
            program.args[i].dtype == program.args[j].dtype &&
            program.args[i].shape == program.args[j].shape) {
          Scenario s{"ref " + std::to_string(i) + " passed as plain argument " +
                         std::to_string(j),
                     RefLayout::RowMajor, distinct};
          s.tieTo[j] = i;
          scenarios.push_back(std::move(s));
          found = true;
        }
      if (found)
        break;
    }

  DiffCounts none;
  DiffCounts &counts = options.counts ? *options.counts : none;
  ++counts.programs;
  SessionPair sessions;
  std::string error;
  // Every other program (by a hash of its text) runs with dynamic =
  // dynamic: each entry has every dim `?` from its first call.
  uint64_t hash = 1469598103934665603ull;
  for (char c : program.text)
    hash = (hash ^ uint8_t(c)) * 1099511628211ull;
  bool dynamic = hash & 1;
  if (dynamic)
    ++counts.dynamic;
  if (failed(setUp(sessions.eager, sessions.eagerSink, program, "eager",
                   options, error, dynamic))) {
    os << error << "\n";
    return Outcome::Invalid;
  }
  if (options.cpu &&
      failed(setUp(sessions.cpu, sessions.cpuSink, program, "cpu", options,
                   error, dynamic))) {
    os << error << "\n";
    return Outcome::Invalid;
  }
  Outcome outcome = Outcome::Match;
  for (const Scenario &sc : scenarios) {
    if (sc.layout != RefLayout::RowMajor) {
      if (llvm::any_of(program.args, [&](const GeneratedArg &a) {
            return a.isRef && a.shape.size() >=
                                  (sc.layout == RefLayout::ColumnMajor ? 2 : 1) &&
                   !llvm::is_contained(a.shape, 0);
          }))
        ++counts.stridedRefs;
    } else if (sc.overlap.first >= 0) {
      ++counts.overlappingRefs;
    }
    else if (llvm::StringRef(sc.name).ends_with("one tensor"))
      ++counts.tiedRefs;
    else if (sc.name.find("plain") != std::string::npos)
      ++counts.refAsPlain;
    CallMemory em = layOut(program, inputs, sc.layout, sc.tieTo, sc.overlap);
    CallMemory cm = layOut(program, inputs, sc.layout, sc.tieTo, sc.overlap);
    bool aliasing = sc.tieTo != distinct || sc.overlap.first >= 0;
    for (unsigned k = 0; k < 2; ++k) {
      ++counts.calls;
      CallResult want =
          callOnce(sessions.eager, sessions.eagerSink, em, inputs);
      // A known limit, not a finding: a size-1 dim that is `?` in the
      // entry (dynamic = dynamic makes every dim `?`, no 0/1 specialization
      // unlike PyTorch; and the entry's re-inferred types can turn a static
      // 1 of the program into `?` when it comes from inputs with symbolic
      // dims), which kt.squeeze cannot squeeze: a run-time error, or at
      // specialization a squeeze result of the wrong rank for its users
      // (docs/debugging.md, gen28).
      llvm::StringRef err(want.error);
      if (!want.ok &&
          (err.contains("cannot squeeze it") ||
           (dynamic && err.contains("cannot specialize") &&
            llvm::StringRef(program.text).contains("kt.squeeze")))) {
        ++counts.dynamicSqueeze;
        os << sc.name << ", call " << k
           << (dynamic ? " (dynamic = dynamic): " : ": ") << want.error
           << "\n";
        return Outcome::Unsupported;
      }
      if (!want.ok && !aliasing && !program.hasZeroDim) {
        os << sc.name << ", call " << k << ": " << want.error << "\n";
        return Outcome::InterpreterError;
      }
      std::string why;
      if (!gapsIntact(em, inputs, why) ||
          !plainUnchanged(program, inputs, want.args, sc.tieTo, why)) {
        os << sc.name << ", call " << k << " (eager): " << why << "\n";
        return Outcome::Mismatch;
      }
      // One tensor for two refs: the eager call must equal a call of the
      // program whose graphs take the first ref for both.
      // (Only where both refs have one type: the graphs' operand types.)
      if (want.ok && k == 0 && tiedA >= 0 &&
          sc.tieTo[tiedB] == unsigned(tiedA) &&
          program.args[tiedA].type == program.args[tiedB].type) {
        ++counts.tiedChecked;
        if (!checkTied(program, options, inputs, tiedA, tiedB, want, why)) {
          os << sc.name << ": " << why << "\n";
          return Outcome::Mismatch;
        }
      }
      if (!options.cpu) {
        if (!want.ok && !aliasing)
          outcome = Outcome::BothFailed;
        if (!want.ok && aliasing)
          ++counts.refused;
        if (!want.ok)
          break;
        continue;
      }
      CallResult got = callOnce(sessions.cpu, sessions.cpuSink, cm, inputs);
      if (!got.ok && want.ok &&
          llvm::StringRef(got.error).contains("for the cpu backend failed")) {
        os << got.error << "\n";
        return Outcome::Unsupported;
      }
      if (!gapsIntact(cm, inputs, why) ||
          !plainUnchanged(program, inputs, got.args, sc.tieTo, why) ||
          !sameCall(program, want, got, why)) {
        os << sc.name << ", call " << k << " (eager vs cpu): " << why << "\n";
        return Outcome::Mismatch;
      }
      if (!want.ok) {
        // Both refused an aliasing call (a plain argument over a ref, two
        // overlapping refs passed to one graph), saying so; or both failed
        // on a size-0 dim.
        if (aliasing) {
          if (!llvm::StringRef(want.error).contains("memory") &&
              !program.hasZeroDim) {
            os << sc.name << ", call " << k
               << ": refused, but not for sharing memory: " << want.error
               << "\n";
            return Outcome::Mismatch;
          }
          ++counts.refused;
        } else {
          outcome = Outcome::BothFailed;
        }
        break; // (the refs may hold a partial update: no second call)
      }
    }
  }
  return outcome;
}

} // namespace

Outcome kiln::testing::checkProgram(MLIRContext &context,
                                    const GeneratedProgram &program,
                                    const DiffOptions &options,
                                    std::string &message) {
  llvm::raw_string_ostream os(message);
  if (program.isProgram) {
    llvm::Expected<llvm::SmallVector<interp::Tensor>> inputs =
        makeInputs(program, options.seed);
    if (!inputs) {
      os << llvm::toString(inputs.takeError()) << "\n";
      return Outcome::InterpreterError;
    }
    return checkKGProgram(program, options, *inputs, os);
  }
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(program.text, &context);
  if (!module)
    return Outcome::Invalid;

  llvm::Expected<llvm::SmallVector<interp::Tensor>> inputs =
      makeInputs(program, options.seed);
  if (!inputs) {
    os << llvm::toString(inputs.takeError()) << "\n";
    return Outcome::InterpreterError;
  }
  interp::Interpreter interpreter(*module);
  FailureOr<llvm::SmallVector<interp::Tensor>> want =
      interpreter.call(program.entry, *inputs);
  // With a size-0 dim a run-time error is valid (an empty reduction without
  // identity, an index into an empty dim), when the CPU backend reports one
  // too; otherwise the interpreter failing is a finding.
  bool mayFail = program.hasZeroDim;
  if (failed(want) && !mayFail)
    return Outcome::InterpreterError;
  if (!options.cpu)
    return failed(want) ? Outcome::BothFailed : Outcome::Match;

  std::string error;
  auto exe = cpu::CPUExecutable::compile(*module, program.entry, error,
                                         nullptr, options.compile);
  if (failed(exe)) {
    os << error << "\n";
    return failed(want) ? Outcome::BothFailed : Outcome::Unsupported;
  }
  FailureOr<llvm::SmallVector<interp::Tensor>> got = (*exe)->call(*inputs, error);
  if (failed(want)) {
    if (failed(got)) {
      os << "the CPU call failed too: " << error << "\n";
      return Outcome::BothFailed;
    }
    os << "the interpreter failed, the CPU call succeeded\n";
    return Outcome::Mismatch;
  }
  if (failed(got)) {
    os << "the CPU call failed: " << error << "\n";
    return Outcome::Mismatch;
  }
  if (got->size() != want->size()) {
    os << got->size() << " results on the CPU, " << want->size()
       << " in the interpreter\n";
    return Outcome::Mismatch;
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(*want, *got))) {
    std::string why;
    double scale = i < program.tolerance.size() ? program.tolerance[i] : 1.0;
    if (!sameTensor(std::get<0>(pair), std::get<1>(pair), why, scale)) {
      os << "result " << i << " (interpreter vs cpu): " << why << "\n";
      return Outcome::Mismatch;
    }
  }
  return Outcome::Match;
}
