//===- Pointers.cpp - transparent persistent pointers --------------------===//
//
// Loaded pointers translated back to addresses: the one-word cache kept in
// registers per function, the translation folded into addressing, loop
// chains kept plain, NULL tests threaded. The cache word's layout is read
// through CacheWord alone (also by Writes.cpp's inline conversion of stored
// pointers).
//===----------------------------------------------------------------------===//
#include "Instrumenter.h"
#include "cairn_cc_rt.h"

#define DEBUG_TYPE "cairn"

namespace cairn {

// ---- compiler/rt's cache word (compiler/rt/cairn_cc_rt.h) -------------------

LoadInst *CacheWord::load(IRBuilder<> &B, GlobalVariable *RaCache) {
  LoadInst *Word = B.CreateLoad(B.getInt64Ty(), RaCache, "cairn.racache");
  Word->setAtomic(AtomicOrdering::Monotonic);
  Word->setAlignment(Align(8));
  return Word;
}

Value *CacheWord::key(IRBuilder<> &B, Value *Word) {
  return B.CreateLShr(Word, CAIRN_CC_CACHE_KEY_SHIFT);
}

Value *CacheWord::slot(IRBuilder<> &B, Value *Word) {
  return B.CreateAnd(Word, CAIRN_CC_CACHE_SLOT_MASK);
}

Value *CacheWord::keyOfRelative(IRBuilder<> &B, Value *Rel) {
  return B.CreateLShr(Rel, CAIRN_ID_SHIFT);
}

Value *CacheWord::slotOfOffset(IRBuilder<> &B, Value *U, const Twine &Name) {
  return B.CreateLShr(U, CAIRN_SLOT_SHIFT, Name);
}

Value *CacheWord::relative(IRBuilder<> &B, Value *Key, Value *U) {
  Value *Off = B.CreateAnd(U, CAIRN_OFF_MASK);
  return B.CreateOr(B.CreateShl(Key, CAIRN_ID_SHIFT), Off);
}

Value *CacheWord::delta(IRBuilder<> &B, Value *Lo, Value *Word, Value *Key) {
  return B.CreateAdd(Lo, B.CreateShl(B.CreateSub(slot(B, Word), Key), CAIRN_SLOT_SHIFT));
}

// Only used as `p == NULL` / `p != NULL`? Then the relative form answers
// the same as the address and needs no conversion.
static bool onlyComparedWithNull(Instruction *I) {
  for (User *U : I->users()) {
    auto *Cmp = dyn_cast<ICmpInst>(U);
    if (!Cmp || !Cmp->isEquality())
      return false;
    Value *Other = Cmp->getOperand(0) == I ? Cmp->getOperand(1)
                                           : Cmp->getOperand(0);
    if (!isa<ConstantPointerNull>(Other))
      return false;
  }
  return !I->use_empty();
}

// The function's copy of compiler/rt's translation cache. Loaded at entry,
// after every call that is not cairn's own (a call may close or reopen a
// pool, which empties the global cache) and after a miss (which refills
// it); a stale copy is never wrong while its pool is open, since a cache
// entry pairs a pool id with that pool's slot, and it is at worst a miss.
void FunctionInstrumenter::refreshLocalCache(IRBuilder<> &B) {
  LoadInst *Cache = CacheWord::load(B, RaCache);
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *Key = CacheWord::key(B, Cache);
  Value *D = CacheWord::delta(B, Lo, Cache, Key);
  B.CreateStore(Key, LocalKey);
  B.CreateStore(D, LocalD);
}

void FunctionInstrumenter::setUpLocalCache() {
  LocalKey = LocalD = nullptr;
  if (!ClLocalRaCache || !ClInlineRa2Va || F.hasOptNone())
    return;
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> AB(&Entry, Entry.getFirstInsertionPt());
  ++NumLocalCache;
  LocalKey = AB.CreateAlloca(Int64Ty, nullptr, "cairn.key");
  LocalD = AB.CreateAlloca(Int64Ty, nullptr, "cairn.d");
  refreshLocalCache(AB);
  SmallVector<Instruction *, 16> After;
  afterCallsThatMayChangeRuntime(After, /*CountKept=*/true);
  for (Instruction *At : After) {
    IRBuilder<> B(At);
    refreshLocalCache(B);
  }
}

// Where to re-read what a function keeps of the runtime's state: right
// after each call after which it may have changed (a pool opened, closed or
// reopened), past the call's trace record (--trace), which stays next to
// it. Those are the calls that may run other code, i.e. not cairn's own
// entry points, not intrinsics, and (cairn-readonly-calls-keep-cache) not a
// callee that writes no memory: opening or closing a pool writes the
// runtime's tables; memcmp/bcmp/strlen are such calls until code generation
// expands them, often inside lookup loops. Nor (cairn-known-callees) one
// that writes only its arguments' memory or is this file's function whose
// calls are all such.
void FunctionInstrumenter::afterCallsThatMayChangeRuntime(SmallVectorImpl<Instruction *> &After,
                                                       bool CountKept) {
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I)) {
      if (isa<IntrinsicInst>(CB) || CB->isInlineAsm())
        continue;
      if (Function *Callee = CB->getCalledFunction()) {
        StringRef N = Callee->getName();
        if (N.starts_with("cairn__") || N.starts_with("cairn_cc__"))
          continue;
      }
      if (ClReadonlyCallsKeepCache && CB->onlyReadsMemory()) {
        if (CountKept)
          ++NumCacheKeptOverCall;
        continue;
      }
      if (!CB->onlyReadsMemory() && cairnFreeByKnownCallee(*CB))
        continue;                  // cannot open or close a pool
      if (isa<InvokeInst>(CB) || CB->isTerminator())
        continue;                  // C has no invokes; be safe anyway
      Instruction *At = CB->getNextNode();
      while (auto *C = dyn_cast<CallInst>(At))
        if (C->getCalledFunction() &&
            C->getCalledFunction()->getName() == "cairn__trace_store")
          At = At->getNextNode();
        else
          break;
      After.push_back(At);
    }
}

