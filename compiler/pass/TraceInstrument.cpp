//===- TraceInstrument.cpp - cairn-cc --trace: record writes to PM --------===//
//
// With -cairn-trace (cairn-cc --trace) the pass inserts, after every write
// that may reach persistent memory (store, memset/memcpy/memmove, cmpxchg,
// atomicrmw), a call cairn__trace_store(addr, size, &site); after a write
// it proves goes to the stack or a global, an inline increment of the
// thread-local cairn__trace_dram_stores. The rest is handled by the runtime
// (runtime/trace.c): with CAIRN_TRACE set it records a write inside a pool
// with the bytes now there, and counts any other write as a DRAM store.
//
// The call goes after the write and the runtime reads the bytes back, so
// the trace holds what reached PM: pointers in relative form, the words a
// copy scan rewrote. A site is one (file, line, function): from debug info
// with -g, else the function's name alone; the runtime numbers sites the
// first time it sees them and writes their names to the trace once.
// A call of a precompiled function named in a write-set file (strcpy into
// PM) is traced like a copy: the region's size is computed before the call
// (as the log computes it), the bytes are read after it.
//===----------------------------------------------------------------------===//
#include "TraceInstrument.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using cairn::WriteSets;
using cairn::WSFunction;

#define DEBUG_TYPE "cairn-trace"

static cl::opt<bool> ClTrace(
    "cairn-trace", cl::init(false),
    cl::desc("Record every write that may reach PM (address, size, bytes, "
             "source site) and count writes to DRAM (cairn-cc --trace)"));

ALWAYS_ENABLED_STATISTIC(NumTraceCalls, "trace: writes that call cairn__trace_store");
ALWAYS_ENABLED_STATISTIC(NumTraceDram, "trace: writes counted inline as DRAM (stack, globals)");
ALWAYS_ENABLED_STATISTIC(NumTraceSites, "trace: source sites");

namespace {

class TraceInstrumenter {
public:
  TraceInstrumenter(Module &M, const WriteSets &WS)
      : M(M), Ctx(M.getContext()), WS(WS) {
    initialize();
  }
  bool instrumentFunction(Function &F);

private:
  Module &M;
  LLVMContext &Ctx;
  const WriteSets &WS;
  Type *Int64Ty, *Int32Ty;
  PointerType *PtrTy;
  StructType *SiteTy;
  FunctionCallee TraceStore;
  GlobalVariable *DramCount;
  MDNode *NoSanitize;
  StringMap<GlobalVariable *> Sites;
  StringMap<Constant *> Strings;

  void initialize();
  Constant *stringConstant(StringRef S);
  GlobalVariable *siteFor(Instruction *I);
  void countDram(Instruction *After);
  void traceWrite(Instruction *I, Value *Addr, Value *Size);
  void traceWriteSetCall(CallBase *CB, const WSFunction &WF);
};

} // namespace

// The runtime's entry points (cairn.h, "Store tracing"), declared once.
void TraceInstrumenter::initialize() {
  Int64Ty = Type::getInt64Ty(Ctx);
  Int32Ty = Type::getInt32Ty(Ctx);
  PtrTy = PointerType::getUnqual(Ctx);
  // struct cairn__trace_site { uint32_t id, line; const char *file, *func; }
  SiteTy = StructType::get(Ctx, {Int32Ty, Int32Ty, PtrTy, PtrTy});
  TraceStore = M.getOrInsertFunction("cairn__trace_store", Type::getVoidTy(Ctx),
                                     PtrTy, Int64Ty, PtrTy);
  DramCount = M.getNamedGlobal("cairn__trace_dram_stores");
  if (!DramCount)
    DramCount = new GlobalVariable(M, Int64Ty, false, GlobalValue::ExternalLinkage,
                                   nullptr, "cairn__trace_dram_stores", nullptr,
                                   GlobalValue::InitialExecTLSModel);
  NoSanitize = MDNode::get(Ctx, {});
}

Constant *TraceInstrumenter::stringConstant(StringRef S) {
  Constant *&C = Strings[S];
  if (!C) {
    Constant *Init = ConstantDataArray::getString(Ctx, S);
    auto *G = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage,
                                 Init, ".cairn.trace.str");
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    G->setAlignment(Align(1));
    C = G;
  }
  return C;
}

// One writable site record per (file, line, function); the runtime fills in
// its id. With -g the function is the one the code came from (inlining).
GlobalVariable *TraceInstrumenter::siteFor(Instruction *I) {
  std::string File, Func = I->getFunction()->getName().str();
  unsigned Line = 0;
  if (const DILocation *Loc = I->getDebugLoc().get()) {
    File = Loc->getFilename().str();
    Line = Loc->getLine();
    if (const DISubprogram *SP = Loc->getScope()->getSubprogram())
      if (!SP->getName().empty())
        Func = SP->getName().str();
  }
  std::string Key = File + ":" + std::to_string(Line) + ":" + Func;
  GlobalVariable *&G = Sites[Key];
  if (!G) {
    ++NumTraceSites;
    Constant *Init = ConstantStruct::get(
        SiteTy, {ConstantInt::get(Int32Ty, 0), ConstantInt::get(Int32Ty, Line),
                 stringConstant(File), stringConstant(Func)});
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

static bool provenVolatile(const Value *Addr) {
  const Value *Obj = getUnderlyingObject(Addr);
  return isa<AllocaInst>(Obj) || isa<GlobalVariable>(Obj);
}

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
  for (const cairn::WSRegion &R : WF.Writes) {
    Value *Dst = CB->getArgOperand(R.Param);
    if (isa<ConstantPointerNull>(Dst))
      continue;
    if (provenVolatile(Dst)) {
      countDram(CB);
      continue;
    }
    Instruction *Prev = CB->getPrevNode();
    IRBuilder<> B(CB);
    Value *Size = cairn::emitWriteSetSize(B, CB, R.Size);
    // strlen, snprintf(NULL, 0, ...) computing it are not the program's
    for (Instruction *I = Prev ? Prev->getNextNode() : &CB->getParent()->front(); I != CB;
         I = I->getNextNode())
      I->setMetadata(LLVMContext::MD_nosanitize, NoSanitize);
    traceWrite(CB, Dst, Size);
  }
}

bool TraceInstrumenter::instrumentFunction(Function &F) {
  if (F.isDeclaration() || F.getName().starts_with("cairn_") ||
      F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation))
    return false;
  const DataLayout &DL = M.getDataLayout();
  auto StoreSize = [&](Type *T) {
    return ConstantInt::get(Int64Ty, DL.getTypeStoreSize(T).getFixedValue());
  };
  SmallVector<Instruction *, 32> Writes;
  for (Instruction &I : instructions(F)) {
    if (I.hasMetadata(LLVMContext::MD_nosanitize))
      continue;
    if (cairn::mayWriteMemory(I, WS))
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

bool cairn::instrumentTraceStores(Module &M, const WriteSets &WS) {
  if (!ClTrace)
    return false;
  TraceInstrumenter TI(M, WS);
  bool Changed = false;
  for (Function &F : M)
    if (!F.hasFnAttribute(cairn::InstrumentedAttr))  // an IR input built by cairn-cc
      Changed |= TI.instrumentFunction(F);
  return Changed;
}

bool cairn::isTraceHook(StringRef Callee) { return Callee == "cairn__trace_store"; }

void cairn::printTraceStats() {
  if (!ClTrace)
    return;
  for (TrackingStatistic *S : {&NumTraceCalls, &NumTraceDram, &NumTraceSites})
    errs() << format("%8u cairn - %s\n", S->getValue(), S->getDesc());
}
