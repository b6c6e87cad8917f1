/*
 * ds_bench.c -- legacy data structures under cairn-cc (issue 3 benchmark).
 *
 * One source, four builds compared side by side by `cairn cc bench`:
 *   clang -O2 -DNO_CAIRN      the unmodified volatile program
 *   clang -O2 (+ libcairn)    this very source, PM-mode code included, run
 *                             on DRAM data: the cairn-cc DRAM build's twin
 *   cairn-cc -O2, data=dram   instrumented code, nodes from malloc
 *   cairn-cc -O2, data=pm     instrumented code, nodes in a pool; updates
 *                             in transactions
 * Structures: singly linked list, uthash, BSD red-black tree, splay tree.
 * Workloads: "read" (lookups/traversals only) and "mixed" (90% lookups,
 * 10% insert or delete). Prints one JSON object per (structure, workload).
 *
 *   ds_bench dram|pm POOL N OPS [STRUCTURE [WORKLOAD]]
 *   ds_bench dram|pm POOL N OPS STRUCTURE WORKLOAD serve WARM
 *
 * serve: build STRUCTURE, print "ready", then for each line read from stdin
 * run one slice: WARM untimed lookups (keys from a second generator, so
 * every build runs the same ones), then OPS timed operations of WORKLOAD
 * continuing where the last slice stopped; print its JSON object. `cairn cc
 * bench` keeps the builds alive this way and alternates slices
 * between them on one CPU, so that paired slices ran moments apart on this
 * shared machine (whose speed drifts by 2-4x over seconds).
 * CAIRN_BENCH_STEPMARK=1: raise(SIGSTOP) before and after each timed loop,
 * for compiler/bench/icount.c (instructions per operation).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <bsd/sys/tree.h>
#ifndef NO_CAIRN
#include <cairn.h>
static cairn_pool *pool;
#endif

static int in_pm;
static void *node_alloc(size_t n)
{
#ifndef NO_CAIRN
    if (in_pm) return cairn_alloc(pool, n);
#endif
    return calloc(1, n);
}
static void node_free(void *p)
{
#ifndef NO_CAIRN
    if (in_pm) { cairn_free(p); return; }
#endif
    free(p);
}
#define uthash_malloc(sz) node_alloc(sz)
#define uthash_free(ptr, sz) node_free(ptr)
#include <uthash.h>

#ifdef NO_CAIRN
#define TX(body) do { body; } while (0)
#define TX_ALWAYS(body) do { body; } while (0)
#else
#define TX(body) do { if (in_pm) { CAIRN_TX(pool) { body; } } else { body; } } while (0)
#define TX_ALWAYS(body) do { CAIRN_TX(pool) { body; } } while (0)
#endif

struct item {
    long key;
    long val;
    struct item *next;            /* linked list */
    RB_ENTRY(item) rb;
    SPLAY_ENTRY(item) sp;
    UT_hash_handle hh;
};
static int cmp(struct item *a, struct item *b) { return (a->key > b->key) - (a->key < b->key); }
RB_HEAD(rbt, item);
SPLAY_HEAD(spt, item);
RB_GENERATE(rbt, item, rb, cmp)
SPLAY_PROTOTYPE(spt, item, sp, cmp)
SPLAY_GENERATE(spt, item, sp, cmp)

struct root { struct item *list; struct item *hash; struct rbt rb; struct spt sp; };

