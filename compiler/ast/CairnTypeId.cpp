// CairnTypeId: the clang plugin that gives CAIRN_TYPE_ID(T) its value under
// cairn-cc: a checksum of T's full layout (TypeLayout.h, docs/compiler.md
// "Type ids").
//
// Under cairn-cc (__CAIRN_CC__) cairn.h spells CAIRN_TYPE_ID(T) as a marker,
//
//     (__extension__ _Generic((__typeof__(T) *)0,
//                             default: (cairn__layout_id)0ULL))
//
// an integer constant expression (so it is valid in static initializers)
// that carries T in its controlling expression. The consumer runs before
// CodeGen's (AddBeforeMainAction): it sees each top-level declaration first,
// finds the markers in it, and writes T's layout id into the 0ULL literal.
// CodeGen, at any -O level, then emits the id as a constant.
//
// The marker's typedef carries the attribute cairn_layout_id, which this
// plugin registers: a compile without the plugin stops there (cairn.h makes
// the unknown attribute an error) instead of leaving the placeholder.
//
// What can go wrong is reported as an error, never left as 0:
//  - a marker where C needs the value while parsing (enum constants, case
//    labels, _Static_assert, array sizes, bit-field widths, alignments):
//    the parser has already used the placeholder;
//  - an expansion of CAIRN_TYPE_ID whose marker the plugin never saw;
//  - T incomplete or dependent.
// Types reached from T that are incomplete here get a warning: the id then
// covers only their names and differs from a file that sees them defined.
#include "TypeLayout.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/ParsedAttr.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>

using namespace clang;

namespace {

constexpr const char *kMacro = "CAIRN_TYPE_ID";
constexpr const char *kSlotType = "cairn__layout_id";

// Where each CAIRN_TYPE_ID was expanded, keyed by the location of the
// macro's name; a marker's tokens lead back to the same location. Ordered,
// so that leftovers are reported in a stable order.
struct Expansions {
  std::map<unsigned, SourceLocation> pending;
};

class ExpansionRecorder : public PPCallbacks {
public:
  explicit ExpansionRecorder(std::shared_ptr<Expansions> e) : exp_(std::move(e)) {}
  void MacroExpands(const Token &name, const MacroDefinition &, SourceRange,
                    const MacroArgs *) override {
    if (name.getIdentifierInfo() && name.getIdentifierInfo()->getName() == kMacro)
      exp_->pending[name.getLocation().getRawEncoding()] = name.getLocation();
  }

private:
  std::shared_ptr<Expansions> exp_;
};

struct Marker {
  QualType type;             // T as written
  IntegerLiteral *slot;      // the 0ULL that receives the id
};

// The marker shape cairn.h produces, or nothing.
std::optional<Marker> asMarker(GenericSelectionExpr *e) {
  if (e->isResultDependent() || !e->isExprPredicate() || e->getNumAssocs() != 1)
    return std::nullopt;
  auto *cast = dyn_cast<CStyleCastExpr>(e->getResultExpr()->IgnoreParens());
  if (!cast)
    return std::nullopt;
  const auto *slotType = cast->getTypeAsWritten()->getAs<TypedefType>();
  if (!slotType || slotType->getDecl()->getName() != kSlotType)
    return std::nullopt;
  auto *slot = dyn_cast<IntegerLiteral>(cast->getSubExpr()->IgnoreParenImpCasts());
  auto *carrier = dyn_cast<CStyleCastExpr>(e->getControllingExpr()->IgnoreParenImpCasts());
  if (!slot || !carrier || !carrier->getTypeAsWritten()->isPointerType())
    return std::nullopt;
  QualType t = carrier->getTypeAsWritten()->getPointeeType();
  if (const auto *typeOf = dyn_cast<TypeOfType>(t.getTypePtr()))
    t = typeOf->getUnmodifiedType();   // the T inside __typeof__(T)
  return Marker{t, slot};
}

class MarkerRewriter : public RecursiveASTVisitor<MarkerRewriter> {
  using Base = RecursiveASTVisitor<MarkerRewriter>;

public:
  MarkerRewriter(ASTContext &ctx, Expansions &exp, bool print)
      : ctx_(ctx), diags_(ctx.getDiagnostics()), exp_(exp), print_(print) {
    errParseTime_ = diags_.getCustomDiagID(
        DiagnosticsEngine::Error,
        "CAIRN_TYPE_ID(%0) is used where C needs its value while parsing "
        "(enum constant, case label, _Static_assert, array size, bit-field "
        "width, alignment); cairn-cc computes it after parsing, so use it in an "
        "ordinary expression or initializer");
    errIncomplete_ = diags_.getCustomDiagID(
        DiagnosticsEngine::Error,
        "CAIRN_TYPE_ID(%0): the type is incomplete or dependent here; its "
        "layout cannot be checksummed");
    // clang 19 never maps custom diagnostics (-Werror, -w do not reach
    // them), so the level is chosen here, as the user's flags would have
    auto warning = [&](const auto &text) {
      if (diags_.getIgnoreAllWarnings())
        return 0u;
      return diags_.getCustomDiagID(diags_.getWarningsAsErrors()
                                        ? DiagnosticsEngine::Error
                                        : DiagnosticsEngine::Warning,
                                    text);
    };
    warnPartial_ = warning(
        "CAIRN_TYPE_ID(%0): %1 is not defined at this point, so the id covers "
        "only its name and differs from files that define it first; define "
        "or include it before this use");
    warnBasic_ = warning(
        "plain-C type id (cairn__type_id_basic) in a cairn-cc build: this file "
        "was preprocessed by another compiler (cc -E?); "
        "its ids differ from cairn-cc's, and a pool made by one is refused by "
        "the other");
    remarkId_ = diags_.getCustomDiagID(DiagnosticsEngine::Remark,
                                       "CAIRN_TYPE_ID(%0) = %1 from %2");
  }

