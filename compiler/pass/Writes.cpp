//===- Writes.cpp - instrumenting writes that may reach PM ---------------===//
//
// Everything a write that may reach PM gets, in one file: the region test
// (inline, or on the function's register copy of the region's bounds) and
// the call to cairn__log_store; for a store (instrumentStore reads top to
// bottom), the conversion of a stored pointer to relative form (inline on
// compiler/rt's cache word, or hoisted before its loop: NVL-C's pointer
// hoisting) and the scan of wide stores for hidden addresses; then
// memset/memcpy/memmove, cmpxchg and atomicrmw, masked stores, calls
// described by write-set files and the libc calls sent to compiler/rt.
//===----------------------------------------------------------------------===//
#include "Instrumenter.h"
#include "cairn_cc_rt.h"

#define DEBUG_TYPE "cairn"

namespace cairn {

// ---- the region test and the log ---------------------------------------------

void FunctionInstrumenter::count(IRBuilder<> &B, Counter C) {
  if (!Counts)
    return;
  Value *Slot = B.CreateConstInBoundsGEP2_64(Counts->getValueType(), Counts, 0, C);
  auto *Old = B.CreateLoad(Int64Ty, Slot);
  auto *St = B.CreateStore(B.CreateAdd(Old, B.getInt64(1)), Slot);
  Old->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  St->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
}

// The same test as cairn.h's cairn__in_region: (p - lo) < (hi - lo). With
// cairn-local-region, lo and the size come from the function's copy.
Value *FunctionInstrumenter::emitInRegion(IRBuilder<> &B, Value *P) {
  count(B, RegionTests);
  Value *PI = P->getType()->isPointerTy() ? B.CreatePtrToInt(P, Int64Ty) : P;
  if (KeepsLocalRegion && !LocalLo)
    setUpLocalRegion();
  if (LocalLo) {
    Value *Size = B.CreateLoad(Int64Ty, LocalSize);
    return B.CreateICmpULT(B.CreateSub(PI, B.CreateLoad(Int64Ty, LocalLo)), Size, "cairn.inpm");
  }
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo, "cairn.lo");
  auto *Hi = B.CreateLoad(Int64Ty, RegionHi, "cairn.hi");
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *Size = B.CreateSub(Hi, Lo);
  return B.CreateICmpULT(B.CreateSub(PI, Lo), Size, "cairn.inpm");
}

// The region's low bound: the function's copy, or a load of the global.
Value *FunctionInstrumenter::regionLo(IRBuilder<> &B) {
  if (KeepsLocalRegion && !LocalLo)
    setUpLocalRegion();
  if (LocalLo)
    return B.CreateLoad(Int64Ty, LocalLo);
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  return Lo;
}

// cairn-local-region. The region's bounds are set once, when the runtime
// starts (its constructor, or the first pool open or create of a program
// whose constructors ran first), so each function may keep a copy: read at
// entry and again after every call that may run other code (which may be
// that first open). Region tests then cost a subtract, a compare and a
// branch, with no loads (a global's bounds would be reloaded at each test,
// since a store between two tests may alias them as far as code
// generation knows).
void FunctionInstrumenter::refreshLocalRegion(IRBuilder<> &B) {
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo, "cairn.lo");
  auto *Hi = B.CreateLoad(Int64Ty, RegionHi, "cairn.hi");
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  B.CreateStore(Lo, LocalLo);
  B.CreateStore(B.CreateSub(Hi, Lo), LocalSize);
}

void FunctionInstrumenter::setUpLocalRegion() {
  SmallVector<Instruction *, 16> After;
  afterCallsThatMayChangeRuntime(After, /*CountKept=*/false);
  ++NumLocalRegion;
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> AB(&Entry, Entry.getFirstInsertionPt());
  LocalLo = AB.CreateAlloca(Int64Ty, nullptr, "cairn.region.lo");
  LocalSize = AB.CreateAlloca(Int64Ty, nullptr, "cairn.region.size");
  refreshLocalRegion(AB);
  for (Instruction *At : After) {
    IRBuilder<> B(At);
    refreshLocalRegion(B);
  }
}

Value *FunctionInstrumenter::regionCondition(Instruction *Before, Value *Addr,
                                          Where W) {
  if (W == Where::PM) {
    ++NumChecksSkippedPM;
    return ConstantInt::getTrue(Ctx);
  }
  IRBuilder<> B(Before);
  return emitInRegion(B, Addr);
}

// A block run only when Cond holds, placed before `Before`; returns its
// terminator (insert before it). A constant-true Cond needs no block.
Instruction *FunctionInstrumenter::thenBlockFor(Value *Cond, Instruction *Before) {
  if (auto *CI = dyn_cast<ConstantInt>(Cond); CI && CI->isOne())
    return Before;
  return SplitBlockAndInsertIfThen(Cond, Before, false, Unlikely);
}

