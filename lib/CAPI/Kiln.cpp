//===- Kiln.cpp - C API of the Kiln runtime -------------------------------===//
//
// Part of Kiln. Wraps runtime::Session for C callers (include/kiln-c/Kiln.h).
// Nothing here aborts on bad input: every check becomes an error status.
//
//===----------------------------------------------------------------------===//

#include "kiln-c/Kiln.h"

#include "kiln/Dialect/KG/IR/KGOps.h"
#include "kiln/Dialect/KT/IR/KTDialect.h"
#include "kiln/Interpreter/Tensor.h"
#include "kiln/Runtime/Session.h"
#include "kiln/Support/Logging.h"
#include "kiln/Support/ThreadDiagnostics.h"
#include "kiln/Support/Trace.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
using kiln::interp::DType;
using kiln::interp::Tensor;
using kiln::runtime::ArgView;

namespace {

//===----------------------------------------------------------------------===//
// Objects behind the handles
//===----------------------------------------------------------------------===//

struct StatusImpl {
  std::string message;
};

/// One tensor of a list: the buffer (shared with the runtime's result, which
/// is immutable) and the descriptor pointing into it.
struct ListItem {
  Tensor tensor;
  std::vector<int64_t> shape;
  DLTensor dl;
};

struct TensorListImpl {
  /// unique_ptr: descriptors keep their address while the list grows.
  std::vector<std::unique_ptr<ListItem>> items;
};

/// What the C API knows of a loaded program: its argument kinds.
struct ProgramInfo {
  std::vector<bool> isScalar;
};

struct SessionImpl {
  kiln::runtime::Session session;
  bool loaded = false;
  std::map<std::string, ProgramInfo, std::less<>> programs;
  /// Strings returned "valid until the next kilnSession* call on this
  /// session", per thread: calls on other threads do not invalidate them.
  struct Scratch {
    std::string text;
    std::vector<std::string> entryIR;
  };
  std::map<std::thread::id, Scratch> scratch;
  Scratch &scratchOfThisThread() { return scratch[std::this_thread::get_id()]; }
};

/// Held by every kilnSession* function on a session, except while a call
/// runs its program (Session.h): the session's recursive lock.
using SessionLock = std::unique_lock<std::recursive_mutex>;

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

/// The live handles of one kind (fz27, docs/c-api.md "Handles"). A handle's
/// `ptr` is a token, not the object's address: a 64-bit number made by a
/// bijective mix of a process-wide counter (so never 0, never reused, and
/// unlike any small integer or nearby pointer), looked up here on every
/// entry. A destroyed handle, one of another kind, or garbage is not found:
/// the function answers with an error status naming itself (or, where it
/// returns no status, does nothing / returns its null value) and never
/// touches freed memory. What cannot be detected: a handle destroyed on
/// another thread while a call on it runs (the call already holds the
/// object), and a garbage value equal to a live token (1 in ~2^64/live).
template <typename T>
class Handles {
public:
  /// Registers `object` (owned by the registry's caller, e.g. the user);
  /// `userOwned` false: the object belongs to Kiln and the user's destroy
  /// function must not free it (a host callback's output list).
  void *add(T *object, bool userOwned = true) {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t token;
    do
      token = mix(nextToken().fetch_add(1, std::memory_order_relaxed) + 1);
    while (token == llvm::DenseMapInfo<uint64_t>::getEmptyKey() ||
           token == llvm::DenseMapInfo<uint64_t>::getTombstoneKey());
    live[token] = {object, userOwned};
    return reinterpret_cast<void *>(static_cast<uintptr_t>(token));
  }
  /// The live object of `handle`, or null.
  T *get(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(key(handle));
    return it == live.end() ? nullptr : it->second.first;
  }
  /// Unregisters `handle` and returns its object, or null when it is not
  /// live (or, with `userOnly`, not the user's to destroy).
  T *take(const void *handle, bool userOnly = false) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(key(handle));
    if (it == live.end() || (userOnly && !it->second.second))
      return nullptr;
    T *object = it->second.first;
    live.erase(it);
    return object;
  }

private:
  static uint64_t key(const void *handle) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  }
  /// splitmix64's finalizer: a bijection with mix(0) == 0 only.
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// One counter for every kind: tokens of different kinds differ too.
  static std::atomic<uint64_t> &nextToken() {
    static std::atomic<uint64_t> counter{0};
    return counter;
  }
  std::mutex mutex;
  llvm::DenseMap<uint64_t, std::pair<T *, bool>> live;
};

// Function-local statics: live before any handle is made, also from other
// static initializers; never destroyed (handles may outlive main's return).
Handles<SessionImpl> &sessions() {
  static auto *h = new Handles<SessionImpl>();
  return *h;
}
Handles<TensorListImpl> &lists() {
  static auto *h = new Handles<TensorListImpl>();
  return *h;
}
Handles<StatusImpl> &statuses() {
  static auto *h = new Handles<StatusImpl>();
  return *h;
}

KilnStatus makeStatus(std::string message) {
  return KilnStatus{statuses().add(new StatusImpl{std::move(message)})};
}

SessionImpl *unwrap(KilnSession s) { return sessions().get(s.ptr); }
TensorListImpl *unwrap(KilnTensorList l) { return lists().get(l.ptr); }

