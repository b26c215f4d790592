//===- kiln-fuzz-capi.cpp - libFuzzer harness: the C API ------------------===//
//
// Part of Kiln (docs/debugging.md, "Fuzzing"). The bytes are a script of C
// API calls (include/kiln-c/Kiln.h) with random arguments: null sessions,
// lists and statuses, strings that are not NUL-terminated, NULL data with a
// length, unknown options and values, program names and indices out of
// range, modules that are valid, invalid or mutated, and DLPack tensors with
// any dtype code, bits, lanes, device, ndim, shape (negative, huge), strides
// (NULL, negative, zero, overflowing), byte_offset and NULL data. Every call
// must return (an error status where the arguments are wrong), never crash.
// Since fz27 the bad handles include destroyed ones (docs/c-api.md,
// "Handles"): every other "null session" or "null list" of a script is a
// destroyed one instead, a call's results and a status are used and
// destroyed again after their destroy, and the script's session is used
// after it is destroyed (no extra bytes: old seeds read the same). Each must
// be an error naming the function and "not a live handle", or ignored.
// The harness only lies about what the C API cannot check: a descriptor's
// data always covers what its shape and strides reach, when that is
// computable and small (else the tensor is made to overflow int64, which
// the API must reject, or its data is NULL).
//
//===----------------------------------------------------------------------===//

#include "kiln-c/Kiln.h"
#include "kiln/Testing/ProgramGenerator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using kiln::testing::ByteSource;

namespace {

const char *const kModules[] = {
    // A program with one graph.
    "kg.program @p(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %y = kg.graph @p_g0(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> "
    "tensor<?xf32> {\n"
    "  ^bb0(%x: tensor<?xf32>, %z: tensor<?xf32>):\n"
    "    %s = kt.add %x, %z : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
    "    %t = kt.tanh %s : (tensor<?xf32>) -> tensor<?xf32>\n"
    "    kg.yield %t : tensor<?xf32>\n"
    "  }\n"
    "  kg.return %y : tensor<?xf32>\n"
    "}\n",
    // Static shapes, an integer argument.
    "kg.program @q(%a: tensor<2x3xf32>, %i: tensor<3xi64>) -> tensor<2x3xf32> "
    "{\n"
    "  %y = kg.graph @q_g0(%a, %i) : (tensor<2x3xf32>, tensor<3xi64>) -> "
    "tensor<2x3xf32> {\n"
    "  ^bb0(%x: tensor<2x3xf32>, %j: tensor<3xi64>):\n"
    "    %c = kt.cast %j {dtype = f32} : (tensor<3xi64>) -> tensor<3xf32>\n"
    "    %s = kt.mul %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> "
    "tensor<2x3xf32>\n"
    "    kg.yield %s : tensor<2x3xf32>\n"
    "  }\n"
    "  kg.return %y : tensor<2x3xf32>\n"
    "}\n",
    "kg.program @p(%a: tensor<2xf32>) {\n  kg.bogus\n}\n",
    "",
};
const char *const kPrograms[] = {"p", "q", "", "p_g0", "nope"};
const char *const kKeys[] = {"backend", "pipeline", "cpu_fallback",
                             "cache_size_limit", "frozen", "dynamic", "mode",
                             ""};
const char *const kValues[] = {"eager", "cpu", "interpreter", "inductor",
                               "kiln-decompose", "kiln-cpu", "kiln-cpu{fuse=false}",
                               "no-such-pass", "builtin.module(", "error",
                               "1", "0", "-1", "99999999999999999999", "true",
                               "false", "auto", "static", "dynamic", ""};
const char *const kPipelines[] = {"kiln-decompose", "kiln-autodiff",
                                  "kiln-functionalize", "builtin.module(kiln-fuse)",
                                  "kiln-partition{policy=mincut}", "",
                                  "no-such-pass", "kiln-cpu"};
const char *const kPaths[] = {"/nonexistent/x.mlir", "", "/", "/dev/null"};

struct Script {
  ByteSource in;
  std::vector<std::string> strings; // keeps string data alive
  std::vector<std::vector<uint8_t>> buffers;

