//===- LogPlacement.cpp - which writes get a log, and where --------------===//
//
// Breeze's loop hoisting (one log for the range a loop writes), redundant-
// log elimination across dominating stores, and merging the logs of one
// block's stores into one (docs/compiler.md, "Optimizations").
//===----------------------------------------------------------------------===//
#include "Instrumenter.h"

#define DEBUG_TYPE "cairn"

namespace cairn {

// ---- choosing what to instrument -------------------------------------------

// Calls that cannot begin or end a transaction or write memory we track.
// What makes a call a barrier to log placement (merging, dominated-log
// elimination, loop hoisting) and to the register cache is that it may run
// cairn's runtime: begin, end or abort a transaction, open or close a pool.
// All of those write the runtime's own state, which to this module is
// "other" memory (neither the call's arguments' memory nor its stack).

static bool isOwnHook(const Function *Callee) {
  StringRef N = Callee->getName();
  return N.starts_with("cairn__") || N.starts_with("cairn_cc__") ||
         cairn::isTraceHook(N);
}

static bool returnsTwice(const CallBase &CB) {
  return CB.hasFnAttr(Attribute::ReturnsTwice) ||
         (CB.getCalledFunction() &&
          CB.getCalledFunction()->hasFnAttribute(Attribute::ReturnsTwice));
}

// A callee that writes at most the memory its pointer arguments point to
// (memcpy, strcpy, snprintf's LLVM-inferred attributes, this module's
// helpers that LLVM found argmemonly) cannot reach the runtime's state.
static bool writesOnlyArgMemory(const CallBase &CB) {
  return CB.getMemoryEffects().getWithoutLoc(IRMemLocation::ArgMem).onlyReadsMemory();
}

// cairn-known-callees: a call that accesses memory but is proven not to
// run cairn: its callee writes only argument memory, or is one of this
// module's functions whose every call is such a call (Free).
static bool cairnFreeByKnownCallee(const CallBase &CB,
                                   const SmallPtrSetImpl<const Function *> &Free) {
  if (!ClKnownCallees || returnsTwice(CB) || CB.isInlineAsm())
    return false;
  if (writesOnlyArgMemory(CB))
    return true;
  const Function *Callee = CB.getCalledFunction();
  return Callee && Free.count(Callee);
}

static bool isBarrierFree(const Instruction &I,
                          const SmallPtrSetImpl<const Function *> &Free) {
  auto *CB = dyn_cast<CallBase>(&I);
  if (!CB)
    return true;
  if (isa<DbgInfoIntrinsic>(CB))
    return true;
  if (returnsTwice(*CB))
    return false;
  if (Function *Callee = CB->getCalledFunction())
    if (isOwnHook(Callee))  // ours: logs from loop hoisting, trace records
      return true;
  if (auto *II = dyn_cast<IntrinsicInst>(CB)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::assume:
    case Intrinsic::expect:
      return true;
    default:
      break;
    }
  }
  return CB->doesNotAccessMemory() || cairnFreeByKnownCallee(*CB, Free);
}

bool ModuleRuntime::cairnFreeByKnownCallee(const CallBase &CB) const {
  return cairn::cairnFreeByKnownCallee(CB, *CairnFreeFns);
}

bool ModuleRuntime::isBarrierFree(const Instruction &I) const {
  return cairn::isBarrierFree(I, *CairnFreeFns);
}

