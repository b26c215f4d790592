//===- KilnOneDNN.cpp - oneDNN convolutions for compiled Kiln code --------===//
//
// Part of Kiln. libkiln_onednn.so: the function that convolutions marked
// kiln.conv_impl = "onednn" call after bufferization (kiln-cpu-conv-to-onednn,
// lib/Conversion/CPU/OneDNNConv.cpp; docs/codegen.md "Convolution").
//
//   out[n, g, f, oh, ow] (+)= sum_{c, kh, kw} x[n, g, c, oh*sh + kh*dh,
//                                               ow*sw + kw*dw] * w[g, f, c, kh, kw]
//
// on an input that is already padded (the linalg conv's semantics), or
// with kiln_onednn_conv2d_pad_f32 on the unpadded input plus its zero
// padding (top, left, bottom, right), which the convolution applies itself
// (in-kernel padding: no padded copy of the activations). Every
// operand comes with its strides in elements, so any strided view works:
// shapes oneDNN can describe (the channels of a grouped operand one
// uniform stride) run as a oneDNN f32 convolution primitive, anything else
// (and oneDNN failing to create one) as the plain loop nest below.
//
// Primitives, their weight reorders and their memory descriptors are cached
// per shape (every parameter but the pointers): a warm call does a hash-map
// lookup under a mutex and executes. Executing one primitive from several
// threads at once is safe: each call gets its own scratchpad
// (scratchpad_mode::user, a thread-local buffer) and its own stream.
//
// OpenMP: Debian's libdnnl.so.2 is built for GNU OpenMP (it needs
// libgomp.so.1: GOMP_parallel, omp_get_max_threads, ...). This library
// links LLVM's libomp first, so when nothing loaded libgomp before it those
// calls bind to libomp (which exports the GOMP_* entry points): the compiled
// code's threads and oneDNN's are one pool. In a Python process PyTorch
// has loaded libgomp (and this same libdnnl) first, so oneDNN runs on
// libgomp, whose idle workers spin ~300k iterations (15-20 ms here) after
// every parallel region while the compiled kernels' libomp workers want
// the same cores: see calmGnuOpenMP below and docs/codegen.md.
//
//===----------------------------------------------------------------------===//

#include "oneapi/dnnl/dnnl.hpp"

#include "../include/kiln/rt/OneDNNLayout.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int);

namespace {

void calmGnuOpenMP(); // below: two OpenMP runtimes in one process

// 31 shape/stride/accumulate slots, the four paddings, then whether the
// call adds a per-channel bias (kiln_onednn_conv2d_bias_f32).
constexpr int kNumParams = 36;

struct Key {
  int64_t p[kNumParams];
  bool operator==(const Key &o) const {
    return std::memcmp(p, o.p, sizeof(p)) == 0;
  }
};
struct KeyHash {
  size_t operator()(const Key &k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : k.p) {
      h ^= (uint64_t)v;
      h *= 1099511628211ull;
    }
    return (size_t)h;
  }
};

/// One shape's primitive (null: the loop nest runs it).
struct Entry {
  bool ok = false;
  // Depthwise shapes that oneDNN 2.6 has no fast plain-layout kernel for
  // run as this library's own loops (see depthwiseConv and
  // depthwiseWeightGrad below) instead of a primitive.
  enum class Direct {
    None,
    Depthwise,
    DepthwiseChannelsLast,
    DepthwiseWeightGrad
  };
  Direct direct = Direct::None;
  // A weight-gradient-shaped call (see createWeightGrad) runs as oneDNN's
  // backward-weights primitive: src = x, "wei" = the call's weight (the
  // gradient of the forward conv's output), "dst" = the call's output (the
  // weight gradient).
  bool wgrad = false;
  dnnl::convolution_forward conv;
  dnnl::convolution_backward_weights bwdWeights;
  dnnl::memory::desc src, wei, dst;     // what the user passes
  dnnl::memory::desc convWei;           // what the primitive wants
  dnnl::memory::desc convSrc, convDst;  // (blocked layouts: see create)
  bool reorderWei = false, reorderSrc = false, reorderDst = false;
  dnnl::reorder weiReorder, srcReorder, dstIn, dstOut;
  size_t scratchpadBytes = 0;
};

dnnl::engine &engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

std::mutex cacheMutex;
std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> cache;
// Statistics (kiln_onednn_stats).
int64_t primitivesCreated = 0, callsRun = 0, fallbackCalls = 0;

struct Params {
  int64_t n, g, c, h, w, f, kh, kw, oh, ow, sh, sw, dh, dw;
  int64_t xs[5], ws[5], ys[5];
  int64_t accumulate;
  // Zero padding the call applies itself (kiln_onednn_conv2d_pad_f32);
  // h and w are then the unpadded input's.
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool padded() const { return pt || pl || pb || pr; }
  // A per-output-channel bias added by the call (kiln_onednn_conv2d_bias_f32):
  // y = conv + bias[(g * f + fi) * bs]. Not part of the key but `hasBias`.
  bool hasBias = false;
  const float *bias = nullptr;
  int64_t bs = 1;
  float biasAt(int64_t g, int64_t f) const {
    return hasBias ? bias[(g * this->f + f) * bs] : 0.0f;
  }
  // A clamp of the output (kiln_onednn_conv2d_post_f32: the conv's
  // kt.relu / kt.clamp consumer folded into the call): y = clamp(conv),
  // as kt.clamp computes it, `v < lo ? lo : v` then `v > hi ? hi : v`, so
  // NaN stays NaN and an absent bound is -inf / +inf. Not part of the key:
  // oneDNN's own clip post-ops map NaN to a bound (vmaxps), so the
  // primitives run as without it and the clamp is applied after them.
  bool clamp = false;
  float lo = -INFINITY, hi = INFINITY;
  // The same for every input value before the conv reads it (the depthwise
  // conv's input relu/clamp, kiln.conv_input_clamp): ilo <= 0 <= ihi, so
  // the zero padding is unchanged. The depthwise loops clamp as they copy
  // the input into their padded plane; other paths get a clamped copy.
  bool inClamp = false;
  float ilo = -INFINITY, ihi = INFINITY;
  float clampIn(float v) const {
    v = v < ilo ? ilo : v;
    return v > ihi ? ihi : v;
  }
};

Params unpack(const Key &k) {
  Params p;
  const int64_t *v = k.p;
  p.n = v[0]; p.g = v[1]; p.c = v[2]; p.h = v[3]; p.w = v[4];
  p.f = v[5]; p.kh = v[6]; p.kw = v[7]; p.oh = v[8]; p.ow = v[9];
  p.sh = v[10]; p.sw = v[11]; p.dh = v[12]; p.dw = v[13];
  for (int i = 0; i < 5; ++i) {
    p.xs[i] = v[14 + i];
    p.ws[i] = v[19 + i];
    p.ys[i] = v[24 + i];
  }
  p.accumulate = v[29];
  p.pt = v[31]; p.pl = v[32]; p.pb = v[33]; p.pr = v[34];
  p.hasBias = v[35] != 0;
  return p;
}

/// The loop nest: the reference semantics, for shapes oneDNN cannot take.
void convLoops(const Params &p, const float *x, const float *wt, float *y) {
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t g = 0; g < p.g; ++g)
      for (int64_t f = 0; f < p.f; ++f)
        for (int64_t oh = 0; oh < p.oh; ++oh)
          for (int64_t ow = 0; ow < p.ow; ++ow) {
            float acc = p.biasAt(g, f);
            for (int64_t c = 0; c < p.c; ++c)
              for (int64_t kh = 0; kh < p.kh; ++kh)
                for (int64_t kw = 0; kw < p.kw; ++kw) {
                  int64_t ih = oh * p.sh + kh * p.dh - p.pt,
                          iw = ow * p.sw + kw * p.dw - p.pl;
                  if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w)
                    continue; // zero padding
                  acc += x[n * p.xs[0] + g * p.xs[1] + c * p.xs[2] +
                           ih * p.xs[3] + iw * p.xs[4]] *
                         wt[g * p.ws[0] + f * p.ws[1] + c * p.ws[2] +
                            kh * p.ws[3] + kw * p.ws[4]];
                }
            float &o = y[n * p.ys[0] + g * p.ys[1] + f * p.ys[2] +
                         oh * p.ys[3] + ow * p.ys[4]];
            o = p.accumulate ? o + acc : acc;
          }
}

// ---- Depthwise convolutions: direct loops ---------------------------------
//
// oneDNN 2.6 runs a depthwise convolution (one input channel per group) on
// plain NCHW memory only as a grouped GEMM of M = 1 (or its reference
// kernel), and its fast "jit_dw" kernels want the blocked nChw16c layout,
// i.e. a reorder of the activations in and out on every call. These two
// loop nests read and write NCHW with the given strides, on the compiled
// code's OpenMP threads (libomp: this file is built with -fopenmp):
//  * depthwiseConv: any grouped call with one input channel per group
//    (a forward depthwise conv with any channel multiplier, and the
//    stride-1 conv that a grouped transposed conv lowers to): per output
//    plane (n, g, f), the input plane is copied once into a zero-padded,
//    stride-phase-split scratch plane, then blocks of 8 output rows x 16
//    columns are accumulated in vector registers over the kh * kw taps
//    (depthwisePlane below). The in-kernel padding (p.padded()) is the
//    scratch plane's: no padded copy of the activations is made.
//  * depthwiseWeightGrad: the weight-gradient form of a depthwise conv
//    (lib/Autodiff/Conv.cpp's convWeightGrad: batch 1 = the forward's one
//    channel per group, the call's channels the forward's batch, the kernel
//    the forward's output gradient, larger than the output): per (g, f),
//    each row of the output gradient is read once and dotted with the
//    oh * ow shifted input rows (a strided forward's input row split into
//    its stride's phases first, so that every dot product is contiguous);
//    for 3x3-like outputs, every output in vector registers (wgradPair).
//    The call's padding is applied as each plane is copied.
// KILN_ONEDNN_DIRECT=0 turns both off (oneDNN primitives as before).

int ompThreads(int64_t threads) {
  return threads > 0 ? (int)threads : omp_get_max_threads();
}

// The forward loops (depthwiseConv) work per output plane (n, g, f) in two
// steps, both on one thread's scratch:
//  1. the input plane (one channel) is copied once into a zero-padded plane
//     (the call's padding, plus slack on the right so that every block
//     below reads whole vectors), split by the width stride into its
//     phases (phase r holds padded columns r, r + sw, ...): every tap then
//     reads contiguous memory, for stride 1 and 2 alike;
//  2. each output row is computed in blocks of kBlock columns held in
//     registers: the bias (or the output, accumulating), then kh * kw
//     vector multiply-adds of the shifted phase rows, then one store. The
//     last block of a row computes kBlock columns from the padded slack and
//     stores only the row's rest.
// Both are built for AVX-512, AVX2 + FMA and the baseline x86-64, the best
// the CPU has chosen at load time (target_clones; the library is otherwise
// built for the baseline, SSE2 only).
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
#define KILN_DW_CLONES                                                         \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_DW_CLONES
#endif

constexpr int64_t kBlock = 16;
/// Output rows computed together: kRows independent accumulator chains
/// (one chain's kh * kw dependent multiply-adds would wait on the FMA
/// latency).
constexpr int64_t kRows = 8;
/// kBlock floats in vector registers (GNU vector extension: one zmm or
/// two ymm / four xmm registers, as the clone's target has).
typedef float VBlock __attribute__((vector_size(kBlock * sizeof(float))));

/// The padded, phase-split plane of step 1: phase r, padded row i starts at
/// data + (r * rows + i) * pitch.
struct DepthwisePlane {
  int64_t rows, pitch;
  std::vector<float> data;
  std::vector<float> row;    // one padded input row (scratch, sw > 1)
  std::vector<float> wk;     // the plane's kh * kw weights
  std::vector<int64_t> toff; // per tap, its offset in the phase planes
};

/// The padded plane's size for call `p`: the rows and columns the output
/// reads (at least the padded input's), rows rounded up by kRows and
/// columns by kBlock output rows / columns.
void shapePlane(const Params &p, DepthwisePlane &pl) {
  const int64_t ohr = (p.oh + kRows - 1) / kRows * kRows;
  const int64_t owr = (p.ow + kBlock - 1) / kBlock * kBlock;
  pl.rows = (ohr - 1) * p.sh + (p.kh - 1) * p.dh + 1;
  pl.pitch = (owr * p.sw + (p.kw - 1) * p.dw + p.sw) / p.sw + 1;
  pl.data.assign(p.sw * pl.rows * pl.pitch, 0.0f);
  pl.row.assign(p.sw > 1 ? pl.pitch * p.sw : 0, 0.0f);
  pl.wk.assign(p.kh * p.kw, 0.0f);
  pl.toff.resize(p.kh * p.kw);
  for (int64_t kh = 0; kh < p.kh; ++kh)
    for (int64_t kw = 0; kw < p.kw; ++kw) {
      const int64_t col = kw * p.dw;
      pl.toff[kh * p.kw + kw] =
          ((col % p.sw) * pl.rows + kh * p.dh) * pl.pitch + col / p.sw;
    }
}

