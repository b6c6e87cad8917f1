/*
 * kernels.c -- NVL-C's HPC kernels (seed 004, section 5): STREAM triad,
 * matrix multiply and Jacobi, each checkpointed by one transaction per
 * result row (per chunk of the triad's vector) that writes the row and
 * bumps a row counter kept next to the data.
 *
 * Two builds of this one file (bench/hpc/CMakeLists.txt):
 *   hpc-dram    clang -O2: the arrays in DRAM (malloc), no transactions,
 *               the reference NVL-C normalizes against;
 *   hpc-cairn   cairn-cc -O2 -DHPC_CAIRN: the arrays and the counter in a
 *               pool, a CAIRN_TX per row. Every store into the pool is
 *               logged by cairn-cc (NVL-C's default "backup" clause) unless
 *               --clobber is given: then the transaction first calls
 *               cairn_tx_clobber on the row it is about to overwrite
 *               (NVL-C's "clobber" clause), so the row's stores take no
 *               undo record and only the counter is backed up.
 *
 *   hpc-BUILD KERNEL POOL N REPS [--clobber]
 *     KERNEL  triad (N doubles a vector, chunks of ROW), matmul (N x N),
 *             jacobi (N x N grid)
 *     REPS    triad: passes over the vectors; jacobi: sweeps; matmul: products
 *
 * Prints one line: kernel, CPU seconds spent in the kernel (the pool's creation
 * and the inputs' initialization left out), rows committed, a checksum of
 * the result, and the calling thread's cairn_stats (undo records and bytes,
 * logs found covered already, lines flushed, fences; zeros for hpc-dram).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROW 4096   /* triad: elements per checkpoint transaction (32 KiB) */

struct state {
    uint64_t rows_done;   /* the checkpoint counter: rows committed */
    double *a, *b, *c;    /* triad: a = b + s*c; matmul: c = a*b; jacobi: a <-> b */
};

#ifdef HPC_CAIRN
#include <cairn.h>
static cairn_pool *pool;
static int clobber;
/* A checkpoint transaction that overwrites [ROWP, ROWP + LEN). */
#define CHECKPOINT(rowp, len)                                                 \
    CAIRN_TX(pool)                                                            \
        for (int ckpt_once_ = (clobber ? cairn_tx_clobber((rowp), (len)) : (void)0, 1); \
             ckpt_once_; ckpt_once_ = 0)
static void *alloc_array(size_t bytes) { return cairn_alloc(pool, bytes); }
#else
#define CHECKPOINT(rowp, len) if ((void)(rowp), (void)(len), 1)
static void *alloc_array(size_t bytes) { return calloc(1, bytes); }
#endif

/* CPU time of this thread: on a machine shared with other jobs, wall-clock
 * time mostly measures the scheduler */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double checksum(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * (double)(i % 7 + 1);
    return s;
}

/* The inputs of KERNEL over N (its elements: ELEMS). */
static void init(const char *kernel, struct state *st, size_t n, size_t elems)
{
    if (!strcmp(kernel, "triad")) {
        for (size_t i = 0; i < elems; i++) {
            st->b[i] = (double)(i % 1000) * 0.5;
            st->c[i] = (double)(i % 333) * 0.25;
        }
    } else if (!strcmp(kernel, "matmul")) {
        for (size_t i = 0; i < elems; i++) {
            st->a[i] = (double)(i % 17) - 8.0;
            st->b[i] = (double)(i % 13) * 0.5;
        }
    } else {
        for (size_t i = 0; i < elems; i++)   /* hot top and left edges */
            st->a[i] = st->b[i] = (i < n || i % n == 0) ? 1.0 : 0.0;
    }
}

static double triad(struct state *st, size_t n, int reps)
{
    const double s = 3.0;
    double t0 = now();
    for (int r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i += ROW) {
            size_t len = n - i < ROW ? n - i : ROW;
            double *a = st->a, *b = st->b, *c = st->c;
            CHECKPOINT(&a[i], len * sizeof(double)) {
                for (size_t j = i; j < i + len; j++)
                    a[j] = b[j] + s * c[j];
                st->rows_done++;
            }
        }
    return now() - t0;
}

static double matmul(struct state *st, size_t n, int reps)
{
    double t0 = now();
    for (int r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i++) {
            double *a = st->a, *b = st->b, *c = st->c;
            CHECKPOINT(&c[i * n], n * sizeof(double)) {
                double *ci = &c[i * n];
                for (size_t j = 0; j < n; j++)
                    ci[j] = 0;
                for (size_t k = 0; k < n; k++) {
                    double aik = a[i * n + k];
                    const double *bk = &b[k * n];
                    for (size_t j = 0; j < n; j++)
                        ci[j] += aik * bk[j];
                }
                st->rows_done++;
            }
        }
    return now() - t0;
}

