/* rt_jobs.c -- the runtime's own jobs, one at a time, for `cairn crashcheck`
 * (test_runtime_jobs.py; the mutants of runtime/mutants.h use them too).
 *
 *     rt_jobs JOB run POOL      create POOL (or, for gc, open a crashed one)
 *                               and do JOB, under cairn crashcheck
 *     rt_jobs recover reopen POOL   open POOL, a crash image of a traced
 *                               recovery (recovering it again), then one
 *                               commit over what that recovery restored
 *     rt_jobs JOB check POOL    open POOL (recovery, the background mark and
 *                               sweep waited for), exit 1 if an invariant
 *                               of JOB or an acknowledgment is broken
 *
 * What a crash must never lose is what the program was told: crashcheck
 * passes CAIRN_CRASH_COMMITS (outermost commits returned before the crash
 * point), CAIRN_CRASH_GROWS and CAIRN_CRASH_CLOSES to the check. Each job
 * counts its commits in the root so that the check can compare. recover's
 * check also takes RT_RECOVER_BASE, the count the pool held before this
 * run's commits (default 1: what `prepare` committed; for `reopen`, the
 * count the crash image must hold after its recovery).
 *
 * Jobs: commit (8-byte, two-line and 4 KiB records, an object allocated in
 * the transaction), clobber (transactions with no undo record), abort
 * (aborted transactions, one allocating, between committed ones), nested
 * (levels committed, an inner abort), alloc (atomic allocation and free of
 * every size class and two large sizes, over memory that held other data),
 * txalloc (the same inside transactions), zero (allocations over memory
 * that held data), publish (objects linked with no transaction), root (a root created over freed
 * memory), grow (the pool grown, then a commit),
 * threads (two threads committing at once), gc (a crashed pool opened: the
 * background mark and sweep frees what the crash leaked while the program
 * commits), recover (a pool left by a crash with transactions in flight
 * on three lanes opened: recovery's roll-back runs under the trace, so its
 * fences are crash points, then commits over the rolled-back data), wbfree
 * (a pool closed cleanly with a run of eight objects opened: all freed, so
 * that the close returns the run to the free chunks). Every job ends with
 * a clean close.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cairn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCLASS 44                       /* runtime/alloc.h CAIRN_NCLASSES */
static const uint32_t class_size[NCLASS] = {
    16, 32, 48, 64, 80, 96, 112, 128,
    160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
    1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
    10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768, 40960, 49152, 57344, 65536,
};
#define NLARGE 2
static const uint32_t large_size[NLARGE] = { 100000, 1u << 20 };
#define NOBJ (NCLASS + NLARGE)
#define BIG 64                         /* commit: an object allocated in the tx, one line */
#define FRESH 512                      /* commit: a fresh object tracked as a range (> 256 B) */
#define FRESH_TAG 7
#define HUGE 4160                       /* bigrec: one range over 4096 B (tracked as a range) */
#define POOL_SIZE ((size_t)8 << 20)
#define ALLOC_POOL_SIZE ((size_t)16 << 20) /* alloc, txalloc: a 256 KiB run per class (44) and the large ones */
#define GROWN_SIZE ((size_t)16 << 20)
#define GROWN_OBJ ((size_t)9 << 20)     /* fits only in the grown pool */
#define DEAD 0xdeadull
#define GC_OBJS 8                       /* gc: objects the crashed run allocated, half linked */

struct root {
    uint64_t count;                     /* commits of this job that change a[] */
    uint64_t stamp;                     /* commit: == count, its own small record */
    uint64_t pad0[6];
    uint64_t a[16];                     /* == count, over two lines */
    uint64_t clob;                      /* clobber: its commits */
    uint64_t pad1[7];
    uint64_t t[3][8];                   /* threads: thread k's commits, 8 equal words; recover: == count */
    void *obj[NOBJ];                    /* alloc, txalloc: object k or NULL */
    uint64_t objs_done;                 /* alloc, txalloc: commits that linked or freed */
    void *big;                          /* commit: BIG bytes, every word == count */
    void *fresh;                        /* commit: FRESH bytes, word 0 == FRESH_TAG */
};

static uint64_t env_count(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoull(v, NULL, 10) : 0;
}

/* ---- run ---- */
static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rt_jobs: %s failed: %s\n", what, cairn_errormsg());
        exit(2);
    }
}

