//===- CairnPass.cpp - cairn's instrumentation pass -------------------------===//
//
// cairn-cc loads this plugin and runs the pass after optimization
// (OptimizerLastEP), as the sanitizers do. It inserts:
//   - before every write that may reach persistent memory (store, memset,
//     memcpy, memmove, cmpxchg, atomicrmw, calls described by write-set
//     files), an inline region test and a call to cairn__log_store;
//   - at a pointer-typed store into PM, the relative form from
//     cairn__va2ra_checked (which also enforces pointer safety), and at a
//     pointer-typed load or inttoptr, the conversion back (cairn__ra2va);
//   - after byte copies and wide integer/vector stores into PM, a scan that
//     turns any copied virtual address of the PM region into relative form.
// The rest is handled by the run-time library (libcairn, compiler/rt).
// docs/compiler.md explains the decisions; every optimization below has a
// cl::opt to turn it off and a STATISTIC (cairn-cc -mllvm -stats).
//===----------------------------------------------------------------------===//
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
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/SSAUpdater.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

using namespace llvm;

#define DEBUG_TYPE "cairn"

// ---- options: one per optimization or policy -------------------------------
static cl::opt<bool> ClEnabled("cairn", cl::init(true),
                               cl::desc("Run cairn instrumentation at all"));
static cl::opt<bool> ClSkipVolatile(
    "cairn-skip-volatile", cl::init(true),
    cl::desc("Do not check writes proven to target the stack, globals or "
             "fresh malloc memory"));
static cl::opt<bool> ClSkipCheckPM(
    "cairn-skip-check-pm", cl::init(true),
    cl::desc("Call the undo log without a region test when the target is "
             "proven PM (cairn_alloc/cairn_root results, pointers loaded "
             "from PM)"));
static cl::opt<bool> ClMergeLogs(
    "cairn-merge-logs", cl::init(true),
    cl::desc("Log once for stores to one object in a block with no call "
             "between them (adjacent and redundant log elimination)"));
static cl::opt<bool> ClElimDominatedLogs(
    "cairn-elim-dominated-logs", cl::init(true),
    cl::desc("No log for a store whose range a dominating store already "
             "logged, in functions without calls (redundant-log elimination "
             "across blocks)"));
static cl::opt<bool> ClHoistLoopLogs(
    "cairn-hoist-loop-logs", cl::init(true),
    cl::desc("One log before a loop for the range a store in it writes over "
             "all iterations (Breeze Fig. 8), when the loop has no calls"));
static cl::opt<unsigned> ClHoistMaxStride(
    "cairn-hoist-max-stride", cl::init(64),
    cl::desc("Largest stride (bytes) of a store whose loop log is hoisted"));
static cl::opt<bool> ClSkipNullConvert(
    "cairn-skip-null-convert", cl::init(true),
    cl::desc("Store NULL pointers into PM without a conversion call"));
static cl::opt<bool> ClSkipNullCompareLoads(
    "cairn-skip-null-compare-loads", cl::init(true),
    cl::desc("No conversion for a loaded pointer only compared with NULL"));
static cl::opt<bool> ClInlineRa2Va(
    "cairn-inline-ra2va", cl::init(true),
    cl::desc("Translate relative pointers of the last-used pool inline "
             "(compiler/rt's one-word cache) instead of calling the runtime"));
static cl::opt<bool> ClLocalRaCache(
    "cairn-local-ra-cache", cl::init(true),
    cl::desc("Keep the translation cache's key and offset in registers within "
             "a function (reloaded after calls and misses)"));
static cl::opt<bool> ClReadonlyCallsKeepCache(
    "cairn-readonly-calls-keep-cache", cl::init(true),
    cl::desc("Keep the register copy of the translation cache across calls "
             "that only read memory (memcmp, strlen, ...): they cannot close "
             "or reopen a pool"));
static cl::opt<bool> ClThreadNullTests(
    "cairn-thread-null-tests", cl::init(true),
    cl::desc("A converted relative pointer is never NULL: its path skips the "
             "NULL test that follows the load (loop exits, if (p))"));
static cl::opt<bool> ClFoldTranslation(
    "cairn-fold-translation", cl::init(true),
    cl::desc("A converted pointer is the loaded value plus an offset that is 0 "
             "for a virtual address (va = v + d): the add folds into the "
             "addressing of the loads through it, off the pointer chain, and "
             "NULL tests test the loaded value"));
static cl::opt<bool> ClPlainLoopChains(
    "cairn-plain-loop-chains", cl::init(true),
    cl::desc("With -cairn-fold-translation: a pointer load whose value is "
             "carried to the next iteration of its loop (p = p->next) is not "
             "folded: its virtual value is used as loaded and only the "
             "relative path adds (indexed addressing on every hop costs a "
             "cycle on some CPUs)"));
static cl::opt<bool> ClSplitPhis(
    "cairn-split-translated-phis", cl::init(true),
    cl::desc("With -cairn-fold-translation: a pointer carried around a loop "
             "is kept as (loaded value, offset), so each hop's add still "
             "folds into addressing"));
static cl::opt<bool> ClInlineVa2Ra(
    "cairn-inline-va2ra", cl::init(true),
    cl::desc("Convert a pointer stored into the pool it points into inline "
             "(the same one-word cache) instead of calling the runtime"));
static cl::opt<bool> ClHoistConversions(
    "cairn-hoist-conversions", cl::init(true),
    cl::desc("NVL-C's pointer hoisting: convert a loop-invariant pointer "
             "stored into PM once, before the loop"));
