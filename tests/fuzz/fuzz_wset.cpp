//===- fuzz_wset.cpp - libFuzzer target over the write-set parser ---------===//
//
// The input is a write-set file's text (grammar in compiler/pass/WriteSet.h),
// parsed with the pass's own parser (compiler/pass/WriteSet.cpp). No input
// may crash it or be undefined behaviour, and whatever it accepts must make
// sense to the pass: every parameter index a region or a size names is one
// of the function's parameters, every size has at least one term of at
// least one factor, a "pointer" region is 8 bytes, and a refusal names the
// origin and the line.
//===----------------------------------------------------------------------===//
#include "WriteSet.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

static void require(bool ok, const char *what, const std::string &text) {
  if (ok) return;
  fprintf(stderr, "fuzz_wset: %s; input:\n%s\n", what, text.c_str());
  abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  cairn::WriteSets WS;
  std::string Err;
  if (!WS.parseText(Text, "fuzz.wset", Err)) {
    require(Err.rfind("fuzz.wset:", 0) == 0, "an error does not start with the origin", Text);
    return 0;
  }
  require(Err.empty(), "a success left an error message", Text);
  // every name the text declares can be looked up; the checks below run on
  // the functions it finds
  size_t Found = 0;
  size_t Start = 0;
  while (Start < Text.size()) {
    size_t End = Text.find('\n', Start);
    if (End == std::string::npos) End = Text.size();
    std::string Line = Text.substr(Start, End - Start);
    Start = End + 1;
    size_t B = Line.find_first_not_of(" \t\r");
    if (B == std::string::npos || Line[B] == '#') continue;
    while (B < Line.size() && isspace((unsigned char)Line[B])) B++;   // as the parser skips
    size_t E = B;
    while (E < Line.size() && (isalnum((unsigned char)Line[E]) || Line[E] == '_')) E++;
    const cairn::WSFunction *F = WS.lookup(Line.substr(B, E - B));
    require(F != nullptr, "a declared function cannot be looked up", Text);
    Found++;
    require(!F->Writes.empty(), "a function with no written region", Text);
    for (const cairn::WSRegion &R : F->Writes) {
      require(R.Param < F->NumParams, "a region names a parameter out of range", Text);
      require(!R.Size.empty(), "an empty size", Text);
      for (const cairn::WSTerm &T : R.Size) {
        require(!T.empty(), "an empty product", Text);
        for (const cairn::WSFactor &Fa : T) {
          if (Fa.K == cairn::WSFactor::Literal)
            require(Fa.Value >= 0, "a negative literal", Text);
          else
            require(Fa.Value >= 0 && (uint64_t)Fa.Value < F->NumParams,
                    "a size names a parameter out of range", Text);
        }
      }
      if (R.Pointer)
        require(R.Size.size() == 1 && R.Size[0].size() == 1 &&
                    R.Size[0][0].K == cairn::WSFactor::Literal && R.Size[0][0].Value == 8,
                "a pointer region that is not 8 bytes", Text);
    }
  }
  require(WS.size() <= Found, "more functions than declarations", Text);
  return 0;
}
