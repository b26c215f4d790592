//===- CPUCodegen.h - Tiling, vectorization, threads, matmul choice -*- C++ -*-===//
//
// Part of Kiln. The library behind the kiln-cpu passes that make fast host
// code out of linalg on tensors (docs/codegen.md, "Fast CPU code"):
//
// * tileAndVectorize: every linalg op gets an scf.forall over its outermost
//   parallel dim split across the threads (unless it already sits in an
//   scf.forall, e.g. a kiln-fuse kernel), then register tiles (scf.for) that
//   linalg vectorization turns into vector ops: pointwise ops by rows of
//   vector width, row reductions as partial reductions into a vector
//   accumulator, matmuls as [MR x NR x 1] outer-product tiles.
// * selectMatmulImpl: the `kiln.matmul_impl` attribute ("openblas" or
//   "generated") on every linalg matmul, from a measured per-shape-class table.
// * lowerMatmulsToBLAS: bufferized matmuls marked "openblas" become calls to
//   cblas_sgemm / cblas_dgemm.
// * selectConvImpl / convToIm2colMatmul: the `kiln.conv_impl` choice
//   ("im2col" or "direct") for every f32/f64 linalg 2-D conv; im2col
//   rewrites the conv into a per-sample patch copy and a linalg.matmul.
// * padAsFillAndCopy / padsAsFillAndCopy: a constant tensor.pad (conv and
//   pool inputs, kt.pad) as a fill + linalg.copy that tiles and vectorizes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_CPU_CPUCODEGEN_H
#define KILN_CONVERSION_CPU_CPUCODEGEN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace kiln::cpu {

/// The unit attribute on the func.func of an outlined kernel.
inline constexpr llvm::StringLiteral kKernelFunctionAttr = "kiln.kernel_function";

/// What outlineKernels did: kernel functions made, calls to a kernel
/// function made before (identical kernels), call sites in all.
struct OutlineStats {
  unsigned kernels = 0, reused = 0, calls = 0;
};

/// Moves every kernel of every function body (a kt.fusion, or a kt op that
/// computes: not a shape, creation or constant op) into a private func.func
/// of its own (attribute kKernelFunctionAttr) and calls it; kernels
/// identical up to value names and locations share one function. Constant
/// operands are cloned into the kernel. Run before lowering, so that each
/// later stage works on small functions.
OutlineStats outlineKernels(mlir::ModuleOp module);

/// Vector register width of the host CPU in bits: 512 with AVX-512F, 256
/// with AVX2, else 128.
unsigned hostVectorBits();

/// Cores of the host (the default thread count).
unsigned hostCores();

struct TileVectorizeOptions {
  unsigned threads = 1;      ///< scf.forall iterations per op (1: none)
  unsigned vectorBits = 256; ///< register width the tiles are sized for
  /// Ops with fewer iterations than this stay on one thread.
  int64_t minParallelWork = 1 << 15;
};

/// Whether the host CPU has AVX-512F (vscalefps, 512-bit registers).
bool hostHasAVX512();

/// The cheaper f32 exp on AVX-512 (FastExp.cpp; docs/codegen.md "A cheaper
/// f32 exp on AVX-512"): clamp to [kFastExpMinArg, kFastExpMaxArg] (NaN
/// kept), n = rint(x log2 e), r = x - n ln2 in two steps, a degree-6
/// polynomial of e^r, then vscalefps(p, n) (kScalefIntrinsic): 14 ops per
/// register against ~25 for MLIR's polynomial approximation; within 1.06
/// ulp of exp rounded to f32 over all of f32, +-inf, NaN and denormal
/// results included.
inline constexpr float kFastExpMaxArg = 89.0f;
inline constexpr float kFastExpMinArg = -104.0f;
inline constexpr llvm::StringLiteral kScalefIntrinsic =
    "llvm.x86.avx512.mask.scalef.ps.512";

/// Whether the fast exp applies to `op`: an f32 scalar, or a vector of f32
/// of static (non-scalable) shape.
bool isFastExpCandidate(mlir::math::ExpOp op);

/// Builds that exp of `x` (an f32 scalar or static vector of f32) at `b`'s
/// insertion point and returns it. The code calls an x86 intrinsic: only
/// for a target with AVX-512F.
mlir::Value buildFastExpAVX512(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value x);

