/*
 * check.c -- the full consistency check behind `cairn pool check`.
 *
 * Read-only by construction: the file is opened O_RDONLY and mapped
 * MAP_PRIVATE, so simulating recovery (roll-back, mark from the root) in the
 * copy never touches the pool. It names what is wrong: a bad header, a torn
 * state record, a chunk table word that fails its check, a large object that
 * overlaps another, a pointer that leads to no object, a reachable object
 * that the allocator holds free, and (after a clean close) objects that are
 * allocated but unreachable (leaks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "pool.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct ctx {
    cairn_check_emit emit;
    void *ectx;
    struct cairn_check_report *rep;
    int bad_ptr_reported;
};

static void say(struct ctx *c, const char *sev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(struct ctx *c, const char *sev, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!strcmp(sev, "error")) c->rep->errors++;
    c->emit(c->ectx, sev, msg);
}

static void on_bad_ptr(void *vc, uint64_t from, uint64_t to)
{
    struct ctx *c = vc;
    if (c->bad_ptr_reported++ < 20)
        say(c, "error", "the word at offset %#llx holds a pointer to offset %#llx, which is in no "
            "object (dangling or corrupt pointer)", (unsigned long long)from, (unsigned long long)to);
    else
        c->rep->errors++;
}

static void check_table(cairn_pool *pool, struct ctx *c)
{
    for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
        if (g % CAIRN_ZONE_CHUNKS == 0) continue;
        uint64_t w = *cairn__chunk_table_slot(pool->base, pool->hdr, g);
        if (!cairn__chunk_word_ok(g, w)) {
            say(c, "error", "chunk table entry %llu is corrupt (%#llx)", (unsigned long long)g,
                (unsigned long long)w);
            continue;
        }
        unsigned kind = w & 0xff;
        uint64_t arg = (w >> 8) & 0xffffffffu;
        if (kind == CK_RUN) {
            c->rep->run_chunks++;
            bool exact;
            if (cairn__run_word_class(pool->hdr, arg, &exact) < 0)
                say(c, "error", "chunk %llu: run of unknown size class %#llx%s",
                    (unsigned long long)g, (unsigned long long)arg,
                    exact ? " (the exact-bitmap flag, in a version 1 pool)" : "");
        } else if (kind == CK_LARGE) {
            if (arg == 0 || g + arg > pool->heap.nchunks || (g % CAIRN_ZONE_CHUNKS) + arg > CAIRN_ZONE_CHUNKS) {
                say(c, "error", "chunk %llu: large object of %llu chunks runs past its zone",
                    (unsigned long long)g, (unsigned long long)arg);
                continue;
            }
            for (uint64_t k = 1; k < arg; k++) {
                uint64_t wk = *cairn__chunk_table_slot(pool->base, pool->hdr, g + k);
                if (wk != cairn__chunk_word(g + k, CK_CONT, k)) {
                    say(c, "warning", "chunk %llu: large object overlapped by chunk %llu (freed "
                        "and partly reused; recovery treats it as free)",
                        (unsigned long long)g, (unsigned long long)(g + k));
                    break;
                }
            }
            c->rep->large_chunks += arg;
            g += arg - 1;
        } else if (kind == CK_FREE) {
            c->rep->free_chunks++;
        }
    }
}

/* Both state copies as they read, for a pool whose copies disagree. */
static void describe_states(struct ctx *c, const char *head)
{
    for (int k = 0; k < 2; k++) {
        const struct pool_state *s = (const void *)(head + (k ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF));
        char root[96];
        if (s->root_off)
            snprintf(root, sizeof root, "root at offset %#llx (%llu bytes, type %#llx)",
                     (unsigned long long)s->root_off, (unsigned long long)s->root_size,
                     (unsigned long long)s->root_type);
        else
            snprintf(root, sizeof root, "no root");
        say(c, "info", "state copy %c (offset %u): %s; reads sequence %llu, size %llu, %s",
            "AB"[k], k ? CAIRN_STATE_B_OFF : CAIRN_STATE_A_OFF,
            cairn__state_copy_ok(head, k) ? "intact" : "FAILS ITS CHECKSUM (values unreliable)",
            (unsigned long long)s->seq, (unsigned long long)s->size, root);
    }
}

/* The header and state records of an image (its first CAIRN_HEADER_END
 * bytes in head): 0 when a pool can be mapped from them (ps chosen), else
 * the check's return value, with the problem said. */