/* count = i and a[] = i in one transaction (plus big, when linked) */
static void commit_count(struct root *r, uint64_t i, int with_big)
{
    must(cairn_tx_begin(cairn_pool_of(r)) == 0, "cairn_tx_begin");
    cairn_tx_add(&r->count, 8);
    cairn_tx_add(r->a, sizeof r->a);
    r->count = i;
    for (int j = 0; j < 16; j++) r->a[j] = i;
    /* a third record that fits in the log's tail line (the first is built
     * in registers, the array's spans lines) */
    cairn_tx_add(&r->stamp, 8);
    r->stamp = i;
    if (with_big) {
        uint64_t *b = cairn_ptr_load(&r->big);
        cairn_tx_add(b, BIG);
        for (int j = 0; j < BIG / 8; j++) b[j] = i;
    }
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
}

static void job_commit(cairn_pool *pool, struct root *r)
{
    /* an object allocated and filled in the transaction that links it */
    must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
    uint64_t *b = cairn_alloc(pool, BIG);
    must(b != NULL, "cairn_alloc");
    for (int j = 0; j < BIG / 8; j++) b[j] = 1;
    cairn_tx_add(&r->big, 8);
    cairn_ptr_store(&r->big, b);
    uint64_t *f = cairn_alloc(pool, FRESH);
    must(f != NULL, "cairn_alloc");
    f[0] = FRESH_TAG;                                /* one line changed: one line in play */
    cairn_tx_add(&r->fresh, 8);
    cairn_ptr_store(&r->fresh, f);
    cairn_tx_add(&r->count, 8);
    cairn_tx_add(r->a, sizeof r->a);
    r->count = 1;
    for (int j = 0; j < 16; j++) r->a[j] = 1;
    cairn_tx_add(&r->stamp, 8);
    r->stamp = 1;
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
    for (uint64_t i = 2; i <= 3; i++) commit_count(r, i, 1);
}

/* one transaction logging a range longer than 4 KiB (its undo record over
 * many lines, its flush a range flush) */
static void job_bigrec(cairn_pool *pool, struct root *r)
{
    uint64_t *h = cairn_alloc(pool, HUGE);
    must(h != NULL, "cairn_alloc");
    must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
    cairn_tx_add(&r->big, 8);
    cairn_ptr_store(&r->big, h);
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
    must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
    cairn_tx_add(h, HUGE);
    for (int j = 0; j < HUGE / 8; j++) h[j] = 1;
    cairn_tx_add(&r->count, 8);
    r->count = 1;
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
}

/* memory that held other data reused: a small, a >= 1 KiB and a large
 * object linked by transactions, and a small one published atomically (a
 * pointer store and cairn_persist: nothing but the allocation's own fence
 * orders its zeroes before the link) */
#define NZERO 4
static const size_t zero_size[NZERO] = { 64, 2048, 100000, 64 };
static void dirty_and_free(cairn_pool *pool, size_t size);
static void job_zero(cairn_pool *pool, struct root *r)
{
    for (int k = 0; k < NZERO; k++) {
        dirty_and_free(pool, zero_size[k]);
        uint64_t *o = cairn_alloc(pool, zero_size[k]);
        must(o != NULL, "cairn_alloc");
        if (k == NZERO - 1) {
            cairn_ptr_store(&r->obj[k], o);
            cairn_persist(&r->obj[k], 8);
            break;
        }
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->obj[k], 8);
        cairn_ptr_store(&r->obj[k], o);
        cairn_tx_add(&r->objs_done, 8);
        r->objs_done++;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
}

static void job_clobber(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_clobber(&r->clob, 8);
        r->clob = i;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
}

static void job_abort(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 2; i++) {
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(r->a, sizeof r->a);
        for (int j = 0; j < 16; j++) r->a[j] = DEAD;
        void *o = cairn_alloc(pool, 256);  /* freed by the abort */
        must(o != NULL, "cairn_alloc");
        cairn_tx_add(&r->big, 8);
        cairn_ptr_store(&r->big, o);
        cairn_tx_abort();
        commit_count(r, i, 0);
    }
}

