// TypeLayout: the canonical text of a C type's layout and the 64-bit id
// cairn-cc gives it (CAIRN_TYPE_ID). The grammar and the stability rules are
// in docs/compiler.md, "Type ids"; change the text only by bumping
// kLayoutVersion, because every pool's root records the id.
#ifndef CAIRN_TYPE_LAYOUT_H
#define CAIRN_TYPE_LAYOUT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cairn {

constexpr const char *kLayoutVersion = "cairn-layout-1";

struct TypeLayout {
  std::string text;  // kLayoutVersion, a space, then the type (grammar above)
  uint64_t id = 0;   // layoutId(text)
  // Records and enums reached from the type whose definition this
  // translation unit has not seen: the id covers only their names.
  std::vector<const clang::TagDecl *> incomplete;
};

// Describes T (qualifiers ignored) and everything reachable from it through
// fields, array elements, pointees and function signatures.
TypeLayout describeLayout(const clang::ASTContext &ctx, clang::QualType t);

// FNV-1a 64 over the text, with the two low bits set to 10: basic ids
// (cairn.h's plain-C fallback) are odd, so an id says which kind it is.
uint64_t layoutId(const std::string &text);

} // namespace cairn

#endif
