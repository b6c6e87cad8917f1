/*
 * persist.c -- the persistence domain: flushes, ordering and durability.
 *
 * Two fences, as in HOPS: cairn_ofence() orders earlier flushed stores
 * before later ones; cairn_dfence() makes them durable. On x86 with clwb or
 * clflushopt both are an sfence, but the runtime calls the one it means, so
 * traces and counters show which guarantee each point needs.
 *
 * Domains:
 *   - DAX file mapped with MAP_SYNC, or CAIRN_PMEM_FORCE=1: user-space
 *     cache-line flushes (clwb, else clflushopt, else clflush; by CPUID).
 *   - Any other file: flushes record the dirty pages of the thread; each
 *     fence msyncs them. Order and durability are then the same thing,
 *     because the kernel may write back a dirty page at any moment.
 *   - CAIRN_PM_WRITE_NS=N adds N ns per flushed line (slower media).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include <cpuid.h>
#include <emmintrin.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

CAIRN_TLS struct cairn_stats cairn__tstats;

enum flush_kind { FLUSH_CLWB, FLUSH_CLFLUSHOPT, FLUSH_CLFLUSH };
static enum flush_kind flush_kind = FLUSH_CLFLUSH;
uint64_t cairn__write_ns;
bool cairn__flush_clwb;          /* flush_kind == FLUSH_CLWB, for internal.h's fast path */

/* Fault-injection seam (tests only, NULL otherwise): told of every line on
 * its way to the media (flushed, or written non-temporally, after the
 * write) and of every fence, before it. tests/unit/test_crashstates.c
 * simulates power loss at every fence with it. */
void (*cairn__persist_seam)(int what, const void *p, size_t len);
#define SEAM(w, p, l) \
    do { if (__builtin_expect(cairn__persist_seam != NULL, 0)) cairn__persist_seam(w, p, l); } while (0)

void cairn__persist_init(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        if (b & (1u << 24)) flush_kind = FLUSH_CLWB;
        else if (b & (1u << 23)) flush_kind = FLUSH_CLFLUSHOPT;
    }
    const char *e = getenv("CAIRN_FLUSH");      /* testing: force a weaker one */
    if (e && !strcmp(e, "clflush")) flush_kind = FLUSH_CLFLUSH;
    if (e && !strcmp(e, "clflushopt")) flush_kind = FLUSH_CLFLUSHOPT;
    const char *w = getenv("CAIRN_PM_WRITE_NS");
    if (w) cairn__write_ns = strtoull(w, NULL, 10);
    cairn__flush_clwb = flush_kind == FLUSH_CLWB;
}

static void spin_ns(uint64_t ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        __builtin_ia32_pause();
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t.tv_nsec - t0.tv_nsec) < ns);
}

__attribute__((target("clwb"))) static void flush_lines_clwb(uintptr_t p, uintptr_t end)
{
    for (; p < end; p += CAIRN_CACHELINE) __builtin_ia32_clwb((void *)p);
}
__attribute__((target("clflushopt"))) static void flush_lines_opt(uintptr_t p, uintptr_t end)
{
    for (; p < end; p += CAIRN_CACHELINE) __builtin_ia32_clflushopt((void *)p);
}
static void flush_lines_old(uintptr_t p, uintptr_t end)
{
    for (; p < end; p += CAIRN_CACHELINE) __builtin_ia32_clflush((void *)p);
}

/* msync mode: the dirty pages of this thread, merged while adjacent. */
#define MAX_DIRTY 64
static CAIRN_TLS struct { uintptr_t lo, hi; } dirty[MAX_DIRTY];
CAIRN_TLS int cairn__ndirty;
/* Set while this thread edits its dirty list. A signal handler that
 * flushes PM in the middle of it must not edit the list: its ranges go to
 * a small ring instead (the handler is the only writer of cairn__sig_tail, the
 * interrupted code the only writer of cairn__sig_head, and they never run at the
 * same time), which every fence of either drains. */
