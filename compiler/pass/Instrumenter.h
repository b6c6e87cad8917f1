//===- Instrumenter.h - the state and steps of cairn's pass -----*- C++ -*-===//
//
// The logging and pointer instrumentation, in two objects:
//   ModuleRuntime         made once per module: the runtime's entry points
//                         and globals as declared in it, the module's
//                         source-location strings, and which of its
//                         functions cannot run cairn's runtime;
//   FunctionInstrumenter  made for one function and dropped after it: what
//                         the phases learn about that function (merged and
//                         hoisted logs, the register copies of the region
//                         and of the translation cache, translated loads).
// FunctionInstrumenter::run (CairnPass.cpp) lists the phases in order. Its
// steps live in three files:
//   LogPlacement.cpp   which writes get a log, and where (loop hoisting,
//                      dominated-log elimination, merging in a block);
//   Writes.cpp         instrumenting writes: the region test and the log,
//                      stores (with the conversion of stored pointers),
//                      memory intrinsics, atomics, masked stores, write-set
//                      and libc calls;
//   Pointers.cpp       loaded pointers: translation back to addresses, the
//                      register copy of the cache, NULL-test threading.
// Options and counters are declared once, in CairnOptions.def.
//===----------------------------------------------------------------------===//
#ifndef CAIRN_PASS_INSTRUMENTER_H
#define CAIRN_PASS_INSTRUMENTER_H

#include "PassCommon.h"
#include "TraceInstrument.h"
#include "WriteSet.h"

#include <cctype>
#include <map>
#include <optional>

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/SSAUpdater.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

namespace cairn {

// A log that covers several stores of one block (cairn-merge-logs).
struct MergedLog {
  Value *Base;
  int64_t Begin, End;
  Value *InPM = nullptr; // the region test, once emitted; members reuse it
};

// compiler/rt's one-word translation cache (compiler/rt/cairn_cc_rt.h draws
// it): the key (a relative pointer's bits above CAIRN_ID_SHIFT) in the high
// half, the pool's region slot in the low half. Every piece of the pass that
// reads the word or builds a relative pointer from it goes through here.
struct CacheWord {
  // the word, read as the runtime writes it (relaxed, aligned)
  static LoadInst *load(IRBuilder<> &B, GlobalVariable *RaCache);
  static Value *key(IRBuilder<> &B, Value *Word);
  static Value *slot(IRBuilder<> &B, Value *Word);
  // a relative pointer's key, and an address's region slot (U = va - lo)
  static Value *keyOfRelative(IRBuilder<> &B, Value *Rel);
  static Value *slotOfOffset(IRBuilder<> &B, Value *U, const Twine &Name = "");
  // the relative pointer for U = va - lo in the pool whose key is Key
  static Value *relative(IRBuilder<> &B, Value *Key, Value *U);
  // D with va = rel + D (mod 2^64) for every rel of the cached pool:
  // lo + ((slot - key) << CAIRN_SLOT_SHIFT)
  static Value *delta(IRBuilder<> &B, Value *Lo, Value *Word, Value *Key);
};

// The module's declarations of the runtime, made once per module. A
// FunctionInstrumenter copies them (pointers and references only).
class ModuleRuntime : protected IRBasics {
public:
  ModuleRuntime(Module &M, const WriteSets &WS, StringConstants &Locations,
                const SmallPtrSetImpl<const Function *> &CairnFreeFns);
  // The functions of M whose calls cannot run cairn's runtime
  // (cairn-known-callees; LogPlacement.cpp).
  static void findCairnFreeFunctions(Module &M, SmallPtrSetImpl<const Function *> &Out);

protected:
  Module &M;
  const DataLayout &DL;
  LLVMContext &Ctx;
  const WriteSets &WS;
  StringConstants *Locations;
  const SmallPtrSetImpl<const Function *> *CairnFreeFns;
  FunctionCallee LogStore, Va2Ra, Ra2VaSlow, FixWords, PMWord, Ra2VaMiss, CmpxchgPtr,
      XchgPtr, CacheNote, Ra2VaWords, LogLanes, LanesToRel;
  GlobalVariable *RegionLo, *RegionHi, *RaCache, *Counts, *LogSkip;
  MDNode *Unlikely;
  bool MissPreservesRegs = false;
  // Persistent-heap mode: a pointer stored into PM that points outside the
  // region stays a virtual address (the heap is volatile in meaning). The
  // one flag every lenient conversion of the pass is given.
  bool Lenient;

