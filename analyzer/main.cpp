// cairn-analyze: which struct types of a legacy C program hold the state it
// saves to files? Walks from the program's load functions (NVMOVE, seed 001)
// and ranks what it finds; see docs/analyzer.md.
//
//   cairn-analyze --load rdbLoad -p build/ [--json] [--suggest] [files...]
#include "analysis.h"
#include "collect.h"
#include "database.h"
#include "report.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

using namespace llvm;

static cl::OptionCategory category("cairn-analyze options");
static cl::list<std::string> loadFns("load", cl::desc("Load function(s): where the program reads its saved state"),
                                     cl::CommaSeparated, cl::OneOrMore, cl::cat(category));
static cl::list<std::string> skipFns("skip", cl::desc("Function(s) the walk must not enter, e.g. an event loop run while loading"),
                                     cl::CommaSeparated, cl::cat(category));
static cl::opt<unsigned> maxTargets("max-targets",
                                    cl::desc("Do not follow an indirect call with more possible targets than this "
                                             "(a command table); 0 = follow all (default 32)"),
                                    cl::init(32), cl::cat(category));
static cl::opt<std::string> buildPath("p", cl::desc("Directory holding compile_commands.json"),
                                      cl::init("."), cl::cat(category));
static cl::list<std::string> sources(cl::Positional, cl::desc("[files to analyze; default: all in the database]"),
                                     cl::cat(category));
static cl::opt<bool> jsonOut("json", cl::desc("Print JSON instead of text"), cl::cat(category));
static cl::opt<bool> suggest("suggest", cl::desc("List allocation sites of the persistent types and the change each needs"),
                             cl::cat(category));
static cl::opt<bool> nvmove("nvmove", cl::desc("Reproduce NVMOVE alone (no points-to, folding, dropping or ranking)"),
                            cl::cat(category));
static cl::opt<bool> hideDropped("hide-dropped", cl::desc("Do not list dropped candidates"), cl::cat(category));
static cl::opt<unsigned> threads("j", cl::desc("Parser threads (default: all cores)"), cl::init(0), cl::cat(category));
static cl::opt<std::string> rootDir("root", cl::desc("Print paths relative to this directory (default: common source directory)"),
                                    cl::cat(category));

// Parsing a large program takes a while (1500 TUs: half a minute). How far
// it got goes to stderr, never stdout (the report, --json): on a terminal one
// line rewritten in place and cleared at the end, elsewhere (a log) a line
// every kProgressEvery TUs.
class Progress {
public:
  static constexpr size_t kProgressEvery = 100;
  explicit Progress(std::chrono::steady_clock::time_point start)
      : start_(start), terminal_(sys::Process::StandardErrIsDisplayed()) {}
  void operator()(size_t done, size_t total) {
    auto now = std::chrono::steady_clock::now();
    if (terminal_) {
      if (done != total && now - shown_ < std::chrono::milliseconds(100)) return;
      shown_ = now;
      errs() << "\rcairn-analyze: parsed " << done << "/" << total << " translation units";
      pending_ = true;
    } else if (done % kProgressEvery == 0) {
      errs() << "cairn-analyze: parsed " << done << "/" << total << " translation units ("
             << format("%.1f", std::chrono::duration<double>(now - start_).count()) << " s)\n";
    }
  }
  void finish() {
    if (pending_) errs() << "\r\x1b[K";
    pending_ = false;
  }

private:
  std::chrono::steady_clock::time_point start_, shown_;
  bool terminal_;
  bool pending_ = false;
};

static std::string commonDirectory(const std::vector<std::string> &files) {
  if (files.empty()) return {};
  std::string prefix = sys::path::parent_path(files[0]).str();
  for (const std::string &f : files)
    while (!prefix.empty() && !(StringRef(f).starts_with(prefix) &&
                                (f.size() == prefix.size() || f[prefix.size()] == '/')))
      prefix = sys::path::parent_path(prefix).str();
  return prefix;
}

