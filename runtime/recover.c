/*
 * recover.c -- rolling back torn transactions when a pool opens.
 *
 * Invariants (DESIGN.md numbering):
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
 *     recovery write outside the pool.
 */
#include "internal.h"
#include <errno.h>
#include <stdlib.h>

/* Walk the valid records of a lane in order. fn may be NULL. Returns the
 * number of UNDO records seen, or -1 with why filled for a lane that is
 * structurally impossible (not merely ending in a torn record). */
int cairn__lane_scan(cairn_pool *pool, unsigned lane,
                     int (*fn)(void *ctx, const struct log_rec *r, const char *data), void *ctx,
                     char *why, size_t whylen)
{
    const struct pool_hdr *h = pool->hdr;
    char *area = pool->base + h->lanes_off + (uint64_t)lane * h->lane_size;
    uint64_t gen = ((struct lane_hdr *)area)->gen;
    char *blk = area + sizeof(struct lane_hdr);
    uint64_t cap = h->lane_size - sizeof(struct lane_hdr), used = 0;
    int n = 0, jumps = 0;
    for (;;) {
        if (cap - used < sizeof(struct log_rec)) break;
        const struct log_rec *r = (const void *)(blk + used);
        unsigned kind = r->kind_off & 0xff;
        uint64_t off = r->kind_off >> 8;
        if (kind == REC_UNDO) {
            if (r->len == 0 || r->len > cap - used - sizeof *r || off >= pool->size ||
                r->len > pool->size - off)
                break;
            if (r->checksum != cairn__rec_checksum(gen, r->kind_off, r->len, r + 1, r->len)) break;
            if (fn && fn(ctx, r, (const char *)(r + 1))) return -1;
            n++;
            used += sizeof *r + ((r->len + 7) & ~(uint64_t)7);
        } else if (kind == REC_JUMP) {
            if (r->checksum != cairn__rec_checksum(gen, r->kind_off, r->len, NULL, 0)) break;
            uint64_t heap_end = h->heap_off + cairn__heap_chunks(h, pool->size) * CAIRN_CHUNK;
            if (off < h->heap_off || r->len < 2 * sizeof *r || off > heap_end ||
                r->len > heap_end - off || ++jumps > 1000000) {
                snprintf(why, whylen, "lane %u: log extension block at %#llx is outside the heap",
                         lane, (unsigned long long)off);
                return -1;
            }
            blk = pool->base + off;
            cap = r->len;
            used = 0;
        } else {
            break;
        }
    }
    return n;
}

struct undo_list { const struct log_rec **v; size_t n, cap; };

static int collect(void *ctx, const struct log_rec *r, const char *data)
{
    (void)data;
    struct undo_list *l = ctx;
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
    struct undo_list l = { *v, 0, *cap };
    int n = cairn__lane_scan(pool, lane, collect, &l, why, whylen);
    *v = l.v;
    *cap = l.cap;
    return n < 0 ? -1 : (long)l.n;
}

int cairn__recover_lanes(cairn_pool *pool, uint64_t *records)
{
    const struct log_rec **v = NULL;
    size_t cap = 0;
    char why[256] = "";
    *records = 0;
    for (unsigned lane = 0; lane < pool->hdr->nlanes; lane++) {
        long n = cairn__lane_records(pool, lane, &v, &cap, why, sizeof why);
        if (n < 0) {
            free(v);
            cairn__err(EINVAL, "%s: %s; the pool is corrupt, restore it from a backup",
                       pool->path, why[0] ? why : "undo log unreadable (out of memory?)");
            return -1;
        }
        if (n == 0) continue;
        const char *seam = getenv("CAIRN_TEST_CRASH_RECOVERY");
        for (size_t i = (size_t)n; i-- > 0;) {     /* newest first: oldest value wins */
            const struct log_rec *r = v[i];
            char *dst = pool->base + (r->kind_off >> 8);
            memmove(dst, r + 1, r->len);
            cairn__flush_range(pool, dst, r->len);
            if (seam && !strcmp(seam, "mid") && i == (size_t)n / 2) {
                /* test seam: die half-way through a roll-back */
                cairn__dfence_pool(pool);
                fprintf(stderr, "cairn: test crash in the middle of rolling back lane %u\n", lane);
                abort();
            }
        }
        cairn__ofence_pool(pool);                 /* restored data before retiring */
        struct lane_hdr *lh = (void *)(pool->base + pool->hdr->lanes_off +
                                       (uint64_t)lane * pool->hdr->lane_size);
        atomic_store(&lh->gen, atomic_load(&lh->gen) + 1);
        cairn__flush_range(pool, lh, 8);
        cairn__dfence_pool(pool);
        *records += (uint64_t)n;
        pool->rec_lanes++;
        if (seam && !strcmp(seam, "after")) {
            /* test seam: die between lanes to prove recovery recovers */
            fprintf(stderr, "cairn: test crash after rolling back lane %u\n", lane);
            abort();
        }
    }
    free(v);
    return 0;
}
