//===- NPY.cpp - NumPy .npy files -----------------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/NPY.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;
using kiln::interp::DType;
using kiln::interp::Tensor;

namespace kiln {

static Error npyError(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

/// Finds the value text of `'key':` in the header dict.
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  std::string pat = ("'" + key + "'").str();
  size_t pos = header.find(pat);
  if (pos == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(pos + pat.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

Expected<Tensor> parseNPY(StringRef bytes) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return npyError("not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = (uint8_t)bytes[8] | ((uint8_t)bytes[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError("truncated .npy header");
    headerLen = (uint32_t)(uint8_t)bytes[8] | ((uint32_t)(uint8_t)bytes[9] << 8) |
                ((uint32_t)(uint8_t)bytes[10] << 16) |
                ((uint32_t)(uint8_t)bytes[11] << 24);
    offset = 12;
  } else {
    return npyError("unsupported .npy format version " + Twine((int)major));
  }
  if (bytes.size() < offset + headerLen)
    return npyError("truncated .npy header");
  StringRef header = bytes.substr(offset, headerLen);

  std::optional<StringRef> descr = headerValue(header, "descr");
  std::optional<StringRef> fortran = headerValue(header, "fortran_order");
  std::optional<StringRef> shapeText = headerValue(header, "shape");
  if (!descr || !fortran || !shapeText)
    return npyError("malformed .npy header: " + header.trim());
  if (!descr->consume_front("'"))
    return npyError("malformed .npy header: descr is not a string");
  StringRef d = descr->take_until([](char c) { return c == '\''; });
  if (fortran->starts_with("True"))
    return npyError("Fortran-order arrays are not supported (use C order, "
                    "e.g. numpy.ascontiguousarray)");
  if (!fortran->starts_with("False"))
    return npyError("malformed .npy header: fortran_order");

  DType dt;
  if (d == "<f4")
    dt = DType::F32;
  else if (d == "<f8")
    dt = DType::F64;
  else if (d == "<f2")
    dt = DType::F16;
  else if (d == "<i8")
    dt = DType::I64;
  else if (d == "<i4")
    dt = DType::I32;
  else if (d == "|b1")
    dt = DType::I1;
  else if (d.starts_with(">"))
    return npyError("unsupported dtype '" + d + "' (big endian)");
  else
    return npyError("unsupported dtype '" + d +
                    "' (expected <f4, <f8, <f2, <i8, <i4 or |b1)");

  if (!shapeText->consume_front("("))
    return npyError("malformed .npy header: shape");
  StringRef dims = shapeText->take_until([](char c) { return c == ')'; });
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t v;
    if (p.getAsInteger(10, v) || v < 0)
      return npyError("malformed .npy header: shape entry '" + p + "'");
    shape.push_back(v);
  }

  Tensor t(dt, shape);
  size_t dataOffset = offset + headerLen;
  size_t need = t.byteSize();
  if (bytes.size() - dataOffset < need)
    return npyError("truncated .npy data: expected " + Twine(need) +
                    " bytes, found " + Twine(bytes.size() - dataOffset));
  if (bytes.size() - dataOffset > need)
    return npyError("trailing bytes after .npy data: expected " + Twine(need) +
                    ", found " + Twine(bytes.size() - dataOffset));
  if (need)
    std::memcpy(t.mutableData(), bytes.data() + dataOffset, need);
  if (dt == DType::I1)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.ptr<uint8_t>()[i] > 1)
        return npyError("invalid bool value in .npy data");
  return t;
}

Expected<Tensor> readNPY(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf =
      MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return npyError("cannot read '" + path + "': " + buf.getError().message());
  Expected<Tensor> t = parseNPY((*buf)->getBuffer());
  if (!t)
    return npyError("'" + path + "': " + toString(t.takeError()));
  return t;
}

std::string serializeNPY(const Tensor &in) {
  Tensor t = in.dtype() == DType::BF16 ? in.convertTo(DType::F32) : in;
  StringRef descr;
  switch (t.dtype()) {
  case DType::F32:
    descr = "<f4";
    break;
  case DType::F64:
    descr = "<f8";
    break;
  case DType::F16:
    descr = "<f2";
    break;
  case DType::I64:
    descr = "<i8";
    break;
  case DType::I32:
    descr = "<i4";
    break;
  case DType::I1:
    descr = "|b1";
    break;
  case DType::BF16:
    llvm_unreachable("converted above");
  }
  std::string shape = "(";
  for (int64_t i = 0; i < t.rank(); ++i) {
    shape += std::to_string(t.dim(i));
    if (t.rank() == 1)
      shape += ","; // "(4,)"
    else if (i + 1 < t.rank())
      shape += ", ";
  }
  shape += ")";
  std::string header =
      ("{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape)
          .str();
  header += ", }";
  // Pad with spaces so the data starts at a multiple of 64; end with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += (char)(header.size() & 0xff);
  out += (char)(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(t.data()), t.byteSize());
  return out;
}

Error writeNPY(StringRef path, const Tensor &t) {
  std::string bytes = serializeNPY(t);
  SmallString<256> tmp;
  int fd;
  SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, tmp))
    return npyError("cannot create a file next to '" + path + "': " + ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (os.has_error()) {
      std::string msg = os.error().message();
      os.clear_error();
      sys::fs::remove(tmp);
      return npyError("cannot write '" + path + "': " + msg);
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return npyError("cannot write '" + path + "': " + ec.message());
  }
  return Error::success();
}

} // namespace kiln
