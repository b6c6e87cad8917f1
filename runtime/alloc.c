/*
 * alloc.c -- the allocator: size-class runs with per-thread current runs,
 * whole-chunk large objects, and no persistent allocation table on the hot
 * path (Breeze IV-B).
 *
 * Why no persistent bitmap updates: an allocation or free costs no flush
 * and no fence here. The chunk table (one word per 256 KiB chunk) is the
 * only allocator metadata kept exact on media, and it changes once per run
 * or large object. Slot bitmaps are volatile while the pool is open; a clean
 * close writes them into their runs, and after a crash they are rebuilt by
 * marking from the root (gc.c, in the background: until the sweep, runs
 * that existed at the crash count as full) -- which also frees whatever a
 * crash or the program leaked, so the volatile bitmaps never need to be
 * exact on media. Allocations in a transaction are tracked by tx.c so an abort gives
 * them back; frees in a transaction are applied at commit.
 *
 * Threads: each thread allocates from its own current run of each class
 * (no lock); slots are claimed and released with atomic bit operations, so
 * a free from another thread needs no lock either. A run with free slots
 * that no thread owns sits on its class's partial list.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include <sys/mman.h>
#include <errno.h>
#include <stdlib.h>

const uint32_t cairn__class_size[CAIRN_NCLASSES] = {
    16, 32, 48, 64, 80, 96, 112, 128,
    160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
    1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
    10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768, 40960, 49152, 57344, 65536,
};

int cairn__size_class(size_t size)
{
    if (size > CAIRN_MAX_SMALL) return -1;
    if (size <= 128) return size ? (int)((size - 1) / 16) : 0;
    int lo = 8, hi = CAIRN_NCLASSES - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cairn__class_size[mid] >= size) hi = mid; else lo = mid + 1;
    }
    return lo;
}

/* slots per run and where they start: [bitmap, 64-aligned][slots] */
static void run_geometry(uint32_t slot_size, uint32_t *nslots, uint32_t *data_off)
{
    uint32_t n = (uint32_t)(CAIRN_CHUNK / slot_size);
    for (;; n--) {
        uint32_t bm = ((n + 63) / 64) * 8;
        uint32_t off = (bm + 63) & ~63u;
        if (off + (uint64_t)n * slot_size <= CAIRN_CHUNK) {
            *nslots = n;
            *data_off = off;
            return;
        }
    }
}

/* ---- per-thread current runs ---- */
struct tcache {
    uint64_t open_seq;
    cairn_pool *pool;
    struct run *cur[CAIRN_NCLASSES];
};
static CAIRN_TLS struct tcache *tcaches[64];
static pthread_key_t tcache_key;
static pthread_once_t tcache_once = PTHREAD_ONCE_INIT;

static void release_run(cairn_pool *pool, struct run *r);

static void tcache_thread_exit(void *arg)
{
    (void)arg;
    for (int s = 0; s < 64; s++) {
        struct tcache *tc = tcaches[s];
        if (!tc) continue;
        cairn_pool *p = cairn__pool_by_slot(s);
        if (p && p == tc->pool && p->open_seq == tc->open_seq)
            for (int c = 0; c < CAIRN_NCLASSES; c++)
                if (tc->cur[c]) release_run(p, tc->cur[c]);
        free(tc);
        tcaches[s] = NULL;
    }
}
static void tcache_key_init(void) { pthread_key_create(&tcache_key, tcache_thread_exit); }

static struct tcache *tcache_for(cairn_pool *pool)
{
    struct tcache *tc = tcaches[pool->slot];
    if (tc && tc->open_seq == pool->open_seq && tc->pool == pool) return tc;
    if (!tc) {
        pthread_once(&tcache_once, tcache_key_init);
        pthread_setspecific(tcache_key, (void *)1);
        tc = calloc(1, sizeof *tc);
        if (!tc) return NULL;
        tcaches[pool->slot] = tc;
    }
    memset(tc->cur, 0, sizeof tc->cur);
    tc->open_seq = pool->open_seq;
    tc->pool = pool;
    return tc;
}

