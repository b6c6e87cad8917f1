/*
 * trace.c -- CAIRN_TRACE=file: what the program did to persistent memory,
 * event by event, for `cairn trace`, `cairn sim` and `cairn crashcheck`.
 *
 * The file (all little-endian; drawn in full in docs/runtime.md, "Traces"):
 *
 *   +-------------+---------------------------+---------------------------+--
 *   | header 64 B | chunk hdr 32 B | records  | chunk hdr 32 B | records  | ...
 *   +-------------+---------------------------+---------------------------+--
 *   header: "CAIRNTRC", version, sizes, pid, start time
 *   chunk:  "CTCK", thread id, record count, time; then count records of
 *           32 B, all of that thread and in its program order
 *   record: [type:8][aux:8][size:16][loc:32][seq:64][addr:64][arg:64]
 *           addr is a pool address in relative form (bit 63 | pool id << 40
 *           | offset), since pools map at a new address on every run, or a
 *           plain virtual address; seq orders records across threads
 *           (below), so sorting by seq keeps each thread's own order and the
 *           order of any two threads' records that an ordering point of the
 *           later one's thread separates.
 *           DATA records ([type][n][30 bytes]) carry the bytes of the record
 *           before them (a STORE_RANGE's data, a SITE's strings, a pool path).
 *
 * seq: a record's seq is the thread's last ordering point in the high bits
 * and its records since that point in the low SEQ_LOCAL_BITS. An ordering
 * point (a fence, a transaction's begin, commit or abort, an allocation or
 * free, a pool's open, close or growth, a thread's first record) takes the
 * next value of one global counter with a locked add; other records (stores,
 * flushes, non-temporal stores, log appends) only count up locally. So seqs
 * are unique, rise in each thread, and a record that happens after another
 * thread's record (the program's synchronization ordered them) sorts after
 * it when an ordering point of its own thread lies between the
 * synchronization and the record: the locked add at that point reads the
 * counter after the other thread's last one. cairn's transactions give
 * every store to a range another thread may have written such a point (the
 * range's log record is followed by an ofence before the store; a
 * transaction begins with one). A locked add per record cost a full barrier
 * per event: after a clwb it waited for the write-back, half the traced
 * run time of a flush-heavy program (docs/trace.md, "What tracing costs").
 *
 * Why per-thread buffers written to one file under a lock: the hot path
 * (an event) takes no lock -- it fills a slot of the thread's own 64 KiB
 * buffer and publishes it with a plain store; only a full buffer takes the
 * file lock, for one writev(). One file needs no merge step after a crash,
 * and chunk headers keep each thread's records apart. Per-thread files would
 * save the lock but leave N files to find and merge, and lose the order of
 * chunks between threads that the file gives for free.
 *
 * When is the file complete: every thread's buffer is written when it
 * fills, when the thread exits, at every cairn_pool_close (all threads'
 * buffers: a buffer's published records are disjoint from the slot its
 * owner is filling, so another thread may write them out) and at exit,
 * which ends the file with an END record. After SIGKILL the file holds every
 * chunk written so far, and a reader parses it up to the last whole record;
 * what was still in buffers (at most 2047 events per thread) is lost.
 *
 * A bad CAIRN_TRACE path is reported in one line and the program runs on
 * untraced: a trace is a diagnostic, never a reason to stop a program.
 * A fork child stops tracing (its pools are read-only views anyway). %p in
 * the path is the process id; a file another live process is writing (it
 * holds a flock on it) is left alone and this process writes FILE.PID.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TRACE_VERSION 1u
#define TBUF_RECS     2048u           /* 64 KiB per thread */
#define DATA_BYTES    30u

struct trace_file_hdr {
    char     magic[8];                /* "CAIRNTRC" */
    uint32_t version;
    uint32_t hdr_size;                /* 64 */
    uint32_t rec_size;                /* 32 */
    uint32_t chunk_hdr_size;          /* 32 */
    uint64_t pid;
    uint64_t start_ns;                /* CLOCK_MONOTONIC, as chunk times */
    uint64_t start_unix;              /* seconds since 1970 */
    uint64_t reserved[2];
};
struct trace_chunk {
    char     magic[4];                /* "CTCK" */
    uint32_t tid;                     /* 0: the file's own records (sites, END) */
    uint32_t nrec;
    uint32_t reserved;
    uint64_t time_ns;                 /* CLOCK_MONOTONIC when written */
    uint64_t reserved2;
};
struct trace_rec {
    uint8_t  type, aux;
    uint16_t size;
    uint32_t loc;
    uint64_t seq, addr, arg;
};
_Static_assert(sizeof(struct trace_file_hdr) == 64, "trace header layout");
_Static_assert(sizeof(struct trace_chunk) == 32, "trace chunk layout");
_Static_assert(sizeof(struct trace_rec) == 32, "trace record layout");

