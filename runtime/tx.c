/*
 * tx.c -- undo-logged transactions, one lane per running transaction.
 *
 * Invariants (numbered as in DESIGN.md). Where one is kept, an assert
 * names it; asserts run in debug builds (the sanitizer builds of
 * scripts/test.sh) and cost nothing in release builds:
 *
 * (1) A transaction's undo record for a range is durable before any store
 *     to that range can reach PM: add_range() writes the record (whole
 *     lines, non-temporal: emit_rec) and issues an ofence before it
 *     returns, and the caller stores only after it returns. A record
 *     carries a checksum over the lane generation, its header and its
 *     data, so a torn record, or one left by an earlier transaction of the
 *     lane, never validates; recovery reads a lane's records in order and
 *     stops at the first invalid one. Records
 *     are written in order and each add is fenced, so every valid record
 *     precedes the first invalid one, except records of the last add
 *     itself (its pieces and JUMP are fenced together); recovery refuses a
 *     log where valid records of a later add follow an invalid one
 *     (recover.c), and relies on the layout log_append keeps for that
 *     (CAIRN_REC_CHUNK pieces, a JUMP below CAIRN_LOG_ROOM_MIN bytes).
 * (2) At commit every range written in the transaction (each logged range,
 *     each clobbered range, each object allocated in it) is flushed and an
 *     ofence orders it before the commit mark: the lane generation is
 *     bumped (its line rewritten whole, non-temporal) and dfenced. Bumping
 *     the generation retires all the lane's records at once (the 8-byte
 *     field is written atomically), so after the mark recovery never
 *     undoes the transaction.
 *
 * Costs (fences per operation; see docs/runtime.md for the measured table):
 *   begin: 0.  tx_add of a new range: 1 ofence.  tx_add already covered: 0.
 *   commit with records: 1 ofence + 1 dfence.  commit without: 0 (or 1
 *   dfence if it clobbered or allocated).  alloc in a tx: 0.  free: 0.
 *
 * State of the calling thread's transaction:
 *
 *   NONE --begin--> ACTIVE(depth 1) --begin--> ACTIVE(depth n) (flat)
 *   ACTIVE --commit at depth 1--> NONE     ACTIVE(depth n) --abort--> NONE,
 *   rolled back at once, with n-1 enclosing levels whose commit returns -1
 *
 * Isolation is the program's own locking (as in Breeze): two transactions
 * must not write the same bytes at once. Records snapshot exactly the bytes
 * asked for, never a whole cache line, so transactions on neighbouring
 * objects never undo each other.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include <assert.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BIG_RANGE 4096u     /* ranges longer than this are tracked as ranges */
/* A range of at least RANGE_MIN bytes (a byte copy: a 1 KiB value memcpy'd
 * in) is also kept as one range while the transaction holds fewer than
 * RANGE_MAX_N of them, instead of entering its lines one by one in the line
 * set: one entry to mark, found first by covered(), flushed as one range.
 * Beyond RANGE_MAX_N the line set takes them, so covered()'s scan of the
 * ranges stays short in a transaction of many copies. */
#define RANGE_MIN   256u
#define RANGE_MAX_N 16u
#define EXT_MIN   ((uint64_t)1 << 20)

struct range { uintptr_t lo, hi; };
/* an object allocated in the open transaction; recs: T.recs.n then */
struct talloc { uintptr_t lo, hi; size_t recs; };
struct vec { void *v; size_t n, cap; };

struct tx {
    cairn_pool *pool;
    int depth;
    int pending_aborted;        /* enclosing levels of an aborted tx */
    unsigned lane;
    struct lane_hdr *lh;
    uint64_t gen;
    char *blk;                  /* current log block */
    uint64_t blk_cap, blk_used;
    struct lane_ext *ext_cur;   /* block in use, NULL for the lane's own area */
    /* the line the log's tail is in, as written so far (the bytes before the
     * tail; zeros after), and the lane's first line (generation + start of
     * the first record), so both can be rewritten whole */
    _Alignas(64) unsigned char tail[64];
    _Alignas(64) unsigned char line0[64];
    bool line0_is_tail;         /* the tail is in the lane's first line: tail[] is its image */
    size_t nrecs;               /* undo records written (abort reads them back from the log) */
    /* bytes logged (or fresh) in this tx, per cache line: a set of masks */
    uint64_t *lkey, *lmask;
    size_t lcap, lcount;
    uint32_t *lused;            /* occupied slots, so commit and reset touch only them */
    struct vec big;             /* struct range: large logged/fresh ranges */
    struct vec clob;            /* struct range: clobbered */
    struct vec allocs;          /* struct talloc: allocated here (abort frees) */
    struct vec recs;            /* struct range: the ranges undo records were written for */
    struct vec fresh;           /* struct range: allocated here, > 256 B: no snapshot,
                                   flushed whole at commit */
    struct vec frees;           /* void *: freed here (applied at commit) */
    bool flush_needed;
    const char *scope_frame;    /* the outermost CAIRN_TX block's, NULL if by cairn_tx_begin */
    int left_above;             /* > 0: levels >= this were left by a longjmp (cairn-cc) */
    int left_line;
    const char *left_file;      /* the setjmp it landed at */
    const struct log_rec **abort_v;   /* cairn_tx_abort's records read back */
    size_t abort_cap;
};
static CAIRN_TLS struct tx T;

/* A thread's tx buffers (line set, range vectors) are freed when it exits:
 * the first buffer a thread allocates registers it with tx_key. */
static pthread_key_t tx_key;
static pthread_once_t tx_key_once = PTHREAD_ONCE_INIT;

static void tx_thread_exit(void *unused)
{
    (void)unused;
    free(T.lkey);
    free(T.lmask);
    free(T.lused);
    T.lkey = T.lmask = NULL;
    T.lused = NULL;
    T.lcap = T.lcount = 0;
    free(T.abort_v);
    T.abort_v = NULL;
    T.abort_cap = 0;
    struct vec *vs[] = { &T.big, &T.clob, &T.allocs, &T.recs, &T.fresh, &T.frees };
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        free(vs[i]->v);
        memset(vs[i], 0, sizeof *vs[i]);
    }
}

