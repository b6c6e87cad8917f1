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
#include "Instrumenter.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

#define DEBUG_TYPE "cairn"

namespace cairn {

// ---- options: one per optimization or policy -------------------------------
cl::opt<bool> ClEnabled("cairn", cl::init(true),
                        cl::desc("Run cairn instrumentation at all"));
cl::opt<bool> ClSkipVolatile(
    "cairn-skip-volatile", cl::init(true),
    cl::desc("Do not check writes proven to target the stack, globals or "
             "fresh malloc memory"));
cl::opt<bool> ClSkipCheckPM(
    "cairn-skip-check-pm", cl::init(true),
    cl::desc("Call the undo log without a region test when the target is "
             "proven PM (cairn_alloc/cairn_root results, pointers loaded "
             "from PM)"));
cl::opt<bool> ClMergeLogs(
    "cairn-merge-logs", cl::init(true),
    cl::desc("Log once for stores to one object in a block with no call "
             "between them (adjacent and redundant log elimination)"));
cl::opt<bool> ClElimDominatedLogs(
    "cairn-elim-dominated-logs", cl::init(true),
    cl::desc("No log for a store whose range a dominating store already "
             "logged, in functions without calls (redundant-log elimination "
             "across blocks)"));
cl::opt<bool> ClHoistLoopLogs(
    "cairn-hoist-loop-logs", cl::init(true),
    cl::desc("One log before a loop for the range a store in it writes over "
             "all iterations (Breeze Fig. 8), when the loop has no calls"));
cl::opt<unsigned> ClHoistMaxStride(
    "cairn-hoist-max-stride", cl::init(64),
    cl::desc("Largest stride (bytes) of a store whose loop log is hoisted"));
cl::opt<bool> ClSkipNullConvert(
    "cairn-skip-null-convert", cl::init(true),
    cl::desc("Store NULL pointers into PM without a conversion call"));
cl::opt<bool> ClSkipNullCompareLoads(
    "cairn-skip-null-compare-loads", cl::init(true),
    cl::desc("No conversion for a loaded pointer only compared with NULL"));
cl::opt<bool> ClInlineRa2Va(
    "cairn-inline-ra2va", cl::init(true),
    cl::desc("Translate relative pointers of the last-used pool inline "
             "(compiler/rt's one-word cache) instead of calling the runtime"));
cl::opt<bool> ClLocalRaCache(
    "cairn-local-ra-cache", cl::init(true),
    cl::desc("Keep the translation cache's key and offset in registers within "
             "a function (reloaded after calls and misses)"));
cl::opt<bool> ClReadonlyCallsKeepCache(
    "cairn-readonly-calls-keep-cache", cl::init(true),
    cl::desc("Keep the register copy of the translation cache across calls "
             "that only read memory (memcmp, strlen, ...): they cannot close "
             "or reopen a pool"));
cl::opt<bool> ClKnownCallees(
    "cairn-known-callees", cl::init(true),
    cl::desc("Calls proven unable to run cairn's runtime (callees that write "
             "only memory their arguments point to, and this file's functions "
             "whose own calls are all such) neither end log merging, "
             "dominated-log elimination and loop log hoisting, nor make the "
             "register cache reload"));
cl::opt<bool> ClThreadNullTests(
    "cairn-thread-null-tests", cl::init(true),
    cl::desc("A converted relative pointer is never NULL: its path skips the "
             "NULL test that follows the load (loop exits, if (p))"));
cl::opt<bool> ClMergeSignNullTests(
    "cairn-merge-sign-null-tests", cl::init(true),
    cl::desc("A loaded pointer followed by a NULL test takes one signed test "
             "(<= 0: NULL or relative) on its common path instead of a sign "
             "test and a NULL test"));
cl::opt<bool> ClFoldTranslation(
    "cairn-fold-translation", cl::init(false),
    cl::desc("A converted pointer is the loaded value plus an offset that is 0 "
             "for a virtual address (va = v + d): the add folds into the "
             "addressing of the loads through it, off the pointer chain, and "
             "NULL tests test the loaded value. Off by default: on AMD Zen 3 "
             "the zero offset kept in a register cost DRAM data instructions "
             "and bought PM data nothing (docs/compiler.md)"));
cl::opt<bool> ClPlainLoopChains(
    "cairn-plain-loop-chains", cl::init(true),
    cl::desc("With -cairn-fold-translation: a pointer load whose value is "
             "carried to the next iteration of its loop (p = p->next) is not "
             "folded: its virtual value is used as loaded and only the "
             "relative path adds (indexed addressing on every hop costs a "
             "cycle on some CPUs)"));
cl::opt<bool> ClSplitPhis(
    "cairn-split-translated-phis", cl::init(true),
    cl::desc("With -cairn-fold-translation: a pointer carried around a loop "
             "is kept as (loaded value, offset), so each hop's add still "
             "folds into addressing"));
cl::opt<bool> ClInlineVa2Ra(
    "cairn-inline-va2ra", cl::init(true),
    cl::desc("Convert a pointer stored into the pool it points into inline "
             "(the same one-word cache) instead of calling the runtime"));
cl::opt<bool> ClHoistConversions(
    "cairn-hoist-conversions", cl::init(true),
    cl::desc("NVL-C's pointer hoisting: convert a loop-invariant pointer "
             "stored into PM once, before the loop"));
cl::opt<bool> ClVectorPtrStores(
    "cairn-vector-ptr-stores", cl::init(true),
    cl::desc("Convert each pointer of a vector-of-pointers store into PM "
             "inline before the store (else: store, then rewrite the words "
             "with a runtime call)"));
cl::opt<bool> ClScanWideStores(
    "cairn-scan-wide-stores", cl::init(true),
    cl::desc("Convert PM-region addresses hidden in 8-byte integer, vector "
             "and aggregate stores and byte copies into PM"));
cl::opt<bool> ClPersistentHeap(
    "cairn-persistent-heap", cl::init(false),
    cl::desc("malloc memory lives in a pool (do not treat it as volatile)"));
cl::opt<bool> ClLocalRegion(
    "cairn-local-region", cl::init(true),
    cl::desc("Keep the PM region's bounds in registers in each function "
             "(read at entry and after calls), not reloaded at every region test"));
cl::opt<bool> ClMissPreservesRegs(
    "cairn-miss-preserves-regs", cl::init(true),
    cl::desc("Call the translation cache's miss with the preserve_most "
             "convention on x86-64, so code around a translated load keeps "
             "its values in registers"));
cl::opt<bool> ClCount(
    "cairn-count", cl::init(false),
    cl::desc("Count executed checks and conversions in cairn_cc__counts "
             "(compiler/rt prints them at exit when CAIRN_CC_COUNTS=FILE)"));
cl::opt<bool> ClPrintStats(
    "cairn-stats", cl::init(false),
    cl::desc("Print the pass's counters to stderr (Debian's LLVM is built "
             "without -stats support)"));
cl::list<std::string>
    ClWriteSets("cairn-wset", cl::desc("Write-set file (*.wset), repeatable"));


// ---- counters ---------------------------------------------------------------
llvm::TrackingStatistic NumStores = {DEBUG_TYPE, "NumStores", "stores instrumented (region test and/or log)"};
llvm::TrackingStatistic NumStoresVolatile = {DEBUG_TYPE, "NumStoresVolatile", "stores skipped: target proven volatile"};
llvm::TrackingStatistic NumChecksSkippedPM = {DEBUG_TYPE, "NumChecksSkippedPM", "region tests skipped: target proven PM"};
llvm::TrackingStatistic NumLogsMerged = {DEBUG_TYPE, "NumLogsMerged", "log calls removed by merging within a block"};
llvm::TrackingStatistic NumLogsDominated = {DEBUG_TYPE, "NumLogsDominated", "log calls removed: range logged by a dominating store"};
llvm::TrackingStatistic NumLoopLogsHoisted = {DEBUG_TYPE, "NumLoopLogsHoisted", "loop stores logged once before the loop"};
llvm::TrackingStatistic NumTranslationsFolded = {DEBUG_TYPE, "NumTranslationsFolded", "pointer loads translated as v + d (add folds into addressing)"};
llvm::TrackingStatistic NumLoopChainsPlain = {DEBUG_TYPE, "NumLoopChainsPlain", "loop-carried pointer loads left unfolded (plain chain)"};
llvm::TrackingStatistic NumPhisSplit = {DEBUG_TYPE, "NumPhisSplit", "pointer phis of translated values kept as (value, offset)"};
llvm::TrackingStatistic NumIndexReassociated = {DEBUG_TYPE, "NumIndexReassociated", "variable offsets added to a translation's offset, not its address"};
llvm::TrackingStatistic NumPtrStores = {DEBUG_TYPE, "NumPtrStores", "pointer stores converted to relative form"};
llvm::TrackingStatistic NumVecPtrLoads = {DEBUG_TYPE, "NumVecPtrLoads", "vector-of-pointer loads translated lane by lane"};
llvm::TrackingStatistic NumVecPtrStores = {DEBUG_TYPE, "NumVecPtrStores", "vector-of-pointer stores converted lane by lane"};
llvm::TrackingStatistic NumNullStores = {DEBUG_TYPE, "NumNullStores", "NULL pointer stores needing no conversion"};
llvm::TrackingStatistic NumPtrLoads = {DEBUG_TYPE, "NumPtrLoads", "pointer loads converted back"};
llvm::TrackingStatistic NumPtrLoadsNullOnly = {DEBUG_TYPE, "NumPtrLoadsNullOnly", "pointer loads only compared with NULL"};
llvm::TrackingStatistic NumIntToPtr = {DEBUG_TYPE, "NumIntToPtr", "inttoptr converted back"};
llvm::TrackingStatistic NumIntToPtrFloat = {DEBUG_TYPE, "NumIntToPtrFloat", "inttoptr of a floating-point value's bits left alone"};
llvm::TrackingStatistic NumRa2VaInline = {DEBUG_TYPE, "NumRa2VaInline", "relative->virtual translations inlined"};
llvm::TrackingStatistic NumVa2RaInline = {DEBUG_TYPE, "NumVa2RaInline", "virtual->relative conversions of stored pointers inlined"};
llvm::TrackingStatistic NumConvHoisted = {DEBUG_TYPE, "NumConvHoisted", "pointer conversions hoisted out of loops"};
llvm::TrackingStatistic NumLocalCache = {DEBUG_TYPE, "NumLocalCache", "functions keeping the translation cache in registers"};
llvm::TrackingStatistic NumCacheKeptOverCall = {DEBUG_TYPE, "NumCacheKeptOverCall", "calls that only read memory: register cache kept"};
llvm::TrackingStatistic NumCallsCairnFree = {DEBUG_TYPE, "NumCallsCairnFree", "calls proven not to run cairn's runtime (no barrier to logs or the cache)"};
llvm::TrackingStatistic NumSignNullMerged = {DEBUG_TYPE, "NumSignNullMerged", "sign and NULL tests of a loaded pointer merged into one"};
llvm::TrackingStatistic NumNullTestsThreaded = {DEBUG_TYPE, "NumNullTestsThreaded", "NULL tests skipped after converting a relative load"};
llvm::TrackingStatistic NumWideScans = {DEBUG_TYPE, "NumWideScans", "wide stores and copies scanned for addresses"};
llvm::TrackingStatistic NumWideNotAddress = {DEBUG_TYPE, "NumWideNotAddress", "wide stores and copied fields proven not pointers"};
llvm::TrackingStatistic NumMemIntrinsics = {DEBUG_TYPE, "NumMemIntrinsics", "memset/memcpy/memmove instrumented"};
llvm::TrackingStatistic NumAtomics = {DEBUG_TYPE, "NumAtomics", "cmpxchg/atomicrmw instrumented"};
llvm::TrackingStatistic NumWriteSetCalls = {DEBUG_TYPE, "NumWriteSetCalls", "calls instrumented from write-set files"};
llvm::TrackingStatistic NumLocalRegion = {DEBUG_TYPE, "NumLocalRegion", "functions keeping the PM region's bounds in registers"};
llvm::TrackingStatistic NumSetjmps = {DEBUG_TYPE, "NumSetjmps", "setjmp calls watched for longjmps out of transactions"};
llvm::TrackingStatistic NumMissPreserve = {DEBUG_TYPE, "NumMissPreserve", "translation misses called keeping the caller's registers"};
llvm::TrackingStatistic NumMaskedStores = {DEBUG_TYPE, "NumMaskedStores", "masked stores and scatters instrumented (logged; pointer lanes converted)"};
llvm::TrackingStatistic NumLibcWrapped = {DEBUG_TYPE, "NumLibcWrapped", "libc calls sent to compiler/rt's logging wrappers (scanf family, strsep)"};

static TrackingStatistic *const AllStats[] = {
    &NumStores,     &NumStoresVolatile, &NumChecksSkippedPM, &NumLogsMerged,
    &NumLoopLogsHoisted, &NumLogsDominated,
    &NumPtrStores,  &NumVecPtrStores, &NumNullStores,     &NumPtrLoads,        &NumPtrLoadsNullOnly,
    &NumIntToPtr,   &NumRa2VaInline,    &NumWideScans,       &NumMemIntrinsics,
    &NumAtomics,    &NumWriteSetCalls, &NumWideNotAddress, &NumVa2RaInline,
    &NumConvHoisted, &NumLocalCache, &NumCacheKeptOverCall, &NumNullTestsThreaded,
    &NumTranslationsFolded, &NumLoopChainsPlain, &NumPhisSplit, &NumIndexReassociated,
    &NumLocalRegion, &NumSetjmps, &NumMissPreserve, &NumCallsCairnFree, &NumSignNullMerged, &NumVecPtrLoads,
    &NumLibcWrapped, &NumMaskedStores, &NumIntToPtrFloat};

static void printStats(StringRef Module) {
  errs() << "===- cairn pass statistics: " << Module << " -===\n";
  for (TrackingStatistic *S : AllStats)
    errs() << format("%8u cairn - %s\n", S->getValue(), S->getDesc());
  cairn::printTraceStats();
}



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
  Ra2VaWords = M.getOrInsertFunction("cairn_cc__ra2va_words", Type::getVoidTy(Ctx), PtrTy, Int64Ty);
  // The miss sits on the cold side of every translated load; on x86-64 it
  // keeps the caller's registers (preserve_most: all but r11 and the
  // result; compiler/rt's entry saves the rest around the C code), so the
  // hot side around it needs no spills (cairn-miss-preserves-regs).
  MissPreservesRegs = ClMissPreservesRegs && Triple(M.getTargetTriple()).getArch() == Triple::x86_64;
  if (MissPreservesRegs)
    if (auto *F = dyn_cast<Function>(Ra2VaMiss.getCallee()))
      F->setCallingConv(CallingConv::PreserveMost);
  CacheNote = M.getOrInsertFunction("cairn_cc__ra_cache_note", VoidTy, Int64Ty, PtrTy);
  LogLanes = M.getOrInsertFunction("cairn_cc__log_lanes", VoidTy, PtrTy, Int64Ty, Int64Ty,
                                   Int64Ty, PtrTy, Int32Ty);
  LanesToRel = M.getOrInsertFunction("cairn_cc__lanes_to_rel", VoidTy, PtrTy, PtrTy, Int64Ty,
                                     Int64Ty, Int32Ty, PtrTy, Int32Ty);
  Unlikely = MDBuilder(Ctx).createUnlikelyBranchWeights();
  findCairnFreeFunctions();
  NoSanitize = MDNode::get(Ctx, {});
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

// The same test as cairn.h's cairn__in_region: (p - lo) < (hi - lo). With
// cairn-local-region, lo and the size come from the function's copy.
Value *CairnInstrumenter::emitInRegion(IRBuilder<> &B, Value *P) {
  count(B, RegionTests);
  Value *PI = P->getType()->isPointerTy() ? B.CreatePtrToInt(P, Int64Ty) : P;
  if (RegionFn && !LocalLo)
    setUpLocalRegion(*RegionFn);
  if (LocalLo)
    return B.CreateICmpULT(B.CreateSub(PI, B.CreateLoad(Int64Ty, LocalLo)),
                           B.CreateLoad(Int64Ty, LocalSize), "cairn.inpm");
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo, "cairn.lo");
  auto *Hi = B.CreateLoad(Int64Ty, RegionHi, "cairn.hi");
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  return B.CreateICmpULT(B.CreateSub(PI, Lo), B.CreateSub(Hi, Lo), "cairn.inpm");
}

