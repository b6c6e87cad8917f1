/* txtemp.c -- one transaction that allocates, fills and frees temporaries
 * (as Armadillo does in bench/cxx/knn_pm.cpp), then links one result into
 * the root (bench/heap/run.py). */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct root { uint64_t last; };

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: txtemp POOL [TEMPORARIES]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 200000;
    unlink(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "txtemp", (size_t)1 << 30);
    if (!p) { fprintf(stderr, "txtemp: %s\n", cairn_errormsg()); return 1; }
    struct root *r = CAIRN_ROOT(p, struct root);
    unsigned long sum = 0;
    CAIRN_TX(p) {
        for (long i = 0; i < n; i++) {
            size_t len = (size_t)(64 + (i % 8) * 512);
            char *t = cairn_alloc(p, len);
            if (!t) { fprintf(stderr, "txtemp: %s\n", cairn_errormsg()); exit(1); }
            memset(t, (int)(i & 0xff), len);
            sum += (unsigned char)t[len / 2];
            cairn_free(t);
        }
        char *keep = cairn_alloc(p, 64);
        snprintf(keep, 64, "%lu", sum);
        cairn_ptr_store(&r->last, keep);
    }
    printf("%lu\n", sum);
    cairn_pool_close(p);
    unlink(argv[1]);
    return 0;
}
