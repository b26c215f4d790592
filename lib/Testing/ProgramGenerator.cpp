//===- ProgramGenerator.cpp - Random valid kt programs --------------------===//
//
// Part of Kiln. See kiln/Testing/ProgramGenerator.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Testing/ProgramGenerator.h"
#include "kiln/Support/SplitMix64.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace kiln;
using namespace kiln::testing;
using interp::DType;
using llvm::ArrayRef;
using llvm::SmallVector;

unsigned ByteSource::pick(unsigned n) {
  if (n <= 1)
    return 0;
  // One byte per choice (two when n > 256): a mutation of one byte changes
  // one choice.
  unsigned v = 0;
  if (pos < bytes.size())
    v = bytes[pos++];
  if (n > 256 && pos < bytes.size())
    v = (v << 8) | bytes[pos++];
  return v % n;
}

namespace {

constexpr int64_t kDyn = INT64_MIN; // a `?` dim in a static shape

const char *elemName(DType dt) {
  switch (dt) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I1: return "i1";
  case DType::I16: return "i16";
  case DType::I8: return "i8";
  case DType::U8: return "ui8";
  }
  return "f32";
}

bool isFloat(DType dt) { return interp::isFloatDType(dt); }

/// sameTensor's tolerance of a float dtype.
double tolerance(DType dt) {
  switch (dt) {
  case DType::F64: return 1e-9;
  case DType::F32: return 1e-4;
  default: return 1e-2;
  }
}

/// A value of the program: its SSA name, dtype, run-time shape, which dims
/// its type writes as `?`, and whether its elements are surely finite.
struct Val {
  std::string name;
  DType dt;
  SmallVector<int64_t> shape;
  SmallVector<bool> dyn;
  bool finite = true;
  bool isArg = false;
  int64_t indexBound = 0; ///< GeneratedArg::indexBound
  /// The coarsest float dtype in the value's computation (F64 when none):
  /// an f32 result cast to f64 is only as close as f32 results are.
  DType precision = DType::F64;

  int64_t rank() const { return shape.size(); }
  /// The static shape of its type (kDyn for `?`).
  SmallVector<int64_t> staticShape() const {
    SmallVector<int64_t> s;
    for (auto [d, y] : llvm::zip(shape, dyn))
      s.push_back(y ? kDyn : d);
    return s;
  }
  std::string type() const {
    std::string s = "tensor<";
    for (auto [d, y] : llvm::zip(shape, dyn))
      s += (y ? std::string("?") : std::to_string(d)) + "x";
    return s + elemName(dt) + ">";
  }
};

/// Version 3: a `!kt.ref` argument of a kg program (a tensor the program
/// writes in place), or a view of one.
struct Ref {
  std::string name;
  DType dt;
  SmallVector<int64_t> shape;
  SmallVector<bool> dyn;
  /// Its contents are surely finite (the input, and writes of finite
  /// values), and the coarsest float type written into it.
  bool finite = true;
  DType precision = DType::F64;

  int64_t rank() const { return shape.size(); }
  std::string type() const {
    std::string s = "!kt.ref<";
    for (auto [d, y] : llvm::zip(shape, dyn))
      s += (y ? std::string("?") : std::to_string(d)) + "x";
    return s + elemName(dt) + ">";
  }
  /// The tensor type of its contents (kt.load's result).
  std::string tensorType() const { return "tensor<" + type().substr(8); }
};

/// kt's broadcast rule on static shapes (KTTypeInference.cpp): a static dim
/// wins over `?`, 1 broadcasts.
SmallVector<int64_t> broadcastStatic(ArrayRef<SmallVector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> r(rank, 1);
  for (const auto &s : shapes) {
    size_t off = rank - s.size();
    for (auto [j, d] : llvm::enumerate(s)) {
      int64_t &x = r[off + j];
      if (d == 1)
        continue;
      if (x == 1 || x == kDyn)
        x = d;
    }
  }
  return r;
}

/// NumPy broadcasting of run-time shapes; false when incompatible.
bool broadcastRuntime(ArrayRef<SmallVector<int64_t>> shapes,
                      SmallVector<int64_t> &out) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (const auto &s : shapes) {
    size_t off = rank - s.size();
    for (auto [j, d] : llvm::enumerate(s)) {
      int64_t &x = out[off + j];
      if (d == 1)
        continue;
      if (x != 1 && x != d)
        return false;
      x = d;
    }
  }
  return true;
}

/// A static dim of size > 0 (what kt.select and kt.slice_scatter index).
bool hasStaticNonEmptyDim(const Val &v) {
  for (int64_t i = 0; i < v.rank(); ++i)
    if (!v.dyn[i] && v.shape[i] > 0)
      return true;
  return false;
}

class Generator {
public:
  Generator(ByteSource &in, const GeneratorOptions &o) : in(in), opts(o) {
    vals.reserve(o.maxArgs + o.maxOps + 8);
  }

  GeneratedProgram run();

private:
  ByteSource &in;
  const GeneratorOptions &opts;
  std::vector<Val> vals;
  unsigned numArgs = 0, numOps = 0;
  std::string body;
  /// The body's statements, one entry per op (or, version 3, per ref
  /// write with its view): what a kg program splits into graphs.
  std::vector<std::string> units;
  /// Version 3: the ref arguments of a kg program.
  std::vector<Ref> refs;

  DType pickDType() {
    static const DType dts[] = {DType::F32, DType::F32, DType::F32,
                                DType::F64, DType::I64, DType::I32,
                                DType::I1,  DType::I16, DType::I8,
                                DType::U8,  DType::F16, DType::BF16};
    return dts[in.pick(std::size(dts))];
  }
  Val &newArg(DType dt, SmallVector<int64_t> shape, SmallVector<bool> dyn,
              int64_t indexBound = 0) {
    Val v;
    v.name = "%arg" + std::to_string(numArgs++);
    v.dt = dt;
    v.shape = std::move(shape);
    v.dyn = std::move(dyn);
    v.isArg = true;
    v.indexBound = indexBound;
    v.precision = isFloat(dt) ? dt : DType::F64;
    vals.push_back(std::move(v));
    return vals.back();
  }
  /// A new index argument of `shape` (run-time sizes, each possibly `?`)
  /// with values in [0, bound).
  Val &indexArg(SmallVector<int64_t> shape, int64_t bound) {
    SmallVector<bool> dyn;
    for (size_t i = 0; i < shape.size(); ++i)
      dyn.push_back(in.chance(1, 4));
    return newArg(in.chance(1, 3) ? DType::I32 : DType::I64, std::move(shape),
                  std::move(dyn), bound);
  }
  /// Looks `name` up again (after an argument was added and the values
  /// moved).
  const Val *byName(const std::string &name) {
    return pickVal([&](const Val &v) { return v.name == name; });
  }
  /// A new argument of `rank` random dims, each possibly `?`.
  Val &randomArg(DType dt, unsigned rank) {
    SmallVector<int64_t> shape;
    SmallVector<bool> dyn;
    for (unsigned i = 0; i < rank; ++i) {
      shape.push_back(opts.zeroDims && in.chance(1, 8)
                          ? 0
                          : 1 + in.pick(opts.maxDim));
      dyn.push_back(in.chance(1, 4));
    }
    return newArg(dt, shape, dyn);
  }
  /// A new argument that broadcasts with `like`: a suffix of its shape with
  /// some dims 1, each possibly `?`.
  Val &argLike(const Val &like, DType dt) {
    unsigned drop = like.rank() ? in.pick(like.rank() + 1) : 0;
    if (drop > 0 && in.chance(1, 2))
      drop = 0;
    SmallVector<int64_t> shape;
    SmallVector<bool> dyn;
    for (int64_t i = drop; i < like.rank(); ++i) {
      int64_t d = like.shape[i];
      if (in.chance(1, 5))
        d = 1;
      shape.push_back(d);
      dyn.push_back(in.chance(1, 4));
    }
    return newArg(dt, shape, dyn);
  }
  bool canAddArg() const { return numArgs < opts.maxArgs; }

  /// A value of the pool, later values more likely; null if none fits.
  const Val *pickVal(llvm::function_ref<bool(const Val &)> ok) {
    SmallVector<unsigned> idx;
    for (unsigned i = 0; i < vals.size(); ++i)
      if (ok(vals[i]))
        idx.push_back(i);
    if (idx.empty())
      return nullptr;
    // Half the time the most recent one, else any.
    if (in.chance(1, 2))
      return &vals[idx.back()];
    return &vals[idx[in.pick(idx.size())]];
  }
  /// A value that `ok` accepts and a partner of its dtype, or {null, null}.
  /// The first is looked up again by name after `partner`, which may add an
  /// argument (and so move the values).
  std::pair<const Val *, const Val *>
  operandPair(llvm::function_ref<bool(const Val &)> ok) {
    const Val *a = pickVal(ok);
    if (!a)
      return {nullptr, nullptr};
    std::string an = a->name;
    const Val *b = partner(*a, a->dt);
    if (!b)
      return {nullptr, nullptr};
    a = pickVal([&](const Val &v) { return v.name == an; });
    return {a, b};
  }
  /// A second operand of dtype `dt` that broadcasts with `a` (a new
  /// argument when there is room and the bytes say so, or none fits).
  const Val *partner(const Val &a, DType dt) {
    auto compatible = [&](const Val &v) {
      SmallVector<int64_t> out;
      return v.dt == dt && broadcastRuntime({a.shape, v.shape}, out);
    };
    if (canAddArg() && in.chance(1, 3))
      return &argLike(a, dt);
    if (const Val *v = pickVal(compatible))
      return v;
    if (canAddArg())
      return &argLike(a, dt);
    return nullptr;
  }

