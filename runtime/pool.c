/*
 * pool.c -- pools: the region that holds them, create/open/close/grow, the
 * header and the typed root.
 *
 * At start-up the runtime reserves one virtual region (PROT_NONE, no swap
 * charged) of N slots of 1 TiB; every pool maps into a slot, so "is this
 * PM" is a subtract and compare and address -> (pool, offset) is a shift.
 * The region lands wherever the kernel puts it (ASLR), so a pool maps at a
 * different address on most runs: nothing in a pool depends on where it is.
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
#include "internal.h"
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

uintptr_t cairn__region_lo = 1, cairn__region_hi = 1;   /* empty until reserved */
static int region_slots;
static cairn_pool *slot_pool[64];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t open_counter;

static void atexit_close_all(void);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

__attribute__((constructor)) static void cairn_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    cairn__persist_init();
    int want = 64;
    const char *e = getenv("CAIRN_REGION_SLOTS");
    if (e && atoi(e) > 0 && atoi(e) <= 64) want = atoi(e);
    for (int n = want; n >= 1; n /= 2) {
        size_t len = (size_t)n << CAIRN_SLOT_SHIFT;
        void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            cairn__region_lo = (uintptr_t)p;
            cairn__region_hi = (uintptr_t)p + len;
            region_slots = n;
            break;
        }
    }
    cairn__trace_init();                /* its atexit runs after the one below */
    atexit(atexit_close_all);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    cairn__install_segv_handler();
}

cairn_pool *cairn__pool_by_slot(int slot)
{
    return (slot >= 0 && slot < region_slots) ? slot_pool[slot] : NULL;
}

/* The ids of the pools this process has had open (up to 256, then the
 * oldest are forgotten): a relative value of one of them whose pool is no
 * longer open is a pointer kept past its pool's close, which stops the
 * program with a message; one of an id never seen here is bits that only
 * look relative (runtime/pptr.c). */
static _Atomic uint32_t seen_ids[256];
static _Atomic unsigned seen_next;

static void note_seen_id(uint32_t id)
{
    for (unsigned i = 0; i < 256; i++)
        if (atomic_load_explicit(&seen_ids[i], memory_order_relaxed) == id) return;
    atomic_store_explicit(&seen_ids[atomic_fetch_add(&seen_next, 1) % 256], id,
                          memory_order_relaxed);
}

bool cairn__pool_id_seen(uint32_t id)
{
    if (id == 0) return false;              /* never a pool's (and the table's empty entry) */
    for (unsigned i = 0; i < 256; i++)
        if (atomic_load_explicit(&seen_ids[i], memory_order_relaxed) == id) return true;
    return false;
}

cairn_pool *cairn__pool_by_id(uint32_t id)
{
    static CAIRN_TLS int last_slot;          /* a slot, never a pool pointer: pools close */
    cairn_pool *p = slot_pool[last_slot];
    if (p && p->id == id) return p;
    for (int i = 0; i < region_slots; i++) {
        p = slot_pool[i];
        if (p && p->id == id) {
            last_slot = i;
            return p;
        }
    }
    return NULL;
}

/* The pool whose mapped bytes hold ptr: an address in a pool's 1 TiB slot
 * but past its size is no pool's (compiler/rt's word scan relies on it: a
 * string or integer that happens to fall in a slot is not a pointer). */
cairn_pool *cairn_pool_of(const void *ptr)
{
    cairn_pool *pool = cairn__pool_of_addr(ptr);
    if (pool && (uint64_t)((const char *)ptr - pool->base) >= __atomic_load_n(&pool->size, __ATOMIC_RELAXED))
        return NULL;
    return pool;
}
int cairn_is_pm(const void *ptr) { return cairn__pool_of_addr(ptr) != NULL; }

/* ---- header ---- */
uint64_t cairn__heap_chunks(const struct pool_hdr *h, uint64_t size)
{
    return size > h->heap_off ? (size - h->heap_off) / CAIRN_CHUNK : 0;
}

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

uint64_t cairn__state_checksum(const struct pool_state *s)
{
    return cairn__hash(s, offsetof(struct pool_state, checksum), 0x5747);
}

