/* test_trace.c -- CAIRN_TRACE: the events known operations record, checked
 * record by record against the counters cairn_stats publishes; nesting and
 * abort; per-thread order with 4 threads; no file when tracing is off; a bad
 * path; a SIGKILLed run parses up to its last whole record, and everything
 * before a cairn_pool_close is in the file; fork, exec and %p; a signal
 * handler writing events while its thread records one (a child that hangs
 * is stopped after 120 s); cairn_ptr_store from plain C is a `store` event
 * at its caller's file:line.
 *
 * Each case runs this program again (/proc/self/exe CASE) with CAIRN_TRACE
 * set, because tracing starts when the runtime loads; the parent reads the
 * file with the small reader below (the format of runtime/trace.c). */
#include "harness.h"
#include "internal.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/time.h>

struct rec { uint8_t type, aux; uint16_t size; uint32_t loc; uint64_t seq, addr, arg; };
struct trace { struct rec *r; uint32_t *tid; size_t n; int complete; size_t torn; uint64_t pid; };

static void trace_free(struct trace *t)
{
    free(t->r);
    free(t->tid);
    t->r = NULL;
    t->tid = NULL;
}
/* a trace variable: zeroed, its buffers freed when it goes out of scope */
#define TRACE(name) struct trace name __attribute__((cleanup(trace_free))) = {0}

/* reads path into t (zeroed or read before: its old buffers are freed) */
static int read_trace(const char *path, struct trace *t)
{
    trace_free(t);
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static char buf[64 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (len < 64 || memcmp(buf, "CAIRNTRC", 8)) return -1;
    uint32_t ver, rsz;
    memcpy(&ver, buf + 8, 4);
    memcpy(&rsz, buf + 16, 4);
    if (ver != 1 || rsz != 32) return -1;
    memcpy(&t->pid, buf + 24, 8);
    t->r = malloc(len);
    t->tid = malloc(len);
    size_t pos = 64;
    while (pos + 32 <= len) {
        uint32_t tid, nrec;
        if (memcmp(buf + pos, "CTCK", 4)) return -1;
        memcpy(&tid, buf + pos + 4, 4);
        memcpy(&nrec, buf + pos + 8, 4);
        pos += 32;
        size_t k = 0;
        for (; k < nrec && pos + 32 <= len; k++, pos += 32) {
            struct rec r;
            memcpy(&r, buf + pos, 32);
            if (r.type == TR_END) t->complete++;
            if (r.type == TR_DATA || tid == 0) continue;
            t->tid[t->n] = tid;
            t->r[t->n++] = r;
        }
        if (k < nrec) break;
    }
    t->torn = len - pos;
    return 0;
}

static void run_case(const char *name, const char *trace_path, char *out, size_t outlen)
{
    char cmd[1024];
    if (trace_path)
        snprintf(cmd, sizeof cmd, "CAIRN_TRACE='%s' timeout 120 /proc/%d/exe %s 2>&1", trace_path,
                 (int)getpid(), name);
    else
        snprintf(cmd, sizeof cmd, "env -u CAIRN_TRACE timeout 120 /proc/%d/exe %s 2>&1",
                 (int)getpid(), name);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t got = fread(out, 1, outlen - 1, p);
    out[got] = 0;
    int st = pclose(p);
    if (strcmp(name, "killed") && strcmp(name, "close_then_kill")) CHECK(st == 0);
}

static const char *trace_file(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "/tmp/cairn-test-%d-%s.trace", (int)getpid(), name);
    unlink(p);
    return p;
}

/* ---- the cases, run in the child ---- */
struct root { uint64_t a, b; char buf[256]; };

static cairn_pool *child_pool(const char *name, struct root **r)
{
    cairn_pool *p = cairn_pool_create(t_path(name), "trace", 8 << 20);
    REQUIRE(p);
    *r = CAIRN_ROOT(p, struct root);
    REQUIRE(*r);
    return p;
}

static void child_done(cairn_pool *p, const char *name)
{
    cairn_pool_close(p);
    unlink(t_path(name));
}

/* one 8-byte transaction between two markers (FREE of NULL is no event,
 * so the markers are allocations of known sizes); prints its counters */