  std::string fresh() { return "%v" + std::to_string(numOps++); }
  /// Appends `%r = <opText> : (<operand types>) -> <result type>`.
  void emit(Val result, llvm::StringRef opText, ArrayRef<const Val *> operands) {
    DType p = isFloat(result.dt) ? result.dt : DType::F64;
    for (const Val *o : operands)
      if (tolerance(o->precision) > tolerance(p))
        p = o->precision;
    result.precision = p;
    std::string line = "  " + result.name + " = " + opText.str() + " : (";
    for (auto [i, o] : llvm::enumerate(operands))
      line += (i ? ", " : "") + o->type();
    line += ") -> " + result.type() + "\n";
    body += line;
    units.push_back(line);
    vals.push_back(std::move(result));
  }
  /// The result of an elementwise op over `ops` (broadcast).
  Val elementwise(ArrayRef<const Val *> ops, DType dt, bool finite) {
    SmallVector<SmallVector<int64_t>> st, rt;
    for (const Val *o : ops) {
      st.push_back(o->staticShape());
      rt.push_back(o->shape);
    }
    Val r;
    r.name = fresh();
    r.dt = dt;
    SmallVector<int64_t> s = broadcastStatic(st);
    broadcastRuntime(rt, r.shape);
    for (int64_t d : s)
      r.dyn.push_back(d == kDyn);
    r.finite = finite;
    return r;
  }
  /// The result of reducing `a` over `dims` (negative ones count from the
  /// end), kept as unit dims with `keepdim`.
  Val reduced(const Val &a, ArrayRef<int64_t> dims, bool keepdim, DType dt,
              bool finite) {
    Val r;
    r.name = fresh();
    r.dt = dt;
    r.finite = finite;
    for (int64_t i = 0; i < a.rank(); ++i) {
      if (llvm::is_contained(dims, i) ||
          llvm::is_contained(dims, i - a.rank())) {
        if (keepdim) {
          r.shape.push_back(1);
          r.dyn.push_back(false);
        }
        continue;
      }
      r.shape.push_back(a.shape[i]);
      r.dyn.push_back(a.dyn[i]);
    }
    return r;
  }
  static std::string operandList(ArrayRef<const Val *> ops) {
    std::string s;
    for (auto [i, o] : llvm::enumerate(ops))
      s += (i ? ", " : "") + o->name;
    return s;
  }
  static std::string intList(ArrayRef<int64_t> xs) {
    std::string s = "[";
    for (auto [i, x] : llvm::enumerate(xs))
      s += (i ? ", " : "") + std::to_string(x);
    return s + "]";
  }

  bool unary();
  bool binary();
  bool compare();
  bool comparison(ArrayRef<const char *> ops);
  /// Some dims of a value of `rank` >= 1 (each with probability 1/2, a
  /// third of them written negative), at least one.
  SmallVector<int64_t> pickDims(int64_t rank) {
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i)
      if (in.chance(1, 2))
        dims.push_back(in.chance(1, 3) ? i - rank : i);
    if (dims.empty())
      dims.push_back(in.pick(rank));
    return dims;
  }
  bool where();
  bool cast();
  bool clamp();
  bool reduce();
  bool softmax();
  bool matmul();
  bool transpose();
  bool permute();
  bool reshape();
  bool unsqueeze();
  bool squeeze();
  bool expand();
  bool cumsum();
  bool argReduce();
  bool variance();
  bool pad();
  bool slice();
  bool concat();
  bool layerNorm();
  bool pool();
  bool scatter();
  bool linear();
  bool argsort();
  bool searchsorted();
  bool gather();
  bool conv();
  // Version 2.
  bool flip();
  bool stack();
  bool select();
  bool sliceScatter();
  bool reduceMore();
  bool predicate();
  bool embedding();
  bool batchNorm();
  bool loss();
  bool attention();
  // Version 3: kg programs with ref arguments written in place.
  using Step = bool (Generator::*)();
  bool refWrite();
  bool refLoad();
  Ref *pickRef();
  Ref target(const Ref &r, std::string &unit);
  GeneratedProgram kgProgram(ArrayRef<Step> steps);
  /// A value of `a`'s dtype and exactly `shape` (a new argument, or a value
  /// of the pool that has it); null if none can be had.
  const Val *sameShape(DType dt, ArrayRef<int64_t> shape);
  /// Emits a multi-result op: `%vN:K = <opText> : (...) -> (...)`; the
  /// results are `%vN#i`.
  void emitMulti(SmallVector<Val> results, llvm::StringRef opText,
                 ArrayRef<const Val *> operands);
};

const Val *Generator::sameShape(DType dt, ArrayRef<int64_t> shape) {
  if (const Val *v = pickVal([&](const Val &v) {
        return v.dt == dt && ArrayRef<int64_t>(v.shape) == shape;
      }))
    if (in.chance(1, 2) || !canAddArg())
      return v;
  if (!canAddArg())
    return nullptr;
  SmallVector<bool> dyn;
  for (size_t i = 0; i < shape.size(); ++i)
    dyn.push_back(in.chance(1, 4));
  return &newArg(dt, SmallVector<int64_t>(shape), std::move(dyn));
}

void Generator::emitMulti(SmallVector<Val> results, llvm::StringRef opText,
                          ArrayRef<const Val *> operands) {
  std::string base = fresh();
  DType p = DType::F64;
  for (const Val *o : operands)
    if (tolerance(o->precision) > tolerance(p))
      p = o->precision;
  std::string line = "  " + base + ":" + std::to_string(results.size()) +
                     " = " + opText.str() + " : (";
  for (auto [i, o] : llvm::enumerate(operands))
    line += (i ? ", " : "") + o->type();
  line += ") -> (";
  for (auto [i, r] : llvm::enumerate(results))
    line += (i ? ", " : "") + r.type();
  body += line + ")\n";
  units.push_back(line + ")\n");
  for (auto [i, r] : llvm::enumerate(results)) {
    r.name = base + "#" + std::to_string(i);
    if (isFloat(r.dt) && tolerance(p) > tolerance(r.dt))
      r.precision = p;
    else
      r.precision = isFloat(r.dt) ? r.dt : DType::F64;
    vals.push_back(std::move(r));
  }
}

/// kt.flip over some dims (negative ones too).
bool Generator::flip() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a)
    return false;
  SmallVector<int64_t> dims = pickDims(a->rank());
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  emit(std::move(r), "kt.flip " + a->name + " {dims = " + intList(dims) + "}",
       {a});
  return true;
}

/// kt.stack of two or three values of one shape and dtype along a new dim.
bool Generator::stack() {
  const Val *a = pickVal([](const Val &v) { return v.rank() < 4; });
  if (!a)
    return false;
  std::string an = a->name;
  DType dt = a->dt;
  SmallVector<int64_t> shape = a->shape;
  SmallVector<std::string> names = {an};
  unsigned n = 2 + in.pick(2);
  for (unsigned i = 1; i < n; ++i) {
    const Val *b = in.chance(1, 4) ? byName(an) : sameShape(dt, shape);
    if (!b)
      return false;
    names.push_back(b->name);
  }
  SmallVector<const Val *> ops;
  for (const std::string &nm : names)
    ops.push_back(byName(nm));
  int64_t rank = shape.size();
  int64_t dim = int64_t(in.pick(2 * rank + 2)) - (rank + 1);
  int64_t at = dim < 0 ? dim + rank + 1 : dim;
  Val r;
  r.name = fresh();
  r.dt = dt;
  r.finite = llvm::all_of(ops, [](const Val *o) { return o->finite; });
  for (int64_t i = 0; i < rank; ++i) {
    if (i == at) {
      r.shape.push_back(n);
      r.dyn.push_back(false);
    }
    // A dim of the result is static when one operand's is.
    bool dyn = llvm::all_of(ops, [&](const Val *o) { return o->dyn[i]; });
    r.shape.push_back(shape[i]);
    r.dyn.push_back(dyn);
  }
  if (at == rank) {
    r.shape.push_back(n);
    r.dyn.push_back(false);
  }
  std::string list;
  for (auto [i, nm] : llvm::enumerate(names))
    list += (i ? ", " : "") + nm;
  emit(std::move(r), "kt.stack " + list + " {dim = " + std::to_string(dim) +
                         " : i64}",
       ops);
  return true;
}

/// kt.select of one index (negative too) of a dim whose size is static in
/// the type (a `?` dim's index could be out of range for kt's verifier).
bool Generator::select() {
  const Val *a = pickVal([](const Val &v) {
    return v.rank() > 0 && hasStaticNonEmptyDim(v);
  });
  if (!a)
    return false;
  SmallVector<int64_t> staticDims;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (!a->dyn[i] && a->shape[i] > 0)
      staticDims.push_back(i);
  int64_t dim = staticDims[in.pick(staticDims.size())];
  int64_t size = a->shape[dim];
  int64_t index = int64_t(in.pick(2 * size)) - size;
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (i != dim) {
      r.shape.push_back(a->shape[i]);
      r.dyn.push_back(a->dyn[i]);
    }
  int64_t written = in.chance(1, 3) ? dim - a->rank() : dim;
  emit(std::move(r),
       "kt.select " + a->name + " {dim = " + std::to_string(written) +
           " : i64, index = " + std::to_string(index) + " : i64}",
       {a});
  return true;
}

/// kt.slice_scatter (start/end within a static dim, step 1) or
/// kt.select_scatter of a new source argument into a value.
bool Generator::sliceScatter() {
  const Val *a = pickVal([](const Val &v) {
    return v.rank() > 0 && hasStaticNonEmptyDim(v);
  });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  SmallVector<int64_t> staticDims;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (!a->dyn[i] && a->shape[i] > 0)
      staticDims.push_back(i);
  int64_t dim = staticDims[in.pick(staticDims.size())];
  int64_t size = a->shape[dim];
  bool sel = in.chance(1, 2);
  SmallVector<int64_t> sshape;
  SmallVector<bool> sdyn;
  int64_t start = in.pick(size), end = start + 1 + in.pick(size - start);
  for (int64_t i = 0; i < a->rank(); ++i) {
    if (i == dim) {
      if (sel)
        continue;
      sshape.push_back(end - start);
      sdyn.push_back(false);
      continue;
    }
    sshape.push_back(a->shape[i]);
    sdyn.push_back(a->dyn[i] || in.chance(1, 4));
  }
  std::string sn = newArg(a->dt, sshape, sdyn).name;
  a = byName(an);
  const Val *sv = byName(sn);
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  r.finite = a->finite && sv->finite;
  std::string attrs =
      sel ? "{dim = " + std::to_string(dim) + ", index = " +
                std::to_string(in.chance(1, 3) ? start - size : start) + "}"
          : "{dim = " + std::to_string(dim) + ", start = " +
                std::to_string(start) + ", end = " + std::to_string(end) + "}";
  emit(std::move(r),
       std::string(sel ? "kt.select_scatter " : "kt.slice_scatter ") + an +
           ", " + sn + " " + attrs,
       {a, sv});
  return true;
}