static void tx_key_create(void) { (void)pthread_key_create(&tx_key, tx_thread_exit); }

static void tx_buffers_owned(void)
{
    pthread_once(&tx_key_once, tx_key_create);
    (void)pthread_setspecific(tx_key, &T);
}

static int vpush(struct vec *v, const void *item, size_t sz)
{
    if (v->n == v->cap) {
        if (!v->cap) tx_buffers_owned();
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *nv = realloc(v->v, cap * sz);
        if (!nv) return -1;
        v->v = nv;
        v->cap = cap;
    }
    memcpy((char *)v->v + v->n * sz, item, sz);
    v->n++;
    return 0;
}

_Noreturn static void tx_fatal(const char *what)
{
    /* A store is about to happen that could not be protected. Stopping here
     * loses nothing: the transaction is rolled back when the pool reopens. */
    cairn__violation("%s in a transaction on %s; the transaction cannot be protected, "
                     "so the process stops and the pool rolls it back at the next open. "
                     "Grow the pool (`cairn pool grow`) or split the transaction.",
                     what, T.pool ? T.pool->path : "?");
}

/* ---- the line set: which bytes of which cache lines are protected ---- */
static inline size_t lhash(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static void lset_grow(void)
{
    if (!T.lcap) tx_buffers_owned();
    size_t ncap = T.lcap ? T.lcap * 2 : 1024;
    uint64_t *nk = calloc(ncap, 8), *nm = calloc(ncap, 8);
    uint32_t *nu = malloc(ncap / 2 * sizeof *nu);
    if (!nk || !nm || !nu) tx_fatal("out of memory tracking logged ranges");
    for (size_t u = 0; u < T.lcount; u++) {
        size_t i = T.lused[u];
        size_t j = lhash(T.lkey[i], ncap);
        while (nk[j]) j = (j + 1) & (ncap - 1);
        nk[j] = T.lkey[i];
        nm[j] = T.lmask[i];
        nu[u] = (uint32_t)j;
    }
    free(T.lkey);
    free(T.lmask);
    free(T.lused);
    T.lkey = nk;
    T.lmask = nm;
    T.lused = nu;
    T.lcap = ncap;
}

static inline uint64_t *lset_slot(uint64_t line, bool create)
{
    if (T.lcap == 0) {
        if (!create) return NULL;
        lset_grow();
    }
    size_t j = lhash(line, T.lcap);
    while (T.lkey[j]) {
        if (T.lkey[j] == line) return &T.lmask[j];
        j = (j + 1) & (T.lcap - 1);
    }
    if (!create) return NULL;
    if ((T.lcount + 1) * 2 > T.lcap) {
        lset_grow();
        return lset_slot(line, true);
    }
    T.lkey[j] = line;
    T.lmask[j] = 0;
    T.lused[T.lcount++] = (uint32_t)j;
    return &T.lmask[j];
}

static inline uint64_t line_mask(uintptr_t line, uintptr_t lo, uintptr_t hi)
{
    uintptr_t ls = line << 6, le = ls + 64;
    unsigned a = lo > ls ? (unsigned)(lo - ls) : 0;
    unsigned b = hi < le ? (unsigned)(hi - ls) : 64;
    uint64_t upto = b == 64 ? ~(uint64_t)0 : (((uint64_t)1 << b) - 1);
    return upto & ~((((uint64_t)1) << a) - 1);
}

static bool covered(uintptr_t lo, uintptr_t hi)
{
    if (!T.lcount && !T.big.n && !T.fresh.n) return false;   /* the first range */
    struct range *r = T.big.v;
    for (size_t i = 0; i < T.big.n; i++)
        if (r[i].lo <= lo && hi <= r[i].hi) return true;
    /* the newest fresh objects; an older one missed here is only logged
     * needlessly, never wrongly */
    r = T.fresh.v;
    for (size_t i = T.fresh.n, k = 0; i-- > 0 && k < 32; k++)
        if (r[i].lo <= lo && hi <= r[i].hi) return true;
    if (hi - lo > BIG_RANGE) return false;
    for (uintptr_t line = lo >> 6; line <= (hi - 1) >> 6; line++) {
        uint64_t m = line_mask(line, lo, hi);
        uint64_t *cur = lset_slot(line, false);
        if (!cur || (*cur & m) != m) return false;
    }
    return true;
}

static void mark_protected(uintptr_t lo, uintptr_t hi)
{
    if (hi - lo > BIG_RANGE ||
        (hi - lo >= RANGE_MIN && T.big.n < RANGE_MAX_N)) {
        struct range r = { lo, hi };
        if (vpush(&T.big, &r, sizeof r)) tx_fatal("out of memory tracking logged ranges");
        return;
    }
    for (uintptr_t line = lo >> 6; line <= (hi - 1) >> 6; line++)
        *lset_slot(line, true) |= line_mask(line, lo, hi);
}

/* ---- the log ---- */
static char *lane_area(cairn_pool *pool, unsigned lane)
{
    return pool->base + pool->hdr->lanes_off + (uint64_t)lane * pool->hdr->lane_size;
}

/* ---- writing records: whole lines, non-temporal ----
 * A record is assembled in img after the bytes its first line already
 * holds (T.tail), padded with zeros to a line end, and written with
 * cairn__pm_write_lines: the log is written once and read back only by an
 * abort or a recovery, so it never needs to be in the cache. Rewriting the
 * tail line whole is safe: its earlier bytes are rewritten with the values
 * they already have, and the new record's own bytes are covered by its
 * checksum. Record data is at most REC_CHUNK bytes (log_append splits), so
 * img fits on the stack. */
#define REC_CHUNK CAIRN_REC_CHUNK

static void emit_rec_lines(char *p, uint64_t kind_off, uint64_t len, const void *data,
                           uint64_t dlen);

/* A record that ends in the tail's line (the common small one: an 8-byte
 * field's record is 32 bytes) is assembled in T.tail itself and written
 * from there: no image on the stack, no copies in and out. */
static inline void emit_rec(uint64_t kind_off, uint64_t len, const void *data, uint64_t dlen)
{
    char *p = T.blk + T.blk_used;
    unsigned head = (unsigned)((uintptr_t)p & 63);
    uint64_t rec_bytes = sizeof(struct log_rec) + ((dlen + 7) & ~(uint64_t)7);
    if (head + rec_bytes >= 64) {
        emit_rec_lines(p, kind_off, len, data, dlen);
        return;
    }
    char *line = (char *)((uintptr_t)p & ~(uintptr_t)63);
    if (dlen <= 8 && p == (char *)T.lh + sizeof(struct lane_hdr) && cairn__plain_persist(T.pool)) {
        /* The transaction's first record, of a scalar: the line is
         * [gen][kind_off][len][checksum][data][0...], built in registers and
         * streamed from them. Built in T.tail and loaded back, its 16-byte
         * loads would wait for the 8-byte stores before them to leave the
         * store buffer (no forwarding between the sizes), which sits behind
         * the previous commit's fence. */
        uint64_t v = 0;
        memcpy(&v, data, dlen);
        uint64_t sum = cairn__rec_checksum(T.gen, kind_off, len, &v, dlen);
        __m128i x0 = _mm_set_epi64x((long long)kind_off, (long long)T.gen);
        __m128i x1 = _mm_set_epi64x((long long)sum, (long long)len);
        __m128i x2 = _mm_set_epi64x(0, (long long)v);
        __m128i *d = (__m128i *)line, *t = (__m128i *)T.tail;
        if (CAIRN_MUTATED(TX_FIRST_REC_NT)) {
            _mm_store_si128(d, x0);
            _mm_store_si128(d + 1, x1);
            _mm_store_si128(d + 2, x2);
            _mm_store_si128(d + 3, _mm_setzero_si128());
        } else {
            _mm_stream_si128(d, x0);
            _mm_stream_si128(d + 1, x1);
            _mm_stream_si128(d + 2, x2);
            _mm_stream_si128(d + 3, _mm_setzero_si128());
            cairn__tstats.flushes++;
            if (cairn__persist_observed()) cairn__persist_report(CAIRN_REPORT_NT, T.pool, line);
        }
        _mm_store_si128(t, x0);                /* the tail line's image, for later */
        _mm_store_si128(t + 1, x1);            /* records and the commit mark */
        _mm_store_si128(t + 2, x2);
        T.blk_used += rec_bytes;
        return;
    }
    struct log_rec *r = (void *)(T.tail + head);
    r->kind_off = kind_off;
    r->len = len;
    if (dlen == 8) memcpy(r + 1, data, 8);             /* one move */
    else if (dlen) memcpy(r + 1, data, dlen);          /* padding after it is zero */
    r->checksum = cairn__rec_checksum(T.gen, kind_off, len, r + 1, dlen);
    if (CAIRN_MUTATED(TX_REC_LINE_NT)) memcpy(line, T.tail, 64);
    else cairn__pm_write_line_fast(T.pool, line, T.tail);
    T.blk_used += rec_bytes;
}

/* A record reaching the end of the tail's line or beyond: assembled after
 * the tail's bytes in an image on the stack, written whole lines, and the
 * new tail line kept. */
static void emit_rec_lines(char *p, uint64_t kind_off, uint64_t len, const void *data,
                           uint64_t dlen)
{
    _Alignas(64) unsigned char img[64 + sizeof(struct log_rec) + REC_CHUNK + 64];
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)63;
    unsigned head = (unsigned)((uintptr_t)p & 63);
    assert(dlen <= REC_CHUNK);
    uint64_t rec_bytes = sizeof(struct log_rec) + ((dlen + 7) & ~(uint64_t)7);
    uint64_t used = head + rec_bytes, nbytes = (used + 63) & ~(uint64_t)63;
    /* fixed-size copies only (no calls): the last line zeroed first, then
     * the tail line whole (its bytes after the tail are zeros), then the
     * record; every byte after the record up to the line end stays zero */
    memset(img + nbytes - 64, 0, 64);
    memcpy(img, T.tail, 64);
    struct log_rec *r = (void *)(img + head);
    r->kind_off = kind_off;
    r->len = len;
    if (dlen) memcpy(r + 1, data, dlen);
    r->checksum = cairn__rec_checksum(T.gen, kind_off, len, r + 1, dlen);
    if (CAIRN_MUTATED(TX_REC_LINES_NT)) memcpy((void *)line, img, nbytes);
    else cairn__pm_write_lines(T.pool, (void *)line, img, nbytes / 64);
    memcpy(T.tail, img + nbytes - 64, 64);
    if (used % 64 == 0) memset(T.tail, 0, 64);
    if ((char *)line == (char *)T.lh) memcpy(T.line0, img, 64);
    T.line0_is_tail = false;            /* used >= 64: the tail moved past this line */
    T.blk_used += rec_bytes;
}

