/* multi/main.c -- uses store.c's functions on persistent cells. */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
struct cell;
void cell_push(struct cell **head, struct cell *c, long v);
long cell_sum(const struct cell *c);
struct root { struct cell *head; };
int main(int argc, char **argv)
{
    cairn_pool *p = cairn_pool_create(argv[1], "multi", 16 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = cairn_root(p, sizeof *r, 7);
    for (long i = 1; i <= 4; i++)
        CAIRN_TX(p) { cell_push(&r->head, cairn_alloc(p, 16), i); }
    printf("sum=%ld\n", cell_sum(r->head));
    cairn_pool_close(p);
    p = cairn_pool_open(argv[1], "multi");
    r = cairn_root(p, sizeof *r, 7);
    printf("reopened sum=%ld\n", cell_sum(r->head));
    cairn_pool_close(p);
    return 0;
}
