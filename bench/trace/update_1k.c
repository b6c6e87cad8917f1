/*
 * update_1k.c -- the update of ycsb_a (one transaction that snapshots a
 * 1 KiB value and rewrites it) in libcairn or, built with -DPMEMOBJ, in
 * libpmemobj, for cairn-stepcount: bytes written back to PM per update,
 * counted the same way for both libraries (docs/RESULTS.md, "Trace report
 * and sim", the write amplification goal).
 *
 *   update_1k POOL N      N updates of random values among 1000, between
 *                         SIGUSR1 and SIGUSR2 (cairn-stepcount's region)
 *
 *   cc -O2 -Iinclude bench/trace/update_1k.c build/runtime/libcairn.so -o update_1k_cairn
 *   cc -O2 -DPMEMOBJ bench/trace/update_1k.c -lpmemobj -o update_1k_pmemobj
 *   cairn-stepcount -o out.jsonl -- ./update_1k_cairn /dev/shm/u.pool 200
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VALUE 1024
#define RECORDS 1000

struct table { char v[RECORDS][VALUE]; };

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

#ifdef PMEMOBJ
#include <libpmemobj.h>
static PMEMobjpool *pop;
static PMEMoid root;
static struct table *open_table(const char *path)
{
    pop = pmemobj_create(path, "update-1k", 64u << 20, 0600);
    if (!pop) {
        fprintf(stderr, "update_1k: %s: %s\n", path, pmemobj_errormsg());
        return NULL;
    }
    root = pmemobj_root(pop, sizeof(struct table));
    return pmemobj_direct(root);
}
static void update(struct table *t, uint64_t k, const char *v)
{
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(root, k * VALUE, VALUE);
        memcpy(t->v[k], v, VALUE);
    } TX_END
}
static int close_table(void) { pmemobj_close(pop); return 0; }
#else
#include <cairn.h>
static cairn_pool *pool;
static struct table *open_table(const char *path)
{
    pool = cairn_pool_create(path, "update-1k", 64u << 20);
    if (!pool) {
        fprintf(stderr, "update_1k: %s: %s\n", path, cairn_errormsg());
        return NULL;
    }
    return cairn_root(pool, sizeof(struct table), 1);
}
static void update(struct table *t, uint64_t k, const char *v)
{
    cairn_tx_begin(pool);
    cairn_tx_add(t->v[k], VALUE);
    memcpy(t->v[k], v, VALUE);
    cairn_tx_commit();
}
static int close_table(void) { return cairn_pool_close(pool) ? 1 : 0; }
#endif

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: update_1k POOL N\n");
        return 2;
    }
    long n = atol(argv[2]);
    unlink(argv[1]);
    struct table *t = open_table(argv[1]);
    if (!t) return 1;
    char v[VALUE];
    memset(v, 1, sizeof v);
    raise(SIGUSR1);
    for (long i = 0; i < n; i++) {
        v[0] = (char)i;
        update(t, next() % RECORDS, v);
    }
    raise(SIGUSR2);
    return close_table();
}
