//===- Tensor.cpp - Host tensors of the reference interpreter -------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace mlir;

namespace kiln::interp {

size_t dtypeSize(DType dt) {
  switch (dt) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I1:
  case DType::I8:
  case DType::U8:
    return 1;
  case DType::I16:
    return 2;
  }
  llvm_unreachable("unknown dtype");
}

int64_t intDTypeMin(DType dt) {
  switch (dt) {
  case DType::I64:
    return std::numeric_limits<int64_t>::min();
  case DType::I32:
    return std::numeric_limits<int32_t>::min();
  case DType::I16:
    return std::numeric_limits<int16_t>::min();
  case DType::I8:
    return std::numeric_limits<int8_t>::min();
  default:
    return 0;
  }
}

int64_t intDTypeMax(DType dt) {
  switch (dt) {
  case DType::I64:
    return std::numeric_limits<int64_t>::max();
  case DType::I32:
    return std::numeric_limits<int32_t>::max();
  case DType::I16:
    return std::numeric_limits<int16_t>::max();
  case DType::I8:
    return std::numeric_limits<int8_t>::max();
  case DType::U8:
    return std::numeric_limits<uint8_t>::max();
  default:
    return 1;
  }
}

bool isFloatDType(DType dt) {
  return dt == DType::F32 || dt == DType::F64 || dt == DType::F16 ||
         dt == DType::BF16;
}

llvm::StringRef dtypeName(DType dt) {
  switch (dt) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "ui8";
  case DType::I16:
    return "i16";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> dtypeFromType(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isIndex())
    return DType::I64;
  if (type.isSignlessInteger(64))
    return DType::I64;
  if (type.isSignlessInteger(32))
    return DType::I32;
  if (type.isSignlessInteger(16))
    return DType::I16;
  if (type.isSignlessInteger(8))
    return DType::I8;
  if (type.isUnsignedInteger(8))
    return DType::U8;
  if (type.isSignlessInteger(1))
    return DType::I1;
  return std::nullopt;
}

Type dtypeToType(DType dt, MLIRContext *ctx) {
  switch (dt) {
  case DType::F32:
    return Float32Type::get(ctx);
  case DType::F64:
    return Float64Type::get(ctx);
  case DType::F16:
    return Float16Type::get(ctx);
  case DType::BF16:
    return BFloat16Type::get(ctx);
  case DType::I64:
    return IntegerType::get(ctx, 64);
  case DType::I32:
    return IntegerType::get(ctx, 32);
  case DType::I1:
    return IntegerType::get(ctx, 1);
  case DType::I8:
    return IntegerType::get(ctx, 8);
  case DType::U8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case DType::I16:
    return IntegerType::get(ctx, 16);
  }
  llvm_unreachable("unknown dtype");
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while (!(mant & 0x400));
      mant &= 0x3ff;
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000) // NaN: keep it quiet
    return sign | 0x7e00;
  if (absx >= 0x477ff000) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00;
  if (absx < 0x38800000) { // below the smallest normal half (2^-14)
    // Subnormal or zero: value = absx as float * 2^24 rounded to integer.
    float af;
    std::memcpy(&af, &absx, 4);
    float scaled = af * 16777216.0f; // 2^24; exact (power of two)
    // Round to nearest even.
    float r = std::nearbyint(scaled);
    return sign | (uint16_t)r;
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffff;
  uint32_t half = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is correct
  return sign | (uint16_t)half;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40; // quiet NaN
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return x >> 16;
}

double roundToDType(double v, DType dt) {
  switch (dt) {
  case DType::F32:
    return (float)v;
  case DType::F16:
    return halfToFloat(floatToHalf((float)v));
  case DType::BF16:
    return bf16ToFloat(floatToBF16((float)v));
  default:
    return v;
  }
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == 0)
      return 0;
    n *= d;
  }
  return n;
}

bool isRowMajor(llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> strides) {
  int64_t expect = 1;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expect)
      return false;
    expect *= shape[d];
  }
  return true;
}

llvm::SmallVector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::optional<TensorSize> tensorSize(llvm::ArrayRef<int64_t> shape,
                                     size_t elementBytes) {
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
  }
  TensorSize size;
  if (empty)
    return size;
  int64_t n = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(n, d, n))
      return std::nullopt;
  int64_t bytes;
  if (llvm::MulOverflow(n, (int64_t)elementBytes, bytes))
    return std::nullopt;
  size.elements = n;
  size.bytes = bytes;
  return size;
}

std::string tensorTypeString(DType dt, llvm::ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + dtypeName(dt).str() + ">";
}

std::string byteCountString(uint64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << bytes << " bytes";
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  if (unit >= 0)
    os << " (" << llvm::format("%.1f", v) << " " << units[unit] << ")";
  return s;
}

