/*
 * pool.h -- an open pool: the handle (struct cairn_pool, one embedded
 * struct per part that owns state in it), the region that maps pools
 * (region.c), their life (pool.c), what a handle answers (handle.c) and
 * fork (fork.c).
 */
#ifndef CAIRN_POOL_H
#define CAIRN_POOL_H

#include "alloc.h"
#include "gc.h"
#include "tx.h"

#pragma GCC visibility push(hidden)

/* What the open found and did (pool.c, recover.c, gc.c; read by
 * cairn_pool_recovery). */
struct pool_recovery {
    uint64_t  rolled_back, lanes, gc_freed, gc_objects;
    double    seconds, bg_seconds;
};

/* An open pool. The mapping fields at the top are the handle itself: every
 * runtime file reads base, hdr, size and id, and pool.c (life), region.c
 * (slot) and fork.c (inherited, copy_on_fork, fork_snap) write them. Each
 * other part owns one embedded struct. */
struct cairn_pool {
    /* mapping */
    char     *base;
    uint64_t  size;
    int       fd;
    uint32_t  id;
    int       slot;
    uint64_t  open_seq;               /* distinguishes reopenings for caches */
    bool      user_flush;             /* DAX/MAP_SYNC or forced: clwb; else msync */
    bool      recovered;              /* open found a dirty pool */
    bool      no_persist;             /* a private copy (check.c, a fork child's heap): never flush */
    uint32_t  closed;                 /* CAIRN_CLOSED_MAGIC once cairn_pool_close ran */
    /* fork (fork.c) */
    bool      inherited;              /* we are a fork child: read-only view */
    bool      copy_on_fork;           /* a persistent heap: fork children get a copy */
    char     *fork_snap;              /* that copy, made just before fork */
    uint64_t  root_off_pub;           /* state.root_off for lock-free readers (cairn_free) */
    char      path[4096];
    struct pool_hdr *hdr;
    /* the state record (format.c writes it; pool.c and handle.c change it) */
    pthread_mutex_t state_lock;       /* root, size */
    struct pool_state state;          /* current copy */
    struct pool_lanes lanes;
    struct pool_heap heap;
    struct pool_gc gc;
    struct pool_recovery rec;
};

/* ---- region.c ---- */
void cairn__region_reserve(void);
int  cairn__region_nslots(void);
void cairn__pools_lock(void);
void cairn__pools_unlock(void);
cairn_pool *cairn__pool_by_slot(int slot);
const char *cairn__slot_closed_path(int slot);   /* pool last closed there, or NULL */
cairn_pool *cairn__pool_by_id(uint32_t id);
bool cairn__pool_id_seen(uint32_t id);     /* a pool of this id was open in this process */
cairn_pool *cairn__pool_of_file(int fd);   /* open here already (not inherited), or NULL */
int  cairn__slot_take(cairn_pool *pool, const char *path);   /* sets base and slot */
void cairn__slot_release(cairn_pool *pool);
void cairn__slot_unmap(cairn_pool *pool);  /* the slot reserved again, PROT_NONE */
void cairn__slot_forget(int slot);
static inline cairn_pool *cairn__pool_of_addr(const void *p)
{
    if (!cairn__in_region(p)) return NULL;
    return cairn__pool_by_slot((int)(((uintptr_t)p - cairn__region_lo) >> CAIRN_SLOT_SHIFT));
}

/* ---- pool.c ---- */
cairn_pool *cairn__pool_map_private(const char *path, int fd, const struct pool_state *ps);
void cairn__pool_unmap_private(cairn_pool *pool);
/* A pool handle on an image the caller mapped privately and unmaps
 * (cairn__check_image); released with free(). */
cairn_pool *cairn__pool_on_image(const char *path, char *base, const struct pool_state *ps);

/* ---- handle.c ---- */
#define CAIRN_CLOSED_MAGIC 0xc105edu
/* true (and the error set) when pool is a handle cairn_pool_close retired */
bool cairn__pool_closed(const cairn_pool *pool, const char *what);
void cairn__handle_retire(cairn_pool *pool);

/* ---- fork.c ---- */
void cairn__fork_init(void);
bool cairn__fork_child_refuse(const cairn_pool *pool, const char *func, const char *deed);
/* true (and the error set) when this process is a fork child and pool is
 * its parent's: the one guard of every call that would write a pool */
static inline bool cairn__fork_child_refuses(const cairn_pool *pool, const char *func,
                                             const char *deed)
{
    return __builtin_expect(pool->inherited, 0) && cairn__fork_child_refuse(pool, func, deed);
}

/* ---- inline helpers that read the handle ---- */
static inline uint64_t cairn__off(const cairn_pool *pool, const void *p)
{
    return (uint64_t)((const char *)p - pool->base);
}
/* the first byte of chunk g (alloc.c's geometry) */
static inline char *cairn__chunk_addr(const cairn_pool *pool, uint64_t g)
{
    return pool->base + pool->hdr->heap_off + g * CAIRN_CHUNK;
}
/* The background mark's hooks cost one relaxed load while it is off (gc.c). */
static inline bool cairn__gc_on(cairn_pool *pool)
{
    return atomic_load_explicit(&pool->gc.active, memory_order_relaxed) != 0;
}
/* Free ptr now, or after the sweep when the background mark may still scan
 * it: an old object's memory is never reused while it marks (gc.c). */
static inline void cairn__gc_free(cairn_pool *pool, void *ptr)
{
    if (__builtin_expect(cairn__gc_on(pool), 0) && cairn__gc_defer_free(pool, ptr)) return;
    cairn__free_raw(pool, ptr);
}
/* cairn__alloc_raw; when the heap is full while the background sweep has
 * yet to run, it waits for the sweep and tries again (gc.c). */
static inline void *cairn__gc_alloc(cairn_pool *pool, size_t size, size_t *usable)
{
    void *p = cairn__alloc_raw(pool, size, usable);
    if (__builtin_expect(!p, 0)) p = cairn__gc_alloc_after_sweep(pool, size, usable);
    return p;
}

#pragma GCC visibility pop

#endif
