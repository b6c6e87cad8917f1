/*
 * cairn-pool -- inspect and maintain pool files (the native half of
 * `cairn pool`).
 *
 *   cairn-pool info  FILE          header, root, space use, open transactions
 *   cairn-pool check FILE          full consistency check (read-only)
 *   cairn-pool create FILE LAYOUT SIZE
 *   cairn-pool grow  FILE SIZE     grow in place (pool must not be open)
 *   cairn-pool gc    FILE          open, recover, free what the root cannot reach
 *
 * Exit status: 0 fine, 1 the pool has errors, 2 usage or unreadable file.
 * --json prints one JSON object instead of text, for every command; an
 * error is then {"file": ..., "error": "..."} on stdout (and exit 2).
 *
 * The layout name and the path come from a file that may be hostile: JSON
 * strings escape '"', '\', control characters and bytes that are not UTF-8
 * (as \u00XX, their Latin-1 reading); text output shows control characters
 * and bytes that are not UTF-8 as \xNN.
 *
 * Messages start with argv[0]'s last component ("cairn pool" when the
 * Python CLI runs this tool, "cairn-pool" otherwise).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "cairn-pool";
static int json;

#define SIZE_RANGE "pools are 8 MiB .. 1 TiB (8M .. 1T)"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s [--json] COMMAND FILE [ARGS]\n"
        "  info  FILE                 header, root, space use, open transactions\n"
        "  check FILE                 full consistency check; changes nothing\n"
        "  create FILE LAYOUT SIZE    make a pool\n"
        "  grow  FILE SIZE            grow a closed pool in place to SIZE\n"
        "  gc    FILE                 recover and free objects the root cannot reach\n"
        "SIZE: whole bytes, or a whole number with K, M, G or T (powers of 1024), 8M .. 1T;\n"
        "      no fractions or exponents; rounded down to a multiple of 4 KiB\n"
        "--json: one JSON object for every command, errors as {\"error\": ...}\n"
        "exit status: 0 ok, 1 the pool has errors, 2 usage error or unreadable file\n", prog);
}

/* ---- output of strings from the file ------------------------------------ */

/* Length of the well-formed UTF-8 sequence at p (2..4), or 0. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c >= 0xc2 && c <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
        if (c == 0xe0 && p[1] < 0xa0) return 0;          /* overlong */
        if (c == 0xed && p[1] >= 0xa0) return 0;         /* surrogate */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80) return 0;
        if (c == 0xf0 && p[1] < 0x90) return 0;          /* overlong */
        if (c == 0xf4 && p[1] >= 0x90) return 0;         /* above U+10FFFF */
        return 4;
    }
    return 0;
}

/* s as a JSON string, quotes included. */
static void put_json(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        int n;
        if (c == '"' || c == '\\') { fputc('\\', f); fputc((int)c, f); p++; }
        else if (c == '\n') { fputs("\\n", f); p++; }
        else if (c == '\t') { fputs("\\t", f); p++; }
        else if (c == '\r') { fputs("\\r", f); p++; }
        else if (c < 0x20 || c == 0x7f) { fprintf(f, "\\u%04x", c); p++; }
        else if (c < 0x80) { fputc((int)c, f); p++; }
        else if ((n = utf8_len(p))) { fwrite(p, 1, (size_t)n, f); p += n; }
        else { fprintf(f, "\\u%04x", c); p++; }
    }
    fputc('"', f);
}

/* s for a terminal: control characters and stray bytes as \xNN. */
static void put_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n;
        if (*p >= 0x20 && *p < 0x7f) fputc(*p++, f);
        else if (*p >= 0x80 && (n = utf8_len(p))) { fwrite(p, 1, (size_t)n, f); p += n; }
        else fprintf(f, "\\x%02x", *p++);
    }
}

/* An error: one line on stderr, or {"file":..,"error":..} on stdout. */
static int fail(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *path, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (json) {
        fputc('{', stdout);
        if (path) { fputs("\"file\":", stdout); put_json(stdout, path); fputc(',', stdout); }
        fputs("\"error\":", stdout);
        put_json(stdout, msg);
        fputs("}\n", stdout);
    } else {
        fprintf(stderr, "%s: ", prog);
        put_text(stderr, msg);
        fputc('\n', stderr);
    }
    return 2;
}

