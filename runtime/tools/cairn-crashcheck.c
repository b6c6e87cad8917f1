/*
 * cairn-crashcheck -- every crash state a trace allows, built and checked
 * (the native half of `cairn crashcheck`; docs/crashcheck.md).
 *
 *   cairn-crashcheck [options] TRACE IMAGES_DIR
 *
 * TRACE was written with CAIRN_TRACE and CAIRN_TRACE_IMAGES=IMAGES_DIR
 * (runtime/trace.c): the image of the first pool the program opened, and
 * every line it flushed, streamed or changed between fences. The trace is
 * replayed into the persistency model (crashmodel.h); at each crash point
 * (every fence, or also every traced store) the states between "only what
 * is durable" and "everything written" are built and checked.
 *
 * How a state is checked without spawning a process per state: the media
 * image is one file on tmpfs, mapped shared; this process writes a state's
 * lines into it, and a checker process forked once at start runs recovery
 * and the pool check in its own private mapping of the file, kept across
 * states (cairn__check_image; the pages recovery dirtied are dropped after
 * each check), or forks a child that copies the file and runs the user's
 * --check command. The lines are then put back. Every --nested-every'th state also has recovery crash midway and
 * the pool opened (recovered) again.
 *
 * Exit status: 0 no state failed, 1 one did, 2 usage or set-up error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "crashtrace.h"
#include "internal.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
    const char *check;               /* user command, {pool} replaced; NULL: built-in */
    bool every_store;
    uint64_t max_states;             /* per crash point */
    uint64_t seed;
    const char *json, *keep, *workdir;
    unsigned jobs, nested_every;
    bool quiet;
    enum { PRUNE_AUTO, PRUNE_ALWAYS, PRUNE_NEVER } prune;
} opt = { .max_states = 4096, .seed = 1, .jobs = 1, .nested_every = 64 };

/* the read tracker (readtrack.c) and the pool check it runs under for the
 * built-in check; empty when not found (no pruning then) */
static char readtrack_lib[4096], pool_tool[4096];

static void die2(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die2(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cairn crashcheck: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the checker: forked once; the built-in check runs in it ---- */
/* acks: what the program was told had happened before the crash point
 * (ack_count), handed to a --check command in its environment */
struct acks { uint32_t commits, grows, closes; };
/* touched: the lanes the media changed in since the last request
 * (media_wrote); base: 0, one name for the image the checker's lane cache
 * follows (cairn__check_image: a lane's scan is reused while no request
 * since it was kept touched the lane) */
struct req { uint64_t state; uint32_t nested; uint32_t track; uint32_t isolate; struct acks acks;
             uint64_t base, touched; };
struct rsp { int32_t status; };

static char media_path[4096], copy_path[4096], log_path[4096], pages_path[4096], reads_path[4096],
    diff_path[4096];

/* A copy of a pool file that leaves out what is zero: only the source's
 * data extents (SEEK_DATA/SEEK_HOLE) are read, and only their non-zero
 * 4 KiB blocks written, the rest a hole of the same size. A 64 MiB pool
 * that holds little costs what it holds, in time and in tmpfs pages (the
 * media file, each nested check's and --check's copy, a kept image). */
static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    struct stat st;
    int rc = -1;
    static uint64_t buf[1 << 13];   /* 64 KiB */
    if (in < 0 || out < 0 || fstat(in, &st)) goto done;
    for (off_t pos = 0; pos < st.st_size;) {
        off_t d = lseek(in, pos, SEEK_DATA), h;
        if (d < 0 && errno == ENXIO) break;   /* a hole to the end */
        if (d < 0) d = pos;                   /* no SEEK_DATA: every byte is data */
        h = lseek(in, d, SEEK_HOLE);
        if (h < 0 || h > st.st_size) h = st.st_size;
        for (off_t o = d; o < h;) {
            size_t want = (size_t)(h - o) < sizeof buf ? (size_t)(h - o) : sizeof buf;
            ssize_t n = pread(in, buf, want, o);
            if (n <= 0) goto done;
            for (size_t b = 0; b < (size_t)n; b += 4096) {
                size_t len = (size_t)n - b < 4096 ? (size_t)n - b : 4096;
                const uint64_t *w = buf + b / 8;
                uint64_t any = 0;
                for (size_t i = 0; i < len / 8; i++) any |= w[i];
                for (size_t i = len / 8 * 8; i < len; i++) any |= ((const unsigned char *)w)[i];
                if (any && pwrite(out, w, len, o + (off_t)b) != (ssize_t)len) goto done;
            }
            o += n;
        }
        pos = h;
    }
    if (ftruncate(out, st.st_size) == 0) rc = 0;
done:
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    return rc;
}

/* What a check said. A check in place collects it in memory (held) and
 * writes it to the log only when the state fails: a passing state's
 * messages (a rolled-back transaction's "info") cost no write. */
static int check_problems;
static struct { char *buf; size_t len, cap; bool on; } held;

static void on_check(void *ctx, const char *sev, const char *msg)
{
    bool after_close = ctx != NULL;
    if (!strcmp(sev, "error") || (after_close && strstr(msg, "leaked"))) check_problems++;
    if (!held.on) {
        fprintf(stderr, "check: %s: %s\n", sev, msg);
        return;
    }
    size_t need = held.len + strlen(sev) + strlen(msg) + 12;
    if (need > held.cap) {
        char *b = realloc(held.buf, need * 2);
        if (!b) return;
        held.buf = b;
        held.cap = need * 2;
    }
    held.len += (size_t)sprintf(held.buf + held.len, "check: %s: %s\n", sev, msg);
}

/* recovery and the pool check in a private mapping: 0 when it finds nothing */
static int builtin_check(const char *path, bool after_close)
{
    struct cairn_check_report rep;
    memset(&rep, 0, sizeof rep);
    check_problems = 0;
    int rc = cairn__check_file(path, true, on_check, after_close ? (void *)1 : NULL, &rep);
    return rc != 0 || check_problems ? 1 : 0;
}

static int user_check(const char *path)
{
    size_t n = strlen(opt.check) + 1;
    for (const char *c = opt.check; (c = strstr(c, "{pool}")); c += 6) n += strlen(path);
    char *cmd = malloc(n);
    if (!cmd) return 125;
    char *o = cmd;
    for (const char *c = opt.check; *c;) {
        if (!strncmp(c, "{pool}", 6)) {
            o = stpcpy(o, path);
            c += 6;
        } else {
            *o++ = *c++;
        }
    }
    *o = 0;
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    fprintf(stderr, "cannot run /bin/sh: %s\n", strerror(errno));
    return 125;
}

static int fence_to_crash, fences_seen;
static void crash_in_recovery(int what, const void *p, size_t len)
{
    (void)p;
    (void)len;
    if (what == CAIRN_SEAM_FENCE && ++fences_seen == fence_to_crash) _exit(0);
}

/* A crash during recovery (at its k-th fence, everything it wrote kept, as a
 * killed process leaves it), then the pool recovered again and closed: the
 * result must check clean, leaks included (DESIGN.md invariants 3 and 4). */
static int nested_check(uint32_t k)
{
    if (copy_file(media_path, copy_path)) return 125;
    pid_t g = fork();
    if (g == 0) {
        fence_to_crash = (int)k;
        cairn__persist_seam = crash_in_recovery;
        cairn_pool *p = cairn_pool_open(copy_path, NULL);
        cairn__persist_seam = NULL;
        if (p) cairn_pool_close(p);
        _exit(0);
    }
    int st;
    if (g < 0 || waitpid(g, &st, 0) < 0) return 125;
    if (!WIFEXITED(st)) {
        fprintf(stderr, "recovery (stopped at its fence %u) died: signal %d\n", k,
                WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return 1;
    }
    if (builtin_check(copy_path, false)) {
        fprintf(stderr, "the image fails its check after recovery crashed at its fence %u\n", k);
        return 1;
    }
    cairn_pool *p = cairn_pool_open(copy_path, NULL);
    if (!p) {
        fprintf(stderr, "opening the image again after recovery crashed at its fence %u failed: %s\n",
                k, cairn_errormsg());
        return 1;
    }
    cairn_pool_close(p);
    if (builtin_check(copy_path, true)) {
        fprintf(stderr, "after a second recovery and a clean close the image fails its check\n");
        return 1;
    }
    return 0;
}

/* The check on a copy of the image with the read tracker preloaded: the
 * user's command, or `cairn-pool check` standing for the built-in check
 * (the same cairn__check_file). The lines it touches go to reads_path. */
static int tracked_check(void)
{
    if (copy_file(media_path, copy_path)) return 125;
    const char *pre = getenv("LD_PRELOAD");
    char *both = malloc(strlen(readtrack_lib) + (pre ? strlen(pre) : 0) + 2);
    if (!both) return 125;
    sprintf(both, "%s%s%s", readtrack_lib, pre && *pre ? " " : "", pre && *pre ? pre : "");
    setenv("LD_PRELOAD", both, 1);
    setenv("CAIRN_READTRACK_FILE", copy_path, 1);
    setenv("CAIRN_READTRACK_PAGES", pages_path, 1);
    setenv("CAIRN_READTRACK_OUT", reads_path, 1);
    setenv("CAIRN_READTRACK_DIFF", diff_path, 1);
    /* the background collector's thread blocks signals: a fault there
     * cannot be tracked, so the mark and sweep run in the opening thread */
    setenv("CAIRN_GC_SYNC", "1", 1);
    if (opt.check) return user_check(copy_path);
    execl(pool_tool, "cairn-pool", "check", copy_path, (char *)NULL);
    fprintf(stderr, "cannot run %s: %s\n", pool_tool, strerror(errno));
    return 125;
}

static int run_one(const struct req *q)
{
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log >= 0) {
        dup2(log, 1);
        dup2(log, 2);
        close(log);
    }
    if (opt.check) {   /* a tracked run sees the same acknowledgments, so it reads what the check reads */
        char v[3][16];
        snprintf(v[0], sizeof v[0], "%u", q->acks.commits);
        snprintf(v[1], sizeof v[1], "%u", q->acks.grows);
        snprintf(v[2], sizeof v[2], "%u", q->acks.closes);
        setenv("CAIRN_CRASH_COMMITS", v[0], 1);
        setenv("CAIRN_CRASH_GROWS", v[1], 1);
        setenv("CAIRN_CRASH_CLOSES", v[2], 1);
    }
    if (q->track) return tracked_check();
    if (opt.check) {
        if (copy_file(media_path, copy_path)) return 125;
        return user_check(copy_path);
    }
    if (builtin_check(media_path, false)) return 1;
    return q->nested ? nested_check(q->nested) : 0;
}

/* The built-in check of a state in the checker itself, with no fork: on
 * the checker's one private mapping of the media file, which shows the
 * media's lines as the explorer wrote them. The mapping is read-only; the
 * first write of the check's simulated recovery to a page faults, and the
 * handler makes that page writable (a private copy) and lists it. After the
 * check only the listed pages are dropped (MADV_DONTNEED: the media's
 * contents again) and made read-only, so the pages the check only read stay
 * mapped for the next state. Without the handler (sigaction refused) the
 * mapping is writable and the whole of it is dropped after each check. */
static char *image;                  /* MAP_PRIVATE of media_path; NULL: fork per state */
static uint64_t image_size;
static struct cairn_lane_cache *lane_cache;
static size_t page_size;
static uint64_t *dirty;              /* page offsets the check wrote; NULL: not tracked */
static size_t ndirty;
static volatile sig_atomic_t tracking;
/* Pages the checks keep writing (a lane's header, the heap pages its undo
 * records restore) stay private and writable instead: before each check
 * they are copied again from media_view, a shared view of the media file,
 * which costs less than a fault, an mprotect and a madvise for each. Up to
 * HOT_PAGES of them, the first pages written; every HOT_RELEARN checks
 * they are dropped and the set is learnt again. */
#define HOT_PAGES 16
#define HOT_RELEARN 1024
static const char *media_view;
static uint64_t hot[HOT_PAGES];
static size_t nhot;
static uint64_t checks_in_place;

static void on_write_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char *a = si->si_addr;
    if (tracking && dirty && si->si_code == SEGV_ACCERR && a >= image && a < image + image_size &&
        ndirty < image_size / page_size) {
        char *pg = image + ((uint64_t)(a - image) & ~(uint64_t)(page_size - 1));
        if (!mprotect(pg, page_size, PROT_READ | PROT_WRITE)) {
            dirty[ndirty++] = (uint64_t)(pg - image);
            return;
        }
    }
    signal(sig, SIG_DFL);            /* a real fault: the access repeats and kills the checker */
}

