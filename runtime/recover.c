/*
 * recover.c -- rolling back torn transactions when a pool opens.
 *
 * Invariants (DESIGN.md numbering; the asserts that name them run in
 * debug builds):
 *
 * (3) Recovery is idempotent. Rolling back copies each valid undo record of
 *     a lane over its range, newest first, flushes, and only then retires
 *     the lane's records by bumping its generation (dfence). Until that
 *     bump the records stay valid and untouched, so a crash anywhere in
 *     here is followed by the same roll-back; after it, the lane is empty.
 *     The heap is rebuilt (gc.c) only after every lane is retired, and only
 *     in volatile memory until the chunk table is rewritten, whose words
 *     describe unreachable chunks only.
 * (5) A pool is self-contained: lanes and their extension blocks live in
 *     the pool file; nothing outside it is read.
 * (6) Records are validated before use: kind, offset and length inside the
 *     pool, extension blocks inside the heap, a bounded number of jumps,
 *     and the checksum. A hostile lane stops the scan; it never makes
 *     recovery write outside the pool. A log whose first invalid record is
 *     followed by valid records that no crash could have left after it is
 *     damaged, not torn (log_damaged): the open is refused before any lane
 *     is rolled back, so the refused open changes nothing.
 */
#include "persist.h"
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

/* A walk over one lane's log: where it stands. */
struct lwalk {
    cairn_pool *pool;
    unsigned lane;
    uint64_t gen;
    char *blk;                        /* the block: the lane's own area or an extension */
    uint64_t cap, used;
    int jumps;
    bool *left;                       /* set when the walk reads outside the lane's own area */
};

static uint64_t rec_bytes(const struct log_rec *r)
{
    return sizeof *r + ((r->len + 7) & ~(uint64_t)7);
}

/* The record at pos of w's block, if it validates under generation gen:
 * 1 UNDO, 2 JUMP (not yet checked for bounds), 0 none. */
static int rec_at(const struct lwalk *w, uint64_t gen, uint64_t pos, const struct log_rec **out)
{
    if (pos > w->cap || w->cap - pos < sizeof(struct log_rec)) return 0;
    const struct log_rec *r = (const void *)(w->blk + pos);
    unsigned kind = r->kind_off & 0xff;
    uint64_t off = r->kind_off >> 8, room = w->cap - pos - sizeof *r;
    *out = r;
    if (kind == REC_UNDO) {
        /* only the heap is ever logged: a record aimed at the header or the
         * lanes would rewrite the geometry recovery itself reads (found by
         * tests/fuzz/fuzz_pool, regress/pool/undo-over-header) */
        if (r->len == 0 || r->len > room || off < w->pool->hdr->heap_off ||
            off >= w->pool->size || r->len > w->pool->size - off)
            return 0;
        return r->checksum == cairn__rec_checksum(gen, r->kind_off, r->len, r + 1, r->len);
    }
    if (kind == REC_JUMP)
        return r->checksum == cairn__rec_checksum(gen, r->kind_off, r->len, NULL, 0) ? 2 : 0;
    return 0;
}

/* The first position from pos on (8 bytes apart, up to the last one with
 * room for a record header) whose first word's low byte names a record
 * kind: rec_at refuses every other position before reading more, so the
 * search for a valid record tests only these. Words are read a cache line
 * at a time; a line with no candidate is skipped whole. Returns a position
 * past the room (> cap - header) when there is none. */
static uint64_t next_candidate(const struct lwalk *w, uint64_t pos)
{
    const uint64_t hdr = sizeof(struct log_rec);
    if (w->cap < hdr) return w->cap + 1;
    const uint64_t last = w->cap - hdr;
    const unsigned char *b = (const unsigned char *)w->blk;
    while (pos <= last) {
        if (pos % 64 == 0 && last - pos >= 64) {
            uint64_t x[8], any = 0, hit = 0;
            memcpy(x, b + pos, sizeof x);
            for (int i = 0; i < 8; i++) any |= x[i];
            if (!any) {                      /* a zero line: the common case */
                pos += 64;
                continue;
            }
            for (int i = 0; i < 8; i++) {
                uint64_t k = x[i] & 0xff;
                hit |= (uint64_t)(k == REC_UNDO || k == REC_JUMP) << i;
            }
            if (!hit) {
                pos += 64;
                continue;
            }
            return pos + 8 * (uint64_t)__builtin_ctzll(hit);
        }
        uint64_t x;
        memcpy(&x, b + pos, sizeof x);
        if ((x & 0xff) == REC_UNDO || (x & 0xff) == REC_JUMP) return pos;
        pos += 8;
    }
    return pos;
}

