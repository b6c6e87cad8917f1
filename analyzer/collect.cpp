// collect.cpp: phase 1 of cairn-analyze. One syntax-only parse per TU; a
// RecursiveASTVisitor turns each function body into FunctionFacts (see
// facts.h) and records application struct layouts, globals, function-pointer
// flows and allocation sites. Nothing of the AST outlives its TU.
#include "collect.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <mutex>
#include <thread>

using namespace clang;

namespace cairn {

const char *writeKindName(WriteKind k) {
  switch (k) {
  case WriteKind::Field: return "field-write";
  case WriteKind::Object: return "object-write";
  case WriteKind::LocalValue: return "local-value-write";
  case WriteKind::PointerVar: return "pointer-variable-write";
  }
  return "?";
}

// ------------------------------------------------------------------ visitor
namespace {

class FactsVisitor : public RecursiveASTVisitor<FactsVisitor> {
public:
  FactsVisitor(ASTContext &ctx, ProgramFacts &facts)
      : ctx_(ctx), sm_(ctx.getSourceManager()), facts_(facts) {}

  // ---- declarations
  bool VisitRecordDecl(RecordDecl *rd) {
    if (!rd->isCompleteDefinition() || !isApp(rd)) return true;
    std::string key = recordKey(rd);
    if (facts_.types.count(key)) return true;
    TypeFacts &t = facts_.types[key];
    t.key = key;
    t.loc = locOf(rd->getLocation());
    t.isUnion = rd->isUnion();
    for (const FieldDecl *f : rd->fields()) {
      FieldInfo fi;
      fi.name = f->getNameAsString();
      fi.typeText = f->getType().getCanonicalType().getAsString();
      fi.target = appStruct(f->getType(), &fi.viaPointer);
      fi.isInteger = f->getType()->isIntegerType();
      fi.isFunctionPointer = f->getType()->isFunctionPointerType();
      t.fields.push_back(fi);
    }
    return true;
  }

  bool VisitTypedefNameDecl(TypedefNameDecl *td) {
    QualType q = td->getUnderlyingType().getCanonicalType();
    if (const RecordType *rt = q->getAs<RecordType>())
      if (isApp(rt->getDecl()))
        aliases_[recordKey(rt->getDecl())].insert(td->getNameAsString());
    return true;
  }

  bool VisitVarDecl(VarDecl *vd) {
    if (isa<ParmVarDecl>(vd)) return true;
    bool global = vd->hasGlobalStorage();
    bool viaPtr = false;
    std::string t = appStruct(vd->getType(), &viaPtr);
    if (global && !t.empty() && isApp(vd)) {
      facts_.globalTypes.insert(t);
      facts_.globalOfType.emplace(t, vd->getNameAsString());
    }
    if (const Expr *init = vd->getInit())
      noteFunctionPointerFlow(varSlot(vd), init);
    if (!fn_ || global) return true;
    if (!t.empty() && !viaPtr) fn_->localValueTypes.insert(t);
    if (const Expr *init = vd->getInit()) {
      if (!t.empty() && !isa<InitListExpr>(init->IgnoreParenImpCasts()) && viaPtr)
        addWrite(t, WriteKind::PointerVar, "initialization", vd, vd->getLocation());
      else if (!t.empty() && !viaPtr)
        addWrite(t, WriteKind::LocalValue, "initialization", vd, vd->getLocation());
      fn_->localFills[vd->getNameAsString()].merge(valueOf(init));
      if (viaPtr) noteAllocation(t, init, vd, vd->getLocation());
    }
    return true;
  }

  bool VisitInitListExpr(InitListExpr *ile) {
    // Only the syntactic form is traversed; fields line up in the semantic one.
    if (!ile->isSemanticForm() && ile->getSemanticForm()) ile = ile->getSemanticForm();
    const RecordType *rt = ile->getType()->getAs<RecordType>();
    const RecordDecl *rd = rt ? rt->getDecl()->getDefinition() : nullptr;
    if (!rd) return true;
    unsigned i = 0;
    for (const FieldDecl *f : rd->fields()) {
      if (i >= ile->getNumInits()) break;
      noteFunctionPointerFlow(fieldSlot(f), ile->getInit(i++));
    }
    return true;
  }