/// kt.logsumexp (floats), kt.any / kt.all (any dtype) over some dims.
bool Generator::reduceMore() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a)
    return false;
  SmallVector<const char *> ops = {"any", "all"};
  if (isFloat(a->dt))
    ops.push_back("logsumexp");
  std::string op = ops[in.pick(ops.size())];
  bool lse = op == "logsumexp";
  SmallVector<int64_t> dims = pickDims(a->rank());
  bool keepdim = in.chance(1, 3);
  Val r = reduced(*a, dims, keepdim, lse ? a->dt : DType::I1,
                  lse ? a->finite : true);
  emit(std::move(r),
       "kt." + op + " " + a->name + " {dim = " + intList(dims) +
           (keepdim ? ", keepdim = true" : "") + "}",
       {a});
  return true;
}

/// kt.isnan (floats), kt.logical_not, kt.bitwise_not (integers and i1),
/// and the comparisons ge / le / ne.
bool Generator::predicate() {
  if (in.chance(1, 2)) {
    const Val *a = pickVal([](const Val &) { return true; });
    if (!a)
      return false;
    SmallVector<const char *> ops = {"logical_not"};
    if (isFloat(a->dt))
      ops.push_back("isnan");
    else
      ops.push_back("bitwise_not");
    std::string op = ops[in.pick(ops.size())];
    Val r = elementwise({a}, op == "bitwise_not" ? a->dt : DType::I1, true);
    emit(std::move(r), "kt." + op + " " + a->name, {a});
    return true;
  }
  static const char *ops[] = {"ge", "le", "ne"};
  return comparison(ops);
}

/// kt.embedding: a new float weight [V, D] and a new index argument with
/// values in [0, V).
bool Generator::embedding() {
  if (numArgs + 2 > opts.maxArgs)
    return false;
  int64_t v = 1 + in.pick(opts.maxDim), d = 1 + in.pick(opts.maxDim);
  DType dt = in.chance(1, 3) ? DType::F64 : DType::F32;
  SmallVector<int64_t> wshape = {v, d};
  SmallVector<bool> wdyn = {in.chance(1, 4), in.chance(1, 4)};
  std::string wn = newArg(dt, wshape, wdyn).name;
  SmallVector<int64_t> ishape;
  for (unsigned i = 0, n = in.pick(3); i < n; ++i)
    ishape.push_back(1 + in.pick(opts.maxDim));
  std::string idxName = indexArg(ishape, v).name;
  const Val *w = byName(wn), *ip = byName(idxName);
  Val r;
  r.name = fresh();
  r.dt = dt;
  r.shape = ip->shape;
  r.dyn = ip->dyn;
  r.shape.push_back(d);
  r.dyn.push_back(w->dyn[1]);
  emit(std::move(r), "kt.embedding " + wn + ", " + idxName, {w, ip});
  return true;
}

/// kt.batch_norm (inference: new running mean and a positive running
/// variance) or kt.batch_norm_train (three results) of a float value of
/// rank >= 2 with a static channel dim 1, with or without weight and bias.
bool Generator::batchNorm() {
  const Val *a = pickVal([](const Val &v) {
    return (v.dt == DType::F32 || v.dt == DType::F64) && v.rank() >= 2 &&
           !v.dyn[1];
  });
  if (!a)
    return false;
  std::string an = a->name;
  DType dt = a->dt;
  int64_t c = a->shape[1];
  bool train = in.chance(1, 2);
  if (!train && numArgs + 2 > opts.maxArgs)
    return false;
  std::string mn, vn, wn, bn;
  if (!train) {
    mn = newArg(dt, {c}, {false}).name;
    std::string rawVar = newArg(dt, {c}, {false}).name;
    // A running variance is positive: |v| + 0.5.
    Val absV = elementwise({byName(rawVar)}, dt, true);
    std::string absName = absV.name;
    emit(std::move(absV), "kt.abs " + rawVar, {byName(rawVar)});
    Val pos = elementwise({byName(absName)}, dt, true);
    vn = pos.name;
    emit(std::move(pos),
         "kt.clamp " + absName + " {min = 0.5 : f64}", {byName(absName)});
  }
  bool affine = numArgs + 2 <= opts.maxArgs && in.chance(1, 2);
  if (affine) {
    wn = newArg(dt, {c}, {false}).name;
    bn = newArg(dt, {c}, {false}).name;
  }
  const Val *x = byName(an);
  SmallVector<const Val *> operands = {x};
  std::string text = train ? "kt.batch_norm_train " + an
                           : "kt.batch_norm " + an + ", " + mn + ", " + vn;
  if (!train)
    operands.append({byName(mn), byName(vn)});
  if (affine) {
    text += " weight " + wn + " bias " + bn;
    operands.append({byName(wn), byName(bn)});
  }
  if (in.chance(1, 3))
    text += " {eps = 1.0e-3}";
  Val y = elementwise({x}, dt, false);
  if (!train) {
    emit(std::move(y), text, operands);
    return true;
  }
  Val stat;
  stat.dt = dt;
  stat.finite = false;
  stat.shape = {c};
  stat.dyn = {false};
  emitMulti({y, stat, stat}, text, operands);
  return true;
}

/// kt.cross_entropy or kt.nll_loss of a float [N, C] (or [C]) value with a
/// new target argument in [0, C), a reduction, sometimes class weights,
/// ignore_index or label smoothing.
bool Generator::loss() {
  const Val *a = pickVal([](const Val &v) {
    return (v.dt == DType::F32 || v.dt == DType::F64) &&
           (v.rank() == 1 || v.rank() == 2) && !v.dyn.back();
  });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  DType dt = a->dt;
  int64_t c = a->shape.back();
  bool ce = in.chance(1, 2);
  SmallVector<int64_t> tshape;
  if (a->rank() == 2)
    tshape.push_back(a->shape[0]);
  std::string tn = indexArg(tshape, c).name;
  std::string wn;
  if (canAddArg() && in.chance(1, 3)) {
    std::string raw = newArg(dt, {c}, {false}).name;
    // Class weights are positive.
    Val w = elementwise({byName(raw)}, dt, true);
    wn = w.name;
    emit(std::move(w), "kt.abs " + raw, {byName(raw)});
  }
  const Val *x = byName(an), *t = byName(tn);
  // A batched target's dim must be static when the input's is (kt's
  // verifier): index arguments may be `?`, which is fine.
  static const char *reductions[] = {"mean", "sum", "none"};
  unsigned red = in.pick(3);
  SmallVector<std::string> attrs;
  if (red != 0)
    attrs.push_back(std::string("reduction = #kt.reduction<") +
                    reductions[red] + ">");
  if (in.chance(1, 4))
    attrs.push_back("ignore_index = " + std::to_string(in.pick(c)));
  if (ce && in.chance(1, 4))
    attrs.push_back("label_smoothing = 0.1");
  std::string text = std::string(ce ? "kt.cross_entropy " : "kt.nll_loss ") +
                     an + ", " + tn + (wn.empty() ? "" : ", " + wn);
  if (!attrs.empty()) {
    text += " {";
    for (auto [i, s] : llvm::enumerate(attrs))
      text += (i ? ", " : "") + s;
    text += "}";
  }
  SmallVector<const Val *> operands = {x, t};
  if (!wn.empty())
    operands.push_back(byName(wn));
  Val r;
  r.name = fresh();
  r.dt = dt;
  // A mean over only ignored targets is 0/0 (NaN), as PyTorch.
  r.finite = false;
  if (red == 2 && x->rank() == 2) {
    r.shape = {x->shape[0]};
    r.dyn = {x->dyn[0] && t->dyn[0]};
  }
  emit(std::move(r), text, operands);
  return true;
}

/// kt.scaled_dot_product_attention of new q [.., L, E], k [.., S, E] and
/// v [.., S, Ev] arguments (rank 2 to 4), causal sometimes.
bool Generator::attention() {
  if (numArgs + 3 > opts.maxArgs)
    return false;
  DType dt = in.chance(1, 3) ? DType::F64 : DType::F32;
  unsigned rank = 2 + in.pick(3);
  SmallVector<int64_t> batch;
  for (unsigned i = 2; i < rank; ++i)
    batch.push_back(1 + in.pick(3));
  int64_t l = 1 + in.pick(opts.maxDim), s = 1 + in.pick(opts.maxDim);
  int64_t e = 1 + in.pick(opts.maxDim), ev = 1 + in.pick(opts.maxDim);
  auto shapeOf = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> sh = batch;
    sh.append({rows, cols});
    return sh;
  };
  auto dynOf = [&](unsigned n) {
    SmallVector<bool> d;
    for (unsigned i = 0; i < n; ++i)
      d.push_back(in.chance(1, 5));
    return d;
  };
  std::string qn = newArg(dt, shapeOf(l, e), dynOf(rank)).name;
  std::string kn = newArg(dt, shapeOf(s, e), dynOf(rank)).name;
  std::string vn = newArg(dt, shapeOf(s, ev), dynOf(rank)).name;
  const Val *q = byName(qn), *k = byName(kn), *v = byName(vn);
  bool causal = in.chance(1, 2);
  Val r;
  r.name = fresh();
  r.dt = dt;
  r.finite = true;
  for (unsigned i = 0; i + 2 < rank; ++i) {
    r.shape.push_back(batch[i]);
    r.dyn.push_back(q->dyn[i] && k->dyn[i] && v->dyn[i]);
  }
  r.shape.append({l, ev});
  r.dyn.append({q->dyn[rank - 2], v->dyn[rank - 1]});
  emit(std::move(r),
       "kt.scaled_dot_product_attention " + qn + ", " + kn + ", " + vn +
           (causal ? " {is_causal = true}" : ""),
       {q, k, v});
  return true;
}

bool Generator::unary() {
  const Val *a = pickVal([](const Val &v) { return v.dt != DType::I1; });
  if (!a)
    return false;
  // Finite-preserving ops first.
  static const char *floatOps[] = {"tanh", "sigmoid", "neg",  "abs",   "relu",
                                   "sin",  "cos",     "erf",  "floor", "ceil",
                                   "round", "sign",   "silu", "exp",   "sqrt",
                                   "log",  "reciprocal", "rsqrt", "expm1",
                                   "log1p", "gelu"};
  static const char *intOps[] = {"neg", "abs", "relu", "sign"};
  std::string op;
  bool finite = a->finite;
  if (isFloat(a->dt)) {
    unsigned k = in.pick(std::size(floatOps));
    op = floatOps[k];
    if (k >= 13 && op != "gelu")
      finite = false;
  } else {
    op = intOps[in.pick(std::size(intOps))];
  }
  Val r = elementwise({a}, a->dt, finite);
  emit(std::move(r), "kt." + op + " " + a->name, {a});
  return true;
}

