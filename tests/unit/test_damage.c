/* test_damage.c -- damage that no crash can cause is refused, never
 * recovered from silently (invariant 6), while the torn writes a crash can
 * leave are still recovered (invariants 1-3):
 *   - a state copy that fails its checksum in a cleanly closed pool: open
 *     refuses (reverting to the other copy lost the root), check errs; in a
 *     dirty pool the same copy is a torn write: open uses the other copy
 *     and rewrites the torn one, so the next clean close leaves both whole;
 *   - one byte changed in the undo log of an unfinished transaction, before
 *     valid records of later appends (a record, a jump, the generation):
 *     open refuses (rolling back only the records before it left a state
 *     no program wrote), check errs; a torn tail, and a torn record inside
 *     one multi-record append, are still rolled back as before.
 * Every refused open leaves the file unchanged. */
#include "harness.h"
#include "internal.h"
#include <stddef.h>
#include <sys/mman.h>

#define REC_PIECE 4096u   /* tx.c splits a range into records of this many bytes */

static int state_ok(const char *m, int k)
{
    const struct pool_state *s = (const void *)(m + (k ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF));
    return s->checksum == cairn__hash(s, offsetof(struct pool_state, checksum), 0x5747);
}

static void quiet(void *c, const char *s, const char *m) { (void)c; (void)s; (void)m; }

static char *map_file(const char *path, int *fd, size_t *len)
{
    struct stat st;
    *fd = open(path, O_RDWR);
    REQUIRE(*fd >= 0 && fstat(*fd, &st) == 0);
    *len = (size_t)st.st_size;
    char *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    REQUIRE(m != MAP_FAILED);
    return m;
}

static void unmap_file(char *m, size_t len, int fd)
{
    munmap(m, len);
    close(fd);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp --sparse=always %s %s", from, to);
    REQUIRE(system(cmd) == 0);
}

static uint64_t file_hash(const char *path)
{
    int fd;
    size_t len;
    char *m = map_file(path, &fd, &len);
    uint64_t h = cairn__hash(m, len, 1) ^ len;
    unmap_file(m, len, fd);
    return h;
}

static void expect_refused(const char *path, const char *what, const char *needle)
{
    uint64_t before = file_hash(path);
    cairn_pool *p = cairn_pool_open(path, "dmg");
    if (p) {
        fprintf(stderr, "  %s: opened, but should have been refused\n", what);
        t_failures++;
        cairn_pool_close(p);
        return;
    }
    if (!strstr(cairn_errormsg(), needle)) {
        fprintf(stderr, "  %s: message \"%s\" lacks \"%s\"\n", what, cairn_errormsg(), needle);
        t_failures++;
    }
    CHECK(!strchr(cairn_errormsg(), '\n'));
    CHECK(file_hash(path) == before);
    struct cairn_check_report rep;
    int rc = cairn__check_file(path, true, quiet, NULL, &rep);
    if (rc != 1) {
        fprintf(stderr, "  %s: check returned %d, want 1 (errors)\n", what, rc);
        t_failures++;
    }
    CHECK(file_hash(path) == before);
    fprintf(stderr, "  refused %-34s %.150s...\n", what, cairn_errormsg());
}

/* ---- the state copies ---- */
struct sroot { uint64_t n; uint64_t *objs; };
#define NOBJ 2000

static const char *SGOOD;

static void make_state_pool(void)
{
    cairn_pool *p = cairn_pool_create(SGOOD, "dmg", 16 << 20);
    REQUIRE(p);
    struct sroot *r = CAIRN_ROOT(p, struct sroot);
    REQUIRE(r);
    CAIRN_TX(p) {
        uint64_t **v = cairn_alloc(p, NOBJ * sizeof *v);
        for (int i = 0; i < NOBJ; i++) {
            uint64_t *o = cairn_alloc(p, 32);
            *o = (uint64_t)i;
            cairn_ptr_store(&v[i], o);
        }
        cairn_tx_add(r, sizeof *r);
        r->n = NOBJ;
        cairn_ptr_store(&r->objs, v);
    }
    REQUIRE(cairn_pool_close(p) == 0);
}