void cairn__tcache_forget(cairn_pool *pool)
{
    struct tcache *tc = tcaches[pool->slot];
    if (tc) memset(tc, 0, sizeof *tc);
}

/* ---- volatile heap ---- */
/* The chunk maps are sized once for the largest pool (1 TiB: 4 Mi chunks,
 * 14 bytes each, 56 MiB of address space reserved, MAP_NORESERVE, pages
 * touched only as the pool uses them), so growing a pool never moves them:
 * other threads read them without heap_lock (cairn_usable_size,
 * cairn_free's checks), and a realloc under them was a use after free. */
#define HEAP_MAX_CHUNKS (CAIRN_POOL_MAX_SIZE >> CAIRN_CHUNK_SHIFT)
#define HEAP_MAP_BYTES  (HEAP_MAX_CHUNKS * (sizeof(struct run *) + sizeof(uint32_t) + 2))

/* LeakSanitizer finds live blocks from globals, stacks and the heap, never
 * from anonymous mappings: without this, the runs of a pool left open at
 * exit (a program may end without cairn_pool_close) are reported as leaked,
 * and so is the mark state of a background mark still running then. The
 * run pointers are registered as a root region when a leak checker is
 * linked into the program (weak: absent otherwise). */
extern void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
extern void __lsan_unregister_root_region(const void *p, size_t size) __attribute__((weak));
#define HEAP_RUN_MAP_BYTES (HEAP_MAX_CHUNKS * sizeof(struct run *))

static int heap_arrays(cairn_pool *pool, uint64_t nchunks)
{
    if (nchunks > HEAP_MAX_CHUNKS) {
        cairn__err(EINVAL, "%s: heap of %llu chunks is larger than a pool can be", pool->path,
                   (unsigned long long)nchunks);
        return -1;
    }
    if (!pool->heap.ck_run) {
        char *m = mmap(NULL, HEAP_MAP_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            cairn__err(ENOMEM, "%s: out of memory for the heap map", pool->path);
            return -1;
        }
        pool->heap.ck_run = (struct run **)m;
        if (__lsan_register_root_region) __lsan_register_root_region(m, HEAP_RUN_MAP_BYTES);
        pool->heap.ck_arg = (uint32_t *)(m + HEAP_MAX_CHUNKS * sizeof(struct run *));
        pool->heap.ck_kind = (uint8_t *)(pool->heap.ck_arg + HEAP_MAX_CHUNKS);
        pool->heap.ck_mark = pool->heap.ck_kind + HEAP_MAX_CHUNKS;
    }
    for (uint64_t g = pool->heap.nchunks; g < nchunks; g++) {
        pool->heap.ck_kind[g] = (g % CAIRN_ZONE_CHUNKS == 0) ? CK_TABLE : CK_FREE;
        pool->heap.ck_arg[g] = 0;
        pool->heap.ck_run[g] = NULL;
        pool->heap.ck_mark[g] = 0;
    }
    /* the new entries are set before a lock-free reader can see the count */
    __atomic_store_n(&pool->heap.nchunks, nchunks, __ATOMIC_RELEASE);
    return 0;
}

int cairn__heap_init(cairn_pool *pool)
{
    pool->heap.nchunks = 0;
    return heap_arrays(pool, cairn__heap_chunks(pool->hdr, pool->size));
}

int cairn__heap_grow(cairn_pool *pool)
{
    return heap_arrays(pool, cairn__heap_chunks(pool->hdr, pool->size));
}

void cairn__heap_drop_runs(cairn_pool *pool)
{
    if (pool->heap.ck_run)
        for (uint64_t g = 0; g < pool->heap.nchunks; g++)
            if (pool->heap.ck_kind[g] == CK_RUN && pool->heap.ck_run[g]) {
                free((void *)pool->heap.ck_run[g]->bits);
                free(pool->heap.ck_run[g]->gcmark);
                free(pool->heap.ck_run[g]->gcfree);
                free(pool->heap.ck_run[g]);
                pool->heap.ck_run[g] = NULL;
            }
    pool->heap.nchunks = 0;
}

