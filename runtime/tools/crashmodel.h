/*
 * crashmodel.h -- what a power failure may leave of a pool: the x86
 * persistency model behind `cairn crashcheck`, replayed from a trace.
 *
 * The model (DESIGN.md "Crash checking"; Px86, POPL 2020), one function per rule:
 *
 *   cm_rule_store      a store to PM joins its line's pending list, in
 *                      program order; an aligned store of up to 8 bytes is
 *                      one entry (it never tears), a wider or unaligned one
 *                      is split at 8-byte boundaries into pieces that share
 *                      a group (any subset of a group may persist);
 *   cm_rule_untraced   a line whose contents changed without a traced store
 *                      (found by comparing memory at a flush or a fence) gets
 *                      one whole-line entry with what it holds then;
 *   cm_rule_flush      clwb/clflushopt (and msync-domain flushes): what the
 *                      line holds now becomes durable at the next fence;
 *                      clflush: durable at once (it is ordered with stores);
 *   cm_rule_ntstore    a non-temporal store: durable at the next fence;
 *   cm_rule_fence      sfence/mfence: every prefix the same thread flushed is
 *                      now on the media (a line flushed again by another
 *                      thread before that fence waits for that thread's).
 *
 * A crash state is the media plus, per line with pending entries, one prefix
 * of them in program order (x86 writes a line back whole), a torn group at
 * the end of the prefix persisting only its later pieces; lines are
 * independent. cm_line_versions lists the distinct contents one line may
 * hold after a crash.
 */
#ifndef CAIRN_CRASHMODEL_H
#define CAIRN_CRASHMODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_LINE 64u

enum cm_kind { CM_STORE, CM_SNAP_FLUSH, CM_SNAP_NT, CM_SNAP_FENCE };
enum cm_flush { CM_CLWB, CM_CLFLUSHOPT, CM_CLFLUSH, CM_MSYNC };  /* trace.c's TR_FLUSH aux */

struct cm_entry {
    uint8_t  off, len;               /* bytes [off, off + len) of the line */
    uint8_t  kind;                   /* enum cm_kind */
    uint32_t group;                  /* pieces of one tearable store (0: none) */
    uint32_t site;                   /* trace site of a traced store, else 0 */
    uint64_t seq;                    /* the trace record's number */
    uint64_t fence;                  /* fences before it */
    uint8_t  bytes[CM_LINE];         /* at [off, off + len) */
};

struct cm_line {
    uint64_t idx;                    /* line number in the pool */
    uint32_t n, cap;
    uint32_t flushed;                /* entries [0, flushed) are durable at the next fence */
    uint32_t flush_tid;              /* ... of this thread */
    uint32_t play_pos;
    struct cm_entry *e;
};

/* one way a line may come out of a crash: entries [0, prefix) except [skip_lo, skip_hi) */
struct cm_variant { uint32_t prefix, skip_lo, skip_hi; };

struct cm_model {
    size_t   size, nlines;
    unsigned char *media;            /* durable image (caller's memory: a mapped file) */
    unsigned char *cache;            /* what the program's memory holds (a page of it is
                                      * copied from media when first written: cm_cache_page) */
    uint64_t *cached;                /* bit per 4 KiB page: cache holds that page */
    struct cm_line **line;           /* per line, NULL while nothing is pending */
    uint64_t *play;                  /* lines with pending entries */
    size_t   nplay, capplay;
    uint32_t next_group;
    uint64_t fences, traced_stores, untraced_entries, merged_entries;
    void   (*on_durable)(void *ctx, uint64_t line);   /* called after a rule changed media's line */
    void    *on_durable_ctx;
    uint64_t media_hash;             /* the media's identity, relative to the image at cm_init
                                      * (0): per line changed since, cm_line_hash of its
                                      * contents then and now, xor'd (equal images, equal
                                      * hashes, with no pass over the whole pool) */
};

/* media: size bytes holding the image at the pool's open (it is updated in place).
 * Costs what the trace touches, not the pool's size: no page of media is read here. */
int  cm_init(struct cm_model *m, unsigned char *media, size_t size);
void cm_free(struct cm_model *m);

void cm_rule_store(struct cm_model *m, uint64_t off, const void *bytes, size_t len,
                   uint32_t site, uint64_t seq);
bool cm_rule_untraced(struct cm_model *m, uint64_t line, const void *now, enum cm_kind why,
                      uint64_t seq);
void cm_rule_flush(struct cm_model *m, uint64_t line, enum cm_flush kind, const void *now,
                   uint32_t tid, uint64_t seq);
void cm_rule_ntstore(struct cm_model *m, uint64_t line, const void *now, uint32_t tid, uint64_t seq);
void cm_rule_fence(struct cm_model *m, uint32_t tid);

/* The line's pending state, NULL when it holds only what is durable. */
static inline struct cm_line *cm_pending(const struct cm_model *m, uint64_t line)
{
    return line < m->nlines ? m->line[line] : NULL;
}
/* Every variant of a pending line (prefixes, then torn groups): returns how
 * many were written to out (cap at least 2 * n + 1). */
size_t cm_line_variants(const struct cm_line *l, struct cm_variant *out, size_t cap);
/* The line's contents under variant v. */
void cm_line_apply(const struct cm_model *m, const struct cm_line *l, const struct cm_variant *v,
                   unsigned char out[CM_LINE]);
/* Whether entry i persists under variant v. */
static inline bool cm_variant_has(const struct cm_variant *v, uint32_t i)
{
    return i < v->prefix && (i < v->skip_lo || i >= v->skip_hi);
}
uint64_t cm_line_hash(uint64_t line, const unsigned char bytes[CM_LINE]);

#endif