KILN_DW_CLONES
void depthwisePlane(const Params &p, DepthwisePlane &pl, const float *xp,
                    const float *wp, float bias, float *yp) {
  const int64_t sw = p.sw, pitch = pl.pitch, rows = pl.rows;
  // Step 1. Padded row i is input row i - pt (zero outside the image).
  const int64_t width = pitch * sw;
  const int64_t c0 = std::min(p.pl, width),
                c1 = std::min(width, std::max(c0, p.pl + p.w));
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t ih = i - p.pt;
    const bool inside = ih >= 0 && ih < p.h && c0 < c1;
    const float *xr = inside ? xp + ih * p.xs[3] : nullptr;
    if (sw == 2 && p.xs[4] == 1) {
      // Straight into the two phases: phase r column t is padded column
      // 2 t + r, input column 2 t + r - pl, inside for t in [lo, hi).
      for (int64_t r = 0; r < 2; ++r) {
        float *__restrict ph = pl.data.data() + (r * rows + i) * pitch;
        int64_t lo = 0, hi = 0;
        if (inside) {
          lo = std::min(pitch, std::max<int64_t>(0, (p.pl - r + 1) / 2));
          hi = std::min(pitch, std::max(lo, (p.w - 1 + p.pl - r) / 2 + 1));
        }
        std::fill(ph, ph + lo, 0.0f);
        if (hi > lo) {
          const float *__restrict src = xr + r - p.pl;
          if (p.inClamp) {
            const float ilo = p.ilo, ihi = p.ihi;
#pragma omp simd
            for (int64_t t = lo; t < hi; ++t) {
              float v = src[2 * t];
              v = v < ilo ? ilo : v;
              ph[t] = v > ihi ? ihi : v;
            }
          } else {
#pragma omp simd
            for (int64_t t = lo; t < hi; ++t)
              ph[t] = src[2 * t];
          }
        }
        std::fill(ph + hi, ph + pitch, 0.0f);
      }
      continue;
    }
    float *row = sw == 1 ? pl.data.data() + i * pitch : pl.row.data();
    if (!inside) {
      std::fill(row, row + width, 0.0f);
    } else {
      std::fill(row, row + c0, 0.0f);
      const float *xc = xr + (c0 - p.pl) * p.xs[4];
      if (p.xs[4] == 1)
        std::copy(xc, xc + (c1 - c0), row + c0);
      else
        for (int64_t j = c0; j < c1; ++j)
          row[j] = xc[(j - c0) * p.xs[4]];
      if (p.inClamp) {
        const float ilo = p.ilo, ihi = p.ihi;
#pragma omp simd
        for (int64_t j = c0; j < c1; ++j) {
          float v = row[j];
          v = v < ilo ? ilo : v;
          row[j] = v > ihi ? ihi : v;
        }
      }
      std::fill(row + c1, row + width, 0.0f);
    }
    for (int64_t r = 0; sw > 1 && r < sw; ++r) {
      float *ph = pl.data.data() + (r * rows + i) * pitch;
      for (int64_t t = 0; t < pitch; ++t)
        ph[t] = row[t * sw + r];
    }
  }
  const int64_t taps = p.kh * p.kw;
  for (int64_t kh = 0; kh < p.kh; ++kh)
    for (int64_t kw = 0; kw < p.kw; ++kw)
      pl.wk[kh * p.kw + kw] = wp[kh * p.ws[3] + kw * p.ws[4]];
  // Step 2. Output (oh, ow) reads padded (oh * sh + kh * dh, ow * sw + kw *
  // dw): phase (kw * dw) % sw at column ow + (kw * dw) / sw (toff). Rows
  // past oh and columns past ow are computed from the zero slack and not
  // stored.
  const float *wk = pl.wk.data();
  const int64_t *toff = pl.toff.data();
  const int64_t rowStep = p.sh * pitch;
  for (int64_t oh0 = 0; oh0 < p.oh; oh0 += kRows) {
    const int64_t nr = std::min(kRows, p.oh - oh0);
    for (int64_t ow0 = 0; ow0 < p.ow; ow0 += kBlock) {
      const int64_t nb = std::min(kBlock, p.ow - ow0);
      VBlock acc[kRows];
      for (int64_t r = 0; r < kRows; ++r) {
        if (p.accumulate && r < nr) {
          const float *yr = yp + (oh0 + r) * p.ys[3];
          for (int64_t j = 0; j < kBlock; ++j)
            acc[r][j] = j < nb ? yr[(ow0 + j) * p.ys[4]] : 0.0f;
        } else {
          for (int64_t j = 0; j < kBlock; ++j)
            acc[r][j] = bias;
        }
      }
      const float *base = pl.data.data() + oh0 * rowStep + ow0;
      for (int64_t t = 0; t < taps; ++t) {
        const float *src = base + toff[t];
        const float wv = wk[t];
        for (int64_t r = 0; r < kRows; ++r) {
          VBlock v;
          std::memcpy(&v, src + r * rowStep, sizeof v); // unaligned load
          acc[r] += wv * v;
        }
      }
      if (p.clamp) {
        // kt.clamp's order and NaN rule (Params::clamp), on the registers.
        const VBlock lo = p.lo - (VBlock){}, hi = p.hi - (VBlock){};
        for (int64_t r = 0; r < nr; ++r) {
          acc[r] = acc[r] < lo ? lo : acc[r];
          acc[r] = acc[r] > hi ? hi : acc[r];
        }
      }
      for (int64_t r = 0; r < nr; ++r) {
        float *yr = yp + (oh0 + r) * p.ys[3];
        if (p.ys[4] == 1 && nb == kBlock)
          std::memcpy(yr + ow0, &acc[r], sizeof acc[r]);
        else
          for (int64_t j = 0; j < nb; ++j)
            yr[(ow0 + j) * p.ys[4]] = acc[r][j];
      }
    }
  }
}

void depthwiseConv(const Params &p, const float *x, const float *wt, float *y,
                   int64_t threads) {
  // One input channel per group (chooseDirect): p.c == 1.
  const int64_t planes = p.n * p.g * p.f;
  if (planes <= 0 || p.oh <= 0 || p.ow <= 0)
    return; // an empty output
#pragma omp parallel num_threads(ompThreads(threads))
  {
    DepthwisePlane pl;
    shapePlane(p, pl);
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      int64_t n = plane / (p.g * p.f), g = plane / p.f % p.g, f = plane % p.f;
      depthwisePlane(p, pl, x + n * p.xs[0] + g * p.xs[1],
                     wt + g * p.ws[0] + f * p.ws[1], p.biasAt(g, f),
                     y + n * p.ys[0] + g * p.ys[1] + f * p.ys[2]);
    }
  }
}

// ---- Depthwise transposed convolutions (the input gradient) --------------
//
// kt.conv_transpose2d of a depthwise conv (one input channel per group, any
// multiplier F; see kiln_onednn_dw_conv_transpose2d_f32 below):
//   y[n, g*F + f, p*sh + i*dh - pt, q*sw + j*dw - pl] (+)= x[n, g, p, q] *
//                                                          w[g, f, i, j]
// Lowered, it was a stride-1 depthwise conv over the stride^2 times larger
// zero-interleaved x (3/4 of its multiply-adds on zeros at stride 2, plus
// the interleave copy). Here each output row is gathered from the x rows
// whose taps reach it: row r (full row R = r + pt) takes tap i where R - i
// * dh is a multiple of sh, from x row (R - i * dh) / sh. The row is
// accumulated split by the width stride into its column phases (phase rho
// holds full columns rho, rho + sw, ...), so every tap (i, j) is one
// contiguous multiply-add of an x row into phase (j * dw) % sw at offset
// (j * dw) / sw; then the phases are interleaved into y's row. kh * kw
// multiply-adds per x element, the forward conv's count.
// KILN_ONEDNN_DIRECT does not apply: oneDNN has no faster plain-layout
// kernel to fall back to, and the stride-1 form is gone by then.

struct DwTParams {
  int64_t n, g, f, oh, ow, kh, kw, h, w, sh, sw, dh, dw, pt, pl;
  int64_t xs[4], ws[4], ys[4];
  bool accumulate;
};

KILN_DW_CLONES
void dwTransposedPlane(const DwTParams &p, const float *xp, const float *wp,
                       float *yp, float *acc, int64_t T, float *xrow) {
  const int64_t sw = p.sw;
  for (int64_t r = 0; r < p.h; ++r) {
    const int64_t R = r + p.pt;
    std::fill(acc, acc + sw * T, 0.0f);
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t d = R - i * p.dh;
      if (d < 0 || d % p.sh != 0 || d / p.sh >= p.oh)
        continue;
      const float *__restrict xr = xp + (d / p.sh) * p.xs[2];
      if (p.xs[3] != 1) {
        for (int64_t q = 0; q < p.ow; ++q)
          xrow[q] = xr[q * p.xs[3]];
        xr = xrow;
      }
      for (int64_t j = 0; j < p.kw; ++j) {
        const int64_t col = j * p.dw;
        float *__restrict a = acc + (col % sw) * T + col / sw;
        const float wv = wp[i * p.ws[2] + j * p.ws[3]];
#pragma omp simd
        for (int64_t q = 0; q < p.ow; ++q)
          a[q] += wv * xr[q];
      }
    }
    // Interleave the phases into y's row: column c is full column c + pl,
    // phase (c + pl) % sw, index (c + pl) / sw.
    float *yr = yp + r * p.ys[2];
    const int64_t ys3 = p.ys[3];
    if (sw == 2 && ys3 == 1 && !p.accumulate) {
      // Stride 2, contiguous: y[2k] = A[k], y[2k + 1] = B[k] (a zip the
      // compiler vectorizes with shuffles, not 2 * w scalar stores).
      const float *__restrict A = acc + (p.pl % 2) * T + p.pl / 2;
      const float *__restrict B = acc + ((p.pl + 1) % 2) * T + (p.pl + 1) / 2;
      float *__restrict yo = yr;
      const int64_t pairs = p.w / 2;
#pragma omp simd
      for (int64_t k = 0; k < pairs; ++k) {
        yo[2 * k] = A[k];
        yo[2 * k + 1] = B[k];
      }
      if (p.w % 2)
        yo[p.w - 1] = A[pairs];
      continue;
    }
    for (int64_t rho = 0; rho < sw; ++rho) {
      const int64_t c0 = ((rho - p.pl) % sw + sw) % sw;
      if (c0 >= p.w)
        continue;
      const float *a = acc + rho * T + (c0 + p.pl) / sw;
      const int64_t cnt = (p.w - c0 + sw - 1) / sw, step = sw * ys3;
      float *yc = yr + c0 * ys3;
      if (p.accumulate) {
        for (int64_t k = 0; k < cnt; ++k)
          yc[k * step] += a[k];
      } else if (step == 1) {
        std::copy(a, a + cnt, yc);
      } else {
        for (int64_t k = 0; k < cnt; ++k)
          yc[k * step] = a[k];
      }
    }
  }
}

void dwTransposedConv(const DwTParams &p, const float *x, const float *wt,
                      float *y, int64_t threads) {
  const int64_t planes = p.n * p.g * p.f;
  if (planes <= 0 || p.h <= 0 || p.w <= 0)
    return;
  // Stride 1: no zeros to skip; the transposed conv is the forward
  // depthwise conv of x with the flipped kernel (w read backwards: negative
  // strides from its last tap) and padding d (k - 1) - crop, which
  // depthwisePlane's register blocks run faster than the row loop below
  // (kh * kw loads per 16 x 8 outputs, no accumulator row in memory).
  const int64_t qt = p.dh * (p.kh - 1) - p.pt, ql = p.dw * (p.kw - 1) - p.pl;
  if (p.sh == 1 && p.sw == 1 && qt >= 0 && ql >= 0) {
    Params q;
    q.n = p.n; q.g = p.g; q.c = 1; q.h = p.oh; q.w = p.ow; q.f = p.f;
    q.kh = p.kh; q.kw = p.kw; q.oh = p.h; q.ow = p.w;
    q.sh = q.sw = 1; q.dh = p.dh; q.dw = p.dw;
    const int64_t xs[5] = {p.xs[0], p.xs[1], 0, p.xs[2], p.xs[3]};
    const int64_t ws[5] = {p.ws[0], p.ws[1], 0, -p.ws[2], -p.ws[3]};
    const int64_t ys[5] = {p.ys[0], p.ys[1] * p.f, p.ys[1], p.ys[2], p.ys[3]};
    std::copy(xs, xs + 5, q.xs);
    std::copy(ws, ws + 5, q.ws);
    std::copy(ys, ys + 5, q.ys);
    q.accumulate = p.accumulate;
    q.pt = qt;
    q.pl = ql;
    q.pb = std::max<int64_t>(0, p.h - 1 + p.dh * (p.kh - 1) - qt - (p.oh - 1));
    q.pr = std::max<int64_t>(0, p.w - 1 + p.dw * (p.kw - 1) - ql - (p.ow - 1));
    depthwiseConv(q, x,
                  wt + (p.kh - 1) * p.ws[2] + (p.kw - 1) * p.ws[3], y,
                  threads);
    return;
  }
  // Phase length: every full column a window reaches or y reads.
  const int64_t fw = p.ow > 0 ? (p.ow - 1) * p.sw + p.dw * (p.kw - 1) + 1 : 0;
  const int64_t T = (std::max(fw, p.pl + p.w) + p.sw - 1) / p.sw + 1;
#pragma omp parallel num_threads(ompThreads(threads))
  {
    std::vector<float> acc(p.sw * T), xrow(std::max<int64_t>(p.ow, 1));
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      int64_t n = plane / (p.g * p.f), g = plane / p.f % p.g, f = plane % p.f;
      dwTransposedPlane(p, x + n * p.xs[0] + g * p.xs[1],
                        wt + g * p.ws[0] + f * p.ws[1],
                        y + n * p.ys[0] + (g * p.f + f) * p.ys[1], acc.data(),
                        T, xrow.data());
    }
  }
}

// ---- Depthwise convolutions on channels-last memory ----------------------
//
// The layout kiln-cpu-conv-channels-last gives mobilenet-style networks: x
// [n, h, w, g] and y [n, oh, ow, g] with the channels contiguous (stride 1;
// the other strides as given), one input and one output channel per group.
// Each output pixel is a vector multiply-add over its kh * kw taps of
// whole channel vectors (16 channels in one VBlock), so the loops
// vectorize along the channels with no padded copy of the input: the
// zero padding is skipped (taps outside the image add nothing). Work is
// split by output row (n, oh) over the OpenMP threads; within a row, pixels
// away from the left and right edges go in blocks whose taps need no bounds
// check, and a 3-wide kernel of dilation 1 and stride 1 or 2 (mobilenet's)
// loads each input vector of a kernel row once for every tap that reads it.
// The input clamp (Params::inClamp) applies to each loaded vector and the
// output clamp to the accumulators before the store, as in depthwisePlane.
// Channels past the last multiple of 16 run the same loops one at a time.

/// Whether call `p` reads and writes channels-last memory with one input
/// and one output channel per group (see above).
bool depthwiseChannelsLast(const Params &p) {
  return p.g > 1 && p.c == 1 && p.f == 1 && p.xs[1] == 1 && p.ys[1] == 1 &&
         p.xs[3] >= p.g && p.xs[4] >= p.g && p.ys[3] >= p.g &&
         p.ys[4] >= p.g;
}

/// The weights and bias of a channels-last depthwise call, repacked per tap
/// as [kh * kw][gp] (gp: g rounded up to 16, the rest zero).
struct DepthwiseWeights {
  int64_t gp;
  std::vector<float> w, bias;
};