static int by_offset(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void image_map(void)
{
    if (opt.check) return;
    int fd = open(media_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !st.st_size) {
        if (fd >= 0) close(fd);
        return;
    }
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_write_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    dirty = st.st_size % (off_t)page_size == 0 ? malloc((size_t)st.st_size / page_size * sizeof *dirty) : NULL;
    struct sigaction now;            /* a sanitizer may keep its own handler: then untracked */
    if (dirty && (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGSEGV, NULL, &now) ||
                  now.sa_sigaction != on_write_fault)) {
        free(dirty);
        dirty = NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, dirty ? PROT_READ : PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return;
    if (dirty) {
        fd = open(media_path, O_RDONLY | O_CLOEXEC);
        void *v = fd < 0 ? MAP_FAILED : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (fd >= 0) close(fd);
        media_view = v == MAP_FAILED ? NULL : v;
    }
    lane_cache = cairn__lane_cache_new();
    image = p;
    image_size = (uint64_t)st.st_size;
    /* the check's messages go to the log, emptied before each state
     * (appending: a forked check's output may have shortened it) */
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (log >= 0) {
        dup2(log, 2);
        close(log);
    }
}

/* the pages the check wrote back to the media's contents, read-only again
 * (a page kept hot: left as it is, copied from the media before the next
 * check) */
static void image_restore(void)
{
    if (!dirty) {
        if (madvise(image, (size_t)image_size, MADV_DONTNEED)) goto fail;
        return;
    }
    if (++checks_in_place % HOT_RELEARN == 0)
        while (nhot) dirty[ndirty++] = hot[--nhot];
    size_t keep = 0;
    for (size_t i = 0; i < ndirty; i++) {
        if (media_view && nhot < HOT_PAGES && checks_in_place % HOT_RELEARN) hot[nhot++] = dirty[i];
        else dirty[keep++] = dirty[i];
    }
    ndirty = keep;
    if (ndirty > 1) qsort(dirty, ndirty, sizeof *dirty, by_offset);
    for (size_t i = 0; i < ndirty;) {
        size_t j = i + 1;
        while (j < ndirty && dirty[j] == dirty[j - 1] + page_size) j++;
        size_t len = (j - i) * page_size;
        if (madvise(image + dirty[i], len, MADV_DONTNEED) || mprotect(image + dirty[i], len, PROT_READ))
            goto fail;
        i = j;
    }
    ndirty = 0;
    return;
fail:
    fprintf(stderr, "cannot restore the checker's image: %s\n", strerror(errno));
    _exit(125);
}

static int inplace_check(const struct req *q)
{
    struct stat st;
    if (fstat(2, &st) || (st.st_size > 0 && ftruncate(2, 0))) {
        int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        if (log >= 0) {
            dup2(log, 2);
            close(log);
        }
    }
    for (size_t i = 0; i < nhot; i++) memcpy(image + hot[i], media_view + hot[i], page_size);
    struct cairn_check_report rep;
    check_problems = 0;
    held.len = 0;
    held.on = true;
    tracking = 1;
    int rc = cairn__check_image(media_path, image, image_size, true, lane_cache, q->base,
                                q->touched, on_check, NULL, &rep);
    tracking = 0;
    held.on = false;
    image_restore();
    rc = rc != 0 || check_problems ? 1 : 0;
    if (rc && held.len) {
        ssize_t w = write(2, held.buf, held.len);   /* without them the verdict still stands */
        (void)w;
    }
    return rc;
}

static void checker_loop(int in, int out)
{
    struct req q;
    uint64_t touched = 0;            /* lanes changed since the last check in place */
    image_map();
    while (read(in, &q, sizeof q) == (ssize_t)sizeof q) {
        struct rsp r = { 125 };
        touched |= q.touched;
        if (image && !q.track && !q.nested && !q.isolate) {
            q.touched = touched;
            touched = 0;
            r.status = inplace_check(&q);
        } else {
            pid_t c = fork();
            if (c == 0) _exit(run_one(&q));
            int st;
            if (c > 0 && waitpid(c, &st, 0) == c)
                r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        }
        if (write(out, &r, sizeof r) != (ssize_t)sizeof r) break;
    }
    _exit(0);
}

static int to_checker = -1, from_checker = -1;
static pid_t checker_pid;

static void checker_start(void)
{
    int a[2], b[2];
    if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC)) die2("cannot make a pipe: %s", strerror(errno));
    checker_pid = fork();
    if (checker_pid < 0) die2("cannot fork the checker: %s", strerror(errno));
    if (checker_pid == 0) {
        close(a[1]);
        close(b[0]);
        checker_loop(a[0], b[1]);
    }
    close(a[0]);
    close(b[1]);
    to_checker = a[1];
    from_checker = b[0];
}

