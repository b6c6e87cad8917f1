/* crashsim.h -- power loss simulated at every fence, for one open pool.
 *
 * A SIGKILL leaves every store in the page cache; a power loss keeps only
 * what reached the media. The runtime's persistence layer tells this
 * engine (cairn__persist_seam, runtime/persist.c) of every line it flushes
 * or writes non-temporally and of every fence. The engine keeps M, the
 * media image: what a power loss right now would leave. At a fence, the
 * lines that may or may not have reached the media are
 *   - the lines flushed or written non-temporally since the last fence, and
 *   - lines stored to and never flushed (a cache may evict them any time);
 * each combination of them is one crash state: M with some of those lines
 * replaced by their flushed or current contents (every combination when
 * there are at most 16, else none, all and 10 seeded random ones), plus 2
 * states per fence whose lines mix old and new 8-byte words (x86 promises
 * 8-byte atomicity only). Each crash state is written to a file and
 *     /proc/PID/exe check STATE-FILE COMMITTED INFLIGHT EXTRA
 * is run on it: the program's own checker, which opens the state (recovery)
 * and says with its exit code whether what it finds is one of the states
 * the program had committed (COMMITTED: the last committed step; INFLIGHT:
 * the step whose commit is in progress, or 0).
 *
 * Used by tests/unit/test_crashstates.c (the runtime API) and
 * tests/compiler/programs/crashstates_cc.c (stores logged by cairn-cc).
 * The including file needs internal.h (the pool's mapping and the seam).
 * One pool at a time; not thread-safe (the workloads are single-threaded).
 */
#ifndef CAIRN_TEST_CRASHSIM_H
#define CAIRN_TEST_CRASHSIM_H
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* set by the workload around each step */
static int crashsim_committed, crashsim_inflight;
/* every Nth crash state, the checker is asked (CRASHSIM_NESTED=1 in its
 * environment) to recover that state under simulated power loss too: 0 never */
static long crashsim_nested_every;
/* results */
static long crashsim_states, crashsim_fences, crashsim_failures, crashsim_max_lines;

static char *cs_base;                 /* the pool's mapping */
static size_t cs_size, cs_nlines;
static unsigned char *cs_media;       /* M */
static unsigned char *cs_pending;     /* contents of lines flushed since the last fence */
static unsigned char *cs_is_pending;
static const char *cs_img, *cs_extra;
static uint64_t cs_rng = 0x9e3779b97f4a7c15ULL;
struct cs_cand { size_t line; const unsigned char *v[3]; int nv; };
static struct cs_cand *cs_cands;

static inline uint64_t cs_rand(void)
{
    cs_rng ^= cs_rng << 13;
    cs_rng ^= cs_rng >> 7;
    cs_rng ^= cs_rng << 17;
    return cs_rng;
}

