// database.cpp: reads compile_commands.json for cairn-analyze. Clang's own
// loader reports a malformed file as "no database found" followed by lines
// of parser text, and takes a relative "directory" as relative to the
// caller's working directory. This one checks the file itself, names the
// first problem in one line with the fix, resolves a relative "directory"
// against the database's own directory, and then hands the result to clang
// with the same adjustments clang's loader makes.
#include "database.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace llvm;
using clang::tooling::CompilationDatabase;

namespace cairn {

const char kRegenerateDatabase[] =
    "regenerate it (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: `bear -- make` or "
    "`cairn analyze --make`)";

namespace {

// The first thing wrong with entry `e` (numbered from 1 for people), or "".
std::string entryProblem(const json::Value &v, size_t number) {
  std::string which = "entry " + std::to_string(number);
  const json::Object *e = v.getAsObject();
  if (!e) return which + " is not a JSON object";
  std::optional<StringRef> file = e->getString("file");
  const char *missing = nullptr;
  if (!e->getString("directory")) missing = "\"directory\"";
  else if (!file) missing = "\"file\"";
  else if (!e->getString("command") && !e->getArray("arguments")) missing = "\"command\" or \"arguments\"";
  if (!missing) return {};
  return which + " has no " + missing + (file ? " (file " + file->str() + ")" : std::string());
}

} // namespace

std::unique_ptr<CompilationDatabase> loadDatabase(const std::string &dir, std::string &problem) {
  SmallString<256> base(dir);
  sys::fs::make_absolute(base);
  sys::path::remove_dots(base, true);
  SmallString<256> path(base);
  sys::path::append(path, "compile_commands.json");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer) {
    std::string ignored;  // compile_flags.txt and clang's other plugins still count
    if (auto db = CompilationDatabase::autoDetectFromDirectory(base, ignored)) return db;
    problem = "no compile_commands.json in " + std::string(base) +
              "; make one with CMake (-DCMAKE_EXPORT_COMPILE_COMMANDS=ON) or `bear -- make` "
              "(`cairn analyze --make` runs it)";
    return nullptr;
  }
  std::string where(path);
  Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed) {
    problem = where + " is not valid JSON (" + toString(parsed.takeError()) + "); " + kRegenerateDatabase;
    return nullptr;
  }
  json::Array *entries = parsed->getAsArray();
  if (!entries) {
    problem = where + " is not a JSON array of compile commands; " + kRegenerateDatabase;
    return nullptr;
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    if (std::string p = entryProblem((*entries)[i], i + 1); !p.empty()) {
      problem = where + ": " + p + "; " + kRegenerateDatabase;
      return nullptr;
    }
    json::Object &e = *(*entries)[i].getAsObject();
    StringRef directory = *e.getString("directory");
    if (sys::path::is_relative(directory)) {
      SmallString<256> abs(base);
      sys::path::append(abs, directory);
      sys::path::remove_dots(abs, true);
      e["directory"] = std::string(abs);
    }
  }
  std::string text;
  raw_string_ostream os(text);
  os << *parsed;
  os.flush();
  std::string error;
  std::unique_ptr<CompilationDatabase> db = clang::tooling::JSONCompilationDatabase::loadFromBuffer(
      text, error, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (!db) {
    problem = where + ": " + error + "; " + kRegenerateDatabase;
    return nullptr;
  }
  // what clang's own loader does to a JSON database
  return clang::tooling::inferTargetAndDriverMode(clang::tooling::inferMissingCompileCommands(
      clang::tooling::expandResponseFiles(std::move(db), vfs::getRealFileSystem())));
}

} // namespace cairn