// The module's functions whose calls cannot run cairn: optimistic fixed
// point (recursion among such functions is fine), over exact definitions
// only (a definition that may be replaced at link or load time, weak or
// interposable, proves nothing). Indirect calls, calls to unknown external
// functions and setjmp-like calls disqualify a function.
void ModuleRuntime::findCairnFreeFunctions(Module &M,
                                           SmallPtrSetImpl<const Function *> &Free) {
  Free.clear();
  if (!ClKnownCallees)
    return;
  for (Function &F : M)
    if (!F.isDeclaration() && F.hasExactDefinition() && !F.isInterposable() &&
        !F.getName().starts_with("cairn_"))
      Free.insert(&F);
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (Function &F : M) {
      if (!Free.count(&F))
        continue;
      bool AllFree = llvm::all_of(instructions(F), [&](Instruction &I) {
        auto *CB = dyn_cast<CallBase>(&I);
        return !CB || cairn::isBarrierFree(*CB, Free);
      });
      if (!AllFree) {
        Free.erase(&F);
        Changed = true;
      }
    }
  }
  for (Function &F : M)
    if (!F.isDeclaration() && !F.getName().starts_with("cairn_"))
      for (Instruction &I : instructions(F))
        if (auto *CB = dyn_cast<CallBase>(&I))
          if (!isa<IntrinsicInst>(CB) && !CB->doesNotAccessMemory() &&
              cairn::cairnFreeByKnownCallee(*CB, Free))
            ++NumCallsCairnFree;
}

// cairn-hoist-loop-logs (Breeze, seed 000 Fig. 8): a store that runs on
// every iteration of a loop with no calls, at an address advancing by a
// constant stride, writes [Begin, Begin + Len) over the whole loop, with
// Len = trip-count-1 * |stride| + size. One log of that range in the
// preheader replaces one per iteration; with no call in the loop the
// transaction cannot end before the loop does, so the early snapshot is as
// good. The preheader always enters the loop, so the range is written.
void FunctionInstrumenter::hoistLoopLogs(
    LoopInfo &LI, ScalarEvolution &SE, DominatorTree &DT,
    std::map<Instruction *, MergedLog> &Hoisted) {
  SCEVExpander Exp(SE, DL, "cairn.hoist");
  struct Candidate {
    StoreInst *SI;
    Instruction *InsertPt;
    const SCEV *Begin, *Len;
  };
  SmallVector<Candidate, 8> Cands;
  for (Loop *L : LI.getLoopsInPreorder()) {
    BasicBlock *Latch = L->getLoopLatch();
    if (!Latch || !L->getLoopPredecessor())
      continue;
    if (llvm::any_of(L->blocks(), [&](BasicBlock *BB) {
          return llvm::any_of(*BB, [&](Instruction &I) { return !isBarrierFree(I); });
        }))
      continue;
    if (!llvm::any_of(L->blocks(), [](BasicBlock *BB) {
          return llvm::any_of(*BB, [](Instruction &I) { return isa<StoreInst>(I); });
        }))
      continue;
    // The end of the pipeline need not leave loops in simplified form; the
    // log must sit on the edge into the loop, never before its guard.
    BasicBlock *PH = L->getLoopPreheader();
    if (!PH) {
      PH = InsertPreheaderForLoop(L, &DT, &LI, nullptr, false);
      if (!PH)
        continue;
      SE.forgetLoop(L);
    }
    const SCEV *BTC = SE.getBackedgeTakenCount(L);
    if (isa<SCEVCouldNotCompute>(BTC) || !BTC->getType()->isIntegerTy())
      continue;
    BTC = SE.getTruncateOrZeroExtend(BTC, Int64Ty);
    Instruction *InsertPt = PH->getTerminator();
    for (BasicBlock *BB : L->blocks()) {
      if (LI.getLoopFor(BB) != L || !DT.dominates(BB, Latch))
        continue;
      for (Instruction &I : *BB) {
        auto *SI = dyn_cast<StoreInst>(&I);
        if (!SI || SI->hasMetadata(LLVMContext::MD_nosanitize) ||
            classify(SI->getPointerOperand()) == Where::Volatile)
          continue;
        auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(SI->getPointerOperand()));
        if (!AR || AR->getLoop() != L || !AR->isAffine())
          continue;
        auto *StepC = dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE));
        if (!StepC)
          continue;
        int64_t Step = StepC->getAPInt().getSExtValue();
        uint64_t Stride = Step < 0 ? -(uint64_t)Step : (uint64_t)Step;
        uint64_t Size = DL.getTypeStoreSize(SI->getValueOperand()->getType())
                            .getFixedValue();
        if (Stride == 0 || Stride > ClHoistMaxStride)
          continue;
        const SCEV *Span = SE.getMulExpr(BTC, SE.getConstant(Int64Ty, Stride));
        const SCEV *Len = SE.getAddExpr(Span, SE.getConstant(Int64Ty, Size));
        const SCEV *Begin = Step > 0 ? AR->getStart()
                                     : SE.getMinusSCEV(AR->getStart(), Span);
        if (isa<SCEVCouldNotCompute>(Begin) ||
            !Exp.isSafeToExpandAt(Begin, InsertPt) ||
            !Exp.isSafeToExpandAt(Len, InsertPt))
          continue;
        Cands.push_back({SI, InsertPt, Begin, Len});
      }
    }
  }
  // Unrolled loops have several such stores a constant distance apart with
  // the same length: one log covers them all.
  struct Group {
    Candidate First;
    int64_t MinOff = 0, MaxOff = 0;
    SmallVector<StoreInst *, 4> Stores;
  };
  SmallVector<Group, 8> Groups;
  for (Candidate &C : Cands) {
    Group *G = nullptr;
    int64_t Off = 0;
    for (Group &Gr : Groups) {
      if (Gr.First.InsertPt != C.InsertPt || Gr.First.Len != C.Len)
        continue;
      auto *D = dyn_cast<SCEVConstant>(SE.getMinusSCEV(C.Begin, Gr.First.Begin));
      if (D && D->getAPInt().abs().ule(ClHoistMaxStride)) {
        G = &Gr;
        Off = D->getAPInt().getSExtValue();
        break;
      }
    }
    if (!G) {
      Groups.push_back(Group{C, 0, 0, {}});
      G = &Groups.back();
    }
    G->MinOff = std::min(G->MinOff, Off);
    G->MaxOff = std::max(G->MaxOff, Off);
    G->Stores.push_back(C.SI);
  }
  SmallVector<std::pair<Value *, Value *>, 8> Ranges;
  for (Group &G : Groups) {
    const SCEV *Begin = SE.getAddExpr(G.First.Begin,
                                      SE.getConstant(Int64Ty, G.MinOff, true));
    const SCEV *Len = SE.getAddExpr(
        G.First.Len, SE.getConstant(Int64Ty, G.MaxOff - G.MinOff));
    Ranges.push_back({Exp.expandCodeFor(Begin, Begin->getType(), G.First.InsertPt),
                      Exp.expandCodeFor(Len, Int64Ty, G.First.InsertPt)});
  }
  for (unsigned K = 0; K < Groups.size(); K++) {
    Group &G = Groups[K];
    auto [Begin, Len] = Ranges[K];
    Value *InPM = regionCondition(G.First.InsertPt, Begin,
                                  classify(G.First.SI->getPointerOperand()));
    IRBuilder<> B(thenBlockFor(InPM, G.First.InsertPt));
    emitLog(B, Begin, Len, G.First.SI);
    for (StoreInst *SI : G.Stores) {
      Hoisted[SI] = {Begin, 0, 0, InPM};
      ++NumLoopLogsHoisted;
    }
  }
}

