/* test_crashstates.c -- power loss simulated at every fence.
 *
 * A SIGKILL leaves every store in the page cache; a power loss keeps only
 * what reached the media. The runtime's persistence layer tells this test
 * (cairn__persist_seam, persist.c) of every line it flushes or writes
 * non-temporally and of every fence. The test keeps M, the media image: what
 * a power loss right now would leave. At a fence, the lines that may or may
 * not have reached the media are
 *   - the lines flushed or written non-temporally since the last fence, and
 *   - lines stored to and never flushed (a cache may evict them any time);
 * each combination of them is one crash state: M with some of those lines
 * replaced by their flushed or current contents (all combinations when
 * there are few, a seeded sample otherwise, plus samples that mix old and
 * new 8-byte words inside lines: x86 promises 8-byte atomicity only). Each
 * crash state is written to a file and a child process opens it (recovery),
 * waits for the background mark, compares what the root holds with the
 * program's committed states, closes it and checks the file in full:
 *   - the root holds the last committed state or, while a commit is in
 *     progress, the state that commit makes; nothing else (DESIGN.md
 *     invariants 1 and 2: undo before store, durable before committed);
 *   - after the close, the full check finds no error and no leak, and the
 *     heap holds exactly the root, the blob and the list's nodes
 *     (invariant 4: objects of uncommitted transactions are free, nothing
 *     unreachable stays allocated, nothing reachable was freed).
 * The workload covers an 8-byte update, 8 ranges of 64 B, an allocation
 * linked into a list with a free of its tail, an aborted transaction that
 * allocates, an atomic allocation and free, and a 24 KiB update whose undo
 * records continue in a log extension block.
 */
#include "harness.h"
#include "internal.h"
#include <spawn.h>

extern char **environ;

struct node { struct node *next; uint64_t value; uint64_t pad[6]; };
#define BLOB 24576
struct croot {
    uint64_t counter;
    uint64_t pad[7];
    uint64_t arr[64];
    struct node *head;
    uint64_t nlist;
    unsigned char *blob;
};

/* ---- the workload and its model ---- */
#define STEPS 14
#define MAXLIST 3

struct model { uint64_t counter, arr[64], list[MAXLIST + 1], nlist; unsigned char blob; };

enum { K_8B, K_8x64, K_PUSH, K_ABORT, K_ATOMIC, K_BIG, NKINDS };
static int kind_of(int i) { return (i - 1) % NKINDS; }

/* what step i does to the model (aborted and atomic steps change nothing) */
static void model_step(struct model *m, int i)
{
    switch (kind_of(i)) {
    case K_8B: m->counter = (uint64_t)i; break;
    case K_8x64:
        for (int j = 0; j < 64; j++) m->arr[j] = (uint64_t)i * 1000 + (uint64_t)j;
        break;
    case K_PUSH:
        memmove(m->list + 1, m->list, m->nlist * sizeof m->list[0]);
        m->list[0] = (uint64_t)i;
        if (++m->nlist > MAXLIST) m->nlist--;
        break;
    case K_BIG: m->blob = (unsigned char)(i * 7 + 1); break;
    default: break;
    }
}

static void model_at(struct model *m, int k)
{
    memset(m, 0, sizeof *m);
    for (int i = 1; i <= k; i++) model_step(m, i);
}