void cairn__heap_fini(cairn_pool *pool)
{
    cairn__heap_drop_runs(pool);
    if (pool->heap.ck_run) {
        if (__lsan_unregister_root_region)
            __lsan_unregister_root_region(pool->heap.ck_run, HEAP_RUN_MAP_BYTES);
        munmap(pool->heap.ck_run, HEAP_MAP_BYTES);
    }
    pool->heap.ck_kind = NULL;
    pool->heap.ck_arg = NULL;
    pool->heap.ck_run = NULL;
    pool->heap.ck_mark = NULL;
    pool->heap.nchunks = 0;
}

/* ---- the chunk table: the allocator's on-media words (layout: internal.h) ----
 * A word's check bits are a hash of its kind and argument salted with its
 * chunk index, so a word copied to another chunk, or a torn one, fails. */
uint64_t cairn__chunk_word(uint64_t g, unsigned kind, uint64_t arg)
{
    uint64_t low = (uint64_t)kind | (arg << 8);
    if (kind == CK_FREE) return 0;
    uint64_t chk = cairn__hash(&low, 8, g) & 0xffffff;
    return low | (chk << 40);
}

int cairn__chunk_word_ok(uint64_t g, uint64_t word)
{
    if (word == 0) return 1;
    uint64_t low = word & (((uint64_t)1 << 40) - 1);
    unsigned kind = low & 0xff;
    if (kind > CK_CONT) return 0;
    return cairn__chunk_word(g, kind, low >> 8) == word;
}

int cairn__run_word_class(const struct pool_hdr *h, uint64_t arg, bool *exact)
{
    *exact = (arg & CAIRN_RUN_EXACT) != 0;
    if (*exact && h->version < CAIRN_VERSION_EXACT) return -1;
    uint64_t cls = arg & ~(uint64_t)CAIRN_RUN_EXACT;
    return cls < CAIRN_NCLASSES ? (int)cls : -1;
}

static void table_write(cairn_pool *pool, uint64_t g, unsigned kind, uint64_t arg, bool flush)
{
    uint64_t *w = cairn__chunk_table_slot(pool->base, pool->hdr, g);
    uint64_t v = cairn__chunk_word(g, kind, arg);
    if (*w != v) {
        *w = v;
        if (flush && !CAIRN_MUTATED(ALLOC_TABLE_FLUSH)) cairn__flush_range(pool, w, 8);
    }
}

struct run *cairn__run_new(cairn_pool *pool, uint64_t g, int cls)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    uint32_t data_off;
    r->chunk = (uint32_t)g;
    r->cls = (uint16_t)cls;
    r->slot_size = cairn__class_size[cls];
    run_geometry(r->slot_size, &r->nslots, &data_off);
    char *c = cairn__chunk_addr(pool, g);
    r->slots = c + data_off;
    r->pm_bitmap = (uint64_t *)c;
    r->bits = calloc((r->nslots + 63) / 64, 8);
    if (!r->bits) { free(r); return NULL; }
    atomic_store(&r->nfree, (int32_t)r->nslots);
    pool->heap.ck_kind[g] = CK_RUN;
    pool->heap.ck_arg[g] = (uint32_t)cls;
    pool->heap.ck_run[g] = r;
    return r;
}

/* Return an empty run's chunk to the chunk pool (the recovery sweep, before
 * any program thread can hold a pointer into it). */
void cairn__run_drop(cairn_pool *pool, struct run *r)
{
    uint64_t g = r->chunk;
    pool->heap.ck_run[g] = NULL;
    pool->heap.ck_kind[g] = CK_FREE;
    pool->heap.ck_arg[g] = 0;
    free((void *)r->bits);
    free(r->gcmark);
    free(r->gcfree);
    free(r);
    cairn__chunk_clear(pool, g);
}

/* A free chunk's table word says so (a stale word is cleared), flushed;
 * ordered by the caller's next fence. */
void cairn__chunk_clear(cairn_pool *pool, uint64_t g)
{
    table_write(pool, g, CK_FREE, 0, true);
}