/* which copy is newer (0 A, 1 B), by the valid copies' sequence numbers */
static int newest_copy(const char *m)
{
    const struct pool_state *a = (const void *)(m + CAIRN_STATE_A_OFF);
    const struct pool_state *b = (const void *)(m + CAIRN_STATE_B_OFF);
    return a->seq > b->seq ? 0 : 1;
}

static uint64_t copy_off(int k) { return k ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF; }

static void state_copy_damage_is_refused(void)
{
    const char *path = t_path("state");
    int fd;
    size_t len;
    for (int which = 0; which < 2; which++) {        /* the newest copy, then the older */
        static const unsigned fields[] = { 24, 0, 8 };   /* root offset, sequence, size */
        for (unsigned f = 0; f < 3; f++) {
            copy_file(SGOOD, path);
            char *m = map_file(path, &fd, &len);
            int k = newest_copy(m) ^ which;
            m[copy_off(k) + fields[f]] ^= 1;          /* the tester's one bit (0x418: A's root) */
            unmap_file(m, len, fd);
            char what[64];
            snprintf(what, sizeof what, "%s copy %c, field at +%u", which ? "older" : "newest",
                     "AB"[k], fields[f]);
            expect_refused(path, what, "closed cleanly");
        }
    }
    unlink(path);
}

static void torn_state_copy_in_dirty_pool_recovers(void)
{
    /* a crash while the newest copy was written (the pool was dirty): the
     * other copy is the state; the open rewrites the torn one, so after a
     * clean close both copies are whole and the pool opens again */
    const char *path = t_path("statetorn");
    copy_file(SGOOD, path);
    int fd;
    size_t len;
    char *m = map_file(path, &fd, &len);
    int k = newest_copy(m);
    struct pool_state older = *(struct pool_state *)(m + copy_off(!k));
    ((struct pool_state *)(m + copy_off(k)))->checksum ^= 0x5a5a5a5a00000000ULL;  /* not landed */
    *(uint64_t *)(m + CAIRN_CLEAN_OFF) = 0;
    unmap_file(m, len, fd);
    struct cairn_check_report rep;
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0);
    cairn_pool *p = cairn_pool_open(path, "dmg");
    REQUIRE(p);
    CHECK(p->state.root_off == older.root_off);
    CHECK(state_ok(p->base, 0) && state_ok(p->base, 1));
    REQUIRE(cairn_pool_close(p) == 0);
    p = cairn_pool_open(path, "dmg");
    CHECK(p != NULL);
    if (p) cairn_pool_close(p);
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0);
    unlink(path);
}

/* ---- the undo log ---- */
#define WORDS 21000                  /* every 7th logged: 3000 records of 8 bytes */
#define BIG   (6 * REC_PIECE)  /* one append of 6 full records */
struct lroot { uint64_t *arr; unsigned char *blob; };

static const char *LGOOD;

static void make_log_pool(void)
{
    cairn_pool *p = cairn_pool_create(LGOOD, "dmg", 16 << 20);
    REQUIRE(p);
    struct lroot *r = CAIRN_ROOT(p, struct lroot);
    REQUIRE(r);
    CAIRN_TX(p) {
        uint64_t *a = cairn_alloc(p, WORDS * sizeof *a);
        for (uint64_t i = 0; i < WORDS; i++) a[i] = i;
        cairn_ptr_store(&r->arr, a);
        unsigned char *b = cairn_alloc(p, BIG);
        memset(b, 0x11, BIG);
        cairn_ptr_store(&r->blob, b);
    }
    REQUIRE(cairn_pool_close(p) == 0);
}

