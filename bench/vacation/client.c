/*
 * client.c -- the vacation client (STAMP's client.c, one client thread):
 * populates the manager's tables, then runs a mix of its three
 * transactions and prints one JSON line of what it measured.
 *
 *   vacation-BUILD --pool FILE [--relations R] [--transactions T]
 *                  [--queries N] [--range Q] [--user U] [--seed S]
 *                  [--clients C] [--reopen]
 *
 * STAMP's options: R relations (ids 1..R in each of the four tables,
 * added in shuffled order; default 16384), T transactions (default
 * 100000), N queries per transaction at most (-n, default 4), Q percent of
 * the ids that transactions touch (-q, default 60), U percent of the
 * transactions that make reservations (-u, default 90; the rest are half
 * DELETE_CUSTOMER, half UPDATE_TABLES). Defaults are STAMP's
 * "vacation-high". Every build draws the same sequence from --seed.
 * --clients C runs C client threads, each its share of the transactions
 * with its own random stream; the client holds one mutex around every call
 * into the manager (cairn's and libpmemobj's transactions do not isolate),
 * all builds alike. With more than one client the interleaving, and so the
 * final tables, differ from run to run; mgr_check still checks them.
 *
 * After the run, mgr_check walks every table (the invariants hold, or the
 * client exits 1); its digest, the same for every build, is printed.
 * --reopen only opens an existing pool and checks it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vacation.h"

#ifndef VACATION_BUILD
#define VACATION_BUILD "unknown"
#endif

static uint64_t rng_state;   /* the loader's; each client has its own */

