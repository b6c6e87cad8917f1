/* A 128-bit counter incremented in place, its low and high words on two
 * lines: when the low word wraps, a crash between its write-back and the
 * high word's leaves the counter smaller than it ever was. Twin: the
 * increment in a transaction. */
#include "corpus.h"

#define START_LO (~(uint64_t)0 - 1)   /* the low word wraps on the 2nd increment */
struct root { uint64_t lo; uint64_t pad[7]; uint64_t hi; uint64_t pad2[7]; uint64_t started; };

static void increment(struct root *r)
{
    r->lo++;
    cairn_persist(&r->lo, 8);
    if (r->lo == 0) {
        r->hi++;
        cairn_persist(&r->hi, 8);
    }
}

static void corpus_run(cairn_pool *pool, struct root *r)
{
    r->lo = START_LO;
    cairn_persist(&r->lo, 8);
    r->started = 1;
    cairn_persist(&r->started, 8);
    for (int i = 0; i < 4; i++) {
        if (TWIN) {
            CAIRN_TX(pool) {
                cairn_tx_add(&r->lo, 8);
                cairn_tx_add(&r->hi, 8);
                increment(r);
            }
        } else {
            increment(r);
        }
    }
}

static int corpus_check(struct root *r)
{
    if (!r->started || r->hi > 0 || r->lo >= START_LO) return 0;
    printf("counter went back: hi %llu lo %llu (it started at hi 0 lo %llu)\n",
           (unsigned long long)r->hi, (unsigned long long)r->lo, (unsigned long long)START_LO);
    return 1;
}

CORPUS_MAIN
