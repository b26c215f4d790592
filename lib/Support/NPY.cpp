//===- NPY.cpp - NumPy .npy files -----------------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/NPY.h"
#include "kiln/Support/OutputFiles.h"

#include "llvm/ADT/ScopeExit.h"
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

namespace {
/// What a .npy header declares.
struct NPYHeader {
  DType dtype;
  SmallVector<int64_t> shape;
  /// Where the data starts, and how many bytes the shape and dtype need.
  size_t dataOffset = 0;
  int64_t dataBytes = 0;
};
} // namespace

/// The length of the preamble (magic, version, header length) and of the
/// header text that follows, from the first bytes of a file (at least 12, or
/// all of a shorter file).
static Error parsePreamble(StringRef bytes, size_t &preamble,
                           size_t &headerLen) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return npyError("not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  if (major == 1) {
    headerLen = (uint8_t)bytes[8] | ((uint8_t)bytes[9] << 8);
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError("truncated .npy header");
    headerLen = (uint32_t)(uint8_t)bytes[8] | ((uint32_t)(uint8_t)bytes[9] << 8) |
                ((uint32_t)(uint8_t)bytes[10] << 16) |
                ((uint32_t)(uint8_t)bytes[11] << 24);
    preamble = 12;
  } else {
    return npyError("unsupported .npy format version " + Twine((int)major));
  }
  return Error::success();
}

/// Parses the header dict `header` (the text after the preamble).
static Expected<NPYHeader> parseHeaderDict(StringRef header) {
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

  NPYHeader h;
  if (d == "<f4")
    h.dtype = DType::F32;
  else if (d == "<f8")
    h.dtype = DType::F64;
  else if (d == "<f2")
    h.dtype = DType::F16;
  else if (d == "<i8")
    h.dtype = DType::I64;
  else if (d == "<i4")
    h.dtype = DType::I32;
  else if (d == "<i2")
    h.dtype = DType::I16;
  else if (d == "|i1")
    h.dtype = DType::I8;
  else if (d == "|u1")
    h.dtype = DType::U8;
  else if (d == "|b1")
    h.dtype = DType::I1;
  else if (d == "<c8" || d == "<c16" || d == ">c8" || d == ">c16")
    return npyError("unsupported dtype '" + d + "' (" +
                    (d.ends_with("c8") ? "complex64" : "complex128") +
                    "): complex dtypes are not supported, kt has no complex "
                    "element types (docs/adding-ops.md, \"Complex dtypes\")");
  else if (d.starts_with(">"))
    return npyError("unsupported dtype '" + d + "' (big endian)");
  else
    return npyError("unsupported dtype '" + d +
                    "' (expected <f4, <f8, <f2, <i8, <i4, <i2, |i1, |u1 or "
                    "|b1)");

  if (!shapeText->consume_front("("))
    return npyError("malformed .npy header: shape");
  StringRef dims = shapeText->take_until([](char c) { return c == ')'; });
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t v;
    if (p.getAsInteger(10, v) || v < 0)
      return npyError("malformed .npy header: shape entry '" + p + "'");
    h.shape.push_back(v);
  }
  // The declared size is checked before anything is allocated or read.
  std::optional<interp::TensorSize> size =
      interp::tensorSize(h.shape, interp::dtypeSize(h.dtype));
  if (!size)
    return npyError("the header declares " +
                    interp::tensorTypeString(h.dtype, h.shape) +
                    ", which has more than 2^63 - 1 bytes");
  h.dataBytes = size->bytes;
  return h;
}

/// Checks that `available` data bytes are exactly what `h` declares.
static Error checkDataSize(const NPYHeader &h, uint64_t available) {
  uint64_t need = (uint64_t)h.dataBytes;
  if (available < need)
    return npyError("truncated .npy data: expected " + Twine(need) +
                    " bytes, found " + Twine(available));
  if (available > need)
    return npyError("trailing bytes after .npy data: expected " + Twine(need) +
                    ", found " + Twine(available));
  return Error::success();
}

/// Rejects bool data other than 0 and 1.
static Error checkBools(const Tensor &t) {
  if (t.dtype() == DType::I1)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.ptr<uint8_t>()[i] > 1)
        return npyError("invalid bool value in .npy data");
  return Error::success();
}

Expected<Tensor> parseNPY(StringRef bytes) {
  size_t preamble = 0, headerLen = 0;
  if (Error e = parsePreamble(bytes, preamble, headerLen))
    return std::move(e);
  if (bytes.size() - preamble < headerLen)
    return npyError("truncated .npy header");
  Expected<NPYHeader> h = parseHeaderDict(bytes.substr(preamble, headerLen));
  if (!h)
    return h.takeError();
  size_t dataOffset = preamble + headerLen;
  if (Error e = checkDataSize(*h, bytes.size() - dataOffset))
    return std::move(e);
  Expected<Tensor> t = Tensor::create(h->dtype, h->shape);
  if (!t)
    return t.takeError();
  if (h->dataBytes)
    std::memcpy(t->mutableData(), bytes.data() + dataOffset, h->dataBytes);
  if (Error e = checkBools(*t))
    return std::move(e);
  return t;
}

