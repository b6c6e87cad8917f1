/*
 * ycsb.c -- a YCSB driver in C for the structures behind ycsb.h.
 *
 * Loads RECORDS records, then runs the workloads given, in order, on the
 * loaded data (YCSB's core workloads; Breeze Table II):
 *
 *   A  50% read, 50% update                 zipfian
 *   B  95% read,  5% update                 zipfian
 *   C  100% read                            zipfian
 *   D  95% read,  5% insert                 latest
 *   E  95% scan (1-100 records), 5% insert  zipfian   (ordered structures)
 *   F  50% read, 50% read-modify-write      zipfian
 *
 * Key choosers are YCSB's generators: uniform, scrambled zipfian (theta
 * 0.99, Gray et al.'s algorithm with the zeta sum grown as records are
 * inserted) and latest (the newest records most often); --dist replaces
 * each workload's own. Key number i is stored as the 64-bit key
 * fnv1a64(i), so insertion order is not key order (YCSB's hashed inserts).
 * A value is VALUE_SIZE bytes; an update replaces all of it.
 *
 * With --threads T > 1 each thread runs OPS/T operations and holds one
 * lock around every call into the structure (the same for every build).
 * Per workload the driver reports throughput (operations per second of
 * wall time, and per second of CPU time its threads ran: the steadier
 * figure on a shared machine), p50 and p99 latency (per operation,
 * clock_gettime around the call), and a digest of what the reads
 * returned; --check adds a digest of the whole content after the
 * workloads (every key number read back, whole values hashed) so that
 * builds can be compared and a reopened pool verified (--reopen: no load,
 * no workloads, only the content digest over --keys key numbers).
 *
 *   ycsb-STRUCT-BUILD [--pool PATH] [--pool-size BYTES] [--records N]
 *       [--ops N] [--workloads LOAD,A,B,C,F,D,E] [--dist DIST]
 *       [--value-size B] [--threads T] [--seed S] [--check]
 *       [--delete-every K] [--reopen --keys N] [--json FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ycsb.h"

/* Defined only in the build whose library is linked (weak: NULL elsewhere). */
extern const char *cairn_errormsg(void) __attribute__((weak));
extern const char *pmemobj_errormsg(void) __attribute__((weak));

#ifndef YCSB_BUILD
#define YCSB_BUILD "volatile"
#endif

enum op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW };
enum dist { DIST_DEFAULT, DIST_UNIFORM, DIST_ZIPFIAN, DIST_LATEST };
static const char *const dist_names[] = {"default", "uniform", "zipfian", "latest"};

struct workload {
    char name;
    double read, update, insert, scan, rmw;
    enum dist dist;
};

static const struct workload workloads[] = {
    {'A', 0.50, 0.50, 0, 0, 0, DIST_ZIPFIAN},
    {'B', 0.95, 0.05, 0, 0, 0, DIST_ZIPFIAN},
    {'C', 1.00, 0, 0, 0, 0, DIST_ZIPFIAN},
    {'D', 0.95, 0, 0.05, 0, 0, DIST_LATEST},
    {'E', 0, 0, 0.05, 0.95, 0, DIST_ZIPFIAN},
    {'F', 0.50, 0, 0, 0, 0.50, DIST_ZIPFIAN},
};

#define ZIPF_THETA 0.99
#define MAX_SCAN 100

static struct {
    const char *pool;
    size_t pool_size;
    uint64_t records, ops, keys;
    const char *workloads;
    enum dist dist;
    size_t value_size;
    int threads;
    uint64_t seed;
    int check, reopen;
    uint64_t delete_every;
    const char *json;
} opt = {
    .pool = "/dev/shm/ycsb.pool", .records = 10000, .ops = 10000,
    .workloads = "LOAD,A,B,C,F,D,E", .value_size = 1024, .threads = 1, .seed = 1,
};

/* ---- random numbers and key choosers ------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

static uint64_t fnv1a64(uint64_t v)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t key_of(uint64_t keynum) { return fnv1a64(keynum); }

/* YCSB's ZipfianGenerator over [0, n): zeta(n) is kept and grown as n does. */
struct zipf {
    uint64_t n;
    double zetan, zeta2, alpha, eta;
};

static double zeta_add(uint64_t from, uint64_t to, double sum)
{
    for (uint64_t i = from; i < to; i++)
        sum += 1.0 / pow((double)(i + 1), ZIPF_THETA);
    return sum;
}

