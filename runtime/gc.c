/*
 * gc.c -- rebuilding the heap after a crash by marking from the root.
 *
 * Why marking and not reference counts (Breeze, NV-Heaps, NVL-C count
 * references): counts cost a logged update on every pointer store, and
 * cycles need weak pointers the programmer must place. A mark from the root
 * at recovery costs nothing while the program runs, collects cycles, and is
 * the same pass that rebuilds the allocator's bitmaps, which are never kept
 * exact on media (alloc.c). It runs after a crash or on demand
 * (CAIRN_GC=always, `cairn pool gc`), not on a clean open; by default on
 * a thread of its own while the program runs (the end of this file).
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
 */
#include "internal.h"
#include <errno.h>
#include <stdlib.h>

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

/* Mark the object containing off; 1 if newly marked, 0 if not an object
 * or already marked. */
static int mark(cairn_pool *pool, uint64_t off, char **start, const char *from)
{
    char *obj = cairn__object_start(pool, off, false);
    if (!obj) {
        if (pool->bad_ptr) pool->bad_ptr(pool->bad_ptr_ctx, from ? cairn__off(pool, from) : 0, off);
        return 0;
    }
    uint64_t g = (cairn__off(pool, obj) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->ck_kind[g] == CK_RUN) {
        struct run *r = pool->ck_run[g];
        uint32_t slot = (uint32_t)((obj - r->slots) / r->slot_size);
        uint64_t m = (uint64_t)1 << (slot % 64);
        if (atomic_load_explicit(&r->bits[slot / 64], memory_order_relaxed) & m) return 0;
        cairn__run_set_bit(r, slot);
    } else {
        if (pool->ck_mark[g]) return 0;
        pool->ck_mark[g] = 1;
    }
    *start = obj;
    return 1;
}

/* Chunk table -> volatile heap map, with every slot free and every large
 * object unmarked. A large object whose range was partly reused after it
 * was freed (a later run or object overwrote a continuation word) is
 * stale: its chunks go to whoever claims them. */
static int load_table(cairn_pool *pool)
{
    for (uint64_t g = 0; g < pool->nchunks; g++) {
        if (pool->ck_kind[g] == CK_TABLE) continue;
        uint64_t w = *cairn__chunk_table_slot(pool->base, pool->hdr, g);
        if (!cairn__chunk_word_ok(g, w)) {
            cairn__err(EINVAL, "%s: chunk table entry %llu is corrupt (%#llx); the pool "
                       "cannot be recovered safely, restore it from a backup", pool->path,
                       (unsigned long long)g, (unsigned long long)w);
            return -1;
        }
        unsigned kind = w & 0xff;
        uint64_t arg = (w >> 8) & 0xffffffffu;
        if (kind == CK_RUN && arg < CAIRN_NCLASSES && pool->ck_kind[g] == CK_FREE) {
            if (!cairn__run_new(pool, g, (int)arg)) return -1;
        } else if (kind == CK_LARGE && arg >= 1 && g + arg <= pool->nchunks &&
                   (g % CAIRN_ZONE_CHUNKS) + arg <= CAIRN_ZONE_CHUNKS) {
            bool whole = true;
            for (uint64_t k = 1; k < arg && whole; k++) {
                uint64_t wk = *cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                whole = wk == cairn__chunk_word(g + k, CK_CONT, k);
            }
            if (!whole) continue;
            pool->ck_kind[g] = CK_LARGE;
            pool->ck_arg[g] = (uint32_t)arg;
            for (uint64_t k = 1; k < arg; k++) {
                pool->ck_kind[g + k] = CK_CONT;
                pool->ck_arg[g + k] = (uint32_t)k;
            }
            g += arg - 1;
        }
    }
    return 0;
}

struct sync_mark { cairn_pool *pool; struct mark_stack st; uint64_t nobj; };

static int sync_visit(void *ctx, uint64_t off, const uint64_t *from)
{
    struct sync_mark *m = ctx;
    char *obj;
    if (mark(m->pool, off, &obj, (const char *)from)) {
        if (push(&m->st, obj)) return -1;
        m->nobj++;
    }
    return 0;
}

