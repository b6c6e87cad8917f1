/* Loops over a PM array of pointers that the vectorizers turn into
 * <N x ptr> loads (-O2, -O3): comparing, subtracting and following the
 * pointers. The loaded vector used to keep the relative values (find=0 and
 * a span of 7.6e18 at -O2). Also through a copy of the array in DRAM (the
 * copy carries relative values: byte copies do not convert). */
#include <cairn.h>
#include <stdio.h>
#include <string.h>

#define N 64
struct node { long key; };
struct root { struct node *arr[N]; };

__attribute__((noinline)) static int find(struct node **a, int n, struct node *t)
{
    int c = 0;
    for (int i = 0; i < n; i++) c += (a[i] == t);
    return c;
}

__attribute__((noinline)) static long span(struct node **a, int n, struct node *b)
{
    long s = 0;
    for (int i = 0; i < n; i++) s += a[i] - b;
    return s;
}

__attribute__((noinline)) static long sum(struct node **a, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) s += a[i]->key;
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "vec_ptr_loads", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    struct node *b = NULL;
    CAIRN_TX(p) {
        b = cairn_alloc(p, N * sizeof *b);
        for (int i = 0; i < N; i++) { b[i].key = i; r->arr[i] = &b[i]; }
    }
    struct node *copy[N];
    memcpy(copy, r->arr, sizeof copy);
    int bad = 0;
    bad += find(r->arr, N, &b[3]) != 1;
    bad += span(r->arr, N, b) != N * (N - 1) / 2;
    bad += sum(r->arr, N) != N * (N - 1) / 2;
    bad += find(copy, N, &b[5]) != 1;
    bad += span(copy, N, b) != N * (N - 1) / 2;
    printf("%s\n", bad ? "WRONG" : "ok");
    cairn_pool_close(p);
    return bad != 0;
}
