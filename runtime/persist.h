/*
 * persist.h -- the persistence layer (persist.c): flushes, fences, the
 * msync domain, the test seam, and the common case inlined into the
 * transaction's hot path.
 */
#ifndef CAIRN_PERSIST_H
#define CAIRN_PERSIST_H

#include "pool.h"
#include "trace.h"

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
 * (no msync ranges pending in this thread, no test seam, no trace, no
 * injected latency), these do exactly what the out-of-line versions do;
 * otherwise they call them. */
static inline bool cairn__plain_persist(const cairn_pool *pool)
{
    return pool->user_flush && !pool->no_persist && !cairn__write_ns &&
           !cairn__persist_seam && !cairn__tracing();
}
static inline void cairn__fence_fast(cairn_pool *pool, bool durable)
{
    if (__builtin_expect(pool->user_flush && !cairn__ndirty && cairn__sig_head == cairn__sig_tail &&
                         !cairn__persist_seam && !cairn__tracing(), 1)) {
        if (durable) cairn__tstats.dfences++;
        else cairn__tstats.ofences++;
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
        _mm_stream_si128(d, _mm_load_si128(s));
        _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
        _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
        _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
        cairn__tstats.flushes++;
    } else {
        cairn__pm_write_lines(pool, dst, src, 1);
    }
}
/* write back the line holding p (cairn__flush_range of one line) */
static inline void cairn__flush_line_fast(cairn_pool *pool, const void *p)
{
    if (__builtin_expect(cairn__flush_clwb && cairn__plain_persist(pool), 1)) {
        cairn__tstats.flushes++;
        __asm__ volatile("clwb %0" : "+m"(*(volatile char *)((uintptr_t)p & ~(uintptr_t)63)));
    } else {
        cairn__flush_range(pool, p, 1);
    }
}

#pragma GCC visibility pop

#endif