/* Continue the log in the next extension block, linking it with a JUMP. */
static void next_block(void)
{
    cairn_pool *pool = T.pool;
    struct lane_ext *e = T.ext_cur ? T.ext_cur->next : pool->lanes.ext[T.lane];
    if (!e) {
        uint64_t want = T.ext_cur ? T.ext_cur->cap * 2 : EXT_MIN;
        if (want > ((uint64_t)256 << 20)) want = (uint64_t)256 << 20;
        size_t usable;
        void *p = cairn__gc_alloc(pool, want, &usable);
        if (!p) tx_fatal("out of pool space for the undo log");
        e = calloc(1, sizeof *e);
        if (!e) tx_fatal("out of memory");
        e->off = cairn__off(pool, p);
        assert(e->off % 64 == 0);      /* large objects start on a line */
        e->cap = usable & ~(uint64_t)63;
        if (T.ext_cur) T.ext_cur->next = e;
        else pool->lanes.ext[T.lane] = e;
    }
    emit_rec((uint64_t)REC_JUMP | (e->off << 8), e->cap, NULL, 0);
    if (T.line0_is_tail) {             /* (never: a lane's own area is 16 KiB) */
        memcpy(T.line0, T.tail, 64);
        T.line0_is_tail = false;
    }
    memset(T.tail, 0, 64);             /* the new block starts on a line */
    T.ext_cur = e;
    T.blk = pool->base + e->off;
    T.blk_cap = e->cap;
    T.blk_used = 0;
}

