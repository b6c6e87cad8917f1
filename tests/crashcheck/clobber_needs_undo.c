/* cairn_tx_clobber where an undo snapshot is needed: clobber declares a
 * range that the transaction overwrites whole and that nothing reads if
 * the transaction does not commit, so it is made durable at commit with no
 * undo record. Used on a field whose old value matters, a crash inside the
 * transaction keeps the new value of that field while recovery rolls back
 * its partner. Twin: cairn_tx_add on both. */
#include "corpus.h"

struct root { uint64_t a; uint64_t pad[7]; uint64_t b; uint64_t pad2[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        CAIRN_TX(pool) {
            cairn_tx_add(&r->a, 8);
            if (TWIN) cairn_tx_add(&r->b, 8);
            else cairn_tx_clobber(&r->b, 8);
            r->b = i;
            cairn_flush(&r->b, 8);       /* written back early, as eviction may */
            r->a = i;
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
