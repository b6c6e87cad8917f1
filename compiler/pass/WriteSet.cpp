//===- WriteSet.cpp - parser for *.wset files (grammar in WriteSet.h) ------===//
#include "WriteSet.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace cairn;
using namespace llvm;

namespace {

// A tiny recursive-descent parser over one declaration line.
class LineParser {
public:
  LineParser(const std::string &S) : S(S) {}

  bool parse(WSFunction &F, std::string &Why) {
    std::vector<std::string> Params;
    if (!ident(F.Name)) return fail(Why, "expected a function name");
    if (!eat('(')) return fail(Why, "expected '(' after the function name");
    if (!eat(')')) {
      do {
        if (eatWord("...")) { F.Variadic = true; break; }
        std::string P;
        if (!ident(P)) return fail(Why, "expected a parameter name or '...'");
        Params.push_back(P);
      } while (eat(','));
      if (!eat(')')) return fail(Why, "expected ')' after the parameters");
    }
    F.NumParams = Params.size();
    if (!eatWord("writes")) return fail(Why, "expected 'writes' after ')'");
    do {
      WSRegion R;
      std::string P;
      if (!ident(P) || !param(Params, P, R.Param))
        return fail(Why, "expected a parameter name before '['");
      if (!eat('[')) return fail(Why, "expected '[' after the written parameter");
      if (!expr(Params, R.Size, Why)) return false;
      if (!eat(']')) return fail(Why, "expected ']' after the size");
      R.Pointer = eatWord("pointer");
      if (R.Pointer && !(R.Size.size() == 1 && R.Size[0].size() == 1 &&
                         R.Size[0][0].K == WSFactor::Literal && R.Size[0][0].Value == 8))
        return fail(Why, "'pointer' needs a region of 8 bytes ([8])");
      F.Writes.push_back(R);
    } while (eat(','));
    skip();
    if (Pos != S.size()) return fail(Why, "unexpected text after the write set");
    return true;
  }

private:
  const std::string &S;
  size_t Pos = 0;

  bool fail(std::string &Why, const char *Msg) {
    Why = std::string(Msg) + " (column " + std::to_string(Pos + 1) + ")";
    return false;
  }
  void skip() { while (Pos < S.size() && isspace((unsigned char)S[Pos])) Pos++; }
  bool eat(char C) {
    skip();
    if (Pos < S.size() && S[Pos] == C) { Pos++; return true; }
    return false;
  }
  bool eatWord(const char *W) {
    skip();
    size_t N = strlen(W);
    if (S.compare(Pos, N, W) == 0) { Pos += N; return true; }
    return false;
  }
  bool ident(std::string &Out) {
    skip();
    size_t B = Pos;
    while (Pos < S.size() && (isalnum((unsigned char)S[Pos]) || S[Pos] == '_'))
      Pos++;
    Out = S.substr(B, Pos - B);
    return !Out.empty() && !isdigit((unsigned char)Out[0]);
  }
  static bool param(const std::vector<std::string> &Ps, const std::string &N,
                    unsigned &Idx) {
    for (unsigned I = 0; I < Ps.size(); I++)
      if (Ps[I] == N) { Idx = I; return true; }
    return false;
  }
  bool factor(const std::vector<std::string> &Ps, WSFactor &F, std::string &Why) {
    skip();
    if (Pos < S.size() && isdigit((unsigned char)S[Pos])) {
      F.K = WSFactor::Literal;
      F.Value = 0;
      while (Pos < S.size() && isdigit((unsigned char)S[Pos])) {
        // sizes are i64 at the call: a literal past 2^62 is a typo, and
        // reading it on would overflow (found by tests/fuzz/fuzz_wset)
        if (F.Value > ((long long)1 << 62) / 10)
          return fail(Why, "number too large for a size (at most 2^62)");
        F.Value = F.Value * 10 + (S[Pos++] - '0');
      }
      return true;
    }
    std::string W;
    if (!ident(W))
      return fail(Why, "expected a number, parameter, strlen(), wcslen() or formatted()");
    unsigned Idx;
    if (W == "strlen" || W == "wcslen" || W == "formatted") {
      std::string P;
      if (!eat('(') || !ident(P) || !param(Ps, P, Idx) || !eat(')'))
        return fail(Why, "expected '(parameter)' after strlen/wcslen/formatted");
      F.K = W == "strlen"   ? WSFactor::Strlen
            : W == "wcslen" ? WSFactor::Wcslen
                            : WSFactor::Formatted;
      F.Value = Idx;
      return true;
    }
    if (!param(Ps, W, Idx)) return fail(Why, "unknown parameter name in the size");
    F.K = WSFactor::Param;
    F.Value = Idx;
    return true;
  }
  bool expr(const std::vector<std::string> &Ps, WSExpr &E, std::string &Why) {
    do {
      WSTerm T;
      do {
        WSFactor F;
        if (!factor(Ps, F, Why)) return false;
        T.push_back(F);
      } while (eat('*'));
      E.push_back(T);
    } while (eat('+'));
    return true;
  }
};

} // namespace

