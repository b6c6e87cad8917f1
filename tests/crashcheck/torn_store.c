/* Built with cairn-cc --trace. A 16-byte record {value, ~value} written
 * with one 16-byte store: x86 promises 8-byte atomicity only, so a power
 * failure may persist one half. Twin: the record packed into one aligned
 * 8-byte word {value, ~value} of 32 bits each. */
#include "corpus.h"

struct root { _Alignas(16) uint64_t rec[2]; uint64_t pad[6]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 2; i++) {
        if (TWIN) {
            uint64_t w = (i & 0xffffffffu) | ((uint64_t)(~(uint32_t)i) << 32);
            __atomic_store_n(&r->rec[0], w, __ATOMIC_RELAXED);
        } else {
            typedef uint64_t v2 __attribute__((vector_size(16)));
            v2 x = { i, ~i };
            *(volatile v2 *)r->rec = x;
        }
        cairn_persist(r->rec, 16);
    }
}

static int corpus_check(struct root *r)
{
    if (TWIN) {
        uint64_t w = r->rec[0];
        if (w && (uint32_t)(w >> 32) != (uint32_t)~(uint32_t)w) {
            printf("torn word %#llx\n", (unsigned long long)w);
            return 1;
        }
    } else if ((r->rec[0] || r->rec[1]) && r->rec[1] != ~r->rec[0]) {
        printf("torn record %#llx %#llx\n", (unsigned long long)r->rec[0],
               (unsigned long long)r->rec[1]);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