static void case_one_tx(void)
{
    struct root *r;
    cairn_pool *p = child_pool("one_tx", &r);
    struct cairn_stats s;
    cairn_stats_reset();
    CAIRN_TX(p) { cairn_tx_add(&r->a, 8); r->a = 42; }
    cairn_stats_get(&s);
    printf("trace_on=%d flushes=%llu ofences=%llu dfences=%llu log=%llu off=%llu\n",
           (int)cairn__tracing(), (unsigned long long)s.flushes, (unsigned long long)s.ofences,
           (unsigned long long)s.dfences, (unsigned long long)s.log_entries,
           (unsigned long long)((char *)&r->a - (char *)r));
    child_done(p, "one_tx");
}

/* cairn_ptr_store from plain C, outside a transaction and in one, twice
 * from the same line */
static void case_ptr_store(void)
{
    struct root *r;
    cairn_pool *p = child_pool("ptr_store", &r);
    int line = __LINE__; cairn_ptr_store(&r->a, &r->b);
    for (int i = 0; i < 2; i++) CAIRN_TX(p) { cairn_ptr_store(&r->b, &r->buf[i]); }
    printf("line=%d a=%llu b=%llu buf=%llu\n", line, (unsigned long long)((char *)&r->a - (char *)r),
           (unsigned long long)((char *)&r->b - (char *)r),
           (unsigned long long)((char *)r->buf - (char *)r));
    child_done(p, "ptr_store");
}

static void case_nested_abort(void)
{
    struct root *r;
    cairn_pool *p = child_pool("nested", &r);
    cairn_tx_begin(p);
    cairn_tx_begin(p);
    cairn_tx_add(&r->b, 8);
    r->b = 5;
    cairn_tx_commit();
    void *o = cairn_alloc(p, 100);
    cairn_free(o);
    cairn_tx_abort();
    cairn_tx_commit();             /* -1: aborted; no event */
    child_done(p, "nested");
}

