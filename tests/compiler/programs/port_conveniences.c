/*
 * port_conveniences.c -- cairn.h's porting conveniences under cairn-cc:
 * CAIRN_TX_FUNCTION, CAIRN_HEAP_POOL and CAIRN_OPEN_ROOT
 * (tests/compiler/test_ports.py drives it).
 *
 *   prog fill POOL N        N pushes (malloc'd nodes), each one transaction
 *   prog verify POOL        the list and the counters agree; prints them
 *   prog kill POOL          a transaction function SIGKILLs itself halfway
 *   prog early POOL         early returns commit; an abort inside aborts
 *   prog nopool             begin failures: -1, NULL, nothing
 *   prog nopool-struct      begin failure in a struct-returning function
 *   prog heap POOL          calloc, realloc, reallocarray, free of libc memory
 *   prog malloc-early       malloc before the pool is open
 */
#include <cairn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    long key;
    struct node *next;
};
struct root {
    struct node *head;
    long count, sum;
    long half_a, half_b;
    long early;
    char *blob;
    size_t blob_len;
};

static cairn_pool *pool;
static struct root *root;
CAIRN_HEAP_POOL(pool);

CAIRN_TX_FUNCTION(pool)
static int push(long key)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        return -1;
    n->key = key;
    n->next = root->head;
    root->head = n;
    root->count++;
    root->sum += key;
    return 0;
}

/* stores one half, dies, and would store the other */
CAIRN_TX_FUNCTION(pool)
static void die_halfway(void)
{
    root->half_a = root->count + 1;
    root->count += 1000;
    raise(SIGKILL);
    root->half_b = root->count;
}

/* returns early on odd keys: the work done so far commits */
CAIRN_TX_FUNCTION(pool)
static int early(long key)
{
    root->early += key;
    if (key & 1)
        return 1;
    root->early += 100;
    return 0;
}

CAIRN_TX_FUNCTION(pool)
static void aborted(void)
{
    root->early = -7;
    cairn_tx_abort();
}

CAIRN_TX_FUNCTION(pool)
static struct node *first(void)
{
    return root ? root->head : NULL;
}

struct pair { long a, b; };
CAIRN_TX_FUNCTION(pool)
static struct pair pair_of(void)
{
    return (struct pair){ 1, 2 };
}

static int open_pool(const char *path)
{
    root = CAIRN_OPEN_ROOT(pool, path, "ports", 16 << 20, struct root);
    if (!root) {
        fprintf(stderr, "open: %s\n", cairn_errormsg());
        return -1;
    }
    return 0;
}

static int verify(void)
{
    long n = 0, sum = 0;
    for (struct node *x = root->head; x; x = x->next) {
        if (!cairn_is_pm(x)) {
            printf("node %ld not in the pool\n", x->key);
            return 1;
        }
        n++;
        sum += x->key;
    }
    printf("count %ld sum %ld walked %ld/%ld half %ld/%ld early %ld\n", root->count,
           root->sum, n, sum, root->half_a, root->half_b, root->early);
    return n == root->count && sum == root->sum ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "nopool")) {
        errno = 0;
        int r = push(1);
        int e = errno;
        struct node *f = first();
        die_halfway();   /* void: the body does not run */
        printf("push %d errno %s first %p msg %s\n", r, e ? "set" : "unset", (void *)f,
               cairn_errormsg());
        return 0;
    }
    if (!strcmp(cmd, "nopool-struct")) {
        struct pair p = pair_of();
        printf("pair %ld %ld\n", p.a, p.b);
        return 0;
    }
    if (!strcmp(cmd, "malloc-early")) {
        void *p = malloc(16);
        printf("malloc %s errno %d\n", p ? "gave memory" : "NULL", errno);
        return 0;
    }
    if (argc < 3 || open_pool(argv[2]))
        return 2;
    int rc = 0;
    if (!strcmp(cmd, "fill")) {
        long n = argc > 3 ? atol(argv[3]) : 10;
        for (long i = 1; i <= n; i++)
            if (push(i)) {
                fprintf(stderr, "push: %s\n", cairn_errormsg());
                return 1;
            }
        rc = verify();
    } else if (!strcmp(cmd, "verify")) {
        rc = verify();
    } else if (!strcmp(cmd, "kill")) {
        die_halfway();
    } else if (!strcmp(cmd, "early")) {
        int a = early(3), b = early(4);
        aborted();
        printf("early %d %d depth %d\n", a, b, cairn_tx_active());
        rc = verify();
    } else if (!strcmp(cmd, "heap")) {
        long *v = calloc(4, sizeof *v);
        int zero = v && v[0] == 0 && v[3] == 0;
        char *s = strdup("libc memory");   /* not in a pool: free() gives it to libc */
        CAIRN_TX(pool) {
            v[3] = 42;
            v = realloc(v, 64 * sizeof *v);
            v[63] = 7;
            v = reallocarray(v, 128, sizeof *v);
            root->blob = (char *)v;
            root->blob_len = 128 * sizeof *v;
        }
        printf("calloc zero %d in pool %d kept %ld %ld big %d libc %d\n", zero,
               cairn_is_pm(root->blob), ((long *)root->blob)[3], ((long *)root->blob)[63],
               cairn_usable_size(root->blob) >= 128 * sizeof *v, !cairn_is_pm(s));
        free(s);
        if (calloc((size_t)1 << 62, 8) != NULL || errno != ENOMEM)
            rc = 1;
    } else {
        fprintf(stderr, "unknown command %s\n", cmd);
        return 2;
    }
    cairn_pool_close(pool);
    return rc;
}
