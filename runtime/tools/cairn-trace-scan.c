/*
 * cairn-trace-scan -- the per-record pass of `cairn trace report` and
 * `cairn sim` (python/cairn/trace_report.py and trace_sim.py print what
 * this counts; docs/trace.md has the definitions and the model).
 *
 *   cairn-trace-scan --report [--window-ns N] [--top N] TRACE
 *   cairn-trace-scan --sim [--param NAME=VALUE]... TRACE
 *   cairn-trace-scan --layout      the pool layout the regions come from, as JSON
 *
 * Reads a CAIRN_TRACE file a chunk at a time, cuts each thread's records
 * into epochs (what the thread wrote to PM between two of its fences) and
 * takes all threads' epochs in global order (by the seq of the fence that
 * ends them, the thread with the lower id first on a tie). --report
 * counts WHISPER's section 5 figures over them; --sim runs them through
 * the timing model of every design. A line of an epoch is taken in
 * ascending address order wherever order decides a count (the region of
 * an epoch's first dependency, which of equally flushed lines comes first).
 *
 * Output on stdout: lines "progress N" (N more records read) while it
 * reads, then one JSON object on one line. Errors: one line on stderr,
 * exit 2.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "format.h"
#include "trace.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_SIZE   32u
#define CHUNK_HDR  32u
#define FILE_HDR   64u
#define LINE       64u
#define REL_BIT    ((uint64_t)1 << 63)
#define OFF_MASK   (((uint64_t)1 << 40) - 1)
#define PROGRESS_EVERY 131072u

static const char *prog = "cairn-trace-scan";

static void die(const char *fmt, const char *what)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    exit(2);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory%s; scan a smaller trace or free memory", "");
    return q;
}

#define GROW(arr, n, cap) do { \
        if ((n) == (cap)) { (cap) = (cap) ? 2 * (cap) : 16; \
                            (arr) = xrealloc((arr), (cap) * sizeof *(arr)); } } while (0)

/* ---- regions of a line (docs/trace.md "Epochs": the pool layout of format.h) ---- */

enum region { R_DRAM, R_ALLOC_META, R_COMMIT, R_HEAP, R_LOG, R_HEADER, NREGIONS };
/* in the order Python's sorted() puts the names: "DRAM" first (upper case) */
static const char *const region_name[NREGIONS] = {
    "DRAM", "allocator metadata", "commit", "heap data", "log", "pool header"
};
#define LANES_END  (CAIRN_LANES_OFF + CAIRN_NLANES * CAIRN_LANE_SIZE)
#define HEAP_OFF   ((LANES_END + CAIRN_CHUNK - 1) & ~(CAIRN_CHUNK - 1))

static enum region region_of(uint64_t line)
{
    if (!(line & REL_BIT))
        return R_DRAM;
    uint64_t off = line & OFF_MASK;
    if (off < CAIRN_LANES_OFF)
        return R_HEADER;
    if (off < LANES_END)
        return R_LOG;
    if (off >= HEAP_OFF && (off - HEAP_OFF) % CAIRN_ZONE_BYTES < CAIRN_CHUNK)
        return R_ALLOC_META;
    return R_HEAP;
}

/* lane lines written in an epoch a dfence ends are the commit (or abort) mark */
static enum region region_at(uint64_t line, int fence)
{
    enum region r = region_of(line);
    return r == R_LOG && fence == 1 ? R_COMMIT : r;
}

/* ---- a hash map from a 64-bit key to an index (open addressing) ---- */