bool Generator::binary() {
  auto [a, b] = operandPair([](const Val &v) { return v.dt != DType::I1; });
  if (!a)
    return false;
  SmallVector<const char *> ops = {"add", "sub", "mul", "maximum", "minimum"};
  if (isFloat(a->dt)) {
    ops.append({"div", "pow", "atan2", "fmod"});
  } else {
    // (Integer fmod/remainder/div: a zero divisor is a run-time error.)
    ops.append({"bitwise_and", "bitwise_or", "bitwise_xor"});
  }
  unsigned k = in.pick(ops.size());
  bool finite = a->finite && b->finite && k < 5 && isFloat(a->dt);
  if (!isFloat(a->dt))
    finite = true;
  Val r = elementwise({a, b}, a->dt, finite);
  emit(std::move(r), std::string("kt.") + ops[k] + " " + operandList({a, b}),
       {a, b});
  return true;
}

/// One of `ops` (a binary op with an i1 result) on two values that
/// broadcast.
bool Generator::comparison(ArrayRef<const char *> ops) {
  auto [a, b] = operandPair([](const Val &) { return true; });
  if (!a)
    return false;
  Val r = elementwise({a, b}, DType::I1, true);
  emit(std::move(r),
       std::string("kt.") + ops[in.pick(ops.size())] + " " +
           operandList({a, b}),
       {a, b});
  return true;
}

bool Generator::compare() {
  static const char *ops[] = {"eq", "lt", "gt", "logical_and", "logical_or",
                              "logical_xor"};
  return comparison(ops);
}

bool Generator::where() {
  const Val *a = pickVal([](const Val &) { return true; });
  if (!a)
    return false;
  std::string an = a->name;
  const Val *b = partner(*a, a->dt);
  if (!b)
    return false;
  std::string bn = b->name;
  const Val *c = partner(*a, DType::I1);
  if (!c)
    return false;
  a = pickVal([&](const Val &v) { return v.name == an; });
  b = pickVal([&](const Val &v) { return v.name == bn; });
  SmallVector<int64_t> out;
  if (!broadcastRuntime({a->shape, b->shape, c->shape}, out))
    return false;
  Val r = elementwise({c, a, b}, a->dt, a->finite && b->finite);
  emit(std::move(r), "kt.where " + operandList({c, a, b}), {c, a, b});
  return true;
}

bool Generator::cast() {
  const Val *a = pickVal([](const Val &) { return true; });
  if (!a)
    return false;
  DType to = pickDType();
  // A float that may be NaN/inf converted to an integer is undefined (C,
  // LLVM's fptosi): PyTorch leaves it unspecified too.
  if (isFloat(a->dt) && !isFloat(to) && to != DType::I1 && !a->finite)
    to = DType::F64;
  // So is a finite float out of the integer type's range (300.0 to i8,
  // -1.0 to ui8): clamp into it first.
  if (isFloat(a->dt) && !isFloat(to) && to != DType::I1 && to != DType::I64) {
    Val c = elementwise({a}, a->dt, true);
    std::string cn = c.name;
    emit(std::move(c),
         "kt.clamp " + a->name +
             (to == DType::U8 ? " {min = 0.0 : f64, max = 100.0 : f64}"
                              : " {min = -100.0 : f64, max = 100.0 : f64}"),
         {a});
    a = byName(cn);
  }
  Val r = elementwise({a}, to, a->finite || isFloat(to));
  emit(std::move(r),
       "kt.cast " + a->name + " {dtype = " + elemName(to) + "}", {a});
  return true;
}

bool Generator::clamp() {
  const Val *a = pickVal([](const Val &v) { return isFloat(v.dt); });
  if (!a)
    return false;
  static const char *bounds[] = {"{min = -1.0 : f64, max = 1.0 : f64}",
                                 "{min = 0.0 : f64}", "{max = 0.5 : f64}"};
  Val r = elementwise({a}, a->dt, a->finite);
  emit(std::move(r),
       "kt.clamp " + a->name + " " + bounds[in.pick(std::size(bounds))], {a});
  return true;
}

bool Generator::reduce() {
  const Val *a = pickVal([](const Val &v) {
    return v.rank() > 0 && v.dt != DType::I1;
  });
  if (!a)
    return false;
  SmallVector<const char *> ops = {"sum", "amax"};
  if (isFloat(a->dt))
    ops.push_back("mean");
  std::string op = ops[in.pick(ops.size())];
  // PyTorch's rule: an integer sum is int64.
  DType resultType = op == "sum" && !isFloat(a->dt) ? DType::I64 : a->dt;
  SmallVector<int64_t> dims = pickDims(a->rank());
  bool keepdim = in.chance(1, 3);
  Val r = reduced(*a, dims, keepdim, resultType, a->finite);
  emit(std::move(r),
       "kt." + op + " " + a->name + " {dim = " + intList(dims) +
           (keepdim ? ", keepdim = true" : "") + "}",
       {a});
  return true;
}

bool Generator::softmax() {
  const Val *a = pickVal([](const Val &v) { return isFloat(v.dt); });
  if (!a)
    return false;
  int64_t bound = std::max<int64_t>(a->rank(), 1);
  int64_t dim = int64_t(in.pick(2 * bound)) - bound;
  Val r = elementwise({a}, a->dt, a->finite);
  emit(std::move(r),
       std::string(in.chance(1, 2) ? "kt.softmax " : "kt.log_softmax ") +
           a->name + " {dim = " + std::to_string(dim) + "}",
       {a});
  return true;
}

bool Generator::matmul() {
  if (!opts.matmul)
    return false;
  const Val *a = pickVal([](const Val &v) {
    return (v.dt == DType::F32 || v.dt == DType::F64 || v.dt == DType::I64) &&
           (v.rank() == 1 || v.rank() == 2);
  });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  int64_t k = a->shape.back();
  bool kdyn = a->dyn.back();
  bool vec = in.chance(1, 4);
  int64_t n = 1 + in.pick(opts.maxDim);
  bool ndyn = in.chance(1, 4);
  SmallVector<int64_t> bshape = {k};
  SmallVector<bool> bdyn = {kdyn ? true : in.chance(1, 4)};
  if (!vec) {
    bshape.push_back(n);
    bdyn.push_back(ndyn);
  }
  const Val &b = newArg(a->dt, bshape, bdyn);
  a = pickVal([&](const Val &v) { return v.name == an; });
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  if (a->rank() == 2) {
    r.shape.push_back(a->shape[0]);
    r.dyn.push_back(a->dyn[0]);
  }
  if (!vec) {
    r.shape.push_back(n);
    r.dyn.push_back(ndyn);
  }
  emit(std::move(r), "kt.matmul " + operandList({a, &b}), {a, &b});
  return true;
}

bool Generator::transpose() {
  const Val *a = pickVal([](const Val &v) { return v.rank() >= 2; });
  if (!a)
    return false;
  int64_t d0 = in.pick(a->rank()), d1 = in.pick(a->rank());
  Val r = *a;
  r.name = fresh();
  std::swap(r.shape[d0], r.shape[d1]);
  std::swap(r.dyn[d0], r.dyn[d1]);
  r.isArg = false;
  emit(std::move(r),
       "kt.transpose " + a->name + " {dim0 = " + std::to_string(d0) +
           " : i64, dim1 = " + std::to_string(d1) + " : i64}",
       {a});
  return true;
}

bool Generator::permute() {
  const Val *a = pickVal([](const Val &v) { return v.rank() >= 1; });
  if (!a)
    return false;
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < a->rank(); ++i)
    perm.push_back(i);
  for (int64_t i = a->rank() - 1; i > 0; --i)
    std::swap(perm[i], perm[in.pick(i + 1)]);
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  for (int64_t i = 0; i < a->rank(); ++i) {
    r.shape[i] = a->shape[perm[i]];
    r.dyn[i] = a->dyn[perm[i]];
  }
  emit(std::move(r), "kt.permute " + a->name + " {dims = " + intList(perm) + "}",
       {a});
  return true;
}

bool Generator::reshape() {
  const Val *a = pickVal([](const Val &) { return true; });
  if (!a)
    return false;
  int64_t numel = 1;
  bool anyDyn = false;
  for (auto [d, y] : llvm::zip(a->shape, a->dyn)) {
    numel *= d;
    anyDyn |= y;
  }
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  SmallVector<int64_t> spec;
  // [-1] (flatten); without `?` dims also [d, -1] for a divisor d.
  SmallVector<int64_t> divisors;
  for (int64_t d = 1; d <= numel; ++d)
    if (numel % d == 0)
      divisors.push_back(d);
  // (No elements: no divisors to pick from, flatten.)
  if (anyDyn || numel == 0 || in.chance(1, 3)) {
    spec = {-1};
    r.shape = {numel};
    r.dyn = {anyDyn};
  } else {
    int64_t d = divisors[in.pick(divisors.size())];
    spec = {d, -1};
    r.shape = {d, numel / d};
    r.dyn = {false, false};
  }
  emit(std::move(r), "kt.reshape " + a->name + " {shape = " + intList(spec) + "}",
       {a});
  return true;
}

bool Generator::unsqueeze() {
  const Val *a = pickVal(
      [&](const Val &v) { return v.rank() < (int64_t)opts.maxRank + 1; });
  if (!a)
    return false;
  int64_t dim = in.pick(a->rank() + 1);
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.shape.insert(r.shape.begin() + dim, 1);
  r.dyn.insert(r.dyn.begin() + dim, false);
  emit(std::move(r),
       "kt.unsqueeze " + a->name + " {dim = " + std::to_string(dim) + " : i64}",
       {a});
  return true;
}

bool Generator::squeeze() {
  const Val *a = pickVal([](const Val &v) {
    for (auto [d, y] : llvm::zip(v.shape, v.dyn))
      if (d == 1 && !y)
        return true;
    return false;
  });
  if (!a)
    return false;
  SmallVector<int64_t> dims;
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.shape.clear();
  r.dyn.clear();
  for (int64_t i = 0; i < a->rank(); ++i) {
    if (a->shape[i] == 1 && !a->dyn[i] && (dims.empty() || in.chance(1, 2))) {
      dims.push_back(i);
      continue;
    }
    r.shape.push_back(a->shape[i]);
    r.dyn.push_back(a->dyn[i]);
  }
  emit(std::move(r), "kt.squeeze " + a->name + " {dim = " + intList(dims) + "}",
       {a});
  return true;
}

