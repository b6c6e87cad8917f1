/*
 * bench_cairn.c -- the same operations as bench_pmemobj.c, written against
 * cairn.h as a plain-C user (no cairn-cc) would: explicit cairn_tx_add,
 * cairn_ptr_store/cairn_ptr_load for pointers kept in the pool. Run with
 * CAIRN_PMEM_FORCE=1 so /dev/shm gets user-space flushes, not msync.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"

#define LAYOUT_MICRO "cairn-bench"
#define LAYOUT_LIST  "cairn-bench-list"

static cairn_pool *pool;

/* the insert/delete operation's list: a node's first word links the next */
struct cn_lnode {
    struct cn_lnode *next;  /* relative form in the pool: cairn_ptr_store/load */
    unsigned char payload[];
};
struct cn_lroot {
    struct { struct cn_lnode *head; char pad[56]; } slot[BENCH_LIST_SLOTS];
};
static struct cn_lroot *lroot;

struct cn_thread {
    char *obj;          /* this thread's object */
    char *area;         /* a 64-byte aligned area inside it */
    struct cn_lnode **head;   /* this thread's list head in the root */
};

static void fail(const char *what)
{
    fprintf(stderr, "bench cairn: %s: %s\n", what, cairn_errormsg());
    exit(1);
}

static int cn_pool_create(const char *path, size_t size)
{
    pool = cairn_pool_create(path, LAYOUT_MICRO, size);
    if (!pool)
        return -1;
    lroot = CAIRN_ROOT(pool, struct cn_lroot);
    return lroot ? 0 : -1;
}

static void cn_pool_close(void)
{
    cairn_pool_close(pool);
    pool = NULL;
}

static void *cn_thread_init(int tid)
{
    struct cn_thread *t = calloc(1, sizeof *t);
    if (!t || !(t->obj = cairn_alloc(pool, BENCH_OBJ_BYTES + 64)))
        return NULL;
    t->head = &lroot->slot[tid % BENCH_LIST_SLOTS].head;
    t->area = t->obj + (64 - (uintptr_t)t->obj % 64) % 64;
    return t;
}

static void cn_thread_fini(void *ts)
{
    struct cn_thread *t = ts;
    cairn_free(t->obj);
    free(t);
}

static void cn_tx_update8(void *ts, uint64_t i)
{
    struct cn_thread *t = ts;
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    cairn_tx_add(t->area, sizeof(uint64_t));
    *(uint64_t *)t->area = i;
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
}

static void cn_tx_update_ranges(void *ts, uint64_t i)
{
    struct cn_thread *t = ts;
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    for (int r = 0; r < BENCH_TX_RANGES; r++) {
        char *at = t->area + r * BENCH_RANGE_BYTES;
        cairn_tx_add(at, BENCH_RANGE_BYTES);
        memset(at, (int)(i & 0x7f), BENCH_RANGE_BYTES);
    }
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
}

static void cn_alloc_free(void *ts, size_t size)
{
    (void)ts;
    void *p = cairn_alloc(pool, size);
    if (!p)
        fail("cairn_alloc");
    cairn_free(p);
}

static void cn_tx_alloc_free(void *ts, size_t size)
{
    (void)ts;
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    void *p = cairn_alloc(pool, size);
    if (!p)
        fail("cairn_alloc in a transaction");
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    cairn_free(p);
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
}

static void cn_tx_insert_delete(void *ts, uint64_t i, size_t size)
{
    struct cn_thread *t = ts;
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    struct cn_lnode *n = cairn_alloc(pool, size);
    if (!n)
        fail("cairn_alloc in a transaction");
    memset(n->payload, (int)(i & 0x7f), size - sizeof n->next);
    cairn_ptr_store(&n->next, cairn_ptr_load(t->head));
    cairn_ptr_store(t->head, n);           /* snapshots the head in the tx */
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
    if (cairn_tx_begin(pool))
        fail("cairn_tx_begin");
    struct cn_lnode *h = cairn_ptr_load(t->head);
    cairn_ptr_store(t->head, cairn_ptr_load(&h->next));
    cairn_free(h);
    if (cairn_tx_commit())
        fail("cairn_tx_commit");
}

static void cn_counts_get(struct bench_counts *out)
{
    struct cairn_stats s;
    cairn_stats_get(&s);
    *out = (struct bench_counts){.flushes = s.flushes, .ofences = s.ofences,
                                 .dfences = s.dfences, .log_entries = s.log_entries,
                                 .log_bytes = s.log_bytes};
}

/* ---- the list of the open-time benchmark ------------------------------- */

struct cn_root { struct cn_node *head; };
struct cn_node {
    struct cn_node *next;   /* relative form in the pool: cairn_ptr_store/load */
    unsigned char payload[BENCH_NODE_BYTES - sizeof(void *)];
};
_Static_assert(sizeof(struct cn_node) == BENCH_NODE_BYTES, "1 KiB nodes");

