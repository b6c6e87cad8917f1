/*
 * object.c -- the public object calls: cairn_alloc, cairn_free,
 * cairn_usable_size. They join the allocator (alloc.c), the transaction
 * (tx.c: an allocation in a transaction is undone on abort, a free takes
 * effect at commit, or at once for an object the transaction allocated) and the background mark (gc.c: an object it may still
 * scan keeps its memory until the sweep), so that none of those three
 * calls another.
 */
#include "persist.h"
#include <errno.h>

void *cairn_alloc(cairn_pool *pool, size_t size)
{
    if (!pool) {
        cairn__err(EINVAL, "cairn_alloc: NULL pool");
        return NULL;
    }
    if (cairn__pool_closed(pool, "cairn_alloc")) return NULL;
    if (cairn__fork_child_refuses(pool, "cairn_alloc", "allocate")) return NULL;
    size_t usable;
    void *p = cairn__gc_alloc(pool, size, &usable);
    if (!p) return NULL;
    bool in_tx = cairn__tx_in(pool);
    CAIRN_TRACE_EV(mem, TR_ALLOC, in_tx ? TR_ALLOC_IN_TX : 0, p, usable);
    cairn__zero_flush(pool, p, usable, in_tx);
    if (in_tx)
        cairn__tx_note_alloc(p, usable);    /* ordered by commit, freed on abort */
    else if (!CAIRN_MUTATED(ALLOC_ZERO_OFENCE))
        cairn__ofence_pool(pool);           /* zeroes before any link to it */
    return p;
}

void cairn_free(void *ptr)
{
    if (!ptr) return;
    cairn_pool *pool = cairn__pool_of_addr(ptr);
    if (!pool) {
        fprintf(stderr, "cairn: cairn_free(%p): not in any open pool; ignored\n", ptr);
        return;
    }
    if (cairn__fork_child_refuses(pool, "cairn_free", "free")) {
        fprintf(stderr, "cairn: cairn_free(%p): %s; ignored\n", ptr, cairn_errormsg());
        return;
    }
    uint64_t root_off = __atomic_load_n(&pool->root_off_pub, __ATOMIC_ACQUIRE);
    if (root_off && cairn__off(pool, ptr) == root_off) {
        /* freed, the root's memory would be handed out again while
         * cairn_root kept returning it */
        fprintf(stderr, "cairn: cairn_free(%p): that is the root of %s, which lives as long "
                "as the pool; ignored (clear its fields instead)\n", ptr, pool->path);
        cairn__err(EINVAL, "cairn_free(%p): the root of %s cannot be freed", ptr, pool->path);
        return;
    }
    size_t traced_size = cairn__tracing() ? cairn_usable_size(ptr) : 0;
    /* in a transaction: at commit, or now for an object it allocated (tx.c) */
    bool at_commit = cairn__tx_in(pool) && cairn__tx_note_free(ptr);
    CAIRN_TRACE_EV(mem, TR_FREE, at_commit ? TR_ALLOC_IN_TX : 0, ptr, traced_size);
    if (at_commit) return;
    cairn__gc_free(pool, ptr);
}

size_t cairn_usable_size(const void *ptr)
{
    cairn_pool *pool = cairn__pool_of_addr(ptr);
    if (!pool || !cairn__object_start(pool, cairn__off(pool, ptr), true)) return 0;
    return cairn__object_size(pool, ptr);
}