CallInst *FunctionInstrumenter::callRa2VaMiss(IRBuilder<> &B, Value *Rel) {
  CallInst *C = B.CreateCall(Ra2VaMiss, {Rel});
  if (MissPreservesRegs) {
    C->setCallingConv(CallingConv::PreserveMost);
    ++NumMissPreserve;
  }
  return C;
}

Value *FunctionInstrumenter::emitRa2Va(Instruction *Before, Value *Rel) {
  IRBuilder<> B(Before);
  count(B, RelativeLoads);
  if (!ClInlineRa2Va)
    return B.CreateCall(Ra2VaSlow, {Rel});
  ++NumRa2VaInline;
  if (LocalKey) {
    // the function's register copy: shr, cmp, add on a hit
    Value *RelKey = CacheWord::keyOfRelative(B, Rel);
    Value *Hit = B.CreateICmpEQ(B.CreateLoad(Int64Ty, LocalKey), RelKey);
    Instruction *HitT, *MissT;
    SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
    IRBuilder<> HB(HitT);
    Value *Fast = HB.CreateIntToPtr(HB.CreateAdd(Rel, HB.CreateLoad(Int64Ty, LocalD)), PtrTy);
    IRBuilder<> MB(MissT);
    Value *Slow = callRa2VaMiss(MB, Rel);
    refreshLocalCache(MB);                   // the miss refilled the global cache
    IRBuilder<> JB(Before);
    PHINode *Phi = JB.CreatePHI(PtrTy, 2);
    Phi->addIncoming(Fast, HitT->getParent());
    Phi->addIncoming(Slow, MissT->getParent());
    return Phi;
  }
  LoadInst *Cache = CacheWord::load(B, RaCache);
  Value *Key = CacheWord::key(B, Cache);
  Value *Hit = B.CreateICmpEQ(Key, CacheWord::keyOfRelative(B, Rel));
  Instruction *HitT, *MissT;
  SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
  IRBuilder<> HB(HitT);
  // va = lo + (slot << CAIRN_SLOT_SHIFT) + (rel & CAIRN_OFF_MASK) = rel + D
  // (mod 2^64): D does not depend on rel, so a pointer chase pays one add
  // per hop for the translation.
  Value *Lo = HB.CreateLoad(Int64Ty, RegionLo);
  Value *D = CacheWord::delta(HB, Lo, Cache, Key);
  Value *Fast = HB.CreateIntToPtr(HB.CreateAdd(Rel, D), PtrTy);
  IRBuilder<> MB(MissT);
  Value *Slow = callRa2VaMiss(MB, Rel);
  IRBuilder<> JB(Before);
  PHINode *Phi = JB.CreatePHI(PtrTy, 2);
  Phi->addIncoming(Fast, HitT->getParent());
  Phi->addIncoming(Slow, MissT->getParent());
  return Phi;
}