struct map {
    uint64_t *key;
    uint32_t *val;                    /* index + 1; 0: empty */
    size_t cap, n;                    /* cap: a power of two */
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void map_grow(struct map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    uint64_t *key = calloc(cap, sizeof *key);
    uint32_t *val = calloc(cap, sizeof *val);
    if (!key || !val)
        die("out of memory%s; scan a smaller trace or free memory", "");
    for (size_t i = 0; i < m->cap; i++)
        if (m->val[i]) {
            size_t j = mix(m->key[i]) & (cap - 1);
            while (val[j])
                j = (j + 1) & (cap - 1);
            key[j] = m->key[i];
            val[j] = m->val[i];
        }
    free(m->key);
    free(m->val);
    m->key = key; m->val = val; m->cap = cap;
}

/* the slot of k: *found says whether it holds k (else it is where k goes) */
static size_t map_slot(struct map *m, uint64_t k, bool *found)
{
    if (2 * (m->n + 1) > m->cap)
        map_grow(m);
    size_t j = mix(k) & (m->cap - 1);
    while (m->val[j] && m->key[j] != k)
        j = (j + 1) & (m->cap - 1);
    *found = m->val[j] != 0;
    return j;
}

static void map_clear(struct map *m)
{
    if (!m->n)
        return;
    if (m->cap > 1024 && 16 * m->n < m->cap) {      /* mostly empty: start small again */
        free(m->key);
        free(m->val);
        *m = (struct map){ 0 };
        return;
    }
    memset(m->val, 0, m->cap * sizeof *m->val);
    m->n = 0;
}

/* ---- the file ---- */

struct chunkref { uint64_t pos, when; uint32_t nrec; };

struct rec { uint8_t type, aux; uint16_t size; uint32_t loc; uint64_t seq, addr, arg; };

static uint32_t le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* one line an epoch wrote */
struct eline { uint64_t line; uint32_t loc; bool stored, flushed; };

struct epoch {
    uint64_t seq;
    bool half;                        /* the trace ended with it open: after seq */
    int fence;                        /* 0 ofence, 1 dfence, -1 open at the end */
    bool tx;
    int64_t time_ns;
    struct eline *lines;
    size_t nlines, caplines;
    size_t nstored;
    uint64_t store_bytes, nt_bytes, flush_lines, nt_lines, stores, dram;
    bool has_site;
    uint32_t site;
};

struct thread {
    uint32_t tid;
    struct chunkref *ch;
    size_t nch, capch;
    /* reading */
    size_t ci;                        /* next chunk */
    struct rec *blk;                  /* the current block: records but DATA */
    size_t nblk, capblk, bi;
    size_t k0;                        /* chunks read before the block */
    double lo, step;
    bool pend;                        /* the last record carries bytes still to come */
    uint64_t last_seq;
    bool eof;
    /* the epoch being built, and the next one ready */
    struct epoch e;
    struct map in_epoch;              /* line -> index in e.lines */
    bool ready;
    uint64_t dram_seen, dram_last;
    bool in_tx;
    uint64_t tx_fences, tx_log;
};

static int fd = -1;
static uint64_t start_ns;
static unsigned char *body;
static size_t capbody;
static uint64_t records_read, progress_pending;

static void progress(uint64_t n)
{
    records_read += n;
    progress_pending += n;
    if (progress_pending >= PROGRESS_EVERY) {
        printf("progress %" PRIu64 "\n", progress_pending);
        fflush(stdout);
        progress_pending = 0;
    }
}

static bool carries_data(unsigned type)
{
    return type == TR_POOL_OPEN || type == TR_STORE_RANGE || type == TR_SITE ||
           type == TR_LINE || type == TR_STACK || type == TR_OBJECT;
}

/* The next block of th's records: chunks up to one that does not end with
 * a record whose bytes run on into the next (the reader's blocks()), with
 * each record's time spread evenly over the block's interval. */
static bool load_block(struct thread *th)
{
    th->nblk = th->bi = 0;
    th->k0 = th->ci;
    while (th->ci < th->nch) {
        struct chunkref *c = &th->ch[th->ci++];
        size_t want = (size_t)c->nrec * REC_SIZE;
        if (want > capbody) {
            capbody = want;
            body = xrealloc(body, capbody);
        }
        ssize_t got = pread(fd, body, want, (off_t)c->pos);
        if (got < 0)
            die("cannot read the trace: %s", strerror(errno));
        size_t nrec = (size_t)got / REC_SIZE;
        for (size_t i = 0; i < nrec; i++) {
            const unsigned char *p = body + i * REC_SIZE;
            if (p[0] == TR_DATA)
                continue;
            if (p[0] != TR_DRAM_STORES)
                th->pend = carries_data(p[0]);
            GROW(th->blk, th->nblk, th->capblk);
            struct rec *r = &th->blk[th->nblk++];
            r->type = p[0]; r->aux = p[1];
            r->size = (uint16_t)(p[2] | p[3] << 8);
            r->loc = le32(p + 4);
            r->seq = le64(p + 8); r->addr = le64(p + 16); r->arg = le64(p + 24);
        }
        progress(nrec);
        if (!th->pend && th->nblk)
            break;
    }
    if (!th->nblk)
        return false;
    size_t k1 = th->ci;
    uint64_t lo = th->k0 ? th->ch[th->k0 - 1].when : start_ns;
    uint64_t hi = k1 ? th->ch[k1 - 1].when : lo;
    if (hi < lo)
        hi = lo;
    th->lo = (double)lo;
    th->step = (double)(hi - lo) / (double)th->nblk;
    return true;
}

static struct eline *epoch_line(struct thread *th, uint64_t line)
{
    bool found;
    size_t j = map_slot(&th->in_epoch, line, &found);
    if (found)
        return &th->e.lines[th->in_epoch.val[j] - 1];
    struct epoch *e = &th->e;
    GROW(e->lines, e->nlines, e->caplines);
    th->in_epoch.key[j] = line;
    th->in_epoch.val[j] = (uint32_t)++e->nlines;
    th->in_epoch.n++;
    struct eline *l = &e->lines[e->nlines - 1];
    *l = (struct eline){ .line = line };
    return l;
}

static void epoch_reset(struct thread *th)
{
    struct epoch *e = &th->e;
    e->nlines = e->nstored = 0;
    e->store_bytes = e->nt_bytes = e->flush_lines = e->nt_lines = e->stores = e->dram = 0;
    e->has_site = false;
    map_clear(&th->in_epoch);
}

/* ---- what the whole trace adds up to ---- */

struct hist { uint64_t *n; size_t cap; };
static void hist_add(struct hist *h, uint64_t k)
{
    if (k >= h->cap) {
        size_t cap = h->cap ? h->cap : 16;
        while (cap <= k)
            cap *= 2;
        h->n = xrealloc(h->n, cap * sizeof *h->n);
        memset(h->n + h->cap, 0, (cap - h->cap) * sizeof *h->n);
        h->cap = cap;
    }
    h->n[k]++;
}

/* a counter keeping its keys in the order they first came (Python's Counter) */
struct counter { uint64_t *key, *count; size_t n, cap; struct map idx; };
static void counter_add(struct counter *c, uint64_t k, uint64_t by)
{
    bool found;
    size_t j = map_slot(&c->idx, k, &found);
    if (!found) {
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 16;
            c->key = xrealloc(c->key, c->cap * sizeof *c->key);
            c->count = xrealloc(c->count, c->cap * sizeof *c->count);
        }
        c->key[c->n] = k;
        c->count[c->n] = 0;
        c->idx.key[j] = k;
        c->idx.val[j] = (uint32_t)++c->n;
        c->idx.n++;
    }
    c->count[c->idx.val[j] - 1] += by;
}