static cl::opt<bool> ClScanWideStores(
    "cairn-scan-wide-stores", cl::init(true),
    cl::desc("Convert PM-region addresses hidden in 8-byte integer, vector "
             "and aggregate stores and byte copies into PM"));
static cl::opt<bool> ClPersistentHeap(
    "cairn-persistent-heap", cl::init(false),
    cl::desc("malloc memory lives in a pool (do not treat it as volatile)"));
static cl::opt<bool> ClCount(
    "cairn-count", cl::init(false),
    cl::desc("Count executed checks and conversions in cairn_cc__counts "
             "(compiler/rt prints them at exit when CAIRN_CC_COUNTS=FILE)"));
static cl::opt<bool> ClPrintStats(
    "cairn-stats", cl::init(false),
    cl::desc("Print the pass's counters to stderr (Debian's LLVM is built "
             "without -stats support)"));
static cl::list<std::string>
    ClWriteSets("cairn-wset", cl::desc("Write-set file (*.wset), repeatable"));

// ---- counters ---------------------------------------------------------------
ALWAYS_ENABLED_STATISTIC(NumStores, "stores instrumented (region test and/or log)");
ALWAYS_ENABLED_STATISTIC(NumStoresVolatile, "stores skipped: target proven volatile");
ALWAYS_ENABLED_STATISTIC(NumChecksSkippedPM, "region tests skipped: target proven PM");
ALWAYS_ENABLED_STATISTIC(NumLogsMerged, "log calls removed by merging within a block");
ALWAYS_ENABLED_STATISTIC(NumLogsDominated, "log calls removed: range logged by a dominating store");
ALWAYS_ENABLED_STATISTIC(NumLoopLogsHoisted, "loop stores logged once before the loop");
ALWAYS_ENABLED_STATISTIC(NumTranslationsFolded, "pointer loads translated as v + d (add folds into addressing)");
ALWAYS_ENABLED_STATISTIC(NumLoopChainsPlain, "loop-carried pointer loads left unfolded (plain chain)");
ALWAYS_ENABLED_STATISTIC(NumPhisSplit, "pointer phis of translated values kept as (value, offset)");
ALWAYS_ENABLED_STATISTIC(NumIndexReassociated, "variable offsets added to a translation's offset, not its address");
ALWAYS_ENABLED_STATISTIC(NumPtrStores, "pointer stores converted to relative form");
ALWAYS_ENABLED_STATISTIC(NumNullStores, "NULL pointer stores needing no conversion");
ALWAYS_ENABLED_STATISTIC(NumPtrLoads, "pointer loads converted back");
ALWAYS_ENABLED_STATISTIC(NumPtrLoadsNullOnly, "pointer loads only compared with NULL");
ALWAYS_ENABLED_STATISTIC(NumIntToPtr, "inttoptr converted back");
ALWAYS_ENABLED_STATISTIC(NumRa2VaInline, "relative->virtual translations inlined");
ALWAYS_ENABLED_STATISTIC(NumVa2RaInline, "virtual->relative conversions of stored pointers inlined");
ALWAYS_ENABLED_STATISTIC(NumConvHoisted, "pointer conversions hoisted out of loops");
ALWAYS_ENABLED_STATISTIC(NumLocalCache, "functions keeping the translation cache in registers");
ALWAYS_ENABLED_STATISTIC(NumCacheKeptOverCall, "calls that only read memory: register cache kept");
ALWAYS_ENABLED_STATISTIC(NumNullTestsThreaded, "NULL tests skipped after converting a relative load");
ALWAYS_ENABLED_STATISTIC(NumWideScans, "wide stores and copies scanned for addresses");
ALWAYS_ENABLED_STATISTIC(NumWideNotAddress, "wide stores and copied fields proven not pointers");
ALWAYS_ENABLED_STATISTIC(NumMemIntrinsics, "memset/memcpy/memmove instrumented");
ALWAYS_ENABLED_STATISTIC(NumAtomics, "cmpxchg/atomicrmw instrumented");
ALWAYS_ENABLED_STATISTIC(NumWriteSetCalls, "calls instrumented from write-set files");

static TrackingStatistic *const AllStats[] = {
    &NumStores,     &NumStoresVolatile, &NumChecksSkippedPM, &NumLogsMerged,
    &NumLoopLogsHoisted, &NumLogsDominated,
    &NumPtrStores,  &NumNullStores,     &NumPtrLoads,        &NumPtrLoadsNullOnly,
    &NumIntToPtr,   &NumRa2VaInline,    &NumWideScans,       &NumMemIntrinsics,
    &NumAtomics,    &NumWriteSetCalls, &NumWideNotAddress, &NumVa2RaInline,
    &NumConvHoisted, &NumLocalCache, &NumCacheKeptOverCall, &NumNullTestsThreaded,
    &NumTranslationsFolded, &NumLoopChainsPlain, &NumPhisSplit, &NumIndexReassociated};

static void printStats(StringRef Module) {
  errs() << "===- cairn pass statistics: " << Module << " -===\n";
  for (TrackingStatistic *S : AllStats)
    errs() << format("%8u cairn - %s\n", S->getValue(), S->getDesc());
  cairn::printTraceStats();
}

namespace {

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
  void refreshLocalCache(IRBuilder<> &B);
  void setUpLocalCache(Function &F);
  void finishLocalCache(Function &F);
  GlobalVariable *RegionLo, *RegionHi, *RaCache, *Counts;
  MDNode *Unlikely, *NoSanitize;
  StringMap<Constant *> Strings;