bool Generator::expand() {
  const Val *a = pickVal([](const Val &) { return true; });
  if (!a)
    return false;
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  SmallVector<int64_t> size;
  if (a->rank() < (int64_t)opts.maxRank && in.chance(1, 3)) {
    int64_t n = 1 + in.pick(opts.maxDim);
    size.push_back(n);
    r.shape.push_back(n);
    r.dyn.push_back(false);
  }
  for (int64_t i = 0; i < a->rank(); ++i) {
    if (a->shape[i] == 1 && !a->dyn[i] && in.chance(1, 2)) {
      int64_t n = 1 + in.pick(opts.maxDim);
      size.push_back(n);
      r.shape.push_back(n);
      r.dyn.push_back(false);
      continue;
    }
    size.push_back(-1);
    r.shape.push_back(a->shape[i]);
    r.dyn.push_back(a->dyn[i]);
  }
  emit(std::move(r), "kt.expand " + a->name + " {size = " + intList(size) + "}",
       {a});
  return true;
}

bool Generator::cumsum() {
  const Val *a = pickVal(
      [](const Val &v) { return v.rank() > 0 && v.dt != DType::I1; });
  if (!a)
    return false;
  int64_t dim = int64_t(in.pick(2 * a->rank())) - a->rank();
  SmallVector<const char *> ops = {"cumsum", "cumprod"};
  if (isFloat(a->dt))
    ops.push_back("logcumsumexp");
  unsigned k = in.pick(ops.size());
  // A product of many values may overflow.
  Val r = elementwise({a}, a->dt, a->finite && k == 0);
  emit(std::move(r),
       std::string("kt.") + ops[k] + " " + a->name + " {dim = " +
           std::to_string(dim) + "}",
       {a});
  return true;
}

/// kt.argmax / kt.argmin over one dim (ties: the first; NaN is the
/// maximum), or kt.amin / kt.prod over dims.
bool Generator::argReduce() {
  const Val *a = pickVal(
      [](const Val &v) { return v.rank() > 0 && v.dt != DType::I1; });
  if (!a)
    return false;
  unsigned kind = in.pick(3);
  bool keepdim = in.chance(1, 3);
  int64_t dim = in.pick(a->rank());
  Val r = reduced(*a, {dim}, keepdim, a->dt, a->finite);
  std::string attrs = "{dim = " +
                      (kind == 2 ? intList({dim}) : std::to_string(dim)) +
                      (keepdim ? ", keepdim = true" : "") + "}";
  std::string op;
  if (kind == 0) {
    op = in.chance(1, 2) ? "argmax" : "argmin";
    r.dt = DType::I64;
    r.finite = true;
  } else if (kind == 1) {
    op = "amin";
    attrs = "{dim = " + intList({dim}) + (keepdim ? ", keepdim = true" : "") +
            "}";
  } else {
    op = "prod";
    if (!isFloat(a->dt))
      r.dt = DType::I64;
    r.finite = false;
  }
  emit(std::move(r), "kt." + op + " " + a->name + " " + attrs, {a});
  return true;
}

/// kt.var over some dims, correction 0 or 1 (one element with correction
/// 1 divides by zero: not finite).
bool Generator::variance() {
  const Val *a = pickVal([](const Val &v) {
    return v.rank() > 0 && (v.dt == DType::F32 || v.dt == DType::F64);
  });
  if (!a)
    return false;
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (in.chance(1, 2))
      dims.push_back(i);
  if (dims.empty())
    dims.push_back(in.pick(a->rank()));
  bool keepdim = in.chance(1, 3);
  Val r = reduced(*a, dims, keepdim, a->dt, /*finite=*/false);
  emit(std::move(r),
       "kt.var " + a->name + " {dim = " + intList(dims) + ", correction = " +
           (in.chance(1, 2) ? "1.0" : "0.0") +
           (keepdim ? ", keepdim = true" : "") + "}",
       {a});
  return true;
}

/// kt.pad (constant) of the last one or two dims by -1 ... 2 on each side
/// (negative crops), keeping every size >= 1 and every crop within its dim
/// (crops come first: [2, -1] of an empty dim is an error, as in PyTorch).
bool Generator::pad() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a)
    return false;
  int64_t ndims = std::min<int64_t>(a->rank(), 1 + in.pick(2));
  SmallVector<int64_t> amounts;
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  for (int64_t j = 0; j < ndims; ++j) {
    int64_t dim = a->rank() - 1 - j;
    int64_t lo = int64_t(in.pick(4)) - 1, hi = int64_t(in.pick(4)) - 1;
    if (a->shape[dim] + lo + hi < 1 ||
        a->shape[dim] + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0) < 0)
      lo = hi = 0;
    amounts.append({lo, hi});
    r.shape[dim] += lo + hi;
  }
  std::string value;
  if (isFloat(a->dt) && in.chance(1, 2))
    value = ", value = -2.5 : f64";
  else if (!isFloat(a->dt) && a->dt != DType::I1 && in.chance(1, 2))
    value = ", value = 3.0 : f64";
  emit(std::move(r),
       "kt.pad " + a->name + " {pad = " + intList(amounts) + value + "}", {a});
  return true;
}

/// kt.slice along one dim with start/end (negative ones too) and a step
/// of 1 to 3, never empty.
bool Generator::slice() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a)
    return false;
  int64_t dim = in.pick(a->rank());
  int64_t n = a->shape[dim];
  int64_t start = int64_t(in.pick(n));
  int64_t end = start + 1 + int64_t(in.pick(n - start));
  int64_t step = 1 + in.pick(3);
  // A dim of size 0 (zeroDims) gives an empty slice, whatever the bounds.
  int64_t len = n == 0 ? 0 : (end - start + step - 1) / step;
  // Written negative (from the end) some of the time; an end past the
  // size is clamped.
  int64_t wStart = in.chance(1, 3) ? start - n : start;
  int64_t wEnd = in.chance(1, 3) ? (end == n ? n + 3 : end - n) : end;
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  r.shape[dim] = len;
  r.dyn[dim] = a->dyn[dim];
  emit(std::move(r),
       "kt.slice " + a->name + " {dim = " + std::to_string(dim) +
           " : i64, start = " + std::to_string(wStart) +
           " : i64, end = " + std::to_string(wEnd) +
           " : i64, step = " + std::to_string(step) + " : i64}",
       {a});
  return true;
}

/// kt.concat of a value and a new argument of its dtype and rank that
/// differs in the concat dim.
bool Generator::concat() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  int64_t dim = in.pick(a->rank());
  SmallVector<int64_t> shape = a->shape;
  SmallVector<bool> dyn;
  shape[dim] = 1 + in.pick(opts.maxDim);
  for (int64_t i = 0; i < a->rank(); ++i)
    dyn.push_back(in.chance(1, 4));
  const Val &b = newArg(a->dt, shape, dyn);
  std::string bn = b.name;
  a = byName(an);
  const Val *bp = byName(bn);
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite && bp->finite;
  for (int64_t i = 0; i < a->rank(); ++i) {
    r.shape.push_back(i == dim ? a->shape[i] + bp->shape[i] : a->shape[i]);
    r.dyn.push_back(i == dim ? (a->dyn[i] || bp->dyn[i])
                             : (a->dyn[i] && bp->dyn[i]));
  }
  int64_t written = in.chance(1, 3) ? dim - a->rank() : dim;
  emit(std::move(r),
       "kt.concat " + an + ", " + bn + " {dim = " + std::to_string(written) +
           " : i64}",
       {a, bp});
  return true;
}

/// kt.layer_norm over the last one or two dims (static in the type), with
/// or without weight and bias arguments.
bool Generator::layerNorm() {
  const Val *a = pickVal([](const Val &v) {
    return v.rank() > 0 && isFloat(v.dt) && !v.dyn.back();
  });
  if (!a)
    return false;
  std::string an = a->name;
  int64_t k = a->rank() >= 2 && !a->dyn[a->rank() - 2] && in.chance(1, 2) ? 2 : 1;
  SmallVector<int64_t> normalized(a->shape.end() - k, a->shape.end());
  std::string wn, bn;
  if (numArgs + 2 <= opts.maxArgs && in.chance(1, 2)) {
    wn = newArg(a->dt, normalized, SmallVector<bool>(k, false)).name;
    bn = newArg(a->dt, normalized, SmallVector<bool>(k, false)).name;
  }
  a = byName(an);
  SmallVector<const Val *> operands = {a};
  if (!wn.empty())
    operands.append({byName(wn), byName(bn)});
  Val r = elementwise({a}, a->dt, false);
  emit(std::move(r),
       "kt.layer_norm " + an + (wn.empty() ? "" : " weight " + wn + " bias " + bn) +
           " {normalized_shape = " + intList(normalized) + "}",
       operands);
  return true;
}

/// kt.max_pool2d / kt.avg_pool2d of a [C, H, W] or [N, C, H, W] float
/// value: kernel 1 to 3, stride 1 or 2 (or the default), padding up to
/// half the kernel, ceil_mode sometimes.
bool Generator::pool() {
  const Val *a = pickVal([](const Val &v) {
    return (v.rank() == 3 || v.rank() == 4) && isFloat(v.dt);
  });
  if (!a)
    return false;
  bool avg = in.chance(1, 2);
  int64_t k = 1 + in.pick(3), s = 1 + in.pick(2), p = in.pick(k / 2 + 1);
  bool ceil = in.chance(1, 4);
  int64_t h = a->shape[a->rank() - 2], w = a->shape[a->rank() - 1];
  auto outSize = [&](int64_t n) -> int64_t {
    int64_t span = n + 2 * p - k;
    if (span < 0)
      return 0;
    int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (o - 1) * s >= n + p)
      --o;
    return o;
  };
  int64_t oh = outSize(h), ow = outSize(w);
  if (oh < 1 || ow < 1)
    return false;
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  r.shape[a->rank() - 2] = oh;
  r.shape[a->rank() - 1] = ow;
  emit(std::move(r),
       std::string(avg ? "kt.avg_pool2d " : "kt.max_pool2d ") + a->name +
           " {kernel_size = [" + std::to_string(k) + "], stride = [" +
           std::to_string(s) + "], padding = [" + std::to_string(p) + "]" +
           (ceil ? ", ceil_mode = true" : "") + "}",
       {a});
  return true;
}