static CAIRN_TLS volatile sig_atomic_t dirty_busy;
#define SIG_DIRTY 16
static CAIRN_TLS struct { uintptr_t lo, hi; } sig_dirty[SIG_DIRTY];
CAIRN_TLS volatile unsigned cairn__sig_head, cairn__sig_tail;

static void sync_range(uintptr_t lo, uintptr_t hi)
{
    if (msync((void *)lo, hi - lo, MS_SYNC) != 0)
        cairn__violation("msync of %#lx..%#lx failed: %s; the pool's storage is "
                         "failing, stopping before data is lost",
                         (unsigned long)lo, (unsigned long)hi, strerror(errno));
}

static void sync_sig_ring(void)
{
    while (cairn__sig_head != cairn__sig_tail) {
        unsigned h = cairn__sig_head % SIG_DIRTY;
        sync_range(sig_dirty[h].lo, sig_dirty[h].hi);
        atomic_signal_fence(memory_order_seq_cst);
        cairn__sig_head++;
    }
}

static void msync_dirty_busy(void)
{
    for (int i = 0; i < cairn__ndirty; i++) sync_range(dirty[i].lo, dirty[i].hi);
    cairn__ndirty = 0;
}

static void msync_dirty(void)
{
    sync_sig_ring();
    if (dirty_busy) return;     /* a handler inside note_dirty/msync_dirty: ring only */
    dirty_busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    msync_dirty_busy();
    atomic_signal_fence(memory_order_seq_cst);
    dirty_busy = 0;
}

static void note_dirty(uintptr_t lo, uintptr_t hi)
{
    long pg = 4096;
    lo &= ~(uintptr_t)(pg - 1);
    hi = (hi + pg - 1) & ~(uintptr_t)(pg - 1);
    if (dirty_busy) {           /* a signal handler interrupted this thread's list */
        /* the newest ring entry, if the interrupted code is not syncing it
         * (it only ever syncs the one at cairn__sig_head): a handler that flushes
         * the same pages again and again then never fills the ring, and
         * never pays an msync of its own (a frequent timer whose handler
         * msyncs each time could starve the thread it interrupts) */
        if (cairn__sig_tail - cairn__sig_head >= 2) {
            unsigned n = (cairn__sig_tail - 1) % SIG_DIRTY;
            if (lo <= sig_dirty[n].hi && hi >= sig_dirty[n].lo) {
                if (lo < sig_dirty[n].lo) sig_dirty[n].lo = lo;
                if (hi > sig_dirty[n].hi) sig_dirty[n].hi = hi;
                return;
            }
        }
        if (cairn__sig_tail - cairn__sig_head == SIG_DIRTY) {
            sync_range(lo, hi); /* ring full: sync now */
            return;
        }
        unsigned t = cairn__sig_tail % SIG_DIRTY;
        sig_dirty[t].lo = lo;
        sig_dirty[t].hi = hi;
        atomic_signal_fence(memory_order_seq_cst);
        cairn__sig_tail++;
        return;
    }
    dirty_busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    int i = 0;
    for (; i < cairn__ndirty; i++) {
        if (lo <= dirty[i].hi && hi >= dirty[i].lo) {
            if (lo < dirty[i].lo) dirty[i].lo = lo;
            if (hi > dirty[i].hi) dirty[i].hi = hi;
            break;
        }
    }
    if (i == cairn__ndirty) {
        if (cairn__ndirty == MAX_DIRTY) msync_dirty_busy();
        dirty[cairn__ndirty].lo = lo;
        dirty[cairn__ndirty].hi = hi;
        cairn__ndirty++;
    }
    atomic_signal_fence(memory_order_seq_cst);
    dirty_busy = 0;
}

static void flush_user(uintptr_t p, uintptr_t end)
{
    switch (flush_kind) {
    case FLUSH_CLWB: flush_lines_clwb(p, end); break;
    case FLUSH_CLFLUSHOPT: flush_lines_opt(p, end); break;
    default: flush_lines_old(p, end); break;
    }
}

