// cairn-cc: a drop-in C compiler (`make CC=cairn-cc`) that runs clang 19
// with cairn's instrumentation pass and links cairn's runtime.
//
// It passes every argument to clang unchanged and adds:
//   compiling:  -fpass-plugin=CairnPass.so (plus -Xclang -load so that
//               -mllvm -cairn-* options parse), the write-set files,
//               -fplugin=CairnTypeId.so (CAIRN_TYPE_ID from the type's
//               layout, also with -fno-cairn), and -I for cairn.h;
//   preprocessing and compiling: -D__CAIRN_CC__ (cairn.h's marker form);
//   linking:    libcairn_cc_rt.a, then libcairn (shared if built, else
//               static), then -lpthread.
// Its parts are found relative to the executable, never at a path fixed at
// build time: in the build tree (build/compiler/cairn-cc beside its parts,
// build/runtime/libcairn.*) or in an install (PREFIX/bin/cairn-cc,
// PREFIX/LIBDIR/cairn/*, PREFIX/LIBDIR/libcairn.*, PREFIX/include/cairn.h;
// packaging/CairnInstall.cmake, docs/install.md).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <dirent.h>
#include <algorithm>
#include <cctype>

namespace {

// -fno-cairn-NAME / -fcairn-NAME: the pass's optimizations, from the one
// list of its options (compiler/pass/CairnOptions.def).
const char *const kOptimizations[] = {
#define CAIRN_OPTIMIZATION(Var, Name, Default, Counter, Desc) Name,
#include "../pass/CairnOptions.def"
};

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string selfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    fprintf(stderr, "cairn-cc: cannot find its own location (/proc/self/exe)\n");
    exit(2);
  }
  buf[n] = 0;
  std::string s(buf);
  return s.substr(0, s.rfind('/'));
}

std::string firstExisting(const std::vector<std::string> &cands) {
  for (const auto &c : cands)
    if (exists(c))
      return c;
  return "";
}

// Install directories relative to the installed bin/ (from CMake's
// GNUInstallDirs); a driver built without the install rules assumes the
// usual PREFIX/{bin,lib,include}.
#ifndef CAIRN_LIBDIR_FROM_BINDIR
#define CAIRN_LIBDIR_FROM_BINDIR "../lib"
#endif
#ifndef CAIRN_INCLUDEDIR_FROM_BINDIR
#define CAIRN_INCLUDEDIR_FROM_BINDIR "../include"
#endif

struct Layout {
  std::string clang, plugin, typeIdPlugin, include, rtlib, libShared, libStatic, wsetDir;
  // cairn-c++: libstdc++'s node functions (for real pools; for the heap),
  // operator new/delete in the heap
  std::string cxxRtlib, cxxRtlibHeap, cxxHeapLib;
  std::string driverMode;   // cairn-c++ through a clang given as CAIRN_CLANG
};

// Invoked as cairn-c++ (any name ending in "++"): clang++ and C++ inputs.
bool cxxMode(const char *argv0) {
  std::string n = argv0;
  n = n.substr(n.rfind('/') + 1);
  return n.size() >= 2 && n.compare(n.size() - 2, 2, "++") == 0;
}

