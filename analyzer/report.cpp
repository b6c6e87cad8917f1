// report.cpp: prints an AnalysisResult. Both forms carry the same facts: the
// ranked types, each with its confidence and why, its evidence chains
// (load function -> ... -> statement, file:line), the write-back witness,
// and with --suggest the allocation sites to move to cairn_alloc.
#include "report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace cairn {
namespace {

std::string rel(const std::string &path, const std::string &root) {
  if (root == "/" && !path.empty() && path[0] == '/') return path.substr(1);
  if (!root.empty() && path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
      path[root.size()] == '/')
    return path.substr(root.size() + 1);
  return path;
}
std::string where(const SrcLoc &l, const ReportOptions &o) {
  return rel(l.file, o.root) + ":" + std::to_string(l.line);
}

// A function as the user reads it: its name, and the file of a static one
// when another function has the same name ("reset (b.c)").
std::string function(const std::string &key, const AnalysisResult &r, const ReportOptions &o) {
  std::string name = functionName(key);
  if (name == key || !r.sharedNames.count(name)) return name;
  return name + " (" + rel(functionFile(key), o.root) + ")";
}
std::vector<std::string> functions(const std::vector<std::string> &keys, const AnalysisResult &r,
                                   const ReportOptions &o) {
  std::vector<std::string> out;
  for (const std::string &k : keys) out.push_back(function(k, r, o));
  return out;
}

// The change an allocation site needs to move its objects into a pool.
std::string suggestion(const AllocSite &a, const AnalysisResult &r, const ReportOptions &o) {
  if (a.isFree) return "free() -> cairn_free(ptr), inside the CAIRN_TX that unlinks the object";
  if (a.allocator == "malloc" || a.allocator == "aligned_alloc")
    return "malloc(size) -> cairn_alloc(pool, size) (memory comes back zeroed)";
  if (a.allocator == "calloc")
    return "calloc(n, size) -> cairn_alloc(pool, n * size) (already zeroed)";
  if (a.allocator == "realloc" || a.allocator == "reallocarray")
    return "realloc has no cairn twin: cairn_alloc the new size, copy, cairn_free the old "
           "block, all inside one CAIRN_TX";
  return "allocated through " + function(a.allocator, r, o) +
         "(): give it a pool (or add a cairn_alloc twin) for this type";
}

// A type as the user reads it: its tag, and where it is defined when files
// define the tag differently ("struct rec (a.c:7)").
std::string typeName(const std::string &key, const ReportOptions &o) {
  // "(anonymous struct at /abs/rio.h:80)": the place as every other path
  static const std::string anon = "(anonymous ";
  if (key.rfind(anon, 0) == 0) {
    size_t at = key.find(" at ");
    if (at != std::string::npos && key.back() == ')')
      return key.substr(0, at + 4) + rel(key.substr(at + 4, key.size() - at - 5), o.root) + ")";
    return key;
  }
  std::string tag = typeTag(key);
  if (tag == key) return key;
  return tag + " (" + rel(key.substr(tag.size() + 1), o.root) + ")";
}
std::vector<std::string> typeNames(const std::vector<std::string> &keys, const ReportOptions &o) {
  std::vector<std::string> out;
  for (const std::string &k : keys) out.push_back(typeName(k, o));
  return out;
}

std::string dropReason(const TypeResult &t, const ReportOptions &o) {
  if (t.foldedInto.empty()) return t.dropReason;
  return "layout variant of " + typeName(t.foldedInto, o) + " (folded)";
}

// The advice for a global of the type: the pool's root is typed.
std::string globalChange(const TypeResult &t) {
  std::string type = typeTag(t.key);
  if (type.rfind("(anonymous", 0) == 0) type = "T (a name for this anonymous type)";
  return "keep it in the pool instead: CAIRN_ROOT(pool, " + type +
         ") for the root object, or a pointer to it from the root";
}

std::string displayName(const TypeResult &t, const ReportOptions &o) {
  std::string s = typeName(t.key, o);
  for (const std::string &a : t.aliases)
    if (a != t.key) {
      s += " (typedef " + a + ")";
      break;
    }
  return s;
}

// Scores are sums of hundredths; JSON shows them as such, not as
// 0.8999999999999999.
double rounded(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

llvm::json::Value locJson(const SrcLoc &l, const ReportOptions &o) {
  return llvm::json::Object{{"file", rel(l.file, o.root)}, {"line", l.line}};
}

} // namespace

std::string didYouMean(const AnalysisResult &r, const std::string &name) {
  auto it = r.similarNames.find(name);
  if (it == r.similarNames.end() || it->second.empty()) return {};
  return " (did you mean " + llvm::join(it->second, ", ") + "?)";
}

void printText(const AnalysisResult &r, const ReportOptions &o, llvm::raw_ostream &os) {
  for (const std::string &m : r.missingLoads)
    os << "warning: load function '" << m << "' is not defined in any analyzed file"
       << didYouMean(r, m) << "\n";
  unsigned reported = 0;
  for (const TypeResult &t : r.types) reported += t.reported;
  os << "cairn analyze: " << reported << " persistent type(s) from "
     << (r.options.loads.empty() ? std::string("?") : llvm::join(r.options.loads, ","))
     << (r.options.nvmoveOnly ? " [NVMOVE mode]" : "") << "\n";
  os << "  " << r.visited.size() << " functions visited, " << r.candidateCount << " candidate types of "
     << r.appTypes << " application types, " << o.translationUnits << " TUs";
  if (o.failedUnits) os << " (" << o.failedUnits << " with errors)";
  os << ", " << llvm::format("%.2f", o.seconds) << " s\n";
  for (const auto &[slot, n] : r.wideSlots)
    os << "  not followed: indirect calls through " << slot << " (" << n
       << " possible targets; raise --max-targets to follow)\n";
  os << "\n";
  unsigned rank = 0;
  for (const TypeResult &t : r.types) {
    if (!t.reported) continue;
    os << llvm::format("%2u. ", ++rank) << displayName(t, o) << "  confidence "
       << llvm::format("%.2f", t.confidence) << " (" << t.level << ")";
    if (!t.loc.file.empty()) os << "  defined at " << where(t.loc, o);
    os << "\n";
    if (!t.variants.empty())
      os << "    layout variants folded in: " << llvm::join(typeNames(t.variants, o), ", ") << "\n";
    for (const std::string &why : t.reasons) os << "    - " << why << "\n";
    for (const Evidence &e : t.evidence) {
      os << "    evidence: ";
      for (size_t i = 0; i < e.chain.size(); ++i) {
        if (i) os << " -> ";
        if (e.chain[i].omitted) {
          os << "... " << e.chain[i].omitted << " calls omitted ...";
          continue;
        }
        os << function(e.chain[i].function, r, o);
        if (i) os << " [" << where(e.chain[i].callSite, o) << "]";
      }
      os << "\n      " << where(e.write.loc, o) << ": " << writeKindName(e.write.kind) << " by "
         << e.write.via << ": " << e.write.text;
      if (!e.write.truncated.empty()) os << " [" << e.write.truncated << "]";
      os << "\n";
    }
    if (!t.writeBack.empty()) {
      const SinkWitness &w = t.writeBack.front();
      os << "    write-back: " << w.sink << " at " << where(w.loc, o) << " via "
         << llvm::join(functions(w.path, r, o), " <- ") << "\n";
    }
    if (o.suggest) {
      if (!t.global.empty())
        os << "    global " << t.global << ": " << globalChange(t) << "\n";
      if (t.allocs.empty() && t.global.empty())
        os << "    allocation: no heap allocation site found (embedded in another type)\n";
      for (const AllocSite &a : t.allocs)
        os << "    " << (a.isFree ? "free" : "alloc") << " " << where(a.loc, o) << " in "
           << function(a.function, r, o) << ": " << a.text << "\n      change: " << suggestion(a, r, o)
           << "\n";
    }
  }
  if (!o.showDropped) return;
  bool header = false;
  for (const TypeResult &t : r.types) {
    if (t.reported) continue;
    if (!header) os << "\nDropped candidates (NVMOVE would report these):\n";
    header = true;
    os << "  - " << displayName(t, o) << ": " << dropReason(t, o) << "\n";
  }
}

void printJson(const AnalysisResult &r, const ReportOptions &o, llvm::raw_ostream &os) {
  llvm::json::Array types;
  for (const TypeResult &t : r.types) {
    llvm::json::Array evidence;
    for (const Evidence &e : t.evidence) {
      llvm::json::Array chain;
      for (const CallStep &s : e.chain) {
        if (s.omitted) {
          chain.push_back(llvm::json::Object{{"omitted_calls", int64_t(s.omitted)}});
          continue;
        }
        llvm::json::Object step{{"function", function(s.function, r, o)}};
        if (!s.callSite.file.empty()) step["call_site"] = locJson(s.callSite, o);
        chain.push_back(std::move(step));
      }
      llvm::json::Object statement{{"file", rel(e.write.loc.file, o.root)},
                                   {"line", e.write.loc.line},
                                   {"kind", writeKindName(e.write.kind)},
                                   {"via", e.write.via},
                                   {"text", e.write.text}};
      if (!e.write.truncated.empty()) statement["truncated"] = e.write.truncated;
      evidence.push_back(llvm::json::Object{{"chain", std::move(chain)}, {"statement", std::move(statement)}});
    }
    llvm::json::Array writeBack;
    for (const SinkWitness &w : t.writeBack)
      writeBack.push_back(llvm::json::Object{
          {"sink", w.sink}, {"at", locJson(w.loc, o)}, {"path", functions(w.path, r, o)}});
    llvm::json::Array allocs;
    for (const AllocSite &a : t.allocs)
      allocs.push_back(llvm::json::Object{{"kind", a.isFree ? "free" : "alloc"},
                                          {"allocator", function(a.allocator, r, o)},
                                          {"function", function(a.function, r, o)},
                                          {"at", locJson(a.loc, o)},
                                          {"text", a.text},
                                          {"change", suggestion(a, r, o)}});
    llvm::json::Object obj{{"name", typeName(t.key, o)},
                           {"aliases", std::vector<std::string>(t.aliases.begin(), t.aliases.end())},
                           {"reported", t.reported},
                           {"confidence", rounded(t.confidence, 2)},
                           {"level", t.level},
                           {"variants", typeNames(t.variants, o)},
                           {"reasons", t.reasons},
                           {"evidence", std::move(evidence)},
                           {"write_back", std::move(writeBack)},
                           {"write_back_direct", t.writeBackDirect}};
    if (!t.loc.file.empty()) obj["defined_at"] = locJson(t.loc, o);
    if (!t.reported) obj["drop_reason"] = dropReason(t, o);
    if (o.suggest) obj["allocation_sites"] = std::move(allocs);
    if (!t.global.empty()) obj["global"] = t.global;
    if (!t.global.empty() && o.suggest) obj["global_change"] = globalChange(t);
    types.push_back(std::move(obj));
  }
  llvm::json::Object top{
      {"load_functions", r.options.loads},
      {"mode", r.options.nvmoveOnly ? "nvmove" : "cairn"},
      {"missing_load_functions", r.missingLoads},
      {"unknown_skip_functions", r.unknownSkips},
      {"stats",
       llvm::json::Object{{"seconds", rounded(o.seconds, 3)},
                          {"translation_units", o.translationUnits},
                          {"translation_units_with_errors", o.failedUnits},
                          {"application_types", r.appTypes},
                          {"candidate_types", r.candidateCount},
                          {"functions_visited", (int64_t)r.visited.size()},
                          {"skipped_by_optimization_a", r.skippedOptA},
                          {"libc_calls_summarized", r.libcCallsSummarized},
                          {"indirect_calls", r.indirectCalls},
                          {"indirect_resolved_by_points_to", r.indirectResolved},
                          {"indirect_resolved_by_signature", r.indirectByFallback}}},
      {"not_followed", [&] {
         llvm::json::Object o;
         for (const auto &[slot, n] : r.wideSlots) o[slot] = int64_t(n);
         return o;
       }()},
      {"visited", functions(r.visited, r, o)},
      {"types", std::move(types)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(top))) << "\n";
}

} // namespace cairn