/// The R accumulators of pixels ow0.. of output row `yr`, channels cb..:
/// the output (accumulating) or the bias.
template <int R, typename T>
__attribute__((always_inline)) inline void
dwStart(const Params &p, const DepthwiseWeights &dw, const float *yr,
        int64_t ow0, int64_t cb, T *acc) {
  for (int r = 0; r < R; ++r) {
    if (p.accumulate)
      std::memcpy(&acc[r], yr + (ow0 + r) * p.ys[4] + cb, sizeof(T));
    else
      std::memcpy(&acc[r], dw.bias.data() + cb, sizeof(T));
  }
}

/// The output clamp (kt.clamp's rule) on the accumulators, then the store.
template <int R, typename T>
__attribute__((always_inline)) inline void
dwFinish(const Params &p, float *yr, int64_t ow0, int64_t cb, T *acc) {
  if (p.clamp) {
    const T lo = p.lo - (T){}, hi = p.hi - (T){};
    for (int r = 0; r < R; ++r) {
      acc[r] = acc[r] < lo ? lo : acc[r];
      acc[r] = acc[r] > hi ? hi : acc[r];
    }
  }
  for (int r = 0; r < R; ++r)
    std::memcpy(yr + (ow0 + r) * p.ys[4] + cb, &acc[r], sizeof(T));
}

/// `v` = the input value(s) at `x`, clamped where the call has an input
/// clamp. (An out-parameter: a vector return value would change the ABI
/// of the baseline clone.)
template <typename T>
__attribute__((always_inline)) inline void dwLoad(const Params &p,
                                                  const float *x, T &v) {
  std::memcpy(&v, x, sizeof(T));
  if (p.inClamp) {
    const T ilo = p.ilo - (T){}, ihi = p.ihi - (T){};
    v = v < ilo ? ilo : v;
    v = v > ihi ? ihi : v;
  }
}

/// The loops of one output row `yr` (n, oh) for channels [cb, cb + V) where
/// V is 16 (`Vec`) or 1 (the tail): pixels ow0 .. ow0 + R - 1, taps checked
/// against the image's width where `Checked`.
template <int R, bool Checked, typename T>
__attribute__((always_inline)) inline void
dwPixelsNHWC(const Params &p, const DepthwiseWeights &dw, const float *xn,
             float *yr, int64_t oh, int64_t ow0, int64_t cb) {
  T acc[R];
  dwStart<R>(p, dw, yr, ow0, cb, acc);
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    const int64_t ih = oh * p.sh + kh * p.dh - p.pt;
    if (ih < 0 || ih >= p.h)
      continue;
    const float *xr = xn + ih * p.xs[3] + cb;
    for (int64_t kw = 0; kw < p.kw; ++kw) {
      T wv;
      std::memcpy(&wv, dw.w.data() + (kh * p.kw + kw) * dw.gp + cb,
                  sizeof(T));
      for (int r = 0; r < R; ++r) {
        const int64_t iw = (ow0 + r) * p.sw + kw * p.dw - p.pl;
        if (Checked && (iw < 0 || iw >= p.w))
          continue;
        T v;
        dwLoad(p, xr + iw * p.xs[4], v);
        acc[r] += wv * v;
      }
    }
  }
  dwFinish<R>(p, yr, ow0, cb, acc);
}

/// dwPixelsNHWC for a 3-wide kernel of dilation 1 and stride SW, R pixels
/// with no bounds check in width: the (R - 1) * SW + 3 input vectors of a
/// kernel row are loaded (and clamped) once.
template <int R, int SW>
__attribute__((always_inline)) inline void
dwPixels3NHWC(const Params &p, const DepthwiseWeights &dw, const float *xn,
              float *yr, int64_t oh, int64_t ow0, int64_t cb) {
  VBlock acc[R];
  dwStart<R>(p, dw, yr, ow0, cb, acc);
  constexpr int L = (R - 1) * SW + 3;
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    const int64_t ih = oh * p.sh + kh * p.dh - p.pt;
    if (ih < 0 || ih >= p.h)
      continue;
    const float *xr = xn + ih * p.xs[3] + (ow0 * SW - p.pl) * p.xs[4] + cb;
    VBlock in[L];
    for (int l = 0; l < L; ++l)
      dwLoad(p, xr + l * p.xs[4], in[l]);
    for (int kw = 0; kw < 3; ++kw) {
      VBlock wv;
      std::memcpy(&wv, dw.w.data() + (kh * 3 + kw) * dw.gp + cb,
                  sizeof(VBlock));
      for (int r = 0; r < R; ++r)
        acc[r] += wv * in[r * SW + kw];
    }
  }
  dwFinish<R>(p, yr, ow0, cb, acc);
}

/// One output row (n, oh) of a channels-last depthwise call: pixels
/// [owLo, owHi) need no bounds check in width.
KILN_DW_CLONES
void depthwiseRowNHWC(const Params &p, const DepthwiseWeights &dw,
                      const float *xn, float *yr, int64_t oh, int64_t owLo,
                      int64_t owHi) {
  typedef float V1 __attribute__((vector_size(sizeof(float))));
  const int64_t gv = p.g / kBlock * kBlock;
  int64_t ow = 0;
  for (; ow < owLo; ++ow)
    for (int64_t cb = 0; cb < gv; cb += kBlock)
      dwPixelsNHWC<1, true, VBlock>(p, dw, xn, yr, oh, ow, cb);
  // The 3-wide fast path: with few channel vectors (<= 6: mobilenet_v2's
  // 32- and 96-channel layers on 112x112 images) each vector's sweep along
  // the whole row, else every vector per block of pixels (measured on
  // mobilenet_v2's ten depthwise shapes, single thread: 32x112x112 1.9 vs
  // 2.4 ms and 96x112x112 stride 2 4.0 vs 5.0 ms along the row, 144x56x56
  // 3.0 vs 3.5 ms and 192x28x28 0.50 vs 0.89 ms per block).
  // (Loops written out: a lambda would not be compiled for the clone's
  // target.)
  const bool alongRow = gv <= 6 * kBlock;
#define KILN_DW_FAST3(R, SW)                                                   \
  {                                                                            \
    const int64_t ow0 = ow, end = ow0 + (owHi - ow0) / (R) * (R);              \
    if (alongRow) {                                                            \
      for (int64_t cb = 0; cb < gv; cb += kBlock)                              \
        for (int64_t o = ow0; o < end; o += (R))                               \
          dwPixels3NHWC<R, SW>(p, dw, xn, yr, oh, o, cb);                      \
    } else {                                                                   \
      for (int64_t o = ow0; o < end; o += (R))                                 \
        for (int64_t cb = 0; cb < gv; cb += kBlock)                            \
          dwPixels3NHWC<R, SW>(p, dw, xn, yr, oh, o, cb);                      \
    }                                                                          \
    ow = end;                                                                  \
  }
  if (p.kw == 3 && p.dw == 1 && p.sw == 1 && owHi > ow)
    KILN_DW_FAST3(8, 1)
  else if (p.kw == 3 && p.dw == 1 && p.sw == 2 && owHi > ow)
    KILN_DW_FAST3(4, 2)
#undef KILN_DW_FAST3
  for (; ow + 4 <= owHi; ow += 4)
    for (int64_t cb = 0; cb < gv; cb += kBlock)
      dwPixelsNHWC<4, false, VBlock>(p, dw, xn, yr, oh, ow, cb);
  for (; ow < p.ow; ++ow)
    for (int64_t cb = 0; cb < gv; cb += kBlock)
      dwPixelsNHWC<1, true, VBlock>(p, dw, xn, yr, oh, ow, cb);
  // The channels past the last whole vector, one at a time.
  for (int64_t c = gv; c < p.g; ++c)
    for (int64_t o = 0; o < p.ow; ++o)
      dwPixelsNHWC<1, true, V1>(p, dw, xn, yr, oh, o, c);
}

void depthwiseConvChannelsLast(const Params &p, const float *x,
                               const float *wt, float *y, int64_t threads) {
  if (p.n <= 0 || p.oh <= 0 || p.ow <= 0)
    return; // an empty output
  DepthwiseWeights dw;
  dw.gp = (p.g + kBlock - 1) / kBlock * kBlock;
  dw.w.assign(p.kh * p.kw * dw.gp, 0.0f);
  dw.bias.assign(dw.gp, 0.0f);
  for (int64_t g = 0; g < p.g; ++g) {
    for (int64_t kh = 0; kh < p.kh; ++kh)
      for (int64_t kw = 0; kw < p.kw; ++kw)
        dw.w[(kh * p.kw + kw) * dw.gp + g] =
            wt[g * p.ws[0] + kh * p.ws[3] + kw * p.ws[4]];
    dw.bias[g] = p.biasAt(g, 0);
  }
  // Output columns whose every tap is inside the image's width.
  const int64_t span = (p.kw - 1) * p.dw;
  int64_t owLo = (p.pl + p.sw - 1) / p.sw;
  int64_t last = p.w - 1 - span + p.pl; // ow * sw <= last
  int64_t owHi = last < 0 ? 0 : std::min(p.ow, last / p.sw + 1);
  owLo = std::min(std::min(owLo, owHi), p.ow);
  owHi = std::max(owHi, owLo);
  const int64_t rows = p.n * p.oh;
#pragma omp parallel for num_threads(ompThreads(threads)) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t n = row / p.oh, oh = row % p.oh;
    depthwiseRowNHWC(p, dw, x + n * p.xs[0], y + n * p.ys[0] + oh * p.ys[3],
                     oh, owLo, owHi);
  }
}

/// The clamp of Params::clamp over the whole output, in place: for the
/// calls that did not apply it as they stored (everything but the depthwise
/// loops). One read and write of the output, on the OpenMP threads.
KILN_DW_CLONES
void clampOutput(const Params &p, float *y, int64_t threads) {
  const int64_t planes = p.n * p.g * p.f;
  if (planes <= 0 || p.oh <= 0 || p.ow <= 0)
    return;
  const float lo = p.lo, hi = p.hi;
  // A dense output in any dim order (NCHW, or the channels-last buffers
  // kiln-cpu-conv-to-onednn passes between chained convs) is one flat
  // range of n * g * f * oh * ow floats.
  {
    // (Plain arrays and a hand-written sort: std::pair / std::sort inside
    // a target_clones function leave lld undefined clone symbols.)
    int64_t st[5] = {p.ys[0], p.ys[1], p.ys[2], p.ys[3], p.ys[4]};
    int64_t sz[5] = {p.n, p.g, p.f, p.oh, p.ow};
    for (int i = 1; i < 5; ++i)
      for (int j = i; j > 0 && st[j - 1] > st[j]; --j) {
        int64_t t = st[j];
        st[j] = st[j - 1];
        st[j - 1] = t;
        t = sz[j];
        sz[j] = sz[j - 1];
        sz[j - 1] = t;
      }
    int64_t expect = 1;
    bool dense = true;
    for (int i = 0; i < 5; ++i) {
      if (sz[i] == 1)
        continue;
      dense = dense && st[i] == expect;
      expect *= sz[i];
    }
    if (dense) {
      const int64_t total = expect, chunk = 16384;
#pragma omp parallel for num_threads(ompThreads(threads)) schedule(static)
      for (int64_t c0 = 0; c0 < total; c0 += chunk) {
        float *__restrict yc = y + c0;
        const int64_t m = std::min(chunk, total - c0);
#pragma omp simd
        for (int64_t j = 0; j < m; ++j) {
          float v = yc[j];
          v = v < lo ? lo : v;
          yc[j] = v > hi ? hi : v;
        }
      }
      return;
    }
  }
#pragma omp parallel for num_threads(ompThreads(threads)) schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    int64_t n = plane / (p.g * p.f), g = plane / p.f % p.g, f = plane % p.f;
    float *yp = y + n * p.ys[0] + g * p.ys[1] + f * p.ys[2];
    for (int64_t i = 0; i < p.oh; ++i) {
      float *__restrict yr = yp + i * p.ys[3];
      if (p.ys[4] == 1) {
#pragma omp simd
        for (int64_t j = 0; j < p.ow; ++j) {
          float v = yr[j];
          v = v < lo ? lo : v;
          yr[j] = v > hi ? hi : v;
        }
      } else {
        for (int64_t j = 0; j < p.ow; ++j) {
          float v = yr[j * p.ys[4]];
          v = v < lo ? lo : v;
          yr[j * p.ys[4]] = v > hi ? hi : v;
        }
      }
    }
  }
}

// The weight gradient of a depthwise conv in registers. In the call's terms
// (depthwiseWeightGrad below) output (i, j) of pair (g, f) is the sum over
// c, a, b of x[c, i sh + a dh, j sw + b dw] * wt[c, a, b], with few outputs
// (the forward's kernel, 3x3) and long reductions (a, b: the forward's
// output plane). Per pair, all OH * OW outputs are vector accumulators
// held in registers across the whole reduction: each L-wide block of a wt
// row (the forward's output gradient) is loaded once and multiplied into
// every accumulator with the x block its output reads, the lanes summed
// once at the end. x's plane (one forward channel of one batch element)
// is first copied into a scratch split by dw into its column phases
// (phase r holds columns r, r + dw, ...: a stride-2 forward reads every
// other column), and wt's plane into rows padded to a multiple of L with
// zeros, so that every load is a contiguous vector; the last block of a
// row reads x past the row's end (the next row, or the scratch's zero
// slack), and its products are masked (not only multiplied by the zero
// gradient: an inf there would give NaN).
struct WgradScratch {
  int64_t hp = 0, wp = 0, xpitch = 0, gpitch = 0;
  std::vector<float> x, row, g;
};

void shapeWgrad(const Params &p, int64_t lanes, WgradScratch &s) {
  // The padded plane (the call's padding: zero rows and columns around x,
  // or fewer where a bottom/right padding is negative).
  s.hp = std::max<int64_t>(0, p.pt + p.h + p.pb);
  s.wp = std::max<int64_t>(0, p.pl + p.w + p.pr);
  s.xpitch = (s.wp + p.dw - 1) / p.dw + lanes;
  s.gpitch = (p.kw + lanes - 1) / lanes * lanes;
  s.x.assign(p.dw * s.hp * s.xpitch + lanes, 0.0f);
  s.row.assign(s.wp + lanes, 0.0f);
  s.g.assign(p.kh * s.gpitch, 0.0f);
}

