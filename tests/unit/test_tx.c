/* test_tx.c -- transactions: commit, abort, flat nesting, the block form,
 * allocation and free in a transaction, dedup, clobber, 100 MiB in one
 * transaction, and the fences each operation costs. */
#include "harness.h"
#include "internal.h"

struct root { uint64_t a, b; uint64_t obj; uint64_t big; char buf[256]; };
static cairn_pool *P;
static struct root *R;

static void commit_and_abort(void)
{
    CAIRN_TX(P) { cairn_tx_add(&R->a, 8); R->a = 1; }
    CHECK(R->a == 1);
    CHECK(cairn_tx_begin(P) == 0);
    cairn_tx_add(&R->a, 8);
    R->a = 2;
    cairn_tx_add(R->buf, sizeof R->buf);
    memset(R->buf, 'x', sizeof R->buf);
    cairn_tx_abort();
    CHECK(R->a == 1 && R->buf[0] == 0 && R->buf[255] == 0);
    CHECK(cairn_tx_active() == 0);
    CHECK(cairn_tx_commit() == -1);       /* nothing open any more */
}

static void flat_nesting(void)
{
    CHECK(cairn_tx_begin(P) == 0);
    cairn_tx_add(&R->a, 8);
    R->a = 10;
    CHECK(cairn_tx_begin(P) == 0);
    CHECK(cairn_tx_active() == 2);
    cairn_tx_add(&R->b, 8);
    R->b = 20;
    CHECK(cairn_tx_commit() == 0);        /* inner: nothing durable yet */
    cairn_tx_abort();                     /* outer abort undoes both */
    CHECK(R->a == 1 && R->b == 0);
    /* abort in an inner level: the outer commit reports it */
    CHECK(cairn_tx_begin(P) == 0);
    CHECK(cairn_tx_begin(P) == 0);
    cairn_tx_add(&R->b, 8);
    R->b = 5;
    cairn_tx_abort();
    CHECK(R->b == 0);
    CHECK(cairn_tx_commit() == -1 && errno == ECANCELED);
    CHECK(cairn_tx_active() == 0);
    /* block form nested, with break (commits) */
    CAIRN_TX(P) {
        CAIRN_TX(P) { cairn_tx_add(&R->b, 8); R->b = 7; break; }
        CHECK(cairn_tx_active() == 1);
    }
    CHECK(R->b == 7 && cairn_tx_active() == 0);
    CAIRN_TX(P) { cairn_tx_add(&R->b, 8); R->b = 8; cairn_tx_abort(); }
    CHECK(R->b == 7 && cairn_tx_active() == 0);
}

static void alloc_free_in_tx(void)
{
    void *o = NULL;
    CHECK(cairn_tx_begin(P) == 0);
    o = cairn_alloc(P, 100);
    REQUIRE(o);
    cairn_ptr_store(&R->obj, o);
    cairn_tx_abort();
    CHECK(cairn_ptr_load(&R->obj) == NULL);
    CHECK(cairn_usable_size(o) == 0);      /* given back by the abort */
    CAIRN_TX(P) { o = cairn_alloc(P, 100); cairn_ptr_store(&R->obj, o); memset(o, 1, 100); }
    CHECK(cairn_usable_size(o) >= 100);
    CHECK(cairn_tx_begin(P) == 0);
    cairn_ptr_store(&R->obj, NULL);
    cairn_free(o);
    CHECK(cairn_usable_size(o) >= 100);    /* free takes effect at commit */
    CHECK(cairn_tx_commit() == 0);
    CHECK(cairn_usable_size(o) == 0);
    /* free in an aborted tx: nothing is freed */
    CAIRN_TX(P) { o = cairn_alloc(P, 100); cairn_ptr_store(&R->obj, o); }
    CAIRN_TX(P) { cairn_ptr_store(&R->obj, NULL); cairn_free(o); cairn_tx_abort(); }
    CHECK(cairn_usable_size(o) >= 100 && cairn_ptr_load(&R->obj) == o);
}

/* A free in a transaction of an object that transaction allocated takes
 * effect at once: the next allocation reuses the block, an abort after that
 * leaves nothing, and a store into the block afterwards is logged again.
 * An object an undo record of the transaction covers waits for commit. */