  // Markers that sit where the parser folded constants.
  bool TraverseConstantExpr(ConstantExpr *e, DataRecursionQueue * = nullptr) {
    ParseTimeScope scope(parseTime_);
    return Base::TraverseConstantExpr(e);
  }
  bool TraverseStaticAssertDecl(StaticAssertDecl *d) {
    ParseTimeScope scope(parseTime_);
    return Base::TraverseStaticAssertDecl(d);
  }
  bool TraverseConstantArrayTypeLoc(ConstantArrayTypeLoc tl) {
    ParseTimeScope scope(parseTime_);
    return Base::TraverseConstantArrayTypeLoc(tl);
  }

  // A rewritten static initializer must not keep a value evaluated from
  // the placeholder: setInit drops the variable's evaluation cache.
  bool TraverseVarDecl(VarDecl *d) {
    unsigned before = rewritten_;
    bool ok = Base::TraverseVarDecl(d);
    if (rewritten_ != before && d->hasInit())
      d->setInit(d->getInit());
    return ok;
  }

  bool VisitCallExpr(CallExpr *call) {
    const FunctionDecl *callee = call->getDirectCallee();
    // getIdentifier: a C++ callee may be an operator or a constructor, whose
    // name is no identifier (getName() asserts on it)
    if (callee && callee->getIdentifier() &&
        callee->getIdentifier()->getName() == "cairn__type_id_basic" && warnBasic_)
      diags_.Report(call->getBeginLoc(), warnBasic_);
    return true;
  }

  bool VisitGenericSelectionExpr(GenericSelectionExpr *e) {
    std::optional<Marker> m = asMarker(e);
    if (!m)
      return true;
    SourceLocation use = userLocation(e);
    std::string name = m->type.getAsString(ctx_.getPrintingPolicy());
    if (parseTime_) {
      diags_.Report(use, errParseTime_) << name;
      return true;
    }
    if (m->type->isDependentType() || m->type->isIncompleteType()) {
      diags_.Report(use, errIncomplete_) << name;
      return true;
    }
    cairn::TypeLayout layout = cairn::describeLayout(ctx_, m->type);
    for (const TagDecl *tag : warnPartial_ ? layout.incomplete
                                           : std::vector<const TagDecl *>{})
      diags_.Report(use, warnPartial_)
          << name << ctx_.getTypeDeclType(tag).getAsString(ctx_.getPrintingPolicy());
    if (print_) {
      char hex[24];
      snprintf(hex, sizeof hex, "%#018llx", (unsigned long long)layout.id);
      diags_.Report(use, remarkId_) << name << hex << layout.text;
    }
    m->slot->setValue(ctx_, llvm::APInt(ctx_.getTypeSize(m->slot->getType()), layout.id));
    rewritten_++;
    return true;
  }

private:
  struct ParseTimeScope {
    explicit ParseTimeScope(unsigned &depth) : depth_(depth) { ++depth_; }
    ~ParseTimeScope() { --depth_; }
    unsigned &depth_;
  };

