//===- PortLowering.cpp - function-level transactions and a file's pool heap -===//
//
// Two conveniences of cairn.h that cut what a port changes, lowered here at
// the start of the pipeline (PipelineStartEP), before inlining and before
// the optimizer can reason about malloc by its name:
//
//   CAIRN_TX_FUNCTION(pool) on a function definition
//       clang records it in llvm.global.annotations as "cairn_tx_function"
//       with the address of the pool variable. The function's entry calls
//       cairn_cc__tx_function_begin with the variable's value; every return
//       calls cairn_cc__tx_function_end first. When the transaction cannot
//       begin the body does not run: the function returns -1 (integers),
//       NULL (pointers) or nothing (void); the runtime stops the program
//       with one line for any other return type.
//
//   CAIRN_HEAP_POOL(pool) at file scope
//       defines the internal constant cairn__heap_pool = &pool. Every use of
//       malloc, calloc, realloc, reallocarray and free in this file (calls
//       and addresses taken) is replaced by a wrapper that calls compiler/rt
//       (cairn_cc__pool_*) with the pool variable's address.
//
// Both are errors in C++ functions that may unwind (a throw would leave the
// transaction open): C++ uses cairn::transaction.
//===----------------------------------------------------------------------===//
#include "PassCommon.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace cairn {

namespace {

// Functions annotated "cairn_tx_function" and the pool variable each names.
SmallVector<std::pair<Function *, GlobalVariable *>, 8> txFunctions(Module &M) {
  SmallVector<std::pair<Function *, GlobalVariable *>, 8> Out;
  GlobalVariable *A = M.getGlobalVariable("llvm.global.annotations");
  auto *Arr = A ? dyn_cast<ConstantArray>(A->getInitializer()) : nullptr;
  if (!Arr)
    return Out;
  for (Value *Op : Arr->operands()) {
    auto *E = dyn_cast<ConstantStruct>(Op);
    if (!E || E->getNumOperands() < 5)
      continue;
    auto *F = dyn_cast<Function>(E->getOperand(0)->stripPointerCasts());
    auto *NameG = dyn_cast<GlobalVariable>(E->getOperand(1)->stripPointerCasts());
    auto *Name = NameG && NameG->hasInitializer()
                     ? dyn_cast<ConstantDataArray>(NameG->getInitializer())
                     : nullptr;
    if (!F || !Name || !Name->isCString() || Name->getAsCString() != "cairn_tx_function")
      continue;
    auto *ArgsG = dyn_cast<GlobalVariable>(E->getOperand(4)->stripPointerCasts());
    auto *Args = ArgsG && ArgsG->hasInitializer()
                     ? dyn_cast<ConstantStruct>(ArgsG->getInitializer())
                     : nullptr;
    auto *Pool = Args && Args->getNumOperands() == 1
                     ? dyn_cast<GlobalVariable>(Args->getOperand(0)->stripPointerCasts())
                     : nullptr;
    if (!Pool) {
      M.getContext().emitError("CAIRN_TX_FUNCTION on " + F->getName() +
                               ": its argument is not a variable with static storage; "
                               "name a file-scope or static cairn_pool * variable");
      continue;
    }
    Out.push_back({F, Pool});
  }
  return Out;
}

constexpr const char *kLowered = "cairn-tx-function";

bool mayUnwind(const Function &F) { return F.hasPersonalityFn(); }

void lowerTxFunction(Function &F, GlobalVariable *Pool, Module &M) {
  // lowered already: IR that cairn-cc emitted (-emit-llvm) and compiles again
  if (F.isDeclaration() || F.hasFnAttribute(kLowered))
    return;
  F.addFnAttr(kLowered);
  LLVMContext &Ctx = M.getContext();
  if (mayUnwind(F)) {
    Ctx.emitError("CAIRN_TX_FUNCTION on " + F.getName() +
                  ": a C++ function that may throw would leave its transaction open; "
                  "use cairn::transaction in C++");
    return;
  }
  Type *I32 = Type::getInt32Ty(Ctx), *Ptr = PointerType::getUnqual(Ctx);
  Type *Ret = F.getReturnType();
  bool Soft = Ret->isVoidTy() || Ret->isIntegerTy() || Ret->isPointerTy();
  FunctionCallee Begin = M.getOrInsertFunction("cairn_cc__tx_function_begin", I32, Ptr, Ptr, I32);
  FunctionCallee End =
      M.getOrInsertFunction("cairn_cc__tx_function_end", Type::getVoidTy(Ctx), I32);

  SmallVector<ReturnInst *, 8> Returns;
  for (BasicBlock &BB : F)
    if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator()))
      Returns.push_back(R);

  // The old entry's leading allocas move to the new entry, so they stay
  // static (mem2reg promotes only entry-block allocas).
  BasicBlock *OldEntry = &F.getEntryBlock();
  BasicBlock *NewEntry = BasicBlock::Create(Ctx, "cairn.txfn", &F, OldEntry);
  while (auto *AI = dyn_cast<AllocaInst>(&OldEntry->front()))
    AI->moveBefore(*NewEntry, NewEntry->end());

  IRBuilder<> B(NewEntry);
  Value *PoolV = B.CreateLoad(Ptr, Pool, "cairn.txfn.pool");
  Constant *Name = B.CreateGlobalStringPtr(F.getName(), "cairn.txfn.name");
  Value *Depth = B.CreateCall(Begin, {PoolV, Name, B.getInt32(Soft ? 0 : 1)}, "cairn.txfn.depth");
  BasicBlock *Fail = BasicBlock::Create(Ctx, "cairn.txfn.fail", &F);
  B.CreateCondBr(B.CreateICmpNE(Depth, B.getInt32(0)), OldEntry, Fail);

  IRBuilder<> FB(Fail);
  if (Ret->isVoidTy())
    FB.CreateRetVoid();
  else if (Ret->isIntegerTy())
    FB.CreateRet(Constant::getAllOnesValue(Ret));
  else if (Ret->isPointerTy())
    FB.CreateRet(ConstantPointerNull::get(cast<PointerType>(Ret)));
  else
    FB.CreateUnreachable();   // the runtime stopped the program

  for (ReturnInst *R : Returns) {
    IRBuilder<> RB(R);
    RB.CreateCall(End, {Depth});
  }
  ++NumTxFunctions;
}

