/*
 * ycsb_a.c -- a hash table of 1 KiB values in a cairn pool under YCSB
 * workload A (50% reads, 50% updates of a whole value, zipfian keys with
 * theta 0.99), for `cairn trace report`'s write amplification goal
 * (docs/RESULTS.md, "Trace report and sim").
 *
 *   ycsb_a POOL RECORDS OPS
 *
 * The table is open addressing over RECORDS x 2 slots of {key, value}; it
 * is loaded with RECORDS keys, each in its own transaction, then runs OPS
 * operations; an update is one transaction that snapshots the value
 * (cairn_tx_add) and rewrites it. Prints one JSON line.
 */
#define _POSIX_C_SOURCE 200809L
#include <cairn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VALUE 1024

struct slot { uint64_t key; char value[VALUE]; };
struct table { uint64_t nslots; struct slot s[]; };

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

/* zipfian over [0, n) (Gray et al., "Quickly generating billion-record
 * synthetic databases", as YCSB does) */
static double zeta_n, alpha, eta, theta = 0.99;
static uint64_t zn;
static void zipf_init(uint64_t n)
{
    zn = n;
    for (uint64_t i = 1; i <= n; i++) zeta_n += 1.0 / pow((double)i, theta);
    double zeta2 = 1.0 + 1.0 / pow(2.0, theta);
    alpha = 1.0 / (1.0 - theta);
    eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / zeta_n);
}
static uint64_t zipf(void)
{
    double u = unit(), uz = u * zeta_n;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + pow(0.5, theta)) return 1;
    return (uint64_t)((double)zn * pow(eta * u - eta + 1.0, alpha)) % zn;
}

static uint64_t hash(uint64_t k) { k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; return k; }

static struct slot *find(struct table *t, uint64_t key, int insert)
{
    for (uint64_t i = hash(key) % t->nslots;; i = (i + 1) % t->nslots) {
        struct slot *s = &t->s[i];
        if (s->key == key + 1) return s;
        if (s->key == 0) return insert ? s : NULL;
    }
}

static void fill(char *v, uint64_t key, uint64_t version)
{
    for (int i = 0; i < VALUE; i += 8) {
        uint64_t x = hash(key * 1315423911u + version + (uint64_t)i);
        memcpy(v + i, &x, 8);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: ycsb_a POOL RECORDS OPS\n");
        return 2;
    }
    uint64_t records = strtoull(argv[2], NULL, 10), ops = strtoull(argv[3], NULL, 10);
    size_t size = sizeof(struct table) + 2 * records * sizeof(struct slot);
    unlink(argv[1]);
    cairn_pool *pool = cairn_pool_create(argv[1], "ycsb-a", size * 2 + (64u << 20));
    if (!pool) {
        fprintf(stderr, "ycsb_a: %s: %s\n", argv[1], cairn_errormsg());
        return 1;
    }
    struct table *t = cairn_root(pool, size, 1);
    cairn_tx_begin(pool);
    cairn_tx_add(&t->nslots, 8);
    t->nslots = 2 * records;
    cairn_tx_commit();
    char v[VALUE];
    for (uint64_t k = 0; k < records; k++) {
        struct slot *s = find(t, k, 1);
        fill(v, k, 0);
        cairn_tx_begin(pool);
        cairn_tx_add(s, sizeof *s);
        s->key = k + 1;
        memcpy(s->value, v, VALUE);
        cairn_tx_commit();
    }
    zipf_init(records);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t reads = 0, updates = 0, sum = 0;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t k = zipf();
        struct slot *s = find(t, k, 0);
        if (next() & 1) {
            sum += (unsigned char)s->value[i % VALUE];
            reads++;
        } else {
            fill(v, k, i + 1);
            cairn_tx_begin(pool);
            cairn_tx_add(s->value, VALUE);
            memcpy(s->value, v, VALUE);
            cairn_tx_commit();
            updates++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)ops;
    printf("{\"records\": %llu, \"ops\": %llu, \"reads\": %llu, \"updates\": %llu, "
           "\"ns_per_op\": %.1f, \"sink\": %llu}\n", (unsigned long long)records,
           (unsigned long long)ops, (unsigned long long)reads, (unsigned long long)updates, ns,
           (unsigned long long)(sum & 1));
    return cairn_pool_close(pool) ? 1 : 0;
}
