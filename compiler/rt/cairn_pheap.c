/*
 * cairn_pheap.c -- persistent-heap mode (cairn-cc --persistent-heap[=FILE]):
 * every malloc/calloc/realloc/free made by code linked by cairn-cc lives in
 * a pool, as libvmmalloc did for seed 002's soundness runs. The pointers the
 * program keeps in its heap are then stored in relative form and converted
 * back on load all over the program: a whole-program test of the
 * conversions on unmodified code.
 *
 * The driver links this with -Wl,--wrap=malloc,... so only calls from the
 * program's own objects come here; libc's internal allocations stay in DRAM.
 * The heap is volatile in meaning: it is created afresh at each start and
 * removed at exit. Pointers from the heap to DRAM (string literals, globals,
 * stack) are allowed here and stay virtual addresses; pointers into the heap
 * are relative. Pool: CAIRN_PERSISTENT_HEAP=FILE at run time, else the FILE
 * given to the driver, else /dev/shm/cairn-heap-PID.pool; size
 * CAIRN_PERSISTENT_HEAP_SIZE (bytes, default 4 GiB, sparse).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

/* Set by the driver's generated object when --persistent-heap=FILE. */
__attribute__((weak)) extern const char cairn_cc__pheap_file[];

static cairn_pool *heap;
static char heap_path[4096];
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int inside;  /* the runtime's own allocations go to libc */

static void heap_remove(void)
{
    if (heap) {
        cairn_pool *h = heap;
        heap = NULL;
        cairn_pool_close(h);
    }
    if (heap_path[0])
        unlink(heap_path);
}

static cairn_pool *heap_get(void)
{
    if (__builtin_expect(heap != NULL, 1))
        return heap;
    pthread_mutex_lock(&heap_lock);
    if (!heap) {
        inside = 1;
        const char *p = getenv("CAIRN_PERSISTENT_HEAP");
        if ((!p || !*p) && cairn_cc__pheap_file && cairn_cc__pheap_file[0])
            p = cairn_cc__pheap_file;
        if (p && *p)
            snprintf(heap_path, sizeof heap_path, "%s", p);
        else
            snprintf(heap_path, sizeof heap_path, "/dev/shm/cairn-heap-%d.pool",
                     (int)getpid());
        const char *sz = getenv("CAIRN_PERSISTENT_HEAP_SIZE");
        size_t size = sz && *sz ? strtoull(sz, NULL, 0) : ((size_t)4 << 30);
        /* the heap is written outside transactions by design */
        setenv("CAIRN_UNLOGGED", "off", 0);
        unlink(heap_path);
        heap = cairn_pool_create(heap_path, "cairn-persistent-heap", size);
        if (!heap) {
            fprintf(stderr, "cairn-cc: persistent heap %s: %s\n", heap_path,
                    cairn_errormsg());
            abort();
        }
        atexit(heap_remove);
        inside = 0;
    }
    pthread_mutex_unlock(&heap_lock);
    return heap;
}

void *__wrap_malloc(size_t n)
{
    if (inside)
        return __real_malloc(n);
    cairn_pool *h = heap_get();
    inside = 1;
    void *p = cairn_alloc(h, n ? n : 1);
    inside = 0;
    if (!p)
        errno = ENOMEM;
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (inside)
        return __real_calloc(n, m);
    if (m && n > SIZE_MAX / m) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_malloc(n * m);   /* cairn_alloc zeroes */
}

void __wrap_free(void *p)
{
    if (!p)
        return;
    if (!cairn__in_region(p)) {
        __real_free(p);
        return;
    }
    inside = 1;
    cairn_free(p);
    inside = 0;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (!p)
        return __wrap_malloc(n);
    if (!cairn__in_region(p))
        return __real_realloc(p, n);
    if (n == 0) {
        __wrap_free(p);
        return NULL;
    }
    size_t old = cairn_usable_size(p);
    if (n <= old)
        return p;
    void *q = __wrap_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old);   /* relative words stay valid: same pool */
    __wrap_free(p);
    return q;
}

/* Pointer stores in persistent-heap mode: into the heap, a pointer into the
 * heap is relative; any other pointer stays a virtual address (the heap is
 * volatile in meaning, so NV-to-V pointers are fine here). */
uint64_t cairn_cc__va2ra_lenient(const void *slot, const void *target,
                                 const char *file, int line)
{
    if (target && cairn__in_region(target))
        return cairn__va2ra_checked(slot, target, file, line);
    return (uint64_t)(uintptr_t)target;
}
