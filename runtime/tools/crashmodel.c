/*
 * crashmodel.c -- the persistency model of crashmodel.h: per 64-byte line,
 * the stores not yet durable in program order, and the rules that move
 * them to the media.
 */
#include "crashmodel.h"
#include <stdlib.h>
#include <string.h>

/* A line stored to again and again without a flush would keep every store:
 * past this many entries its two oldest (or, when only the first is
 * flushed, the next two) become one whole-line entry. The states lost are
 * the ones between them; merged_entries counts them. */
#define CM_MAX_ENTRIES 256u
#define CM_PAGE 4096u

uint64_t cm_line_hash(uint64_t line, const unsigned char bytes[CM_LINE])
{
    uint64_t h = (line + 1) * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < CM_LINE; i += 8) {
        uint64_t w;
        memcpy(&w, bytes + i, 8);
        h ^= w + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
}

int cm_init(struct cm_model *m, unsigned char *media, size_t size)
{
    memset(m, 0, sizeof *m);
    m->size = size;
    m->nlines = size / CM_LINE;
    m->media = media;
    m->cache = malloc(size ? size : 1);
    m->line = calloc(m->nlines ? m->nlines : 1, sizeof *m->line);
    m->cached = calloc(size / CM_PAGE / 64 + 1, sizeof *m->cached);
    if (!m->cache || !m->line || !m->cached) {
        cm_free(m);
        return -1;
    }
    return 0;
}

/* The program's memory at [off, off + len), made valid before a rule
 * writes it. A page the cache has not held yet is the media's: until a
 * rule first writes a page nothing in it was made durable either, so the
 * media still holds it as it was at cm_init. */
static unsigned char *cache_at(struct cm_model *m, uint64_t off, size_t len)
{
    for (uint64_t pg = off / CM_PAGE; pg <= (off + len - 1) / CM_PAGE; pg++) {
        if (m->cached[pg / 64] & 1ull << pg % 64) continue;
        uint64_t at = pg * CM_PAGE;
        memcpy(m->cache + at, m->media + at, m->size - at < CM_PAGE ? m->size - at : CM_PAGE);
        m->cached[pg / 64] |= 1ull << pg % 64;
    }
    return m->cache + off;
}

void cm_free(struct cm_model *m)
{
    for (size_t i = 0; m->line && i < m->nplay; i++) {
        struct cm_line *l = m->line[m->play[i]];
        free(l->e);
        free(l);
    }
    free(m->line);
    free(m->play);
    free(m->cache);
    free(m->cached);
    m->cached = NULL;
    m->line = NULL;
    m->play = NULL;
    m->cache = NULL;
}

static struct cm_line *line_get(struct cm_model *m, uint64_t idx)
{
    struct cm_line *l = m->line[idx];
    if (l) return l;
    if (m->nplay == m->capplay) {
        size_t cap = m->capplay ? 2 * m->capplay : 64;
        uint64_t *p = realloc(m->play, cap * sizeof *p);
        if (!p) abort();
        m->play = p;
        m->capplay = cap;
    }
    l = calloc(1, sizeof *l);
    if (!l) abort();
    l->idx = idx;
    l->play_pos = (uint32_t)m->nplay;
    m->play[m->nplay++] = idx;
    m->line[idx] = l;
    return l;
}

static void line_drop(struct cm_model *m, struct cm_line *l)
{
    uint64_t last = m->play[--m->nplay];
    m->play[l->play_pos] = last;
    m->line[last]->play_pos = l->play_pos;
    m->line[l->idx] = NULL;
    free(l->e);
    free(l);
}

static void apply_entry(unsigned char *line, const struct cm_entry *e)
{
    memcpy(line + e->off, e->bytes + e->off, e->len);
}

static void merge_oldest(struct cm_model *m, struct cm_line *l)
{
    uint32_t i = l->flushed == 1 ? 1 : 0;
    unsigned char img[CM_LINE];
    memcpy(img, m->media + l->idx * CM_LINE, CM_LINE);
    for (uint32_t k = 0; k <= i + 1; k++) apply_entry(img, &l->e[k]);
    struct cm_entry *e = &l->e[i];
    e->off = 0;
    e->len = CM_LINE;
    e->group = 0;
    e->kind = CM_SNAP_FENCE;
    memcpy(e->bytes, img, CM_LINE);
    memmove(&l->e[i + 1], &l->e[i + 2], (l->n - i - 2) * sizeof *l->e);
    l->n--;
    if (l->flushed > i + 1) l->flushed--;
    m->merged_entries++;
}

static struct cm_entry *entry_add(struct cm_model *m, uint64_t idx)
{
    struct cm_line *l = line_get(m, idx);
    if (l->n == CM_MAX_ENTRIES) merge_oldest(m, l);
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 4;
        struct cm_entry *e = realloc(l->e, cap * sizeof *e);
        if (!e) abort();
        l->e = e;
        l->cap = cap;
    }
    struct cm_entry *e = &l->e[l->n++];
    memset(e, 0, offsetof(struct cm_entry, bytes));
    e->fence = m->fences;
    return e;
}

/* Rule: a traced store joins its lines' lists in program order; an aligned
 * store of up to 8 bytes never tears, a wider or unaligned one may tear at
 * 8-byte boundaries (its pieces share a group). */