// The call to cairn__log_store; with cairn-inline-log-gate, only when the
// thread's cairn__log_skip is 0 (it is 1 outside any transaction with
// reports off: persistent-heap mode's stores into the heap). B goes on
// after the gate.
void FunctionInstrumenter::emitLog(IRBuilder<> &B, Value *Addr, Value *Len,
                                Instruction *LocI) {
  auto [File, Line] = sourceLocation(LocI);
  Value *A = flat(B, Addr);
  Value *L = B.CreateZExtOrTrunc(Len, Int64Ty);
  if (!ClInlineLogGate) {
    count(B, LogCalls);
    B.CreateCall(LogStore, {A, L, File, Line});
    return;
  }
  ++NumLogGates;
  auto *Skip = B.CreateLoad(Type::getInt8Ty(Ctx), LogSkip, "cairn.logskip");
  Skip->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *Log = B.CreateICmpEQ(Skip, B.getInt8(0));
  Instruction *At = &*B.GetInsertPoint();
  IRBuilder<> CB(SplitBlockAndInsertIfThen(Log, At, false));
  count(CB, LogCalls);
  CB.CreateCall(LogStore, {A, L, File, Line});
  B.SetInsertPoint(At);
}

// After `After`, if Cond: rewrite PM-region addresses in [Addr, Addr+Len).
void FunctionInstrumenter::emitGuardedScan(Instruction *After, Value *Addr,
                                        Value *Len, Value *Cond,
                                        Instruction *LocI) {
  if (!ClScanWideStores)
    return;
  ++NumWideScans;
  IRBuilder<> B(thenBlockFor(Cond, After->getNextNode()));
  auto [File, Line] = sourceLocation(LocI);
  B.CreateCall(FixWords,
               {flat(B, Addr), B.CreateZExtOrTrunc(Len, Int64Ty), File, Line});
}


// ---- stores ------------------------------------------------------------------

// Can this 8-byte integer be a (copied or cast) address? Constants and the
// results of arithmetic no pointer survives are not.
static bool mayHoldAddress(Value *V) {
  if (isa<ConstantInt>(V))
    return false;
  if (auto *BO = dyn_cast<BinaryOperator>(V)) {
    switch (BO->getOpcode()) {
    case Instruction::Mul:
    case Instruction::UDiv:
    case Instruction::SDiv:
    case Instruction::URem:
    case Instruction::SRem:
    case Instruction::Shl:
    case Instruction::LShr:
    case Instruction::AShr:
    case Instruction::Xor:
      return false;
    default:
      return true;
    }
  }
  if (auto *Cast = dyn_cast<CastInst>(V))
    if (isa<ZExtInst>(Cast) || isa<SExtInst>(Cast))
      return Cast->getSrcTy()->getScalarSizeInBits() > 32;
  if (isa<FPToUIInst>(V) || isa<FPToSIInst>(V))
    return false;
  return true;
}

// What the C front end said an access is, from its TBAA tag: true for a
// pointer type, false for another scalar type, nullopt when there is no
// tag or it says char (anything may be copied as char).
static std::optional<bool> tbaaSaysPointer(const MDNode *Tag) {
  if (!Tag || Tag->getNumOperands() < 2)
    return std::nullopt;
  auto *Access = dyn_cast<MDNode>(Tag->getOperand(1));
  if (!Access || Access->getNumOperands() < 1)
    return std::nullopt;
  auto *Name = dyn_cast<MDString>(Access->getOperand(0));
  if (!Name)
    return std::nullopt;
  StringRef N = Name->getString();
  if (N == "omnipotent char")
    return std::nullopt;
  if (N == "any pointer")
    return true;
  if (N.size() > 2 && N[0] == 'p' && isdigit((unsigned char)N[1]))
    return true; // -fpointer-tbaa names: "p1 int", "p2 omnipotent char", ...
  return false;
}

// Is this integer a pointer's bits, maybe with tag bits or an offset
// ((uintptr_t)p, (uintptr_t)p | 1, (uintptr_t)p + k)? Then it is one
// whatever its C type: a uintptr_t field has the tag of unsigned long.
static bool fromPointer(Value *V, unsigned Depth = 0) {
  if (isa<PtrToIntInst>(V))
    return true;
  if (auto *BO = dyn_cast<BinaryOperator>(V); BO && Depth < 4)
    switch (BO->getOpcode()) {
    case Instruction::Or:
    case Instruction::And:
    case Instruction::Add:
    case Instruction::Sub:
      return fromPointer(BO->getOperand(0), Depth + 1) ||
             (BO->getOpcode() != Instruction::Sub && fromPointer(BO->getOperand(1), Depth + 1));
    default:
      break;
    }
  return false;
}

// Should an untyped 8-byte (or wider) store be scanned for addresses?
// A pointer's bits are, always; then type information; without it,
// optimized code may have merged a pointer copy into it, -O0 code has not.
static bool mayStorePointerBits(StoreInst *SI) {
  if (fromPointer(SI->getValueOperand()))
    return true;
  if (auto T = tbaaSaysPointer(SI->getMetadata(LLVMContext::MD_tbaa)))
    return *T;
  // clang lowers __atomic_store_n on pointers to an untyped i64 store even
  // at -O0; plain -O0 integer stores are C integers.
  if (SI->getFunction()->hasOptNone() && !SI->isAtomic())
    return false;
  return !SI->getValueOperand()->getType()->isIntegerTy() ||
         mayHoldAddress(SI->getValueOperand());
}

