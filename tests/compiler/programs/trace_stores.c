/* trace_stores.c -- known stores to PM for test_trace.py (cairn-cc --trace).
 * The test finds lines by their "TRACE:" comments. Modes:
 *   single   one transaction writing every field of a node, then DRAM work
 *   threads  4 threads, each 200 transactions on its own slot
 *   bigcopy  200000 bytes filled in DRAM (counted stores) copied into PM:
 *            the copy's bytes span buffers, with dram_stores records between */
#include <cairn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node { uint64_t key; struct node *next; char name[24]; uint32_t small; uint8_t byte;
              char tag[16], fmt[16]; };
struct root { struct node *head; uint64_t count; uint64_t slot[4]; };

static cairn_pool *P;
static struct root *R;
static uint64_t dram[64];

__attribute__((noinline)) static void set_key(struct node *n, uint64_t k)
{
    n->key = k; /* TRACE:key */
}

static void *worker(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    for (uint64_t j = 0; j < 200; j++)
        CAIRN_TX(P) { R->slot[i] = j; } /* TRACE:slot */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    unlink(argv[1]);
    P = cairn_pool_create(argv[1], "trace", 8 << 20);
    if (!P) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 1; }
    R = CAIRN_ROOT(P, struct root);
    if (!strcmp(argv[2], "single")) {
        CAIRN_TX(P) {
            struct node *n = cairn_alloc(P, sizeof *n);
            set_key(n, 0x1122334455667788ULL);
            n->small = 0xdeadbeef; /* TRACE:small */
            n->byte = 0x5a; /* TRACE:byte */
            memcpy(n->name, "persistent name", 16); /* TRACE:name */
            strcpy(n->tag, argv[2]); /* TRACE:strcpy */
            snprintf(n->fmt, sizeof n->fmt, "%d-%s", argc * 14, argv[2]); /* TRACE:snprintf */
            n->next = R->head; /* TRACE:next */
            R->head = n; /* TRACE:head */
            R->count = 7; /* TRACE:count */
        }
        for (int i = 0; i < 64; i++) dram[i] = (uint64_t)(i * argc); /* TRACE:dram */
        uint64_t sum = 0;
        for (int i = 0; i < 64; i++) sum += dram[i];
        printf("%llu\n", (unsigned long long)sum);
    } else if (!strcmp(argv[2], "bigcopy")) {
        size_t n = 200000;
        unsigned char *src = malloc(n);
        if (!src) return 1;
        for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 7 + (i >> 8));
        CAIRN_TX(P) {
            struct node *d = cairn_alloc(P, n);
            memcpy(d, src, n); /* TRACE:bigcopy */
            R->head = d;
        }
        free(src);
    } else {
        pthread_t th[4];
        for (uintptr_t i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)i);
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    }
    cairn_pool_close(P);
    unlink(argv[1]);
    return 0;
}
