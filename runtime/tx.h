/*
 * tx.h -- transactions and their undo log: the records' on-media layout
 * (tx.c writes them, recover.c reads them), the lanes a pool embeds, and
 * the calls of tx.c and recover.c.
 */
#ifndef CAIRN_TX_H
#define CAIRN_TX_H

#include "format.h"

#pragma GCC visibility push(hidden)

/* ---- undo log records ----
 * [kind:8 | offset:40 | 0:16][len][checksum][data, padded to 8]
 * checksum covers the lane generation, the first two words and the data,
 * so a torn record or one left from an earlier transaction never validates. */
enum rec_kind { REC_UNDO = 1, REC_JUMP = 2 };
/* How tx.c lays records out, which recovery relies on to tell a torn tail
 * from damage (recover.c): an append splits a range into records of at
 * most CAIRN_REC_CHUNK data bytes, and continues in the next block (JUMP)
 * when fewer than CAIRN_LOG_ROOM_MIN bytes are left in the current one. */
#define CAIRN_REC_CHUNK    4096u
#define CAIRN_LOG_ROOM_MIN (2 * (uint64_t)sizeof(struct log_rec) + 64)
struct log_rec {
    uint64_t kind_off;
    uint64_t len;
    uint64_t checksum;
};
/* The generation shares its cache line with the first record, so a small
 * transaction touches two lines (record+mark, data), not three. */
struct lane_hdr {
    _Atomic uint64_t gen;             /* commit mark: bumping it retires the log */
};

/* An undo record's checksum: the lane generation, its first two words, its
 * data (tx.c writes it, recover.c checks it). */
static inline uint64_t cairn__rec_checksum(uint64_t gen, uint64_t kind_off, uint64_t len,
                                           const void *data, uint64_t dlen)
{
    return cairn__hash(data, dlen, gen * 0xd6e8feb86659fd93ULL ^ kind_off ^ (len << 1));
}

/* ---- the lanes' volatile side, embedded in the pool ---- */
/* lane extension blocks (volatile list of heap objects used as log space) */
struct lane_ext {
    uint64_t off;                     /* pool offset of the block's data */
    uint64_t cap;
    struct lane_ext *next;
};

/* Per lane, a line of its own: threads on different lanes share no written
 * cache line (a shared busy mask or generation array bounced a line
 * between the cores twice per transaction). */
struct lane_vol {
    _Atomic uint32_t busy;
    uint64_t gen1;                    /* generation + 1 as last written (0: read the
                                         pool); the lane's owner is its only writer */
} __attribute__((aligned(64)));

/* The lanes' volatile side (tx.c). */
struct pool_lanes {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct lane_ext *ext[CAIRN_NLANES];   /* extension blocks kept per lane */
    struct lane_vol vol[CAIRN_NLANES];
    _Atomic int waiters;              /* threads waiting for a lane (all 64 busy) */
};

/* ---- tx.c: transactions ---- */
bool  cairn__lanes_busy(cairn_pool *pool);    /* a transaction is open on pool */
void  cairn__tx_note_alloc(void *ptr, size_t usable);
int   cairn__tx_note_free(void *ptr);   /* 1: deferred to commit, 0: free it now */
bool  cairn__tx_in(cairn_pool *pool);
void  cairn__lane_release_exts(cairn_pool *pool);

/* ---- recover.c: reading and rolling back lanes ---- */
int   cairn__recover_lanes(cairn_pool *pool, uint64_t *records);
/* Recovery in two steps, for a caller that judges each lane itself
 * (check.c): each lane's strict scan with its valid records, then the
 * roll-back of all of them (none may be damaged). */
/* local: the scan read nothing outside the lane's own area (no extension
 * block, no chunk table), so its result holds while that area is unchanged */
struct lane_log { const struct log_rec **v; size_t n, cap; bool beyond, local; };
int   cairn__lane_log_read(cairn_pool *pool, unsigned lane, struct lane_log *log, char *why,
                           size_t whylen);
void  cairn__recover_logs(cairn_pool *pool, struct lane_log *logs, uint64_t *records);
void  cairn__lane_logs_free(struct lane_log *logs);   /* logs[CAIRN_NLANES] */
void  cairn__undo_apply(cairn_pool *pool, const struct log_rec *const *v, size_t n);
long  cairn__lane_records(cairn_pool *pool, unsigned lane, const struct log_rec ***v,
                          size_t *cap, char *why, size_t whylen);
/* strict: also prove damage past the first invalid record (recovery, check);
 * abort reads back the log it just wrote and passes false */
int   cairn__lane_scan(cairn_pool *pool, unsigned lane,
                       int (*fn)(void *ctx, const struct log_rec *r, const char *data), void *ctx,
                       bool strict, bool *beyond, char *why, size_t whylen);

#pragma GCC visibility pop

#endif