#define NTHREADS 4
#define NTX 3000
static cairn_pool *TP;
static struct root *TR;
static void *thread_main(void *arg)
{
    uint64_t *slot = (uint64_t *)(TR->buf + 8 * (uintptr_t)arg);
    for (int i = 0; i < NTX; i++)
        CAIRN_TX(TP) { cairn_tx_add(slot, 8); *slot = (uint64_t)i; }
    return NULL;
}
static void case_threads(void)
{
    TP = child_pool("threads", &TR);
    pthread_t th[NTHREADS];
    for (uintptr_t i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    child_done(TP, "threads");
}

/* handoff: thread 2 starts (its first ordering point), waits while thread 1
 * commits HANDOFF_TX transactions, then commits one of its own after it
 * sees thread 1's flag: its transaction must sort after all of thread 1's */
#define HANDOFF_TX 50
static _Atomic int handed;
static void *handoff_first(void *arg)
{
    (void)arg;
    for (int i = 0; i < HANDOFF_TX; i++)
        CAIRN_TX(TP) { cairn_tx_add(&TR->a, 8); TR->a = (uint64_t)i; }
    atomic_store_explicit(&handed, 1, memory_order_release);
    return NULL;
}
static void *handoff_second(void *arg)
{
    (void)arg;
    CAIRN_TX(TP) { cairn_tx_add(&TR->b, 8); TR->b = 1; }
    atomic_store_explicit(&handed, 2, memory_order_release);
    while (atomic_load_explicit(&handed, memory_order_acquire) != 1) sched_yield();
    CAIRN_TX(TP) { cairn_tx_add(&TR->a, 8); TR->a = 99; }
    return NULL;
}
static void case_handoff(void)
{
    TP = child_pool("handoff", &TR);
    pthread_t a, b;
    pthread_create(&b, NULL, handoff_second, NULL);
    while (atomic_load_explicit(&handed, memory_order_acquire) != 2) sched_yield();
    pthread_create(&a, NULL, handoff_first, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    child_done(TP, "handoff");
}

static void case_killed(void)
{
    struct root *r;
    cairn_pool *p = child_pool("killed", &r);
    for (int i = 0; i < 2000; i++) CAIRN_TX(p) { cairn_tx_add(&r->a, 8); r->a = (uint64_t)i; }
    unlink(t_path("killed"));
    kill(getpid(), SIGKILL);
}

/* a fork child records nothing; a program this one runs while tracing
 * (same CAIRN_TRACE) writes FILE.PID instead of clobbering FILE */
static void case_fork_and_exec(void)
{
    struct root *r;
    cairn_pool *p = child_pool("forkexec", &r);
    CAIRN_TX(p) { cairn_tx_add(&r->a, 8); r->a = 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 1000; i++) cairn_ofence();
        exit(0);                     /* atexit handlers run: no END from the child */
    }
    waitpid(pid, NULL, 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "/proc/%d/exe pid", (int)getpid());
    FILE *g = popen(cmd, "r");
    REQUIRE(g);
    int gpid = 0;
    if (fscanf(g, "%d", &gpid) != 1) gpid = 0;
    pclose(g);
    printf("grandchild=%d\n", gpid);
    CAIRN_TX(p) { cairn_tx_add(&r->a, 8); r->a = 2; }
    child_done(p, "forkexec");
}

/* a signal handler flushing PM while the thread records events: the file
 * stays well-formed (the handler's events that land inside one are dropped) */
static int forced_flushes(void);
/* transactions the signal test runs: fewer in the msync domain, where each
 * fence is an msync (a slow or busy disk made 20000 take minutes) */
static int signal_iterations(void) { return forced_flushes() ? 20000 : 2000; }
static struct root *SR;
static volatile sig_atomic_t nsignals;
static void on_alarm(int sig)
{
    (void)sig;
    cairn_flush(SR->buf + 128, 8);
    nsignals++;
}
static void case_signals(void)
{
    cairn_pool *p = child_pool("signals", &SR);
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 20 }, { 0, 20 } };
    setitimer(ITIMER_REAL, &it, NULL);
    for (int i = 0; i < signal_iterations() || nsignals < 200; i++)
        CAIRN_TX(p) { cairn_tx_add(&SR->a, 8); SR->a = (uint64_t)i; }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("signals=%d off=%llu\n", (int)nsignals,
           (unsigned long long)((char *)(SR->buf + 128) - (char *)SR));
    child_done(p, "signals");
}

static void case_pid(void)
{
    printf("%d\n", (int)getpid());
    cairn_ofence();
}

static void case_close_then_kill(void)
{
    struct root *r;
    cairn_pool *p = child_pool("closekill", &r);
    for (int i = 0; i < 10; i++) CAIRN_TX(p) { cairn_tx_add(&r->a, 8); r->a = (uint64_t)i; }
    cairn_pool_close(p);
    unlink(t_path("closekill"));
    kill(getpid(), SIGKILL);
}

/* ---- checks, in the parent ---- */
static int count(const struct trace *t, unsigned type, int aux)
{
    int n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == type && (aux < 0 || t->r[i].aux == aux)) n++;
    return n;
}

static size_t find(const struct trace *t, size_t from, unsigned type)
{
    for (size_t i = from; i < t->n; i++)
        if (t->r[i].type == type) return i;
    return t->n;
}

/* the names a `site` record gives site id `id` ("file\0function\0", from
 * the data records after it, all written by thread 0); returns their length */
static size_t site_names(const char *path, uint32_t id, char *out, size_t cap, uint64_t *line)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char buf[8 << 20];
    size_t len = fread(buf, 1, sizeof buf, f), pos = 64, n = 0;
    fclose(f);
    int in_site = 0;
    while (pos + 32 <= len) {
        uint32_t nrec;
        memcpy(&nrec, buf + pos + 8, 4);
        pos += 32;
        for (uint32_t k = 0; k < nrec && pos + 32 <= len; k++, pos += 32) {
            struct rec r;
            memcpy(&r, buf + pos, 32);
            if (r.type == TR_SITE) {
                in_site = r.loc == id;
                if (in_site) *line = r.arg;
            } else if (r.type == TR_DATA && in_site) {
                for (unsigned b = 0; b < r.aux && n + 1 < cap; b++) out[n++] = buf[pos + 2 + b];
            } else {
                in_site = 0;
            }
        }
    }
    out[n] = 0;
    return n;
}