  void initialize();
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
  void instrumentPointerRead(Instruction *I);
  void threadNullTest(PHINode *Phi, Value *VA);
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
};

} // namespace

// Runtime entry points are declared here, once (names fixed by cairn.h's
// "ABI for cairn-cc generated code" and compiler/rt/cairn_cc_rt.c).
void CairnInstrumenter::initialize() {
  Int64Ty = Type::getInt64Ty(Ctx);
  Int32Ty = Type::getInt32Ty(Ctx);
  PtrTy = PointerType::getUnqual(Ctx);
  Type *VoidTy = Type::getVoidTy(Ctx);
  LogStore = M.getOrInsertFunction("cairn__log_store", VoidTy, PtrTy, Int64Ty,
                                   PtrTy, Int32Ty);
  // Persistent-heap mode (compiler/rt/cairn_pheap.c) lets heap objects keep
  // pointers to DRAM; pointers into the heap still go relative.
  Va2Ra = M.getOrInsertFunction(ClPersistentHeap ? "cairn_cc__va2ra_lenient"
                                                 : "cairn__va2ra_checked",
                                Int64Ty, PtrTy, PtrTy, PtrTy, Int32Ty);
  Ra2VaSlow = M.getOrInsertFunction("cairn__ra2va_slow", PtrTy, Int64Ty);
  FixWords = M.getOrInsertFunction("cairn_cc__fix_words", VoidTy, PtrTy,
                                   Int64Ty, PtrTy, Int32Ty);
  PMWord = M.getOrInsertFunction("cairn_cc__pm_word", Int64Ty, PtrTy,
                                 Int64Ty, PtrTy, Int32Ty);
  CmpxchgPtr = M.getOrInsertFunction("cairn_cc__cmpxchg_ptr", PtrTy, PtrTy,
                                     PtrTy, PtrTy, PtrTy, Int32Ty);
  XchgPtr = M.getOrInsertFunction("cairn_cc__xchg_ptr", PtrTy, PtrTy, PtrTy,
                                  PtrTy, Int32Ty);
  auto Global = [&](const char *Name) {
    if (auto *G = M.getNamedGlobal(Name))
      return G;
    return new GlobalVariable(M, Int64Ty, false, GlobalValue::ExternalLinkage,
                              nullptr, Name);
  };
  RegionLo = Global("cairn__region_lo");
  RegionHi = Global("cairn__region_hi");
  RaCache = Global("cairn_cc__ra_cache");
  Counts = nullptr;
  if (ClCount) {
    Counts = M.getNamedGlobal("cairn_cc__counts");
    if (!Counts)
      Counts = new GlobalVariable(M, ArrayType::get(Int64Ty, 5), false,
                                  GlobalValue::ExternalLinkage, nullptr,
                                  "cairn_cc__counts");
  }
  Ra2VaMiss = M.getOrInsertFunction("cairn_cc__ra2va_miss", PtrTy, Int64Ty);
  CacheNote = M.getOrInsertFunction("cairn_cc__ra_cache_note", VoidTy, Int64Ty, PtrTy);
  Unlikely = MDBuilder(Ctx).createUnlikelyBranchWeights();
  NoSanitize = MDNode::get(Ctx, {});
}

// Pointers declared `cairn_pm` (NVL-C style; the driver defines it as this
// address space) are PM by declaration, and clang refuses to mix them with
// plain pointers without a cast. x86 code generation treats the address
// space as flat memory; runtime calls take plain pointers.
static constexpr unsigned PMAddrSpace = 7;

static Value *flat(IRBuilder<> &B, Value *P) {
  auto *PT = dyn_cast<PointerType>(P->getType());
  if (!PT || PT->getAddressSpace() == 0)
    return P;
  return B.CreateAddrSpaceCast(P, PointerType::getUnqual(P->getContext()));
}

// ---- proofs: where can this pointer point? ---------------------------------

static bool isMallocLike(StringRef Name) {
  return Name == "malloc" || Name == "calloc" || Name == "realloc" ||
         Name == "strdup" || Name == "strndup" || Name == "aligned_alloc" ||
         Name == "memalign" || Name == "valloc" || Name == "reallocarray";
}

