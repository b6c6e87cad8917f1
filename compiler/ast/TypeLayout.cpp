// TypeLayout: walks a type depth-first and writes one token per type.
//
// Records and enums are numbered in the order they are first met; a later
// meeting writes "#n" instead of the body, so a self-referential pointer
// (struct node { struct node *next; }) ends at "#0" and a type reached twice
// is described once. The walk is therefore linear in the number of distinct
// types reachable from the root, and its output depends only on the types'
// definitions, never on where or how often the file uses them.
#include "TypeLayout.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/RecordLayout.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace cairn {
namespace {

class LayoutWriter {
public:
  explicit LayoutWriter(const ASTContext &ctx) : ctx_(ctx) {}

  TypeLayout run(QualType t) {
    TypeLayout out;
    text_ = kLayoutVersion;
    text_ += ' ';
    type(t);
    out.text = std::move(text_);
    out.id = layoutId(out.text);
    out.incomplete = std::move(incomplete_);
    return out;
  }

private:
  void num(uint64_t v) { text_ += std::to_string(v); }
  void bits(QualType t) { num(ctx_.getTypeSize(t)); }

  void type(QualType q) {
    // Qualifiers (const, volatile, restrict, address spaces such as
    // cairn_pm) do not change where bytes are; _Atomic is a type of its own.
    q = q.getCanonicalType().getUnqualifiedType();
    const Type *t = q.getTypePtr();
    if (const auto *b = dyn_cast<BuiltinType>(t)) {
      builtin(q, b);
    } else if (const auto *p = dyn_cast<PointerType>(t)) {
      text_ += 'p';
      bits(q);
      type(p->getPointeeType());
    } else if (const auto *a = dyn_cast<ConstantArrayType>(t)) {
      text_ += 'a';
      num(a->getZExtSize());
      type(a->getElementType());
    } else if (const auto *a = dyn_cast<IncompleteArrayType>(t)) {
      text_ += "a?";                      // flexible array member
      type(a->getElementType());
    } else if (const auto *a = dyn_cast<ArrayType>(t)) {
      text_ += "a*";                      // variable length (GNU, in structs)
      type(a->getElementType());
    } else if (const auto *r = dyn_cast<RecordType>(t)) {
      record(r->getDecl());
    } else if (const auto *e = dyn_cast<EnumType>(t)) {
      enumeration(e->getDecl());
    } else if (const auto *a = dyn_cast<AtomicType>(t)) {
      text_ += 'A';
      bits(q);
      type(a->getValueType());
    } else if (const auto *c = dyn_cast<ComplexType>(t)) {
      text_ += 'c';
      type(c->getElementType());
    } else if (const auto *v = dyn_cast<VectorType>(t)) {
      text_ += 'V';
      num(v->getNumElements());
      type(v->getElementType());
    } else if (const auto *i = dyn_cast<BitIntType>(t)) {
      text_ += 'x';
      num(i->getNumBits());
      text_ += i->isUnsigned() ? 'u' : 's';
    } else if (const auto *f = dyn_cast<FunctionType>(t)) {
      function(f);
    } else {
      // Anything C does not have (C++ references, member pointers, ...):
      // its spelling, so it still changes the id when it changes.
      text_ += "?(";
      text_ += q.getAsString();
      text_ += ')';
    }
  }

  void builtin(QualType q, const BuiltinType *b) {
    if (b->isVoidType()) {
      text_ += 'v';
    } else if (b->isBooleanType()) {
      text_ += 'b';
      bits(q);
    } else if (b->isInteger()) {
      // By width and signedness, not by name: long and long long, int64_t
      // and long, plain char and signed char (on x86) lay out the same.
      text_ += 'i';
      bits(q);
      text_ += b->isSignedInteger() ? 's' : 'u';
    } else if (b->isFloatingPoint()) {
      // Width and precision tell double, long double and __float128 apart.
      text_ += 'f';
      bits(q);
      text_ += '.';
      num(llvm::APFloat::semanticsPrecision(ctx_.getFloatTypeSemantics(q)));
    } else {
      text_ += "?(";
      text_ += b->getName(ctx_.getPrintingPolicy()).str();
      text_ += ')';
    }
  }

