/*
 * bench_pmemobj.c -- the peer: each benchmark operation written the way
 * PMDK's manual teaches (TX_BEGIN/TX_END, pmemobj_tx_add_range, zeroed
 * allocation), on a pool made by pmemobj_create. Run with
 * PMEM_IS_PMEM_FORCE=1 so /dev/shm gets user-space flushes, not msync.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>

#ifndef BENCH_PMEMOBJ_VERSION
#define BENCH_PMEMOBJ_VERSION "unknown"
#endif

#define LAYOUT_MICRO "cairn-bench"
#define LAYOUT_LIST  "cairn-bench-list"

enum { TYPE_WORK = 1, TYPE_SCRATCH = 2, TYPE_NODE = 3 };

static PMEMobjpool *pop;

/* the insert/delete operation's list */
struct pm_lnode {
    PMEMoid next;
    unsigned char payload[];
};
struct pm_lroot {
    struct { PMEMoid head; char pad[48]; } slot[BENCH_LIST_SLOTS];
};
static struct pm_lroot *lroot;

struct pm_thread {
    PMEMoid *head;      /* this thread's list head in the root */
    PMEMoid obj;        /* this thread's object */
    uint64_t off;       /* offset in obj of a 64-byte aligned area */
    char *area;         /* its address */
    PMEMoid scratch;    /* object allocated and freed by the alloc ops */
};

static void fail(const char *what)
{
    fprintf(stderr, "bench pmemobj: %s: %s\n", what, pmemobj_errormsg());
    exit(1);
}

static int pm_pool_create(const char *path, size_t size)
{
    pop = pmemobj_create(path, LAYOUT_MICRO, size, 0600);
    if (!pop)
        return -1;
    lroot = pmemobj_direct(pmemobj_root(pop, sizeof *lroot));
    return lroot ? 0 : -1;
}

static void pm_pool_close(void)
{
    pmemobj_close(pop);
    pop = NULL;
}

static void *pm_thread_init(int tid)
{
    struct pm_thread *t = calloc(1, sizeof *t);
    if (!t || pmemobj_zalloc(pop, &t->obj, BENCH_OBJ_BYTES + 64, TYPE_WORK))
        return NULL;
    t->head = &lroot->slot[tid % BENCH_LIST_SLOTS].head;
    char *p = pmemobj_direct(t->obj);
    t->off = (uint64_t)((64 - (uintptr_t)p % 64) % 64);
    t->area = p + t->off;
    return t;
}

static void pm_thread_fini(void *ts)
{
    struct pm_thread *t = ts;
    pmemobj_free(&t->obj);
    free(t);
}

static void pm_tx_update8(void *ts, uint64_t i)
{
    struct pm_thread *t = ts;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(t->obj, t->off, sizeof(uint64_t));
        *(uint64_t *)t->area = i;
    } TX_ONABORT {
        fail("tx_update_8B");
    } TX_END
}

static void pm_tx_update_ranges(void *ts, uint64_t i)
{
    struct pm_thread *t = ts;
    TX_BEGIN(pop) {
        for (int r = 0; r < BENCH_TX_RANGES; r++) {
            uint64_t at = (uint64_t)r * BENCH_RANGE_BYTES;
            pmemobj_tx_add_range(t->obj, t->off + at, BENCH_RANGE_BYTES);
            memset(t->area + at, (int)(i & 0x7f), BENCH_RANGE_BYTES);
        }
    } TX_ONABORT {
        fail("tx_update_8x64B");
    } TX_END
}

static void pm_alloc_free(void *ts, size_t size)
{
    struct pm_thread *t = ts;
    if (pmemobj_zalloc(pop, &t->scratch, size, TYPE_SCRATCH))
        fail("pmemobj_zalloc");
    pmemobj_free(&t->scratch);
}

static void pm_tx_alloc_free(void *ts, size_t size)
{
    struct pm_thread *t = ts;
    TX_BEGIN(pop) {
        t->scratch = pmemobj_tx_zalloc(size, TYPE_SCRATCH);
    } TX_ONABORT {
        fail("pmemobj_tx_zalloc");
    } TX_END
    TX_BEGIN(pop) {
        pmemobj_tx_free(t->scratch);
    } TX_ONABORT {
        fail("pmemobj_tx_free");
    } TX_END
}

/* pmemobj_tx_alloc (not zalloc): the node is filled whole, as a PMDK user
 * who writes every byte would allocate it */
static void pm_tx_insert_delete(void *ts, uint64_t i, size_t size)
{
    struct pm_thread *t = ts;
    TX_BEGIN(pop) {
        PMEMoid n = pmemobj_tx_alloc(size, TYPE_NODE);
        struct pm_lnode *p = pmemobj_direct(n);
        memset(p->payload, (int)(i & 0x7f), size - sizeof p->next);
        p->next = *t->head;
        pmemobj_tx_add_range_direct(t->head, sizeof *t->head);
        *t->head = n;
    } TX_ONABORT {
        fail("tx_insert_delete: insert");
    } TX_END
    TX_BEGIN(pop) {
        PMEMoid h = *t->head;
        struct pm_lnode *p = pmemobj_direct(h);
        pmemobj_tx_add_range_direct(t->head, sizeof *t->head);
        *t->head = p->next;
        pmemobj_tx_free(h);
    } TX_ONABORT {
        fail("tx_insert_delete: delete");
    } TX_END
}