static uint64_t rng = 88172645463325252ull, warm_rng = 0x9e3779b97f4a7c15ull;
static long next_key_of(uint64_t *g, long n) { *g ^= *g << 13; *g ^= *g >> 7; *g ^= *g << 17; return (long)(*g % (uint64_t)(2 * n)); }
static long next_key(long n) { return next_key_of(&rng, n); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

enum { LIST, HASH, RB, SPLAY };
static const char *names[] = { "list", "uthash", "rbtree", "splay" };

static struct item *make(long key) { struct item *it = node_alloc(sizeof *it); it->key = key; it->val = key * 3; return it; }

static void insert(struct root *r, int ds, long key)
{
    struct item probe = { .key = key }, *it;
    switch (ds) {
    case LIST:
        for (it = r->list; it; it = it->next) if (it->key == key) return;
        it = make(key); it->next = r->list; r->list = it; return;
    case HASH:
        HASH_FIND(hh, r->hash, &key, sizeof key, it);
        if (it) return;
        it = make(key); HASH_ADD(hh, r->hash, key, sizeof it->key, it); return;
    case RB:
        if (RB_FIND(rbt, &r->rb, &probe)) return;
        RB_INSERT(rbt, &r->rb, make(key)); return;
    case SPLAY:
        if (SPLAY_FIND(spt, &r->sp, &probe)) return;
        SPLAY_INSERT(spt, &r->sp, make(key)); return;
    }
}

static void erase(struct root *r, int ds, long key)
{
    struct item probe = { .key = key }, *it, **pp;
    switch (ds) {
    case LIST:
        for (pp = &r->list; *pp; pp = &(*pp)->next)
            if ((*pp)->key == key) { it = *pp; *pp = it->next; node_free(it); return; }
        return;
    case HASH:
        HASH_FIND(hh, r->hash, &key, sizeof key, it);
        if (it) { HASH_DELETE(hh, r->hash, it); node_free(it); }
        return;
    case RB:
        if ((it = RB_FIND(rbt, &r->rb, &probe))) { RB_REMOVE(rbt, &r->rb, it); node_free(it); }
        return;
    case SPLAY:
        if ((it = SPLAY_FIND(spt, &r->sp, &probe))) { SPLAY_REMOVE(spt, &r->sp, it); node_free(it); }
        return;
    }
}

/* -DLOOKUP_PAD='__asm__ volatile(".rept 13; nop; .endr")': extra instructions
 * after each hash lookup, to measure what an added instruction costs there
 * (docs/RESULTS.md, cairn cc bench run 6); empty otherwise */
#ifndef LOOKUP_PAD
#define LOOKUP_PAD ((void)0)
#endif

/* inlined into each loop that calls it (the timed one and the warm-up), as
 * it was when the timed loop was in main */
static inline __attribute__((always_inline)) long lookup(struct root *r, int ds, long key)
{
    struct item probe = { .key = key }, *it = NULL;
    switch (ds) {
    case LIST: for (it = r->list; it && it->key != key; it = it->next) ; break;
    case HASH: HASH_FIND(hh, r->hash, &key, sizeof key, it); LOOKUP_PAD; break;
    case RB: it = RB_FIND(rbt, &r->rb, &probe); break;
    case SPLAY: it = SPLAY_FIND(spt, &r->sp, &probe); break;
    }
    return it ? it->val : 0;
}

/* The timed loop, specialized (inlined into one function per structure,
 * workload and mode, below): each timed loop holds only its own structure's
 * code, and the DRAM-mode loops of the PM-capable build are the very loops
 * of the -DNO_CAIRN build, with no PM-mode test or transaction in them.
 * One loop serving every structure and both modes would let clang's
 * -DNO_CAIRN build run a smaller loop than the source cairn-cc compiles
 * (about 5% of a uthash lookup, docs/RESULTS.md). */
static inline __attribute__((always_inline))
long run_loop(struct root *r, int d, int mixed, int tx, long count, long nops, long sink)
{
    for (long i = 0; i < nops; i++) {
        long k = next_key(count);
        if (mixed && i % 10 == 0) {
            if (!tx) { if (i % 20 == 0) insert(r, d, k); else erase(r, d, k); }
            else if (i % 20 == 0) TX_ALWAYS(insert(r, d, k)); else TX_ALWAYS(erase(r, d, k));
        } else if (tx && d == SPLAY) {
            TX_ALWAYS(sink += lookup(r, d, k));   /* splaying writes */
        } else {
            sink += lookup(r, d, k);
        }
    }
    return sink;
}

typedef long loop_fn(struct root *r, long count, long nops, long sink);
#define LOOP(D, M, T) static __attribute__((noinline)) long loop_##D##_##M##_##T( \
    struct root *r, long count, long nops, long sink) { return run_loop(r, D, M, T, count, nops, sink); }
#define LOOPS(T) LOOP(LIST, 0, T) LOOP(LIST, 1, T) LOOP(HASH, 0, T) LOOP(HASH, 1, T) \
    LOOP(RB, 0, T) LOOP(RB, 1, T) LOOP(SPLAY, 0, T) LOOP(SPLAY, 1, T)