static struct cn_node *next_of(struct cn_node *n) { return cairn_ptr_load(&n->next); }

static int cn_list_fill(const char *path, size_t size, uint64_t max_objects,
                        struct fill_result *out)
{
    pool = cairn_pool_create(path, LAYOUT_LIST, size);
    if (!pool)
        return -1;
    struct cn_root *root = CAIRN_ROOT(pool, struct cn_root);
    if (!root)
        fail("root");
    struct cn_node *head = NULL;
    uint64_t n = 0;
    while (n < max_objects) {
        /* atomic allocation, constructed and persisted, then published */
        struct cn_node *node = cairn_alloc(pool, sizeof *node);
        if (!node) {
            out->alloc_failed = 1;
            break;
        }
        memset(node->payload, BENCH_NODE_PATTERN, sizeof node->payload);
        cairn_ptr_store(&node->next, head);
        cairn_persist(node, sizeof *node);
        cairn_ptr_store(&root->head, node);
        cairn_persist(&root->head, sizeof root->head);
        head = node;
        n++;
    }
    for (int k = 0; k < BENCH_FREE_AFTER_FILL && head; k++) {
        if (cairn_tx_begin(pool))
            fail("cairn_tx_begin");
        struct cn_node *next = next_of(head);
        cairn_ptr_store(&root->head, next);     /* snapshots the slot in a tx */
        cairn_free(head);
        if (cairn_tx_commit())
            fail("cairn_tx_commit");
        head = next;
        n--;
    }
    out->objects = n;
    out->base = (uintptr_t)root;
    return cairn_pool_close(pool);
}

static int cn_list_open(const char *path, struct open_result *out)
{
    double t0 = bench_now();
    pool = cairn_pool_open(path, LAYOUT_LIST);
    if (!pool)
        return -1;
    struct cn_root *root = CAIRN_ROOT(pool, struct cn_root);
    if (!root)
        fail("root");
    double t1 = bench_now();
    void *o = cairn_alloc(pool, sizeof(struct cn_node));
    if (!o)
        fail("first allocation after open");
    cairn_free(o);
    double t2 = bench_now();
    uint64_t n = 0, ok = 1;
    for (struct cn_node *p = cairn_ptr_load(&root->head); p; p = next_of(p)) {
        n++;
        ok &= p->payload[0] == BENCH_NODE_PATTERN &&
              p->payload[sizeof p->payload - 1] == BENCH_NODE_PATTERN;
    }
    double t3 = bench_now();
    struct cairn_recovery rec;
    cairn_pool_recovery(pool, &rec);        /* waits for a background mark */
    *out = (struct open_result){.open_s = t1 - t0, .first_alloc_s = t2 - t1,
                                .walk_s = t3 - t2, .background_s = rec.background_seconds,
                                .objects = n, .checksum_ok = ok, .base = (uintptr_t)root};
    return cairn_pool_close(pool);
}

static int cn_list_churn(const char *path)
{
    pool = cairn_pool_open(path, LAYOUT_LIST);
    if (!pool)
        return -1;
    struct cn_root *root = CAIRN_ROOT(pool, struct cn_root);
    if (!root)
        fail("root");
    uint64_t n = 0, cap = 1024;
    struct cn_node **nodes = malloc(cap * sizeof *nodes);
    for (struct cn_node *p = cairn_ptr_load(&root->head); p; p = next_of(p)) {
        if (n == cap)
            nodes = realloc(nodes, (cap *= 2) * sizeof *nodes);
        nodes[n++] = p;
    }
    if (!n)
        return -1;
    bench_ready();
    for (uint64_t i = 1;; i++) {
        struct cn_node *p = nodes[(i * 0x9e3779b97f4a7c15ULL >> 11) % n];
        if (cairn_tx_begin(pool))
            fail("cairn_tx_begin");
        for (int r = 0; r < BENCH_TX_RANGES; r++) {
            unsigned char *at = p->payload + r * 120;
            cairn_tx_add(at, BENCH_RANGE_BYTES);
            memset(at, BENCH_NODE_PATTERN, BENCH_RANGE_BYTES);
        }
        if (cairn_tx_commit())
            fail("cairn_tx_commit");
    }
}

const struct bench_backend bench_backend = {
    .name = "cairn",
    .version = "0.1.0",
    .pool_create = cn_pool_create,
    .pool_close = cn_pool_close,
    .thread_init = cn_thread_init,
    .thread_fini = cn_thread_fini,
    .tx_update8 = cn_tx_update8,
    .tx_update_ranges = cn_tx_update_ranges,
    .alloc_free = cn_alloc_free,
    .tx_alloc_free = cn_tx_alloc_free,
    .tx_insert_delete = cn_tx_insert_delete,
    .counts_reset = cairn_stats_reset,
    .counts_get = cn_counts_get,
    .list_fill = cn_list_fill,
    .list_open = cn_list_open,
    .list_churn = cn_list_churn,
    .errormsg = cairn_errormsg,
};
