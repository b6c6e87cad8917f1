/* A flush of a too-short range: a 128-byte record spans two lines and only
 * its first 64 bytes are flushed before its flag. Twin: the whole record. */
#include "corpus.h"

struct root { uint64_t rec[16]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        for (int j = 0; j < 16; j++) r->rec[j] = i;
        cairn_persist(r->rec, TWIN ? sizeof r->rec : 64);
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->rec, 16, r->flag, "rec");
}

CORPUS_MAIN
