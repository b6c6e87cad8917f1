// database.h: cairn-analyze's reading of compile_commands.json.
#pragma once

#include <memory>
#include <string>

namespace clang::tooling {
class CompilationDatabase;
}

namespace cairn {

// The compilation database in `dir`, or null with `problem` set to one line
// that says what is wrong and how to fix it.
std::unique_ptr<clang::tooling::CompilationDatabase> loadDatabase(const std::string &dir,
                                                                  std::string &problem);

// What to do about a database that is missing, malformed or stale.
extern const char kRegenerateDatabase[];

} // namespace cairn