/* 1073741824 -> "1 GiB", 15998976 -> "15.3 MiB" */
static const char *human(uint64_t b, char *buf, size_t n)
{
    static const char *unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    uint64_t whole = b, rem = 0;
    while (whole >= 1024 && i < 4) { rem |= whole & 1023; whole >>= 10; i++; }
    if (i == 0 || !rem) snprintf(buf, n, "%llu %s", (unsigned long long)whole, unit[i]);
    else snprintf(buf, n, "%.1f %s", (double)b / (double)(1ull << (10 * i)), unit[i]);
    return buf;
}

/* ---- sizes --------------------------------------------------------------- */

/* K, M, G, T with optional "i" and "B" (KiB, MB, ...), or "B", or nothing.
 * Returns the shift, or -1 if the rest of the text is not a unit. */
static int parse_unit(const char *p)
{
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
    }
    if (shift && (*p == 'i' || *p == 'I')) p++;
    if (*p == 'b' || *p == 'B') p++;
    return *p ? -1 : shift;
}

/* b spelled exactly with the largest unit that divides it: 17301504 -> "16896K" */
static const char *exact(uint64_t b, char *buf, size_t n)
{
    static const char unit[] = " KMGT";
    int i = 0;
    while (i < 4 && b && (b & 1023) == 0) { b >>= 10; i++; }
    snprintf(buf, n, "%llu%.*s", (unsigned long long)b, i ? 1 : 0, unit + i);
    return buf;
}

/* SIZE: whole bytes, or a whole number with K, M, G or T (powers of 1024).
 * Refused with a message naming the problem: a sign, a fraction or an
 * exponent, text that is no size, or a size outside 8 MiB .. 1 TiB. */
static int parse_size(const char *s, uint64_t *out, char *why, size_t whylen)
{
    const char *p = s;
    uint64_t v = 0;
    bool big = false;
    if (*p == '-' && p[1] >= '0' && p[1] <= '9') {
        snprintf(why, whylen, "size %s is negative: %s", s, SIZE_RANGE);
        return -1;
    }
    if (*p < '0' || *p > '9') goto not_a_size;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) big = true;
        else v = v * 10 + d;
    }
    if (*p == '.' || ((*p == 'e' || *p == 'E') &&
                      ((p[1] >= '0' && p[1] <= '9') || p[1] == '+' || p[1] == '-'))) {
        const char *what = *p == '.' ? "a fraction" : "an exponent";
        char *end, hint[96] = "e.g. 64M";
        double d = strtod(s, &end);
        int shift = parse_unit(end);
        if (shift >= 0) {
            d *= (double)(1ull << shift);
            if (d >= 1 && d <= (double)CAIRN_POOL_MAX_SIZE && d == (double)(uint64_t)d) {
                char e[32];
                snprintf(hint, sizeof hint, "write %s", exact((uint64_t)d, e, sizeof e));
            }
        }
        snprintf(why, whylen, "size %s has %s: a size is whole bytes or a whole number of K, M, "
                 "G or T; %s", s, what, hint);
        return -1;
    }
    int shift = parse_unit(p);
    if (shift < 0) goto not_a_size;
    if (!big && v > (UINT64_MAX >> shift)) big = true;
    else v <<= shift;
    if (big || v > CAIRN_POOL_MAX_SIZE) {
        snprintf(why, whylen, "size %s is too large: %s", s, SIZE_RANGE);
        return -1;
    }
    if (v < CAIRN_POOL_MIN_SIZE) {
        snprintf(why, whylen, "size %s is too small: %s", s, SIZE_RANGE);
        return -1;
    }
    *out = v;
    return 0;
not_a_size:
    snprintf(why, whylen, "'%s' is not a size: give bytes or a whole number with K, M, G or T "
             "(e.g. 64M, 2G)", s);
    return -1;
}

/* ---- check ---------------------------------------------------------------- */

/* Messages are written one behind: when the check cannot read the file at
 * all (it returns -1), its one message is the error, not a finding. */
struct emitter {
    const char *path;
    int n;                      /* messages written */
    char sev[16], msg[1024];    /* the one not written yet */
    bool pending;
};

