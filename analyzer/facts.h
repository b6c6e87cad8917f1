// facts.h: what cairn-analyze learns from each translation unit.
//
// The analysis runs in two phases. Phase 1 (collect.cpp) parses every TU of
// the compilation database and boils each function down to a FunctionFacts:
// which application-defined struct types it modifies and how, what it calls
// (directly or through which function-pointer slot), what it hands to
// write-like sinks, and where it allocates. Phase 2 (analysis.cpp) runs the
// NVMOVE walk and cairn's refinements over these facts alone, so no AST is
// kept alive and the TUs can be parsed in parallel. Everything here is plain
// strings, so facts from different TUs merge by name (a static function's
// name carries its file: see FunctionFacts::name).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace cairn {

struct SrcLoc {
  std::string file;
  unsigned line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

// How a statement modified something of an application type T. The order is
// the strength of the evidence, strongest first.
enum class WriteKind {
  Field,       // p->f = ..., s.f += ..., p->f++      (an object of T changes)
  Object,      // *p = ..., memcpy(p, ...), fread(p, ...) with p a T*
  LocalValue,  // T t; t = ... / t.f = ... on a local T held by value
  PointerVar,  // T *p = ...; p = ...  (only a pointer to T changes)
};
const char *writeKindName(WriteKind k);

struct Write {
  std::string type;      // key of the application struct type
  WriteKind kind;
  std::string via;       // "assignment", "++", "memcpy", ...
  std::string text;      // the statement, shortened
  SrcLoc loc;
  std::string truncated; // what the walk of the lvalue left out, if it was cut
};

// What an expression handed to a call or a sink is made of: the
// application types it reads, the parameters and locals it mentions.
struct ValueInfo {
  std::set<std::string> types;
  // structs the value is only reached through: D in D->r when r points to
  // a struct (the struct pointed to is in types)
  std::set<std::string> holders;
  std::set<unsigned> params;
  std::set<std::string> locals;
  void merge(const ValueInfo &o) {
    types.insert(o.types.begin(), o.types.end());
    holders.insert(o.holders.begin(), o.holders.end());
    params.insert(o.params.begin(), o.params.end());
    locals.insert(o.locals.begin(), o.locals.end());
  }
};

struct CallSite {
  std::string callee;    // direct callee name, or "" for indirect
  std::string slot;      // indirect: function-pointer slot ("struct rio::write", "param:f#2", "var:cb")
  std::string signature; // indirect: canonical function type, for the fallback
  SrcLoc loc;
  std::vector<ValueInfo> args;
};

// A call to write/fwrite/pwrite/fprintf/...: the data it sends to a file.
struct SinkUse {
  std::string sink;
  SrcLoc loc;
  ValueInfo data;
};

struct AllocSite {
  std::string type;      // application type allocated
  std::string allocator; // malloc, calloc, realloc, or an application wrapper
  std::string text;
  std::string function;
  SrcLoc loc;
  bool isFree = false;
};

struct FunctionFacts {
  // The key: the function's name, or name@file (the file of its definition)
  // for a static function, since two files may each have their own.
  std::string name;
  SrcLoc loc;
  unsigned numParams = 0;
  bool hasPointerParam = false;   // NVMOVE optimization (a) looks at this
  bool writesGlobal = false;
  bool returnsPointerOrRecord = false;
  std::set<std::string> signatureTypes; // app types among parameters and return
  std::set<std::string> definedAt;  // definition sites merged into this entry
  std::vector<Write> writes;
  std::vector<CallSite> calls;
  std::vector<SinkUse> sinks;
  std::map<std::string, ValueInfo> localFills; // what is written into each local/param
  // Application types of locals held by value / by pointer in this function.
  std::set<std::string> localValueTypes;
};

// The parts of a function key: "reset@/src/b.c" -> "reset" and "/src/b.c".
inline std::string functionName(const std::string &key) { return key.substr(0, key.find('@')); }
inline std::string functionFile(const std::string &key) {
  size_t at = key.find('@');
  return at == std::string::npos ? std::string() : key.substr(at + 1);
}

// The tag of a struct key: "struct rec@/src/a.c:7" -> "struct rec" (a key
// carries its definition's place only when two files define the tag).
inline std::string typeTag(const std::string &key) {
  if (key.rfind("(anonymous", 0) == 0) return key;
  return key.substr(0, key.find('@'));
}

struct FieldInfo {
  std::string name;
  std::string typeText;   // canonical type spelling
  std::string target;     // application struct reached through it, if any
  bool viaPointer = false;
  bool isInteger = false;
  bool isFunctionPointer = false;
};

struct TypeFacts {
  std::string key;          // "struct entry", or a typedef name for an anonymous struct;
                            // "struct entry@file:line" when files define the tag differently
  std::set<std::string> aliases; // typedef names
  SrcLoc loc;
  bool isUnion = false;
  std::vector<FieldInfo> fields;
};

// Everything phase 1 learns about the program.
struct ProgramFacts {
  std::map<std::string, FunctionFacts> functions;   // by key (FunctionFacts::name)
  std::map<std::string, TypeFacts> types;           // application struct types by key (TypeFacts::key)
  std::set<std::string> declaredFunctions;          // functions declared anywhere (incl. libc)
  // Function-pointer points-to, field- and variable-based: slot -> functions.
  std::map<std::string, std::set<std::string>> slotTargets;
  // Copies between slots (s->cb = cb_param): source slot -> destination slots.
  std::map<std::string, std::set<std::string>> slotEdges;
  // Address-taken functions with their canonical type, for the fallback.
  std::map<std::string, std::string> addressTaken;  // function -> signature
  // Types whose pointers are converted to void * or char * (stored in a
  // generic container, robj->ptr style) outside free-like and libc calls.
  std::set<std::string> untypedEscapes;
  // Types a pointer cast lays over other memory: (struct T *)buf.
  std::set<std::string> castTargets;
  std::set<std::string> globalTypes;    // app types of global variables (value or pointer)
  std::map<std::string, std::string> globalOfType; // type -> an example global name
  std::vector<AllocSite> allocs;
  unsigned translationUnits = 0;
  unsigned failedUnits = 0;
  std::string firstError;   // "file:line: message" of the first TU with errors
};

} // namespace cairn
