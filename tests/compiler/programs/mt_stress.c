/*
 * mt_stress.c -- a plain multi-threaded C program on persistent objects:
 * four threads, each with its own BSD TAILQ list and counters, and one
 * uthash table shared by all of them under a pthread mutex (a thread holds
 * the mutex for the whole transaction that touches the table, as two-phase
 * locking has it). No logging and no pointer conversions in the code:
 * cairn-cc adds them; each thread's transactions are its own.
 *
 *   mt_stress run POOL SEED    all four threads insert/delete forever
 *                              (the test SIGKILLs it at a random instant)
 *   mt_stress verify POOL      open (recovers) and check every list against
 *                              its counters and the table against its count
 */
#include <cairn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/sys/queue.h>

#define NTHREADS 4

static cairn_pool *g_pool;
#define uthash_malloc(sz) cairn_alloc(g_pool, sz)
#define uthash_free(ptr, sz) cairn_free(ptr)
#define uthash_fatal(msg) do { fprintf(stderr, "uthash: %s\n", msg); exit(3); } while (0)
#include <uthash.h>

struct node {
    long v;
    TAILQ_ENTRY(node) link;
};
TAILQ_HEAD(node_list, node);

struct entry {
    long key;
    int owner;
    char tag[20];
    UT_hash_handle hh;
};

struct root {
    struct node_list list[NTHREADS];
    long count[NTHREADS], sum[NTHREADS];
    struct entry *table;
    long table_count, table_sum;
    int ready;
};

static struct root *R;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;

static void own_step(int t, unsigned *seed)
{
    CAIRN_TX(g_pool) {
        /* grow while short, shrink while long: each list hovers near 300 */
        int grow = R->count[t] < 300 ? rand_r(seed) % 3 != 0 : rand_r(seed) % 3 == 0;
        if (grow || TAILQ_EMPTY(&R->list[t])) {
            struct node *n = cairn_alloc(g_pool, sizeof *n);
            n->v = rand_r(seed) % 1000;
            TAILQ_INSERT_HEAD(&R->list[t], n, link);
            R->count[t]++;
            R->sum[t] += n->v;
        } else {
            struct node *n = TAILQ_LAST(&R->list[t], node_list);
            TAILQ_REMOVE(&R->list[t], n, link);
            R->count[t]--;
            R->sum[t] -= n->v;
            cairn_free(n);
        }
    }
}

static void shared_step(int t, unsigned *seed)
{
    long key = rand_r(seed) % 3000;
    pthread_mutex_lock(&table_lock);
    CAIRN_TX(g_pool) {
        struct entry *e;
        HASH_FIND(hh, R->table, &key, sizeof key, e);
        if (e) {
            HASH_DELETE(hh, R->table, e);
            R->table_count--;
            R->table_sum -= e->key;
            cairn_free(e);
        } else {
            e = cairn_alloc(g_pool, sizeof *e);
            e->key = key;
            e->owner = t;
            snprintf(e->tag, sizeof e->tag, "k%ld-t%d", key, t);
            HASH_ADD(hh, R->table, key, sizeof e->key, e);
            R->table_count++;
            R->table_sum += key;
        }
    }
    pthread_mutex_unlock(&table_lock);
}

struct arg { int t; unsigned seed; };

static void *worker(void *p)
{
    struct arg *a = p;
    for (long i = 0;; i++) {
        if (i % 4 == 0) shared_step(a->t, &a->seed);
        else own_step(a->t, &a->seed);
        if (i == 50) {                 /* every thread is under way */
            pthread_mutex_lock(&started_lock);
            if (++started == NTHREADS) {
                printf("started\n");
                fflush(stdout);
            }
            pthread_mutex_unlock(&started_lock);
        }
    }
    return NULL;
}

static int verify(void)
{
    for (int t = 0; t < NTHREADS; t++) {
        long n = 0, s = 0;
        struct node *x;
        TAILQ_FOREACH(x, &R->list[t], link) {
            if (x->v < 0 || x->v >= 1000) { printf("thread %d: value %ld\n", t, x->v); return 1; }
            n++;
            s += x->v;
        }
        if (n != R->count[t] || s != R->sum[t]) {
            printf("thread %d: list has %ld nodes summing to %ld, counters say %ld / %ld\n",
                   t, n, s, R->count[t], R->sum[t]);
            return 1;
        }
    }
    long n = 0, s = 0;
    struct entry *e, *tmp;
    HASH_ITER(hh, R->table, e, tmp) {
        char want[20];
        snprintf(want, sizeof want, "k%ld-t%d", e->key, e->owner);
        struct entry *f;
        HASH_FIND(hh, R->table, &e->key, sizeof e->key, f);
        if (f != e || strcmp(want, e->tag)) {
            printf("table entry %ld: found %p, tag '%s'\n", e->key, (void *)f, e->tag);
            return 1;
        }
        n++;
        s += e->key;
    }
    if (n != R->table_count || s != R->table_sum) {
        printf("table has %ld entries summing to %ld, counters say %ld / %ld\n",
               n, s, R->table_count, R->table_sum);
        return 1;
    }
    printf("verified: lists %ld %ld %ld %ld, table %ld\n", R->count[0], R->count[1],
           R->count[2], R->count[3], n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: %s run|verify POOL [SEED]\n", argv[0]); return 2; }
    int run = !strcmp(argv[1], "run");
    g_pool = cairn_pool_open(argv[2], "mt_stress");
    if (!g_pool && run)
        g_pool = cairn_pool_create(argv[2], "mt_stress", 64 << 20);
    if (!g_pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    R = CAIRN_ROOT(g_pool, struct root);
    if (!R->ready)
        CAIRN_TX(g_pool) {
            for (int t = 0; t < NTHREADS; t++) TAILQ_INIT(&R->list[t]);
            R->ready = 1;
        }
    if (!run)
        return verify();
    unsigned seed = (unsigned)atoi(argc > 3 ? argv[3] : "1");
    pthread_t th[NTHREADS];
    struct arg args[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        args[t] = (struct arg){ t, seed * 7919u + (unsigned)t };
        pthread_create(&th[t], NULL, worker, &args[t]);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    return 0;
}
