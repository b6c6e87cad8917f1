/*
 * pptr.c -- persistent pointers: virtual <-> relative conversion and the
 * safety rules of NV-Heaps / NVL-C.
 *
 *   relative = 1<<63 | pool_id<<40 | offset     (NULL stays 0)
 *
 * Pool id CAIRN_ID_NONE (all ones) is never given to a pool: values in
 * [-2^40, -1] are negative integers that programs keep in pointers
 * ((void *)-1, MAP_FAILED, SIG_ERR), and both directions leave them as
 * they are (expat's test suite stores (void *)(uintptr_t)-1 as user data).
 *
 * Rules, checked when a pointer is stored into PM:
 *   - a pointer to volatile memory must not be stored in PM: it would
 *     dangle after a restart (NV-to-V);
 *   - a pointer into pool A must not be stored in pool B: B may be opened
 *     without A (inter-pool NV-to-NV).
 * And when one is loaded: a relative pointer whose pool is not open is an
 * error naming the pool id, never a wild access.
 * A violation prints what, where and why, and stops the process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "persist.h"
#include "pptr.h"
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- compiler/rt's translation caches ------------------------------------
 * Every copy of compiler/rt (the program's, and a shared library's own when
 * it was dlopen'ed or linked with its symbols hidden) keeps a one-word
 * cache of the last pool it translated for, and registers the word here
 * when it first fills it. Closing a pool empties them all: a cache left
 * holding a closed pool's id and slot would translate its pointers into
 * whatever pool is mapped in that slot next. A list of the callers' own
 * nodes: no allocation, no limit. */
static struct cairn__ra_cache_reg *ra_caches;
static pthread_mutex_t ra_caches_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((visibility("default")))
void cairn__ra_cache_register(struct cairn__ra_cache_reg *reg)
{
    pthread_mutex_lock(&ra_caches_lock);
    struct cairn__ra_cache_reg *r = ra_caches;
    while (r && r != reg) r = r->next;
    if (!r) {
        reg->next = ra_caches;
        ra_caches = reg;
    }
    pthread_mutex_unlock(&ra_caches_lock);
}

__attribute__((visibility("default")))
void cairn__ra_cache_unregister(struct cairn__ra_cache_reg *reg)
{
    pthread_mutex_lock(&ra_caches_lock);
    for (struct cairn__ra_cache_reg **p = &ra_caches; *p; p = &(*p)->next)
        if (*p == reg) {
            *p = reg->next;
            break;
        }
    pthread_mutex_unlock(&ra_caches_lock);
}

void cairn__ra_caches_clear(void)
{
    pthread_mutex_lock(&ra_caches_lock);
    for (struct cairn__ra_cache_reg *r = ra_caches; r; r = r->next)
        __atomic_store_n(r->word, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ra_caches_lock);
}

static uint64_t to_relative(const cairn_pool *pool, const void *target)
{
    return CAIRN_REL_BIT | ((uint64_t)pool->id << CAIRN_ID_SHIFT) | cairn__off(pool, target);
}

/* Persistent-heap mode (compiler/rt/cairn_pheap.c) turns this on: there
 * the one pool is made afresh at each start, so a value with bit 63 set
 * whose id is no open pool's is not a pointer that outlived its pool but
 * bits the program keeps in a pointer-typed slot: a negative double in a
 * union with a pointer (jq's jv), a negative integer below -2^40. It is
 * left as it is, as CAIRN_ID_NONE values are. Off elsewhere: there such a
 * value is a pointer into a pool the program forgot to open. */
static int unknown_ids_are_values;

__attribute__((visibility("default")))
void cairn__unknown_pool_ids_are_values(int on)
{
    __atomic_store_n(&unknown_ids_are_values, on != 0, __ATOMIC_RELAXED);
}

void *cairn__ra2va_slow(uint64_t rel)
{
    uint32_t id = (uint32_t)((rel >> CAIRN_ID_SHIFT) & CAIRN_ID_MASK);
    uint64_t off = rel & CAIRN_OFF_MASK;
    if (id == CAIRN_ID_NONE)
        return (void *)(uintptr_t)rel;      /* a small negative integer */
    cairn_pool *pool = cairn__pool_by_id(id);
    if (!pool && __atomic_load_n(&unknown_ids_are_values, __ATOMIC_RELAXED))
        return (void *)(uintptr_t)rel;      /* persistent heap: bits, not a pointer */
    /* An id no pool of this process ever had: bits that only look relative
     * (a negative double in a union with a pointer, which clang copies
     * through the pointer member: jq's jv, Lua's TValue), left as they are.
     * Pointers into pools cannot be stored across pools, so a real one of
     * an unseen id can only come from bytes copied from another pool. */
    if (!pool && !cairn__pool_id_seen(id))
        return (void *)(uintptr_t)rel;
    if (!pool)
        cairn__violation("relative pointer %#llx refers to pool id %u, which is not open "
                         "(this process closed it); open that pool before following pointers "
                         "into it",
                         (unsigned long long)rel, id);
    if (off >= pool->size)
        cairn__violation("relative pointer %#llx points %llu bytes into %s, which is only "
                         "%llu bytes: the pointer is corrupt", (unsigned long long)rel,
                         (unsigned long long)off, pool->path, (unsigned long long)pool->size);
    return pool->base + off;
}