static int check_head(struct ctx *c, const char *name, const char *head, uint64_t size, bool regular,
                      struct pool_state *ps)
{
    char why[512];
    if (cairn__header_check(head, size, NULL, why, sizeof why)) {
        say(c, "error", "%s: %s", name, regular ? why : "not a regular file");
        if (regular && cairn__state_check(head, why, sizeof why)) {
            /* readable, but the state copies say it is damaged: show both */
            describe_states(c, head);
            c->rep->state_damaged = true;
            return 1;
        }
        return -1;
    }
    cairn__state_read(head, ps);
    for (int k = 0; k < 2; k++)
        if (!cairn__state_copy_ok(head, k))
            say(c, "info", "state copy %c fails its checksum: torn by the crash that left the "
                "pool dirty; the next open uses copy %c (sequence %llu) and rewrites %c",
                "AB"[k], "AB"[!k], (unsigned long long)ps->seq, "AB"[k]);
    return 0;
}

struct cairn_lane_cache {
    uint64_t base;
    bool kept[CAIRN_NLANES];          /* logs[l] holds lane l's scan under base */
    struct lane_log logs[CAIRN_NLANES];
    struct run **ck_run;              /* the heap's chunk maps, kept for the next check */
    uint32_t *ck_arg;
    uint8_t *ck_kind, *ck_mark;
};

struct cairn_lane_cache *cairn__lane_cache_new(void)
{
    return calloc(1, sizeof(struct cairn_lane_cache));
}

void cairn__lane_cache_free(struct cairn_lane_cache *cache)
{
    if (!cache) return;
    cairn__lane_logs_free(cache->logs);
    cairn_pool *holder = cache->ck_run ? calloc(1, sizeof *holder) : NULL;
    if (holder) {
        holder->heap.ck_run = cache->ck_run;
        holder->heap.ck_arg = cache->ck_arg;
        holder->heap.ck_kind = cache->ck_kind;
        holder->heap.ck_mark = cache->ck_mark;
        cairn__heap_fini(holder);
        free(holder);
    }
    free(cache);
}

/* the lanes reused from a cache, and where the others' scans go */
struct lanes_in { struct cairn_lane_cache *cache; uint64_t base, touched; };

static int check_pool(cairn_pool *pool, const struct pool_state *sp, bool full, struct ctx *cp,
                      const struct lanes_in *li);