// The pointer whose bits this i64 is, for an atomic's stored value: a
// ptrtoint, or an i64 loaded from a slot of pointer type. At -O0 clang
// passes the value of __atomic_store(&slot, &v), __atomic_exchange,
// __atomic_compare_exchange and of C11 atomics on _Atomic(T *) through a
// temporary of the pointer's type, read back as an integer.
static Value *pointerBitsOf(IRBuilder<> &B, Value *V) {
  if (auto *PI = dyn_cast<PtrToIntInst>(V))
    return PI->getOperand(0);
  auto *LI = dyn_cast<LoadInst>(V);
  if (!LI || !LI->getType()->isIntegerTy(64))
    return nullptr;
  Type *Slot = nullptr;
  if (auto *AI = dyn_cast<AllocaInst>(LI->getPointerOperand()))
    Slot = AI->getAllocatedType();
  else if (auto *GEP = dyn_cast<GEPOperator>(LI->getPointerOperand()))
    Slot = GEP->getResultElementType();
  if (!Slot || !Slot->isPointerTy())
    return nullptr;
  return B.CreateIntToPtr(V, Slot);
}

static StoreInst *cloneStoreWithValue(StoreInst *SI, Value *V,
                                      Instruction *Before) {
  auto *NS = new StoreInst(V, SI->getPointerOperand(), SI->isVolatile(),
                           SI->getAlign(), SI->getOrdering(),
                           SI->getSyncScopeID(), Before);
  NS->copyMetadata(*SI);
  return NS;
}

// A pointer store into PM stores the relative form that Make builds before
// At; elsewhere (the region test InPM false) the original store runs.
void FunctionInstrumenter::storeRelativeInPM(
    StoreInst *SI, Value *InPM, function_ref<Value *(Instruction *At)> Make) {
  auto Emit = [&](Instruction *At) {
    IRBuilder<> B(At);
    count(B, RelativeStores);
    cloneStoreWithValue(SI, Make(At), At);
  };
  if (auto *CI = dyn_cast<ConstantInt>(InPM); CI && CI->isOne()) {
    Emit(SI);
    SI->eraseFromParent();
    return;
  }
  Instruction *ThenT, *ElseT;
  SplitBlockAndInsertIfThenElse(InPM, SI, &ThenT, &ElseT, Unlikely);
  Emit(ThenT);
  SI->moveBefore(ElseT);
}

// Merged: the log that already covers this store (cairn-merge-logs), if any.
void FunctionInstrumenter::instrumentStore(StoreInst *SI, const MergedLog *Merged) {
  bool NeedLog = !Merged;
  ++NumStores;
  Value *Addr = SI->getPointerOperand();
  Value *Val = SI->getValueOperand();
  Type *Ty = Val->getType();
  uint64_t Size = DL.getTypeStoreSize(Ty).getFixedValue();
  Where W = classify(Addr);
  Value *InPM = Merged && Merged->InPM ? Merged->InPM
                                       : regionCondition(SI, Addr, W);
  if (NeedLog) {
    IRBuilder<> B(thenBlockFor(InPM, SI));
    emitLog(B, Addr, ConstantInt::get(Int64Ty, Size), SI);
  }

  if (Ty->isPointerTy()) {
    if (ClSkipNullConvert && isa<ConstantPointerNull>(Val)) {
      ++NumNullStores;
      return;
    }
    // In PM the slot gets the relative form; elsewhere the plain address.
    ++NumPtrStores;
    auto [File, Line] = sourceLocation(SI);
    storeRelativeInPM(SI, InPM, [&](Instruction *At) {
      return emitVa2Ra(At, SI, Addr, Val, File, Line);
    });
    return;
  }

  // A vector of pointers (the vectorizers make these from `a[i] = p` loops and
  // from neighbouring pointer fields): each lane converted like a scalar
  // pointer store, the relative forms stored as one vector of integers
  // (-fno-cairn-vector-ptr-stores: stored as addresses, then rewritten by
  // the wide-store scan's runtime call).
  if (auto *VT = dyn_cast<FixedVectorType>(Ty);
      VT && ClVectorPtrStores && VT->getElementType()->isPointerTy() &&
      VT->getNumElements() <= 8 &&
      DL.getTypeStoreSize(VT->getElementType()).getFixedValue() == 8) {
    if (ClSkipNullConvert && isa<ConstantAggregateZero>(Val)) {
      ++NumNullStores;
      return;
    }
    ++NumVecPtrStores;
    auto [File, Line] = sourceLocation(SI);
    unsigned N = VT->getNumElements();
    storeRelativeInPM(SI, InPM, [&](Instruction *At) {
      Value *Out = PoisonValue::get(FixedVectorType::get(Int64Ty, N));
      for (unsigned K = 0; K < N; ++K) {
        IRBuilder<> B(At);                   // At's block changes as lanes split it
        Value *Lane = B.CreateExtractElement(Val, K);
        Value *LaneAddr = B.CreateConstGEP1_64(B.getInt8Ty(), Addr, 8 * K);
        Value *Rel = emitVa2Ra(At, SI, LaneAddr, Lane, File, Line);
        Out = IRBuilder<>(At).CreateInsertElement(Out, Rel, K);
      }
      return Out;
    });
    return;
  }

  if (!ClScanWideStores || Size < 8)
    return;
  if (Ty->isIntegerTy(64)) {
    // An 8-byte integer may be a copied pointer (struct copies after
    // optimization): if it is an address inside an open pool, store it
    // relative (cairn_cc__pm_word; the inline test on the region is the
    // cheap filter in front of it).
    if (!mayStorePointerBits(SI)) {
      ++NumWideNotAddress;
      return;
    }
    // the word as stored: Convert's result when Cond holds, else as it was
    auto convertIf = [&](Value *Cond, FunctionCallee Convert, Value *Target) {
      ++NumWideScans;
      BasicBlock *Head = SI->getParent();
      Instruction *T = SplitBlockAndInsertIfThen(Cond, SI, false, Unlikely);
      IRBuilder<> TB(T);
      auto [File, Line] = sourceLocation(SI);
      Value *Rel = TB.CreateCall(Convert, {flat(TB, Addr), Target, File, Line});
      IRBuilder<> PB(SI);
      PHINode *Phi = PB.CreatePHI(Int64Ty, 2);
      Phi->addIncoming(Val, Head);
      Phi->addIncoming(Rel, T->getParent());
      SI->setOperand(0, Phi);
    };
    IRBuilder<> B(SI);
    if (Value *P = SI->isAtomic() ? pointerBitsOf(B, Val) : nullptr) {
      // __atomic_store_n of a pointer (clang stores its bits as i64): the
      // checked conversion, so a pointer to the stack or another pool stops
      // as a typed pointer store does
      convertIf(InPM, Va2Ra, flat(B, P));
      return;
    }
    convertIf(B.CreateAnd(InPM, emitInRegion(B, Val)), PMWord, Val);
    return;
  }
  if (Ty->isVectorTy() || Ty->isAggregateType()) {
    if (!mayStorePointerBits(SI)) {
      ++NumWideNotAddress;
      return;
    }
    emitGuardedScan(SI, Addr, ConstantInt::get(Int64Ty, Size), InPM, SI);
  }
}