static inline int cs_spawn_check(void)
{
    char c[16], f[16], exe[64];
    snprintf(c, sizeof c, "%d", crashsim_committed);
    snprintf(f, sizeof f, "%d", crashsim_inflight);
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)getpid());
    char *argv[] = { exe, "check", (char *)cs_img, c, f, (char *)cs_extra, NULL };
    pid_t pid;
    if (posix_spawn(&pid, exe, NULL, NULL, argv, environ) != 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* M with the chosen versions (choice[i] indexes cands[i].v; -1: mix words) */
static inline int cs_write_state(size_t n, const int *choice)
{
    int fd = open(cs_img, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    int ok = pwrite(fd, cs_media, cs_size, 0) == (ssize_t)cs_size;
    for (size_t i = 0; ok && i < n; i++) {
        const struct cs_cand *c = &cs_cands[i];
        unsigned char line[64];
        if (choice[i] >= 0) {
            memcpy(line, c->v[choice[i]], 64);
        } else {
            for (int w = 0; w < 8; w++)
                memcpy(line + w * 8, c->v[cs_rand() % (uint64_t)c->nv] + w * 8, 8);
        }
        ok = pwrite(fd, line, 64, (off_t)(c->line * 64)) == 64;
    }
    close(fd);
    return ok ? 0 : -1;
}

static inline void cs_try(size_t n, const int *choice)
{
    if (cs_write_state(n, choice) != 0) {
        fprintf(stderr, "crashsim: cannot write %s: %s\n", cs_img, strerror(errno));
        exit(2);
    }
    crashsim_states++;
    int nested = crashsim_nested_every && crashsim_states % crashsim_nested_every == 0;
    if (nested) setenv("CRASHSIM_NESTED", "1", 1);
    int rc = cs_spawn_check();
    if (nested) unsetenv("CRASHSIM_NESTED");
    if (rc != 0) {
        crashsim_failures++;
        fprintf(stderr, "crash state %ld (fence %ld, committed %d, in flight %d, %zu lines in "
                        "play) failed: exit %d\n", crashsim_states, crashsim_fences,
                crashsim_committed, crashsim_inflight, n, rc);
    }
}

static inline void cs_fence(void)
{
    if (!cs_base) return;                           /* nothing written to the pool yet */
    crashsim_fences++;
    size_t n = 0;
    for (size_t l = 0; l < cs_nlines; l++) {
        const unsigned char *cur = (unsigned char *)cs_base + l * 64, *old = cs_media + l * 64;
        const unsigned char *pend = cs_pending + l * 64;
        int dirty = memcmp(cur, old, 64) != 0;
        if (!cs_is_pending[l] && !dirty) continue;
        struct cs_cand *c = &cs_cands[n];
        c->line = l;
        c->nv = 0;
        c->v[c->nv++] = old;
        if (cs_is_pending[l] && memcmp(pend, old, 64)) c->v[c->nv++] = pend;
        if (dirty && (!cs_is_pending[l] || memcmp(pend, cur, 64))) c->v[c->nv++] = cur;
        if (c->nv > 1) n++;                         /* else: flushed with the value it had */
    }
    if ((long)n > crashsim_max_lines) crashsim_max_lines = (long)n;
    if (n) {
        int *choice = calloc(n, sizeof *choice);
        if (!choice) exit(2);
        double combos = 1;
        for (size_t i = 0; i < n; i++) combos *= cs_cands[i].nv;
        if (combos <= 16) {                         /* every combination */
            for (long k = 0; k < (long)combos; k++) {
                long q = k;
                for (size_t i = 0; i < n; i++) {
                    choice[i] = (int)(q % cs_cands[i].nv);
                    q /= cs_cands[i].nv;
                }
                cs_try(n, choice);
            }
        } else {                                    /* none, all newest, and a sample */
            for (size_t i = 0; i < n; i++) choice[i] = 0;
            cs_try(n, choice);
            for (size_t i = 0; i < n; i++) choice[i] = cs_cands[i].nv - 1;
            cs_try(n, choice);
            for (int s = 0; s < 10; s++) {
                for (size_t i = 0; i < n; i++) choice[i] = (int)(cs_rand() % (uint64_t)cs_cands[i].nv);
                cs_try(n, choice);
            }
        }
        for (int s = 0; s < 2; s++) {               /* torn lines: words of any version */
            for (size_t i = 0; i < n; i++) choice[i] = -1;
            cs_try(n, choice);
        }
        free(choice);
    }
    /* the fence completes: what was flushed is on the media */
    for (size_t l = 0; l < cs_nlines; l++)
        if (cs_is_pending[l]) {
            memcpy(cs_media + l * 64, cs_pending + l * 64, 64);
            cs_is_pending[l] = 0;
        }
}

static inline void cs_seam(int what, const void *p, size_t len)
{
    if (what == CAIRN_SEAM_FENCE) {
        cs_fence();
        return;
    }
    if (!cs_base) {                                 /* begun on a file: its pool is opening */
        cairn_pool *pool = cairn__pool_of_addr(p);
        if (!pool || pool->size != cs_size) return;
        cs_base = pool->base;
    }
    uintptr_t lo = (uintptr_t)p, hi = lo + len, b = (uintptr_t)cs_base;
    if (lo < b || hi > b + cs_size) return;          /* another pool */
    for (size_t l = (lo - b) / 64; b + l * 64 < hi; l++) {
        memcpy(cs_pending + l * 64, cs_base + l * 64, 64);
        cs_is_pending[l] = 1;
    }
}

static inline void cs_alloc(size_t size, const char *state_path, const char *extra)
{
    cs_size = size;
    cs_nlines = cs_size / 64;
    cs_img = state_path;
    cs_extra = extra;
    cs_media = malloc(cs_size);
    cs_pending = malloc(cs_size);
    cs_is_pending = calloc(cs_nlines, 1);
    cs_cands = calloc(cs_nlines, sizeof *cs_cands);
    if (!cs_media || !cs_pending || !cs_is_pending || !cs_cands) {
        fprintf(stderr, "crashsim: out of memory\n");
        exit(2);
    }
}

/* Start simulating power loss on pool: what it holds now is taken as on
 * the media (call it right after an open, which fences what it wrote).
 * extra is passed to the checker as its last argument. */
static inline void crashsim_begin(cairn_pool *pool, const char *state_path, const char *extra)
{
    cs_alloc(pool->size, state_path, extra);
    cs_base = pool->base;
    memcpy(cs_media, cs_base, cs_size);
    cairn__persist_seam = cs_seam;
}

/* The same for a pool file about to be opened (its recovery is simulated):
 * the file is the media; the mapping is found at the first flush. */
static inline void crashsim_begin_file(const char *path, const char *state_path, const char *extra)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(path); exit(2); }
    cs_alloc((size_t)st.st_size, state_path, extra);
    if (pread(fd, cs_media, cs_size, 0) != (ssize_t)cs_size) { perror(path); exit(2); }
    close(fd);
    cs_base = NULL;
    cairn__persist_seam = cs_seam;
}

/* The full check of a closed pool file (cairn__check_file): 0 when it finds
 * no error and no leak; *objects = the objects allocated in it. */
static int cs_problems;
static inline void cs_on_check(void *ctx, const char *sev, const char *msg)
{
    (void)ctx;
    if (strstr(msg, "leaked") || !strcmp(sev, "error")) {
        fprintf(stderr, "check: %s: %s\n", sev, msg);
        cs_problems++;
    }
}

static inline int crashsim_check_file(const char *path, unsigned long long *objects)
{
    struct cairn_check_report rep;
    memset(&rep, 0, sizeof rep);
    cs_problems = 0;
    int rc = cairn__check_file(path, true, cs_on_check, NULL, &rep);
    *objects = rep.objects;
    if (rc != 0) fprintf(stderr, "full check of %s: %d\n", path, rc);
    return rc != 0 || cs_problems;
}

static inline void crashsim_end(void)
{
    cairn__persist_seam = NULL;
    free(cs_media);
    free(cs_pending);
    free(cs_is_pending);
    free(cs_cands);
    unlink(cs_img);
}
#endif
