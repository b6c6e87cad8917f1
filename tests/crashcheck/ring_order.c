/* A persistent ring buffer whose producer advances the tail (persisted)
 * before the slot it publishes is durable: after a crash the consumer's
 * range [head, tail) holds a slot that was never written. Twin: the slot
 * first, then the tail. The consumer takes one entry whenever the ring is
 * full, advancing the head after it is done. Entry k holds k + 1. */
#include "corpus.h"

#define SLOTS 4
struct slot { uint64_t seq; uint64_t payload[7]; };
struct root {
    uint64_t head; uint64_t pad0[7];
    uint64_t tail; uint64_t pad1[7];
    struct slot slot[SLOTS];
};

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t k = 0; k < 6; k++) {
        if (r->tail - r->head == SLOTS) {       /* full: consume the oldest */
            r->head++;
            cairn_persist(&r->head, 8);
        }
        struct slot *s = &r->slot[k % SLOTS];
        if (!TWIN) { r->tail = k + 1; cairn_persist(&r->tail, 8); }
        s->seq = k + 1;
        for (int j = 0; j < 7; j++) s->payload[j] = k;
        cairn_persist(s, sizeof *s);
        if (TWIN) { r->tail = k + 1; cairn_persist(&r->tail, 8); }
    }
}

static int corpus_check(struct root *r)
{
    if (r->tail < r->head || r->tail - r->head > SLOTS) {
        printf("head %llu tail %llu\n", (unsigned long long)r->head, (unsigned long long)r->tail);
        return 1;
    }
    for (uint64_t k = r->head; k < r->tail; k++)
        if (r->slot[k % SLOTS].seq != k + 1) {
            printf("entry %llu in [head %llu, tail %llu) has seq %llu\n", (unsigned long long)k,
                   (unsigned long long)r->head, (unsigned long long)r->tail,
                   (unsigned long long)r->slot[k % SLOTS].seq);
            return 1;
        }
    return 0;
}

CORPUS_MAIN
