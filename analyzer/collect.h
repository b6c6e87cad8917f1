// collect.h: phase 1 of cairn-analyze, from compile_commands.json to facts.
#pragma once

#include "facts.h"

#include <functional>
#include <string>
#include <vector>

namespace clang::tooling {
class CompilationDatabase;
}

namespace cairn {

// Parses each file (syntax only) on `threads` threads and merges what every
// TU says into `facts`; `progress(done, total)` is called after each file,
// one call at a time. Returns false only if no TU could be parsed at all.
bool collectFacts(const clang::tooling::CompilationDatabase &db,
                  const std::vector<std::string> &files, unsigned threads,
                  ProgramFacts &facts, const std::function<void(size_t, size_t)> &progress);

// libc knowledge (NVMOVE optimizations (b) and (c)).
// Arguments a libc call writes through; -1 terminates; a value >= 100 means
// "every argument from (value - 100) on" (the scanf family).
const int *libcWrittenArgs(const std::string &fn);
// A write-like call (write, fwrite, fprintf, ...): where its data starts
// (`dataToEnd`: every argument from there on) and which argument names the
// stream or descriptor (-1: none).
struct Sink {
  const char *name;
  int dataArg;
  bool dataToEnd;
  int streamArg;
};
const Sink *sinkFor(const std::string &fn);
bool isLibcAllocator(const std::string &fn);
bool isLibcFunction(const std::string &fn);

} // namespace cairn