int cairn__check_file(const char *path, bool full, cairn_check_emit emit, void *ectx,
                      struct cairn_check_report *rep)
{
    struct ctx c = { emit, ectx, rep, 0 };
    memset(rep, 0, sizeof *rep);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say(&c, "error", "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    char head[CAIRN_HEADER_END];
    memset(head, 0, sizeof head);
    struct pool_state ps;
    if (fstat(fd, &st) || pread(fd, head, sizeof head, 0) < 0) {
        say(&c, "error", "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    int rc = check_head(&c, path, head, (uint64_t)st.st_size, S_ISREG(st.st_mode), &ps);
    if (rc) {
        close(fd);
        return rc;
    }
    cairn_pool *pool = cairn__pool_map_private(path, fd, &ps);
    close(fd);
    if (!pool) {
        say(&c, "error", "%s", cairn_errormsg());
        return -1;
    }
    struct lanes_in li = { NULL, 0, 0 };
    rc = check_pool(pool, &ps, full, &c, &li);
    cairn__pool_unmap_private(pool);
    return rc;
}

int cairn__check_image(const char *name, char *image, uint64_t size, bool full,
                       struct cairn_lane_cache *cache, uint64_t base, uint64_t touched,
                       cairn_check_emit emit, void *ectx, struct cairn_check_report *rep)
{
    struct ctx c = { emit, ectx, rep, 0 };
    memset(rep, 0, sizeof *rep);
    char head[CAIRN_HEADER_END];
    memset(head, 0, sizeof head);
    memcpy(head, image, size < sizeof head ? (size_t)size : sizeof head);
    struct pool_state ps;
    int rc = check_head(&c, name, head, size, true, &ps);
    if (rc) return rc;
    cairn_pool *pool = cairn__pool_on_image(name, image, &ps);
    if (!pool) {
        say(&c, "error", "%s", cairn_errormsg());
        return -1;
    }
    struct lanes_in li = { cache, base, touched };
    rc = check_pool(pool, &ps, full, &c, &li);
    free(pool);
    return rc;
}

/* The check proper, on a pool mapped privately: recovery simulated in it. */
static int check_pool(cairn_pool *pool, const struct pool_state *sp, bool full, struct ctx *cp,
                      const struct lanes_in *li)
{
    struct ctx c = *cp;
    struct cairn_check_report *rep = c.rep;
    struct pool_state ps = *sp;
    char why[512];
    pool->gc.bad_ptr = on_bad_ptr;
    pool->gc.bad_ptr_ctx = &c;
    struct cairn_lane_cache *cache = li->cache;
    if (cache) {                      /* the chunk maps of the last check, reset by heap_init */
        pool->heap.ck_run = cache->ck_run;
        pool->heap.ck_arg = cache->ck_arg;
        pool->heap.ck_kind = cache->ck_kind;
        pool->heap.ck_mark = cache->ck_mark;
    }
    cairn__heap_init(pool);

    uint64_t clean = *(uint64_t *)(pool->base + CAIRN_CLEAN_OFF);
    /* each lane scanned once: what the report says and what the simulated
     * recovery below rolls back */
    struct lane_log own[CAIRN_NLANES], *logs = own;
    memset(own, 0, sizeof own);
    if (cache) {
        logs = cache->logs;
        if (cache->base != li->base) memset(cache->kept, 0, sizeof cache->kept);
        cache->base = li->base;
    }
    for (unsigned l = 0; l < pool->hdr->nlanes && l < CAIRN_NLANES; l++) {
        bool touched = l >= 64 || (li->touched >> l & 1);
        int n;
        if (cache && cache->kept[l] && !touched) {
            n = (int)logs[l].n;
        } else {
            n = cairn__lane_log_read(pool, l, &logs[l], why, sizeof why);
            if (cache) cache->kept[l] = n >= 0 && logs[l].local && !touched;
        }
        if (n < 0) say(&c, "error", "%s", why[0] ? why : "out of memory reading the undo log");
        else if (n > 0) { rep->open_lanes++; rep->pending_records += (uint64_t)n; }
    }
    if (rep->open_lanes)
        say(&c, "info", "%llu unfinished transaction(s) with %llu undo record(s): rolled back at the next open",
            (unsigned long long)rep->open_lanes, (unsigned long long)rep->pending_records);
    if (clean != 1 && clean != 0)
        say(&c, "error", "clean flag holds %#llx, neither 0 nor 1 (corrupt header)", (unsigned long long)clean);
    check_table(pool, &c);

    /* after a clean close: what the bitmaps say is allocated */
    uint64_t *had_objects = NULL;      /* per chunk: objects the bitmaps hold */
    if (clean == 1 && rep->errors == 0) {
        if (cairn__heap_load_clean(pool) == 0) {
            had_objects = calloc(pool->heap.nchunks + 1, sizeof(uint64_t));
            for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
                if (pool->heap.ck_kind[g] == CK_RUN) {
                    struct run *r = pool->heap.ck_run[g];
                    had_objects[g] = (uint64_t)(r->nslots - (uint32_t)atomic_load(&r->nfree));
                } else if (pool->heap.ck_kind[g] == CK_LARGE) {
                    had_objects[g] = 1;
                }
            }
        } else {
            say(&c, "error", "%s", cairn_errormsg());
        }
        cairn__heap_drop_runs(pool);
        cairn__heap_init(pool);
    }
    if (full && rep->errors == 0) {
        uint64_t records, objects, freed;
        cairn__recover_logs(pool, logs, &records);
        if (cairn__gc_rebuild(pool, &objects, &freed)) {
            say(&c, "error", "simulated recovery failed: %s", cairn_errormsg());
        } else {
            rep->objects = objects;
            rep->object_bytes = atomic_load(&pool->heap.used_bytes);
            if (ps.root_off && !cairn__object_start(pool, ps.root_off, true))
                say(&c, "error", "the root (offset %#llx) is not an object", (unsigned long long)ps.root_off);
            if (had_objects) {
                uint64_t leaked = 0, lost = 0;
                for (uint64_t g = 0; g < pool->heap.nchunks; g++) {
                    uint64_t had = had_objects[g], now = 0;
                    if (pool->heap.ck_kind[g] == CK_RUN) {
                        struct run *r = pool->heap.ck_run[g];
                        now = r->nslots - (uint32_t)atomic_load(&r->nfree);
                    } else if (pool->heap.ck_kind[g] == CK_LARGE) {
                        now = 1;
                    }
                    if (had > now) leaked += had - now;
                    if (now > had) lost += now - had;
                }
                if (leaked)
                    say(&c, "warning", "%llu object(s) allocated but unreachable from the root "
                        "(leaked; `cairn pool gc` frees them)", (unsigned long long)leaked);
                if (lost)
                    say(&c, "error", "%llu reachable object(s) are marked free in the allocator "
                        "(use after free in the program?)", (unsigned long long)lost);
            }
        }
    }
    free(had_objects);
    if (cache) {
        cairn__heap_drop_runs(pool);
        cache->ck_run = pool->heap.ck_run;
        cache->ck_arg = pool->heap.ck_arg;
        cache->ck_kind = pool->heap.ck_kind;
        cache->ck_mark = pool->heap.ck_mark;
        pool->heap.ck_run = NULL;
    } else {
        cairn__lane_logs_free(own);
    }
    cairn__heap_fini(pool);
    return rep->errors ? 1 : 0;
}
