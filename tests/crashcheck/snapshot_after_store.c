/* A snapshot taken after the store: the undo record holds the new value, so
 * rolling back an unfinished transaction leaves it (and its partner, logged
 * properly, goes back). Twin: the snapshot before the store. */
#include "corpus.h"

struct root { uint64_t a; uint64_t pad[7]; uint64_t b; uint64_t pad2[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        CAIRN_TX(pool) {
            cairn_tx_add(&r->b, 8);
            r->b = i;
            if (TWIN) cairn_tx_add(&r->a, 8);
            r->a = i;
            if (!TWIN) cairn_tx_add(&r->a, 8);
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
