/*
 * pool.c -- a pool's life: create, open (and recover), grow, close; the
 * process's start-up and exit. The slot a pool maps into is region.c's,
 * the header it reads and writes format.c's, what happens at fork fork.c's.
 *
 * Pool life:
 *
 *   create ──► OPEN(dirty) ──close──► CLOSED(clean=1: bitmaps exact)
 *                 ▲   │crash                  │open: load bitmaps
 *                 │   ▼                       ▼
 *                 └─ DIRTY ──open: recover (roll back lanes, mark from root)
 *
 * The clean flag is cleared (durably) before the first change of a session
 * and set only after the allocator's state is written back at close.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include "pptr.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

static _Atomic uint64_t open_counter;

static void atexit_close_all(void);

__attribute__((constructor)) static void cairn_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    cairn__persist_init();
    cairn__region_reserve();
    cairn__trace_init();                /* its atexit runs after the one below */
    atexit(atexit_close_all);
    cairn__fork_init();
    cairn__install_segv_handler();
}

/* ---- mapping ---- */
static int map_file(cairn_pool *pool, int fd, uint64_t off, uint64_t len)
{
    char *want = pool->base + off;
    const char *force = getenv("CAIRN_PMEM_FORCE");
    void *p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED, fd, (off_t)off);
    bool user_flush = true;
    if (p == MAP_FAILED) {
        p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)off);
        if (p == MAP_FAILED) return -1;
        user_flush = force && atoi(force) == 1;
    }
    /* a grow maps more of the same file while other threads read the flag:
     * written only when it changes (it does not, for one file) */
    if (pool->user_flush != user_flush) pool->user_flush = user_flush;
    return 0;
}

/* A zeroed pool struct, aligned: each lane's volatile state has a cache
 * line of its own. Freed with free(). */
static cairn_pool *pool_alloc(void)
{
    size_t sz = (sizeof(cairn_pool) + 63) & ~(size_t)63;
    cairn_pool *pool = aligned_alloc(64, sz);
    if (pool) memset(pool, 0, sz);
    return pool;
}

static cairn_pool *pool_new(const char *path, int fd)
{
    cairn_pool *pool = pool_alloc();
    if (!pool) return NULL;
    pool->fd = fd;
    snprintf(pool->path, sizeof pool->path, "%s", path);
    pthread_mutex_init(&pool->state_lock, NULL);
    pthread_mutex_init(&pool->lanes.lock, NULL);
    pthread_cond_init(&pool->lanes.cond, NULL);
    pthread_mutex_init(&pool->heap.lock, NULL);
    pthread_mutex_init(&pool->gc.lock, NULL);
    pthread_cond_init(&pool->gc.cond, NULL);
    for (int c = 0; c < CAIRN_NCLASSES; c++) pthread_mutex_init(&pool->heap.classes[c].lock, NULL);
    pool->open_seq = ++open_counter;
    return pool;
}

/* A private copy of the pool file behind fd, to read and to simulate
 * recovery in (check.c): mapped MAP_PRIVATE outside the region (it is no
 * open pool), never flushed, its locks set up as an open pool's. ps: the
 * state record cairn__state_read chose. */
cairn_pool *cairn__pool_map_private(const char *path, int fd, const struct pool_state *ps)
{
    void *base = mmap(NULL, ps->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        cairn__err(e, "%s: cannot map: %s", path, strerror(e));
        return NULL;
    }
    cairn_pool *pool = cairn__pool_on_image(path, base, ps);
    if (!pool) munmap(base, ps->size);
    return pool;
}

