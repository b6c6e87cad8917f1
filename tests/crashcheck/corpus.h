/* corpus.h -- what every program of the seeded bug corpus shares
 * (tests/crashcheck/README.md says how to add one).
 *
 * A corpus program is built twice, with -DBUG (the bug) and without (its
 * correct twin), and run as
 *     PROG run POOL      create POOL and do the work (under cairn crashcheck)
 *     PROG check POOL    open POOL (recovery) and exit 1 if it breaks the
 *                        program's invariant, 0 if it holds
 * The program defines struct root, corpus_run(pool, root) and
 * corpus_check(root) (0: fine; else it prints what is wrong), and ends
 * with CORPUS_MAIN. */
#ifndef CAIRN_CORPUS_H
#define CAIRN_CORPUS_H
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BUG
#define TWIN 0
#else
#define TWIN 1
#endif

struct root;
static void corpus_run(cairn_pool *pool, struct root *r);
static int corpus_check(struct root *r);

/* Checks the programs share: 0 when the invariant holds, else 1 and what is wrong. */
static inline int corpus_same(const char *name_a, uint64_t a, const char *name_b, uint64_t b)
{
    if (a == b) return 0;
    printf("%s = %llu but %s = %llu\n", name_a, (unsigned long long)a, name_b, (unsigned long long)b);
    return 1;
}

/* every word of data[0..n) at least flag: the data is as new as its flag says */
static inline int corpus_not_older(const uint64_t *data, int n, uint64_t flag, const char *name)
{
    for (int j = 0; j < n; j++)
        if (data[j] < flag) {
            printf("flag %llu but %s[%d] = %llu\n", (unsigned long long)flag, name, j,
                   (unsigned long long)data[j]);
            return 1;
        }
    return 0;
}

static int corpus_main(int argc, char **argv, size_t root_size, uint64_t root_type)
{
    if (argc != 3 || (strcmp(argv[1], "run") && strcmp(argv[1], "check"))) {
        fprintf(stderr, "usage: %s run|check POOL\n", argv[0]);
        return 2;
    }
    int run = !strcmp(argv[1], "run");
    cairn_pool *pool = run ? cairn_pool_create(argv[2], "corpus", (size_t)8 << 20)
                           : cairn_pool_open(argv[2], "corpus");
    if (!pool) {
        fprintf(stderr, "%s: %s\n", argv[2], cairn_errormsg());
        return 2;
    }
    struct root *r = cairn_root(pool, root_size, root_type);
    if (!r) {
        fprintf(stderr, "%s: no root: %s\n", argv[2], cairn_errormsg());
        return 2;
    }
    int rc = 0;
    if (run) corpus_run(pool, r);
    else rc = corpus_check(r);
    cairn_pool_close(pool);
    return rc;
}
#define CORPUS_MAIN \
    int main(int argc, char **argv) \
    { return corpus_main(argc, argv, sizeof(struct root), CAIRN_TYPE_ID(struct root)); }
#endif