/// x's plane (channel c of group g, at `xc`) into s.x: padded row i (input
/// row i - pt, zero outside) split by dw into its column phases (phase r,
/// row i starts at (r * hp + i) * xpitch and holds padded columns r,
/// r + dw, ...). A row goes through s.row (the padded row) where it is
/// strided or the stride is not 1.
__attribute__((always_inline)) inline void
wgradCopyPlane(const Params &p, WgradScratch &s, const float *xc) {
  const int64_t dw = p.dw, wp = s.wp;
  // The input columns inside the padded row: [c0, c1) of the padded row.
  const int64_t c0 = std::min(p.pl, wp),
                c1 = std::max(c0, std::min(wp, p.pl + p.w));
  for (int64_t i = 0; i < s.hp; ++i) {
    const int64_t ih = i - p.pt;
    const bool inside = ih >= 0 && ih < p.h;
    const float *src = inside ? xc + ih * p.xs[3] : nullptr;
    const bool inPlace = dw == 1 && p.xs[4] == 1;
    float *__restrict row =
        inPlace ? s.x.data() + i * s.xpitch : s.row.data();
    if (!inside) {
      std::fill(row, row + wp, 0.0f);
    } else {
      std::fill(row, row + c0, 0.0f);
      const float *sc = src + (c0 - p.pl) * p.xs[4];
      if (p.xs[4] == 1)
        std::memcpy(row + c0, sc, (c1 - c0) * sizeof(float));
      else
        for (int64_t j = c0; j < c1; ++j)
          row[j] = sc[(j - c0) * p.xs[4]];
      std::fill(row + c1, row + wp, 0.0f);
    }
    if (inPlace)
      continue; // written in place
    if (dw == 1) {
      std::memcpy(s.x.data() + i * s.xpitch, row, wp * sizeof(float));
    } else if (dw == 2) {
      // Both phases in one pass over the row (a gather per phase is
      // several times slower).
      float *__restrict p0 = s.x.data() + i * s.xpitch;
      float *__restrict p1 = s.x.data() + (s.hp + i) * s.xpitch;
      const int64_t half = wp / 2;
      for (int64_t t = 0; t < half; ++t) {
        p0[t] = row[2 * t];
        p1[t] = row[2 * t + 1];
      }
      if (wp % 2)
        p0[half] = row[wp - 1];
    } else {
      for (int64_t r = 0; r < dw; ++r) {
        float *__restrict ph = s.x.data() + (r * s.hp + i) * s.xpitch;
        for (int64_t t = 0; t * dw + r < wp; ++t)
          ph[t] = row[t * dw + r];
      }
    }
  }
}

template <int OH, int OW, typename T>
__attribute__((always_inline)) inline void
wgradPairRegs(const Params &p, WgradScratch &s, const float *xg,
              const float *wg, float *yp) {
  constexpr int L = sizeof(T) / sizeof(float);
  typedef int32_t TI __attribute__((vector_size(sizeof(T))));
  T acc[OH * OW];
  for (int o = 0; o < OH * OW; ++o)
    acc[o] = (T){};
  const int64_t full = p.kw / L * L, rest = p.kw - full;
  TI mask;
  for (int l = 0; l < L; ++l)
    mask[l] = l < rest ? -1 : 0;
  // Where output (i, j) reads row a's block b0 in the phase planes:
  // rowOff[i] + a * dh * xpitch + colOff[j] + b0.
  int64_t rowOff[OH], colOff[OW];
  for (int i = 0; i < OH; ++i)
    rowOff[i] = i * p.sh * s.xpitch;
  for (int j = 0; j < OW; ++j) {
    const int64_t col = j * p.sw;
    colOff[j] = (col % p.dw) * s.hp * s.xpitch + col / p.dw;
  }
  const int64_t aStep = p.dh * s.xpitch;
  for (int64_t c = 0; c < p.c; ++c) {
    // x's plane, padded, into its dw column phases (the slack past each
    // phase row stays zero: only masked lanes read it).
    wgradCopyPlane(p, s, xg + c * p.xs[2]);
    // wt's plane into rows of gpitch (zeros past kw, written once by
    // shapeWgrad).
    const float *wc = wg + c * p.ws[2];
    for (int64_t a = 0; a < p.kh; ++a) {
      float *__restrict gr = s.g.data() + a * s.gpitch;
      const float *src = wc + a * p.ws[3];
      if (p.ws[4] == 1)
        std::memcpy(gr, src, p.kw * sizeof(float));
      else
        for (int64_t b = 0; b < p.kw; ++b)
          gr[b] = src[b * p.ws[4]];
    }
    for (int64_t a = 0; a < p.kh; ++a) {
      const float *gr = s.g.data() + a * s.gpitch;
      const float *xa = s.x.data() + a * aStep;
      int64_t b0 = 0;
      for (; b0 < full; b0 += L) {
        T gv;
        std::memcpy(&gv, gr + b0, sizeof(T));
#pragma GCC unroll 8
        for (int i = 0; i < OH; ++i)
#pragma GCC unroll 8
          for (int j = 0; j < OW; ++j) {
            T xv;
            std::memcpy(&xv, xa + rowOff[i] + colOff[j] + b0, sizeof(T));
            acc[i * OW + j] += gv * xv;
          }
      }
      if (rest) {
        T gv;
        std::memcpy(&gv, gr + b0, sizeof(T));
#pragma GCC unroll 8
        for (int i = 0; i < OH; ++i)
#pragma GCC unroll 8
          for (int j = 0; j < OW; ++j) {
            T xv;
            std::memcpy(&xv, xa + rowOff[i] + colOff[j] + b0, sizeof(T));
            T prod = gv * xv;
            acc[i * OW + j] += mask ? prod : (T){};
          }
      }
    }
  }
  for (int i = 0; i < OH; ++i)
    for (int j = 0; j < OW; ++j) {
      float v = 0.0f;
      for (int l = 0; l < L; ++l)
        v += acc[i * OW + j][l];
      float &o = yp[i * p.ys[3] + j * p.ys[4]];
      o = p.accumulate ? o + v : v;
    }
}

/// Whether wgradPairRegs has an instance for call `p`'s output plane.
bool wgradInRegs(const Params &p) {
  return (p.oh == 1 && p.ow == 1) || (p.oh == 5 && p.ow == 5) ||
         ((p.oh == 3 || p.oh == 4) && (p.ow == 3 || p.ow == 4));
}

/// One pair (g, f) of depthwiseWeightGrad in registers (wgradInRegs):
/// 8-wide vectors for rows of at most 8 (a 7x7 forward output), else 16.
KILN_DW_CLONES
void wgradPair(const Params &p, WgradScratch &s, const float *xg,
               const float *wg, float *yp) {
  typedef float V8 __attribute__((vector_size(8 * sizeof(float))));
#define KILN_WG_CASE(OH, OW)                                                   \
  if (p.oh == OH && p.ow == OW) {                                              \
    if (p.kw <= 8)                                                             \
      wgradPairRegs<OH, OW, V8>(p, s, xg, wg, yp);                             \
    else                                                                       \
      wgradPairRegs<OH, OW, VBlock>(p, s, xg, wg, yp);                         \
    return;                                                                    \
  }
  KILN_WG_CASE(3, 3)
  KILN_WG_CASE(4, 4)
  KILN_WG_CASE(3, 4)
  KILN_WG_CASE(4, 3)
  KILN_WG_CASE(1, 1)
  KILN_WG_CASE(5, 5)
#undef KILN_WG_CASE
}

void depthwiseWeightGrad(const Params &p, const float *x, const float *wt,
                         float *y, int64_t threads) {
  // n == 1: one (forward) input channel per group. In the call's terms the
  // output (i, j) of pair (g, f) is sum over c, a, b of
  // x[c, i sh + a dh, j sw + b dw] * wt[c, a, b]; a is the forward's
  // output row, b its column, dw the forward's stride. Output planes of
  // 1x1, 3x3, 5x5 and 3 or 4 by 3 or 4 (the forward's kernel, or a
  // stride-2 3x3's 4x4 before its slice) run wgradPair, all outputs in registers. Others:
  // per pair, each (c, a) row of wt is read once and dotted with the
  // oh * ow shifted x rows (accumulated in acc[i][j]). Where dw > 1 (a
  // strided forward conv) or x's row is strided, the x row is first split
  // into its dw phases (phase r holds columns r, r + dw, ...), so that
  // every dot product reads contiguous memory and vectorizes.
  const int64_t pairs = p.g * p.f;
  if (p.padded() && !wgradInRegs(p)) {
    // The dot-product loops below read an unpadded x: a padded copy
    // [g, c, hp, wp] (zero outside x; rows and columns cut where a
    // bottom/right padding is negative).
    Params q = p;
    q.h = std::max<int64_t>(0, p.pt + p.h + p.pb);
    q.w = std::max<int64_t>(0, p.pl + p.w + p.pr);
    q.pt = q.pl = q.pb = q.pr = 0;
    q.xs[4] = 1;
    q.xs[3] = q.w;
    q.xs[2] = q.h * q.w;
    q.xs[1] = p.c * q.xs[2];
    q.xs[0] = p.g * q.xs[1];
    std::vector<float> xp(p.g * p.c * q.h * q.w);
    const int64_t planes = p.g * p.c;
#pragma omp parallel for num_threads(ompThreads(threads)) schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float *xs = x + plane / p.c * p.xs[1] + plane % p.c * p.xs[2];
      float *d = xp.data() + plane * q.xs[2];
      for (int64_t i = 0; i < q.h; ++i)
        for (int64_t j = 0; j < q.w; ++j) {
          const int64_t ih = i - p.pt, iw = j - p.pl;
          d[i * q.w + j] = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w
                               ? xs[ih * p.xs[3] + iw * p.xs[4]]
                               : 0.0f;
        }
    }
    depthwiseWeightGrad(q, xp.data(), wt, y, threads);
    return;
  }
  if (wgradInRegs(p) && p.kw > 0 && p.kh > 0) {
    const int64_t lanes = p.kw <= 8 ? 8 : kBlock;
#pragma omp parallel num_threads(ompThreads(threads))
    {
      WgradScratch s;
      shapeWgrad(p, lanes, s);
#pragma omp for schedule(static)
      for (int64_t pair = 0; pair < pairs; ++pair) {
        int64_t g = pair / p.f, f = pair % p.f;
        wgradPair(p, s, x + g * p.xs[1], wt + g * p.ws[0] + f * p.ws[1],
                  y + g * p.ys[1] + f * p.ys[2]);
      }
    }
    return;
  }
  const int64_t outs = p.oh * p.ow;
  const bool rowsContiguous = p.dw == 1 && p.xs[4] == 1;
  const int64_t phaseLen = (p.w + p.dw - 1) / p.dw;
#pragma omp parallel num_threads(ompThreads(threads))
  {
    std::vector<float> acc(outs), phases(rowsContiguous ? 0 : p.dw * phaseLen),
        wrow(p.ws[4] == 1 ? 0 : p.kw);
#pragma omp for schedule(static)
    for (int64_t pair = 0; pair < pairs; ++pair) {
      int64_t g = pair / p.f, f = pair % p.f;
      const float *xg = x + g * p.xs[1];
      const float *wg = wt + g * p.ws[0] + f * p.ws[1];
      float *yp = y + g * p.ys[1] + f * p.ys[2];
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t a = 0; a < p.kh; ++a) {
          const float *wr = wg + c * p.ws[2] + a * p.ws[3];
          if (p.ws[4] != 1) {
            for (int64_t b = 0; b < p.kw; ++b)
              wrow[b] = wr[b * p.ws[4]];
            wr = wrow.data();
          }
          for (int64_t i = 0; i < p.oh; ++i) {
            const float *xr = xg + c * p.xs[2] + (i * p.sh + a * p.dh) * p.xs[3];
            if (!rowsContiguous) {
              for (int64_t r = 0; r < p.dw; ++r) {
                float *ph = phases.data() + r * phaseLen;
                const float *src = xr + r * p.xs[4];
                const int64_t step = p.dw * p.xs[4];
                for (int64_t t = 0; r + t * p.dw < p.w; ++t)
                  ph[t] = src[t * step];
              }
            }
            for (int64_t j = 0; j < p.ow; ++j) {
              int64_t col0 = j * p.sw;
              const float *xk =
                  rowsContiguous
                      ? xr + col0
                      : phases.data() + (col0 % p.dw) * phaseLen + col0 / p.dw;
              float s = 0.0f;
#pragma omp simd reduction(+ : s)
              for (int64_t b = 0; b < p.kw; ++b)
                s += xk[b] * wr[b];
              acc[i * p.ow + j] += s;
            }
          }
        }
      for (int64_t i = 0; i < p.oh; ++i)
        for (int64_t j = 0; j < p.ow; ++j) {
          float &o = yp[i * p.ys[3] + j * p.ys[4]];
          o = p.accumulate ? o + acc[i * p.ow + j] : acc[i * p.ow + j];
        }
    }
  }
}

/// Which direct loop nest (if any) runs call `p` (see above).
Entry::Direct chooseDirect(const Params &p) {
  const char *env = std::getenv("KILN_ONEDNN_DIRECT");
  if (env && std::strcmp(env, "0") == 0)
    return Entry::Direct::None;
  if (p.g <= 1)
    return Entry::Direct::None;
  if (p.n == 1 && p.kh * p.kw > p.oh * p.ow && !p.hasBias)
    return Entry::Direct::DepthwiseWeightGrad;
  if (depthwiseChannelsLast(p))
    return Entry::Direct::DepthwiseChannelsLast;
  if (p.c == 1)
    return Entry::Direct::Depthwise;
  return Entry::Direct::None;
}

/// Whether the grouped dims (g, c) of an operand are one channel dim of
/// stride s[2] (always when there is one group).
bool channelsUniform(int64_t groups, int64_t perGroup, const int64_t *s) {
  return groups == 1 || perGroup == 0 || s[1] == perGroup * s[2];
}

/// The reorders between the user's descriptors (e->src/wei/dst) and the
/// ones the primitive wants (e->convSrc/convWei/convDst).
void addReorders(Entry &e, bool accumulate) {
  auto reorder = [](const dnnl::memory::desc &from,
                    const dnnl::memory::desc &to) {
    dnnl::engine &eng = engine();
    return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
  };
  if (e.convSrc != e.src) {
    e.reorderSrc = true;
    e.srcReorder = reorder(e.src, e.convSrc);
  }
  if (e.convDst != e.dst) {
    e.reorderDst = true;
    e.dstOut = reorder(e.convDst, e.dst);
    if (accumulate)
      e.dstIn = reorder(e.dst, e.convDst);
  }
  if (e.convWei != e.wei) {
    e.reorderWei = true;
    e.weiReorder = reorder(e.wei, e.convWei);
  }
}