/// Adds the pattern rewriting each fast-exp candidate math.exp with
/// buildFastExpAVX512 (benefit 2: ahead of MLIR's polynomial
/// approximation if both are in one set).
void populateFastExpAVX512Patterns(mlir::RewritePatternSet &patterns);

/// The value of the `fast-exp` option of kiln-cpu-lower-vectors: "auto" or
/// "true" (the AVX-512 exp where the host has AVX-512F), "avx512" (always:
/// tests, or a target known to have it), "false" or "off" (MLIR's
/// polynomial approximation). Whether to use the AVX-512 exp; failure for
/// any other value.
mlir::FailureOr<bool> resolveFastExp(llvm::StringRef option);

/// Lowers the online row max and sum of exp (the two-result generic of
/// KTToLinalgOptions::onlineRowStats, its exp marked kiln.online_lse; rows
/// [R, C] or one row [C] of f32 or f64, the classes innermost) to scf.for
/// loops over the rows and vector steps of 4 registers of `vectorBits`
/// (OnlineRowStats.cpp): one read of each row. Fails, leaving the op, for
/// any other op (f16/bf16 inputs, a fused prologue), which then stays a
/// scalar loop.
mlir::LogicalResult lowerOnlineRowStats(mlir::RewriterBase &rewriter,
                                        mlir::linalg::LinalgOp op,
                                        unsigned vectorBits);

/// Lowers layer_norm's one-read row moments (the three-result generic of
/// KTToLinalgOptions::rowMoments, its divide marked kiln.row_moments; rows
/// [R, C] or one row [C] of f32 or f64) to scf.for loops over the rows and
/// blocks of the row (OnlineRowStats.cpp): per block a shift (its mean)
/// from the row's only read, the sums of x - shift and its square from L1
/// (prefetching the next row meanwhile: memref.prefetch through a read-only
/// bufferization.to_buffer of the input), merged in f64. Fails, leaving the op (a scalar loop), for any other op.
mlir::LogicalResult lowerRowMoments(mlir::RewriterBase &rewriter,
                                    mlir::linalg::LinalgOp op,
                                    unsigned vectorBits);

/// Tiles and vectorizes every linalg op on tensors in `fn` (see above). Ops
/// marked kiln.matmul_impl = "openblas" are left alone; an op that the
/// vectorizer rejects keeps its tiling and becomes scalar loops later.
void tileAndVectorize(mlir::func::FuncOp fn, const TileVectorizeOptions &o);

/// Rewrites vector transfers of i1 from and to memrefs into transfers of i8
/// (a bool is one byte in memory; LLVM would load and store vectors of i1 as
/// packed bits): reads compare the bytes with 0, writes store 0 or 1. For
/// bufferized code, before the transfers are lowered (kiln-cpu-lower-vectors).
void populateByteBoolTransferPatterns(mlir::RewritePatternSet &patterns);

/// linalg.matmul / linalg.batch_matmul with their default indexing maps (no
/// transposed or broadcast operands).
bool isPlainMatmul(mlir::Operation *op);

/// Fuses cheap all-parallel linalg.generic producers into the generics that
/// read them (upstream elementwise fusion with Kiln's control; see
/// ElementwiseFusion.cpp). A producer with more than `maxBodyOps` body ops
/// stays.
void fuseElementwise(mlir::func::FuncOp fn, unsigned maxBodyOps = 24);

/// The attribute naming a matmul's implementation.
inline constexpr llvm::StringLiteral kMatmulImplAttr = "kiln.matmul_impl";

/// Unit attribute on a contraction marked "openblas" whose init was a fill
/// of zeros: the init is undefined and the product overwrites it (beta = 0).
inline constexpr llvm::StringLiteral kMatmulZeroInitAttr =
    "kiln.matmul_zero_init";

/// How a linalg contraction maps onto one (batched) GEMM: C is
/// [batch?, M, N]; A is [batch?, M, K] or, transposed, [batch?, K, M]; B is
/// [batch?, K, N] or [batch?, N, K]. An operand without the batch dim is
/// shared by every batch element.
struct GemmForm {
  bool batched = false;
  bool transA = false, transB = false;
  bool batchedA = false, batchedB = false;
};