struct tbuf {
    struct tbuf *next;                /* all live buffers; under file_lock */
    uint32_t tid;
    uint32_t written;                 /* records already in the file; under file_lock */
    _Atomic uint32_t n;               /* records published; stored only by the owner */
    const uint64_t *dram;             /* the owner's cairn__trace_dram_stores */
    uint64_t dram_written;
    uint64_t seq_base, seq_local;     /* the owner's last ordering point, records since */
    struct trace_rec rec[TBUF_RECS];
};

_Atomic bool cairn__trace_on;
CAIRN_TLS uint64_t cairn__trace_dram_stores;

static int trace_fd = -1;
static const char *trace_path;
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *buffers;
static uint32_t next_tid = 1, next_site = 1;
static _Atomic uint64_t trace_seq;
static pthread_key_t tbuf_key;
static CAIRN_TLS struct tbuf *tb;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Caller holds file_lock. On a write error tracing stops, saying why once. */
static void write_chunk(uint32_t tid, const struct trace_rec *r, uint32_t n)
{
    if (trace_fd < 0 || n == 0) return;
    struct trace_chunk c = { .magic = "CTCK", .tid = tid, .nrec = n, .time_ns = now_ns() };
    struct iovec iov[2] = { { &c, sizeof c }, { (void *)r, (size_t)n * sizeof *r } };
    size_t left = iov[0].iov_len + iov[1].iov_len;
    int k = 0;
    while (left) {
        ssize_t w = writev(trace_fd, iov + k, 2 - k);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            fprintf(stderr, "cairn: writing the trace %s failed: %s; tracing stops here "
                    "(the file is parseable up to this point)\n", trace_path,
                    w < 0 ? strerror(errno) : "short write");
            atomic_store(&cairn__trace_on, false);
            close(trace_fd);
            trace_fd = -1;
            return;
        }
        left -= (size_t)w;
        while (k < 2 && (size_t)w >= iov[k].iov_len) w -= (ssize_t)iov[k++].iov_len;
        if (k < 2) {
            iov[k].iov_base = (char *)iov[k].iov_base + w;
            iov[k].iov_len -= (size_t)w;
        }
    }
}

#define SEQ_LOCAL_BITS 24

/* the next ordering point's seq (the file's own records take one each) */
static uint64_t global_seq(void)
{
    return (atomic_fetch_add_explicit(&trace_seq, 1, memory_order_relaxed) + 1) << SEQ_LOCAL_BITS;
}

static bool orders(unsigned type)
{
    switch (type) {
    case TR_THREAD: case TR_FENCE: case TR_TX_BEGIN: case TR_TX_COMMIT: case TR_TX_ABORT:
    case TR_ALLOC: case TR_FREE: case TR_POOL_OPEN: case TR_POOL_CLOSE: case TR_POOL_GROW:
        return true;
    default:
        return false;
    }
}

/* seq of b's owner's next record, of type type (see "seq" above) */
static uint64_t thread_seq(struct tbuf *b, unsigned type)
{
    if (orders(type) || ++b->seq_local >> SEQ_LOCAL_BITS) {
        b->seq_base = global_seq();
        b->seq_local = 0;
    }
    return b->seq_base | b->seq_local;
}

/* Write out b's published records; caller holds file_lock. The owner may be
 * filling slot n meanwhile: it never touches slots below n. */
static void tbuf_write(struct tbuf *b)
{
    uint32_t n = atomic_load_explicit(&b->n, memory_order_acquire);
    struct trace_rec tail[1];
    uint32_t ntail = 0;
    uint64_t dram = __atomic_load_n(b->dram, __ATOMIC_RELAXED);
    if (dram != b->dram_written) {
        tail[ntail++] = (struct trace_rec){ .type = TR_DRAM_STORES, .seq = global_seq(), .arg = dram };
        b->dram_written = dram;
    }
    if (n > b->written) write_chunk(b->tid, b->rec + b->written, n - b->written);
    if (ntail) write_chunk(b->tid, tail, ntail);
    b->written = n;
}