static void emit_flush(struct emitter *e)
{
    if (!e->pending) return;
    e->pending = false;
    if (json) {
        if (e->n == 0) {
            fputs("{\"file\":", stdout);
            put_json(stdout, e->path);
            fputs(",\"messages\":[", stdout);
        }
        printf("%s{\"severity\":", e->n ? "," : "");
        put_json(stdout, e->sev);
        fputs(",\"message\":", stdout);
        put_json(stdout, e->msg);
        fputc('}', stdout);
    } else {
        printf("%s: ", e->sev);
        put_text(stdout, e->msg);
        putchar('\n');
    }
    e->n++;
}

static void emit(void *ctx, const char *sev, const char *msg)
{
    struct emitter *e = ctx;
    emit_flush(e);
    snprintf(e->sev, sizeof e->sev, "%s", sev);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    e->pending = true;
}

static void emit_none(void *ctx, const char *sev, const char *msg)
{
    (void)ctx; (void)sev; (void)msg;
}

static int cmd_check(const char *path)
{
    struct cairn_check_report rep;
    struct emitter e = { .path = path };
    int rc = cairn__check_file(path, true, emit, &e, &rep);
    if (rc < 0)
        return fail(path, "%s", e.pending ? e.msg : "cannot read the pool");
    emit_flush(&e);
    if (json) {
        if (e.n == 0) {
            fputs("{\"file\":", stdout);
            put_json(stdout, path);
            fputs(",\"messages\":[", stdout);
        }
        printf("],\"errors\":%d,\"objects\":%llu,\"object_bytes\":%llu,\"open_transactions\":%llu,"
               "\"pending_records\":%llu,\"run_chunks\":%llu,\"large_chunks\":%llu,\"free_chunks\":%llu}\n",
               rep.errors, (unsigned long long)rep.objects, (unsigned long long)rep.object_bytes,
               (unsigned long long)rep.open_lanes, (unsigned long long)rep.pending_records,
               (unsigned long long)rep.run_chunks, (unsigned long long)rep.large_chunks,
               (unsigned long long)rep.free_chunks);
    } else if (rep.state_damaged) {
        put_text(stdout, path);
        printf(": ERRORS FOUND: which state copy is current cannot be told, so nothing else "
               "was checked\n");
    } else {
        put_text(stdout, path);
        printf(": %s: %llu reachable objects (%llu bytes), %llu run chunks, %llu large-object "
               "chunks, %llu free chunks of 256 KiB\n", rc ? "ERRORS FOUND" : "consistent",
               (unsigned long long)rep.objects, (unsigned long long)rep.object_bytes,
               (unsigned long long)rep.run_chunks, (unsigned long long)rep.large_chunks,
               (unsigned long long)rep.free_chunks);
    }
    return rc;
}

/* ---- info ----------------------------------------------------------------- */