/// kt.scatter of a new src argument into a value along one dim through a
/// new index argument (values in range), with a reduction sometimes.
bool Generator::scatter() {
  const Val *a = pickVal(
      [](const Val &v) { return v.rank() > 0 && v.dt != DType::I1; });
  if (!a || numArgs + 2 > opts.maxArgs)
    return false;
  std::string an = a->name;
  int64_t dim = in.pick(a->rank());
  SmallVector<int64_t> ishape;
  for (int64_t i = 0; i < a->rank(); ++i)
    ishape.push_back(i == dim ? 1 + in.pick(opts.maxDim)
                              : std::min(1 + int64_t(in.pick(a->shape[i])),
                                         a->shape[i]));
  const Val &idx = indexArg(ishape, a->shape[dim]);
  std::string in_ = idx.name;
  SmallVector<int64_t> sshape = ishape;
  SmallVector<bool> sdyn;
  for (int64_t &d : sshape) {
    if (in.chance(1, 4))
      d += 1; // src may be larger than index
    sdyn.push_back(in.chance(1, 4));
  }
  std::string sn = newArg(byName(an)->dt, sshape, sdyn).name;
  a = byName(an);
  static const char *reduces[] = {"", "sum", "prod", "mean", "amax", "amin"};
  unsigned red = in.pick(std::size(reduces));
  std::string attrs = "{dim = " + std::to_string(dim) + " : i64";
  if (red)
    attrs += std::string(", reduce = #kt.scatter_reduce<") + reduces[red] + ">" +
             (in.chance(1, 2) ? ", include_self = false" : "");
  attrs += "}";
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  r.finite = a->finite && red != 2;
  emit(std::move(r), "kt.scatter " + an + ", " + in_ + ", " + sn + " " + attrs,
       {a, byName(in_), byName(sn)});
  return true;
}

/// kt.linear of a float value [.., K] (static K) with a new weight [N, K]
/// and sometimes a bias [N].
bool Generator::linear() {
  if (!opts.matmul)
    return false;
  const Val *a = pickVal([](const Val &v) {
    return v.rank() >= 1 && v.rank() <= 3 &&
           (v.dt == DType::F32 || v.dt == DType::F64) && !v.dyn.back();
  });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  int64_t k = a->shape.back(), n = 1 + in.pick(opts.maxDim);
  std::string wn = newArg(a->dt, {n, k}, {false, false}).name;
  std::string bn;
  if (canAddArg() && in.chance(1, 2))
    bn = newArg(byName(an)->dt, {n}, {false}).name;
  a = byName(an);
  SmallVector<const Val *> operands = {a, byName(wn)};
  if (!bn.empty())
    operands.push_back(byName(bn));
  Val r = *a;
  r.name = fresh();
  r.isArg = false;
  r.indexBound = 0;
  r.shape.back() = n;
  r.dyn.back() = false;
  emit(std::move(r), "kt.linear " + an + ", " + wn + (bn.empty() ? "" : ", " + bn),
       operands);
  return true;
}

bool Generator::argsort() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a)
    return false;
  int64_t dim = int64_t(in.pick(2 * a->rank())) - a->rank();
  Val r = elementwise({a}, DType::I64, true);
  emit(std::move(r),
       "kt.argsort " + a->name + " {dim = " + std::to_string(dim) +
           ", descending = " + (in.chance(1, 2) ? "true" : "false") + "}",
       {a});
  return true;
}

/// kt.searchsorted over a 1-D sequence that the program sorts itself
/// (kt.argsort, then kt.gather at the permutation): a sequence that is not
/// sorted has no defined result.
bool Generator::searchsorted() {
  const Val *v = pickVal([](const Val &x) { return x.dt != DType::I1; });
  if (!v)
    return false;
  std::string vn = v->name;
  DType dt = v->dt;
  const Val *s = pickVal(
      [&](const Val &x) { return x.dt == dt && x.rank() == 1; });
  if (!s) {
    if (!canAddArg())
      return false;
    s = &newArg(dt, {int64_t(1 + in.pick(opts.maxDim))}, {in.chance(1, 4)});
  }
  std::string sn = s->name;
  Val perm = elementwise({s}, DType::I64, true);
  std::string pn = perm.name;
  emit(std::move(perm), "kt.argsort " + sn + " {dim = 0, descending = false}",
       {s});
  s = byName(sn);
  const Val *p = byName(pn);
  Val sorted = elementwise({s}, dt, s->finite);
  std::string sortedName = sorted.name;
  emit(std::move(sorted), "kt.gather " + sn + ", " + pn + " {dim = 0 : i64}",
       {s, p});
  const Val *seq = byName(sortedName);
  v = byName(vn);
  Val r = elementwise({v}, DType::I64, true);
  emit(std::move(r),
       "kt.searchsorted " + sortedName + ", " + vn + " {right = " +
           (in.chance(1, 2) ? "true" : "false") + "}",
       {seq, v});
  return true;
}

/// kt.gather (an index of the input's rank, no larger than it in the other
/// dims) or kt.index_select (a 0-D or 1-D index): a new index argument
/// whose values are in range.
bool Generator::gather() {
  const Val *a = pickVal([](const Val &v) { return v.rank() > 0; });
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  int64_t rank = a->rank();
  int64_t dim = in.pick(rank);
  int64_t bound = a->shape[dim];
  bool select = in.chance(1, 2);
  SmallVector<int64_t> ishape;
  if (select) {
    if (in.chance(3, 4))
      ishape.push_back(1 + in.pick(opts.maxDim));
  } else {
    for (int64_t i = 0; i < rank; ++i)
      ishape.push_back(i == dim ? 1 + in.pick(opts.maxDim)
                                : std::min(1 + int64_t(in.pick(a->shape[i])),
                                         a->shape[i]));
  }
  const Val &idx = indexArg(ishape, bound);
  std::string idxName = idx.name;
  a = byName(an);
  const Val *ip = byName(idxName);
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  if (select) {
    r.shape = a->shape;
    r.dyn = a->dyn;
    r.shape[dim] = ip->rank() ? ip->shape[0] : 1;
    r.dyn[dim] = ip->rank() ? ip->dyn[0] : false;
  } else {
    r.shape = ip->shape;
    r.dyn = ip->dyn;
  }
  int64_t written = in.chance(1, 3) ? dim - rank : dim;
  emit(std::move(r),
       std::string(select ? "kt.index_select " : "kt.gather ") + an + ", " +
           idxName + " {dim = " + std::to_string(written) + " : i64}",
       {a, ip});
  return true;
}

/// kt.conv2d or kt.conv_transpose2d of a [C, H, W] or [N, C, H, W] float
/// value (static C) with a new weight argument, stride 1 or 2, padding 0 or
/// 1.
bool Generator::conv() {
  auto ok = [](const Val &v) {
    return (v.dt == DType::F32 || v.dt == DType::F64) &&
           (v.rank() == 3 || v.rank() == 4) && !v.dyn[v.rank() - 3];
  };
  const Val *a = pickVal(ok);
  if (!a && canAddArg() && in.chance(1, 2)) {
    a = &randomArg(in.chance(1, 2) ? DType::F32 : DType::F64, 3 + in.pick(2));
    if (!ok(*a))
      return false;
  }
  if (!a || !canAddArg())
    return false;
  std::string an = a->name;
  bool transposed = in.chance(1, 3);
  int64_t c = a->shape[a->rank() - 3];
  int64_t h = a->shape[a->rank() - 2], w = a->shape[a->rank() - 1];
  int64_t o = 1 + in.pick(4);
  int64_t kh = 1 + in.pick(3), kw = 1 + in.pick(3);
  int64_t stride = 1 + in.pick(2), pad = in.pick(2);
  auto outSize = [&](int64_t n, int64_t k) -> int64_t {
    if (transposed)
      return (n - 1) * stride - 2 * pad + k;
    if (n + 2 * pad < k)
      return 0;
    return (n + 2 * pad - k) / stride + 1;
  };
  int64_t oh = outSize(h, kh), ow = outSize(w, kw);
  if (oh < 1 || ow < 1)
    return false;
  SmallVector<int64_t> wshape = {transposed ? c : o, transposed ? o : c, kh, kw};
  const Val &wt = newArg(a->dt, wshape, {false, false, false, false});
  std::string wn = wt.name;
  a = byName(an);
  const Val *wp = byName(wn);
  Val r;
  r.name = fresh();
  r.dt = a->dt;
  r.finite = a->finite;
  if (a->rank() == 4) {
    r.shape.push_back(a->shape[0]);
    r.dyn.push_back(a->dyn[0]);
  }
  r.shape.append({o, oh, ow});
  r.dyn.append({false, a->dyn[a->rank() - 2], a->dyn[a->rank() - 1]});
  emit(std::move(r),
       std::string(transposed ? "kt.conv_transpose2d " : "kt.conv2d ") + an +
           ", " + wn + " {stride = [" + std::to_string(stride) +
           "], padding = [" + std::to_string(pad) + "]}",
       {a, wp});
  return true;
}