static void run_step(cairn_pool *p, struct croot *r, int i)
{
    switch (kind_of(i)) {
    case K_8B:
        CAIRN_TX(p) { cairn_tx_add(&r->counter, 8); r->counter = (uint64_t)i; }
        break;
    case K_8x64:
        CAIRN_TX(p) {
            for (int j = 0; j < 8; j++) {
                cairn_tx_add(&r->arr[j * 8], 64);
                for (int k = 0; k < 8; k++) r->arr[j * 8 + k] = (uint64_t)i * 1000 + (uint64_t)(j * 8 + k);
            }
        }
        break;
    case K_PUSH:
        CAIRN_TX(p) {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->value = (uint64_t)i;
            cairn_ptr_store(&n->next, cairn_ptr_load(&r->head));
            cairn_ptr_store(&r->head, n);
            cairn_tx_add(&r->nlist, 8);
            if (++r->nlist > MAXLIST) {            /* drop the tail */
                struct node *prev = n, *last = cairn_ptr_load(&n->next);
                for (struct node *x; (x = cairn_ptr_load(&last->next)); prev = last, last = x) {}
                cairn_ptr_store(&prev->next, NULL);
                cairn_free(last);
                r->nlist--;
            }
        }
        break;
    case K_ABORT:
        REQUIRE(cairn_tx_begin(p) == 0);
        cairn_tx_add(&r->counter, 8);
        r->counter = 0xdead;
        cairn_tx_add(r->arr, sizeof r->arr);
        memset(r->arr, 0xee, sizeof r->arr);
        {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->value = 0xbad;
            cairn_ptr_store(&n->next, cairn_ptr_load(&r->head));
            cairn_ptr_store(&r->head, n);
        }
        cairn_tx_abort();
        break;
    case K_ATOMIC: {
        void *x = cairn_alloc(p, 4096);            /* atomic: never linked */
        REQUIRE(x);
        cairn_free(x);
        break;
    }
    case K_BIG: {
        unsigned char *b = cairn_ptr_load(&r->blob);
        CAIRN_TX(p) {
            cairn_tx_add(b, BLOB);
            memset(b, i * 7 + 1, BLOB);
        }
        break;
    }
    }
}

/* ---- the checker: a child opens one crash state ---- */
static int leaks;
static void on_check(void *ctx, const char *sev, const char *msg)
{
    (void)ctx;
    if (strstr(msg, "leaked") || !strcmp(sev, "error")) {
        fprintf(stderr, "check: %s: %s\n", sev, msg);
        leaks++;
    }
}

static int matches(struct croot *r, const struct model *m, char *why, size_t n)
{
    if (r->counter != m->counter) return snprintf(why, n, "counter %llu, want %llu",
                                                  (unsigned long long)r->counter,
                                                  (unsigned long long)m->counter), 0;
    for (int j = 0; j < 64; j++)
        if (r->arr[j] != m->arr[j])
            return snprintf(why, n, "arr[%d] %#llx, want %#llx", j,
                            (unsigned long long)r->arr[j], (unsigned long long)m->arr[j]), 0;
    if (r->nlist != m->nlist)
        return snprintf(why, n, "nlist %llu, want %llu", (unsigned long long)r->nlist,
                        (unsigned long long)m->nlist), 0;
    struct node *x = cairn_ptr_load(&r->head);
    for (uint64_t k = 0; k < m->nlist; k++, x = cairn_ptr_load(&x->next))
        if (!x || x->value != m->list[k])
            return snprintf(why, n, "list[%llu] is %s", (unsigned long long)k, x ? "wrong" : "missing"), 0;
    if (x) return snprintf(why, n, "list longer than %llu", (unsigned long long)m->nlist), 0;
    unsigned char *b = cairn_ptr_load(&r->blob);
    for (size_t k = 0; k < BLOB; k++)
        if (b[k] != m->blob) return snprintf(why, n, "blob[%zu] %#x, want %#x", k, b[k], m->blob), 0;
    return 1;
}

static int check_state(const char *img, int committed, int inflight, uint64_t base_objects)
{
    cairn_pool *p = cairn_pool_open(img, "crashstates");
    if (!p) { fprintf(stderr, "open failed: %s\n", cairn_errormsg()); return 1; }
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);                  /* waits for the mark */
    struct croot *r = CAIRN_ROOT(p, struct croot);
    if (!r) { fprintf(stderr, "no root: %s\n", cairn_errormsg()); return 1; }
    struct model m;
    char why[256], why2[256] = "";
    model_at(&m, committed);
    int ok = matches(r, &m, why, sizeof why);
    if (!ok && inflight) {
        model_at(&m, inflight);
        ok = matches(r, &m, why2, sizeof why2);
    }
    uint64_t nlist = r->nlist;
    cairn_pool_close(p);
    if (!ok) {
        fprintf(stderr, "state is neither step %d (%s) nor %s%s\n", committed, why,
                inflight ? "the step in flight: " : "(no commit in flight)", why2);
        return 1;
    }
    struct cairn_check_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = cairn__check_file(img, true, on_check, NULL, &rep);
    if (rc != 0 || leaks) { fprintf(stderr, "full check: rc %d\n", rc); return 1; }
    if (rep.objects != base_objects + nlist) {
        fprintf(stderr, "heap holds %llu objects, want %llu (root, blob, %llu nodes)\n",
                (unsigned long long)rep.objects, (unsigned long long)(base_objects + nlist),
                (unsigned long long)nlist);
        return 1;
    }
    return 0;
}

