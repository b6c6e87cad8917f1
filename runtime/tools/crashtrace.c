/*
 * crashtrace.c -- reading a CAIRN_TRACE file (layout: runtime/trace.c and
 * docs/runtime.md "Traces") and replaying it into the persistency model.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "crashtrace.h"
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC 32u
#define HDR 64u
#define CHUNK 32u

static int grow(void **p, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * each);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const struct ct_rec *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ct_load(const char *path, struct ct_trace *t, char *why, size_t whylen)
{
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whylen, "cannot read the trace %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *f = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (len < HDR || f == MAP_FAILED || memcmp(f, "CAIRNTRC", 8)) {
        snprintf(why, whylen, "%s is not a cairn trace (no CAIRNTRC header)", path);
        if (f && f != MAP_FAILED) munmap((void *)f, len);
        return -1;
    }
    /* per thread: the record DATA continues (threads are few: a small table) */
    enum { MAXT = 4096 };
    static long last_of[MAXT];
    for (int i = 0; i < MAXT; i++) last_of[i] = -1;
    for (size_t pos = HDR; pos + CHUNK <= len;) {
        const unsigned char *c = f + pos;
        if (memcmp(c, "CTCK", 4)) break;
        uint32_t tid, nrec;
        memcpy(&tid, c + 4, 4);
        memcpy(&nrec, c + 8, 4);
        pos += CHUNK;
        for (uint32_t i = 0; i < nrec && pos + REC <= len; i++, pos += REC) {
            const unsigned char *r = f + pos;
            uint32_t slot = tid % MAXT;
            if (r[0] == TR_DATA) {
                long at = last_of[slot];
                unsigned k = r[1] > 30 ? 30 : r[1];
                if (at < 0 || grow((void **)&t->data, &t->capdata, t->ndata + k, 1)) continue;
                memcpy(t->data + t->ndata, r + 2, k);
                t->ndata += k;
                t->r[at].data_len += k;
                continue;
            }
            if (grow((void **)&t->r, &t->cap, t->n + 1, sizeof *t->r)) goto oom;
            struct ct_rec *o = &t->r[t->n];
            memset(o, 0, sizeof *o);
            o->type = r[0];
            o->aux = r[1];
            memcpy(&o->size, r + 2, 2);
            memcpy(&o->loc, r + 4, 4);
            memcpy(&o->seq, r + 8, 8);
            memcpy(&o->addr, r + 16, 8);
            memcpy(&o->arg, r + 24, 8);
            o->tid = tid;
            o->data_off = t->ndata;
            last_of[slot] = (long)t->n++;
            if (o->type == TR_LINE) t->has_lines = true;
            if (o->type == TR_STORE || o->type == TR_STORE_RANGE) t->has_stores = true;
            if (o->type == TR_END) t->ended = true;
        }
    }
    munmap((void *)f, len);
    qsort(t->r, t->n, sizeof *t->r, by_seq);
    for (size_t i = 0; i < t->n; i++) {
        const struct ct_rec *r = &t->r[i];
        if (r->type != TR_SITE) continue;
        struct ct_site *s = realloc(t->sites, (t->nsites + 1) * sizeof *s);
        if (!s) goto oom;
        t->sites = s;
        const char *file = (const char *)ct_data(t, r);
        size_t fl = strnlen(file, r->data_len);
        s[t->nsites++] = (struct ct_site){ r->loc, (uint32_t)r->arg, file,
                                           fl < r->data_len ? file + fl + 1 : "" };
    }
    /* site strings end with a NUL inside their data (trace.c writes it): make sure */
    if (grow((void **)&t->data, &t->capdata, t->ndata + 1, 1) == 0) t->data[t->ndata] = 0;
    return 0;
oom:
    munmap((void *)f, len);
    snprintf(why, whylen, "out of memory reading the trace %s", path);
    ct_free(t);
    return -1;
}

void ct_free(struct ct_trace *t)
{
    free(t->r);
    free(t->data);
    free(t->sites);
    memset(t, 0, sizeof *t);
}

const struct ct_site *ct_site(const struct ct_trace *t, uint32_t id)
{
    for (size_t i = 0; i < t->nsites; i++)
        if (t->sites[i].id == id) return &t->sites[i];
    return NULL;
}

uint32_t ct_first_pool(const struct ct_trace *t, uint64_t *max_size)
{
    uint32_t id = 0;
    *max_size = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ct_rec *r = &t->r[i];
        if (r->type == TR_POOL_OPEN && !id) id = r->loc;
        if ((r->type == TR_POOL_OPEN || r->type == TR_POOL_GROW) && id && r->loc == id &&
            r->arg > *max_size)
            *max_size = r->arg;
    }
    return id;
}

/* the pool offset of a relative address in pool_id, or -1 */
static int64_t pool_off(uint64_t addr, uint32_t pool_id)
{
    if (!(addr & CAIRN_REL_BIT)) return -1;
    if (((addr >> CAIRN_ID_SHIFT) & 0x7fffff) != pool_id) return -1;
    return (int64_t)(addr & (((uint64_t)1 << CAIRN_ID_SHIFT) - 1));
}

long ct_replay(const struct ct_trace *t, struct cm_model *m, uint32_t pool_id, bool every_store,
               ct_crash_fn fn, void *ctx)
{
    enum { MAXT = 4096 };
    static uint8_t flush_kind[MAXT];
    bool open = false;
    long points = 0;
#define POINT(r, k) do { if (fn(ctx, m, (r), (k), (uint64_t)points++)) return -1; } while (0)
    for (size_t i = 0; i < t->n; i++) {
        const struct ct_rec *r = &t->r[i];
        if (r->type == TR_POOL_OPEN && r->loc == pool_id) open = true;
        if (!open) continue;
        int64_t off = pool_off(r->addr, pool_id);
        switch (r->type) {
        case TR_STORE:
        case TR_STORE_RANGE:
            if (off < 0) break;
            if (r->type == TR_STORE) {
                cm_rule_store(m, (uint64_t)off, &r->arg, r->size, r->loc, r->seq);
            } else {
                size_t n = r->arg < r->data_len ? r->arg : r->data_len;
                cm_rule_store(m, (uint64_t)off, ct_data(t, r), n, r->loc, r->seq);
            }
            if (every_store) POINT(r, CT_AFTER_STORE);
            break;
        case TR_FLUSH:
            flush_kind[r->tid % MAXT] = r->aux;
            break;
        case TR_LINE:
            if (off < 0 || r->data_len < CM_LINE) break;
            if (r->aux == TR_LINE_FLUSHED)
                cm_rule_flush(m, (uint64_t)off / CM_LINE, (enum cm_flush)flush_kind[r->tid % MAXT],
                              ct_data(t, r), r->tid, r->seq);
            else if (r->aux == TR_LINE_NT)
                cm_rule_ntstore(m, (uint64_t)off / CM_LINE, ct_data(t, r), r->tid, r->seq);
            else
                cm_rule_untraced(m, (uint64_t)off / CM_LINE, ct_data(t, r), CM_SNAP_FENCE, r->seq);
            break;
        case TR_FENCE:
            POINT(r, CT_AT_FENCE);
            cm_rule_fence(m, r->tid);
            break;
        case TR_POOL_CLOSE:
            if (r->loc == pool_id) POINT(r, CT_AT_CLOSE);
            break;
        case TR_END:
            POINT(r, CT_AT_END);
            break;
        default:
            break;
        }
    }
#undef POINT
    return points;
}