static uint64_t rnd_from(uint64_t *state)   /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
    return rnd_from(&rng_state);
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* one client thread: its share of the transactions, its own random stream */
struct client {
    uint64_t rng;
    long transactions, range, queries, user_pct;
    uint64_t *lat;                 /* its transactions' latencies, ns */
    long reserved, deleted, updated, bills;
    int failed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int locking;                /* more than one client: one call at a time */

static void *client_run(void *arg)
{
    struct client *c = arg;
    int types[64], prices[64];
    long qids[64];
    for (long x = 0; x < c->transactions && !c->failed; x++) {
        long r = (long)(rnd_from(&c->rng) % 100);
        int n = (int)(rnd_from(&c->rng) % (uint64_t)c->queries) + 1;
        long customer = (long)(rnd_from(&c->rng) % (uint64_t)c->range) + 1;
        for (int k = 0; k < n; k++) {
            types[k] = (int)(rnd_from(&c->rng) % RES_TYPES);
            qids[k] = (long)(rnd_from(&c->rng) % (uint64_t)c->range) + 1;
            prices[k] = rnd_from(&c->rng) % 2 ? (int)(rnd_from(&c->rng) % 5) * 10 + 50 : -1;
        }
        double s = clock_s(CLOCK_MONOTONIC);
        if (locking)
            pthread_mutex_lock(&lock);
        if (r < c->user_pct) {
            int made;
            if (mgr_make_reservation(customer, n, types, qids, &made))
                c->failed = 1;
            c->reserved += made;
        } else if (r & 1) {
            long bill;
            int rc = mgr_delete_customer(customer, &bill);
            c->failed = rc < 0;
            c->deleted += rc == 0;
            c->bills += bill;
        } else {
            c->failed = mgr_update_tables(n, types, qids, prices) != 0;
            c->updated += n;
        }
        if (locking)
            pthread_mutex_unlock(&lock);
        c->lat[x] = (uint64_t)((clock_s(CLOCK_MONOTONIC) - s) * 1e9);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static long arg_long(const char *name, const char *v, long lo, long hi)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < lo || x > hi) {
        fprintf(stderr, "vacation: %s needs a whole number from %ld to %ld\n", name, lo, hi);
        exit(2);
    }
    return x;
}

static void die(const char *what)
{
    fprintf(stderr, "vacation: %s failed\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    const char *pool = NULL;
    long relations = 16384, transactions = 100000, queries = 4, range_pct = 60,
         user_pct = 90, seed = 1, clients = 1;
    int reopen = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--pool") && v)
            pool = argv[++i];
        else if (!strcmp(argv[i], "--relations"))
            relations = arg_long(argv[i], v, 1, 1L << 30), i++;
        else if (!strcmp(argv[i], "--transactions"))
            transactions = arg_long(argv[i], v, 1, 1L << 40), i++;
        else if (!strcmp(argv[i], "--queries"))
            queries = arg_long(argv[i], v, 1, 64), i++;
        else if (!strcmp(argv[i], "--range"))
            range_pct = arg_long(argv[i], v, 1, 100), i++;
        else if (!strcmp(argv[i], "--user"))
            user_pct = arg_long(argv[i], v, 0, 100), i++;
        else if (!strcmp(argv[i], "--clients"))
            clients = arg_long(argv[i], v, 1, 64), i++;
        else if (!strcmp(argv[i], "--seed"))
            seed = arg_long(argv[i], v, 0, 1L << 62), i++;
        else if (!strcmp(argv[i], "--reopen"))
            reopen = 1;
        else {
            fprintf(stderr, "vacation: unknown option %s; see the comment at the top of "
                    "bench/vacation/client.c\n", argv[i]);
            return 2;
        }
    }
    if (!pool) {
        fprintf(stderr, "vacation: --pool FILE is required\n");
        return 2;
    }
    rng_state = (uint64_t)seed;
    /* a node, a reservation list entry and the allocators' headers */
    size_t pool_size = (size_t)relations * 4 * 512 + ((size_t)64 << 20);
    if (mgr_open(pool, pool_size))
        die("mgr_open");
    struct mgr_summary sum;
    double load_s = 0, run_s = 0, run_cpu_s = 0;
    long reserved = 0, deleted = 0, updated = 0, bills = 0;
    uint64_t *lat = NULL;
    if (!reopen) {
        long *ids = malloc(relations * sizeof *ids);
        lat = malloc(transactions * sizeof *lat);
        if (!ids || !lat)
            die("malloc");
        double t0 = clock_s(CLOCK_MONOTONIC);
        for (int t = 0; t <= RES_TYPES; t++) {
            for (long i = 0; i < relations; i++)
                ids[i] = i + 1;
            for (long i = relations - 1; i > 0; i--) {
                long j = (long)(rnd() % (uint64_t)(i + 1)), x = ids[i];
                ids[i] = ids[j];
                ids[j] = x;
            }
            for (long i = 0; i < relations; i++) {
                int price = (int)(rnd() % 5) * 10 + 50;
                if (t == RES_TYPES ? mgr_add_customer(ids[i]) < 0
                                   : mgr_update_tables(1, &t, &ids[i], &price))
                    die("populating the tables");
            }
        }
        load_s = clock_s(CLOCK_MONOTONIC) - t0;
        long range = relations * range_pct / 100;
        if (range < 1)
            range = 1;
        struct client cl[64];
        pthread_t tid[64];
        locking = clients > 1;
        for (long k = 0; k < clients; k++)
            cl[k] = (struct client){
                .rng = (uint64_t)seed * 64 + (uint64_t)k + 1, .range = range,
                .queries = queries, .user_pct = user_pct,
                .transactions = transactions / clients + (k < transactions % clients),
                .lat = lat + k * (transactions / clients) + (k < transactions % clients ? k
                                                                : transactions % clients)};
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        t0 = clock_s(CLOCK_MONOTONIC);
        for (long k = 1; k < clients; k++)
            if (pthread_create(&tid[k], NULL, client_run, &cl[k]))
                die("pthread_create");
        client_run(&cl[0]);
        for (long k = 1; k < clients; k++)
            pthread_join(tid[k], NULL);
        run_s = clock_s(CLOCK_MONOTONIC) - t0;
        run_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        for (long k = 0; k < clients; k++) {
            if (cl[k].failed)
                die("a client transaction");
            reserved += cl[k].reserved;
            deleted += cl[k].deleted;
            updated += cl[k].updated;
            bills += cl[k].bills;
        }
        qsort(lat, transactions, sizeof *lat, cmp_u64);
        free(ids);
    }
    if (mgr_check(&sum))
        die("mgr_check: the tables are inconsistent;");
    printf("{\"build\": \"%s\", \"clients\": %ld, \"relations\": %ld, \"transactions\": %ld, "
           "\"queries\": %ld, "
           "\"range_pct\": %ld, \"user_pct\": %ld, \"load_s\": %.6f, \"run_s\": %.6f, "
           "\"run_cpu_s\": %.6f, \"tx_per_s\": %.1f, \"tx_per_cpu_s\": %.1f, "
           "\"p50_ns\": %llu, \"p99_ns\": %llu, \"reserved\": %ld, \"deleted\": %ld, "
           "\"updated\": %ld, \"bills\": %ld, \"items\": [%ld, %ld, %ld], "
           "\"customers\": %ld, \"reservations\": %ld, \"digest\": \"%016llx\"}\n",
           VACATION_BUILD, clients, relations, reopen ? 0 : transactions, queries, range_pct, user_pct,
           load_s, run_s, run_cpu_s, reopen ? 0 : transactions / run_s,
           reopen ? 0 : transactions / run_cpu_s,
           reopen ? 0ULL : (unsigned long long)lat[transactions / 2],
           reopen ? 0ULL : (unsigned long long)lat[transactions * 99 / 100],
           reserved, deleted, updated, bills, sum.items[0], sum.items[1], sum.items[2],
           sum.customers, sum.reservations, (unsigned long long)sum.digest);
    free(lat);
    mgr_close();
    return 0;
}