/* what the report keeps of one line */
struct linfo {
    uint64_t line;
    int64_t last_time;
    uint32_t last_tid, site;
    bool has_last, has_site;
    uint64_t flushes, first_flush;
    uint32_t w_tid[2];                /* sim: the last epoch to buffer it, per HOPS design */
    double w_done[2];
    bool has_w[2];
    uint32_t sync_tid;                /* sim: the last thread to write it, and its clock */
    double sync_t[6];                 /*      after that epoch, per design */
    bool has_sync;
};
static struct linfo *linfo;
static size_t nlinfo, caplinfo;
static struct map line_idx;

static struct linfo *line_info(uint64_t line)
{
    bool found;
    size_t j = map_slot(&line_idx, line, &found);
    if (found)
        return &linfo[line_idx.val[j] - 1];
    GROW(linfo, nlinfo, caplinfo);
    line_idx.key[j] = line;
    line_idx.val[j] = (uint32_t)++nlinfo;
    line_idx.n++;
    struct linfo *l = &linfo[nlinfo - 1];
    *l = (struct linfo){ .line = line };
    return l;
}

static struct {
    struct hist tx_epochs;            /* committed transactions by their fences */
    uint64_t aborted, declared;
    uint64_t events[32];              /* runtime events by type */
    struct hist sizes;
    uint64_t empty[2], by_fence[3];
    uint64_t n_epochs, singles, single_bytes, single_small;
    uint64_t self_dep, cross_dep;
    struct counter self_src, cross_src;      /* key: region */
    uint64_t written[NREGIONS + 1], outside[NREGIONS + 1];  /* + the heap lines only the runtime wrote */
    uint64_t user_bytes, user_outside, nt_lines, flush_lines, pm_stores, dram_stores;
    struct counter epoch_sites;       /* key: site, or 1 << 32 | the regions' bit set */
    struct counter flushed_by_site;
    uint64_t flush_order;
} R;
#define RUNTIME_HEAP NREGIONS

/* ---- the timing model (trace_sim.py states it) ---- */

enum { P_PM, P_PWQ, P_NT, P_STORE, P_LINE_STORES, P_FLUSH, P_FENCE, P_PB, P_WORK, NPARAMS };
static const char *const param_name[NPARAMS] = {
    "pm_cycles", "pwq_cycles", "nt_cycles", "store_cycles", "line_stores", "flush_cycles",
    "fence_cycles", "pb_entries", "work_cycles"
};
static double P[NPARAMS] = { 160, 40, 160, 1, 8, 1, 1, 32, 0 };

enum { D_X86, D_X86_PWQ, D_X86_EADR, D_HOPS, D_HOPS_PWQ, D_IDEAL, NDESIGNS };
_Static_assert(NDESIGNS == 6, "struct linfo's sync_t has one clock per design");
static const char *const design_name[NDESIGNS] = {
    "x86", "x86-pwq", "x86-eadr", "hops", "hops-pwq", "ideal"
};