/// The error of a status a callback returned (null: success), which Kiln
/// now owns and destroys. A status that is not live (destroyed already, or
/// not made by kilnStatusCreate) is an error too, named as such.
std::optional<std::string> takeCallbackStatus(KilnStatus status) {
  if (!status.ptr)
    return std::nullopt;
  std::unique_ptr<StatusImpl> s(statuses().take(status.ptr));
  if (!s)
    return std::string("the callback returned a status that is not live "
                       "(destroyed already, or not made by kilnStatusCreate)");
  return std::move(s->message);
}

/// The message of a function given a handle that is not null and not live.
std::string notLive(llvm::StringRef fn, llvm::StringRef what,
                    llvm::StringRef creator) {
  return (fn + ": the " + what + " is not a live handle (destroyed already, "
               "or not made by " + creator + ")")
      .str();
}

/// Checks a string argument (NULL data is only valid with length 0).
bool toStringRef(KilnStringRef s, llvm::StringRef &out) {
  if (!s.data && s.length)
    return false;
  out = s.data ? llvm::StringRef(s.data, s.length) : llvm::StringRef();
  return true;
}

KilnStringRef toC(llvm::StringRef s) { return {s.data(), s.size()}; }

//===----------------------------------------------------------------------===//
// DLPack <-> runtime
//===----------------------------------------------------------------------===//

std::optional<DType> dtypeFromDL(DLDataType t) {
  if (t.lanes != 1)
    return std::nullopt;
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 32)
      return DType::F32;
    if (t.bits == 64)
      return DType::F64;
    if (t.bits == 16)
      return DType::F16;
    break;
  case kDLBfloat:
    if (t.bits == 16)
      return DType::BF16;
    break;
  case kDLInt:
    if (t.bits == 64)
      return DType::I64;
    if (t.bits == 32)
      return DType::I32;
    if (t.bits == 16)
      return DType::I16;
    if (t.bits == 8)
      return DType::I8;
    break;
  case kDLUInt:
    if (t.bits == 8)
      return DType::U8;
    break;
  case kDLBool:
    if (t.bits == 8)
      return DType::I1;
    break;
  default:
    break;
  }
  return std::nullopt;
}