/* Continue w in the block a valid JUMP names; -1 (why) if it is outside the heap. */
static int take_jump(struct lwalk *w, uint64_t off, uint64_t len, char *why, size_t whylen)
{
    const struct pool_hdr *h = w->pool->hdr;
    uint64_t heap_end = h->heap_off + cairn__heap_chunks(h, w->pool->size) * CAIRN_CHUNK;
    /* extension blocks are heap objects: 8-byte aligned, as every record
     * in them (a misaligned one: tests/fuzz/regress/pool/jump-misaligned) */
    if (off < h->heap_off || off % 8 || len < 2 * sizeof(struct log_rec) || off > heap_end ||
        len > heap_end - off || ++w->jumps > 1000000) {
        snprintf(why, whylen, "lane %u: log extension block at %#llx is outside the heap (or not 8-byte aligned)",
                 w->lane, (unsigned long long)off);
        return -1;
    }
    if (w->left) *w->left = true;
    w->blk = w->pool->base + off;
    w->cap = len;
    w->used = 0;
    return 0;
}

static bool one_bit(uint64_t x) { return x && !(x & (x - 1)); }

/* Where in the pool w stands, for messages. */
static unsigned long long w_off(const struct lwalk *w)
{
    return (unsigned long long)(w->blk + w->used - w->pool->base);
}

/* The log stops at an invalid record P (w stands on it). Is that a torn
 * tail, or damage? Records are appended in order, and an append (one
 * range, split into records of CAIRN_REC_CHUNK bytes, with a JUMP where a
 * block fills up) is ofenced before the next begins (tx.c, invariant 1).
 * So a crash can leave invalid records only in the last append, and a
 * valid record after P proves P damaged unless P and it are in that one
 * append. Proofs that they are not (each sound whatever the crash):
 *   - P's words are all the ones written, except that its checksum is one
 *     bit off: it was written whole and changed afterwards;
 *   - a valid record V in P's block, at a distance from P that is not a
 *     multiple of a full record (inside one append and one block, every
 *     record before the last is a full CAIRN_REC_CHUNK one);
 *   - two valid records after P, next to each other in the log, that are
 *     not consecutive pieces of one range (a full piece, then the piece
 *     starting where it ends; across a JUMP, the piece where it ends);
 *   - the lane's first record validates under a generation one bit above
 *     the lane's own (the generation only grows).
 * Anything else is treated as a torn tail, as before. Returns 1 with why
 * filled when damage is proven, 2 when valid records of the generation
 * follow P without proving anything (the torn append is the first of its
 * transaction: recovery retires them, so a later transaction of the lane
 * never finds them past its own tail), 0 when nothing valid follows. */