// ---- stored pointers: virtual -> relative ------------------------------------

// Virtual -> relative for a pointer stored into PM. Inline when the value
// lies in the same 1-TiB region slot as the slot written (so in the same
// pool) and that slot is the one compiler/rt's cache holds:
//   rel = key << CAIRN_ID_SHIFT | (va - lo) & CAIRN_OFF_MASK   (CacheWord)
// Anything else (NULL, DRAM, another pool, a cache miss) calls the runtime,
// which checks and reports with file:line, and the miss refills
// the cache. NVL-C's pointer hoisting: for a value invariant in the loop,
// the value's half is computed once before the loop and each iteration
// only compares the slot's region slot.
Value *FunctionInstrumenter::emitVa2Ra(Instruction *Before, StoreInst *SI,
                                    Value *Addr, Value *Val, Value *File,
                                    Value *Line) {
  IRBuilder<> B(Before);
  if (!ClInlineVa2Ra)
    return B.CreateCall(Va2Ra, {flat(B, Addr), flat(B, Val), File, Line});
  ++NumVa2RaInline;
  Value *Lo = regionLo(B);
  Value *SlotOfAddr = CacheWord::slotOfOffset(
      B, B.CreateSub(B.CreatePtrToInt(flat(B, Addr), Int64Ty), Lo));
  Value *HoistRel = nullptr, *Hit = nullptr;
  if (ClHoistConversions)
    if (Loop *L = InvariantPtrStores.lookup(SI)) {
      auto [HRel, HSlot] = hoistedConversion(L, Val);
      if (HRel) {
        HoistRel = HRel;
        Value *SameSlot = B.CreateICmpEQ(HSlot, SlotOfAddr);
        Hit = B.CreateAnd(B.CreateICmpNE(HRel, B.getInt64(0)), SameSlot);
      }
    }
  // On a miss the runtime converts (and checks, and reports) and the cache
  // is refilled; the two paths meet before the store.
  auto HitOrMiss = [&](Value *Hit, function_ref<Value *(IRBuilder<> &)> OnHit) {
    Instruction *HitT, *MissT;
    SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
    IRBuilder<> HB(HitT);
    Value *Fast = OnHit(HB);
    IRBuilder<> MB(MissT);
    Value *Slow = MB.CreateCall(Va2Ra, {flat(MB, Addr), flat(MB, Val), File, Line});
    MB.CreateCall(CacheNote, {Slow, flat(MB, Val)});
    IRBuilder<> JB(Before);
    PHINode *Phi = JB.CreatePHI(Int64Ty, 2);
    Phi->addIncoming(Fast, HitT->getParent());
    Phi->addIncoming(Slow, MissT->getParent());
    return Phi;
  };
  if (HoistRel)   // hoisted: the value's conversion is known unless the cache missed then
    return HitOrMiss(Hit, [&](IRBuilder<> &) { return HoistRel; });
  Value *U = B.CreateSub(B.CreatePtrToInt(flat(B, Val), Int64Ty), Lo);
  Value *SlotOfVal = CacheWord::slotOfOffset(B, U);
  LoadInst *Cache = CacheWord::load(B, RaCache);
  Value *Key = CacheWord::key(B, Cache);
  Value *KeyOk = B.CreateICmpNE(Key, B.getInt64(0));
  Value *CacheSlot = CacheWord::slot(B, Cache);
  Value *InCache = B.CreateICmpEQ(SlotOfVal, CacheSlot);
  Value *SameSlot = B.CreateICmpEQ(SlotOfVal, SlotOfAddr);
  Hit = B.CreateAnd(B.CreateAnd(SameSlot, InCache), KeyOk);
  return HitOrMiss(Hit, [&](IRBuilder<> &HB) { return CacheWord::relative(HB, Key, U); });
}