/* Append undo records for [lo, hi), splitting across blocks; no fence. */
static void log_append(uintptr_t lo, uintptr_t hi)
{
    cairn_pool *pool = T.pool;
    while (lo < hi) {
        /* always keep room for a JUMP record at the end of a block */
        uint64_t room = T.blk_cap - T.blk_used;
        if (room < CAIRN_LOG_ROOM_MIN) { next_block(); continue; }
        uint64_t space = (room - 2 * sizeof(struct log_rec)) & ~(uint64_t)7;
        uint64_t len = hi - lo;
        if (len > space) len = space;
        if (len > REC_CHUNK) len = REC_CHUNK;
        CAIRN_TRACE_EV(mem, TR_LOG_APPEND, 0, (void *)lo, len);
        emit_rec((uint64_t)REC_UNDO | (cairn__off(pool, (void *)lo) << 8), len, (void *)lo, len);
        T.nrecs++;
        cairn__tstats.log_entries++;
        cairn__tstats.log_bytes += len;
        lo += len;
    }
}

static void add_range(uintptr_t lo, uintptr_t hi)
{
    if (covered(lo, hi)) {
        cairn__tstats.log_skipped++;
        return;
    }
    if (cairn__gc_on(T.pool)) cairn__gc_barrier(T.pool, lo, hi);   /* gc.c: old pointers */
#ifndef NDEBUG
    size_t nrecs_before = T.nrecs;
#endif
    log_append(lo, hi);
    assert(T.nrecs > nrecs_before);    /* (1): a record for every byte not yet covered */
    struct range rr = { lo, hi };
    if (vpush(&T.recs, &rr, sizeof rr)) tx_fatal("out of memory tracking logged ranges");
    if (!CAIRN_MUTATED(TX_LOG_FENCE))
        cairn__fence_fast(T.pool, false);  /* invariant (1): record before the store */
    mark_protected(lo, hi);
    T.flush_needed = true;
}

/* ---- lanes ---- */
/* A thread starts from the lane it used last, so its extension blocks
 * (kept per lane until close) are reused instead of every lane growing its
 * own: with lanes handed out in turn, one thread's large transactions
 * spread over all 64 lanes could pin 64 sets of blocks and run a pool that
 * holds one set easily out of space. */
static CAIRN_TLS unsigned last_lane_plus1;

static bool lane_try(cairn_pool *pool, unsigned l)
{
    uint32_t free_ = 0;
    return !atomic_load_explicit(&pool->lanes.vol[l].busy, memory_order_relaxed) &&
           atomic_compare_exchange_strong(&pool->lanes.vol[l].busy, &free_, 1);
}

/* The hand-off between a releaser and a thread waiting for a lane (all 64
 * busy) is a Dekker pattern: the releaser clears its flag, then loads the
 * waiter count; a waiter counts itself, then loads the flags. Each side
 * needs its store ordered before its load, or both can miss the other and
 * the waiter sleeps with a lane free. The releaser runs on every commit,
 * the waiter almost never, so the full barrier is asymmetric: the releaser
 * clears its flag with a plain release store (a seq_cst store is an xchg,
 * which waits for the transaction's non-temporal stores to drain and was
 * the top cost of an 8-byte transaction), and the waiter, after counting
 * itself, runs membarrier(PRIVATE_EXPEDITED), which executes a full
 * barrier on every running thread of the process (a thread not running
 * passed one when it was switched out). So for each releaser either its
 * load of the count comes after that barrier and sees the waiter, which it
 * wakes under the lock, or its store came before it and the waiter's scan
 * sees the free flag. Where membarrier is refused (an old kernel, a seccomp
 * filter), the waiter cannot rely on being woken and rescans every
 * millisecond instead. */
static bool lane_barrier(void)
{
    static _Atomic int state;          /* 0: not tried, 1: registered, -1: refused */
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == 0) {
        s = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1 : -1;
        atomic_store_explicit(&state, s, memory_order_release);
    }
    return s == 1 && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static unsigned lane_acquire(cairn_pool *pool)
{
    static _Atomic unsigned next_hint;
    unsigned start = last_lane_plus1 ? last_lane_plus1 - 1
                                     : atomic_fetch_add(&next_hint, 1) % CAIRN_NLANES;
    for (unsigned k = 0; k < CAIRN_NLANES; k++)
        if (lane_try(pool, (start + k) % CAIRN_NLANES)) return (start + k) % CAIRN_NLANES;
    /* all 64 busy: count this thread, barrier, then wait (see above) */
    pthread_mutex_lock(&pool->lanes.lock);
    atomic_fetch_add(&pool->lanes.waiters, 1);
    bool woken = lane_barrier();
    for (;;) {
        for (unsigned k = 0; k < CAIRN_NLANES; k++) {
            unsigned l = (start + k) % CAIRN_NLANES;
            if (lane_try(pool, l)) {
                atomic_fetch_sub(&pool->lanes.waiters, 1);
                pthread_mutex_unlock(&pool->lanes.lock);
                return l;
            }
        }
        if (woken) {
            pthread_cond_wait(&pool->lanes.cond, &pool->lanes.lock);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 1000000;
            if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
            pthread_cond_timedwait(&pool->lanes.cond, &pool->lanes.lock, &ts);
        }
    }
}