static void tbuf_unlink(struct tbuf *b)
{
    for (struct tbuf **p = &buffers; *p; p = &(*p)->next)
        if (*p == b) { *p = b->next; break; }
}

static void tbuf_thread_exit(void *arg)
{
    struct tbuf *b = arg;
    pthread_mutex_lock(&file_lock);
    tbuf_write(b);
    tbuf_unlink(b);
    pthread_mutex_unlock(&file_lock);
    tb = NULL;            /* a later event of this thread starts a new buffer */
    free(b);
}

static struct trace_rec *rec_new(struct tbuf **out);
static inline void rec_done(struct tbuf *b);

static struct tbuf *tbuf_new(void)
{
    struct tbuf *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->dram = &cairn__trace_dram_stores;
    pthread_mutex_lock(&file_lock);
    b->tid = next_tid++;
    b->next = buffers;
    buffers = b;
    pthread_mutex_unlock(&file_lock);
    pthread_setspecific(tbuf_key, b);
    tb = b;
    struct tbuf *bb;
    struct trace_rec *r = rec_new(&bb);
    *r = (struct trace_rec){ .type = TR_THREAD, .seq = thread_seq(bb, TR_THREAD), .arg = (uint64_t)syscall(SYS_gettid) };
    rec_done(bb);
    return b;
}

/* The next free slot of this thread's buffer (writing the buffer out when
 * it is full); publish it with rec_done. NULL if there is no memory. */
static struct trace_rec *rec_new(struct tbuf **out)
{
    struct tbuf *b = tb;
    if (!b && !(b = tbuf_new())) return NULL;
    uint32_t n = atomic_load_explicit(&b->n, memory_order_relaxed);
    if (n == TBUF_RECS) {
        pthread_mutex_lock(&file_lock);
        tbuf_write(b);
        b->written = 0;
        atomic_store_explicit(&b->n, 0, memory_order_relaxed);
        pthread_mutex_unlock(&file_lock);
        n = 0;
    }
    *out = b;
    return &b->rec[n];
}

static inline void rec_done(struct tbuf *b)
{
    atomic_store_explicit(&b->n, atomic_load_explicit(&b->n, memory_order_relaxed) + 1,
                          memory_order_release);
}

static void emit(unsigned type, unsigned aux, unsigned size, uint32_t loc, uint64_t addr, uint64_t arg)
{
    struct tbuf *b;
    struct trace_rec *r = rec_new(&b);
    if (!r) return;
    *r = (struct trace_rec){ .type = (uint8_t)type, .aux = (uint8_t)aux, .size = (uint16_t)size,
                             .loc = loc, .seq = thread_seq(b, type), .addr = addr, .arg = arg };
    rec_done(b);
}

/* DATA records after the record just emitted: len bytes, 30 per record. */
static void emit_data(const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        struct tbuf *b;
        struct trace_rec *r = rec_new(&b);
        if (!r) return;
        uint8_t *raw = (uint8_t *)r;
        size_t k = len < DATA_BYTES ? len : DATA_BYTES;
        memset(raw, 0, sizeof *r);
        raw[0] = TR_DATA;
        raw[1] = (uint8_t)k;
        memcpy(raw + 2, p, k);
        rec_done(b);
        p += k;
        len -= k;
    }
}

/* The same DATA layout into a local array, for records written straight to
 * the file (site names). Returns the number of records. */
static uint32_t pack_data(struct trace_rec *out, uint32_t max, const char *p, size_t len)
{
    uint32_t n = 0;
    while (len && n < max) {
        uint8_t *raw = (uint8_t *)&out[n++];
        size_t k = len < DATA_BYTES ? len : DATA_BYTES;
        memset(raw, 0, sizeof out[0]);
        raw[0] = TR_DATA;
        raw[1] = (uint8_t)k;
        memcpy(raw + 2, p, k);
        p += k;
        len -= k;
    }
    return n;
}