uint64_t cairn__hdr_checksum(const struct pool_hdr *h)
{
    return cairn__hash(h, offsetof(struct pool_hdr, checksum), 0x4844);
}

int cairn__state_read(const char *base, struct pool_state *out)
{
    const struct pool_state *a = (const void *)(base + CAIRN_STATE_A_OFF);
    const struct pool_state *b = (const void *)(base + CAIRN_STATE_B_OFF);
    int va = a->checksum == cairn__state_checksum(a), vb = b->checksum == cairn__state_checksum(b);
    if (!va && !vb) return -1;
    if (va && (!vb || a->seq >= b->seq)) *out = *a;
    else *out = *b;
    return 0;
}

int cairn__state_copy_ok(const char *base, int copy)
{
    const struct pool_state *s = (const void *)(base + (copy ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF));
    return s->checksum == cairn__state_checksum(s);
}

/* The state copies of a cleanly closed pool are both whole: each write is
 * dfenced before the next and the last one before the clean flag is set,
 * and an open that finds a copy torn by a crash rewrites it before the
 * pool can be closed cleanly again (cairn_pool_open). So in a pool closed
 * cleanly a copy that fails its checksum was damaged after it was written.
 * Which copy was the newer cannot be told (its sequence number is as
 * unreliable as the rest of it), and opening with the other could go back
 * silently to an older root or size: refuse. A dirty pool's bad copy may
 * be a torn write of the newest state, never made durable; the other copy
 * is then the current state, as always. */
int cairn__state_check(const char *base, char *why, size_t whylen)
{
    uint64_t clean = *(const uint64_t *)(base + CAIRN_CLEAN_OFF);
    int va = cairn__state_copy_ok(base, 0), vb = cairn__state_copy_ok(base, 1);
    if (clean != 1 || va == vb) return 0;
    const struct pool_state *good = (const void *)(base + (va ? CAIRN_STATE_A_OFF : CAIRN_STATE_B_OFF));
    snprintf(why, whylen, "state copy %c fails its checksum in a pool that was closed cleanly: "
             "the file is damaged (a crash cannot tear a copy of a cleanly closed pool), and "
             "copy %c (sequence %llu) may be older than the damaged one, so opening with it "
             "could silently go back to an older root; restore the pool from a backup "
             "(`cairn pool check FILE` shows both copies)", va ? 'B' : 'A', va ? 'A' : 'B',
             (unsigned long long)good->seq);
    return -1;
}

/* Write pool->state (seq+1) into the copy not holding the current one. */
void cairn__state_write(cairn_pool *pool)
{
    pool->state.seq++;
    pool->state.checksum = cairn__state_checksum(&pool->state);
    struct pool_state *dst = (void *)(pool->base + ((pool->state.seq & 1) ? CAIRN_STATE_A_OFF : CAIRN_STATE_B_OFF));
    *dst = pool->state;
    cairn__flush_range(pool, dst, sizeof *dst);
    cairn__dfence_pool(pool);
}