  template <size_t N> const char *from(const char *const (&xs)[N]) {
    return xs[in.pick(N)];
  }
  /// A string argument: from `xs`, a few raw bytes (not NUL-terminated), or
  /// NULL with a length (invalid by contract: must be an error).
  KilnStringRef str(const char *const *xs, size_t n) {
    switch (in.pick(8)) {
    case 0: {
      std::string s;
      unsigned len = in.pick(12);
      for (unsigned i = 0; i < len; ++i)
        s.push_back(char(in.pick(256)));
      strings.push_back(s);
      // Exactly `len` bytes, in a buffer with no NUL after them.
      buffers.emplace_back(s.begin(), s.end());
      return kilnStringRefCreate(
          reinterpret_cast<const char *>(buffers.back().data()), len);
    }
    case 1:
      return kilnStringRefCreate(nullptr, in.pick(2) ? 0 : 5);
    default: {
      const char *s = xs[in.pick(n)];
      return kilnStringRefCreate(s, strlen(s));
    }
    }
  }
  /// Handles destroyed before the script starts.
  KilnSession dead{nullptr};
  KilnTensorList deadList{nullptr};
  unsigned badHandles = 0;
  KilnSession session(KilnSession s) {
    if (!in.chance(1, 16))
      return s;
    return badHandles++ % 2 ? dead : KilnSession{nullptr};
  }
  KilnTensorList list(KilnTensorList l) {
    if (!in.chance(1, 8))
      return l;
    return badHandles++ % 2 ? deadList : KilnTensorList{nullptr};
  }

