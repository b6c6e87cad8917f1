/* A field changed in a transaction and never snapshotted (the API without
 * cairn-cc): b is neither logged nor flushed by the commit, so a crash
 * leaves a rolled back or committed a next to any b. Twin: both added. */
#include "corpus.h"

struct root { uint64_t a; uint64_t pad[7]; uint64_t b; uint64_t pad2[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        CAIRN_TX(pool) {
            cairn_tx_add(&r->a, 8);
            if (TWIN) cairn_tx_add(&r->b, 8);
            r->a = i;
            r->b = i;
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