static int log_damaged(const struct lwalk *p, const char *area, char *why, size_t whylen)
{
    const uint64_t full = sizeof(struct log_rec) + CAIRN_REC_CHUNK;
    const struct pool_hdr *h = p->pool->hdr;
    uint64_t room = p->cap >= p->used ? p->cap - p->used : 0;
    const struct log_rec *r = (const void *)(p->blk + p->used), *v;
    if (room < sizeof *r) return 0;
    bool first = p->blk == area + sizeof(struct lane_hdr) && p->used == 0;
    unsigned kind = r->kind_off & 0xff;

    struct lwalk w = *p;
    /* P written whole, its checksum word changed */
    uint64_t want = 0;
    bool have = false;
    if (kind == REC_UNDO && r->len && r->len <= room - sizeof *r) {
        want = cairn__rec_checksum(p->gen, r->kind_off, r->len, r + 1, r->len);
        have = true;
    } else if (kind == REC_JUMP) {
        want = cairn__rec_checksum(p->gen, r->kind_off, r->len, NULL, 0);
        have = true;
    }
    if (have && one_bit(want ^ r->checksum)) {
        snprintf(why, whylen, "lane %u: the %s record at pool offset %#llx was written whole "
                 "but its checksum has one bit changed since: the undo log is damaged, not "
                 "torn by a crash", p->lane, kind == REC_JUMP ? "log jump" : "undo", w_off(p));
        return 1;
    }

    /* the generation field lost a bit: its first record validates under a
     * higher generation (only the lower direction can be stale records) */
    if (first && !rec_at(&w, p->gen - 1, 0, &v)) {
        for (unsigned b = 0; b < 64; b++) {
            uint64_t g = p->gen | ((uint64_t)1 << b);
            if (g == p->gen || !rec_at(&w, g, 0, &v)) continue;
            snprintf(why, whylen, "lane %u: its generation field holds %llu but its first undo "
                     "record was written under generation %llu: the lane header is damaged, "
                     "not torn by a crash", p->lane, (unsigned long long)p->gen,
                     (unsigned long long)g);
            return 1;
        }
    }

    /* find the next valid record after P */
    int found = 0;
    if (room < CAIRN_LOG_ROOM_MIN) {
        /* P stands where the writer puts a JUMP. Find the block it named:
         * its checksum with the offset of some large object (the offset
         * word changed), or its offset with that object's size (the length
         * word changed). Either proves the JUMP was written. */
        uint64_t target = 0, tlen = 0, nch = cairn__heap_chunks(h, p->pool->size);
        if (p->left) *p->left = true;       /* the chunk table */
        for (uint64_t g = 0; g < nch && !target; g++) {
            if (g % CAIRN_ZONE_CHUNKS == 0) continue;
            uint64_t cw = *cairn__chunk_table_slot(p->pool->base, h, g);
            if ((cw & 0xff) != CK_LARGE || !cairn__chunk_word_ok(g, cw)) continue;
            uint64_t n = (cw >> 8) & 0xffffffffu;
            uint64_t o = h->heap_off + g * CAIRN_CHUNK + CAIRN_LARGE_HDR;
            uint64_t cap = n * CAIRN_CHUNK - CAIRN_LARGE_HDR;
            if (r->checksum == cairn__rec_checksum(p->gen, (uint64_t)REC_JUMP | (o << 8), r->len,
                                                   NULL, 0)) {
                target = o;
                tlen = r->len;
            } else if ((r->kind_off >> 8) == o &&
                       r->checksum == cairn__rec_checksum(p->gen, (uint64_t)REC_JUMP | (o << 8),
                                                          cap, NULL, 0)) {
                target = o;
                tlen = cap;
            }
            if (n) g += n - 1;
        }
        if (!target) return 0;
        char dummy[8];
        if (take_jump(&w, target, tlen, dummy, sizeof dummy)) return 0;
        found = 2;
    }                                        /* else: search from P (below) */

    /* walk every valid record after P, searching past invalid ones */
    const struct log_rec *prev = NULL;       /* the valid record just before, if adjacent */
    bool jumped = false;
    for (;;) {
        int k = rec_at(&w, p->gen, w.used, &v);
        if (k == 0) {
            /* search this block for the next valid record */
            prev = NULL;
            if (w.cap < w.used || w.cap - w.used < CAIRN_LOG_ROOM_MIN) return found;
            uint64_t pos = next_candidate(&w, w.used + 8);
            while (pos <= w.cap && w.cap - pos >= sizeof *v && !rec_at(&w, p->gen, pos, &v))
                pos = next_candidate(&w, pos + 8);
            if (pos > w.cap || w.cap - pos < sizeof *v) return found;
            found = 2;
            w.used = pos;
            continue;
        }
        if (k == 2) {
            char dummy[8];
            if (take_jump(&w, v->kind_off >> 8, v->len, dummy, sizeof dummy)) return found;
            jumped = true;
            continue;
        }
        uint64_t voff = v->kind_off >> 8;
        if (w.blk == p->blk && (w.used - p->used) % full) {
            snprintf(why, whylen, "lane %u: the log record at pool offset %#llx fails its "
                     "checksum, but an intact record of the same transaction follows it at "
                     "%#llx, written after a fence that the damaged one preceded: the undo "
                     "log is damaged, not torn by a crash (rolling back only the records before "
                     "it would leave a state no program wrote)", p->lane, w_off(p), w_off(&w));
            return 1;
        }
        if (prev && ((!jumped && prev->len != CAIRN_REC_CHUNK) ||
                     (prev->kind_off >> 8) + prev->len != voff)) {
            snprintf(why, whylen, "lane %u: the log record at pool offset %#llx fails its "
                     "checksum, but intact records of the same transaction written after a "
                     "later fence follow it (at %#llx): the undo log is damaged, not torn by "
                     "a crash (rolling back only the records before it would leave a state no "
                     "program wrote)", p->lane, w_off(p), w_off(&w));
            return 1;
        }
        prev = v;
        jumped = false;
        w.used += rec_bytes(v);
    }
}