/* What a volatile pointer stored into PM points at, and the fix that fits:
 * code and static data (a function, a string literal, a global) belong to a
 * loaded object, whose address changes from run to run; the stack and the
 * heap are gone after a restart. Only on the way to a violation. */
static const char *volatile_target(const void *target, char *what, size_t n)
{
    Dl_info di;
    if (dladdr(target, &di) && di.dli_fname) {
        const char *obj = strrchr(di.dli_fname, '/');
        obj = obj ? obj + 1 : di.dli_fname;
        if (di.dli_sname && di.dli_saddr == target)
            snprintf(what, n, "%s in %s", di.dli_sname, *obj ? obj : "the program");
        else
            snprintf(what, n, "code or static data of %s", *obj ? obj : "the program");
        return "code and static data (functions, string literals, globals) move between runs "
               "with address-space randomization: store an index, a name or a copy in the "
               "pool instead";
    }
    /* this frame's address, not a local's: ASan's fake stack keeps locals
     * in a mapping of its own, away from the thread's stack */
    uintptr_t t = (uintptr_t)target, h = (uintptr_t)__builtin_frame_address(0);
    if ((t > h ? t - h : h - t) < ((uintptr_t)8 << 20)) {
        snprintf(what, n, "the stack");
        return "copy the value into an object from cairn_alloc in the same pool";
    }
    snprintf(what, n, "the heap or another mapping");
    return "allocate the target with cairn_alloc in the same pool";
}

/* Is any memory mapped at p? (mincore fails with ENOMEM on an unmapped or
 * non-canonical address.) Only asked on the way to a safety stop. */
static bool address_mapped(const void *p)
{
    unsigned char vec;
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
    return mincore(page, 4096, &vec) == 0 || errno != ENOMEM;
}

uint64_t cairn__va2ra_checked(const void *slot, const void *target, const char *file, int line)
{
    char where[512];
    if (!target) return 0;
    uint64_t v = (uint64_t)(uintptr_t)target;
    cairn_pool *sp = cairn__pool_of_addr(slot);
    if (!sp) {
        /* a DRAM slot keeps virtual addresses */
        return (int64_t)v < 0 ? (uint64_t)(uintptr_t)cairn__ra2va_slow(v) : v;
    }
    if ((int64_t)v < 0) {                       /* already relative */
        uint32_t id = (uint32_t)((v >> CAIRN_ID_SHIFT) & CAIRN_ID_MASK);
        if (id == sp->id || id == CAIRN_ID_NONE) return v;
        target = cairn__ra2va_slow(v);
    }
    cairn_pool *tp = cairn__pool_of_addr(target);
    if (tp == sp) return to_relative(sp, target);
    if (file && line > 0) snprintf(where, sizeof where, "%s:%d", file, line);
    else if (file) snprintf(where, sizeof where, "%s", file);
    else cairn__describe_caller(__builtin_return_address(0), where, sizeof where);
    if (!tp && !cairn__in_region(target) && !address_mapped(target))
        return v;   /* an integer kept in a pointer (GINT_TO_POINTER(7), (void *)0x1000):
                       nothing is there, so nothing can dangle; stored as it is */
    if (!tp) {
        char what[320];
        const char *fix = volatile_target(target, what, sizeof what);
        cairn__violation("pointer to volatile memory %p (%s) stored into PM at %p (pool %s) "
                         "at %s: it would dangle after a restart; %s", target, what, slot,
                         sp->path, where, fix);
    }
    cairn__violation("pointer into pool %s (%p) stored into pool %s at %p at %s: pointers "
                     "between pools are not allowed, since either may be opened alone",
                     tp->path, target, sp->path, slot, where);
}

void cairn__ptr_store_at(void *pm_slot, const void *target, const char *file, int line)
{
    uint64_t v = cairn__va2ra_checked(pm_slot, target, file, line);
    cairn_pool *sp = cairn__pool_of_addr(pm_slot);
    if (sp && cairn__tx_in(sp)) cairn_tx_add(pm_slot, sizeof v);
    else if (sp && cairn__gc_on(sp))
        cairn__gc_barrier(sp, (uintptr_t)pm_slot, (uintptr_t)pm_slot + sizeof v);
    __atomic_store_n((uint64_t *)pm_slot, v, __ATOMIC_RELAXED);
    if (__builtin_expect(cairn__tracing(), 0))
        cairn__trace_api_store(pm_slot, sizeof v, file, line, "cairn_ptr_store");
}