// Before the loop, once per (loop, value): the value's relative form if the
// cache holds its region slot (else 0), and that region slot. No call and no
// side effect, so it runs even when the loop body never stores.
std::pair<Value *, Value *> FunctionInstrumenter::hoistedConversion(Loop *L, Value *Val) {
  auto Key = std::make_pair(L, Val);
  if (auto It = HoistedConv.find(Key); It != HoistedConv.end())
    return It->second;
  std::pair<Value *, Value *> R{nullptr, nullptr};
  if (BasicBlock *PH = LoopEntry.lookup(L)) {
    IRBuilder<> B(PH->getTerminator());
    auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
    Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
    Value *U = B.CreateSub(B.CreatePtrToInt(flat(B, Val), Int64Ty), Lo);
    Value *Slot = CacheWord::slotOfOffset(B, U, "cairn.hoist.slot");
    LoadInst *Cache = CacheWord::load(B, RaCache);
    Value *CKey = CacheWord::key(B, Cache);
    Value *KeyOk = B.CreateICmpNE(CKey, B.getInt64(0));
    Value *InCache = B.CreateICmpEQ(Slot, CacheWord::slot(B, Cache));
    Value *Hit = B.CreateAnd(InCache, KeyOk);
    Value *Rel = B.CreateSelect(Hit, CacheWord::relative(B, CKey, U), B.getInt64(0),
                                "cairn.hoist.rel");
    R = {Rel, Slot};
    ++NumConvHoisted;
  }
  HoistedConv[Key] = R;
  return R;
}

// Pointer stores whose value is defined outside their innermost loop.
void FunctionInstrumenter::findInvariantPtrStores(LoopInfo &LI,
                                               DominatorTree &DT) {
  for (Instruction &I : instructions(F)) {
    auto *SI = dyn_cast<StoreInst>(&I);
    if (!SI || !SI->getValueOperand()->getType()->isPointerTy())
      continue;
    Loop *L = LI.getLoopFor(SI->getParent());
    Value *V = SI->getValueOperand();
    if (!L || isa<ConstantPointerNull>(V) || isa<UndefValue>(V))
      continue;
    if (auto *VI = dyn_cast<Instruction>(V); VI && L->contains(VI->getParent()))
      continue;
    InvariantPtrStores[SI] = L;
  }
  for (auto &[SI, L] : InvariantPtrStores) {
    if (LoopEntry.count(L))
      continue;
    BasicBlock *PH = L->getLoopPreheader();
    if (!PH)
      PH = InsertPreheaderForLoop(L, &DT, &LI, nullptr, false);
    LoopEntry[L] = PH ? SplitEdge(PH, L->getHeader(), &DT, &LI) : nullptr;
  }
}

// ---- memory intrinsics, atomics, masked stores, write-set calls ---------------

void FunctionInstrumenter::instrumentMemIntrinsic(MemIntrinsic *MI) {
  Value *Dst = MI->getRawDest();
  Where W = classify(Dst);
  if (W == Where::Volatile)
    return;
  ++NumMemIntrinsics;
  Value *InPM = regionCondition(MI, Dst, W);
  {
    IRBuilder<> B(thenBlockFor(InPM, MI));
    emitLog(B, Dst, MI->getLength(), MI);
  }
  if (!isa<MemTransferInst>(MI))
    return;
  // A struct copy carries !tbaa.struct: (offset, size, tag) per field. Scan
  // only the fields that may hold pointers; without it, scan everything.
  MDNode *Fields = MI->getMetadata(LLVMContext::MD_tbaa_struct);
  if (!Fields || Fields->getNumOperands() % 3 != 0) {
    emitGuardedScan(MI, Dst, MI->getLength(), InPM, MI);
    return;
  }
  if (!ClScanWideStores)
    return;
  Instruction *Next = MI->getNextNode(); // stays first in the latest tail
  auto [File, Line] = sourceLocation(MI);
  for (unsigned K = 0; K + 2 < Fields->getNumOperands(); K += 3) {
    auto *Off = mdconst::dyn_extract<ConstantInt>(Fields->getOperand(K));
    auto *Sz = mdconst::dyn_extract<ConstantInt>(Fields->getOperand(K + 1));
    auto *Tag = dyn_cast<MDNode>(Fields->getOperand(K + 2));
    if (!Off || !Sz || Sz->getZExtValue() < 8)
      continue;
    std::optional<bool> P = tbaaSaysPointer(Tag);
    if (P && !*P) {
      ++NumWideNotAddress;
      continue;
    }
    ++NumWideScans;
    IRBuilder<> B(Next);
    Value *Field = B.CreateConstGEP1_64(B.getInt8Ty(), Dst, Off->getZExtValue());
    IRBuilder<> TB(thenBlockFor(InPM, Next));
    TB.CreateCall(FixWords,
                  {flat(TB, Field), TB.getInt64(Sz->getZExtValue()), File, Line});
  }
}

