/*
 * tx_floor.c -- cairn-tx-floor: how far cairn's 8-byte transaction is from
 * the hardware floor of its own store pattern.
 *
 *   CAIRN_PMEM_FORCE=1 cairn-tx-floor [--pool FILE] [--blocks B] [--ops N]
 *
 * An undo-logged update of one 8-byte field must, in this order: read the
 * old value (the snapshot), write the record and fence, store the field,
 * write it back and fence, write the commit mark and fence. This program
 * replays exactly those memory operations with no software around them, on
 * lines of the same pool, and alternates blocks of N operations of three
 * kinds in one process (so that each block of one kind ran moments apart
 * from the others on a noisy machine):
 *
 *   cairn     cairn_tx_begin; cairn_tx_add(8 B); store; cairn_tx_commit
 *   replica   NT line, sfence, store, clwb, sfence, NT line, sfence
 *   replica+read  the same after reading the field's line first, as the
 *             snapshot must (on CPUs whose clwb evicts, that read misses)
 *
 * It prints one JSON line per kind: the median ns per operation over the
 * blocks and the median of the per-block ratios to cairn. Flush
 * instruction: clwb if the CPU has it, else clflushopt, else clflush.
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cairn.h"

#include "flush_util.h"

static inline void nt_line(void *dst, const void *src)
{
    const __m128i *s = src;
    __m128i *d = dst;
    for (int i = 0; i < 4; i++) _mm_stream_si128(d + i, _mm_load_si128(s + i));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *path = "/dev/shm/cairn-tx-floor.pool";
    int blocks = 40;
    long ops = 50000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pool") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) ops = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--pool FILE] [--blocks B] [--ops N]\n"
                    "  (run with CAIRN_PMEM_FORCE=1 for a file on /dev/shm)\n", argv[0]);
            return 2;
        }
    }
    if (blocks < 1 || blocks > 100000 || ops < 1) {
        fprintf(stderr, "cairn-tx-floor: --blocks must be 1..100000 and --ops positive\n");
        return 2;
    }
    pick_flush();
    unlink(path);
    cairn_pool *pool = cairn_pool_create(path, "cairn-tx-floor", (size_t)64 << 20);
    if (!pool) {
        fprintf(stderr, "cairn-tx-floor: %s\n", cairn_errormsg());
        return 1;
    }
    char *obj = cairn_alloc(pool, 4096), *rep = cairn_alloc(pool, 4096);
    if (!obj || !rep) {
        fprintf(stderr, "cairn-tx-floor: %s\n", cairn_errormsg());
        return 1;
    }
    uint64_t *field = (uint64_t *)(((uintptr_t)obj + 63) & ~(uintptr_t)63);
    char *rec = (char *)(((uintptr_t)rep + 63) & ~(uintptr_t)63);
    volatile uint64_t *data = (volatile uint64_t *)(rec + 1024);
    _Alignas(64) unsigned char img[64] = {0};

    enum { CAIRN, REPLICA, REPLICA_READ, KINDS };
    static const char *name[KINDS] = {"cairn", "replica", "replica+read"};
    double *t[KINDS], *ratio[KINDS];
    for (int k = 0; k < KINDS; k++) {
        t[k] = calloc((size_t)blocks, sizeof(double));
        ratio[k] = calloc((size_t)blocks, sizeof(double));
        if (!t[k] || !ratio[k]) return 1;
    }
    for (int blk = 0; blk < blocks; blk++) {
        for (int j = 0; j < KINDS; j++) {
            int k = (j + blk) % KINDS;           /* rotate the order every block */
            double t0 = now();
            for (long i = 0; i < ops; i++) {
                switch (k) {
                case CAIRN:
                    if (cairn_tx_begin(pool)) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
                    cairn_tx_add(field, sizeof *field);
                    *(volatile uint64_t *)field = (uint64_t)i;
                    if (cairn_tx_commit()) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
                    break;
                case REPLICA_READ:
                    img[24] = (unsigned char)*data;  /* the snapshot's read */
                    /* fall through */
                case REPLICA:
                    img[8] = (unsigned char)i;
                    nt_line(rec, img);
                    _mm_sfence();
                    *data = (uint64_t)i;
                    flush_line(data);
                    _mm_sfence();
                    nt_line(rec, img);
                    _mm_sfence();
                    break;
                }
            }
            t[k][blk] = (now() - t0) * 1e9 / (double)ops;
        }
        for (int k = 0; k < KINDS; k++) ratio[k][blk] = t[k][blk] / t[CAIRN][blk];
    }
    for (int k = 0; k < KINDS; k++)
        printf("{\"kind\":\"%s\",\"ns_per_op\":%.1f,\"ratio_to_cairn\":%.3f,\"blocks\":%d,"
               "\"ops_per_block\":%ld,\"flush\":\"%s\"}\n", name[k], median(t[k], blocks),
               median(ratio[k], blocks), blocks, ops,
               flush_names[kind]);
    cairn_free(obj);
    cairn_free(rep);
    cairn_pool_close(pool);
    unlink(path);
    return 0;
}