// The same translation as emitRa2Va, as the offset d with va = rel + d (mod
// 2^64): D on a hit, whatever the runtime returned minus rel on a miss.
Value *FunctionInstrumenter::emitRa2VaDelta(Instruction *Before, Value *Rel) {
  IRBuilder<> B(Before);
  count(B, RelativeLoads);
  auto SlowDelta = [&](IRBuilder<> &MB, Value *Slow) {
    return MB.CreateSub(MB.CreatePtrToInt(Slow, Int64Ty), Rel);
  };
  if (!ClInlineRa2Va)
    return SlowDelta(B, B.CreateCall(Ra2VaSlow, {Rel}));
  ++NumRa2VaInline;
  Value *Key, *D;
  if (LocalKey) {
    Key = B.CreateLoad(Int64Ty, LocalKey);
    D = nullptr;
  } else {
    LoadInst *Cache = CacheWord::load(B, RaCache);
    Key = CacheWord::key(B, Cache);
    Value *Lo = B.CreateLoad(Int64Ty, RegionLo);
    D = CacheWord::delta(B, Lo, Cache, Key);
  }
  Value *Hit = B.CreateICmpEQ(Key, CacheWord::keyOfRelative(B, Rel));
  Instruction *HitT, *MissT;
  SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
  IRBuilder<> HB(HitT);
  Value *Fast = D ? D : HB.CreateLoad(Int64Ty, LocalD);
  IRBuilder<> MB(MissT);
  Value *SlowD = SlowDelta(MB, callRa2VaMiss(MB, Rel));
  if (LocalKey)
    refreshLocalCache(MB);                   // the miss refilled the global cache
  IRBuilder<> JB(Before);
  PHINode *Phi = JB.CreatePHI(Int64Ty, 2, "cairn.d");
  Phi->addIncoming(Fast, HitT->getParent());
  Phi->addIncoming(SlowD, MissT->getParent());
  return Phi;
}

// `va == NULL` tests the base instead: va is NULL exactly when the loaded
// value is (a relative value is never 0, nor is what it translates to), and
// the base is ready before the add.
void FunctionInstrumenter::keepNullTestsOnBase(Value *VA, Value *Base) {
  SmallVector<ICmpInst *, 4> Tests;
  for (User *U : VA->users())
    if (auto *C = dyn_cast<ICmpInst>(U))
      if (C->isEquality() && (isa<ConstantPointerNull>(C->getOperand(0)) ||
                              isa<ConstantPointerNull>(C->getOperand(1))))
        Tests.push_back(C);
  for (ICmpInst *C : Tests)
    C->replaceUsesOfWith(VA, Base);
}