static uint64_t trace_addr(const void *p)
{
    cairn_pool *pool = cairn__pool_of_addr(p);
    if (!pool) return (uint64_t)(uintptr_t)p;
    return CAIRN_REL_BIT | ((uint64_t)pool->id << CAIRN_ID_SHIFT) | cairn__off(pool, p);
}

/* ---- CAIRN_TRACE_IMAGES=DIR: what `cairn crashcheck` rebuilds the media from ----
 * Stores of code no compiler instrumented (the runtime's own, a plain C
 * program's) are not in the trace, so the lines they changed are: each pool's
 * image is written to DIR/pool-ID.img when it opens, and from then on a LINE
 * record (its 64 bytes in DATA) follows every flushed or streamed line, and
 * before every fence one for each line that differs from what it held at the
 * previous fence (found by comparing with a shadow copy, as
 * tests/unit/crashsim.h does). The comparison reads the whole pool at each
 * fence: a checking mode, not one to leave on. */
static const char *images_dir;
#define MAX_SHADOWS 16
static struct shadow { const cairn_pool *pool; size_t size; unsigned char *mem; } shadows[MAX_SHADOWS];
static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;

static void emit_line(unsigned why, const void *line)
{
    emit(TR_LINE, why, 0, 0, trace_addr(line), 0);
    emit_data(line, CAIRN_CACHELINE);
}

/* the lines [p, p + len) rounded out to whole lines, as they are now */
static void emit_lines(unsigned why, const void *p, uint64_t len)
{
    if (!cairn__pool_of_addr(p)) return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(CAIRN_CACHELINE - 1), end = (uintptr_t)p + len;
    for (; a < end; a += CAIRN_CACHELINE) emit_line(why, (const void *)a);
}

/* Where a fence was issued, for crash points: up to 8 return addresses
 * (TR_STACK, the reader resolves them with the debug info), each object
 * they fall in named once (TR_OBJECT: load base and path). */
#define MAX_OBJECTS 64
static uintptr_t objects_seen[MAX_OBJECTS];
static int nobjects;

static void emit_stack(void)
{
    void *frames[10];
    int n = backtrace(frames, 10);
    uint64_t addr[8];
    int k = 0;
    for (int i = 2; i < n && k < 8; i++) {          /* past emit_stack and the hook */
        Dl_info info;
        uintptr_t a = (uintptr_t)frames[i];
        addr[k++] = a;
        if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
        uintptr_t base = (uintptr_t)info.dli_fbase;
        int j = 0;
        pthread_mutex_lock(&shadow_lock);
        while (j < nobjects && objects_seen[j] != base) j++;
        bool fresh = j == nobjects && nobjects < MAX_OBJECTS;
        if (fresh) objects_seen[nobjects++] = base;
        pthread_mutex_unlock(&shadow_lock);
        if (fresh) {
            char exe[4096];
            const char *path = info.dli_fname;
            if (!*path || !strchr(path, '/')) {    /* the main program: dladdr has argv[0] */
                ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
                if (len > 0) {
                    exe[len] = 0;
                    path = exe;
                }
            }
            emit(TR_OBJECT, 0, 0, 0, 0, base);
            emit_data(path, strlen(path));
        }
    }
    emit(TR_STACK, 0, 0, 0, 0, (uint64_t)k);
    emit_data(addr, (size_t)k * sizeof addr[0]);
}

/* Caller holds shadow_lock. */
static void shadow_diff(struct shadow *sh)
{
    const cairn_pool *pool = sh->pool;
    if (pool->size > sh->size) {          /* grown: the new part was zeros */
        unsigned char *m = realloc(sh->mem, pool->size);
        if (!m) return;
        memset(m + sh->size, 0, pool->size - sh->size);
        sh->mem = m;
        sh->size = pool->size;
    }
    const unsigned char *cur = (const unsigned char *)pool->base;
    for (size_t pg = 0; pg < sh->size; pg += 4096) {
        size_t n = sh->size - pg < 4096 ? sh->size - pg : 4096;
        if (!memcmp(cur + pg, sh->mem + pg, n)) continue;
        for (size_t l = pg; l < pg + n; l += CAIRN_CACHELINE) {
            if (!memcmp(cur + l, sh->mem + l, CAIRN_CACHELINE)) continue;
            memcpy(sh->mem + l, cur + l, CAIRN_CACHELINE);
            emit_line(TR_LINE_AT_FENCE, cur + l);
        }
    }
}

