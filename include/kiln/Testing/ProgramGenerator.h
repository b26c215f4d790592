//===- ProgramGenerator.h - Random valid kt programs ------------*- C++ -*-===//
//
// Part of Kiln. A structure-aware generator of small, valid `kt` programs
// for the fuzzers (fuzz/) and tests: every choice (op, operands, dtypes,
// shapes, dynamic dims, results) is read from a byte string, so a fuzzer's
// byte-level mutations become program mutations, and the same bytes always
// give the same program. The program is one `func.func @main` whose
// arguments have concrete run-time shapes (some dims written `?`), with one
// or more results (possibly an argument, or one value twice).
//
// Dtypes: f32, f64, f16, bf16, i64, i32, i16, i8, ui8 and i1. Ops:
// pointwise (unary, binary, comparisons, where, cast, clamp), reductions,
// softmax, matmul, cumsum, argsort, searchsorted (on a sequence sorted in
// the program), gather / index_select (indices in range), conv2d /
// conv_transpose2d, and the shape ops.
//
// The generator knows just enough of each op's shape rules to produce
// programs that verify; `test/Tools/kiln-fuzz-gen` checks that it does, so
// it cannot silently rot when an op's rules change.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTING_PROGRAMGENERATOR_H
#define KILN_TESTING_PROGRAMGENERATOR_H

#include "kiln/Interpreter/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

/// Reads bounded choices from bytes; once they run out every choice is 0.
class ByteSource {
public:
  explicit ByteSource(llvm::ArrayRef<uint8_t> bytes) : bytes(bytes) {}
  /// A value in [0, n) (n >= 1).
  unsigned pick(unsigned n);
  /// True with probability about num / den.
  bool chance(unsigned num, unsigned den) { return pick(den) < num; }
  bool empty() const { return pos >= bytes.size(); }

private:
  llvm::ArrayRef<uint8_t> bytes;
  size_t pos = 0;
};

struct GeneratorOptions {
  unsigned maxOps = 8;  ///< ops in the body (at least 1)
  unsigned maxArgs = 5; ///< function arguments (at least 1)
  unsigned maxRank = 3;
  unsigned maxDim = 5; ///< run-time size of a dim: 1 ... maxDim
  /// Ops whose CPU lowering or numerics make a differential test noisy are
  /// left out when false (float -> int casts of values that may not be
  /// finite are always left out: their result is undefined in C and LLVM).
  bool matmul = true;
  /// Which generator: the same bytes give the same program within a
  /// version. 1: the op kinds of the first sweeps (seeds that found defects
  /// are pinned to it in tests); 2 (default) adds flip, stack, select,
  /// slice/select_scatter, logsumexp, any/all, isnan, logical/bitwise not,
  /// ge/le/ne, embedding, batch_norm (inference and training),
  /// cross_entropy/nll_loss and scaled_dot_product_attention; 3 (default):
  /// version 2's program, and then, when the bytes after it say so (about
  /// 2 in 3; never once they have run out, so a short input still names
  /// version 2's program), a `kg.program @main` instead: more ops mixed
  /// with `!kt.ref` arguments written in place (copy_, add_, sub_, mul_,
  /// fill_, store, directly or through a view_transpose / view_select /
  /// view_slice) and loaded again, split into 1-3 `kg.graph`s with graph
  /// breaks (`kg.host_call @sink`) between them, guards on most arguments.
  unsigned version = 3;
  /// Sizes that are 0 (issue 15): a dim of a new random argument is 0
  /// with probability about 1/8 (static or `?`, as any dim), so ops meet
  /// empty operands, reductions over empty dims and windows larger than
  /// their input. Off by default: the same bytes then give the same program
  /// as before (no byte is read for it). Such a program may fail at run
  /// time (an empty reduction without identity, an index into an empty
  /// dim): the checker then wants both backends to fail.
  bool zeroDims = false;
};

struct GeneratedArg {
  interp::DType dtype;
  llvm::SmallVector<int64_t> shape; ///< the run-time shape
  /// An index argument (of kt.gather / kt.index_select): its values are
  /// drawn from [0, indexBound), so the program has no run-time error.
  /// 0 for other arguments.
  int64_t indexBound = 0;
  /// A `!kt.ref` argument of a kg program (version 3): the program writes
  /// it in place; its final contents are compared too, with `tolerance`
  /// (as GeneratedProgram::tolerance).
  bool isRef = false;
  double tolerance = 1.0;
  std::string type; ///< its type in the program's text (kg programs)
};

struct GeneratedProgram {
  /// A module with `func.func @main`, or (isProgram) `kg.program @main`.
  std::string text;
  /// A kg program (version 3): run through the runtime (a session), its
  /// ref arguments' final contents part of the result; the host callback
  /// `sink` (at graph breaks) takes any tensors and returns nothing.
  bool isProgram = false;
  std::string entry = "main";
  std::vector<GeneratedArg> args;
  /// Per result, the scale of sameTensor's tolerance: > 1 for a float
  /// result computed partly in a coarser float type (an f32 value cast to
  /// f64 is compared with f32's tolerance).
  std::vector<double> tolerance;
  unsigned numOps = 0;
  /// Some argument has a dim of size 0 (GeneratorOptions::zeroDims): a
  /// run-time error is then a valid outcome, if both backends give one.
  bool hasZeroDim = false;
};

/// The program the bytes describe (always a program, even from no bytes).
GeneratedProgram generateProgram(llvm::ArrayRef<uint8_t> bytes,
                                 const GeneratorOptions &options = {});

/// Inputs for `program`'s arguments from `seed` (splitmix64): floats
/// ~N(0, 1), signed integers in [-4, 4], uint8 in [0, 8], index arguments in
/// [0, indexBound), booleans fair.
llvm::Expected<llvm::SmallVector<interp::Tensor>>
makeInputs(const GeneratedProgram &program, uint64_t seed);

/// Compares two results: same dtype and shape; integers and booleans
/// exactly; floats NaN in the same places, infinities equal, else
/// |a - b| <= atol + rtol * max(|a|, |b|) with the dtype's tolerance (f64
/// 1e-9/1e-9, f32 1e-4/1e-4, f16/bf16 1e-2/1e-2), scaled by `scale`. On a
/// mismatch returns false and says where in `why`.
bool sameTensor(const interp::Tensor &a, const interp::Tensor &b,
                std::string &why, double scale = 1.0);

} // namespace kiln::testing

#endif // KILN_TESTING_PROGRAMGENERATOR_H
