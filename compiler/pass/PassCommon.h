//===- PassCommon.h - what cairn's two instrumenters share ------*- C++ -*-===//
//
// The logging instrumenter (Instrumenter.h) and the trace instrumenter
// (TraceInstrument.cpp) run in one pass and agree on these:
//   - the options and counters, declared once in CairnOptions.def;
//   - which functions are instrumented at all (shouldInstrument);
//   - where a pointer can point (classify): the proof that a write goes to
//     DRAM, so needs no log and no trace record;
//   - the source site of an instruction (sourceSite) and the module's
//     constant strings that name it (StringConstants);
//   - the IR types and metadata both build with (IRBasics).
//===----------------------------------------------------------------------===//
#ifndef CAIRN_PASS_COMMON_H
#define CAIRN_PASS_COMMON_H

#include "WriteSet.h"

#include <string>

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"

namespace cairn {

using namespace llvm;

// ---- options and counters (defined in CairnPass.cpp) -----------------------
#define CAIRN_OPTIMIZATION(Var, Name, Default, Counter, Desc) extern cl::opt<bool> Var;
#define CAIRN_OPTION(Type, Var, Flag, Default, Desc) extern cl::opt<Type> Var;
#define CAIRN_LIST_OPTION(Var, Flag, Desc) extern cl::list<std::string> Var;
#define CAIRN_COUNTER(Var, Desc) extern TrackingStatistic Var;
#define CAIRN_TRACE_COUNTER(Var, Desc) extern TrackingStatistic Var;
#include "CairnOptions.def"

// Marks each function cairn's pass has seen: a .ll or .bc made by cairn-cc
// and compiled again (llvm-link, -save-temps, cairn-cc file.bc) is not
// instrumented twice.
inline constexpr const char *InstrumentedAttr = "cairn-instrumented";

// Is F's body instrumented? Not declarations, not cairn's own functions,
// not functions marked disable_sanitizer_instrumentation.
bool shouldInstrument(const Function &F);

// CAIRN_TX_FUNCTION and CAIRN_HEAP_POOL (PortLowering.cpp), lowered at the
// start of the pipeline.
bool lowerPortConveniences(Module &M);

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

// What the pass can prove about where a pointer points. Volatile: the stack,
// a global or fresh malloc memory (not with -cairn-persistent-heap); PM: a
// cairn_pm pointer, a cairn_alloc/cairn_root result or a pointer loaded from
// PM. -cairn-skip-volatile / -cairn-skip-check-pm turn each proof off.
enum class Where { Volatile, PM, Unknown };
Where classify(Value *Ptr, unsigned Depth = 0);

// Where an instruction's code came from: with -g its file, line and the
// function it was written in (which inlining may have moved); without, an
// empty file, line 0 and the function it is in.
struct SourceSite {
  std::string File;
  unsigned Line = 0;
  std::string Func;
};
SourceSite sourceSite(const Instruction *I);

// The module's private constant strings, one global per distinct string.
class StringConstants {
public:
  StringConstants(Module &M, const char *GlobalName) : M(M), GlobalName(GlobalName) {}
  Constant *get(StringRef S);

private:
  Module &M;
  const char *GlobalName;
  StringMap<Constant *> Strings;
};

// The types and metadata every instrumenter builds with.
struct IRBasics {
  explicit IRBasics(LLVMContext &Ctx)
      : Int64Ty(Type::getInt64Ty(Ctx)), Int32Ty(Type::getInt32Ty(Ctx)),
        PtrTy(PointerType::getUnqual(Ctx)), NoSanitize(MDNode::get(Ctx, {})) {}
  Type *Int64Ty, *Int32Ty;
  PointerType *PtrTy;
  // on the pass's own loads and stores: neither instrumenter touches them
  MDNode *NoSanitize;
};

} // namespace cairn

#endif
