/* Built with cairn-cc --trace. An entry {value, key << 1 | valid} written
 * with one 16-byte store: x86 promises 8-byte atomicity only, so a crash
 * may persist the word with the valid bit and not the value beside it.
 * Twin: the value written and persisted first, then the key with its valid
 * bit in one aligned 8-byte store. A valid entry's value is key * 1000. */
#include "corpus.h"

struct entry { uint64_t value; uint64_t key_valid; };
struct root { _Alignas(16) struct entry e[2]; uint64_t pad[4]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t k = 1; k <= 2; k++) {
        struct entry *e = &r->e[k - 1];
        if (TWIN) {
            e->value = k * 1000;
            cairn_persist(&e->value, 8);
            __atomic_store_n(&e->key_valid, k << 1 | 1, __ATOMIC_RELAXED);
        } else {
            typedef uint64_t v2 __attribute__((vector_size(16)));
            v2 x = { k * 1000, k << 1 | 1 };
            *(volatile v2 *)e = x;
        }
        cairn_persist(e, sizeof *e);
    }
}

static int corpus_check(struct root *r)
{
    for (int j = 0; j < 2; j++) {
        const struct entry *e = &r->e[j];
        if ((e->key_valid & 1) && e->value != (e->key_valid >> 1) * 1000) {
            printf("entry %d valid with key %llu but value %llu\n", j,
                   (unsigned long long)(e->key_valid >> 1), (unsigned long long)e->value);
            return 1;
        }
    }
    return 0;
}

CORPUS_MAIN