GeneratedProgram Generator::run() {
  // The first argument.
  DType dt = pickDType();
  if (in.chance(1, 2))
    dt = DType::F32;
  randomArg(dt, in.pick(opts.maxRank + 1));

  static const Step steps[] = {
      &Generator::unary,     &Generator::binary,  &Generator::binary,
      &Generator::compare,   &Generator::where,   &Generator::cast,
      &Generator::clamp,     &Generator::reduce,  &Generator::softmax,
      &Generator::matmul,    &Generator::transpose, &Generator::permute,
      &Generator::reshape,   &Generator::unsqueeze, &Generator::squeeze,
      &Generator::expand,    &Generator::unary,   &Generator::cumsum,
      &Generator::argsort,   &Generator::searchsorted, &Generator::gather,
      &Generator::conv,      &Generator::argReduce, &Generator::variance,
      &Generator::pad,       &Generator::slice,   &Generator::concat,
      &Generator::layerNorm, &Generator::pool,    &Generator::scatter,
      &Generator::linear,
      // Version 2 (the first 31 steps are version 1's, in its order).
      &Generator::flip,      &Generator::stack,   &Generator::select,
      &Generator::sliceScatter, &Generator::reduceMore, &Generator::predicate,
      &Generator::embedding, &Generator::batchNorm, &Generator::loss,
      &Generator::attention};
  constexpr unsigned kVersion1Steps = 31;
  unsigned numSteps = opts.version >= 2 ? std::size(steps) : kVersion1Steps;
  unsigned wanted = 1 + in.pick(std::max(1u, opts.maxOps));
  for (unsigned tries = 0; numOps < wanted && tries < 4 * wanted; ++tries)
    (this->*steps[in.pick(numSteps)])();
  if (numOps == 0) {
    // Always at least one op: neg works on every dtype but i1, cast on all.
    const Val &a = vals.front();
    Val r = elementwise({&a}, DType::F32, true);
    emit(std::move(r), "kt.cast " + a.name + " {dtype = f32}", {&a});
  }

  // Results: the last value, then up to two more (any value, an argument,
  // or the same value again).
  SmallVector<const Val *> results = {&vals.back()};
  unsigned more = in.pick(3);
  for (unsigned i = 0; i < more; ++i)
    results.push_back(&vals[in.pick(vals.size())]);

  GeneratedProgram p;
  p.numOps = numOps;
  std::string sig = "func.func @main(";
  bool first = true;
  for (const Val &v : vals) {
    if (!v.isArg)
      continue;
    sig += (first ? "" : ", ") + v.name + ": " + v.type();
    first = false;
    p.args.push_back({v.dt, v.shape, v.indexBound});
    p.hasZeroDim |= llvm::is_contained(v.shape, 0);
  }
  sig += ") -> (";
  std::string ret = "  return ";
  for (auto [i, v] : llvm::enumerate(results)) {
    sig += (i ? ", " : "") + v->type();
    ret += (i ? ", " : "") + v->name;
    p.tolerance.push_back(isFloat(v->dt) ? std::max(1.0, tolerance(v->precision) /
                                                            tolerance(v->dt))
                                         : 1.0);
  }
  ret += " : ";
  for (auto [i, v] : llvm::enumerate(results))
    ret += (i ? ", " : "") + v->type();
  p.text = sig + ") {\n" + body + ret + "\n}\n";
  // Version 3: the bytes after version 2's program say whether it stays a
  // function (0, also when the bytes have run out: a short input keeps
  // naming version 2's program) or grows into a kg program.
  if (opts.version >= 3 && in.pick(3) != 0)
    return kgProgram(ArrayRef<Step>(steps, numSteps));
  return p;
}

/// A ref to write or read: one of the program's, or a new ref argument (at
/// most 3): with the dtype and shape of another ref (a pair that a call may
/// tie to one tensor), of a plain argument (a pair that a call may alias),
/// or random.
Ref *Generator::pickRef() {
  if (!refs.empty() &&
      (refs.size() >= 3 || in.chance(refs.size(), refs.size() + 1)))
    return &refs[in.pick(refs.size())];
  Ref r;
  r.name = "%r" + std::to_string(refs.size());
  unsigned how = in.pick(4);
  const Val *plain = nullptr;
  if (how == 2)
    plain = pickVal([](const Val &v) { return v.isArg; });
  if (how <= 1 && !refs.empty()) {
    const Ref &o = refs[in.pick(refs.size())];
    r.dt = o.dt;
    r.shape = o.shape;
    r.dyn = o.dyn;
  } else if (plain) {
    r.dt = plain->dt;
    r.shape = plain->shape;
    for (size_t i = 0; i < r.shape.size(); ++i)
      r.dyn.push_back(in.chance(1, 4));
  } else {
    r.dt = pickDType();
    unsigned rank = in.pick(opts.maxRank + 1);
    for (unsigned i = 0; i < rank; ++i) {
      r.shape.push_back(opts.zeroDims && in.chance(1, 8)
                            ? 0
                            : 1 + in.pick(opts.maxDim));
      r.dyn.push_back(in.chance(1, 4));
    }
  }
  r.precision = isFloat(r.dt) ? r.dt : DType::F64;
  refs.push_back(std::move(r));
  return &refs.back();
}

/// What a write or a load goes through: `r` itself, or a view of it
/// (transpose, select, slice) appended to `unit`.
Ref Generator::target(const Ref &r, std::string &unit) {
  unsigned kind = in.pick(5);
  Ref v = r;
  std::string op, attrs;
  if (kind == 2 && r.rank() >= 2) {
    int64_t d0 = in.pick(r.rank()), d1 = in.pick(r.rank());
    std::swap(v.shape[d0], v.shape[d1]);
    std::swap(v.dyn[d0], v.dyn[d1]);
    op = "kt.view_transpose";
    attrs = "{dim0 = " + std::to_string(d0) + " : i64, dim1 = " +
            std::to_string(d1) + " : i64}";
  } else if ((kind == 3 || kind == 4) && r.rank() >= 1) {
    int64_t dim = in.pick(r.rank());
    int64_t n = r.shape[dim];
    if (n == 0)
      return r;
    if (kind == 3) {
      int64_t index = int64_t(in.pick(n));
      if (in.chance(1, 3))
        index -= n;
      v.shape.erase(v.shape.begin() + dim);
      v.dyn.erase(v.dyn.begin() + dim);
      op = "kt.view_select";
      attrs = "{dim = " + std::to_string(dim) + " : i64, index = " +
              std::to_string(index) + " : i64}";
    } else {
      int64_t start = int64_t(in.pick(n));
      int64_t end = start + 1 + int64_t(in.pick(n - start));
      int64_t step = 1 + in.pick(2);
      v.shape[dim] = (end - start + step - 1) / step;
      op = "kt.view_slice";
      attrs = "{dim = " + std::to_string(dim) + " : i64, start = " +
              std::to_string(start) + " : i64, end = " + std::to_string(end) +
              " : i64, step = " + std::to_string(step) + " : i64}";
    }
  } else {
    return r;
  }
  v.name = fresh();
  unit += "  " + v.name + " = " + op + " " + r.name + " " + attrs + " : (" +
          r.type() + ") -> " + v.type() + "\n";
  return v;
}

/// An in-place write of a ref or a view of it: kt.copy_ / add_ / sub_ /
/// mul_ of a value that broadcasts into it (the target's own contents when
/// none can be had: x.add_(x)), kt.fill_ of a rank-0 value, kt.store of a
/// value of its shape.
bool Generator::refWrite() {
  Ref *rp = pickRef();
  size_t ri = rp - refs.data();
  std::string unit;
  Ref t = target(*rp, unit);
  unsigned op = in.pick(6);
  if (t.dt == DType::I1 && op >= 1 && op <= 3)
    op = 0;
  Val like;
  like.dt = t.dt;
  like.shape = t.shape;
  like.dyn = t.dyn;
  const Val *src = nullptr;
  if (op == 5) {
    src = sameShape(t.dt, t.shape);
    if (!src)
      op = 0;
  } else if (op == 4) {
    src = pickVal([&](const Val &v) { return v.dt == t.dt && v.rank() == 0; });
    if (!src && canAddArg())
      src = &newArg(t.dt, {}, {});
    if (!src)
      op = 0;
  }
  if (op <= 3) {
    auto into = [&](const Val &v) {
      if (v.dt != t.dt || v.rank() > t.rank())
        return false;
      int64_t off = t.rank() - v.rank();
      for (int64_t i = 0; i < v.rank(); ++i)
        if (v.shape[i] != 1 && v.shape[i] != t.shape[off + i])
          return false;
      return true;
    };
    if (canAddArg() && in.chance(1, 3))
      src = &argLike(like, t.dt);
    else if (!(src = pickVal(into)) && canAddArg())
      src = &argLike(like, t.dt);
  }
  Val s;
  if (src) {
    s = *src;
  } else {
    // x.add_(x): the target's own contents.
    s = like;
    s.name = fresh();
    s.finite = refs[ri].finite;
    s.precision = refs[ri].precision;
    unit += "  " + s.name + " = kt.load " + t.name + " : (" + t.type() +
            ") -> " + s.type() + "\n";
    vals.push_back(s);
  }
  static const char *const ops[] = {"kt.copy_", "kt.add_", "kt.sub_",
                                    "kt.mul_", "kt.fill_"};
  if (op == 5)
    unit += "  kt.store " + s.name + ", " + t.name + " : (" + s.type() +
            ", " + t.type() + ") -> ()\n";
  else
    unit += std::string("  ") + ops[op] + " " + t.name + ", " + s.name +
            " : (" + t.type() + ", " + s.type() + ") -> ()\n";
  units.push_back(unit);
  ++numOps;
  Ref &r = refs[ri];
  r.finite = r.finite && s.finite;
  if (isFloat(r.dt) && tolerance(s.precision) > tolerance(r.precision))
    r.precision = s.precision;
  return true;
}

/// kt.load of a ref or a view of it (after writes: a write then a read).
bool Generator::refLoad() {
  if (refs.empty())
    return false;
  const Ref &r = refs[in.pick(refs.size())];
  std::string unit;
  Ref t = target(r, unit);
  Val l;
  l.name = fresh();
  l.dt = t.dt;
  l.shape = t.shape;
  l.dyn = t.dyn;
  l.finite = r.finite;
  l.precision = r.precision;
  unit += "  " + l.name + " = kt.load " + t.name + " : (" + t.type() +
          ") -> " + l.type() + "\n";
  units.push_back(unit);
  vals.push_back(std::move(l));
  return true;
}

namespace {
/// Calls `f` on each SSA name in `text` (`%x`, `%v3#1`) and writes what it
/// returns instead.
std::string renameNames(llvm::StringRef text,
                        llvm::function_ref<std::string(llvm::StringRef)> f) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '%') {
      out += text[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && (isalnum(text[j]) || text[j] == '_'))
      ++j;
    if (j + 1 < text.size() && text[j] == '#' && isdigit(text[j + 1])) {
      ++j;
      while (j < text.size() && isdigit(text[j]))
        ++j;
    }
    out += f(text.slice(i, j));
    i = j;
  }
  return out;
}
} // namespace

