/* hoist_ptr.c -- pointer stores in loops with a loop-invariant value (NVL-C's
 * pointer hoisting, inline virtual->relative conversion): the relative form
 * is right whichever pool the translation cache holds when the loop starts,
 * and the safety checks still stop at the store's line.
 *   hoist_ptr ok|volatile|otherpool|reopen POOL */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item { struct item *next; struct target *owner; long val; };
struct target { long id; };
struct root { struct item *head; struct target *t1, *t2; struct item *other; };

__attribute__((noinline)) static void set_owner(struct item *it, struct target *t)
{
    for (; it; it = it->next) it->owner = t;        /* LINE_HOIST */
}

static int check(struct root *r, struct target *want, const char *what)
{
    int n = 0, bad = 0;
    for (struct item *it = r->head; it; it = it->next, n++)
        if (it->owner != want) bad++;
    printf("%s: %d items, %d wrong owners\n", what, n, bad);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    const char *mode = argv[1];
    char other[4096];
    snprintf(other, sizeof other, "%s.other", argv[2]);
    if (!strcmp(mode, "reopen")) {
        cairn_pool *p = cairn_pool_open(argv[2], "hoist");
        if (!p) { fprintf(stderr, "open: %s\n", cairn_errormsg()); return 2; }
        struct root *r = CAIRN_ROOT(p, struct root);
        int bad = check(r, r->t2, "reopened");
        cairn_pool_close(p);
        return bad ? 1 : 0;
    }
    cairn_pool *p = cairn_pool_create(argv[2], "hoist", 16 << 20);
    if (!p) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    CAIRN_TX(p) {
        r->t1 = cairn_alloc(p, sizeof *r->t1);
        r->t2 = cairn_alloc(p, sizeof *r->t2);
        r->t1->id = 1;
        r->t2->id = 2;
        for (int i = 0; i < 500; i++) {
            struct item *it = cairn_alloc(p, sizeof *it);
            it->val = i;
            it->next = r->head;
            r->head = it;
        }
    }
    int bad = 0;
    if (!strcmp(mode, "ok")) {
        CAIRN_TX(p) { set_owner(r->head, r->t1); }
        bad += check(r, r->t1, "t1");
        /* the cache now holds another pool's slot when the loop starts */
        cairn_pool *q = cairn_pool_create(other, "hoist", 16 << 20);
        struct root *qr = CAIRN_ROOT(q, struct root);
        CAIRN_TX(q) { qr->t1 = cairn_alloc(q, sizeof *qr->t1); }
        struct target *qt = qr->t1;                  /* a load from q fills the cache */
        if (!qt) return 2;
        CAIRN_TX(p) { set_owner(r->head, r->t2); }
        bad += check(r, r->t2, "t2 after the other pool");
        cairn_pool_close(q);
        remove(other);
    } else if (!strcmp(mode, "volatile")) {
        struct target on_stack = { 9 };
        CAIRN_TX(p) { set_owner(r->head, &on_stack); }
    } else if (!strcmp(mode, "otherpool")) {
        cairn_pool *q = cairn_pool_create(other, "hoist", 16 << 20);
        struct target *qt = cairn_alloc(q, sizeof *qt);
        remove(other);                              /* the store below stops the program */
        CAIRN_TX(p) { set_owner(r->head, qt); }
    }
    cairn_pool_close(p);
    return bad ? 1 : 0;
}
