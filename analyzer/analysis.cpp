// analysis.cpp: phase 2 of cairn-analyze.
//
//  1. NVMOVE's walk (seed 001, section 3): a FIFO of functions seeded with
//     the load functions; every application struct type a visited function
//     modifies becomes a candidate. Optimizations: (a) skip functions whose
//     parameters are all non-pointer built-ins, (b) libc writers count as
//     assignments, (c) libc bodies are never visited, (d) each function once.
//  2. cairn's refinements, none of which may drop a true persistent type:
//     indirect calls followed through a field/variable points-to analysis;
//     layout variants folded; iterators and stack-only types dropped;
//     back-tracking from write/fwrite/pwrite as a second opinion on the rank.
#include "analysis.h"
#include "collect.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>

namespace cairn {
namespace {

struct CallEdge {
  std::string caller;
  size_t callIndex;
};

// Evidence chains longer than this many functions lower the rank.
constexpr size_t kNearDepth = 6;
// An evidence chain keeps at most this many steps: the load function, a
// mark saying how many calls were cut out, and the calls nearest the write.
constexpr size_t kMaxChain = 1000;

class Analyzer {
public:
  Analyzer(const ProgramFacts &f, const AnalysisOptions &o) : facts_(f), opts_(o) {
    res_.options = o;
    res_.appTypes = facts_.types.size();
    for (const auto &[key, f] : facts_.functions) {
      std::vector<std::string> &keys = byName_[functionName(key)];
      keys.push_back(key);
      if (keys.size() > 1) res_.sharedNames.insert(functionName(key));
    }
  }

  AnalysisResult run() {
    solvePointsTo();
    buildCallGraph();
    walkFromLoads();
    findAllocators();
    for (const auto &[key, c] : cands_) makeResult(key);
    if (!opts_.nvmoveOnly) {
      backTrackFromWrites();
      dropIterators();
      dropStackOnly();
      foldLayoutVariants();  // after the drops: a family lives if one member does
      score();
    } else {
      for (TypeResult &t : res_.types) {
        t.confidence = 1.0;
        t.level = "nvmove";
      }
    }
    attachAllocations();
    std::stable_sort(res_.types.begin(), res_.types.end(), [](const TypeResult &a, const TypeResult &b) {
      if (a.reported != b.reported) return a.reported;
      if (a.confidence != b.confidence) return a.confidence > b.confidence;
      return a.key < b.key;
    });
    return std::move(res_);
  }

private:
  // ---- function pointers: field/variable-based points-to, solved to a fixpoint
  void solvePointsTo() {
    pts_ = facts_.slotTargets;
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto &[src, dsts] : facts_.slotEdges) {
        auto it = pts_.find(src);
        if (it == pts_.end()) continue;
        for (const std::string &d : dsts) {
          std::set<std::string> &to = pts_[d];
          size_t before = to.size();
          to.insert(it->second.begin(), it->second.end());
          changed |= to.size() != before;
        }
      }
    }
  }

  // Targets of call `c`: the direct callee, or what its slot may hold; a
  // slot the analysis knows nothing about may hold any address-taken
  // function of the right type.
  std::vector<std::string> targets(const CallSite &c, bool count) {
    if (!c.callee.empty()) return {c.callee};
    if (opts_.nvmoveOnly) return {};
    if (count) res_.indirectCalls++;
    auto it = pts_.find(c.slot);
    std::vector<std::string> out;
    bool resolved = !c.slot.empty() && it != pts_.end() && !it->second.empty();
    if (resolved) {
      out.assign(it->second.begin(), it->second.end());
    } else {
      for (const auto &[fn, sig] : facts_.addressTaken)
        if (sig == c.signature) out.push_back(fn);
    }
    // A slot with very many targets is a command or plugin table
    // (redisCommand::proc: 254 commands); following it reaches the whole
    // program. It is not followed, and the report names it.
    if (opts_.maxTargets && out.size() > opts_.maxTargets) {
      if (count) {
        std::string name = c.slot.empty() ? "(call through " + c.signature + ")" : c.slot;
        res_.wideSlots[name] = out.size();
      }
      return {};
    }
    if (count && !out.empty()) (resolved ? res_.indirectResolved : res_.indirectByFallback)++;
    return out;
  }