void cairn__flush_range(cairn_pool *pool, const void *ptr, size_t len)
{
    if (!len || (pool && pool->no_persist) || CAIRN_MUTATED(FLUSH_RANGE)) return;
    uintptr_t p = (uintptr_t)ptr & ~(uintptr_t)(CAIRN_CACHELINE - 1);
    uintptr_t end = (uintptr_t)ptr + len;
    if (CAIRN_MUTATED(FLUSH_RANGE_NEXT)) p += CAIRN_CACHELINE, end += CAIRN_CACHELINE;
    uint64_t lines = (end - p + CAIRN_CACHELINE - 1) / CAIRN_CACHELINE;
    cairn__tstats.flushes += lines;
    CAIRN_TRACE_EV(mem, TR_FLUSH, pool && !pool->user_flush ? TR_FLUSH_MSYNC : (unsigned)flush_kind,
                   (void *)p, lines);
    if (pool && !pool->user_flush) {
        note_dirty(p, end);
        return;
    }
    SEAM(CAIRN_SEAM_LINES, (void *)p, end - p);
    flush_user(p, end);
    if (cairn__write_ns) spin_ns(cairn__write_ns * lines);
}

/* Whole lines written once and read again only by an abort or a recovery
 * (the undo log, the commit mark) go to the media with non-temporal
 * stores: no read for ownership and nothing left to write back. Here a
 * round of NT stores + sfence costs ~105 ns against ~185 ns for
 * store + clwb + sfence (clwb evicts the line on this CPU, so the next
 * write of it also misses; bench/runtime/flush_floor.c measures both).
 * Counted as one flushed line per line, like zero_flush. */
void cairn__pm_write_lines(cairn_pool *pool, void *dst, const void *src, size_t nlines)
{
    size_t len = nlines * CAIRN_CACHELINE;
    if (!pool->user_flush || pool->no_persist || CAIRN_MUTATED(WRITE_LINES_NT)) {
        memcpy(dst, src, len);
        if (!CAIRN_MUTATED(WRITE_LINES_NT)) cairn__flush_range(pool, dst, len);
        return;
    }
    const __m128i *s = src;
    __m128i *d = dst;
    for (size_t i = 0; i < len / 16; i++) _mm_stream_si128(d + i, _mm_load_si128(s + i));
    CAIRN_TRACE_EV(mem, TR_NTSTORE, 0, dst, len);     /* after: it records what was written */
    SEAM(CAIRN_SEAM_LINES, dst, len);
    cairn__tstats.flushes += nlines;
    if (cairn__write_ns) spin_ns(cairn__write_ns * nlines);
}

/* Zero [ptr, ptr+len) on its way to the media. With user-space flushes and
 * 1 KiB or more, non-temporal stores write whole lines without reading
 * them first (a memset first reads every line it writes: for 4 KiB here
 * memset+clwb+sfence takes 1.3-1.4 us, NT stores+sfence 0.6-0.7 us) and
 * need no flush; the caller's next fence orders them like flushed stores.
 * Inside a transaction (in_tx) it only memsets: the commit flushes the
 * fresh object's lines anyway, since the program may write them before it
 * commits. NT zeroing there too made tx alloc+free of 4 KiB 3.16x
 * libpmemobj instead of 2.5-2.7x, but costs 64 NT lines plus 64 clwb per
 * object (128 line operations against libpmemobj's 68), so it is not done:
 * see docs/runtime.md, "Known limits". */
