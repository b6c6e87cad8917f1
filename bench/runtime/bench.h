/*
 * bench.h -- the seam between the runtime benchmark driver (bench.c) and
 * the two implementations it measures side by side (bench_cairn.c,
 * bench_pmemobj.c).
 *
 * One program per implementation, built from bench.c plus one backend, so
 * each process holds one pool of one library (PMDK wants one PMEMobjpool per
 * process here, and neither library sees the other's symbols). The driver
 * owns everything that must be identical on both sides: argument parsing,
 * threads, warm-up, timing, the stop flag, the JSON it prints and the
 * markers that cairn-stepcount (stepcount.c) counts instructions between.
 * A backend only does the work of one operation, the way a user of that
 * library would write it.
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Per-thread working set: every thread updates its own objects. */
#define BENCH_TX_RANGES     8      /* ranges in the "tx 8 x 64 B" operation */
#define BENCH_RANGE_BYTES   64
#define BENCH_OBJ_BYTES     4096   /* per-thread object the tx ops update */
#define BENCH_LIST_SLOTS    64     /* per-thread list heads in the micro pool's root */

/* The linked list of the open-time benchmark: 1 KiB objects. */
#define BENCH_NODE_BYTES    1024
#define BENCH_NODE_PATTERN  0x5a   /* < 0x80: never looks like a relative pointer */
#define BENCH_FREE_AFTER_FILL 16   /* "full" = filled until allocation fails, minus these */

/* Counters the library reports about itself (cairn); all zero otherwise. */
struct bench_counts {
    uint64_t flushes, ofences, dfences, log_entries, log_bytes;
};

struct fill_result {
    uint64_t objects;       /* nodes on the list after the fill */
    uint64_t alloc_failed;  /* 1 if filling stopped because the pool was full */
    uintptr_t base;         /* address the pool (root) was mapped at */
};

struct open_result {
    double open_s;          /* pool open, including recovery */
    double first_alloc_s;   /* first allocation + free after the open */
    double walk_s;          /* walk of the list from the root */
    double background_s;    /* cairn after a crash: the mark that ran after the open returned */
    uint64_t objects;       /* nodes counted by the walk */
    uint64_t checksum_ok;   /* 1 if every node's payload held the pattern */
    uintptr_t base;
};

struct bench_backend {
    const char *name;
    const char *version;
    /* micro benchmarks: one pool, open for the whole process */
    int   (*pool_create)(const char *path, size_t size);
    void  (*pool_close)(void);
    void *(*thread_init)(int tid);
    void  (*thread_fini)(void *ts);
    void  (*tx_update8)(void *ts, uint64_t i);
    void  (*tx_update_ranges)(void *ts, uint64_t i);
    void  (*alloc_free)(void *ts, size_t size);
    void  (*tx_alloc_free)(void *ts, size_t size);
    /* one transaction allocates a node of size bytes, fills it and links it
     * at the head of the thread's list hung off the root; a second unlinks
     * the head and frees it */
    void  (*tx_insert_delete)(void *ts, uint64_t i, size_t size);
    /* self-reported counters of the calling thread; NULL if none */
    void  (*counts_reset)(void);
    void  (*counts_get)(struct bench_counts *out);
    /* open-time benchmark over a list of 1 KiB nodes */
    int   (*list_fill)(const char *path, size_t size, uint64_t max_objects,
                       struct fill_result *out);
    int   (*list_open)(const char *path, struct open_result *out);
    /* open the list and update it in transactions until killed */
    int   (*list_churn)(const char *path);
    const char *(*errormsg)(void);
};

extern const struct bench_backend bench_backend;

double bench_now(void);   /* seconds, CLOCK_MONOTONIC */
void   bench_ready(void); /* tells a parent waiting on stdout "running now" */

#endif
