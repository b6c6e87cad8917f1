/*
 * internal.h -- on-media layouts and the runtime's private interfaces.
 *
 * A pool file, drawn to scale only in spirit:
 *
 *   0        4 KiB                       heap_off
 *   +--------+---------------------------+-----------------------------------+
 *   | header |  lanes: 64 x 16 KiB       | zone 0 | zone 1 | ...             |
 *   +--------+---------------------------+-----------------------------------+
 *
 *   header: immutable part (magic, version, layout, pool id, geometry) with
 *           its own checksum; two copies A/B of the mutable state record
 *           (size, root) chosen by sequence number + checksum; the clean flag.
 *   lane:   [gen][undo log, 16 KiB - 8 B]; one lane per
 *           running transaction; the log continues in extension blocks
 *           (large heap objects) linked by JUMP records.
 *   zone:   16384 chunks of 256 KiB (4 GiB). Chunk 0 of a zone is its chunk table:
 *           one 8-byte word per chunk of the zone (kind, argument, check).
 *           A run chunk holds objects of one size class: [bitmap][slots];
 *           the bitmap is written only at a clean close. A large object
 *           spans whole chunks; its data starts 64 B into its first chunk.
 *
 * The allocator's truth while running is volatile (alloc.c); on media only
 * the chunk table is kept exact. After a clean close the run bitmaps are
 * exact too; after a crash the heap is rebuilt by marking from the root
 * (gc.c), so a crash can leak nothing.
 */
#ifndef CAIRN_INTERNAL_H
#define CAIRN_INTERNAL_H

#include "cairn.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <emmintrin.h>

/* Everything declared below is private to libcairn: hidden, so calls
 * between the runtime's files are direct (no PLT) and can be inlined. The
 * ABI that cairn-cc's generated code and the tools use is in cairn.h. */
#pragma GCC visibility push(hidden)

#define CAIRN_MAGIC        "CAIRNPL"
#define CAIRN_VERSION      1u
#define CAIRN_LAYOUT_MAX   64
#define CAIRN_NLANES       64
#define CAIRN_LANE_SIZE    ((uint64_t)16 << 10)
#define CAIRN_LANES_OFF    ((uint64_t)4096)
#define CAIRN_CHUNK_SHIFT  18
#define CAIRN_CHUNK        ((uint64_t)1 << CAIRN_CHUNK_SHIFT)     /* 256 KiB */
#define CAIRN_ZONE_CHUNKS  16384u         /* 4 GiB zones */
#define CAIRN_ZONE_BYTES   (CAIRN_CHUNK * CAIRN_ZONE_CHUNKS)
#define CAIRN_LARGE_HDR    64u          /* data offset inside a large object's first chunk */
#define CAIRN_MAX_ALLOC    ((size_t)(CAIRN_ZONE_CHUNKS - 1) * CAIRN_CHUNK - CAIRN_LARGE_HDR) /* ~4 GiB */
#define CAIRN_CACHELINE    64u

/* ---- header (offset 0) ---- */
struct pool_hdr {                     /* immutable after create */
    char     magic[8];
    uint32_t version;
    uint32_t hdr_size;
    char     layout[CAIRN_LAYOUT_MAX];
    uint64_t pool_id;                 /* 23 bits, never 0 */
    uint64_t uuid[2];
    uint64_t create_time;
    uint64_t nlanes, lanes_off, lane_size;
    uint64_t heap_off, chunk_size, zone_chunks;
    uint64_t checksum;                /* over everything above */
};
struct pool_state {                   /* mutable, two copies at STATE_A/B */
    uint64_t seq;
    uint64_t size;                    /* current file size */
    uint64_t root_off, root_size, root_type;
    uint64_t reserved[2];
    uint64_t checksum;
};
#define CAIRN_STATE_A_OFF  1024u
#define CAIRN_STATE_B_OFF  1152u
#define CAIRN_CLEAN_OFF    1280u      /* uint64: 1 = closed cleanly */
#define CAIRN_HEADER_END   4096u

/* ---- chunk table word ----
 *   bits 0..7 kind, 8..39 arg (size class / number of chunks), 40..63 check */
enum chunk_kind { CK_FREE = 0, CK_RUN = 1, CK_LARGE = 2, CK_CONT = 3, CK_TABLE = 4 /* volatile only */ };

/* ---- undo log records ----
 * [kind:8 | offset:40 | 0:16][len][checksum][data, padded to 8]
 * checksum covers the lane generation, the first two words and the data,
 * so a torn record or one left from an earlier transaction never validates. */
