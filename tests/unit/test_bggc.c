/* test_bggc.c -- the background mark after a crash (gc.c): the open
 * returns at once, the program changes the graph while the mark runs
 * (moves objects between lists, hides a pointer in an object the mark may
 * have scanned already, frees and allocates), and afterwards every object
 * the program can reach is intact and allocated, and nothing else is.
 *
 * CAIRN_TEST_GC_SLOW makes the mark pause every 64 objects, so the
 * program's changes overlap it; the test checks they did. A reachable
 * object freed by mistake would be handed out again by the allocations
 * after the mark and poisoned: the walks after that catch it. */
#include "harness.h"
#include "internal.h"

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
/* a simulated crash _exits with the mark's thread running: not a leak */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }
#  endif
#endif

struct leaf { uint64_t val; uint64_t pad[5]; };
struct node { uint64_t next; uint64_t other; uint64_t spare; uint64_t val; };
struct root { uint64_t a, b; uint64_t na, nb; };
static const char *PATH;
enum { N = 6000, GARBAGE = 2000 };

/* builds list a of N nodes, each with a leaf, plus garbage; dies unclosed */
static void build_and_crash(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_create(PATH, "bggc", 64 << 20);
    struct root *r = CAIRN_ROOT(p, struct root);
    for (int i = 0; i < N; i++) {
        CAIRN_TX(p) {
            struct node *x = cairn_alloc(p, sizeof *x);
            struct leaf *l = cairn_alloc(p, sizeof *l);
            l->val = (uint64_t)i * 7;
            x->val = (uint64_t)i;
            cairn_ptr_store(&x->other, l);
            cairn_ptr_store(&x->next, cairn_ptr_load(&r->a));
            cairn_ptr_store(&r->a, x);
            cairn_tx_add(&r->na, 8);
            r->na++;
        }
    }
    for (int i = 0; i < GARBAGE; i++) {            /* leaked: allocated, never linked */
        struct node *g = cairn_alloc(p, sizeof *g);
        cairn_ptr_store(&g->other, cairn_alloc(p, sizeof(struct leaf)));
    }
    struct node *c1 = cairn_alloc(p, sizeof *c1), *c2 = cairn_alloc(p, sizeof *c2);
    cairn_ptr_store(&c1->next, c2);                 /* an unreachable cycle */
    cairn_ptr_store(&c2->next, c1);
    _exit(0);
}

/* every node of both lists has the leaf it was built with (val*7), except
 * the ones whose leaf moved to spare: then other is NULL */
static int walk(cairn_pool *p, uint64_t *count)
{
    struct root *r = CAIRN_ROOT(p, struct root);
    int bad = 0;
    uint64_t n = 0;
    for (int list = 0; list < 2; list++)
        for (struct node *x = cairn_ptr_load(list ? &r->b : &r->a); x;
             x = cairn_ptr_load(&x->next), n++) {
            struct leaf *l = cairn_ptr_load(&x->other);
            struct leaf *s = cairn_ptr_load(&x->spare);
            if (l && l->val != x->val * 7) bad++;
            if (s && s->val % 7 != 0) bad++;
        }
    *count = n;
    return bad;
}

/* the mark's state, read under its lock (the thread writes it) */
static int gc_state(cairn_pool *p)
{
    pthread_mutex_lock(&p->gc.lock);
    int st = p->gc.state;
    pthread_mutex_unlock(&p->gc.lock);
    return st;
}

/* a pool left by build_and_crash, opened with env set to 1 (if not NULL) */
static cairn_pool *open_after_crash(const char *name, const char *env)
{
    PATH = t_path(name);
    CHECK(t_child(build_and_crash, NULL, NULL, 0) == 0);
    if (env) setenv(env, "1", 1);
    cairn_pool *p = cairn_pool_open(PATH, "bggc");
    if (env) unsetenv(env);
    REQUIRE(p);
    return p;
}