// A pointer read whose value reaches, through phis, selects and address
// arithmetic, a phi in a block that dominates the read is carried around a
// loop: `p = p->next`, `n = c < 0 ? n->left : n->right`, `pp = &(*pp)->next`.
// Folded, every hop would load through [v + d + off] with d = 0 in DRAM
// (indexed addressing: a cycle per hop on AMD Zen 3, where the DRAM list walk
// measured 1.22x clang folded, 0.98x plain); left plain, the virtual path loads
// through the value as loaded and only the relative path pays its add. The
// carrying phis are not split (splitTranslatedPhis) for the same reason.
void FunctionInstrumenter::findLoopCarriedReads(ArrayRef<Instruction *> Reads) {
  DominatorTree DT(F);
  for (Instruction *I : Reads) {
    if (!isa<LoadInst>(I))
      continue;
    SmallVector<Instruction *, 16> Work{I};
    SmallPtrSet<Instruction *, 16> Seen{I};
    SmallVector<PHINode *, 4> Carriers;
    while (!Work.empty() && Seen.size() < 64) {
      Instruction *V = Work.pop_back_val();
      for (User *U : V->users()) {
        auto *UI = dyn_cast<Instruction>(U);
        if (!UI || !(isa<PHINode>(UI) || isa<SelectInst>(UI) ||
                     isa<GetElementPtrInst>(UI)) ||
            !UI->getType()->isPointerTy() || !Seen.insert(UI).second)
          continue;
        if (auto *P = dyn_cast<PHINode>(UI);
            P && DT.dominates(P->getParent(), I->getParent()))
          Carriers.push_back(P);
        Work.push_back(UI);
      }
    }
    if (Carriers.empty())
      continue;
    LoopCarried.insert(I);
    CarrierPhis.insert(Carriers.begin(), Carriers.end());
  }
}

// A pointer carried around a loop (`p = p->next`) is a phi of translated
// values; left alone, each hop materializes base + d for the phi. Split such
// a phi into a phi of bases and a phi of offsets (0 for a value that was not
// translated) and re-add them after it, so the loads at the top of the loop
// take [base + d + off] again. Repeated to a fixed point (phis of phis).
void FunctionInstrumenter::splitTranslatedPhis() {
  // the phis to split: those with a translated value or a phi to split
  // among their incoming values (found first, then split all at once, so
  // that cycles of phis become cycles of base and offset phis)
  SetVector<PHINode *> S;
  for (bool Grew = true; Grew;) {
    Grew = false;
    for (BasicBlock &BB : F)
      for (PHINode &P : BB.phis())
        if (P.getType()->isPointerTy() && !S.count(&P) && !CarrierPhis.count(&P))
          for (Value *V : P.incoming_values()) {
            auto *VP = dyn_cast<PHINode>(V);
            auto It = FoldedVA.find(V);
            if ((It != FoldedVA.end() && It->second.first->getType() == P.getType()) ||
                (VP && S.count(VP))) {
              S.insert(&P);
              Grew = true;
              break;
            }
          }
  }
  DenseMap<PHINode *, std::pair<PHINode *, PHINode *>> Split;
  for (PHINode *P : S) {
    IRBuilder<> B(P);
    unsigned N = P->getNumIncomingValues();
    Split[P] = {B.CreatePHI(P->getType(), N, P->getName() + ".base"),
                B.CreatePHI(Int64Ty, N, P->getName() + ".d")};
  }
  for (PHINode *P : S) {
    auto [PB, PD] = Split[P];
    for (unsigned K = 0; K < P->getNumIncomingValues(); ++K) {
      Value *V = P->getIncomingValue(K), *Base = V, *D = ConstantInt::get(Int64Ty, 0);
      if (auto *VP = dyn_cast<PHINode>(V); VP && S.count(VP)) {
        Base = Split[VP].first;
        D = Split[VP].second;
      } else if (auto It = FoldedVA.find(V);
                 It != FoldedVA.end() && It->second.first->getType() == P->getType()) {
        Base = It->second.first;
        D = It->second.second;
      }
      PB->addIncoming(Base, P->getIncomingBlock(K));
      PD->addIncoming(D, P->getIncomingBlock(K));
    }
  }
  for (PHINode *P : S) {
    auto [PB, PD] = Split[P];
    IRBuilder<> GB(P->getParent(), P->getParent()->getFirstInsertionPt());
    Value *G = GB.CreateGEP(GB.getInt8Ty(), PB, PD, P->getName() + ".va");
    P->replaceAllUsesWith(G);
    keepNullTestsOnBase(G, PB);
    FoldedVA[G] = {PB, PD};
    ++NumPhisSplit;
  }
  for (PHINode *P : S)
    P->eraseFromParent();
  // `va + x` with x a variable byte offset (a field chosen by a select:
  // left or right child) becomes `base + (d + x)`: d + x is ready before
  // the base is loaded, so the add leaves the chain (x86 has one index)
  for (auto &[VA, BD] : FoldedVA) {
    SmallVector<GetElementPtrInst *, 4> Geps;
    for (User *U : VA->users())
      if (auto *GEP = dyn_cast<GetElementPtrInst>(U))
        if (GEP->getPointerOperand() == VA && GEP->getNumIndices() == 1 &&
            GEP->getSourceElementType()->isIntegerTy(8) &&
            !isa<Constant>(GEP->getOperand(1)) &&
            GEP->getOperand(1)->getType() == Int64Ty)
          Geps.push_back(GEP);
    for (GetElementPtrInst *GEP : Geps) {
      IRBuilder<> B(GEP);
      Value *Off = B.CreateAdd(BD.second, GEP->getOperand(1));
      GEP->replaceAllUsesWith(B.CreateGEP(B.getInt8Ty(), BD.first, Off));
      GEP->eraseFromParent();
      ++NumIndexReassociated;
    }
  }
}

