/*
 * fig4.c -- one check per row of seed 002's Fig. 4 (the C11 pointer
 * operations under user-transparent persistent references), with the
 * pointer variable and the object it points to in PM and in DRAM in every
 * combination the safety rules allow (a PM slot never holds a DRAM address).
 * Plain C: no cairn_ptr_store/load anywhere; cairn-cc does the conversions.
 * Prints one line per row; any wrong answer stops with the row's name.
 */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct obj {
    struct obj *p;      /* the pointer under test */
    struct obj *q;
    long v;
    char *s;
};

static int rows;
#define ROW(name, cond)                                                     \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("FAIL %s (%s:%d)\n", name, __FILE__, __LINE__);         \
            exit(1);                                                        \
        }                                                                   \
        printf("ok %s\n", name);                                            \
        rows++;                                                             \
    } while (0)

/* The representation in memory (not a C-visible value: the optimizer may
 * forward a stored pointer to a later load, so read it behind its back). */
__attribute__((noinline)) static uint64_t raw(void *slot)
{
    return *(volatile uint64_t *)slot;
}
static int is_rel(void *slot) { return (int64_t)raw(slot) < 0; }

/* noinline: the optimizer must not see through the stores */
__attribute__((noinline)) static void assign(struct obj **slot, struct obj *v) { *slot = v; }
__attribute__((noinline)) static struct obj *get(struct obj **slot) { return *slot; }
static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    cairn_pool *pool = cairn_pool_create(argv[1], "fig4", 16 << 20);
    if (!pool) { printf("pool: %s\n", cairn_errormsg()); return 2; }
    struct obj *arr = cairn_alloc(pool, 8 * sizeof(struct obj)); /* PM */
    struct obj *n = cairn_alloc(pool, sizeof *n);                  /* PM slot */
    struct obj *d = malloc(sizeof *d);                             /* DRAM slot */
    struct obj dram[8];
    memset(d, 0, sizeof *d);
    memset(dram, 0, sizeof dram);

    CAIRN_TX(pool) {
        /* ---- assignment operator (the starred rows) ---- */
        assign(&n->p, &arr[3]);                       /* pny = pxv */
        ROW("pn = pv stores relative", is_rel(&n->p));
        ROW("pn = pv reads back", get(&n->p) == &arr[3]);
        n->q = n->p;                                  /* pny = pxr */
        ROW("pn = pr stores relative", is_rel(&n->q) && n->q == &arr[3]);
        assign(&d->p, &arr[3]);                       /* pdy = pxv */
        ROW("pd = pv stores address", raw(&d->p) == (uintptr_t)&arr[3]);
        d->q = n->p;                                  /* pdy = pxr */
        ROW("pd = pr stores address", raw(&d->q) == (uintptr_t)&arr[3]);
        assign(&dram[0].p, &dram[1]);                 /* DRAM to DRAM */
        ROW("pd = pv (DRAM target)", dram[0].p == &dram[1]);
        n->q = NULL;                                  /* p = NULL */
        ROW("pn = NULL stores 0", raw(&n->q) == 0 && n->q == NULL);
        n->p += 2;                                    /* pxy += i */
        ROW("pn += i", is_rel(&n->p) && n->p == &arr[5]);
        n->p -= 2;
        ROW("pn -= i", n->p == &arr[3]);
        n->p++;                                       /* p++ */
        ROW("pn++", is_rel(&n->p) && n->p == &arr[4]);
        --n->p;                                       /* --p */
        ROW("--pn", n->p == &arr[3]);

        /* ---- casts ---- */
        ROW("(I)pr", (uintptr_t)n->p == (uintptr_t)&arr[3]);
        ROW("(I)pv", (uintptr_t)d->p == (uintptr_t)&arr[3]);
        ROW("(T*)pr", (char *)n->p == (char *)&arr[3]);
        uint64_t bits = raw(&n->p);                   /* (T*)i of a relative value */
        ROW("(T*)i of relative bits", (struct obj *)(uintptr_t)bits == &arr[3]);

        /* ---- additive operators ---- */
        ROW("pr + i", n->p + 1 == &arr[4]);
        ROW("i + pr", 2 + n->p == &arr[5]);
        ROW("pr - i", n->p - 1 == &arr[2]);
        n->q = &arr[1];
        ROW("pr - pr'", n->p - n->q == 2);
        ROW("pr - pv", n->p - arr == 3);
        ROW("pv - pr", &arr[7] - n->p == 4);
        ROW("pv - pv'", d->p - arr == 3);

        /* ---- unary, postfix, member access ---- */
        arr[3].v = 33;
        arr[4].v = 44;
        ROW("*pr", (*n->p).v == 33);
        ROW("pr->id", n->p->v == 33);
        ROW("pr[i]", n->p[1].v == 44);
        ROW("pv->id (DRAM slot, PM target)", d->p->v == 33);
        ROW("!pr", (!n->p) == 0 && (!n->s) == 1);
        ROW("&p", &n->p == (struct obj **)n);
        ROW("sizeof/alignof", sizeof n->p == 8 && _Alignof(struct obj *) == 8);

        /* ---- relational and equality ---- */
        ROW("pr == pv", n->p == &arr[3] && n->p == d->p);
        ROW("pr != pr'", n->p != n->q);
        ROW("pr < pr'", n->q < n->p && !(n->p < n->q));
        ROW("pr >= pv", n->p >= arr && n->p <= &arr[7]);
        ROW("pr == NULL", n->p != NULL && n->s == NULL);

        /* ---- logical and conditional ---- */
        ROW("pr && pv", (n->p && d->p) == 1 && (n->p && n->s) == 0);
        ROW("pr ? :", (n->p ? 1 : 2) == 1 && (n->s ? 1 : 2) == 2);

        /* ---- pointers through memory copies (the hard case) ---- */
        struct obj tmp = *n;                          /* PM -> DRAM struct copy */
        ROW("copy out of PM", tmp.p == &arr[3] && tmp.p->v == 33);
        struct obj local = { .p = &arr[5], .q = &arr[6], .v = 7 };
        *n = local;                                   /* DRAM -> PM struct copy */
        ROW("struct copy into PM is relative", is_rel(&n->p) && is_rel(&n->q));
        ROW("struct copy into PM reads back", n->p == &arr[5] && n->q == &arr[6] && n->v == 7);
        memcpy(&arr[0], &local, sizeof local);        /* memcpy into PM */
        ROW("memcpy into PM is relative", is_rel(&arr[0].p) && arr[0].p == &arr[5]);
        memmove(&arr[1], &arr[0], sizeof arr[0]);     /* PM -> PM */
        ROW("memmove inside PM", is_rel(&arr[1].p) && arr[1].q == &arr[6]);

        /* ---- atomics on pointers in PM ---- */
        struct obj *expect = &arr[5];
        int ok = __atomic_compare_exchange_n(&n->p, &expect, &arr[2], 0,
                                             __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        ROW("cmpxchg pr succeeds", ok && is_rel(&n->p) && n->p == &arr[2]);
        expect = &arr[7];
        ok = __atomic_compare_exchange_n(&n->p, &expect, &arr[1], 0,
                                         __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        ROW("cmpxchg pr fails", !ok && expect == &arr[2] && n->p == &arr[2]);
        struct obj *old = __atomic_exchange_n(&n->p, &arr[4], __ATOMIC_SEQ_CST);
        ROW("xchg pr", old == &arr[2] && is_rel(&n->p) && n->p == &arr[4]);
        __atomic_store_n(&n->q, &arr[6], __ATOMIC_SEQ_CST);
        ROW("atomic store pr", is_rel(&n->q) && __atomic_load_n(&n->q, __ATOMIC_SEQ_CST) == &arr[6]);

        /* ---- pointers passed to precompiled code ---- */
        n->s = cairn_alloc(pool, 32);
        strcpy(n->s, "persistent");                   /* write-set: strcpy */
        ROW("strlen(pr)", strlen(n->s) == 10 && strcmp(n->s, "persistent") == 0);
        long *nums = cairn_alloc(pool, 5 * sizeof(long));
        for (int i = 0; i < 5; i++) nums[i] = 5 - i;
        qsort(nums, 5, sizeof(long), cmp_long);       /* write-set: qsort */
        ROW("qsort on PM array", nums[0] == 1 && nums[4] == 5);
        snprintf(n->s, 32, "v=%ld", n->p->v);         /* write-set: snprintf */
        ROW("snprintf into PM", strcmp(n->s, "v=44") == 0);
    }
    printf("%d rows\n", rows);
    free(d);
    cairn_pool_close(pool);
    return 0;
}