static int forced_flushes(void)
{
    const char *e = getenv("CAIRN_PMEM_FORCE");
    return e && !strcmp(e, "1");
}

static void one_tx(void)
{
    const char *f = trace_file("one_tx");
    char out[4096];
    run_case("one_tx", f, out, sizeof out);
    unsigned long long fl, of, df, lg, off;
    int on;
    REQUIRE(sscanf(out, "trace_on=%d flushes=%llu ofences=%llu dfences=%llu log=%llu off=%llu",
                   &on, &fl, &of, &df, &lg, &off) == 6);
    CHECK(on == 1);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(t.complete && t.torn == 0);
    CHECK(count(&t, TR_POOL_OPEN, TR_OPEN_CREATED) == 1 && count(&t, TR_POOL_CLOSE, -1) == 1);
    CHECK(count(&t, TR_ALLOC, TR_ALLOC_ROOT) == 1);
    size_t b = find(&t, 0, TR_TX_BEGIN), e = find(&t, b, TR_TX_COMMIT);
    REQUIRE(b < e && e < t.n);
    /* exactly: begin, append, record written non-temporally, ofence, flush
     * data, ofence, mark written non-temporally, dfence, commit -- the "one
     * small tx_add" row of docs/runtime.md's cost table */
    static const uint8_t want[] = { TR_TX_BEGIN, TR_LOG_APPEND, TR_NTSTORE, TR_FENCE, TR_FLUSH,
                                    TR_FENCE, TR_NTSTORE, TR_FENCE, TR_TX_COMMIT };
    CHECK(e - b + 1 == sizeof want);
    /* (in the msync domain the record and the mark are copied and flushed) */
    for (size_t i = 0; i < sizeof want && b + i <= e; i++)
        CHECK(t.r[b + i].type == want[i] ||
              (want[i] == TR_NTSTORE && t.r[b + i].type == TR_FLUSH && !forced_flushes()));
    CHECK(t.r[b + 3].aux == TR_OFENCE && t.r[b + 5].aux == TR_OFENCE && t.r[b + 7].aux == TR_DFENCE);
    CHECK(t.r[b].aux == 1 && t.r[e].aux == 1);
    /* the same numbers as the thread's counters */
    uint64_t lines = 0, o = 0, d = 0, appends = 0;
    for (size_t i = b; i <= e; i++) {
        const struct rec *r = &t.r[i];
        if (r->type == TR_FLUSH) lines += r->arg;
        if (r->type == TR_NTSTORE) lines += r->arg / 64;
        if (r->type == TR_FENCE) r->aux == TR_DFENCE ? d++ : o++;
        if (r->type == TR_LOG_APPEND) appends++;
    }
    CHECK(lines == fl && o == of && d == df && appends == lg);
    /* the append names the logged range as (pool id, offset) */
    const struct rec *ap = &t.r[b + 1];
    const struct rec *root = &t.r[find(&t, 0, TR_ALLOC)];
    CHECK(ap->arg == 8 && (ap->addr >> 63) == 1);
    CHECK(ap->addr == root->addr + off);
    CHECK(((ap->addr >> 40) & CAIRN_ID_MASK) == t.r[find(&t, 0, TR_POOL_OPEN)].loc);
    /* the data flush covers the logged line */
    CHECK((t.r[b + 4].addr & ~(uint64_t)63) == (ap->addr & ~(uint64_t)63));
    /* one global order: seq strictly increasing in the thread */
    for (size_t i = 1; i < t.n; i++) CHECK(t.r[i].seq > t.r[i - 1].seq);
    unlink(f);
}