cairn_pool *cairn__pool_on_image(const char *path, char *base, const struct pool_state *ps)
{
    cairn_pool *pool = pool_new(path, -1);
    if (!pool) {
        cairn__err(ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    pool->base = base;
    pool->hdr = (void *)pool->base;
    pool->size = ps->size;
    pool->state = *ps;
    pool->id = (uint32_t)pool->hdr->pool_id;
    pool->no_persist = true;
    pool->slot = -1;
    return pool;
}

void cairn__pool_unmap_private(cairn_pool *pool)
{
    munmap(pool->base, pool->size);
    free(pool);
}

static int lock_file(int fd, const char *path)
{
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        cairn_pool *p = cairn__pool_of_file(fd);
        if (p)
            cairn__err(EBUSY, "%s: pool is already open in this process (as %s); use the "
                       "handle that open returned, or close it first", path, p->path);
        else
            cairn__err(EBUSY, "%s: pool is in use by another process; close it there first",
                       path);
        return -1;
    }
    return 0;
}

/* What to do about a failed open(2) of a pool file: a clause for the
 * message, or "". */
static const char *open_hint(const char *path, int err, bool creating)
{
    struct stat st;
    if (err == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return " (that is a directory: name a file in it, such as DIR/name.pool)";
    if (err == EISDIR)
        return " (that is a directory, not a pool file)";
    if (err == EEXIST)
        return " (open it with cairn_pool_open, or remove it)";
    if (err == ENOENT || err == ENOTDIR) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
                return " (its directory does not exist: create the directory first)";
        }
        return creating ? "" : " (create it with cairn_pool_create)";
    }
    if (err == EACCES || err == EPERM)
        return creating ? " (no permission to create a file there: choose a directory you "
                          "can write)"
                        : " (cairn needs to read and write a pool file, even to read its "
                          "data: it recovers and logs in place; check the file's permissions "
                          "or open it as its owner)";
    if (err == EROFS)
        return " (a read-only file system: cairn writes the pool in place; copy it to a "
               "writable place)";
    if (err == ENOSPC || err == EDQUOT)
        return " (the file system is full: free space or choose another place)";
    return "";
}

