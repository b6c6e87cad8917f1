// report.h: the ranked list, as text for people and JSON for tools.
#pragma once

#include "analysis.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn {

struct ReportOptions {
  bool suggest = false;      // allocation sites and the change each needs
  bool showDropped = true;   // list what the refinements dropped, and why
  std::string root;          // paths are printed relative to this
  double seconds = 0;        // time taken, for the summary line
  unsigned translationUnits = 0, failedUnits = 0;
};

// " (did you mean a, b?)": the function names close to one no function has.
std::string didYouMean(const AnalysisResult &r, const std::string &name);

void printText(const AnalysisResult &r, const ReportOptions &o, llvm::raw_ostream &os);
void printJson(const AnalysisResult &r, const ReportOptions &o, llvm::raw_ostream &os);

} // namespace cairn
