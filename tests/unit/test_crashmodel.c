/* test_crashmodel.c -- the persistency model of `cairn crashcheck`
 * (runtime/tools/crashmodel.h), one rule at a time, on tiny traces written
 * here record by record and replayed by crashtrace.c as the tool does.
 * At each crash point the test collects the distinct contents each line may
 * hold after a power failure, and checks them against the rule. */
#include "harness.h"
#include "internal.h"
#include "crashtrace.h"

#define POOL_ID 5u
#define SIZE    4096u
static uint64_t rel(uint64_t off) { return CAIRN_REL_BIT | ((uint64_t)POOL_ID << CAIRN_ID_SHIFT) | off; }

/* ---- a trace written by hand ---- */
static unsigned char recs[512][32];
static int nrec;
static uint64_t seq;

static void rec(unsigned type, unsigned aux, unsigned size, uint32_t loc, uint64_t addr, uint64_t arg)
{
    unsigned char *r = recs[nrec++];
    memset(r, 0, 32);
    r[0] = (unsigned char)type;
    r[1] = (unsigned char)aux;
    uint16_t s = (uint16_t)size;
    uint64_t q = ++seq;
    memcpy(r + 2, &s, 2);
    memcpy(r + 4, &loc, 4);
    memcpy(r + 8, &q, 8);
    memcpy(r + 16, &addr, 8);
    memcpy(r + 24, &arg, 8);
}

static void data(const void *p, size_t len)
{
    const unsigned char *b = p;
    while (len) {
        unsigned k = len < 30 ? (unsigned)len : 30;
        unsigned char *r = recs[nrec++];
        memset(r, 0, 32);
        r[0] = TR_DATA;
        r[1] = (unsigned char)k;
        memcpy(r + 2, b, k);
        b += k;
        len -= k;
    }
}

static void begin(void)
{
    nrec = 0;
    seq = 0;
    rec(TR_POOL_OPEN, 0, 0, POOL_ID, 0, SIZE);
}
static void store(uint64_t off, uint64_t value, unsigned size) { rec(TR_STORE, 0, size, 1, rel(off), value); }
static void store16(uint64_t off, uint64_t lo, uint64_t hi)
{
    uint64_t v[2] = { lo, hi };
    rec(TR_STORE_RANGE, 0, 0, 1, rel(off), 16);
    data(v, 16);
}
static void line_rec(unsigned why, uint64_t line, const unsigned char *bytes)
{
    rec(TR_LINE, why, 0, 0, rel(line * 64), 0);
    data(bytes, 64);
}
static void flush(unsigned kind, uint64_t line, const unsigned char *now)
{
    rec(TR_FLUSH, kind, 0, 0, rel(line * 64), 1);
    line_rec(TR_LINE_FLUSHED, line, now);
}
static void fence(void) { rec(TR_FENCE, TR_DFENCE, 0, POOL_ID, 0, 0); }

static const char *trace_path(void)
{
    static char p[256];
    snprintf(p, sizeof p, "/dev/shm/cairn-test-%d.trace", (int)getpid());
    return p;
}

static void write_trace(uint32_t tid_of_last)
{
    FILE *f = fopen(trace_path(), "w");
    REQUIRE(f);
    unsigned char hdr[64] = "CAIRNTRC";
    fwrite(hdr, 64, 1, f);
    /* one chunk for thread 1, the last record alone in a chunk of tid_of_last */
    int n1 = tid_of_last != 1 ? nrec - 1 : nrec;
    unsigned char ch[32] = "CTCK";
    uint32_t tid = 1, n = (uint32_t)n1;
    memcpy(ch + 4, &tid, 4);
    memcpy(ch + 8, &n, 4);
    fwrite(ch, 32, 1, f);
    fwrite(recs, 32, (size_t)n1, f);
    if (n1 < nrec) {
        tid = tid_of_last;
        n = 1;
        memcpy(ch + 4, &tid, 4);
        memcpy(ch + 8, &n, 4);
        fwrite(ch, 32, 1, f);
        fwrite(recs[nrec - 1], 32, 1, f);
    }
    fclose(f);
}

