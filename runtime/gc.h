/*
 * gc.h -- the mark and sweep after a crash (gc.c): its state, embedded in
 * the pool, and its calls.
 */
#ifndef CAIRN_GC_H
#define CAIRN_GC_H

#include "base.h"

#pragma GCC visibility push(hidden)

enum { GC_NONE, GC_RUNNING, GC_DONE, GC_FAILED };

/* The mark and sweep after a crash (gc.c). */
struct pool_gc {
    _Atomic int active;               /* 1: barriers grey old pointers, frees of old objects wait */
    pthread_mutex_t lock;             /* active changes, the queue, the deferred frees */
    pthread_cond_t cond;
    int       state;                  /* GC_NONE, GC_RUNNING, GC_DONE, GC_FAILED (lock) */
    pthread_t thread;
    bool      joinable;
    uint64_t  root;                   /* the root at the open: where the mark starts */
    uint8_t  *old;                    /* chunks that existed at open: the snapshot */
    uint64_t  nchunks;
    uint64_t *q;                      /* offsets greyed by barriers */
    size_t    qn, qcap;
    void    **deferred;               /* old objects freed while marking */
    size_t    dn, dcap;
    int       oom;                    /* a barrier could not queue: the mark must not free */
    /* check.c: told of pointers that lead to no object */
    void    (*bad_ptr)(void *ctx, uint64_t from_off, uint64_t to_off);
    void     *bad_ptr_ctx;
};

/* ---- gc.c ---- */
int   cairn__gc_rebuild(cairn_pool *pool, uint64_t *objects, uint64_t *freed_bytes);
int   cairn__gc_start(cairn_pool *pool);
void  cairn__gc_forget_in_child(cairn_pool *pool);
void  cairn__gc_wait(cairn_pool *pool);
bool  cairn__gc_wait_if_running(cairn_pool *pool);
void  cairn__gc_barrier(cairn_pool *pool, uintptr_t lo, uintptr_t hi);
bool  cairn__gc_defer_free(cairn_pool *pool, void *ptr);   /* cairn__gc_free's slow path */
void *cairn__gc_alloc_after_sweep(cairn_pool *pool, size_t size, size_t *usable);

#pragma GCC visibility pop

#endif