// load <N x ptr>: the vectorizers load a pointer array this way (a loop
// comparing, subtracting or following a PM array's pointers). One vector
// test of the sign bits; only when a lane is relative, the vector goes
// through memory to compiler/rt, which translates its relative words.
void FunctionInstrumenter::instrumentVectorPointerRead(Instruction *LI) {
  auto *VT = cast<FixedVectorType>(LI->getType());
  unsigned N = VT->getNumElements();
  ++NumVecPtrLoads;
  IRBuilder<> B(LI->getNextNode());
  auto *IVT = FixedVectorType::get(Int64Ty, N);
  Value *Bits = B.CreatePtrToInt(LI, IVT);
  // a masked load, gather or expand-load reads only the lanes of its mask;
  // the others are its pass-through values (registers: never relative)
  Value *Mask = nullptr;
  if (auto *II = dyn_cast<IntrinsicInst>(LI))
    Mask = II->getArgOperand(II->getIntrinsicID() == Intrinsic::masked_expandload ? 1 : 2);
  Value *Lanes = Mask ? B.CreateSelect(Mask, Bits, Constant::getNullValue(IVT)) : Bits;
  Value *Neg = B.CreateICmpSLT(Lanes, Constant::getNullValue(IVT));
  Value *Any = B.CreateOrReduce(Neg);
  BasicBlock *Head = LI->getParent();
  Instruction *T = SplitBlockAndInsertIfThen(Any, cast<Instruction>(Any)->getNextNode(), false,
                                             Unlikely);
  AllocaInst *Tmp;
  {
    IRBuilder<> AB(&*F.getEntryBlock().getFirstInsertionPt());
    Tmp = AB.CreateAlloca(IVT, nullptr, "cairn.vecptrs");
  }
  IRBuilder<> TB(T);
  TB.CreateStore(Lanes, Tmp);
  TB.CreateCall(Ra2VaWords, {Tmp, ConstantInt::get(Int64Ty, N)});
  Value *Fixed = TB.CreateIntToPtr(TB.CreateLoad(IVT, Tmp), VT);
  if (Mask)
    Fixed = TB.CreateSelect(Mask, Fixed, LI);
  BasicBlock *Tail = T->getSuccessor(0);
  IRBuilder<> PB(&Tail->front());
  PHINode *Phi = PB.CreatePHI(VT, 2, "cairn.vecva");
  Phi->addIncoming(LI, Head);
  Phi->addIncoming(Fixed, T->getParent());
  LI->replaceUsesWithIf(Phi, [&](Use &U) {
    return U.getUser() != Phi && U.getUser() != Bits && U.getUser() != Fixed;
  });
}

