/* A linked-list push that links the node (head persisted) before the
 * node's next pointer is durable: after a crash the list ends at the new
 * node and the older nodes are gone. Twin: the node, next included, is
 * persisted before the head. Node k holds value k: a whole list read from
 * the head is k, k-1, ..., 1. */
#include "corpus.h"

struct node { uint64_t value; uint64_t pad[7]; uint64_t next; uint64_t pad2[7]; };
struct root { uint64_t head; uint64_t pad[7]; };

static void corpus_run(cairn_pool *pool, struct root *r)
{
    for (uint64_t i = 1; i <= 3; i++) {
        struct node *n = cairn_alloc(pool, sizeof *n);
        if (!n) { fprintf(stderr, "cairn_alloc: %s\n", cairn_errormsg()); exit(2); }
        n->value = i;
        cairn_persist(&n->value, 8);
        cairn_ptr_store(&n->next, cairn_ptr_load(&r->head));
        if (TWIN) cairn_persist(&n->next, 8);
        cairn_ptr_store(&r->head, n);
        cairn_persist(&r->head, 8);
        if (!TWIN) cairn_persist(&n->next, 8);
    }
}

static int corpus_check(struct root *r)
{
    const struct node *n = cairn_ptr_load(&r->head);
    if (!n) return 0;
    uint64_t want = n->value;
    for (; n; n = cairn_ptr_load(&n->next), want--)
        if (n->value != want) break;
    if (!n && want == 0) return 0;
    printf("list from head %llu breaks off before value %llu\n",
           (unsigned long long)((const struct node *)cairn_ptr_load(&r->head))->value,
           (unsigned long long)want);
    return 1;
}

CORPUS_MAIN
