/* tx_cycle.c -- a store logged in one transaction, a call that commits it
 * and begins another, then a store to the same bytes: that store's log must
 * not be dropped as "already logged" (the call is a barrier for the
 * dominated-log elimination), or the abort below could not restore it.
 *   tx_cycle POOL */
#include <cairn.h>
#include <stdio.h>

struct acct { long balance, count; };
static cairn_pool *pool;

__attribute__((noinline)) void cycle(void)
{
    cairn_tx_commit();
    cairn_tx_begin(pool);
}

__attribute__((noinline)) void update(struct acct *a, long v)
{
    a->balance = v;
    a->count++;
    cycle();
    a->balance = v + 1;       /* logged again: a new transaction began */
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    pool = cairn_pool_create(argv[1], "txcycle", 8 << 20);
    if (!pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    struct acct *a = CAIRN_ROOT(pool, struct acct);
    if (!a) return 2;
    cairn_tx_begin(pool);
    update(a, 10);
    cairn_tx_abort();         /* undoes the second transaction only */
    printf("balance %ld count %ld\n", a->balance, a->count);
    int ok = a->balance == 10 && a->count == 1;
    cairn_pool_close(pool);
    return ok ? 0 : 1;
}
