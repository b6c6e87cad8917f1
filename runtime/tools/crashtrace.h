/*
 * crashtrace.h -- a CAIRN_TRACE file read for `cairn crashcheck`, and its
 * replay into the persistency model (crashmodel.h) with a call at every
 * crash point.
 */
#ifndef CAIRN_CRASHTRACE_H
#define CAIRN_CRASHTRACE_H
#include "crashmodel.h"

struct ct_rec {
    uint8_t  type, aux;
    uint16_t size;
    uint32_t loc;
    uint64_t seq, addr, arg;
    uint32_t tid;
    uint32_t data_len;
    size_t   data_off;                /* in ct_trace.data */
};
struct ct_site { uint32_t id, line; const char *file, *func; };

struct ct_trace {
    struct ct_rec *r;                 /* every record but DATA, in seq order */
    size_t n, cap;
    unsigned char *data;
    size_t ndata, capdata;
    struct ct_site *sites;
    size_t nsites;
    bool has_lines, has_stores, ended;
};

/* 0, or -1 with why filled (not a trace, unreadable) */
int  ct_load(const char *path, struct ct_trace *t, char *why, size_t whylen);
void ct_free(struct ct_trace *t);
const struct ct_site *ct_site(const struct ct_trace *t, uint32_t id);
static inline const unsigned char *ct_data(const struct ct_trace *t, const struct ct_rec *r)
{
    return t->data + r->data_off;
}

/* The first pool the trace opens: its id and the largest size it had (0 if none). */
uint32_t ct_first_pool(const struct ct_trace *t, uint64_t *max_size);

enum ct_point { CT_AT_FENCE, CT_AFTER_STORE, CT_AT_CLOSE, CT_AT_END };
/* Called at each crash point, before the fence's rule: a nonzero return stops the replay. */
typedef int (*ct_crash_fn)(void *ctx, struct cm_model *m, const struct ct_rec *at,
                           enum ct_point kind, uint64_t point);
/* Replays t's events on pool_id into m from the pool's first open; returns
 * the number of crash points, or -1 when fn stopped it. */
long ct_replay(const struct ct_trace *t, struct cm_model *m, uint32_t pool_id, bool every_store,
               ct_crash_fn fn, void *ctx);

#endif
