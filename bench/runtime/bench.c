/*
 * bench.c -- driver of `cairn bench runtime`, linked with one backend.
 *
 * Modes (one JSON object per line on stdout, read by
 * python/cairn/commands/bench.py):
 *
 *   micro --pool FILE --pool-size BYTES --threads N --seconds S --warmup S
 *         [--ops a,b,...]
 *       Throughput of each operation: N threads, each on its own objects,
 *       warm up for S seconds, then run for S seconds; ops and time summed.
 *   count --pool FILE --pool-size BYTES --iterations K [--ops a,b,...]
 *       One thread. Around K iterations of each operation it raises SIGUSR1
 *       (start) and SIGUSR2 (stop); cairn-stepcount, the tracer, counts the
 *       flush, fence and non-temporal store instructions executed between.
 *       Both signals are ignored when nobody traces us.
 *   fill  --pool FILE --pool-size BYTES [--max-objects M]
 *       Create a pool and fill it with a list of 1 KiB nodes hung off the
 *       root until allocation fails, then free BENCH_FREE_AFTER_FILL nodes.
 *   open  --pool FILE      Time the open of that pool (and what follows).
 *   churn --pool FILE      Update the list in transactions until killed.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum op_kind { OP_TX_UPDATE8, OP_TX_RANGES, OP_ALLOC_FREE, OP_TX_ALLOC_FREE, OP_TX_INSERT_DELETE };

struct op {
    const char *name;
    enum op_kind kind;
    size_t size;
};

static const struct op all_ops[] = {
    {"tx_update_8B",        OP_TX_UPDATE8,    8},
    {"tx_update_8x64B",     OP_TX_RANGES,     BENCH_TX_RANGES * BENCH_RANGE_BYTES},
    {"alloc_free_64B",      OP_ALLOC_FREE,    64},
    {"alloc_free_1KiB",     OP_ALLOC_FREE,    1024},
    {"alloc_free_4KiB",     OP_ALLOC_FREE,    4096},
    {"tx_alloc_free_64B",   OP_TX_ALLOC_FREE, 64},
    {"tx_alloc_free_1KiB",  OP_TX_ALLOC_FREE, 1024},
    {"tx_alloc_free_4KiB",  OP_TX_ALLOC_FREE, 4096},
    {"tx_insert_delete_64B",  OP_TX_INSERT_DELETE, 64},
    {"tx_insert_delete_1KiB", OP_TX_INSERT_DELETE, 1024},
};
#define N_OPS (sizeof all_ops / sizeof all_ops[0])

static const struct bench_backend *be = &bench_backend;

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_ready(void)
{
    printf("{\"event\":\"running\",\"impl\":\"%s\",\"pid\":%d}\n", be->name, (int)getpid());
    fflush(stdout);
}

static inline void run_op(void *ts, const struct op *op, uint64_t i)
{
    switch (op->kind) {
    case OP_TX_UPDATE8:    be->tx_update8(ts, i); break;
    case OP_TX_RANGES:     be->tx_update_ranges(ts, i); break;
    case OP_ALLOC_FREE:    be->alloc_free(ts, op->size); break;
    case OP_TX_ALLOC_FREE: be->tx_alloc_free(ts, op->size); break;
    case OP_TX_INSERT_DELETE: be->tx_insert_delete(ts, i, op->size); break;
    }
}

static void die(const char *what)
{
    const char *why = be->errormsg ? be->errormsg() : NULL;
    fprintf(stderr, "bench %s: %s failed: %s%s%s\n", be->name, what,
            strerror(errno), why && *why ? ": " : "", why ? why : "");
    exit(1);
}

/* ---- options ------------------------------------------------------------ */

struct options {
    const char *mode, *pool, *ops;
    size_t pool_size;
    int threads;
    double seconds, warmup;
    uint64_t iterations, max_objects;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: %s micro|count|fill|open|churn --pool FILE [--pool-size BYTES]\n"
            "       [--threads N] [--seconds S] [--warmup S] [--iterations K]\n"
            "       [--ops LIST] [--max-objects M]\n", program_invocation_short_name);
    exit(2);
}

