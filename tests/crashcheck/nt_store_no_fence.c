/* Non-temporal stores (movnti) are weakly ordered: without an sfence
 * after them, the flag written next may reach the media first. Bug: the
 * record streamed, then its flag persisted with no fence in between.
 * Twin: an ordering fence between the streamed record and the flag.
 * Both also write the streamed lines back with cairn_flush (a no-op for
 * lines that movnti left out of the cache): cairn crashcheck does not see
 * a program's own non-temporal stores and takes them for plain stores
 * that need a flush (docs/crashcheck.md, "What is assumed of untraced
 * stores"). */
#include "corpus.h"
#include <immintrin.h>

struct root { uint64_t data[8]; uint64_t flag; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        for (int j = 0; j < 8; j++) _mm_stream_si64((long long *)&r->data[j], (long long)i);
        cairn_flush(r->data, sizeof r->data);
        if (TWIN) cairn_ofence();
        r->flag = i;
        cairn_persist(&r->flag, sizeof r->flag);
    }
}

static int corpus_check(struct root *r)
{
    return corpus_not_older(r->data, 8, r->flag, "data");
}

CORPUS_MAIN
