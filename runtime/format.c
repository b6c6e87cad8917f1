/*
 * format.c -- the pool file's header: the immutable part, the two copies
 * of the mutable state record, the clean flag. Its layout is drawn in
 * format.h. The heap's own on-media words (the chunk table) belong to the
 * allocator (alloc.c); the lanes' to the transactions (tx.c, recover.c).
 *
 * Invariant (6), for the header: cairn__header_check refuses a header
 * whose magic, version, checksum, geometry, state copies, size or root is
 * inconsistent, before anything else of the file is read.
 */
#include "persist.h"
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

uint64_t cairn__heap_chunks(const struct pool_hdr *h, uint64_t size)
{
    return size > h->heap_off ? (size - h->heap_off) / CAIRN_CHUNK : 0;
}

uint64_t cairn__state_checksum(const struct pool_state *s)
{
    return cairn__hash(s, offsetof(struct pool_state, checksum), 0x5747);
}

uint64_t cairn__hdr_checksum(const struct pool_hdr *h)
{
    return cairn__hash(h, offsetof(struct pool_hdr, checksum), 0x4844);
}

int cairn__state_read(const char *base, struct pool_state *out)
{
    const struct pool_state *a = (const void *)(base + CAIRN_STATE_A_OFF);
    const struct pool_state *b = (const void *)(base + CAIRN_STATE_B_OFF);
    int va = a->checksum == cairn__state_checksum(a), vb = b->checksum == cairn__state_checksum(b);
    if (!va && !vb) return -1;
    if (va && (!vb || a->seq >= b->seq)) *out = *a;
    else *out = *b;
    return 0;
}

int cairn__state_copy_ok(const char *base, int copy)
{
    const struct pool_state *s = (const void *)(base + (copy ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF));
    return s->checksum == cairn__state_checksum(s);
}

/* The state copies of a cleanly closed pool are both whole: each write is
 * dfenced before the next and the last one before the clean flag is set,
 * and an open that finds a copy torn by a crash rewrites it before the
 * pool can be closed cleanly again (cairn_pool_open). So in a pool closed
 * cleanly a copy that fails its checksum was damaged after it was written.
 * Which copy was the newer cannot be told (its sequence number is as
 * unreliable as the rest of it), and opening with the other could go back
 * silently to an older root or size: refuse. A dirty pool's bad copy may
 * be a torn write of the newest state, never made durable; the other copy
 * is then the current state, as always. */
int cairn__state_check(const char *base, char *why, size_t whylen)
{
    uint64_t clean = *(const uint64_t *)(base + CAIRN_CLEAN_OFF);
    int va = cairn__state_copy_ok(base, 0), vb = cairn__state_copy_ok(base, 1);
    if (clean != 1 || va == vb) return 0;
    const struct pool_state *good = (const void *)(base + (va ? CAIRN_STATE_A_OFF : CAIRN_STATE_B_OFF));
    snprintf(why, whylen, "state copy %c fails its checksum in a pool that was closed cleanly: "
             "the file is damaged (a crash cannot tear a copy of a cleanly closed pool), and "
             "copy %c (sequence %llu) may be older than the damaged one, so opening with it "
             "could silently go back to an older root; restore the pool from a backup "
             "(`cairn pool check FILE` shows both copies)", va ? 'B' : 'A', va ? 'A' : 'B',
             (unsigned long long)good->seq);
    return -1;
}

/* Write pool->state (seq+1) into the copy not holding the current one. */
void cairn__state_write(cairn_pool *pool)
{
    pool->state.seq++;
    pool->state.checksum = cairn__state_checksum(&pool->state);
    struct pool_state *dst = (void *)(pool->base + ((pool->state.seq & 1) ? CAIRN_STATE_A_OFF : CAIRN_STATE_B_OFF));
    *dst = pool->state;
    if (!CAIRN_MUTATED(STATE_FLUSH)) cairn__flush_range(pool, dst, sizeof *dst);
    if (!CAIRN_MUTATED(STATE_DFENCE)) cairn__dfence_pool(pool);
}

