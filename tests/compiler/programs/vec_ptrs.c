/* vec_ptrs.c -- pointer stores the vectorizers turn into <2 x ptr> stores
 * (an array filled in a loop, neighbouring pointer fields set together):
 * in PM each lane is stored in relative form, so the pointers are right
 * after the pool maps elsewhere, and the safety check still stops a
 * pointer to volatile memory.
 *   vec_ptrs fill|reopen|volatile POOL */
#include <cairn.h>
#include <stdio.h>
#include <string.h>

#define N 64
struct target { long id; };
struct pair { struct target *left, *right; };
struct root { struct target *slots[N]; struct pair pairs[N]; struct target *t[4]; };

__attribute__((noinline)) static void fill(struct target **a, struct target *x, int n)
{
    for (int i = 0; i < n; i++) a[i] = x;                     /* LINE_VEC */
}

__attribute__((noinline)) static void set_pairs(struct pair *p, struct target *l,
                                                struct target *r, int n)
{
    for (int i = 0; i < n; i++) { p[i].left = l; p[i].right = r; }
}

static int check(struct root *r, const char *what)
{
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += r->slots[i] != r->t[1] || r->slots[i]->id != 1;
        bad += r->pairs[i].left != r->t[2] || r->pairs[i].left->id != 2;
        bad += r->pairs[i].right != r->t[3] || r->pairs[i].right->id != 3;
    }
    printf("%s: %d wrong\n", what, bad);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    if (!strcmp(argv[1], "reopen")) {
        cairn_pool *p = cairn_pool_open(argv[2], "vecptr");
        if (!p) { fprintf(stderr, "open: %s\n", cairn_errormsg()); return 2; }
        int bad = check(CAIRN_ROOT(p, struct root), "reopened");
        cairn_pool_close(p);
        return bad ? 1 : 0;
    }
    cairn_pool *p = cairn_pool_create(argv[2], "vecptr", 16 << 20);
    if (!p) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    if (!r) return 2;
    CAIRN_TX(p) {
        for (int k = 0; k < 4; k++) {
            r->t[k] = cairn_alloc(p, sizeof *r->t[k]);
            r->t[k]->id = k;
        }
    }
    if (!strcmp(argv[1], "volatile")) {
        struct target on_stack = { 9 };
        CAIRN_TX(p) { fill(r->slots, &on_stack, N); }
        return 0;                                  /* not reached: the store stops it */
    }
    CAIRN_TX(p) {
        fill(r->slots, r->t[1], N);
        set_pairs(r->pairs, r->t[2], r->t[3], N);
    }
    int bad = check(r, "filled");
    /* an aborted refill leaves the committed pointers */
    CAIRN_TX(p) { fill(r->slots, r->t[0], N); cairn_tx_abort(); }
    bad += check(r, "after abort");
    cairn_pool_close(p);
    return bad ? 1 : 0;
}
