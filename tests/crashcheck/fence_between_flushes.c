/* One fence over two flushes that needed an order: data and flag flushed
 * together and fenced once, so the flag may reach the media first. Twin: a
 * fence after the data's flush, before the flag is written. */
#include "corpus.h"

struct root { uint64_t data[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        for (int j = 0; j < 8; j++) r->data[j] = i;
        cairn_flush(r->data, sizeof r->data);
        if (TWIN) cairn_dfence();
        r->flag = i;
        cairn_flush(&r->flag, sizeof r->flag);
        cairn_dfence();
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->data, 8, r->flag, "data");
}

CORPUS_MAIN