// cairn-elim-dominated-logs: in a function without calls (so one
// transaction, or none, covers all of it), a store whose bytes a dominating
// store's log already covered needs no log of its own: every path to it ran
// that log first. "Covered" uses the dominating store's logged range (its
// merged block log when it has one).
// No call that may end the transaction on any path from E to L, where E
// dominates L. The blocks of those paths are those reached backward from
// L's block without crossing E's block (a path that re-enters E's block
// from its top runs E again, which logs again).
bool FunctionInstrumenter::noBarrierBetween(Instruction *E, Instruction *L,
                                         DenseMap<BasicBlock *, bool> &HasBarrier) const {
  auto BarrierIn = [&](BasicBlock::iterator From, BasicBlock::iterator To) {
    for (auto It = From; It != To; ++It)
      if (!isBarrierFree(*It))
        return true;
    return false;
  };
  auto Blocked = [&](BasicBlock *B) {
    auto [It, New] = HasBarrier.try_emplace(B, false);
    if (New)
      It->second = BarrierIn(B->begin(), B->end());
    return It->second;
  };
  BasicBlock *EB = E->getParent(), *LB = L->getParent();
  if (EB == LB)
    return !BarrierIn(std::next(E->getIterator()), L->getIterator());
  if (BarrierIn(std::next(E->getIterator()), EB->end()) ||
      BarrierIn(LB->begin(), L->getIterator()))
    return false;
  SmallVector<BasicBlock *, 16> Work(pred_begin(LB), pred_end(LB));
  SmallPtrSet<BasicBlock *, 32> Seen;
  while (!Work.empty()) {
    BasicBlock *B = Work.pop_back_val();
    if (B == EB || !Seen.insert(B).second)
      continue;
    if (B == LB) {      // around a loop back to L: the rest of L's block too
      if (BarrierIn(std::next(L->getIterator()), LB->end()))
        return false;
      continue;
    }
    if (Blocked(B) || Seen.size() > 512)
      return false;
    Work.append(pred_begin(B), pred_end(B));
  }
  return true;
}