static void free_of_own_allocation_is_immediate(void)
{
    size_t sizes[] = { 100, 4096 };
    for (size_t k = 0; k < 2; k++) {
        size_t n = sizes[k];
        struct cairn_stats s;
        void *before = cairn_ptr_load(&R->obj);
        cairn_stats_reset();
        CHECK(cairn_tx_begin(P) == 0);
        char *a = cairn_alloc(P, n);
        REQUIRE(a);
        memset(a, 7, n);
        cairn_free(a);
        CHECK(cairn_usable_size(a) == 0);           /* freed now, not at commit */
        cairn_stats_get(&s);
        CHECK(s.tx_frees_now == 1);
        uint64_t entries = s.log_entries;
        cairn_tx_add(a, 8);                         /* no longer covered as fresh */
        cairn_stats_get(&s);
        CHECK(s.log_entries == entries + 1);
        char *b = cairn_alloc(P, n);
        CHECK(b == a);                              /* the block is reused */
        cairn_ptr_store(&R->obj, b);
        cairn_tx_abort();
        CHECK(cairn_usable_size(b) == 0 && cairn_ptr_load(&R->obj) == before);
        /* the same again, committed: only the second object stays */
        CAIRN_TX(P) {
            a = cairn_alloc(P, n);
            cairn_free(a);
            b = cairn_alloc(P, n);
            cairn_ptr_store(&R->obj, b);
        }
        CHECK(b == a && cairn_usable_size(b) >= n);
        CAIRN_TX(P) { cairn_ptr_store(&R->obj, before); cairn_free(b); }
        CHECK(cairn_usable_size(b) == 0);
    }
    /* an undo record covers part of the object: its free waits for commit */
    CHECK(cairn_tx_begin(P) == 0);
    char *c = cairn_alloc(P, 100);
    REQUIRE(c);
    cairn_tx_add(c - 8, 16);
    cairn_free(c);
    CHECK(cairn_usable_size(c) >= 100);
    CHECK(cairn_tx_commit() == 0);
    CHECK(cairn_usable_size(c) == 0);
}

static void dedup_and_costs(void)
{
    struct cairn_stats s;
    cairn_stats_reset();
    CAIRN_TX(P) { }
    cairn_stats_get(&s);
    CHECK(s.ofences + s.dfences == 0);                  /* empty tx: no fence */
    cairn_stats_reset();
    CAIRN_TX(P) { cairn_tx_add(&R->a, 8); R->a++; }
    cairn_stats_get(&s);
    CHECK(s.ofences == 2 && s.dfences == 1);            /* add, data, mark */
    CHECK(s.log_entries == 1);
    cairn_stats_reset();
    CAIRN_TX(P) {
        for (int i = 0; i < 100; i++) { cairn_tx_add(&R->a, 8); R->a++; }
        cairn_tx_add(R->buf + 10, 20);
        cairn_tx_add(R->buf + 12, 4);                   /* inside the last range */
    }
    cairn_stats_get(&s);
    CHECK(s.log_entries == 2 && s.log_skipped == 100);
    cairn_free(cairn_alloc(P, 64));                     /* warm: the run exists */
    cairn_stats_reset();
    CAIRN_TX(P) { void *o = cairn_alloc(P, 64); cairn_tx_add(o, 64); memset(o, 3, 64); cairn_free(o); }
    cairn_stats_get(&s);
    CHECK(s.log_entries == 0);                          /* fresh objects need no snapshot */
    CHECK(s.ofences + s.dfences == 1);
}

/* Ranges of 256 bytes or more (a byte copy: a memcpy'd value) are kept
 * whole, up to 16 a transaction, the rest line by line: a later range inside
 * any of them appends no record, and an abort restores every one. */
