//===- KTToLinalg.h - Lowering kt to linalg on tensors ----------*- C++ -*-===//
//
// Part of Kiln. The patterns of `kiln-lower-to-linalg`, one populate function
// per op family, and a driver usable without a pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KTTOLINALG_KTTOLINALG_H
#define KILN_CONVERSION_KTTOLINALG_KTTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <tuple>

namespace kiln {

/// On the linalg conv that kt.conv_transpose2d lowers to (ungrouped, or
/// depthwise: one input channel per group, on the grouped conv; a stride-1
/// conv of the zero-interleaved, padded input with the flipped weight), the
/// transposed conv's parameters [stride h, stride w, padding
/// h, padding w, output_padding h, output_padding w] (a DenseI64ArrayAttr):
/// a backend may run the transposed conv whole from them instead
/// (kiln::cpu::transposedConvToScatter). Discardable: dropping it keeps the
/// stride-1 conv, which is correct on its own.
inline constexpr llvm::StringLiteral kConvTransposeAttr = "kiln.conv_transpose";

/// On an op in the body of a pointwise linalg.generic (softmax's math.exp):
/// the generic's result is to be computed once and stored, not folded into
/// (recomputed by) its consumers. The sum and the normalization read the
/// stored values (from cache, in a kernel's row tile) instead of computing
/// exp twice per element. On a body op, not on the generic, so that it
/// survives elementwise fusion of a prologue into the generic (a masked
/// softmax's mul and where), which builds a new generic. Kernel formation
/// and kiln-cpu-fuse-elementwise honour it (isMaterialized). Discardable:
/// dropping it only recomputes the producer.
inline constexpr llvm::StringLiteral kMaterializeAttr = "kiln.materialize";

/// On the math.exp in the body of an online row max and sum of exp (a
/// linalg.generic with two reduction results (m, s), built by
/// onlineLseStep): the marker by which a backend recognizes the one-read
/// form and may lower it to its own vector loops (kiln-cpu:
/// kiln::cpu::lowerOnlineRowStats). On a body op, as kMaterializeAttr.
/// Discardable: the generic alone computes the same (m, s) element by
/// element.
inline constexpr llvm::StringLiteral kOnlineLseAttr = "kiln.online_lse";

/// One step of the online (one-read) row max and sum of exp: with `m` the
/// running max and `s` the running sum of exp(x_i - m), returns (m', s')
/// after the element `x`:
///   x > m:  m' = x, s' = s * exp(m - x) + exp(x - x)
///   else:   m' = m, s' = s + exp(x - m)
/// with one exp per element (the argument is -|x - m|) and `exp(x - x)`
/// computed as `(x - x) + 1` (1, or NaN for an infinite or NaN x, as
/// exp(inf - inf) in the two-pass form). An x of -inf adds nothing (also
/// while m is -inf, where x - m would be NaN); a NaN x never becomes the
/// max (it makes s NaN). So the results equal the two-pass statistics'
/// NaN/inf behaviour: a row with +inf or NaN gives s = NaN; a row of only
/// -inf (or empty) gives m = -inf, s = 0, and then NaN wherever x - m is
/// read, as PyTorch. `x` and `m` have the compute type (scalar or vector),
/// `s` the same or a wider float type (exp is computed in x's type and
/// widened). The exp carries kOnlineLseAttr when `mark`.
std::pair<mlir::Value, mlir::Value> onlineLseStep(mlir::OpBuilder &b,
                                                  mlir::Location loc,
                                                  mlir::Value x, mlir::Value m,
                                                  mlir::Value s, bool mark);

/// The factor exp(from - to) that rescales a sum of exp relative to the max
/// `from` to the larger max `to` (from <= to, neither NaN); 1 where they are
/// equal (both -inf: an empty partial sum; both +inf: its sum is already
/// NaN). Scalar or vector, in from's type.
mlir::Value onlineLseRescale(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value from, mlir::Value to);

/// On the arith.divf in the body of layer_norm's one-read row statistics
/// (a linalg.generic with three f64 reduction results (count, mean, M2),
/// built by rowMomentsMerge with a count of 1 per element: Welford's step):
/// the marker by which a backend may lower it to its own vector loops
/// (kiln-cpu: kiln::cpu::lowerRowMoments). Discardable, as kOnlineLseAttr.
inline constexpr llvm::StringLiteral kRowMomentsAttr = "kiln.row_moments";

/// The statistics (count n, mean, sum of squared deviations m2) of the
/// union of two sets, from each set's (Chan et al.'s merge; with nb = 1 and
/// m2b = 0 it is Welford's step for one element meanb):
///   f = nb / (n + nb);  d = meanb - mean
///   n' = n + nb;  mean' = mean + d * f;  m2' = m2 + m2b + d * d * (n * f)
/// f64 scalars or vectors. n + nb must not be 0 (the callers skip empty
/// sets). An inf or NaN element makes m2' NaN (and mean' inf or NaN), as
/// the two-pass form's (x - mean)^2. The divf carries kRowMomentsAttr when
/// `mark`.
std::tuple<mlir::Value, mlir::Value, mlir::Value>
rowMomentsMerge(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n,
                mlir::Value mean, mlir::Value m2, mlir::Value nb,
                mlir::Value meanb, mlir::Value m2b, bool mark = false);

/// Whether `op` (a linalg op) is to be stored, not recomputed: an op of its
/// body carries kMaterializeAttr.
bool isMaterialized(mlir::Operation *op);

/// Whether the payload of `op` (a linalg op) reads one of its inits that a
/// materialized op computed (softmax's in-place normalization of the stored
/// exp): folded into a consumer, it would leave that init as an extra
/// result of the fused op (an extra output tensor), so it is not fused.
bool updatesMaterialized(mlir::Operation *op);

/// Choices of the lowering that depend on the backend.
struct KTToLinalgOptions {
  /// softmax stores e = exp(x - max) (a kMaterializeAttr generic) and
  /// normalizes it in place: exp once per element; log_softmax stores e too
  /// (its output tile is then fetched in the exp pass) and writes
  /// x - max - log(sum) over it; both take the row max with maxnumf. Not
  /// for a softmax whose result a kt op reads. For a backend whose
  /// kernels keep a row tile in cache (kiln-cpu with kernel formation);
  /// elsewhere (whole-tensor generics, the GPU) e would be a full tensor's
  /// extra round trip through memory, so the default recomputes exp in the
  /// normalization instead.
  bool softmaxStoresExp = false;
  /// cross_entropy takes its row max and sum of exp in one generic with
  /// two results (onlineLseStep, marked kOnlineLseAttr) where the class dim
  /// is innermost, instead of a max and a sum of exp: one read of the row
  /// for a backend that lowers the marked generic to vector loops
  /// (kiln-cpu). Elsewhere it would be a scalar loop, so off by default.
  bool onlineRowStats = false;
  /// layer_norm (f32/f64, its input not computed in the same function body:
  /// a block argument) takes its row mean and M2 in one generic with three
  /// results (rowMomentsMerge per element, marked kRowMomentsAttr) instead
  /// of a sum and a sum of squared deviations from the mean: one read of
  /// the row for a backend that lowers the marked generic to vector loops
  /// (kiln-cpu). Elsewhere it would be a scalar loop with a divide per
  /// element, so off by default (kiln-cpu sets it with onlineRowStats).
  bool rowMoments = false;
};

/// Pointwise ops, where, clamp, cast.
void populateKTElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// sum, mean, amax, amin, prod, any, all, var, logsumexp, argmax, argmin.
void populateKTReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// matmul, linear, softmax, log_softmax.
void populateKTNNToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                  const KTToLinalgOptions &options = {});
/// reshape, transpose, permute, expand, squeeze, unsqueeze, slice, select,
/// concat, pad, flip; constant, full, arange.
void populateKTShapeToLinalgPatterns(mlir::RewritePatternSet &patterns);