struct pending { double done; size_t take; };
struct hops_thread {
    struct pending *q;                /* a ring of the epochs in the buffer */
    size_t head, n, cap;
    uint64_t used;
    double last_done;
};
struct sim_thread {
    double t[NDESIGNS];
    double inflight[3];               /* x86 designs */
    struct hops_thread h[2];
    bool seen;
};
static struct sim_thread *sim;
static uint64_t sim_epochs;
static double hops_stalls;
static bool shared;                   /* more than one thread: cross-thread dependencies */

static void x86_epoch(struct sim_thread *s, int d, const struct epoch *e, double work,
                      double wb, double nt, bool drop)
{
    double t = s->t[d] + work;
    uint64_t flushes = drop ? 0 : e->flush_lines;
    t += P[P_FLUSH] * (double)(flushes + e->nt_lines);
    double *inflight = &s->inflight[d];
    if (flushes && t + wb > *inflight)
        *inflight = t + wb;
    if (e->nt_lines && t + nt > *inflight)
        *inflight = t + nt;
    if (e->fence >= 0) {
        t += P[P_FENCE];
        if (*inflight > t)
            t = *inflight;
    }
    s->t[d] = t;
}

static void hops_push(struct hops_thread *h, double done, uint64_t take)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        struct pending *q = xrealloc(NULL, cap * sizeof *q);
        for (size_t i = 0; i < h->n; i++)
            q[i] = h->q[(h->head + i) % h->cap];
        free(h->q);
        h->q = q; h->cap = cap; h->head = 0;
    }
    h->q[(h->head + h->n++) % h->cap] = (struct pending){ done, take };
    h->used += take;
}

static struct pending hops_pop(struct hops_thread *h)
{
    struct pending p = h->q[h->head];
    h->head = (h->head + 1) % h->cap;
    h->n--;
    h->used -= p.take;
    return p;
}

/* HOPS (k 0) or HOPS with the write queue (k 1): epochs drain in order,
 * each one's lines at once after the previous one's acks, in drains of at
 * most a buffer's worth; a full buffer stalls; a dfence waits for it to
 * empty; an epoch writing a line another thread's buffered epoch wrote
 * drains after that epoch. */
static void hops_epoch(struct sim_thread *s, int k, uint32_t tidx, const struct epoch *e,
                       double work, double wb)
{
    struct hops_thread *h = &s->h[k];
    double *tp = &s->t[D_HOPS + k];
    uint64_t cap = (uint64_t)P[P_PB];
    double t = *tp + work;
    uint64_t n = e->nlines;
    if (n) {
        uint64_t take = n < cap ? n : cap;
        while (h->n && h->q[h->head].done <= t)           /* drained already */
            hops_pop(h);
        while (h->n && h->used + take > cap) {            /* full: wait for the oldest epoch */
            struct pending p = hops_pop(h);
            if (k == 0 && p.done - t > 0)
                hops_stalls += p.done - t;
            if (p.done > t)
                t = p.done;
        }
        double start = t > h->last_done ? t : h->last_done;
        if (shared)
            for (size_t i = 0; i < n; i++) {
                struct linfo *l = line_info(e->lines[i].line);
                if (l->has_w[k] && l->w_tid[k] != tidx && l->w_done[k] > start)
                    start = l->w_done[k];                 /* after the other thread's epoch */
            }
        double done = start + (double)((n + cap - 1) / cap) * wb;
        h->last_done = done;
        hops_push(h, done, take);
        if (shared)
            for (size_t i = 0; i < n; i++) {
                struct linfo *l = line_info(e->lines[i].line);
                l->has_w[k] = true;
                l->w_tid[k] = tidx;
                l->w_done[k] = done;
            }
    }
    if (e->fence == 1) {
        t += P[P_FENCE];
        if (h->last_done > t)
            t = h->last_done;
    } else if (e->fence == 0) {
        t += P[P_FENCE];
    }
    *tp = t;
}

static double dmin(double a, double b) { return a < b ? a : b; }

static void sim_epoch(uint32_t tidx, const struct epoch *e)
{
    struct sim_thread *s = &sim[tidx];
    s->seen = true;
    sim_epochs++;
    uint64_t runtime_lines = e->nlines - e->nstored;
    double work = P[P_STORE] * (double)(e->stores + e->dram +
                                        (uint64_t)P[P_LINE_STORES] * runtime_lines);
    if (e->fence >= 0)
        work += P[P_WORK];
    if (shared)       /* after the other thread's epoch that wrote one of these lines */
        for (size_t i = 0; i < e->nlines; i++) {
            struct linfo *l = line_info(e->lines[i].line);
            if (l->has_sync && l->sync_tid != tidx)
                for (int d = 0; d < NDESIGNS; d++)
                    if (l->sync_t[d] > s->t[d])
                        s->t[d] = l->sync_t[d];
        }
    s->t[D_IDEAL] += work;
    x86_epoch(s, D_X86, e, work, P[P_PM], P[P_NT], false);
    x86_epoch(s, D_X86_PWQ, e, work, P[P_PWQ], dmin(P[P_NT], P[P_PWQ]), false);
    x86_epoch(s, D_X86_EADR, e, work, P[P_PWQ], dmin(P[P_NT], P[P_PWQ]), true);
    hops_epoch(s, 0, tidx, e, work, P[P_NT]);              /* a buffer writes whole lines */
    hops_epoch(s, 1, tidx, e, work, dmin(P[P_NT], P[P_PWQ]));
    if (shared)
        for (size_t i = 0; i < e->nlines; i++) {
            struct linfo *l = line_info(e->lines[i].line);
            l->has_sync = true;
            l->sync_tid = tidx;
            memcpy(l->sync_t, s->t, sizeof l->sync_t);
        }
}

