/*
 * gc.c -- rebuilding the heap after a crash by marking from the root.
 *
 * Why marking and not reference counts (Breeze, NV-Heaps, NVL-C count
 * references): counts cost a logged update on every pointer store, and
 * cycles need weak pointers the programmer must place. A mark from the root
 * at recovery costs nothing while the program runs, collects cycles, and is
 * the same pass that rebuilds the allocator's bitmaps, which are never kept
 * exact on media (alloc.c). It runs after a crash or on demand
 * (CAIRN_GC=always, `cairn pool gc`), not on a clean open.
 *
 * Finding pointers: every pointer kept in a pool is in relative form (bit
 * 63, this pool's 23-bit id, a 40-bit offset): cairn-cc stores them so and
 * plain C uses cairn_ptr_store. The mark scans each reached object's 8-byte
 * words for values of that form that land in an object, so it needs no
 * type information. It is conservative: an integer that happens to look
 * like a pointer into this pool keeps its target alive (never the reverse).
 *
 * Invariant (4): after recovery an object is allocated iff it is reachable
 * from the root: objects of transactions that did not commit are free (the
 * roll-back removed every link to them), objects freed by committed
 * transactions are free (the program removed the links), and what the
 * root reaches is kept.
 */
#include "internal.h"
#include <errno.h>
#include <stdlib.h>

struct mark_stack { char **v; size_t n, cap; };

static int push(struct mark_stack *s, char *obj)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = obj;
    return 0;
}

/* Mark the object containing off; 1 if newly marked, 0 if not an object
 * or already marked. */
static int mark(cairn_pool *pool, uint64_t off, char **start, const char *from)
{
    char *obj = cairn__object_start(pool, off, false);
    if (!obj) {
        if (pool->bad_ptr) pool->bad_ptr(pool->bad_ptr_ctx, from ? cairn__off(pool, from) : 0, off);
        return 0;
    }
    uint64_t g = (cairn__off(pool, obj) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->ck_kind[g] == CK_RUN) {
        struct run *r = pool->ck_run[g];
        uint32_t slot = (uint32_t)((obj - r->slots) / r->slot_size);
        uint64_t m = (uint64_t)1 << (slot % 64);
        if (atomic_load_explicit(&r->bits[slot / 64], memory_order_relaxed) & m) return 0;
        cairn__run_set_bit(r, slot);
    } else {
        if (pool->ck_mark[g]) return 0;
        pool->ck_mark[g] = 1;
    }
    *start = obj;
    return 1;
}

/* Chunk table -> volatile heap map, with every slot free and every large
 * object unmarked. A large object whose range was partly reused after it
 * was freed (a later run or object overwrote a continuation word) is
 * stale: its chunks go to whoever claims them. */
static int load_table(cairn_pool *pool)
{
    for (uint64_t g = 0; g < pool->nchunks; g++) {
        if (pool->ck_kind[g] == CK_TABLE) continue;
        uint64_t w = *cairn__chunk_table_slot(pool->base, pool->hdr, g);
        if (!cairn__chunk_word_ok(g, w)) {
            cairn__err(EINVAL, "%s: chunk table entry %llu is corrupt (%#llx); the pool "
                       "cannot be recovered safely, restore it from a backup", pool->path,
                       (unsigned long long)g, (unsigned long long)w);
            return -1;
        }
        unsigned kind = w & 0xff;
        uint64_t arg = (w >> 8) & 0xffffffffu;
        if (kind == CK_RUN && arg < CAIRN_NCLASSES && pool->ck_kind[g] == CK_FREE) {
            if (!cairn__run_new(pool, g, (int)arg)) return -1;
        } else if (kind == CK_LARGE && arg >= 1 && g + arg <= pool->nchunks &&
                   (g % CAIRN_ZONE_CHUNKS) + arg <= CAIRN_ZONE_CHUNKS) {
            bool whole = true;
            for (uint64_t k = 1; k < arg && whole; k++) {
                uint64_t wk = *cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                whole = wk == cairn__chunk_word(g + k, CK_CONT, k);
            }
            if (!whole) continue;
            pool->ck_kind[g] = CK_LARGE;
            pool->ck_arg[g] = (uint32_t)arg;
            for (uint64_t k = 1; k < arg; k++) {
                pool->ck_kind[g + k] = CK_CONT;
                pool->ck_arg[g + k] = (uint32_t)k;
            }
            g += arg - 1;
        }
    }
    return 0;
}