int cairn__header_check(const void *map, uint64_t file_size, const char *layout,
                        char *why, size_t whylen)
{
    const struct pool_hdr *h = map;
    if (file_size < CAIRN_HEADER_END) {
        snprintf(why, whylen, "file is %llu bytes, too small to be a cairn pool (truncated?)",
                 (unsigned long long)file_size);
        return -1;
    }
    if (memcmp(h->magic, CAIRN_MAGIC, 8)) {
        snprintf(why, whylen, "not a cairn pool (bad magic); create one with cairn_pool_create");
        return -1;
    }
    if (h->version < CAIRN_VERSION_MIN || h->version > CAIRN_VERSION) {
        snprintf(why, whylen, "pool format version %u, this libcairn reads versions %u to %u; "
                 "use the cairn release that made it", h->version, CAIRN_VERSION_MIN,
                 CAIRN_VERSION);
        return -1;
    }
    if (h->checksum != cairn__hdr_checksum(h)) {
        snprintf(why, whylen, "header checksum mismatch: the header is corrupt; "
                 "restore the pool from a backup");
        return -1;
    }
    if (memchr(h->layout, 0, CAIRN_LAYOUT_MAX) == NULL || h->hdr_size != sizeof *h ||
        h->nlanes != CAIRN_NLANES || h->lanes_off != CAIRN_LANES_OFF ||
        h->lane_size != CAIRN_LANE_SIZE || h->chunk_size != CAIRN_CHUNK ||
        h->zone_chunks != CAIRN_ZONE_CHUNKS || h->pool_id == 0 || h->pool_id >= CAIRN_ID_NONE ||
        h->heap_off < h->lanes_off + h->nlanes * h->lane_size || h->heap_off % CAIRN_CHUNK) {
        snprintf(why, whylen, "header geometry is inconsistent (corrupt header)");
        return -1;
    }
    struct pool_state st;
    if (cairn__state_read(map, &st)) {
        snprintf(why, whylen, "both copies of the pool state are corrupt; restore from a backup");
        return -1;
    }
    if (cairn__state_check(map, why, whylen)) return -1;
    if (st.size > file_size) {
        snprintf(why, whylen, "pool says it is %llu bytes but the file has %llu: the file "
                 "was truncated; restore it", (unsigned long long)st.size,
                 (unsigned long long)file_size);
        return -1;
    }
    if (st.size < h->heap_off + 2 * CAIRN_CHUNK || st.size > CAIRN_POOL_MAX_SIZE) {
        snprintf(why, whylen, "pool size %llu in the state record is out of range (corrupt)",
                 (unsigned long long)st.size);
        return -1;
    }
    if (st.root_off) {
        uint64_t nch = cairn__heap_chunks(h, st.size);
        /* the whole root inside the heap: an object that ran past its end
         * would be handed to the program as writable (found by
         * tests/fuzz/fuzz_pool, regress/pool/root-past-end) */
        uint64_t heap_end = h->heap_off + nch * CAIRN_CHUNK;
        if (st.root_off < h->heap_off || st.root_off >= heap_end ||
            st.root_size == 0 || st.root_size > CAIRN_MAX_ALLOC ||
            st.root_size > heap_end - st.root_off || st.root_type == 0) {
            snprintf(why, whylen, "root record points outside the heap (corrupt)");
            return -1;
        }
    }
    if (layout && strncmp(h->layout, layout, CAIRN_LAYOUT_MAX)) {
        snprintf(why, whylen, "layout is \"%.64s\", the program asked for \"%s\"; open it "
                 "with the program that created it", h->layout, layout);
        return -1;
    }
    return 0;
}

/* Write a new pool's immutable header (not flushed). */
void cairn__header_init(struct pool_hdr *h, const char *layout, uint32_t id)
{
    memset(h, 0, CAIRN_HEADER_END);
    memcpy(h->magic, CAIRN_MAGIC, 8);
    h->version = CAIRN_VERSION;
    h->hdr_size = sizeof *h;
    snprintf(h->layout, CAIRN_LAYOUT_MAX, "%s", layout);
    h->pool_id = id;
    if (getrandom(h->uuid, sizeof h->uuid, 0) != sizeof h->uuid) h->uuid[0] = (uint64_t)time(NULL);
    h->create_time = (uint64_t)time(NULL);
    h->nlanes = CAIRN_NLANES;
    h->lanes_off = CAIRN_LANES_OFF;
    h->lane_size = CAIRN_LANE_SIZE;
    h->heap_off = (CAIRN_LANES_OFF + CAIRN_NLANES * CAIRN_LANE_SIZE + CAIRN_CHUNK - 1) & ~(CAIRN_CHUNK - 1);
    h->chunk_size = CAIRN_CHUNK;
    h->zone_chunks = CAIRN_ZONE_CHUNKS;
    h->checksum = cairn__hdr_checksum(h);
}

/* The clean flag: 1 only after a close wrote the allocator back (dfenced). */
void cairn__clean_set(cairn_pool *pool, uint64_t v)
{
    uint64_t *clean = (uint64_t *)(pool->base + CAIRN_CLEAN_OFF);
    *clean = v;
    if (!CAIRN_MUTATED(CLEAN_FLUSH)) cairn__flush_range(pool, clean, 8);
    if (!CAIRN_MUTATED(CLEAN_DFENCE)) cairn__dfence_pool(pool);
}

