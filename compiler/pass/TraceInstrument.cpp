//===- TraceInstrument.cpp - cairn-cc --trace: record writes to PM --------===//
//
// With -cairn-trace (cairn-cc --trace) the pass inserts, after every write
// that may reach persistent memory (store, memset/memcpy/memmove, cmpxchg,
// atomicrmw), a call cairn__trace_store(addr, size, &site); after a write
// it proves goes to DRAM (the stack, a global, fresh malloc memory: the
// logging instrumentation's proof, PassCommon.h), an inline increment of
// the thread-local cairn__trace_dram_stores. The rest is handled by the runtime
// (runtime/trace.c): with CAIRN_TRACE set it records a write inside a pool
// with the bytes now there, and counts any other write as a DRAM store.
//
// The call goes after the write and the runtime reads the bytes back, so
// the trace holds what reached PM: pointers in relative form, the words a
// copy scan rewrote. A site is one (file, line, function): from debug info
// with -g, else the function's name alone (PassCommon.h's sourceSite, as
// the logging instrumentation's messages); the runtime numbers sites the
// first time it sees them and writes their names to the trace once.
// A call of a precompiled function named in a write-set file (strcpy into
// PM) is traced like a copy: the region's size is computed before the call
// (as the log computes it), the bytes are read after it.
//===----------------------------------------------------------------------===//
#include "TraceInstrument.h"
#include "PassCommon.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

namespace cairn {

namespace {

class TraceInstrumenter : IRBasics {
public:
  TraceInstrumenter(Module &M, const WriteSets &WS)
      : IRBasics(M.getContext()), M(M), WS(WS), Strings(M, ".cairn.trace.str") {
    declareRuntime();
  }
  bool instrumentFunction(Function &F);

private:
  Module &M;
  const WriteSets &WS;
  StructType *SiteTy;
  FunctionCallee TraceStore;
  GlobalVariable *DramCount;
  StringMap<GlobalVariable *> Sites;
  StringConstants Strings;

