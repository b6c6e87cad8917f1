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
// docs/compiler.md explains the decisions; every optimization has a
// cl::opt to turn it off and a STATISTIC (cairn-cc --cairn-stats), both
// declared in CairnOptions.def. This file defines them, declares the
// runtime's entry points in each module (ModuleRuntime), runs the phases
// for one function (FunctionInstrumenter::run) and registers the pass.
//===----------------------------------------------------------------------===//
#include "Instrumenter.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

#define DEBUG_TYPE "cairn"

namespace cairn {

// ---- options and counters: CairnOptions.def --------------------------------
#define CAIRN_OPTIMIZATION(Var, Name, Default, Counter, Desc)                   \
  cl::opt<bool> Var("cairn-" Name, cl::init(Default), cl::desc(Desc));
#define CAIRN_OPTION(Type, Var, Flag, Default, Desc)                            \
  cl::opt<Type> Var(Flag, cl::init(Default), cl::desc(Desc));
#define CAIRN_LIST_OPTION(Var, Flag, Desc) cl::list<std::string> Var(Flag, cl::desc(Desc));
#define CAIRN_COUNTER(Var, Desc) TrackingStatistic Var = {DEBUG_TYPE, #Var, Desc};
#define CAIRN_TRACE_COUNTER(Var, Desc) TrackingStatistic Var = {"cairn-trace", #Var, Desc};
#include "CairnOptions.def"

static void printStats(StringRef Module) {
  static TrackingStatistic *const Counters[] = {
#define CAIRN_COUNTER(Var, Desc) &Var,
#include "CairnOptions.def"
  };
  static TrackingStatistic *const TraceCounters[] = {
#define CAIRN_TRACE_COUNTER(Var, Desc) &Var,
#include "CairnOptions.def"
  };
  errs() << "===- cairn pass statistics: " << Module << " -===\n";
  for (TrackingStatistic *S : Counters)
    errs() << format("%8u cairn - %s\n", S->getValue(), S->getDesc());
  if (ClTrace)
    for (TrackingStatistic *S : TraceCounters)
      errs() << format("%8u cairn - %s\n", S->getValue(), S->getDesc());
}

// Runtime entry points are declared here, once (names fixed by cairn.h's
// "ABI for cairn-cc generated code" and compiler/rt/cairn_cc_rt.c).
ModuleRuntime::ModuleRuntime(Module &M, const WriteSets &WS, StringConstants &Locations,
                             const SmallPtrSetImpl<const Function *> &CairnFreeFns)
    : IRBasics(M.getContext()), M(M), DL(M.getDataLayout()), Ctx(M.getContext()), WS(WS),
      Locations(&Locations), CairnFreeFns(&CairnFreeFns), Lenient(ClPersistentHeap) {
  Type *VoidTy = Type::getVoidTy(Ctx);
  LogStore = M.getOrInsertFunction("cairn__log_store", VoidTy, PtrTy, Int64Ty,
                                   PtrTy, Int32Ty);
  // Persistent-heap mode (compiler/rt/cairn_pheap.c) lets heap objects keep
  // pointers to DRAM; pointers into the heap still go relative.
  Va2Ra = M.getOrInsertFunction(Lenient ? "cairn_cc__va2ra_lenient" : "cairn__va2ra_checked",
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
  // cairn.h's thread-local "this thread's stores need no log call"
  // (cairn-inline-log-gate), initial-exec as libcairn's own TLS
  LogSkip = M.getNamedGlobal("cairn__log_skip");
  if (!LogSkip)
    LogSkip = new GlobalVariable(M, Type::getInt8Ty(Ctx), false, GlobalValue::ExternalLinkage,
                                 nullptr, "cairn__log_skip", nullptr,
                                 GlobalValue::InitialExecTLSModel);
  Counts = nullptr;
  if (ClCount) {
    Counts = M.getNamedGlobal("cairn_cc__counts");
    if (!Counts)
      Counts = new GlobalVariable(M, ArrayType::get(Int64Ty, 5), false,
                                  GlobalValue::ExternalLinkage, nullptr,
                                  "cairn_cc__counts");
  }
  Ra2VaMiss = M.getOrInsertFunction("cairn_cc__ra2va_miss", PtrTy, Int64Ty);
  Ra2VaWords = M.getOrInsertFunction("cairn_cc__ra2va_words", VoidTy, PtrTy, Int64Ty);
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
}

// (file, line) for the runtime's messages: the debug location when built
// with -g, else the function's name and line 0.
std::pair<Value *, Value *> ModuleRuntime::sourceLocation(Instruction *I) {
  SourceSite S = sourceSite(I);
  Constant *File = Locations->get(S.File.empty() ? "function " + S.Func : S.File);
  return {File, ConstantInt::get(Int32Ty, S.Line)};
}

// ---- one function, phase by phase -------------------------------------------

bool FunctionInstrumenter::run() {
  if (!shouldInstrument(F))
    return false;
  SmallVector<Instruction *, 32> Writes, PointerReads;
  DenseMap<Instruction *, MergedLog> MergedAt;
  DenseMap<Instruction *, Instruction *> Covered;
  std::map<Instruction *, MergedLog> Hoisted, Dominated;
  bool Opt = !F.hasOptNone();

  // 1. calls no write-set can size go to compiler/rt's wrappers
  bool Routed = routeLibcCalls();
  // 2. where logs go: hoisted before loops, pointer stores whose
  //    conversion is hoisted, merged in a block, dominated by another
  if (ClHoistLoopLogs && LI && SE && DT)
    hoistLoopLogs(*LI, *SE, *DT, Hoisted);
  if (ClHoistConversions && ClInlineVa2Ra && LI && DT)
    findInvariantPtrStores(*LI, *DT);
  chooseInstructionsToInstrument(Writes, PointerReads, MergedAt, Covered, Hoisted);
  if (ClElimDominatedLogs && Opt)
    elimDominatedLogs(Writes, MergedAt, Covered, Hoisted, Dominated);
  KeepsLocalRegion = ClLocalRegion && Opt;

  // 3. the merged logs, then every write (Writes.cpp)
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

  // 4. loaded pointers translated back (Pointers.cpp)
  if (!PointerReads.empty())
    setUpLocalCache();
  if (ClFoldTranslation && ClPlainLoopChains && Opt)
    findLoopCarriedReads(PointerReads);
  for (Instruction *I : PointerReads)
    instrumentPointerRead(I);
  for (Instruction *LI : VecPointerReads)
    instrumentVectorPointerRead(LI);
  for (auto [Phi, VA] : ConvertedPhis)
    threadNullTest(Phi, VA);
  if (ClSplitPhis)
    splitTranslatedPhis();
  for (const SignTest &T : SignTests)
    if (mergeSignNullTest(T))
      ++NumSignNullMerged;

  // 5. the register copies become registers; setjmps are watched
  promoteToRegisters(F, LocalKey, LocalD);
  promoteToRegisters(F, LocalLo, LocalSize);
  bool Watched = watchSetjmps();
  return !Writes.empty() || !PointerReads.empty() || Watched || Routed;
}

void FunctionInstrumenter::promoteToRegisters(Function &F, AllocaInst *A, AllocaInst *B) {
  if (!A)
    return;
  DominatorTree DT(F);
  SmallVector<AllocaInst *, 2> As{A, B};
  PromoteMemToReg(As, DT);
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
bool FunctionInstrumenter::watchSetjmps() {
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
    SmallPtrSet<const Function *, 32> CairnFreeFns;
    ModuleRuntime::findCairnFreeFunctions(M, CairnFreeFns);
    StringConstants Locations(M, ".cairn.loc");
    ModuleRuntime Runtime(M, WS, Locations, CairnFreeFns);
    auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasFnAttribute(cairn::InstrumentedAttr))
        continue;
      if (Traced)
        FAM.invalidate(F, PreservedAnalyses::none());
      bool Opt = ClHoistLoopLogs && !F.hasOptNone();
      bool FChanged =
          FunctionInstrumenter(Runtime, F, Opt ? &FAM.getResult<LoopAnalysis>(F) : nullptr,
                               Opt ? &FAM.getResult<ScalarEvolutionAnalysis>(F) : nullptr,
                               Opt ? &FAM.getResult<DominatorTreeAnalysis>(F) : nullptr)
              .run();
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

namespace {
struct CairnPortsPass : llvm::PassInfoMixin<CairnPortsPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    return cairn::lowerPortConveniences(M) ? llvm::PreservedAnalyses::none()
                                           : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};
} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "cairn", "0.1", [](PassBuilder &PB) {
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(CairnPortsPass());
                });
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(CairnPass());
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "cairn-ports") {
                    MPM.addPass(CairnPortsPass());
                    return true;
                  }
                  if (Name != "cairn")
                    return false;
                  MPM.addPass(CairnPass());
                  return true;
                });
          }};
}