/* In a child: a few committed transactions (the lane's generation grows),
 * then one that logs and changes every 7th word, sets the root's pointer to
 * NULL, logs (with big) a range it never changes, and dies. */
static void crash_mid_tx(void *arg)
{
    int big = *(int *)arg;
    cairn_pool *p = cairn_pool_open(LGOOD, "dmg");
    if (!p) _exit(3);
    struct lroot *r = CAIRN_ROOT(p, struct lroot);
    uint64_t *a = cairn_ptr_load(&r->arr);
    for (int k = 0; k < 3; k++)
        CAIRN_TX(p) { cairn_tx_add(&a[1], 8); a[1] = 1; }
    cairn_tx_begin(p);
    for (uint64_t i = 0; i * 7 < WORDS - 7; i++) {
        cairn_tx_add(&a[i * 7], 8);
        a[i * 7] = ~(uint64_t)0;
    }
    cairn_ptr_store(&r->arr, NULL);
    if (big) cairn_tx_add(cairn_ptr_load(&r->blob), BIG);  /* the crash comes before the stores */
    else cairn_tx_add(&a[WORDS - 1], 8);
    kill(getpid(), SIGKILL);
}

/* the records of the lane with an unfinished transaction, in log order */
struct lrec { uint64_t at; unsigned kind; uint64_t len; };
static struct lrec recs[4000];
static int nrecs;
static uint64_t lane_at;

static void walk_log(const char *m)
{
    const struct pool_hdr *h = (const void *)m;
    nrecs = 0;
    for (unsigned l = 0; l < h->nlanes; l++) {
        uint64_t area = h->lanes_off + (uint64_t)l * h->lane_size;
        uint64_t gen = *(const uint64_t *)(m + area);
        uint64_t at = area + sizeof(struct lane_hdr), cap = h->lane_size - sizeof(struct lane_hdr);
        uint64_t used = 0;
        for (;;) {
            if (cap - used < sizeof(struct log_rec)) break;
            const struct log_rec *r = (const void *)(m + at + used);
            unsigned kind = r->kind_off & 0xff;
            const void *data = kind == REC_UNDO ? (const void *)(r + 1) : NULL;
            uint64_t dlen = kind == REC_UNDO ? r->len : 0;
            if ((kind != REC_UNDO && kind != REC_JUMP) || (kind == REC_UNDO && r->len > cap - used) ||
                r->checksum != cairn__rec_checksum(gen, r->kind_off, r->len, data, dlen))
                break;
            REQUIRE(nrecs < 4000);
            recs[nrecs++] = (struct lrec){ at + used, kind, r->len };
            if (kind == REC_JUMP) {
                at = r->kind_off >> 8;
                cap = r->len;
                used = 0;
            } else {
                used += sizeof *r + ((r->len + 7) & ~(uint64_t)7);
            }
        }
        if (nrecs) { lane_at = area; return; }
    }
}

static int find_rec(unsigned kind, int nth)      /* the nth record of a kind */
{
    for (int i = 0; i < nrecs; i++)
        if (recs[i].kind == kind && nth-- == 0) return i;
    return -1;
}

static void crashed_image(const char *path, int big)
{
    copy_file(LGOOD, path);
    const char *saved = LGOOD;
    LGOOD = path;
    char err[2048];
    int st = t_child(crash_mid_tx, &big, err, sizeof err);
    LGOOD = saved;
    REQUIRE(st == 128 + SIGKILL);
}

/* a crash image (crashed_image) and its unfinished lane's records (walk_log) */
static void crashed_and_walked(const char *img, int big)
{
    crashed_image(img, big);
    int fd;
    size_t len;
    char *m = map_file(img, &fd, &len);
    walk_log(m);
    unmap_file(m, len, fd);
}