static void mutate_while_marking(void)
{
    cairn_pool *p = open_after_crash("bggc", "CAIRN_TEST_GC_SLOW");
    CHECK(gc_state(p) == GC_RUNNING);               /* the open did not wait for the mark */
    struct root *r = CAIRN_ROOT(p, struct root);
    int rounds = 0, overlapped = 0;
    uint64_t moved = 0, freed = 0, added = 0, hidden = 0;
    for (; rounds < 3000; rounds++) {
        if (atomic_load(&p->gc.active)) overlapped++;
        else if (rounds > 200) break;
        CAIRN_TX(p) {
            /* move the second node of a to the head of b */
            struct node *h = cairn_ptr_load(&r->a);
            struct node *x = h ? cairn_ptr_load(&h->next) : NULL;
            if (x) {
                cairn_ptr_store(&h->next, cairn_ptr_load(&x->next));
                cairn_ptr_store(&x->next, cairn_ptr_load(&r->b));
                cairn_ptr_store(&r->b, x);
                cairn_tx_add(&r->na, 16);
                r->na--;
                r->nb++;
                moved++;
            }
            /* hide: the leaf of a's head goes to the spare slot of b's head
             * (which the mark may have scanned already), then a's head drops it */
            struct node *bh = cairn_ptr_load(&r->b);
            if (h && bh && h != bh && cairn_ptr_load(&h->other) && !cairn_ptr_load(&bh->spare)) {
                cairn_ptr_store(&bh->spare, cairn_ptr_load(&h->other));
                cairn_ptr_store(&h->other, NULL);
                hidden++;
            }
        }
        if (rounds % 3 == 0) {
            CAIRN_TX(p) {                       /* free the third node of b and its leaf */
                struct node *b1 = cairn_ptr_load(&r->b);
                struct node *b2 = b1 ? cairn_ptr_load(&b1->next) : NULL;
                struct node *b3 = b2 ? cairn_ptr_load(&b2->next) : NULL;
                if (b3 && !cairn_ptr_load(&b3->spare)) {
                    cairn_ptr_store(&b2->next, cairn_ptr_load(&b3->next));
                    struct leaf *l = cairn_ptr_load(&b3->other);
                    if (l) cairn_free(l);
                    cairn_free(b3);
                    cairn_tx_add(&r->nb, 8);
                    r->nb--;
                    freed++;
                }
            }
        }
        if (rounds % 5 == 0) {
            CAIRN_TX(p) {                       /* a new node with a new leaf on a */
                struct node *x = cairn_alloc(p, sizeof *x);
                struct leaf *l = cairn_alloc(p, sizeof *l);
                if (x && l) {
                    x->val = 1000000 + added;
                    l->val = x->val * 7;
                    cairn_ptr_store(&x->other, l);
                    cairn_ptr_store(&x->next, cairn_ptr_load(&r->a));
                    cairn_ptr_store(&r->a, x);
                    cairn_tx_add(&r->na, 8);
                    r->na++;
                    added++;
                }
            }
        }
    }
    fprintf(stderr, "  %d rounds, %d while marking: moved %llu, hid %llu, freed %llu, added %llu\n",
            rounds, overlapped, (unsigned long long)moved, (unsigned long long)hidden,
            (unsigned long long)freed, (unsigned long long)added);
    CHECK(overlapped >= 50);                        /* the changes really raced the mark */
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);                   /* waits for the mark and sweep */
    CHECK(rec.recovered == 1);
    CHECK(gc_state(p) == GC_DONE);
    CHECK(rec.background_seconds > 0);
    CHECK(rec.bytes_freed >= (uint64_t)GARBAGE * 64);
    uint64_t n = 0;
    CHECK(walk(p, &n) == 0);
    CHECK(n == r->na + r->nb);
    /* anything freed by mistake would now be handed out and poisoned */
    for (int i = 0; i < 4 * (N + GARBAGE); i++) {
        struct leaf *l = cairn_alloc(p, sizeof *l);
        if (!l) break;
        memset(l, 0xab, sizeof *l);
        struct node *x = cairn_alloc(p, sizeof *x);
        if (!x) break;
        memset(x, 0xab, sizeof *x);
    }
    CHECK(walk(p, &n) == 0);
    CHECK(n == r->na + r->nb);
    CHECK(cairn_pool_close(p) == 0);
}