static void nested_abort(void)
{
    const char *f = trace_file("nested");
    char out[4096];
    run_case("nested", f, out, sizeof out);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    size_t b = find(&t, 0, TR_TX_BEGIN);
    REQUIRE(b < t.n);
    static const struct { uint8_t type; int aux; } want[] = {
        { TR_TX_BEGIN, 1 }, { TR_TX_BEGIN, 2 }, { TR_LOG_APPEND, 0 }, { TR_TX_COMMIT, 2 },
        /* the free of an object its transaction allocated is applied at once */
        { TR_ALLOC, TR_ALLOC_IN_TX }, { TR_FREE, 0 }, { TR_TX_ABORT, 1 } };
    size_t i = b;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++, i++) {
        while (i < t.n && (t.r[i].type == TR_FLUSH || t.r[i].type == TR_NTSTORE ||
                           t.r[i].type == TR_FENCE))
            i++;
        REQUIRE(i < t.n);
        CHECK(t.r[i].type == want[k].type && t.r[i].aux == want[k].aux);
    }
    CHECK(count(&t, TR_TX_COMMIT, -1) == 1 && count(&t, TR_TX_ABORT, -1) == 1);
    size_t al = find(&t, b, TR_ALLOC);
    REQUIRE(al < t.n);
    CHECK(t.r[al].arg >= 100 && t.r[al].addr == t.r[find(&t, al, TR_FREE)].addr);
    unlink(f);
}

static void ptr_store(void)
{
    const char *f = trace_file("ptr_store");
    char out[4096];
    run_case("ptr_store", f, out, sizeof out);
    unsigned long long oa, ob, obuf;
    int line;
    REQUIRE(sscanf(out, "line=%d a=%llu b=%llu buf=%llu", &line, &oa, &ob, &obuf) == 4);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    uint64_t root = t.r[find(&t, 0, TR_ALLOC)].addr;
    size_t s[3], k = 0;
    for (size_t i = 0; i < t.n && k < 3; i++)
        if (t.r[i].type == TR_STORE) s[k++] = i;
    REQUIRE(k == 3 && count(&t, TR_STORE, -1) == 3);
    /* the slot and the bytes that reached it (the relative form) */
    CHECK(t.r[s[0]].size == 8 && t.r[s[0]].addr == root + oa && t.r[s[0]].arg == root + ob);
    CHECK(t.r[s[1]].addr == root + ob && t.r[s[1]].arg == root + obuf);
    CHECK(t.r[s[2]].addr == root + ob && t.r[s[2]].arg == root + obuf + 1);
    /* the second and third come from one line: one site; the first another */
    CHECK(t.r[s[1]].loc == t.r[s[2]].loc && t.r[s[0]].loc != t.r[s[1]].loc && t.r[s[0]].loc);
    /* each store in a transaction comes after the undo record of its slot,
     * in the same transaction */
    for (int k = 1; k <= 2; k++) {
        size_t b = s[k];
        while (b > 0 && t.r[b].type != TR_TX_BEGIN) b--;
        int logged = 0;
        for (size_t i = b; i < s[k]; i++)
            logged |= t.r[i].type == TR_LOG_APPEND && t.r[i].addr == root + ob;
        CHECK(t.r[b].type == TR_TX_BEGIN && logged);
    }
    /* the first site is named: this file, its line, cairn_ptr_store */
    char names[512];
    uint64_t site_line = 0;
    REQUIRE(site_names(f, t.r[s[0]].loc, names, sizeof names, &site_line) > 0);
    CHECK(strstr(names, "test_trace.c") && !strcmp(names + strlen(names) + 1, "cairn_ptr_store"));
    CHECK(site_line == (uint64_t)line);
    unlink(f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void threads(void)
{
    const char *f = trace_file("threads");
    char out[4096];
    run_case("threads", f, out, sizeof out);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(t.complete);
    uint32_t maxtid = 0;
    for (size_t i = 0; i < t.n; i++) if (t.tid[i] > maxtid) maxtid = t.tid[i];
    CHECK(maxtid == NTHREADS + 1);                 /* main + workers */
    int worker_threads = 0;
    for (uint32_t tid = 1; tid <= maxtid; tid++) {
        uint64_t last = 0;
        int begins = 0, commits = 0, depth = 0, ordered = 1;
        for (size_t i = 0; i < t.n; i++) {
            if (t.tid[i] != tid) continue;
            const struct rec *r = &t.r[i];
            if (r->type == TR_DRAM_STORES) continue;
            if (r->seq <= last) ordered = 0;
            last = r->seq;
            if (r->type == TR_TX_BEGIN) { begins++; if (depth++) ordered = 0; }
            if (r->type == TR_TX_COMMIT) { commits++; if (--depth) ordered = 0; }
        }
        CHECK(ordered);
        if (begins == NTX && commits == NTX) worker_threads++;
    }
    CHECK(worker_threads == NTHREADS);
    /* seq numbers are unique across threads */
    uint64_t *seqs = malloc(t.n * sizeof *seqs);
    REQUIRE(seqs);
    for (size_t i = 0; i < t.n; i++) seqs[i] = t.r[i].seq;
    qsort(seqs, t.n, sizeof *seqs, cmp_u64);
    int dup = 0;
    for (size_t i = 1; i < t.n; i++) dup += seqs[i] == seqs[i - 1];
    CHECK(dup == 0);
    free(seqs);
    CHECK(count(&t, TR_TX_BEGIN, -1) == NTHREADS * NTX);
    unlink(f);
}

/* records another thread's synchronization ordered after this thread's
 * sort after them: thread 2's second transaction after thread 1's last
 * commit, though thread 2 took its first seq before thread 1 started */
static void handoff(void)
{
    const char *f = trace_file("handoff");
    char out[4096];
    run_case("handoff", f, out, sizeof out);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    uint32_t first = 0, second = 0;            /* thread ids: the committer of 50, of 2 */
    uint64_t last_commit = 0, begin_after = 0;
    int commits[64] = {0};
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == TR_TX_COMMIT && t.r[i].aux == 1 && t.tid[i] < 64) commits[t.tid[i]]++;
    for (uint32_t k = 0; k < 64; k++) {
        if (commits[k] == HANDOFF_TX) first = k;
        if (commits[k] == 2) second = k;
    }
    REQUIRE(first && second);
    int begins = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.tid[i] == first && t.r[i].type == TR_TX_COMMIT && t.r[i].seq > last_commit)
            last_commit = t.r[i].seq;
        if (t.tid[i] == second && t.r[i].type == TR_TX_BEGIN && t.r[i].aux == 1 && ++begins == 2)
            begin_after = t.r[i].seq;
    }
    CHECK(begin_after > last_commit);
    /* and every record of thread 2's second transaction */
    int late = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.tid[i] == second && t.r[i].seq >= begin_after && t.r[i].seq <= last_commit) late++;
    CHECK(late == 0);
    unlink(f);
}