/* the pool after a full roll-back: every word back, the root's pointer too */
static void check_rolled_back(const char *path, const char *what)
{
    cairn_pool *p = cairn_pool_open(path, "dmg");
    if (!p) {
        fprintf(stderr, "  %s: refused: %s\n", what, cairn_errormsg());
        t_failures++;
        return;
    }
    struct lroot *r = CAIRN_ROOT(p, struct lroot);
    uint64_t *a = cairn_ptr_load(&r->arr);
    CHECK(a != NULL);
    if (a) {
        uint64_t bad = 0;
        for (uint64_t i = 0; i < WORDS; i++) bad += a[i] != (i == 1 ? 1 : i);
        if (bad) fprintf(stderr, "  %s: %llu words not rolled back\n", what, (unsigned long long)bad);
        CHECK(bad == 0);
    }
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    cairn_pool_close(p);
    struct cairn_check_report rep;
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0);
    fprintf(stderr, "  recovered %s\n", what);
}

struct damage { const char *what; int kind; int nth; unsigned at; uint8_t bit; };

static void undo_log_damage_is_refused(void)
{
    const char *img = t_path("logimg"), *path = t_path("log");
    crashed_and_walked(img, 0);
    int fd;
    size_t len;
    char *m;
    int jump = find_rec(REC_JUMP, 0);
    REQUIRE(nrecs > 3000 && jump > 100);
    uint64_t gen;
    {
        m = map_file(img, &fd, &len);
        gen = *(uint64_t *)(m + lane_at);
        unmap_file(m, len, fd);
    }
    REQUIRE(gen >= 2);
    unsigned genbit = 0;
    while (!(gen & ((uint64_t)1 << genbit))) genbit++;

    /* the image itself is a crash state: it recovers in full */
    copy_file(img, path);
    struct cairn_check_report rep;
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0 && rep.pending_records > 3000);
    check_rolled_back(path, "the crash image");

    const struct damage cases[] = {
        { "record 100: data", REC_UNDO, 100, 24, 0 },
        { "record 100: offset", REC_UNDO, 100, 2, 3 },
        { "record 100: kind", REC_UNDO, 100, 0, 1 },
        { "record 100: length", REC_UNDO, 100, 8, 4 },
        { "record 100: checksum", REC_UNDO, 100, 16, 7 },
        { "record 0: data", REC_UNDO, 0, 24, 5 },
        { "last record before the jump", REC_UNDO, jump - 1, 24, 0 },
        { "jump: offset", REC_JUMP, 0, 3, 2 },
        { "jump: kind", REC_JUMP, 0, 0, 0 },
        { "jump: length", REC_JUMP, 0, 10, 1 },
        { "jump: checksum", REC_JUMP, 0, 20, 6 },
        { "extension block record", REC_UNDO, 1500, 24, 3 },
        { "the root's record", REC_UNDO, -1, 24, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int i = cases[c].nth < 0 ? nrecs - 2 : find_rec(cases[c].kind, cases[c].nth);
        REQUIRE(i >= 0 && i < nrecs - 1);
        copy_file(img, path);
        m = map_file(path, &fd, &len);
        m[recs[i].at + cases[c].at] ^= (char)(1 << cases[c].bit);
        unmap_file(m, len, fd);
        expect_refused(path, cases[c].what, "damaged");
    }
    /* the generation lost a bit: the records validate under a higher one */
    copy_file(img, path);
    m = map_file(path, &fd, &len);
    *(uint64_t *)(m + lane_at) ^= (uint64_t)1 << genbit;
    unmap_file(m, len, fd);
    expect_refused(path, "lane generation", "damaged");

    /* a torn tail: the last record (its word never changed) is not applied */
    copy_file(img, path);
    m = map_file(path, &fd, &len);
    ((struct log_rec *)(m + recs[nrecs - 1].at))->checksum ^= 0x1234567800000000ULL;
    unmap_file(m, len, fd);
    check_rolled_back(path, "a torn last record");
    unlink(path);
    unlink(img);
}