/// The GEMM form of `op` (any linalg op: named matmuls or a generic with a
/// multiply-add body), if it has one: f32 or f64 operands of one type, one
/// reduction loop, at most one batch loop.
std::optional<GemmForm> matchGemm(mlir::Operation *op);

/// Marks every linalg.matmul / linalg.batch_matmul with f32 or f64 operands
/// `kiln.matmul_impl = "openblas"` or `"generated"`, and every other
/// contraction with a GEMM form (matchGemm) "openblas" when that is the
/// choice. impl is "openblas", "generated" or "auto" (the table of
/// chooseMatmulImpl). A product marked "openblas" reads the inputs of the
/// linalg.transpose ops feeding it (it becomes a linalg.generic with the
/// swapped maps) and drops a zero fill of its init (kMatmulZeroInitAttr).
void selectMatmulImpl(mlir::ModuleOp module, llvm::StringRef impl,
                      unsigned threads);

/// The measured choice for an M x N x K product (`batch` of them): see
/// docs/codegen.md for how the table was measured.
llvm::StringRef chooseMatmulImpl(int64_t batch, int64_t m, int64_t n,
                                 int64_t k, unsigned elemBits,
                                 unsigned threads);

/// Replaces bufferized matmuls marked "openblas" by cblas_?gemm calls
/// (declared in the module). Fails (with a diagnostic) on nothing: a matmul
/// whose memrefs are not row-major with unit inner stride is re-marked
/// "generated" instead.
/// `sgemm` picks the f32 library: "openblas" (cblas_sgemm), "onednn"
/// (libkiln_onednn's kiln_onednn_sgemm: oneDNN's JIT sgemm, the call taking
/// the thread count `threads` after cblas_sgemm's arguments) or "auto"
/// (oneDNN where this build has libkiln_onednn, for products of at least
/// kOneDNNSgemmMin multiply-adds). f64 always calls
/// cblas_dgemm.
void lowerMatmulsToBLAS(mlir::ModuleOp module, llvm::StringRef sgemm = "auto",
                        unsigned threads = 0);

/// libkiln_onednn's sgemm (cblas_sgemm's arguments, then the threads as
/// i64): lowerMatmulsToBLAS's f32 products with sgemm = onednn / auto.
inline constexpr llvm::StringLiteral kOneDNNSgemmSymbol = "kiln_onednn_sgemm";
/// With sgemm = auto, f32 products of at least this many multiply-adds (per
/// batch element) call kOneDNNSgemmSymbol, smaller ones cblas_sgemm (a
/// run-time test where a size is `?`).
inline constexpr int64_t kOneDNNSgemmMin = int64_t(1) << 23;

/// The attribute naming a convolution's implementation: "direct" on a
/// linalg conv that stays, "im2col" on the loop (and the patch-copy
/// generics) that replaced one, "onednn" on a linalg conv that
/// kiln-cpu-conv-to-onednn turns into a call of libkiln_onednn after
/// bufferization (and on that call).
inline constexpr llvm::StringLiteral kConvImplAttr = "kiln.conv_impl";
/// On a linalg op: kiln-cpu-tile-vectorize threads it but leaves its body
/// to scalar loops (convert-linalg-to-loops), which LLVM's loop vectorizer
/// handles (a pool's window slices: strided reads, which the linalg
/// vectorizer turns into a branch and a scalar load per lane).
inline constexpr llvm::StringLiteral kScalarLoopsAttr = "kiln.scalar_loops";

/// The runtime function oneDNN convs call (runtime/onednn/KilnOneDNN.cpp).
inline constexpr llvm::StringLiteral kOneDNNConvSymbol =
    "kiln_onednn_conv2d_f32";
/// The same on the unpadded input plus four zero paddings (top, left,
/// bottom, right) that the call applies itself.
inline constexpr llvm::StringLiteral kOneDNNConvPadSymbol =
    "kiln_onednn_conv2d_pad_f32";