/// Whether call `p` has the shape of a convolution's weight gradient as
/// kiln-autodiff emits it (lib/Autodiff/Conv.cpp, convWeightGrad): the
/// forward's batch and channel dims swapped, the output gradient as the
/// weight, so the "kernel" (the forward's output, OH0 x OW0) is larger than
/// the "output" (the forward's kernel, kH x kW). As a forward convolution
/// oneDNN runs it as a GEMM with K = N0 * OH0 * OW0 and only kH * kW
/// columns, after reordering the whole output gradient as a weight; its
/// backward-weights primitive is made for exactly this reduction.
/// KILN_ONEDNN_WGRAD=0 turns the rule off, =1 forces it where possible.
bool looksLikeWeightGrad(const Params &p) {
  const char *env = std::getenv("KILN_ONEDNN_WGRAD");
  if (env && std::strcmp(env, "0") == 0)
    return false;
  if (p.g != 1 || p.accumulate || p.hasBias)
    return false;
  if (env && std::strcmp(env, "1") == 0)
    return true;
  return p.kh * p.kw > p.oh * p.ow;
}

/// Call `p` (ungrouped, overwriting) as oneDNN's backward-weights
/// primitive. In the forward convolution's names (suffix 0): the call's
/// batch n is its input channels C0, the call's channels c its batch N0,
/// the call's kernel (kh, kw) its output (OH0, OW0) and the call's output
/// (oh, ow) its kernel, possibly with rows past the last window; the call's
/// dilation is its stride and the call's stride its dilation:
///   y[n, f, oh, ow] = sum_{c, kh, kw} x[n, c, oh*sh + kh*dh, ...] *
///                     w[f, c, kh, kw]
///   = diff_w[O0 = f, C0 = n, i = oh, j = ow]
///   = sum_{N0, OH0, OW0} src[N0, C0, OH0*dh + i*sh, ...] * diff_dst[N0, O0,
///     OH0, OW0].
/// Every operand keeps its memory; only the descriptors' dims and strides
/// are permuted. False where oneDNN takes no such primitive.
bool createWeightGrad(Entry &e, const Params &p) {
  using md = dnnl::memory::desc;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  int64_t N0 = p.c, C0 = p.n, O0 = p.f, OH0 = p.kh, OW0 = p.kw, KH = p.oh,
          KW = p.ow;
  // The zero padding is the call's top/left padding (in-kernel padding,
  // or 0 where the input comes padded already). The rows and columns past
  // the last window: a bottom/right padding (at most the call's) where the
  // windows reach into it, else the source seen shorter (a negative
  // padding, which oneDNN may refuse), so that oneDNN's output-size rule
  // gives OH0 x OW0 exactly.
  int64_t h = p.h, w = p.w;
  int64_t padB = (OH0 - 1) * p.dh + (KH - 1) * p.sh + 1 - p.h - p.pt,
          padRt = (OW0 - 1) * p.dw + (KW - 1) * p.sw + 1 - p.w - p.pl;
  if (padB < 0) {
    h += padB;
    padB = 0;
  }
  if (padRt < 0) {
    w += padRt;
    padRt = 0;
  }
  try {
    md src({N0, C0, h, w}, dt::f32, {p.xs[2], p.xs[0], p.xs[3], p.xs[4]});
    md diffDst({N0, O0, OH0, OW0}, dt::f32,
               {p.ws[2], p.ws[1], p.ws[3], p.ws[4]});
    md diffWei({O0, C0, KH, KW}, dt::f32,
               {p.ys[2], p.ys[0], p.ys[3], p.ys[4]});
    dnnl::memory::dims strides = {p.dh, p.dw}, dil = {p.sh - 1, p.sw - 1},
                       padL = {p.pt, p.pl}, padR = {padB, padRt};
    const char *layout = std::getenv("KILN_ONEDNN_LAYOUT");
    bool plain = layout && std::strcmp(layout, "plain") == 0;
    md srcAny = plain ? src : md({N0, C0, h, w}, dt::f32, tag::any);
    md dstAny = plain ? diffDst : md({N0, O0, OH0, OW0}, dt::f32, tag::any);
    md weiAny = plain ? diffWei : md({O0, C0, KH, KW}, dt::f32, tag::any);
    dnnl::convolution_forward::desc fd(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
        srcAny, weiAny, dstAny, strides, dil, padL, padR);
    dnnl::convolution_forward::primitive_desc hint(fd, engine());
    dnnl::convolution_backward_weights::desc bd(
        dnnl::algorithm::convolution_direct, srcAny, weiAny, dstAny, strides,
        dil, padL, padR);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_backward_weights::primitive_desc pd(bd, attr, engine(),
                                                          hint);
    e.bwdWeights = dnnl::convolution_backward_weights(pd);
    e.src = src;
    e.wei = diffDst;
    e.dst = diffWei;
    e.convSrc = pd.src_desc();
    e.convWei = pd.diff_dst_desc();
    e.convDst = pd.diff_weights_desc();
    e.scratchpadBytes = pd.scratchpad_desc().get_size();
    addReorders(e, /*accumulate=*/false);
    e.wgrad = true;
    e.ok = true;
    if (std::getenv("KILN_ONEDNN_VERBOSE"))
      std::fprintf(stderr,
                   "kiln-onednn: weight gradient: n %lld c %lld %lldx%lld "
                   "o %lld out %lldx%lld k %lldx%lld: %s\n",
                   (long long)N0, (long long)C0, (long long)p.h,
                   (long long)p.w, (long long)O0, (long long)OH0,
                   (long long)OW0, (long long)KH, (long long)KW,
                   pd.impl_info_str());
    return true;
  } catch (const dnnl::error &err) {
    if (std::getenv("KILN_ONEDNN_VERBOSE"))
      std::fprintf(stderr,
                   "kiln-onednn: no weight-gradient primitive (%s): forward\n",
                   err.what());
    return false;
  }
}

/// KILN_ONEDNN_VERBOSE: the conv's sizes and what runs it (`impl`: a oneDNN
/// implementation or one of libkiln_onednn's direct loops).
void logChoice(const Params &p, const char *impl, const char *suffix) {
  if (!std::getenv("KILN_ONEDNN_VERBOSE"))
    return;
  std::fprintf(stderr,
               "kiln-onednn: n %lld g %lld c %lld %lldx%lld f %lld "
               "k %lldx%lld -> %lldx%lld%s%s%s: %s%s\n",
               (long long)p.n, (long long)p.g, (long long)p.c, (long long)p.h,
               (long long)p.w, (long long)p.f, (long long)p.kh,
               (long long)p.kw, (long long)p.oh, (long long)p.ow,
               p.accumulate ? " accumulate" : "",
               p.padded() ? " padded" : "", p.hasBias ? " bias" : "", impl,
               suffix);
}

std::shared_ptr<Entry> create(const Key &key) {
  auto e = std::make_shared<Entry>();
  Params p = unpack(key);
  using md = dnnl::memory::desc;
  using dt = dnnl::memory::data_type;
  if (p.n <= 0 || p.g <= 0 || p.c <= 0 || p.f <= 0 || p.oh <= 0 ||
      p.ow <= 0 || p.kh <= 0 || p.kw <= 0)
    return e;
  e->direct = chooseDirect(p);
  if (e->direct != Entry::Direct::None) {
    e->ok = true;
    logChoice(p,
              e->direct == Entry::Direct::Depthwise
                  ? "kiln:depthwise_direct"
                  : e->direct == Entry::Direct::DepthwiseChannelsLast
                        ? "kiln:depthwise_channels_last_direct"
                        : "kiln:depthwise_weight_grad_direct",
              "");
    return e;
  }
  if (!channelsUniform(p.g, p.c, p.xs) || !channelsUniform(p.g, p.f, p.ys))
    return e;
  if (looksLikeWeightGrad(p) && createWeightGrad(*e, p))
    return e;
  try {
    md src({p.n, p.g * p.c, p.h, p.w}, dt::f32,
           {p.xs[0], p.xs[2], p.xs[3], p.xs[4]});
    md dst({p.n, p.g * p.f, p.oh, p.ow}, dt::f32,
           {p.ys[0], p.ys[2], p.ys[3], p.ys[4]});
    md wei = p.g == 1
                 ? md({p.f, p.c, p.kh, p.kw}, dt::f32,
                      {p.ws[1], p.ws[2], p.ws[3], p.ws[4]})
                 : md({p.g, p.f, p.c, p.kh, p.kw}, dt::f32,
                      {p.ws[0], p.ws[1], p.ws[2], p.ws[3], p.ws[4]});
    // Blocked: oneDNN picks the activations' layout too (nChw16c / nhwc on
    // AVX-512, its direct "brgconv" kernels) and they are reordered in and
    // out per call, as PyTorch eager does; plain: strided NCHW as given (no
    // reorders; oneDNN then runs its im2col + jit GEMM). Measured with
    // kiln-run --cpu-threads=2 on single convs and whole resnet18/
    // mobilenet_v2 graphs (docs/codegen.md, "Convolution networks'
    // inference, round 3"): blocked wins for every ungrouped KxK kernel
    // (K > 1) with enough output positions, whatever the channels (resnet18
    // stem 7x7 3->64 b8: 5.8 vs 8.6 ms; 3x3 512->512 7x7 b8: 3.2 vs 4.9 ms;
    // 3x3 16->16 32x32 b8: 0.30 vs 0.40 ms); plain wins for 1x1 (the
    // reorders cost more than the GEMM: 1x1 64->256 56x56 b8 3.3 vs 5.2 ms;
    // mobilenet_v2 with every conv blocked 61 vs 49 ms) and where the
    // per-call weight reorder outweighs the positions (3x3 512->512 7x7 at
    // batch 1: 0.76 vs 0.94 ms) or the output reorder the multiply-adds
    // per output (C * KH * KW; mobilenet_v2's stem 3x3 3->32, 27: the
    // whole graph 1 ms slower blocked). The earlier rule (also >= 32 channels and
    // a 28x28 image) kept resnet's stem and layer3/4 on the GEMM: resnet18
    // at batch 8 took 85 ms instead of 77.
    // KILN_ONEDNN_LAYOUT=plain|blocked forces one.
    const char *layout = std::getenv("KILN_ONEDNN_LAYOUT");
    bool blocked = kiln::rt::oneDNNBlockedLayout(p.g, p.c, p.kh, p.kw,
                                                 p.n * p.oh * p.ow);
    if (layout && std::strcmp(layout, "blocked") == 0)
      blocked = true;
    else if (layout && std::strcmp(layout, "plain") == 0)
      blocked = false;
    // A plain-layout primitive for memory in mixed layouts (a channels-last
    // buffer between two chained convs on one side, NCHW on the other) can
    // come out as oneDNN's reference kernel (`ref:any`, orders of magnitude
    // slower): then the blocked form (format `any`, reorders as needed).
    auto describe = [&](bool blocked) {
      md srcAny = blocked ? md({p.n, p.g * p.c, p.h, p.w}, dt::f32,
                               dnnl::memory::format_tag::any)
                          : src;
      md dstAny = blocked ? md({p.n, p.g * p.f, p.oh, p.ow}, dt::f32,
                               dnnl::memory::format_tag::any)
                          : dst;
      md weiAny = p.g == 1
                      ? md({p.f, p.c, p.kh, p.kw}, dt::f32, dnnl::memory::format_tag::any)
                      : md({p.g, p.f, p.c, p.kh, p.kw}, dt::f32,
                           dnnl::memory::format_tag::any);
      // oneDNN's dilation counts the gaps: linalg's 1 is its 0.
      // The bias (hasBias) as oneDNN's own bias argument: added in the
      // kernel's epilogue, no pass over the output. Its stride is the
      // call's, so it is described per call (runConv), not here: a plain
      // 1-D descriptor of any stride is the same primitive.
      dnnl::convolution_forward::desc d =
          p.hasBias
              ? dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_inference,
                    dnnl::algorithm::convolution_direct, srcAny, weiAny,
                    md({p.g * p.f}, dt::f32, dnnl::memory::format_tag::a),
                    dstAny, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.pt, p.pl},
                    {p.pb, p.pr})
              : dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_inference,
                    dnnl::algorithm::convolution_direct, srcAny, weiAny, dstAny,
                    {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.pt, p.pl},
                    {p.pb, p.pr});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (p.accumulate) {
        dnnl::post_ops ops;
        ops.append_sum(1.0f);
        attr.set_post_ops(ops);
      }
      return std::make_pair(d, attr);
    };
    auto [d, attr] = describe(blocked);
    dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
    if (!blocked && std::strncmp(pd.impl_info_str(), "ref", 3) == 0 &&
        !(layout && std::strcmp(layout, "plain") == 0)) {
      auto [bd, battr] = describe(true);
      pd = dnnl::convolution_forward::primitive_desc(bd, battr, engine());
    }
    e->conv = dnnl::convolution_forward(pd);
    e->src = src;
    e->wei = wei;
    e->dst = dst;
    e->convWei = pd.weights_desc();
    e->scratchpadBytes = pd.scratchpad_desc().get_size();
    e->convSrc = pd.src_desc();
    e->convDst = pd.dst_desc();
    addReorders(*e, p.accumulate);
    e->ok = true;
    logChoice(p, pd.impl_info_str(),
              e->reorderWei ? " (weights reordered)" : "");
  } catch (const dnnl::error &err) {
    if (std::getenv("KILN_ONEDNN_VERBOSE"))
      std::fprintf(stderr, "kiln-onednn: no primitive (%s): loops\n",
                   err.what());
    e->ok = false;
  }
  return e;
}

// ---- Constant weights packed once (kiln_onednn_set_constant_memory) -------
//
// A caller that promises some memory does not change between calls (the
// session option constant_args: PyTorch's freezing) names it per call on
// its thread. A primitive that wants its weights in another layout then
// reorders weights lying wholly inside that memory once, and later calls
// with the same weight pointer and shape reuse the packed copy: no weight
// reorder per call. kiln_onednn_drop_constant_packs (the caller saw the
// memory change: another pointer, a new program, an in-place update)
// makes every pack stale; a stale pack is replaced at its next use and
// freed when no call uses it any more.

struct ConstantRange {
  uintptr_t begin, end;
};
thread_local std::vector<ConstantRange> constantMemory;
std::atomic<int64_t> packEpoch{1};