void FunctionInstrumenter::instrumentAtomic(Instruction *I) {
  Value *Addr = getLoadStorePointerOperand(I);
  if (auto *RMW = dyn_cast<AtomicRMWInst>(I))
    Addr = RMW->getPointerOperand();
  if (auto *CX = dyn_cast<AtomicCmpXchgInst>(I))
    Addr = CX->getPointerOperand();
  Where W = classify(Addr);
  if (W == Where::Volatile)
    return;
  ++NumAtomics;
  Type *ValTy = isa<AtomicRMWInst>(I) ? I->getType()
                                      : cast<AtomicCmpXchgInst>(I)
                                            ->getNewValOperand()
                                            ->getType();
  uint64_t Size = DL.getTypeStoreSize(ValTy).getFixedValue();
  Value *InPM = regionCondition(I, Addr, W);
  auto [File, Line] = sourceLocation(I);
  if (!ValTy->isPointerTy()) {
    {
      IRBuilder<> B(thenBlockFor(InPM, I));
      emitLog(B, Addr, ConstantInt::get(Int64Ty, Size), I);
    }
    // clang lowers pointer cmpxchg/exchange to i64 ones on ptrtoint values:
    // an operand that is an address of the PM region goes in relative form
    // (same rule as 8-byte stores). The old value comes back raw; a pointer
    // load of it converts it.
    auto *RMW = dyn_cast<AtomicRMWInst>(I);
    if (!ClScanWideStores || !ValTy->isIntegerTy(64) ||
        (RMW && RMW->getOperation() != AtomicRMWInst::Xchg))
      return;
    ++NumWideScans;
    IRBuilder<> B(I);
    // the value stored: when it is a pointer's bits, the checked conversion
    // (a pointer to the stack or another pool stops, as in a typed store)
    auto toPM = [&](unsigned OpNo, bool Stored) {
      Value *V = I->getOperand(OpNo);
      Value *P = Stored ? pointerBitsOf(B, V) : nullptr;
      auto *C = P ? B.CreateCall(Va2Ra, {flat(B, Addr), flat(B, P), File, Line})
                  : B.CreateCall(PMWord, {flat(B, Addr), V, File, Line});
      C->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
      I->setOperand(OpNo, C);
    };
    if (RMW) {
      toPM(1, true);
    } else {
      toPM(1, false);
      toPM(2, true);
    }
    return;
  }
  // Atomics on pointers in PM go through compiler/rt, which converts the
  // operands to relative form and the old value back.
  Instruction *ThenT, *ElseT;
  SplitBlockAndInsertIfThenElse(InPM, I, &ThenT, &ElseT, Unlikely);
  IRBuilder<> B(ThenT);
  emitLog(B, Addr, ConstantInt::get(Int64Ty, Size), I);
  Value *PMResult;
  if (auto *CX = dyn_cast<AtomicCmpXchgInst>(I)) {
    Value *Old = B.CreateCall(
        CmpxchgPtr, {flat(B, Addr), flat(B, CX->getCompareOperand()),
                     flat(B, CX->getNewValOperand()), File, Line});
    Old = B.CreatePointerBitCastOrAddrSpaceCast(Old, ValTy);
    Value *Ok = B.CreateICmpEQ(Old, CX->getCompareOperand());
    PMResult = B.CreateInsertValue(
        B.CreateInsertValue(PoisonValue::get(CX->getType()), Old, 0), Ok, 1);
  } else {
    auto *RMW = cast<AtomicRMWInst>(I);
    PMResult = B.CreatePointerBitCastOrAddrSpaceCast(
        B.CreateCall(XchgPtr, {flat(B, Addr), flat(B, RMW->getValOperand()),
                               File, Line}),
        ValTy);
  }
  BasicBlock *ThenBB = ThenT->getParent();
  I->moveBefore(ElseT);
  BasicBlock *Tail = ElseT->getSuccessor(0);
  IRBuilder<> PB(&Tail->front());
  PHINode *Phi = PB.CreatePHI(I->getType(), 2);
  I->replaceAllUsesWith(Phi);
  Phi->addIncoming(PMResult, ThenBB);
  Phi->addIncoming(I, I->getParent());
}