  void buildCallGraph() {
    for (const auto &[name, f] : facts_.functions)
      for (size_t i = 0; i < f.calls.size(); ++i)
        for (const std::string &t : targets(f.calls[i], false))
          if (facts_.functions.count(t)) callers_[t].push_back({name, i});
  }

  // ---- 1. NVMOVE's FIFO walk
  bool skippedByOptA(const FunctionFacts &f) const {
    if (f.hasPointerParam) return false;
    // NVMOVE skips every such function; cairn still visits the ones that
    // can reach persistent state anyway: through a global or a result.
    return opts_.nvmoveOnly || (!f.writesGlobal && !f.returnsPointerOrRecord);
  }

  // The functions --load or --skip names: a name stands for every function
  // of that name (static ones in several files).
  std::vector<std::string> keysNamed(const std::string &name) const {
    auto it = byName_.find(name);
    return it == byName_.end() ? std::vector<std::string>{} : it->second;
  }

  // Up to three function names a mistyped one may have meant, closest first.
  std::vector<std::string> similarNames(const std::string &name) const {
    unsigned most = std::max<unsigned>(2, name.size() / 4);
    std::vector<std::pair<unsigned, std::string>> near;
    for (const auto &[other, keys] : byName_) {
      unsigned d = llvm::StringRef(name).edit_distance(other, true, most);
      if (d <= most) near.push_back({d, other});
    }
    std::sort(near.begin(), near.end());
    std::vector<std::string> out;
    for (size_t i = 0; i < near.size() && i < 3; ++i) out.push_back(near[i].second);
    return out;
  }

  void walkFromLoads() {
    std::deque<std::string> fifo;
    for (const std::string &l : opts_.loads) {
      std::vector<std::string> keys = keysNamed(l);
      if (keys.empty()) res_.missingLoads.push_back(l);
      for (const std::string &k : keys) {
        loads_.insert(k);
        if (parent_.emplace(k, CallStep{k, {}}).second) fifo.push_back(k);
      }
    }
    const std::set<std::string> &loads = loads_;
    for (const std::string &s : opts_.skip) {
      std::vector<std::string> keys = keysNamed(s);
      if (keys.empty()) res_.unknownSkips.push_back(s);
      for (const std::string &k : keys) {
        parent_.emplace(k, CallStep{k, {}});
        skipped_.insert(k);
      }
    }
    for (const auto &names : {res_.missingLoads, res_.unknownSkips})
      for (const std::string &n : names) res_.similarNames[n] = similarNames(n);
    while (!fifo.empty()) {
      std::string name = fifo.front();
      fifo.pop_front();
      const FunctionFacts &f = facts_.functions.at(name);
      if (!loads.count(name) && skippedByOptA(f)) {
        res_.skippedOptA++;
        continue;
      }
      res_.visited.push_back(name);
      for (const Write &w : f.writes) cands_[w.type].push_back({name, &w});
      for (const CallSite &c : f.calls) {
        if (!c.callee.empty() && isLibcFunction(c.callee) && !facts_.functions.count(c.callee)) {
          res_.libcCallsSummarized++;
          continue;
        }
        for (const std::string &t : targets(c, true)) {
          if (!facts_.functions.count(t)) continue;
          if (parent_.emplace(t, CallStep{name, c.loc}).second) {
            fifo.push_back(t);
            if (c.callee.empty() && getenv("CAIRN_ANALYZE_DEBUG"))
              llvm::errs() << "indirect " << name << " " << c.slot << " -> " << t << "\n";
          }
        }
      }
    }
    res_.candidateCount = cands_.size();
    // The same walk over direct calls only: types reached only through
    // function pointers rank lower (the points-to analysis over-approximates).
    std::deque<std::string> direct;
    for (const std::string &l : res_.visited)
      if (loads.count(l) && directReach_.insert(l).second) direct.push_back(l);
    while (!direct.empty()) {
      const FunctionFacts &f = facts_.functions.at(direct.front());
      direct.pop_front();
      for (const CallSite &c : f.calls) {
        auto it = facts_.functions.find(c.callee);
        if (c.callee.empty() || it == facts_.functions.end() || skipped_.count(c.callee)) continue;
        if (!loads.count(c.callee) && skippedByOptA(it->second)) continue;
        if (directReach_.insert(c.callee).second) direct.push_back(c.callee);
      }
    }
  }