static void checker_stop(void);

/* The undo lanes whose lines the media file changed in since the last
 * request (bit l: lane l; a header line: every lane): the checker reuses
 * its scans of the others (cairn__check_image's lane cache). Every write to
 * the media goes through media_wrote: the state's lines written and put
 * back, the tracked runs' lines, and what the model made durable. */
static uint64_t lanes_written = ~0ull;

static void media_wrote(const unsigned char *media, uint64_t line)
{
    const struct pool_hdr *hd = (const void *)media;
    uint64_t off = line * CM_LINE;
    if (off < CAIRN_HEADER_END || !hd->lane_size) lanes_written = ~0ull;
    else if (off >= hd->lanes_off && (off - hd->lanes_off) / hd->lane_size < hd->nlanes)
        lanes_written |= 1ull << ((off - hd->lanes_off) / hd->lane_size % 64);
}

static void on_durable(void *ctx, uint64_t line)
{
    media_wrote(((struct cm_model *)ctx)->media, line);
}

static void put_line(struct cm_model *m, uint64_t line, const unsigned char bytes[CM_LINE])
{
    memcpy(m->media + line * CM_LINE, bytes, CM_LINE);
    media_wrote(m->media, line);
}

/* A state whose check ran in the checker and killed it is checked again in
 * a child of a new checker, whose exit status is the verdict. */
static int check_state(uint64_t state, uint32_t nested, uint32_t track, struct acks acks)
{
    /* test seam: every lane scanned again for every state, the verdicts
     * the kept scans must reproduce (tests/crashcheck/test_checker.py) */
    static int rescan = -1;
    if (rescan < 0) rescan = getenv("CAIRN_TEST_RESCAN_LANES") != NULL;
    struct req q = { state, nested, track, 0, acks, 0, rescan ? ~0ull : lanes_written };
    lanes_written = 0;
    struct rsp r;
    for (;; q.isolate = 1) {
        if (write(to_checker, &q, sizeof q) == (ssize_t)sizeof q &&
            read(from_checker, &r, sizeof r) == (ssize_t)sizeof r)
            return r.status;
        if (q.isolate) die2("the checker process is gone; run again (it may have been killed)");
        checker_stop();
        checker_start();
    }
}

static void checker_stop(void)
{
    close(to_checker);
    close(from_checker);
    int st;
    waitpid(checker_pid, &st, 0);
}

/* ---- exploration ---- */
struct version { unsigned char bytes[CM_LINE]; uint64_t hash; struct cm_variant v; };
struct inplay { struct cm_line *l; struct version *ver; uint32_t nver, full; };

static struct {
    const struct ct_trace *t;
    unsigned worker;
    uint64_t points, states, failed, dedup;
    uint64_t exhaustive, pruned_points, pruned_lines;   /* crash points: all states built; pruned */
    FILE *json_points;
    uint64_t point;                  /* the crash point being explored (0, 1, ... over the run) */
    double skipped;
    uint64_t max_lines;
    uint64_t *seen;                  /* open-addressed set of image hashes */
    size_t seen_cap, seen_n;
    FILE *json_failures;
    double t0, last_progress;
    uint64_t rng;
    uint32_t pool_id;
    size_t acked_to;                 /* trace records counted into acks */
    struct acks acks;                /* before the crash point being explored */
} X;

static uint64_t rnd(void)
{
    X.rng ^= X.rng << 13;
    X.rng ^= X.rng >> 7;
    X.rng ^= X.rng << 17;
    return X.rng;
}

/* With --jobs the workers share one fixed table (mapped before they fork),
 * filled with compare-and-swap, so an image is checked once in the run;
 * past half full it stops remembering (states are then checked again). */
#define SHARED_SEEN ((size_t)1 << 21)
static uint64_t *shared_seen;