int cairn__header_check(const void *map, uint64_t file_size, const char *layout,
                        char *why, size_t whylen)
{
    const struct pool_hdr *h = map;
    if (file_size < CAIRN_HEADER_END) {
        snprintf(why, whylen, "file is %llu bytes, too small to be a cairn pool (truncated?)",
                 (unsigned long long)file_size);
        return -1;
    }
    if (memcmp(h->magic, CAIRN_MAGIC, 8)) {
        snprintf(why, whylen, "not a cairn pool (bad magic); create one with cairn_pool_create");
        return -1;
    }
    if (h->version != CAIRN_VERSION) {
        snprintf(why, whylen, "pool format version %u, this libcairn reads version %u; "
                 "use the cairn release that made it", h->version, CAIRN_VERSION);
        return -1;
    }
    if (h->checksum != cairn__hdr_checksum(h)) {
        snprintf(why, whylen, "header checksum mismatch: the header is corrupt; "
                 "restore the pool from a backup");
        return -1;
    }
    if (memchr(h->layout, 0, CAIRN_LAYOUT_MAX) == NULL || h->hdr_size != sizeof *h ||
        h->nlanes != CAIRN_NLANES || h->lanes_off != CAIRN_LANES_OFF ||
        h->lane_size != CAIRN_LANE_SIZE || h->chunk_size != CAIRN_CHUNK ||
        h->zone_chunks != CAIRN_ZONE_CHUNKS || h->pool_id == 0 || h->pool_id >= CAIRN_ID_NONE ||
        h->heap_off < h->lanes_off + h->nlanes * h->lane_size || h->heap_off % CAIRN_CHUNK) {
        snprintf(why, whylen, "header geometry is inconsistent (corrupt header)");
        return -1;
    }
    struct pool_state st;
    if (cairn__state_read(map, &st)) {
        snprintf(why, whylen, "both copies of the pool state are corrupt; restore from a backup");
        return -1;
    }
    if (cairn__state_check(map, why, whylen)) return -1;
    if (st.size > file_size) {
        snprintf(why, whylen, "pool says it is %llu bytes but the file has %llu: the file "
                 "was truncated; restore it", (unsigned long long)st.size,
                 (unsigned long long)file_size);
        return -1;
    }
    if (st.size < h->heap_off + 2 * CAIRN_CHUNK || st.size > CAIRN_POOL_MAX_SIZE) {
        snprintf(why, whylen, "pool size %llu in the state record is out of range (corrupt)",
                 (unsigned long long)st.size);
        return -1;
    }
    if (st.root_off) {
        uint64_t nch = cairn__heap_chunks(h, st.size);
        /* the whole root inside the heap: an object that ran past its end
         * would be handed to the program as writable (found by
         * tests/fuzz/fuzz_pool, regress/pool/root-past-end) */
        uint64_t heap_end = h->heap_off + nch * CAIRN_CHUNK;
        if (st.root_off < h->heap_off || st.root_off >= heap_end ||
            st.root_size == 0 || st.root_size > CAIRN_MAX_ALLOC ||
            st.root_size > heap_end - st.root_off || st.root_type == 0) {
            snprintf(why, whylen, "root record points outside the heap (corrupt)");
            return -1;
        }
    }
    if (layout && strncmp(h->layout, layout, CAIRN_LAYOUT_MAX)) {
        snprintf(why, whylen, "layout is \"%.64s\", the program asked for \"%s\"; open it "
                 "with the program that created it", h->layout, layout);
        return -1;
    }
    return 0;
}

/* ---- mapping ---- */
static int pick_slot(void)
{
    if (region_slots == 0) return -1;
    unsigned r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) {
        /* no entropy yet (early boot, some sandboxes): time alone would give
         * every process started in one second the same slot */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                     ((uint64_t)getpid() << 17) ^ (uint64_t)(uintptr_t)&ts;
        r = (unsigned)(cairn__hash(&x, sizeof x, 0x736c6f74) >> 7);
    }
    for (int k = 0; k < region_slots; k++) {
        int s = (int)((r + (unsigned)k) % (unsigned)region_slots);
        if (!slot_pool[s]) return s;
    }
    return -1;
}

static char *slot_base(int slot) { return (char *)(cairn__region_lo + ((uintptr_t)slot << CAIRN_SLOT_SHIFT)); }

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