void cairn__run_set_bit(struct run *r, uint32_t slot)
{
    uint64_t m = (uint64_t)1 << (slot % 64);
    uint64_t old = atomic_fetch_or(&r->bits[slot / 64], m);
    if (!(old & m)) atomic_fetch_sub(&r->nfree, 1);
}

/* First fit over free chunks, never across a zone's table chunk.
 * Caller holds heap_lock. Returns the first chunk or UINT64_MAX. */
static uint64_t chunks_find(cairn_pool *pool, uint64_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        uint64_t g = pass ? 0 : pool->heap.free_hint, run = 0, start = 0;
        uint64_t end = pass ? pool->heap.free_hint + n : pool->heap.nchunks;
        if (end > pool->heap.nchunks) end = pool->heap.nchunks;
        for (; g < end; g++) {
            if (pool->heap.ck_kind[g] == CK_FREE) {
                if (run++ == 0) start = g;
                if (run == n) return start;
            } else {
                run = 0;
                if (pool->heap.ck_kind[g] == CK_LARGE) g += pool->heap.ck_arg[g] - 1;
            }
        }
    }
    return UINT64_MAX;
}

static void out_of_space(cairn_pool *pool, size_t size)
{
    cairn__err(ENOMEM, "%s: out of space allocating %zu bytes (pool %llu MiB, %llu MiB in use); "
               "grow it with cairn_pool_grow or `cairn pool grow`", pool->path, size,
               (unsigned long long)(pool->size >> 20),
               (unsigned long long)(atomic_load(&pool->heap.used_bytes) >> 20));
}

static struct run *fresh_run(cairn_pool *pool, int cls)
{
    pthread_mutex_lock(&pool->heap.lock);
    uint64_t g = chunks_find(pool, 1);
    struct run *r = NULL;
    if (g != UINT64_MAX && (r = cairn__run_new(pool, g, cls))) {
        pool->heap.free_hint = g + 1;
        /* the table word must be durable before any object of the run is
         * linked from durable data: order it before the caller's stores */
        table_write(pool, g, CK_RUN, (uint64_t)cls, true);
        if (!CAIRN_MUTATED(ALLOC_RUN_OFENCE)) cairn__ofence_pool(pool);
    }
    pthread_mutex_unlock(&pool->heap.lock);
    return r;
}

static void list_run(cairn_pool *pool, struct run *r)
{
    struct size_class_heap *h = &pool->heap.classes[r->cls];
    pthread_mutex_lock(&h->lock);
    if (!atomic_load(&r->listed) && !atomic_load(&r->owned)) {
        atomic_store(&r->listed, 1);
        r->next = h->partial;
        h->partial = r;
    }
    pthread_mutex_unlock(&h->lock);
}

void cairn__run_relist(cairn_pool *pool, struct run *r)
{
    if (!atomic_load(&r->owned) && !atomic_load(&r->listed)) list_run(pool, r);
}

static void release_run(cairn_pool *pool, struct run *r)
{
    atomic_store(&r->owned, 0);
    if (atomic_load(&r->nfree) > 0) list_run(pool, r);
}

/* A run whose table word says its bitmap on media is exact: before any
 * slot of it is handed out (and could be linked from durable data), the
 * word says so no more, durably: else a crash would leave a live object in
 * a slot the bitmap calls free. Once per run per open. */
static void run_inexact(cairn_pool *pool, struct run *r)
{
    pthread_mutex_lock(&pool->heap.lock);
    if (atomic_load(&r->pm_exact)) {
        table_write(pool, r->chunk, CK_RUN, r->cls, true);
        cairn__ofence_pool(pool);
        atomic_store(&r->pm_exact, 0);
    }
    pthread_mutex_unlock(&pool->heap.lock);
}