static struct options parse(int argc, char **argv)
{
    struct options o = {.pool_size = (size_t)256 << 20, .threads = 1,
                        .seconds = 1.0, .warmup = 0.3, .iterations = 200,
                        .max_objects = UINT64_MAX};
    if (argc < 2)
        usage();
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(k, "--pool")) o.pool = v;
        else if (!strcmp(k, "--pool-size")) o.pool_size = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--threads")) o.threads = atoi(v);
        else if (!strcmp(k, "--seconds")) o.seconds = atof(v);
        else if (!strcmp(k, "--warmup")) o.warmup = atof(v);
        else if (!strcmp(k, "--iterations")) o.iterations = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--ops")) o.ops = v;
        else if (!strcmp(k, "--max-objects")) o.max_objects = strtoull(v, NULL, 0);
        else usage();
    }
    if (!o.pool || o.threads < 1)
        usage();
    return o;
}

/* Is op selected by a comma-separated list (NULL: all)? */
static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

static void print_counts(const struct bench_counts *c, double per)
{
    printf(",\"self\":{\"flushes\":%.3f,\"ofences\":%.3f,\"dfences\":%.3f,"
           "\"log_entries\":%.3f,\"log_bytes\":%.3f}",
           c->flushes / per, c->ofences / per, c->dfences / per,
           c->log_entries / per, c->log_bytes / per);
}

/* ---- micro: throughput with N threads ---------------------------------- */

struct worker {
    pthread_t th;
    int tid;
    uint64_t ops;
    double t0, t1;
    struct bench_counts counts;
};

static pthread_barrier_t barrier;
static atomic_int stop_flag;
static const struct op *current_op;   /* NULL: workers exit */

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    void *ts = be->thread_init(w->tid);
    if (!ts)
        die("per-thread setup");
    pthread_barrier_wait(&barrier);
    for (;;) {
        pthread_barrier_wait(&barrier);              /* A: op chosen */
        const struct op *op = current_op;
        if (!op)
            break;
        for (uint64_t i = 0; !atomic_load_explicit(&stop_flag, memory_order_relaxed); i++)
            run_op(ts, op, i);                       /* warm-up */
        pthread_barrier_wait(&barrier);              /* B: warm-up over */
        pthread_barrier_wait(&barrier);              /* B2: stop flag cleared */
        if (be->counts_reset)
            be->counts_reset();
        uint64_t n = 0;
        w->t0 = bench_now();
        while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
            run_op(ts, op, n);
            n++;
        }
        w->t1 = bench_now();
        w->ops = n;
        memset(&w->counts, 0, sizeof w->counts);
        if (be->counts_get)
            be->counts_get(&w->counts);
        pthread_barrier_wait(&barrier);              /* C: results in */
    }
    be->thread_fini(ts);
    return NULL;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static int mode_micro(const struct options *o)
{
    unlink(o->pool);
    if (be->pool_create(o->pool, o->pool_size))
        die("pool create");
    int n = o->threads;
    struct worker *w = calloc((size_t)n, sizeof *w);
    pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
    for (int t = 0; t < n; t++) {
        w[t].tid = t;
        pthread_create(&w[t].th, NULL, worker_main, &w[t]);
    }
    pthread_barrier_wait(&barrier);                  /* all set up */
    for (size_t k = 0; k < N_OPS; k++) {
        const struct op *op = &all_ops[k];
        if (!selected(o->ops, op->name))
            continue;
        current_op = op;
        atomic_store(&stop_flag, 0);
        pthread_barrier_wait(&barrier);              /* A */
        sleep_s(o->warmup);
        atomic_store(&stop_flag, 1);
        pthread_barrier_wait(&barrier);              /* B */
        atomic_store(&stop_flag, 0);
        pthread_barrier_wait(&barrier);              /* B2 */
        sleep_s(o->seconds);
        atomic_store(&stop_flag, 1);
        pthread_barrier_wait(&barrier);              /* C */

        uint64_t ops = 0;
        double t0 = w[0].t0, t1 = w[0].t1, busy = 0;
        struct bench_counts sum = {0};
        for (int t = 0; t < n; t++) {
            ops += w[t].ops;
            busy += w[t].t1 - w[t].t0;
            t0 = w[t].t0 < t0 ? w[t].t0 : t0;
            t1 = w[t].t1 > t1 ? w[t].t1 : t1;
            sum.flushes += w[t].counts.flushes;
            sum.ofences += w[t].counts.ofences;
            sum.dfences += w[t].counts.dfences;
            sum.log_entries += w[t].counts.log_entries;
            sum.log_bytes += w[t].counts.log_bytes;
        }
        double wall = t1 - t0;
        printf("{\"mode\":\"micro\",\"impl\":\"%s\",\"op\":\"%s\",\"size\":%zu,"
               "\"threads\":%d,\"ops\":%llu,\"seconds\":%.6f,"
               "\"ops_per_s\":%.1f,\"ns_per_op\":%.1f",
               be->name, op->name, op->size, n, (unsigned long long)ops, wall,
               ops / wall, busy * 1e9 / (double)(ops ? ops : 1));
        if (be->counts_get)
            print_counts(&sum, (double)(ops ? ops : 1));
        printf("}\n");
        fflush(stdout);
    }
    current_op = NULL;
    pthread_barrier_wait(&barrier);                  /* workers leave */
    for (int t = 0; t < n; t++)
        pthread_join(w[t].th, NULL);
    free(w);
    be->pool_close();
    unlink(o->pool);
    return 0;
}

