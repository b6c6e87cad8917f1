//===- Instrumenter.h - the state and steps of cairn's pass -----*- C++ -*-===//
//
// CairnInstrumenter instruments one module (CairnPass.cpp drives it). Its
// steps live in four files:
//   CairnPass.cpp      options, counters, runtime entry points, the proofs
//                      (where a pointer can point), emission helpers, the
//                      per-function driver and the pass registration;
//   LogPlacement.cpp   which writes get a log, and where (loop hoisting,
//                      dominated-log elimination, merging in a block);
//   Writes.cpp         instrumenting stores, memory intrinsics, atomics and
//                      write-set calls;
//   Pointers.cpp       persistent pointers: conversions of stored pointers,
//                      translation of loaded ones, the register cache.
// Options and counters are defined once in CairnPass.cpp.
//===----------------------------------------------------------------------===//
#ifndef CAIRN_PASS_INSTRUMENTER_H
#define CAIRN_PASS_INSTRUMENTER_H

#include "TraceInstrument.h"
#include "WriteSet.h"

#include <cctype>
#include <map>
#include <optional>

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/SSAUpdater.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

namespace cairn {

using namespace llvm;

// ---- options (CairnPass.cpp) ----
extern llvm::cl::opt<bool> ClEnabled;
extern llvm::cl::opt<bool> ClSkipVolatile;
extern llvm::cl::opt<bool> ClSkipCheckPM;
extern llvm::cl::opt<bool> ClMergeLogs;
extern llvm::cl::opt<bool> ClElimDominatedLogs;
extern llvm::cl::opt<bool> ClHoistLoopLogs;
extern llvm::cl::opt<unsigned> ClHoistMaxStride;
extern llvm::cl::opt<bool> ClSkipNullConvert;
extern llvm::cl::opt<bool> ClSkipNullCompareLoads;
extern llvm::cl::opt<bool> ClInlineRa2Va;
extern llvm::cl::opt<bool> ClLocalRaCache;
extern llvm::cl::opt<bool> ClMissPreservesRegs;
extern llvm::cl::opt<bool> ClReadonlyCallsKeepCache;
extern llvm::cl::opt<bool> ClKnownCallees;
extern llvm::cl::opt<bool> ClThreadNullTests;
extern llvm::cl::opt<bool> ClMergeSignNullTests;
extern llvm::cl::opt<bool> ClFoldTranslation;
extern llvm::cl::opt<bool> ClPlainLoopChains;
extern llvm::cl::opt<bool> ClSplitPhis;
extern llvm::cl::opt<bool> ClInlineVa2Ra;
extern llvm::cl::opt<bool> ClHoistConversions;
extern llvm::cl::opt<bool> ClVectorPtrStores;
extern llvm::cl::opt<bool> ClScanWideStores;
extern llvm::cl::opt<bool> ClPersistentHeap;
extern llvm::cl::opt<bool> ClCount;
extern llvm::cl::opt<bool> ClPrintStats;
extern llvm::cl::list<std::string> ClWriteSets;

// ---- counters (CairnPass.cpp) ----
extern llvm::TrackingStatistic NumStores;
extern llvm::TrackingStatistic NumStoresVolatile;
extern llvm::TrackingStatistic NumChecksSkippedPM;
extern llvm::TrackingStatistic NumLogsMerged;
extern llvm::TrackingStatistic NumLogsDominated;
extern llvm::TrackingStatistic NumLoopLogsHoisted;
extern llvm::TrackingStatistic NumTranslationsFolded;
extern llvm::TrackingStatistic NumLoopChainsPlain;
extern llvm::TrackingStatistic NumPhisSplit;
extern llvm::TrackingStatistic NumIndexReassociated;
extern llvm::TrackingStatistic NumMissPreserve;
extern llvm::TrackingStatistic NumPtrStores;
extern llvm::TrackingStatistic NumVecPtrStores;
extern llvm::TrackingStatistic NumVecPtrLoads;
extern llvm::TrackingStatistic NumNullStores;
extern llvm::TrackingStatistic NumPtrLoads;
extern llvm::TrackingStatistic NumPtrLoadsNullOnly;
extern llvm::TrackingStatistic NumIntToPtr;
extern llvm::TrackingStatistic NumIntToPtrFloat;
extern llvm::TrackingStatistic NumRa2VaInline;
extern llvm::TrackingStatistic NumVa2RaInline;
extern llvm::TrackingStatistic NumConvHoisted;
extern llvm::TrackingStatistic NumLocalCache;
extern llvm::TrackingStatistic NumCacheKeptOverCall;
extern llvm::TrackingStatistic NumCallsCairnFree;
extern llvm::TrackingStatistic NumNullTestsThreaded;
extern llvm::TrackingStatistic NumSignNullMerged;
extern llvm::TrackingStatistic NumWideScans;
extern llvm::TrackingStatistic NumWideNotAddress;
extern llvm::TrackingStatistic NumMemIntrinsics;
extern llvm::TrackingStatistic NumAtomics;
extern llvm::TrackingStatistic NumWriteSetCalls;
extern llvm::TrackingStatistic NumLibcWrapped;
extern llvm::TrackingStatistic NumMaskedStores;

// Pointers declared `cairn_pm` (NVL-C style; the driver defines it as this
// address space) are PM by declaration, and clang refuses to mix them with
// plain pointers without a cast. x86 code generation treats the address
// space as flat memory; runtime calls take plain pointers.
inline constexpr unsigned PMAddrSpace = 7;

inline Value *flat(IRBuilder<> &B, Value *P) {
  auto *PT = dyn_cast<PointerType>(P->getType());
  if (!PT || PT->getAddressSpace() == 0)
    return P;
  return B.CreateAddrSpaceCast(P, PointerType::getUnqual(P->getContext()));
}


// What the pass can prove about where a pointer points.
enum class Where { Volatile, PM, Unknown };

// A log that covers several stores of one block (cairn-merge-logs).
struct MergedLog {
  Value *Base;
  int64_t Begin, End;
  Value *InPM = nullptr; // the region test, once emitted; members reuse it
};

class CairnInstrumenter {
public:
  CairnInstrumenter(Module &M, const cairn::WriteSets &WS)
      : M(M), DL(M.getDataLayout()), Ctx(M.getContext()), WS(WS) {
    initialize();
  }
  // LI/SE/DT may be null (no loop hoisting).
  bool watchSetjmps(Function &F);
  bool instrumentFunction(Function &F, LoopInfo *LI, ScalarEvolution *SE,
                          DominatorTree *DT);

private:
  Module &M;
  const DataLayout &DL;
  LLVMContext &Ctx;
  const cairn::WriteSets &WS;
  Type *Int64Ty, *Int32Ty;
  PointerType *PtrTy;
  FunctionCallee LogStore, Va2Ra, Ra2VaSlow, FixWords, PMWord, Ra2VaMiss, CmpxchgPtr, XchgPtr,
      CacheNote;
  bool MissPreservesRegs = false;
  // pointer stores whose value is invariant in a loop (found before any
  // block is split): the loop, for NVL-C's conversion hoisting
  DenseMap<StoreInst *, Loop *> InvariantPtrStores;
  // an empty block on the edge into each such loop, made before any
  // instrumentation splits blocks (so nothing is ever inserted before it)
  DenseMap<Loop *, BasicBlock *> LoopEntry;
  // the hoisted conversion of a value before a loop: {relative or 0, region slot}
  DenseMap<std::pair<Loop *, Value *>, std::pair<Value *, Value *>> HoistedConv;
  // the function's copy of the cache: key (rel >> 40 it holds) and the
  // offset D with va = rel + D, as allocas promoted to registers at the end
  AllocaInst *LocalKey = nullptr, *LocalD = nullptr;
  AllocaInst *LocalLo = nullptr, *LocalSize = nullptr;   // cairn-local-region
  Function *RegionFn = nullptr;   // set up on the first region test in it
  void afterCallsThatMayChangeRuntime(Function &F, SmallVectorImpl<Instruction *> &After,
                                      bool CountKept);
  void setUpLocalRegion(Function &F);
  void refreshLocalRegion(IRBuilder<> &B);
  Value *regionLo(IRBuilder<> &B);
  void refreshLocalCache(IRBuilder<> &B);
  void setUpLocalCache(Function &F);
  void finishLocalCache(Function &F);
  GlobalVariable *RegionLo, *RegionHi, *RaCache, *Counts;
  MDNode *Unlikely, *NoSanitize;
  StringMap<Constant *> Strings;

