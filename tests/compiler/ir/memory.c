// memset/memcpy/memmove intrinsics and libc calls from write-set files.
// RUN: -O2 | O2
// RUN: -O0 | O0
// RUN: -O2 -fno-builtin | NOBUILTIN
#include <stdio.h>
#include <string.h>
#include <wchar.h>

struct rec { char name[32]; struct rec *link; long n; };

// O2-LABEL: define {{.*}}@clear(
// O2: call void @cairn__log_store(ptr %0, i64 48,
// O2: call void @llvm.memset
void clear(struct rec *r) { memset(r, 0, sizeof *r); }

// Byte copies into PM are logged first and scanned for PM addresses after.
// O2-LABEL: define {{.*}}@copy(
// O2: call void @cairn__log_store(ptr %0, i64 %2,
// O2: call void @llvm.memcpy
// O2: call void @cairn_cc__fix_words(ptr %0, i64 %2,
// NOBUILTIN-LABEL: define {{.*}}@copy(
// NOBUILTIN: call void @cairn__log_store(ptr %0, i64 %2,
// NOBUILTIN: call ptr @memcpy
void copy(void *d, const void *s, size_t n) { memcpy(d, s, n); }

// Write-set: strcpy writes strlen(src) + 1 bytes.
// O2-LABEL: define {{.*}}@name(
// O2: [[LEN:%.*]] = call i64 @strlen(ptr %1)
// O2: [[SZ:%.*]] = add i64 [[LEN]], 1
// O2: call void @cairn__log_store(ptr {{.*}}, i64 [[SZ]],
// O2: call ptr @strcpy
void name(char *dst, const char *src) { strcpy(dst, src); }

// Write-set: sprintf writes what snprintf(NULL, 0, ...) reports, plus one.
// O0-LABEL: define {{.*}}@format(
// O0: call i32 (ptr, i64, ptr, ...) @snprintf(ptr null, i64 0, ptr {{.*}}, i32
// O0: call void @cairn__log_store(
// O0: call i32 (ptr, ptr, ...) @sprintf(
void format(char *dst, int v) { sprintf(dst, "v=%d", v); }

// Write-set: fread writes size * n bytes.
// O2-LABEL: define {{.*}}@load(
// O2: [[N:%.*]] = mul i64 %1, %2
// O2: call void @cairn__log_store(ptr %0, i64 [[N]],
size_t load(void *buf, size_t size, size_t n, FILE *f) { return fread(buf, size, n, f); }

// Whole-struct assignment into PM: logged, then scanned for addresses.
// O0-LABEL: define {{.*}}@assign(
// O0: call void @cairn__log_store({{.*}}, i64 48,
// O0: call void @llvm.memcpy
// O0: call void @cairn_cc__fix_words({{.*}}, i64 48,
void assign(struct rec *d, struct rec s) { *d = s; }

// Type information decides what is scanned: a struct copy carries
// !tbaa.struct, so only its pointer field is checked for addresses ...
struct mixed { long a; struct rec *p; long b; long c; };
// O2-LABEL: define {{.*}}@copy_mixed(
// O2: call void @llvm.memcpy{{.*}}!tbaa.struct
// O2: [[F:%.*]] = getelementptr i8, ptr %0, i64 8
// O2: call void @cairn_cc__fix_words(ptr [[F]], i64 8,
// O2-NOT: cairn_cc__fix_words
// O2: ret void
void copy_mixed(struct mixed *d, const struct mixed *s) { *d = *s; }

// ... and a store TBAA calls `long` is a number, never converted.
// O2-LABEL: define {{.*}}@set_count(
// O2-NOT: cairn_cc__pm_word
// O2: ret void
void set_count(long *p, long v) { *p = v; }

// Wide strings: sizes in wide characters (wcslen), also glibc's checked
// variants (_FORTIFY_SOURCE).
// O2-LABEL: define {{.*}}@wide_cat(
// O2: [[D:%.*]] = call i64 @wcslen(ptr %0)
// O2: [[S:%.*]] = call i64 @wcslen(ptr %1)
// O2: call void @cairn__log_store(ptr %0, i64
// O2: call ptr @__wcscat_chk(
wchar_t *__wcscat_chk(wchar_t *, const wchar_t *, size_t);
void wide_cat(wchar_t *d, const wchar_t *s) { __wcscat_chk(d, s, 64); }

// The scanf family's targets are sized by its format: calls go to
// compiler/rt's wrapper, with (file, line, flags: 2 = the __isoc99_ flavour)
// first ...
// O2-LABEL: define {{.*}}@scan_into(
// O2: call i32 (ptr, i32, i32, ptr, ptr, ...) @cairn_cc__sscanf(ptr @.cairn.loc{{[.0-9]*}}, i32 0, i32 2, ptr %1, ptr {{.*}}, ptr %0)
// O2-NOT: @__isoc99_sscanf
// O2: ret i32
int scan_into(int *t, const char *s) { return sscanf(s, "%d", t); }

// ... but not when every target is on the stack or in a global.
// O2-LABEL: define {{.*}}@scan_local(
// O2: call i32 (ptr, ptr, ...) @__isoc99_sscanf(
int scan_local(const char *s) { int v = 0; sscanf(s, "%d", &v); return v; }

// strsep cuts the string *sp points to: always through the wrapper.
// O2-LABEL: define {{.*}}@cut(
// O2: call ptr @cairn_cc__strsep(ptr @.cairn.loc{{[.0-9]*}}, i32 0, i32 0, ptr %0, ptr
char *cut(char **sp) { return strsep(sp, ","); }