static double jacobi(struct state *st, size_t n, int reps)
{
    double t0 = now();
    for (int r = 0; r < reps; r++) {
        const double *src = r % 2 ? st->b : st->a;
        double *dst = r % 2 ? st->a : st->b;
        for (size_t i = 1; i + 1 < n; i++) {
            CHECKPOINT(&dst[i * n + 1], (n - 2) * sizeof(double)) {
                for (size_t j = 1; j + 1 < n; j++)
                    dst[i * n + j] = 0.25 * (src[(i - 1) * n + j] + src[(i + 1) * n + j] +
                                             src[i * n + j - 1] + src[i * n + j + 1]);
                st->rows_done++;
            }
        }
    }
    return now() - t0;
}

int main(int argc, char **argv)
{
    char *end;
    if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "--clobber"))) {
        fprintf(stderr, "usage: %s triad|matmul|jacobi POOL N REPS [--clobber]\n", argv[0]);
        return 2;
    }
    const char *kernel = argv[1], *path = argv[2];
    size_t n = strtoull(argv[3], &end, 10);
    int reps = atoi(argv[4]);
    if (*end || n < 3 || reps < 1) {
        fprintf(stderr, "%s: N must be at least 3 and REPS at least 1\n", argv[0]);
        return 2;
    }
    size_t elems = strcmp(kernel, "triad") ? n * n : n;
    size_t bytes = elems * sizeof(double);
    struct state *st;
    if (strcmp(kernel, "triad") && strcmp(kernel, "matmul") && strcmp(kernel, "jacobi")) {
        fprintf(stderr, "%s: unknown kernel %s; use triad, matmul or jacobi\n", argv[0], kernel);
        return 2;
    }
#ifdef HPC_CAIRN
    clobber = argc == 6;
    pool = cairn_pool_create(path, "cairn-hpc", 3 * bytes + ((size_t)64 << 20));
    if (!pool) {
        fprintf(stderr, "%s: cannot create pool %s: %s; remove it or pick another path\n",
                argv[0], path, cairn_errormsg());
        return 1;
    }
    st = CAIRN_ROOT(pool, struct state);
    int ok = 0;
    /* One transaction allocates and fills the inputs: stores into objects
     * it allocated take no undo record. */
    CAIRN_TX(pool) {
        if ((st->a = alloc_array(bytes)) && (st->b = alloc_array(bytes)) &&
            (st->c = alloc_array(bytes))) {
            init(kernel, st, n, elems);
            ok = 1;
        }
    }
    cairn_stats_reset();
#else
    (void)path;
    if (argc == 6) {
        fprintf(stderr, "%s: --clobber needs the cairn build (hpc-cairn)\n", argv[0]);
        return 2;
    }
    st = calloc(1, sizeof *st);
    int ok = st && (st->a = alloc_array(bytes)) && (st->b = alloc_array(bytes)) &&
             (st->c = alloc_array(bytes));
    if (ok)
        init(kernel, st, n, elems);
#endif
    if (!ok) {
        fprintf(stderr, "%s: out of memory for 3 x %zu bytes; lower N\n", argv[0], bytes);
        return 1;
    }
    double secs;
    const double *result;
    if (!strcmp(kernel, "triad")) {
        secs = triad(st, n, reps);
        result = st->a;
    } else if (!strcmp(kernel, "matmul")) {
        secs = matmul(st, n, reps);
        result = st->c;
    } else {
        secs = jacobi(st, n, reps);
        result = reps % 2 ? st->b : st->a;
    }
    unsigned long long undo_rec = 0, undo_bytes = 0, skipped = 0, flushes = 0, fences = 0;
#ifdef HPC_CAIRN
    struct cairn_stats cs;
    cairn_stats_get(&cs);
    undo_rec = cs.log_entries;
    undo_bytes = cs.log_bytes;
    skipped = cs.log_skipped;
    flushes = cs.flushes;
    fences = cs.ofences + cs.dfences;
#endif
    printf("%s seconds %.6f rows %llu checksum %.6e undo_records %llu undo_bytes %llu "
           "log_skipped %llu flushes %llu fences %llu\n", kernel, secs,
           (unsigned long long)st->rows_done, checksum(result, elems), undo_rec, undo_bytes,
           skipped, flushes, fences);
#ifdef HPC_CAIRN
    cairn_pool_close(pool);
#endif
    return 0;
}
