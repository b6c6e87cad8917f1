/* An allocation leaked by a crash between allocate and link. Bug: an
 * app-level allocator keeps its own free list of blocks in PM and pops a
 * block (free count persisted) before linking it into the list, with no
 * transaction: a crash between leaves a block that is neither free nor
 * linked, lost for good. Twin: cairn_alloc outside a transaction (atomic)
 * then the link; recovery's mark from the root frees a block the crash
 * left unlinked, so after the open the heap holds the root and the list
 * and nothing else. */
#include "corpus.h"

#define NBLOCKS 6
#define NIL 0xffu                                     /* the end of the bug's list */
struct node { uint64_t next; uint64_t value; };      /* the twin's: next is a pointer */
struct root {
    uint64_t nfree; uint64_t free_idx[NBLOCKS]; uint64_t pad0;  /* bug: the free stack */
    uint64_t head; uint64_t next[NBLOCKS]; uint64_t pad1;       /* bug: list of indexes */
    uint64_t list; uint64_t pad2[7];                            /* twin: list of nodes */
    uint64_t ready;                                             /* bug: the blocks are set up */
};

static void corpus_run(cairn_pool *pool, struct root *r)
{
    if (!TWIN) {
        for (int j = 0; j < NBLOCKS; j++) r->free_idx[j] = (uint64_t)j;
        r->nfree = NBLOCKS;
        r->head = NIL;
        cairn_persist(r, sizeof *r);
        r->ready = 1;
        cairn_persist(&r->ready, 8);
    }
    for (uint64_t i = 1; i <= 3; i++) {
        if (TWIN) {
            struct node *n = cairn_alloc(pool, sizeof *n);
            if (!n) { fprintf(stderr, "cairn_alloc: %s\n", cairn_errormsg()); exit(2); }
            n->value = i;
            cairn_ptr_store(&n->next, cairn_ptr_load(&r->list));
            cairn_persist(n, sizeof *n);
            cairn_ptr_store(&r->list, n);
            cairn_persist(&r->list, 8);
        } else {
            uint64_t b = r->free_idx[--r->nfree];
            cairn_persist(&r->nfree, 8);
            r->next[b] = r->head;
            cairn_persist(&r->next[b], 8);
            r->head = b;
            cairn_persist(&r->head, 8);
        }
    }
}

static int corpus_check(struct root *r)
{
    if (TWIN) {
        uint64_t len = 0;
        for (struct node *n = cairn_ptr_load(&r->list); n; n = cairn_ptr_load(&n->next)) len++;
        struct cairn_recovery rec;
        cairn_pool_recovery(cairn_pool_of(r), &rec);
        /* the root and the list; a crash before the root existed: nothing */
        if (rec.recovered && rec.objects_reachable != len + 1 &&
            !(len == 0 && rec.objects_reachable == 0)) {
            printf("after recovery the heap holds %llu objects, the root and its list %llu\n",
                   (unsigned long long)rec.objects_reachable, (unsigned long long)len + 1);
            return 1;
        }
        return 0;
    }
    if (!r->ready) return 0;
    uint64_t seen = 0, len = 0;
    for (uint64_t j = 0; j < r->nfree && j < NBLOCKS; j++) seen |= 1u << r->free_idx[j];
    for (uint64_t b = r->head; b != NIL && b < NBLOCKS && len <= NBLOCKS; b = r->next[b], len++)
        seen |= 1u << b;
    if (seen != (1u << NBLOCKS) - 1) {
        printf("blocks neither free nor linked: mask %#llx (free %llu, linked %llu)\n",
               (unsigned long long)(~seen & ((1u << NBLOCKS) - 1)), (unsigned long long)r->nfree,
               (unsigned long long)len);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
