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
int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: update_1k POOL N\n");
        return 2;
    }
    long n = atol(argv[2]);
    unlink(argv[1]);
    PMEMobjpool *pop = pmemobj_create(argv[1], "update-1k", 64u << 20, 0600);
    if (!pop) {
        fprintf(stderr, "update_1k: %s: %s\n", argv[1], pmemobj_errormsg());
        return 1;
    }
    PMEMoid root = pmemobj_root(pop, sizeof(struct table));
    struct table *t = pmemobj_direct(root);
    char v[VALUE];
    memset(v, 1, sizeof v);
    raise(SIGUSR1);
    for (long i = 0; i < n; i++) {
        uint64_t k = next() % RECORDS;
        v[0] = (char)i;
        TX_BEGIN(pop) {
            pmemobj_tx_add_range(root, k * VALUE, VALUE);
            memcpy(t->v[k], v, VALUE);
        } TX_END
    }
    raise(SIGUSR2);
    pmemobj_close(pop);
    return 0;
}
#else
#include <cairn.h>
int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: update_1k POOL N\n");
        return 2;
    }
    long n = atol(argv[2]);
    unlink(argv[1]);
    cairn_pool *pool = cairn_pool_create(argv[1], "update-1k", 64u << 20);
    if (!pool) {
        fprintf(stderr, "update_1k: %s: %s\n", argv[1], cairn_errormsg());
        return 1;
    }
    struct table *t = cairn_root(pool, sizeof *t, 1);
    char v[VALUE];
    memset(v, 1, sizeof v);
    raise(SIGUSR1);
    for (long i = 0; i < n; i++) {
        uint64_t k = next() % RECORDS;
        v[0] = (char)i;
        cairn_tx_begin(pool);
        cairn_tx_add(t->v[k], VALUE);
        memcpy(t->v[k], v, VALUE);
        cairn_tx_commit();
    }
    raise(SIGUSR2);
    return cairn_pool_close(pool) ? 1 : 0;
}
#endif
