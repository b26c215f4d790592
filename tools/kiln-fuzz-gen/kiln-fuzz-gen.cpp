//===- kiln-fuzz-gen.cpp - The fuzzers' program generator as a tool -------===//
//
// Part of Kiln. Prints the programs of kiln/Testing/ProgramGenerator.h and
// checks them outside libFuzzer (normal build):
//
//   kiln-fuzz-gen --seed=S [--count=N]          print N programs
//   kiln-fuzz-gen --seed=S --count=N --check    parse, verify, interpret each
//   kiln-fuzz-gen ... --check --cpu             and compare with the CPU backend
//   kiln-fuzz-gen --bytes=FILE [--check --cpu]  the program of these bytes
//   kiln-fuzz-gen --fuzz-input=FILE             a kiln-fuzz-diff input (its
//                                               reproducer) exactly as the
//                                               harness runs it (implies
//                                               --check --cpu)
//
// Program k of --seed=S is generated from 64 bytes of splitmix64(S + k)
// (128 for version 3, the default, whose kg programs read on after version
// 2's: the same first 64). A kg program is checked through runtime sessions
// (kiln/Testing/Differential.h: eager vs cpu backend, results and every
// ref's final contents, strided and aliasing calls); the summary then says
// how many of each kind of call ran.
// --check prints one line per program that fails (its outcome, the program
// and the diagnostics) and a summary; exits 1 when a program does not verify,
// the interpreter fails on it, or (--cpu) the CPU backend disagrees.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ToolErrors.h"
#include "kiln/Testing/Differential.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;
using namespace kiln::testing;

static cl::OptionCategory category("kiln-fuzz-gen options");
static cl::opt<uint64_t> seed("seed", cl::cat(category), cl::init(0),
                              cl::desc("First seed"));
static cl::opt<unsigned> numPrograms("count", cl::cat(category), cl::init(1),
                               cl::desc("Programs to generate"));
static cl::opt<std::string> bytesFile(
    "bytes", cl::cat(category),
    cl::desc("Generate from the bytes of this file (a fuzzer input)"));
static cl::opt<std::string> fuzzInput(
    "fuzz-input", cl::cat(category),
    cl::desc("Check a kiln-fuzz-diff input as the harness does"));
static cl::opt<bool> check("check", cl::cat(category),
                           cl::desc("Parse, verify and interpret each program"));
static cl::opt<bool> cpuToo("cpu", cl::cat(category),
                            cl::desc("With --check: compare with the CPU backend"));
static cl::opt<bool> trace(
    "trace", cl::cat(category),
    cl::desc("With --check: print each program's seed to stderr before "
             "checking it (the last one names a program that crashed)"));
static cl::opt<unsigned> generatorVersion(
    "generator-version", cl::cat(category), cl::init(GeneratorOptions().version),
    cl::desc("Which generator (kiln/Testing/ProgramGenerator.h): 1 = the op "
             "kinds of the first sweeps (to reproduce their seeds), 2 = all "
             "(func programs), 3 = also kg programs with ref arguments "
             "written in place"));
static cl::opt<unsigned> maxOps("max-ops", cl::cat(category),
                              cl::init(GeneratorOptions().maxOps),
                              cl::desc("Ops in a program's body: 1 to N"));
static cl::opt<unsigned> maxArgs("max-args", cl::cat(category),
                               cl::init(GeneratorOptions().maxArgs),
                               cl::desc("Arguments of a program: 1 to N"));
static cl::opt<unsigned> maxRank("max-rank", cl::cat(category),
                               cl::init(GeneratorOptions().maxRank),
                               cl::desc("Rank of the first argument: 0 to N"));
static cl::opt<unsigned> maxDim(
    "max-dim", cl::cat(category), cl::init(GeneratorOptions().maxDim),
    cl::desc("Run-time size of a dim: 1 to N (larger sizes reach the CPU "
             "backend's vector loops and their remainders)"));
static cl::opt<unsigned> cpuThreads(
    "cpu-threads", cl::cat(category), cl::init(1),
    cl::desc("With --cpu: threads of the compiled code (the kernels' "
             "parallel loops run on OpenMP threads when > 1)"));
static cl::opt<bool> cpuUnoptimized(
    "cpu-unoptimized", cl::cat(category),
    cl::desc("With --cpu: the scalar pipeline (kiln-cpu{optimize=false})"));
static cl::opt<bool> zeroDims(
    "zero-dims", cl::cat(category), cl::init(false),
    cl::desc("Give some dims of the arguments size 0 (static or ?); a "
             "program that fails on both backends is then not a failure"));
static cl::opt<uint64_t> inputSeed("input-seed", cl::cat(category), cl::init(0),
                                   cl::desc("Seed of the inputs"));

