/* test_threads.c -- threads running independent transactions on one pool,
 * allocating and freeing at once (run under TSan in CI). */
#include "harness.h"
#include "internal.h"
#include "poolcheck.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 3000
struct root { uint64_t counters[THREADS]; uint64_t lists[THREADS]; };
struct node { uint64_t next; uint64_t v; };
static cairn_pool *P;
static struct root *R;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CAIRN_TX(P) {
            cairn_tx_add(&R->counters[t], 8);
            R->counters[t]++;
            struct node *n = cairn_alloc(P, sizeof *n + (size_t)(i % 5) * 16);
            n->v = (uint64_t)i;
            cairn_ptr_store(&n->next, cairn_ptr_load(&R->lists[t]));
            cairn_ptr_store(&R->lists[t], n);
            if (i % 3 == 2) {                       /* pop two, free them */
                for (int k = 0; k < 2; k++) {
                    struct node *h = cairn_ptr_load(&R->lists[t]);
                    cairn_ptr_store(&R->lists[t], cairn_ptr_load(&h->next));
                    cairn_free(h);
                }
            }
        }
    }
    return NULL;
}

static void parallel_transactions(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        CHECK(R->counters[t] == ROUNDS);
        int n = 0;
        for (struct node *x = cairn_ptr_load(&R->lists[t]); x; x = cairn_ptr_load(&x->next)) n++;
        CHECK(n == ROUNDS / 3);
    }
}

/* cairn_pool_grow while another thread allocates, measures and frees: the
 * heap's chunk maps used to be realloc'ed under the grow, and the other
 * thread read freed memory (ASan: heap-use-after-free in cairn_usable_size;
 * plain builds: usable size 0 right after an allocation, bad frees and
 * leaked objects). The grows come from this thread, the allocations from
 * the worker, so the grow can land at any point of the worker's loop. */
static _Atomic int grow_done;
static long grow_bad;
static void *grow_worker(void *arg)
{
    cairn_pool *p = arg;
    for (long i = 0; i < 400000 && !(grow_done && i > 20000); i++) {
        char *o = cairn_alloc(p, 4000);
        if (!o) { grow_bad++; continue; }
        if (cairn_usable_size(o) < 4000) grow_bad++;
        cairn_free(o);
    }
    return NULL;
}

static void grow_while_allocating(void)
{
    const char *path = t_path("growthreads");
    cairn_pool *p = cairn_pool_create(path, "gt", 16 << 20);
    REQUIRE(p);
    pthread_t th;
    pthread_create(&th, NULL, grow_worker, p);
    for (int i = 1; i <= 40; i++) {
        CHECK(cairn_pool_grow(p, ((size_t)16 + 8 * (size_t)i) << 20) == 0);
        usleep(200);
    }
    grow_done = 1;
    pthread_join(th, NULL);
    CHECK(grow_bad == 0);
    CHECK(cairn_pool_close(p) == 0);
    /* every object the worker allocated it freed: nothing left allocated */
    struct t_check chk;
    REQUIRE(t_check_pool(path, &chk) == 0);
    CHECK(chk.errors == 0 && chk.reachable == 0 && chk.leaked == 0);
    unlink(path);
}

/* More transactions at once than lanes: a thread that finds all 64 lanes
 * busy waits, and a commit on any lane must hand that lane over (the
 * releaser's store is a release store; the waiter's membarrier makes the
 * hand-off whole, runtime/tx.c). The holders keep their lanes until told,
 * so the waiter's wait is certain; then the waiter must get a lane after
 * one holder commits, within seconds (a lost wake-up fails the check
 * instead of hanging). Then 96 threads race through short transactions. */
static _Atomic int holders_in, holders_go, waiter_in;
static struct root *LR;

static void *lane_holder(void *arg)
{
    int t = (int)(intptr_t)arg;
    REQUIRE(cairn_tx_begin(P) == 0);
    cairn_tx_add(&LR->lists[t % THREADS], 8);
    atomic_fetch_add(&holders_in, 1);
    while (atomic_load(&holders_go) <= t) sched_yield();
    REQUIRE(cairn_tx_commit() == 0);
    return NULL;
}

static void *lane_waiter(void *arg)
{
    (void)arg;
    REQUIRE(cairn_tx_begin(P) == 0);
    atomic_store(&waiter_in, 1);
    REQUIRE(cairn_tx_commit() == 0);
    return NULL;
}

static void *lane_racer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < 200; i++) {
        REQUIRE(cairn_tx_begin(P) == 0);
        if (t < THREADS) { cairn_tx_add(&LR->counters[t], 8); LR->counters[t]++; }
        if (i % 8 == 0) sched_yield();
        REQUIRE(cairn_tx_commit() == 0);
    }
    return NULL;
}

static int wait_flag(_Atomic int *f, int want, double seconds)
{
    for (int i = 0; i < (int)(seconds * 1000); i++) {
        if (atomic_load(f) >= want) return 1;
        usleep(1000);
    }
    return atomic_load(f) >= want;
}

static void lanes_exhausted(void)
{
    LR = R;
    pthread_t h[CAIRN_NLANES], w;
    for (int t = 0; t < CAIRN_NLANES; t++)
        REQUIRE(pthread_create(&h[t], NULL, lane_holder, (void *)(intptr_t)t) == 0);
    REQUIRE(wait_flag(&holders_in, CAIRN_NLANES, 60));
    REQUIRE(pthread_create(&w, NULL, lane_waiter, NULL) == 0);
    usleep(50000);
    CHECK(atomic_load(&waiter_in) == 0);            /* every lane was held: it waits */
    atomic_store(&holders_go, 1);                   /* holder 0 commits, freeing a lane */
    REQUIRE(wait_flag(&waiter_in, 1, 10));          /* and the waiter gets it */
    atomic_store(&holders_go, CAIRN_NLANES);
    for (int t = 0; t < CAIRN_NLANES; t++) pthread_join(h[t], NULL);
    pthread_join(w, NULL);

    uint64_t before[THREADS];
    memcpy(before, R->counters, sizeof before);
    enum { RACERS = CAIRN_NLANES + 32 };
    pthread_t r[RACERS];
    for (int t = 0; t < RACERS; t++)
        REQUIRE(pthread_create(&r[t], NULL, lane_racer, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < RACERS; t++) pthread_join(r[t], NULL);
    for (int t = 0; t < THREADS; t++) CHECK(R->counters[t] == before[t] + 200);
}

int main(void)
{
    RUN(grow_while_allocating);
    const char *path = t_path("threads");
    P = cairn_pool_create(path, "th", 64 << 20);
    REQUIRE(P);
    R = CAIRN_ROOT(P, struct root);
    REQUIRE(R);
    RUN(parallel_transactions);
    RUN(lanes_exhausted);
    cairn_pool_close(P);
    /* the allocator holds the root and the list nodes, no object freed by
     * one thread is lost or held twice */
    struct t_check chk;
    REQUIRE(t_check_pool(path, &chk) == 0);
    CHECK(chk.errors == 0 && chk.reachable == 1 + THREADS * (ROUNDS / 3) && chk.leaked == 0);
    /* reopen with a full mark: every list node is reachable and intact */
    setenv("CAIRN_GC", "always", 1);
    P = cairn_pool_open(path, "th");
    REQUIRE(P);
    struct cairn_recovery rec;
    cairn_pool_recovery(P, &rec);
    CHECK(rec.objects_reachable == 1 + THREADS * (ROUNDS / 3));
    cairn_pool_close(P);
    unlink(path);
    DONE();
}