  bool TraverseFunctionDecl(FunctionDecl *fd) {
    if (!fd->doesThisDeclarationHaveABody() || !isApp(fd))
      return RecursiveASTVisitor::TraverseFunctionDecl(fd);
    std::string def = locOf(fd->getLocation()).str();
    std::string key = functionKey(fd);
    FunctionFacts &f = facts_.functions[key];
    if (f.definedAt.count(def)) return true; // same inline body from a header
    f.definedAt.insert(def);
    f.name = key;
    if (f.loc.file.empty()) f.loc = locOf(fd->getLocation());
    f.numParams = std::max<unsigned>(f.numParams, fd->getNumParams());
    for (const ParmVarDecl *p : fd->parameters()) {
      QualType q = p->getType().getCanonicalType();
      if (!q->isBuiltinType() && !q->isEnumeralType()) f.hasPointerParam = true;
      std::string t = appStruct(q);
      if (!t.empty()) f.signatureTypes.insert(t);
    }
    QualType r = fd->getReturnType().getCanonicalType();
    if (std::string t = appStruct(r); !t.empty()) f.signatureTypes.insert(t);
    if (r->isPointerType() || r->isRecordType()) f.returnsPointerOrRecord = true;
    FunctionFacts *saved = fn_;
    const FunctionDecl *savedDecl = fnDecl_;
    fn_ = &f;
    fnDecl_ = fd;
    bool ok = RecursiveASTVisitor::TraverseFunctionDecl(fd);
    fn_ = saved;
    fnDecl_ = savedDecl;
    return ok;
  }

  // ---- statements
  bool VisitBinaryOperator(BinaryOperator *bo) {
    if (!bo->isAssignmentOp()) return true;
    noteFunctionPointerFlow(slotOf(bo->getLHS()), bo->getRHS());
    if (!fn_) return true;
    std::string via = bo->getOpcode() == BO_Assign ? "assignment" : "compound assignment";
    modified(bo->getLHS(), via, bo, false);
    std::string root = rootLocal(bo->getLHS());
    if (!root.empty()) fn_->localFills[root].merge(valueOf(bo->getRHS()));
    bool viaPtr = false;
    std::string t = appStruct(bo->getLHS()->getType(), &viaPtr);
    if (viaPtr && bo->getOpcode() == BO_Assign)
      noteAllocation(t, bo->getRHS(), bo, bo->getBeginLoc());
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *uo) {
    if (fn_ && uo->isIncrementDecrementOp())
      modified(uo->getSubExpr(), uo->isIncrementOp() ? "++" : "--", uo, false);
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *dre) {
    const auto *fd = dyn_cast<FunctionDecl>(dre->getDecl());
    if (!fd || calleeRefs_.count(dre)) return true;
    facts_.addressTaken[functionKey(fd)] = signature(fd->getType());
    return true;
  }

  bool VisitCallExpr(CallExpr *ce) {
    CallSite cs;
    cs.loc = locOf(ce->getBeginLoc());
    const Expr *callee = ce->getCallee()->IgnoreParenImpCasts();
    if (const auto *dre = dyn_cast<DeclRefExpr>(callee)) calleeRefs_.insert(dre);
    const FunctionDecl *fd = ce->getDirectCallee();
    std::string name = fd ? fd->getNameAsString() : std::string();
    if (fd) {
      cs.callee = functionKey(fd);
    } else {
      cs.slot = slotOf(callee);
      QualType ct = callee->getType();
      if (const auto *pt = ct->getAs<PointerType>()) ct = pt->getPointeeType();
      cs.signature = signature(ct);
    }
    for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
      const Expr *a = ce->getArg(i);
      cs.args.push_back(valueOf(a));
      if (fd && isApp(fd) && i < fd->getNumParams())
        noteFunctionPointerFlow(paramSlot(fd, i), a);
      else if (fd && !cs.callee.empty())
        noteFunctionPointerFlow("param:" + cs.callee + "#" + std::to_string(i), a);
    }
    if (fd && (isLibcFunction(name) || StringRef(name).contains_insensitive("free")))
      for (const Expr *a : ce->arguments()) benignCasts_.insert(a);
    if (!fn_) return true;
    if (fd) libcEffects(name, ce);
    if (!fd || isApp(fd)) {
      // A buffer handed to an application function may be filled from the
      // other arguments (serialize_entry(buf, e)): note it for back-tracking.
      for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
        std::string root = rootLocal(ce->getArg(i));
        if (root.empty() || !ce->getArg(i)->getType()->isPointerType()) continue;
        for (unsigned j = 0; j < ce->getNumArgs(); ++j)
          if (j != i) fn_->localFills[root].merge(cs.args[j]);
      }
    }
    fn_->calls.push_back(std::move(cs));
    return true;
  }

  // T * -> void * / char *: T may now live anywhere, so it is no iterator.
  bool VisitCastExpr(CastExpr *c) {
    const auto *to = c->getType()->getAs<PointerType>();
    const Expr *sub = c->getSubExpr();
    const auto *from = sub->getType()->getAs<PointerType>();
    if (!to || !from) return true;
    if (to->getPointeeType()->isRecordType()) {
      // (struct T *)buf: a T laid over other memory (sds headers, records
      // in a file buffer) may live on the heap without an allocation of T.
      std::string t = appStruct(to->getPointeeType());
      if (!t.empty() && t != appStruct(from->getPointeeType())) facts_.castTargets.insert(t);
      return true;
    }
    if (benignCasts_.count(c)) return true;
    std::string t = appStruct(from->getPointeeType());
    if (!t.empty()) facts_.untypedEscapes.insert(t);
    return true;
  }

  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) {
    return true; // sizeof/alignof operands are not evaluated
  }

  void finish() {
    for (auto &[key, names] : aliases_)
      if (facts_.types.count(key))
        facts_.types[key].aliases.insert(names.begin(), names.end());
  }