/* ---- the report's counts ---- */

static int64_t window_ns = 50000;

static int cmp_line(const void *a, const void *b)
{
    uint64_t x = ((const struct eline *)a)->line, y = ((const struct eline *)b)->line;
    return x < y ? -1 : x > y;
}

static void report_epoch(uint32_t tidx, const struct epoch *e)
{
    R.pm_stores += e->stores;
    R.dram_stores += e->dram;
    R.nt_lines += e->nt_lines;
    R.flush_lines += e->flush_lines;
    for (size_t i = 0; i < e->nlines; i++)
        if (e->lines[i].stored) {
            struct linfo *l = line_info(e->lines[i].line);
            l->site = e->lines[i].loc;
            l->has_site = true;
        }
    if (!e->nlines) {
        if (e->fence >= 0)
            R.empty[e->fence]++;
        return;
    }
    R.n_epochs++;
    R.by_fence[e->fence < 0 ? 2 : e->fence]++;
    size_t n = e->nlines;
    hist_add(&R.sizes, n);
    uint64_t runtime_lines = n - e->nstored;
    uint64_t known = e->store_bytes + LINE * runtime_lines;
    if (n == 1) {
        R.singles++;
        R.single_bytes += known;
        R.single_small += known < 10;
    }
    if (e->has_site) {
        counter_add(&R.epoch_sites, e->site, 1);
    } else {                          /* only the runtime wrote: where it wrote */
        unsigned set = 0;
        for (size_t i = 0; i < n; i++)
            set |= 1u << region_at(e->lines[i].line, e->fence);
        counter_add(&R.epoch_sites, (uint64_t)1 << 32 | set, 1);
    }
    uint64_t *into = e->tx ? R.written : R.outside;
    if (e->tx)
        R.user_bytes += e->store_bytes;
    else
        R.user_outside += e->store_bytes;
    bool has_self = false, has_cross = false;
    for (size_t i = 0; i < n; i++) {
        const struct eline *el = &e->lines[i];
        if (!el->stored) {
            enum region reg = region_at(el->line, e->fence);
            into[reg == R_HEAP ? RUNTIME_HEAP : reg] += LINE;
        }
        struct linfo *l = line_info(el->line);
        if (l->has_last && e->time_ns - l->last_time <= window_ns) {
            if (l->last_tid == tidx) {
                if (!has_self)
                    counter_add(&R.self_src, region_of(el->line), 1);
                has_self = true;
            } else {
                if (!has_cross)
                    counter_add(&R.cross_src, region_of(el->line), 1);
                has_cross = true;
            }
        }
        l->has_last = true;
        l->last_tid = tidx;
        l->last_time = e->time_ns;
    }
    R.self_dep += has_self;
    R.cross_dep += has_cross;
    for (size_t i = 0; i < n; i++) {
        if (!e->lines[i].flushed)
            continue;
        struct linfo *l = line_info(e->lines[i].line);
        if (!l->flushes++)
            l->first_flush = R.flush_order++;
        if (l->has_site && l->site)
            counter_add(&R.flushed_by_site, l->site, 1);
    }
}

/* ---- cutting a thread's records into epochs ---- */

static bool want_report, want_sim;

