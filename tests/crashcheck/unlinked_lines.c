/* Correct code with many lines in play at a fence that recovery and the
 * check never read: an object of LINES lines is allocated, filled and
 * persisted (one flush of the range, one fence: 2^LINES combinations of
 * its lines there), and only then linked from the root and the link
 * persisted. Until the link, nothing reaches the object: recovery's mark
 * does not scan it and the check does not read it, so pruned to the lines
 * that are read, that fence is explored exhaustively
 * (tests/crashcheck/test_prune.py). The check: a linked object is whole. */
#include "corpus.h"

#ifndef LINES
#define LINES 16
#endif
struct obj { uint64_t line[LINES][8]; };
struct root { struct obj *o; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    struct obj *o = cairn_alloc(pool, sizeof *o);
    if (!o) exit(2);
    for (int l = 0; l < LINES; l++)
        for (int w = 0; w < 8; w++) o->line[l][w] = (uint64_t)l + 1;
    cairn_persist(o, sizeof *o);
    cairn_ptr_store(&r->o, o);
    cairn_persist(&r->o, sizeof r->o);
}

static int corpus_check(struct root *r)
{
    struct obj *o = cairn_ptr_load(&r->o);
    if (!o) return 0;
    for (int l = 0; l < LINES; l++)
        for (int w = 0; w < 8; w++)
            if (o->line[l][w] != (uint64_t)l + 1) {
                printf("linked object: line %d word %d holds %llu\n", l, w,
                       (unsigned long long)o->line[l][w]);
                return 1;
            }
    return 0;
}

CORPUS_MAIN
