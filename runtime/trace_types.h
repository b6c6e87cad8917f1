/*
 * trace_types.h -- the CAIRN_TRACE record types, written once.
 *
 * internal.h makes enum trace_type (TR_THREAD, ...) from this list, and
 * python/cairn/trace.py reads this file at import for its names, so the
 * writer and the reader cannot disagree. A new type is one more X line at
 * the end with the next number; numbers are the file format: never reuse
 * or reorder them. The python side reads only the X(...) lines, one per
 * line: X(number, C name, event name).
 */
#ifndef CAIRN_TRACE_TYPES_H
#define CAIRN_TRACE_TYPES_H

#define CAIRN_TRACE_TYPES(X) \
    X(1,  THREAD,       thread) \
    X(2,  POOL_OPEN,    pool_open) \
    X(3,  POOL_CLOSE,   pool_close) \
    X(4,  POOL_GROW,    pool_grow) \
    X(5,  TX_BEGIN,     tx_begin) \
    X(6,  TX_COMMIT,    tx_commit) \
    X(7,  TX_ABORT,     tx_abort) \
    X(8,  LOG_APPEND,   log_append) \
    X(9,  ALLOC,        alloc) \
    X(10, FREE,         free) \
    X(11, FLUSH,        flush) \
    X(12, FENCE,        fence) \
    X(13, NTSTORE,      ntstore) \
    X(14, STORE,        store) \
    X(15, STORE_RANGE,  store_range) \
    X(16, DATA,         data) \
    X(17, SITE,         site) \
    X(18, DRAM_STORES,  dram_stores) \
    X(19, END,          end) \
    X(20, LINE,         line)        /* CAIRN_TRACE_IMAGES: a line's 64 bytes in DATA */ \
    X(21, STACK,        stack)       /* CAIRN_TRACE_IMAGES: a fence's return addresses */ \
    X(22, OBJECT,       object)      /* a loaded object: arg = load base, DATA = path */ \

#endif
