// Pointer-typed stores into PM store the relative form; pointer loads and
// inttoptr convert a relative value (bit 63 set) back.
// RUN: -O2 -fcairn-fold-translation | O2
// RUN: -O0 | O0
// RUN: -O2 -fno-cairn-skip-null-compare-loads -fcairn-fold-translation | NULLCMP
// RUN: -O2 -fno-cairn-inline-ra2va -fcairn-fold-translation | NOINLINE
// RUN: -O2 -fno-cairn-inline-va2ra -fcairn-fold-translation | NOVA
// RUN: -O2 -fno-cairn-local-ra-cache -fcairn-fold-translation | NOLOCAL
// RUN: -O2 -fcairn-fold-translation | HOIST
// RUN: -O2 -fno-cairn-hoist-conversions -fcairn-fold-translation | NOHOIST
// RUN: -O2 -fno-cairn-readonly-calls-keep-cache -fcairn-fold-translation | NORO
// RUN: -O2 -fno-cairn-fold-translation -fno-cairn-merge-sign-null-tests | THREAD
// RUN: -O2 -fno-cairn-fold-translation -fno-cairn-thread-null-tests -fno-cairn-merge-sign-null-tests | NOTHREAD
// RUN: -O2 -fno-cairn-plain-loop-chains -fno-cairn-merge-sign-null-tests -fcairn-fold-translation | FOLD
// RUN: -O2 -fno-cairn-plain-loop-chains -fno-cairn-split-translated-phis -fcairn-fold-translation | NOSPLIT
// RUN: -O2 -fno-cairn-merge-sign-null-tests -fcairn-fold-translation | PLAIN
// RUN: -O2 -fcairn-fold-translation | MERGE
// RUN: -O2 | DEFAULT
// RUN: -O2 -fcairn-fold-translation -fno-cairn-fold-translation | DEFAULT
#include <stdint.h>
#include <string.h>

struct node { struct node *next; long val; };

// O2-LABEL: define {{.*}}@link(
// O2: [[INPM:%.*]] = icmp ult
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: br i1 [[INPM]], label %[[PM:[0-9]+]], label %[[DRAM:[0-9]+]], !prof
// O2: [[PM]]:
// O2: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// O2: [[FAST:%.*]] = or i64
// O2: [[SLOW:%.*]] = call i64 @cairn__va2ra_checked(ptr %0, ptr %1,
// O2: call void @cairn_cc__ra_cache_note(i64 [[SLOW]], ptr %1)
// O2: [[REL:%.*]] = phi i64 [ [[FAST]], %{{[0-9]+}} ], [ [[SLOW]], %{{[0-9]+}} ]
// O2: store i64 [[REL]], ptr %0
// O2: [[DRAM]]:
// O2: store ptr %1, ptr %0
// NOVA-LABEL: define {{.*}}@link(
// NOVA-NOT: cairn_cc__ra_cache
// NOVA: [[REL:%.*]] = call i64 @cairn__va2ra_checked(ptr %0, ptr %1,
// NOVA: store i64 [[REL]], ptr %0
// O0-LABEL: define {{.*}}@link(
// O0: call i64 @cairn__va2ra_checked(
void link(struct node *n, struct node *m) { n->next = m; }

// O2-LABEL: define {{.*}}@unlink(
// O2-NOT: cairn__va2ra_checked
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2-NOT: cairn__va2ra_checked
// O2: store ptr null
void unlink(struct node *n) { n->next = 0; }

// The function keeps the translation cache in registers: loaded at entry
// as a key and an offset D, then one compare per relative load, and the
// pointer is the loaded value plus D (plus 0 for a virtual address).
// O2-LABEL: define {{.*}}@next(
// O2: [[C:%.*]] = load atomic i64, ptr @cairn_cc__ra_cache monotonic
// O2: load i64, ptr @cairn__region_lo
// O2: [[KEY:%.*]] = lshr i64 [[C]], 32
// O2: [[D:%.*]] = add i64
// O2: [[P:%.*]] = load ptr, ptr %0
// O2: [[BITS:%.*]] = ptrtoint ptr [[P]] to i64
// O2: icmp slt i64 [[BITS]], 0
// O2: [[HI:%.*]] = lshr i64 [[BITS]], 40
// O2: icmp eq i64 [[KEY]], [[HI]]
// O2: call preserve_mostcc ptr @cairn_cc__ra2va_miss(i64 [[BITS]])
// O2: [[DL:%.*]] = phi i64 [ [[D]], %{{[0-9]+}} ]
// O2: [[DV:%.*]] = phi i64 [ 0, %{{[0-9]+}} ], [ [[DL]], %{{[0-9]+}} ]
// O2: getelementptr i8, ptr [[P]], i64 [[DV]]
// NOLOCAL-LABEL: define {{.*}}@next(
// NOLOCAL: [[P:%.*]] = load ptr, ptr %0
// NOLOCAL: [[BITS:%.*]] = ptrtoint ptr [[P]] to i64
// NOLOCAL: icmp slt i64 [[BITS]], 0
// NOLOCAL: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// NOLOCAL: call preserve_mostcc ptr @cairn_cc__ra2va_miss(i64 [[BITS]])
// NOINLINE-LABEL: define {{.*}}@next(
// NOINLINE: call ptr @cairn__ra2va_slow(
// NOINLINE-NOT: cairn_cc__ra_cache
struct node *next(struct node *n) { return n->next; }