/* ---- what the model says at each crash point ---- */
#define MAXP 16
#define MAXV 32
static struct point {
    size_t lines_in_play;
    unsigned nver[4];                  /* distinct contents of lines 0..3 */
    unsigned char ver[4][MAXV][64];
    unsigned char media[4][64];
} P[MAXP];
static long npoints;

static int at_point(void *ctx, struct cm_model *m, const struct ct_rec *at, enum ct_point kind,
                    uint64_t point)
{
    (void)ctx; (void)at; (void)kind;
    if (point >= MAXP) return 0;
    struct point *p = &P[point];
    memset(p, 0, sizeof *p);
    for (uint64_t line = 0; line < 4; line++) {
        memcpy(p->media[line], m->media + line * 64, 64);
        struct cm_line *l = cm_pending(m, line);
        if (!l) {
            memcpy(p->ver[line][0], m->media + line * 64, 64);
            p->nver[line] = 1;
            continue;
        }
        p->lines_in_play++;
        struct cm_variant v[2 * MAXV];
        size_t nv = cm_line_variants(l, v, 2 * MAXV);
        for (size_t i = 0; i < nv; i++) {
            unsigned char img[64];
            cm_line_apply(m, l, &v[i], img);
            bool dup = false;
            for (unsigned k = 0; k < p->nver[line] && !dup; k++) dup = !memcmp(p->ver[line][k], img, 64);
            if (!dup && p->nver[line] < MAXV) memcpy(p->ver[line][p->nver[line]++], img, 64);
        }
    }
    return 0;
}

static unsigned char media[SIZE];

static void replay(void)
{
    write_trace(1);
    struct ct_trace t;
    char why[256];
    REQUIRE(ct_load(trace_path(), &t, why, sizeof why) == 0);
    memset(media, 0, sizeof media);
    struct cm_model m;
    REQUIRE(cm_init(&m, media, SIZE) == 0);
    npoints = ct_replay(&t, &m, POOL_ID, false, at_point, NULL);
    cm_free(&m);
    ct_free(&t);
}

/* whether line may hold the 8-byte words w[0..7] (only the first n given, rest 0) at point p */
static bool may_hold(int p, int line, const uint64_t *w, int n)
{
    unsigned char want[64] = { 0 };
    memcpy(want, w, (size_t)n * 8);
    for (unsigned k = 0; k < P[p].nver[line]; k++)
        if (!memcmp(P[p].ver[line][k], want, 64)) return true;
    return false;
}
#define W(...) ((const uint64_t[]){ __VA_ARGS__ }), (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / 8)

/* a trace that stores 7 in line 0's first word and flushes the line with kind */
static void begin_store_flush(unsigned kind)
{
    unsigned char now[64] = { 0 };
    begin();
    store(0, 7, 8);
    memcpy(now, (uint64_t[]){ 7 }, 8);
    flush(kind, 0, now);
}

/* Rule: a line persists a prefix of its stores in program order. */
static void prefix_in_program_order(void)
{
    begin();
    store(0, 0xA, 8);
    store(8, 0xB, 8);
    fence();
    replay();
    REQUIRE(npoints == 1);
    CHECK(P[0].nver[0] == 3);
    CHECK(may_hold(0, 0, W(0, 0)));
    CHECK(may_hold(0, 0, W(0xA, 0)));
    CHECK(may_hold(0, 0, W(0xA, 0xB)));
    CHECK(!may_hold(0, 0, W(0, 0xB)));          /* the later store alone: never */
}

/* Rule: lines are independent: one store to each of two lines, 2 x 2 states. */
static void lines_independent(void)
{
    begin();
    store(64, 1, 8);
    store(0, 2, 8);
    fence();
    replay();
    CHECK(P[0].lines_in_play == 2);
    CHECK(P[0].nver[0] == 2 && P[0].nver[1] == 2);
}

/* Rule: clwb makes what the line held durable at the next fence, not before;
 * a store after the flush and before the fence is not made durable by it. */