static void shadows_diff(void)
{
    pthread_mutex_lock(&shadow_lock);
    for (int i = 0; i < MAX_SHADOWS; i++)
        if (shadows[i].pool) shadow_diff(&shadows[i]);
    pthread_mutex_unlock(&shadow_lock);
}

static void write_image(const cairn_pool *pool)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/pool-%u.img", images_dir, (unsigned)pool->id);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;                   /* opened before: the first image is the start */
    /* sparse: a 4 KiB block of zeros stays a hole, so a big pool that holds
     * little costs what it holds here and in every copy crashcheck makes */
    const char *fail = NULL;
    for (size_t at = 0; at < pool->size && !fail;) {
        size_t n = pool->size - at < 4096 ? pool->size - at : 4096;
        const uint64_t *w = (const uint64_t *)(pool->base + at);
        uint64_t any = 0;
        for (size_t i = 0; i < n / 8; i++) any |= w[i];
        for (size_t i = n / 8 * 8; i < n; i++) any |= (unsigned char)pool->base[at + i];
        if (!any) {
            at += n;
            continue;
        }
        ssize_t put = pwrite(fd, pool->base + at, n, (off_t)at);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) fail = put < 0 ? strerror(errno) : "short write";
        else at += (size_t)put;
    }
    if (!fail && ftruncate(fd, (off_t)pool->size)) fail = strerror(errno);
    if (fail)
        fprintf(stderr, "cairn: CAIRN_TRACE_IMAGES: writing %s failed: %s; free space "
                "there or point CAIRN_TRACE_IMAGES elsewhere\n", path, fail);
    close(fd);
}

static void shadow_open(const cairn_pool *pool)
{
    write_image(pool);
    pthread_mutex_lock(&shadow_lock);
    for (int i = 0; i < MAX_SHADOWS; i++) {
        if (shadows[i].pool) continue;
        unsigned char *m = malloc(pool->size);
        if (m) {
            memcpy(m, pool->base, pool->size);
            shadows[i] = (struct shadow){ pool, pool->size, m };
        }
        break;
    }
    pthread_mutex_unlock(&shadow_lock);
}

static void shadow_close(const cairn_pool *pool)
{
    pthread_mutex_lock(&shadow_lock);
    for (int i = 0; i < MAX_SHADOWS; i++) {
        if (shadows[i].pool != pool) continue;
        shadow_diff(&shadows[i]);
        free(shadows[i].mem);
        shadows[i] = (struct shadow){ 0 };
    }
    pthread_mutex_unlock(&shadow_lock);
}

/* ---- the hooks ----
 * A signal handler that writes PM while its thread is recording an event
 * would take the same buffer slot (or the file lock the thread holds):
 * while a thread records, its handlers' events are dropped instead. */
static CAIRN_TLS int recording;

static bool hook_enter(void)
{
    if (recording) return false;
    recording = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return true;
}

static void hook_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    recording = 0;
}

void cairn__trace_ev(unsigned type, unsigned aux, const cairn_pool *pool, uint64_t arg)
{
    if (!hook_enter()) return;
    if (images_dir && type == TR_FENCE) shadows_diff();
    emit(type, aux, 0, pool ? pool->id : 0, 0, arg);
    if (images_dir && type == TR_FENCE) emit_stack();
    hook_leave();
}

void cairn__trace_mem(unsigned type, unsigned aux, const void *p, uint64_t arg)
{
    if (!hook_enter()) return;
    emit(type, aux, 0, 0, trace_addr(p), arg);
    if (images_dir && type == TR_FLUSH) emit_lines(TR_LINE_FLUSHED, p, arg * CAIRN_CACHELINE);
    if (images_dir && type == TR_NTSTORE) emit_lines(TR_LINE_NT, p, arg);
    hook_leave();
}

void cairn__trace_pool_open(const cairn_pool *pool, unsigned how)
{
    if (!hook_enter()) return;
    emit(TR_POOL_OPEN, how, 0, pool->id, (uint64_t)(uintptr_t)pool->base, pool->size);
    emit_data(pool->path, strlen(pool->path));
    if (images_dir) shadow_open(pool);
    hook_leave();
}

