/*
 * flush_floor.c -- cairn-flush-floor: what one write-back round costs here.
 *
 *   cairn-flush-floor --pool FILE [--max-rounds K]
 *
 * A round is what a persistent-memory library cannot avoid between two
 * ordered steps: a store, a flush of its line (clwb, else clflushopt, else
 * clflush, by CPUID, as libcairn and libpmem choose) and an sfence. An
 * operation that needs K ordered steps costs at least K rounds, whatever the
 * library; printing the cost of K = 1..max rounds on the same mapping type
 * the benchmark uses (a file on /dev/shm) puts its times in proportion.
 * One JSON line per K: {"mode":"floor","rounds":K,"ns_per_op":N,"flush":"clwb"},
 * then the same with whole lines written by non-temporal stores ("flush":"nt").
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "flush_util.h"

static double measure(volatile uint64_t *lines, int rounds, long iters)
{
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        for (int r = 0; r < rounds; r++) {
            volatile uint64_t *p = lines + (size_t)r * 8;  /* one line per round */
            *p = (uint64_t)i;
            flush_line(p);
            __builtin_ia32_sfence();
        }
    }
    return (now() - t0) * 1e9 / (double)iters;
}

/* The same with each round's line written whole by non-temporal stores
 * (what libcairn does for its undo records and commit mark, and PMDK for
 * its logs): no read for ownership, nothing to write back. */
__attribute__((target("sse2")))
static double measure_nt(volatile uint64_t *lines, int rounds, long iters)
{
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        __m128i v = _mm_set1_epi64x(i);
        for (int r = 0; r < rounds; r++) {
            __m128i *p = (__m128i *)(lines + (size_t)(r + 64) * 8);
            for (int q = 0; q < 4; q++) _mm_stream_si128(p + q, v);
            __builtin_ia32_sfence();
        }
    }
    return (now() - t0) * 1e9 / (double)iters;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int max_rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--pool")) path = argv[i + 1];
        else if (!strcmp(argv[i], "--max-rounds")) max_rounds = atoi(argv[i + 1]);
    }
    if (!path || max_rounds < 1 || max_rounds > 64) {
        fprintf(stderr, "usage: cairn-flush-floor --pool FILE [--max-rounds K]\n");
        return 2;
    }
    pick_flush();

    size_t size = 1 << 20;
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size)) {
        perror(path);
        return 1;
    }
    volatile uint64_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    measure(map, max_rounds, 20000);                   /* warm-up */
    for (int k = 1; k <= max_rounds; k++) {
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {            /* least disturbed of 5 */
            double ns = measure(map, k, 50000);
            best = ns < best ? ns : best;
        }
        printf("{\"mode\":\"floor\",\"rounds\":%d,\"ns_per_op\":%.1f,\"flush\":\"%s\"}\n",
               k, best, flush_names[kind]);
    }
    measure_nt(map, max_rounds, 20000);
    for (int k = 1; k <= max_rounds; k++) {
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double ns = measure_nt(map, k, 50000);
            best = ns < best ? ns : best;
        }
        printf("{\"mode\":\"floor\",\"rounds\":%d,\"ns_per_op\":%.1f,\"flush\":\"nt\"}\n",
               k, best);
    }
    munmap((void *)map, size);
    close(fd);
    unlink(path);
    return 0;
}
