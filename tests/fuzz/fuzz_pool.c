/*
 * fuzz_pool.c -- libFuzzer target over the pool-file parser and recovery.
 *
 * Each input patches one of four real pools, made by this file with the
 * runtime's own API at start-up, and writes the result out as a pool file:
 *
 *   0  killed inside a small transaction (one undo record in lane 0)
 *   1  closed cleanly with 400 objects of 8 size classes and a large one
 *   2  grown from 8 to 16 MiB, killed inside a transaction whose undo log
 *      spills out of its lane into extension blocks (JUMP records)
 *   3  killed outside any transaction, with unreachable objects the
 *      recovery mark must free and a long list it must walk
 *
 * Input: byte 0 is the flags, then records of [offset:3 bytes][len:1][bytes]
 * that overwrite the pool from that offset (modulo the pool's used extent).
 *   bit 0  dirty (clean flag 0: recovery runs); clear: clean flag 1
 *   bit 1  truncate the file to 4 KiB past the used extent
 *   bit 2  fix-up: after patching, recompute every checksum the format has
 *          (header, both state copies, each chunk-table word, and in each lane
 *          as many undo records, extension blocks followed, as the pool held
 *          valid ones: stale records of committed transactions stay stale)
 *          with the runtime's own functions, so the patched values reach the
 *          code behind the checks: undo apply, heap rebuild, the recovery mark
 *   bits 3-4  the pool (0-3 above)
 *   bit 5  recovery marks in the foreground (CAIRN_GC_SYNC=1)
 * Built with -DFUZZ_NO_FIXUP, bit 2 is ignored (for coverage comparisons).
 *
 * The patched pool is checked read-only (cairn pool check), then opened
 * (recovery, mark from the root), used (a transaction, allocations) and
 * closed.
 * Invariant 6: no input may crash cairn or make it touch memory outside
 * the pool.
 */
#include "internal.h"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define NTEMPL 4
#define MB ((size_t)1 << 20)
struct templ {
    char *bytes;                      /* the pool file as a crash (or close) left it */
    size_t size;                      /* file size */
    size_t used;                      /* bytes patched, written and restored per input */
    unsigned valid[CAIRN_NLANES];     /* undo records each lane holds that recovery applies */
};
static struct templ templ[NTEMPL];
static char path[256];

static void quiet(void *c, const char *s, const char *m) { (void)c; (void)s; (void)m; }

/* the pool file as it is now (the page cache holds every store, flushed or not:
 * what a killed process leaves) */
static void snapshot(struct templ *t, const char *p, size_t size)
{
    t->size = size;
    t->bytes = calloc(1, size);
    int fd = open(p, O_RDONLY);
    if (!t->bytes || fd < 0 || pread(fd, t->bytes, size, 0) != (ssize_t)size) abort();
    close(fd);
    size_t u = size;
    while (u > CAIRN_HEADER_END && t->bytes[u - 1] == 0) u--;
    t->used = (u + 4095) & ~(size_t)4095;
}

static uint64_t *push(cairn_pool *p, uint64_t *head, size_t size)
{
    uint64_t *o = cairn_alloc(p, size);
    if (!o) abort();
    cairn_ptr_store(o, cairn_ptr_load(head));
    cairn_ptr_store(head, o);
    return o;
}

static void remove_file(void) { unlink(path); }

/* Walk lane l's undo log from its start, following JUMP records into
 * extension blocks that lie in the buffer, over at most max records.
 * sign: give each record the checksum it needs under the lane's generation
 * (cairn__rec_checksum). !sign: stop at the first record that fails it.
 * Returns the records walked. */
static unsigned lane_walk(char *buf, size_t size, const struct pool_hdr *h, unsigned l,
                          unsigned max, bool sign)
{
    char *area = buf + h->lanes_off + (uint64_t)l * h->lane_size;
    uint64_t gen;
    memcpy(&gen, area, 8);
    char *blk = area + sizeof(struct lane_hdr);
    uint64_t cap = h->lane_size - sizeof(struct lane_hdr), pos = 0;
    unsigned n = 0;
    for (int jumps = 0; n < max && jumps < 16 && cap - pos >= sizeof(struct log_rec); n++) {
        struct log_rec r;
        memcpy(&r, blk + pos, sizeof r);
        unsigned kind = r.kind_off & 0xff;
        uint64_t want;
        if (kind == REC_UNDO) {
            if (r.len == 0 || r.len > cap - pos - sizeof r) break;
            want = cairn__rec_checksum(gen, r.kind_off, r.len, blk + pos + sizeof r, r.len);
        } else if (kind == REC_JUMP) {
            want = cairn__rec_checksum(gen, r.kind_off, r.len, NULL, 0);
        } else {
            break;
        }
        if (!sign && r.checksum != want) break;
        r.checksum = want;
        memcpy(blk + pos, &r, sizeof r);
        if (kind == REC_UNDO) {
            pos += sizeof r + ((r.len + 7) & ~(uint64_t)7);
            continue;
        }
        uint64_t off = r.kind_off >> 8;
        if (off > size || r.len > size - off || r.len < 2 * sizeof r) {
            n++;
            break;
        }
        blk = buf + off;
        cap = r.len;
        pos = 0;
        jumps++;
    }
    return n;
}