/* ---- count: markers for cairn-stepcount -------------------------------- */

static int mode_count(const struct options *o)
{
    signal(SIGUSR1, SIG_IGN);     /* a tracer still sees them; nobody else dies */
    signal(SIGUSR2, SIG_IGN);
    unlink(o->pool);
    if (be->pool_create(o->pool, o->pool_size))
        die("pool create");
    void *ts = be->thread_init(0);
    if (!ts)
        die("per-thread setup");
    for (size_t k = 0; k < N_OPS; k++) {
        const struct op *op = &all_ops[k];
        if (!selected(o->ops, op->name))
            continue;
        for (uint64_t i = 0; i < 200; i++)
            run_op(ts, op, i);
        struct bench_counts c = {0};
        if (be->counts_reset)
            be->counts_reset();
        raise(SIGUSR1);
        for (uint64_t i = 0; i < o->iterations; i++)
            run_op(ts, op, i);
        raise(SIGUSR2);
        if (be->counts_get)
            be->counts_get(&c);
        printf("{\"mode\":\"count\",\"impl\":\"%s\",\"op\":\"%s\",\"iterations\":%llu",
               be->name, op->name, (unsigned long long)o->iterations);
        if (be->counts_get)
            print_counts(&c, (double)o->iterations);
        printf("}\n");
        fflush(stdout);
    }
    be->thread_fini(ts);
    be->pool_close();
    unlink(o->pool);
    return 0;
}

/* ---- the open-time benchmark ------------------------------------------ */

static int mode_fill(const struct options *o)
{
    struct fill_result r = {0};
    unlink(o->pool);
    double t0 = bench_now();
    if (be->list_fill(o->pool, o->pool_size, o->max_objects, &r))
        die("list fill");
    printf("{\"mode\":\"fill\",\"impl\":\"%s\",\"pool_size\":%zu,\"objects\":%llu,"
           "\"full\":%s,\"seconds\":%.3f,\"base\":\"0x%llx\"}\n",
           be->name, o->pool_size, (unsigned long long)r.objects,
           r.alloc_failed ? "true" : "false", bench_now() - t0,
           (unsigned long long)r.base);
    return 0;
}

static int mode_open(const struct options *o)
{
    struct open_result r = {0};
    if (be->list_open(o->pool, &r))
        die("pool open");
    printf("{\"mode\":\"open\",\"impl\":\"%s\",\"open_s\":%.6f,\"first_alloc_s\":%.6f,"
           "\"walk_s\":%.6f,\"background_s\":%.6f,\"objects\":%llu,\"payload_ok\":%s,"
           "\"base\":\"0x%llx\"}\n",
           be->name, r.open_s, r.first_alloc_s, r.walk_s, r.background_s,
           (unsigned long long)r.objects, r.checksum_ok ? "true" : "false",
           (unsigned long long)r.base);
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *forced = getenv(strcmp(be->name, "cairn") ? "PMEM_IS_PMEM_FORCE"
                                                          : "CAIRN_PMEM_FORCE");
    printf("{\"mode\":\"info\",\"impl\":\"%s\",\"version\":\"%s\","
           "\"forced_flushes\":%s}\n", be->name, be->version,
           forced && !strcmp(forced, "1") ? "true" : "false");
    if (!strcmp(o.mode, "micro")) return mode_micro(&o);
    if (!strcmp(o.mode, "count")) return mode_count(&o);
    if (!strcmp(o.mode, "fill")) return mode_fill(&o);
    if (!strcmp(o.mode, "open")) return mode_open(&o);
    if (!strcmp(o.mode, "churn")) {
        if (be->list_churn(o.pool))
            die("churn");
        return 0;
    }
    usage();
}
