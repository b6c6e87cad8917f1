/* poolcheck.h -- a closed pool's allocation accounting, as `cairn pool check`
 * reports it: objects the root reaches, objects the allocator holds that
 * the root cannot reach (leaks), and errors. Include after harness.h and
 * internal.h. */
#ifndef CAIRN_TEST_POOLCHECK_H
#define CAIRN_TEST_POOLCHECK_H
#include <inttypes.h>

struct t_check { int errors; uint64_t reachable, leaked; };

static void t_check_emit(void *ctx, const char *sev, const char *msg)
{
    struct t_check *c = ctx;
    unsigned long long n;
    if (!strcmp(sev, "warning") && strstr(msg, "leaked") &&
        sscanf(msg, "%llu object(s) allocated but unreachable", &n) == 1)
        c->leaked += n;
    if (strcmp(sev, "info"))
        fprintf(stderr, "  pool check: %s: %s\n", sev, msg);
}

/* 0: the check ran (out filled in); -1: the file is not a pool */
static inline int t_check_pool(const char *path, struct t_check *out)
{
    struct cairn_check_report rep;
    memset(out, 0, sizeof *out);
    if (cairn__check_file(path, true, t_check_emit, out, &rep) < 0) return -1;
    out->errors = rep.errors;
    out->reachable = rep.objects;
    return 0;
}
#endif