static bool shared_seen_insert(uint64_t h)
{
    static _Atomic size_t *used;
    if (!used) used = (_Atomic size_t *)&shared_seen[SHARED_SEEN];
    for (size_t j = h & (SHARED_SEEN - 1), probes = 0; probes < 64; j = (j + 1) & (SHARED_SEEN - 1), probes++) {
        uint64_t cur = __atomic_load_n(&shared_seen[j], __ATOMIC_ACQUIRE);
        if (cur == h) return false;
        if (cur) continue;
        if (atomic_load(used) > SHARED_SEEN / 2) return true;
        uint64_t zero = 0;
        if (__atomic_compare_exchange_n(&shared_seen[j], &zero, h, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            atomic_fetch_add(used, 1);
            return true;
        }
        if (zero == h) return false;                  /* another worker put it there */
    }
    return true;
}

static bool seen_insert(uint64_t h)
{
    if (!h) h = 1;
    if (shared_seen) return shared_seen_insert(h);
    if (2 * (X.seen_n + 1) > X.seen_cap) {
        size_t cap = X.seen_cap ? 2 * X.seen_cap : 1 << 16;
        uint64_t *n = calloc(cap, sizeof *n);
        if (!n) die2("out of memory (the set of states seen)");
        for (size_t i = 0; i < X.seen_cap; i++)
            if (X.seen[i])
                for (size_t j = X.seen[i] & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (!n[j]) { n[j] = X.seen[i]; break; }
        free(X.seen);
        X.seen = n;
        X.seen_cap = cap;
    }
    for (size_t j = h & (X.seen_cap - 1);; j = (j + 1) & (X.seen_cap - 1)) {
        if (X.seen[j] == h) return false;
        if (!X.seen[j]) {
            X.seen[j] = h;
            X.seen_n++;
            return true;
        }
    }
}

static const char *point_name(enum ct_point k)
{
    return k == CT_AT_FENCE ? "fence" : k == CT_AFTER_STORE ? "store" : k == CT_AT_CLOSE ? "pool close" : "exit";
}

static void describe_entry(const struct cm_entry *e, char *buf, size_t len)
{
    if (e->kind == CM_STORE) {
        const struct ct_site *s = ct_site(X.t, e->site);
        snprintf(buf, len, "store of %u B at +%u (%s:%u %s)", e->len, e->off,
                 s && *s->file ? s->file : "?", s ? s->line : 0, s ? s->func : "");
    } else {
        snprintf(buf, len, "untraced write(s) to the line, seen at %s after fence %llu",
                 e->kind == CM_SNAP_FLUSH ? "a flush" : e->kind == CM_SNAP_NT ? "a non-temporal store" :
                 "a fence", (unsigned long long)e->fence);
    }
}

/* file:line (function) of a return address the trace recorded, from the
 * debug info of its object (addr2line); 0 when it cannot be resolved.
 * Each address is resolved once in a run (failed states at one fence share
 * their call chain): the answers are kept, unresolved ones too. */
static int resolve_frame_now(uint64_t addr, char *out, size_t len);
static int resolve_frame(uint64_t addr, char *out, size_t len)
{
    static struct frame { uint64_t addr; char *site; } *known;
    static size_t nknown, capknown;
    for (size_t i = 0; i < nknown; i++)
        if (known[i].addr == addr) {
            if (!known[i].site) return 0;
            snprintf(out, len, "%s", known[i].site);
            return 1;
        }
    int ok = resolve_frame_now(addr, out, len);
    if (nknown == capknown) {
        size_t cap = capknown ? 2 * capknown : 64;
        struct frame *k = realloc(known, cap * sizeof *k);
        if (!k) return ok;
        known = k;
        capknown = cap;
    }
    char *site = ok ? strdup(out) : NULL;
    if (ok && !site) return ok;
    known[nknown++] = (struct frame){ addr, site };
    return ok;
}

static int resolve_frame_now(uint64_t addr, char *out, size_t len)
{
    const struct ct_rec *best = NULL;
    for (size_t i = 0; i < X.t->n; i++) {
        const struct ct_rec *r = &X.t->r[i];
        if (r->type == TR_OBJECT && r->arg <= addr && (!best || r->arg > best->arg)) best = r;
    }
    if (!best || !best->data_len) return 0;
    char path[4096];
    size_t pl = best->data_len < sizeof path - 1 ? best->data_len : sizeof path - 1;
    memcpy(path, ct_data(X.t, best), pl);
    path[pl] = 0;
    uint64_t at = addr - 1;                        /* inside the call, not after it */
    unsigned char ehdr[18];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool exec_type = fd >= 0 && read(fd, ehdr, sizeof ehdr) == (ssize_t)sizeof ehdr && ehdr[16] == 2;
    if (fd >= 0) close(fd);
    if (!exec_type) at -= best->arg;               /* position-independent: an offset */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "addr2line -f -e '%s' %#llx 2>/dev/null", path, (unsigned long long)at);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    char fn[512] = "", fl[1024] = "";
    bool ok = fgets(fn, sizeof fn, p) && fgets(fl, sizeof fl, p);
    pclose(p);
    fn[strcspn(fn, "\n")] = 0;
    fl[strcspn(fl, "\n")] = 0;
    char *disc = strstr(fl, " (discriminator");
    if (disc) *disc = 0;
    if (!ok || fl[0] == '?') return 0;
    snprintf(out, len, "%s (%s)", fl, fn);
    return 1;
}

/* the fence's call chain (TR_STACK after it): the first frame outside the
 * runtime is where the program asked for it */
static void describe_fence_site(const struct ct_rec *at, FILE *out)
{
    const struct ct_rec *end = X.t->r + X.t->n;
    for (const struct ct_rec *r = at + 1; r < end && r < at + 64; r++) {
        if (r->tid != at->tid || r->type != TR_STACK) continue;
        size_t n = r->data_len / 8;
        char first[1200] = "", chain[4000] = "";
        size_t cl = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t a;
            memcpy(&a, ct_data(X.t, r) + i * 8, 8);
            char site[1200];
            if (!resolve_frame(a, site, sizeof site)) continue;
            if (!first[0] && !strstr(site, "/runtime/")) snprintf(first, sizeof first, "%s", site);
            if (cl < sizeof chain - 1)
                cl += (size_t)snprintf(chain + cl, sizeof chain - cl, "%s%s", cl ? " <- " : "", site);
        }
        if (first[0]) fprintf(out, "  fence issued at %s\n", first);
        if (chain[0]) fprintf(out, "  call chain: %s\n", chain);
        return;
    }
}

/* where the crash point is: the fence or store, its transaction, the last traced store */
static void describe_point(struct cm_model *m, const struct ct_rec *at, enum ct_point kind,
                           FILE *out)
{
    fprintf(out, "  crash point: %s", point_name(kind));
    if (kind == CT_AT_FENCE)
        fprintf(out, " #%llu (%s, thread %u)", (unsigned long long)m->fences,
                at->aux == TR_DFENCE ? "dfence" : "ofence", at->tid);
    fprintf(out, ", trace event %llu\n", (unsigned long long)at->seq);
    if (kind == CT_AT_FENCE) describe_fence_site(at, out);
    if (kind == CT_AFTER_STORE) {
        const struct ct_site *s = ct_site(X.t, at->loc);
        if (s) fprintf(out, "  after the store at %s:%u (%s)\n", s->file, s->line, s->func);
    }
    const struct ct_rec *r0 = X.t->r;
    int tx = 0;
    for (const struct ct_rec *r = at; r >= r0; r--) {
        if (r->type == TR_TX_COMMIT || r->type == TR_TX_ABORT) break;
        if (r->type == TR_TX_BEGIN) { tx = 1; break; }
    }
    fprintf(out, "  %s\n", tx ? "inside a transaction (begun, not yet committed or aborted)"
                              : "outside any transaction");
    for (const struct ct_rec *r = at; r >= r0; r--) {
        if (r->type != TR_STORE && r->type != TR_STORE_RANGE) continue;
        const struct ct_site *s = ct_site(X.t, r->loc);
        if (s) fprintf(out, "  last traced store before it: %s:%u (%s)\n", s->file, s->line, s->func);
        break;
    }
}

static void report_failure(struct cm_model *m, const struct ct_rec *at, enum ct_point kind,
                           struct inplay *L, size_t nl, const uint32_t *choice, int status)
{
    X.failed++;
    fprintf(stderr, "crashcheck: FAILED: state %llu (crash point %llu) %s %d\n",
            (unsigned long long)X.states, (unsigned long long)X.point,
            status >= 128 ? "check died with signal" : "check exited with", status >= 128 ? status - 128 : status);
    describe_point(m, at, kind, stderr);
    FILE *lg = fopen(log_path, "r");
    if (lg) {
        char line[1024];
        for (int i = 0; i < 12 && fgets(line, sizeof line, lg); i++) fprintf(stderr, "  | %s", line);
        fclose(lg);
    }
    for (size_t i = 0; i < nl && i < 24; i++) {
        const struct cm_line *l = L[i].l;
        const struct cm_variant *v = &L[i].ver[choice[i]].v;
        fprintf(stderr, "  line at pool offset %#llx:\n", (unsigned long long)(l->idx * CM_LINE));
        for (uint32_t e = 0; e < l->n; e++) {
            char d[512];
            describe_entry(&l->e[e], d, sizeof d);
            fprintf(stderr, "    %s %s\n", cm_variant_has(v, e) ? "persisted:" : "lost:     ", d);
        }
    }
    if (nl > 24) fprintf(stderr, "  (%zu more lines in play)\n", nl - 24);
    char kept[4200] = "";
    if (opt.keep && X.failed <= 20) {
        snprintf(kept, sizeof kept, "%s/crash-%u-%llu.pool", opt.keep, X.worker,
                 (unsigned long long)X.states);
        if (copy_file(media_path, kept)) {
            fprintf(stderr, "  could not keep the image in %s: %s\n", kept, strerror(errno));
            kept[0] = 0;
        } else {
            fprintf(stderr, "  image kept: %s (cairn pool check %s)\n", kept, kept);
        }
    }
    if (X.json_failures)
        fprintf(X.json_failures, "{\"state\": %llu, \"point\": %llu, \"kind\": \"%s\", \"seq\": %llu, "
                "\"status\": %d, \"lines\": %zu, \"image\": \"%s\"}\n", (unsigned long long)X.states,
                (unsigned long long)X.point, point_name(kind), (unsigned long long)at->seq, status, nl,
                kept);
}