private:
  // ---- helpers: places and names
  SrcLoc locOf(SourceLocation l) const {
    SrcLoc s;
    l = sm_.getExpansionLoc(l);
    PresumedLoc p = sm_.getPresumedLoc(l);
    if (p.isInvalid()) return s;
    // Absolute: a database's relative file names are relative to each
    // command's own directory, so "a.c" of two directories would be one.
    llvm::SmallString<256> path(p.getFilename());
    sm_.getFileManager().makeAbsolutePath(path);
    llvm::sys::path::remove_dots(path, true);
    s.file = std::string(path);
    s.line = p.getLine();
    return s;
  }

  bool isApp(const Decl *d) const {
    SourceLocation l = sm_.getExpansionLoc(d->getLocation());
    if (l.isInvalid() || sm_.isInSystemHeader(l)) return false;
    StringRef f = sm_.getFilename(l);
    return !f.starts_with("/usr/");
  }

  // A function's key in ProgramFacts (see FunctionFacts::name): a static
  // function is keyed by the file of its definition too, so that two of the
  // same name in different files stay apart, while a static inline body in a
  // header is one function however many files include it.
  std::string functionKey(const FunctionDecl *fd) const {
    if (fd->isExternallyVisible()) return fd->getNameAsString();
    const FunctionDecl *def = fd->getDefinition();
    return fd->getNameAsString() + "@" + locOf((def ? def : fd)->getLocation()).file;
  }

  // A struct's key: its tag (or typedef name) and, where this TU has its
  // definition, the definition's place: "struct rec@/src/a.c:7". Two files
  // may define different structs under one tag; unifyTypeKeys() shortens
  // the key to the tag alone when the program has one definition of it.
  std::string recordKey(const RecordDecl *rd) const {
    const RecordDecl *def = rd->getDefinition();
    if (def) rd = def;
    std::string tag;
    if (rd->getIdentifier())
      tag = std::string(rd->isUnion() ? "union " : "struct ") + rd->getName().str();
    else if (const TypedefNameDecl *td = rd->getTypedefNameForAnonDecl())
      tag = td->getNameAsString();
    else
      return std::string("(anonymous ") + (rd->isUnion() ? "union" : "struct") +
             " at " + locOf(rd->getLocation()).str() + ")";
    return def ? tag + "@" + locOf(def->getLocation()).str() : tag;
  }

  // The application struct a type is or reaches through pointers/arrays.
  std::string appStruct(QualType q, bool *viaPointer = nullptr) const {
    bool ptr = false;
    for (int guard = 0; guard < 16 && !q.isNull(); ++guard) {
      q = q.getCanonicalType();
      if (const auto *pt = q->getAs<PointerType>()) {
        q = pt->getPointeeType();
        ptr = true;
      } else if (const ArrayType *at = ctx_.getAsArrayType(q)) {
        q = at->getElementType();
      } else {
        break;
      }
    }
    if (viaPointer) *viaPointer = ptr;
    if (q.isNull()) return {};
    const RecordType *rt = q->getAs<RecordType>();
    if (!rt || !isApp(rt->getDecl())) return {};
    return recordKey(rt->getDecl());
  }

  static std::string signature(QualType q) {
    return q.getCanonicalType().getAsString();
  }

  std::string text(const Stmt *s) const {
    return textOf(sm_.getExpansionRange(s->getSourceRange()));
  }
  std::string text(const Decl *d) const {
    return textOf(sm_.getExpansionRange(d->getSourceRange()));
  }
  std::string textOf(CharSourceRange r) const {
    StringRef raw = Lexer::getSourceText(r, sm_, ctx_.getLangOpts());
    std::string out;
    bool space = false;
    for (char c : raw) {
      if (c == '\n' || c == '\t' || c == ' ' || c == '\r') {
        space = !out.empty();
        continue;
      }
      if (space) out += ' ';
      space = false;
      out += c;
      if (out.size() > 100) {
        out += "...";
        break;
      }
    }
    return out;
  }

  // ---- function-pointer slots
  std::string fieldSlot(const FieldDecl *f) const {
    return "field:" + recordKey(f->getParent()) + "::" + f->getNameAsString();
  }
  std::string paramSlot(const FunctionDecl *fd, unsigned i) const {
    return "param:" + functionKey(fd) + "#" + std::to_string(i);
  }
  std::string varSlot(const VarDecl *vd) const {
    if (const auto *pv = dyn_cast<ParmVarDecl>(vd)) {
      if (const auto *fd = dyn_cast<FunctionDecl>(pv->getDeclContext()))
        return paramSlot(fd, pv->getFunctionScopeIndex());
      return {};
    }
    if (vd->hasGlobalStorage() && !vd->isStaticLocal()) return "var:" + vd->getNameAsString();
    return "local:" + (fnDecl_ ? functionKey(fnDecl_) : std::string()) + ":" +
           vd->getNameAsString();
  }
  std::string slotOf(const Expr *e) const {
    for (int guard = 0; guard < 8; ++guard) {
      e = e->IgnoreParenCasts();
      if (const auto *uo = dyn_cast<UnaryOperator>(e)) {
        if (uo->getOpcode() == UO_Deref) { e = uo->getSubExpr(); continue; }
      } else if (const auto *as = dyn_cast<ArraySubscriptExpr>(e)) {
        e = as->getBase();
        continue;
      }
      break;
    }
    if (const auto *me = dyn_cast<MemberExpr>(e))
      if (const auto *f = dyn_cast<FieldDecl>(me->getMemberDecl())) return fieldSlot(f);
    if (const auto *dre = dyn_cast<DeclRefExpr>(e))
      if (const auto *vd = dyn_cast<VarDecl>(dre->getDecl())) return varSlot(vd);
    return {};
  }
  // `slot = value`: a function's address, or another slot's contents.
  void noteFunctionPointerFlow(const std::string &slot, const Expr *value) {
    if (slot.empty() || !value) return;
    const Expr *v = value->IgnoreParenCasts();
    if (const auto *uo = dyn_cast<UnaryOperator>(v))
      if (uo->getOpcode() == UO_AddrOf) v = uo->getSubExpr()->IgnoreParenCasts();
    if (const auto *co = dyn_cast<ConditionalOperator>(v)) {
      noteFunctionPointerFlow(slot, co->getTrueExpr());
      noteFunctionPointerFlow(slot, co->getFalseExpr());
      return;
    }
    if (const auto *dre = dyn_cast<DeclRefExpr>(v))
      if (const auto *fd = dyn_cast<FunctionDecl>(dre->getDecl())) {
        facts_.slotTargets[slot].insert(functionKey(fd));
        return;
      }
    QualType t = v->getType();
    if (t->isFunctionPointerType() || t->isFunctionType()) {
      std::string src = slotOf(v);
      if (!src.empty() && src != slot) facts_.slotEdges[src].insert(slot);
    }
  }

  // ---- what an expression is made of
  class ValueScanner : public RecursiveASTVisitor<ValueScanner> {
  public:
    ValueScanner(const FactsVisitor &o, ValueInfo &v) : o_(o), v_(v) {}
    bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) { return true; }
    bool VisitMemberExpr(MemberExpr *me) {
      add(me->getBase()->getType());
      return true;
    }
    // A field holding a pointer to a struct hands on the struct pointed to;
    // the struct holding the pointer is only the way to it: fwrite(D->r,
    // ...) writes a struct rec, and struct db is a holder (credited as
    // reaching the write, never as written itself). The base is still
    // scanned, so the locals and parameters it comes from keep the chain
    // back to the callers (zs in zs->zsl). A char * field, fwrite(e->key,
    // ...), still credits e's type: the string is e's data.
    bool TraverseMemberExpr(MemberExpr *me) {
      bool viaPointer = false;
      std::string t = o_.appStruct(me->getType(), &viaPointer);
      if (t.empty() || !viaPointer) return RecursiveASTVisitor::TraverseMemberExpr(me);
      (holderDepth_ ? v_.holders : v_.types).insert(t);
      ++holderDepth_;
      bool ok = RecursiveASTVisitor::TraverseMemberExpr(me);
      --holderDepth_;
      return ok;
    }
    bool VisitUnaryOperator(UnaryOperator *uo) {
      if (uo->getOpcode() == UO_Deref) add(uo->getSubExpr()->getType());
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *dre) {
      const auto *vd = dyn_cast<VarDecl>(dre->getDecl());
      if (!vd) return true;
      if (const auto *pv = dyn_cast<ParmVarDecl>(vd)) v_.params.insert(pv->getFunctionScopeIndex());
      else if (!vd->hasGlobalStorage()) v_.locals.insert(vd->getNameAsString());
      add(vd->getType());
      return true;
    }

  private:
    void add(QualType q) {
      std::string t = o_.appStruct(q);
      if (!t.empty()) (holderDepth_ ? v_.holders : v_.types).insert(t);
    }
    const FactsVisitor &o_;
    ValueInfo &v_;
    unsigned holderDepth_ = 0;
  };

  ValueInfo valueOf(const Expr *e) const {
    ValueInfo v;
    ValueScanner(*this, v).TraverseStmt(const_cast<Expr *>(e));
    return v;
  }

  // The local variable (or parameter) an lvalue is rooted in, if it is one.
  static std::string rootLocal(const Expr *e) {
    for (int guard = 0; guard < 16; ++guard) {
      e = e->IgnoreParenCasts();
      if (const auto *me = dyn_cast<MemberExpr>(e)) {
        if (me->isArrow()) return {};
        e = me->getBase();
      } else if (const auto *as = dyn_cast<ArraySubscriptExpr>(e)) {
        e = as->getBase();
      } else if (const auto *uo = dyn_cast<UnaryOperator>(e)) {
        if (uo->getOpcode() != UO_AddrOf && uo->getOpcode() != UO_Deref) return {};
        e = uo->getSubExpr();
      } else if (const auto *bo = dyn_cast<BinaryOperator>(e)) {
        if (!bo->isAdditiveOp()) return {};
        e = bo->getLHS()->getType()->isPointerType() ? bo->getLHS() : bo->getRHS();
      } else {
        break;
      }
    }
    if (const auto *dre = dyn_cast<DeclRefExpr>(e))
      if (const auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        if (!vd->hasGlobalStorage()) return vd->getNameAsString();
    return {};
  }

  // ---- writes
  template <typename Node>
  void addWrite(const std::string &type, WriteKind k, const std::string &via,
                const Node *node, SourceLocation l, const std::string &truncated = {}) {
    if (type.empty()) return;
    fn_->writes.push_back({type, k, via, text(node), locOf(l), truncated});
  }

  // Member accesses followed from a modified lvalue inwards (a.b.c...).
  static constexpr int kMaxMemberPath = 32;

  // `e` is modified. Walk the lvalue from the outside in: each '.' access
  // modifies the enclosing object too; '->', '*' and subscripts of pointers
  // end the walk at the object pointed to.
  void modified(const Expr *e, const std::string &via, const Stmt *s, bool pointee) {
    std::vector<std::pair<std::string, bool>> chain; // type, reached by a member access
    enum { Heap, Local, Global, Unknown } root = Unknown;
    bool pointerVar = false;
    if (pointee) {
      // A libc call writes *e: strip &x, casts and pointer arithmetic.
      const Expr *x = e->IgnoreParenCasts();
      while (const auto *bo = dyn_cast<BinaryOperator>(x)) {
        if (!bo->isAdditiveOp()) break;
        x = (bo->getLHS()->getType()->isPointerType() ? bo->getLHS() : bo->getRHS())
                ->IgnoreParenCasts();
      }
      if (const auto *uo = dyn_cast<UnaryOperator>(x); uo && uo->getOpcode() == UO_AddrOf) {
        e = uo->getSubExpr();
      } else if (x->getType()->isArrayType()) {
        e = x;
      } else {
        std::string t;
        if (const auto *pt = x->getType()->getAs<PointerType>()) t = appStruct(pt->getPointeeType());
        // Also look through the cast: memcpy((char *)rec, ...) writes a record.
        if (t.empty())
          if (const auto *pt = e->IgnoreParenImpCasts()->getType()->getAs<PointerType>())
            t = appStruct(pt->getPointeeType());
        addWrite(t, WriteKind::Object, via, s, s->getBeginLoc());
        if (isGlobalRef(x)) fn_->writesGlobal = true;
        return;
      }
    }
    int level = 0;
    for (; level < kMaxMemberPath; ++level) {
      e = e->IgnoreParenCasts();
      if (const auto *me = dyn_cast<MemberExpr>(e)) {
        QualType bt = me->getBase()->getType();
        if (me->isArrow()) {
          if (const auto *pt = bt->getAs<PointerType>()) chain.push_back({appStruct(pt->getPointeeType()), true});
          root = Heap;
          break;
        }
        chain.push_back({appStruct(bt), true});
        e = me->getBase();
      } else if (const auto *as = dyn_cast<ArraySubscriptExpr>(e)) {
        const Expr *base = as->getBase()->IgnoreParenCasts();
        chain.push_back({appStruct(as->getType()), false});
        if (base->getType()->isArrayType()) {
          e = base;
          continue;
        }
        root = Heap;
        break;
      } else if (const auto *uo = dyn_cast<UnaryOperator>(e);
                 uo && uo->getOpcode() == UO_Deref) {
        chain.push_back({appStruct(uo->getType()), false});
        root = Heap;
        break;
      } else if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
        const auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        if (!vd) break;
        bool viaPtr = false;
        std::string t = appStruct(vd->getType(), &viaPtr);
        if (chain.empty() && viaPtr && vd->getType()->isPointerType()) pointerVar = true;
        chain.push_back({t, false});
        root = vd->hasGlobalStorage() ? Global : Local;
        break;
      } else {
        chain.push_back({appStruct(e->getType()), false});
        break;
      }
    }
    std::string truncated;
    if (level == kMaxMemberPath)
      truncated = "member path cut after " + std::to_string(kMaxMemberPath) +
                  " levels: the types of the outer levels are not credited";
    if (root == Global) fn_->writesGlobal = true;
    std::set<std::string> seen;
    for (const auto &[t, member] : chain) {
      if (t.empty() || !seen.insert(t).second) continue;
      WriteKind k;
      if (pointerVar) k = WriteKind::PointerVar;
      else if (root == Local) k = WriteKind::LocalValue;
      else k = member ? WriteKind::Field : WriteKind::Object;
      addWrite(t, k, via, s, s->getBeginLoc(), truncated);
    }
  }

  static bool isGlobalRef(const Expr *e) {
    if (const auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenCasts()))
      if (const auto *vd = dyn_cast<VarDecl>(dre->getDecl())) return vd->hasGlobalStorage();
    return false;
  }

  static bool isStdStream(const Expr *e) {
    e = e->IgnoreParenCasts();
    if (const auto *dre = dyn_cast<DeclRefExpr>(e)) {
      StringRef n = dre->getDecl()->getName();
      return n == "stderr" || n == "stdout" || n == "_IO_2_1_stderr_";
    }
    if (const auto *il = dyn_cast<IntegerLiteral>(e))
      return il->getValue() == 1 || il->getValue() == 2;
    return false;
  }

  void libcEffects(const std::string &name, const CallExpr *ce) {
    if (const int *args = libcWrittenArgs(name)) {
      std::set<unsigned> written;
      for (int i = 0; args[i] >= 0; ++i) {
        if (args[i] >= 100) {
          for (unsigned j = args[i] - 100; j < ce->getNumArgs(); ++j) written.insert(j);
        } else if (unsigned(args[i]) < ce->getNumArgs()) {
          written.insert(args[i]);
        }
      }
      ValueInfo src;
      for (unsigned j = 0; j < ce->getNumArgs(); ++j)
        if (!written.count(j)) src.merge(valueOf(ce->getArg(j)));
      for (unsigned j : written) {
        modified(ce->getArg(j), name, ce, true);
        std::string root = rootLocal(ce->getArg(j));
        if (!root.empty()) fn_->localFills[root].merge(src);
      }
    }
    if (const Sink *sk = sinkFor(name)) {
      if (sk->streamArg >= 0 && unsigned(sk->streamArg) < ce->getNumArgs() &&
          isStdStream(ce->getArg(sk->streamArg)))
        return;
      SinkUse use{name, locOf(ce->getBeginLoc()), {}};
      for (unsigned j = sk->dataArg; j < ce->getNumArgs(); ++j) {
        use.data.merge(valueOf(ce->getArg(j)));
        if (!sk->dataToEnd) break;
      }
      fn_->sinks.push_back(std::move(use));
    }
    if (isLibcAllocator(name)) {
      // malloc(sizeof(struct T)) / calloc(n, sizeof *p): T is allocated here.
      for (const Expr *a : ce->arguments()) scanSizeof(a, name, ce);
    }
    if (name == "free" && ce->getNumArgs() == 1) {
      std::string t = appStruct(ce->getArg(0)->IgnoreParenImpCasts()->getType());
      if (!t.empty())
        facts_.allocs.push_back({t, "free", text(ce), fn_->name, locOf(ce->getBeginLoc()), true});
    }
  }

  void scanSizeof(const Stmt *s, const std::string &allocator, const CallExpr *ce) {
    if (!s) return;
    if (const auto *u = dyn_cast<UnaryExprOrTypeTraitExpr>(s)) {
      if (u->getKind() != UETT_SizeOf) return;
      QualType q = u->isArgumentType() ? u->getArgumentType() : u->getArgumentExpr()->getType();
      bool viaPtr = false;
      std::string t = appStruct(q, &viaPtr);
      if (!t.empty() && !viaPtr)
        facts_.allocs.push_back({t, allocator, text(ce), fn_->name, locOf(ce->getBeginLoc()), false});
      return;
    }
    for (const Stmt *c : s->children()) scanSizeof(c, allocator, ce);
  }

  // `T *p = f(...)`: a candidate allocation site; phase 2 keeps it when f
  // turns out to be an allocator or a wrapper of one.
  template <typename Node>
  void noteAllocation(const std::string &type, const Expr *rhs, const Node *node, SourceLocation l) {
    if (type.empty() || !fn_) return;
    const auto *ce = dyn_cast<CallExpr>(rhs->IgnoreParenCasts());
    if (!ce || !ce->getDirectCallee()) return;
    facts_.allocs.push_back({type, functionKey(ce->getDirectCallee()), text(node),
                             fn_->name, locOf(l), false});
  }

  ASTContext &ctx_;
  SourceManager &sm_;
  ProgramFacts &facts_;
  FunctionFacts *fn_ = nullptr;
  const FunctionDecl *fnDecl_ = nullptr;
  std::set<const DeclRefExpr *> calleeRefs_;
  std::set<const Expr *> benignCasts_;
  std::map<std::string, std::set<std::string>> aliases_;
};