// Each part: first where the build tree keeps it, then where an install does.
Layout findLayout(bool cxx) {
  std::string d = selfDir();
  std::string lib = d + "/" CAIRN_LIBDIR_FROM_BINDIR, priv = lib + "/cairn";
  Layout L;
  const char *envClang = getenv(cxx ? "CAIRN_CLANGXX" : "CAIRN_CLANG");
  L.clang = envClang && *envClang ? envClang : cxx ? CAIRN_CLANGXX_DEFAULT : CAIRN_CLANG_DEFAULT;
  const char *envC = getenv("CAIRN_CLANG");
  if (cxx && !(envClang && *envClang) && envC && *envC) {
    // only CAIRN_CLANG given (a wrapper, e.g. the sanitizer builds'): run it
    // as clang++
    L.clang = envC;
    L.driverMode = "--driver-mode=g++";
  }
  L.plugin = firstExisting({d + "/CairnPass.so", priv + "/CairnPass.so"});
  L.typeIdPlugin = firstExisting({d + "/CairnTypeId.so", priv + "/CairnTypeId.so"});
  L.include = firstExisting({d + "/include/cairn.h",
                             d + "/" CAIRN_INCLUDEDIR_FROM_BINDIR "/cairn.h"});
  if (!L.include.empty())
    L.include = L.include.substr(0, L.include.rfind('/'));
  L.rtlib = firstExisting({d + "/libcairn_cc_rt.a", priv + "/libcairn_cc_rt.a"});
  L.libShared = firstExisting({d + "/../runtime/libcairn.so", lib + "/libcairn.so"});
  L.libStatic = firstExisting({d + "/../runtime/libcairn.a", lib + "/libcairn.a"});
  L.wsetDir = firstExisting({d + "/wset", priv + "/wset"});
  L.cxxRtlib = firstExisting({d + "/libcairn_cxx_rt.a", priv + "/libcairn_cxx_rt.a"});
  L.cxxRtlibHeap = firstExisting({d + "/libcairn_cxx_rt_heap.a", priv + "/libcairn_cxx_rt_heap.a"});
  L.cxxHeapLib = firstExisting({d + "/libcairn_pheap_cxx.a", priv + "/libcairn_pheap_cxx.a"});
  return L;
}

// The directory a library was found in, without "..": the -rpath given
// to programs linked against libcairn.so. Empty for a directory the
// dynamic loader searches anyway (an install into /usr).
std::string rpathFor(const std::string &libPath) {
  std::string dir = libPath.substr(0, libPath.rfind('/'));
  char *real = realpath(dir.c_str(), nullptr);
  if (real) {
    dir = real;
    free(real);
  }
  for (const char *sys : {"/usr/lib", "/usr/lib/x86_64-linux-gnu", "/lib",
                          "/lib/x86_64-linux-gnu"})
    if (dir == sys)
      return "";
  return dir;
}

void usage(bool cxx) {
  if (cxx)
    printf("usage: cairn-c++ [clang++ options] [cairn options] files...\n"
           "\n"
           "A drop-in CXX: every clang++ 19 option works (C++17, C++20). cairn-c++\n"
           "is cairn-cc for C++: the same pass and options, template code (the\n"
           "standard containers, Boost, Armadillo) instrumented like the program's\n"
           "own, libstdc++'s node functions rebuilt with the pass, and with\n"
           "--persistent-heap every operator new/delete in the heap.\n");
  else
    printf("usage: cairn-cc [clang options] [cairn options] files...\n"
           "\n"
           "A drop-in CC: every clang 19 option works. cairn-cc compiles with\n"
           "cairn's pass (undo logging of every store that may reach persistent\n"
           "memory, relative pointers in PM, pointer-safety checks) and links\n"
           "libcairn. For C++, use cairn-c++.\n");
  printf(
      "\n"
      "cairn options:\n"
      "  --help                    this text\n"
      "  --cairn-config            print where cairn-cc finds its parts\n"
      "  --cairn-static            link libcairn.a even if libcairn.so exists\n"
      "  --cairn-count             count executed checks and conversions; set\n"
      "                            CAIRN_CC_COUNTS=FILE when running to get them\n"
      "  --cairn-wset=FILE         extra write-set file for precompiled functions\n"
      "  --cairn-print-type-ids    print each CAIRN_TYPE_ID's value and the layout\n"
      "                            text it checksums (a remark per use)\n"
      "  --persistent-heap[=FILE]  malloc/calloc/realloc/free of the program in a\n"
      "                            pool (volatile in meaning; default\n"
      "                            /dev/shm/cairn-heap-PID.pool, or\n"
      "                            CAIRN_PERSISTENT_HEAP=FILE at run time)\n"
      "  --trace                   store-tracing build: with CAIRN_TRACE=FILE at\n"
      "                            run time the trace also holds every store to\n"
      "                            PM (address, size, bytes, file:line with -g,\n"
      "                            else the function) and a count of stores to\n"
      "                            DRAM per thread; read it with `cairn trace`\n"
      "  -fno-cairn                compile without instrumentation (still links)\n"
      "  -fno-cairn-OPT / -fcairn-OPT   turn an optimization off / on:\n");
  for (const char *o : kOptimizations)
    printf("      %s\n", o);
  printf("  --cairn-stats             print the pass's counters: what was\n"
         "                            instrumented and what each optimization saved\n"
         "\n"
         "environment: CAIRN_CLANG overrides the clang binary.\n"
         "See docs/compiler.md.\n");
}

