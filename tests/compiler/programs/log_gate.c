/* log_gate.c -- the inline log gate (cairn-inline-log-gate). Outside any
 * transaction, with CAIRN_UNLOGGED=off, a store into the pool calls
 * cairn__log_store only until the runtime sets the thread's
 * cairn__log_skip; a transaction begun afterwards must log its stores
 * again (its abort restores them), in this thread and in a new one, and a
 * store after the transaction is outside it again.
 *   log_gate POOL N    N stores outside a transaction per phase; prints
 *                      the values the aborts left and exits 0 when right */
#include <cairn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct cell { long v[8]; };
static cairn_pool *pool;
static long n;

/* the pass cannot tell where p points: a region test, then the gate */
__attribute__((noinline)) void put(long *p, long v) { *p = v; }

/* N stores outside a transaction, then one in a transaction that aborts:
 * the abort must bring back the last value stored outside */
static int phase(struct cell *c, int slot, long base)
{
    for (long i = 0; i < n; i++) put(&c->v[slot], base + i);
    cairn_tx_begin(pool);
    put(&c->v[slot], -1);
    cairn_tx_abort();
    long want = base + n - 1;
    printf("slot %d: %ld (want %ld)\n", slot, c->v[slot], want);
    return c->v[slot] == want;
}

static struct cell *cell;
static int thread_ok;

static void *in_thread(void *arg)
{
    (void)arg;
    thread_ok = phase(cell, 1, 2000000);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    n = atol(argv[2]);
    if (n < 1) return 2;
    pool = cairn_pool_create(argv[1], "loggate", 8 << 20);
    if (!pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    cell = CAIRN_ROOT(pool, struct cell);
    if (!cell) return 2;
    int ok = phase(cell, 0, 1000000);
    pthread_t t;
    if (pthread_create(&t, NULL, in_thread, NULL) != 0) return 2;
    pthread_join(t, NULL);
    ok &= thread_ok;
    ok &= phase(cell, 2, 3000000);     /* after a transaction of this thread */
    cairn_pool_close(pool);
    return ok ? 0 : 1;
}
