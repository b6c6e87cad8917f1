/* test_crashstates.c -- power loss simulated at every fence, on the runtime
 * API (crashsim.h says how crash states are made). For each crash state a
 * child opens it (recovery), waits for the background mark, compares what
 * the root holds with the program's committed states, closes it and checks
 * the file in full:
 *   - the root holds the last committed state or, while a commit is in
 *     progress, the state that commit makes; nothing else (DESIGN.md
 *     invariants 1 and 2: undo before store, durable before committed);
 *   - after the close, the full check finds no error and no leak, and the
 *     heap holds exactly the root, the blob and the list's nodes
 *     (invariant 4: objects of uncommitted transactions are free, nothing
 *     unreachable stays allocated, nothing reachable was freed).
 * The workload covers an 8-byte update, 8 ranges of 64 B, an allocation
 * linked into a list with a free of its tail, an aborted transaction that
 * allocates, an atomic allocation and free, and a 24 KiB update whose undo
 * records continue in a log extension block.
 */
#include "harness.h"
#include "internal.h"
#include "crashsim.h"

struct node { struct node *next; uint64_t value; uint64_t pad[6]; };
#define BLOB 24576
struct croot {
    uint64_t counter;
    uint64_t pad[7];
    uint64_t arr[64];
    struct node *head;
    uint64_t nlist;
    unsigned char *blob;
};

/* ---- the workload and its model ---- */
#define STEPS 14
#define MAXLIST 3

struct model { uint64_t counter, arr[64], list[MAXLIST + 1], nlist; unsigned char blob; };

enum { K_8B, K_8x64, K_PUSH, K_ABORT, K_ATOMIC, K_BIG, NKINDS };
static int kind_of(int i) { return (i - 1) % NKINDS; }

/* what step i does to the model (aborted and atomic steps change nothing) */
static void model_step(struct model *m, int i)
{
    switch (kind_of(i)) {
    case K_8B: m->counter = (uint64_t)i; break;
    case K_8x64:
        for (int j = 0; j < 64; j++) m->arr[j] = (uint64_t)i * 1000 + (uint64_t)j;
        break;
    case K_PUSH:
        memmove(m->list + 1, m->list, m->nlist * sizeof m->list[0]);
        m->list[0] = (uint64_t)i;
        if (++m->nlist > MAXLIST) m->nlist--;
        break;
    case K_BIG: m->blob = (unsigned char)(i * 7 + 1); break;
    default: break;
    }
}

static void model_at(struct model *m, int k)
{
    memset(m, 0, sizeof *m);
    for (int i = 1; i <= k; i++) model_step(m, i);
}

static void run_step(cairn_pool *p, struct croot *r, int i)
{
    switch (kind_of(i)) {
    case K_8B:
        CAIRN_TX(p) { cairn_tx_add(&r->counter, 8); r->counter = (uint64_t)i; }
        break;
    case K_8x64:
        CAIRN_TX(p) {
            for (int j = 0; j < 8; j++) {
                cairn_tx_add(&r->arr[j * 8], 64);
                for (int k = 0; k < 8; k++) r->arr[j * 8 + k] = (uint64_t)i * 1000 + (uint64_t)(j * 8 + k);
            }
        }
        break;
    case K_PUSH:
        CAIRN_TX(p) {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->value = (uint64_t)i;
            cairn_ptr_store(&n->next, cairn_ptr_load(&r->head));
            cairn_ptr_store(&r->head, n);
            cairn_tx_add(&r->nlist, 8);
            if (++r->nlist > MAXLIST) {            /* drop the tail */
                struct node *prev = n, *last = cairn_ptr_load(&n->next);
                for (struct node *x; (x = cairn_ptr_load(&last->next)); prev = last, last = x) {}
                cairn_ptr_store(&prev->next, NULL);
                cairn_free(last);
                r->nlist--;
            }
        }
        break;
    case K_ABORT:
        REQUIRE(cairn_tx_begin(p) == 0);
        cairn_tx_add(&r->counter, 8);
        r->counter = 0xdead;
        cairn_tx_add(r->arr, sizeof r->arr);
        memset(r->arr, 0xee, sizeof r->arr);
        {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->value = 0xbad;
            cairn_ptr_store(&n->next, cairn_ptr_load(&r->head));
            cairn_ptr_store(&r->head, n);
        }
        cairn_tx_abort();
        break;
    case K_ATOMIC: {
        void *x = cairn_alloc(p, 4096);            /* atomic: never linked */
        REQUIRE(x);
        cairn_free(x);
        break;
    }
    case K_BIG: {
        unsigned char *b = cairn_ptr_load(&r->blob);
        CAIRN_TX(p) {
            cairn_tx_add(b, BLOB);
            memset(b, i * 7 + 1, BLOB);
        }
        break;
    }
    }
}

