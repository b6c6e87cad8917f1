/* Closing a pool must empty every translation cache, including a shared
 * library's own. The library sums pool A; A is closed; pools are made until
 * one (B) is mapped where A was; A is reopened elsewhere and summed through
 * the library again. A cache left holding A's id and old slot would read
 * B's nodes (4006) or fault: the sum must be A's (406) both times.
 *
 *   main DIR dlopen|linked      (DIR: where to make the pools; built with
 *                               -DLINKED when linked with the library)
 */
#include "list.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cairn_pool *make(const char *path, long base)
{
    remove(path);
    cairn_pool *p = cairn_pool_create(path, "slot_reuse", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); exit(2); }
    struct root *r = CAIRN_ROOT(p, struct root);
    CAIRN_TX(p) {
        r->tag = base;
        for (int i = 0; i < 4; i++) {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->val = base + i;
            n->next = r->head;
            r->head = n;
        }
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: main DIR dlopen|linked\n"); return 2; }
    long (*sum)(struct root *) = NULL;
#ifdef LINKED
    sum = lib_sum;
#endif
    if (!strcmp(argv[2], "dlopen")) {
        char lib[4096];
        snprintf(lib, sizeof lib, "%s/libsum.so", argv[1]);
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }
        sum = (long (*)(struct root *))dlsym(h, "lib_sum");
    }
    if (!sum) { fprintf(stderr, "no lib_sum\n"); return 2; }
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/a.pool", argv[1]);
    snprintf(pb, sizeof pb, "%s/b.pool", argv[1]);
    cairn_pool *a = make(pa, 100);
    struct root *ra = CAIRN_ROOT(a, struct root);
    char *old = (char *)ra;
    printf("A=%ld\n", sum(ra));
    cairn_pool_close(a);
    cairn_pool *b;
    int tries = 0;
    for (;;) {
        b = make(pb, 1000);
        if ((char *)CAIRN_ROOT(b, struct root) == old) break;
        cairn_pool_close(b);
        if (++tries > 20000) { printf("slot never reused\n"); return 3; }
    }
    a = cairn_pool_open(pa, "slot_reuse");
    if (!a) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    printf("A=%ld\n", sum(CAIRN_ROOT(a, struct root)));
    cairn_pool_close(a);
    cairn_pool_close(b);
    return 0;
}
