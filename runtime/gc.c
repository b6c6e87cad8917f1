/*
 * gc.c -- rebuilding the heap after a crash by marking from the root.
 *
 * Why marking and not reference counts (Breeze, NV-Heaps, NVL-C count
 * references): counts cost a logged update on every pointer store, and
 * cycles need weak pointers the programmer must place. A mark from the root
 * at recovery costs nothing while the program runs, collects cycles, and is
 * the same pass that rebuilds the allocator's bitmaps, which are never kept
 * exact on media (alloc.c). It runs after a crash or on demand
 * (CAIRN_GC=always, `cairn pool gc`), not on a clean open.
 *
 * One engine, two drivers. collect() takes a snapshot of the heap (every
 * chunk that exists is "old", every old run full), marks from the root
 * and sweeps what the mark did not reach. By default a thread of its own
 * runs it while the program runs (cairn__gc_start); CAIRN_GC_SYNC=1 and
 * `cairn pool check` run it inside the call (cairn__gc_rebuild). The only
 * difference: the synchronous sweep runs before the program can hold a
 * pointer into the heap, so it also returns emptied runs to the chunk pool
 * (the background one leaves them to the allocator as free runs).
 *
 * Finding pointers: every pointer kept in a pool is in relative form (bit
 * 63, this pool's 23-bit id, a 40-bit offset): cairn-cc stores them so and
 * plain C uses cairn_ptr_store. The mark scans each reached object's 8-byte
 * words for values of that form that land in an object, so it needs no
 * type information. It is conservative: an integer that happens to look
 * like a pointer into this pool keeps its target alive (never the reverse).
 *
 * Invariant (4): after recovery an object is allocated iff it is reachable
 * from the root: objects of transactions that did not commit are free (the
 * roll-back removed every link to them), objects freed by committed
 * transactions are free (the program removed the links), and what the
 * root reaches is kept.
 *
 * The background driver. Opening after a crash must not wait for a scan
 * of the whole heap (2 s for 4 GiB here; reading 4 GiB alone takes 1 s on
 * this machine). So the open rolls back the lanes, loads the chunk table,
 * takes the snapshot and returns; the thread then marks and sweeps the old
 * runs and large objects while the program runs. New objects come from
 * new runs, free chunks, and the free slots of runs whose bitmap a clean
 * close left exact and no allocation has touched since (CAIRN_RUN_EXACT:
 * a full pool's first allocation need not wait for the mark), and are
 * never swept.
 *
 * The program changes the graph while the thread marks, so the mark is
 * snapshot-at-the-beginning (Yuasa): every object reachable at the open is
 * marked. The deletion barrier is the undo log itself: before any byte of
 * PM is overwritten in a transaction, add_range (cairn_tx_add, cairn-cc's
 * log calls, cairn_ptr_store) and cairn_tx_clobber pass the old contents to
 * cairn__gc_barrier, which queues every relative pointer in them. Frees of
 * old objects wait in a list until the sweep, so an old object's memory is
 * never reused (and its pointers never lost) while the thread may still
 * scan it. Old chunks do not change kind while marking (old runs stay full,
 * old large objects are not freed), so the thread reads them without the
 * heap lock. The mark stops when its stack and the queue are empty under
 * the gc lock, and barriers scan and queue under that lock, so no pointer
 * read by a barrier can be lost between the two.
 *
 * Stores to PM outside a transaction (which cairn-cc reports) bypass the
 * barrier; so do relative pointers written by code that neither logs nor
 * uses cairn_ptr_store. Either is unsafe with or without this mark.
 *
 * Nothing on media changes until the sweep, and the sweep changes only what
 * is unreachable, so a crash while marking recovers the same way. If the
 * mark fails (out of memory), nothing is freed and the pool stays dirty, so
 * the next open marks again. cairn_pool_recovery(), cairn_pool_close() and
 * cairn_pool_grow() wait for the thread.
 */
#include "persist.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

struct mark_stack { char **v; size_t n, cap; };

static int push(struct mark_stack *s, char *obj)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = obj;
    return 0;
}

/* A relative pointer into the pool whose tag (bit 63 and id) is tag. */
static inline bool rel_of_pool(uint64_t w, uint64_t tag)
{
    const uint64_t tag_mask = CAIRN_REL_BIT | (CAIRN_ID_MASK << CAIRN_ID_SHIFT);
    return ((w ^ tag) & tag_mask) == 0;
}

