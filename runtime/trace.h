/*
 * trace.h -- CAIRN_TRACE=file (trace.c): event types and the hooks the
 * other runtime files call.
 */
#ifndef CAIRN_TRACE_H
#define CAIRN_TRACE_H

#include "trace_types.h"
#include "base.h"

#pragma GCC visibility push(hidden)

/* ---- trace.c: CAIRN_TRACE=file (format: docs/runtime.md "Traces") ----
 * Hooks are one macro line each in persist.c, tx.c, object.c, pool.c and
 * handle.c. With tracing off a hook costs one load of a flag that never
 * changes after start-up and a branch predicted not taken; the arguments
 * are not even evaluated. */
#define CAIRN_TRACE_ENUM(num, name, text) TR_##name = num,
enum trace_type { CAIRN_TRACE_TYPES(CAIRN_TRACE_ENUM) };     /* the list: trace_types.h */
#undef CAIRN_TRACE_ENUM
enum { TR_LINE_FLUSHED, TR_LINE_NT, TR_LINE_AT_FENCE };                         /* LINE aux */
enum { TR_FLUSH_CLWB, TR_FLUSH_CLFLUSHOPT, TR_FLUSH_CLFLUSH, TR_FLUSH_MSYNC };  /* FLUSH aux */
enum { TR_OFENCE, TR_DFENCE };                                                 /* FENCE aux */
enum { TR_OPEN_CLEAN = 0, TR_OPEN_CREATED = 1, TR_OPEN_RECOVERED = 2 };         /* POOL_OPEN aux */
#define TR_ALLOC_IN_TX 1u         /* ALLOC aux: in a transaction; FREE aux: applied at commit */
#define TR_ALLOC_ROOT  2u         /* ALLOC aux: the root object */

extern _Atomic bool cairn__trace_on __attribute__((visibility("hidden")));
#define cairn__tracing() atomic_load_explicit(&cairn__trace_on, memory_order_relaxed)  /* a plain load */
#define CAIRN_TRACE_EV(what, ...) \
    do { if (__builtin_expect(cairn__tracing(), 0)) cairn__trace_##what(__VA_ARGS__); } while (0)
void cairn__trace_init(void);                      /* reads CAIRN_TRACE; from cairn_init */
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

#pragma GCC visibility pop

#endif
