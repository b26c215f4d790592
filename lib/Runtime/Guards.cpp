//===- Guards.cpp - Compiled guard check lists ----------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Guards.h"
#include "kiln/Runtime/Aliasing.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Dialect/KG/IR/KGOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using kiln::interp::DType;

namespace kiln::runtime {

int64_t ArgView::stride(unsigned d) const {
  if (!strides.empty())
    return strides[d];
  int64_t s = 1;
  for (unsigned i = d + 1; i < shape.size(); ++i)
    s *= shape[i];
  return s;
}

constexpr unsigned kMaxSymbols = 64;

/// String equality without a libc memcmp call: device and backend names are
/// a few bytes, compared on every call.
static inline bool shortEquals(StringRef a, StringRef b) {
  if (a.size() != b.size())
    return false;
  const char *p = a.data(), *q = b.data();
  for (size_t i = 0, n = a.size(); i < n; ++i)
    if (p[i] != q[i])
      return false;
  return true;
}

CompiledGuards::CompiledGuards() = default;
CompiledGuards::CompiledGuards(CompiledGuards &&) = default;
CompiledGuards &CompiledGuards::operator=(CompiledGuards &&) = default;
CompiledGuards::~CompiledGuards() = default;

FailureOr<CompiledGuards> CompiledGuards::compile(kg::ProgramOp program,
                                                  ArrayRef<ArgView> args,
                                                  std::string &error) {
  using K = GuardCheck::Kind;
  CompiledGuards g;
  g.numArgs = program.getArgumentTypes().size();
  for (unsigned i = 0; i < g.numArgs; ++i) {
    g.argNames.push_back(program.getArgSourceName(i));
    g.isRef.push_back(isa<kt::RefType>(program.getArgumentTypes()[i]));
    g.numRefs += g.isRef.back();
  }
  // Aliasing of ref arguments: the entry is compiled for how this call's
  // refs share memory.
  if (g.numRefs >= 2) {
    if (args.size() != g.numArgs) {
      error = "aliasing guard needs the call's arguments";
      return failure();
    }
    g.aliasing = std::make_unique<ArgAliasing>();
    if (failed(analyzeAliasing(args, g.isRef, g.argNames, *g.aliasing, error)))
      return failure();
  }
  llvm::StringMap<unsigned> symbolSlot;
  auto slotOf = [&](StringRef name, bool &isNew) {
    auto [it, inserted] = symbolSlot.try_emplace(name, g.symbolNames.size());
    if (inserted)
      g.symbolNames.push_back(name.str());
    isNew = inserted;
    return it->second;
  };

  // Which dims of each argument a guard_tensor already covers.
  llvm::DenseMap<unsigned, kg::GuardTensorOp> tensorGuards;
  for (auto guard : program.getBody().front().getOps<kg::GuardTensorOp>())
    tensorGuards[cast<BlockArgument>(guard.getInput()).getArgNumber()] = guard;

  // Argument types: what the compiled code accepts.
  for (auto [i, type] : llvm::enumerate(program.getArgumentTypes())) {
    // A ref argument (a mutable tensor) is guarded like a tensor.
    RankedTensorType tt = kg::getGuardedTensorType(type);
    if (!tt) {
      std::optional<DType> dt = interp::dtypeFromType(type);
      if (!dt) {
        error = "unsupported argument type";
        return failure();
      }
      g.checks.push_back({K::IsScalar, 0, false, false, (uint16_t)i, 0,
                          (int64_t)*dt});
      continue;
    }
    std::optional<DType> dt = interp::dtypeFromType(tt.getElementType());
    if (!dt) {
      error = "unsupported argument element type";
      return failure();
    }
    g.checks.push_back({K::IsTensor, 0, false, false, (uint16_t)i});
    g.checks.push_back({K::DType, 0, false, false, (uint16_t)i, 0, (int64_t)*dt});
    g.checks.push_back({K::Rank, 0, false, false, (uint16_t)i, 0, tt.getRank()});
    auto guard = tensorGuards.lookup(i);
    for (int64_t d = 0; d < tt.getRank(); ++d) {
      int64_t size = tt.getDimSize(d);
      Attribute entry = guard ? guard.getShape()[d] : Attribute();
      if (auto sym = dyn_cast_or_null<StringAttr>(entry)) {
        bool isNew;
        unsigned slot = slotOf(sym.getValue(), isNew);
        if (slot >= kMaxSymbols) {
          error = "too many symbolic dims (at most 64)";
          return failure();
        }
        g.checks.push_back({isNew ? K::DimBind : K::DimSame, 0, false, false,
                            (uint16_t)i, (int32_t)d, (int64_t)slot});
        continue;
      }
      if (auto v = dyn_cast_or_null<IntegerAttr>(entry))
        size = v.getInt();
      if (!ShapedType::isDynamic(size))
        g.checks.push_back({K::DimEq, 0, false, false, (uint16_t)i,
                            (int32_t)d, size});
    }
    if (!guard)
      continue;
    if (auto strides = guard.getStrides())
      for (auto [d, s] : llvm::enumerate(*strides))
        g.checks.push_back({K::Stride, 0, false, false, (uint16_t)i,
                            (int32_t)d, cast<IntegerAttr>(s).getInt()});
    g.checks.push_back({K::Device, 0, false, false, (uint16_t)i, 0,
                        (int64_t)g.devices.size()});
    g.devices.push_back(guard.getDevice().str());
    g.checks.push_back({K::RequiresGrad, 0, false, false, (uint16_t)i, 0,
                        guard.getRequiresGrad() ? 1 : 0});
  }

  for (Operation &op : program.getBody().front()) {
    if (auto v = dyn_cast<kg::GuardValueOp>(op)) {
      unsigned arg = cast<BlockArgument>(v.getInput()).getArgNumber();
      if (auto f = dyn_cast<FloatAttr>(v.getValue())) {
        GuardCheck c{K::FloatValue, 0, false, false, (uint16_t)arg};
        c.fvalue = f.getValueAsDouble();
        g.checks.push_back(c);
      } else if (auto n = dyn_cast<IntegerAttr>(v.getValue())) {
        int64_t value = n.getType().isInteger(1) ? (int64_t)n.getValue().getZExtValue()
                                                 : n.getValue().getSExtValue();
        g.checks.push_back({K::IntValue, 0, false, false, (uint16_t)arg, 0, value});
      } else {
        error = "unsupported guard_value attribute";
        return failure();
      }
    } else if (auto id = dyn_cast<kg::GuardIdentityOp>(op)) {
      unsigned arg = cast<BlockArgument>(id.getInput()).getArgNumber();
      if (arg >= args.size()) {
        error = "identity guard needs the call's arguments";
        return failure();
      }
      g.checks.push_back({K::Identity, 0, false, false, (uint16_t)arg, 0,
                          (int64_t)g.pointers.size()});
      g.pointers.push_back(args[arg].data);
    } else if (auto rel = dyn_cast<kg::GuardShapeRelationOp>(op)) {
      std::string parseError;
      std::optional<kg::ShapeRelation> r =
          kg::parseShapeRelation(rel.getRelation(), parseError);
      if (!r) {
        error = parseError;
        return failure();
      }
      GuardCheck c{K::Relation, (uint8_t)r->pred};
      auto term = [&](const kg::ShapeRelation::Term &t, bool &isSym,
                      int64_t &out) -> bool {
        if (auto *name = std::get_if<std::string>(&t)) {
          auto it = symbolSlot.find(*name);
          if (it == symbolSlot.end())
            return false;
          isSym = true;
          out = it->second;
        } else {
          out = std::get<int64_t>(t);
        }
        return true;
      };
      if (!term(r->lhs, c.lhsIsSym, c.value) ||
          !term(r->rhs, c.rhsIsSym, c.value2)) {
        error = "shape relation '" + rel.getRelation().str() +
                "' names a symbol no guard defines";
        return failure();
      }
      g.checks.push_back(c);
    } else if (auto b = dyn_cast<kg::GuardBackendOp>(op)) {
      g.backendName = b.getBackend().str();
    }
  }
  return g;
}

int CompiledGuards::firstFailure(ArrayRef<ArgView> args,
                                 int64_t *symbols) const {
  using K = GuardCheck::Kind;
  if (args.size() != numArgs)
    return -2;
  for (size_t i = 0, e = checks.size(); i < e; ++i) {
    const GuardCheck &c = checks[i];
    const ArgView &a = args[c.arg];
    bool ok = true;
    switch (c.kind) {
    case K::IsTensor:
      ok = a.isTensor;
      break;
    case K::IsScalar:
      ok = !a.isTensor && (int64_t)a.dtype == c.value;
      break;
    case K::DType:
      ok = (int64_t)a.dtype == c.value;
      break;
    case K::Rank:
      ok = (int64_t)a.shape.size() == c.value;
      break;
    case K::DimEq:
      ok = a.shape[c.dim] == c.value;
      break;
    case K::DimBind:
      symbols[c.value] = a.shape[c.dim];
      break;
    case K::DimSame:
      ok = a.shape[c.dim] == symbols[c.value];
      break;
    case K::Stride:
      ok = a.stride(c.dim) == c.value;
      break;
    case K::Device:
      ok = shortEquals(a.device, devices[c.value]);
      break;
    case K::RequiresGrad:
      ok = a.requiresGrad == (c.value != 0);
      break;
    case K::Identity:
      ok = a.data == pointers[c.value];
      break;
    case K::IntValue:
      ok = !a.isTensor && a.intValue == c.value;
      break;
    case K::FloatValue:
      ok = !a.isTensor && a.floatValue == c.fvalue;
      break;
    case K::Relation: {
      kg::ShapeRelation rel;
      rel.pred = (kg::ShapeRelation::Pred)c.pred;
      int64_t l = c.lhsIsSym ? symbols[c.value] : c.value;
      int64_t r = c.rhsIsSym ? symbols[c.value2] : c.value2;
      ok = rel.holds(l, r);
      break;
    }
    }
    if (!ok)
      return (int)i;
  }
  if (aliasing) {
    ArgAliasing now;
    std::string error;
    if (failed(analyzeAliasing(args, isRef, argNames, now, error)) ||
        now != *aliasing)
      return -3;
  }
  return -1;
}

bool CompiledGuards::check(ArrayRef<ArgView> args, StringRef backend) const {
  if (!backendName.empty() && !shortEquals(backend, backendName))
    return false;
  int64_t symbols[kMaxSymbols];
  return firstFailure(args, symbols) == -1;
}

std::string CompiledGuards::failureReason(ArrayRef<ArgView> args,
                                          StringRef backend) const {
  using K = GuardCheck::Kind;
  std::string s;
  llvm::raw_string_ostream os(s);
  if (!backendName.empty() && backend != backendName) {
    os << "backend mismatch. expected " << backendName << ", actual "
       << backend;
    return s;
  }
  int64_t symbols[kMaxSymbols];
  int i = firstFailure(args, symbols);
  if (i == -1)
    return s;
  if (i == -2) {
    os << "argument count mismatch. expected " << numArgs << ", actual "
       << args.size();
    return s;
  }
  if (i == -3) {
    ArgAliasing now;
    std::string error;
    if (failed(analyzeAliasing(args, isRef, argNames, now, error)))
      return error;
    return describeAliasingChange(*aliasing, now, argNames);
  }
  const GuardCheck &c = checks[i];
  const ArgView &a = args[c.arg];
  StringRef name = argNames[c.arg];
  auto dtypeName = [](int64_t v) { return interp::dtypeName((DType)v); };
  switch (c.kind) {
  case K::IsTensor:
    os << "'" << name << "' is not a tensor";
    break;
  case K::IsScalar:
    if (a.isTensor)
      os << "'" << name << "' is a tensor, expected a " << dtypeName(c.value)
         << " scalar";
    else
      os << "scalar '" << name << "' type mismatch. expected "
         << dtypeName(c.value) << ", actual " << interp::dtypeName(a.dtype);
    break;
  case K::DType:
    os << "tensor '" << name << "' dtype mismatch. expected "
       << dtypeName(c.value) << ", actual " << interp::dtypeName(a.dtype);
    break;
  case K::Rank:
    os << "tensor '" << name << "' rank mismatch. expected " << c.value
       << ", actual " << a.shape.size();
    break;
  case K::DimEq:
    os << "tensor '" << name << "' size mismatch at index " << c.dim
       << ". expected " << c.value << ", actual " << a.shape[c.dim];
    break;
  case K::DimBind:
    break; // never fails
  case K::DimSame:
    os << "tensor '" << name << "' size mismatch at index " << c.dim
       << ". expected " << symbols[c.value] << " (" << symbolNames[c.value]
       << "), actual " << a.shape[c.dim];
    break;
  case K::Stride:
    os << "tensor '" << name << "' stride mismatch at index " << c.dim
       << ". expected " << c.value << ", actual " << a.stride(c.dim);
    break;
  case K::Device:
    os << "tensor '" << name << "' device mismatch. expected "
       << devices[c.value] << ", actual " << a.device;
    break;
  case K::RequiresGrad:
    os << "tensor '" << name << "' requires_grad mismatch. expected "
       << (c.value ? "True" : "False") << ", actual "
       << (a.requiresGrad ? "True" : "False");
    break;
  case K::Identity:
    os << "tensor '" << name
       << "' is not the tensor the entry was compiled for (marked static)";
    break;
  case K::IntValue:
    os << "'" << name << "' == " << c.value << " failed (actual "
       << a.intValue << ")";
    break;
  case K::FloatValue:
    os << "'" << name << "' == " << llvm::format("%g", c.fvalue)
       << " failed (actual " << llvm::format("%g", a.floatValue) << ")";
    break;
  case K::Relation: {
    auto term = [&](bool isSym, int64_t v) {
      std::string t;
      llvm::raw_string_ostream ts(t);
      if (isSym)
        ts << symbolNames[v] << " (= " << symbols[v] << ")";
      else
        ts << v;
      return t;
    };
    os << "shape relation failed: " << term(c.lhsIsSym, c.value) << " "
       << kg::ShapeRelation::predSpelling((kg::ShapeRelation::Pred)c.pred)
       << " " << term(c.rhsIsSym, c.value2);
    break;
  }
  }
  return s;
}

std::string CompiledGuards::describe() const {
  using K = GuardCheck::Kind;
  std::string s;
  llvm::raw_string_ostream os(s);
  auto dtypeName = [](int64_t v) { return interp::dtypeName((DType)v); };
  os << "len(args) == " << numArgs << "\n";
  for (const GuardCheck &c : checks) {
    StringRef name = c.arg < argNames.size() ? StringRef(argNames[c.arg]) : "?";
    switch (c.kind) {
    case K::IsTensor:
      os << "isinstance(" << name << ", Tensor)";
      break;
    case K::IsScalar:
      os << "isinstance(" << name << ", " << dtypeName(c.value) << " scalar)";
      break;
    case K::DType:
      os << name << ".dtype == " << dtypeName(c.value);
      break;
    case K::Rank:
      os << name << ".dim() == " << c.value;
      break;
    case K::DimEq:
      os << name << ".size(" << c.dim << ") == " << c.value;
      break;
    case K::DimBind:
      os << symbolNames[c.value] << " = " << name << ".size(" << c.dim << ")";
      break;
    case K::DimSame:
      os << name << ".size(" << c.dim << ") == " << symbolNames[c.value];
      break;
    case K::Stride:
      os << name << ".stride(" << c.dim << ") == " << c.value;
      break;
    case K::Device:
      os << name << ".device == " << devices[c.value];
      break;
    case K::RequiresGrad:
      os << name << ".requires_grad == " << (c.value ? "True" : "False");
      break;
    case K::Identity:
      os << "id(" << name << ") == <the tensor compiled for>";
      break;
    case K::IntValue:
      os << name << " == " << c.value;
      break;
    case K::FloatValue:
      os << name << " == " << llvm::format("%g", c.fvalue);
      break;
    case K::Relation: {
      auto term = [&](bool isSym, int64_t v) {
        if (isSym)
          os << symbolNames[v];
        else
          os << v;
      };
      term(c.lhsIsSym, c.value);
      os << " "
         << kg::ShapeRelation::predSpelling((kg::ShapeRelation::Pred)c.pred)
         << " ";
      term(c.rhsIsSym, c.value2);
      break;
    }
    }
    os << "\n";
  }
  if (numRefs > 1)
    os << "ref arguments alias as in the call compiled for\n";
  if (!backendName.empty())
    os << "backend == " << backendName << "\n";
  return s;
}

} // namespace kiln::runtime
