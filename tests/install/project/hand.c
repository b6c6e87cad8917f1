/* The runtime by hand, for any C compiler: explicit undo snapshots and
 * relative pointers through cairn_tx_add / cairn_ptr_store / cairn_ptr_load.
 * Each run adds one entry and prints the list. */
#include <cairn.h>
#include <errno.h>
#include <stdio.h>

struct entry { struct entry *next; long n; };
struct root { struct entry *head; long runs; };

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: %s POOL\n", argv[0]); return 2; }
    cairn_pool *pool = cairn_pool_open(argv[1], "install-hand");
    if (!pool && errno == ENOENT)
        pool = cairn_pool_create(argv[1], "install-hand", 8 << 20);
    if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    struct root *root = CAIRN_ROOT(pool, struct root);
    if (!root) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    CAIRN_TX(pool) {
        struct entry *e = cairn_alloc(pool, sizeof *e);   /* fresh: no snapshot */
        cairn_tx_add(&root->runs, sizeof root->runs);
        e->n = ++root->runs;
        cairn_ptr_store(&e->next, cairn_ptr_load(&root->head));
        cairn_ptr_store(&root->head, e);                 /* snapshots the slot */
    }
    long sum = 0;
    for (struct entry *e = cairn_ptr_load(&root->head); e; e = cairn_ptr_load(&e->next))
        sum += e->n;
    printf("hand runs=%ld sum=%ld\n", root->runs, sum);
    return cairn_pool_close(pool) ? 1 : 0;
}