static uint64_t pool_tag(cairn_pool *pool)
{
    return CAIRN_REL_BIT | ((uint64_t)pool->id << CAIRN_ID_SHIFT);
}

/* Call visit(ctx, offset, word address) for every 8-byte word of
 * [w, end) holding a relative pointer of this pool (tag). The scan is the
 * cost of a recovery: test 8 words per branch. Words are read as volatile
 * aligned 8-byte loads (single instructions, never torn): the
 * background mark reads objects the program may be writing with plain
 * stores, a race it is built for (either value is safe: the barrier queued
 * the old one before the store), so ThreadSanitizer is told not to watch. */
__attribute__((no_sanitize("thread")))
static inline int scan_words(const uint64_t *w, const uint64_t *end, uint64_t tag,
                             int (*visit)(void *ctx, uint64_t off, const uint64_t *from),
                             void *ctx)
{
    for (; w + 8 <= end; w += 8) {
        uint64_t v[8], hit = 0;
        for (int k = 0; k < 8; k++) {
            v[k] = ((const volatile uint64_t *)w)[k];
            hit |= (uint64_t)rel_of_pool(v[k], tag) << k;
        }
        while (hit) {
            int k = __builtin_ctzll(hit);
            hit &= hit - 1;
            if (visit(ctx, v[k] & CAIRN_OFF_MASK, w + k)) return -1;
        }
    }
    for (; w < end; w++) {
        uint64_t v = *(const volatile uint64_t *)w;
        if (rel_of_pool(v, tag) && visit(ctx, v & CAIRN_OFF_MASK, w)) return -1;
    }
    return 0;
}

/* ---- the snapshot ---- */

/* Every chunk that exists now is old; every old run counts as full (no
 * slot of it is handed out until the sweep), so nothing the mark may
 * still scan is reused. Except, with exact (the background driver), a run
 * whose table word says its bitmap on media is exact (CAIRN_RUN_EXACT,
 * alloc.c): the slots that bitmap calls free were free at the crash, so
 * they are handed out at once (the first allocation after a crash in a
 * full pool no longer waits for the mark), and the sweep leaves them
 * alone (gcfree): what is allocated in them now is new. */
static int snapshot_take(cairn_pool *pool, bool exact)
{
    pool->gc.nchunks = pool->heap.nchunks;
    pool->gc.old = calloc(pool->heap.nchunks ? pool->heap.nchunks : 1, 1);
    if (!pool->gc.old) goto oom;
    uint64_t used = 0;
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        switch (pool->heap.ck_kind[g]) {
        case CK_RUN: {
            struct run *r = pool->heap.ck_run[g];
            uint32_t words = (r->nslots + 63) / 64;
            r->gcmark = calloc(words, 8);
            if (!r->gcmark) goto oom;
            for (uint32_t i = 0; i < words; i++) {
                uint32_t valid = r->nslots - i * 64 < 64 ? r->nslots - i * 64 : 64;
                atomic_store(&r->bits[i], valid == 64 ? ~(uint64_t)0 : (((uint64_t)1 << valid) - 1));
            }
            atomic_store(&r->nfree, 0);            /* full: nothing is taken from it */
            pool->gc.old[g] = 1;
            if (exact && atomic_load(&r->pm_exact)) {
                r->gcfree = calloc(words, 8);
                if (!r->gcfree) goto oom;
                int32_t set = 0;
                for (uint32_t i = 0; i < words; i++) {
                    uint32_t valid = r->nslots - i * 64 < 64 ? r->nslots - i * 64 : 64;
                    uint64_t vm = valid == 64 ? ~(uint64_t)0 : (((uint64_t)1 << valid) - 1);
                    uint64_t b = r->pm_bitmap[i] & vm;
                    atomic_store(&r->bits[i], b);
                    r->gcfree[i] = ~b & vm;
                    set += __builtin_popcountll(b);
                }
                atomic_store(&r->nfree, (int32_t)r->nslots - set);
                used += (uint64_t)set * r->slot_size;
                if (set < (int32_t)r->nslots) cairn__run_relist(pool, r);
                break;
            }
            used += (uint64_t)r->nslots * r->slot_size;
            break;
        }
        case CK_LARGE: {
            uint64_t n = pool->heap.ck_arg[g];
            for (uint64_t k = 0; k < n; k++) pool->gc.old[g + k] = 1;
            used += n * CAIRN_CHUNK - CAIRN_LARGE_HDR;
            g += n - 1;
            break;
        }
        default:
            break;
        }
    }
    atomic_store(&pool->heap.used_bytes, used);
    pool->heap.free_hint = 0;
    pool->gc.root = pool->state.root_off;
    return 0;
