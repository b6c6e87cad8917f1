/*
 * legacy_stress.c -- unmodified header-only C libraries on persistent
 * objects: BSD sys/queue.h TAILQ, sys/tree.h red-black and splay trees
 * (libbsd) and uthash, all linked from one pool root. The code below has no
 * logging and no pointer conversions: cairn-cc adds them.
 *
 *   legacy_stress run POOL SEED   insert/delete in transactions forever
 *                                 (the test SIGKILLs it at a random instant)
 *   legacy_stress verify POOL     open (recovers) and check that all four
 *                                 structures hold exactly the same keys
 */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

static cairn_pool *g_pool;
#define uthash_malloc(sz) cairn_alloc(g_pool, sz)
#define uthash_free(ptr, sz) cairn_free(ptr)
#define uthash_fatal(msg) do { fprintf(stderr, "uthash: %s\n", msg); exit(3); } while (0)
#include <uthash.h>

struct item {
    long key;
    TAILQ_ENTRY(item) link;
    RB_ENTRY(item) rb;
    SPLAY_ENTRY(item) sp;
    UT_hash_handle hh;
    char label[24];
};

static int item_cmp(struct item *a, struct item *b)
{
    return (a->key > b->key) - (a->key < b->key);
}

TAILQ_HEAD(item_list, item);
RB_HEAD(item_rb, item);
SPLAY_HEAD(item_splay, item);
RB_GENERATE(item_rb, item, rb, item_cmp)
SPLAY_PROTOTYPE(item_splay, item, sp, item_cmp)
SPLAY_GENERATE(item_splay, item, sp, item_cmp)

struct root {
    struct item_list list;
    struct item_rb rb;
    struct item_splay splay;
    struct item *hash;
    long count;
    long ops;
};

static void insert(struct root *r, long key)
{
    struct item *it, probe = { .key = key };
    HASH_FIND(hh, r->hash, &key, sizeof key, it);
    if (it || RB_FIND(item_rb, &r->rb, &probe))
        return;
    it = cairn_alloc(g_pool, sizeof *it);
    it->key = key;
    snprintf(it->label, sizeof it->label, "key-%ld", key);
    TAILQ_INSERT_TAIL(&r->list, it, link);
    RB_INSERT(item_rb, &r->rb, it);
    SPLAY_INSERT(item_splay, &r->splay, it);
    HASH_ADD(hh, r->hash, key, sizeof it->key, it);
    r->count++;
}

static void delete(struct root *r, long key)
{
    struct item *it;
    HASH_FIND(hh, r->hash, &key, sizeof key, it);
    if (!it)
        return;
    TAILQ_REMOVE(&r->list, it, link);
    RB_REMOVE(item_rb, &r->rb, it);
    SPLAY_REMOVE(item_splay, &r->splay, it);
    HASH_DELETE(hh, r->hash, it);
    cairn_free(it);
    r->count--;
}

static int verify(struct root *r)
{
    long n = 0, prev = -1;
    struct item *it, probe;
    TAILQ_FOREACH(it, &r->list, link) {
        struct item *h;
        HASH_FIND(hh, r->hash, &it->key, sizeof it->key, h);
        probe.key = it->key;
        if (h != it || RB_FIND(item_rb, &r->rb, &probe) != it ||
            SPLAY_FIND(item_splay, &r->splay, &probe) != it) {
            printf("key %ld missing from a structure\n", it->key);
            return 1;
        }
        char want[24];
        snprintf(want, sizeof want, "key-%ld", it->key);
        if (strcmp(want, it->label)) {
            printf("key %ld has label '%s'\n", it->key, it->label);
            return 1;
        }
        n++;
    }
    long rbn = 0;
    RB_FOREACH(it, item_rb, &r->rb) {
        if (it->key <= prev) { printf("rb order broken at %ld\n", it->key); return 1; }
        prev = it->key;
        rbn++;
    }
    long spn = 0;
    SPLAY_FOREACH(it, item_splay, &r->splay) spn++;
    long hn = HASH_COUNT(r->hash);
    if (n != r->count || rbn != n || spn != n || hn != n) {
        printf("counts differ: root %ld list %ld rb %ld splay %ld hash %ld\n",
               r->count, n, rbn, spn, hn);
        return 1;
    }
    printf("verified %ld items after %ld ops\n", n, r->ops);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: %s run|verify POOL [SEED]\n", argv[0]); return 2; }
    int run = !strcmp(argv[1], "run");
    g_pool = cairn_pool_open(argv[2], "legacy");
    int fresh = 0;
    if (!g_pool && run) {
        g_pool = cairn_pool_create(argv[2], "legacy", 64 << 20);
        fresh = 1;
    }
    if (!g_pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(g_pool, struct root);
    if (fresh)
        CAIRN_TX(g_pool) {
            TAILQ_INIT(&r->list);
            RB_INIT(&r->rb);
            SPLAY_INIT(&r->splay);
        }
    if (!run) {
        int rc = 1;
        CAIRN_TX(g_pool) { rc = verify(r); }  /* SPLAY_FIND writes: splaying */
        return rc;
    }
    srand(atoi(argv[3]));
    long limit = argc > 4 ? atol(argv[4]) : -1;
    printf("started\n");
    fflush(stdout);
    for (long i = 0; limit < 0 || i < limit; i++) {
        long key = rand() % 2000;
        CAIRN_TX(g_pool) {
            if (rand() % 3) insert(r, key); else delete(r, key);
            r->ops++;
        }
    }
    int rc = 1;
    CAIRN_TX(g_pool) { rc = verify(r); }
    cairn_pool_close(g_pool);
    return rc;
}