/// Version 3's kg program: version 2's ops, then more of them mixed with
/// ref writes and loads, split into 1-3 graphs with graph breaks between
/// them; guards on most arguments.
GeneratedProgram Generator::kgProgram(ArrayRef<Step> steps) {
  refs.reserve(4);
  refWrite();
  unsigned more = 1 + in.pick(std::max(1u, opts.maxOps));
  unsigned wanted = numOps + more;
  for (unsigned tries = 0; numOps < wanted && tries < 4 * more; ++tries) {
    unsigned k = in.pick(steps.size() + 5);
    if (k < steps.size())
      (this->*steps[k])();
    else if (k < steps.size() + 3)
      refWrite();
    else
      refLoad();
  }
  SmallVector<const Val *> results = {&vals.back()};
  unsigned extra = in.pick(3);
  for (unsigned i = 0; i < extra; ++i)
    results.push_back(&vals[in.pick(vals.size())]);

  std::map<std::string, std::string> typeOf;
  for (const Val &v : vals)
    typeOf[v.name] = v.type();
  for (const Ref &r : refs)
    typeOf[r.name] = r.type();
  // Outside the op that defines it, `%v3#1` is a graph result `%v3_1`.
  auto outer = [](llvm::StringRef n) {
    std::string s = n.str();
    std::replace(s.begin(), s.end(), '#', '_');
    return s;
  };

  struct Unit {
    std::string text;
    std::vector<std::string> defs, uses;
  };
  std::vector<Unit> us;
  for (const std::string &text : units) {
    Unit u{text, {}, {}};
    SmallVector<llvm::StringRef> lines;
    llvm::StringRef(text).split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines) {
      line = line.trim();
      auto [lhs, rhs] = line.split(" = ");
      if (rhs.empty()) {
        rhs = line;
      } else {
        auto [base, count] = lhs.split(':');
        unsigned k = 0;
        if (!count.empty() && !count.getAsInteger(10, k))
          for (unsigned i = 0; i < k; ++i)
            u.defs.push_back(base.str() + "#" + std::to_string(i));
        else
          u.defs.push_back(lhs.str());
      }
      renameNames(rhs, [&](llvm::StringRef n) {
        if (!llvm::is_contained(u.defs, n.str()) &&
            !llvm::is_contained(u.uses, n.str()))
          u.uses.push_back(n.str());
        return n.str();
      });
    }
    us.push_back(std::move(u));
  }

  // Graphs: 1-3 runs of units; after each but the last, maybe a break whose
  // host call gets up to two values computed so far.
  size_t n = us.size();
  unsigned numGraphs = std::min<unsigned>(n, 1 + in.pick(3));
  SmallVector<size_t> cuts = {0, n};
  for (unsigned g = 1; g < numGraphs; ++g)
    cuts.push_back(1 + in.pick(n - 1));
  llvm::sort(cuts);
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  numGraphs = cuts.size() - 1;
  std::vector<std::vector<std::string>> breakUses(numGraphs);
  std::vector<std::string> available;
  for (const Val &v : vals)
    if (v.isArg)
      available.push_back(v.name);
  for (unsigned g = 0; g + 1 < numGraphs; ++g) {
    for (size_t i = cuts[g]; i < cuts[g + 1]; ++i)
      for (const std::string &d : us[i].defs)
        if (typeOf.count(d) && typeOf[d].rfind("tensor<", 0) == 0)
          available.push_back(d);
    if (!in.chance(1, 2))
      continue;
    // Entry 0 marks the break; then the host call's operands.
    std::vector<std::string> &b = breakUses[g];
    b.push_back("<break>");
    unsigned k = in.pick(3);
    for (unsigned i = 0; i < k && !available.empty(); ++i) {
      const std::string &x = available[in.pick(available.size())];
      if (!llvm::is_contained(b, x))
        b.push_back(x);
    }
  }

  GeneratedProgram p;
  p.isProgram = true;
  p.numOps = numOps;
  std::string sig = "kg.program @main(", guards;
  unsigned numSyms = 0;
  auto addArg = [&](const std::string &name, const std::string &type,
                    DType dt, ArrayRef<int64_t> shape, ArrayRef<bool> dyn) {
    sig += (p.args.empty() ? "" : ", ") + name + ": " + type;
    p.hasZeroDim |= llvm::is_contained(shape, 0);
    if (!in.chance(3, 4))
      return;
    std::string dims;
    for (auto [i, d] : llvm::enumerate(shape))
      dims += (i ? ", " : "") + (dyn[i] ? "\"s" + std::to_string(numSyms++) +
                                               "\""
                                         : std::to_string(d));
    guards += "  kg.guard_tensor " + name + " {dtype = " + elemName(dt) +
              ", shape = [" + dims + "]} : " + type + "\n";
  };
  for (const Val &v : vals)
    if (v.isArg) {
      addArg(v.name, v.type(), v.dt, v.shape, v.dyn);
      p.args.push_back({v.dt, v.shape, v.indexBound});
      p.args.back().type = v.type();
    }
  for (const Ref &r : refs) {
    addArg(r.name, r.type(), r.dt, r.shape, r.dyn);
    GeneratedArg a{r.dt, r.shape, 0};
    a.isRef = true;
    a.type = r.type();
    a.tolerance = isFloat(r.dt) ? std::max(1.0, tolerance(r.precision) /
                                                    tolerance(r.dt))
                                : 1.0;
    p.args.push_back(std::move(a));
  }

  std::string text = guards;
  for (unsigned g = 0; g < numGraphs; ++g) {
    std::set<std::string> defined, later;
    for (size_t i = cuts[g]; i < cuts[g + 1]; ++i)
      defined.insert(us[i].defs.begin(), us[i].defs.end());
    for (size_t i = cuts[g + 1]; i < n; ++i)
      later.insert(us[i].uses.begin(), us[i].uses.end());
    for (unsigned h = g; h < numGraphs; ++h)
      later.insert(breakUses[h].begin(), breakUses[h].end());
    for (const Val *r : results)
      later.insert(r->name);
    std::vector<std::string> operands, yields;
    std::string lines;
    for (size_t i = cuts[g]; i < cuts[g + 1]; ++i) {
      for (const std::string &u : us[i].uses)
        if (!defined.count(u) && !llvm::is_contained(operands, u))
          operands.push_back(u);
      for (const std::string &d : us[i].defs)
        if (later.count(d))
          yields.push_back(d);
      std::string t = renameNames(us[i].text, [&](llvm::StringRef x) {
        // (`%v6` of `%v6:3 = ...` defines `%v6#0` ...)
        return defined.count(x.str()) || defined.count(x.str() + "#0")
                   ? x.str()
                   : outer(x) + "_in";
      });
      SmallVector<llvm::StringRef> ls;
      llvm::StringRef(t).split(ls, '\n', -1, false);
      for (llvm::StringRef l : ls)
        lines += "  " + l.str() + "\n";
    }
    std::string opList, opTypes, args, resNames, resTypes, yieldList;
    for (auto [i, o] : llvm::enumerate(operands)) {
      opList += (i ? ", " : "") + outer(o);
      opTypes += (i ? ", " : "") + typeOf[o];
      args += (i ? ", " : "") + outer(o) + "_in: " + typeOf[o];
    }
    for (auto [i, y] : llvm::enumerate(yields)) {
      resNames += (i ? ", " : "") + outer(y);
      resTypes += (i ? ", " : "") + typeOf[y];
      yieldList += (i ? ", " : "") + y;
    }
    text += "  " + (yields.empty() ? std::string() : resNames + " = ") +
            "kg.graph @main_g" + std::to_string(g) + "(" + opList + ") : (" +
            opTypes + ") -> (" + resTypes + ") {\n  ^bb0" +
            (args.empty() ? std::string() : "(" + args + ")") + ":\n" +
            lines + "    kg.yield" +
            (yields.empty() ? std::string()
                            : " " + yieldList + " : " + resTypes) +
            "\n  }\n";
    if (!breakUses[g].empty()) {
      std::string list, types;
      for (size_t i = 1; i < breakUses[g].size(); ++i) {
        list += (i > 1 ? ", " : "") + outer(breakUses[g][i]);
        types += (i > 1 ? ", " : "") + typeOf[breakUses[g][i]];
      }
      text += "  kg.break \"graph_break()\" {\n    kg.host_call @sink(" + list +
              ") : (" + types + ") -> ()\n  }\n";
    }
  }
  std::string resSig, ret, retTypes;
  for (auto [i, v] : llvm::enumerate(results)) {
    resSig += (i ? ", " : "") + v->type();
    ret += (i ? ", " : "") + outer(v->name);
    p.tolerance.push_back(isFloat(v->dt) ? std::max(1.0, tolerance(v->precision) /
                                                            tolerance(v->dt))
                                         : 1.0);
  }
  p.text = sig + ") -> " + (results.size() > 1 ? "(" + resSig + ")" : resSig) +
           " {\n" + text + "  kg.return " + ret + " : " + resSig + "\n}\n";
  return p;
}

} // namespace

GeneratedProgram kiln::testing::generateProgram(llvm::ArrayRef<uint8_t> bytes,
                                                const GeneratorOptions &options) {
  ByteSource in(bytes);
  Generator g(in, options);
  return g.run();
}

llvm::Expected<SmallVector<interp::Tensor>>
kiln::testing::makeInputs(const GeneratedProgram &program, uint64_t seed) {
  SplitMix64 rng{seed};
  SmallVector<interp::Tensor> inputs;
  for (const GeneratedArg &a : program.args) {
    llvm::Expected<interp::Tensor> t = interp::Tensor::create(a.dtype, a.shape);
    if (!t)
      return t.takeError();
    for (int64_t i = 0; i < t->numel(); ++i) {
      if (a.indexBound > 0)
        t->setI(i, int64_t(rng.next() % uint64_t(a.indexBound)));
      else if (a.dtype == DType::I1)
        t->setI(i, rng.next() & 1);
      else if (isFloat(a.dtype))
        t->setF(i, rng.normal());
      else if (a.dtype == DType::U8)
        t->setI(i, int64_t(rng.next() % 9));
      else
        t->setI(i, int64_t(rng.next() % 9) - 4);
    }
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

bool kiln::testing::sameTensor(const interp::Tensor &a, const interp::Tensor &b,
                               std::string &why, double scale) {
  llvm::raw_string_ostream os(why);
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    os << interp::tensorTypeString(a.dtype(), a.shape()) << " vs "
       << interp::tensorTypeString(b.dtype(), b.shape());
    return false;
  }
  double rtol = 0, atol = 0;
  switch (a.dtype()) {
  case DType::F64: rtol = atol = 1e-9; break;
  case DType::F32: rtol = atol = 1e-4; break;
  case DType::F16:
  case DType::BF16: rtol = atol = 1e-2; break;
  default: break;
  }
  rtol *= scale;
  atol *= scale;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!a.isFloat()) {
      if (a.getI(i) != b.getI(i)) {
        os << "element " << i << ": " << a.getI(i) << " vs " << b.getI(i);
        return false;
      }
      continue;
    }
    double x = a.getF(i), y = b.getF(i);
    bool ok;
    if (std::isnan(x) || std::isnan(y))
      ok = std::isnan(x) && std::isnan(y);
    else if (std::isinf(x) || std::isinf(y))
      ok = x == y;
    else
      ok = std::fabs(x - y) <= atol + rtol * std::max(std::fabs(x), std::fabs(y));
    if (!ok) {
      os << "element " << i << ": " << x << " vs " << y;
      return false;
    }
  }
  return true;
}
