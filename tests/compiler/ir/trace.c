// cairn-cc --trace: a cairn__trace_store call after each write that may
// reach PM, after the pass's own conversion; an inline relaxed increment of
// cairn__trace_dram_stores after writes to locals and globals; the log
// optimizations unchanged (loop log still hoisted, dominated log still gone).
// RUN: -O2 -g --trace -fno-vectorize -fno-unroll-loops | O2
#include <string.h>

struct node { struct node *next; long val; char name[16]; };
long counter;

// Sites: (id filled in by the runtime, line, file, function)
// O2: @.cairn.trace.site{{.*}} = private global { i32, i32, ptr, ptr } { i32 0, i32 {{[0-9]+}}, ptr @.cairn.{{.*}}, ptr @.cairn.trace.str

// O2-LABEL: define {{.*}}@link(
// O2: call void @cairn__log_store(
// O2: call i64 @cairn__va2ra_checked(
// O2: store i64
// O2: call void @cairn__trace_store(ptr {{.*}}, i64 8, ptr @.cairn.trace.site
// O2: load atomic i64, ptr @cairn__trace_dram_stores monotonic
// O2: store atomic i64 {{.*}}, ptr @cairn__trace_dram_stores monotonic
void link(struct node *a, struct node *b)
{
    a->next = b;
    counter++;
}

// O2-LABEL: define {{.*}}@fill(
// O2: call void @cairn__log_store(ptr {{.*}}, i64 [[LEN:%.*]],
// O2-NOT: call void @cairn__log_store
// O2: store i64
// O2-NEXT: call void @cairn__trace_store(ptr {{.*}}, i64 8,
void fill(long *a, long n) { for (long i = 0; i < n; i++) a[i] = i; }

// O2-LABEL: define {{.*}}@name(
// O2: call void @cairn_cc__fix_words(
// O2: call void @cairn__trace_store(ptr {{.*}}, i64 16,
// O2: call i64 @strlen(ptr {{.*}}){{.*}}!nosanitize
// O2: call void @cairn__log_store(
// O2: call ptr @strcpy(
// O2-NEXT: call void @cairn__trace_store(ptr {{.*}}, i64
void name(struct node *n, const char *s)
{
    memcpy(n->name, "0123456789abcde", 16);
    strcpy(n->name, s);
}

