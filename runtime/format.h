/*
 * format.h -- the pool file: its geometry and its header (format.c). The
 * chunk table's words are the allocator's (alloc.h), the lanes' undo
 * records the transactions' (tx.h).
 *
 * A pool file, drawn to scale only in spirit:
 *
 *   0        4 KiB                       heap_off
 *   +--------+---------------------------+-----------------------------------+
 *   | header |  lanes: 64 x 16 KiB       | zone 0 | zone 1 | ...             |
 *   +--------+---------------------------+-----------------------------------+
 *
 *   header: immutable part (magic, version, layout, pool id, geometry) with
 *           its own checksum; two copies A/B of the mutable state record
 *           (size, root) chosen by sequence number + checksum; the clean flag.
 *   lane:   [gen][undo log, 16 KiB - 8 B]; one lane per
 *           running transaction; the log continues in extension blocks
 *           (large heap objects) linked by JUMP records.
 *   zone:   16384 chunks of 256 KiB (4 GiB). Chunk 0 of a zone is its chunk table:
 *           one 8-byte word per chunk of the zone (kind, argument, check).
 *           A run chunk holds objects of one size class: [bitmap][slots];
 *           the bitmap is written only at a clean close. A large object
 *           spans whole chunks; its data starts 64 B into its first chunk.
 *
 *
 * The allocator's truth while running is volatile (alloc.c); on media only
 * the chunk table is kept exact. After a clean close the run bitmaps are
 * exact too; after a crash the heap is rebuilt by marking from the root
 * (gc.c), so a crash can leak nothing.
 */
#ifndef CAIRN_FORMAT_H
#define CAIRN_FORMAT_H

#include "base.h"

#pragma GCC visibility push(hidden)

#define CAIRN_MAGIC        "CAIRNPL"
/* The format version a new pool gets, and the oldest one this libcairn
 * opens. Version 2 adds CAIRN_RUN_EXACT to run words of the chunk table
 * (alloc.h); a version 1 pool is opened and written as version 1 (its runs
 * are never marked exact), so the libcairn that made it can still open it,
 * and a version 1 libcairn refuses a version 2 pool by its version, with
 * the message saying so, instead of calling its table corrupt. */
#define CAIRN_VERSION      2u
#define CAIRN_VERSION_MIN  1u
#define CAIRN_VERSION_EXACT 2u   /* first version with CAIRN_RUN_EXACT */
#define CAIRN_LAYOUT_MAX   64
#define CAIRN_NLANES       64
#define CAIRN_LANE_SIZE    ((uint64_t)16 << 10)
#define CAIRN_LANES_OFF    ((uint64_t)4096)
#define CAIRN_CHUNK_SHIFT  18
#define CAIRN_CHUNK        ((uint64_t)1 << CAIRN_CHUNK_SHIFT)     /* 256 KiB */
#define CAIRN_ZONE_CHUNKS  16384u         /* 4 GiB zones */
#define CAIRN_ZONE_BYTES   (CAIRN_CHUNK * CAIRN_ZONE_CHUNKS)
#define CAIRN_LARGE_HDR    64u          /* data offset inside a large object's first chunk */
#define CAIRN_MAX_ALLOC    ((size_t)(CAIRN_ZONE_CHUNKS - 1) * CAIRN_CHUNK - CAIRN_LARGE_HDR) /* ~4 GiB */
#define CAIRN_CACHELINE    64u

/* ---- header (offset 0) ---- */
struct pool_hdr {                     /* immutable after create */
    char     magic[8];
    uint32_t version;
    uint32_t hdr_size;
    char     layout[CAIRN_LAYOUT_MAX];
    uint64_t pool_id;                 /* 23 bits, never 0 */
    uint64_t uuid[2];
    uint64_t create_time;
    uint64_t nlanes, lanes_off, lane_size;
    uint64_t heap_off, chunk_size, zone_chunks;
    uint64_t checksum;                /* over everything above */
};
struct pool_state {                   /* mutable, two copies at STATE_A/B */
    uint64_t seq;
    uint64_t size;                    /* current file size */
    uint64_t root_off, root_size, root_type;
    uint64_t reserved[2];
    uint64_t checksum;
};
#define CAIRN_STATE_A_OFF  1024u
#define CAIRN_STATE_B_OFF  1152u
#define CAIRN_CLEAN_OFF    1280u      /* uint64: 1 = closed cleanly */
#define CAIRN_HEADER_END   4096u

/* ---- format.c ---- */
int  cairn__header_check(const void *map, uint64_t file_size, const char *layout,
                         char *why, size_t whylen);
void cairn__header_init(struct pool_hdr *h, const char *layout, uint32_t id);
uint64_t cairn__hdr_checksum(const struct pool_hdr *h);      /* over the fields before it */
uint64_t cairn__state_checksum(const struct pool_state *s);  /* over the fields before it */
int  cairn__state_read(const char *base, struct pool_state *out);
/* -1 (why filled) when the state copies prove the file damaged: a copy
 * fails its checksum in a pool that was closed cleanly */
int  cairn__state_check(const char *base, char *why, size_t whylen);
int  cairn__state_copy_ok(const char *base, int copy);   /* 0: A, 1: B */
void cairn__state_write(cairn_pool *pool);   /* writes the next copy, dfence */
void cairn__clean_set(cairn_pool *pool, uint64_t v);
uint64_t cairn__heap_chunks(const struct pool_hdr *h, uint64_t size);

#pragma GCC visibility pop

#endif