static void off_and_bad_path(void)
{
    char out[4096];
    run_case("one_tx", NULL, out, sizeof out);
    CHECK(strncmp(out, "trace_on=0 ", 11) == 0);  /* no CAIRN_TRACE: no file opened */
    run_case("one_tx", "", out, sizeof out);
    CHECK(strncmp(out, "trace_on=0 ", 11) == 0);
    run_case("one_tx", "/nonexistent-dir/x.trace", out, sizeof out);
    CHECK(strstr(out, "CAIRN_TRACE=/nonexistent-dir/x.trace") != NULL);
    CHECK(strstr(out, "writable") != NULL);
    CHECK(strstr(out, "trace_on=0 flushes=") != NULL);   /* and the program ran on */
}

static void killed(void)
{
    const char *f = trace_file("killed");
    char out[4096];
    run_case("killed", f, out, sizeof out);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(!t.complete);
    CHECK(count(&t, TR_TX_BEGIN, -1) > 1000);       /* the buffers written so far */
    CHECK(count(&t, TR_TX_BEGIN, -1) < 2000);       /* the last one was lost */
    /* cut the file in the middle of a record: still parses, torn bytes ignored */
    struct stat st;
    REQUIRE(stat(f, &st) == 0);
    REQUIRE(truncate(f, st.st_size - 45) == 0);
    TRACE(t2);
    REQUIRE(read_trace(f, &t2) == 0);
    CHECK(t2.torn > 0 && t2.torn < 32 + 32 && t2.n < t.n);
    unlink(f);

    f = trace_file("closekill");
    run_case("close_then_kill", f, out, sizeof out);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(!t.complete);
    CHECK(count(&t, TR_TX_COMMIT, -1) == 10 && count(&t, TR_POOL_CLOSE, -1) == 1);
    unlink(f);
}