/* Reads th's records up to its next epoch (th->ready) or its end. */
static void next_epoch(struct thread *th)
{
    struct epoch *e = &th->e;
    epoch_reset(th);
    for (;;) {
        if (th->bi == th->nblk && !load_block(th)) {
            th->eof = true;
            uint64_t dram = th->dram_seen - th->dram_last;
            th->dram_last = th->dram_seen;
            if (e->nlines || dram || e->stores) {
                e->seq = th->last_seq;
                e->half = true;
                e->fence = -1;
                e->tx = th->in_tx;
                e->time_ns = (int64_t)(th->nch ? th->ch[th->nch - 1].when : start_ns);
                e->dram = dram;
                th->ready = true;
            }
            return;
        }
        size_t i = th->bi++;
        const struct rec *r = &th->blk[i];
        th->last_seq = r->seq;
        switch (r->type) {
        case TR_STORE:
        case TR_STORE_RANGE: {                 /* a store's size is in size, a range's in arg */
            uint64_t n = r->type == TR_STORE ? r->size : r->arg;
            for (uint64_t ln = r->addr & ~(uint64_t)63; ln < r->addr + n; ln += LINE) {
                struct eline *l = epoch_line(th, ln);
                if (!l->stored)
                    e->nstored++;
                l->stored = true;
                l->loc = r->loc;
            }
            e->store_bytes += n;
            e->stores++;
            if (!e->has_site) {
                e->has_site = true;
                e->site = r->loc;
            }
            break;
        }
        case TR_FLUSH: {
            uint64_t first = r->addr & ~(uint64_t)63;
            for (uint64_t k = 0; k < r->arg; k++)
                epoch_line(th, first + k * LINE)->flushed = true;
            e->flush_lines += r->arg;
            break;
        }
        case TR_NTSTORE: {
            uint64_t first = r->addr & ~(uint64_t)63;
            uint64_t n = (r->addr + r->arg - first + 63) / LINE;
            for (uint64_t k = 0; k < n; k++)
                epoch_line(th, first + k * LINE)->flushed = true;
            e->nt_lines += n;
            e->nt_bytes += r->arg;
            break;
        }
        case TR_FENCE:
            if (th->in_tx)
                th->tx_fences++;
            e->dram = th->dram_seen - th->dram_last;
            th->dram_last = th->dram_seen;
            e->seq = r->seq;
            e->half = false;
            e->fence = r->aux ? 1 : 0;
            e->tx = th->in_tx;
            e->time_ns = (int64_t)(th->lo + th->step * (double)i);
            th->ready = true;
            return;
        case TR_DRAM_STORES:
            if (r->arg > th->dram_seen)
                th->dram_seen = r->arg;
            break;
        default:
            if (r->type < 32)
                R.events[r->type]++;
            if (r->type == TR_TX_BEGIN && r->aux == 1) {
                th->in_tx = true;
                th->tx_fences = th->tx_log = 0;
            } else if (th->in_tx && ((r->type == TR_TX_COMMIT && r->aux == 1) ||
                                     r->type == TR_TX_ABORT)) {
                if (r->type == TR_TX_COMMIT)
                    hist_add(&R.tx_epochs, th->tx_fences);
                else
                    R.aborted++;
                R.declared += th->tx_log;
                th->in_tx = false;
            } else if (r->type == TR_LOG_APPEND && th->in_tx) {
                th->tx_log += r->arg;
            }
        }
    }
}

/* ---- reading the index ---- */

static struct thread *threads;
static size_t nthreads;

static int cmp_tid(const void *a, const void *b)
{
    uint32_t x = ((const struct thread *)a)->tid, y = ((const struct thread *)b)->tid;
    return x < y ? -1 : x > y;
}

static void index_file(const char *path)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        die("cannot stat the trace: %s", strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    unsigned char h[FILE_HDR];
    if (pread(fd, h, FILE_HDR, 0) != (ssize_t)FILE_HDR || memcmp(h, "CAIRNTRC", 8))
        die("%s is not a cairn trace (bad magic or too short); make one with CAIRN_TRACE=FILE", path);
    if (le32(h + 8) != 1 || le32(h + 16) != REC_SIZE || le32(h + 20) != CHUNK_HDR)
        die("%s is a trace version this tool does not know; use the cairn that wrote it", path);
    start_ns = le64(h + 32);
    uint64_t pos = le32(h + 12);
    while (pos + CHUNK_HDR <= size) {
        unsigned char c[CHUNK_HDR];
        if (pread(fd, c, CHUNK_HDR, (off_t)pos) != (ssize_t)CHUNK_HDR)
            break;
        if (memcmp(c, "CTCK", 4))
            die("%s: a bad chunk header: the file is corrupt", path);
        uint32_t tid = le32(c + 4), nrec = le32(c + 8);
        uint64_t when = le64(c + 16);
        pos += CHUNK_HDR;
        uint64_t whole = (size - pos) / REC_SIZE;
        if (whole > nrec)
            whole = nrec;
        if (whole && tid) {
            size_t k = 0;
            while (k < nthreads && threads[k].tid != tid)
                k++;
            if (k == nthreads) {
                threads = xrealloc(threads, (nthreads + 1) * sizeof *threads);
                threads[nthreads++] = (struct thread){ .tid = tid };
            }
            struct thread *th = &threads[k];
            GROW(th->ch, th->nch, th->capch);
            th->ch[th->nch++] = (struct chunkref){ pos, when, (uint32_t)whole };
        }
        pos += whole * REC_SIZE;
        if (whole < nrec)
            break;
    }
    qsort(threads, nthreads, sizeof *threads, cmp_tid);
}

