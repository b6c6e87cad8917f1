/* Recovery that reads what was never made durable: an append-only log
 * whose length field is stored but never flushed, while the running total
 * after it is persisted. After a crash the total counts records that the
 * length does not reach. Twin: the length is persisted before the total.
 * The check: the total never exceeds the sum of the records the length
 * covers. */
#include "corpus.h"

#define CAP 8
struct root { uint64_t len; uint64_t pad0[7]; uint64_t total; uint64_t pad1[7]; uint64_t rec[CAP]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t v = 1; v <= 3; v++) {
        r->rec[r->len] = v;
        cairn_persist(&r->rec[r->len], 8);
        r->len++;
        if (TWIN) cairn_persist(&r->len, 8);
        r->total += v;
        cairn_persist(&r->total, 8);
    }
}

static int corpus_check(struct root *r)
{
    if (r->len > CAP) { printf("len %llu > %d\n", (unsigned long long)r->len, CAP); return 1; }
    uint64_t sum = 0;
    for (uint64_t j = 0; j < r->len; j++) sum += r->rec[j];
    if (r->total > sum) {
        printf("total %llu but the %llu records recovery sees sum to %llu\n",
               (unsigned long long)r->total, (unsigned long long)r->len, (unsigned long long)sum);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