static void lane_release(cairn_pool *pool, unsigned lane)
{
    atomic_store_explicit(&pool->lanes.vol[lane].busy, 0, memory_order_release);
    if (atomic_load_explicit(&pool->lanes.waiters, memory_order_relaxed)) {
        pthread_mutex_lock(&pool->lanes.lock);
        pthread_cond_broadcast(&pool->lanes.cond);
        pthread_mutex_unlock(&pool->lanes.lock);
    }
}

bool cairn__lanes_busy(cairn_pool *pool)
{
    for (unsigned l = 0; l < CAIRN_NLANES; l++)
        if (atomic_load(&pool->lanes.vol[l].busy)) return true;
    return false;
}

void cairn__lane_release_exts(cairn_pool *pool)
{
    for (unsigned l = 0; l < CAIRN_NLANES; l++) {
        struct lane_ext *e = pool->lanes.ext[l];
        while (e) {
            struct lane_ext *n = e->next;
            cairn__free_raw(pool, pool->base + e->off);
            free(e);
            e = n;
        }
        pool->lanes.ext[l] = NULL;
    }
}

static void tx_reset(void)
{
    if (T.lcount) {
        if (T.lcap > 65536) {       /* a huge transaction: give the memory back */
            free(T.lkey); free(T.lmask); free(T.lused);
            T.lkey = T.lmask = NULL;
            T.lused = NULL;
            T.lcap = 0;
        } else {
            for (size_t u = 0; u < T.lcount; u++) T.lkey[T.lused[u]] = 0;
        }
    }
    T.lcount = 0;
    T.nrecs = T.big.n = T.clob.n = T.allocs.n = T.recs.n = T.frees.n = T.fresh.n = 0;
    T.flush_needed = false;
    T.depth = 0;
    T.pool = NULL;
    T.ext_cur = NULL;
    T.scope_frame = NULL;
    T.left_above = 0;
}

/* A transaction this thread had open when the process forked belongs to
 * the parent, and the child's view of the pool is read-only: committing,
 * aborting or logging in the child would write it (a bare SIGSEGV before).
 * The child drops its copy of the transaction and is told why. */
static inline __attribute__((always_inline)) bool drop_inherited(const char *what)
{
    if (T.depth == 0 || !T.pool ||
        !cairn__fork_child_refuses(T.pool, what, "go on with a transaction begun before fork "
                                   "(the child's copy of it is dropped)"))
        return false;
    tx_reset();
    return true;
}

/* ---- longjmp out of a transaction, seen at the setjmp (cairn-cc) ----
 * cairn-cc calls this after every setjmp returns. When a longjmp lands
 * with the transaction deeper than it was at the setjmp, the levels above
 * were left without their commits: a begin now would nest into a
 * transaction whose outer code is gone and that never commits. The
 * program may abort it (the documented answer) or commit the left levels
 * (its choice); a begin first stops. This sees what the CAIRN_TX frame test
 * cannot: a new begin from a frame as deep as the left one, and plain
 * cairn_tx_begin. */
void cairn__tx_setjmp_returned(int r, int depth_at_setjmp, const char *file, int line)
{
    if (r != 0 && T.depth > depth_at_setjmp && depth_at_setjmp >= 0) {
        T.left_above = depth_at_setjmp + 1;
        T.left_file = file;
        T.left_line = line;
    }
}

_Noreturn static void left_violation(const char *what)
{
    cairn__violation("%s at depth %d, but the transaction's levels from depth %d up were left "
                     "by a longjmp to the setjmp at %s:%d (their commits never ran) on %s; the "
                     "process stops and the pool rolls the open transaction back at the next "
                     "open. After a longjmp out of a transaction, call cairn_tx_abort() where "
                     "setjmp returns the second time (docs/compiler.md)",
                     what, T.depth, T.left_above, T.left_file ? T.left_file : "?", T.left_line,
                     T.pool ? T.pool->path : "?");
}

/* ---- public ---- */
int cairn_tx_begin(cairn_pool *pool)
{
    if (!pool) {
        cairn__err(EINVAL, "cairn_tx_begin: NULL pool");
        return -1;
    }
    if (cairn__pool_closed(pool, "cairn_tx_begin")) return -1;
    T.pending_aborted = 0;
    if (cairn__fork_child_refuses(pool, "cairn_tx_begin", "begin a transaction")) return -1;
    if (T.depth > 0) {
        if (T.pool != pool) {
            cairn__err(EINVAL, "cairn_tx_begin: this thread is already in a transaction on %s; "
                       "a transaction covers one pool", T.pool->path);
            return -1;
        }
        if (__builtin_expect(T.left_above > 0, 0)) left_violation("cairn_tx_begin");
        T.depth++;
        CAIRN_TRACE_EV(ev, TR_TX_BEGIN, (unsigned)T.depth, pool, T.lane);
        return 0;
    }
    T.pool = pool;
    T.depth = 1;
    cairn__log_skip = 0;        /* the transaction's stores are logged */
    T.lane = lane_acquire(pool);
    last_lane_plus1 = T.lane + 1;
    char *area = lane_area(pool, T.lane);
    T.lh = (struct lane_hdr *)area;
    uint64_t g1 = pool->lanes.vol[T.lane].gen1;   /* no read of PM on the hot path */
    T.gen = g1 ? g1 - 1 : atomic_load_explicit(&T.lh->gen, memory_order_relaxed);
    memset(T.tail, 0, 64);
    memcpy(T.tail, &T.gen, 8);               /* the log starts after the generation */
    T.line0_is_tail = true;
    T.blk = area + sizeof(struct lane_hdr);
    T.blk_cap = pool->hdr->lane_size - sizeof(struct lane_hdr);
    T.blk_used = 0;
    T.ext_cur = NULL;
    CAIRN_TRACE_EV(ev, TR_TX_BEGIN, 1, pool, T.lane);
    return 0;
}