  void declareRuntime();
  GlobalVariable *siteFor(Instruction *I);
  void countDram(Instruction *After);
  void traceWrite(Instruction *I, Value *Addr, Value *Size);
  void traceWriteSetCall(CallBase *CB, const WSFunction &WF);
};

} // namespace

// The runtime's entry points (cairn.h, "Store tracing"), declared once.
void TraceInstrumenter::declareRuntime() {
  LLVMContext &Ctx = M.getContext();
  // struct cairn__trace_site { uint32_t id, line; const char *file, *func; }
  SiteTy = StructType::get(Ctx, {Int32Ty, Int32Ty, PtrTy, PtrTy});
  TraceStore = M.getOrInsertFunction("cairn__trace_store", Type::getVoidTy(Ctx),
                                     PtrTy, Int64Ty, PtrTy);
  DramCount = M.getNamedGlobal("cairn__trace_dram_stores");
  if (!DramCount)
    DramCount = new GlobalVariable(M, Int64Ty, false, GlobalValue::ExternalLinkage,
                                   nullptr, "cairn__trace_dram_stores", nullptr,
                                   GlobalValue::InitialExecTLSModel);
}

// One writable site record per (file, line, function); the runtime fills in
// its id. With -g the function is the one the code came from (inlining).
GlobalVariable *TraceInstrumenter::siteFor(Instruction *I) {
  SourceSite S = sourceSite(I);
  std::string Key = S.File + ":" + std::to_string(S.Line) + ":" + S.Func;
  GlobalVariable *&G = Sites[Key];
  if (!G) {
    ++NumTraceSites;
    Constant *Init = ConstantStruct::get(
        SiteTy, {ConstantInt::get(Int32Ty, 0), ConstantInt::get(Int32Ty, S.Line),
                 Strings.get(S.File), Strings.get(S.Func)});
    G = new GlobalVariable(M, SiteTy, false, GlobalValue::PrivateLinkage, Init,
                           ".cairn.trace.site");
    G->setAlignment(Align(8));
  }
  return G;
}

// ++cairn__trace_dram_stores, after I: a relaxed atomic load and store (the
// runtime may read the counter from another thread at a pool close), which
// on x86 are plain moves. Marked nosanitize: the logging instrumentation
// leaves it alone.
void TraceInstrumenter::countDram(Instruction *After) {
  ++NumTraceDram;
  IRBuilder<> B(After->getNextNode());
  LoadInst *Old = B.CreateLoad(Int64Ty, DramCount);
  StoreInst *St = B.CreateStore(B.CreateAdd(Old, B.getInt64(1)), DramCount);
  for (Instruction *I : {(Instruction *)Old, (Instruction *)St})
    I->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
  Old->setAtomic(AtomicOrdering::Monotonic);
  St->setAtomic(AtomicOrdering::Monotonic);
  Old->setAlignment(Align(8));
  St->setAlignment(Align(8));
}

// The logging instrumentation's proof: a write it proves volatile (the
// stack, a global, fresh malloc memory) needs no record, only a count.
static bool provenVolatile(Value *Addr) { return classify(Addr) == Where::Volatile; }

void TraceInstrumenter::traceWrite(Instruction *I, Value *Addr, Value *Size) {
  if (provenVolatile(Addr)) {
    countDram(I);
    return;
  }
  ++NumTraceCalls;
  IRBuilder<> B(I->getNextNode());
  if (Addr->getType()->getPointerAddressSpace() != 0)
    Addr = B.CreateAddrSpaceCast(Addr, PtrTy);
  B.CreateCall(TraceStore, {Addr, B.CreateZExtOrTrunc(Size, Int64Ty), siteFor(I)});
}

void TraceInstrumenter::traceWriteSetCall(CallBase *CB, const WSFunction &WF) {
  if (CB->arg_size() < WF.NumParams || !CB->getNextNode())
    return;
  for (const WSRegion &R : WF.Writes) {
    Value *Dst = CB->getArgOperand(R.Param);
    if (isa<ConstantPointerNull>(Dst))
      continue;
    if (provenVolatile(Dst)) {
      countDram(CB);
      continue;
    }
    Instruction *Prev = CB->getPrevNode();
    IRBuilder<> B(CB);
    Value *Size = emitWriteSetSize(B, CB, R.Size);
    // strlen, snprintf(NULL, 0, ...) computing it are not the program's
    for (Instruction *I = Prev ? Prev->getNextNode() : &CB->getParent()->front(); I != CB;
         I = I->getNextNode())
      I->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
    traceWrite(CB, Dst, Size);
  }
}

bool TraceInstrumenter::instrumentFunction(Function &F) {
  if (!shouldInstrument(F))
    return false;
  const DataLayout &DL = M.getDataLayout();
  auto StoreSize = [&](Type *T) {
    return ConstantInt::get(Int64Ty, DL.getTypeStoreSize(T).getFixedValue());
  };
  SmallVector<Instruction *, 32> Writes;
  for (Instruction &I : instructions(F)) {
    if (I.hasMetadata(LLVMContext::MD_nosanitize))
      continue;
    if (mayWriteMemory(I, WS))
      Writes.push_back(&I);
  }
  for (Instruction *I : Writes) {
    if (auto *SI = dyn_cast<StoreInst>(I))
      traceWrite(SI, SI->getPointerOperand(), StoreSize(SI->getValueOperand()->getType()));
    else if (auto *MI = dyn_cast<MemIntrinsic>(I))
      traceWrite(MI, MI->getRawDest(), MI->getLength());
    else if (auto *RMW = dyn_cast<AtomicRMWInst>(I))
      traceWrite(RMW, RMW->getPointerOperand(), StoreSize(RMW->getType()));
    else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(I))
      traceWrite(CX, CX->getPointerOperand(),
                 StoreSize(CX->getNewValOperand()->getType()));
    else if (auto *CB = dyn_cast<CallBase>(I))
      traceWriteSetCall(CB, *WS.lookup(CB->getCalledFunction()->getName().str()));
  }
  return !Writes.empty();
}

bool instrumentTraceStores(Module &M, const WriteSets &WS) {
  if (!ClTrace)
    return false;
  TraceInstrumenter TI(M, WS);
  bool Changed = false;
  for (Function &F : M)
    if (!F.hasFnAttribute(InstrumentedAttr))  // an IR input built by cairn-cc
      Changed |= TI.instrumentFunction(F);
  return Changed;
}

bool isTraceHook(StringRef Callee) { return Callee == "cairn__trace_store"; }

} // namespace cairn
