//===- TraceInstrument.h - cairn-cc --trace: record writes to PM ----------===//
//
// The trace instrumentation runs inside the cairn pass, on each module
// before the logging instrumentation, so its calls sit right after the
// program's writes and the pass's own code (conversion, scans) goes before
// them. See TraceInstrument.cpp.
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TRACE_INSTRUMENT_H
#define CAIRN_TRACE_INSTRUMENT_H

#include "WriteSet.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Module.h"

namespace cairn {
// -cairn-trace given? Then instrument M's writes (calls of functions in WS
// too); true if M changed.
bool instrumentTraceStores(llvm::Module &M, const WriteSets &WS);
// A call the trace instrumentation inserted: it cannot begin or end a
// transaction, so the pass's log optimizations may look through it.
bool isTraceHook(llvm::StringRef Callee);
} // namespace cairn

#endif
