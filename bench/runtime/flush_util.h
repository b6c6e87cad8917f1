/*
 * flush_util.h -- what the floor benchmarks (flush_floor.c, tx_floor.c)
 * share: a clock, and the flush instruction libcairn and libpmem would pick
 * on this CPU (clwb, else clflushopt, else clflush, by CPUID).
 */
#ifndef CAIRN_BENCH_FLUSH_UTIL_H
#define CAIRN_BENCH_FLUSH_UTIL_H

#include <cpuid.h>
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum flush_kind { CLFLUSH, CLFLUSHOPT, CLWB };
static enum flush_kind kind = CLFLUSH;
static const char *const flush_names[] = {"clflush", "clflushopt", "clwb"};

static inline void pick_flush(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        kind = (b & (1u << 24)) ? CLWB : (b & (1u << 23)) ? CLFLUSHOPT : CLFLUSH;
}

__attribute__((target("clwb,clflushopt")))
static inline void flush_line(volatile void *p)
{
    switch (kind) {
    case CLWB: __builtin_ia32_clwb((void *)p); break;
    case CLFLUSHOPT: __builtin_ia32_clflushopt((void *)p); break;
    default: __builtin_ia32_clflush((void *)p); break;
    }
}

#endif