class FactsConsumer : public ASTConsumer {
public:
  explicit FactsConsumer(ProgramFacts &facts) : facts_(facts) {}
  void HandleTranslationUnit(ASTContext &ctx) override {
    FactsVisitor v(ctx, facts_);
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    v.finish();
    facts_.translationUnits++;
    // a TU with errors (a header not found: the database lacks a -I) gives
    // partial facts; counted and reported, never silently trusted
    if (ctx.getDiagnostics().hasErrorOccurred()) facts_.failedUnits++;
  }

private:
  ProgramFacts &facts_;
};

// Diagnostics are not printed (GCC-only flags, warnings: noise here), but
// the first error is kept for the report.
class FirstError : public DiagnosticConsumer {
public:
  explicit FirstError(std::string &out) : out_(out) {}
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic &d) override {
    // the base class is not called: it would count, and clang would print
    // "N errors generated." (the TU is counted by its consumer instead)
    if (level < DiagnosticsEngine::Error || !out_.empty()) return;
    SmallString<160> msg;
    d.FormatDiagnostic(msg);
    std::string where;
    if (d.hasSourceManager() && d.getLocation().isValid()) {
      PresumedLoc p = d.getSourceManager().getPresumedLoc(d.getLocation());
      if (p.isValid()) where = std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ": ";
    }
    out_ = where + std::string(msg);
  }

