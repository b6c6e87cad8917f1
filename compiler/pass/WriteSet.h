//===- WriteSet.h - what precompiled functions write through their arguments ===//
//
// A write-set file (*.wset) describes, for functions cairn-cc does not
// compile (libc, other precompiled libraries), which memory each call writes,
// so the pass can log it before the call (Breeze's ".unsafe" files, Fig. 7,
// in a syntax that reads like C):
//
//   # comment
//   strcpy(dst, src)          writes dst[strlen(src) + 1]
//   fread(buf, size, n, f)    writes buf[size * n]
//   sprintf(dst, fmt, ...)    writes dst[formatted(fmt) + 1]
//   setCacheLine(p, v)        writes p[64]
//   strtol(s, end, base)      writes end[8] pointer
//
// "pointer" after a region of 8 bytes says the word the call writes there
// is a pointer: written into PM, it is converted after the call (and
// checked, as a typed pointer store is).
//
// A size is a sum of products of: integer literals, parameters, strlen(param),
// wcslen(param) (in wide characters: `4 * wcslen(src) + 4` bytes for a
// wcscpy) and formatted(param) (the length snprintf(NULL, 0, param, ...)
// reports, for variadic printf-style functions).
//===----------------------------------------------------------------------===//
#ifndef CAIRN_WRITESET_H
#define CAIRN_WRITESET_H

#include <map>
#include <string>
#include <vector>

namespace llvm {
class CallBase;
class Instruction;
class IRBuilderBase;
class Value;
} // namespace llvm

namespace cairn {

struct WSFactor {
  enum Kind { Literal, Param, Strlen, Wcslen, Formatted } K;
  long long Value = 0; // literal value or parameter index
};
using WSTerm = std::vector<WSFactor>;  // product
using WSExpr = std::vector<WSTerm>;    // sum of products

struct WSRegion {
  unsigned Param;       // index of the pointer parameter written through
  WSExpr Size;          // bytes written from it
  bool Pointer = false; // "p[8] pointer": the word written is a pointer
};

struct WSFunction {
  std::string Name;
  unsigned NumParams = 0;
  bool Variadic = false;
  std::vector<WSRegion> Writes;
};

class WriteSets {
public:
  // Parse one file; on error returns false and sets Err to "file:line: why".
  bool parseFile(const std::string &Path, std::string &Err);
  bool parseText(const std::string &Text, const std::string &Origin,
                 std::string &Err);
  const WSFunction *lookup(const std::string &Name) const {
    auto It = Funcs.find(Name);
    return It == Funcs.end() ? nullptr : &It->second;
  }
  size_t size() const { return Funcs.size(); }

private:
  std::map<std::string, WSFunction> Funcs;
};

// The i64 number of bytes E says the call CB writes, computed at B's
// insertion point (before the call: strlen and formatted() read its inputs).
llvm::Value *emitWriteSetSize(llvm::IRBuilderBase &B, llvm::CallBase *CB,
                              const WSExpr &E);

// I writes memory that may be PM and both the log and the trace see it: a
// store, memset/memcpy/memmove, an atomic, or a call to a precompiled
// function the write-sets describe.
bool mayWriteMemory(const llvm::Instruction &I, const WriteSets &WS);

} // namespace cairn
#endif
