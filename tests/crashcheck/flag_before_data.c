/* Flag persisted before its data: a reader that trusts the flag finds old
 * data. Twin: the data is made durable first. */
#include "corpus.h"

struct root { uint64_t data[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        for (int j = 0; j < 8; j++) r->data[j] = i;
        if (TWIN) cairn_persist(r->data, sizeof r->data);
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
        if (!TWIN) cairn_persist(r->data, sizeof r->data);
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->data, 8, r->flag, "data");
}

CORPUS_MAIN