cairn_pool *cairn_pool_create(const char *path, const char *layout, size_t size)
{
    cairn_init();
    if (!path || !layout) {
        cairn__err(EINVAL, "cairn_pool_create: path and layout are required");
        return NULL;
    }
    if (strlen(layout) >= CAIRN_LAYOUT_MAX) {
        cairn__err(EINVAL, "%s: layout name longer than %d bytes", path, CAIRN_LAYOUT_MAX - 1);
        return NULL;
    }
    if (size < CAIRN_POOL_MIN_SIZE || size > CAIRN_POOL_MAX_SIZE) {
        cairn__err(EINVAL, "%s: pool size %zu out of range: use 8 MiB .. 1 TiB", path, size);
        return NULL;
    }
    size &= ~(size_t)4095;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        cairn__err(e, "%s: cannot create pool: %s%s", path, strerror(e),
                   open_hint(path, e, true));
        return NULL;
    }
    if (lock_file(fd, path) || ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        if (e != EBUSY) cairn__err(e, "%s: cannot size the pool to %zu bytes: %s", path, size, strerror(e));
        close(fd);
        unlink(path);
        return NULL;
    }
    cairn_pool *pool = pool_new(path, fd);
    if (!pool) {
        cairn__err(ENOMEM, "%s: out of memory", path);
        goto fail_nomap;
    }
    /* A random id, but not one whose relative values are the bits of an
     * everyday negative double (magnitude 2^-127 .. 2^128: ids 0x380000 to
     * 0x47ffff, the exponent in bits 52-62): such numbers kept in a
     * pointer-typed slot (a union with a pointer) must not look like
     * pointers into this pool. */
    uint32_t id = 0;
    while (id == 0 || id == CAIRN_ID_NONE || (id >= 0x380000 && id < 0x480000)) {
        if (getrandom(&id, sizeof id, 0) != sizeof id) id = (uint32_t)(time(NULL) ^ getpid() ^ id * 2654435761u);
        id &= CAIRN_ID_MASK;
    }
    pool->id = id;
    if (cairn__slot_take(pool, path)) goto fail_nomap;
    if (map_file(pool, fd, 0, size)) {
        cairn__err(errno, "%s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    struct pool_hdr *h = (void *)pool->base;
    cairn__header_init(h, layout, id);
    pool->hdr = h;
    pool->size = size;
    pool->state = (struct pool_state){ .seq = 0, .size = size };
    if (!CAIRN_MUTATED(HEADER_FLUSH)) cairn__flush_range(pool, h, sizeof *h);
    cairn__state_write(pool);            /* state A, seq 1 ... */
    cairn__state_write(pool);            /* ... and B, so both copies are valid */
    if (cairn__heap_init(pool)) goto fail;
    cairn__clean_set(pool, 0);
    CAIRN_TRACE_EV(pool_open, pool, TR_OPEN_CREATED);
    return pool;
fail:
    cairn__slot_unmap(pool);
    cairn__slot_release(pool);
fail_nomap:
    close(fd);
    unlink(path);
    free(pool);
    return NULL;
}

cairn_pool *cairn_pool_open(const char *path, const char *layout)
{
    cairn_init();
    if (!path) {
        cairn__err(EINVAL, "cairn_pool_open: path is required");
        return NULL;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        cairn__err(e, "%s: cannot open pool: %s%s", path, strerror(e),
                   open_hint(path, e, false));
        return NULL;
    }
    struct stat stt;
    char why[512];
    char head[CAIRN_HEADER_END];
    if (lock_file(fd, path)) { close(fd); return NULL; }
    if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
        cairn__err(EINVAL, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    memset(head, 0, sizeof head);
    ssize_t got = pread(fd, head, sizeof head, 0);
    if (got < 0 || cairn__header_check(head, (uint64_t)stt.st_size, layout, why, sizeof why)) {
        cairn__err(EINVAL, "%s: %s", path, got < 0 ? strerror(errno) : why);
        close(fd);
        return NULL;
    }
    const struct pool_hdr *hh = (const void *)head;
    struct pool_state st;
    cairn__state_read(head, &st);
    cairn_pool *pool = pool_new(path, fd);
    if (!pool) { close(fd); cairn__err(ENOMEM, "out of memory"); return NULL; }
    pool->id = (uint32_t)hh->pool_id;
    if (cairn__slot_take(pool, path)) { close(fd); free(pool); return NULL; }
    if (map_file(pool, fd, 0, st.size)) {
        cairn__err(errno, "%s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    pool->hdr = (void *)pool->base;
    pool->size = st.size;
    pool->state = st;
    __atomic_store_n(&pool->root_off_pub, st.root_off, __ATOMIC_RELEASE);
    if (cairn__heap_init(pool)) goto fail;
    uint64_t clean = *(uint64_t *)(pool->base + CAIRN_CLEAN_OFF);
    /* Traced before recovery writes anything: the image a trace starts from
     * is the media as the open found it, and recovery's flushes and fences
     * are crash points (`cairn crashcheck` crashes recovery under power loss). */
    CAIRN_TRACE_EV(pool_open, pool, clean != 1 ? TR_OPEN_RECOVERED : TR_OPEN_CLEAN);
    const char *gc = getenv("CAIRN_GC");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (clean == 1 && !(gc && !strcmp(gc, "always"))) {
        if (cairn__heap_load_clean(pool)) goto fail;
    } else {
        /* Recovery: roll back torn transactions, then rebuild the heap from
         * what the root reaches. Nothing is freed on media before the lanes
         * are retired, so a crash anywhere in here recovers the same way. */
        pool->recovered = clean != 1;
        if (cairn__recover_lanes(pool, &pool->rec.rolled_back)) goto fail;
        const char *sync = getenv("CAIRN_GC_SYNC");
        if (sync && strcmp(sync, "0")) {
            if (cairn__gc_rebuild(pool, &pool->rec.gc_objects, &pool->rec.gc_freed)) goto fail;
        } else if (cairn__gc_start(pool)) {    /* marks in the background (gc.c) */
            goto fail;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pool->rec.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cairn__clean_set(pool, 0);
    {
        /* A state copy torn by a crash is rewritten (seq+1, the current
         * state) before this pool can be closed cleanly, so that a bad copy
         * in a cleanly closed pool is always damage (cairn__state_check).
         * Only into the slot the next write goes to anyway: never over the
         * valid copy. */
        int next = (pool->state.seq + 1) & 1 ? 0 : 1;
        if (!cairn__state_copy_ok(pool->base, next) && cairn__state_copy_ok(pool->base, !next)) {
            pthread_mutex_lock(&pool->state_lock);
            cairn__state_write(pool);
            pthread_mutex_unlock(&pool->state_lock);
        }
    }
    if (getenv("CAIRN_VERBOSE"))
        fprintf(stderr, "cairn: opened %s at %p (%s, %.3f s%s)\n", path, (void *)pool->base,
                pool->user_flush ? "user-space flushes" : "msync", pool->rec.seconds,
                pool->recovered ? ", recovered" : "");
    return pool;
fail:
    cairn__heap_fini(pool);
    cairn__slot_unmap(pool);
    cairn__slot_release(pool);
    close(fd);
    free(pool);
    return NULL;
}

static int pool_close(cairn_pool *pool, bool write_back)
{
    if (cairn__fork_child_refuses(pool, "cairn_pool_close", "close it")) return -1;
    if (cairn__lanes_busy(pool)) {
        cairn__err(EBUSY, "%s: transactions are still open on this pool; commit or abort "
                   "them before closing", pool->path);
        return -1;
    }
    cairn__gc_wait(pool);
    if (pool->gc.state == GC_FAILED) write_back = false;   /* stays dirty: marked again */
    if (write_back) {
        cairn__lane_release_exts(pool);
        cairn__heap_write_back(pool);
        cairn__clean_set(pool, 1);
    }
    CAIRN_TRACE_EV(pool_close, pool);
    cairn__ra_caches_clear();       /* before the slot can be reused */
    cairn__tcache_forget(pool);
    cairn__slot_release(pool);
    cairn__slot_unmap(pool);
    cairn__heap_fini(pool);
    close(pool->fd);
    cairn__handle_retire(pool);
    return 0;
}

int cairn_pool_close(cairn_pool *pool)
{
    if (!pool) {
        cairn__err(EINVAL, "cairn_pool_close: NULL pool");
        return -1;
    }
    if (cairn__pool_closed(pool, "cairn_pool_close")) return -1;
    return pool_close(pool, true);
}

static void atexit_close_all(void)
{
    for (int i = 0; i < cairn__region_nslots(); i++) {
        cairn_pool *p = cairn__pool_by_slot(i);
        if (!p) continue;
        if (p->inherited) {             /* a fork child: leave the parent's pool alone */
            cairn__slot_forget(i);
            continue;
        }
        if (pool_close(p, true) != 0 && errno == EBUSY)
            fprintf(stderr, "cairn: %s: a transaction is still open at exit (left by a "
                    "longjmp out of it, or never committed); the next open rolls it back\n",
                    p->path);
    }
}

int cairn_pool_grow(cairn_pool *pool, size_t new_size)
{
    if (!pool) { cairn__err(EINVAL, "cairn_pool_grow: NULL pool"); return -1; }
    if (cairn__pool_closed(pool, "cairn_pool_grow")) return -1;
    size_t asked = new_size;
    new_size &= ~(size_t)4095;
    cairn__gc_wait(pool);               /* the mark sized its own maps for the old size */
    pthread_mutex_lock(&pool->state_lock);
    if (new_size <= pool->size || new_size > CAIRN_POOL_MAX_SIZE) {
        pthread_mutex_unlock(&pool->state_lock);
        char rounded[80] = "";
        if (asked != new_size)
            snprintf(rounded, sizeof rounded, " (rounded down to a multiple of 4 KiB: %zu)", new_size);
        cairn__err(EINVAL, "%s: cannot grow from %llu to %zu bytes%s: the new size must be larger, "
                   "at most 1 TiB", pool->path, (unsigned long long)pool->size, asked, rounded);
        return -1;
    }
    if (ftruncate(pool->fd, (off_t)new_size) != 0) {
        int e = errno;
        pthread_mutex_unlock(&pool->state_lock);
        cairn__err(e, "%s: cannot grow to %zu bytes: %s", pool->path, new_size, strerror(e));
        return -1;
    }
    uint64_t old = pool->size;
    if (map_file(pool, pool->fd, old, new_size - old)) {
        int e = errno;
        pthread_mutex_unlock(&pool->state_lock);
        cairn__err(e, "%s: cannot map the grown part: %s", pool->path, strerror(e));
        return -1;
    }
    pthread_mutex_lock(&pool->heap.lock);
    pool->size = new_size;
    pool->state.size = new_size;
    cairn__state_write(pool);
    CAIRN_TRACE_EV(ev, TR_POOL_GROW, 0, pool, new_size);
    int rc = cairn__heap_grow(pool);
    pthread_mutex_unlock(&pool->heap.lock);
    pthread_mutex_unlock(&pool->state_lock);
    return rc;
}