static void write_all_buffers(void)
{
    pthread_mutex_lock(&file_lock);
    for (struct tbuf *b = buffers; b; b = b->next) tbuf_write(b);
    pthread_mutex_unlock(&file_lock);
}

void cairn__trace_pool_close(const cairn_pool *pool)
{
    if (!hook_enter()) return;
    if (images_dir) shadow_close(pool);
    emit(TR_POOL_CLOSE, 0, 0, pool->id, (uint64_t)(uintptr_t)pool->base, pool->size);
    write_all_buffers();
    hook_leave();
}

/* A site's id and its strings go straight to the file, before the id is
 * published, so no event in the file can name a site the file lacks. */
static uint32_t site_id(struct cairn__trace_site *site)
{
    uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (id) return id;
    pthread_mutex_lock(&file_lock);
    id = site->id;
    if (!id) {
        id = next_site++;
        char names[1024];
        int len = snprintf(names, sizeof names, "%s%c%s", site->file ? site->file : "", 0,
                           site->func ? site->func : "");
        if (len < 0) len = 0;
        if ((size_t)len >= sizeof names) len = sizeof names - 1;
        struct trace_rec recs[1 + (sizeof names + DATA_BYTES - 1) / DATA_BYTES];
        recs[0] = (struct trace_rec){ .type = TR_SITE, .loc = id, .seq = global_seq(),
                                      .arg = site->line };
        uint32_t n = 1 + pack_data(recs + 1, (uint32_t)(sizeof recs / sizeof recs[0]) - 1,
                                   names, (size_t)len + 1);
        write_chunk(0, recs, n);
        __atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&file_lock);
    return id;
}