void FunctionInstrumenter::elimDominatedLogs(
    ArrayRef<Instruction *> Writes,
    DenseMap<Instruction *, MergedLog> &MergedAt,
    DenseMap<Instruction *, Instruction *> &Covered,
    const std::map<Instruction *, MergedLog> &Hoisted,
    std::map<Instruction *, MergedLog> &Dominated) {
  DominatorTree DT(F); // fresh: loop hoisting may have split blocks
  DenseMap<BasicBlock *, bool> HasBarrier;
  struct Access {
    StoreInst *SI;
    Value *Base;
    int64_t Begin, End;        // bytes this store writes
    int64_t LogBegin, LogEnd;  // bytes its log covers
  };
  SmallVector<Access, 32> Acc;
  for (Instruction *I : Writes) {
    auto *SI = dyn_cast<StoreInst>(I);
    if (!SI || Hoisted.count(SI))
      continue;
    APInt Off(64, 0);
    Value *Base = SI->getPointerOperand()->stripAndAccumulateConstantOffsets(
        DL, Off, true);
    int64_t B = Off.getSExtValue();
    int64_t E = B + DL.getTypeStoreSize(SI->getValueOperand()->getType())
                        .getFixedValue();
    Access A{SI, Base, B, E, B, E};
    auto It = Covered.find(SI);
    if (It != Covered.end()) {
      const MergedLog &ML = MergedAt[It->second];
      A.LogBegin = ML.Begin;
      A.LogEnd = ML.End;
    }
    Acc.push_back(A);
    if (Acc.size() > 256)
      return; // quadratic below; big functions keep their logs
  }
  for (Access &Later : Acc) {
    if (Covered.count(Later.SI))
      continue;
    for (Access &Earlier : Acc) {
      if (&Earlier == &Later || Earlier.Base != Later.Base ||
          Earlier.LogBegin > Later.Begin || Later.End > Earlier.LogEnd ||
          !DT.dominates(Earlier.SI, Later.SI) ||
          !noBarrierBetween(Earlier.SI, Later.SI, HasBarrier))
        continue;
      Dominated[Later.SI] = {Later.Base, Later.Begin, Later.End, nullptr};
      ++NumLogsDominated;
      break;
    }
  }
}