  void function(const FunctionType *f) {
    text_ += "F(";
    type(f->getReturnType());
    text_ += ';';
    if (const auto *p = dyn_cast<FunctionProtoType>(f)) {
      for (QualType param : p->getParamTypes()) {
        type(param);
        text_ += ',';
      }
      if (p->isVariadic())
        text_ += "...";
    } else {
      text_ += '?';                       // int f(): parameters unknown
    }
    text_ += ')';
  }

  // Writes "#n" and returns true when tag was already described.
  bool seen(const TagDecl *tag) {
    auto [it, first] = index_.try_emplace(tag, index_.size());
    if (first)
      return false;
    text_ += '#';
    num(it->second);
    return true;
  }

  void tagName(const TagDecl *tag) {
    text_ += ':';
    if (!tag->getName().empty())
      text_ += tag->getName();
    else if (const TypedefNameDecl *td = tag->getTypedefNameForAnonDecl())
      text_ += td->getName();             // typedef struct { ... } name;
    text_ += ':';
  }

  // An incomplete tag: its name and '?'. Reported so the plugin can warn.
  void incompleteTag(const TagDecl *tag, char kind) {
    text_ += kind;
    tagName(tag);
    text_ += '?';
    incomplete_.push_back(tag);
  }

  void record(const RecordDecl *decl) {
    const char kind = decl->isUnion() ? 'U' : 'S';
    const RecordDecl *def = decl->getDefinition();
    if (!def)
      return incompleteTag(decl, kind);
    if (seen(def))
      return;
    const ASTRecordLayout &layout = ctx_.getASTRecordLayout(def);
    text_ += kind;
    tagName(def);
    num(layout.getSize().getQuantity());
    text_ += ':';
    num(layout.getAlignment().getQuantity());
    text_ += '{';
    // C++: a vtable pointer and the base classes, before the fields (a C
    // struct, or a C++ one with neither, reads as before)
    if (const auto *cxx = dyn_cast<CXXRecordDecl>(def)) {
      if (cxx->isDynamicClass())
        text_ += "^vptr;";
      for (const CXXBaseSpecifier &b : cxx->bases()) {
        const CXXRecordDecl *bd = b.getType()->getAsCXXRecordDecl();
        text_ += b.isVirtual() ? "^virtual@" : "^base@";
        if (bd)
          num((b.isVirtual() ? layout.getVBaseClassOffset(bd)
                             : layout.getBaseClassOffset(bd)).getQuantity() * 8);
        text_ += '=';
        type(b.getType());
        text_ += ';';
      }
    }
    for (const FieldDecl *field : def->fields()) {
      text_ += field->getName();          // empty for anonymous members
      text_ += '@';
      num(layout.getFieldOffset(field->getFieldIndex()));   // in bits
      if (field->isBitField()) {
        text_ += ':';
        num(field->getBitWidthValue(ctx_));
      }
      text_ += '=';
      type(field->getType());
      text_ += ';';
    }
    text_ += '}';
  }

  void enumeration(const EnumDecl *decl) {
    const EnumDecl *def = decl->getDefinition();
    if (!def)
      return incompleteTag(decl, 'E');
    if (seen(def))
      return;
    text_ += 'E';
    tagName(def);
    type(def->getIntegerType());
    text_ += '{';
    for (const EnumConstantDecl *c : def->enumerators()) {
      text_ += c->getName();
      text_ += '=';
      text_ += llvm::toString(c->getInitVal(), 10);
      text_ += ';';
    }
    text_ += '}';
  }

  const ASTContext &ctx_;
  std::string text_;
  llvm::DenseMap<const TagDecl *, unsigned> index_;
  std::vector<const TagDecl *> incomplete_;
};

} // namespace

TypeLayout describeLayout(const ASTContext &ctx, QualType t) {
  return LayoutWriter(ctx).run(t);
}

uint64_t layoutId(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ULL;
  return (h & ~(uint64_t)3) | 2;
}

} // namespace cairn
