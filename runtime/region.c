/*
 * region.c -- the persistent region: where pools map, and address, id or
 * file to pool.
 *
 * At start-up the runtime reserves one virtual region (PROT_NONE, no swap
 * charged) of N slots of 1 TiB; every pool maps into a slot, so "is this
 * PM" is a subtract and compare and address -> (pool, offset) is a shift.
 * The region lands wherever the kernel puts it (ASLR), so a pool maps at a
 * different address on most runs: nothing in a pool depends on where it is.
 *
 * The slot table is the registry of open pools: pool.c takes a slot at
 * open and gives it back at close, fork.c walks it around fork.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uintptr_t cairn__region_lo = 1, cairn__region_hi = 1;   /* empty until reserved */
static int region_slots;
static cairn_pool *slot_pool[64];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;

/* Reserve the region: as many slots as CAIRN_REGION_SLOTS asks (64 by
 * default), halving until the kernel grants them; none when even one
 * slot cannot be had (every open then fails with a message). */
void cairn__region_reserve(void)
{
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
}

int cairn__region_nslots(void) { return region_slots; }
void cairn__pools_lock(void) { pthread_mutex_lock(&pools_lock); }
void cairn__pools_unlock(void) { pthread_mutex_unlock(&pools_lock); }
/* a fork child's slot of an inherited pool, left to the parent */
void cairn__slot_forget(int slot) { slot_pool[slot] = NULL; }

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

uint32_t cairn_pool_id(const cairn_pool *pool) { return pool->id; }
cairn_pool *cairn_pool_by_id(uint32_t id) { return cairn__pool_by_id(id); }

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

/* ---- slots ---- */
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

void cairn__slot_unmap(cairn_pool *pool)
{
    /* put the reservation back so the slot stays ours */
    mmap(pool->base, (size_t)1 << CAIRN_SLOT_SHIFT, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

int cairn__slot_take(cairn_pool *pool, const char *path)
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

void cairn__slot_release(cairn_pool *pool)
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
cairn_pool *cairn__pool_of_file(int fd)
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

