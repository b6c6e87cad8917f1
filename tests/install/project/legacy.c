/* Legacy C for cairn-cc: plain stores and plain pointers in the pool; the
 * compiler logs and converts them. Each run adds one entry and prints the
 * list, so the second run shows what the first one left in the pool. */
#include <cairn.h>
#include <errno.h>
#include <stdio.h>

struct entry { struct entry *next; long n; char name[16]; };
struct root { struct entry *head; long runs; };

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: %s POOL\n", argv[0]); return 2; }
    cairn_pool *pool = cairn_pool_open(argv[1], "install-legacy");
    if (!pool && errno == ENOENT)
        pool = cairn_pool_create(argv[1], "install-legacy", 8 << 20);
    if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    struct root *root = CAIRN_ROOT(pool, struct root);
    if (!root) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    CAIRN_TX(pool) {
        struct entry *e = cairn_alloc(pool, sizeof *e);
        e->n = ++root->runs;
        snprintf(e->name, sizeof e->name, "run %ld", e->n);
        e->next = root->head;
        root->head = e;
    }
    long sum = 0;
    for (struct entry *e = root->head; e; e = e->next)
        sum += e->n;
    printf("legacy runs=%ld sum=%ld head=%s\n", root->runs, sum, root->head->name);
    return cairn_pool_close(pool) ? 1 : 0;
}