enum rec_kind { REC_UNDO = 1, REC_JUMP = 2 };
/* How tx.c lays records out, which recovery relies on to tell a torn tail
 * from damage (recover.c): an append splits a range into records of at
 * most CAIRN_REC_CHUNK data bytes, and continues in the next block (JUMP)
 * when fewer than CAIRN_LOG_ROOM_MIN bytes are left in the current one. */
#define CAIRN_REC_CHUNK    4096u
#define CAIRN_LOG_ROOM_MIN (2 * (uint64_t)sizeof(struct log_rec) + 64)
struct log_rec {
    uint64_t kind_off;
    uint64_t len;
    uint64_t checksum;
};
/* The generation shares its cache line with the first record, so a small
 * transaction touches two lines (record+mark, data), not three. */
struct lane_hdr {
    _Atomic uint64_t gen;             /* commit mark: bumping it retires the log */
};

/* ---- size classes ---- */
#define CAIRN_NCLASSES 44
#define CAIRN_MAX_SMALL 65536u
extern const uint32_t cairn__class_size[CAIRN_NCLASSES];
int cairn__size_class(size_t size);   /* -1: large */

/* ---- volatile pool ---- */
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
};

struct size_class_heap {
    pthread_mutex_t lock;
    struct run *partial;
};

struct cairn_pool {
    char     *base;
    uint64_t  size;
    int       fd;
    uint32_t  id;
    int       slot;
    uint64_t  open_seq;               /* distinguishes reopenings for caches */
    bool      user_flush;             /* DAX/MAP_SYNC or forced: clwb; else msync */
    bool      recovered;              /* open found a dirty pool */
    bool      inherited;              /* we are a fork child: read-only view */
    uint32_t  closed;                 /* CAIRN_CLOSED_MAGIC once cairn_pool_close ran */
    uint64_t  root_off_pub;           /* state.root_off for lock-free readers (cairn_free) */
    bool      no_persist;             /* a private copy being checked: never flush */
    bool      copy_on_fork;           /* a persistent heap: fork children get a copy */
    char     *fork_snap;              /* that copy, made just before fork (pool.c) */
    /* check.c: told of pointers that lead to no object */
    void    (*bad_ptr)(void *ctx, uint64_t from_off, uint64_t to_off);
    void     *bad_ptr_ctx;
    char      path[4096];
    struct pool_hdr *hdr;
    pthread_mutex_t state_lock;       /* root, size */
    struct pool_state state;          /* current copy */
    /* lanes */
    pthread_mutex_t lane_lock;
    pthread_cond_t lane_cond;
    struct lane_ext *lane_ext[CAIRN_NLANES];   /* extension blocks kept per lane */
    /* per lane, a line of its own: threads on different lanes share no
     * written cache line (a shared busy mask or generation array bounced a
     * line between the cores twice per transaction) */
    struct lane_vol {
        _Atomic uint32_t busy;
        uint64_t gen1;                /* generation + 1 as last written (0: read the
                                         pool); the lane's owner is its only writer */
    } __attribute__((aligned(64))) lanes[CAIRN_NLANES];
    _Atomic int lane_waiters;         /* threads waiting for a lane (all 64 busy) */
    /* heap */
    pthread_mutex_t heap_lock;
    uint64_t  nchunks;                /* chunks the current size covers */
    uint8_t  *ck_kind;                /* volatile copy of the chunk table */
    uint32_t *ck_arg;                 /* run: class, large: nchunks, cont: distance to start */
    uint8_t  *ck_mark;                /* gc: large object reached */
    struct run **ck_run;
    uint64_t  free_hint;
    struct size_class_heap classes[CAIRN_NCLASSES];
    _Atomic uint64_t used_bytes;
    /* background recovery mark (gc.c) */
    _Atomic int gc_active;            /* 1: barriers grey old pointers, frees of old objects wait */
    pthread_mutex_t gc_lock;          /* gc_active changes, the queue, the deferred frees */
    pthread_cond_t gc_cond;
    int       gc_state;               /* GC_NONE, GC_RUNNING, GC_DONE, GC_FAILED (gc_lock) */
    pthread_t gc_thread;
    bool      gc_joinable;
    uint64_t  gc_root;                /* the root at the open: where the mark starts */
    uint8_t  *ck_old;                 /* chunks that existed at open: the snapshot */
    uint64_t  gc_nchunks;
    uint64_t *gc_q;                   /* offsets greyed by barriers */
    size_t    gc_qn, gc_qcap;
    void    **gc_deferred;            /* old objects freed while marking */
    size_t    gc_dn, gc_dcap;
    int       gc_oom;                 /* a barrier could not queue: the mark must not free */
    /* recovery report */
    uint64_t  rec_rolled_back, rec_lanes, rec_gc_freed, rec_gc_objects;
    double    rec_seconds, rec_bg_seconds;
};