static void copied_ranges_kept_whole(void)
{
    enum { N = 24, LEN = 512 };
    unsigned char *o = cairn_alloc(P, N * LEN);
    REQUIRE(o);
    CAIRN_TX(P) { cairn_tx_add(o, N * LEN); memset(o, 'a', N * LEN); }
    struct cairn_stats s;
    cairn_stats_reset();
    cairn_tx_begin(P);
    for (int k = 0; k < N; k++) {
        cairn_tx_add(o + k * LEN, LEN);             /* 16 kept as ranges, 8 as lines */
        memset(o + k * LEN, 'b', LEN);
    }
    for (int k = 0; k < N; k++) {
        cairn_tx_add(o + k * LEN + 100, 300);       /* inside a range */
        cairn_tx_add(o + k * LEN + 8, 8);
        cairn_tx_add(o + k * LEN, LEN);             /* the range again */
    }
    cairn_stats_get(&s);
    CHECK(s.log_entries == N && s.log_skipped == 3 * N);
    cairn_tx_abort();
    int bad = 0;
    for (int k = 0; k < N * LEN; k++) bad += o[k] != 'a';
    CHECK(bad == 0);
    cairn_free(o);
}

/* An abort reads the records back from the log (the hot path keeps no list)
 * and applies them newest first: a range logged again after part of it was
 * changed (a wider tx_add) still gets its oldest bytes back, and records on
 * several lines and of several sizes all come back. */
static void abort_restores_overlapping_ranges(void)
{
    CAIRN_TX(P) { cairn_tx_add(R->buf, 128); memset(R->buf, 'o', 128); }
    CHECK(cairn_tx_begin(P) == 0);
    cairn_tx_add(R->buf, 8);
    memset(R->buf, 'x', 8);
    cairn_tx_add(R->buf, 16);                 /* covers the 8 changed bytes too */
    memset(R->buf, 'y', 16);
    cairn_tx_add(R->buf + 40, 3);
    memset(R->buf + 40, 'z', 3);
    cairn_tx_add(R->buf + 20, 100);           /* multi-line record */
    memset(R->buf + 20, 'w', 100);
    cairn_tx_abort();
    size_t bad = 0;
    for (int k = 0; k < 128; k++) bad += R->buf[k] != 'o';
    CHECK(bad == 0);
    /* the lane is usable afterwards: a small commit lands */
    CAIRN_TX(P) { cairn_tx_add(R->buf, 1); R->buf[0] = 'n'; }
    CHECK(R->buf[0] == 'n' && R->buf[1] == 'o');
}

/* A transaction's first scalar record is built in registers when nothing
 * watches the persistence layer (no seam, no trace) and in the log's tail
 * image otherwise. Both must put the same record on media: found by the
 * same reader recovery uses, with the same fields and zero padding (the
 * generation and the checksum differ: the two transactions are two
 * generations of the lane). */
static void seam_noop(int what, const void *p, size_t len) { (void)what; (void)p; (void)len; }

static void first_record_paths_agree(void)
{
    unsigned char line[2][64];
    for (int k = 0; k < 2; k++) {
        CAIRN_TX(P) { cairn_tx_add(&R->b, 8); R->b = 0x1122334455667788ULL; }
        cairn__persist_seam = k ? seam_noop : NULL;
        CHECK(cairn_tx_begin(P) == 0);
        cairn_tx_add(&R->b, 8);
        R->b = 5;
        int found = 0;
        for (unsigned lane = 0; lane < P->hdr->nlanes; lane++) {
            const struct log_rec **v = NULL;
            size_t cap = 0;
            char why[128] = "";
            long n = cairn__lane_records(P, lane, &v, &cap, why, sizeof why);
            if (n == 1) {
                found++;
                CHECK(v[0]->len == 8 && (v[0]->kind_off >> 8) == cairn__off(P, &R->b));
                CHECK(!memcmp(v[0] + 1, &(uint64_t){0x1122334455667788ULL}, 8));
                memcpy(line[k], P->base + P->hdr->lanes_off + (uint64_t)lane * P->hdr->lane_size, 64);
            }
            free(v);
        }
        CHECK(found == 1);
        cairn_tx_abort();
        cairn__persist_seam = NULL;
        CHECK(R->b == 0x1122334455667788ULL);
    }
    CHECK(!memcmp(line[0] + 8, line[1] + 8, 16));     /* kind and offset, length */
    CHECK(!memcmp(line[0] + 32, line[1] + 32, 32));    /* data, zero padding */
    CAIRN_TX(P) { cairn_tx_add(&R->b, 8); R->b = 0; }    /* as the next tests expect */
}