// load ptr / inttoptr: a value with bit 63 set is relative; turn it back.
void FunctionInstrumenter::instrumentPointerRead(Instruction *I) {
  if (ClSkipNullCompareLoads && onlyComparedWithNull(I)) {
    ++NumPtrLoadsNullOnly;
    return;
  }
  if (isa<LoadInst>(I))
    ++NumPtrLoads;
  else
    ++NumIntToPtr;
  IRBuilder<> B(I->getNextNode());
  Value *Bits = isa<IntToPtrInst>(I) ? I->getOperand(0)
                                     : B.CreatePtrToInt(I, Int64Ty);
  if (Bits->getType() != Int64Ty)
    Bits = B.CreateSExtOrTrunc(Bits, Int64Ty);
  count(B, PointerLoadChecks);
  Value *IsRel = B.CreateICmpSLT(Bits, ConstantInt::get(Int64Ty, 0), "cairn.rel");
  BasicBlock *Head = I->getParent();
  Instruction *T = SplitBlockAndInsertIfThen(
      IsRel, cast<Instruction>(IsRel)->getNextNode(), false, Unlikely);
  if (ClMergeSignNullTests && isa<LoadInst>(I) && !I->getFunction()->hasOptNone())
    SignTests.push_back({I, cast<ICmpInst>(IsRel), T->getSuccessor(0), Bits});
  if (ClFoldTranslation && !I->getFunction()->hasOptNone() &&
      LoopCarried.count(I))
    ++NumLoopChainsPlain;
  else if (ClFoldTranslation && !I->getFunction()->hasOptNone()) {
    // va = v + d, d = 0 for a virtual address: no phi of two pointers
    // between the load and its uses, so `load [v + d + off]` folds the add
    // (free on this machine's address generation; an add on the chain
    // costs a cycle per hop), and `va == NULL` is `v == NULL` (a relative
    // value is never 0, nor what it translates to)
    Value *Dl = emitRa2VaDelta(T, Bits);
    BasicBlock *Tail = T->getSuccessor(0);
    IRBuilder<> PB(&Tail->front());
    PHINode *DP = PB.CreatePHI(Int64Ty, 2, "cairn.d");
    DP->addIncoming(ConstantInt::get(Int64Ty, 0), Head);
    DP->addIncoming(Dl, T->getParent());
    Value *VA = PB.CreateGEP(PB.getInt8Ty(), I, DP, "cairn.va");
    ++NumTranslationsFolded;
    I->replaceUsesWithIf(VA, [&](Use &U) {
      return U.getUser() != VA && U.getUser() != Bits;
    });
    keepNullTestsOnBase(VA, I);
    FoldedVA[VA] = {I, DP};
    return;
  }
  Value *VA = emitRa2Va(T, Bits);
  if (VA->getType() != I->getType())
    VA = IRBuilder<>(T).CreateAddrSpaceCast(VA, I->getType());
  BasicBlock *Tail = T->getSuccessor(0);
  IRBuilder<> PB(&Tail->front());
  PHINode *Phi = PB.CreatePHI(I->getType(), 2, "cairn.va");
  Phi->addIncoming(I, Head);
  Phi->addIncoming(VA, T->getParent());
  I->replaceUsesWithIf(Phi, [&](Use &U) {
    return U.getUser() != Phi && U.getUser() != Bits;
  });
  if (ClThreadNullTests && !I->getFunction()->hasOptNone())
    ConvertedPhis.push_back({Phi, VA});
}