#define LOOP_TABLE(T) { { loop_LIST_0_##T, loop_LIST_1_##T }, { loop_HASH_0_##T, loop_HASH_1_##T }, \
    { loop_RB_0_##T, loop_RB_1_##T }, { loop_SPLAY_0_##T, loop_SPLAY_1_##T } }
LOOPS(0)                                        /* volatile data: no transactions */
static loop_fn *const dram_loops[4][2] = LOOP_TABLE(0);
#ifndef NO_CAIRN
LOOPS(1)                                        /* data in the pool: updates in transactions */
static loop_fn *const pm_loops[4][2] = LOOP_TABLE(1);
#endif

/* OPS operations of one workload, timed; prints one JSON object */
static void run(struct root *r, int d, int mixed, long count, long ops, long sink)
{
    long nops = d == LIST ? ops / 64 : ops;
    loop_fn *loop = dram_loops[d][mixed];
#ifndef NO_CAIRN
    if (in_pm) loop = pm_loops[d][mixed];
#endif
    int mark = getenv("CAIRN_BENCH_STEPMARK") != NULL;
    if (mark) raise(SIGSTOP);
    double t0 = now();
    sink = loop(r, count, nops, sink);
    double t = now() - t0;
    if (mark) raise(SIGSTOP);
    printf("{\"structure\": \"%s\", \"workload\": \"%s\", \"ops\": %ld, "
           "\"ns_per_op\": %.1f, \"sink\": %ld}\n", names[d],
           mixed ? "mixed" : "read", nops, nops ? t * 1e9 / nops : 0.0, sink & 1);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s dram|pm POOL N OPS [STRUCTURE [WORKLOAD]]\n", argv[0]);
        return 2;
    }
    const char *only_ds = argc > 5 ? argv[5] : NULL, *only_wl = argc > 6 ? argv[6] : NULL;
    int serve = argc > 7 && !strcmp(argv[7], "serve");
    long warm = argc > 8 ? atol(argv[8]) : 0;
    if (serve && (!only_ds || !only_wl)) {
        fprintf(stderr, "serve needs STRUCTURE and WORKLOAD\n");
        return 2;
    }
    in_pm = !strcmp(argv[1], "pm");
    long n = atol(argv[3]), ops = atol(argv[4]);
    struct root *roots[4];
#ifndef NO_CAIRN
    if (in_pm) {
        remove(argv[2]);
        pool = cairn_pool_create(argv[2], "ds_bench", (size_t)256 << 20);
        if (!pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
        struct root *all = cairn_root(pool, 4 * sizeof(struct root), 1);
        for (int d = 0; d < 4; d++) roots[d] = &all[d];
    } else
#else
    if (in_pm) { fprintf(stderr, "the clang build has no PM mode\n"); return 2; }
#endif
    for (int d = 0; d < 4; d++) roots[d] = calloc(1, sizeof(struct root));
    for (int d = 0; d < 4; d++) {
        struct root *r = roots[d];
        if (only_ds && strcmp(only_ds, names[d]))
            continue;
        long count = d == LIST ? n / 8 : n;    /* the list is O(n) per lookup */
        TX(RB_INIT(&r->rb); SPLAY_INIT(&r->sp));
        rng = 88172645463325252ull;
        for (long i = 0; i < count; i++) { long k = next_key(count); TX(insert(r, d, k)); }
        if (serve) {
            int mixed = !strcmp(only_wl, "mixed");
            char line[64];
            printf("ready\n");
            fflush(stdout);
            while (fgets(line, sizeof line, stdin)) {
                long nwarm = d == LIST ? warm / 64 : warm, sink = 0;
                for (long i = 0; i < nwarm; i++) {
                    long k = next_key_of(&warm_rng, count);
                    if (d == SPLAY && in_pm) TX(sink += lookup(r, d, k));
                    else sink += lookup(r, d, k);
                }
                run(r, d, mixed, count, ops, sink);
                fflush(stdout);
            }
            continue;
        }
        for (int mixed = 0; mixed < 2; mixed++) {
            if (only_wl && strcmp(only_wl, mixed ? "mixed" : "read"))
                continue;
            run(r, d, mixed, count, ops, 0);
        }
    }
#ifndef NO_CAIRN
    if (in_pm) cairn_pool_close(pool);
#endif
    return 0;
}