DLDataType dtypeToDL(DType dt) {
  switch (dt) {
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F64:
    return {kDLFloat, 64, 1};
  case DType::F16:
    return {kDLFloat, 16, 1};
  case DType::BF16:
    return {kDLBfloat, 16, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I16:
    return {kDLInt, 16, 1};
  case DType::I8:
    return {kDLInt, 8, 1};
  case DType::U8:
    return {kDLUInt, 8, 1};
  case DType::I1:
    return {kDLBool, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

/// A view of `t` (not copied). `what` names the tensor in errors.
bool viewFromDL(const DLTensor *t, const std::string &what, ArgView &view,
                std::string &error) {
  if (!t) {
    error = what + " is NULL";
    return false;
  }
  // The caller's device type may be any DLPack value (e.g. kDLVulkan = 7),
  // outside the range of Kiln's two-value enum: loading it as the enum is
  // undefined behaviour, so read the underlying integer.
  int32_t deviceType;
  static_assert(sizeof(deviceType) == sizeof(t->device.device_type),
                "DLDeviceType is a 32-bit int in C");
  std::memcpy(&deviceType, &t->device.device_type, sizeof(deviceType));
  if (deviceType != kDLCPU) {
    error = what + " is on device type " + std::to_string(deviceType) +
            (deviceType == kDLCUDA ? " (CUDA)" : "") +
            ": only CPU tensors (kDLCPU) are accepted, the runtime reads "
            "tensor data on the host";
    return false;
  }
  std::optional<DType> dt = dtypeFromDL(t->dtype);
  if (!dt) {
    error = what + " has an unsupported dtype (code " +
            std::to_string(t->dtype.code) + ", bits " +
            std::to_string(t->dtype.bits) + ", lanes " +
            std::to_string(t->dtype.lanes) + ")" +
            (t->dtype.code == kDLComplex
                 ? ": complex dtypes are not supported, kt has no complex "
                   "element types (docs/adding-ops.md, \"Complex dtypes\")"
                 : "") +
            "; supported: float16/32/64, bfloat16, int8/16/32/64, uint8, "
            "bool (8 bits), with lanes 1";
    return false;
  }
  if (t->ndim < 0) {
    error = what + " has ndim " + std::to_string(t->ndim) + " < 0";
    return false;
  }
  if (t->ndim > 0 && !t->shape) {
    error = what + " has ndim " + std::to_string(t->ndim) + " and NULL shape";
    return false;
  }
  for (int32_t d = 0; d < t->ndim; ++d) {
    if (t->shape[d] < 0) {
      error = what + " has a negative size " + std::to_string(t->shape[d]) +
              " at dim " + std::to_string(d);
      return false;
    }
  }
  llvm::ArrayRef<int64_t> shape(t->shape, t->ndim);
  size_t elementBytes = kiln::interp::dtypeSize(*dt);
  std::optional<kiln::interp::TensorSize> size =
      kiln::interp::tensorSize(shape, elementBytes);
  if (!size) {
    error = what + " (" + kiln::interp::tensorTypeString(*dt, shape) +
            ") has more than 2^63 - 1 bytes";
    return false;
  }
  int64_t numel = size->elements;
  if (numel > 0 && t->strides) {
    // The farthest element from the first must be addressable too.
    int64_t extent = 0;
    bool overflow = false;
    for (int32_t d = 0; d < t->ndim && !overflow; ++d) {
      int64_t stride = t->strides[d], step;
      if (stride == INT64_MIN)
        overflow = true;
      else
        overflow = llvm::MulOverflow(t->shape[d] - 1,
                                     stride < 0 ? -stride : stride, step) ||
                   llvm::AddOverflow(extent, step, extent);
    }
    int64_t bytes;
    if (overflow || llvm::MulOverflow(extent, (int64_t)elementBytes, bytes)) {
      error = what + " has strides that reach more than 2^63 - 1 bytes from "
                     "its first element";
      return false;
    }
  }
  if (numel > 0 && !t->data) {
    error = what + " has NULL data and " + std::to_string(numel) + " elements";
    return false;
  }
  view = ArgView();
  view.isTensor = true;
  view.dtype = *dt;
  view.shape = llvm::ArrayRef<int64_t>(t->shape, t->ndim);
  if (t->strides && t->ndim > 0)
    view.strides = llvm::ArrayRef<int64_t>(t->strides, t->ndim);
  view.data = t->data ? static_cast<const char *>(t->data) + t->byte_offset
                      : nullptr;
  view.device = "cpu";
  return true;
}

/// Turns a one-element tensor view into a host scalar view.
bool makeScalar(ArgView &view, const std::string &what, std::string &error) {
  if (kiln::interp::numElements(view.shape) != 1) {
    error = what + " is a scalar argument: pass a 0-d tensor (got " +
            std::to_string(view.shape.size()) + " dims, " +
            std::to_string(kiln::interp::numElements(view.shape)) +
            " elements)";
    return false;
  }
  llvm::Expected<Tensor> scalar = kiln::runtime::tensorFromView(view);
  if (!scalar) {
    error = what + ": " + llvm::toString(scalar.takeError());
    return false;
  }
  const Tensor &t = *scalar;
  view.isTensor = false;
  view.shape = {};
  view.strides = {};
  if (t.isFloat())
    view.floatValue = t.getF(0);
  else
    view.intValue = t.getI(0);
  return true;
}

/// Fills `item` to describe its (compact) tensor.
void describe(ListItem &item) {
  item.shape.assign(item.tensor.shape().begin(), item.tensor.shape().end());
  DLTensor &dl = item.dl;
  dl.data = item.tensor.numel() ? item.tensor.mutableData() : nullptr;
  dl.device = {kDLCPU, 0};
  dl.ndim = (int32_t)item.shape.size();
  dl.dtype = dtypeToDL(item.tensor.dtype());
  dl.shape = item.shape.empty() ? nullptr : item.shape.data();
  dl.strides = nullptr;
  dl.byte_offset = 0;
}

void append(TensorListImpl &list, Tensor t) {
  auto item = std::make_unique<ListItem>();
  item->tensor = std::move(t);
  describe(*item);
  list.items.push_back(std::move(item));
}

/// Descriptors (borrowing the tensors' buffers) of compact tensors.
void describeAll(llvm::ArrayRef<Tensor> tensors,
                 std::vector<std::vector<int64_t>> &shapes,
                 std::vector<DLTensor> &out) {
  shapes.resize(tensors.size());
  out.resize(tensors.size());
  for (auto [i, t] : llvm::enumerate(tensors)) {
    shapes[i].assign(t.shape().begin(), t.shape().end());
    DLTensor &dl = out[i];
    dl.data = const_cast<void *>(t.data());
    dl.device = {kDLCPU, 0};
    dl.ndim = (int32_t)shapes[i].size();
    dl.dtype = dtypeToDL(t.dtype());
    dl.shape = shapes[i].empty() ? nullptr : shapes[i].data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
}

//===----------------------------------------------------------------------===//
// Session helpers
//===----------------------------------------------------------------------===//

#define CHECK_SESSION(fn)                                                      \
  SessionImpl *impl = unwrap(session);                                         \
  if (!impl)                                                                   \
    return makeStatus(sessionError(fn, session));                              \
  SessionLock apiLock(impl->session.mutex());

#define CHECK_STRING(fn, what, cstr, out)                                      \
  llvm::StringRef out;                                                         \
  if (!toStringRef(cstr, out))                                                 \
    return makeStatus(fn ": " what " has NULL data and a nonzero length");

/// Why `session` has no object: null, or not live.
std::string sessionError(llvm::StringRef fn, KilnSession session) {
  if (!session.ptr)
    return (fn + ": the session is null").str();
  return notLive(fn, "session", "kilnSessionCreate");
}

/// Why `list` has no object: null, or not live.
std::string listError(llvm::StringRef fn, KilnTensorList list) {
  if (!list.ptr)
    return (fn + ": the list is null").str();
  return notLive(fn, "list", "kilnTensorListCreate or kilnSessionCall");
}

/// The loaded program `name`, or an error.
const ProgramInfo *findProgram(SessionImpl *impl, llvm::StringRef fn,
                               llvm::StringRef name, std::string &error) {
  if (!impl->loaded) {
    error = fn.str() + ": no module is loaded (kilnSessionLoadModule)";
    return nullptr;
  }
  auto it = impl->programs.find(name);
  if (it == impl->programs.end()) {
    error = fn.str() + ": no kg.program named '" + name.str() +
            "' in the loaded module";
    return nullptr;
  }
  return &it->second;
}

/// Loads `text` and records the signatures of its programs.
KilnStatus load(SessionImpl *impl, llvm::StringRef fn, llvm::StringRef text,
                llvm::StringRef bufferName) {
  std::string error;
  impl->scratch.clear();
  if (failed(impl->session.loadModule(text, bufferName, error))) {
    // The session keeps its previous module; so do we.
    return makeStatus(fn.str() + ": " + error);
  }
  impl->loaded = true;
  impl->programs.clear();
  // The session parsed it once already; parse again (same context) for the
  // argument kinds, which the session does not expose.
  MLIRContext *ctx = impl->session.getContext();
  kiln::ThreadDiagnosticHandler quiet(ctx, [](Diagnostic &) {});
  OwningOpRef<ModuleOp> module =
      kiln::runtime::parseModuleText(*ctx, text, bufferName);
  if (!module)
    return makeStatus(fn.str() + ": internal error: cannot re-parse the module");
  module->walk([&](kiln::kg::ProgramOp program) {
    ProgramInfo info;
    for (Type t : program.getArgumentTypes())
      info.isScalar.push_back(!isa<ShapedType, kiln::kt::RefType>(t));
    impl->programs[program.getSymName().str()] = std::move(info);
  });
  return KilnStatus{nullptr};
}

KilnStatus mark(KilnSession session, const char *fn, KilnStringRef program,
                size_t arg, size_t dim, bool dynamic) {
  SessionImpl *impl = unwrap(session);
  if (!impl)
    return makeStatus(sessionError(fn, session));
  SessionLock apiLock(impl->session.mutex());
  llvm::StringRef name;
  if (!toStringRef(program, name))
    return makeStatus(std::string(fn) +
                      ": program has NULL data and a nonzero length");
  std::string error;
  const ProgramInfo *info = findProgram(impl, fn, name, error);
  if (!info)
    return makeStatus(error);
  if (arg >= info->isScalar.size())
    return makeStatus(std::string(fn) + ": @" + name.str() + " has " +
                      std::to_string(info->isScalar.size()) +
                      " arguments, no argument " + std::to_string(arg));
  if (info->isScalar[arg])
    return makeStatus(std::string(fn) + ": argument " + std::to_string(arg) +
                      " of @" + name.str() + " is a scalar, it has no dims");
  if (dim > 0xffff)
    return makeStatus(std::string(fn) + ": dim " + std::to_string(dim) +
                      " is out of range");
  if (dynamic)
    impl->session.markDynamic(name, arg, dim);
  else
    impl->session.markStatic(name, arg, dim);
  return KilnStatus{nullptr};
}

/// The prologue of the C API functions about one program: the session, its
/// lock (held while the query lives), and the program's stats (null when
/// never called); `ok` false with `status` set when the session is null or
/// the program is not a kg.program of the loaded module.
struct ProgramQuery {
  ProgramQuery(KilnSession session, const char *fn, KilnStringRef program) {
    impl = unwrap(session);
    if (!impl) {
      status = makeStatus(sessionError(fn, session));
      return;
    }
    lock = SessionLock(impl->session.mutex());
    if (!toStringRef(program, name)) {
      status = makeStatus(std::string(fn) +
                          ": program has NULL data and a nonzero length");
      return;
    }
    std::string error;
    if (!findProgram(impl, fn, name, error)) {
      status = makeStatus(error);
      return;
    }
    stats = impl->session.stats(name);
    ok = true;
  }
  bool ok = false;
  KilnStatus status{nullptr};
  SessionImpl *impl = nullptr;
  SessionLock lock;
  llvm::StringRef name;
  const kiln::runtime::ProgramStats *stats = nullptr;
};

KilnStatus indexError(const char *fn, const char *what, size_t index,
                      size_t size) {
  return makeStatus(std::string(fn) + ": " + what + " index " +
                    std::to_string(index) + " is out of range (there are " +
                    std::to_string(size) + ")");
}

} // namespace

//===----------------------------------------------------------------------===//
// Version, strings, status
//===----------------------------------------------------------------------===//

int kilnGetAPIVersion(void) {
  return (KILN_C_API_VERSION_MAJOR << 16) | KILN_C_API_VERSION_MINOR;
}

KilnStringRef kilnStringRefCreateFromCString(const char *str) {
  return {str, str ? std::strlen(str) : 0};
}

KilnStatus kilnStatusCreate(KilnStringRef message) {
  llvm::StringRef m;
  if (!toStringRef(message, m))
    return makeStatus("(invalid status message: NULL data with length " +
                      std::to_string(message.length) + ")");
  return makeStatus(m.str());
}

KilnStringRef kilnStatusGetMessage(KilnStatus status) {
  if (!status.ptr)
    return {"", 0};
  if (StatusImpl *s = statuses().get(status.ptr))
    return toC(s->message);
  static const std::string dangling =
      notLive("kilnStatusGetMessage", "status", "kilnStatusCreate or Kiln");
  return toC(dangling);
}

void kilnStatusDestroy(KilnStatus status) {
  if (status.ptr)
    delete statuses().take(status.ptr); // not live: ignored
}

//===----------------------------------------------------------------------===//
// Tensor lists
//===----------------------------------------------------------------------===//

KilnTensorList kilnTensorListCreate(void) {
  return KilnTensorList{lists().add(new TensorListImpl())};
}

void kilnTensorListDestroy(KilnTensorList list) {
  // Not live, or a callback's output list (Kiln's): ignored.
  if (list.ptr)
    delete lists().take(list.ptr, /*userOnly=*/true);
}

size_t kilnTensorListSize(KilnTensorList list) {
  TensorListImpl *l = unwrap(list);
  return l ? l->items.size() : 0;
}

const DLTensor *kilnTensorListGet(KilnTensorList list, size_t index) {
  TensorListImpl *l = unwrap(list);
  if (!l || index >= l->items.size())
    return nullptr;
  return &l->items[index]->dl;
}

namespace {
/// What a DLManagedTensor handed out owns: the tensor (a reference to the
/// list item's buffer) and its descriptor.
struct ManagedItem {
  DLManagedTensor managed;
  ListItem item;
};
} // namespace

KilnStatus kilnTensorListGetManaged(KilnTensorList list, size_t index,
                                    DLManagedTensor **out) {
  if (out)
    *out = nullptr;
  TensorListImpl *l = unwrap(list);
  if (!l)
    return makeStatus(listError("kilnTensorListGetManaged", list));
  if (!out)
    return makeStatus("kilnTensorListGetManaged: out is NULL");
  if (index >= l->items.size())
    return makeStatus("kilnTensorListGetManaged: index " +
                      std::to_string(index) + " is out of range (the list "
                      "has " + std::to_string(l->items.size()) + " tensors)");
  auto *m = new ManagedItem();
  m->item.tensor = l->items[index]->tensor;
  describe(m->item);
  m->managed.dl_tensor = m->item.dl;
  m->managed.manager_ctx = m;
  m->managed.deleter = [](DLManagedTensor *self) {
    if (self)
      delete static_cast<ManagedItem *>(self->manager_ctx);
  };
  *out = &m->managed;
  return KilnStatus{nullptr};
}

KilnStatus kilnTensorListAppend(KilnTensorList list, const DLTensor *tensor) {
  TensorListImpl *l = unwrap(list);
  if (!l)
    return makeStatus(listError("kilnTensorListAppend", list));
  ArgView view;
  std::string error;
  if (!viewFromDL(tensor, "kilnTensorListAppend: the tensor", view, error))
    return makeStatus(error);
  llvm::Expected<Tensor> t = kiln::runtime::tensorFromView(view);
  if (!t)
    return makeStatus("kilnTensorListAppend: the tensor: " +
                      llvm::toString(t.takeError()));
  append(*l, std::move(*t));
  return KilnStatus{nullptr};
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

KilnSession kilnSessionCreate(void) {
  return KilnSession{sessions().add(new SessionImpl())};
}

void kilnSessionDestroy(KilnSession session) {
  if (session.ptr)
    delete sessions().take(session.ptr); // not live: ignored
}

KilnStatus kilnSessionLoadModule(KilnSession session, KilnStringRef text,
                                 KilnStringRef bufferName) {
  CHECK_SESSION("kilnSessionLoadModule");
  CHECK_STRING("kilnSessionLoadModule", "text", text, source);
  CHECK_STRING("kilnSessionLoadModule", "bufferName", bufferName, name);
  return load(impl, "kilnSessionLoadModule", source,
              name.empty() ? llvm::StringRef("<module>") : name);
}

KilnStatus kilnSessionLoadModuleFile(KilnSession session, KilnStringRef path) {
  CHECK_SESSION("kilnSessionLoadModuleFile");
  CHECK_STRING("kilnSessionLoadModuleFile", "path", path, file);
  if (file.empty())
    return makeStatus("kilnSessionLoadModuleFile: the path is empty");
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf)
    return makeStatus("kilnSessionLoadModuleFile: cannot read '" + file.str() +
                      "': " + buf.getError().message());
  return load(impl, "kilnSessionLoadModuleFile", (*buf)->getBuffer(), file);
}

KilnStatus kilnSessionSetOption(KilnSession session, KilnStringRef key,
                                KilnStringRef value) {
  CHECK_SESSION("kilnSessionSetOption");
  CHECK_STRING("kilnSessionSetOption", "key", key, k);
  CHECK_STRING("kilnSessionSetOption", "value", value, v);
  std::string error;
  if (failed(impl->session.setOption(k, v, error)))
    return makeStatus("kilnSessionSetOption: " + error);
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionGetOption(KilnSession session, KilnStringRef key,
                                KilnStringRef *value) {
  CHECK_SESSION("kilnSessionGetOption");
  CHECK_STRING("kilnSessionGetOption", "key", key, k);
  if (!value)
    return makeStatus("kilnSessionGetOption: value is NULL");
  std::string &scratch = impl->scratchOfThisThread().text;
  const kiln::runtime::SessionOptions &o = impl->session.options();
  if (k == "backend")
    scratch = o.backend;
  else if (k == "pipeline")
    scratch = o.pipeline;
  else if (k == "cache_size_limit")
    scratch = std::to_string(o.cacheSizeLimit);
  else if (k == "frozen")
    scratch = o.frozen ? "true" : "false";
  else if (k == "cpu_fallback")
    scratch = o.cpuFallback;
  else if (k == "repro_dir")
    scratch = o.reproDir;
  else if (k == "check_accuracy")
    scratch = o.checkAccuracy ? "true" : "false";
  else if (k == "cache_dir")
    scratch = o.cacheDir.empty() ? "off" : o.cacheDir;
  else if (k == "constant_args") {
    scratch.clear();
    for (unsigned i : o.constantArgs)
      scratch += (scratch.empty() ? "" : ",") + std::to_string(i);
  } else if (k == "dynamic")
    scratch = o.dynamic == kiln::runtime::DynamicMode::Auto ? "auto"
                    : o.dynamic == kiln::runtime::DynamicMode::Static
                        ? "static"
                        : "dynamic";
  else
    return makeStatus("kilnSessionGetOption: unknown option '" + k.str() +
                      "' (options: backend, pipeline, cache_size_limit, "
                      "frozen, dynamic, cpu_fallback, repro_dir, "
                      "check_accuracy, cache_dir, constant_args)");
  *value = toC(scratch);
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionMarkDynamic(KilnSession session, KilnStringRef program,
                                  size_t arg, size_t dim) {
  return mark(session, "kilnSessionMarkDynamic", program, arg, dim, true);
}

KilnStatus kilnSessionMarkStatic(KilnSession session, KilnStringRef program,
                                 size_t arg, size_t dim) {
  return mark(session, "kilnSessionMarkStatic", program, arg, dim, false);
}

//===----------------------------------------------------------------------===//
// Callbacks
//===----------------------------------------------------------------------===//

KilnStatus kilnSessionRegisterHostCallback(KilnSession session,
                                           KilnStringRef name,
                                           KilnHostCallback callback,
                                           void *userData) {
  CHECK_SESSION("kilnSessionRegisterHostCallback");
  CHECK_STRING("kilnSessionRegisterHostCallback", "name", name, n);
  if (n.empty())
    return makeStatus("kilnSessionRegisterHostCallback: the name is empty");
  if (!callback)
    return makeStatus("kilnSessionRegisterHostCallback: the callback for '" +
                      n.str() + "' is NULL");
  impl->session.registerHostCallback(
      n, [callback, userData](llvm::ArrayRef<Tensor> inputs,
                              llvm::SmallVectorImpl<Tensor> &outputs,
                              std::string &error) -> LogicalResult {
        std::vector<std::vector<int64_t>> shapes;
        std::vector<DLTensor> dl;
        describeAll(inputs, shapes, dl);
        // Kiln's list, live while the callback runs (the callback cannot
        // destroy it: kilnTensorListDestroy ignores it).
        TensorListImpl out;
        void *outHandle = lists().add(&out, /*userOwned=*/false);
        KilnStatus status = callback(userData, dl.empty() ? nullptr : dl.data(),
                                     dl.size(), KilnTensorList{outHandle});
        lists().take(outHandle);
        if (std::optional<std::string> e = takeCallbackStatus(status)) {
          error = std::move(*e);
          return failure();
        }
        for (auto &item : out.items)
          outputs.push_back(item->tensor);
        return success();
      });
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionSetMissCallback(KilnSession session,
                                      KilnMissCallback callback,
                                      void *userData) {
  CHECK_SESSION("kilnSessionSetMissCallback");
  if (!callback) {
    impl->session.setMissCallback(nullptr);
    return KilnStatus{nullptr};
  }
  impl->session.setMissCallback(
      [callback, userData](llvm::StringRef program,
                           llvm::ArrayRef<ArgView> args, llvm::StringRef reason,
                           std::string &moduleText,
                           std::string &error) -> LogicalResult {
        // Tensors are described in place; scalars get a 0-d buffer.
        std::vector<Tensor> scalars(args.size());
        std::vector<DLTensor> dl(args.size());
        for (auto [i, a] : llvm::enumerate(args)) {
          DLTensor &t = dl[i];
          t.device = {kDLCPU, 0};
          t.dtype = dtypeToDL(a.dtype);
          t.byte_offset = 0;
          if (!a.isTensor) {
            // One element: a scalar view is never too large to copy.
            scalars[i] = kiln::interp::isFloatDType(a.dtype)
                             ? Tensor::scalar(a.dtype, a.floatValue)
                             : Tensor::scalarInt(a.dtype, a.intValue);
            t.data = scalars[i].mutableData();
            t.ndim = 0;
            t.shape = nullptr;
            t.strides = nullptr;
            continue;
          }
          t.data = const_cast<void *>(a.data);
          t.ndim = (int32_t)a.shape.size();
          t.shape = const_cast<int64_t *>(a.shape.data());
          t.strides =
              a.strides.empty() ? nullptr : const_cast<int64_t *>(a.strides.data());
        }
        KilnStringRef text{nullptr, 0};
        KilnStatus status = callback(userData, toC(program),
                                     dl.empty() ? nullptr : dl.data(),
                                     dl.size(), toC(reason), &text);
        if (std::optional<std::string> e = takeCallbackStatus(status)) {
          error = std::move(*e);
          return failure();
        }
        llvm::StringRef t;
        if (!toStringRef(text, t) || t.empty()) {
          error = "the callback returned no module text";
          return failure();
        }
        moduleText = t.str();
        return success();
      });
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionSetWarningCallback(KilnSession session,
                                         KilnWarningCallback callback,
                                         void *userData) {
  CHECK_SESSION("kilnSessionSetWarningCallback");
  if (!callback) {
    impl->session.setWarningHandler([](llvm::StringRef msg) {
      llvm::errs() << "kiln: warning: " << msg << "\n";
    });
    return KilnStatus{nullptr};
  }
  impl->session.setWarningHandler([callback, userData](llvm::StringRef msg) {
    callback(userData, toC(msg));
  });
  return KilnStatus{nullptr};
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

KilnStatus kilnSessionCall(KilnSession session, KilnStringRef program,
                           const DLTensor *args, size_t numArgs,
                           const uint32_t *argFlags, KilnTensorList *results) {
  if (results)
    *results = KilnTensorList{nullptr};
  CHECK_SESSION("kilnSessionCall");
  CHECK_STRING("kilnSessionCall", "program", program, name);
  if (!results)
    return makeStatus("kilnSessionCall: results is NULL");
  if (!args && numArgs)
    return makeStatus("kilnSessionCall: args is NULL and numArgs is " +
                      std::to_string(numArgs));
  impl->scratchOfThisThread() = {};
  std::string error;
  const ProgramInfo *info = findProgram(impl, "kilnSessionCall", name, error);
  if (!info)
    return makeStatus(error);
  if (numArgs != info->isScalar.size())
    return makeStatus("kilnSessionCall: @" + name.str() + " takes " +
                      std::to_string(info->isScalar.size()) +
                      " arguments, got " + std::to_string(numArgs));
  llvm::SmallVector<ArgView, 8> views(numArgs);
  for (size_t i = 0; i < numArgs; ++i) {
    std::string what = "kilnSessionCall: argument " + std::to_string(i) +
                       " of @" + name.str();
    if (!viewFromDL(&args[i], what, views[i], error))
      return makeStatus(error);
    uint32_t flags = argFlags ? argFlags[i] : 0;
    if (flags & ~(uint32_t)KILN_ARG_REQUIRES_GRAD)
      return makeStatus(what + " has unknown flags " + std::to_string(flags));
    views[i].requiresGrad = flags & KILN_ARG_REQUIRES_GRAD;
    if (info->isScalar[i] && !makeScalar(views[i], what, error))
      return makeStatus(error);
  }
  // The session takes its lock itself, and not while the program runs.
  apiLock.unlock();
  FailureOr<llvm::SmallVector<Tensor>> out =
      impl->session.call(name, views, error);
  if (failed(out))
    return makeStatus("kilnSessionCall: @" + name.str() + ": " + error);
  auto *list = new TensorListImpl();
  for (Tensor &t : *out)
    append(*list, std::move(t));
  *results = KilnTensorList{lists().add(list)};
  return KilnStatus{nullptr};
}

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

KilnStatus kilnSessionGetStats(KilnSession session, KilnStringRef program,
                               KilnProgramStats *stats) {
  ProgramQuery q(session, "kilnSessionGetStats", program);
  if (!q.ok)
    return q.status;
  const kiln::runtime::ProgramStats *s = q.stats;
  if (!stats)
    return makeStatus("kilnSessionGetStats: stats is NULL");
  std::memset(stats, 0, sizeof(*stats));
  if (!s)
    return KilnStatus{nullptr};
  stats->calls = s->calls;
  stats->hits = s->hits;
  stats->misses = s->misses;
  stats->compiles = s->compiles;
  stats->fallbacks = s->fallbacks;
  stats->numRecompileReasons = s->recompileReasons.size();
  stats->numCompilePhases = s->compileSeconds.size();
  stats->numEntries = s->compiles;
  stats->totalCompileSeconds = s->totalCompileSeconds;
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionGetRecompileReason(KilnSession session,
                                         KilnStringRef program, size_t index,
                                         KilnStringRef *reason) {
  const char *fn = "kilnSessionGetRecompileReason";
  ProgramQuery q(session, fn, program);
  if (!q.ok)
    return q.status;
  const kiln::runtime::ProgramStats *s = q.stats;
  SessionImpl *impl = q.impl;
  if (!reason)
    return makeStatus(std::string(fn) + ": reason is NULL");
  size_t n = s ? s->recompileReasons.size() : 0;
  if (index >= n)
    return indexError(fn, "recompile reason", index, n);
  // A copy: other threads' recompiles grow the list.
  std::string &text = impl->scratchOfThisThread().text;
  text = s->recompileReasons[index];
  *reason = toC(text);
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionGetCompilePhase(KilnSession session,
                                      KilnStringRef program, size_t index,
                                      KilnStringRef *name, double *seconds) {
  const char *fn = "kilnSessionGetCompilePhase";
  ProgramQuery q(session, fn, program);
  if (!q.ok)
    return q.status;
  const kiln::runtime::ProgramStats *s = q.stats;
  SessionImpl *impl = q.impl;
  if (!name || !seconds)
    return makeStatus(std::string(fn) + ": name or seconds is NULL");
  size_t n = s ? s->compileSeconds.size() : 0;
  if (index >= n)
    return indexError(fn, "compile phase", index, n);
  auto it = std::next(s->compileSeconds.begin(), index);
  std::string &text = impl->scratchOfThisThread().text;
  text = it->first;
  *name = toC(text);
  *seconds = it->second;
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionTransformModule(KilnSession session, KilnStringRef text,
                                      KilnStringRef pipeline,
                                      KilnStringRef *out) {
  const char *fn = "kilnSessionTransformModule";
  SessionImpl *impl = unwrap(session);
  if (!impl)
    return makeStatus(sessionError(fn, session));
  if (!out)
    return makeStatus(std::string(fn) + ": out is NULL");
  *out = KilnStringRef{nullptr, 0};
  llvm::StringRef textRef, pipelineRef;
  if (!toStringRef(text, textRef) || !toStringRef(pipeline, pipelineRef))
    return makeStatus(std::string(fn) +
                      ": text or pipeline has NULL data and a nonzero length");
  SessionLock apiLock(impl->session.mutex());
  std::string error;
  std::string &result = impl->scratchOfThisThread().text;
  if (failed(impl->session.transformModule(textRef, "<transform>",
                                           pipelineRef, result, error)))
    return makeStatus(std::string(fn) + ": " + error);
  *out = toC(result);
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionGetLastEntry(KilnSession session,
                                   KilnStringRef program, int64_t *entry) {
  const char *fn = "kilnSessionGetLastEntry";
  ProgramQuery q(session, fn, program);
  if (!q.ok)
    return q.status;
  const kiln::runtime::ProgramStats *s = q.stats;
  if (!entry)
    return makeStatus(std::string(fn) + ": entry is NULL");
  *entry = s ? kiln::runtime::lastEntryOfThread(s) : -1;
  return KilnStatus{nullptr};
}

KilnStatus kilnSessionGetEntryIR(KilnSession session, KilnStringRef program,
                                 size_t index, KilnStringRef *ir) {
  const char *fn = "kilnSessionGetEntryIR";
  ProgramQuery q(session, fn, program);
  if (!q.ok)
    return q.status;
  SessionImpl *impl = q.impl;
  if (!ir)
    return makeStatus(std::string(fn) + ": ir is NULL");
  llvm::StringRef name = q.name;
  std::vector<std::string> &entryIR = impl->scratchOfThisThread().entryIR;
  entryIR = impl->session.entryIR(name);
  if (index >= entryIR.size())
    return indexError(fn, "entry", index, entryIR.size());
  *ir = toC(entryIR[index]);
  return KilnStatus{nullptr};
}

//===----------------------------------------------------------------------===//
// Logs and traces
//===----------------------------------------------------------------------===//

KilnStatus kilnSetLogs(KilnStringRef spec) {
  CHECK_STRING("kilnSetLogs", "spec", spec, text);
  std::string error;
  if (!kiln::logs::configure(text, error))
    return makeStatus("kilnSetLogs: " + error);
  return KilnStatus{nullptr};
}

void kilnSetLogCallback(KilnLogCallback callback, void *userData) {
  if (!callback) {
    kiln::logs::setSink(nullptr);
    return;
  }
  kiln::logs::setSink([callback, userData](llvm::StringRef topic,
                                           llvm::StringRef text) {
    callback(userData, toC(topic), toC(text));
  });
}

bool kilnLogEnabled(KilnStringRef topic, bool verbose) {
  llvm::StringRef name;
  if (!toStringRef(topic, name))
    return false;
  std::optional<kiln::logs::Topic> t = kiln::logs::topicNamed(name);
  return t && kiln::logs::enabled(*t, verbose ? kiln::logs::Level::Verbose
                                              : kiln::logs::Level::Info);
}

KilnStatus kilnLog(KilnStringRef topic, KilnStringRef message) {
  CHECK_STRING("kilnLog", "topic", topic, name);
  CHECK_STRING("kilnLog", "message", message, text);
  std::optional<kiln::logs::Topic> t = kiln::logs::topicNamed(name);
  if (!t)
    return makeStatus("kilnLog: unknown log topic '" + name.str() + "'");
  if (kiln::logs::enabled(*t))
    kiln::logs::log(*t, text);
  return KilnStatus{nullptr};
}

KilnStatus kilnTraceOpen(KilnStringRef path) {
  CHECK_STRING("kilnTraceOpen", "path", path, text);
  std::string error;
  if (!kiln::trace::open(text, error))
    return makeStatus("kilnTraceOpen: " + error);
  return KilnStatus{nullptr};
}

KilnStatus kilnTraceFlush(void) {
  std::string error;
  if (!kiln::trace::flush(error))
    return makeStatus("kilnTraceFlush: " + error);
  return KilnStatus{nullptr};
}

uint64_t kilnTraceNowMicros(void) { return kiln::trace::nowMicros(); }

void kilnTraceRecord(KilnStringRef name, KilnStringRef category,
                     uint64_t startMicros, uint64_t durationMicros) {
  llvm::StringRef n, c;
  if (!toStringRef(name, n) || !toStringRef(category, c))
    return;
  kiln::trace::record(n, c, startMicros, durationMicros);
}