// cairn-merge-sign-null-tests. A load followed by its NULL test needs two
// tests on the common path: the sign test of the translation (is it
// relative?) and the program's `p == NULL`. Both are answered by one signed
// test, `v <= 0`: false means a virtual address that is not NULL, so that
// path goes straight to the non-NULL side; true goes to a block that tells
// NULL (to the NULL side) from relative (to the translation, whose result is
// never NULL). On DRAM data each such load costs what it costs in a clang
// build (one test and branch); on PM data and for NULL the second branch is
// the program's own NULL test. Applies when the block after
// the translation holds only the merge (phis and the folded address) and
// the NULL test with its branch; run after every other step (a later load
// may split blocks, phis may be split).
bool FunctionInstrumenter::mergeSignNullTest(const SignTest &T) {
  BasicBlock *Head = T.IsRel->getParent(), *Tail = T.Tail;
  auto *HBr = dyn_cast<BranchInst>(Head->getTerminator());
  if (!HBr || !HBr->isConditional() || HBr->getCondition() != T.IsRel ||
      HBr->getSuccessor(1) != Tail || !T.IsRel->hasOneUse() ||
      T.IsRel->getPredicate() != ICmpInst::ICMP_SLT)
    return false;
  BasicBlock *Then = HBr->getSuccessor(0);
  // Tail: phis, geps of the loaded value, then `icmp eq|ne X, null` and br
  ICmpInst *Cmp = nullptr;
  SmallVector<Instruction *, 4> Defs;
  for (Instruction &I : *Tail) {
    if (isa<DbgInfoIntrinsic>(I))
      continue;
    if (isa<PHINode>(I)) {
      Defs.push_back(&I);
      continue;
    }
    if (auto *G = dyn_cast<GetElementPtrInst>(&I); G && !Cmp && G->getPointerOperand() == T.V) {
      Defs.push_back(&I);
      continue;
    }
    if (auto *C = dyn_cast<ICmpInst>(&I); C && !Cmp) {
      Cmp = C;
      continue;
    }
    if (auto *Br = dyn_cast<BranchInst>(&I); Br && Cmp && Br->isConditional() &&
                                             Br->getCondition() == Cmp)
      break;
    return false;
  }
  if (!Cmp || !Cmp->isEquality() || !isa<ConstantPointerNull>(Cmp->getOperand(1)))
    return false;
  Value *X = Cmp->getOperand(0);
  auto *XP = dyn_cast<PHINode>(X);
  if (X != T.V && !(XP && XP->getParent() == Tail &&
                    XP->getBasicBlockIndex(Head) >= 0 &&
                    XP->getIncomingValueForBlock(Head) == T.V))
    return false;
  auto *Br = cast<BranchInst>(Tail->getTerminator());
  bool IsEq = Cmp->getPredicate() == ICmpInst::ICMP_EQ;
  BasicBlock *NullS = Br->getSuccessor(IsEq ? 0 : 1), *S = Br->getSuccessor(IsEq ? 1 : 0);
  if (NullS == S || NullS == Tail || S == Tail || NullS == Then)
    return false;
  // what each of Tail's values is on the NULL path (v == 0 there, d == 0)
  Constant *CmpOnNull = ConstantInt::getBool(Ctx, IsEq);
  auto OnNull = [&](Value *W) -> Value * {
    if (W == Cmp)
      return CmpOnNull;
    if (auto *P = dyn_cast<PHINode>(W); P && P->getParent() == Tail)
      return P->getBasicBlockIndex(Head) >= 0 ? P->getIncomingValueForBlock(Head) : nullptr;
    if (auto *G = dyn_cast<GetElementPtrInst>(W); G && G->getParent() == Tail)
      return T.V;   // v + d with d = 0 on the path from Head
    return W;
  };
  for (Instruction *D : Defs)
    if (!OnNull(D))
      return false;
  for (PHINode &P : NullS->phis())
    if (!OnNull(P.getIncomingValueForBlock(Tail)))
      return false;

  BasicBlock *Cold = BasicBlock::Create(Ctx, "cairn.null_or_rel", Head->getParent(), Then);
  T.IsRel->setPredicate(ICmpInst::ICMP_SLE);   // NULL or relative
  HBr->setSuccessor(0, Cold);
  IRBuilder<> CB(Cold);
  Value *IsNull = CB.CreateICmpEQ(T.Bits, ConstantInt::get(Int64Ty, 0), "cairn.null");
  CB.CreateCondBr(IsNull, NullS, Then);
  for (PHINode &P : Then->phis())
    P.replaceIncomingBlockWith(Head, Cold);
  for (PHINode &P : NullS->phis()) {
    Value *W = P.getIncomingValueForBlock(Tail);
    P.removeIncomingValue(Tail, /*DeletePHIIfEmpty=*/false);
    P.addIncoming(OnNull(W), Cold);
  }
  // every path into Tail now carries a non-NULL pointer
  BranchInst::Create(S, Br);
  Br->eraseFromParent();
  // Tail no longer dominates the NULL side: merge its values with Cold's
  Defs.push_back(Cmp);
  for (Instruction *D : Defs) {
    SmallVector<Use *, 8> Uses;
    for (Use &U : D->uses())
      if (cast<Instruction>(U.getUser())->getParent() != Tail ||
          isa<PHINode>(U.getUser()))
        Uses.push_back(&U);
    if (Uses.empty())
      continue;
    SSAUpdater SSA;
    SSA.Initialize(D->getType(), D->getName());
    SSA.AddAvailableValue(Tail, D);
    SSA.AddAvailableValue(Cold, OnNull(D));
    for (Use *U : Uses)
      SSA.RewriteUse(*U);
  }
  if (Cmp->use_empty())
    Cmp->eraseFromParent();
  return true;
}