bool WriteSets::parseText(const std::string &Text, const std::string &Origin,
                          std::string &Err) {
  std::istringstream In(Text);
  std::string Line;
  for (unsigned LineNo = 1; std::getline(In, Line); LineNo++) {
    size_t Hash = Line.find('#');
    if (Hash != std::string::npos) Line.resize(Hash);
    if (Line.find_first_not_of(" \t\r") == std::string::npos) continue;
    WSFunction F;
    std::string Why;
    if (!LineParser(Line).parse(F, Why)) {
      Err = Origin + ":" + std::to_string(LineNo) + ": " + Why;
      return false;
    }
    Funcs[F.Name] = F;
  }
  return true;
}

bool WriteSets::parseFile(const std::string &Path, std::string &Err) {
  std::ifstream In(Path);
  if (!In) {
    Err = Path + ": cannot open write-set file";
    return false;
  }
  std::stringstream SS;
  SS << In.rdbuf();
  return parseText(SS.str(), Path, Err);
}

// ---- sizes at a call site ----

Value *cairn::emitWriteSetSize(IRBuilderBase &B, CallBase *CB, const WSExpr &E) {
  Module &M = *CB->getModule();
  LLVMContext &Ctx = M.getContext();
  Type *Int64Ty = Type::getInt64Ty(Ctx), *Int32Ty = Type::getInt32Ty(Ctx);
  PointerType *PtrTy = PointerType::getUnqual(Ctx);
  auto Strlen = [&] { return M.getOrInsertFunction("strlen", Int64Ty, PtrTy); };
  auto Wcslen = [&] { return M.getOrInsertFunction("wcslen", Int64Ty, PtrTy); };
  auto Snprintf = [&] {
    return M.getOrInsertFunction(
        "snprintf", FunctionType::get(Int32Ty, {PtrTy, Int64Ty, PtrTy}, true));
  };
  Value *Sum = nullptr;
  for (const WSTerm &T : E) {
    Value *Prod = nullptr;
    for (const WSFactor &F : T) {
      Value *V = nullptr;
      switch (F.K) {
      case WSFactor::Literal:
        V = ConstantInt::get(Int64Ty, F.Value);
        break;
      case WSFactor::Param: {
        Value *A = CB->getArgOperand(F.Value);
        V = A->getType()->isPointerTy() ? B.CreatePtrToInt(A, Int64Ty)
                                        : B.CreateSExtOrTrunc(A, Int64Ty);
        break;
      }
      case WSFactor::Strlen:
        V = B.CreateCall(Strlen(), {CB->getArgOperand(F.Value)});
        break;
      case WSFactor::Wcslen:
        V = B.CreateCall(Wcslen(), {CB->getArgOperand(F.Value)});
        break;
      case WSFactor::Formatted: {
        // snprintf(NULL, 0, fmt, <the call's remaining arguments>)
        SmallVector<Value *, 8> Args = {ConstantPointerNull::get(PtrTy),
                                        ConstantInt::get(Int64Ty, 0)};
        for (unsigned A = F.Value; A < CB->arg_size(); A++)
          Args.push_back(CB->getArgOperand(A));
        V = B.CreateSExt(B.CreateCall(Snprintf(), Args), Int64Ty);
        break;
      }
      }
      Prod = Prod ? B.CreateMul(Prod, V) : V;
    }
    Sum = Sum ? B.CreateAdd(Sum, Prod) : Prod;
  }
  return Sum;
}

bool cairn::mayWriteMemory(const llvm::Instruction &I, const WriteSets &WS) {
  using namespace llvm;
  if (isa<StoreInst>(I) || isa<MemIntrinsic>(I) || isa<AtomicRMWInst>(I) ||
      isa<AtomicCmpXchgInst>(I))
    return true;
  if (auto *CB = dyn_cast<CallBase>(&I)) {
    Function *Callee = CB->getCalledFunction();
    return Callee && Callee->isDeclaration() && WS.lookup(Callee->getName().str());
  }
  return false;
}