struct Pack {
  int64_t epoch = 0;
  size_t bytes = 0;
  std::shared_ptr<char> data; // 64-byte aligned
};
struct PackKey {
  const Entry *entry;
  const float *wt;
  bool operator==(const PackKey &o) const {
    return entry == o.entry && wt == o.wt;
  }
};
struct PackKeyHash {
  size_t operator()(const PackKey &k) const {
    return std::hash<const void *>()(k.entry) * 31 +
           std::hash<const void *>()(k.wt);
  }
};
std::mutex packMutex;
std::unordered_map<PackKey, Pack, PackKeyHash> packs;
size_t packedBytes = 0;
// Past this many bytes of packs, weights are reordered per call again.
constexpr size_t kMaxPackedBytes = size_t(4) << 30;
int64_t packsMade = 0, packHits = 0;

/// Whether the `elements`-long span of floats from `wt` lies inside memory
/// the calling thread named constant for this call.
bool isConstantMemory(const float *wt, int64_t elements) {
  uintptr_t b = (uintptr_t)wt, e = b + (uintptr_t)elements * sizeof(float);
  for (const ConstantRange &r : constantMemory)
    if (b >= r.begin && e <= r.end)
      return true;
  return false;
}

/// The weights of `e` at `wt` in the primitive's layout: a pack made by an
/// earlier call of this epoch, or reordered now and kept. Null when packs
/// are full.
std::shared_ptr<char> packedWeights(const Entry &e, const float *wt,
                                    dnnl::stream &s,
                                    const dnnl::memory &wei) {
  int64_t epoch = packEpoch.load();
  PackKey k{&e, wt};
  size_t bytes = e.convWei.get_size();
  {
    std::lock_guard<std::mutex> lock(packMutex);
    auto it = packs.find(k);
    if (it != packs.end() && it->second.epoch == epoch) {
      ++packHits;
      return it->second.data;
    }
    size_t stale = it != packs.end() ? it->second.bytes : 0;
    if (packedBytes - stale + bytes > kMaxPackedBytes)
      return nullptr;
  }
  char *raw = new char[bytes + 64];
  std::shared_ptr<char> data(
      (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63),
      [raw](char *) { delete[] raw; });
  dnnl::memory from = wei, to(e.convWei, engine(), data.get());
  e.weiReorder.execute(s, from, to);
  s.wait();
  std::lock_guard<std::mutex> lock(packMutex);
  Pack &p = packs[k];
  packedBytes -= p.bytes;
  p = {epoch, bytes, data};
  packedBytes += bytes;
  ++packsMade;
  return data;
}

/// Grows a thread-local buffer to `bytes` (64-byte aligned).
void *scratch(std::unique_ptr<char[]> &buf, size_t &cap, size_t bytes) {
  if (bytes + 64 > cap) {
    buf.reset(new char[bytes + 64]);
    cap = bytes + 64;
  }
  uintptr_t a = (uintptr_t)buf.get();
  return (void *)((a + 63) & ~(uintptr_t)63);
}

// ---- Transposed convolutions (backward data) -----------------------------

struct TParams {
  int64_t n, ci, oh, ow, co, kh, kw, h, w, sh, sw, dh, dw;
  int64_t xs[4], ws[4], ys[4];
  int64_t accumulate, threads;
  // A crop (kiln_onednn_conv_transpose2d_crop_f32): y (h x w) is rows
  // pt.. and columns pl.. of the transposed conv's full output.
  int64_t pt = 0, pl = 0;
  /// The rows and columns of y that windows reach (the rest are zeros).
  int64_t reachH() const {
    return std::min(h, (oh - 1) * sh + dh * (kh - 1) + 1 - pt);
  }
  int64_t reachW() const {
    return std::min(w, (ow - 1) * sw + dw * (kw - 1) + 1 - pl);
  }
};

struct TEntry {
  bool ok = false;
  dnnl::convolution_backward_data prim;
  dnnl::memory::desc src, wei, dst;          // user: y (diff_src), w, x
  dnnl::memory::desc convSrc, convWei, convDst;
  bool reorderSrc = false, reorderWei = false, reorderDst = false;
  dnnl::reorder srcOut, weiIn, dstIn;
  size_t scratchpadBytes = 0;
  bool reference = false; // oneDNN's reference implementation ("ref:any")
};

std::unordered_map<Key, std::shared_ptr<TEntry>, KeyHash> tcache;

/// The loop nest (reference semantics; any strides).
void transposedLoops(const TParams &p, const float *x, const float *wt,
                     float *y) {
  if (!p.accumulate)
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t c = 0; c < p.co; ++c)
        for (int64_t i = 0; i < p.h; ++i)
          for (int64_t j = 0; j < p.w; ++j)
            y[n * p.ys[0] + c * p.ys[1] + i * p.ys[2] + j * p.ys[3]] = 0.0f;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.co; ++c)
      for (int64_t k = 0; k < p.ci; ++k)
        for (int64_t a = 0; a < p.oh; ++a)
          for (int64_t b = 0; b < p.ow; ++b) {
            float v = x[n * p.xs[0] + k * p.xs[1] + a * p.xs[2] + b * p.xs[3]];
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                int64_t r = a * p.sh + i * p.dh - p.pt,
                        q = b * p.sw + j * p.dw - p.pl;
                if (r < 0 || r >= p.h || q < 0 || q >= p.w)
                  continue; // cropped
                y[n * p.ys[0] + c * p.ys[1] + r * p.ys[2] + q * p.ys[3]] +=
                    v * wt[k * p.ws[0] + c * p.ws[1] + i * p.ws[2] +
                           j * p.ws[3]];
              }
          }
}

/// oneDNN's backward-data primitive over the fh x fw positions of y the
/// windows reach (the part of y past them is zeroed by the caller); a crop
/// of the full output's top and left (pt, pl) is the primitive's padding,
/// and its bottom/right padding the rows and columns the windows reach
/// past y.
std::shared_ptr<TEntry> createTransposed(const TParams &p, int64_t fh,
                                         int64_t fw, bool blocked) {
  auto e = std::make_shared<TEntry>();
  using md = dnnl::memory::desc;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  try {
    md src({p.n, p.co, fh, fw}, dt::f32, {p.ys[0], p.ys[1], p.ys[2], p.ys[3]});
    md wei({p.ci, p.co, p.kh, p.kw}, dt::f32,
           {p.ws[0], p.ws[1], p.ws[2], p.ws[3]});
    md dst({p.n, p.ci, p.oh, p.ow}, dt::f32,
           {p.xs[0], p.xs[1], p.xs[2], p.xs[3]});
    md srcAny = blocked ? md({p.n, p.co, fh, fw}, dt::f32, tag::any) : src;
    md dstAny = blocked ? md({p.n, p.ci, p.oh, p.ow}, dt::f32, tag::any) : dst;
    md weiAny({p.ci, p.co, p.kh, p.kw}, dt::f32, tag::any);
    dnnl::memory::dims strides = {p.sh, p.sw}, dil = {p.dh - 1, p.dw - 1},
                       padL = {p.pt, p.pl},
                       padR = {(p.oh - 1) * p.sh + p.dh * (p.kh - 1) + 1 -
                                   p.pt - fh,
                               (p.ow - 1) * p.sw + p.dw * (p.kw - 1) + 1 -
                                   p.pl - fw};
    dnnl::convolution_forward::desc fd(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
        srcAny, weiAny, dstAny, strides, dil, padL, padR);
    dnnl::convolution_forward::primitive_desc hint(fd, engine());
    dnnl::convolution_backward_data::desc bd(
        dnnl::algorithm::convolution_direct, srcAny, weiAny, dstAny, strides,
        dil, padL, padR);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_backward_data::primitive_desc pd(bd, attr, engine(),
                                                       hint);
    e->prim = dnnl::convolution_backward_data(pd);
    e->src = src;
    e->wei = wei;
    e->dst = dst;
    e->convSrc = pd.diff_src_desc();
    e->convWei = pd.weights_desc();
    e->convDst = pd.diff_dst_desc();
    e->scratchpadBytes = pd.scratchpad_desc().get_size();
    e->reference = std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
    dnnl::engine &eng = engine();
    auto reorder = [&](const md &from, const md &to) {
      return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
    };
    if (e->convSrc != src) {
      e->reorderSrc = true;
      e->srcOut = reorder(e->convSrc, src);
    }
    if (e->convWei != wei) {
      e->reorderWei = true;
      e->weiIn = reorder(wei, e->convWei);
    }
    if (e->convDst != dst) {
      e->reorderDst = true;
      e->dstIn = reorder(dst, e->convDst);
    }
    e->ok = true;
    if (std::getenv("KILN_ONEDNN_VERBOSE"))
      std::fprintf(stderr,
                   "kiln-onednn: transposed (backward data): n %lld ci %lld "
                   "%lldx%lld -> co %lld %lldx%lld k %lldx%lld s %lldx%lld: "
                   "%s\n",
                   (long long)p.n, (long long)p.ci, (long long)p.oh,
                   (long long)p.ow, (long long)p.co, (long long)fh,
                   (long long)fw, (long long)p.kh, (long long)p.kw,
                   (long long)p.sh, (long long)p.sw, pd.impl_info_str());
  } catch (const dnnl::error &err) {
    if (std::getenv("KILN_ONEDNN_VERBOSE"))
      std::fprintf(stderr,
                   "kiln-onednn: no backward-data primitive (%s): loops\n",
                   err.what());
    e->ok = false;
  }
  return e;
}

/// Blocked activations (reordered in and out) by the forward
/// convolution's rule (create): KxK kernels with at least 64 multiply-adds
/// per output and 128 output positions (resnet18's training step at batch
/// 8: the backward data of layer3/4's 3x3 convs took 5.4-6.6 ms each on the
/// GEMM, the old rule's "large images" only); where
/// the layout gets only oneDNN's reference kernel (plain strided 1x1 with
/// stride 2: "ref:any", 1000x slower than "jit:avx512_core" blocked), the
/// other layout. KILN_ONEDNN_LAYOUT=plain|blocked forces one.
std::shared_ptr<TEntry> createTransposed(const TParams &p, int64_t fh,
                                         int64_t fw) {
  const char *layout = std::getenv("KILN_ONEDNN_LAYOUT");
  bool blocked = p.kh * p.kw > 1 && p.ci * p.kh * p.kw >= 64 &&
                 p.n * p.oh * p.ow >= 128;
  if (layout && std::strcmp(layout, "blocked") == 0)
    return createTransposed(p, fh, fw, true);
  if (layout && std::strcmp(layout, "plain") == 0)
    return createTransposed(p, fh, fw, false);
  auto e = createTransposed(p, fh, fw, blocked);
  if (e->ok && !e->reference)
    return e;
  auto other = createTransposed(p, fh, fw, !blocked);
  return other->ok && (!e->ok || !other->reference) ? other : e;
}

void transposedConv(const TParams &p, const float *x, const float *wt,
                    float *y) {
  if (p.n <= 0 || p.co <= 0 || p.h <= 0 || p.w <= 0)
    return;
  // The rows and columns of y the windows reach. Without a crop y holds
  // every reached position (fh <= h); with one the primitive's padding
  // crops (pt, pl >= 0 and reaching y at all).
  bool full = p.pt == 0 && p.pl == 0;
  int64_t fh = p.reachH(), fw = p.reachW();
  bool usable = !p.accumulate && p.ci > 0 && p.oh > 0 && p.ow > 0 &&
                p.kh > 0 && p.kw > 0 && p.pt >= 0 && p.pl >= 0 && fh > 0 &&
                fw > 0 &&
                (!full || ((p.oh - 1) * p.sh + p.dh * (p.kh - 1) + 1 <= p.h &&
                           (p.ow - 1) * p.sw + p.dw * (p.kw - 1) + 1 <= p.w));
  std::shared_ptr<TEntry> e;
  if (usable) {
    Key key = {{p.n, p.ci, p.oh, p.ow, p.co, p.kh, p.kw, p.h, p.w, p.sh,
                p.sw, p.dh, p.dw, p.xs[0], p.xs[1], p.xs[2], p.xs[3],
                p.ws[0], p.ws[1], p.ws[2], p.ws[3], p.ys[0], p.ys[1],
                p.ys[2], p.ys[3], 0, 0, p.pt, p.pl, 0, 0}};
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = tcache.find(key);
    if (it != tcache.end()) {
      e = it->second;
    } else {
      e = createTransposed(p, fh, fw);
      tcache.emplace(key, e);
      if (e->ok)
        ++primitivesCreated;
    }
  }
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    ++callsRun;
    if (!e || !e->ok)
      ++fallbackCalls;
  }
  if (!e || !e->ok) {
    transposedLoops(p, x, wt, y);
    return;
  }
  // Rows and columns past the windows' reach: zeros.
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.co; ++c)
      for (int64_t i = 0; i < p.h; ++i) {
        float *row = y + n * p.ys[0] + c * p.ys[1] + i * p.ys[2];
        for (int64_t j = i < fh ? fw : 0; j < p.w; ++j)
          row[j * p.ys[3]] = 0.0f;
      }
  calmGnuOpenMP();
  if (p.threads > 0 && omp_get_max_threads() != p.threads)
    omp_set_num_threads((int)p.threads);
  thread_local std::unique_ptr<char[]> padBuf, weiBuf, srcBuf, dstBuf;
  thread_local size_t padCap = 0, weiCap = 0, srcCap = 0, dstCap = 0;
  dnnl::engine &eng = engine();
  dnnl::stream s(eng);
  dnnl::memory src(e->src, eng, y);
  dnnl::memory wei(e->wei, eng, const_cast<float *>(wt));
  dnnl::memory dst(e->dst, eng, const_cast<float *>(x));
  dnnl::memory convSrc = src, convWei = wei, convDst = dst;
  if (e->reorderWei) {
    convWei = dnnl::memory(e->convWei, eng,
                           scratch(weiBuf, weiCap, e->convWei.get_size()));
    e->weiIn.execute(s, wei, convWei);
  }
  if (e->reorderDst) {
    convDst = dnnl::memory(e->convDst, eng,
                           scratch(dstBuf, dstCap, e->convDst.get_size()));
    e->dstIn.execute(s, dst, convDst);
  }
  if (e->reorderSrc)
    convSrc = dnnl::memory(e->convSrc, eng,
                           scratch(srcBuf, srcCap, e->convSrc.get_size()));
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_DIFF_SRC, convSrc},
      {DNNL_ARG_WEIGHTS, convWei},
      {DNNL_ARG_DIFF_DST, convDst}};
  if (e->scratchpadBytes)
    args[DNNL_ARG_SCRATCHPAD] =
        dnnl::memory(dnnl::memory::desc({(int64_t)e->scratchpadBytes},
                                        dnnl::memory::data_type::u8,
                                        dnnl::memory::format_tag::a),
                     eng, scratch(padBuf, padCap, e->scratchpadBytes));
  e->prim.execute(s, args);
  if (e->reorderSrc)
    e->srcOut.execute(s, convSrc, src);
  s.wait();
}