// The block after a converted load often holds only the merge phi and a NULL
// test (`for (; p; p = p->next)`, `if (head)`). A converted relative value is
// never NULL (an address inside a pool, or a small negative sentinel), so its
// path branches straight to the non-NULL successor: in PM one test fewer per
// hop, after the load that waits for memory. Done once all loads of the
// function are instrumented (a later load may split the block).
void FunctionInstrumenter::threadNullTest(PHINode *Phi, Value *VA) {
  BasicBlock *Tail = Phi->getParent();
  if (Phi->getNumIncomingValues() != 2 || &Tail->front() != Phi)
    return;
  BasicBlock *J = nullptr;
  for (unsigned K = 0; K < 2; ++K)
    if (Phi->getIncomingValue(K) == VA)
      J = Phi->getIncomingBlock(K);
  auto *JBr = J ? dyn_cast<BranchInst>(J->getTerminator()) : nullptr;
  if (!JBr || JBr->isConditional())
    return;
  Instruction *Next = Phi->getNextNonDebugInstruction();
  auto *Cmp = dyn_cast_or_null<ICmpInst>(Next);
  if (!Cmp || !Cmp->isEquality() || Cmp->getOperand(0) != Phi ||
      !isa<ConstantPointerNull>(Cmp->getOperand(1)))
    return;
  auto *Br = dyn_cast_or_null<BranchInst>(Cmp->getNextNonDebugInstruction());
  if (!Br || !Br->isConditional() || Br->getCondition() != Cmp)
    return;
  bool IsEq = Cmp->getPredicate() == ICmpInst::ICMP_EQ;
  BasicBlock *S = Br->getSuccessor(IsEq ? 1 : 0);
  if (S == Tail || Br->getSuccessor(0) == Br->getSuccessor(1))
    return;
  Constant *CmpOnJ = ConstantInt::getBool(Cmp->getContext(), !IsEq);
  JBr->setSuccessor(0, S);
  Phi->removeIncomingValue(J, /*DeletePHIIfEmpty=*/false);
  for (PHINode &P : S->phis()) {
    Value *V = P.getIncomingValueForBlock(Tail);
    P.addIncoming(V == Phi ? VA : V == Cmp ? CmpOnJ : V, J);
  }
  // Phi and Cmp no longer dominate what S reaches: merge them with J's values
  for (auto [Old, OnJ] : {std::pair<Instruction *, Value *>{Phi, VA}, {Cmp, CmpOnJ}}) {
    SmallVector<Use *, 8> Uses;
    for (Use &U : Old->uses()) {
      auto *UI = cast<Instruction>(U.getUser());
      if (UI->getParent() == Tail && !isa<PHINode>(UI))
        continue;
      if (auto *PU = dyn_cast<PHINode>(UI); PU && PU->getIncomingBlock(U) == J)
        continue;                            // the edge added above
      Uses.push_back(&U);
    }
    if (Uses.empty())
      continue;
    SSAUpdater SSA;
    SSA.Initialize(Old->getType(), Old->getName());
    SSA.AddAvailableValue(Tail, Old);
    SSA.AddAvailableValue(J, OnJ);
    for (Use *U : Uses)
      SSA.RewriteUse(*U);
  }
  ++NumNullTestsThreaded;
}

} // namespace cairn
