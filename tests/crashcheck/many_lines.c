/* Correct code with many lines in play at one fence: LINES lines of the
 * root written, then persisted with one flush of the range and one fence,
 * so that fence has 2^LINES crash states (the states/second workload of
 * docs/RESULTS.md). The check: each line holds all of its update or none. */
#include "corpus.h"

#ifndef LINES
#define LINES 12
#endif
struct root { uint64_t line[LINES][8]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (int l = 0; l < LINES; l++)
        for (int w = 0; w < 8; w++) r->line[l][w] = (uint64_t)l + 1;
    cairn_persist(r, sizeof *r);
}

static int corpus_check(struct root *r)
{
    for (int l = 0; l < LINES; l++)
        for (int w = 1; w < 8; w++)
            if (r->line[l][w] != r->line[l][0]) {
                printf("line %d is torn\n", l);
                return 1;
            }
    return 0;
}

CORPUS_MAIN