static int errors, leaks;
static void count(void *ctx, const char *sev, const char *msg)
{
    (void)ctx;
    if (!strcmp(sev, "error")) { errors++; fprintf(stderr, "  check: %s\n", msg); }
    if (!strcmp(sev, "warning") && strstr(msg, "leaked")) { leaks++; fprintf(stderr, "  check: %s\n", msg); }
}

/* close p cleanly; the file then checks with no error and no leak */
static void close_and_check(cairn_pool *p)
{
    CHECK(cairn_pool_close(p) == 0);
    errors = leaks = 0;
    struct cairn_check_report rep;
    CHECK(cairn__check_file(PATH, true, count, NULL, &rep) == 0);
    CHECK(errors == 0 && leaks == 0);
}

/* after the mark, the pool holds exactly what the root reaches plus what
 * the poisoning allocations took (those are leaks, and the only ones) */
static void consistent_after(void)
{
    struct cairn_check_report rep;
    errors = leaks = 0;
    CHECK(cairn__check_file(PATH, true, count, NULL, &rep) == 0);
    CHECK(errors == 0);
    cairn_pool *p = cairn_pool_open(PATH, "bggc");
    REQUIRE(p);
    uint64_t n;
    CHECK(walk(p, &n) == 0);
    cairn_pool_close(p);
    unlink(PATH);
}

/* a crash while the mark runs leaves the pool to be marked again */
static void crash_while_marking(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_open(PATH, "bggc");
    if (!p) _exit(3);
#ifndef CAIRN_TEST_SANITIZED   /* TSan cannot start a thread in a fork child: it marks inline */
    if (gc_state(p) != GC_RUNNING) _exit(4);
#endif
    struct root *r = CAIRN_ROOT(p, struct root);
    CAIRN_TX(p) {
        struct node *h = cairn_ptr_load(&r->a);
        cairn_ptr_store(&r->b, h);                  /* a committed change, then death */
    }
    _exit(0);
}

static void crash_during_mark(void)
{
    PATH = t_path("bggc2");
    CHECK(t_child(build_and_crash, NULL, NULL, 0) == 0);
    setenv("CAIRN_TEST_GC_SLOW", "1", 1);
    char err[2048];
    int st = t_child(crash_while_marking, NULL, err, sizeof err);
    if (st) fprintf(stderr, "  child (status %d) said: %s\n", st, err);
    CHECK(st == 0);
    unsetenv("CAIRN_TEST_GC_SLOW");
    cairn_pool *p = cairn_pool_open(PATH, "bggc");
    REQUIRE(p);
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    CHECK(rec.recovered == 1);
    struct root *r = CAIRN_ROOT(p, struct root);
    CHECK(r->b == r->a && r->a != 0);               /* the committed change stayed */
    uint64_t n;
    CHECK(walk(p, &n) == 0);
    close_and_check(p);
    unlink(PATH);
}

/* LeakSanitizer's hook, read at exit: the fork child below leaves the
 * pool it inherited from its parent alone at exit (pool.c, atexit_close_all),
 * heap structures included, by design; they are not leaks. Every other
 * process of this test is checked. */
static int in_fork_child;
__attribute__((used)) int __lsan_is_turned_off(void);
__attribute__((used)) int __lsan_is_turned_off(void) { return in_fork_child; }

/* a fork child while the mark runs reads the pool and exits at once: it
 * does not wait for a thread that stayed in the parent */
static void child_reads(void *arg)
{
    in_fork_child = 1;
    cairn_pool *p = arg;
    uint64_t n = 0;
    if (walk(p, &n) || n != N) _exit(3);
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);                   /* must not wait for the parent's thread */
    exit(0);                                        /* atexit closes the pool */
}

static void fork_while_marking(void)
{
    cairn_pool *p = open_after_crash("bggc4", "CAIRN_TEST_GC_SLOW");
    CHECK(gc_state(p) == GC_RUNNING);
    char err[1024];
    int st = t_child(child_reads, p, err, sizeof err);
    if (st) fprintf(stderr, "  child (status %d) said: %s\n", st, err);
    CHECK(st == 0);
    CHECK(cairn_pool_close(p) == 0);
    unlink(PATH);
}