/* ---- the checker: a child opens one crash state ---- */
static int matches(struct croot *r, const struct model *m, char *why, size_t n)
{
    if (r->counter != m->counter) return snprintf(why, n, "counter %llu, want %llu",
                                                  (unsigned long long)r->counter,
                                                  (unsigned long long)m->counter), 0;
    for (int j = 0; j < 64; j++)
        if (r->arr[j] != m->arr[j])
            return snprintf(why, n, "arr[%d] %#llx, want %#llx", j,
                            (unsigned long long)r->arr[j], (unsigned long long)m->arr[j]), 0;
    if (r->nlist != m->nlist)
        return snprintf(why, n, "nlist %llu, want %llu", (unsigned long long)r->nlist,
                        (unsigned long long)m->nlist), 0;
    struct node *x = cairn_ptr_load(&r->head);
    for (uint64_t k = 0; k < m->nlist; k++, x = cairn_ptr_load(&x->next))
        if (!x || x->value != m->list[k])
            return snprintf(why, n, "list[%llu] is %s", (unsigned long long)k, x ? "wrong" : "missing"), 0;
    if (x) return snprintf(why, n, "list longer than %llu", (unsigned long long)m->nlist), 0;
    unsigned char *b = cairn_ptr_load(&r->blob);
    for (size_t k = 0; k < BLOB; k++)
        if (b[k] != m->blob) return snprintf(why, n, "blob[%zu] %#x, want %#x", k, b[k], m->blob), 0;
    return 1;
}

static int check_state(const char *img, int committed, int inflight, uint64_t base_objects,
                       int *matched)
{
    cairn_pool *p = cairn_pool_open(img, "crashstates");
    if (!p) { fprintf(stderr, "open failed: %s\n", cairn_errormsg()); return 1; }
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);                  /* waits for the mark */
    struct croot *r = CAIRN_ROOT(p, struct croot);
    if (!r) { fprintf(stderr, "no root: %s\n", cairn_errormsg()); return 1; }
    struct model m;
    char why[256], why2[256] = "";
    model_at(&m, committed);
    int ok = matches(r, &m, why, sizeof why);
    *matched = committed;
    if (!ok && inflight) {
        model_at(&m, inflight);
        ok = matches(r, &m, why2, sizeof why2);
        *matched = inflight;
    }
    uint64_t nlist = r->nlist;
    cairn_pool_close(p);
    if (!ok) {
        fprintf(stderr, "state is neither step %d (%s) nor %s%s\n", committed, why,
                inflight ? "the step in flight: " : "(no commit in flight)", why2);
        return 1;
    }
    unsigned long long objects;
    if (crashsim_check_file(img, &objects)) return 1;
    if (objects != base_objects + nlist) {
        fprintf(stderr, "heap holds %llu objects, want %llu (root, blob, %llu nodes)\n", objects,
                (unsigned long long)(base_objects + nlist), (unsigned long long)nlist);
        return 1;
    }
    return 0;
}