int cairn_tx_active(void) { return T.depth; }
bool cairn__tx_in(cairn_pool *pool) { return T.depth > 0 && T.pool == pool; }

static void flush_written(void)
{
    cairn_pool *pool = T.pool;
    for (size_t u = 0; u < T.lcount && !CAIRN_MUTATED(TX_FLUSH_LINES); u++)
        cairn__flush_line_fast(pool, (void *)(T.lkey[T.lused[u]] << 6));
    struct range *r = T.big.v;
    for (size_t i = 0; i < T.big.n && !CAIRN_MUTATED(TX_FLUSH_BIG); i++)
        cairn__flush_range(pool, (void *)r[i].lo, r[i].hi - r[i].lo);
    r = T.clob.v;
    for (size_t i = 0; i < T.clob.n && !CAIRN_MUTATED(TX_FLUSH_CLOB); i++)
        cairn__flush_range(pool, (void *)r[i].lo, r[i].hi - r[i].lo);
    r = T.fresh.v;
    for (size_t i = 0; i < T.fresh.n && !CAIRN_MUTATED(TX_FLUSH_FRESH); i++)
        cairn__flush_range(pool, (void *)r[i].lo, r[i].hi - r[i].lo);
}

static void retire_log(void)
{
    /* the commit (or abort) mark: one 8-byte field retires every record. The
     * lane's first line is rewritten whole (non-temporally) with the bytes it
     * holds and the new generation; records exist, so line0 was written. */
    uint64_t g = T.gen + 1;
    unsigned char *l0 = T.line0_is_tail ? T.tail : T.line0;
    /* (2): the mark retires exactly this transaction's records: the lane's
     * generation is still the one they were written under */
    assert(atomic_load_explicit(&T.lh->gen, memory_order_relaxed) == T.gen);
    if (cairn__plain_persist(T.pool)) {
        /* the new generation goes into the line in a register: no 8-byte
         * store for the 16-byte loads to wait for (see emit_rec) */
        const __m128i *s = (const __m128i *)l0;
        __m128i *d = (__m128i *)T.lh;
        __m128i x0 = _mm_castpd_si128(_mm_move_sd(_mm_castsi128_pd(_mm_load_si128(s)),
                                                  _mm_castsi128_pd(_mm_cvtsi64_si128((long long)g))));
        if (CAIRN_MUTATED(TX_MARK_NT)) {
            _mm_store_si128(d, x0);
        } else {
            _mm_stream_si128(d, x0);
            _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
            _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
            _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
            cairn__tstats.flushes++;
            if (cairn__persist_observed()) cairn__persist_report(CAIRN_REPORT_NT, T.pool, d);
        }
    } else {
        memcpy(l0, &g, 8);
        if (CAIRN_MUTATED(TX_MARK_LINES)) memcpy(T.lh, l0, 64);
        else cairn__pm_write_lines(T.pool, T.lh, l0, 1);
    }
    if (!CAIRN_MUTATED(TX_MARK_DFENCE)) cairn__fence_fast(T.pool, true);
    T.pool->lanes.vol[T.lane].gen1 = g + 1;
}

static void tx_end(void)
{
    lane_release(T.pool, T.lane);
    tx_reset();
}

int cairn_tx_commit(void)
{
    if (drop_inherited("cairn_tx_commit")) return -1;
    if (T.depth == 0) {
        if (T.pending_aborted > 0) {          /* an outer level of an aborted tx */
            T.pending_aborted--;
            cairn__err(ECANCELED, "transaction was aborted");
            return -1;
        }
        cairn__err(EINVAL, "cairn_tx_commit: no transaction is open in this thread");
        return -1;
    }
    if (T.depth > 1) {
        CAIRN_TRACE_EV(ev, TR_TX_COMMIT, (unsigned)T.depth, T.pool, T.lane);
        T.depth--;
        if (T.depth < T.left_above) T.left_above = 0;   /* the left levels are closed */
        return 0;
    }
    /* (2): every logged range is flushed before the commit mark */
    assert(!T.nrecs || T.flush_needed);
    if (T.flush_needed || T.clob.n) {
        flush_written();
        if (T.nrecs) {
            if (!CAIRN_MUTATED(TX_DATA_FENCE) && !CAIRN_MUTATED(TX_DATA_FENCE_MOVED))
                cairn__fence_fast(T.pool, false);   /* invariant (2): data before the mark */
            retire_log();
            if (CAIRN_MUTATED(TX_DATA_FENCE_MOVED)) cairn__fence_fast(T.pool, false);
        } else if (!CAIRN_MUTATED(TX_NOLOG_DFENCE)) {
            cairn__dfence_pool(T.pool);
        }
    }
    void **f = T.frees.v;
    for (size_t i = 0; i < T.frees.n; i++) cairn__gc_free(T.pool, f[i]);
    CAIRN_TRACE_EV(ev, TR_TX_COMMIT, 1, T.pool, T.lane);
    tx_end();
    return 0;
}

/* Aborting ends the whole (flat) transaction at once; each enclosing level
 * that still calls cairn_tx_commit (or ends its CAIRN_TX block) gets -1. */