/* CAIRN_GC_SYNC=1: the open marks before it returns */
static void sync_mark(void)
{
    cairn_pool *p = open_after_crash("bggc3", "CAIRN_GC_SYNC");
    CHECK(gc_state(p) == GC_NONE);
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    CHECK(rec.recovered == 1 && rec.objects_reachable == 1 + 2 * (uint64_t)N);
    CHECK(rec.background_seconds == 0);
    cairn_pool_close(p);
    unlink(PATH);
}

/* Runs whose bitmap a clean close left exact (CAIRN_RUN_EXACT, alloc.c):
 * after a crash their free slots are handed out before the mark ends, and
 * a run that gave out a slot after that close is not trusted. The pool:
 * list a of 32-byte nodes and list c of 64-byte ones, every other node of
 * each freed, closed cleanly; then a session allocates L (32 bytes: its
 * run is no longer exact) and dies. After the crash, while the mark runs:
 * the first 64-byte allocation lands in c's old run; no 32-byte one lands
 * on L or on a node of a; half the 64-byte ones are freed again (the
 * sweep must free them, not leak them) and the rest linked from new
 * 32-byte nodes only (the sweep must keep them though the mark never
 * reaches them). Afterwards everything reachable is intact and allocated,
 * and nothing leaked. */
struct big { uint64_t next; uint64_t val; uint64_t pad[6]; };
struct xroot { uint64_t a, c, l; };
enum { XN = 4000 };

static void exact_build(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_create(PATH, "bggcx", 64 << 20);
    if (!p) _exit(3);
    struct xroot *r = CAIRN_ROOT(p, struct xroot);
    for (int i = 0; i < XN; i++) {
        CAIRN_TX(p) {
            struct node *x = cairn_alloc(p, sizeof *x);
            struct big *b = cairn_alloc(p, sizeof *b);
            x->val = (uint64_t)i;
            b->val = (uint64_t)i * 3;
            cairn_ptr_store(&x->next, cairn_ptr_load(&r->a));
            cairn_ptr_store(&r->a, x);
            cairn_ptr_store(&b->next, cairn_ptr_load(&r->c));
            cairn_ptr_store(&r->c, b);
        }
    }
    for (int list = 0; list < 2; list++) {          /* free every other node */
        uint64_t *prev = list ? &r->c : &r->a;
        for (int i = 0; cairn_ptr_load(prev); i++) {
            uint64_t *next = cairn_ptr_load(prev);  /* next is each node's first word */
            if (i % 2) {
                CAIRN_TX(p) {
                    cairn_ptr_store(prev, cairn_ptr_load(next));
                    cairn_free(next);
                }
            } else {
                prev = next;
            }
        }
    }
    _exit(cairn_pool_close(p) ? 4 : 0);
}

static void exact_touch_and_crash(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_open(PATH, "bggcx");
    if (!p) _exit(3);
    struct xroot *r = CAIRN_ROOT(p, struct xroot);
    CAIRN_TX(p) {
        struct node *l = cairn_alloc(p, sizeof *l);
        l->val = 777777;
        cairn_ptr_store(&r->l, l);
    }
    _exit(0);
}

static int cmp_ptr(const void *x, const void *y)
{
    uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
    return a < b ? -1 : a > b;
}