// llvm.masked.store / .scatter (the vectorizers' conditional stores,
// -mavx2 / -mavx512f): lane k writes its element at its address when bit k
// of the mask is set. One vector test: does a written lane lie in the PM
// region? Only then compiler/rt logs each such lane and, for pointer
// elements, converts their values (relative, checked) before the store,
// which then stores the converted words. A compress-store writes the first
// popcount(mask) elements from its address: logged as that range, and
// scanned after as a copy is.
void FunctionInstrumenter::instrumentMaskedStore(IntrinsicInst *II) {
  Intrinsic::ID ID = II->getIntrinsicID();
  Value *Val = II->getArgOperand(0), *Ptr = II->getArgOperand(1);
  Value *Mask = II->getArgOperand(ID == Intrinsic::masked_compressstore ? 2 : 3);
  auto *VT = cast<FixedVectorType>(Val->getType());
  Type *ElTy = VT->getElementType();
  unsigned N = VT->getNumElements();
  uint64_t ES = DL.getTypeStoreSize(ElTy).getFixedValue();
  auto [File, Line] = sourceLocation(II);
  if (ID != Intrinsic::masked_scatter && classify(Ptr) == Where::Volatile)
    return;
  ++NumMaskedStores;
  IRBuilder<> B(II);
  if (ID == Intrinsic::masked_compressstore || N > 64) {
    Value *Count = ID == Intrinsic::masked_compressstore
                       ? B.CreateZExtOrTrunc(B.CreateUnaryIntrinsic(
                             Intrinsic::ctpop, B.CreateBitCast(Mask, B.getIntNTy(N))), Int64Ty)
                       : B.getInt64(N);
    Value *Len = B.CreateMul(Count, B.getInt64(ES));
    Value *InPM = regionCondition(II, Ptr, classify(Ptr));
    IRBuilder<> LB(thenBlockFor(InPM, II));
    emitLog(LB, Ptr, Len, II);
    if (ElTy->isPointerTy() || ES == 8)
      emitGuardedScan(II, Ptr, Len, InPM, II);
    return;
  }
  // the lanes' addresses, and whether a written one is in the region
  auto *PVT = FixedVectorType::get(PtrTy, N);
  Value *Addrs = ID == Intrinsic::masked_scatter
                     ? Ptr
                     : B.CreateGEP(ElTy, Ptr, ConstantVector::get([&] {
                         SmallVector<Constant *, 16> Ix;
                         for (unsigned K = 0; K < N; ++K)
                           Ix.push_back(B.getInt64(K));
                         return Ix;
                       }()));
  Addrs = B.CreateAddrSpaceCast(Addrs, PVT);
  auto *IVT = FixedVectorType::get(Int64Ty, N);
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo), *Hi = B.CreateLoad(Int64Ty, RegionHi);
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *Size = B.CreateVectorSplat(N, B.CreateSub(Hi, Lo));
  Value *LoV = B.CreateVectorSplat(N, Lo);
  Value *In = B.CreateICmpULT(B.CreateSub(B.CreatePtrToInt(Addrs, IVT), LoV), Size);
  Value *InPM = B.CreateOrReduce(B.CreateAnd(In, Mask));
  Value *Bits = B.CreateZExt(B.CreateBitCast(Mask, B.getIntNTy(N)), Int64Ty);
  IRBuilder<> AB(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *AddrTmp = AB.CreateAlloca(PVT, nullptr, "cairn.lanes");
  bool Pointers = ElTy->isPointerTy();
  if (!Pointers) {
    IRBuilder<> TB(thenBlockFor(InPM, II));
    TB.CreateStore(Addrs, AddrTmp);
    TB.CreateCall(LogLanes, {AddrTmp, Bits, B.getInt64(N), B.getInt64(ES), File, Line});
    return;
  }
  // pointers: in PM the words stored are the converted ones
  AllocaInst *ValTmp = AB.CreateAlloca(IVT, nullptr, "cairn.lanevals");
  Instruction *ThenT, *ElseT;
  SplitBlockAndInsertIfThenElse(InPM, II, &ThenT, &ElseT, Unlikely);
  IRBuilder<> TB(ThenT);
  TB.CreateStore(Addrs, AddrTmp);
  TB.CreateCall(LogLanes, {AddrTmp, Bits, B.getInt64(N), B.getInt64(ES), File, Line});
  TB.CreateStore(TB.CreatePtrToInt(Val, IVT), ValTmp);
  TB.CreateCall(LanesToRel, {AddrTmp, ValTmp, Bits, B.getInt64(N),
                             B.getInt32(Lenient ? 1 : 0), File, Line});
  Value *Words = TB.CreateLoad(IVT, ValTmp);
  Align A(cast<ConstantInt>(II->getArgOperand(2))->getZExtValue());
  CallInst *Conv = ID == Intrinsic::masked_store ? TB.CreateMaskedStore(Words, Ptr, A, Mask)
                                                 : TB.CreateMaskedScatter(Words, Ptr, A, Mask);
  Conv->copyMetadata(*II);
  II->moveBefore(ElseT);
}

void FunctionInstrumenter::instrumentWriteSetCall(CallBase *CB,
                                               const cairn::WSFunction &WF) {
  if (CB->arg_size() < WF.NumParams)
    return; // declared differently from the write-set; leave it alone
  bool Any = false;
  for (const cairn::WSRegion &R : WF.Writes) {
    Value *Dst = CB->getArgOperand(R.Param);
    Where W = classify(Dst);
    if (W == Where::Volatile)
      continue;
    Any = true;
    Value *InPM = regionCondition(CB, Dst, W);
    IRBuilder<> B(thenBlockFor(InPM, CB));
    Value *Len = cairn::emitWriteSetSize(B, CB, R.Size);
    emitLog(B, Dst, Len, CB);
    // a byte copy made by a libc call (-fno-builtin, -ffreestanding, the
    // fortified __memcpy_chk) carries pointers as the intrinsic does: scan
    // what it wrote, as for llvm.memcpy (the length is known before it)
    StringRef N = CB->getCalledFunction() ? CB->getCalledFunction()->getName() : "";
    if (R.Pointer && isa<CallInst>(CB) && !CB->isTerminator()) {
      // the call stored a pointer there (strtol's end, strtok_r's save):
      // in PM it goes relative, checked like a typed pointer store
      IRBuilder<> AB(thenBlockFor(InPM, CB->getNextNode()));
      auto [File, Line] = sourceLocation(CB);
      Value *Slot = flat(AB, Dst);
      Value *Word = AB.CreateLoad(PtrTy, Slot);
      Value *Rel = AB.CreateCall(Va2Ra, {Slot, Word, File, Line});
      AB.CreateStore(Rel, Slot)->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
      ++NumPtrStores;
    }
    if (ClScanWideStores && R.Param == 0 && isa<CallInst>(CB) && !CB->isTerminator() &&
        (N == "memcpy" || N == "memmove" || N == "mempcpy" || N == "__memcpy_chk" ||
         N == "__memmove_chk" || N == "__mempcpy_chk")) {
      IRBuilder<> LB(CB);
      Value *ScanLen = cairn::emitWriteSetSize(LB, CB, R.Size);
      emitGuardedScan(CB, Dst, ScanLen, InPM, CB);
    }
  }
  if (Any)
    ++NumWriteSetCalls;
}

} // namespace cairn