/* Invariant 3 under power loss: recover img with power loss simulated at
 * every fence of the recovery itself (roll-back, retire, the mark and sweep,
 * run inside the open here); each of those crash states must recover to
 * exactly what an uninterrupted recovery of img gives. */
static int check_nested(const char *img, int committed, int inflight, const char *extra)
{
    unsetenv("CRASHSIM_NESTED");                    /* the states below are checked plainly */
    char ref[700], nested[700], cmd[1500];
    snprintf(ref, sizeof ref, "%s.ref", img);
    snprintf(nested, sizeof nested, "%s.n", img);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", img, ref);
    if (system(cmd) != 0) return 2;
    int want;
    int rc = check_state(ref, committed, inflight, strtoull(extra, NULL, 10), &want);
    unlink(ref);
    if (rc) return rc;
    setenv("CAIRN_GC_SYNC", "1", 1);                /* the mark on this thread, simulated too */
    crashsim_begin_file(img, nested, extra);
    crashsim_committed = want;
    crashsim_inflight = 0;
    cairn_pool *p = cairn_pool_open(img, "crashstates");
    if (!p) { fprintf(stderr, "open failed: %s\n", cairn_errormsg()); return 1; }
    crashsim_end();
    cairn_pool_close(p);
    fprintf(stderr, "  nested: recovery of a crash state: %ld fences, %ld crash states, %ld failed\n",
            crashsim_fences, crashsim_states, crashsim_failures);
    if (crashsim_fences == 0) return 4;
    return crashsim_failures ? 3 : 0;
}

static void power_loss_at_every_fence(void)
{
    const char *path = t_path("cs");
    char img[600];
    snprintf(img, sizeof img, "%s.state", path);
    cairn_pool *p = cairn_pool_create(path, "crashstates", 8 << 20);
    REQUIRE(p);
    struct croot *r = CAIRN_ROOT(p, struct croot);
    REQUIRE(r);
    CAIRN_TX(p) {
        unsigned char *b = cairn_alloc(p, BLOB);
        REQUIRE(b);
        cairn_ptr_store(&r->blob, b);
    }
    REQUIRE(cairn_pool_close(p) == 0);
    unsigned long long objects;
    REQUIRE(crashsim_check_file(path, &objects) == 0);
    char base_objects[32];
    snprintf(base_objects, sizeof base_objects, "%llu", objects);

    p = cairn_pool_open(path, "crashstates");
    REQUIRE(p);
    r = CAIRN_ROOT(p, struct croot);
    crashsim_nested_every = 40;                     /* invariant 3: see check_nested */
    crashsim_begin(p, img, base_objects);
    for (int i = 1; i <= STEPS; i++) {
        int k = kind_of(i);
        crashsim_inflight = (k == K_ABORT || k == K_ATOMIC) ? 0 : i;   /* 0: nothing may commit */
        run_step(p, r, i);
        crashsim_committed = i;
        crashsim_inflight = 0;
    }
    crashsim_end();
    fprintf(stderr, "  %d steps, %ld fences, %ld crash states checked (at most %ld lines in play "
                    "at a fence), %ld failed\n", STEPS, crashsim_fences, crashsim_states,
            crashsim_max_lines, crashsim_failures);
    CHECK(crashsim_failures == 0);
    CHECK(crashsim_fences >= 3 * STEPS && crashsim_states > crashsim_fences);
    REQUIRE(cairn_pool_close(p) == 0);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "check")) {
        if (getenv("CRASHSIM_NESTED")) return check_nested(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
        int matched;
        return check_state(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10), &matched);
    }
    /* the crash states are built from the user-space flushes the runtime
     * issues, which it does on a non-DAX file only in forced mode: the test
     * sets it for itself and the checker children it starts */
    REQUIRE(setenv("CAIRN_PMEM_FORCE", "1", 1) == 0);
    RUN(power_loss_at_every_fence);
    DONE();
}
