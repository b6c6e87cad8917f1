/* ptrchain: records reached through two structs that only point to them,
 * and written by a helper one call away (as Redis' rdbSaveObject reaches a
 * zset's skiplist: zs = o->ptr; zsl = zs->zsl; save(zsl)). The holders
 * must keep the evidence of reaching the write through the locals they are
 * read into. Test program for cairn analyze (test_analyze.py). */
#include <stdio.h>
#include <stdlib.h>

struct rec {                 /* persistent: its bytes are the file */
    long id;
    double score;
};

struct idx {                 /* persistent: holds the records */
    struct rec *first;
    size_t n;
};

struct snap {                /* persistent: the root */
    struct idx *ix;
    struct { long magic, version; } *hdr;   /* an anonymous type, named by its place */
};

static int put(FILE *f, const struct rec *r, size_t n)
{
    return fwrite(r, sizeof *r, n, f) == n ? 0 : -1;
}

int snap_save(struct snap *S, FILE *f)
{
    struct idx *ix = S->ix;
    struct rec *r = ix->first;
    return put(f, r, ix->n);
}

int snap_load(struct snap *S, FILE *f)
{
    size_t n;
    if (fread(&n, sizeof n, 1, f) != 1) return -1;
    struct idx *ix = malloc(sizeof *ix);
    ix->first = malloc(n * sizeof *ix->first);
    ix->n = fread(ix->first, sizeof *ix->first, n, f);
    S->ix = ix;
    S->hdr = malloc(sizeof *S->hdr);
    if (fread(S->hdr, sizeof *S->hdr, 1, f) != 1) return -1;
    return 0;
}
