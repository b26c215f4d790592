/*===-- kiln-c/Kiln.h - C API of the Kiln runtime -----------------*- C -*-===*\
|*                                                                            *|
|* Part of Kiln. A C API over runtime sessions: load a module of kg.programs, *|
|* set options, register host callbacks, call programs with DLPack tensors    *|
|* and read the statistics of the cache. See docs/c-api.md.                   *|
|*                                                                            *|
|* Conventions (those of the MLIR C API):                                     *|
|*  - Objects are opaque handles (a struct holding one pointer), passed by    *|
|*    value. A handle whose pointer is NULL is a "null" handle.               *|
|*  - A function named ...Create returns an object the caller owns and must   *|
|*    give back with the matching ...Destroy. Anything else returned is       *|
|*    borrowed, for as long as the comment of the function says.              *|
|*  - Every fallible function returns a KilnStatus: a null status is success; *|
|*    otherwise it carries a message and the caller owns (must destroy) it.   *|
|*    No function aborts on bad input: NULL handles and pointers, bad dtypes  *|
|*    and unknown names are reported through the status.                      *|
|*  - Strings are passed as KilnStringRef (pointer + length, not necessarily  *|
|*    NUL-terminated) and never owned by the receiver.                        *|
|*  - A session is thread-safe: calls of one session on several threads run   *|
|*    in parallel (docs/c-api.md, "Threading"). Distinct sessions are         *|
|*    independent.                                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_C_KILN_H
#define KILN_C_KILN_H

#include "kiln-c/DLPack.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define KILN_CAPI_EXPORTED __attribute__((visibility("default")))
#else
#define KILN_CAPI_EXPORTED
#endif

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Version
//===----------------------------------------------------------------------===//

/// The version of this header. The minor version grows with compatible
/// additions; the major version changes when something is removed or
/// changes meaning.
#define KILN_C_API_VERSION_MAJOR 0
#define KILN_C_API_VERSION_MINOR 4

/// The version of the library linked: (major << 16) | minor. A program built
/// against this header should check that the major versions agree.
KILN_CAPI_EXPORTED int kilnGetAPIVersion(void);

//===----------------------------------------------------------------------===//
// Handles and strings
//===----------------------------------------------------------------------===//

#define DEFINE_C_API_STRUCT(name, storage)                                     \
  struct name {                                                                \
    storage *ptr;                                                              \
  };                                                                           \
  typedef struct name name

/// A session: a loaded module, its options, callbacks, caches and stats.
DEFINE_C_API_STRUCT(KilnSession, void);
/// An error: a message. Null means success.
DEFINE_C_API_STRUCT(KilnStatus, void);
/// An ordered list of tensors owned by the list (results of a call, or the
/// outputs of a host callback).
DEFINE_C_API_STRUCT(KilnTensorList, void);

#undef DEFINE_C_API_STRUCT

/// A string that is not owned: `length` bytes at `data` (not necessarily
/// NUL-terminated). `data` may be NULL only when `length` is 0.
typedef struct KilnStringRef {
  const char *data;
  size_t length;
} KilnStringRef;

/// A string reference to `length` bytes at `str` (not copied).
static inline KilnStringRef kilnStringRefCreate(const char *str,
                                                size_t length) {
  KilnStringRef result;
  result.data = str;
  result.length = length;
  return result;
}

/// A string reference to the NUL-terminated `str` (not copied); NULL gives
/// the empty string.
KILN_CAPI_EXPORTED KilnStringRef kilnStringRefCreateFromCString(const char *str);

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

/// A new error status carrying a copy of `message`; owned by the caller (or
/// by Kiln once returned from a callback, which then destroys it).
KILN_CAPI_EXPORTED KilnStatus kilnStatusCreate(KilnStringRef message);

/// True for the null status (success).
static inline bool kilnStatusIsOk(KilnStatus status) { return !status.ptr; }

/// The message of an error status (empty for success), NUL-terminated and
/// valid until the status is destroyed.
KILN_CAPI_EXPORTED KilnStringRef kilnStatusGetMessage(KilnStatus status);

/// Destroys a status; the null status is accepted and ignored.
KILN_CAPI_EXPORTED void kilnStatusDestroy(KilnStatus status);

//===----------------------------------------------------------------------===//
// Tensor lists
//===----------------------------------------------------------------------===//

/// A new empty tensor list, owned by the caller.
KILN_CAPI_EXPORTED KilnTensorList kilnTensorListCreate(void);

/// Destroys a list and every tensor it holds; a null list is ignored.
KILN_CAPI_EXPORTED void kilnTensorListDestroy(KilnTensorList list);

static inline bool kilnTensorListIsNull(KilnTensorList list) {
  return !list.ptr;
}

/// The number of tensors in `list` (0 for a null list).
KILN_CAPI_EXPORTED size_t kilnTensorListSize(KilnTensorList list);

/// Tensor `index` of `list`, or NULL when out of range (or the list is null).
/// The descriptor, its shape and its data are owned by the list and stay
/// valid (at the same address) until the list is destroyed. Tensors in a list
/// are compact row-major (strides NULL, byte_offset 0) on the CPU; booleans
/// are kDLBool with 8 bits. The data is read-only (results of one call may
/// share a buffer).
KILN_CAPI_EXPORTED const DLTensor *kilnTensorListGet(KilnTensorList list,
                                                     size_t index);

/// Tensor `index` of `list` as a new DLManagedTensor that shares its buffer
/// (no copy) and is owned by the caller: the caller (or the framework it
/// hands it to, e.g. torch.utils.dlpack.from_dlpack through a "dltensor"
/// PyCapsule) calls its `deleter` exactly once. It stays valid after the list
/// is destroyed; the buffer is freed when both are gone. The same layout
/// rules as kilnTensorListGet apply; the data may be written by the owner
/// (other results of the same call may share it). Fails on a null list, an
/// index out of range or a NULL `out`. Since API version 0.2.
KILN_CAPI_EXPORTED KilnStatus kilnTensorListGetManaged(KilnTensorList list,
                                                       size_t index,
                                                       DLManagedTensor **out);

/// Appends a copy of `tensor` to `list`: its elements are copied (honoring
/// strides and byte_offset) into a new compact buffer owned by the list, so
/// `tensor` may be freed right after. Fails on a null list or tensor, an
/// unsupported dtype or device, a negative size, or NULL data with elements.
KILN_CAPI_EXPORTED KilnStatus kilnTensorListAppend(KilnTensorList list,
                                                   const DLTensor *tensor);

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

/// A new session with default options (backend=eager, no pipeline,
/// cache_size_limit=8, frozen=false, dynamic=auto); owned by the caller.
KILN_CAPI_EXPORTED KilnSession kilnSessionCreate(void);

/// Destroys a session, its module, caches and callbacks (user data given to
/// callbacks is not touched); a null session is ignored. Tensor lists and
/// statuses obtained from the session stay valid and must still be
/// destroyed.
KILN_CAPI_EXPORTED void kilnSessionDestroy(KilnSession session);

static inline bool kilnSessionIsNull(KilnSession session) {
  return !session.ptr;
}

/// Parses `text` (a module of kg.programs) and makes it the session's module,
/// replacing the previous one and clearing every cache and statistic.
/// `bufferName` names the text in error messages (may be empty). Parse
/// errors carry `bufferName:line:col`.
KILN_CAPI_EXPORTED KilnStatus kilnSessionLoadModule(KilnSession session,
                                                    KilnStringRef text,
                                                    KilnStringRef bufferName);

/// As kilnSessionLoadModule, for the file at `path`.
KILN_CAPI_EXPORTED KilnStatus kilnSessionLoadModuleFile(KilnSession session,
                                                        KilnStringRef path);

/// Sets an option. Keys and values:
///   backend           "eager" ("interpreter" is the same) or "cpu" (the
///                     graphs of each entry compiled by kiln-cpu + JIT)
///   pipeline          a pass pipeline (kiln-opt --pass-pipeline syntax
///                     without the builtin.module wrapper) run on every new
///                     cache entry; "" for none. Checked when set. One that
///                     ends in kiln-cpu or kiln-cpu{...} selects backend cpu.
///   cpu_fallback      "error" / "eager": a graph the cpu backend cannot
///                     compile fails the call, or warns and is interpreted
///   cache_size_limit  a positive integer: entries per program before the
///                     program stops recompiling and runs the fallback
///   frozen            "true" / "false": never compile, misses fall back
///   dynamic           "auto" / "static" / "dynamic"
///   cache_dir         cpu backend: the compiled-code disk cache's directory
///                     ("off" or "": none; starts as KILN_CACHE_DIR or
///                     ~/.cache/kiln; docs/codegen.md "Disk cache")
/// Unknown keys and invalid values give an error naming what is accepted.
/// The new value applies to the next compile (entries already in a cache
/// keep theirs, except that backend is part of every entry's guards).
KILN_CAPI_EXPORTED KilnStatus kilnSessionSetOption(KilnSession session,
                                                   KilnStringRef key,
                                                   KilnStringRef value);

/// The current value of option `key` in the syntax kilnSessionSetOption
/// takes, in `*value`: NUL-terminated, valid until the next call of a
/// kilnSession* function on this session from this thread.
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetOption(KilnSession session,
                                                   KilnStringRef key,
                                                   KilnStringRef *value);

/// torch._dynamo.mark_dynamic: dim `dim` of argument `arg` of `program` is
/// compiled dynamic from the next compile on (kilnSessionMarkStatic: kept
/// static even when its size changes). Fails when no module is loaded,
/// `program` is not a kg.program of it, or `arg` is out of range or not a
/// tensor argument. Marks are cleared when a module is loaded.
KILN_CAPI_EXPORTED KilnStatus kilnSessionMarkDynamic(KilnSession session,
                                                     KilnStringRef program,
                                                     size_t arg, size_t dim);
KILN_CAPI_EXPORTED KilnStatus kilnSessionMarkStatic(KilnSession session,
                                                    KilnStringRef program,
                                                    size_t arg, size_t dim);

//===----------------------------------------------------------------------===//
// Callbacks
//===----------------------------------------------------------------------===//

/// A host callback, run for each `kg.host_call @name` (graph breaks). The
/// `numInputs` descriptors at `inputs` are borrowed for the duration of the
/// call (compact, CPU, read-only data). The callback appends its results, in
/// order, to `outputs` with kilnTensorListAppend (which copies them; the
/// list is owned by Kiln, do not destroy it). It returns a null status on
/// success, or a status made with kilnStatusCreate, which Kiln destroys and
/// whose message becomes the error of the call that ran the program.
typedef KilnStatus (*KilnHostCallback)(void *userData, const DLTensor *inputs,
                                       size_t numInputs,
                                       KilnTensorList outputs);

/// Registers `callback` as host function `name` (replacing a callback of the
/// same name). `userData` is passed through and not owned; it must outlive
/// the registration. A program calling a name that has no callback fails at
/// run time with "no host callback is registered as 'name'".
KILN_CAPI_EXPORTED KilnStatus kilnSessionRegisterHostCallback(
    KilnSession session, KilnStringRef name, KilnHostCallback callback,
    void *userData);

/// An on-miss callback: called when a call of `program` misses every cache
/// entry (and the program may still compile), with the call's arguments
/// (borrowed for the duration of the callback; host scalars are 0-d
/// tensors) and the guard failure that caused the miss (empty for the first
/// compile). It returns, in `*moduleText`, the text of a module holding a
/// kg.program named `program` for these inputs (as a frontend that
/// re-captures would): the text is copied as soon as the callback returns,
/// so it only has to stay valid until then (e.g. a buffer owned by
/// `userData`). Returning an error status fails the call with its message.
typedef KilnStatus (*KilnMissCallback)(void *userData, KilnStringRef program,
                                       const DLTensor *args, size_t numArgs,
                                       KilnStringRef reason,
                                       KilnStringRef *moduleText);

/// Sets the session's on-miss callback; a NULL callback goes back to
/// specializing the loaded module (the default).
KILN_CAPI_EXPORTED KilnStatus kilnSessionSetMissCallback(
    KilnSession session, KilnMissCallback callback, void *userData);

/// Receives warnings (e.g. a program reaching cache_size_limit, with its
/// recompile reasons). `message` is borrowed for the duration of the call.
typedef void (*KilnWarningCallback)(void *userData, KilnStringRef message);

/// Sets where warnings go; NULL restores the default (printed on stderr).
KILN_CAPI_EXPORTED KilnStatus kilnSessionSetWarningCallback(
    KilnSession session, KilnWarningCallback callback, void *userData);

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

/// Per-argument flags of kilnSessionCall.
enum {
  /// The tensor requires grad (guarded as `requires_grad`).
  KILN_ARG_REQUIRES_GRAD = 1u << 0,
};

/// Calls `program` with `numArgs` arguments: evaluates the guards of its cache
/// entries, compiles a new entry on a miss (or runs the fallback when frozen
/// or at cache_size_limit), and runs it.
///
/// Arguments are DLPack descriptors, read in place (no ownership, only
/// used during the call; not modified, except the memory of `!kt.ref`
/// arguments, which the program writes: a row-major ref that overlaps no
/// other argument is written as the program runs, so a call that fails
/// midway leaves what it wrote before the failure; other refs, and every
/// ref when the session has a repro_dir, are written back only when the
/// call succeeds; docs/runtime.md "Ref arguments"). Strides (in elements) and
/// byte_offset are honored. Element types: kDLFloat 16/32/64, kDLBfloat 16,
/// kDLInt 8/16/32/64, kDLUInt 8, kDLBool 8; lanes must be 1. Only kDLCPU tensors are
/// accepted (the runtime reads data on the host); other devices fail.
/// Where the program's argument type is a scalar (f32, i64, i1, ...) and
/// not a tensor, the argument is passed as a 0-d (or one-element) tensor and
/// becomes a host scalar of the tensor's dtype. `argFlags` is NULL or
/// `numArgs` KILN_ARG_* bit sets.
///
/// On success `*results` receives a new list, owned by the caller, of the
/// program's results; on failure it is set to the null list.
KILN_CAPI_EXPORTED KilnStatus kilnSessionCall(KilnSession session,
                                              KilnStringRef program,
                                              const DLTensor *args,
                                              size_t numArgs,
                                              const uint32_t *argFlags,
                                              KilnTensorList *results);

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

/// The cache statistics of one program.
typedef struct KilnProgramStats {
  uint64_t calls;
  /// Calls that hit a cache entry.
  uint64_t hits;
  /// Calls that hit none (each compiles, or falls back).
  uint64_t misses;
  /// Cache entries compiled.
  uint64_t compiles;
  /// Calls run by the fallback (cache_size_limit reached, or frozen).
  uint64_t fallbacks;
  /// Guard failures that caused a recompile or a fallback
  /// (kilnSessionGetRecompileReason).
  size_t numRecompileReasons;
  /// Compile phases timed (kilnSessionGetCompilePhase).
  size_t numCompilePhases;
  /// Cache entries (kilnSessionGetEntryIR).
  size_t numEntries;
  /// Seconds spent compiling, all entries together.
  double totalCompileSeconds;
} KilnProgramStats;

/// Fills `*stats` with the statistics of `program` since the module was
/// loaded (all zero before its first call). Fails when `program` is not a
/// kg.program of the loaded module.
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetStats(KilnSession session,
                                                  KilnStringRef program,
                                                  KilnProgramStats *stats);

/// Recompile reason `index` (0 <= index < numRecompileReasons, oldest
/// first), in TorchDynamo's words ("tensor 'a' size mismatch at index 0.
/// expected 10, actual 20"). `*reason` is valid until the next kilnSession*
/// call on this session from this thread.
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetRecompileReason(
    KilnSession session, KilnStringRef program, size_t index,
    KilnStringRef *reason);

/// Compile phase `index` (0 <= index < numCompilePhases, sorted by name):
/// "specialize", "compile-guards" or a pass of the pipeline (by its
/// argument), and the seconds spent in it summed over compiles. `*name` is
/// valid until the next kilnSession* call on this session from this thread.
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetCompilePhase(
    KilnSession session, KilnStringRef program, size_t index,
    KilnStringRef *name, double *seconds);

/// The specialized program of cache entry `index` (0 <= index < numEntries)
/// as text; valid until the next kilnSession* call on this session from this
/// thread.
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetEntryIR(KilnSession session,
                                                    KilnStringRef program,
                                                    size_t index,
                                                    KilnStringRef *ir);

//===----------------------------------------------------------------------===//
// Transforms
//===----------------------------------------------------------------------===//

/// Parses and verifies the module in `text`, runs the pass `pipeline` on it
/// (a kiln-opt pipeline: "kiln-autodiff,kiln-partition{policy=mincut}" or
/// "builtin.module(...)"; every Kiln pass and pipeline is registered) and
/// prints the result, with its locations, into `*out`: valid until the next
/// kilnSession* call on this session. The session's loaded module and its
/// caches are not touched. A parse error, an invalid pipeline or a failing
/// pass is an error status whose message carries the locations ("<transform>:
/// 3:5: ..." for the text, the ops' own locations for pass errors). A frontend
/// uses it to build programs it then loads (the Python package builds its
/// training programs with kiln-autodiff and kiln-partition). (Since API
/// version 0.3.)
KILN_CAPI_EXPORTED KilnStatus kilnSessionTransformModule(KilnSession session,
                                                         KilnStringRef text,
                                                         KilnStringRef pipeline,
                                                         KilnStringRef *out);

/// The cache entry that ran the calling thread's last call of `program`: its index in compile
/// order (the index of kilnSessionGetEntryIR), or -1 when the fallback ran
/// it (frozen, cache_size_limit), when it failed, or before any call.
/// A client that compiles a different capture per entry (an on-miss callback
/// returning new text) reads it to map the results with the capture that
/// produced them. (Since API version 0.3.)
KILN_CAPI_EXPORTED KilnStatus kilnSessionGetLastEntry(KilnSession session,
                                                      KilnStringRef program,
                                                      int64_t *entry);

//===----------------------------------------------------------------------===//
// Logs and traces (process-wide; since API version 0.4)
//===----------------------------------------------------------------------===//

/// Sets which topics Kiln logs, as the KILN_LOGS environment variable does
/// (and replacing it): a comma list of graph_breaks, recompiles, guards,
/// graph, fusion, partition, codegen, perf or all, each optionally prefixed
/// with `+` (verbose) or `-` (off); "" turns every topic off. An unknown
/// topic is an error naming it and the valid ones, and changes nothing.
/// See docs/debugging.md, "Logs".
KILN_CAPI_EXPORTED KilnStatus kilnSetLogs(KilnStringRef spec);

/// Receives each log message (without the `[kiln:<topic>] ` prefix the
/// default output adds); `topic` and `message` are borrowed for the call.
/// May be called from any thread Kiln compiles or runs on.
typedef void (*KilnLogCallback)(void *userData, KilnStringRef topic,
                                KilnStringRef message);

/// Sets where log messages go; NULL restores the default (stderr, or the
/// file KILN_LOGS_FILE names).
KILN_CAPI_EXPORTED void kilnSetLogCallback(KilnLogCallback callback,
                                           void *userData);

/// Whether `topic` is logged (with `verbose` nonzero: at the verbose level).
/// False for an unknown topic.
KILN_CAPI_EXPORTED bool kilnLogEnabled(KilnStringRef topic, bool verbose);

/// Logs `message` under `topic` when that topic is on (a frontend's own
/// events, e.g. the graph breaks its tracer finds). An unknown topic is an
/// error.
KILN_CAPI_EXPORTED KilnStatus kilnLog(KilnStringRef topic,
                                      KilnStringRef message);

/// Starts recording a Chrome trace into `path`, as KILN_TRACE=path does:
/// compile phases (each pass, the CPU backend's LLVM phases), program calls
/// and kernel runs, written as JSON at exit and by kilnTraceFlush. Fails,
/// naming the path, when no file can be created there.
KILN_CAPI_EXPORTED KilnStatus kilnTraceOpen(KilnStringRef path);

/// Writes the events recorded so far to the trace file (all or nothing);
/// success when no trace is open.
KILN_CAPI_EXPORTED KilnStatus kilnTraceFlush(void);

/// The trace clock (microseconds), and a frontend's own event on it
/// (`category` e.g. "capture"); recorded only while a trace is open.
KILN_CAPI_EXPORTED uint64_t kilnTraceNowMicros(void);
KILN_CAPI_EXPORTED void kilnTraceRecord(KilnStringRef name,
                                        KilnStringRef category,
                                        uint64_t startMicros,
                                        uint64_t durationMicros);

#ifdef __cplusplus
}
#endif

#endif // KILN_C_KILN_H