/// The generator's bytes for seed `s`: 64 (the defaults' programs use
/// fewer), 64 more per 8 ops beyond --max-ops=8 (the same first 64 bytes).
static std::vector<uint8_t> seedBytes(uint64_t s) {
  std::vector<uint8_t> bytes;
  uint64_t state = s;
  unsigned words = 8 * std::max(1u, (maxOps + 7) / 8);
  // Version 3 reads on after version 2's program (its kg programs): twice
  // as many bytes, the same first ones.
  if (generatorVersion >= 3)
    words *= 2;
  for (unsigned i = 0; i < words; ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (int b = 0; b < 8; ++b)
      bytes.push_back(uint8_t(z >> (8 * b)));
  }
  return bytes;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  kiln::initToolSignals();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln: print or check generated kt/kg programs\n");
  if (generatorVersion < 1 || generatorVersion > GeneratorOptions().version) {
    errs() << "kiln-fuzz-gen: error: --generator-version=" << generatorVersion
           << ": the versions are 1 to " << GeneratorOptions().version << "\n";
    return 1;
  }
  if (cpuThreads < 1 || cpuThreads > 256) {
    errs() << "kiln-fuzz-gen: error: --cpu-threads=" << cpuThreads
           << ": must be 1 to 256\n";
    return 1;
  }
  if (maxOps < 1 || maxArgs < 1 || maxDim < 1 || maxOps > 1000 ||
      maxArgs > 100 || maxRank > 8 || maxDim > 4096) {
    errs() << "kiln-fuzz-gen: error: --max-ops (1-1000), --max-args (1-100), "
              "--max-rank (0-8) and --max-dim (1-4096) are out of range\n";
    return 1;
  }
  std::vector<std::vector<uint8_t>> inputs;
  std::string file = !fuzzInput.empty() ? fuzzInput : bytesFile;
  if (!file.empty()) {
    auto buf = MemoryBuffer::getFile(file);
    if (!buf) {
      errs() << "kiln-fuzz-gen: " << file << ": "
             << buf.getError().message() << "\n";
      return 1;
    }
    StringRef b = (*buf)->getBuffer();
    inputs.emplace_back(b.bytes_begin(), b.bytes_end());
  } else {
    for (unsigned k = 0; k < numPrograms; ++k)
      inputs.push_back(seedBytes(seed + k));
  }

  mlir::DialectRegistry registry;
  registerTestingDialects(registry);
  mlir::MLIRContext context(registry);
  std::map<Outcome, unsigned> counts;
  DiffCounts kgCounts;
  unsigned failures = 0, ops = 0;
  if (!fuzzInput.empty()) {
    DiffCase c = diffCaseFromFuzzInput(inputs.front());
    std::string message;
    Outcome o = checkProgram(context, c.program, c.options, message);
    outs() << c.program.text << "// input seed " << c.options.seed
           << ", optimize=" << c.options.compile.optimize << ": "
           << outcomeName(o) << "\n" << message;
    return o == Outcome::Match || o == Outcome::Unsupported ||
                   o == Outcome::BothFailed
               ? 0
               : 1;
  }
  for (auto [k, bytes] : llvm::enumerate(inputs)) {
    GeneratorOptions genOptions;
    genOptions.version = generatorVersion;
    genOptions.maxOps = maxOps;
    genOptions.maxArgs = maxArgs;
    genOptions.maxRank = maxRank;
    genOptions.maxDim = maxDim;
    genOptions.zeroDims = zeroDims;
    GeneratedProgram p = generateProgram(bytes, genOptions);
    ops += p.numOps;
    if (!check) {
      outs() << "// program " << k << "\n" << p.text;
      continue;
    }
    if (trace)
      errs() << "checking program " << k << " (seed " << seed + k << ")\n";
    DiffOptions options;
    options.seed = inputSeed;
    options.cpu = cpuToo;
    options.compile.threads = cpuThreads;
    options.compile.optimize = !cpuUnoptimized;
    options.compile.useCache = false;
    options.counts = &kgCounts;
    std::string message;
    Outcome o = checkProgram(context, p, options, message);
    ++counts[o];
    if (o == Outcome::Match || o == Outcome::BothFailed)
      continue;
    if (o == Outcome::Unsupported) {
      // Not a failure (the CPU backend says what it does not take), but
      // shown, so that a generator change that mostly makes unsupported
      // programs is seen.
      outs() << "UNSUPPORTED program " << k << " (seed " << seed + k
             << "): " << StringRef(message).split('\n').first << "\n";
      outs().flush();
      continue;
    }
    ++failures;
    outs() << "FAIL program " << k << " (seed " << seed + k
           << "): " << outcomeName(o) << "\n"
           << p.text << message << "\n";
    // Findings survive a later crash or a kill of a long run.
    outs().flush();
  }
  if (check) {
    outs() << inputs.size() << " programs (" << ops << " ops):";
    for (auto [o, n] : counts)
      outs() << " " << n << " " << outcomeName(o) << ";";
    outs() << " " << failures << " failed\n";
    if (kgCounts.programs)
      outs() << kgCounts.programs << " kg programs through the runtime ("
             << kgCounts.calls << " calls per backend; " << kgCounts.dynamic
             << " with dynamic = dynamic; " << kgCounts.dynamicSqueeze
             << " refused for a squeeze of a `?` dim): "
             << kgCounts.stridedRefs << " with strided refs, "
             << kgCounts.tiedRefs << " with one tensor for two refs ("
             << kgCounts.tiedChecked << " compared with the tied program), "
             << kgCounts.overlappingRefs << " with two refs overlapping, "
             << kgCounts.refAsPlain << " with a ref's tensor as a plain "
             << "argument; " << kgCounts.refused << " aliasing calls refused\n";
  }
  return failures ? 1 : 0;
}