namespace cairn {

// libc functions whose writes no write-set can size: the scanf family (its
// %-targets are varargs sized by the format) and strsep (it cuts the string
// *sp points to). Their calls go to compiler/rt/cairn_cc_libc.c, which logs
// exactly what it lets libc write into a pool and converts the pointers it
// stores there (%p, %ms, strsep's cursor). The wrapper takes (file, line,
// flags) and then the call's own arguments; flags: bit 0 lenient pointer
// stores (persistent-heap mode), bits 1-2 the scanf flavour of the symbol
// called (plain, __isoc99_, __isoc23_), which the wrapper calls in turn.
namespace {
struct LibcWrapper {
  const char *Name, *Wrapper;
  unsigned Fixed;   // parameters before the %-targets (UINT_MAX: always route)
  unsigned Flavour;
};
} // namespace
static const LibcWrapper LibcWrappers[] = {
    {"sscanf", "cairn_cc__sscanf", 2, 0},
    {"__isoc99_sscanf", "cairn_cc__sscanf", 2, 1},
    {"__isoc23_sscanf", "cairn_cc__sscanf", 2, 2},
    {"fscanf", "cairn_cc__fscanf", 2, 0},
    {"__isoc99_fscanf", "cairn_cc__fscanf", 2, 1},
    {"__isoc23_fscanf", "cairn_cc__fscanf", 2, 2},
    {"scanf", "cairn_cc__scanf", 1, 0},
    {"__isoc99_scanf", "cairn_cc__scanf", 1, 1},
    {"__isoc23_scanf", "cairn_cc__scanf", 1, 2},
    {"vsscanf", "cairn_cc__vsscanf", UINT_MAX, 0},
    {"__isoc99_vsscanf", "cairn_cc__vsscanf", UINT_MAX, 1},
    {"__isoc23_vsscanf", "cairn_cc__vsscanf", UINT_MAX, 2},
    {"vfscanf", "cairn_cc__vfscanf", UINT_MAX, 0},
    {"__isoc99_vfscanf", "cairn_cc__vfscanf", UINT_MAX, 1},
    {"__isoc23_vfscanf", "cairn_cc__vfscanf", UINT_MAX, 2},
    {"vscanf", "cairn_cc__vscanf", UINT_MAX, 0},
    {"__isoc99_vscanf", "cairn_cc__vscanf", UINT_MAX, 1},
    {"__isoc23_vscanf", "cairn_cc__vscanf", UINT_MAX, 2},
    {"strsep", "cairn_cc__strsep", UINT_MAX, 0},
};

bool FunctionInstrumenter::routeLibcCalls() {
  SmallVector<std::pair<CallInst *, const LibcWrapper *>, 4> Calls;
  for (Instruction &I : instructions(F)) {
    auto *CI = dyn_cast<CallInst>(&I);
    Function *Callee = CI ? CI->getCalledFunction() : nullptr;
    if (!Callee || !Callee->isDeclaration() || I.hasMetadata(LLVMContext::MD_nosanitize))
      continue;
    for (const LibcWrapper &W : LibcWrappers) {
      if (Callee->getName() != W.Name)
        continue;
      // a scanf whose targets are all on the stack or in globals needs nothing
      bool Route = W.Fixed == UINT_MAX;
      for (unsigned A = W.Fixed; !Route && A < CI->arg_size(); ++A)
        Route = !CI->getArgOperand(A)->getType()->isPointerTy() ||
                classify(CI->getArgOperand(A)) != Where::Volatile;
      if (Route)
        Calls.push_back({CI, &W});
      break;
    }
  }
  for (auto [CI, W] : Calls) {
    FunctionType *OFT = CI->getFunctionType();
    SmallVector<Type *, 8> Params = {PtrTy, Int32Ty, Int32Ty};
    append_range(Params, OFT->params());
    FunctionCallee Wrapper = M.getOrInsertFunction(
        W->Wrapper, FunctionType::get(OFT->getReturnType(), Params, OFT->isVarArg()));
    auto [File, Line] = sourceLocation(CI);
    unsigned Flags = (Lenient ? 1 : 0) | W->Flavour << 1;
    SmallVector<Value *, 8> Args = {File, Line, ConstantInt::get(Int32Ty, Flags)};
    append_range(Args, CI->args());
    CallInst *New = CallInst::Create(Wrapper, Args, "", CI->getIterator());
    New->setDebugLoc(CI->getDebugLoc());
    New->takeName(CI);
    CI->replaceAllUsesWith(New);
    CI->eraseFromParent();
    ++NumLibcWrapped;
  }
  return !Calls.empty();
}

} // namespace cairn
