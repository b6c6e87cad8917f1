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
 * --json prints one JSON object instead of text (info, check).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int json;
static int nmsgs;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: cairn-pool [--json] COMMAND FILE [ARGS]\n"
        "  info  FILE                 header, root, space use, open transactions\n"
        "  check FILE                 full consistency check; changes nothing\n"
        "  create FILE LAYOUT SIZE    make a pool (SIZE like 64M, 2G; 8M .. 1T)\n"
        "  grow  FILE SIZE            grow a closed pool in place to SIZE\n"
        "  gc    FILE                 recover and free objects the root cannot reach\n"
        "exit status: 0 ok, 1 the pool has errors, 2 usage error or unreadable file\n");
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v <= 0) return -1;
    switch (*end) {
    case 'k': case 'K': v *= 1024; end++; break;
    case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B') end++;
    if (*end == 'B') end++;
    if (*end) return -1;
    *out = (size_t)v;
    return 0;
}

static void emit_text(void *ctx, const char *sev, const char *msg)
{
    (void)ctx;
    if (json) {
        printf("%s{\"severity\":\"%s\",\"message\":\"", nmsgs++ ? "," : "", sev);
        for (const char *p = msg; *p; p++) {
            if (*p == '"' || *p == '\\') putchar('\\');
            putchar(*p);
        }
        printf("\"}");
    } else {
        printf("%s: %s\n", sev, msg);
    }
}

static int cmd_check(const char *path, bool full)
{
    struct cairn_check_report rep;
    if (json) printf("{\"file\":\"%s\",\"messages\":[", path);
    int rc = cairn__check_file(path, full, emit_text, NULL, &rep);
    if (json) {
        printf("],\"errors\":%d,\"objects\":%llu,\"object_bytes\":%llu,\"open_transactions\":%llu,"
               "\"pending_records\":%llu,\"run_chunks\":%llu,\"large_chunks\":%llu,\"free_chunks\":%llu}\n",
               rep.errors, (unsigned long long)rep.objects, (unsigned long long)rep.object_bytes,
               (unsigned long long)rep.open_lanes, (unsigned long long)rep.pending_records,
               (unsigned long long)rep.run_chunks, (unsigned long long)rep.large_chunks,
               (unsigned long long)rep.free_chunks);
    } else if (rep.state_damaged) {
        printf("%s: ERRORS FOUND: which state copy is current cannot be told, so nothing else "
               "was checked\n", path);
    } else if (rc >= 0 && full) {
        printf("%s: %s: %llu reachable objects (%llu bytes), %llu run chunks, %llu large-object "
               "chunks, %llu free chunks of 256 KiB\n", path, rc ? "ERRORS FOUND" : "consistent",
               (unsigned long long)rep.objects, (unsigned long long)rep.object_bytes,
               (unsigned long long)rep.run_chunks, (unsigned long long)rep.large_chunks,
               (unsigned long long)rep.free_chunks);
    }
    return rc < 0 ? 2 : rc;
}