  /// A DLPack tensor (valid or not) with its data kept alive here.
  DLTensor tensor() {
    DLTensor t;
    memset(&t, 0, sizeof t);
    static const uint8_t codes[] = {kDLInt, kDLUInt, kDLFloat, kDLBfloat,
                                    kDLBool, 7, 255};
    static const uint8_t bits[] = {32, 32, 64, 16, 8, 1, 0, 128};
    t.dtype.code = codes[in.pick(std::size(codes))];
    t.dtype.bits = bits[in.pick(std::size(bits))];
    t.dtype.lanes = in.chance(1, 16) ? 4 : 1;
    t.device.device_type = in.chance(1, 16) ? kDLCUDA : kDLCPU;
    if (in.chance(1, 32))
      t.device.device_type = DLDeviceType(in.pick(256));
    int ndim = in.pick(5);
    if (in.chance(1, 32))
      ndim = -1 - int(in.pick(3));
    t.ndim = ndim;
    auto &shape = buffers.emplace_back(sizeof(int64_t) * 8, 0);
    auto &stride = buffers.emplace_back(sizeof(int64_t) * 8, 0);
    int64_t *sh = reinterpret_cast<int64_t *>(shape.data());
    int64_t *st = reinterpret_cast<int64_t *>(stride.data());
    bool huge = false;
    for (int i = 0; i < std::max(ndim, 0); ++i) {
      switch (in.pick(8)) {
      case 0: sh[i] = 0; break;
      case 1: sh[i] = -1 - int64_t(in.pick(4)); break;
      case 2: sh[i] = int64_t(1) << (32 + in.pick(31)); huge = true; break;
      default: sh[i] = 1 + in.pick(4);
      }
    }
    t.shape = ndim > 0 || in.chance(1, 2) ? sh : nullptr;
    bool strided = in.chance(1, 3);
    int64_t contiguous = 1;
    for (int i = std::max(ndim, 0) - 1; i >= 0; --i) {
      st[i] = contiguous;
      if (strided)
        switch (in.pick(4)) {
        case 0: st[i] = 0; break;
        case 1: st[i] = -int64_t(1 + in.pick(3)); break;
        case 2: st[i] = int64_t(1) << (40 + in.pick(23)); huge = true; break;
        default: st[i] = 1 + in.pick(3);
        }
      // (Saturates: a stride past int64 is a lie the descriptor makes, which
      // the span check below turns into a huge tensor.)
      if (__builtin_mul_overflow(contiguous, sh[i] > 0 ? sh[i] : 1, &contiguous))
        contiguous = INT64_MAX, huge = true;
    }
    t.strides = strided ? st : nullptr;
    // The bytes the tensor reaches, from byte_offset: [lo, hi) elements
    // around the first one.
    size_t elem = t.dtype.bits ? (size_t(t.dtype.bits) * t.dtype.lanes + 7) / 8 : 1;
    __int128 lo = 0, hi = 1;
    bool empty = false;
    for (int i = 0; i < std::max(ndim, 0); ++i) {
      if (sh[i] <= 0) {
        empty = true;
        continue;
      }
      __int128 step = __int128(strided ? st[i] : st[i]) * (sh[i] - 1);
      if (step < 0)
        lo += step;
      else
        hi += step;
      // Saturate at 2^100: several steps near 2^126 overflow __int128, and
      // so did the span in bytes below (UBSan, in this harness, seed
      // crash-fa562426-regression); only "more than 4096 bytes" matters.
      const __int128 cap = __int128(1) << 100;
      lo = std::max(lo, -cap);
      hi = std::min(hi, cap);
    }
    __int128 spanBytes = (hi - lo) * __int128(elem);
    if (in.chance(1, 16) || huge || spanBytes > 4096) {
      // NULL data, or a size the API must refuse before reading: point at a
      // small buffer that is not what the descriptor claims only when the
      // claim overflows int64 (then nothing may be read).
      t.data = nullptr;
      if (huge && in.chance(1, 2)) {
        auto &b = buffers.emplace_back(64, 0);
        t.data = b.data();
        // Only where the element count itself overflows int64 may a
        // descriptor lie about its data: keep it when it does.
        // (Stops growing past int64: a product of several dims near 2^63
        // overflows even __int128; UBSan, seed crash-7b89bc3d-regression.)
        __int128 count = 1;
        for (int i = 0; i < std::max(ndim, 0); ++i)
          if (count <= INT64_MAX)
            count *= sh[i] > 0 ? sh[i] : 1;
        // (count can be ~2^126 here: compare before multiplying by elem.)
        if ((count <= INT64_MAX && count * __int128(elem) <= INT64_MAX) ||
            empty)
          t.data = nullptr;
      }
      return t;
    }
    size_t bytes = size_t(spanBytes) + 64;
    auto &b = buffers.emplace_back(bytes, 0);
    for (size_t i = 0; i < bytes; ++i)
      b[i] = uint8_t(in.pick(256));
    // Booleans must be 0 or 1.
    if (t.dtype.code == kDLBool)
      for (auto &x : b)
        x &= 1;
    uint64_t offset = uint64_t(-lo * __int128(elem));
    if (in.chance(1, 2)) {
      t.data = b.data();
      t.byte_offset = offset;
    } else {
      t.data = b.data() + offset;
    }
    return t;
  }
};

/// Every error status of Kiln has a NUL-terminated message that names the
/// function.
void use(KilnStatus s) {
  KilnStringRef m = kilnStatusGetMessage(s);
  if (s.ptr && (!m.data || m.data[m.length] != '\0' ||
                strncmp(m.data, "kiln", 4) != 0)) {
    fprintf(stderr, "an error status without a proper message: '%.*s'\n",
            int(m.length), m.data ? m.data : "");
    abort();
  }
  kilnStatusDestroy(s);
}

/// A call given a destroyed handle: an error that names the function and
/// says the handle is not live.
void useDead(KilnStatus s) {
  KilnStringRef m = kilnStatusGetMessage(s);
  if (!s.ptr || !m.data || strncmp(m.data, "kiln", 4) != 0 ||
      !strstr(m.data, "not a live handle")) {
    fprintf(stderr, "a destroyed handle was not an error naming it: '%.*s'\n",
            int(m.length), m.data ? m.data : "");
    abort();
  }
  kilnStatusDestroy(s);
}

/// A destroyed list reads as empty and is ignored by destroy.
void checkDeadList(KilnTensorList l) {
  if (kilnTensorListSize(l) != 0 || kilnTensorListGet(l, 0)) {
    fprintf(stderr, "a destroyed list still has tensors\n");
    abort();
  }
  DLManagedTensor *m = nullptr;
  useDead(kilnTensorListGetManaged(l, 0, &m));
  kilnTensorListDestroy(l);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Script sc{ByteSource(llvm::ArrayRef(data, size)), {}, {}};
  sc.dead = kilnSessionCreate();
  kilnSessionDestroy(sc.dead);
  sc.deadList = kilnTensorListCreate();
  kilnTensorListDestroy(sc.deadList);
  KilnSession s = kilnSessionCreate();
  KilnTensorList kept = kilnTensorListCreate();
  sc.buffers.reserve(4096);
  for (unsigned step = 0; step < 24 && !sc.in.empty(); ++step) {
    switch (sc.in.pick(12)) {
    case 0: // load a module, one of the fixed ones or mutated
      use(kilnSessionLoadModule(sc.session(s),
                                sc.str(kModules, std::size(kModules)),
                                sc.str(kPrograms, std::size(kPrograms))));
      break;
    case 1:
      use(kilnSessionLoadModuleFile(sc.session(s),
                                    sc.str(kPaths, std::size(kPaths))));
      break;
    case 2:
      use(kilnSessionSetOption(sc.session(s), sc.str(kKeys, std::size(kKeys)),
                               sc.str(kValues, std::size(kValues))));
      break;
    case 3: {
      KilnStringRef v{nullptr, 0};
      use(kilnSessionGetOption(sc.session(s), sc.str(kKeys, std::size(kKeys)),
                               sc.in.chance(1, 8) ? nullptr : &v));
      break;
    }
    case 4:
    case 5: { // a call
      unsigned n = sc.in.pick(4);
      std::vector<DLTensor> args;
      for (unsigned i = 0; i < n; ++i)
        args.push_back(sc.tensor());
      std::vector<uint32_t> flags(n, 0);
      for (auto &f : flags)
        f = sc.in.pick(4);
      KilnTensorList results{nullptr};
      use(kilnSessionCall(sc.session(s), sc.str(kPrograms, std::size(kPrograms)),
                          n && sc.in.chance(1, 16) ? nullptr : args.data(), n,
                          sc.in.chance(1, 2) ? nullptr : flags.data(),
                          sc.in.chance(1, 16) ? nullptr : &results));
      for (size_t i = 0; i < kilnTensorListSize(results) + 1; ++i)
        (void)kilnTensorListGet(results, i);
      kilnTensorListDestroy(results);
      if (results.ptr)
        checkDeadList(results); // used and destroyed again
      break;
    }
    case 6: {
      size_t arg = sc.in.chance(1, 8) ? SIZE_MAX : sc.in.pick(4);
      size_t dim = sc.in.chance(1, 8) ? SIZE_MAX : sc.in.pick(4);
      KilnStringRef p = sc.str(kPrograms, std::size(kPrograms));
      use(sc.in.chance(1, 2) ? kilnSessionMarkDynamic(sc.session(s), p, arg, dim)
                             : kilnSessionMarkStatic(sc.session(s), p, arg, dim));
      break;
    }
    case 7: {
      KilnProgramStats stats;
      KilnStringRef p = sc.str(kPrograms, std::size(kPrograms));
      use(kilnSessionGetStats(sc.session(s), p,
                              sc.in.chance(1, 8) ? nullptr : &stats));
      size_t index = sc.in.chance(1, 4) ? SIZE_MAX : sc.in.pick(4);
      KilnStringRef out{nullptr, 0};
      double seconds = 0;
      int64_t entry = 0;
      switch (sc.in.pick(4)) {
      case 0: use(kilnSessionGetRecompileReason(sc.session(s), p, index, &out)); break;
      case 1: use(kilnSessionGetCompilePhase(sc.session(s), p, index, &out, &seconds)); break;
      case 2: use(kilnSessionGetEntryIR(sc.session(s), p, index, &out)); break;
      case 3: use(kilnSessionGetLastEntry(sc.session(s), p, &entry)); break;
      }
      break;
    }
    case 8: {
      KilnStringRef out{nullptr, 0};
      use(kilnSessionTransformModule(sc.session(s),
                                     sc.str(kModules, std::size(kModules)),
                                     sc.str(kPipelines, std::size(kPipelines)),
                                     sc.in.chance(1, 8) ? nullptr : &out));
      break;
    }
    case 9: { // tensor lists
      DLTensor t = sc.tensor();
      KilnTensorList l = sc.list(kept);
      use(kilnTensorListAppend(l, sc.in.chance(1, 16) ? nullptr : &t));
      size_t i = sc.in.chance(1, 4) ? SIZE_MAX : sc.in.pick(4);
      (void)kilnTensorListGet(l, i);
      DLManagedTensor *m = nullptr;
      use(kilnTensorListGetManaged(l, i, sc.in.chance(1, 8) ? nullptr : &m));
      if (m)
        m->deleter(m);
      break;
    }
    case 10: {
      KilnStatus st = kilnStatusCreate(sc.str(kValues, std::size(kValues)));
      (void)kilnStatusGetMessage(st);
      kilnStatusDestroy(st);
      // Destroyed: its message says so, a second destroy is ignored.
      if (!strstr(kilnStatusGetMessage(st).data, "not a live handle")) {
        fprintf(stderr, "a destroyed status still has its message\n");
        abort();
      }
      kilnStatusDestroy(st);
      use(KilnStatus{nullptr});
      (void)kilnStringRefCreateFromCString(nullptr);
      break;
    }
    case 11:
      use(kilnSessionSetWarningCallback(sc.session(s), nullptr, nullptr));
      use(kilnSessionSetMissCallback(sc.session(s), nullptr, nullptr));
      use(kilnSessionRegisterHostCallback(sc.session(s),
                                          sc.str(kPrograms, std::size(kPrograms)),
                                          nullptr, nullptr));
      break;
    }
  }
  kilnTensorListDestroy(kept);
  kilnSessionDestroy(s);
  kilnSessionDestroy(KilnSession{nullptr});
  // The script's session and list, used after their destroy.
  useDead(kilnSessionLoadModule(s, kilnStringRefCreate(kModules[0],
                                                       strlen(kModules[0])),
                                kilnStringRefCreate("m", 1)));
  KilnTensorList results{nullptr};
  useDead(kilnSessionCall(s, kilnStringRefCreate("p", 1), nullptr, 0, nullptr,
                          &results));
  KilnProgramStats stats;
  useDead(kilnSessionGetStats(s, kilnStringRefCreate("p", 1), &stats));
  kilnSessionDestroy(s);
  checkDeadList(kept);
  return 0;
}