private:
  std::string &out_;
};

class FactsAction : public ASTFrontendAction {
public:
  explicit FactsAction(ProgramFacts &facts) : facts_(facts) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci, StringRef) override {
    ci.getDiagnostics().setClient(new FirstError(facts_.firstError), true);
    return std::make_unique<FactsConsumer>(facts_);
  }

private:
  ProgramFacts &facts_;
};

class FactsFactory : public tooling::FrontendActionFactory {
public:
  explicit FactsFactory(ProgramFacts &facts) : facts_(facts) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<FactsAction>(facts_); }

private:
  ProgramFacts &facts_;
};

void mergeValue(std::map<std::string, ValueInfo> &into, const std::map<std::string, ValueInfo> &from) {
  for (const auto &[k, v] : from) into[k].merge(v);
}

// Merge one thread's facts into the program's. A function defined in several
// TUs (an inline body in a header) is united: more facts can only add
// candidates, never lose one. Static functions of the same name in different
// files have different keys and stay apart.
void mergeFacts(ProgramFacts &into, ProgramFacts &&from) {
  for (auto &[name, f] : from.functions) {
    auto it = into.functions.find(name);
    if (it == into.functions.end()) {
      into.functions.emplace(name, std::move(f));
      continue;
    }
    FunctionFacts &g = it->second;
    bool fresh = false;
    for (const std::string &d : f.definedAt) fresh |= g.definedAt.insert(d).second;
    if (!fresh) continue;
    g.numParams = std::max(g.numParams, f.numParams);
    g.hasPointerParam |= f.hasPointerParam;
    g.writesGlobal |= f.writesGlobal;
    g.returnsPointerOrRecord |= f.returnsPointerOrRecord;
    g.writes.insert(g.writes.end(), f.writes.begin(), f.writes.end());
    g.calls.insert(g.calls.end(), f.calls.begin(), f.calls.end());
    g.sinks.insert(g.sinks.end(), f.sinks.begin(), f.sinks.end());
    mergeValue(g.localFills, f.localFills);
    g.localValueTypes.insert(f.localValueTypes.begin(), f.localValueTypes.end());
    g.signatureTypes.insert(f.signatureTypes.begin(), f.signatureTypes.end());
  }
  for (auto &[k, t] : from.types) {
    auto [it, added] = into.types.emplace(k, t);
    if (!added) it->second.aliases.insert(t.aliases.begin(), t.aliases.end());
  }
  for (auto &[k, v] : from.slotTargets) into.slotTargets[k].insert(v.begin(), v.end());
  for (auto &[k, v] : from.slotEdges) into.slotEdges[k].insert(v.begin(), v.end());
  into.addressTaken.insert(from.addressTaken.begin(), from.addressTaken.end());
  into.globalTypes.insert(from.globalTypes.begin(), from.globalTypes.end());
  into.untypedEscapes.insert(from.untypedEscapes.begin(), from.untypedEscapes.end());
  into.castTargets.insert(from.castTargets.begin(), from.castTargets.end());
  into.globalOfType.insert(from.globalOfType.begin(), from.globalOfType.end());
  into.allocs.insert(into.allocs.end(), from.allocs.begin(), from.allocs.end());
  into.translationUnits += from.translationUnits;
  into.failedUnits += from.failedUnits;
  if (into.firstError.empty()) into.firstError = from.firstError;
}

