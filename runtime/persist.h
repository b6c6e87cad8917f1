/*
 * persist.h -- the persistence layer (persist.c): flushes, fences, the
 * msync domain, the test seam, and the common case inlined into the
 * transaction's hot path.
 */
#ifndef CAIRN_PERSIST_H
#define CAIRN_PERSIST_H

#include "pool.h"
#include "trace.h"
#include "mutants.h"

#pragma GCC visibility push(hidden)

/* ---- persist.c ---- */
void cairn__persist_init(void);
void cairn__flush_range(cairn_pool *pool, const void *ptr, size_t len);
/* the persistence layer's fault-injection seam (persist.c; tests only) */
enum { CAIRN_SEAM_LINES = 1, CAIRN_SEAM_FENCE = 2 };
extern void (*cairn__persist_seam)(int what, const void *p, size_t len);
/* Write nlines whole lines from a 64-byte aligned buffer to 64-byte aligned
 * PM, non-temporally where flushes are user-space; no fence. */
void cairn__pm_write_lines(cairn_pool *pool, void *dst, const void *src, size_t nlines);
void cairn__zero_flush(cairn_pool *pool, void *ptr, size_t len, bool in_tx);
void cairn__ofence_pool(cairn_pool *pool);
void cairn__dfence_pool(cairn_pool *pool);
extern CAIRN_TLS struct cairn_stats cairn__tstats;
extern uint64_t cairn__write_ns;              /* CAIRN_PM_WRITE_NS */
extern bool cairn__flush_clwb;                /* the flush instruction is clwb */
extern CAIRN_TLS int cairn__ndirty;           /* msync domain: dirty ranges pending */
extern CAIRN_TLS volatile unsigned cairn__sig_head, cairn__sig_tail;

/* ---- persist.c's common case, inlined into the transaction's hot path ----
 * A transaction's every flush and fence used to be a call (with its stack
 * frame): stores that wait in the store buffer behind the fence before them
 * (an 8-byte transaction made 168 stores, and 50 more stores measured +30-40
 * ns). When the pool has user-space flushes and nothing else is asked for
 * (no msync ranges pending in this thread, no injected latency), these do
 * exactly what the out-of-line versions do; otherwise they call them. */
static inline bool cairn__plain_persist(const cairn_pool *pool)
{
    return pool->user_flush && !pool->no_persist && !cairn__write_ns;
}
/* The fast paths persist the same way whether or not anyone watches: with a
 * trace or the test seam on, the same code reports the line it just wrote
 * back or streamed, or the fence it is about to issue, through one cold call
 * (persist.c), so crash states are built from the path programs run. */
#define cairn__persist_observed() \
    __builtin_expect(cairn__persist_seam != NULL || cairn__tracing(), 0)
enum { CAIRN_REPORT_CLWB = 1, CAIRN_REPORT_NT = 2, CAIRN_REPORT_OFENCE = 3, CAIRN_REPORT_DFENCE = 4 };
void cairn__persist_report(int what, cairn_pool *pool, const void *p) __attribute__((cold));
static inline void cairn__fence_fast(cairn_pool *pool, bool durable)
{
    if (CAIRN_MUTATED(FENCE_FAST)) return;
    if (__builtin_expect(pool->user_flush && !cairn__ndirty && cairn__sig_head == cairn__sig_tail, 1)) {
        if (durable) cairn__tstats.dfences++;
        else cairn__tstats.ofences++;
        if (cairn__persist_observed())
            cairn__persist_report(durable ? CAIRN_REPORT_DFENCE : CAIRN_REPORT_OFENCE, pool, NULL);
        __builtin_ia32_sfence();
    } else if (durable) {
        cairn__dfence_pool(pool);
    } else {
        cairn__ofence_pool(pool);
    }
}
/* one whole 64-byte line, non-temporally (cairn__pm_write_lines, n = 1) */
static inline void cairn__pm_write_line_fast(cairn_pool *pool, void *dst, const void *src)
{
    if (__builtin_expect(cairn__plain_persist(pool), 1)) {
        const __m128i *s = src;
        __m128i *d = dst;
        if (CAIRN_MUTATED(WRITE_LINE_FAST_NT)) {
            memcpy(dst, src, 64);
            return;
        }
        _mm_stream_si128(d, _mm_load_si128(s));
        _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
        _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
        _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
        cairn__tstats.flushes++;
        if (cairn__persist_observed()) cairn__persist_report(CAIRN_REPORT_NT, pool, dst);
    } else {
        cairn__pm_write_lines(pool, dst, src, 1);
    }
}
/* write back the line holding p (cairn__flush_range of one line) */
static inline void cairn__flush_line_fast(cairn_pool *pool, const void *p)
{
    if (__builtin_expect(cairn__flush_clwb && cairn__plain_persist(pool), 1)) {
        uintptr_t line = (uintptr_t)p & ~(uintptr_t)63;
#ifdef CAIRN_PLANT_CLWB_NEXT_LINE
        line += 64;       /* a planted bug (tests/crashcheck): the fast path misses its line */
#endif
        if (CAIRN_MUTATED(FLUSH_LINE_FAST)) return;
        if (CAIRN_MUTATED(FLUSH_LINE_FAST_NEXT)) line += 64;
        cairn__tstats.flushes++;
#ifdef CAIRN_PLANT_CLWB_UNREPORTED_LINE
        /* a planted bug (tests/crashcheck): the instruction misses, the report is right */
        __asm__ volatile("clwb %0" : "+m"(*(volatile char *)(line + 64)));
#else
        __asm__ volatile("clwb %0" : "+m"(*(volatile char *)line));
#endif
        if (cairn__persist_observed()) cairn__persist_report(CAIRN_REPORT_CLWB, pool, (void *)line);
    } else {
        cairn__flush_range(pool, p, 1);
    }
}

#pragma GCC visibility pop

#endif