void cm_rule_store(struct cm_model *m, uint64_t off, const void *bytes, size_t len,
                   uint32_t site, uint64_t seq)
{
    if (off >= m->size) return;
    if (len > m->size - off) len = m->size - off;
    const unsigned char *src = bytes;
    bool tears = len > 8 || (off & 7) + len > 8;
    uint32_t group = tears ? ++m->next_group : 0;
    if (!len) return;
    memcpy(cache_at(m, off, len), src, len);
    m->traced_stores++;
    for (size_t done = 0; done < len;) {
        uint64_t a = off + done;
        size_t piece = len - done;
        if (tears) {
            size_t to_word = 8 - (a & 7);
            if (piece > to_word) piece = to_word;
        }
        struct cm_entry *e = entry_add(m, a / CM_LINE);
        e->off = (uint8_t)(a % CM_LINE);
        e->len = (uint8_t)piece;
        e->kind = CM_STORE;
        e->group = group;
        e->site = site;
        e->seq = seq;
        memcpy(e->bytes + e->off, src + done, piece);
        done += piece;
    }
}

/* Rule: a line that holds what no traced store wrote (the runtime's own
 * stores, a plain C program's) gets one entry with its whole contents now.
 * Untraced stores between two looks are taken as one write of the line:
 * their order within the line is not known, and states that hold some of
 * them but not others are not built. */
bool cm_rule_untraced(struct cm_model *m, uint64_t line, const void *now, enum cm_kind why,
                      uint64_t seq)
{
    if (line >= m->nlines) return false;
    unsigned char *c = cache_at(m, line * CM_LINE, CM_LINE);
    if (!memcmp(c, now, CM_LINE)) return false;
    memcpy(c, now, CM_LINE);
    struct cm_entry *e = entry_add(m, line);
    e->off = 0;
    e->len = CM_LINE;
    e->kind = (uint8_t)why;
    e->seq = seq;
    memcpy(e->bytes, now, CM_LINE);
    m->untraced_entries++;
    return true;
}

static void make_durable(struct cm_model *m, struct cm_line *l, uint32_t upto)
{
    unsigned char *med = m->media + l->idx * CM_LINE;
    m->media_hash ^= cm_line_hash(l->idx, med);
    for (uint32_t i = 0; i < upto; i++) apply_entry(med, &l->e[i]);
    m->media_hash ^= cm_line_hash(l->idx, med);
    if (m->on_durable) m->on_durable(m->on_durable_ctx, l->idx);
    memmove(l->e, l->e + upto, (l->n - upto) * sizeof *l->e);
    l->n -= upto;
    l->flushed = l->flushed > upto ? l->flushed - upto : 0;
    if (!l->n) line_drop(m, l);
}

/* Rule: clwb/clflushopt write back what the line holds now, durable at
 * the next fence; so do msync-domain flushes (each fence msyncs them).
 * clflush is ordered with the stores around it: durable at once. */
void cm_rule_flush(struct cm_model *m, uint64_t line, enum cm_flush kind, const void *now,
                   uint32_t tid, uint64_t seq)
{
    if (line >= m->nlines) return;
    cm_rule_untraced(m, line, now, CM_SNAP_FLUSH, seq);
    struct cm_line *l = m->line[line];
    if (!l) return;
    if (kind == CM_CLFLUSH) {
        make_durable(m, l, l->n);
    } else {
        l->flushed = l->n;
        l->flush_tid = tid;
    }
}

/* Rule: a non-temporal store is durable at the next fence. */
void cm_rule_ntstore(struct cm_model *m, uint64_t line, const void *now, uint32_t tid, uint64_t seq)
{
    if (line >= m->nlines) return;
    cm_rule_untraced(m, line, now, CM_SNAP_NT, seq);
    struct cm_line *l = m->line[line];
    if (l) {
        l->flushed = l->n;
        l->flush_tid = tid;
    }
}

/* Rule: a fence (sfence, mfence, a locked instruction) completes every
 * flush and non-temporal store before it. */
void cm_rule_fence(struct cm_model *m, uint32_t tid)
{
    m->fences++;
    for (size_t i = 0; i < m->nplay;) {
        struct cm_line *l = m->line[m->play[i]];
        size_t before = m->nplay;
        if (l->flushed && l->flush_tid == tid) make_durable(m, l, l->flushed);
        if (m->nplay == before) i++;      /* else play[i] now holds another line */
    }
}

size_t cm_line_variants(const struct cm_line *l, struct cm_variant *out, size_t cap)
{
    size_t k = 0;
    for (uint32_t p = 0; p <= l->n && k < cap; p++) out[k++] = (struct cm_variant){ p, 0, 0 };
    /* a torn group: its later pieces persisted, its first ones not */
    for (uint32_t s = 0; s < l->n;) {
        uint32_t g = l->e[s].group, e = s + 1;
        if (g)
            while (e < l->n && l->e[e].group == g) e++;
        for (uint32_t cut = s + 1; g && cut < e && k < cap; cut++)
            out[k++] = (struct cm_variant){ e, s, cut };
        s = e;
    }
    return k;
}

void cm_line_apply(const struct cm_model *m, const struct cm_line *l, const struct cm_variant *v,
                   unsigned char out[CM_LINE])
{
    memcpy(out, m->media + l->idx * CM_LINE, CM_LINE);
    for (uint32_t i = 0; i < l->n; i++)
        if (cm_variant_has(v, i)) apply_entry(out, &l->e[i]);
}
