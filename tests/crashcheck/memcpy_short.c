/* A 65-byte record memcpy'd into PM, then its flag: the flush is one byte
 * short, and that last byte is alone on the next line, which is never
 * written back. Twin: the flush covers all 65 bytes. */
#include "corpus.h"

#define LEN 65
struct root { unsigned char rec[128]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    unsigned char buf[LEN];
    for (uint64_t i = 1; i <= 3; i++) {
        memset(buf, (int)i, sizeof buf);
        memcpy(r->rec, buf, LEN);
        cairn_persist(r->rec, TWIN ? LEN : LEN - 1);
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
    }
}

static int corpus_check(struct root *r)
{
    for (int j = 0; j < LEN; j++)
        if (r->rec[j] < r->flag) {
            printf("flag %llu but rec[%d] = %u\n", (unsigned long long)r->flag, j, r->rec[j]);
            return 1;
        }
    return 0;
}

CORPUS_MAIN