  // Where the user wrote CAIRN_TYPE_ID (or a macro around it); forgets the
  // expansion so the end-of-file check knows the marker was seen.
  SourceLocation userLocation(GenericSelectionExpr *e) {
    const SourceManager &sm = ctx_.getSourceManager();
    SourceLocation loc = e->getBeginLoc();
    if (loc.isMacroID())
      loc = sm.getImmediateExpansionRange(loc).getBegin();
    exp_.pending.erase(loc.getRawEncoding());
    return loc;
  }

  ASTContext &ctx_;
  DiagnosticsEngine &diags_;
  Expansions &exp_;
  bool print_;
  unsigned parseTime_ = 0, rewritten_ = 0;
  unsigned errParseTime_, errIncomplete_, warnPartial_, warnBasic_, remarkId_;
};

class TypeIdConsumer : public ASTConsumer {
public:
  TypeIdConsumer(std::shared_ptr<Expansions> exp, bool print)
      : exp_(std::move(exp)), print_(print) {}

  void Initialize(ASTContext &ctx) override {
    rewriter_ = std::make_unique<MarkerRewriter>(ctx, *exp_, print_);
  }

  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *d : group)
      rewriter_->TraverseDecl(d);
    return true;
  }

  void HandleTranslationUnit(ASTContext &ctx) override {
    DiagnosticsEngine &diags = ctx.getDiagnostics();
    if (diags.hasErrorOccurred())
      return;   // error recovery may have dropped expressions
    unsigned err = diags.getCustomDiagID(
        DiagnosticsEngine::Error,
        "this CAIRN_TYPE_ID was not computed by cairn-cc's type-id plugin "
        "(the expression did not reach a top-level declaration)");
    for (auto &[raw, loc] : exp_->pending)
      diags.Report(loc, err);
  }

private:
  std::shared_ptr<Expansions> exp_;
  bool print_;
  std::unique_ptr<MarkerRewriter> rewriter_;
};

class TypeIdAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci,
                                                 llvm::StringRef) override {
    auto exp = std::make_shared<Expansions>();
    ci.getPreprocessor().addPPCallbacks(std::make_unique<ExpansionRecorder>(exp));
    return std::make_unique<TypeIdConsumer>(exp, print_);
  }

  bool ParseArgs(const CompilerInstance &ci,
                 const std::vector<std::string> &args) override {
    for (const std::string &a : args) {
      if (a == "print") {
        print_ = true;
      } else {
        DiagnosticsEngine &d = ci.getDiagnostics();
        d.Report(d.getCustomDiagID(DiagnosticsEngine::Error,
                                   "cairn-type-id plugin: unknown argument '%0' "
                                   "(known: print)"))
            << a;
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

private:
  bool print_ = false;
};

// __attribute__((cairn_layout_id)) on cairn.h's cairn__layout_id: accepted
// and otherwise ignored; its only job is to be unknown without the plugin.
struct LayoutIdAttr : public ParsedAttrInfo {
  LayoutIdAttr() {
    static constexpr Spelling spellings[] = {{ParsedAttr::AS_GNU, "cairn_layout_id"}};
    Spellings = spellings;
  }
  AttrHandling handleDeclAttribute(Sema &, Decl *, const ParsedAttr &) const override {
    return AttributeApplied;
  }
};

} // namespace

static ParsedAttrInfoRegistry::Add<LayoutIdAttr>
    registerAttr("cairn_layout_id", "marks cairn.h's type-id placeholder type");
static FrontendPluginRegistry::Add<TypeIdAction>
    registerTypeId("cairn-type-id", "computes CAIRN_TYPE_ID(T) from T's layout");