static struct run *refill(cairn_pool *pool, int cls, struct run *old)
{
    if (old) release_run(pool, old);
    struct size_class_heap *h = &pool->heap.classes[cls];
    struct run *r = NULL;
    pthread_mutex_lock(&h->lock);
    while (h->partial) {
        struct run *c = h->partial;
        h->partial = c->next;
        atomic_store(&c->listed, 0);
        if (atomic_load(&c->nfree) > 0 && !atomic_load(&c->owned)) {
            r = c;
            break;
        }
    }
    if (r) atomic_store(&r->owned, 1);
    pthread_mutex_unlock(&h->lock);
    if (r && atomic_load(&r->pm_exact)) run_inexact(pool, r);
    if (!r && (r = fresh_run(pool, cls))) atomic_store(&r->owned, 1);
    return r;
}

static void *run_take_slot(struct run *r)
{
    uint32_t words = (r->nslots + 63) / 64;
    for (uint32_t k = 0; k < words; k++) {
        uint32_t i = (r->hint + k) % words;
        uint64_t w = atomic_load_explicit(&r->bits[i], memory_order_relaxed);
        while (~w) {
            unsigned b = (unsigned)__builtin_ctzll(~w);
            uint32_t slot = i * 64 + b;
            if (slot >= r->nslots) break;
            uint64_t m = (uint64_t)1 << b;
            uint64_t old = atomic_fetch_or(&r->bits[i], m);
            if (!(old & m)) {
                atomic_fetch_sub(&r->nfree, 1);
                r->hint = i;
                return r->slots + (size_t)slot * r->slot_size;
            }
            w = old | m;
        }
    }
    return NULL;
}

static void *alloc_large(cairn_pool *pool, size_t size, size_t *usable)
{
    uint64_t n = (size + CAIRN_LARGE_HDR + CAIRN_CHUNK - 1) / CAIRN_CHUNK;
    pthread_mutex_lock(&pool->heap.lock);
    uint64_t g = chunks_find(pool, n);
    if (g == UINT64_MAX) {
        pthread_mutex_unlock(&pool->heap.lock);
        return NULL;
    }
    pool->heap.ck_kind[g] = CK_LARGE;
    pool->heap.ck_arg[g] = (uint32_t)n;
    table_write(pool, g, CK_LARGE, n, true);
    for (uint64_t k = 1; k < n; k++) {
        pool->heap.ck_kind[g + k] = CK_CONT;
        pool->heap.ck_arg[g + k] = (uint32_t)k;
        table_write(pool, g + k, CK_CONT, k, true);
    }
    if (!CAIRN_MUTATED(ALLOC_LARGE_OFENCE))
        cairn__ofence_pool(pool);               /* table before any link to it */
    if (g == pool->heap.free_hint) pool->heap.free_hint = g + n;
    pthread_mutex_unlock(&pool->heap.lock);
    *usable = n * CAIRN_CHUNK - CAIRN_LARGE_HDR;
    return cairn__chunk_addr(pool, g) + CAIRN_LARGE_HDR;
}

void *cairn__alloc_raw(cairn_pool *pool, size_t size, size_t *usable)
{
    if (size == 0) size = 1;
    if (size > CAIRN_MAX_ALLOC) {
        cairn__err(EINVAL, "%s: %zu bytes is more than the largest object (%zu bytes)",
                   pool->path, size, (size_t)CAIRN_MAX_ALLOC);
        return NULL;
    }
    int cls = cairn__size_class(size);
    void *p;
    if (cls < 0) {
        p = alloc_large(pool, size, usable);
    } else {
        struct tcache *tc = tcache_for(pool);
        if (!tc) { out_of_space(pool, size); return NULL; }
        struct run *r = tc->cur[cls];
        p = r ? run_take_slot(r) : NULL;
        while (!p) {
            r = refill(pool, cls, r);
            tc->cur[cls] = r;
            if (!r) break;
            p = run_take_slot(r);
        }
        *usable = cairn__class_size[cls];
    }
    if (!p) {
        out_of_space(pool, size);
        return NULL;
    }
    atomic_fetch_add(&pool->heap.used_bytes, *usable);
    return p;
}