oom:
    for (uint64_t g = 0; g < pool->heap.nchunks; g++)
        if (pool->heap.ck_kind[g] == CK_RUN && pool->heap.ck_run[g]) {
            free(pool->heap.ck_run[g]->gcmark);
            pool->heap.ck_run[g]->gcmark = NULL;
            free(pool->heap.ck_run[g]->gcfree);
            pool->heap.ck_run[g]->gcfree = NULL;
        }
    free(pool->gc.old);
    pool->gc.old = NULL;
    cairn__err(ENOMEM, "%s: out of memory preparing the heap after a crash; free memory "
               "and open the pool again", pool->path);
    return -1;
}

static void snapshot_drop(cairn_pool *pool)
{
    /* under the heap lock: on the background thread, program threads turn
     * free chunks into runs (ck_kind, ck_run) while this walks the table
     * (a race TSan found through the pool fuzzer's replay) */
    pthread_mutex_lock(&pool->heap.lock);
    for (uint64_t g = 0; g < pool->gc.nchunks; g++) {
        if (pool->gc.old[g] && pool->heap.ck_kind[g] == CK_RUN) {
            free(pool->heap.ck_run[g]->gcmark);
            pool->heap.ck_run[g]->gcmark = NULL;
            free(pool->heap.ck_run[g]->gcfree);
            pool->heap.ck_run[g]->gcfree = NULL;
        }
        pool->heap.ck_mark[g] = 0;
    }
    pthread_mutex_unlock(&pool->heap.lock);
    free(pool->gc.old);
    pool->gc.old = NULL;
    free(pool->gc.deferred);
    pool->gc.deferred = NULL;
    pool->gc.dn = pool->gc.dcap = 0;
    free(pool->gc.q);
    pool->gc.q = NULL;
    pool->gc.qn = pool->gc.qcap = 0;
}

/* ---- the mark ---- */

/* Mark the old object containing off; 1 if it is newly marked. Objects in
 * chunks made after the open are not part of the snapshot. Which object
 * holds off is the allocator's answer (cairn__object_start); an offset
 * that leads to no object is told to the bad-pointer hook (check.c). */
static int mark_old(cairn_pool *pool, uint64_t off, char **start, const uint64_t *from)
{
    uint64_t heap = pool->hdr->heap_off;
    if (off >= heap) {
        uint64_t g = (off - heap) >> CAIRN_CHUNK_SHIFT;
        if (g < pool->gc.nchunks && !pool->gc.old[g]) {
            /* the check allocates nothing after its open: a pointer into a
             * chunk that was free then leads to no object */
            if (pool->gc.bad_ptr)
                pool->gc.bad_ptr(pool->gc.bad_ptr_ctx, from ? cairn__off(pool, from) : 0, off);
            return 0;
        }
    }
    char *obj = cairn__object_start(pool, off, false);
    if (!obj) {
        if (pool->gc.bad_ptr)
            pool->gc.bad_ptr(pool->gc.bad_ptr_ctx, from ? cairn__off(pool, from) : 0, off);
        return 0;
    }
    uint64_t g = (cairn__off(pool, obj) - heap) >> CAIRN_CHUNK_SHIFT;
    if (pool->heap.ck_kind[g] == CK_RUN) {
        struct run *r = pool->heap.ck_run[g];
        uint64_t slot = cairn__run_slot(r, obj);
        uint64_t m = (uint64_t)1 << (slot % 64);
        if (r->gcmark[slot / 64] & m) return 0;
        r->gcmark[slot / 64] |= m;
    } else {
        if (pool->heap.ck_mark[g]) return 0;
        pool->heap.ck_mark[g] = 1;
    }
    *start = obj;
    return 1;
}