/* ---- the list of the open-time benchmark ------------------------------- */

struct pm_root { PMEMoid head; };
struct pm_node {
    PMEMoid next;
    unsigned char payload[BENCH_NODE_BYTES - sizeof(PMEMoid)];
};
_Static_assert(sizeof(struct pm_node) == BENCH_NODE_BYTES, "1 KiB nodes");

static int node_construct(PMEMobjpool *p, void *ptr, void *arg)
{
    struct pm_node *n = ptr;
    n->next = *(PMEMoid *)arg;
    memset(n->payload, BENCH_NODE_PATTERN, sizeof n->payload);
    pmemobj_persist(p, n, sizeof *n);
    return 0;
}

static int pm_list_fill(const char *path, size_t size, uint64_t max_objects,
                        struct fill_result *out)
{
    pop = pmemobj_create(path, LAYOUT_LIST, size, 0600);
    if (!pop)
        return -1;
    struct pm_root *root = pmemobj_direct(pmemobj_root(pop, sizeof *root));
    uint64_t n = 0;
    while (n < max_objects) {
        PMEMoid old = root->head;
        /* the canonical PMDK push: construct, then publish atomically */
        if (pmemobj_alloc(pop, &root->head, sizeof(struct pm_node), TYPE_NODE,
                          node_construct, &old)) {
            out->alloc_failed = 1;
            break;
        }
        n++;
    }
    for (int k = 0; k < BENCH_FREE_AFTER_FILL && !OID_IS_NULL(root->head); k++) {
        TX_BEGIN(pop) {
            PMEMoid h = root->head;
            struct pm_node *node = pmemobj_direct(h);
            pmemobj_tx_add_range_direct(&root->head, sizeof root->head);
            root->head = node->next;
            pmemobj_tx_free(h);
        } TX_ONABORT {
            fail("unlink");
        } TX_END
        n--;
    }
    out->objects = n;
    out->base = (uintptr_t)root;
    pmemobj_close(pop);
    return 0;
}

static int pm_list_open(const char *path, struct open_result *out)
{
    double t0 = bench_now();
    pop = pmemobj_open(path, LAYOUT_LIST);
    if (!pop)
        return -1;
    struct pm_root *root = pmemobj_direct(pmemobj_root(pop, sizeof *root));
    double t1 = bench_now();
    PMEMoid o;
    if (pmemobj_zalloc(pop, &o, sizeof(struct pm_node), TYPE_SCRATCH))
        fail("first allocation after open");
    pmemobj_free(&o);
    double t2 = bench_now();
    uint64_t n = 0, ok = 1;
    for (struct pm_node *p = pmemobj_direct(root->head); p; p = pmemobj_direct(p->next)) {
        n++;
        ok &= p->payload[0] == BENCH_NODE_PATTERN &&
              p->payload[sizeof p->payload - 1] == BENCH_NODE_PATTERN;
    }
    double t3 = bench_now();
    *out = (struct open_result){.open_s = t1 - t0, .first_alloc_s = t2 - t1,
                                .walk_s = t3 - t2, .objects = n, .checksum_ok = ok,
                                .base = (uintptr_t)root};
    pmemobj_close(pop);
    return 0;
}

static int pm_list_churn(const char *path)
{
    pop = pmemobj_open(path, LAYOUT_LIST);
    if (!pop)
        return -1;
    struct pm_root *root = pmemobj_direct(pmemobj_root(pop, sizeof *root));
    uint64_t n = 0, cap = 1024;
    struct pm_node **nodes = malloc(cap * sizeof *nodes);
    for (struct pm_node *p = pmemobj_direct(root->head); p; p = pmemobj_direct(p->next)) {
        if (n == cap)
            nodes = realloc(nodes, (cap *= 2) * sizeof *nodes);
        nodes[n++] = p;
    }
    if (!n)
        return -1;
    bench_ready();
    for (uint64_t i = 1;; i++) {
        struct pm_node *p = nodes[(i * 0x9e3779b97f4a7c15ULL >> 11) % n];
        TX_BEGIN(pop) {
            for (int r = 0; r < BENCH_TX_RANGES; r++) {
                unsigned char *at = p->payload + r * 120;
                pmemobj_tx_add_range_direct(at, BENCH_RANGE_BYTES);
                memset(at, BENCH_NODE_PATTERN, BENCH_RANGE_BYTES);
            }
        } TX_ONABORT {
            fail("churn");
        } TX_END
    }
}

const struct bench_backend bench_backend = {
    .name = "pmemobj",
    .version = BENCH_PMEMOBJ_VERSION,
    .pool_create = pm_pool_create,
    .pool_close = pm_pool_close,
    .thread_init = pm_thread_init,
    .thread_fini = pm_thread_fini,
    .tx_update8 = pm_tx_update8,
    .tx_update_ranges = pm_tx_update_ranges,
    .alloc_free = pm_alloc_free,
    .tx_alloc_free = pm_tx_alloc_free,
    .tx_insert_delete = pm_tx_insert_delete,
    .list_fill = pm_list_fill,
    .list_open = pm_list_open,
    .list_churn = pm_list_churn,
    .errormsg = pmemobj_errormsg,
};
