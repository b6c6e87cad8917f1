/* safety.c -- pointer-safety violations and unlogged stores, each at a
 * known line (the test reads the LINE_* markers from this file). */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct obj { struct obj *p; long v; };
struct aobj { _Atomic(struct obj *) p; };

__attribute__((noinline)) static void set_ptr(struct obj *o, void *t)
{
    o->p = t;                                       /* LINE_SET_PTR */
}

__attribute__((noinline)) static void set_val(struct obj *o, long v)
{
    o->v = v;                                       /* LINE_SET_VAL */
}

int main(int argc, char **argv)
{
    int mode = atoi(argv[1]);
    char other[4096];
    snprintf(other, sizeof other, "%s.other", argv[2]);
    cairn_pool *a = cairn_pool_create(argv[2], "safety", 16 << 20);
    if (!a) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 2; }
    struct obj *o = cairn_alloc(a, sizeof *o);
    long on_stack = 0;
    switch (mode) {
    case 1: /* NV-to-V: a pointer to the stack stored into PM */
        CAIRN_TX(a) { set_ptr(o, &on_stack); }
        break;
    case 2: { /* inter-pool: a pointer into pool B stored into pool A */
        cairn_pool *b = cairn_pool_create(other, "safety", 16 << 20);
        struct obj *ob = cairn_alloc(b, sizeof *ob);
        CAIRN_TX(a) { set_ptr(o, ob); }
        cairn_pool_close(b);
        remove(other);
        break;
    }
    case 3: /* a store to PM outside any transaction */
        set_val(o, 1);
        set_val(o, 2);   /* same site: warned once */
        break;
    case 6: /* NV-to-V: a function's address */
        CAIRN_TX(a) { set_ptr(o, (void *)puts); }
        break;
    case 7: /* NV-to-V: a string literal */
        CAIRN_TX(a) { set_ptr(o, (void *)"a literal"); }
        break;
    case 8: { /* NV-to-V: malloc memory */
        void *m = malloc(64);
        CAIRN_TX(a) { set_ptr(o, m); }
        free(m);
        break;
    }
    case 9: { /* a pointer into the pool kept past its close, then followed */
        CAIRN_TX(a) { o->v = 41; }
        struct obj *volatile kept = o;
        cairn_pool_close(a);
        printf("%ld\n", kept->v);                    /* faults: no pool there */
        return 0;
    }
    case 10: { /* an access past the pool's end (the pool is 16 MiB) */
        volatile char *past = (char *)o + (32 << 20);
        printf("%d\n", *past);                        /* faults */
        return 0;
    }
    case 12: /* NV-to-V through __atomic_store_n (clang stores the pointer's bits) */
        CAIRN_TX(a) { __atomic_store_n(&o->p, (struct obj *)&on_stack, __ATOMIC_RELEASE); } /* LINE_ATOMIC */
        break;
    case 13: { /* NV-to-V through __atomic_compare_exchange_n */
        struct obj *expected = NULL;
        CAIRN_TX(a) { __atomic_compare_exchange_n(&o->p, &expected, (struct obj *)&on_stack, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); } /* LINE_CAS */
        break;
    }
    /* the same through the generic and C11 forms: at -O0 clang passes the
       pointer through a temporary, as an i64 loaded from a pointer slot */
    case 14: { /* __atomic_store(&slot, &value) */
        struct obj *v = (struct obj *)&on_stack;
        CAIRN_TX(a) { __atomic_store(&o->p, &v, __ATOMIC_SEQ_CST); } /* LINE_GEN_STORE */
        break;
    }
    case 15: { /* __atomic_exchange(&slot, &value, &old) */
        struct obj *v = (struct obj *)&on_stack, *old;
        CAIRN_TX(a) { __atomic_exchange(&o->p, &v, &old, __ATOMIC_SEQ_CST); } /* LINE_GEN_XCHG */
        break;
    }
    case 16: { /* __atomic_compare_exchange(&slot, &expected, &desired) */
        struct obj *e = NULL, *v = (struct obj *)&on_stack;
        CAIRN_TX(a) { __atomic_compare_exchange(&o->p, &e, &v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); } /* LINE_GEN_CAS */
        break;
    }
    case 17: { /* C11 atomic_store on an _Atomic pointer field */
        struct aobj *ao = cairn_alloc(a, sizeof *ao);
        CAIRN_TX(a) { __c11_atomic_store(&ao->p, (struct obj *)&on_stack, __ATOMIC_SEQ_CST); } /* LINE_C11_STORE */
        break;
    }
    case 4: /* the legal cases do not complain */
        CAIRN_TX(a) { set_ptr(o, o); set_val(o, 3); set_ptr(o, NULL); }
        break;
    case 11: /* integers kept in pointers (GLib's GINT_TO_POINTER, (void *)0x1000):
                nothing is mapped there, nothing can dangle: stored as they are */
        CAIRN_TX(a) {
            set_ptr(o, (struct obj *)(intptr_t)7);
            if ((intptr_t)o->p != 7) return 3;
            set_ptr(o, (struct obj *)(uintptr_t)0x1000);
            if ((uintptr_t)o->p != 0x1000) return 4;
        }
        break;
    }
    printf("done %d\n", mode);
    cairn_pool_close(a);
    return 0;
}