// Options whose value is the next argument (so it is not an input file).
bool takesSeparateValue(const std::string &a) {
  static const char *const opts[] = {
      "-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
      "-idirafter", "-x", "-MF", "-MT", "-MQ", "-Xlinker", "-Xclang",
      "-Xassembler", "-Xpreprocessor", "-mllvm", "-L", "-l", "-T", "-z",
      "-u", "-e", "-arch", "-target", "-isysroot", "--sysroot", "-gcc-toolchain",
      "-std-default", "-working-directory", "-aux-info", "-wrapper"};
  for (const char *o : opts)
    if (a == o)
      return true;
  return false;
}

std::string extension(const std::string &a) {
  size_t dot = a.rfind('.'), slash = a.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  return a.substr(dot + 1);
}

bool oneOf(const std::string &x, std::initializer_list<const char *> xs) {
  for (const char *e : xs)
    if (x == e)
      return true;
  return false;
}

// What an input is, by its -x language or else its extension.
enum class Input { C, Header, Preprocessed, IR, CPlusPlus, Other };
Input inputKind(const std::string &file, const std::string &lang) {
  std::string l = lang;
  if (l.empty() || l == "none") {
    std::string e = extension(file);
    if (file == "-")
      return Input::Other;          // stdin needs -x, which sets lang
    if (e == "c") return Input::C;
    if (e == "h") return Input::Header;
    if (e == "i") return Input::Preprocessed;
    if (e == "ll" || e == "bc") return Input::IR;
    if (oneOf(e, {"cc", "cpp", "cxx", "C", "c++", "cp", "CPP", "ii", "mm", "M",
                  "hh", "hpp", "hxx", "H"}))
      return Input::CPlusPlus;
    return Input::Other;            // objects, archives, assembly, ...
  }
  if (l == "c") return Input::C;
  if (l == "c-header") return Input::Header;
  if (l == "cpp-output") return Input::Preprocessed;
  if (l == "ir") return Input::IR;
  if (l.find("c++") != std::string::npos) return Input::CPlusPlus;
  return Input::Other;
}

// GNU-style response files (@FILE), as clang and gcc read them: arguments
// separated by white space, '...' and "..." quote, a backslash escapes the
// next character; @FILE inside one is read too. cairn-cc must see what is in
// them (a source file there needs the plugins, a -c there means no runtime
// libraries). A FILE that cannot be read stays a literal argument, as in gcc.
bool expandResponseFile(const std::string &path, std::vector<std::string> &out,
                        int depth) {
  FILE *f = fopen(path.c_str(), "r");
  if (!f)
    return false;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    text.append(buf, n);
  fclose(f);
  std::vector<std::string> words;
  std::string cur;
  bool inWord = false;
  for (size_t i = 0; i < text.size(); i++) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      inWord = true;
    } else if (c == '\'' || c == '"') {
      inWord = true;
      for (i++; i < text.size() && text[i] != c; i++) {
        if (c == '"' && text[i] == '\\' && i + 1 < text.size())
          i++;
        cur += text[i];
      }
    } else if (isspace((unsigned char)c)) {
      if (inWord)
        words.push_back(cur);
      cur.clear();
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord)
    words.push_back(cur);
  for (auto &w : words)
    if (w.size() > 1 && w[0] == '@' && depth < 20 &&
        expandResponseFile(w.substr(1), out, depth + 1))
      continue;
    else
      out.push_back(w);
  return true;
}