static void zipf_grow(struct zipf *z, uint64_t n)
{
    if (n <= z->n)
        return;
    z->zetan = zeta_add(z->n, n, z->zetan);
    z->n = n;
    z->eta = (1 - pow(2.0 / (double)n, 1 - ZIPF_THETA)) / (1 - z->zeta2 / z->zetan);
}

static void zipf_init(struct zipf *z, uint64_t n)
{
    memset(z, 0, sizeof *z);
    z->zeta2 = zeta_add(0, 2, 0);
    z->alpha = 1.0 / (1 - ZIPF_THETA);
    zipf_grow(z, n < 2 ? 2 : n);
}

static uint64_t zipf_next(struct zipf *z, uint64_t *s)
{
    double u = uniform01(s), uz = u * z->zetan;
    if (uz < 1.0)
        return 0;
    if (uz < 1.0 + pow(0.5, ZIPF_THETA))
        return 1;
    uint64_t v = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1, z->alpha));
    return v >= z->n ? z->n - 1 : v;
}

/* Shared insert counter: key numbers [0, published) are in the structure. */
static _Atomic uint64_t published;
static pthread_mutex_t ds_lock = PTHREAD_MUTEX_INITIALIZER;

struct chooser {
    enum dist dist;
    struct zipf zipf;
};

static uint64_t choose(struct chooser *c, uint64_t *rng)
{
    uint64_t n = atomic_load(&published);
    switch (c->dist) {
    case DIST_UNIFORM:
        return splitmix64(rng) % n;
    case DIST_LATEST:
        zipf_grow(&c->zipf, n);
        return n - 1 - zipf_next(&c->zipf, rng) % n;
    default:   /* scrambled zipfian: popular keys spread over the key space */
        zipf_grow(&c->zipf, n);
        return fnv1a64(zipf_next(&c->zipf, rng)) % n;
    }
}

/* ---- values and digests --------------------------------------------------- */

/* A value written for (key number, version): a random base made once,
 * its first and last 8 bytes stamped with the pair (a memcpy and two
 * stamps, so the driver's cost per write stays small next to the
 * structure's). */
static unsigned char *value_base;

static void make_value(unsigned char *buf, uint64_t keynum, uint64_t version)
{
    uint64_t s = keynum * 0x2545f4914f6cdd1dULL + version;
    uint64_t head = splitmix64(&s), tail = splitmix64(&s);
    size_t n = opt.value_size < 8 ? opt.value_size : 8;
    memcpy(buf, value_base, opt.value_size);
    memcpy(buf, &head, n);
    memcpy(buf + opt.value_size - n, &tail, n);
}