static void clobber(void)
{
    CAIRN_TX(P) { cairn_tx_clobber(R->buf, 128); memset(R->buf, 'c', 128); }
    CHECK(R->buf[0] == 'c');
    struct cairn_stats s;
    cairn_stats_reset();
    CAIRN_TX(P) { cairn_tx_clobber(R->buf, 128); memset(R->buf, 'd', 128); }
    cairn_stats_get(&s);
    CHECK(s.log_entries == 0 && s.dfences == 1 && s.flushes >= 2);
}

static void hundred_mib(void)
{
    size_t n = (size_t)100 << 20;
    char *big = NULL;
    CAIRN_TX(P) { big = cairn_alloc(P, n); if (big) { cairn_ptr_store(&R->big, big); memset(big, 'a', n); } }
    REQUIRE(big);
    /* modify all 100 MiB in one transaction, then abort: all restored */
    CHECK(cairn_tx_begin(P) == 0);
    for (size_t off = 0; off < n; off += 1 << 20) { cairn_tx_add(big + off, 1 << 20); memset(big + off, 'b', 1 << 20); }
    cairn_tx_abort();
    size_t bad = 0;
    for (size_t off = 0; off < n; off += 4093) bad += big[off] != 'a';
    CHECK(bad == 0);
    /* and the same with a commit, in 8-byte pieces for a tenth of it */
    CAIRN_TX(P) {
        for (size_t off = 0; off < n / 10; off += 8) { cairn_tx_add(big + off, 8); big[off] = 'c'; }
        cairn_tx_add(big, n);
        memset(big + n / 10, 'c', n - n / 10);
    }
    bad = 0;
    for (size_t off = 0; off < n; off += 8) bad += big[off] != 'c';
    CHECK(bad == 0);
    CAIRN_TX(P) { cairn_ptr_store(&R->big, NULL); cairn_free(big); }
}

/* Many transactions that each need extension blocks, in a pool that holds
 * one set of them: a thread must keep reusing its lane's blocks rather than
 * pin blocks in every lane (which ran this pool out of space). */
static void many_big_transactions_fit(void)
{
    const char *path = t_path("bigtx");
    cairn_pool *p = cairn_pool_create(path, "bigtx", 24 << 20);
    REQUIRE(p);
    size_t n = (size_t)3 << 20;
    char *obj = cairn_alloc(p, n);
    REQUIRE(obj);
    int ok = 0;
    for (int t = 0; t < 80; t++) {
        if (cairn_tx_begin(p)) break;
        for (size_t off = 0; off < n; off += 4096) { cairn_tx_add(obj + off, 4096); obj[off] = (char)t; }
        if (cairn_tx_commit() == 0) ok++;
    }
    CHECK(ok == 80);
    CHECK(obj[0] == 79);
    cairn_pool_close(p);
    unlink(path);
}

static void misuse_is_reported_not_fatal(void)
{
    cairn_tx_add(&R->a, 8);                   /* outside a tx: warned, ignored */
    CHECK(cairn_tx_begin(NULL) == -1);
    const char *qpath = t_path("txother");
    cairn_pool *q = cairn_pool_create(qpath, "o", 8 << 20);
    REQUIRE(q);
    CHECK(cairn_tx_begin(P) == 0);
    CHECK(cairn_tx_begin(q) == -1 && strstr(cairn_errormsg(), "one pool"));
    CHECK(cairn_tx_commit() == 0);
    cairn_pool_close(q);
    unlink(qpath);
}

int main(void)
{
    const char *path = t_path("tx");
    P = cairn_pool_create(path, "tx", 512 << 20);
    REQUIRE(P);
    R = CAIRN_ROOT(P, struct root);
    REQUIRE(R);
    RUN(commit_and_abort);
    RUN(abort_restores_overlapping_ranges);
    RUN(first_record_paths_agree);
    RUN(flat_nesting);
    RUN(alloc_free_in_tx);
    RUN(free_of_own_allocation_is_immediate);
    RUN(dedup_and_costs);
    RUN(copied_ranges_kept_whole);
    RUN(clobber);
    RUN(hundred_mib);
    RUN(many_big_transactions_fit);
    RUN(misuse_is_reported_not_fatal);
    cairn_pool_close(P);
    unlink(path);
    DONE();
}
