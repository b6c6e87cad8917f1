/*
 * alloc.h -- the allocator (alloc.c): size classes, runs, the chunk
 * table's on-media words, and the volatile heap a pool embeds.
 */
#ifndef CAIRN_ALLOC_H
#define CAIRN_ALLOC_H

#include "format.h"

#pragma GCC visibility push(hidden)

/* ---- chunk table word ----
 *   bits 0..7 kind, 8..39 arg (size class / number of chunks), 40..63 check */
enum chunk_kind { CK_FREE = 0, CK_RUN = 1, CK_LARGE = 2, CK_CONT = 3, CK_TABLE = 4 /* volatile only */ };
/* In a run's arg, beside its size class: the run's bitmap on media holds
 * every object allocated in it (written by a clean close, no slot of the
 * run handed out since). Its free slots are then free at a crash too, and
 * the open after the crash hands them out before the background mark ends
 * (gc.c). The first slot taken from such a run clears the bit durably. */
#define CAIRN_RUN_EXACT 0x10000u

/* ---- size classes ---- */
#define CAIRN_NCLASSES 44
#define CAIRN_MAX_SMALL 65536u
extern const uint32_t cairn__class_size[CAIRN_NCLASSES];
int cairn__size_class(size_t size);   /* -1: large */

/* ---- the volatile heap ---- */
struct run {
    uint32_t chunk;                   /* global chunk index */
    uint16_t cls;
    uint32_t nslots, slot_size;
    char    *slots;                   /* address of slot 0 */
    uint64_t *pm_bitmap;              /* in the chunk; written at clean close */
    _Atomic uint64_t *bits;           /* volatile allocation bitmap */
    _Atomic int32_t nfree;
    _Atomic int owned;                /* a thread's current run */
    _Atomic int listed;               /* on the class's partial list */
    struct run *next;                 /* partial list link */
    uint32_t hint;
    uint64_t *gcmark;                 /* background mark (gc.c): set while this run is old */
    uint64_t *gcfree;                 /* background mark: slots free at the snapshot (exact runs) */
    _Atomic int pm_exact;             /* its table word carries CAIRN_RUN_EXACT */
};

/* The slot of r that holds p (p at or past r->slots). */
static inline uint64_t cairn__run_slot(const struct run *r, const void *p)
{
    return (uint64_t)((const char *)p - r->slots) / r->slot_size;
}

struct size_class_heap {
    pthread_mutex_t lock;
    struct run *partial;
};

/* The allocator's volatile heap (alloc.c; gc.c's mark reads it). */
struct pool_heap {
    pthread_mutex_t lock;
    uint64_t  nchunks;                /* chunks the current size covers */
    uint8_t  *ck_kind;                /* volatile copy of the chunk table */
    uint32_t *ck_arg;                 /* run: class, large: nchunks, cont: distance to start */
    uint8_t  *ck_mark;                /* gc: large object reached */
    struct run **ck_run;
    uint64_t  free_hint;
    struct size_class_heap classes[CAIRN_NCLASSES];
    _Atomic uint64_t used_bytes;
};

/* ---- alloc.c: the heap ---- */
uint64_t cairn__chunk_word(uint64_t g, unsigned kind, uint64_t arg);
int  cairn__chunk_word_ok(uint64_t g, uint64_t word);
/* The size class in a run word's argument, or -1 when it names no class
 * this pool's format has (CAIRN_RUN_EXACT in a version 1 pool included);
 * *exact: the run's bitmap on media is exact. */
int  cairn__run_word_class(const struct pool_hdr *h, uint64_t arg, bool *exact);
static inline uint64_t *cairn__chunk_table_slot(const char *base, const struct pool_hdr *h, uint64_t g)
{
    uint64_t zone = g / CAIRN_ZONE_CHUNKS, j = g % CAIRN_ZONE_CHUNKS;
    return (uint64_t *)(base + h->heap_off + zone * CAIRN_ZONE_BYTES) + j;
}
int   cairn__heap_load_table(cairn_pool *pool);        /* after a crash: from the table */
int   cairn__heap_init(cairn_pool *pool);              /* volatile structures */
void  cairn__heap_fini(cairn_pool *pool);
/* The runs freed, the chunk maps kept (nchunks 0): a pool handed the same
 * maps (pool->heap.ck_run and the rest) before cairn__heap_init reuses them
 * (check.c, checking many images one after another). */
void  cairn__heap_drop_runs(cairn_pool *pool);
int   cairn__heap_load_clean(cairn_pool *pool);        /* from bitmaps */
int   cairn__root_check(cairn_pool *pool, bool allocated);   /* -1 (error set): corrupt root record */
int   cairn__heap_grow(cairn_pool *pool);        /* after pool->size grew */
void  cairn__heap_write_back(cairn_pool *pool);        /* bitmaps + table, at close */
void *cairn__alloc_raw(cairn_pool *pool, size_t size, size_t *usable); /* not zeroed, not flushed */
void  cairn__free_raw(cairn_pool *pool, void *ptr);
size_t cairn__object_size(cairn_pool *pool, const void *ptr);
void *cairn__object_start(cairn_pool *pool, uint64_t off, bool require_allocated);
struct run *cairn__run_new(cairn_pool *pool, uint64_t g, int cls);
void  cairn__run_set_bit(struct run *r, uint32_t slot);
void  cairn__run_drop(cairn_pool *pool, struct run *r);
void  cairn__chunk_clear(cairn_pool *pool, uint64_t g);
void  cairn__tcache_forget(cairn_pool *pool);

void  cairn__run_relist(cairn_pool *pool, struct run *r);

#pragma GCC visibility pop

#endif