/* Walk the valid records of a lane in order. fn may be NULL. Returns the
 * number of UNDO records seen, or -1 with why filled for a lane that is
 * structurally impossible or (strict) provably damaged, not merely ending
 * in a torn record. *beyond (strict, may be NULL): valid records of the
 * lane's generation lie past the first invalid one (a torn append). */
static int lane_scan(cairn_pool *pool, unsigned lane,
                     int (*fn)(void *ctx, const struct log_rec *r, const char *data), void *ctx,
                     bool strict, bool *beyond, bool *left, char *why, size_t whylen)
{
    const struct pool_hdr *h = pool->hdr;
    char *area = pool->base + h->lanes_off + (uint64_t)lane * h->lane_size;
    struct lwalk w = { pool, lane, ((struct lane_hdr *)area)->gen, area + sizeof(struct lane_hdr),
                       h->lane_size - sizeof(struct lane_hdr), 0, 0, left };
    int n = 0;
    for (;;) {
        const struct log_rec *r;
        int k = rec_at(&w, w.gen, w.used, &r);
        if (k == 1) {
            if (fn && fn(ctx, r, (const char *)(r + 1))) return -1;
            n++;
            w.used += rec_bytes(r);
        } else if (k == 2) {
            if (take_jump(&w, r->kind_off >> 8, r->len, why, whylen)) return -1;
        } else {
            break;
        }
    }
    if (beyond) *beyond = false;
    if (strict) {
        int d = log_damaged(&w, area, why, whylen);
        if (d == 1) return -1;
        if (beyond) *beyond = d == 2;
    }
    return n;
}

int cairn__lane_scan(cairn_pool *pool, unsigned lane,
                     int (*fn)(void *ctx, const struct log_rec *r, const char *data), void *ctx,
                     bool strict, bool *beyond, char *why, size_t whylen)
{
    return lane_scan(pool, lane, fn, ctx, strict, beyond, NULL, why, whylen);
}

static int collect(void *ctx, const struct log_rec *r, const char *data)
{
    (void)data;
    struct lane_log *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        const struct log_rec **nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = r;
    return 0;
}

/* The valid UNDO records of a lane, oldest first, in *v (grown with
 * realloc; the caller frees it). Returns their number, or -1 (why filled,
 * or empty when out of memory). */
long cairn__lane_records(cairn_pool *pool, unsigned lane, const struct log_rec ***v, size_t *cap,
                         char *why, size_t whylen)
{
    struct lane_log l = { *v, 0, *cap, false, false };
    int n = cairn__lane_scan(pool, lane, collect, &l, false, NULL, why, whylen);
    *v = l.v;
    *cap = l.cap;
    return n < 0 ? -1 : (long)l.n;
}

/* Roll back: copy the undo records v[0..n) (oldest first, as the log holds
 * them) back over their ranges, newest first so that the oldest value of a
 * byte wins, and flush each range; no fence (the caller orders the
 * restored data before it retires the log). The one applier of undo
 * records: cairn_tx_abort and recovery both roll back through it. */
void cairn__undo_apply(cairn_pool *pool, const struct log_rec *const *v, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        const struct log_rec *r = v[i];
        /* (6): records were validated (rec_at): never a write outside the pool */
        assert((r->kind_off >> 8) < pool->size && r->len <= pool->size - (r->kind_off >> 8));
        char *dst = pool->base + (r->kind_off >> 8);
        memmove(dst, r + 1, r->len);
        if (!CAIRN_MUTATED(UNDO_FLUSH)) cairn__flush_range(pool, dst, r->len);
    }
}

/* One lane's strict scan, its valid records collected into log (grown
 * with realloc; cairn__lane_logs_free frees them): their number, or -1
 * with why filled for a damaged lane (why empty: out of memory). */