  // Functions from the load function to `fn`, both included. parent_ is a
  // tree (a function is entered once, by a function already entered), so
  // the walk up ends at a load function.
  size_t depthOf(const std::string &fn) const {
    size_t n = 1;
    for (std::string cur = fn; parent_.at(cur).function != cur; cur = parent_.at(cur).function) ++n;
    return n;
  }

  std::vector<CallStep> chainTo(const std::string &fn) const {
    std::vector<CallStep> chain;
    for (std::string cur = fn;;) {
      const CallStep &p = parent_.at(cur);
      chain.push_back({cur, p.callSite});
      if (p.function == cur) break;
      cur = p.function;
    }
    std::reverse(chain.begin(), chain.end());
    if (chain.size() > kMaxChain) {
      size_t keep = kMaxChain - 2;  // besides the load function and the mark
      CallStep mark;
      mark.omitted = chain.size() - 1 - keep;
      chain.erase(chain.begin() + 1, chain.end() - keep);
      chain.insert(chain.begin() + 1, mark);
    }
    return chain;
  }

  void makeResult(const std::string &key) {
    TypeResult t;
    t.key = key;
    if (auto it = facts_.types.find(key); it != facts_.types.end()) {
      t.aliases = it->second.aliases;
      t.loc = it->second.loc;
    }
    if (auto it = facts_.globalOfType.find(key); it != facts_.globalOfType.end()) t.global = it->second;
    // Best evidence first: strongest kind, then shortest chain.
    std::vector<Evidence> ev;
    for (const auto &[fn, w] : cands_.at(key)) ev.push_back({chainTo(fn), *w});
    std::stable_sort(ev.begin(), ev.end(), [](const Evidence &a, const Evidence &b) {
      if (a.write.kind != b.write.kind) return a.write.kind < b.write.kind;
      return a.chain.size() < b.chain.size();
    });
    if (ev.size() > 3) ev.resize(3);
    t.evidence = std::move(ev);
    index_[key] = res_.types.size();
    res_.types.push_back(std::move(t));
  }

  TypeResult *result(const std::string &key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &res_.types[it->second];
  }