static int cmd_info(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char head[CAIRN_HEADER_END], why[512];
    memset(head, 0, sizeof head);
    if (fd < 0 || fstat(fd, &st) || pread(fd, head, sizeof head, 0) < 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return fail(path, "%s: %s", path, strerror(e));
    }
    close(fd);
    if (!S_ISREG(st.st_mode))
        return fail(path, "%s: not a regular file", path);
    if (cairn__header_check(head, (uint64_t)st.st_size, NULL, why, sizeof why))
        return fail(path, "%s: %s", path, why);
    const struct pool_hdr *h = (const void *)head;
    struct pool_state ps;
    cairn__state_read(head, &ps);
    uint64_t clean = *(const uint64_t *)(head + CAIRN_CLEAN_OFF);
    time_t ct = (time_t)h->create_time;
    char tbuf[64], hb[32];
    struct tm tm;
    if (!gmtime_r(&ct, &tm) || !strftime(tbuf, sizeof tbuf, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(tbuf, sizeof tbuf, "time %lld", (long long)ct);
    struct cairn_check_report rep;
    cairn__check_file(path, false, emit_none, NULL, &rep);    /* summary only */
    uint64_t heap_chunks = cairn__heap_chunks(h, ps.size);
    if (json) {
        fputs("{\"file\":", stdout);
        put_json(stdout, path);
        fputs(",\"layout\":", stdout);
        put_json(stdout, h->layout);
        printf(",\"version\":%u,\"pool_id\":%llu,\"uuid\":\"%016llx%016llx\","
               "\"created\":\"%s\",\"size\":%llu,\"heap_offset\":%llu,\"chunks\":%llu,"
               "\"root_offset\":%llu,\"root_size\":%llu,\"root_type\":\"%#llx\",\"clean\":%s,"
               "\"run_chunks\":%llu,\"large_chunks\":%llu,\"free_chunks\":%llu,"
               "\"open_transactions\":%llu,\"pending_records\":%llu}\n",
               h->version, (unsigned long long)h->pool_id,
               (unsigned long long)h->uuid[0], (unsigned long long)h->uuid[1], tbuf,
               (unsigned long long)ps.size, (unsigned long long)h->heap_off,
               (unsigned long long)heap_chunks, (unsigned long long)ps.root_off,
               (unsigned long long)ps.root_size, (unsigned long long)ps.root_type,
               clean == 1 ? "true" : "false", (unsigned long long)rep.run_chunks,
               (unsigned long long)rep.large_chunks, (unsigned long long)rep.free_chunks,
               (unsigned long long)rep.open_lanes, (unsigned long long)rep.pending_records);
        return 0;
    }
    printf("pool         ");
    put_text(stdout, path);
    printf("\nlayout       ");
    put_text(stdout, h->layout);
    printf("\nformat       version %u\n", h->version);
    printf("pool id      %llu (uuid %016llx%016llx)\n", (unsigned long long)h->pool_id,
           (unsigned long long)h->uuid[0], (unsigned long long)h->uuid[1]);
    printf("created      %s\n", tbuf);
    printf("size         %llu bytes (%s), heap from offset %#llx, %llu chunks of 256 KiB\n",
           (unsigned long long)ps.size, human(ps.size, hb, sizeof hb),
           (unsigned long long)h->heap_off, (unsigned long long)heap_chunks);
    if (ps.root_off)
        printf("root         offset %#llx, %llu bytes, type id %#llx\n", (unsigned long long)ps.root_off,
               (unsigned long long)ps.root_size, (unsigned long long)ps.root_type);
    else
        printf("root         none yet\n");
    printf("state        %s\n", clean == 1 ? "closed cleanly" :
           "not closed cleanly (open now, or crashed: the next open recovers it)");
    printf("space        %llu run chunks, %llu large-object chunks, %llu free chunks (%.1f%% used)\n",
           (unsigned long long)rep.run_chunks, (unsigned long long)rep.large_chunks,
           (unsigned long long)rep.free_chunks,
           heap_chunks ? 100.0 * (double)(rep.run_chunks + rep.large_chunks) / (double)heap_chunks : 0.0);
    printf("transactions %llu unfinished (%llu undo records)\n", (unsigned long long)rep.open_lanes,
           (unsigned long long)rep.pending_records);
    return 0;
}

/* ---- create, grow, gc ----------------------------------------------------- */

static int cmd_create(const char *path, const char *layout, uint64_t req)
{
    cairn_pool *p = cairn_pool_create(path, layout, (size_t)req);
    if (!p) return fail(path, "%s", cairn_errormsg());
    uint64_t size = p->size;
    if (cairn_pool_close(p)) return fail(path, "%s", cairn_errormsg());
    if (json) {
        fputs("{\"file\":", stdout);
        put_json(stdout, path);
        fputs(",\"layout\":", stdout);
        put_json(stdout, layout);
        printf(",\"size\":%llu,\"requested\":%llu}\n", (unsigned long long)size,
               (unsigned long long)req);
        return 0;
    }
    char hb[32];
    put_text(stdout, path);
    fputs(": created, layout \"", stdout);
    put_text(stdout, layout);
    printf("\", %llu bytes (%s", (unsigned long long)size, human(size, hb, sizeof hb));
    if (size != req)
        printf("; %llu rounded down to a multiple of 4 KiB", (unsigned long long)req);
    printf(")\n");
    return 0;
}

static void json_recovery(const struct cairn_recovery *r)
{
    printf("\"recovered\":%s,\"transactions_rolled_back\":%llu,\"records_rolled_back\":%llu",
           r->recovered ? "true" : "false", (unsigned long long)r->transactions_rolled_back,
           (unsigned long long)r->records_rolled_back);
}

static int cmd_open_close(const char *path, uint64_t grow_req, bool gc)
{
    struct stat st;
    if (stat(path, &st))
        return fail(path, "%s: %s", path, strerror(errno));
    if (gc) {
        /* mark inside the open (not in the background), so the numbers
         * below are final and empty runs go back to the chunk pool */
        setenv("CAIRN_GC", "always", 1);
        setenv("CAIRN_GC_SYNC", "1", 1);
    }
    cairn_pool *p = cairn_pool_open(path, NULL);
    if (!p) return fail(path, "%s", cairn_errormsg());
    struct cairn_recovery r;
    cairn_pool_recovery(p, &r);
    if (r.recovered && !json) {
        put_text(stdout, path);
        printf(": was not closed cleanly (crashed): recovered first, %llu transaction(s) rolled "
               "back (%llu undo records)\n", (unsigned long long)r.transactions_rolled_back,
               (unsigned long long)r.records_rolled_back);
    }
    int rc = 0;
    uint64_t old = p->size, want = grow_req & ~(uint64_t)4095;
    if (gc) {
        if (json) {
            fputs("{\"file\":", stdout);
            put_json(stdout, path);
            printf(",\"objects_kept\":%llu,\"bytes_freed\":%llu,", (unsigned long long)r.objects_reachable,
                   (unsigned long long)r.bytes_freed);
            json_recovery(&r);
            fputs("}\n", stdout);
        } else {
            put_text(stdout, path);
            printf(": %llu reachable objects kept, %llu KiB freed\n",
                   (unsigned long long)r.objects_reachable, (unsigned long long)(r.bytes_freed >> 10));
        }
    } else if (grow_req && want <= old) {
        char rounded[96] = "";
        if (want != grow_req)
            snprintf(rounded, sizeof rounded, ", which rounds down to %llu (a multiple of 4 KiB)",
                     (unsigned long long)want);
        rc = fail(path, "%s: cannot grow to %llu bytes%s: the pool is already %llu bytes; give a "
                  "size of at least %llu", path, (unsigned long long)grow_req, rounded,
                  (unsigned long long)old, (unsigned long long)old + 4096);
    } else if (grow_req && cairn_pool_grow(p, (size_t)grow_req)) {
        rc = fail(path, "%s", cairn_errormsg());
    } else if (grow_req) {
        if (json) {
            fputs("{\"file\":", stdout);
            put_json(stdout, path);
            printf(",\"previous_size\":%llu,\"size\":%llu,\"requested\":%llu,",
                   (unsigned long long)old, (unsigned long long)p->size, (unsigned long long)grow_req);
            json_recovery(&r);
            fputs("}\n", stdout);
        } else {
            char hb[32];
            put_text(stdout, path);
            printf(": grown from %llu to %llu bytes (%s", (unsigned long long)old,
                   (unsigned long long)p->size, human(p->size, hb, sizeof hb));
            if (p->size != grow_req)
                printf("; %llu rounded down to a multiple of 4 KiB", (unsigned long long)grow_req);
            printf(")\n");
        }
    }
    if (cairn_pool_close(p))
        rc = fail(path, "%s", cairn_errormsg());
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0][0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--")) { i++; break; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else {
            fail(NULL, "unknown option %s; see %s --help", argv[i], prog);
            return 2;
        }
    }
    if (i >= argc) {
        if (json) return fail(NULL, "no command: info, check, create, grow or gc");
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[i];
    int nargs = argc - i - 1, need;
    const char *what;
    if (!strcmp(cmd, "info") || !strcmp(cmd, "check") || !strcmp(cmd, "gc")) { need = 1; what = "FILE"; }
    else if (!strcmp(cmd, "grow")) { need = 2; what = "FILE SIZE (e.g. 2G)"; }
    else if (!strcmp(cmd, "create")) { need = 3; what = "FILE LAYOUT SIZE (e.g. 64M)"; }
    else return fail(NULL, "unknown command '%s': info, check, create, grow or gc", cmd);
    if (nargs < need)
        return fail(NULL, "%s needs %s", cmd, what);
    if (nargs > need)
        return fail(NULL, "%s takes %s; unexpected argument '%s'", cmd, what, argv[i + 1 + need]);
    const char *path = argv[i + 1];
    if (!strcmp(cmd, "info")) return cmd_info(path);
    if (!strcmp(cmd, "check")) return cmd_check(path);
    if (!strcmp(cmd, "gc")) return cmd_open_close(path, 0, true);
    uint64_t size;
    char why[256];
    if (parse_size(argv[argc - 1], &size, why, sizeof why))
        return fail(path, "%s", why);
    if (!strcmp(cmd, "grow")) return cmd_open_close(path, size, false);
    return cmd_create(path, argv[i + 2], size);
}