/* ---- the simulated media ---- */
static char *base;                 /* the pool's mapping */
static size_t psize, nlines;
static unsigned char *media;       /* M */
static unsigned char *pending;     /* contents of lines flushed since the last fence */
static unsigned char *is_pending;
static int committed, inflight;
static uint64_t base_objects;
static const char *img_path;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static long states, fences, failures, max_candidates;

static uint64_t next_rand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static void seam(int what, const void *p, size_t len)
{
    if (what == CAIRN_SEAM_LINES) {
        uintptr_t lo = (uintptr_t)p, hi = lo + len;
        if (lo < (uintptr_t)base || hi > (uintptr_t)base + psize) return;   /* another pool */
        for (size_t l = (lo - (uintptr_t)base) / 64; l * 64 + (uintptr_t)base < hi; l++) {
            memcpy(pending + l * 64, base + l * 64, 64);
            is_pending[l] = 1;
        }
        return;
    }
    void crash_states(void);
    crash_states();
}

struct cand { size_t line; const unsigned char *v[3]; int nv; };

static int spawn_check(void)
{
    char c[16], f[16], o[32];
    snprintf(c, sizeof c, "%d", committed);
    snprintf(f, sizeof f, "%d", inflight);
    snprintf(o, sizeof o, "%llu", (unsigned long long)base_objects);
    char *argv[] = { "/proc/self/exe", "check", (char *)img_path, c, f, o, NULL };
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)getpid());
    pid_t pid;
    if (posix_spawn(&pid, exe, NULL, NULL, argv, environ) != 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* write M with the chosen versions (choice[i] indexes cands[i].v; -1: mix words) */
static int write_state(const struct cand *cands, size_t n, const int *choice)
{
    int fd = open(img_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    int ok = pwrite(fd, media, psize, 0) == (ssize_t)psize;
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char line[64];
        if (choice[i] >= 0) {
            memcpy(line, cands[i].v[choice[i]], 64);
        } else {                                   /* each 8-byte word from any version */
            for (int w = 0; w < 8; w++)
                memcpy(line + w * 8, cands[i].v[next_rand() % (uint64_t)cands[i].nv] + w * 8, 8);
        }
        ok = pwrite(fd, line, 64, (off_t)(cands[i].line * 64)) == 64;
    }
    close(fd);
    return ok ? 0 : -1;
}

static void try_state(const struct cand *cands, size_t n, const int *choice)
{
    REQUIRE(write_state(cands, n, choice) == 0);
    states++;
    int rc = spawn_check();
    if (rc != 0) {
        failures++;
        fprintf(stderr, "crash state %ld (fence %ld, committed %d, in flight %d, %zu lines in play)"
                        " failed: exit %d\n", states, fences, committed, inflight, n, rc);
    }
}

void crash_states(void)
{
    fences++;
    static struct cand *cands;
    if (!cands) REQUIRE((cands = calloc(nlines, sizeof *cands)));
    size_t n = 0;
    for (size_t l = 0; l < nlines; l++) {
        const unsigned char *cur = (unsigned char *)base + l * 64, *old = media + l * 64;
        int dirty = memcmp(cur, old, 64) != 0;
        if (!is_pending[l] && !dirty) continue;
        struct cand *c = &cands[n++];
        c->line = l;
        c->nv = 0;
        c->v[c->nv++] = old;
        if (is_pending[l] && memcmp(pending + l * 64, old, 64)) c->v[c->nv++] = pending + l * 64;
        if (dirty && (!is_pending[l] || memcmp(pending + l * 64, cur, 64))) c->v[c->nv++] = cur;
        if (c->nv == 1) n--;                        /* flushed with the value it had */
    }
    if ((long)n > max_candidates) max_candidates = (long)n;
    if (n) {
        int *choice = calloc(n, sizeof *choice);
        REQUIRE(choice);
        double combos = 1;
        for (size_t i = 0; i < n; i++) combos *= cands[i].nv;
        if (combos <= 16) {                         /* every combination */
            for (long k = 0; k < (long)combos; k++) {
                long q = k;
                for (size_t i = 0; i < n; i++) { choice[i] = (int)(q % cands[i].nv); q /= cands[i].nv; }
                try_state(cands, n, choice);
            }
        } else {                                    /* none, all newest, and a sample */
            for (size_t i = 0; i < n; i++) choice[i] = 0;
            try_state(cands, n, choice);
            for (size_t i = 0; i < n; i++) choice[i] = cands[i].nv - 1;
            try_state(cands, n, choice);
            for (int s = 0; s < 10; s++) {
                for (size_t i = 0; i < n; i++) choice[i] = (int)(next_rand() % (uint64_t)cands[i].nv);
                try_state(cands, n, choice);
            }
        }
        for (int s = 0; s < 2; s++) {               /* torn lines: words of any version */
            for (size_t i = 0; i < n; i++) choice[i] = -1;
            try_state(cands, n, choice);
        }
        free(choice);
    }
    /* the fence completes: what was flushed is on the media */
    for (size_t l = 0; l < nlines; l++)
        if (is_pending[l]) { memcpy(media + l * 64, pending + l * 64, 64); is_pending[l] = 0; }
}

static void power_loss_at_every_fence(void)
{
    const char *path = t_path("cs");
    char img[600];
    snprintf(img, sizeof img, "%s.state", path);
    img_path = img;
    cairn_pool *p = cairn_pool_create(path, "crashstates", 8 << 20);
    REQUIRE(p);
    struct croot *r = CAIRN_ROOT(p, struct croot);
    REQUIRE(r);
    CAIRN_TX(p) {
        unsigned char *b = cairn_alloc(p, BLOB);
        REQUIRE(b);
        cairn_ptr_store(&r->blob, b);
    }
    REQUIRE(cairn_pool_close(p) == 0);
    struct cairn_check_report rep;
    memset(&rep, 0, sizeof rep);
    REQUIRE(cairn__check_file(path, true, on_check, NULL, &rep) == 0);
    base_objects = rep.objects;

    p = cairn_pool_open(path, "crashstates");
    REQUIRE(p);
    r = CAIRN_ROOT(p, struct croot);
    base = p->base;
    psize = p->size;
    nlines = psize / 64;
    REQUIRE((media = malloc(psize)) && (pending = malloc(psize)) && (is_pending = calloc(nlines, 1)));
    memcpy(media, base, psize);                     /* the open has fenced what it wrote */
    cairn__persist_seam = seam;
    for (int i = 1; i <= STEPS; i++) {
        int k = kind_of(i);
        inflight = (k == K_ABORT || k == K_ATOMIC) ? 0 : i;   /* 0: nothing may commit */
        run_step(p, r, i);
        committed = i;
        inflight = 0;
    }
    cairn__persist_seam = NULL;
    fprintf(stderr, "  %d steps, %ld fences, %ld crash states checked (at most %ld lines in play "
                    "at a fence), %ld failed\n", STEPS, fences, states, max_candidates, failures);
    CHECK(failures == 0);
    CHECK(fences >= 3 * STEPS && states > fences);
    REQUIRE(cairn_pool_close(p) == 0);
    unlink(path);
    unlink(img);
    free(media); free(pending); free(is_pending);
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "check"))
        return check_state(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
    if (!getenv("CAIRN_PMEM_FORCE") || strcmp(getenv("CAIRN_PMEM_FORCE"), "1")) {
        fprintf(stderr, "skipped: needs CAIRN_PMEM_FORCE=1 (user-space flushes to observe)\n");
        return 0;
    }
    RUN(power_loss_at_every_fence);
    DONE();
}