// Every place phase 1 writes a type key, renamed by `rename`.
void renameTypeKeys(ProgramFacts &facts, const std::map<std::string, std::string> &rename) {
  auto key = [&](std::string &k) {
    auto it = rename.find(k);
    if (it != rename.end()) k = it->second;
  };
  auto keys = [&](std::set<std::string> &s) {
    std::set<std::string> out;
    for (std::string k : s) {
      key(k);
      out.insert(std::move(k));
    }
    s = std::move(out);
  };
  auto slot = [&](std::string &sl) {  // "field:<type key>::<field>"
    size_t end = sl.rfind("::");
    if (!StringRef(sl).starts_with("field:") || end == std::string::npos) return;
    std::string k = sl.substr(6, end - 6);
    key(k);
    sl = "field:" + k + sl.substr(end);
  };
  auto slotMap = [&](auto &m) {
    std::remove_reference_t<decltype(m)> out;
    for (auto &[sl, v] : m) {
      std::string k = sl;
      slot(k);
      out[k].insert(v.begin(), v.end());
    }
    m = std::move(out);
  };
  for (auto &[name, f] : facts.functions) {
    for (Write &w : f.writes) key(w.type);
    for (CallSite &c : f.calls) {
      slot(c.slot);
      for (ValueInfo &v : c.args) {
        keys(v.types);
        keys(v.holders);
      }
    }
    for (SinkUse &u : f.sinks) {
      keys(u.data.types);
      keys(u.data.holders);
    }
    for (auto &[l, v] : f.localFills) {
      keys(v.types);
      keys(v.holders);
    }
    keys(f.signatureTypes);
    keys(f.localValueTypes);
  }
  std::map<std::string, TypeFacts> types;
  for (auto &[k, t] : facts.types) {
    key(t.key);
    for (FieldInfo &fi : t.fields) key(fi.target);
    types.emplace(t.key, std::move(t));
  }
  facts.types = std::move(types);
  slotMap(facts.slotTargets);
  slotMap(facts.slotEdges);
  for (auto &[src, dsts] : facts.slotEdges) {
    std::set<std::string> out;
    for (std::string d : dsts) {
      slot(d);
      out.insert(std::move(d));
    }
    dsts = std::move(out);
  }
  keys(facts.untypedEscapes);
  keys(facts.castTargets);
  keys(facts.globalTypes);
  std::map<std::string, std::string> globals;
  for (const auto &[k, g] : facts.globalOfType) {
    std::string renamed = k;
    key(renamed);
    globals.emplace(renamed, g);
  }
  facts.globalOfType = std::move(globals);
  for (AllocSite &a : facts.allocs) key(a.type);
}