// --- Two OpenMP runtimes in one process ------------------------------
//
// When libdnnl's GOMP_* calls bind to libgomp (PyTorch loaded it first),
// libgomp's idle workers spin GOMP_SPINCOUNT (300000 by default) pause
// iterations before they sleep, after every oneDNN call, on the cores the
// compiled kernels (libomp) run on next. libgomp reads its wait policy
// once, in its constructor, and has no call that changes it. It does have
// a documented rule that is checked live, in every wait: while it manages
// more threads than there are CPUs, idle workers spin only 100 iterations
// (GOMP_SPINCOUNT in the libgomp manual). So, once per process, a helper
// thread of ours starts one libgomp team of omp_get_num_procs() + 1
// threads that do nothing, and then waits forever: that team's workers
// stay docked (asleep) and count, so every libgomp worker in the process
// spins briefly and then sleeps, as OMP_WAIT_POLICY=passive nearly would.
// Not done when libdnnl binds libomp (kiln-run, the C API, kiln first in
// the process: libomp's workers already sleep, KMP_BLOCKTIME=0) or when
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT (their setting wins).
// This also shortens the spinning of PyTorch's own libgomp workers in the
// same process (measured in docs/codegen.md).

enum GnuOpenMPState : int {
  kGompNotChecked = 0,
  kGompNotBound = 1,   // libdnnl's GOMP_* resolve to libomp (or no libgomp)
  kGompUserPolicy = 2, // bound to libgomp; the user's wait policy kept
  kGompCalmed = 3,     // bound to libgomp; the idle team started
  kGompFailed = 4,     // bound to libgomp; libgomp's entry points missing
};
std::atomic<int> gompState{kGompNotChecked};

void calmGnuOpenMPOnce() {
  void *gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!gomp) {
    gompState = kGompNotBound;
    return;
  }
  using ParallelFn = void (*)(void (*)(void *), void *, unsigned, unsigned);
  auto parallel =
      reinterpret_cast<ParallelFn>(dlsym(gomp, "GOMP_parallel"));
  auto numProcs =
      reinterpret_cast<int (*)(void)>(dlsym(gomp, "omp_get_num_procs"));
  // What the process's (and so libdnnl's) lookup of GOMP_parallel finds:
  // libomp's (exported for GNU-compiled code) when libomp came first.
  void *global = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  dlclose(gomp); // RTLD_NOLOAD took a reference; the library stays
  if (!parallel || global != reinterpret_cast<void *>(parallel)) {
    gompState = parallel ? kGompNotBound : kGompFailed;
    return;
  }
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) {
    gompState = kGompUserPolicy;
    return;
  }
  if (!numProcs) {
    gompState = kGompFailed;
    return;
  }
  unsigned team = (unsigned)std::max(1, numProcs()) + 1;
  std::thread([parallel, team] {
    // The team's workers dock in this thread's libgomp pool when the
    // region ends and stay there (asleep) as long as this thread lives.
    parallel([](void *) {}, nullptr, team, 0);
    // Never destroyed: exit() must not wait on a condition variable that
    // this thread waits on (glibc's pthread_cond_destroy would block).
    auto *m = new std::mutex;
    auto *never = new std::condition_variable;
    std::unique_lock<std::mutex> lock(*m);
    never->wait(lock, [] { return false; });
  }).detach();
  gompState = kGompCalmed;
}

void calmGnuOpenMP() {
  static std::once_flag once;
  std::call_once(once, calmGnuOpenMPOnce);
}

/// One call of kiln_onednn_conv2d_f32 / _pad_f32 / _bias_f32 / _post_f32
/// (below), its shape in `key`; `clamp`: Params::clamp with bounds lo, hi.
void runConv(const Key &key, const float *x, const float *wt, float *y,
             int64_t accumulate, int64_t threads, const float *bias = nullptr,
             int64_t biasStride = 1, bool clamp = false,
             float lo = -INFINITY, float hi = INFINITY, bool inClamp = false,
             float ilo = -INFINITY, float ihi = INFINITY) {
  auto params = [&] {
    Params p = unpack(key);
    p.bias = bias;
    p.bs = biasStride;
    p.clamp = clamp;
    p.lo = lo;
    p.hi = hi;
    p.inClamp = inClamp;
    p.ilo = ilo;
    p.ihi = ihi;
    return p;
  };
  // Every path but the depthwise loops clamps after it ran.
  auto clampAfter = [&] {
    if (clamp)
      clampOutput(params(), y, threads);
  };
  std::shared_ptr<Entry> e;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      e = it->second;
    } else {
      e = create(key);
      cache.emplace(key, e);
      if (e->ok)
        ++primitivesCreated;
    }
    ++callsRun;
    if (!e->ok)
      ++fallbackCalls;
  }
  if (inClamp && !(e->ok && (e->direct == Entry::Direct::Depthwise ||
                             e->direct ==
                                 Entry::Direct::DepthwiseChannelsLast))) {
    // Only the depthwise loops clamp their input as they read it: the
    // others run on a clamped dense copy ([n, g * c, h, w]; h, w unpadded
    // where the call pads).
    Params p = params();
    const int64_t planes = p.n * p.g * p.c, area = p.h * p.w;
    std::vector<float> copy(planes * area);
#pragma omp parallel for num_threads(ompThreads(threads)) schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      int64_t n = plane / (p.g * p.c), g = plane / p.c % p.g, c = plane % p.c;
      const float *xp = x + n * p.xs[0] + g * p.xs[1] + c * p.xs[2];
      float *cp = copy.data() + plane * area;
      for (int64_t i = 0; i < p.h; ++i)
        for (int64_t j = 0; j < p.w; ++j)
          cp[i * p.w + j] = p.clampIn(xp[i * p.xs[3] + j * p.xs[4]]);
    }
    Key dense = key;
    dense.p[14] = p.g * p.c * area; // xs: n, g, c, h, w
    dense.p[15] = p.c * area;
    dense.p[16] = area;
    dense.p[17] = p.w;
    dense.p[18] = 1;
    runConv(dense, copy.data(), wt, y, accumulate, threads, bias, biasStride,
            clamp, lo, hi);
    return;
  }
  if (!e->ok) {
    convLoops(params(), x, wt, y);
    clampAfter();
    return;
  }
  if (e->direct == Entry::Direct::Depthwise) {
    depthwiseConv(params(), x, wt, y, threads);
    return;
  }
  if (e->direct == Entry::Direct::DepthwiseChannelsLast) {
    depthwiseConvChannelsLast(params(), x, wt, y, threads);
    return;
  }
  if (e->direct == Entry::Direct::DepthwiseWeightGrad) {
    depthwiseWeightGrad(unpack(key), x, wt, y, threads);
    clampAfter();
    return;
  }
  calmGnuOpenMP();
  if (threads > 0 && omp_get_max_threads() != threads)
    omp_set_num_threads((int)threads);
  thread_local std::unique_ptr<char[]> padBuf, weiBuf, srcBuf, dstBuf;
  thread_local size_t padCap = 0, weiCap = 0, srcCap = 0, dstCap = 0;
  dnnl::engine &eng = engine();
  dnnl::stream s(eng);
  dnnl::memory src(e->src, eng, const_cast<float *>(x));
  dnnl::memory dst(e->dst, eng, y);
  dnnl::memory wei(e->wei, eng, const_cast<float *>(wt));
  dnnl::memory convWei = wei;
  std::shared_ptr<char> pack; // kept alive while the primitive runs
  if (e->reorderWei && !e->wgrad && !constantMemory.empty()) {
    const Params p = unpack(key);
    // The weights' span: the last element's offset + 1.
    int64_t span = 1 + (p.g - 1) * p.ws[0] + (p.f - 1) * p.ws[1] +
                   (p.c - 1) * p.ws[2] + (p.kh - 1) * p.ws[3] +
                   (p.kw - 1) * p.ws[4];
    if (isConstantMemory(wt, span))
      pack = packedWeights(*e, wt, s, wei);
    if (pack)
      convWei = dnnl::memory(e->convWei, eng, pack.get());
  }
  if (e->reorderWei && !pack) {
    convWei = dnnl::memory(e->convWei, eng,
                           scratch(weiBuf, weiCap, e->convWei.get_size()));
    e->weiReorder.execute(s, wei, convWei);
  }
  dnnl::memory convSrc = src, convDst = dst;
  if (e->reorderSrc) {
    convSrc = dnnl::memory(e->convSrc, eng,
                           scratch(srcBuf, srcCap, e->convSrc.get_size()));
    e->srcReorder.execute(s, src, convSrc);
  }
  if (e->reorderDst) {
    convDst = dnnl::memory(e->convDst, eng,
                           scratch(dstBuf, dstCap, e->convDst.get_size()));
    if (accumulate)
      e->dstIn.execute(s, dst, convDst);
  }
  std::unordered_map<int, dnnl::memory> args;
  if (e->wgrad)
    args = {{DNNL_ARG_SRC, convSrc},
            {DNNL_ARG_DIFF_DST, convWei},
            {DNNL_ARG_DIFF_WEIGHTS, convDst}};
  else
    args = {{DNNL_ARG_SRC, convSrc},
            {DNNL_ARG_WEIGHTS, convWei},
            {DNNL_ARG_DST, convDst}};
  thread_local std::unique_ptr<char[]> biasBuf;
  thread_local size_t biasCap = 0;
  if (bias) {
    // oneDNN reads the bias densely: a strided one is gathered first
    // (O floats, next to the conv's work nothing).
    int64_t o = key.p[1] * key.p[5];
    const float *b = bias;
    if (biasStride != 1) {
      float *d = static_cast<float *>(
          scratch(biasBuf, biasCap, o * sizeof(float)));
      for (int64_t i = 0; i < o; ++i)
        d[i] = bias[i * biasStride];
      b = d;
    }
    args[DNNL_ARG_BIAS] = dnnl::memory(
        dnnl::memory::desc({o}, dnnl::memory::data_type::f32,
                           dnnl::memory::format_tag::a),
        eng, const_cast<float *>(b));
  }
  if (e->scratchpadBytes)
    args[DNNL_ARG_SCRATCHPAD] =
        dnnl::memory(dnnl::memory::desc({(int64_t)e->scratchpadBytes},
                                        dnnl::memory::data_type::u8,
                                        dnnl::memory::format_tag::a),
                     eng, scratch(padBuf, padCap, e->scratchpadBytes));
  if (e->wgrad)
    e->bwdWeights.execute(s, args);
  else
    e->conv.execute(s, args);
  if (e->reorderDst)
    e->dstOut.execute(s, convDst, dst);
  s.wait();
  clampAfter();
}

} // namespace

extern "C" {

/// How libkiln_onednn found the process's OpenMP runtimes (tests,
/// docs/codegen.md): 0 not checked yet (no oneDNN call ran), 1 libdnnl
/// binds libomp, 2 it binds libgomp and the user's OMP_WAIT_POLICY /
/// GOMP_SPINCOUNT is kept, 3 it binds libgomp and libgomp's idle workers
/// were made to sleep (calmGnuOpenMP), 4 libgomp without its entry points.
__attribute__((visibility("default"))) int kiln_onednn_openmp_state(void) {
  return gompState.load();
}

// The entries below are one path: plain -> pad -> post (one Key).
__attribute__((visibility("default"))) void kiln_onednn_conv2d_post_f32(
    const float *x, const float *wt, float *y, const float *bias, int64_t n,
    int64_t g, int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh,
    int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw, int64_t xsN, int64_t xsG, int64_t xsC, int64_t xsH,
    int64_t xsW, int64_t wsG, int64_t wsF, int64_t wsC, int64_t wsH,
    int64_t wsW, int64_t ysN, int64_t ysG, int64_t ysF, int64_t ysH,
    int64_t ysW, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t bs,
    int64_t accumulate, int64_t flags, float lo, float hi, float ilo,
    float ihi, int64_t threads);
__attribute__((visibility("default"))) void kiln_onednn_conv2d_pad_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t g, int64_t c,
    int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
    int64_t ow, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsG, int64_t xsC, int64_t xsH, int64_t xsW, int64_t wsG,
    int64_t wsF, int64_t wsC, int64_t wsH, int64_t wsW, int64_t ysN,
    int64_t ysG, int64_t ysF, int64_t ysH, int64_t ysW, int64_t pt, int64_t pl,
    int64_t pb, int64_t pr, int64_t accumulate, int64_t threads);

/// The convolution described in the file comment. Sizes are per group (c
/// input and f output channels of each of g groups); h, w the padded input;
/// xs/ws/ys the strides in elements of x [n, g, c, h, w], w [g, f, c, kh, kw]
/// and y [n, g, f, oh, ow]; accumulate: y += conv (else y = conv); threads:
/// OpenMP threads for oneDNN (0: as it is).
__attribute__((visibility("default"))) void kiln_onednn_conv2d_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t g, int64_t c,
    int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
    int64_t ow, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsG, int64_t xsC, int64_t xsH, int64_t xsW, int64_t wsG,
    int64_t wsF, int64_t wsC, int64_t wsH, int64_t wsW, int64_t ysN,
    int64_t ysG, int64_t ysF, int64_t ysH, int64_t ysW, int64_t accumulate,
    int64_t threads) {
  kiln_onednn_conv2d_pad_f32(x, wt, y, n, g, c, h, w, f, kh, kw, oh, ow, sh, sw,
                             dh, dw, xsN, xsG, xsC, xsH, xsW, wsG, wsF, wsC,
                             wsH, wsW, ysN, ysG, ysF, ysH, ysW, 0, 0, 0, 0,
                             accumulate, threads);
}