static void exact_runs_after_crash(void)
{
    PATH = t_path("bggcx");
    char err[1024];
    int st = t_child(exact_build, NULL, err, sizeof err);
    if (st) fprintf(stderr, "  build child (status %d): %s\n", st, err);
    REQUIRE(st == 0);
    REQUIRE(t_child(exact_touch_and_crash, NULL, NULL, 0) == 0);
    setenv("CAIRN_TEST_GC_SLOW", "1", 1);
    cairn_pool *p = cairn_pool_open(PATH, "bggcx");
    unsetenv("CAIRN_TEST_GC_SLOW");
    REQUIRE(p);
    CHECK(gc_state(p) == GC_RUNNING);
    struct xroot *r = CAIRN_ROOT(p, struct xroot);
    struct node *L = cairn_ptr_load(&r->l);
    REQUIRE(L && L->val == 777777);
    uintptr_t *live = malloc((XN + 1) * sizeof *live);
    size_t nlive = 0;
    for (struct node *x = cairn_ptr_load(&r->a); x; x = cairn_ptr_load(&x->next))
        live[nlive++] = (uintptr_t)x;
    live[nlive++] = (uintptr_t)L;
    qsort(live, nlive, sizeof *live, cmp_ptr);
    struct big *c = cairn_ptr_load(&r->c);
    REQUIRE(c);
    uint64_t c_chunk = (cairn__off(p, c) - p->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;

    enum { NEW = XN / 2 + 100 };
    struct big **bigs = malloc(NEW * sizeof *bigs);
    struct node **smalls = malloc(NEW * sizeof *smalls);
    CAIRN_TX(p) {
        bigs[0] = cairn_alloc(p, sizeof **bigs);
    }
    CHECK(atomic_load(&p->gc.active));              /* before the mark ended */
    REQUIRE(bigs[0]);
    CHECK(((cairn__off(p, bigs[0]) - p->hdr->heap_off) >> CAIRN_CHUNK_SHIFT) == c_chunk);
    int overlaps = 0;
    for (int i = 0; i < NEW; i++) {
        CAIRN_TX(p) {
            if (i) bigs[i] = cairn_alloc(p, sizeof **bigs);
            smalls[i] = cairn_alloc(p, sizeof **smalls);
            smalls[i]->val = 1000000 + (uint64_t)i;
            cairn_ptr_store(&smalls[i]->next, cairn_ptr_load(&r->l));
            cairn_ptr_store(&r->l, smalls[i]);
        }
        uintptr_t a = (uintptr_t)smalls[i];
        if (bsearch(&a, live, nlive, sizeof *live, cmp_ptr)) overlaps++;
        CAIRN_TX(p) {
            if (i % 2) {
                cairn_free(bigs[i]);                /* an old chunk's: waits for the sweep */
            } else {
                /* reachable only from a new object, which the mark never
                 * scans, so never marked: the sweep must leave it */
                cairn_tx_add(&bigs[i]->val, 8);
                bigs[i]->val = 3000000 + (uint64_t)i;
                cairn_ptr_store(&smalls[i]->other, bigs[i]);
            }
        }
    }
    CHECK(atomic_load(&p->gc.active));              /* all of it overlapped the mark */
    CHECK(overlaps == 0);                           /* L's run was not trusted */
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);                   /* the mark and sweep are over */
    int bad = 0;
    uint64_t na = 0, nc = 0, nl = 0, nb = 0;
    /* every reachable object is intact and allocated (the sweep kept it) */
#define ALLOCATED(x) (cairn__object_start(p, cairn__off(p, x), true) == (void *)(x))
    for (struct node *x = cairn_ptr_load(&r->a); x; x = cairn_ptr_load(&x->next), na++)
        bad += x->val % 2 != 1 || x->val >= XN || !ALLOCATED(x);  /* the odd ones were kept */
    for (struct big *x = cairn_ptr_load(&r->c); x; x = cairn_ptr_load(&x->next), nc++)
        bad += (x->val < 3000000 && (x->val % 3 || x->val / 3 % 2 != 1)) || !ALLOCATED(x);
    for (struct node *x = cairn_ptr_load(&r->l); x; x = cairn_ptr_load(&x->next), nl++) {
        bad += (x->val != 777777 && x->val < 1000000) || !ALLOCATED(x);
        struct big *b = cairn_ptr_load(&x->other);
        if (b) nb++;
        bad += b && (b->val != 3000000 + (x->val - 1000000) || !ALLOCATED(b));
    }
#undef ALLOCATED
    CHECK(bad == 0);
    CHECK(na == XN / 2 && nc == XN / 2 && nl == NEW + 1 && nb == (NEW + 1) / 2);
    close_and_check(p);
    free(live);
    free(bigs);
    free(smalls);
    unlink(PATH);
}

int main(void)
{
    RUN(mutate_while_marking);
    RUN(consistent_after);
    RUN(crash_during_mark);
    RUN(fork_while_marking);
    RUN(sync_mark);
    RUN(exact_runs_after_crash);
    DONE();
}
