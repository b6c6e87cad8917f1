/* Built with cairn-cc --trace (stores traced one by one). Data and its
 * valid flag on one line, persisted with one flush: correct only when the
 * data is stored first, since x86 writes a line back whole and so persists
 * a prefix of its stores in program order. Bug: the flag is stored first.
 * The twin is code that relies on that ordering: no false report allowed. */
#include "corpus.h"

struct root { uint64_t data; uint64_t valid; uint64_t pad[6]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    volatile struct root *v = r;              /* keep the stores in source order */
    if (TWIN) {
        v->data = 7;
        v->valid = 1;
    } else {
        v->valid = 1;
        v->data = 7;
    }
    cairn_persist(r, sizeof *r);
}

static int corpus_check(struct root *r)
{
    if (r->valid && r->data != 7) {
        printf("valid but data = %llu\n", (unsigned long long)r->data);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