/* Start of the object containing pool offset off, or NULL. */
void *cairn__object_start(cairn_pool *pool, uint64_t off, bool require_allocated)
{
    uint64_t heap = pool->hdr->heap_off;
    if (off < heap) return NULL;
    uint64_t g = (off - heap) >> CAIRN_CHUNK_SHIFT;
    if (g >= __atomic_load_n(&pool->heap.nchunks, __ATOMIC_ACQUIRE)) return NULL;
    switch (pool->heap.ck_kind[g]) {
    case CK_RUN: {
        struct run *r = pool->heap.ck_run[g];
        char *p = pool->base + off;
        if (p < r->slots) return NULL;
        uint64_t slot = cairn__run_slot(r, p);
        if (slot >= r->nslots) return NULL;
        if (require_allocated &&
            !(atomic_load(&r->bits[slot / 64]) & ((uint64_t)1 << (slot % 64))))
            return NULL;
        return r->slots + slot * r->slot_size;
    }
    case CK_CONT:
        g -= pool->heap.ck_arg[g];
        /* fallthrough */
    case CK_LARGE: {
        char *data = cairn__chunk_addr(pool, g) + CAIRN_LARGE_HDR;
        if (pool->base + off < data) return NULL;
        return data;
    }
    default:
        return NULL;
    }
}

size_t cairn__object_size(cairn_pool *pool, const void *ptr)
{
    uint64_t g = (cairn__off(pool, ptr) - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->heap.ck_kind[g] == CK_RUN) return pool->heap.ck_run[g]->slot_size;
    if (pool->heap.ck_kind[g] == CK_CONT) g -= pool->heap.ck_arg[g];
    return (size_t)pool->heap.ck_arg[g] * CAIRN_CHUNK - CAIRN_LARGE_HDR;
}

void cairn__free_raw(cairn_pool *pool, void *ptr)
{
    uint64_t off = cairn__off(pool, ptr);
    void *start = cairn__object_start(pool, off, true);
    if (start != ptr) {
        fprintf(stderr, "cairn: cairn_free(%p): not the start of an allocated object in %s; "
                "ignored (double free or a pointer into an object?)\n", ptr, pool->path);
        return;
    }
    uint64_t g = (off - pool->hdr->heap_off) >> CAIRN_CHUNK_SHIFT;
    if (pool->heap.ck_kind[g] == CK_RUN) {
        struct run *r = pool->heap.ck_run[g];
        uint64_t slot = cairn__run_slot(r, ptr);
        uint64_t m = (uint64_t)1 << (slot % 64);
        atomic_fetch_and(&r->bits[slot / 64], ~m);
        atomic_fetch_sub(&pool->heap.used_bytes, r->slot_size);
        atomic_fetch_add(&r->nfree, 1);
        if (!atomic_load(&r->owned) && !atomic_load(&r->listed)) list_run(pool, r);
        return;
    }
    pthread_mutex_lock(&pool->heap.lock);
    uint64_t n = pool->heap.ck_arg[g];
    for (uint64_t k = 0; k < n; k++) {
        pool->heap.ck_kind[g + k] = CK_FREE;
        pool->heap.ck_arg[g + k] = 0;
        table_write(pool, g + k, CK_FREE, 0, true);   /* ordered by the next fence */
    }
    if (g < pool->heap.free_hint) pool->heap.free_hint = g;
    atomic_fetch_sub(&pool->heap.used_bytes, n * CAIRN_CHUNK - CAIRN_LARGE_HDR);
    pthread_mutex_unlock(&pool->heap.lock);
}

/* ---- clean close / clean open ---- */
/* The bitmaps first, fenced, then the table words that call them exact
 * (CAIRN_RUN_EXACT): a crash in between leaves a word that still says
 * exact only over a bitmap that lost frees (torn or not), never one that
 * lost an allocation, since no slot of such a run was handed out. */