/* ---- output ---- */

static void print_pairs_u(const char *name, const struct counter *c, bool region_keys)
{
    printf("\"%s\":[", name);
    for (size_t i = 0; i < c->n; i++) {
        if (region_keys)
            printf("%s[\"%s\",%" PRIu64 "]", i ? "," : "", region_name[c->key[i]], c->count[i]);
        else
            printf("%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", c->key[i], c->count[i]);
    }
    printf("],");
}

static void print_regions(const char *name, const uint64_t *bytes)
{
    printf("\"%s\":{", name);
    bool first = true;
    for (int r = 0; r <= NREGIONS; r++)
        if (bytes[r]) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",",
                   r == RUNTIME_HEAP ? "heap lines (runtime: zeroing, or flushed for the program)"
                                     : region_name[r], bytes[r]);
            first = false;
        }
    printf("},");
}

static void print_hist(const char *name, const struct hist *h)
{
    printf("\"%s\":[", name);
    bool first = true;
    for (size_t k = 0; k < h->cap; k++)
        if (h->n[k]) {
            printf("%s[%zu,%" PRIu64 "]", first ? "" : ",", k, h->n[k]);
            first = false;
        }
    printf("],");
}

static size_t top_n = 10;

static void print_report(void)
{
    printf("{\"records_read\":%" PRIu64 ",", records_read);
    print_hist("tx_epochs", &R.tx_epochs);
    printf("\"aborted\":%" PRIu64 ",\"declared\":%" PRIu64 ",", R.aborted, R.declared);
    static const struct { unsigned type; const char *name; } named[] = {
        { TR_ALLOC, "alloc" }, { TR_FREE, "free" }, { TR_LOG_APPEND, "log_append" },
        { TR_TX_ABORT, "tx_abort" }, { TR_TX_BEGIN, "tx_begin" }, { TR_TX_COMMIT, "tx_commit" },
    };
    printf("\"runtime_events\":{");
    bool first = true;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (R.events[named[i].type]) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",", named[i].name, R.events[named[i].type]);
            first = false;
        }
    printf("},");
    print_hist("sizes", &R.sizes);
    printf("\"empty\":[%" PRIu64 ",%" PRIu64 "],\"by_fence\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],",
           R.empty[0], R.empty[1], R.by_fence[0], R.by_fence[1], R.by_fence[2]);
    printf("\"epochs\":%" PRIu64 ",\"singles\":%" PRIu64 ",\"single_bytes\":%" PRIu64
           ",\"single_small\":%" PRIu64 ",\"self\":%" PRIu64 ",\"cross\":%" PRIu64 ",",
           R.n_epochs, R.singles, R.single_bytes, R.single_small, R.self_dep, R.cross_dep);
    print_pairs_u("self_by_region", &R.self_src, true);
    print_pairs_u("cross_by_region", &R.cross_src, true);
    print_regions("written", R.written);
    print_regions("outside", R.outside);
    printf("\"user_bytes\":%" PRIu64 ",\"user_outside\":%" PRIu64 ",\"nt_lines\":%" PRIu64
           ",\"flush_lines\":%" PRIu64 ",\"pm_stores\":%" PRIu64 ",\"dram_stores\":%" PRIu64 ",",
           R.user_bytes, R.user_outside, R.nt_lines, R.flush_lines, R.pm_stores, R.dram_stores);
    printf("\"epoch_sites\":[");
    for (size_t i = 0; i < R.epoch_sites.n; i++) {
        uint64_t k = R.epoch_sites.key[i];
        printf("%s[", i ? "," : "");
        if (k >> 32) {                 /* the regions only the runtime wrote, joined */
            putchar('"');
            bool more = false;
            for (int r = 0; r < NREGIONS; r++)
                if (k & (1u << r)) {
                    printf("%s%s", more ? "+" : "", region_name[r]);
                    more = true;
                }
            putchar('"');
        } else {
            printf("%" PRIu64, k);
        }
        printf(",%" PRIu64 "]", R.epoch_sites.count[i]);
    }
    printf("],");
    print_pairs_u("flushed_by_site", &R.flushed_by_site, false);
    /* the most flushed lines, the first flushed first among equals */
    struct linfo **top = xrealloc(NULL, (top_n + 1) * sizeof *top);
    size_t ntop = 0;
    for (size_t i = 0; i < nlinfo; i++) {
        struct linfo *l = &linfo[i];
        if (!l->flushes)
            continue;
        size_t j = ntop < top_n ? ntop++ : top_n;
        while (j > 0 && (top[j - 1]->flushes < l->flushes ||
                         (top[j - 1]->flushes == l->flushes && top[j - 1]->first_flush > l->first_flush))) {
            if (j < top_n)
                top[j] = top[j - 1];
            j--;
        }
        if (j < top_n)
            top[j] = l;
    }
    printf("\"top_flushed_lines\":[");
    for (size_t i = 0; i < ntop; i++) {
        printf("%s[%" PRIu64 ",\"%s\",%" PRIu64 ",", i ? "," : "", top[i]->line,
               region_name[region_of(top[i]->line)], top[i]->flushes);
        if (top[i]->has_site)
            printf("%" PRIu32 "]", top[i]->site);
        else
            printf("null]");
    }
    printf("]}\n");
    free(top);
}

