/* A struct update inside a transaction with no cairn_tx_add: correct when
 * built with cairn-cc, whose pass logs every store to PM in the
 * transaction (the twin, built with cairn-cc --trace); a bug when the same
 * code is built with a plain C compiler, which logs nothing, so a crash
 * inside the transaction leaves one field new and the other old and the
 * commit makes nothing durable (the bug, built with cc). BUG and TWIN do
 * not change the code: test_corpus_compilers.py builds it both ways. */
#include "corpus.h"

struct pair { uint64_t a; uint64_t pad[7]; uint64_t b; uint64_t pad2[7]; };
struct root { struct pair p; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        CAIRN_TX(pool) {
            r->p.a = i;
            r->p.b = i;
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->p.a, "b", r->p.b);
}

CORPUS_MAIN
