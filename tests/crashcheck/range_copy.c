/* Byte copies into PM inside transactions, built by cairn-cc (--trace): a
 * 1 KiB value and a 260-byte one memcpy'd over the old ones, a memset of
 * 256 bytes, and a counter, per transaction. The pass logs each copy as one
 * range; the runtime keeps a range of 256 bytes or more as one entry (not
 * line by line) and flushes it as one range at commit. Correct when every
 * byte of the three values equals the counter after any crash.
 * test_range_copy.py runs it under `cairn crashcheck` against the shipped
 * runtime (clean) and one whose commit skips the flush of ranges
 * (mutant TX_FLUSH_BIG: caught). */
#include "corpus.h"

#define V1 1024
#define V2 260
#define V3 256
struct root {
    uint64_t count;
    uint64_t pad[7];
    unsigned char v1[V1];
    unsigned char v2[V2 + 8];   /* starts mid-line: the range's ends are partial lines */
    unsigned char v3[V3];
};

static void corpus_run(cairn_pool *pool, struct root *r)
{
    unsigned char buf[V1];
    for (uint64_t i = 1; i <= 2; i++) {
        memset(buf, (int)i, sizeof buf);
        CAIRN_TX(pool) {
            memcpy(r->v1, buf, V1);
            memcpy(r->v2 + 8, buf, V2);
            memset(r->v3, (int)i, V3);
            r->count = i;
        }
    }
}

static int corpus_check(struct root *r)
{
    for (int j = 0; j < V1; j++)
        if (r->v1[j] != r->count) {
            printf("count %llu but v1[%d] = %u\n", (unsigned long long)r->count, j, r->v1[j]);
            return 1;
        }
    for (int j = 0; j < V2; j++)
        if (r->v2[8 + j] != r->count) {
            printf("count %llu but v2[%d] = %u\n", (unsigned long long)r->count, j, r->v2[8 + j]);
            return 1;
        }
    for (int j = 0; j < V3; j++)
        if (r->v3[j] != r->count) {
            printf("count %llu but v3[%d] = %u\n", (unsigned long long)r->count, j, r->v3[j]);
            return 1;
        }
    return 0;
}

CORPUS_MAIN