/* A template with a fixed pool id, uuid and time, so that the seeds (which
 * hold relative pointers) mean the same in every run: the id is replaced in
 * the header and in every relative pointer to the pool, and the header and
 * the undo records that were valid are signed again (stale records of
 * committed transactions stay stale). Also counts each lane's valid records,
 * which are the ones the fix-up mode signs. */
static void fix_identity(struct templ *t, uint64_t id)
{
    struct pool_hdr *h = (void *)t->bytes;
    for (unsigned l = 0; l < CAIRN_NLANES; l++)
        t->valid[l] = lane_walk(t->bytes, t->used, h, l, ~0u, false);
    uint64_t old = h->pool_id, mask = (uint64_t)CAIRN_ID_MASK << CAIRN_ID_SHIFT;
    for (size_t o = CAIRN_HEADER_END; o + 8 <= t->used; o += 8) {
        uint64_t w;
        memcpy(&w, t->bytes + o, 8);
        if ((w >> 63) && ((w & mask) >> CAIRN_ID_SHIFT) == old) {
            w = (w & ~mask) | id << CAIRN_ID_SHIFT;
            memcpy(t->bytes + o, &w, 8);
        }
    }
    h->pool_id = id;
    h->uuid[0] = h->uuid[1] = id;
    h->create_time = 0;
    h->checksum = cairn__hdr_checksum(h);
    for (unsigned l = 0; l < CAIRN_NLANES; l++) lane_walk(t->bytes, t->used, h, l, t->valid[l], true);
}

/* a new 8 MiB pool at tp with a 64-byte root */
static cairn_pool *fresh(const char *tp, uint64_t **root)
{
    unlink(tp);
    cairn_pool *p = cairn_pool_create(tp, "fuzz", 8 * MB);
    if (!p || !(*root = cairn_root(p, 64, 99))) abort();
    return p;
}

/* t is the file as a kill inside the open transaction leaves it */
static void killed_in_tx(struct templ *t, cairn_pool *p, const char *tp, size_t size)
{
    snapshot(t, tp, size);
    cairn_tx_abort();
    cairn_pool_close(p);
    unlink(tp);
}