static void job_nested(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 2; i++) {
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->count, 8);
        r->count = i;
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin (level 2)");
        cairn_tx_add(r->a, 64);
        for (int j = 0; j < 8; j++) r->a[j] = i;
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin (level 3)");
        cairn_tx_add(r->a + 8, 64);
        for (int j = 8; j < 16; j++) r->a[j] = i;
        must(cairn_tx_commit() == 0, "cairn_tx_commit (level 3)");
        must(cairn_tx_commit() == 0, "cairn_tx_commit (level 2)");
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
        /* an inner abort ends the whole transaction: the outer commit says so */
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(r->a, sizeof r->a);
        for (int j = 0; j < 16; j++) r->a[j] = DEAD;
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin (level 2)");
        cairn_tx_abort();
        must(cairn_tx_commit() == -1, "an aborted transaction's outer commit refused");
    }
}

static size_t obj_size(int k) { return k < NCLASS ? class_size[k] : large_size[k - NCLASS]; }

/* memory of every size whose first and last lines held other (durable)
 * data, freed: the object allocated next reuses it, so its zeroes must reach
 * the media (only those two lines change: few lines in play) */
static void dirty_and_free(cairn_pool *pool, size_t size)
{
    unsigned char *o = cairn_alloc(pool, size);
    must(o != NULL, "cairn_alloc");
    size_t n = size < 64 ? size : 64;
    memset(o, 0xa5, n);
    memset(o + size - n, 0xa5, n);
    cairn_persist(o, n);
    cairn_persist(o + size - n, n);
    cairn_free(o);
}

/* object k: its first word k + 1, the rest zero */
static void job_alloc(cairn_pool *pool, struct root *r, int in_tx)
{
    for (int k = 0; k < NOBJ; k++) {
        dirty_and_free(pool, obj_size(k));
        if (!in_tx) {
            uint64_t *o = cairn_alloc(pool, obj_size(k));   /* atomic, then linked */
            must(o != NULL, "cairn_alloc");
            must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
            cairn_tx_add(o, 8);
            o[0] = (uint64_t)k + 1;
            cairn_tx_add(&r->obj[k], 8);
            cairn_ptr_store(&r->obj[k], o);
        } else {
            must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
            uint64_t *o = cairn_alloc(pool, obj_size(k));   /* undone on abort */
            must(o != NULL, "cairn_alloc");
            o[0] = (uint64_t)k + 1;
            cairn_tx_add(&r->obj[k], 8);
            cairn_ptr_store(&r->obj[k], o);
        }
        cairn_tx_add(&r->objs_done, 8);
        r->objs_done++;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
    /* every third object freed again: in a transaction (at its commit), or
     * unlinked first and then freed atomically */
    for (int k = 0; k < NOBJ; k += 3) {
        void *o = cairn_ptr_load(&r->obj[k]);
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->obj[k], 8);
        cairn_ptr_store(&r->obj[k], NULL);
        cairn_tx_add(&r->objs_done, 8);
        r->objs_done++;
        if (in_tx) cairn_free(o);
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
        if (!in_tx) cairn_free(o);
    }
}

/* objects published atomically (a pointer store and cairn_persist, no
 * transaction) from a new run of a class and from new large chunks: only
 * the allocator's own fence orders their table words before the link */
