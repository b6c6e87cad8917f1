/* reopen_local.c -- one function follows pointers of a pool, closes it,
 * reopens it (at another address) and follows its pointers again: the
 * function's register copy of the translation cache must not outlive the
 * close (cairn-cc reloads it after every call).  reopen_local POOL */
#include <cairn.h>
#include <stdio.h>

struct node { struct node *next; long v; };
struct root { struct node *head; };

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "reopen", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    CAIRN_TX(p) {
        struct node *a = cairn_alloc(p, sizeof *a), *b = cairn_alloc(p, sizeof *b);
        a->v = 1;
        b->v = 2;
        a->next = b;
        r->head = a;
    }
    int moved = 0, bad = 0;
    for (int round = 0; round < 16; round++) {
        long first = r->head->v;                     /* through the cache */
        void *before = r->head;
        cairn_pool_close(p);
        p = cairn_pool_open(argv[1], "reopen");
        if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
        r = CAIRN_ROOT(p, struct root);
        struct node *second = r->head->next;         /* must use the new mapping */
        moved += (void *)r->head != before;
        bad += first != 1 || second->v != 2;
    }
    cairn_pool_close(p);
    remove(argv[1]);
    printf("moved %d of 16, wrong %d\n", moved, bad);
    return bad != 0;
}