/// On the linalg.fill + linalg.copy that pad a oneDNN conv's input
/// (kiln-cpu-conv-im2col): kiln-cpu-tile-vectorize leaves them whole and
/// kiln-cpu-conv-to-onednn drops them, passing the copy's source and the
/// padding to kiln_onednn_conv2d_pad_f32 instead (in-kernel padding).
inline constexpr llvm::StringLiteral kConvPadAttr = "kiln.conv_pad";
/// On a linalg.transpose whose result only an ungrouped f32 oneDNN conv
/// reads (as its weight, its input, or the source of its input's padding
/// copy; kiln-cpu-conv-im2col): kiln-cpu-tile-vectorize leaves it whole and
/// kiln-cpu-conv-to-onednn drops it, describing the transpose's source to
/// the call with permuted sizes and strides instead (no copy). Where that
/// is not possible (the source written between the two) it stays a copy.
/// Also on the linalg.transpose [0, 2, 3, 1] that is the only reader of such
/// a conv's result (a channels-last twin, kiln-cpu-conv-channels-last): the
/// call then writes the transpose's output through permuted strides.
inline constexpr llvm::StringLiteral kConvViewAttr = "kiln.conv_view";
/// The same with a per-output-channel bias the call adds itself (the
/// padding may be 0): kiln-cpu-conv-to-onednn passes the bias instead of
/// broadcasting it into the output first.
inline constexpr llvm::StringLiteral kOneDNNConvBiasSymbol =
    "kiln_onednn_conv2d_bias_f32";
/// On the linalg.generic that broadcasts a 1-D bias over dim 1 into a
/// oneDNN conv's output init (kiln-cpu-conv-im2col): kiln-cpu-tile-vectorize
/// leaves it whole and kiln-cpu-conv-to-onednn drops it, passing the bias
/// to kiln_onednn_conv2d_bias_f32 instead.
inline constexpr llvm::StringLiteral kConvBiasAttr = "kiln.conv_bias";
/// The same with an optional bias (null pointer: none), the accumulate flag,
/// flags (1: clamp the output, 2: clamp the input), then the output's
/// clamp bounds and the input's (f32; -inf / +inf for an absent bound): a
/// oneDNN conv carrying kConvClampAttr and/or kConvInputClampAttr.
inline constexpr llvm::StringLiteral kOneDNNConvPostSymbol =
    "kiln_onednn_conv2d_post_f32";
/// On a linalg conv marked kiln.conv_impl = "onednn" (f32): its result is
/// clamped, `v < lo ? lo : v` then `v > hi ? hi : v` (kt.clamp's rule, NaN
/// kept), with lo, hi the attribute's two f32 values (-inf / +inf for an
/// absent bound). kiln-cpu-conv-im2col sets it where it folds the conv's
/// relu/clamp consumer (a linalg.generic) into the conv; the attribute
/// changes what the op computes, so kiln-cpu-conv-to-onednn must turn
/// every such conv into a kiln_onednn_conv2d_post_f32 call, and fails
/// otherwise (never lowers it as a plain conv).
inline constexpr llvm::StringLiteral kConvClampAttr = "kiln.conv_clamp";
/// The same for the conv's input: every input value is clamped before the
/// conv reads it (lo <= 0 <= hi, so the zero padding is unchanged). Set by
/// kiln-cpu-conv-im2col where it folds the relu/clamp that makes a
/// depthwise conv's input; same contract as kConvClampAttr.
inline constexpr llvm::StringLiteral kConvInputClampAttr =
    "kiln.conv_input_clamp";

/// Gives the bias broadcast or zero fill that initializes each conv marked
/// kiln.conv_impl = "onednn" (on tensors) a bufferization.alloc_tensor of
/// its own in place of a (possibly CSE-shared) tensor.empty (pass
/// kiln-cpu-private-conv-inits).
void privatizeConvInits(mlir::ModuleOp module);

/// Whether this build has libkiln_onednn (Debian libdnnl-dev found at
/// configure time): without it "onednn" is refused and auto never picks it.
bool oneDNNAvailable();

/// Replaces every bufferized f32 linalg 2-D conv marked
/// kiln.conv_impl = "onednn" by a call of kiln_onednn_conv2d_f32 (declared
/// in the module) on its operands' pointers, sizes and strides; a zero
/// linalg.fill of the output right before the conv is dropped (the call
/// then overwrites instead of accumulating). `threads`: oneDNN's OpenMP
/// threads (0: its default). Returns how many convs it replaced.
unsigned lowerConvsToOneDNN(mlir::ModuleOp module, unsigned threads);

/// The runtime function transposed convs run whole call
/// (runtime/onednn/KilnOneDNN.cpp): oneDNN's backward-data primitive.
inline constexpr llvm::StringLiteral kOneDNNConvTransposeSymbol =
    "kiln_onednn_conv_transpose2d_f32";