// cairn-merge-logs: inside one block, between two calls, the stores to one
// base pointer at constant offsets need one log for the span they cover,
// emitted before the first of them. No call in between means the
// transaction cannot end, so one snapshot taken earlier is as good.
void FunctionInstrumenter::mergeLogsInBlock(
    BasicBlock &BB, DenseMap<Instruction *, MergedLog> &MergedAt,
    DenseMap<Instruction *, Instruction *> &Covered,
    const std::map<Instruction *, MergedLog> &Hoisted) {
  struct Group {
    StoreInst *First;
    int64_t Begin, End;
    SmallVector<StoreInst *, 4> Members;
  };
  SmallVector<std::pair<Value *, Group>, 8> Groups;
  auto flush = [&]() {
    for (auto &[Base, G] : Groups) {
      if (G.Members.size() < 2 || G.End - G.Begin > 4096)
        continue;
      MergedAt[G.First] = {Base, G.Begin, G.End};
      for (StoreInst *S : G.Members)
        Covered[S] = G.First;
      NumLogsMerged += G.Members.size() - 1;
    }
    Groups.clear();
  };
  for (Instruction &I : BB) {
    if (!isBarrierFree(I)) {
      flush();
      continue;
    }
    auto *SI = dyn_cast<StoreInst>(&I);
    if (!SI || SI->isAtomic() || Hoisted.count(SI) ||
        SI->hasMetadata(LLVMContext::MD_nosanitize)) // ours (counters)
      continue;
    APInt Off(64, 0);
    Value *Base = SI->getPointerOperand()->stripAndAccumulateConstantOffsets(
        DL, Off, /*AllowNonInbounds=*/true);
    int64_t Begin = Off.getSExtValue();
    int64_t End = Begin + DL.getTypeStoreSize(SI->getValueOperand()->getType())
                              .getFixedValue();
    auto It = llvm::find_if(Groups, [&](auto &P) { return P.first == Base; });
    if (It == Groups.end()) {
      Groups.push_back({Base, Group{SI, Begin, End, {SI}}});
    } else {
      It->second.Begin = std::min(It->second.Begin, Begin);
      It->second.End = std::max(It->second.End, End);
      It->second.Members.push_back(SI);
    }
  }
  flush();
}

void FunctionInstrumenter::chooseInstructionsToInstrument(
    SmallVectorImpl<Instruction *> &Writes,
    SmallVectorImpl<Instruction *> &PointerReads,
    DenseMap<Instruction *, MergedLog> &MergedAt,
    DenseMap<Instruction *, Instruction *> &Covered,
    const std::map<Instruction *, MergedLog> &Hoisted) {
  for (Instruction &I : instructions(F)) {
    if (I.hasMetadata(LLVMContext::MD_nosanitize))
      continue;
    if (auto *SI = dyn_cast<StoreInst>(&I)) {
      if (classify(SI->getPointerOperand()) == Where::Volatile) {
        ++NumStoresVolatile;
        continue;
      }
      Writes.push_back(SI);
    } else if (cairn::mayWriteMemory(I, WS)) {
      Writes.push_back(&I);
    } else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
      switch (II->getIntrinsicID()) {
      case Intrinsic::masked_store:
      case Intrinsic::masked_scatter:
      case Intrinsic::masked_compressstore:
        Writes.push_back(II);
        break;
      case Intrinsic::masked_load:
      case Intrinsic::masked_gather:
      case Intrinsic::masked_expandload:
        if (II->getType()->getScalarType()->isPointerTy())
          VecPointerReads.push_back(II);
        break;
      default:
        break;
      }
    } else if (auto *LI = dyn_cast<LoadInst>(&I)) {
      if (LI->getType()->isPointerTy())
        PointerReads.push_back(LI);
      else if (LI->getType()->isVectorTy() &&
               LI->getType()->getScalarType()->isPointerTy())
        VecPointerReads.push_back(LI);
    } else if (auto *ITP = dyn_cast<IntToPtrInst>(&I)) {
      // A union of a pointer and a double is passed and copied through its
      // pointer member: `inttoptr (bitcast double x)`. Those bits are a
      // number, never a relative pointer (one reaches a register only
      // through an integer or pointer load), and a negative one has bit 63
      // set: converting it stopped jq-shaped programs ("pool id 4190208"
      // for -1.0) with no pool open.
      auto *BC = dyn_cast<BitCastOperator>(ITP->getOperand(0));
      if (BC && BC->getSrcTy()->getScalarType()->isFloatingPointTy())
        ++NumIntToPtrFloat;
      else
        PointerReads.push_back(&I);
    }
  }
  if (ClMergeLogs)
    for (BasicBlock &BB : F)
      mergeLogsInBlock(BB, MergedAt, Covered, Hoisted);
}

} // namespace cairn