enum { GC_NONE, GC_RUNNING, GC_DONE, GC_FAILED };

/* lane extension blocks (volatile list of heap objects used as log space) */
struct lane_ext {
    uint64_t off;                     /* pool offset of the block's data */
    uint64_t cap;
    struct lane_ext *next;
};

/* Thread-local state on the hot paths uses the initial-exec TLS model: no
 * __tls_get_addr call per access in libcairn.so (it measured 10-23 % of a
 * transaction). The cost: libcairn.so cannot be dlopen'ed late into a
 * process that has run out of static TLS space, which programs linked
 * with -lcairn never do. */
#define CAIRN_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- errors ---- */
void cairn__err(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void cairn__violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cairn__describe_caller(void *ra, char *buf, size_t len);

/* ---- checksums ---- */
uint64_t cairn__hash(const void *data, size_t len, uint64_t seed);
/* An undo record's checksum: the lane generation, its first two words, its
 * data (tx.c writes it, recover.c checks it). */
static inline uint64_t cairn__rec_checksum(uint64_t gen, uint64_t kind_off, uint64_t len,
                                           const void *data, uint64_t dlen)
{
    return cairn__hash(data, dlen, gen * 0xd6e8feb86659fd93ULL ^ kind_off ^ (len << 1));
}

/* ---- persist.c ---- */
void cairn__persist_init(void);
void cairn__flush_range(cairn_pool *pool, const void *ptr, size_t len);
cairn_pool *cairn__pool_alloc(void);          /* pool.c: zeroed, 64-byte aligned */
bool cairn__lanes_busy(cairn_pool *pool);    /* tx.c: a transaction is open on pool */
/* the persistence layer's fault-injection seam (persist.c; tests only) */
enum { CAIRN_SEAM_LINES = 1, CAIRN_SEAM_FENCE = 2 };
extern void (*cairn__persist_seam)(int what, const void *p, size_t len);
/* Write nlines whole lines from a 64-byte aligned buffer to 64-byte aligned
 * PM, non-temporally where flushes are user-space; no fence. */
void cairn__pm_write_lines(cairn_pool *pool, void *dst, const void *src, size_t nlines);
void cairn__zero_flush(cairn_pool *pool, void *ptr, size_t len, bool in_tx);
void cairn__ofence_pool(cairn_pool *pool);
void cairn__dfence_pool(cairn_pool *pool);
extern CAIRN_TLS struct cairn_stats cairn__tstats;
extern uint64_t cairn__write_ns;              /* CAIRN_PM_WRITE_NS */
extern bool cairn__flush_clwb;                /* the flush instruction is clwb */
extern CAIRN_TLS int cairn__ndirty;           /* msync domain: dirty ranges pending */
extern CAIRN_TLS volatile unsigned cairn__sig_head, cairn__sig_tail;

/* ---- pptr.c ---- */
void cairn__install_segv_handler(void);
void cairn__ra_caches_clear(void);    /* a pool is closing: empty every cache */

/* ---- pool.c ---- */
#define CAIRN_CLOSED_MAGIC 0xc105edu
/* true (and the error set) when pool is a handle cairn_pool_close retired */
bool cairn__pool_closed(const cairn_pool *pool, const char *what);
cairn_pool *cairn__pool_by_slot(int slot);
const char *cairn__slot_closed_path(int slot);   /* pool last closed there, or NULL */
cairn_pool *cairn__pool_by_id(uint32_t id);
bool cairn__pool_id_seen(uint32_t id);     /* a pool of this id was open in this process */
static inline cairn_pool *cairn__pool_of_addr(const void *p)
{
    if (!cairn__in_region(p)) return NULL;
    return cairn__pool_by_slot((int)(((uintptr_t)p - cairn__region_lo) >> CAIRN_SLOT_SHIFT));
}
static inline uint64_t cairn__off(const cairn_pool *pool, const void *p)
{
    return (uint64_t)((const char *)p - pool->base);
}
int  cairn__header_check(const void *map, uint64_t file_size, const char *layout,
                         char *why, size_t whylen);
uint64_t cairn__hdr_checksum(const struct pool_hdr *h);      /* over the fields before it */
uint64_t cairn__state_checksum(const struct pool_state *s);  /* over the fields before it */
int  cairn__state_read(const char *base, struct pool_state *out);
/* -1 (why filled) when the state copies prove the file damaged: a copy
 * fails its checksum in a pool that was closed cleanly */
int  cairn__state_check(const char *base, char *why, size_t whylen);
int  cairn__state_copy_ok(const char *base, int copy);   /* 0: A, 1: B */
void cairn__state_write(cairn_pool *pool);   /* writes the next copy, dfence */
uint64_t cairn__chunk_word(uint64_t g, unsigned kind, uint64_t arg);
int  cairn__chunk_word_ok(uint64_t g, uint64_t word);
static inline uint64_t *cairn__chunk_table_slot(const char *base, const struct pool_hdr *h, uint64_t g)
{
    uint64_t zone = g / CAIRN_ZONE_CHUNKS, j = g % CAIRN_ZONE_CHUNKS;
    return (uint64_t *)(base + h->heap_off + zone * CAIRN_ZONE_BYTES) + j;
}
static inline char *cairn__chunk_addr(const cairn_pool *pool, uint64_t g)
{
    return pool->base + pool->hdr->heap_off + g * CAIRN_CHUNK;
}
uint64_t cairn__heap_chunks(const struct pool_hdr *h, uint64_t size);

/* ---- alloc.c ---- */
int   cairn__heap_init(cairn_pool *pool);              /* volatile structures */
void  cairn__heap_fini(cairn_pool *pool);
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
void  cairn__tcache_forget(cairn_pool *pool);

/* ---- tx.c ---- */
void  cairn__tx_note_alloc(void *ptr, size_t usable);
int   cairn__tx_note_free(void *ptr);   /* 1: deferred to commit */
bool  cairn__tx_in(cairn_pool *pool);
void  cairn__lane_release_exts(cairn_pool *pool);

/* ---- recover.c / gc.c ---- */
int   cairn__recover_lanes(cairn_pool *pool, uint64_t *records);
int   cairn__gc_rebuild(cairn_pool *pool, uint64_t *objects, uint64_t *freed_bytes);
int   cairn__gc_start(cairn_pool *pool);
void  cairn__gc_wait(cairn_pool *pool);
bool  cairn__gc_wait_if_running(cairn_pool *pool);
void  cairn__gc_barrier(cairn_pool *pool, uintptr_t lo, uintptr_t hi);
bool  cairn__gc_defer_free(cairn_pool *pool, void *ptr);
void  cairn__run_relist(cairn_pool *pool, struct run *r);
/* The background mark's hooks cost one relaxed load while it is off. */
static inline bool cairn__gc_on(cairn_pool *pool)
{
    return atomic_load_explicit(&pool->gc_active, memory_order_relaxed) != 0;
}
long  cairn__lane_records(cairn_pool *pool, unsigned lane, const struct log_rec ***v,
                          size_t *cap, char *why, size_t whylen);
/* strict: also prove damage past the first invalid record (recovery, check);
 * abort reads back the log it just wrote and passes false */
int   cairn__lane_scan(cairn_pool *pool, unsigned lane,
                       int (*fn)(void *ctx, const struct log_rec *r, const char *data), void *ctx,
                       bool strict, bool *beyond, char *why, size_t whylen);

/* ---- trace.c: CAIRN_TRACE=file (format: docs/runtime.md "Traces") ----
 * Hooks are one macro line each in persist.c, tx.c, alloc.c and pool.c. With
 * tracing off a hook costs one load of a flag that never changes after
 * start-up and a branch predicted not taken; the arguments are not even
 * evaluated. */
enum trace_type {
    TR_THREAD = 1, TR_POOL_OPEN, TR_POOL_CLOSE, TR_POOL_GROW,
    TR_TX_BEGIN, TR_TX_COMMIT, TR_TX_ABORT, TR_LOG_APPEND,
    TR_ALLOC, TR_FREE, TR_FLUSH, TR_FENCE, TR_NTSTORE,
    TR_STORE, TR_STORE_RANGE, TR_DATA, TR_SITE, TR_DRAM_STORES, TR_END,
};
enum { TR_FLUSH_CLWB, TR_FLUSH_CLFLUSHOPT, TR_FLUSH_CLFLUSH, TR_FLUSH_MSYNC };  /* FLUSH aux */
enum { TR_OFENCE, TR_DFENCE };                                                 /* FENCE aux */
enum { TR_OPEN_CLEAN = 0, TR_OPEN_CREATED = 1, TR_OPEN_RECOVERED = 2 };         /* POOL_OPEN aux */
#define TR_ALLOC_IN_TX 1u         /* ALLOC/FREE aux: in a transaction (free: applied at commit) */
#define TR_ALLOC_ROOT  2u         /* ALLOC aux: the root object */

extern _Atomic bool cairn__trace_on __attribute__((visibility("hidden")));
#define cairn__tracing() atomic_load_explicit(&cairn__trace_on, memory_order_relaxed)  /* a plain load */
#define CAIRN_TRACE_EV(what, ...) \
    do { if (__builtin_expect(cairn__tracing(), 0)) cairn__trace_##what(__VA_ARGS__); } while (0)
void cairn__trace_init(void);                      /* reads CAIRN_TRACE; from cairn_init */
/* ---- persist.c's common case, inlined into the transaction's hot path ----
 * A transaction's every flush and fence used to be a call (with its stack
 * frame): stores that wait in the store buffer behind the fence before them
 * (an 8-byte transaction made 168 stores, and 50 more stores measured +30-40
 * ns). When the pool has user-space flushes and nothing else is asked for
 * (no msync ranges pending in this thread, no test seam, no trace, no
 * injected latency), these do exactly what the out-of-line versions do;
 * otherwise they call them. */
static inline bool cairn__plain_persist(const cairn_pool *pool)
{
    return pool->user_flush && !pool->no_persist && !cairn__write_ns &&
           !cairn__persist_seam && !cairn__tracing();
}
static inline void cairn__fence_fast(cairn_pool *pool, bool durable)
{
    if (__builtin_expect(pool->user_flush && !cairn__ndirty && cairn__sig_head == cairn__sig_tail &&
                         !cairn__persist_seam && !cairn__tracing(), 1)) {
        if (durable) cairn__tstats.dfences++;
        else cairn__tstats.ofences++;
        __builtin_ia32_sfence();
    } else if (durable) {
        cairn__dfence_pool(pool);
    } else {
        cairn__ofence_pool(pool);
    }
}
/* one whole 64-byte line, non-temporally (cairn__pm_write_lines, n = 1) */
static inline void cairn__pm_write_line_fast(cairn_pool *pool, void *dst, const void *src)
{
    if (__builtin_expect(cairn__plain_persist(pool), 1)) {
        const __m128i *s = src;
        __m128i *d = dst;
        _mm_stream_si128(d, _mm_load_si128(s));
        _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
        _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
        _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
        cairn__tstats.flushes++;
    } else {
        cairn__pm_write_lines(pool, dst, src, 1);
    }
}
/* write back the line holding p (cairn__flush_range of one line) */
static inline void cairn__flush_line_fast(cairn_pool *pool, const void *p)
{
    if (__builtin_expect(cairn__flush_clwb && cairn__plain_persist(pool), 1)) {
        cairn__tstats.flushes++;
        __asm__ volatile("clwb %0" : "+m"(*(volatile char *)((uintptr_t)p & ~(uintptr_t)63)));
    } else {
        cairn__flush_range(pool, p, 1);
    }
}

/* an event about a pool (or none): loc = pool id */
void cairn__trace_ev(unsigned type, unsigned aux, const cairn_pool *pool, uint64_t arg);
/* an event about memory at p: recorded as (pool id, offset) when p is in a pool */
void cairn__trace_mem(unsigned type, unsigned aux, const void *p, uint64_t arg);
void cairn__trace_pool_open(const cairn_pool *pool, unsigned how);
void cairn__trace_pool_close(const cairn_pool *pool);    /* also writes every buffer out */
/* a store the runtime makes for the program (cairn_ptr_store): a `store`
 * event at the caller's file:line, named as the function `func` */
void cairn__trace_api_store(const void *addr, uint64_t size, const char *file, int line,
                            const char *func);

/* ---- check.c ---- */
struct cairn_check_report {
    int errors;
    uint64_t objects, object_bytes, run_chunks, large_chunks, free_chunks;
    uint64_t open_lanes, pending_records;
    bool state_damaged;               /* the state copies prove damage: nothing else checked */
};
typedef void (*cairn_check_emit)(void *ctx, const char *severity, const char *msg);
/* Read-only: the file is mapped privately, recovery is simulated in the
 * copy. Returns 0 if consistent, 1 if errors were found, -1 if the file
 * cannot be read as a pool (message through emit). */
int cairn__check_file(const char *path, bool full, cairn_check_emit emit, void *ctx,
                      struct cairn_check_report *rep);

#pragma GCC visibility pop

#endif