void cairn_tx_abort(void)
{
    if (drop_inherited("cairn_tx_abort")) return;
    if (T.depth == 0) {
        cairn__err(EINVAL, "cairn_tx_abort: no transaction is open in this thread");
        return;
    }
    cairn_pool *pool = T.pool;
    if (T.nrecs) {
        /* the records are read back from the log, as recovery reads them
         * (the hot path keeps no list of them); newest first */
        if (!T.abort_cap) tx_buffers_owned();  /* freed at the thread's exit */
        char why[256] = "";
        long n = cairn__lane_records(pool, T.lane, &T.abort_v, &T.abort_cap, why, sizeof why);
        if (n != (long)T.nrecs)
            cairn__violation("cairn_tx_abort on %s: the undo log of lane %u reads back %ld "
                             "records, %zu were written (%s); stopping, the pool rolls the "
                             "transaction back at the next open", pool->path, T.lane, n,
                             T.nrecs, why[0] ? why : "out of memory, or the log was overwritten");
        cairn__undo_apply(pool, T.abort_v, T.nrecs);
        if (!CAIRN_MUTATED(TX_ABORT_OFENCE))
            cairn__ofence_pool(pool);       /* restored data before retiring the log */
        retire_log();
    }
    struct talloc *a = T.allocs.v;
    for (size_t i = 0; i < T.allocs.n; i++) cairn__gc_free(pool, (void *)a[i].lo);
    CAIRN_TRACE_EV(ev, TR_TX_ABORT, (unsigned)T.depth, pool, T.lane);
    int outer = T.depth - 1;
    tx_end();
    T.pending_aborted = outer;
    cairn__err(ECANCELED, "transaction was aborted");
}

void cairn__tx_note_alloc(void *ptr, size_t usable)
{
    struct range r = { (uintptr_t)ptr, (uintptr_t)ptr + usable };
    struct talloc ta = { r.lo, r.hi, T.recs.n };
    if (vpush(&T.allocs, &ta, sizeof ta)) tx_fatal("out of memory");
    /* fresh: no snapshot needed, flushed at commit */
    if (usable <= 256) mark_protected(r.lo, r.hi);
    else if (vpush(&T.fresh, &r, sizeof r)) tx_fatal("out of memory");
    T.flush_needed = true;
}

/* An object allocated in this transaction was never visible outside it
 * (the transaction's abort, or the recovery of a crash, frees it anyway),
 * so its free takes effect at once and a later allocation of the
 * transaction can reuse its block. Not when an undo record of this
 * transaction covers any of its bytes: a rollback would write them after
 * another thread had reused the block. The object leaves the lists and
 * the covered set, so that a store of this transaction into the block
 * after another thread reuses it is logged again. Searched among the
 * newest FREE_NOW_SCAN allocations; an older one is freed at commit. */
enum { FREE_NOW_SCAN = 64 };

static bool free_now(uintptr_t lo)
{
    struct talloc *a = T.allocs.v;
    size_t i = T.allocs.n, k = 0;
    while (i-- > 0 && k++ < FREE_NOW_SCAN)
        if (a[i].lo == lo) break;
    if (i == SIZE_MAX || a[i].lo != lo) return false;
    uintptr_t hi = a[i].hi;
    struct range *rec = T.recs.v;
    for (size_t j = a[i].recs; j < T.recs.n; j++)
        if (rec[j].lo < hi && lo < rec[j].hi) return false;
    memmove(&a[i], &a[i + 1], (T.allocs.n - i - 1) * sizeof *a);
    T.allocs.n--;
    if (hi - lo > 256) {
        struct range *f = T.fresh.v;
        for (size_t j = T.fresh.n; j-- > 0;)
            if (f[j].lo == lo) {
                memmove(&f[j], &f[j + 1], (T.fresh.n - j - 1) * sizeof *f);
                T.fresh.n--;
                break;
            }
    } else {
        for (uintptr_t line = lo >> 6; line <= (hi - 1) >> 6; line++) {
            uint64_t *m = lset_slot(line, false);
            if (m) *m &= ~line_mask(line, lo, hi);
        }
    }
    cairn__tstats.tx_frees_now++;
    return true;
}

int cairn__tx_note_free(void *ptr)
{
    if (free_now((uintptr_t)ptr)) return 0;
    if (vpush(&T.frees, &ptr, sizeof ptr)) tx_fatal("out of memory");
    return 1;
}

static void warn_once(const char *what)
{
    static _Atomic int warned;
    if (!atomic_exchange(&warned, 1))
        fprintf(stderr, "cairn: %s (reported once)\n", what);
}

void cairn_tx_add(const void *ptr, size_t len)
{
    if (!len) return;
    if (drop_inherited("cairn_tx_add")) return;
    if (T.depth == 0) {
        warn_once("cairn_tx_add outside a transaction: nothing was logged");
        return;
    }
    cairn_pool *pool = cairn__pool_of_addr(ptr);
    if (pool != T.pool) {
        if (pool)
            cairn__violation("cairn_tx_add(%p, %zu): range is in pool %s but the transaction "
                             "is on %s; a transaction covers one pool", ptr, len, pool->path,
                             T.pool->path);
        return;                              /* volatile memory needs no log */
    }
    uint64_t off = cairn__off(pool, ptr);
    if (off + len > pool->size || off + len < off)
        cairn__violation("cairn_tx_add(%p, %zu): range runs past the end of %s", ptr, len, pool->path);
    add_range((uintptr_t)ptr, (uintptr_t)ptr + len);
}

void cairn_tx_clobber(const void *ptr, size_t len)
{
    if (!len) return;
    if (T.depth == 0) {
        warn_once("cairn_tx_clobber outside a transaction: ignored");
        return;
    }
    if (cairn__pool_of_addr(ptr) != T.pool) return;
    struct range r = { (uintptr_t)ptr, (uintptr_t)ptr + len };
    if (cairn__gc_on(T.pool)) cairn__gc_barrier(T.pool, r.lo, r.hi);
    if (vpush(&T.clob, &r, sizeof r)) tx_fatal("out of memory");
    /* the range joins the covered set: the stores cairn-cc logs into it
     * (cairn__log_store) find it covered and append no record, as a
     * cairn_tx_add of it would not either; it is flushed at commit with the
     * other clobbered ranges */
    mark_protected(r.lo, r.hi);
}