// O2-LABEL: define {{.*}}@from_int(
// O2: call preserve_mostcc ptr @cairn_cc__ra2va_miss(
struct node *from_int(uintptr_t u) { return (struct node *)u; }

// A loaded pointer only compared with NULL needs no conversion.
// O2-LABEL: define {{.*}}@is_last(
// O2-NOT: cairn_cc__ra2va_miss
// O2: ret i32
// NULLCMP-LABEL: define {{.*}}@is_last(
// NULLCMP: cairn_cc__ra2va_miss
int is_last(struct node *n) { return n->next == 0; }

// NVL-C's pointer hoisting: p does not change in the loop, so its relative
// form is computed once before it; each iteration compares region slots.
// HOIST-LABEL: define {{.*}}@fill(
// HOIST: [[SLOT:%.*]] = lshr i64 {{%.*}}, 40
// HOIST: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// HOIST: [[HREL:%.*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 0
// HOIST-NEXT: br label
// HOIST: call void @cairn__log_store(
// HOIST: icmp eq i64 [[SLOT]],
// HOIST: icmp ne i64 [[HREL]], 0
// HOIST: call i64 @cairn__va2ra_checked(
// HOIST: phi i64 [ [[HREL]],
// NOINLINE-LABEL: define {{.*}}@fill(
// NOHOIST-LABEL: define {{.*}}@fill(
// NOHOIST-NOT: cairn.hoist
// NOHOIST: load atomic i64, ptr @cairn_cc__ra_cache monotonic
struct item { struct item *next; struct node *owner; };
void fill(struct item *it, struct node *p)
{
    for (; it; it = it->next) it->owner = p;
}

// A call may close or reopen a pool: the register copy is reloaded after it.
// O2-LABEL: define {{.*}}@around_call(
// O2: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// O2: call void @elsewhere()
// O2-NEXT: load atomic i64, ptr @cairn_cc__ra_cache monotonic
void elsewhere(void);
struct node *around_call(struct node *a, struct node *b)
{
    struct node *x = a->next;
    elsewhere();
    return x ? b->next : 0;
}

// A call that only reads memory (strlen, memcmp, ...) cannot close or reopen
// a pool: the register copy stays, so nothing is reloaded between the call
// and the next relative load's miss path.
// O2-LABEL: define {{.*}}@around_strlen(
// O2: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// O2: call i64 @strlen(
// O2-NOT: load atomic i64, ptr @cairn_cc__ra_cache
// O2: call preserve_mostcc ptr @cairn_cc__ra2va_miss(
// NORO-LABEL: define {{.*}}@around_strlen(
// NORO: call i64 @strlen(
// NORO-NEXT: load atomic i64, ptr @cairn_cc__ra_cache monotonic
struct named { struct named *next; const char *name; };
long around_strlen(struct named *a, const char *s)
{
    struct named *x = a->next;
    long n = (long)strlen(s);
    return x ? n + (long)x->next->name : 0;
}

