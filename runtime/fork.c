/*
 * fork.c -- what a fork child gets of the pools its parent has open.
 *
 * Policy: a child of fork shares the parent's pools (MAP_SHARED). It may
 * read them (pointers keep converting); its writes would race the
 * parent's, so its view becomes read-only, and it never writes allocator
 * state or the clean flag back. The parent's lanes, locks and background
 * mark are the parent's. One exception, the persistent heap (compiler/rt's
 * heap mode): the pool is the process's malloc heap, so the child gets its
 * own copy of it, as it does of the rest of its memory.
 *
 * Every entry point that would write a pool asks cairn__fork_child_refuses
 * first: one guard, one message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* The message of cairn__fork_child_refuses (internal.h): the child cannot
 * do deed (a verb phrase) in its parent's pool. */
bool cairn__fork_child_refuse(const cairn_pool *pool, const char *func, const char *deed)
{
    cairn__err(EPERM, "%s: a fork child cannot %s: %s belongs to the parent process and the "
               "child's view of it is read-only (do it in the parent, or open another pool "
               "in the child)", func, deed, pool->path);
    return true;
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
    cairn__pools_lock();                /* no pool opens or closes across the fork */
    for (int i = 0; i < cairn__region_nslots(); i++) {
        cairn_pool *p = cairn__pool_by_slot(i);
        if (p && p->copy_on_fork && !p->inherited && p->fd >= 0)
            p->fork_snap = data_copy(p);
    }
}

static void atfork_parent(void)
{
    for (int i = 0; i < cairn__region_nslots(); i++) {
        cairn_pool *p = cairn__pool_by_slot(i);
        if (p && p->fork_snap) {
            munmap(p->fork_snap, p->size);
            p->fork_snap = NULL;
        }
    }
    cairn__pools_unlock();
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
    cairn__pools_unlock();              /* taken by atfork_prepare; this thread is alone */
    for (int i = 0; i < cairn__region_nslots(); i++) {
        cairn_pool *p = cairn__pool_by_slot(i);
        if (!p) continue;
        cairn__gc_forget_in_child(p);
        if (p->copy_on_fork && fork_copy(p) == 0) continue;
        mprotect(p->base, p->size, PROT_READ);
        p->inherited = true;
    }
}

void cairn__fork_init(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
