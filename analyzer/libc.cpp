// libc.cpp: what cairn-analyze knows about libc (NVMOVE optimizations (b)
// and (c)): which calls write through an argument, which send data to a
// file, which allocate. Their bodies are never visited.
#include "collect.h"

namespace cairn {

namespace {
struct LibcWrite {
  const char *name;
  int args[4];
};
// Functions that write through a pointer argument (optimization (b)).
const LibcWrite kLibcWrites[] = {
    {"memcpy", {0, -1}},   {"memmove", {0, -1}},  {"memset", {0, -1}},
    {"bcopy", {1, -1}},    {"bzero", {0, -1}},    {"strcpy", {0, -1}},
    {"strncpy", {0, -1}},  {"stpcpy", {0, -1}},   {"strcat", {0, -1}},
    {"strncat", {0, -1}},  {"sprintf", {0, -1}},  {"snprintf", {0, -1}},
    {"vsprintf", {0, -1}}, {"vsnprintf", {0, -1}}, {"read", {1, -1}},
    {"pread", {1, -1}},    {"pread64", {1, -1}},  {"recv", {1, -1}},
    {"recvfrom", {1, -1}}, {"fread", {0, -1}},    {"fread_unlocked", {0, -1}},
    {"fgets", {0, -1}},    {"getline", {0, 1, -1}}, {"getdelim", {0, 1, -1}},
    {"readv", {1, -1}},    {"scanf", {101, -1}},  {"fscanf", {102, -1}},
    {"sscanf", {102, -1}}, {"__isoc99_fscanf", {102, -1}},
    {"__isoc99_sscanf", {102, -1}}, {"__isoc99_scanf", {101, -1}},
    {"__builtin_memcpy", {0, -1}}, {"__builtin_memmove", {0, -1}},
    {"__builtin_memset", {0, -1}}, {"__builtin___memcpy_chk", {0, -1}},
    {"__builtin___memmove_chk", {0, -1}}, {"__builtin___strcpy_chk", {0, -1}},
    {"__builtin___memset_chk", {0, -1}}, {"__builtin___snprintf_chk", {0, -1}},
    {"__builtin___sprintf_chk", {0, -1}}, {"__builtin_strcpy", {0, -1}},
};
const Sink kSinks[] = {
    {"write", 1, false, 0},   {"pwrite", 1, false, 0}, {"pwrite64", 1, false, 0},
    {"send", 1, false, 0},    {"sendto", 1, false, 0}, {"writev", 1, false, 0},
    {"fwrite", 0, false, 3},  {"fwrite_unlocked", 0, false, 3},
    {"fputs", 0, false, 1},   {"fputc", 0, false, 1},  {"putc", 0, false, 1},
    {"fprintf", 2, true, 0},  {"dprintf", 2, true, 0}, {"vfprintf", 2, true, 0},
};
const char *const kAllocators[] = {"malloc", "calloc", "realloc", "reallocarray",
                                   "aligned_alloc", "valloc", "memalign"};
const char *const kOtherLibc[] = {
    "free", "fopen", "fclose", "fdopen", "open", "close", "fflush", "fsync",
    "fdatasync", "fseek", "ftell", "rewind", "lseek", "strlen", "strcmp",
    "strncmp", "memcmp", "strchr", "strrchr", "strstr", "strdup", "strndup",
    "atoi", "atol", "strtol", "strtoul", "strtoll", "strtoull", "strtod",
    "printf", "puts", "perror", "exit", "abort", "fgetc", "getc", "feof",
    "ferror", "stat", "fstat", "unlink", "rename", "mmap", "munmap", "qsort",
    "bsearch", "time", "gettimeofday", "clock_gettime", "errno", "strerror",
    "isdigit", "isspace", "isalpha", "isalnum", "toupper", "tolower"};
} // namespace

const int *libcWrittenArgs(const std::string &fn) {
  for (const LibcWrite &w : kLibcWrites)
    if (fn == w.name) return w.args;
  return nullptr;
}
bool isLibcAllocator(const std::string &fn) {
  for (const char *a : kAllocators)
    if (fn == a) return true;
  return false;
}
const Sink *sinkFor(const std::string &fn) {
  for (const Sink &s : kSinks)
    if (fn == s.name) return &s;
  return nullptr;
}
bool isLibcFunction(const std::string &fn) {
  if (libcWrittenArgs(fn) || isLibcAllocator(fn) || sinkFor(fn)) return true;
  for (const char *a : kOtherLibc)
    if (fn == a) return true;
  return fn.rfind("__builtin", 0) == 0;
}

} // namespace cairn