// CAIRN_HEAP_POOL: the pool variable, or null.
GlobalVariable *heapPoolVariable(Module &M) {
  GlobalVariable *G = M.getGlobalVariable("cairn__heap_pool", /*AllowInternal=*/true);
  if (!G || !G->hasInitializer())
    return nullptr;
  return dyn_cast<GlobalVariable>(G->getInitializer()->stripPointerCasts());
}

void lowerHeapPool(Module &M, GlobalVariable *Pool) {
  LLVMContext &Ctx = M.getContext();
  Type *Ptr = PointerType::getUnqual(Ctx), *I64 = Type::getInt64Ty(Ctx),
       *Void = Type::getVoidTy(Ctx);
  struct Entry {
    const char *Libc, *Rt;
    FunctionType *Ty;
  } const Table[] = {
      {"malloc", "cairn_cc__pool_malloc", FunctionType::get(Ptr, {I64}, false)},
      {"calloc", "cairn_cc__pool_calloc", FunctionType::get(Ptr, {I64, I64}, false)},
      {"realloc", "cairn_cc__pool_realloc", FunctionType::get(Ptr, {Ptr, I64}, false)},
      {"reallocarray", "cairn_cc__pool_reallocarray",
       FunctionType::get(Ptr, {Ptr, I64, I64}, false)},
      {"free", "cairn_cc__pool_free", FunctionType::get(Void, {Ptr}, false)},
  };
  for (const Entry &E : Table) {
    Function *Libc = M.getFunction(E.Libc);
    if (!Libc || !Libc->isDeclaration() || Libc->use_empty())
      continue;
    // cairn_cc__pool_X(&pool, args...)
    SmallVector<Type *, 4> RtParams = {Ptr};
    RtParams.append(E.Ty->param_begin(), E.Ty->param_end());
    FunctionCallee Rt =
        M.getOrInsertFunction(E.Rt, FunctionType::get(E.Ty->getReturnType(), RtParams, false));
    Function *W = Function::Create(E.Ty, GlobalValue::InternalLinkage,
                                   Twine("cairn.heap.") + E.Libc, M);
    W->addFnAttr(Attribute::AlwaysInline);
    W->addFnAttr(Attribute::NoUnwind);
    IRBuilder<> B(BasicBlock::Create(Ctx, "", W));
    SmallVector<Value *, 4> Args = {Pool};
    for (Argument &A : W->args())
      Args.push_back(&A);
    CallInst *C = B.CreateCall(Rt, Args);
    if (E.Ty->getReturnType()->isVoidTy())
      B.CreateRetVoid();
    else
      B.CreateRet(C);
    SmallVector<CallBase *, 16> Calls;
    for (User *U : Libc->users())
      if (auto *CB = dyn_cast<CallBase>(U); CB && CB->getCalledOperand() == Libc)
        Calls.push_back(CB);
    NumPoolHeapCalls += Calls.size();
    Libc->replaceAllUsesWith(W);
    // the call sites' allocator attributes belong to libc's malloc family:
    // without them the optimizer treats the wrapper as any other function
    for (CallBase *CB : Calls) {
      CB->removeFnAttr(Attribute::AllocKind);
      CB->removeFnAttr(Attribute::AllocSize);
      CB->removeFnAttr("alloc-family");
      CB->removeFnAttr("alloc-variant-zeroed");
    }
  }
}

} // namespace

bool lowerPortConveniences(Module &M) {
  bool Changed = false;
  for (auto &[F, Pool] : txFunctions(M)) {
    lowerTxFunction(*F, Pool, M);
    Changed = true;
  }
  if (GlobalVariable *Pool = heapPoolVariable(M)) {
    lowerHeapPool(M, Pool);
    Changed = true;
  }
  return Changed;
}

} // namespace cairn