static uint64_t digest_mix(uint64_t d, uint64_t v)
{
    return (d ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
}

/* Digest of a value: its first and last 8 bytes and its length (cheap on
 * the timed path; content checks hash the whole value). */
static uint64_t value_tag(const unsigned char *buf)
{
    uint64_t a = 0, b = 0;
    size_t n = opt.value_size < 8 ? opt.value_size : 8;
    memcpy(&a, buf, n);
    memcpy(&b, buf + opt.value_size - n, n);
    return digest_mix(digest_mix(0, a), b);
}

static uint64_t value_hash(const unsigned char *buf)
{
    uint64_t d = 0;
    for (size_t i = 0; i < opt.value_size; i++)
        d = digest_mix(d, buf[i]);
    return d;
}

/* ---- running a phase ------------------------------------------------------ */

struct thread_run {
    pthread_t tid;
    int index;
    const struct workload *w;   /* NULL: the load phase */
    uint64_t first, count;      /* load: key numbers first..first+count */
    uint64_t rng;
    struct chooser chooser;
    uint32_t *lat_ns;
    uint64_t done, not_found, failed, digest;
    uint64_t cpu_ns;            /* CPU time this thread ran during the phase */
    unsigned char *buf;
    uint64_t *scan_keys;
};

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void lock(void)
{
    if (opt.threads > 1)
        pthread_mutex_lock(&ds_lock);
}

static inline void unlock(void)
{
    if (opt.threads > 1)
        pthread_mutex_unlock(&ds_lock);
}

static enum op pick_op(const struct workload *w, uint64_t *rng)
{
    double u = uniform01(rng);
    if ((u -= w->read) < 0) return OP_READ;
    if ((u -= w->update) < 0) return OP_UPDATE;
    if ((u -= w->insert) < 0) return OP_INSERT;
    if ((u -= w->scan) < 0) return OP_SCAN;
    return w->rmw > 0 ? OP_RMW : OP_READ;
}

static int do_insert(struct thread_run *t)
{
    lock();
    uint64_t keynum = atomic_load(&published);
    make_value(t->buf, keynum, 0);
    int r = ds_insert(key_of(keynum), t->buf);
    if (r == 0)
        atomic_store(&published, keynum + 1);
    unlock();
    return r;
}

static int one_op(struct thread_run *t, uint64_t i)
{
    const struct workload *w = t->w;
    enum op op = pick_op(w, &t->rng);
    int r = 0;
    if (op == OP_INSERT)
        return do_insert(t);
    uint64_t keynum = choose(&t->chooser, &t->rng);
    uint64_t key = key_of(keynum);
    switch (op) {
    case OP_READ:
        lock();
        r = ds_read(key, t->buf);
        unlock();
        t->digest = digest_mix(t->digest, r == 0 ? value_tag(t->buf) : key);
        break;
    case OP_UPDATE:
        /* version: unique per (thread, operation), so every update differs */
        make_value(t->buf, keynum, ((uint64_t)t->index << 40) + i + 1);
        lock();
        r = ds_update(key, t->buf);
        unlock();
        break;
    case OP_RMW:
        lock();
        r = ds_read(key, t->buf);
        if (r == 0) {
            t->buf[0]++;
            t->buf[opt.value_size - 1]--;
            r = ds_update(key, t->buf);
        }
        unlock();
        t->digest = digest_mix(t->digest, r == 0 ? value_tag(t->buf) : key);
        break;
    case OP_SCAN: {
        int len = 1 + (int)(splitmix64(&t->rng) % MAX_SCAN);
        lock();
        int got = ds_scan(key, len, t->scan_keys, t->buf);
        unlock();
        if (got < 0)
            return -1;
        for (int k = 0; k < got; k++)
            t->digest = digest_mix(t->digest, t->scan_keys[k]);
        if (got > 0)
            t->digest = digest_mix(t->digest, value_tag(t->buf));
        break;
    }
    default:
        break;
    }
    return r;
}

static void *thread_main(void *arg)
{
    struct thread_run *t = arg;
    uint64_t cpu0 = thread_cpu_ns();
    for (uint64_t i = 0; i < t->count; i++) {
        uint64_t t0 = now_ns();
        int r;
        if (!t->w) {
            make_value(t->buf, t->first + i, 0);
            lock();
            r = ds_insert(key_of(t->first + i), t->buf);
            unlock();
        } else {
            r = one_op(t, i);
        }
        uint64_t dt = now_ns() - t0;
        t->lat_ns[i] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
        if (r < 0) {
            t->failed++;
            break;
        }
        t->not_found += r > 0;
        t->done++;
    }
    t->cpu_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

struct phase_result {
    char name[8];
    const char *dist;
    uint64_t ops, not_found;
    double seconds, cpu_seconds, ops_per_s, ops_per_cpu_s, p50_ns, p99_ns;
    uint64_t digest;
};

static int run_phase(const struct workload *w, struct phase_result *out)
{
    int nt = opt.threads;
    uint64_t total = w ? opt.ops : opt.records;
    struct thread_run *ts = calloc((size_t)nt, sizeof *ts);
    uint32_t *lat = calloc(total ? total : 1, sizeof *lat);
    if (!ts || !lat) {
        fprintf(stderr, "ycsb: out of memory for %" PRIu64 " latencies\n", total);
        return -1;
    }
    enum dist dist = w ? (opt.dist != DIST_DEFAULT ? opt.dist : w->dist) : DIST_UNIFORM;
    uint64_t first = 0;
    for (int k = 0; k < nt; k++) {
        struct thread_run *t = &ts[k];
        uint64_t share = total / (uint64_t)nt + ((uint64_t)k < total % (uint64_t)nt);
        t->index = k;
        t->w = w;
        t->first = first;
        t->count = share;
        t->lat_ns = lat + first;
        first += share;
        t->rng = opt.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)(w ? w->name : 0) * 131 +
                 (uint64_t)k;
        t->chooser.dist = dist;
        zipf_init(&t->chooser.zipf, opt.records);
        t->buf = malloc(opt.value_size);
        t->scan_keys = malloc(MAX_SCAN * sizeof *t->scan_keys);
        if (!t->buf || !t->scan_keys) {
            fprintf(stderr, "ycsb: out of memory for thread buffers\n");
            return -1;
        }
    }
    uint64_t t0 = now_ns();
    if (nt == 1) {
        thread_main(&ts[0]);
    } else {
        for (int k = 0; k < nt; k++)
            if (pthread_create(&ts[k].tid, NULL, thread_main, &ts[k])) {
                fprintf(stderr, "ycsb: cannot start thread %d: %s\n", k, strerror(errno));
                return -1;
            }
        for (int k = 0; k < nt; k++)
            pthread_join(ts[k].tid, NULL);
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    if (!w)
        atomic_store(&published, opt.records);
    uint64_t done = 0, failed = 0, nf = 0, digest = 0, cpu_ns = 0;
    uint32_t *packed = lat;
    for (int k = 0; k < nt; k++) {
        memmove(packed, ts[k].lat_ns, ts[k].done * sizeof *lat);
        packed += ts[k].done;
        done += ts[k].done;
        failed += ts[k].failed;
        nf += ts[k].not_found;
        cpu_ns += ts[k].cpu_ns;
        digest = digest_mix(digest, ts[k].digest);
        free(ts[k].buf);
        free(ts[k].scan_keys);
    }
    qsort(lat, done, sizeof *lat, cmp_u32);
    snprintf(out->name, sizeof out->name, "%s", w ? (char[]){w->name, 0} : "LOAD");
    out->dist = dist_names[dist];
    out->ops = done;
    out->not_found = nf;
    out->seconds = secs;
    out->ops_per_s = secs > 0 ? (double)done / secs : 0;
    out->cpu_seconds = (double)cpu_ns / 1e9;
    out->ops_per_cpu_s = cpu_ns ? (double)done / out->cpu_seconds : 0;
    out->p50_ns = done ? lat[(done - 1) / 2] : 0;
    out->p99_ns = done ? lat[(done - 1) * 99 / 100] : 0;
    out->digest = digest;
    free(lat);
    free(ts);
    if (failed) {
        fprintf(stderr, "ycsb: %s: phase %s failed after %" PRIu64 " operations\n",
                ds_name, out->name, done);
        return -1;
    }
    if (!w && nf) {
        fprintf(stderr, "ycsb: %s: load found %" PRIu64 " keys already present "
                "(a stale pool? remove %s)\n", ds_name, nf, opt.pool);
        return -1;
    }
    return 0;
}

/* Delete every K-th key number, then check each is gone. */
static int delete_every(uint64_t k, uint64_t keys)
{
    for (uint64_t i = 0; i < keys; i += k)
        if (ds_delete(key_of(i)) != 0) {
            fprintf(stderr, "ycsb: %s: delete of key number %" PRIu64 " failed\n", ds_name, i);
            return -1;
        }
    unsigned char *buf = malloc(opt.value_size);
    for (uint64_t i = 0; buf && i < keys; i += k)
        if (ds_read(key_of(i), buf) != 1) {
            fprintf(stderr, "ycsb: %s: key number %" PRIu64 " still there after its "
                    "delete\n", ds_name, i);
            free(buf);
            return -1;
        }
    free(buf);
    return 0;
}

/* Every key number read back; whole values hashed; missing ones counted. */
static int content_digest(uint64_t keys, uint64_t *present, uint64_t *digest)
{
    unsigned char *buf = malloc(opt.value_size);
    uint64_t d = 0, n = 0;
    for (uint64_t i = 0; buf && i < keys; i++) {
        if (ds_read(key_of(i), buf) == 0) {
            d = digest_mix(d, digest_mix(i, value_hash(buf)));
            n++;
        } else {
            d = digest_mix(d, ~i);
        }
    }
    int bad = !buf;
    if (ds_ordered && buf) {   /* a full scan must see every key once, ascending */
        uint64_t keyv[MAX_SCAN], from = 0, seen = 0;
        int got;
        while (!bad && (got = ds_scan(from, MAX_SCAN, keyv, buf)) > 0) {
            for (int k = 0; k < got; k++) {
                bad |= keyv[k] < from;
                bad |= k > 0 && keyv[k] <= keyv[k - 1];
                d = digest_mix(d, keyv[k]);
            }
            seen += (uint64_t)got;
            if (keyv[got - 1] == UINT64_MAX)
                break;
            from = keyv[got - 1] + 1;
        }
        if (seen != n) {
            fprintf(stderr, "ycsb: %s: a full scan saw %" PRIu64 " keys, reads found %"
                    PRIu64 "\n", ds_name, seen, n);
            bad = 1;
        } else if (bad) {
            fprintf(stderr, "ycsb: %s: a full scan returned keys out of order\n", ds_name);
        }
    }
    free(buf);
    *present = n;
    *digest = d;
    return bad ? -1 : 0;
}

/* ---- output ----------------------------------------------------------------- */

static void print_results(FILE *f, const struct phase_result *r, int n, int json)
{
    if (!json) {
        fprintf(f, "%-9s %-8s %-8s %5s %6s %7s %12s %12s %9s %9s %9s\n", "struct", "build",
                "dist", "phase", "value", "threads", "ops/s", "ops/cpu-s", "p50 ns", "p99 ns",
                "ops");
        for (int i = 0; i < n; i++)
            fprintf(f, "%-9s %-8s %-8s %5s %6zu %7d %12.0f %12.0f %9.0f %9.0f %9" PRIu64 "\n",
                    ds_name, YCSB_BUILD, r[i].dist, r[i].name, opt.value_size, opt.threads,
                    r[i].ops_per_s, r[i].ops_per_cpu_s, r[i].p50_ns, r[i].p99_ns, r[i].ops);
        return;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "  {\"structure\": \"%s\", \"build\": \"%s\", \"phase\": \"%s\", "
                "\"dist\": \"%s\", \"value_size\": %zu, \"threads\": %d, \"records\": %"
                PRIu64 ", \"ops\": %" PRIu64 ", \"not_found\": %" PRIu64 ", \"seconds\": %.6f, "
                "\"cpu_seconds\": %.6f, \"ops_per_s\": %.1f, \"ops_per_cpu_s\": %.1f, "
                "\"p50_ns\": %.0f, \"p99_ns\": %.0f, "
                "\"digest\": \"%016" PRIx64 "\"}%s\n",
                ds_name, YCSB_BUILD, r[i].name, r[i].dist, opt.value_size, opt.threads,
                opt.records, r[i].ops, r[i].not_found, r[i].seconds, r[i].cpu_seconds,
                r[i].ops_per_s, r[i].ops_per_cpu_s, r[i].p50_ns, r[i].p99_ns, r[i].digest, i + 1 < n ? "," : "");
    fprintf(f, "]\n");
}

/* ---- arguments ---------------------------------------------------------------- */

static void usage(const char *why)
{
    fprintf(stderr, "ycsb: %s\nusage: ycsb-%s-%s [--pool PATH] [--pool-size BYTES] "
            "[--records N] [--ops N] [--workloads LOAD,A,B,C,F,D,E] "
            "[--dist default|uniform|zipfian|latest] [--value-size B] [--threads T] "
            "[--seed S] [--check] [--delete-every K] [--reopen --keys N] [--json FILE]\n",
            why, ds_name, YCSB_BUILD);
    exit(2);
}

static uint64_t number(const char *flag, const char *s, uint64_t min)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s || s[0] == '-' || v < min) {
        char why[160];
        snprintf(why, sizeof why, "%s %s: give a whole number >= %" PRIu64, flag, s, min);
        usage(why);
    }
    return v;
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int flag_only = !strcmp(a, "--check") || !strcmp(a, "--reopen");
        if (!flag_only && !v) {
            char why[128];
            snprintf(why, sizeof why, "%s needs a value", a);
            usage(why);
        }
        if (!strcmp(a, "--pool")) opt.pool = v;
        else if (!strcmp(a, "--pool-size")) opt.pool_size = number(a, v, 1 << 20);
        else if (!strcmp(a, "--records")) opt.records = number(a, v, 1);
        else if (!strcmp(a, "--ops")) opt.ops = number(a, v, 0);
        else if (!strcmp(a, "--keys")) opt.keys = number(a, v, 0);
        else if (!strcmp(a, "--workloads")) opt.workloads = v;
        else if (!strcmp(a, "--value-size")) opt.value_size = number(a, v, 1);
        else if (!strcmp(a, "--threads")) opt.threads = (int)number(a, v, 1);
        else if (!strcmp(a, "--seed")) opt.seed = number(a, v, 0);
        else if (!strcmp(a, "--delete-every")) opt.delete_every = number(a, v, 1);
        else if (!strcmp(a, "--json")) opt.json = v;
        else if (!strcmp(a, "--check")) { opt.check = 1; continue; }
        else if (!strcmp(a, "--reopen")) { opt.reopen = 1; continue; }
        else if (!strcmp(a, "--dist")) {
            int k = 0;
            while (k < 4 && strcmp(v, dist_names[k]))
                k++;
            if (k == 4)
                usage("--dist: choose default, uniform, zipfian or latest");
            opt.dist = (enum dist)k;
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown option %s", a);
            usage(why);
        }
        i++;
    }
    if (opt.reopen && !opt.keys)
        usage("--reopen needs --keys N (the key count the earlier run printed)");
    if (opt.threads > 64)
        usage("--threads: at most 64");
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    if (!opt.pool_size) {
        /* a value, a node and allocator slack per record, twice over, for the
         * records and the inserts (D and E insert 5% of their operations
         * each), and 64 MiB for tables and headers */
        uint64_t records = opt.records + opt.ops / 5;
        opt.pool_size = (size_t)(records * (opt.value_size + 192) * 2 + (64u << 20));
    }
    if (!opt.reopen && unlink(opt.pool) && errno != ENOENT) {
        fprintf(stderr, "ycsb: cannot remove the old pool %s: %s\n", opt.pool, strerror(errno));
        return 1;
    }
    value_base = malloc(opt.value_size);
    if (!value_base) {
        fprintf(stderr, "ycsb: out of memory for a %zu-byte value\n", opt.value_size);
        return 1;
    }
    uint64_t vs = opt.seed;
    for (size_t i = 0; i < opt.value_size; i++)
        value_base[i] = (unsigned char)splitmix64(&vs);
    if (ds_open(opt.pool, opt.pool_size, opt.value_size)) {
        /* the persistent builds' libraries say why in words */
        const char *why = cairn_errormsg ? cairn_errormsg()
                        : pmemobj_errormsg ? pmemobj_errormsg() : strerror(errno);
        fprintf(stderr, "ycsb: %s: cannot open %s: %s\n", ds_name, opt.pool, why);
        return 1;
    }

    struct phase_result res[16];
    int nres = 0;
    if (!opt.reopen) {
        char list[64];
        snprintf(list, sizeof list, "%s", opt.workloads);
        for (char *save, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const struct workload *w = NULL;
            if (strcmp(tok, "LOAD")) {
                for (size_t k = 0; k < sizeof workloads / sizeof *workloads; k++)
                    if (strlen(tok) == 1 && workloads[k].name == tok[0])
                        w = &workloads[k];
                if (!w)
                    usage("--workloads: a comma list of LOAD, A, B, C, D, E, F");
                if (w->name == 'E' && !ds_ordered) {
                    fprintf(stderr, "ycsb: %s is not ordered: workload E (scans) skipped\n",
                            ds_name);
                    continue;
                }
                if (!atomic_load(&published)) {
                    fprintf(stderr, "ycsb: workload %c needs LOAD first\n", w->name);
                    return 2;
                }
            }
            if (nres == 16 || run_phase(w, &res[nres]))
                return 1;
            nres++;
        }
    }
    uint64_t keys = opt.reopen ? opt.keys : atomic_load(&published);
    if (opt.delete_every && !opt.reopen && delete_every(opt.delete_every, keys))
        return 1;
    if (opt.check || opt.reopen) {
        uint64_t present;
        struct phase_result *r = &res[nres++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "CHECK");
        r->dist = "-";
        if (content_digest(keys, &present, &r->digest))
            return 1;
        r->ops = present;
        r->not_found = keys - present;
    }
    print_results(stdout, res, nres, 0);
    if (opt.json) {
        FILE *f = fopen(opt.json, "w");
        if (!f) {
            fprintf(stderr, "ycsb: cannot write %s: %s\n", opt.json, strerror(errno));
            return 1;
        }
        print_results(f, res, nres, 1);
        fclose(f);
    }
    fprintf(stderr, "ycsb: keys %" PRIu64 "\n", keys);
    ds_close();
    return 0;
}