static void job_publish(cairn_pool *pool, struct root *r)
{
    static const size_t size[4] = { 176, 300000, 208, 400000 };
    for (int k = 0; k < 2; k++) {
        uint64_t *o = cairn_alloc(pool, size[k]);
        must(o != NULL, "cairn_alloc");
        cairn_ptr_store(&r->obj[k], o);
        cairn_persist(&r->obj[k], 8);
    }
    /* then linked inside transactions over clobbered (unlogged) words: no
     * roll-back undoes a link that reached the media before the commit, and
     * no log fence comes between the allocation and the link */
    for (int k = 2; k < 4; k++) {
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_clobber(&r->obj[k], 8);
        uint64_t *o = cairn_alloc(pool, size[k]);
        must(o != NULL, "cairn_alloc");
        cairn_ptr_store(&r->obj[k], o);
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
}

static void job_grow(cairn_pool *pool, struct root *r)
{
    must(cairn_pool_grow(pool, GROWN_SIZE) == 0, "cairn_pool_grow");
    commit_count(r, 1, 0);
}

struct thr { cairn_pool *pool; struct root *r; int k; };
static void *thread_main(void *arg)
{
    struct thr *t = arg;
    for (uint64_t i = 1; i <= 3; i++) {
        must(cairn_tx_begin(t->pool) == 0, "cairn_tx_begin");
        cairn_tx_add(t->r->t[t->k], 64);
        for (int j = 0; j < 8; j++) t->r->t[t->k][j] = i;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
    return NULL;
}

static void job_threads(cairn_pool *pool, struct root *r)
{
    pthread_t th[2];
    struct thr a[2] = { { pool, r, 0 }, { pool, r, 1 } };
    for (int k = 0; k < 2; k++) must(pthread_create(&th[k], NULL, thread_main, &a[k]) == 0, "pthread_create");
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
}

/* a prepare step's new pool and its root */
static struct root *prepare_create(const char *path, cairn_pool **pool)
{
    *pool = cairn_pool_create(path, "rt_jobs", POOL_SIZE);
    must(*pool != NULL, "cairn_pool_create");
    struct root *r = cairn_root(*pool, sizeof *r, CAIRN_TYPE_ID(struct root));
    must(r != NULL, "cairn_root");
    return r;
}

/* gc: a pool left by a crash (a process that allocated objects, linked
 * some and exited without closing), made by this program run untraced */
static int gc_prepare(const char *path)
{
    cairn_pool *pool;
    struct root *r = prepare_create(path, &pool);
    for (int k = 0; k < GC_OBJS; k++) {
        uint64_t *o = cairn_alloc(pool, obj_size(k));
        must(o != NULL, "cairn_alloc");
        o[0] = (uint64_t)k + 1;
        cairn_persist(o, 8);
        if (k % 2) continue;                      /* leaked: the mark frees it */
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->obj[k], 8);
        cairn_ptr_store(&r->obj[k], o);
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
    uint64_t *lost = cairn_alloc(pool, large_size[0]);   /* leaked: its chunks freed */
    must(lost != NULL, "cairn_alloc");
    _exit(0);                                     /* no close: the pool is not clean */
}

/* recover: a pool left by a crash with a transaction in flight on each of
 * NFLIGHT lanes (1 to 3; the main thread's commits took lane 0): count,
 * a[] and every t[k] committed as 1, then each thread logs its t[k] (and
 * thread 0 also a[]), writes DEAD over it and waits while the process
 * exits without closing */
#define NFLIGHT 3
static pthread_barrier_t in_flight;
static void *flight_main(void *arg)
{
    struct thr *t = arg;
    must(cairn_tx_begin(t->pool) == 0, "cairn_tx_begin");
    cairn_tx_add(t->r->t[t->k], 64);
    for (int j = 0; j < 8; j++) t->r->t[t->k][j] = DEAD;
    if (t->k == 0) {
        cairn_tx_add(t->r->a, sizeof t->r->a);
        for (int j = 0; j < 16; j++) t->r->a[j] = DEAD;
    }
    pthread_barrier_wait(&in_flight);
    for (;;) pause();
    return NULL;
}

static int recover_prepare(const char *path)
{
    cairn_pool *pool;
    struct root *r = prepare_create(path, &pool);
    must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
    cairn_tx_add(&r->count, 8);
    cairn_tx_add(r->a, sizeof r->a);
    cairn_tx_add(r->t, sizeof r->t);
    r->count = 1;
    for (int j = 0; j < 16; j++) r->a[j] = 1;
    for (int k = 0; k < NFLIGHT; k++)
        for (int j = 0; j < 8; j++) r->t[k][j] = 1;
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
    pthread_t th[NFLIGHT];
    struct thr a[NFLIGHT];
    pthread_barrier_init(&in_flight, NULL, NFLIGHT + 1);
    for (int k = 0; k < NFLIGHT; k++) {
        a[k] = (struct thr){ pool, r, k };
        must(pthread_create(&th[k], NULL, flight_main, &a[k]) == 0, "pthread_create");
    }
    pthread_barrier_wait(&in_flight);
    _exit(0);                                     /* transactions in flight, no close */
}

/* wbfree: a pool closed cleanly with a run of 176-byte objects, all linked
 * (the close writes the run's bitmap back); the traced run frees them all,
 * so that close returns the empty run to the free chunks */
#define WB_OBJS 8
static int wbfree_prepare(const char *path)
{
    cairn_pool *pool;
    struct root *r = prepare_create(path, &pool);
    for (int k = 0; k < WB_OBJS; k++) {
        void *o = cairn_alloc(pool, 176);
        must(o != NULL, "cairn_alloc");
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->obj[k], 8);
        cairn_ptr_store(&r->obj[k], o);
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
    must(cairn_pool_close(pool) == 0, "cairn_pool_close");
    return 0;
}

static void job_wbfree(cairn_pool *pool, struct root *r)
{
    must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
    for (int k = 0; k < WB_OBJS; k++) {
        void *o = cairn_ptr_load(&r->obj[k]);
        cairn_tx_add(&r->obj[k], 8);
        cairn_ptr_store(&r->obj[k], NULL);
        cairn_free(o);
    }
    must(cairn_tx_commit() == 0, "cairn_tx_commit");
}

/* the pool of job (gc, recover: crashed; wbfree: closed), made by `rt_jobs JOB prepare`
 * untraced, opened: its recovery is the traced run's first work */
static cairn_pool *crashed_open(const char *self, const char *job, const char *path)
{
    unlink(path);
    pid_t c = fork();
    if (c == 0) {
        unsetenv("CAIRN_TRACE");
        unsetenv("CAIRN_TRACE_IMAGES");
        execl(self, self, job, "prepare", path, (char *)NULL);
        _exit(127);
    }
    int st;
    must(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
         "making the crashed pool (rt_jobs JOB prepare)");
    unsetenv("CAIRN_GC_SYNC");                    /* the background mark and sweep */
    return cairn_pool_open(path, "rt_jobs");
}

static void job_gc(cairn_pool *pool, struct root *r)
{
    /* commits and allocations while the sweep runs */
    for (uint64_t i = 1; i <= 2; i++) {
        uint64_t *o = cairn_alloc(pool, 64);
        must(o != NULL, "cairn_alloc");
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(o, 8);
        o[0] = 100 + i;
        cairn_tx_add(&r->obj[30 + i], 8);
        cairn_ptr_store(&r->obj[30 + i], o);
        cairn_tx_add(&r->count, 8);
        cairn_tx_add(r->a, sizeof r->a);
        r->count = i;
        for (int j = 0; j < 16; j++) r->a[j] = i;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
    struct cairn_recovery rec;
    cairn_pool_recovery(pool, &rec);              /* waits for the sweep */
}

/* recover: after the roll-back, ntx transactions over the data it restored
 * (lane 0: the rolled-back lanes stay as recovery retired them), each
 * counting on from the recovered count */
static void job_recover(cairn_pool *pool, struct root *r, int ntx)
{
    for (int n = 0; n < ntx; n++) {
        must(cairn_tx_begin(pool) == 0, "cairn_tx_begin");
        cairn_tx_add(&r->count, 8);
        cairn_tx_add(r->a, sizeof r->a);
        cairn_tx_add(r->t, sizeof r->t);
        uint64_t i = r->count + 1;
        r->count = i;
        for (int j = 0; j < 16; j++) r->a[j] = i;
        for (int k = 0; k < NFLIGHT; k++)
            for (int j = 0; j < 8; j++) r->t[k][j] = i;
        must(cairn_tx_commit() == 0, "cairn_tx_commit");
    }
}

/* ---- check ---- */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    return 1;
}

static int check_count(const struct root *r, uint64_t commits)
{
    for (int j = 0; j < 16; j++)
        if (r->a[j] != r->count)
            return fail("a[] torn: count %llu but a[%d] differs", (unsigned long long)r->count, j);
    if (r->count < commits)
        return fail("count %llu but %llu commits were acknowledged", (unsigned long long)r->count, (unsigned long long)commits);
    return 0;
}

static int check_objs(const struct root *r, uint64_t commits, int all)
{
    if (r->objs_done < commits)
        return fail("%llu object commits but %llu were acknowledged", (unsigned long long)r->objs_done, (unsigned long long)commits);
    for (int k = 0; k < NOBJ; k++) {
        const uint64_t *o = cairn_ptr_load(&r->obj[k]);
        if (!o) continue;
        if (o[0] != (uint64_t)k + 1) return fail("object %d holds %llu first", k, (unsigned long long)o[0]);
        if (cairn_usable_size(o) < obj_size(k))
            return fail("object %d is %zu bytes", k, cairn_usable_size(o));
        size_t n = all ? obj_size(k) / 8 : 1;
        for (size_t j = 1; j < n; j++)
            if (o[j]) return fail("object %d word %zu not zero", k, j);
    }
    return 0;
}

static int check(const char *job, cairn_pool *pool, struct root *r)
{
    uint64_t commits = env_count("CAIRN_CRASH_COMMITS");
    struct cairn_recovery rec;
    cairn_pool_recovery(pool, &rec);
    if (env_count("CAIRN_CRASH_CLOSES") && rec.recovered)
        return fail("the pool's close returned but it opened as not closed cleanly");
    if (!strcmp(job, "commit")) {
        if (check_count(r, commits)) return 1;
        if (r->stamp != r->count)
            return fail("count %llu but stamp %llu", (unsigned long long)r->count, (unsigned long long)r->stamp);
        const uint64_t *b = cairn_ptr_load(&r->big);
        if (r->count && !b) return fail("count %llu but big not linked", (unsigned long long)r->count);
        const uint64_t *f = cairn_ptr_load(&r->fresh);
        if (f && f[0] != FRESH_TAG)
            return fail("the object allocated in a committed transaction holds %llu",
                        (unsigned long long)f[0]);
        for (int j = 0; b && j < BIG / 8; j++)
            if (b[j] != r->count) return fail("count %llu but big holds %llu", (unsigned long long)r->count, (unsigned long long)b[j]);
        return 0;
    }
    if (!strcmp(job, "clobber"))
        return r->clob < commits ? fail("clob %llu but %llu commits acknowledged", (unsigned long long)r->clob, (unsigned long long)commits) : 0;
    if (!strcmp(job, "abort") || !strcmp(job, "nested")) {
        if (cairn_ptr_load(&r->big)) return fail("an aborted allocation is linked");
        return check_count(r, commits);
    }
    if (!strcmp(job, "alloc") || !strcmp(job, "txalloc")) return check_objs(r, commits, 1);
    if (!strcmp(job, "bigrec")) {
        const uint64_t *h = cairn_ptr_load(&r->big);
        if (r->count < commits - (commits > 0))
            return fail("count %llu but the big transaction was acknowledged", (unsigned long long)r->count);
        for (int j = 0; h && j < HUGE / 8; j++)
            if (h[j] != r->count)
                return fail("count %llu but word %d of the big range holds %llu",
                            (unsigned long long)r->count, j, (unsigned long long)h[j]);
        return 0;
    }
    if (!strcmp(job, "zero")) {
        if (r->objs_done < commits)
            return fail("%llu objects linked but %llu commits acknowledged",
                        (unsigned long long)r->objs_done, (unsigned long long)commits);
        for (int k = 0; k < NZERO; k++) {
            const uint64_t *o = cairn_ptr_load(&r->obj[k]);
            for (size_t j = 0; o && j < zero_size[k] / 8; j++)
                if (o[j]) return fail("object of %zu B reused: word %zu holds %#llx, not zero",
                                      zero_size[k], j, (unsigned long long)o[j]);
        }
        return 0;
    }
    if (!strcmp(job, "root")) {
        const uint64_t *w = (const uint64_t *)r;
        for (size_t j = 0; j < sizeof *r / 8; j++)
            if (w[j]) return fail("the new root's word %zu holds %#llx", j, (unsigned long long)w[j]);
        return 0;
    }
    if (!strcmp(job, "grow")) {
        if (check_count(r, commits)) return 1;
        if (env_count("CAIRN_CRASH_GROWS")) {
            /* the grow was acknowledged: the grown size holds */
            void *o = cairn_alloc(pool, GROWN_OBJ);
            if (!o) return fail("the grow returned but the pool has no room for %zu bytes", GROWN_OBJ);
        }
        return 0;
    }
    if (!strcmp(job, "threads")) {
        for (int k = 0; k < 2; k++)
            for (int j = 1; j < 8; j++)
                if (r->t[k][j] != r->t[k][0]) return fail("thread %d's line torn at word %d", k, j);
        if (r->t[0][0] + r->t[1][0] < commits)
            return fail("%llu commits but %llu acknowledged", (unsigned long long)(r->t[0][0] + r->t[1][0]), (unsigned long long)commits);
        return 0;
    }
    if (!strcmp(job, "recover")) {
        /* the crashed transactions rolled back (never DEAD), each commit
         * after the roll-back kept */
        const char *base = getenv("RT_RECOVER_BASE");
        if (check_count(r, commits + (base ? env_count("RT_RECOVER_BASE") : 1))) return 1;
        for (int k = 0; k < NFLIGHT; k++)
            for (int j = 0; j < 8; j++)
                if (r->t[k][j] != r->count)
                    return fail("count %llu but t[%d][%d] holds %#llx (lane %d's roll-back lost or replayed)",
                                (unsigned long long)r->count, k, j, (unsigned long long)r->t[k][j], k + 1);
        return 0;
    }
    if (!strcmp(job, "gc")) {
        if (check_count(r, commits)) return 1;
        for (int k = 0; k < GC_OBJS; k += 2) {
            const uint64_t *o = cairn_ptr_load(&r->obj[k]);
            if (!o || o[0] != (uint64_t)k + 1) return fail("linked object %d lost (%llu)", k, (unsigned long long)(o ? o[0] : 0));
        }
        for (uint64_t i = 1; i <= r->count; i++) {
            const uint64_t *o = cairn_ptr_load(&r->obj[30 + i]);
            if (!o || o[0] != 100 + i) return fail("object of commit %llu lost (%llu)", (unsigned long long)i, (unsigned long long)(o ? o[0] : 0));
        }
        return 0;
    }
    fprintf(stderr, "rt_jobs: no job %s\n", job);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "run") && strcmp(argv[2], "check") && strcmp(argv[2], "prepare") &&
                      strcmp(argv[2], "reopen"))) {
        fprintf(stderr, "usage: %s commit|bigrec|clobber|abort|nested|alloc|txalloc|zero|publish|root|grow|threads|gc|recover|wbfree "
                "run|check POOL  (recover also: prepare|reopen POOL)\n", argv[0]);
        return 2;
    }
    const char *job = argv[1], *path = argv[3];
    /* reopen: an existing pool (a crash image of an earlier recovery)
     * opened, so recovered again under the trace, then the job */
    int reopen = !strcmp(job, "recover") && !strcmp(argv[2], "reopen");
    int run = !strcmp(argv[2], "run") || reopen;
    if (!strcmp(argv[2], "prepare")) {
        if (!strcmp(job, "recover")) return recover_prepare(path);
        return !strcmp(job, "wbfree") ? wbfree_prepare(path) : gc_prepare(path);
    }
    cairn_pool *pool;
    if (reopen) pool = cairn_pool_open(path, "rt_jobs");
    else if (run && (!strcmp(job, "gc") || !strcmp(job, "recover") || !strcmp(job, "wbfree")))
        pool = crashed_open(argv[0], job, path);
    else if (run) pool = cairn_pool_create(path, "rt_jobs", !strcmp(job, "alloc") || !strcmp(job, "txalloc")
                                                                ? ALLOC_POOL_SIZE : POOL_SIZE);
    else pool = cairn_pool_open(path, "rt_jobs");
    if (!pool) {
        fprintf(stderr, "%s: %s\n", path, cairn_errormsg());
        return 2;
    }
    if (run && !strcmp(job, "root")) dirty_and_free(pool, sizeof(struct root));
    struct root *r = cairn_root(pool, sizeof *r, CAIRN_TYPE_ID(struct root));
    if (!r) {
        fprintf(stderr, "%s: no root: %s\n", path, cairn_errormsg());
        return 2;
    }
    int rc = 0;
    if (!run) rc = check(job, pool, r);
    else if (!strcmp(job, "commit")) job_commit(pool, r);
    else if (!strcmp(job, "clobber")) job_clobber(pool, r);
    else if (!strcmp(job, "bigrec")) job_bigrec(pool, r);
    else if (!strcmp(job, "zero")) job_zero(pool, r);
    else if (!strcmp(job, "publish")) job_publish(pool, r);
    else if (!strcmp(job, "abort")) job_abort(pool, r);
    else if (!strcmp(job, "nested")) job_nested(pool, r);
    else if (!strcmp(job, "alloc")) job_alloc(pool, r, 0);
    else if (!strcmp(job, "txalloc")) job_alloc(pool, r, 1);
    else if (!strcmp(job, "grow")) job_grow(pool, r);
    else if (!strcmp(job, "threads")) job_threads(pool, r);
    else if (!strcmp(job, "gc")) job_gc(pool, r);
    else if (!strcmp(job, "recover")) job_recover(pool, r, reopen ? 1 : 2);
    else if (!strcmp(job, "wbfree")) job_wbfree(pool, r);
    else if (strcmp(job, "root")) {
        fprintf(stderr, "rt_jobs: no job %s (commit, bigrec, clobber, abort, nested, alloc, txalloc, zero, publish, root, "
                "grow, threads, gc, recover, wbfree)\n", job);
        rc = 2;
    }
    if (cairn_pool_close(pool)) {
        fprintf(stderr, "%s: close: %s\n", path, cairn_errormsg());
        return 2;
    }
    return rc;
}
