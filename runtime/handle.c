/*
 * handle.c -- what an open pool handle answers, and what is left of it
 * after close: the typed root, the recovery report, retired handles.
 */
#include "persist.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* A closed handle is kept, marked, for a while: a use after cairn_pool_close
 * (a second close, an allocation or a transaction through a stale handle)
 * is then reported instead of reading freed memory. The last 64 handles
 * closed are kept (11 KiB each); an older stale handle is undefined
 * behaviour, as any pointer to freed memory. */
#define CLOSED_KEEP 64
static cairn_pool *closed_ring[CLOSED_KEEP];
static unsigned closed_next;
static pthread_mutex_t closed_lock = PTHREAD_MUTEX_INITIALIZER;

void cairn__handle_retire(cairn_pool *pool)
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

void cairn_pool_recovery(cairn_pool *pool, struct cairn_recovery *out)
{
    if (!pool || cairn__pool_closed(pool, "cairn_pool_recovery")) {
        memset(out, 0, sizeof *out);
        return;
    }
    cairn__gc_wait(pool);
    *out = (struct cairn_recovery){
        .recovered = pool->recovered,
        .records_rolled_back = pool->rec.rolled_back,
        .transactions_rolled_back = pool->rec.lanes,
        .objects_reachable = pool->rec.gc_objects,
        .bytes_freed = pool->rec.gc_freed,
        .seconds = pool->rec.seconds,
        .background_seconds = pool->rec.bg_seconds,
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
    root = cairn__gc_alloc(pool, size, &usable);
    if (root) {
        CAIRN_TRACE_EV(mem, TR_ALLOC, TR_ALLOC_ROOT, root, usable);
        cairn__zero_flush(pool, root, usable, false);
        if (!CAIRN_MUTATED(ROOT_OFENCE))
            cairn__ofence_pool(pool);              /* zeroes before the root record */
        pool->state.root_off = cairn__off(pool, root);
        __atomic_store_n(&pool->root_off_pub, pool->state.root_off, __ATOMIC_RELEASE);
        pool->state.root_size = size;
        pool->state.root_type = type_id;
        cairn__state_write(pool);
    }
    pthread_mutex_unlock(&pool->state_lock);
    return root;
}

/* ---- open or create, and the root, in one call ---- */
void *cairn_pool_open_root(cairn_pool **pool, const char *path, const char *layout,
                           size_t size, size_t root_size, uint64_t type_id)
{
    if (!pool) {
        cairn__err(EINVAL, "cairn_pool_open_root: needs the address of a cairn_pool * to "
                   "set (CAIRN_OPEN_ROOT(pool, ...) passes it)");
        return NULL;
    }
    cairn_pool *p = cairn_pool_open(path, layout);
    /* Only a missing file is created: a pool that exists but fails to open
     * (corrupt, another layout, no permission) is reported, never replaced.
     * EEXIST: another process created it between the two calls. */
    if (!p && errno == ENOENT) {
        p = cairn_pool_create(path, layout, size);
        if (!p && errno == EEXIST) p = cairn_pool_open(path, layout);
    }
    *pool = p;
    if (!p) return NULL;
    void *root = cairn_root(p, root_size, type_id);
    if (!root) {
        int err = errno;
        char msg[512];
        snprintf(msg, sizeof msg, "%s", cairn_errormsg());
        cairn_pool_close(p);
        *pool = NULL;
        cairn__err(err, "%s", msg);
    }
    return root;
}