/// Reads exactly `size` bytes at `offset` of `fd` into `dst`.
static Error readAt(sys::fs::file_t fd, uint64_t offset, char *dst,
                    size_t size) {
  while (size) {
    // At most 1 GiB per read: Linux reads at most ~2 GiB at once.
    size_t chunk = std::min<size_t>(size, size_t(1) << 30);
    Expected<size_t> n = sys::fs::readNativeFileSlice(
        fd, MutableArrayRef<char>(dst, chunk), offset);
    if (!n)
      return n.takeError();
    if (*n == 0)
      return npyError("the file ended early (changed while it was read?)");
    dst += *n;
    offset += *n;
    size -= *n;
  }
  return Error::success();
}

/// A file's type in words, for "is not a regular file" errors.
static StringRef fileTypeName(sys::fs::file_type type) {
  switch (type) {
  case sys::fs::file_type::directory_file:
    return "a directory";
  case sys::fs::file_type::character_file:
    return "a character device";
  case sys::fs::file_type::block_file:
    return "a block device";
  case sys::fs::file_type::fifo_file:
    return "a FIFO";
  case sys::fs::file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

/// Reads a .npy file: the header first, then (once the declared size matches
/// the file's) the data straight into the tensor.
static Expected<Tensor> readNPYFile(StringRef path) {
  // A device or FIFO has no size to check against (reading /dev/zero would
  // never end; opening a FIFO would wait for a writer): checked before it
  // is opened, and again on what was opened.
  sys::fs::file_status st;
  if (std::error_code ec = sys::fs::status(path, st))
    return npyError("cannot read: " + ec.message());
  if (st.type() != sys::fs::file_type::regular_file)
    return npyError("not a regular file (" + fileTypeName(st.type()) + ")");
  Expected<sys::fs::file_t> fd = sys::fs::openNativeFileForRead(path);
  if (!fd)
    return npyError("cannot read: " + toString(fd.takeError()));
  llvm::scope_exit close([&] { sys::fs::closeFile(*fd); });
  if (std::error_code ec = sys::fs::status(*fd, st))
    return npyError("cannot read: " + ec.message());
  if (st.type() != sys::fs::file_type::regular_file)
    return npyError("not a regular file (" + fileTypeName(st.type()) + ")");
  uint64_t fileSize = st.getSize();

  char first[12];
  size_t firstLen = std::min<uint64_t>(fileSize, sizeof(first));
  if (Error e = readAt(*fd, 0, first, firstLen))
    return npyError("cannot read: " + toString(std::move(e)));
  size_t preamble = 0, headerLen = 0;
  if (Error e = parsePreamble(StringRef(first, firstLen), preamble, headerLen))
    return std::move(e);
  if (fileSize - preamble < headerLen)
    return npyError("truncated .npy header");
  std::string header(headerLen, '\0');
  if (Error e = readAt(*fd, preamble, header.data(), headerLen))
    return npyError("cannot read: " + toString(std::move(e)));
  Expected<NPYHeader> h = parseHeaderDict(header);
  if (!h)
    return h.takeError();
  uint64_t dataOffset = preamble + headerLen;
  if (Error e = checkDataSize(*h, fileSize - dataOffset))
    return std::move(e);
  Expected<Tensor> t = Tensor::create(h->dtype, h->shape);
  if (!t)
    return t.takeError();
  if (h->dataBytes)
    if (Error e = readAt(*fd, dataOffset, static_cast<char *>(t->mutableData()),
                         h->dataBytes))
      return npyError("cannot read: " + toString(std::move(e)));
  if (Error e = checkBools(*t))
    return std::move(e);
  return t;
}

Expected<Tensor> readNPY(StringRef path) {
  Expected<Tensor> t = readNPYFile(path);
  if (!t)
    return npyError("'" + path + "': " + toString(t.takeError()));
  return t;
}

void writeNPY(raw_ostream &out, const Tensor &t) {
  // NumPy has no bfloat16: bf16 is written as <f4 (exact).
  bool bf16 = t.dtype() == DType::BF16;
  StringRef descr;
  switch (t.dtype()) {
  case DType::F32:
  case DType::BF16:
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
  case DType::I16:
    descr = "<i2";
    break;
  case DType::I8:
    descr = "|i1";
    break;
  case DType::U8:
    descr = "|u1";
    break;
  case DType::I1:
    descr = "|b1";
    break;
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
  out << StringRef("\x93NUMPY\x01\x00", 8);
  out << (char)(header.size() & 0xff);
  out << (char)(header.size() >> 8);
  out << header;
  if (!bf16) {
    out.write(static_cast<const char *>(t.data()), t.byteSize());
    return;
  }
  // bf16 to f32 a block at a time (no copy of the whole tensor).
  float block[1024];
  for (int64_t i = 0, n = t.numel(); i < n;) {
    int64_t m = std::min<int64_t>(n - i, 1024);
    for (int64_t k = 0; k < m; ++k)
      block[k] = interp::bf16ToFloat(t.ptr<uint16_t>()[i + k]);
    out.write(reinterpret_cast<const char *>(block), m * sizeof(float));
    i += m;
  }
}

Error writeNPY(StringRef path, const Tensor &t) {
  return writeFileAtomically(path,
                             [&](raw_ostream &os) { writeNPY(os, t); });
}

} // namespace kiln