static void torn_record_inside_one_append_recovers(void)
{
    /* the last add_range is one append of 6 full records, fenced only after
     * the last: a crash may keep later ones and lose earlier ones. Each
     * record of it torn (the ones after it intact) is a crash state. */
    const char *img = t_path("bigimg"), *path = t_path("big");
    crashed_and_walked(img, 1);
    int fd;
    size_t len;
    char *m;
    int nbig = 0;
    for (int i = 0; i < nrecs; i++) nbig += recs[i].kind == REC_UNDO && recs[i].len == REC_PIECE;
    REQUIRE(nbig == 6);
    for (int t = nrecs - 6; t < nrecs; t++) {
        if (recs[t].kind != REC_UNDO) continue;
        copy_file(img, path);
        m = map_file(path, &fd, &len);
        ((struct log_rec *)(m + recs[t].at))->checksum ^= 0x1234567800000000ULL;   /* not landed */
        unmap_file(m, len, fd);
        char what[64];
        snprintf(what, sizeof what, "piece %d of 6 of the last append torn", t - (nrecs - 6) + 1);
        struct cairn_check_report rep;
        CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0);
        check_rolled_back(path, what);
        /* recovered twice is recovered once (a second open finds nothing) */
        cairn_pool *p = cairn_pool_open(path, "dmg");
        CHECK(p != NULL);
        if (p) {
            struct cairn_recovery rec;
            cairn_pool_recovery(p, &rec);
            CHECK(rec.recovered == 0 && rec.records_rolled_back == 0 &&
                  rec.transactions_rolled_back == 0);
            cairn_pool_close(p);
        }
    }
    unlink(path);
    unlink(img);
}

/* The search past a torn record finds a valid one wherever it lies: the
 * lane's records after the first zeroed, and one intact record of the
 * transaction copied back at each 8-byte distance from the first (every
 * position within a cache line, and the last one the lane has room for).
 * A valid record after an invalid one at a distance that is no multiple of
 * a full record proves damage: every such image is refused. */
static void record_found_at_every_distance(void)
{
    const char *img = t_path("farimg"), *path = t_path("far");
    crashed_and_walked(img, 0);
    int fd;
    size_t len;
    char *m = map_file(img, &fd, &len);
    uint64_t lane_size = ((const struct pool_hdr *)m)->lane_size;
    unmap_file(m, len, fd);
    REQUIRE(nrecs > 3 && recs[1].kind == REC_UNDO && recs[1].len == 8);
    const uint64_t p0 = recs[0].at, rec = sizeof(struct log_rec) + 8;
    const uint64_t lane_end = lane_at + lane_size;
    uint64_t ds[48];
    int nd = 0;
    for (uint64_t d = 8; d <= 8 * 40; d += 8) ds[nd++] = d;
    ds[nd++] = lane_end - rec - p0;                 /* the last position with room */
    ds[nd++] = lane_end - rec - p0 - 8;
    for (int i = 0; i < nd; i++) {
        copy_file(img, path);
        m = map_file(path, &fd, &len);
        char keep[64];
        memcpy(keep, m + recs[1].at, rec);
        memset(m + p0, 0, lane_end - p0);
        memcpy(m + p0 + ds[i], keep, rec);
        unmap_file(m, len, fd);
        char what[64];
        snprintf(what, sizeof what, "intact record %llu bytes past a zeroed one",
                 (unsigned long long)ds[i]);
        expect_refused(path, what, "damaged");
    }
    unlink(path);
    unlink(img);
}

int main(void)
{
    SGOOD = strdup(t_path("sgood"));
    LGOOD = strdup(t_path("lgood"));
    make_state_pool();
    make_log_pool();
    RUN(state_copy_damage_is_refused);
    RUN(torn_state_copy_in_dirty_pool_recovers);
    RUN(undo_log_damage_is_refused);
    RUN(torn_record_inside_one_append_recovers);
    RUN(record_found_at_every_distance);
    unlink(SGOOD);
    unlink(LGOOD);
    DONE();
}
