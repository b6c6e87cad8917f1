/* A store after its line's flush and before the fence: the flush wrote
 * back what the line held then, so the later store is not durable at that
 * fence. Twin: the flush comes after both stores. */
#include "corpus.h"

struct root { uint64_t data[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        r->data[0] = i;
        if (!TWIN) cairn_flush(r->data, 64);
        r->data[1] = i;                       /* the same line */
        if (TWIN) cairn_flush(r->data, 64);
        cairn_dfence();
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->data, 2, r->flag, "data");
}

CORPUS_MAIN