/// The same with the output a crop of the full one (two more i64s before
/// accumulate: the crop's top and left offsets): the transposed conv's
/// padding, given to oneDNN instead of copied out of a full-size buffer.
inline constexpr llvm::StringLiteral kOneDNNConvTransposeCropSymbol =
    "kiln_onednn_conv_transpose2d_crop_f32";

/// The same for the transposed conv of a depthwise conv (one input channel
/// per group; libkiln_onednn's own loops): x [n, g, oh, ow], w [g, f, kh,
/// kw], y [n, g*f, h, wd], always with the crop's offsets (0, 0: none).
inline constexpr llvm::StringLiteral kOneDNNDwConvTransposeSymbol =
    "kiln_onednn_dw_conv_transpose2d_f32";

/// On the scatter generic of transposedConvToScatter: [stride h, stride w,
/// dilation h, dilation w], and for a depthwise one the groups as a fifth.
inline constexpr llvm::StringLiteral kConvTransposeScatterAttr =
    "kiln.conv_transpose_scatter";

/// The zero linalg.fill of `buffer` right before `op` (only ops without
/// memory effects in between), or null.
mlir::linalg::FillOp zeroFillBefore(mlir::Operation *op, mlir::Value buffer);

/// A tensor-level f32 linalg conv marked kiln.conv_transpose (the stride-1
/// conv that a kt.conv_transpose2d without bias lowers to; ungrouped, or
/// depthwise: one input channel per group) as its scatter form: a
/// linalg.generic
///   full[n, co, p*sh + i*dh, q*sw + j*dw] += x[n, ci, p, q] * w[ci, co, i, j]
/// (depthwise: full[n, g*F + f, ...] += x[n, g, p, q] * w[g, f, i, j])
/// on the transposed conv's own input and weight (traced back through the
/// interleave and the flip) over a zero-filled buffer, then an
/// extract_slice that crops the padding. The generic is marked
/// kiln.conv_impl = "onednn" and kiln.conv_transpose_scatter. Fails (and
/// changes nothing) where the conv is not of that form.
mlir::FailureOr<mlir::Operation *>
transposedConvToScatter(mlir::RewriterBase &rw, mlir::linalg::LinalgOp op);

/// Replaces every bufferized scatter generic of transposedConvToScatter by
/// a call of kiln_onednn_conv_transpose2d_f32 (oneDNN's backward-data
/// primitive; depthwise: kiln_onednn_dw_conv_transpose2d_f32); a zero fill
/// of its buffer right before it is dropped.
/// Returns how many it replaced.
unsigned lowerTransposedConvsToOneDNN(mlir::ModuleOp module,
                                      unsigned threads);

/// The measured choice for a conv whose per-sample, per-group GEMM is
/// M = f, N = oh*ow, K = c*kh*kw (`?` sizes as kDynamic), strides sh, sw:
/// "onednn" (f32, oneDNNAvailable(), not depthwise: c != 1), else
/// "im2col" or "direct". See docs/codegen.md ("Convolution") for the
/// measurements.
llvm::StringRef chooseConvImpl(int64_t groups, int64_t f, int64_t c,
                               int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                               int64_t sh, int64_t sw, unsigned elemBits,
                               unsigned threads, bool allowOneDNN = true);

/// Rewrites one linalg.conv_2d_nchw_fchw / conv_2d_ngchw_gfchw with f32 or
/// f64 tensors into scf.for over the batch (and the groups) { im2col
/// linalg.generic [C*KH*KW, OH*OW] (none for 1x1 stride-1 kernels);
/// linalg.matmul W[F, C*KH*KW] x cols into the [F, OH*OW] slice of the init;
/// tensor.insert_slice }, marked kiln.conv_impl = "im2col". Returns the
/// outer scf.for, or failure (IR unchanged) for any other op.
mlir::FailureOr<mlir::Operation *>
convToIm2colMatmul(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp conv);

