/* A two-word update that must be atomic, its words on two lines, persisted
 * one after the other: a crash between leaves one new and one old. Twin:
 * the same update in a transaction (cairn_tx_add snapshots both). */
#include "corpus.h"

struct root { uint64_t a; uint64_t pad[7]; uint64_t b; uint64_t pad2[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        if (TWIN) {
            CAIRN_TX(pool) {
                cairn_tx_add(&r->a, 8);
                cairn_tx_add(&r->b, 8);
                r->a = i;
                r->b = i;
            }
        } else {
            r->a = i;
            r->b = i;
            cairn_persist(&r->a, 8);
            cairn_persist(&r->b, 8);
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