// A converted relative pointer is never NULL: the conversion's path jumps
// back to the loop body without the loop's NULL test, which stays for the
// unconverted (DRAM) value only.
// THREAD-LABEL: define {{.*}}@walk(
// THREAD: [[HEAD:[0-9]+]]:
// THREAD: [[P:%.*]] = load ptr, ptr
// THREAD: [[FAST:%.*]] = inttoptr i64
// THREAD: [[VA:%.*]] = phi ptr [ [[FAST]], %{{[0-9]+}} ], [ {{%.*}}, %{{[0-9]+}} ]
// THREAD-NEXT: br label %[[HEAD]]
// THREAD: phi ptr [ [[P]], %[[HEAD]] ]
// THREAD-NEXT: icmp eq ptr {{%.*}}, null
// NOTHREAD-LABEL: define {{.*}}@walk(
// NOTHREAD: inttoptr i64
// NOTHREAD: [[VA:%.*]] = phi ptr [ {{%.*}}, %{{[0-9]+}} ], [ {{%.*}}, %{{[0-9]+}} ]
// NOTHREAD: br label %[[TAIL:[0-9]+]]
// NOTHREAD: [[TAIL]]:
// NOTHREAD: phi ptr [ {{%.*}}, %{{[0-9]+}} ], [ [[VA]], %{{[0-9]+}} ]
// NOTHREAD-NEXT: icmp eq ptr
// default (plain loop chains): `n = n->next` is carried around the loop, so
// it is not folded: the loop's loads go through the value as loaded, the
// relative path alone adds the offset (inttoptr), and no phi is split
// PLAIN-LABEL: define {{.*}}@walk(
// PLAIN: [[LOOP:[0-9]+]]:
// PLAIN: [[P:%.*]] = phi ptr
// PLAIN-NOT: getelementptr i8, ptr [[P]], i64 %
// PLAIN: [[NEXT:%.*]] = load ptr, ptr [[P]]
// PLAIN: [[BITS:%.*]] = ptrtoint ptr [[NEXT]] to i64
// PLAIN: icmp slt i64 [[BITS]], 0
// PLAIN: [[SUM:%.*]] = add i64 [[BITS]],
// PLAIN-NEXT: inttoptr i64 [[SUM]] to ptr
// PLAIN: ret i64
// a load that is not carried around a loop is still folded: the field load
// goes through (loaded value + d), d = 0 on the virtual path
// PLAIN-LABEL: define {{.*}}@second(
// PLAIN: [[V:%.*]] = load ptr, ptr %0
// PLAIN: [[D:%.*]] = phi i64 [ 0, %{{[0-9]+}} ], [ {{%.*}}, %{{[0-9]+}} ]
// PLAIN-NEXT: [[VA:%.*]] = getelementptr i8, ptr [[V]], i64 [[D]]
// PLAIN-NOT: inttoptr
// PLAIN: ret i64
// the default (session 11): no load is folded; the relative path alone adds
// the offset and the two paths merge the pointers, so the virtual path uses
// the value as loaded (no zero offset kept in a register)
// DEFAULT-LABEL: define {{.*}}@second(
// DEFAULT: [[V:%.*]] = load ptr, ptr %0
// DEFAULT-NOT: phi i64 [ 0,
// DEFAULT: [[SUM:%.*]] = add i64
// DEFAULT-NEXT: inttoptr i64 [[SUM]] to ptr
// DEFAULT: phi ptr [ [[V]], %{{[0-9]+}} ]
// DEFAULT-NOT: getelementptr i8, ptr [[V]], i64 %
// DEFAULT: ret i64
// with -fno-cairn-plain-loop-chains the loop carries (loaded value, offset); the address is their sum
// (one gep), the NULL test tests the loaded value, a hit's offset is the
// register copy D, a DRAM pointer's is 0
// FOLD-LABEL: define {{.*}}@walk(
// FOLD: [[LOOP:[0-9]+]]:
// FOLD: [[BASE:%.*]] = phi ptr
// FOLD: [[D:%.*]] = phi i64
// FOLD-NEXT: [[VA:%.*]] = getelementptr i8, ptr [[BASE]], i64 [[D]]
// FOLD: [[NEXT:%.*]] = load ptr, ptr [[VA]]
// FOLD: icmp slt i64
// FOLD: phi i64 [ 0, %[[LOOP]] ], [ {{%.*}}, %{{[0-9]+}} ]
// FOLD: icmp eq ptr [[NEXT]], null
// FOLD-NOT: inttoptr
// FOLD: ret i64
// without the split the loop carries the sum itself
// NOSPLIT-LABEL: define {{.*}}@walk(
// NOSPLIT: phi ptr [ [[VA:%[0-9]+]], %{{[0-9]+}} ]
// NOSPLIT: [[NEXT:%.*]] = load ptr, ptr
// NOSPLIT: [[VA]] = getelementptr i8, ptr [[NEXT]], i64
// cairn-merge-sign-null-tests (default): the loop's NULL test and the
// translation's sign test are one signed test, `v <= 0`; only its true side
// (NULL or relative) tells the two apart, and the relative side goes to the
// loop body without a NULL test
// MERGE-LABEL: define {{.*}}@walk(
// MERGE: [[NEXT:%.*]] = load ptr, ptr
// MERGE-NEXT: [[BITS:%.*]] = ptrtoint ptr [[NEXT]] to i64
// MERGE-NEXT: [[LE:%.*]] = icmp sle i64 [[BITS]], 0
// MERGE-NEXT: br i1 [[LE]], label %[[COLD:[0-9]+]], label %[[FAST:[0-9]+]]
// MERGE: [[COLD]]:
// MERGE-NEXT: [[ISNULL:%.*]] = icmp eq i64 [[BITS]], 0
// MERGE-NEXT: br i1 [[ISNULL]], label %[[EXIT:[0-9]+]], label
// MERGE-NOT: icmp eq ptr
// MERGE: [[EXIT]]:
// MERGE-NEXT: phi i64
// MERGE-NEXT: ret i64
// a folded load tested against NULL (`if (p)`): the same single test
// MERGE-LABEL: define {{.*}}@guarded(
// MERGE: [[V:%.*]] = load ptr, ptr
// MERGE-NEXT: [[BITS:%.*]] = ptrtoint ptr [[V]] to i64
// MERGE-NEXT: icmp sle i64 [[BITS]], 0
// MERGE-NOT: icmp eq ptr [[V]], null
// MERGE: ret i64
long walk(struct node *n)
{
    long s = 0;
    for (; n; n = n->next) s += n->val;
    return s;
}

long second(struct node *n) { return n->next->val; }

long guarded(struct node *n)
{
    struct node *m = n->next;
    return m ? m->val : -1;
}