int cairn__lane_log_read(cairn_pool *pool, unsigned lane, struct lane_log *log, char *why,
                         size_t whylen)
{
    bool left = false;
    log->n = 0;
    int n = lane_scan(pool, lane, collect, log, true, &log->beyond, &left, why, whylen);
    log->local = !left;
    return n;
}

void cairn__lane_logs_free(struct lane_log *logs)
{
    for (unsigned lane = 0; lane < CAIRN_NLANES; lane++) {
        free(logs[lane].v);
        logs[lane] = (struct lane_log){ 0 };
    }
}

int cairn__recover_lanes(cairn_pool *pool, uint64_t *records)
{
    /* Every lane is read and judged before any is rolled back, so an open
     * refused for a damaged log has changed nothing in the file. */
    unsigned nl = (unsigned)pool->hdr->nlanes;
    struct lane_log logs[CAIRN_NLANES];
    memset(logs, 0, sizeof logs);
    char why[512] = "";
    int rc = 0;
    *records = 0;
    for (unsigned lane = 0; lane < nl && lane < CAIRN_NLANES; lane++) {
        if (cairn__lane_log_read(pool, lane, &logs[lane], why, sizeof why) < 0) {
            cairn__err(EINVAL, "%s: %s; restore the pool from a backup (`cairn pool check %s` "
                       "lists what is wrong)", pool->path,
                       why[0] ? why : "undo log unreadable (out of memory?)", pool->path);
            rc = -1;
            goto out;
        }
    }
    cairn__recover_logs(pool, logs, records);
out:
    cairn__lane_logs_free(logs);
    return rc;
}

/* Roll back and retire every lane of logs (each lane's strict scan,
 * cairn__lane_log_read, none damaged); *records: the records applied. */
void cairn__recover_logs(cairn_pool *pool, struct lane_log *logs, uint64_t *records)
{
    unsigned nl = (unsigned)pool->hdr->nlanes;
    char why[512] = "";
    (void)why;                                /* the assert's */
    *records = 0;
    const char *seam = getenv("CAIRN_TEST_CRASH_RECOVERY");
    for (unsigned lane = 0; lane < nl && lane < CAIRN_NLANES; lane++) {
        const struct log_rec **v = logs[lane].v;
        size_t n = logs[lane].n;
        if (n == 0 && !logs[lane].beyond) continue;
        if (seam && (!strcmp(seam, "mid") || !strcmp(seam, "segv")) && n) {
            /* test seam: die half-way through a roll-back (segv: by a
             * write to an unmapped address, as a wild pointer would) */
            cairn__undo_apply(pool, v + n / 2, n - n / 2);
            cairn__dfence_pool(pool);
            fprintf(stderr, "cairn: test crash in the middle of rolling back lane %u\n", lane);
            if (seam[0] == 's') {
                char *volatile wild = (char *)(uintptr_t)16;
                *wild = 0;
            }
            abort();
        }
        cairn__undo_apply(pool, v, n);
        if (!CAIRN_MUTATED(RECOVER_OFENCE) && !CAIRN_MUTATED(RECOVER_OFENCE_MOVED))
            cairn__ofence_pool(pool);             /* restored data before retiring */
        struct lane_hdr *lh = (void *)(pool->base + pool->hdr->lanes_off +
                                       (uint64_t)lane * pool->hdr->lane_size);
        atomic_store(&lh->gen, atomic_load(&lh->gen) + 1);
        if (!CAIRN_MUTATED(RECOVER_GEN_FLUSH)) cairn__flush_range(pool, lh, 8);
        if (CAIRN_MUTATED(RECOVER_OFENCE_MOVED)) cairn__ofence_pool(pool);
        if (!CAIRN_MUTATED(RECOVER_DFENCE)) cairn__dfence_pool(pool);
        /* (3): the lane is retired: another recovery rolls nothing back */
        assert(cairn__lane_scan(pool, lane, NULL, NULL, false, NULL, why, sizeof why) == 0);
        *records += (uint64_t)n;
        if (n) pool->rec.lanes++;
        if (seam && !strcmp(seam, "after")) {
            /* test seam: die between lanes to prove recovery recovers */
            fprintf(stderr, "cairn: test crash after rolling back lane %u\n", lane);
            abort();
        }
    }
}