static void fork_and_exec(void)
{
    const char *f = trace_file("forkexec");
    char out[4096];
    run_case("fork_and_exec", f, out, sizeof out);
    const char *g = strstr(out, "grandchild=");
    REQUIRE(g);
    int gpid = atoi(g + 11);
    CHECK(gpid > 0);
    CHECK(strstr(out, "is being written by another process") != NULL);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(t.complete == 1);                           /* one END: the fork child wrote none */
    CHECK(count(&t, TR_TX_COMMIT, -1) == 2);          /* both, around the grandchild */
    CHECK(count(&t, TR_FENCE, TR_OFENCE) < 1000);     /* none of the fork child's */
    char gf[600];
    snprintf(gf, sizeof gf, "%s.%d", f, gpid);
    TRACE(t2);
    REQUIRE(read_trace(gf, &t2) == 0);
    CHECK(t2.complete == 1 && t2.pid == (uint64_t)gpid);
    CHECK(count(&t2, TR_FENCE, TR_OFENCE) == 1);
    unlink(f);
    unlink(gf);
    /* %p: one file per process */
    char pat[600];
    snprintf(pat, sizeof pat, "/tmp/cairn-test-%d-pct-%%p.trace", (int)getpid());
    run_case("pid", pat, out, sizeof out);
    snprintf(gf, sizeof gf, "/tmp/cairn-test-%d-pct-%d.trace", (int)getpid(), atoi(out));
    REQUIRE(read_trace(gf, &t2) == 0);
    CHECK(t2.complete == 1 && t2.pid == (uint64_t)atoi(out));
    unlink(gf);
}

static void signals(void)
{
    /* also in the msync domain: persist.c's per-thread dirty list is safe
     * against a handler that flushes while the thread updates it */
    const char *f = trace_file("signals");
    char out[4096];
    run_case("signals", f, out, sizeof out);
    int nsig = 0;
    unsigned long long off = 0;
    REQUIRE(sscanf(out, "signals=%d off=%llu", &nsig, &off) == 2);
    TRACE(t);
    REQUIRE(read_trace(f, &t) == 0);
    CHECK(t.complete == 1);
    uint64_t root = t.r[find(&t, 0, TR_ALLOC)].addr;
    int handler_flushes = 0, bad = 0, depth = 0;
    for (size_t i = 0; i < t.n; i++) {
        const struct rec *r = &t.r[i];
        if (r->type < TR_THREAD || r->type > TR_END || (i && r->seq <= t.r[i - 1].seq)) bad++;
        if (r->type == TR_FLUSH && r->addr == ((root + off) & ~(uint64_t)63)) handler_flushes++;
        if (r->type == TR_TX_BEGIN) depth++;
        if (r->type == TR_TX_COMMIT) depth--;
        if (depth < 0 || depth > 1) bad++;
    }
    CHECK(bad == 0);
    /* most land inside an event (the loop spends most of its time recording) */
    CHECK(nsig >= 200 && handler_flushes > 0 && handler_flushes <= nsig);
    CHECK(count(&t, TR_TX_COMMIT, -1) >= signal_iterations());
    unlink(f);
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        if (!strcmp(argv[1], "one_tx")) case_one_tx();
        else if (!strcmp(argv[1], "nested")) case_nested_abort();
        else if (!strcmp(argv[1], "ptr_store")) case_ptr_store();
        else if (!strcmp(argv[1], "threads")) case_threads();
        else if (!strcmp(argv[1], "handoff")) case_handoff();
        else if (!strcmp(argv[1], "killed")) case_killed();
        else if (!strcmp(argv[1], "close_then_kill")) case_close_then_kill();
        else if (!strcmp(argv[1], "fork_and_exec")) case_fork_and_exec();
        else if (!strcmp(argv[1], "pid")) case_pid();
        else if (!strcmp(argv[1], "signals")) case_signals();
        else return 2;
        return 0;
    }
    RUN(one_tx);
    RUN(nested_abort);
    RUN(ptr_store);
    RUN(threads);
    RUN(handoff);
    RUN(off_and_bad_path);
    RUN(killed);
    RUN(fork_and_exec);
    RUN(signals);
    DONE();
}