/* ---- CAIRN_TX blocks, longjmp and signal handlers ----
 * A CAIRN_TX block is lexically scoped, so two mistakes can be seen:
 *  - a block ends while a level begun inside it is still open: a longjmp
 *    out of the inner block (or a cairn_tx_begin without its commit);
 *  - a block begins while the transaction of an outer block is open but
 *    that block's frame is gone: any block nested in a live one begins from
 *    its frame or a deeper one (lower address), so a begin from a shallower
 *    frame means the outer block was left by a longjmp (or this is a
 *    signal handler on its own stack, inside the interrupted transaction).
 * Going on would make the new work part of a transaction that never
 * commits, rolled back at the next open. Both stop the process instead;
 * the open transaction is then rolled back, as after a crash. A begin from
 * a deeper frame than a stale block's is not seen here: the transaction
 * then stays open, and the pool's close at exit reports it. */
_Noreturn static void scope_violation(const char *what)
{
    cairn__violation("%s on %s; the process stops and the pool rolls the open transaction "
                     "back at the next open. After a longjmp out of a transaction, call "
                     "cairn_tx_abort() where setjmp returns the second time; do not begin "
                     "transactions in signal handlers (docs/compiler.md)",
                     what, T.pool ? T.pool->path : "?");
}

struct cairn__tx_scope cairn__tx_scope_begin(cairn_pool *pool)
{
    const char *frame = __builtin_frame_address(0);
    if (T.depth > 0 && T.scope_frame && frame > T.scope_frame)
        scope_violation("a CAIRN_TX block begins while the transaction of a CAIRN_TX block "
                        "that was left without ending (a longjmp out of it, or a signal "
                        "handler interrupting it) is still open");
    int ok = cairn_tx_begin(pool) == 0;
    if (ok && T.depth == 1) T.scope_frame = frame;
    return (struct cairn__tx_scope){ .once = ok, .began = ok, .depth = ok ? T.depth : 0 };
}

void cairn__tx_scope_end(struct cairn__tx_scope *scope)
{
    if (scope->began && T.depth > scope->depth) {
        char what[320];
        snprintf(what, sizeof what, "a CAIRN_TX block that began at depth %d ends at depth %d: "
                 "a level begun inside it was left without ending (a longjmp out of a nested "
                 "block, or a cairn_tx_begin without commit)", scope->depth, T.depth);
        scope_violation(what);
    }
    if (scope->began && (T.depth > 0 || T.pending_aborted > 0)) cairn_tx_commit();
    scope->began = 0;
}

/* ---- the compiler's hook ---- */
/* CAIRN_UNLOGGED, read once at the first report (persistent-heap mode sets
 * it to off before its first store): 0 not read yet */
enum { UNLOGGED_UNREAD, UNLOGGED_OFF, UNLOGGED_WARN, UNLOGGED_ABORT };
static _Atomic int unlogged_mode;

static int unlogged_mode_read(void)
{
    int m = atomic_load_explicit(&unlogged_mode, memory_order_relaxed);
    if (__builtin_expect(m != UNLOGGED_UNREAD, 1)) return m;
    const char *e = getenv("CAIRN_UNLOGGED");
    if (!e || !strcmp(e, "warn")) m = UNLOGGED_WARN;
    else if (!strcmp(e, "off")) m = UNLOGGED_OFF;
    else if (!strcmp(e, "abort")) m = UNLOGGED_ABORT;
    else {
        fprintf(stderr, "cairn: warning: CAIRN_UNLOGGED=%s is not off, warn or abort; "
                "warn is used (set one of the three)\n", e);
        m = UNLOGGED_WARN;
    }
    atomic_store_explicit(&unlogged_mode, m, memory_order_relaxed);
    return m;
}

static void report_unlogged(const void *addr, size_t len, const char *file, int line)
{
    int mode = unlogged_mode_read();
    if (mode == UNLOGGED_OFF) return;
    if (mode == UNLOGGED_ABORT)
        cairn__violation("store of %zu bytes to PM at %p outside any transaction at %s:%d",
                         len, addr, file ? file : "?", line);
    /* warn once per site */
    static const char *seen_file[256];
    static int seen_line[256];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    size_t h = ((uintptr_t)file * 31u + (unsigned)line) % 256;
    for (size_t k = 0; k < 256; k++) {
        size_t j = (h + k) % 256;
        if (seen_file[j] == file && seen_line[j] == line) break;
        if (!seen_file[j] && !seen_line[j]) {
            seen_file[j] = file;
            seen_line[j] = line;
            fprintf(stderr, "cairn: warning: store of %zu bytes to PM at %p outside any "
                    "transaction at %s:%d (not crash-safe; wrap it in CAIRN_TX)\n",
                    len, addr, file ? file : "?", line);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* everything but a store outside a transaction with reports off, kept out
 * of line so that path needs no stack frame */
__attribute__((noinline)) static void log_store_slow(const void *addr, size_t len,
                                                     const char *file, int line)
{
    if (T.depth == 0) {
        if (len && cairn__pool_of_addr(addr)) report_unlogged(addr, len, file, line);
        return;
    }
    if (!len) return;
    cairn_pool *pool = cairn__pool_of_addr(addr);
    if (!pool) return;
    if (pool != T.pool)
        cairn__violation("store to pool %s inside a transaction on %s at %s:%d; a "
                         "transaction covers one pool", pool->path, T.pool->path,
                         file ? file : "?", line);
    add_range((uintptr_t)addr, (uintptr_t)addr + len);
}

/* cairn.h: code built by cairn-cc tests this before each call, so a store
 * outside a transaction with reports off costs a thread-local load and a
 * branch. Set by the first call that finds nothing to do; cleared when a
 * transaction begins. The mode is read once and never changes after, so
 * only a begin makes the word stale. */
CAIRN_TLS unsigned char cairn__log_skip;

void cairn__log_store(const void *addr, size_t len, const char *file, int line)
{
    /* outside a transaction with reports off there is nothing to do, not
     * even finding the pool */
    if (T.depth == 0 &&
        atomic_load_explicit(&unlogged_mode, memory_order_relaxed) == UNLOGGED_OFF) {
        cairn__log_skip = 1;
        return;
    }
    log_store_slow(addr, len, file, line);
}