/// kiln_onednn_conv2d_f32 on the unpadded input (h x w, strides xs*) with
/// zero padding pt/pl/pb/pr applied by the convolution itself
/// (kiln-cpu-conv-to-onednn passes the padded copy's source instead of the
/// copy): oneDNN primitives take the padding as their own, the depthwise
/// loops skip it, the loop nest checks bounds.
__attribute__((visibility("default"))) void kiln_onednn_conv2d_pad_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t g, int64_t c,
    int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
    int64_t ow, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsG, int64_t xsC, int64_t xsH, int64_t xsW, int64_t wsG,
    int64_t wsF, int64_t wsC, int64_t wsH, int64_t wsW, int64_t ysN,
    int64_t ysG, int64_t ysF, int64_t ysH, int64_t ysW, int64_t pt, int64_t pl,
    int64_t pb, int64_t pr, int64_t accumulate, int64_t threads) {
  kiln_onednn_conv2d_post_f32(x, wt, y, /*bias=*/nullptr, n, g, c, h, w, f, kh,
                              kw, oh, ow, sh, sw, dh, dw, xsN, xsG, xsC, xsH,
                              xsW, wsG, wsF, wsC, wsH, wsW, ysN, ysG, ysF, ysH,
                              ysW, pt, pl, pb, pr, /*bs=*/1, accumulate,
                              /*flags=*/0, -INFINITY, INFINITY, -INFINITY,
                              INFINITY, threads);
}


/// kiln_onednn_conv2d_pad_f32 (pt..pr may be 0) that also adds a bias per
/// output channel: y = conv + bias[(g * f + fi) * bs] (overwriting y; the
/// conv's output init was the bias's broadcast, which
/// kiln-cpu-conv-to-onednn dropped). oneDNN primitives get it as their
/// bias argument, the depthwise loops and the loop nest start each sum
/// from it: no pass over the output.
__attribute__((visibility("default"))) void kiln_onednn_conv2d_bias_f32(
    const float *x, const float *wt, float *y, const float *bias, int64_t n,
    int64_t g, int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh,
    int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw, int64_t xsN, int64_t xsG, int64_t xsC, int64_t xsH,
    int64_t xsW, int64_t wsG, int64_t wsF, int64_t wsC, int64_t wsH,
    int64_t wsW, int64_t ysN, int64_t ysG, int64_t ysF, int64_t ysH,
    int64_t ysW, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t bs,
    int64_t threads) {
  kiln_onednn_conv2d_post_f32(x, wt, y, bias, n, g, c, h, w, f, kh, kw, oh, ow,
                              sh, sw, dh, dw, xsN, xsG, xsC, xsH, xsW, wsG,
                              wsF, wsC, wsH, wsW, ysN, ysG, ysF, ysH, ysW, pt,
                              pl, pb, pr, bs, /*accumulate=*/0, /*flags=*/0,
                              -INFINITY, INFINITY, -INFINITY, INFINITY,
                              threads);
}

/// kiln_onednn_conv2d_bias_f32 with an optional bias (null: none, and then
/// `accumulate` may be 1) and clamps: with flags & 1 the result's, `v < lo ?
/// lo : v` then `v > hi ? hi : v` (kt.clamp's rule: NaN stays NaN; -inf /
/// +inf for an absent bound), the conv's kt.relu / kt.clamp consumer folded
/// into the call by kiln-cpu-conv-im2col (kiln.conv_clamp); with flags & 2
/// the input's, with ilo, ihi (kiln.conv_input_clamp: the relu/clamp that
/// makes a depthwise conv's input; ilo <= 0 <= ihi). The depthwise loops
/// clamp the input as they copy it into their padded plane and the output
/// in registers before the store; every other path clamps the output in
/// place after computing it and reads a clamped copy of the input
/// (oneDNN's eltwise_clip / relu post-ops would map NaN to a bound).
__attribute__((visibility("default"))) void kiln_onednn_conv2d_post_f32(
    const float *x, const float *wt, float *y, const float *bias, int64_t n,
    int64_t g, int64_t c, int64_t h, int64_t w, int64_t f, int64_t kh,
    int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw, int64_t xsN, int64_t xsG, int64_t xsC, int64_t xsH,
    int64_t xsW, int64_t wsG, int64_t wsF, int64_t wsC, int64_t wsH,
    int64_t wsW, int64_t ysN, int64_t ysG, int64_t ysF, int64_t ysH,
    int64_t ysW, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t bs,
    int64_t accumulate, int64_t flags, float lo, float hi, float ilo,
    float ihi, int64_t threads) {
  if (n <= 0 || g <= 0 || f <= 0 || oh <= 0 || ow <= 0)
    return; // empty output
  if (bias)
    accumulate = 0;
  Key key = {{n, g, c, h, w, f, kh, kw, oh, ow, sh, sw, dh, dw, xsN, xsG, xsC,
              xsH, xsW, wsG, wsF, wsC, wsH, wsW, ysN, ysG, ysF, ysH, ysW,
              accumulate ? 1 : 0, 0, pt, pl, pb, pr, bias ? 1 : 0}};
  runConv(key, x, wt, y, accumulate, threads, bias, bias ? bs : 1,
          (flags & 1) != 0, lo, hi, (flags & 2) != 0, ilo, ihi);
}

/// The transposed convolution (the input gradient of a convolution; see
/// lib/Conversion/CPU/OneDNNConvBackward.cpp):
///   y[n, co, p*sh + i*dh, q*sw + j*dw] (+)= sum_ci x[n, ci, p, q] *
///                                            w[ci, co, i, j]
/// for p < oh, q < ow, i < kh, j < kw; y is h x wd (at least every
/// position a window reaches; the rest is zeros). x [n, ci, oh, ow], w
/// [ci, co, kh, kw], y [n, co, h, wd] with strides in elements. Runs as
/// oneDNN's convolution_backward_data primitive (x the forward's diff_dst,
/// w its weights [O = ci, I = co, kh, kw], y its diff_src) where it
/// overwrites; the loop nest otherwise.
/// kiln_onednn_conv_transpose2d_crop_f32: y is rows pt.. and columns pl..
/// (h x wd) of that full output (kt.conv_transpose2d's padding: the crop
/// that lib/Conversion/CPU/OneDNNConvBackward.cpp would otherwise copy out
/// of a full-size buffer); oneDNN's backward-data primitive takes it as its
/// padding. kiln_onednn_conv_transpose2d_f32 is the crop at (0, 0).
__attribute__((visibility("default"))) void
kiln_onednn_conv_transpose2d_crop_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t ci,
    int64_t oh, int64_t ow, int64_t co, int64_t kh, int64_t kw, int64_t h,
    int64_t wd, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsC, int64_t xsH, int64_t xsW, int64_t wsI, int64_t wsO,
    int64_t wsH, int64_t wsW, int64_t ysN, int64_t ysC, int64_t ysH,
    int64_t ysW, int64_t pt, int64_t pl, int64_t accumulate,
    int64_t threads) {
  TParams p{n, ci, oh, ow, co, kh, kw, h, wd, sh, sw, dh, dw,
            {xsN, xsC, xsH, xsW},
            {wsI, wsO, wsH, wsW},
            {ysN, ysC, ysH, ysW},
            accumulate, threads};
  p.pt = pt;
  p.pl = pl;
  transposedConv(p, x, wt, y);
}

__attribute__((visibility("default"))) void kiln_onednn_conv_transpose2d_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t ci,
    int64_t oh, int64_t ow, int64_t co, int64_t kh, int64_t kw, int64_t h,
    int64_t wd, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsC, int64_t xsH, int64_t xsW, int64_t wsI, int64_t wsO,
    int64_t wsH, int64_t wsW, int64_t ysN, int64_t ysC, int64_t ysH,
    int64_t ysW, int64_t accumulate, int64_t threads) {
  kiln_onednn_conv_transpose2d_crop_f32(
      x, wt, y, n, ci, oh, ow, co, kh, kw, h, wd, sh, sw, dh, dw, xsN, xsC,
      xsH, xsW, wsI, wsO, wsH, wsW, ysN, ysC, ysH, ysW, /*pt=*/0, /*pl=*/0,
      accumulate, threads);
}


/// The transposed convolution of a depthwise conv (one input channel per
/// group: kt.conv_transpose2d with groups = g, x's channels): with F =
/// the channel multiplier,
///   y[n, g*F + f, p*sh + i*dh - pt, q*sw + j*dw - pl] (+)= x[n, g, p, q] *
///                                                          w[g, f, i, j]
/// for p < oh, q < ow, i < kh, j < kw, over y's h x wd (a crop at (pt, pl)
/// of the full output: the transposed conv's padding; positions no window
/// reaches are zeros). x [n, g, oh, ow], w [g, f, kh, kw], y [n, g*f, h, wd]
/// with strides in elements. Runs as libkiln_onednn's own loops
/// (dwTransposedConv; oneDNN 2.6 has no fast plain-layout depthwise
/// backward-data). KILN_ONEDNN_VERBOSE=1 prints
/// kiln:depthwise_transposed_direct per new shape.
__attribute__((visibility("default"))) void
kiln_onednn_dw_conv_transpose2d_f32(
    const float *x, const float *wt, float *y, int64_t n, int64_t g,
    int64_t oh, int64_t ow, int64_t f, int64_t kh, int64_t kw, int64_t h,
    int64_t wd, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t xsN,
    int64_t xsG, int64_t xsH, int64_t xsW, int64_t wsG, int64_t wsF,
    int64_t wsH, int64_t wsW, int64_t ysN, int64_t ysC, int64_t ysH,
    int64_t ysW, int64_t pt, int64_t pl, int64_t accumulate,
    int64_t threads) {
  if (n <= 0 || g <= 0 || f <= 0 || h <= 0 || wd <= 0)
    return; // an empty output
  DwTParams p{n,  g,  f,  oh, ow, kh, kw, h,  wd, sh, sw, dh, dw, pt, pl,
              {xsN, xsG, xsH, xsW},
              {wsG, wsF, wsH, wsW},
              {ysN, ysC, ysH, ysW},
              accumulate != 0};
  if (std::getenv("KILN_ONEDNN_VERBOSE")) {
    static std::mutex m;
    static std::unordered_map<Key, bool, KeyHash> seen;
    Key k{{n, g, oh, ow, f, kh, kw, h, wd, sh, sw, dh, dw, pt, pl, accumulate}};
    std::lock_guard<std::mutex> lock(m);
    if (seen.emplace(k, true).second)
      std::fprintf(stderr,
                   "kiln-onednn: transposed depthwise: n %lld g %lld %lldx%lld "
                   "f %lld k %lldx%lld s %lldx%lld -> %lldx%lld crop %lld,%lld"
                   "%s: kiln:depthwise_transposed_direct\n",
                   (long long)n, (long long)g, (long long)oh, (long long)ow,
                   (long long)f, (long long)kh, (long long)kw, (long long)sh,
                   (long long)sw, (long long)h, (long long)wd, (long long)pt,
                   (long long)pl, accumulate ? " accumulate" : "");
  }
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    ++callsRun;
  }
  if (oh <= 0 || ow <= 0 || kh <= 0 || kw <= 0) {
    if (!accumulate)
      for (int64_t a = 0; a < n; ++a)
        for (int64_t c = 0; c < g * f; ++c)
          for (int64_t r = 0; r < h; ++r)
            for (int64_t q = 0; q < wd; ++q)
              y[a * ysN + c * ysC + r * ysH + q * ysW] = 0.0f;
    return;
  }
  dwTransposedConv(p, x, wt, y, threads);
}

/// Primitives created, calls run, calls that ran the loop nest (tests).
/// C = alpha * op(A) op(B) + beta * C, row major: cblas_sgemm's arguments
/// (order 101 = row major, trans 111 = no, 112 = yes) on oneDNN's JIT
/// sgemm, then the thread count (0: OpenMP's default). Called by code that
/// kiln-matmul-to-blas lowered with sgemm = onednn / auto
/// (lib/Conversion/CPU/MatmulImpl.cpp): oneDNN JITs for the CPU it runs
/// on, where OpenBLAS runs the kernels of the core it detects or is told
/// (OPENBLAS_CORETYPE; docs/codegen.md "Which BLAS"). Empty products never
/// reach it (the caller skips them).
__attribute__((visibility("default"))) void
kiln_onednn_sgemm(int32_t order, int32_t transA, int32_t transB, int32_t m,
                  int32_t n, int32_t k, float alpha, const float *a,
                  int32_t lda, const float *b, int32_t ldb, float beta,
                  float *c, int32_t ldc, int64_t threads) {
  calmGnuOpenMP();
  if (threads > 0 && omp_get_max_threads() != threads)
    omp_set_num_threads((int)threads);
  bool ta = transA == 112, tb = transB == 112;
  if (order == 101 &&
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                 ldb, beta, c, ldc) == dnnl_success)
    return;
  // oneDNN refused the arguments (or a column-major call): the reference
  // product, row major (column major is the transposed problem).
  if (order != 101) {
    std::swap(m, n);
    std::swap(a, b);
    std::swap(lda, ldb);
    std::swap(ta, tb);
  }
  for (int32_t i = 0; i < m; ++i)
    for (int32_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int32_t p = 0; p < k; ++p)
        acc += (ta ? a[p * lda + i] : a[i * lda + p]) *
               (tb ? b[j * ldb + p] : b[p * ldb + j]);
      float &o = c[i * ldc + j];
      o = alpha * acc + (beta == 0.0f ? 0.0f : beta * o);
    }
}

/// The memory the calling thread's next calls may treat as constant: n
/// ranges [begin[i], begin[i] + bytes[i]) (n = 0: none). Weights inside are
/// packed once (see "Constant weights packed once" above); the caller
/// promises their contents do not change until it calls
/// kiln_onednn_drop_constant_packs.
__attribute__((visibility("default"))) void
kiln_onednn_set_constant_memory(const void *const *begin,
                                const int64_t *bytes, int64_t n) {
  constantMemory.clear();
  for (int64_t i = 0; i < n; ++i)
    if (begin[i] && bytes[i] > 0)
      constantMemory.push_back(
          {(uintptr_t)begin[i], (uintptr_t)begin[i] + (uintptr_t)bytes[i]});
}

/// Makes every packed weight stale (constant memory changed).
__attribute__((visibility("default"))) void
kiln_onednn_drop_constant_packs(void) {
  ++packEpoch;
  std::lock_guard<std::mutex> lock(packMutex);
  packs.clear(); // a call still using a pack holds its own reference
  packedBytes = 0;
}

/// Packs made, calls that reused one, and bytes held (tests, --stats).
__attribute__((visibility("default"))) void
kiln_onednn_pack_stats(int64_t *made, int64_t *hits, int64_t *bytes) {
  std::lock_guard<std::mutex> lock(packMutex);
  *made = packsMade;
  *hits = packHits;
  *bytes = (int64_t)packedBytes;
}

__attribute__((visibility("default"))) void
kiln_onednn_stats(int64_t *created, int64_t *calls, int64_t *fallbacks) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  *created = primitivesCreated;
  *calls = callsRun;
  *fallbacks = fallbackCalls;
}

} // extern "C"