static void try_state(struct cm_model *m, const struct ct_rec *at, enum ct_point kind,
                      struct inplay *L, size_t nl, const uint32_t *choice)
{
    uint64_t h = m->media_hash;
    for (size_t i = 0; i < nl; i++)
        if (choice[i]) h ^= L[i].ver[0].hash ^ L[i].ver[choice[i]].hash;
    if (opt.check)                   /* a user check's verdict depends on the acks too */
        h ^= (X.acks.commits * 0x9e3779b97f4a7c15ull) ^ (X.acks.grows * 0xc2b2ae3d27d4eb4full) ^
             (X.acks.closes * 0x165667b19e3779f9ull);
    if (!seen_insert(h)) {
        X.dedup++;
        return;
    }
    for (size_t i = 0; i < nl; i++)
        if (choice[i]) put_line(m, L[i].l->idx, L[i].ver[choice[i]].bytes);
    X.states++;
    uint32_t nested = opt.nested_every && !opt.check && X.states % opt.nested_every == 0
                          ? (uint32_t)(1 + rnd() % 8) : 0;
    int st = check_state(X.states, nested, 0, X.acks);
    if (st) report_failure(m, at, kind, L, nl, choice, st);
    for (size_t i = 0; i < nl; i++)
        if (choice[i]) put_line(m, L[i].l->idx, L[i].ver[0].bytes);
}

static void progress(bool last)
{
    double t = now_s();
    if (opt.quiet || X.worker || (!last && t - X.last_progress < 2.0)) return;
    X.last_progress = t;
    fprintf(stderr, "crashcheck: %llu crash points, %llu states checked, %llu failed (%.0f states/s)%s\n",
            (unsigned long long)X.points, (unsigned long long)X.states, (unsigned long long)X.failed,
            X.states / (t - X.t0 > 1e-9 ? t - X.t0 : 1e-9), last ? "" : "...");
}

/* ---- pruning: the lines the check reads ---- */

/* Parse what the tracked check wrote (readtrack.c): line numbers, per
 * listed line the bytes written first within the stable prefix, how the
 * prefix ended, and per process that touched the image a start and a done
 * mark. 0 when every process that touched it finished and reported; the
 * lines set in rd. tr->ok when one process touched the image, through
 * views the tracker follows, so that its prefix is the whole check's. */
#define RT_MARK      0x8000000000000000ull
#define RT_DONE      0x4000000000000000ull
#define RT_PMASK     0x2000000000000000ull
#define RT_CULPRIT   0x1000000000000000ull
#define RT_STABLE    0x0800000000000000ull
#define RT_UNTRACKED 0x0400000000000000ull
#define RT_PINNED    0x4000000000000000ull
struct tracked { bool ok, stable; size_t culprit; uint64_t *pm; };

static size_t line_at(const struct inplay *L, size_t nl, uint64_t idx)
{
    for (size_t i = 0; i < nl; i++)
        if (L[i].l->idx == idx) return i;
    return nl;
}

