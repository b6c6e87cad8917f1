//===- PassCommon.cpp - proofs, filter and source sites both instrumenters use ---===//
#include "PassCommon.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"

namespace cairn {

bool shouldInstrument(const Function &F) {
  return !F.isDeclaration() && !F.getName().starts_with("cairn_") &&
         !F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation);
}

// ---- proofs: where can this pointer point? ---------------------------------

static bool isMallocLike(StringRef Name) {
  return Name == "malloc" || Name == "calloc" || Name == "realloc" ||
         Name == "strdup" || Name == "strndup" || Name == "aligned_alloc" ||
         Name == "memalign" || Name == "valloc" || Name == "reallocarray";
}

static Where classifyObject(const Value *Obj, unsigned Depth) {
  // Stack objects and globals are DRAM by construction: a pointer whose
  // underlying object is one of them cannot reach a pool (going out of an
  // object's bounds is undefined behaviour).
  if (isa<AllocaInst>(Obj) || isa<GlobalVariable>(Obj) ||
      isa<ConstantPointerNull>(Obj))
    return Where::Volatile;
  if (auto *CB = dyn_cast<CallBase>(Obj)) {
    if (Function *Callee = CB->getCalledFunction()) {
      StringRef N = Callee->getName();
      // persistent-heap mode: malloc memory is in a pool
      if (!ClPersistentHeap && isMallocLike(N))
        return Where::Volatile;
      if (N == "cairn_alloc" || N == "cairn_root")
        return Where::PM;
    }
    return Where::Unknown;
  }
  // A pointer loaded from PM points into the same pool (or is NULL): the
  // runtime refuses to store anything else there (pointer safety).
  if (auto *LI = dyn_cast<LoadInst>(Obj))
    if (Depth < 3 && LI->getType()->isPointerTy() &&
        classify(const_cast<Value *>(LI->getPointerOperand()), Depth + 1) == Where::PM)
      return Where::PM;
  return Where::Unknown;
}

Where classify(Value *Ptr, unsigned Depth) {
  if (Ptr->getType()->getPointerAddressSpace() == PMAddrSpace)
    return ClSkipCheckPM ? Where::PM : Where::Unknown;
  SmallVector<const Value *, 4> Objs;
  getUnderlyingObjects(Ptr, Objs, nullptr, 8);
  if (Objs.empty())
    return Where::Unknown;
  Where Result = classifyObject(Objs[0], Depth);
  for (const Value *O : drop_begin(Objs))
    if (classifyObject(O, Depth) != Result)
      return Where::Unknown;
  if (Result == Where::Volatile && !ClSkipVolatile)
    return Where::Unknown;
  if (Result == Where::PM && !ClSkipCheckPM)
    return Where::Unknown;
  return Result;
}

// ---- source sites ----------------------------------------------------------

SourceSite sourceSite(const Instruction *I) {
  SourceSite S;
  S.Func = I->getFunction()->getName().str();
  if (const DILocation *Loc = I->getDebugLoc().get()) {
    S.File = Loc->getFilename().str();
    S.Line = Loc->getLine();
    if (const DISubprogram *SP = Loc->getScope()->getSubprogram())
      if (!SP->getName().empty())
        S.Func = SP->getName().str();
  }
  return S;
}

Constant *StringConstants::get(StringRef S) {
  Constant *&C = Strings[S];
  if (!C) {
    Constant *Init = ConstantDataArray::getString(M.getContext(), S);
    auto *G = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage,
                                 Init, GlobalName);
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    G->setAlignment(Align(1));
    C = G;
  }
  return C;
}

} // namespace cairn
