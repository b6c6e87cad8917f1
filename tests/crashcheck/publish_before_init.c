/* A pointer published (stored into the root and persisted) before the
 * object it points to is durable: after a crash the root leads to an
 * object that is still zero. Twin: the object is persisted first. */
#include "corpus.h"

struct root { uint64_t obj; uint64_t pad[7]; };
struct obj { uint64_t v[16]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        struct obj *o = cairn_alloc(pool, sizeof *o);
        if (!o) { fprintf(stderr, "cairn_alloc: %s\n", cairn_errormsg()); exit(2); }
        for (int j = 0; j < 16; j++) o->v[j] = i;
        if (TWIN) cairn_persist(o, sizeof *o);
        struct obj *old = cairn_ptr_load(&r->obj);
        cairn_ptr_store(&r->obj, o);
        cairn_persist(&r->obj, sizeof r->obj);
        if (!TWIN) cairn_persist(o, sizeof *o);
        if (old) cairn_free(old);
    }
}

static int corpus_check(struct root *r)
{
    struct obj *o = cairn_ptr_load(&r->obj);
    if (!o) return 0;
    for (int j = 0; j < 16; j++)
        if (o->v[j] == 0 || o->v[j] != o->v[0]) {
            printf("published object: v[%d] = %llu, v[0] = %llu\n", j,
                   (unsigned long long)o->v[j], (unsigned long long)o->v[0]);
            return 1;
        }
    return 0;
}

CORPUS_MAIN