void cairn__heap_write_back(cairn_pool *pool)
{
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        if (pool->heap.ck_kind[g] != CK_RUN) continue;
        struct run *r = pool->heap.ck_run[g];
        if ((uint32_t)atomic_load(&r->nfree) == r->nslots) continue;
        uint32_t words = (r->nslots + 63) / 64;
        for (uint32_t i = 0; i < words; i++) r->pm_bitmap[i] = atomic_load(&r->bits[i]);
        if (!CAIRN_MUTATED(ALLOC_BITMAP_FLUSH)) cairn__flush_range(pool, r->pm_bitmap, words * 8);
    }
    cairn__ofence_pool(pool);
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        switch (pool->heap.ck_kind[g]) {
        case CK_RUN: {
            struct run *r = pool->heap.ck_run[g];
            if ((uint32_t)atomic_load(&r->nfree) == r->nslots) {
                /* an empty run goes back to the chunk pool */
                table_write(pool, g, CK_FREE, 0, true);
                break;
            }
            /* a version 1 pool stays readable by the libcairn that made it */
            bool exact = pool->hdr->version >= CAIRN_VERSION_EXACT;
            table_write(pool, g, CK_RUN, r->cls | (exact ? CAIRN_RUN_EXACT : 0), true);
            atomic_store(&r->pm_exact, exact);
            break;
        }
        case CK_LARGE: table_write(pool, g, CK_LARGE, pool->heap.ck_arg[g], true); break;
        case CK_CONT: table_write(pool, g, CK_CONT, pool->heap.ck_arg[g], true); break;
        case CK_FREE: table_write(pool, g, CK_FREE, 0, true); break;
        default: break;
        }
    }
    if (!CAIRN_MUTATED(ALLOC_WRITEBACK_OFENCE)) cairn__ofence_pool(pool);
}

/* After a crash: chunk table -> volatile heap map, with every slot free
 * and every large object unmarked (the mark, gc.c, decides what is kept). A large object whose range was partly reused after it
 * was freed (a later run or object overwrote a continuation word) is
 * stale: its chunks go to whoever claims them. */
/* The state record's root is an object of at least root_size bytes that
 * starts at root_off. Otherwise cairn_root would hand out memory the heap
 * also counts as free, or other objects' (found by tests/fuzz/fuzz_pool,
 * regress/pool: a root 8 bytes into its slot, a crashed pool whose clean
 * flag reads 1). allocated: the heap comes from a clean close's bitmaps,
 * which always hold the root. */
int cairn__root_check(cairn_pool *pool, bool allocated)
{
    uint64_t off = pool->state.root_off;
    if (!off) return 0;
    char *want = pool->base + off;
    if (cairn__object_start(pool, off, false) != want ||
        cairn__object_size(pool, want) < pool->state.root_size) {
        cairn__err(EINVAL, "%s: the root record (offset %#llx, %llu bytes) is not an object of "
                   "the heap: the state record is corrupt; restore the pool from a backup",
                   pool->path, (unsigned long long)off, (unsigned long long)pool->state.root_size);
        return -1;
    }
    if (allocated && cairn__object_start(pool, off, true) != want) {
        cairn__err(EINVAL, "%s: the pool says it was closed cleanly but its heap bitmaps do "
                   "not hold the root object (the clean flag or the bitmaps are damaged); "
                   "open it with CAIRN_GC=always to rebuild the heap from the root, or "
                   "restore it from a backup", pool->path);
        return -1;
    }
    return 0;
}