/// Rewrites a tensor.pad with a constant padding value into tensor.empty +
/// linalg.fill + a linalg.copy into the interior window
/// (extract_slice of the filled tensor) + tensor.insert_slice back: after
/// tiling, vectorization and one-shot bufferization that is a vectorized,
/// threaded fill and copy in place, where a tensor.pad becomes a scalar fill
/// and a memref.copy onto a strided view (MLIR's element-by-element
/// memrefCopy). Fails (IR unchanged) for a pad whose value is not constant.
mlir::LogicalResult padAsFillAndCopy(mlir::RewriterBase &rewriter,
                                     mlir::tensor::PadOp pad);

/// padAsFillAndCopy on every tensor.pad under `root` whose padding value is
/// the same for all elements (any rank, static or `?` sizes and amounts);
/// pads with a per-element region stay. Returns how many were rewritten.
unsigned padsAsFillAndCopy(mlir::Operation *root);

/// Every linalg.pooling_nchw_max / pooling_nchw_sum on tensors under `root`
/// with a static window of at most 64 elements becomes one all-parallel
/// linalg.generic over the output whose inputs are the KH*KW strided window
/// slices of the input (tensor.extract_slice with the pool's strides), in
/// the pool's own reduction order and combiner (bit-identical results), so
/// that kiln-cpu-tile-vectorize vectorizes it along the output width
/// (lib/Conversion/CPU/PoolWindows.cpp). Returns how many were rewritten.
unsigned poolsAsWindowSlices(mlir::Operation *root);

/// Channels-last activations between convs (kt level, before kiln-fuse;
/// lib/Conversion/CPU/ConvLayout.cpp): every ungrouped 4-D f32 kt.conv2d
/// with a static weight under `root` gets a channels-last twin of its
/// result (or of its relu/clamp's), `kt.permute [0, 2, 3, 1]`; pointwise
/// ops whose full-size operands come channels-last at least as often as
/// not run on [N, H, W, C] tensors (the others permuted in, broadcast
/// operands permuted, scalars as they are); a conv reads a channels-last
/// input through `kt.permute [0, 3, 1, 2]`, every other reader through a
/// permute back; inference kt.batch_norm of a twin becomes x * a + b on it,
/// a mean/sum/amax over H and W reduces the twin's dims 1 and 2. Depthwise
/// convs (one input and one output channel per group) take part; convs that
/// meet another grouped conv through relu/clamp are left NCHW. Permutes
/// nothing reads are erased. Returns the convs rewritten.
unsigned convsToChannelsLast(mlir::Operation *root);

/// Whether `op` is a one-operand kt.relu, or a kt.clamp whose bounds keep 0
/// (min <= 0 <= max, each optional): clamping a conv's zero padding too
/// changes nothing, so it can be the conv's input clamp (a depthwise conv's
/// prologue: kiln-cpu-conv-channels-last, kiln-cpu-outline-kernels).
bool isZeroKeepingClamp(mlir::Operation *op);

/// Whether `op` is a 4-D f32 kt.conv2d with one input and one output
/// channel per group (depthwise): libkiln_onednn's depthwise loops run it in
/// either layout (kiln-cpu-conv-channels-last, kiln-cpu-outline-kernels).
bool isDepthwiseF32Conv(mlir::Operation *op);

/// Replaces every `arith.constant` of a splat tensor under `root` by
/// tensor.empty + linalg.fill of the scalar, so that bufferization and the
/// LLVM lowering never materialize its elements (a memref.global of 2^31
/// floats is 8 GiB in the JIT's memory, at any size a copy of the data).
/// Run right before bufferization: until then a splat constant stays one
/// MLIR attribute, and pointwise consumers fold it into their bodies as a
/// scalar. Returns how many were replaced.
unsigned splatConstantsAsFills(mlir::Operation *root);

/// After ownership-based deallocation: a buffer that a func.call returned
/// fresh (the callee's memref.alloc) and that the caller's
/// bufferization.dealloc frees at the end of the block is freed by a
/// memref.dealloc right after its last use (of it or of a view of it)
/// instead, and leaves that dealloc. Buffers that are returned, yielded,
/// retained or may alias another listed buffer stay as they were. Keeps
/// peak memory to the live buffers and the later dealloc simplification
/// linear. Before that, a buffer a call returned fresh that the function's
/// func.return returns (directly or through views and casts, once, with no
/// other alias listed or retained by the dealloc) leaves the dealloc's
/// memrefs and retained values: the return owns it (a training forward
/// returns hundreds of saved activations). Returns how many buffers it
/// moved of each kind.
struct EarlyDeallocStats {
  unsigned freedEarly = 0;
  unsigned handedToReturn = 0;
};
EarlyDeallocStats deallocCallResultsEarly(mlir::ModuleOp module);