int cairn__gc_rebuild(cairn_pool *pool, uint64_t *objects, uint64_t *freed_bytes)
{
    if (load_table(pool) || cairn__root_check(pool, false)) return -1;
    struct sync_mark m = { .pool = pool };
    uint64_t used = 0, nobj;
    const uint64_t tag = pool_tag(pool);
    char *obj;
    if (pool->state.root_off && mark(pool, pool->state.root_off, &obj, NULL)) {
        if (push(&m.st, obj)) goto oom;
        m.nobj++;
    }
    while (m.st.n) {
        char *o = m.st.v[--m.st.n];
        size_t size = cairn__object_size(pool, o);
        used += size;
        if (scan_words((const uint64_t *)o, (const uint64_t *)(o + size), tag, sync_visit, &m))
            goto oom;
    }
    nobj = m.nobj;
    free(m.st.v);
    /* Sweep: unmarked large objects and runs with nothing marked go back to
     * the chunk pool, on media too (their table words describe only
     * unreachable chunks, so this is safe at any point). */
    uint64_t freed = 0;
    for (uint64_t g = 0; g < pool->nchunks; g++) {
        uint64_t *tw = cairn__chunk_table_slot(pool->base, pool->hdr, g);
        switch (pool->ck_kind[g]) {
        case CK_RUN: {
            struct run *r = pool->ck_run[g];
            if ((uint32_t)atomic_load(&r->nfree) == r->nslots) {
                free((void *)r->bits);
                free(r);
                pool->ck_run[g] = NULL;
                pool->ck_kind[g] = CK_FREE;
                freed += CAIRN_CHUNK;
                if (*tw) { *tw = 0; cairn__flush_range(pool, tw, 8); }
            } else {
                struct size_class_heap *h = &pool->classes[r->cls];
                if (atomic_load(&r->nfree) > 0) {
                    atomic_store(&r->listed, 1);
                    r->next = h->partial;
                    h->partial = r;
                }
            }
            break;
        }
        case CK_LARGE: {
            uint64_t n = pool->ck_arg[g];
            if (!pool->ck_mark[g]) {
                for (uint64_t k = 0; k < n; k++) {
                    pool->ck_kind[g + k] = CK_FREE;
                    pool->ck_arg[g + k] = 0;
                    uint64_t *t = cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                    if (*t) { *t = 0; cairn__flush_range(pool, t, 8); }
                }
                freed += n * CAIRN_CHUNK;
            }
            pool->ck_mark[g] = 0;
            g += n - 1;
            break;
        }
        case CK_FREE:
            if (*tw) { *tw = 0; cairn__flush_range(pool, tw, 8); }
            break;
        default:
            break;
        }
    }
    cairn__ofence_pool(pool);
    atomic_store(&pool->used_bytes, used);
    pool->free_hint = 0;
    *objects = nobj;
    *freed_bytes = freed;
    return 0;
oom:
    free(m.st.v);
    cairn__err(ENOMEM, "%s: out of memory while marking the heap", pool->path);
    return -1;
}

/* ---- the background mark ------------------------------------------------
 *
 * Opening after a crash must not wait for a scan of the whole heap (2 s for
 * 4 GiB here; reading 4 GiB alone takes 1 s on this machine). So the open
 * rolls back the lanes, loads the chunk table, makes every run that existed
 * at the crash "old" and full (every slot counts as allocated), and returns;
 * a thread then marks from the root and sweeps the old runs and large
 * objects while the program runs. New objects come from new runs and free
 * chunks and are never swept.
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
 * heap lock. The thread stops when its stack and the queue are empty under
 * gc_lock, and barriers scan and queue under gc_lock, so no pointer read by
 * a barrier can be lost between the two.
 *
 * Stores to PM outside a transaction (which cairn-cc reports) bypass the
 * barrier; so do relative pointers written by code that neither logs nor
 * uses cairn_ptr_store. Either is unsafe with or without this mark.
 *
 * Nothing on media changes until the sweep, and the sweep changes only what
 * is unreachable, so a crash while marking recovers the same way. If the
 * mark fails (out of memory), nothing is freed and the pool stays dirty, so
 * the next open marks again. cairn_pool_recovery(), cairn_pool_close() and
 * cairn_pool_grow() wait for the thread; CAIRN_GC_SYNC=1 marks inside the
 * open instead (the old behaviour).
 */
#include <signal.h>
#include <time.h>