// The region's low bound: the function's copy, or a load of the global.
Value *CairnInstrumenter::regionLo(IRBuilder<> &B) {
  if (RegionFn && !LocalLo)
    setUpLocalRegion(*RegionFn);
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
// branch, with no loads; before, each reloaded both bounds from memory,
// since a store between two tests may alias them as far as code
// generation knows.
void CairnInstrumenter::refreshLocalRegion(IRBuilder<> &B) {
  auto *Lo = B.CreateLoad(Int64Ty, RegionLo, "cairn.lo");
  auto *Hi = B.CreateLoad(Int64Ty, RegionHi, "cairn.hi");
  Lo->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Hi->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  B.CreateStore(Lo, LocalLo);
  B.CreateStore(B.CreateSub(Hi, Lo), LocalSize);
}

void CairnInstrumenter::setUpLocalRegion(Function &F) {
  SmallVector<Instruction *, 16> After;
  afterCallsThatMayChangeRuntime(F, After, /*CountKept=*/false);
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
  bool Routed = routeLibcCalls(F);
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
  RegionFn = ClLocalRegion && !F.hasOptNone() ? &F : nullptr;

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
    else if (auto *II = dyn_cast<IntrinsicInst>(I))
      instrumentMaskedStore(II);
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
  for (Instruction *LI : VecPointerReads)
    instrumentVectorPointerRead(LI);
  VecPointerReads.clear();
  for (auto [Phi, VA] : ConvertedPhis)
    threadNullTest(Phi, VA);
  ConvertedPhis.clear();
  if (ClSplitPhis)
    splitTranslatedPhis(F);
  for (const SignTest &T : SignTests)
    if (mergeSignNullTest(T))
      ++NumSignNullMerged;
  SignTests.clear();
  FoldedVA.clear();
  finishLocalCache(F);
  if (LocalLo) {
    DominatorTree RDT(F);
    SmallVector<AllocaInst *, 2> As{LocalLo, LocalSize};
    PromoteMemToReg(As, RDT);
    LocalLo = LocalSize = nullptr;
  }
  RegionFn = nullptr;
  bool Watched = watchSetjmps(F);
  return !Writes.empty() || !PointerReads.empty() || Watched || Routed;
}

// A longjmp out of a transaction leaves it open (docs/compiler.md,
// "setjmp/longjmp"). At each setjmp the transaction depth is saved in a
// volatile slot of its own (a value kept in a register or a reused spill
// slot is not reliable when setjmp returns the second time); after setjmp
// returns, the runtime is told both, and when the return is a longjmp's
// and the depth is now greater, the levels above are marked as left: the
// next begin stops with this setjmp's file:line instead of nesting into a
// transaction that can never commit (an abort, or commits of the left
// levels, clear the mark).
bool CairnInstrumenter::watchSetjmps(Function &F) {
  SmallVector<CallBase *, 4> Calls;
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I))
      if (Function *Callee = CB->getCalledFunction())
        if (Callee->getName().contains("setjmp") &&
            (CB->hasFnAttr(Attribute::ReturnsTwice) ||      // setjmp, sigsetjmp, _setjmp
             Callee->getIntrinsicID() == Intrinsic::eh_sjlj_setjmp) && // __builtin_setjmp
            CB->getType()->isIntegerTy(32) && !isa<InvokeInst>(CB))
          Calls.push_back(CB);
  if (Calls.empty())
    return false;
  FunctionCallee Depth = M.getOrInsertFunction("cairn_tx_active", Int32Ty);
  FunctionCallee Returned = M.getOrInsertFunction(
      "cairn__tx_setjmp_returned", Type::getVoidTy(Ctx), Int32Ty, Int32Ty, PtrTy, Int32Ty);
  IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
  for (CallBase *CB : Calls) {
    AllocaInst *Slot = EB.CreateAlloca(Int32Ty, nullptr, "cairn.setjmp.depth");
    IRBuilder<> B(CB);
    B.CreateStore(B.CreateCall(Depth), Slot, /*isVolatile=*/true);
    B.SetInsertPoint(CB->getNextNode());
    auto [File, Line] = sourceLocation(CB);
    B.CreateCall(Returned, {CB, B.CreateLoad(Int32Ty, Slot, /*isVolatile=*/true),
                            File, Line});
    ++NumSetjmps;
  }
  return true;
}


} // namespace cairn

using namespace llvm;
using namespace cairn;

// ---- the pass and its registration -----------------------------------------

namespace {
struct CairnPass : PassInfoMixin<CairnPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    if (!ClEnabled)
      return PreservedAnalyses::all();
    static cairn::WriteSets WS;
    static bool Loaded = false;
    static std::string LoadErr;
    if (!Loaded) {
      Loaded = true;
      for (const std::string &Path : ClWriteSets) {
        std::string Err;
        if (!WS.parseFile(Path, Err)) {
          LoadErr = "cairn: " + Err + " (fix the file, or drop its --cairn-wset=)";
          break;
        }
      }
    }
    if (!LoadErr.empty()) {
      // a compile error, as clang reports its own: one line, no crash dump
      M.getContext().emitError(LoadErr);
      return PreservedAnalyses::all();
    }
    bool Traced = cairn::instrumentTraceStores(M, WS); // first: its calls follow the writes
    bool Changed = Traced;
    CairnInstrumenter Inst(M, WS);
    auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasFnAttribute(cairn::InstrumentedAttr))
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
    for (Function &F : M)
      if (!F.isDeclaration())
        F.addFnAttr(cairn::InstrumentedAttr);
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

