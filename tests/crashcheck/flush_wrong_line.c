/* A flush aimed one line off: the data's line is never written back
 * (the flush covers the line after it), yet its flag is persisted.
 * Twin: the flush covers the data's own line. */
#include "corpus.h"

struct root { uint64_t data[8]; uint64_t next_line[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        for (int j = 0; j < 8; j++) r->data[j] = i;
        const char *line = (const char *)r->data + (TWIN ? 0 : 64);
        cairn_persist(line, 64);
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->data, 8, r->flag, "data");
}

CORPUS_MAIN
