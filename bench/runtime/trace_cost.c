/*
 * trace_cost.c -- cairn-trace-cost: what CAIRN_TRACE's hooks cost.
 *
 *   cairn-trace-cost POOL N    N x (one 8-byte transaction, a 64-byte
 *                              allocation and its free); prints ns per
 *                              iteration
 *
 * The loop runs 13 trace hooks per iteration. Run it with and without
 * CAIRN_TRACE for the cost of recording, and under cairn-stepcount (the loop
 * is bracketed by SIGUSR1/SIGUSR2) for the exact instructions it executes;
 * built against an older libcairn.a it gives the cost of the hooks when
 * tracing is off. docs/RESULTS.md, "Traces", has the numbers.
 */
#define _POSIX_C_SOURCE 200809L
#include <cairn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct root { uint64_t a[8]; };

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cairn-trace-cost POOL N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    unlink(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "trace-cost", 8 << 20);
    if (!p) {
        fprintf(stderr, "%s\n", cairn_errormsg());
        return 1;
    }
    struct root *r = CAIRN_ROOT(p, struct root);
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    raise(SIGUSR1);
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        CAIRN_TX(p) { cairn_tx_add(&r->a[0], 8); r->a[0]++; }
        cairn_free(cairn_alloc(p, 64));
    }
    double t1 = now_ns();
    raise(SIGUSR2);
    printf("%.1f\n", n ? (t1 - t0) / n : 0.0);
    cairn_pool_close(p);
    unlink(argv[1]);
    return 0;
}