static double gc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Mark the old object containing off; 1 if it is newly marked. Objects in
 * chunks made after the open are not part of the snapshot. */
static int bg_mark(cairn_pool *pool, uint64_t off, char **start)
{
    uint64_t heap = pool->hdr->heap_off;
    if (off < heap) return 0;
    uint64_t g = (off - heap) >> CAIRN_CHUNK_SHIFT;
    if (g >= pool->gc_nchunks || !pool->ck_old[g]) return 0;
    char *p = pool->base + off;
    switch (pool->ck_kind[g]) {
    case CK_RUN: {
        struct run *r = pool->ck_run[g];
        if (p < r->slots) return 0;
        uint64_t slot = (uint64_t)(p - r->slots) / r->slot_size;
        if (slot >= r->nslots) return 0;
        uint64_t m = (uint64_t)1 << (slot % 64);
        if (r->gcmark[slot / 64] & m) return 0;
        r->gcmark[slot / 64] |= m;
        *start = r->slots + slot * r->slot_size;
        return 1;
    }
    case CK_CONT:
        g -= pool->ck_arg[g];
        /* fallthrough */
    case CK_LARGE: {
        char *data = cairn__chunk_addr(pool, g) + CAIRN_LARGE_HDR;
        if (p < data || pool->ck_mark[g]) return 0;
        pool->ck_mark[g] = 1;
        *start = data;
        return 1;
    }
    default:
        return 0;
    }
}

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
    pthread_mutex_lock(&pool->gc_lock);
    if (atomic_load(&pool->gc_active)) {
        for (uintptr_t a = lo & ~(uintptr_t)7; a < hi; a += 8) {
            uint64_t w = __atomic_load_n((const uint64_t *)a, __ATOMIC_RELAXED);
            if (rel_of_pool(w, tag) &&
                qpush(&pool->gc_q, &pool->gc_qn, &pool->gc_qcap, w & CAIRN_OFF_MASK))
                pool->gc_oom = 1;
        }
    }
    pthread_mutex_unlock(&pool->gc_lock);
}