static int cmd_info(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    char head[CAIRN_HEADER_END], why[512];
    memset(head, 0, sizeof head);
    if (fd < 0 || fstat(fd, &st) || pread(fd, head, sizeof head, 0) < 0) {
        fprintf(stderr, "cairn-pool: %s: %s\n", path, strerror(errno));
        return 2;
    }
    close(fd);
    if (cairn__header_check(head, (uint64_t)st.st_size, NULL, why, sizeof why)) {
        fprintf(stderr, "cairn-pool: %s: %s\n", path, why);
        return 2;
    }
    const struct pool_hdr *h = (const void *)head;
    struct pool_state ps;
    cairn__state_read(head, &ps);
    uint64_t clean = *(const uint64_t *)(head + CAIRN_CLEAN_OFF);
    time_t ct = (time_t)h->create_time;
    char tbuf[64];
    strftime(tbuf, sizeof tbuf, "%Y-%m-%d %H:%M:%S UTC", gmtime(&ct));
    struct cairn_check_report rep;
    json = json ? 2 : 0;
    int saved = json;
    json = 0;
    FILE *devnull = fopen("/dev/null", "w");
    FILE *out = stdout;
    stdout = devnull;                           /* summary only: messages are check's job */
    cairn__check_file(path, false, emit_text, NULL, &rep);
    stdout = out;
    fclose(devnull);
    json = saved;
    uint64_t heap_chunks = cairn__heap_chunks(h, ps.size);
    if (json) {
        printf("{\"file\":\"%s\",\"layout\":\"%s\",\"version\":%u,\"pool_id\":%llu,\"uuid\":\"%016llx%016llx\","
               "\"created\":\"%s\",\"size\":%llu,\"heap_offset\":%llu,\"chunks\":%llu,"
               "\"root_offset\":%llu,\"root_size\":%llu,\"root_type\":\"%#llx\",\"clean\":%s,"
               "\"run_chunks\":%llu,\"large_chunks\":%llu,\"free_chunks\":%llu,"
               "\"open_transactions\":%llu,\"pending_records\":%llu}\n",
               path, h->layout, h->version, (unsigned long long)h->pool_id,
               (unsigned long long)h->uuid[0], (unsigned long long)h->uuid[1], tbuf,
               (unsigned long long)ps.size, (unsigned long long)h->heap_off,
               (unsigned long long)heap_chunks, (unsigned long long)ps.root_off,
               (unsigned long long)ps.root_size, (unsigned long long)ps.root_type,
               clean == 1 ? "true" : "false", (unsigned long long)rep.run_chunks,
               (unsigned long long)rep.large_chunks, (unsigned long long)rep.free_chunks,
               (unsigned long long)rep.open_lanes, (unsigned long long)rep.pending_records);
        return 0;
    }
    printf("pool         %s\n", path);
    printf("layout       %s\n", h->layout);
    printf("format       version %u\n", h->version);
    printf("pool id      %llu (uuid %016llx%016llx)\n", (unsigned long long)h->pool_id,
           (unsigned long long)h->uuid[0], (unsigned long long)h->uuid[1]);
    printf("created      %s\n", tbuf);
    printf("size         %llu bytes (%.1f MiB), heap from offset %#llx, %llu chunks of 256 KiB\n",
           (unsigned long long)ps.size, (double)ps.size / 1048576.0,
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

static int cmd_open_close(const char *path, size_t grow_to, bool gc)
{
    struct stat st;
    if (stat(path, &st)) {
        fprintf(stderr, "cairn-pool: %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (gc) {
        /* mark inside the open (not in the background), so the numbers
         * below are final and empty runs go back to the chunk pool */
        setenv("CAIRN_GC", "always", 1);
        setenv("CAIRN_GC_SYNC", "1", 1);
    }
    cairn_pool *p = cairn_pool_open(path, NULL);
    if (!p) {
        fprintf(stderr, "cairn-pool: %s\n", cairn_errormsg());
        return 2;
    }
    int rc = 0;
    if (gc)
        printf("%s: %llu reachable objects kept, %llu KiB of chunks freed\n", path,
               (unsigned long long)p->rec_gc_objects, (unsigned long long)(p->rec_gc_freed >> 10));
    if (grow_to && cairn_pool_grow(p, grow_to)) {
        fprintf(stderr, "cairn-pool: %s\n", cairn_errormsg());
        rc = 2;
    } else if (grow_to) {
        printf("%s: grown to %zu bytes\n", path, grow_to);
    }
    if (cairn_pool_close(p)) {
        fprintf(stderr, "cairn-pool: %s\n", cairn_errormsg());
        rc = 2;
    }
    return rc;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "cairn-pool: unknown option %s\n", argv[i]); usage(stderr); return 2; }
    }
    if (argc - i < 2) { usage(stderr); return 2; }
    const char *cmd = argv[i], *path = argv[i + 1];
    if (!strcmp(cmd, "info")) return cmd_info(path);
    if (!strcmp(cmd, "check")) return cmd_check(path, true);
    if (!strcmp(cmd, "gc")) return cmd_open_close(path, 0, true);
    if (!strcmp(cmd, "grow") || !strcmp(cmd, "create")) {
        size_t size;
        int need = !strcmp(cmd, "grow") ? 3 : 4;
        if (argc - i != need || parse_size(argv[argc - 1], &size)) {
            fprintf(stderr, "cairn-pool: %s needs %s\n", cmd,
                    need == 3 ? "FILE SIZE (e.g. 2G)" : "FILE LAYOUT SIZE (e.g. 64M)");
            return 2;
        }
        if (need == 3) return cmd_open_close(path, size, false);
        cairn_pool *p = cairn_pool_create(path, argv[i + 2], size);
        if (!p) { fprintf(stderr, "cairn-pool: %s\n", cairn_errormsg()); return 2; }
        cairn_pool_close(p);
        printf("%s: created, layout \"%s\", %zu bytes\n", path, argv[i + 2], size);
        return 0;
    }
    fprintf(stderr, "cairn-pool: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