/* Was obj's slot free at the snapshot (an exact run's)? Then the sweep
 * leaves it: whatever holds it now was allocated after the open. */
static bool snapshot_free(cairn_pool *pool, const char *obj)
{
    uint64_t g = (cairn__off(pool, obj) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->heap.ck_kind[g] != CK_RUN || !pool->heap.ck_run[g]->gcfree) return false;
    struct run *r = pool->heap.ck_run[g];
    uint64_t slot = cairn__run_slot(r, obj);
    return r->gcfree[slot / 64] & ((uint64_t)1 << (slot % 64));
}

/* Did the mark reach obj, the start of an old object? */
static bool marked(cairn_pool *pool, const char *obj)
{
    uint64_t g = (cairn__off(pool, obj) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->heap.ck_kind[g] != CK_RUN) return pool->heap.ck_mark[g];
    struct run *r = pool->heap.ck_run[g];
    uint64_t slot = cairn__run_slot(r, obj);
    return r->gcmark[slot / 64] & ((uint64_t)1 << (slot % 64));
}

static bool gc_slow_seam;       /* CAIRN_TEST_GC_SLOW: widen the race window in tests */

struct mark_ctx { cairn_pool *pool; struct mark_stack st; uint64_t nobj; };

static int mark_push(struct mark_ctx *m, uint64_t off, const uint64_t *from)
{
    char *obj;
    if (!mark_old(m->pool, off, &obj, from)) return 0;
    m->nobj++;
    return push(&m->st, obj);
}

static int mark_visit(void *ctx, uint64_t off, const uint64_t *from)
{
    return mark_push(ctx, off, from);
}

/* Mark from the root, then from what the barriers queued, until both are
 * empty under the gc lock; barriers and deferred frees are off when it
 * returns. -1: out of memory (nothing may be freed). */