std::shared_ptr<TensorStorage> TensorStorage::allocate(size_t bytes) {
  void *p = std::calloc(std::max<size_t>(bytes, 1), 1);
  if (!p)
    return nullptr;
  std::shared_ptr<TensorStorage> s(new TensorStorage());
  s->bytes = static_cast<uint8_t *>(p);
  s->owned = true;
  return s;
}

TensorStorage::~TensorStorage() {
  if (owned)
    std::free(bytes);
  else if (release)
    release();
}

static llvm::Error allocError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<Tensor> Tensor::create(DType dt,
                                      llvm::ArrayRef<int64_t> shape) {
  std::optional<TensorSize> size = tensorSize(shape, dtypeSize(dt));
  if (!size) {
    for (int64_t d : shape)
      if (d < 0)
        return allocError(tensorTypeString(dt, shape) + " has a negative dim");
    return allocError(tensorTypeString(dt, shape) +
                      " has more than 2^63 - 1 bytes");
  }
  std::shared_ptr<TensorStorage> storage =
      TensorStorage::allocate((size_t)size->bytes);
  if (!storage)
    return allocError("cannot allocate " + byteCountString(size->bytes) +
                      " for " + tensorTypeString(dt, shape) +
                      ": out of memory");
  Tensor t;
  t.dt = dt;
  t.dims.assign(shape.begin(), shape.end());
  t.count = size->elements;
  t.buffer = std::move(storage);
  return t;
}

Tensor Tensor::adopt(DType dt, llvm::ArrayRef<int64_t> shape, void *data,
                     std::function<void()> release) {
  Tensor t;
  t.dt = dt;
  t.dims.assign(shape.begin(), shape.end());
  t.count = numElements(shape);
  t.buffer = std::make_shared<TensorStorage>(data, std::move(release));
  return t;
}

/// A rank-0 tensor: one element, which only a process without any memory
/// left cannot allocate (reported as LLVM reports a failed small allocation).
static Tensor scalarTensor(DType dt) {
  llvm::Expected<Tensor> t = Tensor::create(dt, {});
  if (!t) {
    llvm::consumeError(t.takeError());
    llvm::report_bad_alloc_error("cannot allocate a scalar tensor");
  }
  return std::move(*t);
}

Tensor Tensor::scalar(DType dt, double v) {
  Tensor t = scalarTensor(dt);
  t.setF(0, v);
  return t;
}

Tensor Tensor::scalarInt(DType dt, int64_t v) {
  Tensor t = scalarTensor(dt);
  t.setI(0, v);
  return t;
}

double Tensor::getF(int64_t i) const {
  const uint8_t *p = buffer->data();
  switch (dt) {
  case DType::F32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::F64:
    return reinterpret_cast<const double *>(p)[i];
  case DType::F16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::I64:
    return (double)reinterpret_cast<const int64_t *>(p)[i];
  case DType::I32:
    return reinterpret_cast<const int32_t *>(p)[i];
  case DType::I1:
    return p[i] ? 1.0 : 0.0;
  case DType::I8:
    return reinterpret_cast<const int8_t *>(p)[i];
  case DType::U8:
    return p[i];
  case DType::I16:
    return reinterpret_cast<const int16_t *>(p)[i];
  }
  llvm_unreachable("unknown dtype");
}

static int64_t truncToInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return (int64_t)v;
}

int64_t Tensor::getI(int64_t i) const {
  const uint8_t *p = buffer->data();
  switch (dt) {
  case DType::I64:
    return reinterpret_cast<const int64_t *>(p)[i];
  case DType::I32:
    return reinterpret_cast<const int32_t *>(p)[i];
  case DType::I1:
    return p[i] ? 1 : 0;
  case DType::I8:
    return reinterpret_cast<const int8_t *>(p)[i];
  case DType::U8:
    return p[i];
  case DType::I16:
    return reinterpret_cast<const int16_t *>(p)[i];
  default:
    return truncToInt(getF(i));
  }
}

void Tensor::setF(int64_t i, double v) {
  uint8_t *p = buffer->data();
  switch (dt) {
  case DType::F32:
    reinterpret_cast<float *>(p)[i] = (float)v;
    return;
  case DType::F64:
    reinterpret_cast<double *>(p)[i] = v;
    return;
  case DType::F16:
    reinterpret_cast<uint16_t *>(p)[i] = floatToHalf((float)v);
    return;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(p)[i] = floatToBF16((float)v);
    return;
  case DType::I64:
    reinterpret_cast<int64_t *>(p)[i] = truncToInt(v);
    return;
  case DType::I32:
    reinterpret_cast<int32_t *>(p)[i] = (int32_t)truncToInt(v);
    return;
  case DType::I1:
    p[i] = v != 0.0;
    return;
  case DType::I8:
  case DType::U8:
  case DType::I16:
    // Float to a narrow integer truncates toward zero, then wraps (PyTorch
    // leaves out-of-range values undefined; this is what its CPU kernel
    // gives for values that fit int64).
    setI(i, truncToInt(v));
    return;
  }
}

