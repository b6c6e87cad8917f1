/* Conditional loops over PM arrays that the vectorizers turn into masked
 * loads and stores (-O3 -mavx2: llvm.masked.load / llvm.masked.store of
 * <4 x ptr> and <8 x i32>). The loaded pointer lanes must be translated
 * (they kept their relative values: the sum followed them), the stored
 * ones converted (they were stored as addresses), and every masked store
 * logged (an aborted transaction left them behind).
 *   vec_masked POOL        prints "ok" */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 64
struct node { long key; };
struct root { struct node *arr[N]; int sel[N]; int val[N]; };

__attribute__((noinline)) static long sum_if(struct node **a, const int *sel, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        if (sel[i]) s += a[i]->key;
    return s;
}

__attribute__((noinline)) static int count_if(struct node **a, const int *sel, int n, struct node *t)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (sel[i]) c += a[i] == t;
    return c;
}

__attribute__((noinline)) static void put_if(struct node **a, const int *sel, int n, struct node *t)
{
    for (int i = 0; i < n; i++)
        if (sel[i]) a[i] = t;
}

__attribute__((noinline)) static void set_if(int *v, const int *sel, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (sel[i]) v[i] = x;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "vec_masked", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    struct node *b = NULL;
    CAIRN_TX(p) {
        b = cairn_alloc(p, N * sizeof *b);
        for (int i = 0; i < N; i++) {
            b[i].key = i; r->arr[i] = &b[i]; r->sel[i] = i % 3 != 0; r->val[i] = i;
        }
    }
    long want = 0;
    for (int i = 0; i < N; i++) want += i % 3 != 0 ? i : 0;
    int bad = 0;
    bad += (sum_if(r->arr, r->sel, N) != want) << 0;
    bad += (count_if(r->arr, r->sel, N, &b[4]) != 1) << 1;
    struct root before;
    memcpy(&before, r, sizeof before);
    CAIRN_TX(p) {
        put_if(r->arr, r->sel, N, &b[7]);
        set_if(r->val, r->sel, N, -1);
        uint64_t w;
        memcpy(&w, &r->arr[1], 8);
        bad += (!(w >> 63) || r->arr[1] != &b[7] || r->val[1] != -1) << 2;   /* stored relative */
        bad += (count_if(r->arr, r->sel, N, &b[7]) != 42) << 3;
        cairn_tx_abort();
    }
    bad += (memcmp(&before, r, sizeof before) != 0) << 4;                     /* logged */
    printf("%s %d\n", bad ? "WRONG" : "ok", bad);
    cairn_pool_close(p);
    return bad != 0;
}