  // The strongest evidence, not counting counter updates (++, --, +=) when
  // there is anything else: a type only counted on the load path is
  // bookkeeping more often than state.
  // The load-path writes of a type and of the layout variants folded into it.
  std::vector<std::pair<std::string, const Write *>> familyWrites(const TypeResult &t) const {
    std::vector<std::pair<std::string, const Write *>> out = cands_.at(t.key);
    for (const std::string &v : t.variants) {
      const auto &more = cands_.at(v);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  WriteKind strongest(const TypeResult &t, bool *onlyCounters) const {
    WriteKind best = WriteKind::PointerVar, bestCounter = WriteKind::PointerVar;
    bool any = false;
    for (const auto &[fn, w] : familyWrites(t)) {
      bool counter = w->via == "++" || w->via == "--" || w->via == "compound assignment";
      if (counter) bestCounter = std::min(bestCounter, w->kind);
      else { best = std::min(best, w->kind); any = true; }
    }
    *onlyCounters = !any;
    return any ? best : bestCounter;
  }

  // ---- 2a. back-tracking from write-like sinks (NVMOVE section 3's alternative)
  void backTrackFromWrites() {
    std::set<std::pair<std::string, unsigned>> seenParams;
    std::function<void(const std::string &, const ValueInfo &, SinkWitness)> follow =
        [&](const std::string &fn, const ValueInfo &v, SinkWitness w) {
          const FunctionFacts &f = facts_.functions.at(fn);
          ValueInfo all = v;
          std::set<std::string> seenLocals;
          std::vector<std::string> todo(v.locals.begin(), v.locals.end());
          while (!todo.empty()) {
            std::string l = todo.back();
            todo.pop_back();
            if (!seenLocals.insert(l).second) continue;
            auto it = f.localFills.find(l);
            if (it == f.localFills.end()) continue;
            all.merge(it->second);
            todo.insert(todo.end(), it->second.locals.begin(), it->second.locals.end());
          }
          for (const std::string &t : all.types) {
            auto &wit = writeBack_[t];
            if (wit.size() < 3) wit.push_back(w);
            if (w.path.size() == 1) writeBackDirect_.insert(t);
          }
          // a holder reaches the write (its field points to what is
          // written) but is not what is written: evidence, never direct
          for (const std::string &t : all.holders) {
            if (all.types.count(t)) continue;
            auto &wit = writeBack_[t];
            if (wit.size() < 3) wit.push_back(w);
            writeBackHolder_.insert(t);
          }
          for (unsigned p : all.params) {
            if (!seenParams.insert({fn, p}).second) continue;
            auto it = callers_.find(fn);
            if (it == callers_.end()) continue;
            for (const CallEdge &e : it->second) {
              const CallSite &c = facts_.functions.at(e.caller).calls[e.callIndex];
              if (p >= c.args.size()) continue;
              SinkWitness next = w;
              next.path.push_back(e.caller);
              follow(e.caller, c.args[p], next);
            }
          }
        };
    for (const auto &[name, f] : facts_.functions)
      for (const SinkUse &s : f.sinks) follow(name, s.data, {s.sink, s.loc, {name}});
    for (TypeResult &t : res_.types) {
      auto it = writeBack_.find(t.key);
      if (it != writeBack_.end()) t.writeBack = it->second;
      t.writeBackDirect = writeBackDirect_.count(t.key);
    }
  }

  // ---- 2b. layout variants: same field names in order, types equal or both integers
  static std::string stripDigits(const std::string &s) {
    std::string o;
    for (char c : s)
      if (c < '0' || c > '9') o += c;
    return o;
  }
  bool sameLayoutFamily(const TypeFacts &a, const TypeFacts &b) const {
    if (a.fields.size() != b.fields.size() || a.fields.size() < 2) return false;
    if (stripDigits(typeTag(a.key)) != stripDigits(typeTag(b.key)) && a.fields.size() < 3) return false;
    for (size_t i = 0; i < a.fields.size(); ++i) {
      const FieldInfo &x = a.fields[i], &y = b.fields[i];
      if (x.name != y.name) return false;
      if (x.typeText != y.typeText && !(x.isInteger && y.isInteger)) return false;
    }
    return true;
  }
  void foldLayoutVariants() {
    // The member with the best evidence (strongest, nearest the load
    // function) names the family: Redis' sdshdr8 rather than hiredis' copy.
    auto best = [](const TypeResult &t) {
      if (t.evidence.empty()) return std::make_pair(int(WriteKind::PointerVar) + 1, SIZE_MAX);
      return std::make_pair(int(t.evidence[0].write.kind), t.evidence[0].chain.size());
    };
    std::stable_sort(res_.types.begin(), res_.types.end(),
                     [&](const TypeResult &a, const TypeResult &b) { return best(a) < best(b); });
    index_.clear();
    for (size_t i = 0; i < res_.types.size(); ++i) index_[res_.types[i].key] = i;
    for (size_t i = 0; i < res_.types.size(); ++i) {
      TypeResult &rep = res_.types[i];
      if (!rep.reported || !facts_.types.count(rep.key)) continue;
      for (size_t j = i + 1; j < res_.types.size(); ++j) {
        TypeResult &other = res_.types[j];
        if (!other.reported || !facts_.types.count(other.key)) continue;
        if (!sameLayoutFamily(facts_.types.at(rep.key), facts_.types.at(other.key))) continue;
        rep.variants.push_back(other.key);
        other.reported = false;
        other.dropReason = "layout variant (folded)";
        other.foldedInto = rep.key;
        folded_[other.key] = rep.key;
        rep.evidence.insert(rep.evidence.end(), other.evidence.begin(), other.evidence.end());
        std::stable_sort(rep.evidence.begin(), rep.evidence.end(), [](const Evidence &a, const Evidence &b) {
          if (a.write.kind != b.write.kind) return a.write.kind < b.write.kind;
          return a.chain.size() < b.chain.size();
        });
        if (rep.evidence.size() > 3) rep.evidence.resize(3);
        rep.writeBackDirect |= other.writeBackDirect;
        rep.writeBack.insert(rep.writeBack.end(), other.writeBack.begin(), other.writeBack.end());
      }
    }
  }

  // Types embedded in or pointed to by a field of another struct. With
  // `candidatesOnly`, only holders the load path itself modifies count: a
  // struct the load never touches holds nothing that was loaded.
  std::set<std::string> fieldTargets(const std::set<std::string> &exceptHolders,
                                     bool candidatesOnly = false) const {
    std::set<std::string> out;
    for (const auto &[k, t] : facts_.types) {
      if (exceptHolders.count(k) || (candidatesOnly && !cands_.count(k))) continue;
      for (const FieldInfo &f : t.fields)
        if (!f.target.empty() && f.target != k) out.insert(f.target);
    }
    return out;
  }

  // ---- 2c. iterators: live only in locals (no global, no field of another
  // struct, never converted to void * or char * outside free-like and libc
  // calls, not handed in or out of a load function), point into
  // candidates, and are never themselves written back to a file.
  void dropIterators() {
    std::set<std::string> loadSig;
    for (const std::string &l : loads_)
      if (auto it = facts_.functions.find(l); it != facts_.functions.end())
        loadSig.insert(it->second.signatureTypes.begin(), it->second.signatureTypes.end());
    // Fixpoint: a struct held only by iterators does not make them escape.
    std::set<std::string> iters;
    for (bool changed = true; changed;) {
      changed = false;
      std::set<std::string> held = fieldTargets(iters, true);
      for (TypeResult &t : res_.types) {
        if (!t.reported || iters.count(t.key) || !facts_.types.count(t.key)) continue;
        if (getenv("CAIRN_ANALYZE_DEBUG"))
          llvm::errs() << "iterator? " << t.key << " global=" << facts_.globalTypes.count(t.key)
                       << " held=" << held.count(t.key) << " load-signature=" << loadSig.count(t.key)
                       << " void*=" << facts_.untypedEscapes.count(t.key)
                       << " written-back=" << t.writeBackDirect << "\n";
        if (facts_.globalTypes.count(t.key) || held.count(t.key) || loadSig.count(t.key) ||
            facts_.untypedEscapes.count(t.key))
          continue;
        if (t.writeBackDirect) continue;
        bool pointsIntoCandidate = false;
        for (const FieldInfo &f : facts_.types.at(t.key).fields)
          if (f.viaPointer && f.target != t.key && cands_.count(f.target)) pointsIntoCandidate = true;
        if (!pointsIntoCandidate) continue;
        iters.insert(t.key);
        changed = true;
      }
    }
    for (TypeResult &t : res_.types)
      if (iters.count(t.key)) {
        t.reported = false;
        t.dropReason = "iterator: lives only in non-escaping locals and points into persistent types";
      }
  }

  // ---- 2d. stack-only: nothing can hold an instance beyond a stack frame:
  // no global, no field of any struct, no allocation, no pointer cast laying
  // it over other memory, not passed to or returned from a load function,
  // not a local of main.
  void dropStackOnly() {
    std::set<std::string> held = fieldTargets({});
    std::set<std::string> allocated;
    for (const AllocSite &a : facts_.allocs)
      if (!a.isFree && allocators_.count(a.allocator)) allocated.insert(a.type);
    // State handed to or returned by a load function outlives it, and so do
    // main's locals.
    std::set<std::string> escapes;
    for (const std::string &l : loads_)
      if (auto it = facts_.functions.find(l); it != facts_.functions.end())
        escapes.insert(it->second.signatureTypes.begin(), it->second.signatureTypes.end());
    if (auto it = facts_.functions.find("main"); it != facts_.functions.end())
      escapes.insert(it->second.localValueTypes.begin(), it->second.localValueTypes.end());
    for (TypeResult &t : res_.types) {
      if (!t.reported) continue;
      // Writes through a pointer (a callee filling the caller's local, as
      // fread(&hdr) or parse(&hdr) do) still count as stack-only when no
      // instance can be anywhere but on a stack.
      if (facts_.globalTypes.count(t.key) || held.count(t.key) || allocated.count(t.key) ||
          escapes.count(t.key) || facts_.castTargets.count(t.key))
        continue;
      t.reported = false;
      t.dropReason = "stack-only: every instance is a local variable; none outlives its function";
    }
  }

  bool isDispatchTable(const std::string &key) const {
    auto it = facts_.types.find(key);
    if (it == facts_.types.end() || it->second.fields.empty()) return false;
    size_t fps = 0;
    for (const FieldInfo &f : it->second.fields) fps += f.isFunctionPointer;
    return 2 * fps >= it->second.fields.size();
  }

  // ---- ranking
  void score() {
    std::set<std::string> confirmed;
    for (const TypeResult &t : res_.types)
      if (t.reported && t.writeBackDirect) confirmed.insert(t.key);
    for (TypeResult &t : res_.types) {
      if (!t.reported) continue;
      double s;
      bool onlyCounters = false;
      WriteKind kind = strongest(t, &onlyCounters);
      const auto writes = familyWrites(t);
      if (onlyCounters && kind <= WriteKind::Object) {
        s = 0.4;
        t.reasons.push_back("only counters (++, --, +=) are updated on the load path (+0.40)");
      } else switch (kind) {
      case WriteKind::Field:
      case WriteKind::Object:
        s = 0.6;
        t.reasons.push_back("an object of the type is modified on the load path (+0.60)");
        break;
      case WriteKind::LocalValue:
        s = 0.4;
        t.reasons.push_back("only local copies are modified on the load path (+0.40)");
        break;
      default:
        s = 0.3;
        t.reasons.push_back("only pointer variables to it are assigned on the load path (+0.30)");
      }
      bool linked = false;
      if (auto it = facts_.types.find(t.key); it != facts_.types.end())
        for (const FieldInfo &f : it->second.fields) linked |= confirmed.count(f.target) > 0;
      for (const auto &[k, ty] : facts_.types)
        for (const FieldInfo &f : ty.fields) linked |= f.target == t.key && confirmed.count(k);
      if (t.writeBackDirect) {
        s += 0.3;
        t.reasons.push_back("its fields are written to a file by a write-like call (+0.30)");
      } else if (!t.writeBack.empty()) {
        s += 0.2;
        t.reasons.push_back(writeBackHolder_.count(t.key)
                                ? "data of the type, or data a pointer field of it leads to, "
                                  "reaches a write-like call (+0.20)"
                                : "data of the type reaches a write-like call through callers (+0.20)");
      } else if (linked) {
        s += 0.15;
        t.reasons.push_back("holds or is held by a type confirmed by write-back (+0.15)");
      } else if (!writeBack_.empty()) {
        s -= 0.05;
        t.reasons.push_back("no write-back path found to any write-like call (-0.05)");
      }
      // State is rebuilt near the load function; writes found only deep in
      // the call graph are usually generic machinery the load happens to run.
      size_t depth = SIZE_MAX;
      for (const auto &[fn, w] : writes) depth = std::min(depth, depthOf(fn));
      if (depth > kNearDepth) {
        double p = std::min(0.2, 0.05 * double(depth - kNearDepth));
        s -= p;
        t.reasons.push_back("nearest write is " + std::to_string(depth - 1) +
                            " calls from the load function (-" + std::to_string(int(p * 100 + 0.5)) +
                            "/100)");
      }
      bool direct = false;
      for (const auto &[fn, w] : writes) direct |= directReach_.count(fn) > 0;
      if (!direct) {
        s -= 0.2;
        t.reasons.push_back("reached only through function pointers (-0.20)");
      }
      if (isDispatchTable(t.key)) {
        s -= 0.25;
        t.reasons.push_back("a dispatch table: most fields are function pointers, which do not "
                            "survive a restart (-0.25)");
      }
      if (facts_.globalTypes.count(t.key)) {
        s += 0.05;
        t.reasons.push_back("a global variable holds it (+0.05)");
      }
      // to the hundredth the steps are made of, so that the level agrees with
      // the confidence printed (a sum of steps can land on 0.49999999999999994)
      t.confidence = std::round(std::clamp(s, 0.05, 0.99) * 100) / 100;
      t.level = t.confidence >= 0.75 ? "high" : t.confidence >= 0.5 ? "medium" : "low";
    }
  }

  // ---- allocation sites for --suggest
  void findAllocators() {
    for (const char *a : {"malloc", "calloc", "realloc", "reallocarray", "aligned_alloc"})
      allocators_.insert(a);
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto &[name, f] : facts_.functions) {
        if (allocators_.count(name) || !f.returnsPointerOrRecord) continue;
        for (const CallSite &c : f.calls)
          if (!c.callee.empty() && allocators_.count(c.callee)) {
            allocators_.insert(name);
            changed = true;
            break;
          }
      }
    }
  }
  void attachAllocations() {
    std::set<std::pair<std::string, std::string>> seen;
    for (const AllocSite &a : facts_.allocs) {
      if (!a.isFree && !allocators_.count(a.allocator)) continue;
      std::string key = a.type;
      if (auto it = folded_.find(key); it != folded_.end()) key = it->second;
      TypeResult *t = result(key);
      if (!t || !seen.insert({key, a.loc.str() + a.allocator}).second) continue;
      t->allocs.push_back(a);
    }
  }

  const ProgramFacts &facts_;
  const AnalysisOptions &opts_;
  AnalysisResult res_;
  std::map<std::string, std::set<std::string>> pts_;
  std::map<std::string, std::vector<CallEdge>> callers_;
  std::map<std::string, CallStep> parent_;  // function -> who enqueued it, from where
  std::map<std::string, std::vector<std::pair<std::string, const Write *>>> cands_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::vector<SinkWitness>> writeBack_;
  std::set<std::string> writeBackDirect_;
  std::set<std::string> writeBackHolder_;   // reached a write as a holder (D in D->r)
  std::map<std::string, std::string> folded_;
  std::set<std::string> allocators_;
  std::set<std::string> directReach_, skipped_;
  std::set<std::string> loads_;                              // keys of the load functions
  std::map<std::string, std::vector<std::string>> byName_;  // function name -> keys
};

} // namespace

AnalysisResult analyze(const ProgramFacts &facts, const AnalysisOptions &opts) {
  return Analyzer(facts, opts).run();
}

} // namespace cairn