void cairn__trace_store(const void *addr, uint64_t size, struct cairn__trace_site *site)
{
    if (!cairn__tracing() || !size) return;
    cairn_pool *pool = cairn__pool_of_addr(addr);
    if (!pool) {          /* relaxed: pool close may read it from another thread */
        __atomic_store_n(&cairn__trace_dram_stores,
                         __atomic_load_n(&cairn__trace_dram_stores, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        return;
    }
    if (!hook_enter()) return;
    uint64_t rel = CAIRN_REL_BIT | ((uint64_t)pool->id << CAIRN_ID_SHIFT) | cairn__off(pool, addr);
    uint32_t id = site_id(site);
    if (size <= 8) {
        uint64_t v = 0;
        memcpy(&v, addr, size);       /* what reached PM: relative pointers included */
        emit(TR_STORE, 0, (unsigned)size, id, rel, v);
    } else {
        emit(TR_STORE_RANGE, 0, 0, id, rel, size);
        emit_data(addr, size);
    }
    hook_leave();
}

/* Stores the runtime makes on the program's behalf (cairn_ptr_store from
 * plain C: its 8 bytes are the program's store, not an implied write like
 * a log record). Their sites come from the caller's file:line, not from a
 * static struct the compiler made, so the runtime keeps one site per
 * (file, line, function) in a small table; past its size they share one. */
enum { API_SITES = 512 };
static struct api_site { struct cairn__trace_site site; uint64_t key; } *api_sites[API_SITES];
static pthread_mutex_t api_sites_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cairn__trace_site *api_site(const char *file, int line, const char *func)
{
    static struct cairn__trace_site overflow = { 0, 0, "", "(more sites)" };
    uint64_t key = cairn__hash(file, strlen(file), (uint64_t)(uint32_t)line * 0x9e3779b97f4a7c15ull);
    key = cairn__hash(func, strlen(func), key);
    struct cairn__trace_site *found = &overflow;
    pthread_mutex_lock(&api_sites_lock);
    for (unsigned i = 0; i < API_SITES; i++) {
        struct api_site **e = &api_sites[(key + i) % API_SITES];
        if (*e && (*e)->key == key && (*e)->site.line == (uint32_t)line &&
            !strcmp((*e)->site.file, file) && !strcmp((*e)->site.func, func)) {
            found = &(*e)->site;
            break;
        }
        if (!*e) {
            struct api_site *n = malloc(sizeof *n);
            char *f = strdup(file), *fn = strdup(func);
            if (n && f && fn) {
                *n = (struct api_site){ { 0, (uint32_t)line, f, fn }, key };
                *e = n;
                found = &n->site;
            } else {
                free(n); free(f); free(fn);
            }
            break;
        }
    }
    pthread_mutex_unlock(&api_sites_lock);
    return found;
}

void cairn__trace_api_store(const void *addr, uint64_t size, const char *file, int line,
                            const char *func)
{
    if (!cairn__tracing()) return;
    cairn__trace_store(addr, size, api_site(file ? file : "", line, func ? func : ""));
}

/* ---- start and end ---- */
static void trace_finish(void)
{
    if (!cairn__tracing()) return;
    write_all_buffers();
    pthread_mutex_lock(&file_lock);
    struct trace_rec end = { .type = TR_END, .seq = global_seq(),
                             .arg = atomic_load(&trace_seq) };     /* ordering points taken */
    write_chunk(0, &end, 1);
    atomic_store(&cairn__trace_on, false);  /* later events (other threads) are dropped */
    pthread_mutex_unlock(&file_lock);
}

static void trace_atfork_child(void)
{
    atomic_store(&cairn__trace_on, false);  /* the parent's file is the parent's */
    if (trace_fd >= 0) close(trace_fd);
    trace_fd = -1;
}

/* CAIRN_TRACE and cairn-cc's --persistent-heap=FILE: each %p replaced by
 * the process id (%% by %). */
int cairn__expand_pid_path(const char *in, char *out, size_t len)
{
    size_t o = 0;
    for (const char *c = in; *c; c++) {
        char pid[24];
        const char *put = c;
        size_t n = 1;
        if (c[0] == '%' && (c[1] == 'p' || c[1] == '%')) {
            c++;
            if (*c == 'p') {
                n = (size_t)snprintf(pid, sizeof pid, "%d", (int)getpid());
                put = pid;
            }
        }
        if (o + n >= len) return -1;
        memcpy(out + o, put, n);
        o += n;
    }
    out[o] = 0;
    return 0;
}

/* Open the file, locked against a second process writing it (a child a
 * traced program runs inherits CAIRN_TRACE): that one writes FILE.PID. */
static int open_trace_file(const char *env, char *path, size_t len)
{
    if (cairn__expand_pid_path(env, path, len)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (ftruncate(fd, 0) == 0) return fd;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        close(fd);
        if (attempt == 0) {
            size_t n = strlen(path);
            if (n + 24 > len) break;
            snprintf(path + n, len - n, ".%d", (int)getpid());
            fprintf(stderr, "cairn: CAIRN_TRACE=%s is being written by another process; this "
                    "one writes %s (put %%p in CAIRN_TRACE for one file per process)\n", env, path);
        }
    }
    errno = EBUSY;
    return -1;
}

void cairn__trace_init(void)
{
    static char path[4096];
    const char *env = getenv("CAIRN_TRACE");
    if (!env || !*env) return;
    int fd = open_trace_file(env, path, sizeof path);
    if (fd < 0) {
        fprintf(stderr, "cairn: CAIRN_TRACE=%s: cannot create the trace file: %s; set "
                "CAIRN_TRACE to a writable file path (or unset it); running without a trace\n",
                env, strerror(errno));
        return;
    }
    struct trace_file_hdr h = { .magic = "CAIRNTRC", .version = TRACE_VERSION,
                                .hdr_size = sizeof h, .rec_size = sizeof(struct trace_rec),
                                .chunk_hdr_size = sizeof(struct trace_chunk),
                                .pid = (uint64_t)getpid(), .start_ns = now_ns(),
                                .start_unix = (uint64_t)time(NULL) };
    if (write(fd, &h, sizeof h) != (ssize_t)sizeof h) {
        fprintf(stderr, "cairn: CAIRN_TRACE=%s: cannot write the trace file: %s; running "
                "without a trace\n", path, strerror(errno));
        close(fd);
        return;
    }
    if (pthread_key_create(&tbuf_key, tbuf_thread_exit) != 0) {
        close(fd);
        return;
    }
    trace_fd = fd;
    trace_path = path;
    const char *img = getenv("CAIRN_TRACE_IMAGES");
    if (img && *img) images_dir = img;
    pthread_atfork(NULL, NULL, trace_atfork_child);
    atexit(trace_finish);             /* before the pools' atexit: runs after it */
    atomic_store(&cairn__trace_on, true);
}