static int read_tracked(struct inplay *L, size_t nl, bool *rd, struct tracked *tr)
{
    FILE *f = fopen(reads_path, "r");
    if (!f) return -1;
    uint64_t w, started[64], done[64];
    size_t ns = 0, nd = 0, ends = 0;
    bool overflow = false, untracked = false;
    tr->stable = false;
    tr->culprit = nl;
    memset(tr->pm, 0, nl * sizeof *tr->pm);
    while (fread(&w, sizeof w, 1, f) == 1) {
        if (w & RT_MARK) {
            uint64_t pid = w & ~(RT_MARK | RT_DONE);
            if (w & RT_DONE) { if (nd < 64) done[nd++] = pid; else overflow = true; }
            else if (ns < 64) started[ns++] = pid;
            else overflow = true;
        } else if (w & RT_PMASK) {
            uint64_t mask;
            if (fread(&mask, sizeof mask, 1, f) != 1) break;
            size_t i = line_at(L, nl, w & ~RT_PMASK);
            if (i < nl) tr->pm[i] = mask;
        } else if (w & RT_CULPRIT) {
            tr->culprit = line_at(L, nl, w & ~RT_CULPRIT);
            ends++;
        } else if (w & RT_STABLE) {
            tr->stable = true;
            ends++;
        } else if (w & RT_UNTRACKED) {
            untracked = true;
        } else {
            size_t i = line_at(L, nl, w);
            if (i < nl) rd[i] = true;
        }
    }
    fclose(f);
    tr->ok = ns == 1 && ends == 1 && !untracked;
    if (!ns || overflow) return -1;
    for (size_t i = 0; i < ns; i++) {
        bool ok = false;
        for (size_t j = 0; j < nd && !ok; j++) ok = done[j] == started[i];
        if (!ok) return -1;
    }
    return 0;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The lines in play, each with the bytes that differ between its versions
 * and whether it is pinned (enumerated whatever the run shows), for
 * CAIRN_READTRACK_DIFF. */
static void write_diff(const struct inplay *L, size_t nl, const uint64_t *dm, const bool *pin)
{
    FILE *f = fopen(diff_path, "w");
    if (!f) return;
    for (size_t i = 0; i < nl; i++) {
        uint64_t rec[2] = { L[i].l->idx | (pin[i] ? RT_PINNED : 0), dm[i] };
        fwrite(rec, sizeof rec, 1, f);
    }
    fclose(f);
}

/* One tracked run of the check on the image with line i at version
 * ver[i] (the media holds the durable versions before and after). */
static int tracked_run(struct cm_model *m, struct inplay *L, size_t nl, const uint32_t *ver,
                       bool *rd, struct tracked *tr)
{
    for (size_t i = 0; i < nl; i++)
        if (ver[i]) put_line(m, L[i].l->idx, L[i].ver[ver[i]].bytes);
    unlink(reads_path);
    check_state(0, 0, 1, X.acks);
    for (size_t i = 0; i < nl; i++)
        if (ver[i]) put_line(m, L[i].l->idx, L[i].ver[0].bytes);
    int rc = read_tracked(L, nl, rd, tr);
    unlink(reads_path);
    return rc;
}

/* the combinations of the lines still enumerated (read, not dead) */
static double live_product(const struct inplay *L, size_t nl, const bool *rd, const bool *dead)
{
    double t = 1;
    for (size_t i = 0; i < nl; i++)
        if (rd[i] && !dead[i]) t *= L[i].nver;
    return t;
}

/* A line is dead when a tracked run proves that, on every state, the
 * check writes each of its differing bytes before reading it (docs/
 * crashcheck.md, "Dead lines"): the run's stable prefix (every access
 * before it saw bytes equal on every state whose pinned lines match the
 * run's) wrote them all. With no line pinned, one run on any image
 * proves it; where a pinned line's read ends the prefix early, the check
 * is run tracked on every combination of the pinned lines' versions (the
 * others at their last) and a line is dead when each run proves it. The
 * pinned lines grow by the line whose read ended a run's prefix, up to
 * DEAD_PIN_STATES combinations. */
#define DEAD_PIN_STATES 16
static void find_dead(struct cm_model *m, struct inplay *L, size_t nl, bool *rd, const uint64_t *dm,
                      const struct tracked *full, const struct tracked *durable, bool *dead)
{
    for (size_t i = 0; i < nl; i++) {
        if (L[i].l->idx * CM_LINE < 4096) continue;          /* header lines: always enumerated */
        for (int r = 0; r < 2; r++) {
            const struct tracked *t = r ? durable : full;
            if (t->ok && (t->stable || (dm[i] & ~t->pm[i]) == 0)) dead[i] = true;
        }
    }
    bool *pin = calloc(nl, sizeof *pin), *dp = calloc(nl, sizeof *dp);
    uint32_t *c = calloc(nl, sizeof *c);
    struct tracked t = { .pm = calloc(nl, sizeof *t.pm) };
    if (!pin || !dp || !c || !t.pm) die2("out of memory");
    size_t next = full->ok && !full->stable ? full->culprit : nl;
    double pinned = 1;
    while (next < nl && !pin[next] && L[next].l->idx * CM_LINE >= 4096 &&
           pinned * L[next].nver <= DEAD_PIN_STATES &&
           live_product(L, nl, rd, dead) > (double)opt.max_states) {
        pin[next] = true;
        pinned *= L[next].nver;
        write_diff(L, nl, dm, pin);
        for (size_t i = 0; i < nl; i++) {
            dp[i] = !pin[i] && L[i].l->idx * CM_LINE >= 4096;
            c[i] = pin[i] ? 0 : L[i].full;
        }
        next = nl;
        bool all_ok = true;
        for (;;) {                                           /* every combination of the pinned */
            if (tracked_run(m, L, nl, c, rd, &t) || !t.ok) {
                all_ok = false;
                break;
            }
            for (size_t i = 0; i < nl; i++)
                if (!t.stable && (dm[i] & ~t.pm[i])) dp[i] = false;
            if (!t.stable && next == nl && t.culprit < nl && !pin[t.culprit]) next = t.culprit;
            size_t i = 0;
            while (i < nl && (!pin[i] || ++c[i] == L[i].nver)) {
                if (pin[i]) c[i] = 0;
                i++;
            }
            if (i == nl) break;
        }
        if (!all_ok) break;
        for (size_t i = 0; i < nl; i++) dead[i] |= dp[i];
    }
    free(pin);
    free(dp);
    free(c);
    free(t.pm);
}

/* Which lines in play the check reads, on the image with every line at its
 * last version and on the durable image (the check run once on each with
 * the tracker), and which of them are dead (find_dead); the header page
 * always counts as read. -1 when a run could not be tracked (the caller
 * then keeps every line). */
static int track_reads(struct cm_model *m, struct inplay *L, size_t nl, bool *rd, bool *dead)
{
    uint64_t *pg = malloc(nl * sizeof *pg);
    FILE *pf = pg ? fopen(pages_path, "w") : NULL;
    if (!pf) {
        free(pg);
        return -1;
    }
    for (size_t i = 0; i < nl; i++) pg[i] = L[i].l->idx * CM_LINE & ~(uint64_t)4095;
    qsort(pg, nl, sizeof *pg, by_u64);
    for (size_t i = 0; i < nl; i++)
        if (!i || pg[i] != pg[i - 1]) fwrite(&pg[i], sizeof pg[i], 1, pf);
    fclose(pf);
    free(pg);
    /* per line, the bytes in which its versions differ */
    uint64_t *dm = calloc(nl, sizeof *dm);
    bool *pin = calloc(nl, sizeof *pin);
    uint32_t *ver = calloc(nl, sizeof *ver);
    struct tracked tr[2] = { { .pm = calloc(nl, sizeof(uint64_t)) }, { .pm = calloc(nl, sizeof(uint64_t)) } };
    if (!dm || !pin || !ver || !tr[0].pm || !tr[1].pm) die2("out of memory");
    for (size_t i = 0; i < nl; i++) {
        for (uint32_t k = 1; k < L[i].nver; k++)
            for (unsigned b = 0; b < CM_LINE; b++)
                if (L[i].ver[k].bytes[b] != L[i].ver[0].bytes[b]) dm[i] |= 1ull << b;
        ver[i] = L[i].full;
    }
    write_diff(L, nl, dm, pin);
    int rc = tracked_run(m, L, nl, ver, rd, &tr[0]);
    memset(ver, 0, nl * sizeof *ver);
    if (!rc) rc = tracked_run(m, L, nl, ver, rd, &tr[1]);
    for (size_t i = 0; i < nl; i++)
        if (L[i].l->idx * CM_LINE < 4096) rd[i] = true;
    if (!rc) find_dead(m, L, nl, rd, dm, &tr[0], &tr[1], dead);
    free(dm);
    free(pin);
    free(ver);
    free(tr[0].pm);
    free(tr[1].pm);
    return rc;
}

/* What the program had been told by the crash point at `at`: outermost
 * commits returned (the runtime traces tx_commit after the commit's dfence),
 * grows whose new size is durable (pool_grow is traced after the size's
 * dfence) and closes done, of the checked pool. A --check command reads
 * them as CAIRN_CRASH_COMMITS, _GROWS and _CLOSES: each must be durable. */
static void ack_count(const struct ct_rec *at)
{
    for (size_t end = (size_t)(at - X.t->r) + 1; X.acked_to < end; X.acked_to++) {
        const struct ct_rec *r = &X.t->r[X.acked_to];
        if (r->loc != X.pool_id) continue;
        if (r->type == TR_TX_COMMIT && r->aux == 1) X.acks.commits++;
        else if (r->type == TR_POOL_GROW) X.acks.grows++;
        else if (r->type == TR_POOL_CLOSE) X.acks.closes++;
    }
}

static int at_point(void *ctx, struct cm_model *m, const struct ct_rec *at, enum ct_point kind,
                    uint64_t point)
{
    (void)ctx;
    ack_count(at);
    if (point % opt.jobs != X.worker) return 0;
    X.points++;
    X.point = point;
    X.rng = (opt.seed * 0x9e3779b97f4a7c15ull) ^ (point + 1) * 0xbf58476d1ce4e5b9ull;
    if (!X.rng) X.rng = 1;
    /* the lines in play and the distinct contents each may hold */
    struct inplay *L = calloc(m->nplay + 1, sizeof *L);
    if (!L) die2("out of memory");
    size_t nl = 0;
    double total = 1;
    struct cm_variant *vv = NULL;
    size_t vcap = 0;
    for (size_t i = 0; i < m->nplay; i++) {
        struct cm_line *l = m->line[m->play[i]];
        size_t need = 2 * (size_t)l->n + 1;
        if (need > vcap) {
            vcap = need;
            vv = realloc(vv, vcap * sizeof *vv);
            if (!vv) die2("out of memory");
        }
        size_t nv = cm_line_variants(l, vv, vcap);
        struct version *ver = malloc(nv * sizeof *ver);
        if (!ver) die2("out of memory");
        uint32_t k = 0, full = 0;
        for (size_t j = 0; j < nv; j++) {
            cm_line_apply(m, l, &vv[j], ver[k].bytes);
            bool all = vv[j].prefix == l->n && vv[j].skip_lo >= vv[j].skip_hi;
            bool dup = false;
            for (uint32_t q = 0; q < k && !dup; q++)
                if (!memcmp(ver[q].bytes, ver[k].bytes, CM_LINE)) {
                    dup = true;
                    if (all) full = q;
                }
            if (dup) continue;
            if (all) full = k;
            ver[k].hash = cm_line_hash(l->idx, ver[k].bytes);
            ver[k].v = vv[j];
            k++;
        }
        if (k < 2) {
            free(ver);
            continue;
        }
        L[nl++] = (struct inplay){ l, ver, k, full };
        total *= k;
    }
    free(vv);
    if (nl > X.max_lines) X.max_lines = nl;
    /* pruning: only the lines the check reads are enumerated; the others
     * stay at their last version (docs/crashcheck.md, "Pruning") */
    size_t nvar = nl, ndead = 0;
    bool pruned = false;
    if (nl && readtrack_lib[0] &&
        (opt.prune == PRUNE_ALWAYS || (opt.prune == PRUNE_AUTO && total > (double)opt.max_states))) {
        bool *rd = calloc(nl, sizeof *rd), *dead = calloc(nl, sizeof *dead);
        if (!rd || !dead) die2("out of memory");
        if (track_reads(m, L, nl, rd, dead) == 0) {
            struct inplay *R = malloc(nl * sizeof *R);
            if (!R) die2("out of memory");
            size_t a = 0, b = nl;
            total = 1;
            for (size_t i = 0; i < nl; i++) {
                if (rd[i] && !dead[i]) { R[a++] = L[i]; total *= L[i].nver; }
                else R[--b] = L[i];
                ndead += rd[i] && dead[i];
            }
            memcpy(L, R, nl * sizeof *L);
            free(R);
            nvar = a;
            pruned = true;
            X.pruned_points++;
            X.pruned_lines += nl - nvar;
        }
        free(rd);
        free(dead);
    }
    uint32_t *c = calloc(nl + 1, sizeof *c);
    if (!c) die2("out of memory");
    for (size_t i = nvar; i < nl; i++) c[i] = L[i].full;
    uint64_t tried = 0;
    bool exhaustive = total <= (double)opt.max_states;
    if (exhaustive) {                                        /* every state */
        for (;;) {
            try_state(m, at, kind, L, nl, c);
            tried++;
            size_t i = 0;
            while (i < nvar && ++c[i] == L[i].nver) c[i++] = 0;
            if (i == nvar) break;
        }
    } else {
        /* systematic: nothing, everything, lines in order and in reverse,
         * each line alone at each of its versions; then seeded samples */
#define RESET() memset(c, 0, nvar * sizeof *c)
        RESET();
        try_state(m, at, kind, L, nl, c);
        for (size_t i = 0; i < nvar; i++) c[i] = L[i].nver - 1;
        try_state(m, at, kind, L, nl, c);
        tried = 2;
        for (size_t j = 1; j < nvar && tried < opt.max_states; j++) {
            RESET();
            for (size_t i = 0; i < j; i++) c[i] = L[i].nver - 1;
            try_state(m, at, kind, L, nl, c);
            RESET();
            for (size_t i = nvar - j; i < nvar; i++) c[i] = L[i].nver - 1;
            try_state(m, at, kind, L, nl, c);
            tried += 2;
        }
        for (size_t i = 0; i < nvar && tried < opt.max_states; i++)
            for (uint32_t v = 1; v < L[i].nver && tried < opt.max_states; v++) {
                RESET();
                c[i] = v;
                try_state(m, at, kind, L, nl, c);
                tried++;
            }
        while (tried < opt.max_states) {
            for (size_t i = 0; i < nvar; i++) c[i] = (uint32_t)(rnd() % L[i].nver);
            try_state(m, at, kind, L, nl, c);
            tried++;
        }
#undef RESET
        X.skipped += total - (double)tried;
    }
    if (exhaustive) X.exhaustive++;
    if (X.json_points) {
        char rl[32] = "null", dl[32] = "null";
        if (pruned) snprintf(rl, sizeof rl, "%zu", nvar + ndead);
        if (pruned) snprintf(dl, sizeof dl, "%zu", ndead);
        fprintf(X.json_points, "{\"point\": %llu, \"kind\": \"%s\", \"seq\": %llu, \"lines\": %zu, "
                "\"read_lines\": %s, \"dead_lines\": %s, \"combinations\": %.0f, \"exhaustive\": %s}\n",
                (unsigned long long)point, point_name(kind), (unsigned long long)at->seq, nl, rl, dl,
                total, exhaustive ? "true" : "false");
    }
    for (size_t i = 0; i < nl; i++) free(L[i].ver);
    free(L);
    free(c);
    progress(false);
    return 0;
}

/* ---- main ---- */
/* the workers' NAME-J.json files (one JSON object a line) as the items of
 * a list, each file removed */
static void json_list(FILE *f, const char *name)
{
    bool first = true;
    for (unsigned j = 0; j < opt.jobs; j++) {
        char p[4200], line[8192];
        snprintf(p, sizeof p, "%s/%s-%u.json", opt.workdir, name, j);
        FILE *in = fopen(p, "r");
        while (in && fgets(line, sizeof line, in)) {
            line[strcspn(line, "\n")] = 0;
            fprintf(f, "%s%s", first ? "" : ", ", line);
            first = false;
        }
        if (in) fclose(in);
        unlink(p);
    }
}

/* the tracker next to this program (build tree) or where the package puts it */
static void find_readtrack(void)
{
    char self[2048];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return;
    *slash = 0;
    snprintf(pool_tool, sizeof pool_tool, "%s/cairn-pool", self);
    snprintf(readtrack_lib, sizeof readtrack_lib, "%s/libcairn-readtrack.so", self);
#ifdef CAIRN_READTRACK_FROM_BINDIR
    if (access(readtrack_lib, R_OK))
        snprintf(readtrack_lib, sizeof readtrack_lib, "%s/%s/libcairn-readtrack.so", self,
                 CAIRN_READTRACK_FROM_BINDIR);
#endif
    if (access(readtrack_lib, R_OK) || (!opt.check && access(pool_tool, X_OK))) readtrack_lib[0] = 0;
    if (!readtrack_lib[0] && opt.prune == PRUNE_ALWAYS)
        die2("--prune always: the read tracker libcairn-readtrack.so (or cairn-pool) is not "
             "installed next to %s; reinstall cairn", self);
}

static void usage(FILE *f)
{
    fputs("usage: cairn-crashcheck [--check CMD] [--every fence|store] [--max-states N] [--seed S]\n"
          "         [--jobs N] [--nested-every N] [--prune auto|always|never] [--json FILE]\n"
          "         [--keep DIR] [--workdir DIR] [--quiet]\n"
          "         TRACE IMAGES_DIR\n"
          "TRACE and IMAGES_DIR come from running the program with CAIRN_TRACE=TRACE and\n"
          "CAIRN_TRACE_IMAGES=IMAGES_DIR (`cairn crashcheck -- PROG ARGS` does it for you).\n", f);
}

static uint64_t num(const char *s, const char *what, uint64_t least)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || *e || !*s || v < least)
        die2("%s: %s is not a whole number >= %llu", what, s, (unsigned long long)least);
    return v;
}