int cairn__heap_load_table(cairn_pool *pool)
{
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        if (pool->heap.ck_kind[g] == CK_TABLE) continue;
        uint64_t w = *cairn__chunk_table_slot(pool->base, pool->hdr, g);
        if (!cairn__chunk_word_ok(g, w)) {
            cairn__err(EINVAL, "%s: chunk table entry %llu is corrupt (%#llx); the pool "
                       "cannot be recovered safely, restore it from a backup", pool->path,
                       (unsigned long long)g, (unsigned long long)w);
            return -1;
        }
        unsigned kind = w & 0xff;
        uint64_t arg = (w >> 8) & 0xffffffffu;
        bool exact = false;
        int cls = kind == CK_RUN ? cairn__run_word_class(pool->hdr, arg, &exact) : -1;
        if (kind == CK_RUN && cls < 0) {
            cairn__err(EINVAL, "%s: chunk table entry %llu is a run of no known size class "
                       "(%#llx); the pool cannot be recovered safely, restore it from a backup",
                       pool->path, (unsigned long long)g, (unsigned long long)w);
            return -1;
        }
        if (kind == CK_RUN && pool->heap.ck_kind[g] == CK_FREE) {
            struct run *r = cairn__run_new(pool, g, cls);
            if (!r) return -1;
            atomic_store(&r->pm_exact, exact);
        } else if (kind == CK_LARGE && arg >= 1 && g + arg <= pool->heap.nchunks &&
                   (g % CAIRN_ZONE_CHUNKS) + arg <= CAIRN_ZONE_CHUNKS) {
            bool whole = true;
            for (uint64_t k = 1; k < arg && whole; k++) {
                uint64_t wk = *cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                whole = wk == cairn__chunk_word(g + k, CK_CONT, k);
            }
            if (!whole) continue;
            pool->heap.ck_kind[g] = CK_LARGE;
            pool->heap.ck_arg[g] = (uint32_t)arg;
            for (uint64_t k = 1; k < arg; k++) {
                pool->heap.ck_kind[g + k] = CK_CONT;
                pool->heap.ck_arg[g + k] = (uint32_t)k;
            }
            g += arg - 1;
        }
    }
    return cairn__root_check(pool, false);
}

int cairn__heap_load_clean(cairn_pool *pool)
{
    uint64_t used = 0;
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        if (pool->heap.ck_kind[g] == CK_TABLE) continue;
        uint64_t w = *cairn__chunk_table_slot(pool->base, pool->hdr, g);
        if (!cairn__chunk_word_ok(g, w)) {
            cairn__err(EINVAL, "%s: chunk table entry %llu is corrupt; run `cairn pool check %s`",
                       pool->path, (unsigned long long)g, pool->path);
            return -1;
        }
        unsigned kind = w & 0xff;
        uint64_t arg = (w >> 8) & 0xffffffffu;
        if (kind == CK_RUN) {
            bool exact;
            int cls = cairn__run_word_class(pool->hdr, arg, &exact);
            if (cls < 0) goto corrupt;
            struct run *r = cairn__run_new(pool, g, cls);
            if (!r) return -1;
            atomic_store(&r->pm_exact, exact);
            uint32_t words = (r->nslots + 63) / 64;
            int32_t set = 0;
            for (uint32_t i = 0; i < words; i++) {
                uint64_t b = r->pm_bitmap[i];
                if (i == words - 1 && r->nslots % 64) b &= ((uint64_t)1 << (r->nslots % 64)) - 1;
                atomic_store(&r->bits[i], b);
                set += __builtin_popcountll(b);
            }
            atomic_store(&r->nfree, (int32_t)r->nslots - set);
            used += (uint64_t)set * r->slot_size;
            if (set < (int32_t)r->nslots) list_run(pool, r);
        } else if (kind == CK_LARGE) {
            if (arg == 0 || g + arg > pool->heap.nchunks ||
                (g % CAIRN_ZONE_CHUNKS) + arg > CAIRN_ZONE_CHUNKS) goto corrupt;
            pool->heap.ck_kind[g] = CK_LARGE;
            pool->heap.ck_arg[g] = (uint32_t)arg;
            for (uint64_t k = 1; k < arg; k++) {
                pool->heap.ck_kind[g + k] = CK_CONT;
                pool->heap.ck_arg[g + k] = (uint32_t)k;
            }
            used += arg * CAIRN_CHUNK - CAIRN_LARGE_HDR;
            g += arg - 1;
        } else if (kind == CK_CONT) {
            goto corrupt;       /* a continuation without its start */
        }
        continue;
corrupt:
        cairn__err(EINVAL, "%s: chunk table entry %llu (%#llx) is inconsistent; run "
                   "`cairn pool check %s`", pool->path, (unsigned long long)g,
                   (unsigned long long)w, pool->path);
        return -1;
    }
    if (cairn__root_check(pool, true)) return -1;
    atomic_store(&pool->heap.used_bytes, used);
    return 0;
}

/* ---- public ---- */