int cairn__gc_rebuild(cairn_pool *pool, uint64_t *objects, uint64_t *freed_bytes)
{
    if (load_table(pool)) return -1;
    struct mark_stack st = { 0 };
    uint64_t nobj = 0, used = 0;
    const uint64_t tag = CAIRN_REL_BIT | ((uint64_t)pool->id << CAIRN_ID_SHIFT);
    const uint64_t tag_mask = CAIRN_REL_BIT | (CAIRN_ID_MASK << CAIRN_ID_SHIFT);
    char *obj;
    if (pool->state.root_off && mark(pool, pool->state.root_off, &obj, NULL)) {
        if (push(&st, obj)) goto oom;
        nobj++;
    }
    while (st.n) {
        char *o = st.v[--st.n];
        size_t size = cairn__object_size(pool, o);
        used += size;
        const uint64_t *w = (const uint64_t *)o, *end = (const uint64_t *)(o + size);
        /* the scan is the cost of a recovery: test 8 words per branch */
        for (; w + 8 <= end; w += 8) {
            uint64_t hit = 0;
            for (int k = 0; k < 8; k++) hit |= (uint64_t)(((w[k] ^ tag) & tag_mask) == 0) << k;
            while (hit) {
                int k = __builtin_ctzll(hit);
                hit &= hit - 1;
                if (mark(pool, w[k] & CAIRN_OFF_MASK, &obj, (const char *)(w + k))) {
                    if (push(&st, obj)) goto oom;
                    nobj++;
                }
            }
        }
        for (; w < end; w++) {
            if (((*w ^ tag) & tag_mask) == 0 && mark(pool, *w & CAIRN_OFF_MASK, &obj, (const char *)w)) {
                if (push(&st, obj)) goto oom;
                nobj++;
            }
        }
    }
    free(st.v);
    /* Sweep: unmarked large objects and runs with nothing marked go back to
     * the chunk pool, on media too (their table words describe only
     * unreachable chunks, so this is safe at any point). */
    uint64_t freed = 0;
    for (uint64_t g = 0; g < pool->nchunks; g++) {
        uint64_t *tw = cairn__chunk_table_slot(pool->base, pool->hdr, g);
        switch (pool->ck_kind[g]) {
        case CK_RUN: {
            struct run *r = pool->ck_run[g];
            if ((uint32_t)atomic_load(&r->nfree) == r->nslots) {
                free((void *)r->bits);
                free(r);
                pool->ck_run[g] = NULL;
                pool->ck_kind[g] = CK_FREE;
                freed += CAIRN_CHUNK;
                if (*tw) { *tw = 0; cairn__flush_range(pool, tw, 8); }
            } else {
                struct size_class_heap *h = &pool->classes[r->cls];
                if (atomic_load(&r->nfree) > 0) {
                    atomic_store(&r->listed, 1);
                    r->next = h->partial;
                    h->partial = r;
                }
            }
            break;
        }
        case CK_LARGE: {
            uint64_t n = pool->ck_arg[g];
            if (!pool->ck_mark[g]) {
                for (uint64_t k = 0; k < n; k++) {
                    pool->ck_kind[g + k] = CK_FREE;
                    pool->ck_arg[g + k] = 0;
                    uint64_t *t = cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                    if (*t) { *t = 0; cairn__flush_range(pool, t, 8); }
                }
                freed += n * CAIRN_CHUNK;
            }
            pool->ck_mark[g] = 0;
            g += n - 1;
            break;
        }
        case CK_FREE:
            if (*tw) { *tw = 0; cairn__flush_range(pool, tw, 8); }
            break;
        default:
            break;
        }
    }
    cairn__ofence_pool(pool);
    atomic_store(&pool->used_bytes, used);
    pool->free_hint = 0;
    *objects = nobj;
    *freed_bytes = freed;
    return 0;
oom:
    free(st.v);
    cairn__err(ENOMEM, "%s: out of memory while marking the heap", pool->path);
    return -1;
}