  // (file, line) constants for the runtime's messages (CairnPass.cpp)
  std::pair<Value *, Value *> sourceLocation(Instruction *I);
  // calls that cannot run cairn's runtime (LogPlacement.cpp)
  bool cairnFreeByKnownCallee(const CallBase &CB) const;
  bool isBarrierFree(const Instruction &I) const;
};

// Instruments one function: make one, call run(), drop it.
class FunctionInstrumenter : ModuleRuntime {
public:
  // LI/SE/DT may be null (no loop hoisting).
  FunctionInstrumenter(const ModuleRuntime &MR, Function &Func, LoopInfo *LI,
                       ScalarEvolution *SE, DominatorTree *DT)
      : ModuleRuntime(MR), F(Func), LI(LI), SE(SE), DT(DT) {}
  bool run();

private:
  Function &F;
  LoopInfo *LI;
  ScalarEvolution *SE;
  DominatorTree *DT;

  // ---- log placement (LogPlacement.cpp) ----
  void chooseInstructionsToInstrument(
      SmallVectorImpl<Instruction *> &Writes,
      SmallVectorImpl<Instruction *> &PointerReads,
      DenseMap<Instruction *, MergedLog> &MergedAt,
      DenseMap<Instruction *, Instruction *> &Covered,
      const std::map<Instruction *, MergedLog> &Hoisted);
  void hoistLoopLogs(LoopInfo &LI, ScalarEvolution &SE,
                     DominatorTree &DT,
                     std::map<Instruction *, MergedLog> &Hoisted);
  void elimDominatedLogs(ArrayRef<Instruction *> Writes,
                         DenseMap<Instruction *, MergedLog> &MergedAt,
                         DenseMap<Instruction *, Instruction *> &Covered,
                         const std::map<Instruction *, MergedLog> &Hoisted,
                         std::map<Instruction *, MergedLog> &Dominated);
  void mergeLogsInBlock(BasicBlock &BB,
                        DenseMap<Instruction *, MergedLog> &MergedAt,
                        DenseMap<Instruction *, Instruction *> &Covered,
                        const std::map<Instruction *, MergedLog> &Hoisted);
  bool noBarrierBetween(Instruction *E, Instruction *L,
                        DenseMap<BasicBlock *, bool> &HasBarrier) const;

  // ---- the region test and the log (Writes.cpp) ----
  // the function's copy of the region's bounds (cairn-local-region), made
  // on the first region test
  bool KeepsLocalRegion = false;
  AllocaInst *LocalLo = nullptr, *LocalSize = nullptr;
  void setUpLocalRegion();
  void refreshLocalRegion(IRBuilder<> &B);
  Value *regionLo(IRBuilder<> &B);
  Value *emitInRegion(IRBuilder<> &B, Value *P);
  Value *regionCondition(Instruction *Before, Value *Addr, Where W);
  Instruction *thenBlockFor(Value *Cond, Instruction *Before);
  void emitLog(IRBuilder<> &B, Value *Addr, Value *Len, Instruction *LocI);
  void emitGuardedScan(Instruction *After, Value *Addr, Value *Len, Value *Cond,
                       Instruction *LocI);
  enum Counter { RegionTests, LogCalls, PointerLoadChecks, RelativeLoads,
                 RelativeStores };
  void count(IRBuilder<> &B, Counter C);