int main(int argc, const char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "cairn-analyze: find the struct types that hold a C program's persistent state\n");
  auto start = std::chrono::steady_clock::now();
  // Report paths are absolute; --root is compared with them, so it is made
  // absolute too ("--root ." was compared as the string "." and did nothing).
  std::string root;
  if (!rootDir.empty()) {
    SmallString<256> abs(rootDir);
    sys::fs::make_absolute(abs);
    sys::path::remove_dots(abs, true);
    if (!sys::fs::is_directory(abs)) {
      errs() << "cairn-analyze: --root " << rootDir << ": no such directory\n";
      return 1;
    }
    root = std::string(abs);
    while (root.size() > 1 && root.back() == '/') root.pop_back();
  }

  std::string problem;
  std::unique_ptr<clang::tooling::CompilationDatabase> db = cairn::loadDatabase(buildPath, problem);
  if (!db) {
    errs() << "cairn-analyze: " << problem << "\n";
    return 2;
  }
  std::vector<std::string> files;
  if (sources.empty()) {
    files = db->getAllFiles();  // in hash order: sorted, so warnings come in a stable order
    std::sort(files.begin(), files.end());
  } else {
    for (const std::string &s : sources) {
      SmallString<256> abs(s);
      sys::fs::make_absolute(abs);
      files.push_back(std::string(abs));
    }
  }
  // Only C: the analysis reasons about C structs and libc.
  std::vector<std::string> cFiles;
  for (const std::string &f : files)
    if (StringRef(f).ends_with(".c")) cFiles.push_back(f);
  if (cFiles.empty()) {
    errs() << "cairn-analyze: the compilation database in '" << buildPath << "' lists no C files\n";
    return 2;
  }
  // A stale database names files since deleted: one line each (clang would
  // print its own lines and fail the TU), and the rest is analyzed.
  size_t listed = cFiles.size();
  cFiles.erase(std::remove_if(cFiles.begin(), cFiles.end(),
                              [](const std::string &f) {
                                if (sys::fs::exists(f)) return false;
                                errs() << "cairn-analyze: warning: " << f
                                       << " (in the compilation database) does not exist; skipped. "
                                          "The database is stale: "
                                       << cairn::kRegenerateDatabase << "\n";
                                return true;
                              }),
               cFiles.end());
  if (cFiles.empty()) {
    errs() << "cairn-analyze: none of the " << listed << " C files the compilation database in '"
           << buildPath << "' lists exists; " << cairn::kRegenerateDatabase << "\n";
    return 2;
  }

  unsigned n = threads ? unsigned(threads) : std::max(1u, std::thread::hardware_concurrency());
  cairn::ProgramFacts facts;
  Progress progress(start);
  bool parsed = cairn::collectFacts(*db, cFiles, n, facts, std::ref(progress));
  progress.finish();
  if (!parsed) {
    errs() << "cairn-analyze: none of the " << cFiles.size()
           << " files could be parsed with the compilation database's commands; check them or "
           << cairn::kRegenerateDatabase << "\n";
    return 2;
  }

  if (getenv("CAIRN_ANALYZE_DEBUG")) {
    for (const auto &[slot, fns] : facts.slotTargets)
      errs() << "points-to " << slot << " -> " << join(fns, ",") << "\n";
    for (const auto &[src, dsts] : facts.slotEdges)
      errs() << "slot-copy " << src << " -> " << join(dsts, ",") << "\n";
  }

  cairn::AnalysisOptions aopts;
  aopts.loads.assign(loadFns.begin(), loadFns.end());
  aopts.skip.assign(skipFns.begin(), skipFns.end());
  aopts.nvmoveOnly = nvmove;
  aopts.maxTargets = maxTargets;
  cairn::AnalysisResult result = cairn::analyze(facts, aopts);
  for (const std::string &s : result.unknownSkips)
    errs() << "cairn-analyze: warning: --skip " << s << ": no function of that name in the analyzed files"
           << cairn::didYouMean(result, s) << "; nothing is skipped for it\n";

  cairn::ReportOptions ropts;
  ropts.suggest = suggest;
  ropts.showDropped = !hideDropped;
  ropts.root = root.empty() ? commonDirectory(cFiles) : root;
  ropts.translationUnits = facts.translationUnits;
  ropts.failedUnits = facts.failedUnits;
  ropts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (jsonOut)
    cairn::printJson(result, ropts, outs());
  else
    cairn::printText(result, ropts, outs());
  if (facts.failedUnits)
    errs() << "cairn-analyze: warning: " << facts.failedUnits << " of " << facts.translationUnits
           << " translation unit(s) had compile errors, so what they say may be missing from "
              "this result; first: "
           << facts.firstError << " (check the compilation database's -I and -D flags)\n";
  if (result.missingLoads.size() == aopts.loads.size()) {
    errs() << "cairn-analyze: no load function found; check the names given to --load\n";
    return 3;
  }
  return 0;
}