#undef cairn_ptr_store
void cairn_ptr_store(void *pm_slot, const void *target)
{
    char where[512];
    cairn__describe_caller(__builtin_return_address(0), where, sizeof where);
    cairn__ptr_store_at(pm_slot, target, where, 0);
}

void *cairn_ptr_load(const void *pm_slot)
{
    uint64_t v = __atomic_load_n((const uint64_t *)pm_slot, __ATOMIC_RELAXED);
    return cairn__ra2va(v);
}

/* ---- a relative pointer followed by code cairn-cc did not compile ----
 * Such code dereferences 1<<63|id<<40|off: a non-canonical address, so the
 * CPU raises a general-protection fault and the kernel reports SIGSEGV
 * without the address. The handler looks for a relative pointer of an open
 * pool in the faulting context's registers, says which pointer and what to
 * do, then lets the signal take its course (the previous handler, or the
 * default: a core dump). A program's own SIGSEGV handler installed later
 * replaces this one. */
static struct sigaction previous_segv;

static void on_segv(int sig, siginfo_t *info, void *uctx)
{
    ucontext_t *uc = uctx;
    char msg[512];
    int n = 0;
#if defined(__x86_64__)
    for (int r = 0; r < NGREG && n == 0; r++) {
        if (r == REG_RIP || r == REG_EFL || r == REG_CSGSFS || r == REG_ERR || r == REG_TRAPNO ||
            r == REG_OLDMASK || r == REG_CR2)
            continue;
        uint64_t v = (uint64_t)uc->uc_mcontext.gregs[r];
        if ((int64_t)v >= 0) continue;
        cairn_pool *p = cairn__pool_by_id((uint32_t)((v >> CAIRN_ID_SHIFT) & CAIRN_ID_MASK));
        if (!p || (v & CAIRN_OFF_MASK) >= p->size) continue;
        n = snprintf(msg, sizeof msg,
                     "cairn: segmentation fault at pc %p while a register holds the relative "
                     "pointer %#llx (offset %#llx in %s): code not compiled by cairn-cc followed "
                     "a pointer kept in persistent memory. Rebuild that code with cairn-cc, or "
                     "read the pointer with cairn_ptr_load() before passing it on.\n",
                     (void *)uc->uc_mcontext.gregs[REG_RIP], (unsigned long long)v,
                     (unsigned long long)(v & CAIRN_OFF_MASK), p->path);
    }
#endif
    /* an address inside cairn's region: past a pool's end, or in a slot
     * whose pool was closed (a pointer kept past cairn_pool_close) */
    uintptr_t a = (uintptr_t)info->si_addr;
    if (n == 0 && a >= cairn__region_lo && a < cairn__region_hi) {
        int slot = (int)((a - cairn__region_lo) >> CAIRN_SLOT_SHIFT);
        unsigned long long off = (a - cairn__region_lo) & (((uintptr_t)1 << CAIRN_SLOT_SHIFT) - 1);
        cairn_pool *p = cairn__pool_by_slot(slot);
        const char *closed = cairn__slot_closed_path(slot);
        if (p && off >= p->size)
            n = snprintf(msg, sizeof msg,
                         "cairn: segmentation fault at %p, %llu bytes into %s, which is only "
                         "%llu bytes: an access past the pool's end (a corrupt pointer or "
                         "index)\n", info->si_addr, off, p->path, (unsigned long long)p->size);
        else if (!p)
            n = snprintf(msg, sizeof msg,
                         "cairn: segmentation fault at %p, where no pool is open%s%s%s: a "
                         "pointer into a pool was kept after cairn_pool_close (reopen the pool "
                         "and read the pointer from it again), or the pointer is corrupt\n",
                         info->si_addr, closed ? " (" : "", closed ? closed : "",
                         closed ? " was mapped there and is closed)" : "");
    }
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
    if (previous_segv.sa_flags & SA_SIGINFO && previous_segv.sa_sigaction) {
        previous_segv.sa_sigaction(sig, info, uctx);
        return;
    }
    if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN &&
        previous_segv.sa_handler) {
        previous_segv.sa_handler(sig);
        return;
    }
    signal(SIGSEGV, SIG_DFL);               /* return: the access faults again, default action */
}

void cairn__install_segv_handler(void)
{
    if (getenv("CAIRN_NO_SEGV_HANDLER")) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
}
