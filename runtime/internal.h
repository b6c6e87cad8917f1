/*
 * internal.h -- every private header of the runtime, for the tools and
 * tests that look inside libcairn (the runtime's own files include only
 * the headers they use).
 *
 *   base.h     cairn.h, TLS, errors (error.c), the hash (checksum.c)
 *   format.h   the pool file's geometry and header (format.c)
 *   alloc.h    size classes, runs, chunk-table words, the heap (alloc.c)
 *   tx.h       undo records, lanes (tx.c), roll-back (recover.c)
 *   gc.h       the mark and sweep after a crash (gc.c)
 *   pool.h     struct cairn_pool; region.c, pool.c, handle.c, fork.c
 *   trace.h    CAIRN_TRACE events and hooks (trace.c)
 *   persist.h  flushes, fences and their inline fast paths (persist.c)
 *   pptr.h     persistent pointers (pptr.c)
 *   check.h    `cairn pool check` (check.c)
 *
 * Each header includes the ones below it in this order of use: base.h at
 * the bottom; format.h on it; alloc.h, tx.h, gc.h on those; pool.h
 * embeds their state; persist.h reads the pool. docs/ARCHITECTURE.md
 * draws the files' calls, which go one way.
 */
#ifndef CAIRN_INTERNAL_H
#define CAIRN_INTERNAL_H

#include "base.h"
#include "format.h"
#include "alloc.h"
#include "tx.h"
#include "gc.h"
#include "pool.h"
#include "trace.h"
#include "persist.h"
#include "pptr.h"
#include "check.h"

#endif