Where CairnInstrumenter::classifyObject(const Value *Obj, unsigned Depth) {
  // Stack objects and globals are DRAM by construction: a pointer whose
  // underlying object is one of them cannot reach a pool (going out of an
  // object's bounds is undefined behaviour).
  if (isa<AllocaInst>(Obj) || isa<GlobalVariable>(Obj) ||
      isa<ConstantPointerNull>(Obj))
    return Where::Volatile;
  if (auto *CB = dyn_cast<CallBase>(Obj)) {
    if (Function *Callee = CB->getCalledFunction()) {
      StringRef N = Callee->getName();
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

Where CairnInstrumenter::classify(Value *Ptr, unsigned Depth) {
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

// ---- emission helpers ------------------------------------------------------

// (file, line) for the runtime's messages: the debug location when built
// with -g, else the function's name and line 0.
std::pair<Value *, Value *> CairnInstrumenter::sourceLocation(Instruction *I) {
  std::string File;
  unsigned Line = 0;
  if (const DILocation *Loc = I->getDebugLoc().get()) {
    File = Loc->getFilename().str();
    Line = Loc->getLine();
  }
  if (File.empty())
    File = ("function " + I->getFunction()->getName()).str();
  Constant *&S = Strings[File];
  if (!S) {
    IRBuilder<> B(Ctx);
    S = ConstantDataArray::getString(Ctx, File);
    auto *G = new GlobalVariable(M, S->getType(), true,
                                 GlobalValue::PrivateLinkage, S, ".cairn.loc");
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    G->setAlignment(Align(1));
    S = G;
  }
  return {S, ConstantInt::get(Int32Ty, Line)};
}

void CairnInstrumenter::count(IRBuilder<> &B, Counter C) {
  if (!Counts)
    return;
  Value *Slot = B.CreateConstInBoundsGEP2_64(Counts->getValueType(), Counts, 0, C);
  auto *Old = B.CreateLoad(Int64Ty, Slot);
  auto *St = B.CreateStore(B.CreateAdd(Old, B.getInt64(1)), Slot);
  Old->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  St->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
}

// The same test as cairn.h's cairn__in_region: (p - lo) < (hi - lo).
Value *CairnInstrumenter::emitInRegion(IRBuilder<> &B, Value *P) {
  count(B, RegionTests);
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo, "cairn.lo");
  auto *Hi = B.CreateLoad(Int64Ty, RegionHi, "cairn.hi");
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *PI = P->getType()->isPointerTy() ? B.CreatePtrToInt(P, Int64Ty) : P;
  return B.CreateICmpULT(B.CreateSub(PI, Lo), B.CreateSub(Hi, Lo), "cairn.inpm");
}

Value *CairnInstrumenter::regionCondition(Instruction *Before, Value *Addr,
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
Instruction *CairnInstrumenter::thenBlockFor(Value *Cond, Instruction *Before) {
  if (auto *CI = dyn_cast<ConstantInt>(Cond); CI && CI->isOne())
    return Before;
  return SplitBlockAndInsertIfThen(Cond, Before, false, Unlikely);
}

void CairnInstrumenter::emitLog(IRBuilder<> &B, Value *Addr, Value *Len,
                                Instruction *LocI) {
  auto [File, Line] = sourceLocation(LocI);
  count(B, LogCalls);
  B.CreateCall(LogStore,
               {flat(B, Addr), B.CreateZExtOrTrunc(Len, Int64Ty), File, Line});
}

// After `After`, if Cond: rewrite PM-region addresses in [Addr, Addr+Len).
void CairnInstrumenter::emitGuardedScan(Instruction *After, Value *Addr,
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

// ---- choosing what to instrument -------------------------------------------

// Calls that cannot begin or end a transaction or write memory we track.
static bool isBarrierFree(const Instruction &I) {
  auto *CB = dyn_cast<CallBase>(&I);
  if (!CB)
    return true;
  if (isa<DbgInfoIntrinsic>(CB))
    return true;
  if (Function *Callee = CB->getCalledFunction())
    if (Callee->getName() == "cairn__log_store" || // ours, from loop hoisting
        cairn::isTraceHook(Callee->getName()))
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
  return CB->doesNotAccessMemory();
}

// cairn-hoist-loop-logs (Breeze, seed 000 Fig. 8): a store that runs on
// every iteration of a loop with no calls, at an address advancing by a
// constant stride, writes [Begin, Begin + Len) over the whole loop, with
// Len = trip-count-1 * |stride| + size. One log of that range in the
// preheader replaces one per iteration; with no call in the loop the
// transaction cannot end before the loop does, so the early snapshot is as
// good. The preheader always enters the loop, so the range is written.
void CairnInstrumenter::hoistLoopLogs(
    Function &, LoopInfo &LI, ScalarEvolution &SE, DominatorTree &DT,
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
    if (llvm::any_of(L->blocks(), [](BasicBlock *BB) {
          return llvm::any_of(*BB, [](Instruction &I) { return !isBarrierFree(I); });
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
void CairnInstrumenter::elimDominatedLogs(
    Function &F, ArrayRef<Instruction *> Writes,
    DenseMap<Instruction *, MergedLog> &MergedAt,
    DenseMap<Instruction *, Instruction *> &Covered,
    const std::map<Instruction *, MergedLog> &Hoisted,
    std::map<Instruction *, MergedLog> &Dominated) {
  for (Instruction &I : instructions(F))
    if (!isBarrierFree(I))
      return;
  DominatorTree DT(F); // fresh: loop hoisting may have split blocks
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
          !DT.dominates(Earlier.SI, Later.SI))
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
void CairnInstrumenter::mergeLogsInBlock(
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

void CairnInstrumenter::chooseInstructionsToInstrument(
    Function &F, SmallVectorImpl<Instruction *> &Writes,
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
    } else if (auto *LI = dyn_cast<LoadInst>(&I)) {
      if (LI->getType()->isPointerTy())
        PointerReads.push_back(LI);
    } else if (isa<IntToPtrInst>(I)) {
      PointerReads.push_back(&I);
    }
  }
  if (ClMergeLogs)
    for (BasicBlock &BB : F)
      mergeLogsInBlock(BB, MergedAt, Covered, Hoisted);
}

// ---- instrumentation -------------------------------------------------------

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

// Should an untyped 8-byte (or wider) store be scanned for addresses?
// Type information first; without it, optimized code may have merged a
// pointer copy into it, -O0 code has not.
static bool mayStorePointerBits(StoreInst *SI) {
  if (auto T = tbaaSaysPointer(SI->getMetadata(LLVMContext::MD_tbaa)))
    return *T;
  // clang lowers __atomic_store_n on pointers to an untyped i64 store even
  // at -O0; plain -O0 integer stores are C integers.
  if (SI->getFunction()->hasOptNone() && !SI->isAtomic())
    return false;
  return !SI->getValueOperand()->getType()->isIntegerTy() ||
         mayHoldAddress(SI->getValueOperand());
}

static StoreInst *cloneStoreWithValue(StoreInst *SI, Value *V,
                                      Instruction *Before) {
  auto *NS = new StoreInst(V, SI->getPointerOperand(), SI->isVolatile(),
                           SI->getAlign(), SI->getOrdering(),
                           SI->getSyncScopeID(), Before);
  NS->copyMetadata(*SI);
  return NS;
}

// Merged: the log that already covers this store (cairn-merge-logs), if any.
void CairnInstrumenter::instrumentStore(StoreInst *SI, const MergedLog *Merged) {
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
    auto *CI = dyn_cast<ConstantInt>(InPM);
    if (CI && CI->isOne()) {
      IRBuilder<> B(SI);
      count(B, RelativeStores);
      Value *Rel = emitVa2Ra(SI, SI, Addr, Val, File, Line);
      cloneStoreWithValue(SI, Rel, SI);
      SI->eraseFromParent();
      return;
    }
    Instruction *ThenT, *ElseT;
    SplitBlockAndInsertIfThenElse(InPM, SI, &ThenT, &ElseT, Unlikely);
    IRBuilder<> B(ThenT);
    count(B, RelativeStores);
    Value *Rel = emitVa2Ra(ThenT, SI, Addr, Val, File, Line);
    cloneStoreWithValue(SI, Rel, ThenT);
    SI->moveBefore(ElseT);
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
    ++NumWideScans;
    IRBuilder<> B(SI);
    Value *Cond = B.CreateAnd(InPM, emitInRegion(B, Val));
    BasicBlock *Head = SI->getParent();
    Instruction *T = SplitBlockAndInsertIfThen(Cond, SI, false, Unlikely);
    IRBuilder<> TB(T);
    auto [File, Line] = sourceLocation(SI);
    Value *Rel = TB.CreateCall(PMWord, {flat(TB, Addr), Val, File, Line});
    IRBuilder<> PB(SI);
    PHINode *Phi = PB.CreatePHI(Int64Ty, 2);
    Phi->addIncoming(Val, Head);
    Phi->addIncoming(Rel, T->getParent());
    SI->setOperand(0, Phi);
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

// Relative value -> address, before Before (see compiler/rt's cache layout).
// Virtual -> relative for a pointer stored into PM. Inline when the value
// lies in the same 1-TiB region slot as the slot written (so in the same
// pool) and that slot is the one compiler/rt's cache holds:
//   rel = (cache >> 32) << 40 | (va - lo) & (2^40 - 1)
// Anything else (NULL, DRAM, another pool, a cache miss) calls the runtime,
// which checks and reports with file:line as before, and the miss refills
// the cache. NVL-C's pointer hoisting: for a value invariant in the loop,
// the value's half is computed once before the loop and each iteration
// only compares the slot's region slot.
Value *CairnInstrumenter::emitVa2Ra(Instruction *Before, StoreInst *SI,
                                    Value *Addr, Value *Val, Value *File,
                                    Value *Line) {
  IRBuilder<> B(Before);
  if (!ClInlineVa2Ra)
    return B.CreateCall(Va2Ra, {flat(B, Addr), flat(B, Val), File, Line});
  ++NumVa2RaInline;
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *SlotOfAddr = B.CreateLShr(
      B.CreateSub(B.CreatePtrToInt(flat(B, Addr), Int64Ty), Lo), 40);
  Value *HoistRel = nullptr, *Hit = nullptr;
  if (ClHoistConversions)
    if (Loop *L = InvariantPtrStores.lookup(SI)) {
      auto [HRel, HSlot] = hoistedConversion(L, Val);
      if (HRel) {
        HoistRel = HRel;
        Hit = B.CreateAnd(B.CreateICmpNE(HRel, B.getInt64(0)),
                          B.CreateICmpEQ(HSlot, SlotOfAddr));
      }
    }
  if (HoistRel) {
    // hoisted: the value's conversion is known unless the cache missed then
    Instruction *HitT, *MissT;
    SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
    IRBuilder<> MB(MissT);
    Value *Slow = MB.CreateCall(Va2Ra, {flat(MB, Addr), flat(MB, Val), File, Line});
    MB.CreateCall(CacheNote, {Slow, flat(MB, Val)});
    IRBuilder<> JB(Before);
    PHINode *Phi = JB.CreatePHI(Int64Ty, 2);
    Phi->addIncoming(HoistRel, HitT->getParent());
    Phi->addIncoming(Slow, MissT->getParent());
    return Phi;
  }
  Value *U = B.CreateSub(B.CreatePtrToInt(flat(B, Val), Int64Ty), Lo);
  Value *SlotOfVal = B.CreateLShr(U, 40);
  LoadInst *Cache = B.CreateLoad(Int64Ty, RaCache, "cairn.racache");
  Cache->setAtomic(AtomicOrdering::Monotonic);
  Cache->setAlignment(Align(8));
  Value *Key = B.CreateLShr(Cache, 32);
  Hit = B.CreateAnd(
      B.CreateAnd(B.CreateICmpEQ(SlotOfVal, SlotOfAddr),
                  B.CreateICmpEQ(SlotOfVal, B.CreateAnd(Cache, 0xffffffffULL))),
      B.CreateICmpNE(Key, B.getInt64(0)));
  Instruction *HitT, *MissT;
  SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
  IRBuilder<> HB(HitT);
  Value *Fast = HB.CreateOr(HB.CreateShl(Key, 40), HB.CreateAnd(U, (1ULL << 40) - 1));
  IRBuilder<> MB(MissT);
  Value *Slow = MB.CreateCall(Va2Ra, {flat(MB, Addr), flat(MB, Val), File, Line});
  MB.CreateCall(CacheNote, {Slow, flat(MB, Val)});
  IRBuilder<> JB(Before);
  PHINode *Phi = JB.CreatePHI(Int64Ty, 2);
  Phi->addIncoming(Fast, HitT->getParent());
  Phi->addIncoming(Slow, MissT->getParent());
  return Phi;
}

// Before the loop, once per (loop, value): the value's relative form if the
// cache holds its region slot (else 0), and that region slot. No call and no
// side effect, so it runs even when the loop body never stores.
std::pair<Value *, Value *> CairnInstrumenter::hoistedConversion(Loop *L, Value *Val) {
  auto Key = std::make_pair(L, Val);
  if (auto It = HoistedConv.find(Key); It != HoistedConv.end())
    return It->second;
  std::pair<Value *, Value *> R{nullptr, nullptr};
  if (BasicBlock *PH = LoopEntry.lookup(L)) {
    IRBuilder<> B(PH->getTerminator());
    auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
    Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
    Value *U = B.CreateSub(B.CreatePtrToInt(flat(B, Val), Int64Ty), Lo);
    Value *Slot = B.CreateLShr(U, 40, "cairn.hoist.slot");
    LoadInst *Cache = B.CreateLoad(Int64Ty, RaCache, "cairn.racache");
    Cache->setAtomic(AtomicOrdering::Monotonic);
    Cache->setAlignment(Align(8));
    Value *CKey = B.CreateLShr(Cache, 32);
    Value *Hit = B.CreateAnd(B.CreateICmpEQ(Slot, B.CreateAnd(Cache, 0xffffffffULL)),
                             B.CreateICmpNE(CKey, B.getInt64(0)));
    Value *Rel = B.CreateSelect(
        Hit, B.CreateOr(B.CreateShl(CKey, 40), B.CreateAnd(U, (1ULL << 40) - 1)),
        B.getInt64(0), "cairn.hoist.rel");
    R = {Rel, Slot};
    ++NumConvHoisted;
  }
  HoistedConv[Key] = R;
  return R;
}

// Pointer stores whose value is defined outside their innermost loop.
void CairnInstrumenter::findInvariantPtrStores(Function &F, LoopInfo &LI,
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

// The function's copy of compiler/rt's translation cache. Loaded at entry,
// after every call that is not cairn's own (a call may close or reopen a
// pool, which empties the global cache) and after a miss (which refills
// it); a stale copy is never wrong while its pool is open, since a cache
// entry pairs a pool id with that pool's slot, and it is at worst a miss.
void CairnInstrumenter::refreshLocalCache(IRBuilder<> &B) {
  LoadInst *Cache = B.CreateLoad(Int64Ty, RaCache, "cairn.racache");
  Cache->setAtomic(AtomicOrdering::Monotonic);
  Cache->setAlignment(Align(8));
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo);
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Value *Key = B.CreateLShr(Cache, 32);
  Value *D = B.CreateAdd(
      Lo, B.CreateShl(B.CreateSub(B.CreateAnd(Cache, 0xffffffffULL), Key), 40));
  B.CreateStore(Key, LocalKey);
  B.CreateStore(D, LocalD);
}

void CairnInstrumenter::setUpLocalCache(Function &F) {
  LocalKey = LocalD = nullptr;
  if (!ClLocalRaCache || !ClInlineRa2Va || F.hasOptNone())
    return;
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> AB(&Entry, Entry.getFirstInsertionPt());
  ++NumLocalCache;
  LocalKey = AB.CreateAlloca(Int64Ty, nullptr, "cairn.key");
  LocalD = AB.CreateAlloca(Int64Ty, nullptr, "cairn.d");
  refreshLocalCache(AB);
  // after each call that may run other code (not cairn's own entry points,
  // not intrinsics): it may have closed or reopened a pool
  SmallVector<CallBase *, 16> Calls;
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I)) {
      if (isa<IntrinsicInst>(CB) || CB->isInlineAsm())
        continue;
      if (Function *Callee = CB->getCalledFunction()) {
        StringRef N = Callee->getName();
        if (N.starts_with("cairn__") || N.starts_with("cairn_cc__"))
          continue;
      }
      // a callee that writes no memory cannot close or reopen a pool (both
      // write the runtime's tables); memcmp/bcmp/strlen are such calls until
      // code generation expands them, often inside lookup loops
      if (ClReadonlyCallsKeepCache && CB->onlyReadsMemory()) {
        ++NumCacheKeptOverCall;
        continue;
      }
      Calls.push_back(CB);
    }
  for (CallBase *CB : Calls) {
    if (isa<InvokeInst>(CB) || CB->isTerminator())
      continue;                    // C has no invokes; be safe anyway
    IRBuilder<> B(CB->getNextNode());
    refreshLocalCache(B);
  }
}

void CairnInstrumenter::finishLocalCache(Function &F) {
  if (!LocalKey)
    return;
  DominatorTree DT(F);
  SmallVector<AllocaInst *, 2> As{LocalKey, LocalD};
  PromoteMemToReg(As, DT);
  LocalKey = LocalD = nullptr;
}

Value *CairnInstrumenter::emitRa2Va(Instruction *Before, Value *Rel) {
  IRBuilder<> B(Before);
  count(B, RelativeLoads);
  if (!ClInlineRa2Va)
    return B.CreateCall(Ra2VaSlow, {Rel});
  ++NumRa2VaInline;
  if (LocalKey) {
    // the function's register copy: shr, cmp, add on a hit
    Value *Hit = B.CreateICmpEQ(B.CreateLoad(Int64Ty, LocalKey), B.CreateLShr(Rel, 40));
    Instruction *HitT, *MissT;
    SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
    IRBuilder<> HB(HitT);
    Value *Fast = HB.CreateIntToPtr(HB.CreateAdd(Rel, HB.CreateLoad(Int64Ty, LocalD)), PtrTy);
    IRBuilder<> MB(MissT);
    Value *Slow = MB.CreateCall(Ra2VaMiss, {Rel});
    refreshLocalCache(MB);                   // the miss refilled the global cache
    IRBuilder<> JB(Before);
    PHINode *Phi = JB.CreatePHI(PtrTy, 2);
    Phi->addIncoming(Fast, HitT->getParent());
    Phi->addIncoming(Slow, MissT->getParent());
    return Phi;
  }
  LoadInst *Cache = B.CreateLoad(Int64Ty, RaCache, "cairn.racache");
  Cache->setAtomic(AtomicOrdering::Monotonic);
  Cache->setAlignment(Align(8));
  Value *Key = B.CreateLShr(Cache, 32);
  Value *Hit = B.CreateICmpEQ(Key, B.CreateLShr(Rel, 40));
  Instruction *HitT, *MissT;
  SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
  IRBuilder<> HB(HitT);
  // va = lo + (slot << 40) + (rel & (2^40 - 1)) = rel + D with
  // D = lo + ((slot - key) << 40) (mod 2^64): D does not depend on rel, so a
  // pointer chase pays one add per hop for the translation.
  Value *Lo = HB.CreateLoad(Int64Ty, RegionLo);
  Value *D = HB.CreateAdd(
      Lo, HB.CreateShl(HB.CreateSub(HB.CreateAnd(Cache, 0xffffffffULL), Key), 40));
  Value *Fast = HB.CreateIntToPtr(HB.CreateAdd(Rel, D), PtrTy);
  IRBuilder<> MB(MissT);
  Value *Slow = MB.CreateCall(Ra2VaMiss, {Rel});
  IRBuilder<> JB(Before);
  PHINode *Phi = JB.CreatePHI(PtrTy, 2);
  Phi->addIncoming(Fast, HitT->getParent());
  Phi->addIncoming(Slow, MissT->getParent());
  return Phi;
}

// The same translation as emitRa2Va, as the offset d with va = rel + d (mod
// 2^64): D on a hit, whatever the runtime returned minus rel on a miss.
Value *CairnInstrumenter::emitRa2VaDelta(Instruction *Before, Value *Rel) {
  IRBuilder<> B(Before);
  count(B, RelativeLoads);
  auto SlowDelta = [&](IRBuilder<> &MB, FunctionCallee F) {
    Value *Slow = MB.CreateCall(F, {Rel});
    return MB.CreateSub(MB.CreatePtrToInt(Slow, Int64Ty), Rel);
  };
  if (!ClInlineRa2Va)
    return SlowDelta(B, Ra2VaSlow);
  ++NumRa2VaInline;
  Value *Key, *D;
  if (LocalKey) {
    Key = B.CreateLoad(Int64Ty, LocalKey);
    D = nullptr;
  } else {
    LoadInst *Cache = B.CreateLoad(Int64Ty, RaCache, "cairn.racache");
    Cache->setAtomic(AtomicOrdering::Monotonic);
    Cache->setAlignment(Align(8));
    Key = B.CreateLShr(Cache, 32);
    Value *Lo = B.CreateLoad(Int64Ty, RegionLo);
    D = B.CreateAdd(Lo, B.CreateShl(B.CreateSub(B.CreateAnd(Cache, 0xffffffffULL), Key), 40));
  }
  Value *Hit = B.CreateICmpEQ(Key, B.CreateLShr(Rel, 40));
  Instruction *HitT, *MissT;
  SplitBlockAndInsertIfThenElse(Hit, Before, &HitT, &MissT);
  IRBuilder<> HB(HitT);
  Value *Fast = D ? D : HB.CreateLoad(Int64Ty, LocalD);
  IRBuilder<> MB(MissT);
  Value *SlowD = SlowDelta(MB, Ra2VaMiss);
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
void CairnInstrumenter::keepNullTestsOnBase(Value *VA, Value *Base) {
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
void CairnInstrumenter::findLoopCarriedReads(Function &F,
                                             ArrayRef<Instruction *> Reads) {
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
void CairnInstrumenter::splitTranslatedPhis(Function &F) {
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

// load ptr / inttoptr: a value with bit 63 set is relative; turn it back.
void CairnInstrumenter::instrumentPointerRead(Instruction *I) {
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

// The block after a converted load often holds only the merge phi and a NULL
// test (`for (; p; p = p->next)`, `if (head)`). A converted relative value is
// never NULL (an address inside a pool, or a small negative sentinel), so its
// path branches straight to the non-NULL successor: in PM one test fewer per
// hop, after the load that waits for memory. Done once all loads of the
// function are instrumented (a later load may split the block).
void CairnInstrumenter::threadNullTest(PHINode *Phi, Value *VA) {
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

void CairnInstrumenter::instrumentMemIntrinsic(MemIntrinsic *MI) {
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

void CairnInstrumenter::instrumentAtomic(Instruction *I) {
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
    auto toPM = [&](unsigned OpNo) {
      auto *C = B.CreateCall(PMWord, {flat(B, Addr), I->getOperand(OpNo), File, Line});
      C->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
      I->setOperand(OpNo, C);
    };
    if (RMW) {
      toPM(1);
    } else {
      toPM(1);
      toPM(2);
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

void CairnInstrumenter::instrumentWriteSetCall(CallBase *CB,
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
    emitLog(B, Dst, cairn::emitWriteSetSize(B, CB, R.Size), CB);
  }
  if (Any)
    ++NumWriteSetCalls;
}

bool CairnInstrumenter::instrumentFunction(Function &F, LoopInfo *LI,
                                           ScalarEvolution *SE,
                                           DominatorTree *DT) {
  if (F.isDeclaration() || F.getName().starts_with("cairn_") ||
      F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation))
    return false;
  SmallVector<Instruction *, 32> Writes, PointerReads;
  DenseMap<Instruction *, MergedLog> MergedAt;
  DenseMap<Instruction *, Instruction *> Covered;
  std::map<Instruction *, MergedLog> Hoisted;
  if (ClHoistLoopLogs && LI && SE && DT)
    hoistLoopLogs(F, *LI, *SE, *DT, Hoisted);
  InvariantPtrStores.clear();
  LoopEntry.clear();
  HoistedConv.clear();
  if (ClHoistConversions && ClInlineVa2Ra && LI && DT)
    findInvariantPtrStores(F, *LI, *DT);
  chooseInstructionsToInstrument(F, Writes, PointerReads, MergedAt, Covered,
                                 Hoisted);
  std::map<Instruction *, MergedLog> Dominated;
  if (ClElimDominatedLogs && !F.hasOptNone())
    elimDominatedLogs(F, Writes, MergedAt, Covered, Hoisted, Dominated);

  for (auto &[First, ML] : MergedAt) {
    Where W = classify(ML.Base);
    if (W == Where::Volatile)
      continue;
    IRBuilder<> B(First);
    Value *Addr = ML.Begin ? B.CreateConstGEP1_64(B.getInt8Ty(), ML.Base,
                                                  ML.Begin)
                           : ML.Base;
    // An object does not straddle the region's bounds, so the test on its
    // first byte holds for every member store.
    ML.InPM = regionCondition(First, Addr, W);
    IRBuilder<> LB(thenBlockFor(ML.InPM, First));
    emitLog(LB, Addr, ConstantInt::get(Int64Ty, ML.End - ML.Begin), First);
  }
  for (Instruction *I : Writes) {
    if (auto *SI = dyn_cast<StoreInst>(I))
      instrumentStore(SI, Hoisted.count(SI)     ? &Hoisted[SI]
                          : Covered.count(SI)   ? &MergedAt[Covered[SI]]
                          : Dominated.count(SI) ? &Dominated[SI]
                                                : nullptr);
    else if (auto *MI = dyn_cast<MemIntrinsic>(I))
      instrumentMemIntrinsic(MI);
    else if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
      instrumentAtomic(I);
    else if (auto *CB = dyn_cast<CallBase>(I))
      instrumentWriteSetCall(
          CB, *WS.lookup(CB->getCalledFunction()->getName().str()));
  }
  if (!PointerReads.empty())
    setUpLocalCache(F);
  ConvertedPhis.clear();
  LoopCarried.clear();
  CarrierPhis.clear();
  if (ClFoldTranslation && ClPlainLoopChains && !F.hasOptNone())
    findLoopCarriedReads(F, PointerReads);
  for (Instruction *I : PointerReads)
    instrumentPointerRead(I);
  for (auto [Phi, VA] : ConvertedPhis)
    threadNullTest(Phi, VA);
  ConvertedPhis.clear();
  if (ClSplitPhis)
    splitTranslatedPhis(F);
  FoldedVA.clear();
  finishLocalCache(F);
  return !Writes.empty() || !PointerReads.empty();
}

// ---- the pass and its registration -----------------------------------------

namespace {
struct CairnPass : PassInfoMixin<CairnPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    if (!ClEnabled)
      return PreservedAnalyses::all();
    static cairn::WriteSets WS;
    static bool Loaded = false;
    if (!Loaded) {
      Loaded = true;
      for (const std::string &Path : ClWriteSets) {
        std::string Err;
        if (!WS.parseFile(Path, Err))
          report_fatal_error(Twine("cairn: ") + Err, false);
      }
    }
    bool Traced = cairn::instrumentTraceStores(M, WS); // first: its calls follow the writes
    bool Changed = Traced;
    CairnInstrumenter Inst(M, WS);
    auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    for (Function &F : M) {
      if (F.isDeclaration())
        continue;
      if (Traced)
        FAM.invalidate(F, PreservedAnalyses::none());
      bool Opt = ClHoistLoopLogs && !F.hasOptNone();
      bool FChanged = Inst.instrumentFunction(
          F, Opt ? &FAM.getResult<LoopAnalysis>(F) : nullptr,
          Opt ? &FAM.getResult<ScalarEvolutionAnalysis>(F) : nullptr,
          Opt ? &FAM.getResult<DominatorTreeAnalysis>(F) : nullptr);
      if (FChanged)
        FAM.invalidate(F, PreservedAnalyses::none());
      Changed |= FChanged;
    }
    if (ClPrintStats)
      printStats(M.getSourceFileName());
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};
} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "cairn", "0.1", [](PassBuilder &PB) {
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(CairnPass());
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "cairn")
                    return false;
                  MPM.addPass(CairnPass());
                  return true;
                });
          }};
}