struct totals { uint64_t points, states, failed, dedup, max_lines, exhaustive, pruned_points, pruned_lines; double skipped; };

static struct totals run_worker(const struct ct_trace *t, uint32_t pool_id, uint64_t size,
                                const char *image, unsigned worker)
{
    X.t = t;
    X.worker = worker;
    X.pool_id = pool_id;
    snprintf(media_path, sizeof media_path, "%s/media-%u.pool", opt.workdir, worker);
    snprintf(copy_path, sizeof copy_path, "%s/copy-%u.pool", opt.workdir, worker);
    snprintf(log_path, sizeof log_path, "%s/check-%u.log", opt.workdir, worker);
    snprintf(pages_path, sizeof pages_path, "%s/pages-%u.bin", opt.workdir, worker);
    snprintf(reads_path, sizeof reads_path, "%s/reads-%u.bin", opt.workdir, worker);
    snprintf(diff_path, sizeof diff_path, "%s/diff-%u.bin", opt.workdir, worker);
    if (copy_file(image, media_path)) die2("cannot copy %s to %s: %s", image, media_path, strerror(errno));
    int fd = open(media_path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size)) die2("cannot size %s: %s", media_path, strerror(errno));
    unsigned char *media = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (media == MAP_FAILED) die2("cannot map %s: %s", media_path, strerror(errno));
    checker_start();
    if (worker == 0) {
        int st = check_state(0, 0, 0, (struct acks){ 0, 0, 0 });
        if (st) {
            FILE *lg = fopen(log_path, "r");
            char line[1024];
            while (lg && fgets(line, sizeof line, lg)) fprintf(stderr, "  | %s", line);
            if (lg) fclose(lg);
            die2("the check fails on the pool as the program opened it, before any crash "
                 "(exit %d): fix the check command or the pool", st);
        }
    }
    if (opt.json) {
        char p[4200];
        snprintf(p, sizeof p, "%s/failures-%u.json", opt.workdir, worker);
        X.json_failures = fopen(p, "w");
        snprintf(p, sizeof p, "%s/points-%u.json", opt.workdir, worker);
        X.json_points = fopen(p, "w");
    }
    struct cm_model m;
    if (cm_init(&m, media, size)) die2("out of memory for a %llu-byte pool", (unsigned long long)size);
    m.on_durable = on_durable;
    m.on_durable_ctx = &m;
    X.t0 = X.last_progress = now_s();
    ct_replay(t, &m, pool_id, opt.every_store, at_point, NULL);
    checker_stop();
    if (X.json_failures) fclose(X.json_failures);
    if (X.json_points) fclose(X.json_points);
    unlink(pages_path);
    cm_free(&m);
    munmap(media, size);
    return (struct totals){ X.points, X.states, X.failed, X.dedup, X.max_lines, X.exhaustive,
                            X.pruned_points, X.pruned_lines, X.skipped };
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        { "check", required_argument, 0, 'c' }, { "every", required_argument, 0, 'e' },
        { "max-states", required_argument, 0, 'm' }, { "seed", required_argument, 0, 's' },
        { "jobs", required_argument, 0, 'j' }, { "json", required_argument, 0, 'J' },
        { "keep", required_argument, 0, 'k' }, { "workdir", required_argument, 0, 'w' },
        { "nested-every", required_argument, 0, 'n' }, { "quiet", no_argument, 0, 'q' },
        { "prune", required_argument, 0, 'p' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'c': opt.check = optarg; break;
        case 'e':
            if (strcmp(optarg, "fence") && strcmp(optarg, "store"))
                die2("--every takes fence or store, not %s", optarg);
            opt.every_store = !strcmp(optarg, "store");
            break;
        case 'm': opt.max_states = num(optarg, "--max-states", 1); break;
        case 's': opt.seed = num(optarg, "--seed", 0); break;
        case 'j': opt.jobs = (unsigned)num(optarg, "--jobs", 1); break;
        case 'J': opt.json = optarg; break;
        case 'k': opt.keep = optarg; break;
        case 'w': opt.workdir = optarg; break;
        case 'n': opt.nested_every = (unsigned)num(optarg, "--nested-every", 0); break;
        case 'q': opt.quiet = true; break;
        case 'p':
            if (!strcmp(optarg, "auto")) opt.prune = PRUNE_AUTO;
            else if (!strcmp(optarg, "always")) opt.prune = PRUNE_ALWAYS;
            else if (!strcmp(optarg, "never")) opt.prune = PRUNE_NEVER;
            else die2("--prune takes auto, always or never, not %s", optarg);
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 2;
    }
    const char *trace = argv[optind], *images = argv[optind + 1];
    find_readtrack();
    char why[4200];
    struct ct_trace t;
    if (ct_load(trace, &t, why, sizeof why)) die2("%s", why);
    uint64_t size;
    uint32_t pool_id = ct_first_pool(&t, &size);
    if (!pool_id) die2("the program opened no pool (no pool_open in %s): nothing to check", trace);
    if (!t.has_lines)
        die2("%s holds no line contents: run the program with CAIRN_TRACE_IMAGES=DIR as well "
             "(`cairn crashcheck -- PROG` does)", trace);
    char image[4200];
    snprintf(image, sizeof image, "%s/pool-%u.img", images, pool_id);
    if (access(image, R_OK)) die2("no image of pool %u in %s: run the program with CAIRN_TRACE_IMAGES=%s",
                                  pool_id, images, images);
    char tmpdir[64] = "";
    if (!opt.workdir) {
        snprintf(tmpdir, sizeof tmpdir, "/dev/shm/cairn-crashcheck-%d", (int)getpid());
        if (mkdir(tmpdir, 0700)) die2("cannot make %s: %s", tmpdir, strerror(errno));
        opt.workdir = tmpdir;
    }
    if (opt.keep && mkdir(opt.keep, 0755) && errno != EEXIST)
        die2("--keep %s: cannot make the directory: %s", opt.keep, strerror(errno));
    size_t other = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == TR_POOL_OPEN && t.r[i].loc != pool_id) other++;
    if (!opt.quiet) {
        fprintf(stderr, "crashcheck: pool %u (%llu bytes)%s; stores %s\n", pool_id,
                (unsigned long long)size, other ? ", other pools the program opened are not checked" : "",
                t.has_stores ? "traced (exact per store where traced; other lines found by comparing "
                               "memory at flushes and fences)"
                             : "not traced (a plain C build): lines found by comparing memory at "
                               "flushes and fences, each change between two looks taken as one write");
    }
    double t0 = now_s();
    struct totals tot = { 0 };
    if (opt.jobs == 1) {
        tot = run_worker(&t, pool_id, size, image, 0);
    } else {
        int fds[64][2];
        pid_t pids[64];
        if (opt.jobs > 64) opt.jobs = 64;
        shared_seen = mmap(NULL, (SHARED_SEEN + 1) * sizeof *shared_seen, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared_seen == MAP_FAILED) die2("cannot map the workers' shared table: %s", strerror(errno));
        for (unsigned j = 0; j < opt.jobs; j++) {
            if (pipe(fds[j])) die2("cannot make a pipe: %s", strerror(errno));
            pids[j] = fork();
            if (pids[j] < 0) die2("cannot fork: %s", strerror(errno));
            if (pids[j] == 0) {
                close(fds[j][0]);
                struct totals w = run_worker(&t, pool_id, size, image, j);
                _exit(write(fds[j][1], &w, sizeof w) == (ssize_t)sizeof w ? 0 : 2);
            }
            close(fds[j][1]);
        }
        for (unsigned j = 0; j < opt.jobs; j++) {
            struct totals w;
            int st;
            if (read(fds[j][0], &w, sizeof w) != (ssize_t)sizeof w) die2("worker %u failed", j);
            waitpid(pids[j], &st, 0);
            tot.points += w.points;
            tot.states += w.states;
            tot.failed += w.failed;
            tot.dedup += w.dedup;
            tot.skipped += w.skipped;
            tot.exhaustive += w.exhaustive;
            tot.pruned_points += w.pruned_points;
            tot.pruned_lines += w.pruned_lines;
            if (w.max_lines > tot.max_lines) tot.max_lines = w.max_lines;
        }
        X.points = tot.points;
        X.states = tot.states;
        X.failed = tot.failed;
        X.t0 = t0;
    }
    double secs = now_s() - t0;
    progress(true);
    double rate = tot.states / (secs > 1e-9 ? secs : 1e-9);
    if (opt.json) {
        FILE *f = fopen(opt.json, "w");
        if (!f) die2("--json %s: %s", opt.json, strerror(errno));
        fprintf(f, "{\"crash_points\": %llu, \"states\": %llu, \"failed\": %llu, \"duplicates\": %llu, "
                "\"skipped\": %.0f, \"max_lines_in_play\": %llu, \"seconds\": %.3f, "
                "\"states_per_second\": %.1f, \"stores_traced\": %s, \"every\": \"%s\", \"seed\": %llu, "
                "\"exhaustive_points\": %llu, \"pruned_points\": %llu, \"pruned_lines\": %llu, "
                "\"failures\": [",
                (unsigned long long)tot.points, (unsigned long long)tot.states,
                (unsigned long long)tot.failed, (unsigned long long)tot.dedup, tot.skipped,
                (unsigned long long)tot.max_lines, secs, rate, t.has_stores ? "true" : "false",
                opt.every_store ? "store" : "fence", (unsigned long long)opt.seed,
                (unsigned long long)tot.exhaustive, (unsigned long long)tot.pruned_points,
                (unsigned long long)tot.pruned_lines);
        json_list(f, "failures");
        fprintf(f, "], \"points\": [");
        json_list(f, "points");
        fprintf(f, "]}\n");
        fclose(f);
    }
    for (unsigned j = 0; j < opt.jobs; j++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/media-%u.pool", opt.workdir, j); unlink(p);
        snprintf(p, sizeof p, "%s/copy-%u.pool", opt.workdir, j); unlink(p);
        snprintf(p, sizeof p, "%s/check-%u.log", opt.workdir, j); unlink(p);
    }
    if (tmpdir[0]) rmdir(tmpdir);
    printf("crashcheck: %llu crash points, %llu states checked, %llu failed, %llu duplicates, "
           "%.0f skipped, %.0f states/s; exhaustive: yes at %llu of %llu crash points "
           "(%llu pruned to the lines the check reads)\n", (unsigned long long)tot.points,
           (unsigned long long)tot.states, (unsigned long long)tot.failed,
           (unsigned long long)tot.dedup, tot.skipped, rate, (unsigned long long)tot.exhaustive,
           (unsigned long long)tot.points, (unsigned long long)tot.pruned_points);
    ct_free(&t);
    return tot.failed ? 1 : 0;
}