void Tensor::setI(int64_t i, int64_t v) {
  uint8_t *p = buffer->data();
  switch (dt) {
  case DType::I64:
    reinterpret_cast<int64_t *>(p)[i] = v;
    return;
  case DType::I32:
    reinterpret_cast<int32_t *>(p)[i] = (int32_t)v;
    return;
  case DType::I1:
    p[i] = v != 0;
    return;
  case DType::I8:
  case DType::U8:
    p[i] = (uint8_t)v;
    return;
  case DType::I16:
    reinterpret_cast<uint16_t *>(p)[i] = (uint16_t)v;
    return;
  default:
    setF(i, (double)v);
  }
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out(count);
  for (int64_t i = 0; i < count; ++i)
    out[i] = getF(i);
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out(count);
  for (int64_t i = 0; i < count; ++i)
    out[i] = getI(i);
  return out;
}

Tensor Tensor::makeRef(const Tensor &t) {
  if (t.isRef())
    return t;
  Tensor r = t;
  auto l = std::make_shared<RefLayout>();
  l->strides = contiguousStrides(t.shape());
  r.layout = std::move(l);
  return r;
}

Tensor Tensor::refView(llvm::ArrayRef<int64_t> shape, int64_t offset,
                       llvm::ArrayRef<int64_t> strides) const {
  Tensor r = *this;
  r.dims.assign(shape.begin(), shape.end());
  r.count = numElements(shape);
  auto l = std::make_shared<RefLayout>();
  l->offset = offset;
  l->strides.assign(strides.begin(), strides.end());
  r.layout = std::move(l);
  return r;
}

llvm::Expected<Tensor> Tensor::loadRef() const {
  if (!isRef())
    return *this;
  return clone();
}

Tensor Tensor::rowMajorRefContents() const {
  if (!isRef() || !isRowMajor(dims, layout->strides))
    return Tensor();
  uint8_t *at = buffer->data() + layout->offset * dtypeSize(dt);
  return adopt(dt, dims, at, [keep = buffer] {});
}

llvm::Expected<Tensor> Tensor::clone() const {
  llvm::Expected<Tensor> created = create(dt, dims);
  if (!created)
    return created.takeError();
  Tensor &out = *created;
  if (!isRef()) {
    if (byteSize())
      std::memcpy(out.mutableData(), data(), byteSize());
    return created;
  }
  size_t es = dtypeSize(dt);
  const uint8_t *src = buffer->data();
  uint8_t *dst = static_cast<uint8_t *>(out.mutableData());
  int64_t rank = dims.size();
  if (count == 0)
    return created;
  // A row-major ref (size-1 dims with any stride, any offset): one copy
  // (a compiled graph's copy-in of every ref argument; before, element by
  // element, one 4-byte memcpy each).
  if (isRowMajor(dims, layout->strides)) {
    std::memcpy(dst, src + layout->offset * es, count * es);
    return created;
  }
  llvm::SmallVector<int64_t> idx(rank, 0);
  int64_t off = layout->offset;
  for (int64_t o = 0; o < count; ++o) {
    std::memcpy(dst + o * es, src + off * es, es);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) {
        off += layout->strides[d];
        break;
      }
      off -= layout->strides[d] * (dims[d] - 1);
      idx[d] = 0;
    }
  }
  return created;
}

Tensor Tensor::reshaped(llvm::ArrayRef<int64_t> newShape) const {
  Tensor t = *this;
  t.dims.assign(newShape.begin(), newShape.end());
  assert(numElements(newShape) == count && "reshape changes element count");
  return t;
}

llvm::Expected<Tensor> Tensor::convertTo(DType to) const {
  llvm::Expected<Tensor> created = create(to, dims);
  if (!created)
    return created.takeError();
  Tensor &out = *created;
  if (!isFloatDType(dt) && isFloatDType(to) && to != DType::F64) {
    // Integer to f32/f16/bf16 rounds the int64 to float once, as PyTorch's
    // static_cast<float> does; through double it could round twice
    // (2^62 + 2^38 + 1 would give 2^62 instead of 2^62 + 2^39).
    for (int64_t i = 0; i < count; ++i)
      out.setF(i, (double)(float)getI(i));
  } else if (isFloatDType(to) || isFloatDType(dt)) {
    for (int64_t i = 0; i < count; ++i)
      out.setF(i, getF(i));
  } else {
    for (int64_t i = 0; i < count; ++i)
      out.setI(i, getI(i));
  }
  return created;
}

} // namespace kiln::interp