/// All of the above.
void populateKTToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                const KTToLinalgOptions &options = {});

/// The legality of the lowering: linalg, tensor, arith, math, scf legal; kt
/// illegal unless `allowPartial`.
void configureKTToLinalgTarget(mlir::ConversionTarget &target,
                               bool allowPartial);

/// Declared result types less static than the inferred ones (`tensor<?x1xf32>`
/// for a sum of `tensor<2x3xf32>`, which the verifiers accept): every kt op
/// under `root` whose result type has a `?` where type inference gives a
/// size gets the inferred size, and a `tensor.cast` back to the declared
/// type replaces its uses. So the lowering patterns, which build the
/// inferred type, never see a less static result. Returns how many results
/// were refined. Called by lowerKTToLinalg.
unsigned refineKTResultTypes(mlir::Operation *root);

/// Lowers every kt op under `root`; fails naming the first op that could not
/// be lowered unless `allowPartial`.
llvm::LogicalResult lowerKTToLinalg(mlir::Operation *root, bool allowPartial,
                                    const KTToLinalgOptions &options = {});

/// uint8 (`ui8`, docs/dialects/kt.md "Element types") after lowering: the
/// patterns build their linalg/arith code on the kt types and pick unsigned
/// arith ops (divui, remui, cmpi ult, maxui, extui, uitofp, ...) where the
/// element type is unsigned; this then rewrites every unsigned integer type
/// under `root` (values, block arguments, function types, constants) to the
/// signless integer of its width, which is all arith, linalg and LLVM take.
/// Fails, with an error at the op, when a kt op on an unsigned type is left
/// (a partial lowering).
llvm::LogicalResult eraseIntegerSignedness(mlir::Operation *root);

} // namespace kiln

#endif // KILN_CONVERSION_KTTOLINALG_KTTOLINALG_H