static void print_sim(void)
{
    double cycles[NDESIGNS] = { 0 };
    for (size_t k = 0; k < nthreads; k++)
        if (sim[k].seen)
            for (int d = 0; d < NDESIGNS; d++)
                if (sim[k].t[d] > cycles[d])
                    cycles[d] = sim[k].t[d];
    printf("{\"records_read\":%" PRIu64 ",\"epochs\":%" PRIu64 ",\"cycles\":{", records_read, sim_epochs);
    for (int d = 0; d < NDESIGNS; d++)
        printf("%s\"%s\":%.17g", d ? "," : "", design_name[d], cycles[d]);
    printf("},\"hops_buffer_stall_cycles\":%.17g}\n", hops_stalls);
}

static void usage(void)
{
    fprintf(stderr, "usage: %s --report [--window-ns N] [--top N] TRACE\n"
                    "       %s --sim [--param NAME=VALUE]... TRACE\n"
                    "       %s --layout\n", prog, prog, prog);
    exit(2);
}

static double number(const char *flag, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || isinf(v))
        die("%s needs a non-negative number", flag);
    return v;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--layout") && argc == 2) {
            printf("{\"lanes_off\":%" PRIu64 ",\"lanes_end\":%" PRIu64 ",\"heap_off\":%" PRIu64
                   ",\"chunk\":%" PRIu64 ",\"zone\":%" PRIu64 "}\n", (uint64_t)CAIRN_LANES_OFF,
                   (uint64_t)LANES_END, (uint64_t)HEAP_OFF, (uint64_t)CAIRN_CHUNK,
                   (uint64_t)CAIRN_ZONE_BYTES);
            return 0;
        }
        if (!strcmp(a, "--report")) {
            want_report = true;
        } else if (!strcmp(a, "--sim")) {
            want_sim = true;
        } else if (!strcmp(a, "--window-ns") && i + 1 < argc) {
            window_ns = (int64_t)number(a, argv[++i]);
        } else if (!strcmp(a, "--top") && i + 1 < argc) {
            top_n = (size_t)number(a, argv[++i]);
        } else if (!strcmp(a, "--param") && i + 1 < argc) {
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            int k = 0;
            while (k < NPARAMS && (!eq || strlen(param_name[k]) != (size_t)(eq - kv) ||
                                   strncmp(param_name[k], kv, (size_t)(eq - kv))))
                k++;
            if (k == NPARAMS)
                die("--param %s: not NAME=VALUE with a known NAME (pm_cycles, pwq_cycles, "
                    "nt_cycles, store_cycles, line_stores, flush_cycles, fence_cycles, "
                    "pb_entries, work_cycles)", kv);
            P[k] = number("--param", eq + 1);
        } else if (a[0] == '-' || path) {
            usage();
        } else {
            path = a;
        }
    }
    if (!path || want_report == want_sim)
        usage();
    if (P[P_PB] < 1)
        die("--param pb_entries=%s: a persist buffer needs at least one entry", "0");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("cannot open the trace: %s", strerror(errno));
    index_file(path);
    shared = nthreads > 1;
    sim = xrealloc(NULL, (nthreads ? nthreads : 1) * sizeof *sim);
    memset(sim, 0, (nthreads ? nthreads : 1) * sizeof *sim);
    for (size_t k = 0; k < nthreads; k++)
        next_epoch(&threads[k]);
    for (;;) {                        /* every thread's epochs in global order */
        struct thread *best = NULL;
        uint32_t bi = 0;
        for (size_t k = 0; k < nthreads; k++) {
            struct thread *th = &threads[k];
            if (th->ready && (!best || th->e.seq < best->e.seq ||
                              (th->e.seq == best->e.seq && th->e.half < best->e.half))) {
                best = th;
                bi = (uint32_t)k;
            }
        }
        if (!best)
            break;
        best->ready = false;
        if (best->e.nlines > 1)
            qsort(best->e.lines, best->e.nlines, sizeof *best->e.lines, cmp_line);
        if (want_report)
            report_epoch(bi, &best->e);
        else
            sim_epoch(bi, &best->e);
        if (!best->eof)
            next_epoch(best);
    }
    if (progress_pending)
        printf("progress %" PRIu64 "\n", progress_pending);
    if (want_report)
        print_report();
    else
        print_sim();
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 2;
}
