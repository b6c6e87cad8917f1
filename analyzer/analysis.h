// analysis.h: phase 2 of cairn-analyze, from facts to ranked persistent types.
#pragma once

#include "facts.h"

#include <string>
#include <vector>

namespace cairn {

struct AnalysisOptions {
  std::vector<std::string> loads;
  std::vector<std::string> skip;  // functions the walk must not enter (e.g. an event loop run while loading)
  bool nvmoveOnly = false;
  unsigned maxTargets = 32;       // indirect calls with more targets are not followed (0: no limit)  // reproduce NVMOVE (section 3) without cairn's refinements
};

struct CallStep {
  std::string function;
  SrcLoc callSite;  // where the previous function calls this one (empty for a load function)
  size_t omitted = 0;  // > 0: not a call but the mark where this many calls were cut out
};

struct Evidence {
  std::vector<CallStep> chain;  // load function -> ... -> function holding the write
  Write write;
};

struct SinkWitness {
  std::string sink;
  SrcLoc loc;
  std::vector<std::string> path;  // function of the sink, then callers back-tracked through
};

struct TypeResult {
  std::string key;
  std::set<std::string> aliases;
  SrcLoc loc;
  double confidence = 0;
  std::string level;               // high / medium / low
  bool reported = true;            // false: dropped by a refinement
  std::string dropReason;          // iterator / stack-only / layout variant
  std::string foldedInto;          // the type a layout variant is folded into
  std::vector<std::string> variants; // layout variants folded into this entry
  std::vector<std::string> reasons;  // how the confidence was reached
  std::vector<Evidence> evidence;    // best first, at most a few
  bool writeBackDirect = false;
  std::vector<SinkWitness> writeBack;
  std::vector<AllocSite> allocs;
  std::string global;              // a global variable of the type, if any
};

struct AnalysisResult {
  AnalysisOptions options;
  std::vector<std::string> missingLoads;
  std::vector<std::string> unknownSkips;   // --skip names no function has
  std::map<std::string, std::vector<std::string>> similarNames; // for each of those two: close names
  std::set<std::string> sharedNames;       // names of several functions (static ones in different files)
  std::vector<std::string> visited;        // in FIFO order
  unsigned skippedOptA = 0;                // NVMOVE optimization (a)
  unsigned libcCallsSummarized = 0;        // optimizations (b)/(c)
  unsigned indirectCalls = 0, indirectResolved = 0, indirectByFallback = 0;
  std::map<std::string, size_t> wideSlots; // slots not followed: too many targets
  unsigned candidateCount = 0;
  unsigned appTypes = 0;
  std::vector<TypeResult> types;           // reported first, by confidence
};

AnalysisResult analyze(const ProgramFacts &facts, const AnalysisOptions &opts);

} // namespace cairn