static void make_templates(void)
{
    char tp[256];
    snprintf(tp, sizeof tp, "/dev/shm/cairn-fuzz-tmpl-%d.pool", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm/cairn-fuzz-%d.pool", (int)getpid());
    uint64_t *root;

    /* 0: killed in a small transaction */
    cairn_pool *p = fresh(tp, &root);
    for (int i = 0; i < 20; i++)
        CAIRN_TX(p) { push(p, root, 16 + 16 * (size_t)(i % 4)); }
    cairn_tx_begin(p);
    cairn_tx_add(root, 64);
    root[1] = 5;
    killed_in_tx(&templ[0], p, tp, 8 * MB);

    /* 1: closed cleanly, many objects, one large */
    p = fresh(tp, &root);
    static const size_t sizes[8] = { 16, 24, 40, 64, 100, 200, 500, 1500 };
    for (int i = 0; i < 400; i++) {
        uint64_t *o = push(p, root, sizes[i % 8]);
        o[1] = (uint64_t)i;
    }
    uint64_t *big = push(p, root, 300 << 10);
    memset(big + 1, 0x5a, 64);
    cairn_pool_close(p);
    snapshot(&templ[1], tp, 8 * MB);

    /* 2: grown, killed in a transaction whose log leaves its lane */
    p = fresh(tp, &root);
    if (cairn_pool_grow(p, 16 * MB)) abort();
    root = cairn_root(p, 64, 99);
    uint64_t *blob = push(p, root, 40 << 10);
    for (int i = 0; i < 60; i++) push(p, root, 48);
    cairn_tx_begin(p);
    cairn_tx_add(blob, 40 << 10);      /* 40 KiB of undo: two extension blocks */
    memset(blob + 1, 0x77, (40 << 10) - 8);
    push(p, root, 2 << 20);           /* a large object allocated in the transaction */
    killed_in_tx(&templ[2], p, tp, 16 * MB);

    /* 3: killed outside a transaction: a long list, and objects nothing reaches */
    p = fresh(tp, &root);
    for (int i = 0; i < 300; i++) push(p, root, 32);
    for (int i = 0; i < 50; i++) {
        uint64_t *o = cairn_alloc(p, 64);
        if (!o) abort();
    }
    uint64_t *keep = cairn_ptr_load(root);
    CAIRN_TX(p) { cairn_free(cairn_ptr_load(keep)); cairn_ptr_store(keep, NULL); }
    snapshot(&templ[3], tp, 8 * MB);
    cairn_pool_close(p);
    unlink(tp);
    for (int i = 0; i < NTEMPL; i++) fix_identity(&templ[i], 0x100001 + (uint64_t)i);
    atexit(remove_file);
}

#ifndef FUZZ_NO_FIXUP
static void fix_checksums(char *buf, size_t size, const struct templ *t)
{
    struct pool_hdr *h = (void *)buf;
    h->checksum = cairn__hdr_checksum(h);
    struct pool_state *s = (void *)(buf + CAIRN_STATE_A_OFF);
    s->checksum = cairn__state_checksum(s);
    s = (void *)(buf + CAIRN_STATE_B_OFF);
    s->checksum = cairn__state_checksum(s);
    /* the geometry is the template's: the patched header may say anything */
    const struct pool_hdr *g = (const void *)t->bytes;
    for (unsigned l = 0; l < CAIRN_NLANES; l++) lane_walk(buf, size, g, l, t->valid[l], true);
    uint64_t n = cairn__heap_chunks(g, size);
    uint64_t *table = (uint64_t *)(buf + g->heap_off);
    for (uint64_t c = 0; c < n && c < CAIRN_ZONE_CHUNKS; c++) {
        uint64_t w = table[c], low = w & (((uint64_t)1 << 40) - 1);
        if (w && (low & 0xff) <= CK_CONT) table[c] = cairn__chunk_word(c, low & 0xff, low >> 8);
    }
}
#endif

/* Use the pool as a program would after the open: the root, a transaction
 * on it, and allocations from the heap recovery rebuilt (an object it left
 * marked free while reachable would be handed out here and overwritten).
 * The list's pointers are not followed: a corrupt one is the program's to
 * meet (cairn_ptr_load reports it as a safety violation, by design). */
static void use(cairn_pool *p)
{
    uint64_t *root = cairn_root(p, 64, 99);
    if (!root) return;
    CAIRN_TX(p) {
        cairn_tx_add(root, 64);
        root[7]++;
        for (int i = 0; i < 32; i++) {
            size_t n = (size_t)16 << (i % 8);
            uint64_t *o = cairn_alloc(p, n);
            if (!o) break;
            if ((char *)o < (char *)root + 64 && (char *)o + n > (char *)root) {
                fprintf(stderr, "fuzz_pool: cairn_alloc(%zu) returned %p, inside the root %p\n",
                        n, (void *)o, (void *)root);
                abort();
            }
            o[0] = (uint64_t)i;
            cairn_free(o);
        }
    }
}

/* FUZZ_DUMP_TEMPLATES=DIR: write each pool's used extent to DIR/templ-N.pool
 * (tests/fuzz/make_corpus.py reads them to aim its seeds at real records) */
static void dump_templates(const char *dir)
{
    for (int i = 0; i < NTEMPL; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/templ-%d.pool", dir, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, templ[i].bytes, templ[i].used) != (ssize_t)templ[i].used) abort();
        close(fd);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!templ[0].bytes) {
        make_templates();
        const char *dump = getenv("FUZZ_DUMP_TEMPLATES");
        if (dump) dump_templates(dump);
    }
    if (size < 1) return 0;
    uint8_t flags = data[0];
    const struct templ *t = &templ[(flags >> 3) & 3];
    static char *buf;
    static size_t bufcap;
    if (bufcap < t->size) {
        free(buf);
        buf = malloc(t->size);
        if (!buf) abort();
        bufcap = t->size;
    }
    memcpy(buf, t->bytes, t->used);
    *(uint64_t *)(buf + CAIRN_CLEAN_OFF) = (flags & 1) ? 0 : 1;
    for (size_t i = 1; i + 4 <= size;) {
        size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % t->used;
        size_t len = data[i + 3];
        i += 4;
        if (len > size - i) len = size - i;
        if (len > t->used - off) len = t->used - off;
        memcpy(buf + off, data + i, len);
        i += len;
    }
#ifndef FUZZ_NO_FIXUP
    if (flags & 4) fix_checksums(buf, t->used, t);
#endif
    /* the file is rewritten in place, not made anew: allocating its pages
     * again on every input took most of the time */
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) abort();
    if (pwrite(fd, buf, t->used, 0) != (ssize_t)t->used) abort();
    size_t file_size = (flags & 2) ? t->used + 4096 : t->size;
    if (ftruncate(fd, (off_t)t->used) || ftruncate(fd, (off_t)file_size)) abort();   /* zeros past used */
    close(fd);
    if (flags & 32) setenv("CAIRN_GC_SYNC", "1", 1);
    else unsetenv("CAIRN_GC_SYNC");
    struct cairn_check_report rep;
    cairn__check_file(path, true, quiet, NULL, &rep);
    cairn_pool *p = cairn_pool_open(path, "fuzz");
    if (getenv("FUZZ_VERBOSE"))   /* what became of the input: for writing seeds */
        fprintf(stderr, "fuzz_pool: template %d, check %d errors, open: %s\n", (flags >> 3) & 3,
                rep.errors, p ? "ok" : cairn_errormsg());
    if (p) {
        use(p);
        cairn_pool_close(p);
    }
    return 0;
}