// Run a program and wait for it: its exit status, 128 + signal, or 127.
int runAndWait(const std::string &prog, char **argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execv(prog.c_str(), argv);
    fprintf(stderr, "cairn-cc: cannot run %s: %s\n", prog.c_str(), strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid < 0)
    return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

int main(int argc0, char **argv0) {
  std::vector<std::string> expanded;
  for (int i = 0; i < argc0; i++) {
    std::string a = argv0[i];
    if (i > 0 && a.size() > 1 && a[0] == '@' && expandResponseFile(a.substr(1), expanded, 0))
      continue;
    expanded.push_back(a);
  }
  std::vector<char *> argvv;
  for (auto &a : expanded)
    argvv.push_back(a.data());
  argvv.push_back(nullptr);
  int argc = (int)expanded.size();
  char **argv = argvv.data();
  const bool cxx = cxxMode(argv[0]);
  Layout L = findLayout(cxx);
  std::vector<std::string> user, extraWsets;
  bool link = true, compileSource = false, preprocessOnly = false,
       shared = false, staticRuntime = false, instrument = true, anyInput = false;
  std::vector<std::string> mllvm;
  bool persistentHeap = false, printTypeIds = false, languageSet = false;
  bool cSource = false, preprocessedInput = false, headerOnly = false, partialLink = false;
  bool cxxSource = false;
  std::string lang;
  std::string heapFile, genFile, genObj;

  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-help") {
      usage(cxx);
      return 0;
    }
    if (a == "--cairn-config") {
      printf("clang:    %s\nplugin:   %s\ntype ids: %s\ninclude:  %s\n"
             "rt:       %s\nlibcairn: %s\nwset dir: %s\n",
             L.clang.c_str(), L.plugin.c_str(), L.typeIdPlugin.c_str(), L.include.c_str(),
             L.rtlib.c_str(),
             (!L.libShared.empty() ? L.libShared : L.libStatic).c_str(),
             L.wsetDir.c_str());
      return 0;
    }
    if (a == "--cairn-static") { staticRuntime = true; continue; }
    if (a == "--cairn-count") { mllvm.push_back("-cairn-count"); continue; }
    if (a == "--cairn-stats") { mllvm.push_back("-cairn-stats"); continue; }
    if (a == "--cairn-print-type-ids") { printTypeIds = true; continue; }
    if (a.rfind("--cairn-wset=", 0) == 0) {
      std::string f = a.substr(13);
      if (f.empty()) {
        fprintf(stderr, "cairn-cc: --cairn-wset= names no file; give the write-set "
                        "file (--cairn-wset=FILE)\n");
        return 2;
      }
      if (access(f.c_str(), R_OK) != 0) {
        fprintf(stderr, "cairn-cc: cannot read write-set file %s: %s (check the path "
                        "given to --cairn-wset=)\n", f.c_str(), strerror(errno));
        return 2;
      }
      extraWsets.push_back(f);
      continue;
    }
    if (a == "--persistent-heap" || a.rfind("--persistent-heap=", 0) == 0) {
      persistentHeap = true;
      if (a == "--persistent-heap=") {
        fprintf(stderr, "cairn-cc: --persistent-heap= names no file; give one "
                        "(--persistent-heap=FILE) or drop the '=' for the default\n");
        return 2;
      }
      if (a.size() > 18) heapFile = a.substr(18);
      mllvm.push_back("-cairn-persistent-heap");
      continue;
    }
    if (a == "--trace") { mllvm.push_back("-cairn-trace"); continue; }
    if (a == "-fno-cairn") { instrument = false; continue; }
    if (a == "-fcairn") { instrument = true; continue; }
    if (oneOf(a, {"-m32", "-m16", "-mx32"})) {
      fprintf(stderr, "cairn-cc: %s is not supported: cairn's persistent pointers are "
                      "8 bytes and its runtime is built for x86-64; build for x86-64 "
                      "(drop %s)\n", a.c_str(), a.c_str());
      return 2;
    }
    if (a.rfind("--target=", 0) == 0 || a == "-target" || a == "--target") {
      std::string t = a[a.size() - 1] == 't' && i + 1 < argc ? argv[i + 1]
                                                              : a.substr(a.find('=') + 1);
      if (t.rfind("x86_64", 0) != 0 || t.find("gnux32") != std::string::npos) {
        fprintf(stderr, "cairn-cc: target %s is not supported: cairn's runtime is built "
                        "for x86-64 Linux only; build for x86_64-linux-gnu\n", t.c_str());
        return 2;
      }
    }
    if (a == "-flto" || a.rfind("-flto=", 0) == 0) {
      // The pass runs at the end of the per-file pipeline; with LTO the
      // linker's optimizer would run after it, or without it.
      fprintf(stderr, "cairn-cc: %s is not supported: the linker's LTO pipeline "
                      "would run without cairn's pass; drop -flto\n", a.c_str());
      return 2;
    }
    if (a.rfind("-fno-cairn-", 0) == 0 || a.rfind("-fcairn-", 0) == 0) {
      bool on = a[2] != 'n';
      std::string opt = a.substr(on ? 8 : 11);
      if (std::find_if(std::begin(kOptimizations), std::end(kOptimizations),
                       [&](const char *o) { return opt == o; }) ==
          std::end(kOptimizations)) {
        fprintf(stderr, "cairn-cc: unknown optimization '%s' (see --help)\n", opt.c_str());
        return 2;
      }
      // the last of -fcairn-OPT / -fno-cairn-OPT wins, as with clang's own
      // -f/-fno- pairs (a Makefile's CFLAGS often append to a default):
      // only the last reaches the pass
      std::string prefix = "-cairn-" + opt + "=";
      mllvm.erase(std::remove_if(mllvm.begin(), mllvm.end(),
                                 [&](const std::string &m) { return m.rfind(prefix, 0) == 0; }),
                  mllvm.end());
      mllvm.push_back(prefix + (on ? "true" : "false"));
      continue;
    }
    user.push_back(a);
    if (oneOf(a, {"-c", "-S", "-fsyntax-only", "-M", "-MM", "--compile", "--assemble",
                  "--analyze", "--precompile"}))
      link = false;
    if (a == "-E" || a == "--preprocess") { link = false; preprocessOnly = true; }
    if (a == "-shared") shared = true;
    if (a == "-r") partialLink = true;   // ld -r: an object, no runtime in it
    if (a == "-static") staticRuntime = true;
    if (a == "-x" || (a.size() > 2 && a.compare(0, 2, "-x") == 0)) {
      lang = a == "-x" ? (i + 1 < argc ? argv[i + 1] : "") : a.substr(2);
      languageSet = lang != "none";
    }
    if (takesSeparateValue(a) && i + 1 < argc) {
      user.push_back(argv[++i]);
      continue;
    }
    bool isInput = a == "-" || (!a.empty() && a[0] != '-');
    if (!isInput)
      continue;
    anyInput = true;
    switch (inputKind(a, lang)) {
    case Input::C: cSource = compileSource = true; break;
    case Input::Header: cSource = compileSource = headerOnly = true; break;
    case Input::Preprocessed: compileSource = preprocessedInput = true; break;
    case Input::IR: compileSource = true; break;
    case Input::CPlusPlus:
      if (!cxx) {
        fprintf(stderr, "cairn-cc: %s is C++; compile it with cairn-c++ (the same "
                        "options, clang++ with cairn's pass)\n", a.c_str());
        return 2;
      }
      cSource = compileSource = cxxSource = true;
      break;
    case Input::Other: break;
    }
  }
  if (headerOnly || partialLink)
    link = false;   // a precompiled header, or ld -r: no runtime in it
  if (!anyInput)
    link = false; // e.g. cairn-cc --version, cairn-cc -v

  std::vector<std::string> args = {L.clang};
  if (!L.driverMode.empty())
    args.push_back(L.driverMode);
  args.insert(args.end(), user.begin(), user.end());
  // cairn.h and its macros only where C is preprocessed: on a .i, .ll or
  // .bc alone clang would warn that -I went unused (an error with -Werror)
  bool preprocesses = cSource || preprocessOnly;
  if (!L.include.empty() && preprocesses)
    args.push_back("-I" + L.include);
  if (preprocesses) {
    // NVL-C style qualifier: pointers to PM by declaration (docs/compiler.md)
    args.push_back("-Dcairn_pm=__attribute__((address_space(7)))");
    // cairn.h's CAIRN_TYPE_ID marker, which the type-id plugin rewrites; a
    // preprocessed file keeps the marker for the compile that follows.
    args.push_back("-D__CAIRN_CC__=1");
    // cairn.h's CAIRN_TX_FUNCTION / CAIRN_HEAP_POOL need the pass: without
    // it they stop the build instead of leaving a file volatile
    if (!instrument)
      args.push_back("-D__CAIRN_CC_NO_PASS__=1");
    // libstdc++ declares most of its std::string, stream and locale
    // templates "extern": the program would call copies compiled into
    // libstdc++.so, outside cairn's pass. The prelude turns those
    // declarations off, so every template the program uses is instantiated
    // in it and instrumented (docs/compiler.md, "C++").
    if (cxx && (cxxSource || cSource) && !L.include.empty())
      args.insert(args.end(), {"-include", L.include + "/cairn_cxx_prelude.h"});
  }
  if ((cSource || preprocessedInput) && !preprocessOnly) {
    // Type ids come from the layout whenever cairn-cc compiles, so that
    // -fno-cairn objects open the same pools. Without the plugin cairn.h's
    // marker type has an unknown attribute, which cairn.h makes an error.
    if (L.typeIdPlugin.empty()) {
      fprintf(stderr, "cairn-cc: CairnTypeId.so not found next to %s or in %s/"
                      CAIRN_LIBDIR_FROM_BINDIR "/cairn; build the cairn-cc target, "
                      "or reinstall cairn\n", selfDir().c_str(), selfDir().c_str());
      return 2;
    }
    args.push_back("-fplugin=" + L.typeIdPlugin);
    if (printTypeIds)
      args.insert(args.end(), {"-Xclang", "-plugin-arg-cairn-type-id", "-Xclang", "print"});
  }
  if (compileSource && !preprocessOnly && instrument) {
    if (L.plugin.empty()) {
      fprintf(stderr, "cairn-cc: CairnPass.so not found next to %s or in %s/"
                      CAIRN_LIBDIR_FROM_BINDIR "/cairn; build the cairn-cc target, "
                      "or reinstall cairn\n", selfDir().c_str(), selfDir().c_str());
      return 2;
    }
    args.insert(args.end(), {"-fpass-plugin=" + L.plugin, "-Xclang", "-load",
                             "-Xclang", L.plugin});
    if (!L.wsetDir.empty()) {
      if (DIR *dir = opendir(L.wsetDir.c_str())) {
        std::vector<std::string> files;
        while (dirent *e = readdir(dir)) {
          std::string n = e->d_name;
          if (n.size() > 5 && n.substr(n.size() - 5) == ".wset")
            files.push_back(L.wsetDir + "/" + n);
        }
        closedir(dir);
        std::sort(files.begin(), files.end());
        for (auto &f : files)
          mllvm.push_back("-cairn-wset=" + f);
      }
    }
    for (auto &w : extraWsets)
      mllvm.push_back("-cairn-wset=" + w);
    for (auto &m : mllvm)
      // through -Xclang: only the compile jobs load the plugin that defines
      // these; an assembler job (a .S among the inputs) would reject them
      args.insert(args.end(), {"-Xclang", "-mllvm", "-Xclang", m});
  }
  if (link && languageSet)
    args.insert(args.end(), {"-x", "none"});   // the libraries below are not C
  if (link && persistentHeap) {
    std::string dir = L.rtlib.substr(0, L.rtlib.rfind('/'));
    if (cxx) {
      // operator new/delete in the heap; before libcairn_pheap.a, which
      // defines the __wrap_malloc they call
      if (L.cxxHeapLib.empty()) {
        fprintf(stderr, "cairn-c++: libcairn_pheap_cxx.a not found next to %s; build "
                        "the cairn_pheap_cxx target\n", selfDir().c_str());
        return 2;
      }
      args.push_back(L.cxxHeapLib);
    }
    args.push_back(dir + "/libcairn_pheap.a");
    args.push_back("-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,"
                   "--wrap=reallocarray,--wrap=malloc_usable_size,--wrap=getline,"
                   "--wrap=getdelim,--wrap=__getdelim");
    if (!heapFile.empty()) {
      // The pool path, compiled into the program (removed after the link).
      char tmpl[] = "/tmp/cairn-cc-heap-XXXXXX.c";
      int fd = mkstemps(tmpl, 2);
      if (fd < 0) { perror("cairn-cc: temporary file"); return 2; }
      std::string lit;
      for (char c : heapFile) {
        if (c == '"' || c == '\\') lit += '\\';
        lit += c;
      }
      std::string text = "const char cairn_cc__pheap_file[] = \"" + lit + "\";\n";
      if (write(fd, text.data(), text.size()) != (ssize_t)text.size()) {
        perror("cairn-cc: temporary file");
        return 2;
      }
      close(fd);
      genFile = tmpl;
      // compiled on its own, without the user's flags (-Werror with
      // -Weverything would reject a file the user never wrote)
      genObj = genFile.substr(0, genFile.size() - 2) + ".o";
      const char *gen[] = {L.clang.c_str(), "-c", "-w", "-x", "c", genFile.c_str(),
                           "-o", genObj.c_str(), nullptr};
      int rc = runAndWait(L.clang, const_cast<char **>(gen));
      unlink(genFile.c_str());
      if (rc != 0) {
        fprintf(stderr, "cairn-cc: could not compile the persistent heap's file name "
                        "(%s failed)\n", L.clang.c_str());
        unlink(genObj.c_str());
        return 2;
      }
      args.push_back(genObj);
    }
  }
  if (link && cxx) {
    // ahead of libstdc++ (which clang++ adds last): the program's calls to
    // the tree and list node functions bind to cairn's instrumented copies
    const std::string &rt = persistentHeap ? L.cxxRtlibHeap : L.cxxRtlib;
    if (rt.empty()) {
      fprintf(stderr, "cairn-c++: %s not found next to %s; build the cairn_cxx_rt "
                      "target\n", persistentHeap ? "libcairn_cxx_rt_heap.a"
                                                 : "libcairn_cxx_rt.a", selfDir().c_str());
      return 2;
    }
    args.push_back(rt);
  }
  if (link) {
    if (!L.rtlib.empty()) {
      args.push_back(L.rtlib);
    }
    std::string lib = (!staticRuntime && !L.libShared.empty()) ? L.libShared
                                                              : L.libStatic;
    if (lib.empty()) {
      fprintf(stderr, "cairn-cc: libcairn not found (looked in %s/../runtime and "
                      "%s/" CAIRN_LIBDIR_FROM_BINDIR "); build the `cairn` target, or "
                      "reinstall cairn\n", selfDir().c_str(), selfDir().c_str());
      return 2;
    }
    if (!(shared && lib == L.libStatic)) {
      args.push_back(lib);
      std::string rpath = lib == L.libShared ? rpathFor(lib) : "";
      if (!rpath.empty())
        args.push_back("-Wl,-rpath," + rpath);
    }
    args.push_back("-lpthread");
  }

  if (getenv("CAIRN_CC_VERBOSE")) {
    for (auto &a : args)
      fprintf(stderr, "%s ", a.c_str());
    fputc('\n', stderr);
  }
  std::vector<char *> cargs;
  for (auto &a : args)
    cargs.push_back(const_cast<char *>(a.c_str()));
  cargs.push_back(nullptr);
  if (genObj.empty()) {
    execv(L.clang.c_str(), cargs.data());
    fprintf(stderr, "cairn-cc: cannot run %s: %s\n", L.clang.c_str(), strerror(errno));
    return 127;
  }
  int rc = runAndWait(L.clang, cargs.data());
  unlink(genObj.c_str());
  return rc;
}
