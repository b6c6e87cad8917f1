/* A three-word record {key, value, check} that straddles a line boundary,
 * updated in place with cairn_persist per word: a crash between the words
 * leaves a record whose check does not match. Twin: copy-on-write, the
 * new record written and persisted in the spare slot, then the 8-byte
 * index of the current slot switched and persisted. */
#include "corpus.h"

#define MAGIC 0x5a5a5a5a5a5a5a5aull
struct rec { uint64_t key, value, check; };
struct root {
    uint64_t pad0[6];
    struct rec slot[2];       /* slot[0] at bytes 48..71: across lines 0 and 1 */
    uint64_t pad1[2];
    uint64_t cur; uint64_t pad2[7];
};

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        struct rec n = { i, i * 100, i ^ (i * 100) ^ MAGIC };
        if (TWIN) {
            struct rec *s = &r->slot[!r->cur];
            *s = n;
            cairn_persist(s, sizeof *s);
            r->cur = !r->cur;
            cairn_persist(&r->cur, 8);
        } else {
            struct rec *s = &r->slot[0];
            s->key = n.key; cairn_persist(&s->key, 8);
            s->value = n.value; cairn_persist(&s->value, 8);
            s->check = n.check; cairn_persist(&s->check, 8);
        }
    }
}

static int corpus_check(struct root *r)
{
    const struct rec *s = &r->slot[TWIN ? r->cur & 1 : 0];
    if (!s->key && !s->value && !s->check) return 0;
    if ((s->key ^ s->value ^ MAGIC) == s->check) return 0;
    printf("torn record: key %llu value %llu check %#llx\n", (unsigned long long)s->key,
           (unsigned long long)s->value, (unsigned long long)s->check);
    return 1;
}

CORPUS_MAIN