bool cairn__gc_defer_free(cairn_pool *pool, void *ptr)
{
    bool deferred = false;
    pthread_mutex_lock(&pool->gc_lock);
    if (atomic_load(&pool->gc_active)) {
        uint64_t g = (cairn__off(pool, ptr) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
        if (g < pool->gc_nchunks && pool->ck_old[g]) {
            if (pool->gc_dn == pool->gc_dcap) {
                size_t nc = pool->gc_dcap ? pool->gc_dcap * 2 : 256;
                void **nv = realloc(pool->gc_deferred, nc * sizeof *nv);
                if (nv) { pool->gc_deferred = nv; pool->gc_dcap = nc; }
            }
            /* no room: keep the object (a leak until the next mark, never a loss) */
            if (pool->gc_dn < pool->gc_dcap) pool->gc_deferred[pool->gc_dn++] = ptr;
            deferred = true;
        }
    }
    pthread_mutex_unlock(&pool->gc_lock);
    return deferred;
}

static bool gc_slow_seam;       /* CAIRN_TEST_GC_SLOW: widen the race window in tests */

struct bg_ctx { cairn_pool *pool; struct mark_stack *st; uint64_t *nobj; };

static int bg_visit(void *ctx, uint64_t off, const uint64_t *from)
{
    (void)from;
    struct bg_ctx *c = ctx;
    char *obj;
    if (bg_mark(c->pool, off, &obj)) {
        if (push(c->st, obj)) return -1;
        (*c->nobj)++;
    }
    return 0;
}

static void *gc_main(void *arg)
{
    cairn_pool *pool = arg;
    double t0 = gc_now();
    const uint64_t tag = pool_tag(pool);
    struct mark_stack st = { 0 };
    uint64_t nobj = 0, scanned = 0;
    int failed = 0;
    char *obj;
    uint64_t *q = NULL;
    size_t qn = 0, qcap = 0;

    if (pool->gc_root && bg_mark(pool, pool->gc_root, &obj)) {
        if (push(&st, obj)) failed = 1;
        nobj++;
    }
    while (!failed) {
        while (st.n && !failed) {
            char *o = st.v[--st.n];
            size_t size = cairn__object_size(pool, o);
            struct bg_ctx c = { pool, &st, &nobj };
            if (scan_words((const uint64_t *)o, (const uint64_t *)(o + size), tag, bg_visit, &c))
                failed = 1;
            if (gc_slow_seam && (++scanned & 63) == 0) {
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
        if (failed) break;
        pthread_mutex_lock(&pool->gc_lock);
        if (pool->gc_oom) failed = 1;
        if (pool->gc_qn == 0 || failed) {
            atomic_store(&pool->gc_active, 0);    /* barriers and deferral off */
            pthread_mutex_unlock(&pool->gc_lock);
            break;
        }
        /* take the queue, leave an empty one behind */
        uint64_t *tq = pool->gc_q; size_t tn = pool->gc_qn, tc = pool->gc_qcap;
        pool->gc_q = q; pool->gc_qn = 0; pool->gc_qcap = qcap;
        q = tq; qn = tn; qcap = tc;
        pthread_mutex_unlock(&pool->gc_lock);
        for (size_t i = 0; i < qn && !failed; i++)
            if (bg_mark(pool, q[i], &obj)) {
                if (push(&st, obj)) failed = 1;
                nobj++;
            }
        qn = 0;
    }
    if (failed) {
        pthread_mutex_lock(&pool->gc_lock);
        atomic_store(&pool->gc_active, 0);
        pthread_mutex_unlock(&pool->gc_lock);
    }
    free(st.v);
    free(q);

    /* Sweep (mark off, frees direct again): unmarked slots of old runs and
     * unmarked old large objects are freed; then the frees that waited. A
     * failed mark frees nothing: the pool stays dirty and the next open
     * marks again. */
    uint64_t freed = 0;
    if (!failed) {
        for (uint64_t g = 0; g < pool->gc_nchunks; g++) {
            if (!pool->ck_old[g]) continue;
            if (pool->ck_kind[g] == CK_RUN) {
                struct run *r = pool->ck_run[g];
                uint32_t words = (r->nslots + 63) / 64;
                int32_t n = 0;
                for (uint32_t i = 0; i < words; i++) {
                    uint64_t before = atomic_fetch_and(&r->bits[i], r->gcmark[i]);
                    n += __builtin_popcountll(before & ~r->gcmark[i]);
                }
                if (n) {
                    atomic_fetch_add(&r->nfree, n);
                    atomic_fetch_sub(&pool->used_bytes, (uint64_t)n * r->slot_size);
                    freed += (uint64_t)n * r->slot_size;
                    cairn__run_relist(pool, r);
                }
            } else {
                /* the program may free an old large object now: read under the lock */
                pthread_mutex_lock(&pool->heap_lock);
                bool large = pool->ck_kind[g] == CK_LARGE;
                uint64_t n = large ? pool->ck_arg[g] : 1;
                bool dead = large && !pool->ck_mark[g];
                pthread_mutex_unlock(&pool->heap_lock);
                if (dead) {             /* unmarked: the program cannot reach it */
                    cairn__free_raw(pool, cairn__chunk_addr(pool, g) + CAIRN_LARGE_HDR);
                    freed += n * CAIRN_CHUNK;
                }
                g += n - 1;
            }
        }
        for (size_t i = 0; i < pool->gc_dn; i++) {
            char *p = pool->gc_deferred[i];
            uint64_t g = (cairn__off(pool, p) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
            bool marked;
            if (pool->ck_kind[g] == CK_RUN) {
                struct run *r = pool->ck_run[g];
                uint64_t slot = (uint64_t)(p - r->slots) / r->slot_size;
                marked = r->gcmark[slot / 64] & ((uint64_t)1 << (slot % 64));
            } else {
                marked = pool->ck_mark[g];
            }
            if (marked) cairn__free_raw(pool, p);   /* unmarked: the sweep freed it */
        }
        cairn__ofence_pool(pool);                   /* table words of freed large objects */
    }
    for (uint64_t g = 0; g < pool->gc_nchunks; g++) {
        if (pool->ck_old[g] && pool->ck_kind[g] == CK_RUN) {
            free(pool->ck_run[g]->gcmark);
            pool->ck_run[g]->gcmark = NULL;
        }
        pool->ck_mark[g] = 0;
    }
    free(pool->ck_old);
    pool->ck_old = NULL;
    free(pool->gc_deferred);
    pool->gc_deferred = NULL;
    pool->gc_dn = pool->gc_dcap = 0;
    free(pool->gc_q);
    pool->gc_q = NULL;
    pool->gc_qn = pool->gc_qcap = 0;

    pthread_mutex_lock(&pool->gc_lock);
    pool->rec_gc_objects = nobj;
    pool->rec_gc_freed = freed;
    pool->rec_bg_seconds = gc_now() - t0;
    pool->gc_state = failed ? GC_FAILED : GC_DONE;
    pthread_cond_broadcast(&pool->gc_cond);
    pthread_mutex_unlock(&pool->gc_lock);
    if (failed)
        fprintf(stderr, "cairn: %s: out of memory while marking the heap after a crash; "
                "nothing was freed and the pool stays marked for recovery at its next open\n",
                pool->path);
    return NULL;
}

int cairn__gc_start(cairn_pool *pool)
{
    if (load_table(pool) || cairn__root_check(pool, false)) return -1;
    pool->gc_nchunks = pool->nchunks;
    pool->ck_old = calloc(pool->nchunks ? pool->nchunks : 1, 1);
    if (!pool->ck_old) goto oom;
    uint64_t used = 0;
    for (uint64_t g = 0; g < pool->nchunks; g++) {
        switch (pool->ck_kind[g]) {
        case CK_RUN: {
            struct run *r = pool->ck_run[g];
            uint32_t words = (r->nslots + 63) / 64;
            r->gcmark = calloc(words, 8);
            if (!r->gcmark) goto oom;
            for (uint32_t i = 0; i < words; i++) {
                uint32_t valid = r->nslots - i * 64 < 64 ? r->nslots - i * 64 : 64;
                atomic_store(&r->bits[i], valid == 64 ? ~(uint64_t)0 : (((uint64_t)1 << valid) - 1));
            }
            atomic_store(&r->nfree, 0);            /* full: nothing is taken from it */
            pool->ck_old[g] = 1;
            used += (uint64_t)r->nslots * r->slot_size;
            break;
        }
        case CK_LARGE: {
            uint64_t n = pool->ck_arg[g];
            for (uint64_t k = 0; k < n; k++) pool->ck_old[g + k] = 1;
            used += n * CAIRN_CHUNK - CAIRN_LARGE_HDR;
            g += n - 1;
            break;
        }
        default:
            break;
        }
    }
    atomic_store(&pool->used_bytes, used);
    pool->free_hint = 0;
    pool->gc_root = pool->state.root_off;
    gc_slow_seam = getenv("CAIRN_TEST_GC_SLOW") != NULL;
    pool->gc_state = GC_RUNNING;
    atomic_store(&pool->gc_active, 1);
    /* the thread takes no signals: they belong to the program's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&pool->gc_thread, NULL, gc_main, pool);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        gc_main(pool);                             /* no thread: mark here */
        return 0;
    }
    pool->gc_joinable = true;
    return 0;
oom:
    for (uint64_t g = 0; g < pool->nchunks; g++)
        if (pool->ck_kind[g] == CK_RUN && pool->ck_run[g]) {
            free(pool->ck_run[g]->gcmark);
            pool->ck_run[g]->gcmark = NULL;
        }
    free(pool->ck_old);
    pool->ck_old = NULL;
    cairn__err(ENOMEM, "%s: out of memory preparing the heap after a crash", pool->path);
    return -1;
}

void cairn__gc_wait(cairn_pool *pool)
{
    pthread_mutex_lock(&pool->gc_lock);
    while (pool->gc_state == GC_RUNNING) pthread_cond_wait(&pool->gc_cond, &pool->gc_lock);
    bool join = pool->gc_joinable;          /* the first waiter joins the finished thread */
    pool->gc_joinable = false;
    pthread_mutex_unlock(&pool->gc_lock);
    if (join) pthread_join(pool->gc_thread, NULL);
}

bool cairn__gc_wait_if_running(cairn_pool *pool)
{
    pthread_mutex_lock(&pool->gc_lock);
    bool running = pool->gc_state == GC_RUNNING;
    pthread_mutex_unlock(&pool->gc_lock);
    if (running) cairn__gc_wait(pool);
    return running;
}
