/* loops.c -- loops whose logs cairn-cc hoists (Breeze Fig. 8): forward,
 * backward, strided struct fields, unrolled and vectorized at -O2. A crash
 * inside the transaction must restore every element. Modes:
 *   loops init POOL     fill with known values (committed)
 *   loops crash POOL    overwrite everything in one tx, then abort()
 *   loops verify POOL   check the known values are back */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
struct rec { long key; long val; char tag[8]; };
struct root { long a[N]; int b[N]; struct rec r[N]; long n; };

__attribute__((noinline)) static void forward(long *a, long n, long v)
{
    for (long i = 0; i < n; i++) a[i] = v + i;
}
__attribute__((noinline)) static void backward(int *b, long n)
{
    for (long i = n - 1; i >= 0; i--) b[i] = (int)(i * 3);
}
__attribute__((noinline)) static void strided(struct rec *r, long n)
{
    for (long i = 0; i < n; i++) { r[i].val = -i; r[i].tag[0] = 'x'; }
}

int main(int argc, char **argv)
{
    cairn_pool *p = !strcmp(argv[1], "init") ? cairn_pool_create(argv[2], "loops", 16 << 20)
                                             : cairn_pool_open(argv[2], "loops");
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *rt = cairn_root(p, sizeof *rt, 42);
    if (!strcmp(argv[1], "init")) {
        CAIRN_TX(p) {
            for (long i = 0; i < N; i++) {
                rt->a[i] = 1000 + i; rt->b[i] = (int)(7 * i);
                rt->r[i].key = i; rt->r[i].val = i; rt->r[i].tag[0] = 'o';
            }
            rt->n = N;
        }
    } else if (!strcmp(argv[1], "crash")) {
        CAIRN_TX(p) {
            forward(rt->a, rt->n, 5);
            backward(rt->b, rt->n);
            strided(rt->r, rt->n);
            if (rt->a[N - 1] != 5 + N - 1 || rt->b[0] != 0 || rt->r[3].val != -3) {
                printf("loop results wrong\n");
                return 1;
            }
            abort();
        }
    } else {
        for (long i = 0; i < N; i++)
            if (rt->a[i] != 1000 + i || rt->b[i] != 7 * i || rt->r[i].key != i ||
                rt->r[i].val != i || rt->r[i].tag[0] != 'o') {
                printf("element %ld not restored\n", i);
                return 1;
            }
        printf("all %d elements restored\n", N);
    }
    cairn_pool_close(p);
    return 0;
}