static void clwb_durable_at_next_fence(void)
{
    begin_store_flush(TR_FLUSH_CLWB);
    store(8, 9, 8);                             /* after the flush, before the fence */
    fence();
    fence();
    replay();
    REQUIRE(npoints == 2);
    CHECK(may_hold(0, 0, W(0, 0)));             /* before the fence: not yet durable */
    CHECK(P[1].media[0][0] == 7);               /* after it: the flushed value is */
    CHECK(!may_hold(1, 0, W(0, 0)));
    CHECK(may_hold(1, 0, W(7, 0)) && may_hold(1, 0, W(7, 9)));   /* the later store: maybe */
}

/* Rule: clflush is ordered with stores: durable at once. */
static void clflush_ordered(void)
{
    begin_store_flush(TR_FLUSH_CLFLUSH);
    fence();
    replay();
    CHECK(P[0].lines_in_play == 0);
    CHECK(P[0].media[0][0] == 7);
}

/* Rule: msync-domain flushes are durable at the fence (the msync). */
static void msync_at_fence(void)
{
    begin_store_flush(TR_FLUSH_MSYNC);
    fence();
    fence();
    replay();
    CHECK(may_hold(0, 0, W(0)));
    CHECK(P[1].lines_in_play == 0 && P[1].media[0][0] == 7);
}

/* Rule: a non-temporal store is durable at the next fence. */
static void nt_durable_at_next_fence(void)
{
    unsigned char now[64];
    memset(now, 0x5a, 64);
    begin();
    rec(TR_NTSTORE, 0, 0, 0, rel(0), 64);
    line_rec(TR_LINE_NT, 0, now);
    fence();
    fence();
    replay();
    CHECK(P[0].nver[0] == 2);                   /* before the fence: either */
    CHECK(P[1].lines_in_play == 0 && P[1].media[0][0] == 0x5a);
}

/* Rule: an aligned 8-byte store never tears; a 16-byte or unaligned one
 * may tear at the 8-byte boundary. */
static void tearing(void)
{
    begin();
    store(0, 0x1111111111111111ull, 8);
    fence();
    replay();
    CHECK(P[0].nver[0] == 2);
    begin();
    store16(0, 1, 2);
    fence();
    replay();
    CHECK(P[0].nver[0] == 4);
    CHECK(may_hold(0, 0, W(0, 2)));             /* the second half alone */
    CHECK(may_hold(0, 0, W(1, 0)));
    begin();
    store(4, 0xffffffffffffffffull, 8);         /* unaligned: words 0 and 1 */
    fence();
    replay();
    CHECK(P[0].nver[0] == 4);
    CHECK(may_hold(0, 0, W(0, 0x00000000ffffffffull)));
}

/* Rule: an untraced change of a line (seen at a fence) is one whole-line write. */
static void untraced_line(void)
{
    unsigned char now[64] = { 0 };
    now[0] = 1;
    now[63] = 2;
    begin();
    line_rec(TR_LINE_AT_FENCE, 0, now);
    fence();
    replay();
    CHECK(P[0].nver[0] == 2);
    CHECK(may_hold(0, 0, W(0)));
    CHECK(!memcmp(P[0].ver[0][1], now, 64));
}

/* Rule: a fence completes the flushes of its own thread only. */
static void fence_of_another_thread(void)
{
    begin_store_flush(TR_FLUSH_CLWB);
    fence();                                    /* written as thread 2's */
    write_trace(2);
    struct ct_trace t;
    char why[256];
    REQUIRE(ct_load(trace_path(), &t, why, sizeof why) == 0);
    memset(media, 0, sizeof media);
    struct cm_model m;
    REQUIRE(cm_init(&m, media, SIZE) == 0);
    ct_replay(&t, &m, POOL_ID, false, at_point, NULL);
    CHECK(cm_pending(&m, 0) != NULL);           /* still not durable */
    CHECK(media[0] == 0);
    cm_free(&m);
    ct_free(&t);
}

int main(void)
{
    RUN(prefix_in_program_order);
    RUN(lines_independent);
    RUN(clwb_durable_at_next_fence);
    RUN(clflush_ordered);
    RUN(msync_at_fence);
    RUN(nt_durable_at_next_fence);
    RUN(tearing);
    RUN(untraced_line);
    RUN(fence_of_another_thread);
    unlink(trace_path());
    DONE();
}
