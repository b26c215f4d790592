//===- Repro.cpp - Reproducers of failed calls ----------------------------===//
//
// Part of Kiln. See kiln/Runtime/Repro.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Repro.h"

#include "kiln/Support/NPY.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace mlir;
using namespace kiln;
using namespace kiln::runtime;
using llvm::StringRef;

/// `s` quoted for a POSIX shell.
static std::string shellQuote(StringRef s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

static llvm::Error writeText(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  os << text;
  os.close();
  if (os.has_error()) {
    std::error_code e = os.error();
    os.clear_error();
    return llvm::createStringError(e, "cannot write '%s': %s",
                                   path.str().c_str(), e.message().c_str());
  }
  return llvm::Error::success();
}

static llvm::Error fill(StringRef repro, ModuleOp module, StringRef program,
                        ArrayRef<ArgView> args, const SessionOptions &options,
                        StringRef error) {
  auto file = [&](StringRef name) {
    SmallString<256> p(repro);
    llvm::sys::path::append(p, name);
    return p.str().str();
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo(true, false));
  os << "\n";
  if (llvm::Error e = writeText(file("program.mlir"), text))
    return e;
  if (llvm::Error e = writeText(file("error.txt"), error.str() + "\n"))
    return e;
  std::vector<std::string> inputs;
  for (auto [i, a] : llvm::enumerate(args)) {
    llvm::Expected<interp::Tensor> t = tensorFromView(a);
    if (!t)
      return t.takeError();
    std::string name = "input" + std::to_string(i) + ".npy";
    if (llvm::Error e = writeNPY(file(name), *t))
      return e;
    inputs.push_back(name);
  }

  // The diagnostic in the error, for kiln-reduce --match (a regex): a
  // compile error is a message, not a crash, and --crash alone finds it
  // "not interesting". The first line with a location (file:line:col: ),
  // its message after the location and "error: ", at most 120 characters
  // (none: only the crash command is printed).
  std::string matchText;
  {
    SmallVector<StringRef> errLines;
    error.split(errLines, '\n');
    llvm::Regex located("^.*:[0-9]+:[0-9]+: (error: )?(.+)$");
    for (StringRef l : errLines) {
      SmallVector<StringRef, 3> m;
      if (!located.match(l.rtrim(), &m))
        continue;
      matchText = llvm::Regex::escape(m[2].take_front(120));
      break;
    }
  }
  std::string script;
  llvm::raw_string_ostream sh(script);
  sh << "#!/bin/sh\n"
     << "# Kiln reproducer: a call of @" << program << " failed with:\n";
  SmallVector<StringRef> lines;
  error.split(lines, '\n');
  for (StringRef l : lines)
    sh << "#   " << l << "\n";
  sh << "# It reruns that call (one call: the inputs of earlier calls that "
        "shaped the\n# cache are not replayed) on the session's backend and "
        "options; exit status\n# non-zero when it still fails. Tools: "
        "KILN_RUN (default kiln-run in PATH).\n"
     << "cd \"$(dirname \"$0\")\" || exit 2\n"
     << "${KILN_RUN:-kiln-run} program.mlir --call="
     << llvm::join(inputs, ",")
     << " --backend=" << (options.backend == "cpu" ? "cpu" : "interpreter")
     << " --pipeline=" << shellQuote(options.pipeline)
     << " --cpu-fallback=" << options.cpuFallback << " --dynamic="
     << (options.dynamic == DynamicMode::Auto     ? "auto"
         : options.dynamic == DynamicMode::Static ? "static"
                                                  : "dynamic")
     << " --cache-size-limit=" << options.cacheSizeLimit << "\n"
     << "#\n# To minify the failing graph (docs/debugging.md, \"The "
        "minifier\"): make each graph\n# a function, then reduce the one the "
        "error names, e.g.\n"
     << "#   kiln-opt program.mlir "
        "--pass-pipeline='builtin.module(kiln-eager,kiln-outline-graphs)' "
        "-o graphs.mlir\n"
     << "#   kiln-reduce graphs.mlir --entry=" << program
     << "_g0 --crash=kiln-cpu -o small.mlir      # a crash\n";
  if (!matchText.empty())
    sh << "#   kiln-reduce graphs.mlir --entry=" << program
       << "_g0 --crash=kiln-cpu --match=" << shellQuote(matchText)
       << " -o small.mlir      # this error\n";
  sh
     << "#   kiln-reduce graphs.mlir --entry=" << program
     << "_g0 --accuracy -o small.mlir            # a wrong answer\n";
  if (llvm::Error e = writeText(file("repro.sh"), script))
    return e;
  llvm::sys::fs::setPermissions(file("repro.sh"),
                                llvm::sys::fs::perms(0755));
  return llvm::Error::success();
}

llvm::Expected<std::string>
kiln::runtime::writeRepro(StringRef dir, ModuleOp module, StringRef program,
                          ArrayRef<ArgView> args,
                          const SessionOptions &options, StringRef error) {
  static std::atomic<unsigned> counter{0};
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create '%s': %s",
                                   dir.str().c_str(), ec.message().c_str());
  SmallString<256> repro;
  for (unsigned attempt = 0;; ++attempt) {
    repro = dir;
    llvm::sys::path::append(
        repro, "repro-" + program + "-" +
                   std::to_string(llvm::sys::Process::getProcessId()) + "-" +
                   std::to_string(counter++));
    std::error_code ec =
        llvm::sys::fs::create_directory(repro, /*IgnoreExisting=*/false);
    if (!ec)
      break;
    if (ec != std::errc::file_exists || attempt > 100)
      return llvm::createStringError(ec, "cannot create '%s': %s",
                                     repro.c_str(), ec.message().c_str());
  }
  if (llvm::Error e = fill(repro, module, program, args, options, error)) {
    llvm::sys::fs::remove_directories(repro);
    return std::move(e);
  }
  return repro.str().str();
}