// A tag defined once in the program (the usual case: in a header) is keyed
// by the tag alone, which also joins the TUs that only declare it. A tag
// with several definitions (struct rec of a.c and of b.c, different
// layouts) keeps one key per definition: they are different types.
void unifyTypeKeys(ProgramFacts &facts) {
  std::map<std::string, std::vector<std::string>> definitions;
  for (const auto &[k, t] : facts.types) definitions[typeTag(k)].push_back(k);
  std::map<std::string, std::string> rename;
  for (const auto &[tag, keys] : definitions)
    if (keys.size() == 1 && keys[0] != tag) rename[keys[0]] = tag;
  renameTypeKeys(facts, rename);
}

} // namespace

bool collectFacts(const tooling::CompilationDatabase &db, const std::vector<std::string> &files,
                  unsigned threads, ProgramFacts &facts,
                  const std::function<void(size_t, size_t)> &progress) {
  threads = std::max(1u, std::min<unsigned>(threads, files.size()));
  std::mutex progressLock;
  size_t done = 0;
  std::vector<ProgramFacts> parts(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = t; i < files.size(); i += threads) {
        // A physical file system of this thread's own: the default real one
        // shares the process's working directory, which ClangTool changes
        // per compile command, so parallel tools would race on it.
        tooling::ClangTool tool(db, {files[i]}, std::make_shared<PCHContainerOperations>(),
                                llvm::vfs::createPhysicalFileSystem());
        tool.appendArgumentsAdjuster(tooling::getClangStripOutputAdjuster());
        tool.appendArgumentsAdjuster(tooling::getClangSyntaxOnlyAdjuster());
        tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
            {"-w", "-Wno-error", "-ferror-limit=0", "-resource-dir=" CAIRN_CLANG_RESOURCE_DIR},
            tooling::ArgumentInsertPosition::END));
        tool.setPrintErrorMessage(false);
        FactsFactory factory(parts[t]);
        if (tool.run(&factory) != 0) parts[t].failedUnits++;
        std::lock_guard<std::mutex> hold(progressLock);
        progress(++done, files.size());
      }
    });
  }
  for (std::thread &w : workers) w.join();
  for (ProgramFacts &p : parts) mergeFacts(facts, std::move(p));
  unifyTypeKeys(facts);
  return facts.translationUnits > 0;
}

} // namespace cairn