  // ---- writes (Writes.cpp) ----
  void instrumentStore(StoreInst *SI, const MergedLog *Merged);
  void storeRelativeInPM(StoreInst *SI, Value *InPM,
                         function_ref<Value *(Instruction *At)> Make);
  Value *emitVa2Ra(Instruction *Before, StoreInst *SI, Value *Addr, Value *Val,
                   Value *File, Value *Line);
  // pointer stores whose value is invariant in a loop (found before any
  // block is split): the loop, for NVL-C's conversion hoisting
  DenseMap<StoreInst *, Loop *> InvariantPtrStores;
  // an empty block on the edge into each such loop, made before any
  // instrumentation splits blocks (so nothing is ever inserted before it)
  DenseMap<Loop *, BasicBlock *> LoopEntry;
  // the hoisted conversion of a value before a loop: {relative or 0, region slot}
  DenseMap<std::pair<Loop *, Value *>, std::pair<Value *, Value *>> HoistedConv;
  std::pair<Value *, Value *> hoistedConversion(Loop *L, Value *Val);
  void findInvariantPtrStores(LoopInfo &LI, DominatorTree &DT);
  void instrumentMemIntrinsic(MemIntrinsic *MI);
  void instrumentAtomic(Instruction *I);
  void instrumentWriteSetCall(CallBase *CB, const WSFunction &WF);
  // llvm.masked.store, .scatter, .compressstore (the vectorizers'
  // conditional stores)
  void instrumentMaskedStore(IntrinsicInst *II);
  // the scanf family and strsep: calls go to compiler/rt's wrappers
  bool routeLibcCalls();
  // a longjmp out of a transaction (CairnPass.cpp)
  bool watchSetjmps();
  // a register copy's two slots (region bounds, cache), made SSA values
  // once all their uses are in (CairnPass.cpp)
  static void promoteToRegisters(Function &F, AllocaInst *A, AllocaInst *B);

  // ---- loaded pointers (Pointers.cpp) ----
  // loads of <N x ptr> (the vectorizers' loads of pointer arrays), also
  // masked loads, gathers and expand-loads
  SmallVector<Instruction *, 4> VecPointerReads;
  // the function's copy of the cache: key (rel >> CAIRN_ID_SHIFT it holds)
  // and the offset D with va = rel + D, as allocas promoted to registers at
  // the end
  AllocaInst *LocalKey = nullptr, *LocalD = nullptr;
  void setUpLocalCache();
  void refreshLocalCache(IRBuilder<> &B);
  void afterCallsThatMayChangeRuntime(SmallVectorImpl<Instruction *> &After,
                                      bool CountKept);
  void instrumentPointerRead(Instruction *I);
  void instrumentVectorPointerRead(Instruction *LI);
  Value *emitRa2Va(Instruction *Before, Value *Rel);
  Value *emitRa2VaDelta(Instruction *Before, Value *Rel);
  CallInst *callRa2VaMiss(IRBuilder<> &B, Value *Rel);
  // cairn-thread-null-tests: converted loads' merge phis and their values
  SmallVector<std::pair<PHINode *, Value *>, 16> ConvertedPhis;
  void threadNullTest(PHINode *Phi, Value *VA);
  // cairn-merge-sign-null-tests: a translated load's sign test, to merge
  // with the NULL test that follows it
  struct SignTest { Instruction *V; ICmpInst *IsRel; BasicBlock *Tail; Value *Bits; };
  SmallVector<SignTest, 16> SignTests;
  bool mergeSignNullTest(const SignTest &T);
  // folded translations: va (a gep) -> (loaded value, offset)
  DenseMap<Value *, std::pair<Value *, Value *>> FoldedVA;
  // -cairn-plain-loop-chains: pointer reads carried around a loop, and the
  // phis that carry them (not split into (value, offset))
  SmallPtrSet<Instruction *, 8> LoopCarried;
  SmallPtrSet<PHINode *, 8> CarrierPhis;
  void findLoopCarriedReads(ArrayRef<Instruction *> Reads);
  void splitTranslatedPhis();
  static void keepNullTestsOnBase(Value *VA, Value *Base);
};

} // namespace cairn

#endif
