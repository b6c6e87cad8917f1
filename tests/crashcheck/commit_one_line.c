/* Built with cairn-cc --trace. Two words on one line that must change
 * together, stored one after the other and persisted with one flush: x86
 * may persist the first store without the second. (In a plain C build the
 * line's change is seen as one write: this needs stores traced; see
 * docs/crashcheck.md.) Twin: the same update in a transaction. */
#include "corpus.h"

struct root { uint64_t a, b; uint64_t pad[6]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        if (TWIN) {
            CAIRN_TX(pool) {
                r->a = i;                     /* cairn-cc logs both stores */
                r->b = i;
            }
        } else {
            r->a = i;
            r->b = i;
            cairn_persist(r, 16);
        }
    }
}

static int corpus_check(struct root *r)
{
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