static int mark(cairn_pool *pool, uint64_t *objects)
{
    const uint64_t tag = pool_tag(pool);
    struct mark_ctx m = { .pool = pool };
    int failed = 0;
    uint64_t scanned = 0;
    uint64_t *q = NULL;
    size_t qn = 0, qcap = 0;

    if (pool->gc.root && mark_push(&m, pool->gc.root, NULL)) failed = 1;
    while (!failed) {
        while (m.st.n && !failed) {
            char *o = m.st.v[--m.st.n];
            size_t size = cairn__object_size(pool, o);
            if (scan_words((const uint64_t *)o, (const uint64_t *)(o + size), tag, mark_visit, &m))
                failed = 1;
            if (gc_slow_seam && (++scanned & 63) == 0) {
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
        if (failed) break;
        pthread_mutex_lock(&pool->gc.lock);
        if (pool->gc.oom) failed = 1;
        if (pool->gc.qn == 0 || failed) {
            atomic_store(&pool->gc.active, 0);    /* barriers and deferral off */
            pthread_mutex_unlock(&pool->gc.lock);
            break;
        }
        /* take the queue, leave an empty one behind */
        uint64_t *tq = pool->gc.q; size_t tn = pool->gc.qn, tc = pool->gc.qcap;
        pool->gc.q = q; pool->gc.qn = 0; pool->gc.qcap = qcap;
        q = tq; qn = tn; qcap = tc;
        pthread_mutex_unlock(&pool->gc.lock);
        for (size_t i = 0; i < qn && !failed; i++)
            if (mark_push(&m, q[i], NULL)) failed = 1;
        qn = 0;
    }
    if (failed) {
        pthread_mutex_lock(&pool->gc.lock);
        atomic_store(&pool->gc.active, 0);
        pthread_mutex_unlock(&pool->gc.lock);
    }
    free(m.st.v);
    free(q);
    *objects = m.nobj;
    return failed ? -1 : 0;
}

/* ---- the sweep ---- */

/* Free what the mark did not reach: unmarked slots of old runs, unmarked
 * old large objects; then the frees that waited for the mark. opening:
 * no program thread runs yet, so a run left empty goes back to the chunk
 * pool and a free chunk's stale table word is cleared. Returns the bytes
 * freed. */
static uint64_t sweep(cairn_pool *pool, bool opening)
{
    uint64_t freed = 0;
    for (uint64_t g = 0; g < pool->gc.nchunks; g++) {
        if (!pool->gc.old[g]) {
            if (opening && pool->heap.ck_kind[g] == CK_FREE) cairn__chunk_clear(pool, g);
            continue;
        }
        if (pool->heap.ck_kind[g] == CK_RUN) {
            struct run *r = pool->heap.ck_run[g];
            uint32_t words = (r->nslots + 63) / 64;
            int32_t n = 0;
            for (uint32_t i = 0; i < words; i++) {
                uint64_t keep = r->gcmark[i] | (r->gcfree ? r->gcfree[i] : 0);
                uint64_t before = atomic_fetch_and(&r->bits[i], keep);
                n += __builtin_popcountll(before & ~keep);
            }
            if (n) {
                atomic_fetch_add(&r->nfree, n);
                atomic_fetch_sub(&pool->heap.used_bytes, (uint64_t)n * r->slot_size);
                freed += (uint64_t)n * r->slot_size;
                if (opening && (uint32_t)n == r->nslots) cairn__run_drop(pool, r);
                else cairn__run_relist(pool, r);
            }
        } else {
            /* the program may free an old large object now: read under the lock */
            pthread_mutex_lock(&pool->heap.lock);
            bool large = pool->heap.ck_kind[g] == CK_LARGE;
            uint64_t n = large ? pool->heap.ck_arg[g] : 1;
            bool dead = large && !pool->heap.ck_mark[g];
            pthread_mutex_unlock(&pool->heap.lock);
            if (dead) {             /* unmarked: the program cannot reach it */
                cairn__free_raw(pool, cairn__chunk_addr(pool, g) + CAIRN_LARGE_HDR);
                freed += n * CAIRN_CHUNK;
            }
            g += n - 1;
        }
    }
    for (size_t i = 0; i < pool->gc.dn; i++) {
        char *p = pool->gc.deferred[i];
        /* unmarked and allocated at the snapshot: the sweep freed it */
        if (marked(pool, p) || snapshot_free(pool, p)) cairn__free_raw(pool, p);
    }
    if (!CAIRN_MUTATED(GC_OFENCE))
        cairn__ofence_pool(pool);                       /* table words of freed chunks */
    return freed;
}

/* Mark and sweep the snapshot taken by snapshot_take, then drop it. A
 * failed mark frees nothing. */
static int collect(cairn_pool *pool, bool opening, uint64_t *objects, uint64_t *freed)
{
    *freed = 0;
    int rc = mark(pool, objects);
    if (rc == 0) *freed = sweep(pool, opening);
    snapshot_drop(pool);
    return rc;
}

/* ---- the drivers ---- */

static double gc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int gc_begin(cairn_pool *pool, bool exact)
{
    if (cairn__heap_load_table(pool) || snapshot_take(pool, exact)) return -1;
    gc_slow_seam = getenv("CAIRN_TEST_GC_SLOW") != NULL;
    atomic_store(&pool->gc.active, 1);
    return 0;
}

/* In the open, before it returns (CAIRN_GC_SYNC=1, cairn pool check); the
 * pool's background state stays GC_NONE. */
int cairn__gc_rebuild(cairn_pool *pool, uint64_t *objects, uint64_t *freed_bytes)
{
    if (gc_begin(pool, false)) return -1;
    int rc = collect(pool, true, objects, freed_bytes);
    if (rc) cairn__err(ENOMEM, "%s: out of memory while marking the heap; free memory and "
                       "open the pool again", pool->path);
    return rc;
}

static void *gc_main(void *arg)
{
    cairn_pool *pool = arg;
    double t0 = gc_now();
    uint64_t objects = 0, freed = 0;
    int rc = collect(pool, false, &objects, &freed);
    pthread_mutex_lock(&pool->gc.lock);
    pool->rec.gc_objects = objects;
    pool->rec.gc_freed = freed;
    pool->rec.bg_seconds = gc_now() - t0;
    pool->gc.state = rc ? GC_FAILED : GC_DONE;
    pthread_cond_broadcast(&pool->gc.cond);
    pthread_mutex_unlock(&pool->gc.lock);
    if (rc)
        fprintf(stderr, "cairn: %s: out of memory while marking the heap after a crash; "
                "nothing was freed and the pool stays marked for recovery at its next open\n",
                pool->path);
    return NULL;
}

/* In a thread of its own, while the program runs (the default). */
int cairn__gc_start(cairn_pool *pool)
{
    if (gc_begin(pool, true)) return -1;
    pool->gc.state = GC_RUNNING;
    /* the thread takes no signals: they belong to the program's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&pool->gc.thread, NULL, gc_main, pool);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        gc_main(pool);                             /* no thread: mark here */
        return 0;
    }
    pool->gc.joinable = true;
    return 0;
}

/* ---- what the program's threads call while the mark runs ---- */

static int qpush(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        uint64_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return 0;
}

void cairn__gc_barrier(cairn_pool *pool, uintptr_t lo, uintptr_t hi)
{
    const uint64_t tag = pool_tag(pool);
    pthread_mutex_lock(&pool->gc.lock);
    if (atomic_load(&pool->gc.active)) {
        for (uintptr_t a = lo & ~(uintptr_t)7; a < hi; a += 8) {
            uint64_t w = __atomic_load_n((const uint64_t *)a, __ATOMIC_RELAXED);
            if (rel_of_pool(w, tag) &&
                qpush(&pool->gc.q, &pool->gc.qn, &pool->gc.qcap, w & CAIRN_OFF_MASK))
                pool->gc.oom = 1;
        }
    }
    pthread_mutex_unlock(&pool->gc.lock);
}

bool cairn__gc_defer_free(cairn_pool *pool, void *ptr)
{
    bool deferred = false;
    pthread_mutex_lock(&pool->gc.lock);
    if (atomic_load(&pool->gc.active)) {
        uint64_t g = (cairn__off(pool, ptr) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
        if (g < pool->gc.nchunks && pool->gc.old[g]) {
            if (pool->gc.dn == pool->gc.dcap) {
                size_t nc = pool->gc.dcap ? pool->gc.dcap * 2 : 256;
                void **nv = realloc(pool->gc.deferred, nc * sizeof *nv);
                if (nv) { pool->gc.deferred = nv; pool->gc.dcap = nc; }
            }
            /* no room: keep the object (a leak until the next mark, never a loss) */
            if (pool->gc.dn < pool->gc.dcap) pool->gc.deferred[pool->gc.dn++] = ptr;
            deferred = true;
        }
    }
    pthread_mutex_unlock(&pool->gc.lock);
    return deferred;
}


void cairn__gc_wait(cairn_pool *pool)
{
    pthread_mutex_lock(&pool->gc.lock);
    while (pool->gc.state == GC_RUNNING) pthread_cond_wait(&pool->gc.cond, &pool->gc.lock);
    bool join = pool->gc.joinable;          /* the first waiter joins the finished thread */
    pool->gc.joinable = false;
    pthread_mutex_unlock(&pool->gc.lock);
    if (join) pthread_join(pool->gc.thread, NULL);
}

bool cairn__gc_wait_if_running(cairn_pool *pool)
{
    pthread_mutex_lock(&pool->gc.lock);
    bool running = pool->gc.state == GC_RUNNING;
    pthread_mutex_unlock(&pool->gc.lock);
    if (running) cairn__gc_wait(pool);
    return running;
}

/* In a fork child (fork.c): the background mark's thread stayed in the
 * parent, so the child neither waits for it nor defers frees for it, and
 * gets a fresh lock (the thread may have held it at the fork). Runs that
 * were old stay as the snapshot left them (full, or an exact run's free
 * slots free) in the child; its copy or view is never written back. */
void cairn__gc_forget_in_child(cairn_pool *p)
{
    pthread_mutex_init(&p->gc.lock, NULL);
    pthread_cond_init(&p->gc.cond, NULL);
    if (p->gc.state == GC_RUNNING) {
        atomic_store(&p->gc.active, 0);
        p->gc.state = GC_FAILED;
        p->gc.joinable = false;
    }
}

/* The heap was full (cairn__gc_alloc): if the background sweep has yet to
 * run, wait for it and try again, as it may make room; else NULL. */
void *cairn__gc_alloc_after_sweep(cairn_pool *pool, size_t size, size_t *usable)
{
    return cairn__gc_wait_if_running(pool) ? cairn__alloc_raw(pool, size, usable) : NULL;
}