static void unmap_slot(cairn_pool *pool)
{
    /* put the reservation back so the slot stays ours */
    mmap(pool->base, (size_t)1 << CAIRN_SLOT_SHIFT, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/* A zeroed pool struct, aligned: each lane's volatile state has a cache
 * line of its own. Freed with free(). */
cairn_pool *cairn__pool_alloc(void)
{
    size_t sz = (sizeof(cairn_pool) + 63) & ~(size_t)63;
    cairn_pool *pool = aligned_alloc(64, sz);
    if (pool) memset(pool, 0, sz);
    return pool;
}

static cairn_pool *pool_new(const char *path, int fd)
{
    cairn_pool *pool = cairn__pool_alloc();
    if (!pool) return NULL;
    pool->fd = fd;
    snprintf(pool->path, sizeof pool->path, "%s", path);
    pthread_mutex_init(&pool->state_lock, NULL);
    pthread_mutex_init(&pool->lane_lock, NULL);
    pthread_cond_init(&pool->lane_cond, NULL);
    pthread_mutex_init(&pool->heap_lock, NULL);
    pthread_mutex_init(&pool->gc_lock, NULL);
    pthread_cond_init(&pool->gc_cond, NULL);
    for (int c = 0; c < CAIRN_NCLASSES; c++) pthread_mutex_init(&pool->classes[c].lock, NULL);
    pool->open_seq = ++open_counter;
    return pool;
}

static void set_clean(cairn_pool *pool, uint64_t v)
{
    uint64_t *clean = (uint64_t *)(pool->base + CAIRN_CLEAN_OFF);
    *clean = v;
    cairn__flush_range(pool, clean, 8);
    cairn__dfence_pool(pool);
}

static int take_slot(cairn_pool *pool, const char *path)
{
    pthread_mutex_lock(&pools_lock);
    for (int i = 0; i < region_slots; i++) {
        if (slot_pool[i] && slot_pool[i]->id == pool->id) {
            pthread_mutex_unlock(&pools_lock);
            cairn__err(EEXIST, "%s: pool id %u is already open as %s (a copy of the same pool?); "
                       "close it first", path, pool->id, slot_pool[i]->path);
            return -1;
        }
    }
    int s = pick_slot();
    if (s < 0) {
        pthread_mutex_unlock(&pools_lock);
        cairn__err(EMFILE, "%s: no free slot in the persistent region (%d pools open%s); "
                   "close a pool first", path, region_slots,
                   region_slots ? "" : ": the region could not be reserved");
        return -1;
    }
    pool->slot = s;
    pool->base = slot_base(s);
    slot_pool[s] = pool;      /* published after mapping by the caller */
    note_seen_id(pool->id);
    pthread_mutex_unlock(&pools_lock);
    return 0;
}

/* The path of the pool last closed in each slot (its tail if long), for the
 * SIGSEGV handler's message about a pointer kept past its pool's close. */
static char slot_closed[64][128];

static void release_slot(cairn_pool *pool)
{
    pthread_mutex_lock(&pools_lock);
    if (slot_pool[pool->slot] == pool) {
        slot_pool[pool->slot] = NULL;
        size_t n = strlen(pool->path), keep = sizeof slot_closed[0] - 1;
        const char *from = n > keep ? pool->path + (n - keep) : pool->path;
        memcpy(slot_closed[pool->slot], from, strlen(from) + 1);
    }
    pthread_mutex_unlock(&pools_lock);
}

const char *cairn__slot_closed_path(int slot)
{
    return slot >= 0 && slot < region_slots && slot_closed[slot][0] ? slot_closed[slot] : NULL;
}

/* Is the file behind fd one this process has open as a pool already? */
static cairn_pool *open_here(int fd)
{
    struct stat a, b;
    if (fstat(fd, &a) != 0) return NULL;
    cairn_pool *found = NULL;
    pthread_mutex_lock(&pools_lock);
    for (int i = 0; i < region_slots && !found; i++)
        if (slot_pool[i] && !slot_pool[i]->inherited && fstat(slot_pool[i]->fd, &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            found = slot_pool[i];
    pthread_mutex_unlock(&pools_lock);
    return found;
}

static int lock_file(int fd, const char *path)
{
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        cairn_pool *p = open_here(fd);
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
    if (take_slot(pool, path)) goto fail_nomap;
    if (map_file(pool, fd, 0, size)) {
        cairn__err(errno, "%s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    struct pool_hdr *h = (void *)pool->base;
    memset(h, 0, CAIRN_HEADER_END);
    memcpy(h->magic, CAIRN_MAGIC, 8);
    h->version = CAIRN_VERSION;
    h->hdr_size = sizeof *h;
    snprintf(h->layout, CAIRN_LAYOUT_MAX, "%s", layout);
    h->pool_id = id;
    if (getrandom(h->uuid, sizeof h->uuid, 0) != sizeof h->uuid) h->uuid[0] = (uint64_t)time(NULL);
    h->create_time = (uint64_t)time(NULL);
    h->nlanes = CAIRN_NLANES;
    h->lanes_off = CAIRN_LANES_OFF;
    h->lane_size = CAIRN_LANE_SIZE;
    h->heap_off = (CAIRN_LANES_OFF + CAIRN_NLANES * CAIRN_LANE_SIZE + CAIRN_CHUNK - 1) & ~(CAIRN_CHUNK - 1);
    h->chunk_size = CAIRN_CHUNK;
    h->zone_chunks = CAIRN_ZONE_CHUNKS;
    h->checksum = cairn__hdr_checksum(h);
    pool->hdr = h;
    pool->size = size;
    pool->state = (struct pool_state){ .seq = 0, .size = size };
    cairn__flush_range(pool, h, sizeof *h);
    cairn__state_write(pool);            /* state A, seq 1 ... */
    cairn__state_write(pool);            /* ... and B, so both copies are valid */
    if (cairn__heap_init(pool)) goto fail;
    set_clean(pool, 0);
    CAIRN_TRACE_EV(pool_open, pool, TR_OPEN_CREATED);
    return pool;
fail:
    unmap_slot(pool);
    release_slot(pool);
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
    if (take_slot(pool, path)) { close(fd); free(pool); return NULL; }
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
        if (cairn__recover_lanes(pool, &pool->rec_rolled_back)) goto fail;
        const char *sync = getenv("CAIRN_GC_SYNC");
        if (sync && strcmp(sync, "0")) {
            if (cairn__gc_rebuild(pool, &pool->rec_gc_objects, &pool->rec_gc_freed)) goto fail;
        } else if (cairn__gc_start(pool)) {    /* marks in the background (gc.c) */
            goto fail;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pool->rec_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    set_clean(pool, 0);
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
    CAIRN_TRACE_EV(pool_open, pool, pool->recovered ? TR_OPEN_RECOVERED : TR_OPEN_CLEAN);
    if (getenv("CAIRN_VERBOSE"))
        fprintf(stderr, "cairn: opened %s at %p (%s, %.3f s%s)\n", path, (void *)pool->base,
                pool->user_flush ? "user-space flushes" : "msync", pool->rec_seconds,
                pool->recovered ? ", recovered" : "");
    return pool;
fail:
    cairn__heap_fini(pool);
    unmap_slot(pool);
    release_slot(pool);
    close(fd);
    free(pool);
    return NULL;
}

/* A closed handle is kept, marked, for a while: a use after cairn_pool_close
 * (a second close, an allocation or a transaction through a stale handle)
 * is then reported instead of reading freed memory. The last 64 handles
 * closed are kept (11 KiB each); an older stale handle is undefined
 * behaviour, as any pointer to freed memory. */
#define CLOSED_KEEP 64
static cairn_pool *closed_ring[CLOSED_KEEP];
static unsigned closed_next;
static pthread_mutex_t closed_lock = PTHREAD_MUTEX_INITIALIZER;

static void retire_handle(cairn_pool *pool)
{
    __atomic_store_n(&pool->closed, CAIRN_CLOSED_MAGIC, __ATOMIC_RELEASE);
    pthread_mutex_lock(&closed_lock);
    cairn_pool *old = closed_ring[closed_next % CLOSED_KEEP];
    closed_ring[closed_next % CLOSED_KEEP] = pool;
    closed_next++;
    pthread_mutex_unlock(&closed_lock);
    free(old);
}

bool cairn__pool_closed(const cairn_pool *pool, const char *what)
{
    if (__atomic_load_n(&pool->closed, __ATOMIC_ACQUIRE) != CAIRN_CLOSED_MAGIC) return false;
    cairn__err(EBADF, "%s: %s: this handle was closed by cairn_pool_close; open the pool "
               "again for a new handle", what, pool->path);
    return true;
}

static int pool_close(cairn_pool *pool, bool write_back)
{
    if (pool->inherited) {
        cairn__err(EPERM, "%s: this process is a fork child; the pool belongs to its parent",
                   pool->path);
        return -1;
    }
    if (cairn__lanes_busy(pool)) {
        cairn__err(EBUSY, "%s: transactions are still open on this pool; commit or abort "
                   "them before closing", pool->path);
        return -1;
    }
    cairn__gc_wait(pool);
    if (pool->gc_state == GC_FAILED) write_back = false;   /* stays dirty: marked again */
    if (write_back) {
        cairn__lane_release_exts(pool);
        cairn__heap_write_back(pool);
        set_clean(pool, 1);
    }
    CAIRN_TRACE_EV(pool_close, pool);
    cairn__ra_caches_clear();       /* before the slot can be reused */
    cairn__tcache_forget(pool);
    release_slot(pool);
    unmap_slot(pool);
    cairn__heap_fini(pool);
    close(pool->fd);
    retire_handle(pool);
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
    for (int i = 0; i < region_slots; i++) {
        cairn_pool *p = slot_pool[i];
        if (!p) continue;
        if (p->inherited) {             /* a fork child: leave the parent's pool alone */
            slot_pool[i] = NULL;
            continue;
        }
        if (pool_close(p, true) != 0 && errno == EBUSY)
            fprintf(stderr, "cairn: %s: a transaction is still open at exit (left by a "
                    "longjmp out of it, or never committed); the next open rolls it back\n",
                    p->path);
    }
}

/* persistent-heap mode (compiler/rt/cairn_pheap.c): the pool is the
 * process's malloc heap, so a fork child gets its own copy of it, as it
 * does of the rest of its memory, instead of a read-only view. */
void cairn__pool_copy_on_fork(cairn_pool *pool)
{
    pool->copy_on_fork = true;
}

/* A private anonymous copy of the pool's data extents (pools are sparse),
 * or NULL when it could not be made. */
static char *data_copy(cairn_pool *p)
{
    size_t len = p->size;
    char *copy = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (copy == MAP_FAILED) return NULL;
    off_t off = 0, end;
    while (off < (off_t)len) {
        off_t data = lseek(p->fd, off, SEEK_DATA);
        if (data < 0 && errno == ENXIO) break;           /* no data after off */
        if (data < 0) { data = off; end = (off_t)len; }  /* no SEEK_DATA: copy all */
        else {
            end = lseek(p->fd, data, SEEK_HOLE);
            if (end < 0 || end > (off_t)len) end = (off_t)len;
        }
        memcpy(copy + data, p->base + data, (size_t)(end - data));
        off = end;
    }
    return copy;
}

/* Before fork, in the forking thread: copy each persistent heap, so that
 * the child's heap is the heap as it was when fork was called, as the rest
 * of its memory is. (Copied in the child instead, the parent running on
 * after fork returned could change the heap under the copy.) The copy is a
 * private anonymous mapping: fork gives the child its own copy-on-write
 * view of it, and the parent unmaps its own right after. Other threads of
 * the parent are not stopped: what they write to the heap while the copy
 * is made may or may not be in the child's, as it may or may not be in a
 * fork child's memory anyway. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&pools_lock);    /* no pool opens or closes across the fork */
    for (int i = 0; i < region_slots; i++) {
        cairn_pool *p = slot_pool[i];
        if (p && p->copy_on_fork && !p->inherited && p->fd >= 0)
            p->fork_snap = data_copy(p);
    }
}

static void atfork_parent(void)
{
    for (int i = 0; i < region_slots; i++) {
        cairn_pool *p = slot_pool[i];
        if (p && p->fork_snap) {
            munmap(p->fork_snap, p->size);
            p->fork_snap = NULL;
        }
    }
    pthread_mutex_unlock(&pools_lock);
}

/* In the child: put the copy made before fork at the pool's address (so no
 * pointer changes). The copy is never flushed and never touches the
 * parent's file again. Returns -1 when it could not be made. */
static int fork_copy(cairn_pool *p)
{
    size_t len = p->size;
    char *copy = p->fork_snap;
    p->fork_snap = NULL;
    if (!copy) return -1;
    if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, p->base) == MAP_FAILED) {
        munmap(copy, len);
        return -1;
    }
    close(p->fd);          /* the parent keeps the file and its lock */
    p->fd = -1;            /* so growing fails instead of truncating it */
    p->no_persist = true;
    return 0;
}

/* A child of fork shares the parent's pools (MAP_SHARED). It may read them
 * (pointers keep converting); its writes would race the parent's, so its
 * view becomes read-only, and it never writes allocator state or the clean
 * flag back. The parent's lanes and locks are the parent's. A persistent
 * heap is copied instead (above). */
static void atfork_child(void)
{
    pthread_mutex_unlock(&pools_lock);  /* taken by atfork_prepare; this thread is alone */
    for (int i = 0; i < region_slots; i++) {
        cairn_pool *p = slot_pool[i];
        if (!p) continue;
        /* The background mark's thread stayed in the parent: the child
         * neither waits for it nor defers frees for it, and gets a fresh
         * lock (the thread may have held it at the fork). Runs that were
         * old stay full in the child; its copy or view is never written back. */
        pthread_mutex_init(&p->gc_lock, NULL);
        pthread_cond_init(&p->gc_cond, NULL);
        if (p->gc_state == GC_RUNNING) {
            atomic_store(&p->gc_active, 0);
            p->gc_state = GC_FAILED;
            p->gc_joinable = false;
        }
        if (p->copy_on_fork && fork_copy(p) == 0) continue;
        mprotect(p->base, p->size, PROT_READ);
        p->inherited = true;
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
    pthread_mutex_lock(&pool->heap_lock);
    pool->size = new_size;
    pool->state.size = new_size;
    cairn__state_write(pool);
    CAIRN_TRACE_EV(ev, TR_POOL_GROW, 0, pool, new_size);
    int rc = cairn__heap_grow(pool);
    pthread_mutex_unlock(&pool->heap_lock);
    pthread_mutex_unlock(&pool->state_lock);
    return rc;
}

void cairn_pool_recovery(cairn_pool *pool, struct cairn_recovery *out)
{
    if (!pool || cairn__pool_closed(pool, "cairn_pool_recovery")) {
        memset(out, 0, sizeof *out);
        return;
    }
    cairn__gc_wait(pool);
    *out = (struct cairn_recovery){
        .recovered = pool->recovered,
        .records_rolled_back = pool->rec_rolled_back,
        .transactions_rolled_back = pool->rec_lanes,
        .objects_reachable = pool->rec_gc_objects,
        .bytes_freed = pool->rec_gc_freed,
        .seconds = pool->rec_seconds,
        .background_seconds = pool->rec_bg_seconds,
    };
}

/* ---- typed root ---- */
void *cairn_root(cairn_pool *pool, size_t size, uint64_t type_id)
{
    if (!pool || size == 0 || type_id == 0) {
        cairn__err(EINVAL, "cairn_root: needs a pool, a size and a type id");
        return NULL;
    }
    if (cairn__pool_closed(pool, "cairn_root")) return NULL;
    pthread_mutex_lock(&pool->state_lock);
    void *root = NULL;
    if (pool->state.root_off) {
        if (pool->state.root_type != type_id) {
            /* Odd ids are cairn.h's plain-C fallback, even ones cairn-cc's
             * layout checksums (docs/compiler.md, "Type ids"). */
            const char *kinds = ((pool->state.root_type ^ type_id) & 1)
                ? " (one program was built by cairn-cc and the other by a plain C compiler: "
                  "their type ids never match)" : "";
            cairn__err(EINVAL, "%s: the root has type id %#llx but the program asks for %#llx: "
                       "the root's type changed since the pool was made%s; open it with the "
                       "matching program or migrate the pool", pool->path,
                       (unsigned long long)pool->state.root_type, (unsigned long long)type_id,
                       kinds);
        } else if (size > pool->state.root_size) {
            cairn__err(EINVAL, "%s: the root is %llu bytes, the program asks for %zu (the "
                       "pool was made with a smaller root: ask for at most %llu bytes, or "
                       "migrate the pool to a bigger root)",
                       pool->path, (unsigned long long)pool->state.root_size, size,
                       (unsigned long long)pool->state.root_size);
        } else {
            root = pool->base + pool->state.root_off;
        }
        pthread_mutex_unlock(&pool->state_lock);
        return root;
    }
    size_t usable;
    root = cairn__alloc_raw(pool, size, &usable);
    if (root) {
        CAIRN_TRACE_EV(mem, TR_ALLOC, TR_ALLOC_ROOT, root, usable);
        cairn__zero_flush(pool, root, usable, false);
        cairn__ofence_pool(pool);                  /* zeroes before the root record */
        pool->state.root_off = cairn__off(pool, root);
        __atomic_store_n(&pool->root_off_pub, pool->state.root_off, __ATOMIC_RELEASE);
        pool->state.root_size = size;
        pool->state.root_type = type_id;
        cairn__state_write(pool);
    }
    pthread_mutex_unlock(&pool->state_lock);
    return root;
}