void cairn__zero_flush(cairn_pool *pool, void *ptr, size_t len, bool in_tx)
{
    if (CAIRN_MUTATED(ZERO_FLUSH_NT) && !in_tx && pool && pool->user_flush && len >= 1024) {
        memset(ptr, 0, len);
        return;
    }
    if (!in_tx && pool && pool->user_flush && !pool->no_persist && len >= 1024 &&
        ((uintptr_t)ptr & 15) == 0 && (len & 15) == 0) {
        __m128i z = _mm_setzero_si128();
        for (char *p = ptr, *end = p + len; p < end; p += 16) _mm_stream_si128((__m128i *)p, z);
        CAIRN_TRACE_EV(mem, TR_NTSTORE, 0, ptr, len);
        SEAM(CAIRN_SEAM_LINES, ptr, len);
        cairn__tstats.flushes += (len + CAIRN_CACHELINE - 1) / CAIRN_CACHELINE;
        if (cairn__write_ns) spin_ns(cairn__write_ns * (len / CAIRN_CACHELINE));
        return;
    }
    memset(ptr, 0, len);
    if (!in_tx && !CAIRN_MUTATED(ZERO_FLUSH)) cairn__flush_range(pool, ptr, len);
}

static inline void sfence(void) { __builtin_ia32_sfence(); }

void cairn__ofence_pool(cairn_pool *pool)
{
    if (CAIRN_MUTATED(OFENCE_POOL)) return;
    cairn__tstats.ofences++;
    CAIRN_TRACE_EV(ev, TR_FENCE, TR_OFENCE, pool, 0);
    if (cairn__ndirty || cairn__sig_head != cairn__sig_tail) msync_dirty();
    (void)pool;
    SEAM(CAIRN_SEAM_FENCE, NULL, 0);
    sfence();
}

void cairn__dfence_pool(cairn_pool *pool)
{
    if (CAIRN_MUTATED(DFENCE_POOL)) return;
    cairn__tstats.dfences++;
    CAIRN_TRACE_EV(ev, TR_FENCE, TR_DFENCE, pool, 0);
    if (cairn__ndirty || cairn__sig_head != cairn__sig_tail) msync_dirty();
    (void)pool;
    SEAM(CAIRN_SEAM_FENCE, NULL, 0);
    sfence();
}

/* What internal.h's fast paths tell the trace and the seam, from the code
 * that persisted: the line written back with clwb or streamed whole (after
 * the instruction), or the fence (before it). */
void cairn__persist_report(int what, cairn_pool *pool, const void *p)
{
    switch (what) {
    case CAIRN_REPORT_CLWB:
        CAIRN_TRACE_EV(mem, TR_FLUSH, TR_FLUSH_CLWB, p, 1);
        SEAM(CAIRN_SEAM_LINES, p, CAIRN_CACHELINE);
        break;
    case CAIRN_REPORT_NT:
        CAIRN_TRACE_EV(mem, TR_NTSTORE, 0, p, CAIRN_CACHELINE);
        SEAM(CAIRN_SEAM_LINES, p, CAIRN_CACHELINE);
        break;
    default:
        CAIRN_TRACE_EV(ev, TR_FENCE, what == CAIRN_REPORT_DFENCE ? TR_DFENCE : TR_OFENCE, pool, 0);
        SEAM(CAIRN_SEAM_FENCE, NULL, 0);
        break;
    }
}

/* ---- public ---- */
void cairn_flush(const void *ptr, size_t len)
{
    if (!CAIRN_MUTATED(PUBLIC_FLUSH)) cairn__flush_range(cairn__pool_of_addr(ptr), ptr, len);
}
void cairn_persist(const void *ptr, size_t len)
{
    cairn_pool *pool = cairn__pool_of_addr(ptr);
    if (!CAIRN_MUTATED(PERSIST_FLUSH)) cairn__flush_range(pool, ptr, len);
    if (!CAIRN_MUTATED(PERSIST_DFENCE)) cairn__dfence_pool(pool);
}
void cairn_ofence(void)
{
    if (!CAIRN_MUTATED(PUBLIC_OFENCE)) cairn__ofence_pool(NULL);
}
void cairn_dfence(void)
{
    if (!CAIRN_MUTATED(PUBLIC_DFENCE)) cairn__dfence_pool(NULL);
}

void cairn_stats_get(struct cairn_stats *out) { *out = cairn__tstats; }
void cairn_stats_reset(void) { memset(&cairn__tstats, 0, sizeof cairn__tstats); }