  void initialize();
  // calls that cannot run cairn's runtime (LogPlacement.cpp)
  SmallPtrSet<const Function *, 32> CairnFreeFns;
  void findCairnFreeFunctions();
  bool cairnFreeByKnownCallee(const CallBase &CB) const;
  bool isBarrierFree(const Instruction &I) const;
  bool noBarrierBetween(Instruction *E, Instruction *L,
                        DenseMap<BasicBlock *, bool> &HasBarrier) const;
  Where classify(Value *Ptr, unsigned Depth = 0);
  Where classifyObject(const Value *Obj, unsigned Depth);
  std::pair<Value *, Value *> sourceLocation(Instruction *I);
  Value *emitInRegion(IRBuilder<> &B, Value *P);
  Value *regionCondition(Instruction *Before, Value *Addr, Where W);
  Instruction *thenBlockFor(Value *Cond, Instruction *Before);
  void emitLog(IRBuilder<> &B, Value *Addr, Value *Len, Instruction *LocI);
  void emitGuardedScan(Instruction *After, Value *Addr, Value *Len, Value *Cond,
                       Instruction *LocI);

  void chooseInstructionsToInstrument(
      Function &F, SmallVectorImpl<Instruction *> &Writes,
      SmallVectorImpl<Instruction *> &PointerReads,
      DenseMap<Instruction *, MergedLog> &MergedAt,
      DenseMap<Instruction *, Instruction *> &Covered,
      const std::map<Instruction *, MergedLog> &Hoisted);
  void hoistLoopLogs(Function &F, LoopInfo &LI, ScalarEvolution &SE,
                     DominatorTree &DT,
                     std::map<Instruction *, MergedLog> &Hoisted);
  void elimDominatedLogs(Function &F, ArrayRef<Instruction *> Writes,
                         DenseMap<Instruction *, MergedLog> &MergedAt,
                         DenseMap<Instruction *, Instruction *> &Covered,
                         const std::map<Instruction *, MergedLog> &Hoisted,
                         std::map<Instruction *, MergedLog> &Dominated);
  void mergeLogsInBlock(BasicBlock &BB,
                        DenseMap<Instruction *, MergedLog> &MergedAt,
                        DenseMap<Instruction *, Instruction *> &Covered,
                        const std::map<Instruction *, MergedLog> &Hoisted);
  void instrumentStore(StoreInst *SI, const MergedLog *Merged);
  void storeRelativeInPM(StoreInst *SI, Value *InPM,
                         function_ref<Value *(Instruction *At)> Make);
  void instrumentPointerRead(Instruction *I);
  // loads of <N x ptr> (the vectorizers' loads of pointer arrays), also
  // masked loads, gathers and expand-loads
  SmallVector<Instruction *, 4> VecPointerReads;
  void instrumentVectorPointerRead(Instruction *LI);
  FunctionCallee Ra2VaWords;
  void threadNullTest(PHINode *Phi, Value *VA);
  // cairn-merge-sign-null-tests: a translated load's sign test, to merge
  // with the NULL test that follows it (Pointers.cpp)
  struct SignTest { Instruction *V; ICmpInst *IsRel; BasicBlock *Tail; Value *Bits; };
  SmallVector<SignTest, 16> SignTests;
  bool mergeSignNullTest(const SignTest &T);
  SmallVector<std::pair<PHINode *, Value *>, 16> ConvertedPhis;
  // folded translations: va (a gep) -> (loaded value, offset)
  DenseMap<Value *, std::pair<Value *, Value *>> FoldedVA;
  // -cairn-plain-loop-chains: pointer reads carried around a loop, and the
  // phis that carry them (not split into (value, offset))
  SmallPtrSet<Instruction *, 8> LoopCarried;
  SmallPtrSet<PHINode *, 8> CarrierPhis;
  void findLoopCarriedReads(Function &F, ArrayRef<Instruction *> Reads);
  void splitTranslatedPhis(Function &F);
  static void keepNullTestsOnBase(Value *VA, Value *Base);
  Value *emitRa2VaDelta(Instruction *Before, Value *Rel);
  Value *emitRa2Va(Instruction *Before, Value *Rel);
  CallInst *callRa2VaMiss(IRBuilder<> &B, Value *Rel);
  Value *emitVa2Ra(Instruction *Before, StoreInst *SI, Value *Addr, Value *Val,
                   Value *File, Value *Line);
  std::pair<Value *, Value *> hoistedConversion(Loop *L, Value *Val);
  void findInvariantPtrStores(Function &F, LoopInfo &LI, DominatorTree &DT);
  enum Counter { RegionTests, LogCalls, PointerLoadChecks, RelativeLoads,
                 RelativeStores };
  void count(IRBuilder<> &B, Counter C);
  void instrumentMemIntrinsic(MemIntrinsic *MI);
  void instrumentAtomic(Instruction *I);
  void instrumentWriteSetCall(CallBase *CB, const cairn::WSFunction &WF);
  // the scanf family and strsep: calls go to compiler/rt's wrappers
  bool routeLibcCalls(Function &F);
  // llvm.masked.store, .scatter, .compressstore (the vectorizers'
  // conditional stores)
  void instrumentMaskedStore(IntrinsicInst *II);
  FunctionCallee LogLanes, LanesToRel;
};


} // namespace cairn

#endif