/// Right after one-shot bufferization: a func.call operand that is a
/// memref.cast from a non-identity layout (a strided view: a slice of a
/// non-outer dim, a transposed or offset view) to the callee's
/// identity-layout argument type is replaced by a fresh buffer holding a
/// copy of the view (memref.alloc + memref.copy; the deallocation pipeline
/// frees it). One-shot bufferization casts such views at function
/// boundaries because the types are "cast compatible", but the callee then
/// reads with identity strides and offset 0: wrong elements. Returns how
/// many operands it copied.
unsigned copyStridedCallOperands(mlir::ModuleOp module);

/// Chooses every f32/f64 2-D linalg conv's implementation: impl is "im2col",
/// "direct", "onednn" (f32 convs; f64 ones as under auto) or "auto"
/// (chooseConvImpl). Convs that stay get
/// kiln.conv_impl = "direct"; convs inside an scf.forall (kiln-fuse kernel
/// tiles) always stay direct. The zero padding (tensor.pad) feeding each
/// conv becomes a fill + copy (padAsFillAndCopy) in both cases.
/// `allowOneDNN` false: auto never picks "onednn" (the table without it).
void selectConvImpl(mlir::ModuleOp module, llvm::StringRef impl,
                    unsigned threads, bool allowOneDNN = true);

/// The CPU backend contract after kiln-lower-to-linalg (and kernel
/// formation): reports, at its location, every op that the rest of kiln-cpu
/// cannot compile, and fails if there is one. Unsupported are: ops of the
/// kg dialect (captured programs are host code: kiln-cpu compiles the
/// func.func graph functions) and ops on tensors without a bufferization
/// (e.g. `arith.negf` on a tensor: one-shot bufferization would stop with
/// "op was not bufferized"). Regions of a reported op are not looked into.
mlir::LogicalResult verifySupported(mlir::ModuleOp module);

/// True for the names of external functions compiled code may call: libm
/// (`exp`, `cosf`, ...; convert-math-to-libm and LLVM's libcalls), the C
/// library (`malloc`, `free`, `memcpy`, ...), MLIR's runtime (`memrefCopy`,
/// `_mlir_*`), Kiln's (`kiln_cpu_*`), OpenBLAS (`cblas_*`, `openblas_*`),
/// OpenMP (`omp_*`, `__kmpc_*`) and compiler-rt (`__*`).
bool isReservedSymbol(llvm::StringRef name);

/// The module attribute (a dictionary: new name -> user's name) recording
/// the renames of renameReservedSymbols.
inline constexpr llvm::StringLiteral kRenamedSymbolsAttr =
    "kiln.renamed_symbols";

/// Renames every symbol defined in `module` (a function with a body, a
/// global) whose name is reserved (isReservedSymbol) to `kiln.user.<name>`
/// (made unique), updating its uses, so that a user function `@exp` or
/// `@malloc` is not taken for the libm / C library function the lowering
/// calls. Records the renames in kRenamedSymbolsAttr. Returns how many.
unsigned renameReservedSymbols(mlir::ModuleOp module);

/// After the LLVM lowering: gives each C interface wrapper of a renamed
/// function its user's name back (`_mlir_ciface_kiln.user.exp` ->
/// `_mlir_ciface_exp`, what callers look up) and drops
/// kRenamedSymbolsAttr.
void restoreInterfaceNames(mlir::ModuleOp module);

/// Before the passes lowering memref.alloc to malloc (in kiln-cpu: after
/// convert-math-to-libm): before each `memref.alloc` (each becomes
/// a call of malloc), a call of kiln_cpu_alloc_site(id), `id` a run-time
/// error template "<file:line:col>: cannot allocate {0:bytes} for
/// tensor<...> in compiled code: out of memory" at the alloc's location
/// (the kt op that needs the buffer). When the allocation fails, the call
/// fails with that message (kiln/rt/BufferPool.h) instead of one without a
/// location. Returns how many allocations were marked.
unsigned markAllocationSites(mlir::ModuleOp module);

} // namespace kiln::cpu

#endif // KILN_CONVERSION_CPU_CPUCODEGEN_H
