/* Data never flushed: the flag is made durable, the data it guards is
 * left in the cache (a power failure may lose it at any later point).
 * Twin: the data is persisted too, before the flag. */
#include "corpus.h"

struct root { uint64_t data[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (int j = 0; j < 8; j++) r->data[j] = 42;
    if (TWIN) cairn_persist(r->data, sizeof r->data);
    r->flag = 1;
    cairn_persist(&r->flag, sizeof r->flag);
    for (int k = 0; k < 3; k++) cairn_persist(&r->pad[0], 8);    /* later work, more fences */
}

static int corpus_check(struct root *r)
{
    if (r->flag && r->data[7] != 42) {
        printf("flag set but data[7] = %llu\n", (unsigned long long)r->data[7]);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
