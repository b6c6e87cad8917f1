/* test_pool.c -- pools: create/open/close, layouts, sizes, growth, roots,
 * several pools at once, a pool mapping at another address. */
#include "harness.h"
#include <signal.h>

struct rootA { uint64_t a; char name[16]; };
struct rootB { uint64_t a; uint64_t b; };

static void create_open_close(void)
{
    const char *path = t_path("basic");
    cairn_pool *p = cairn_pool_create(path, "basic", 8 << 20);
    REQUIRE(p);
    struct rootA *r = CAIRN_ROOT(p, struct rootA);
    REQUIRE(r);
    CHECK(cairn_is_pm(r));
    CHECK(r->a == 0);
    CAIRN_TX(p) { cairn_tx_add(r, sizeof *r); r->a = 42; strcpy(r->name, "hello"); }
    CHECK(cairn_pool_close(p) == 0);
    p = cairn_pool_open(path, "basic");
    REQUIRE(p);
    r = CAIRN_ROOT(p, struct rootA);
    REQUIRE(r);
    CHECK(r->a == 42 && !strcmp(r->name, "hello"));
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    CHECK(rec.recovered == 0);
    /* the same pool twice in one process is refused, saying so (not "in
     * use by another process") */
    CHECK(cairn_pool_open(path, "basic") == NULL && errno == EBUSY &&
          strstr(cairn_errormsg(), "already open in this process"));
    cairn_pool_close(p);
    unlink(path);
}

/* a handle used after cairn_pool_close is reported (was: freed memory read:
 * "out of space" from an alloc, a leftover message from a begin, a double
 * close freeing twice) */
static void closed_handle_is_reported(void)
{
    const char *path = t_path("closed");
    cairn_pool *p = cairn_pool_create(path, "closed", 8 << 20);
    REQUIRE(p);
    CHECK(cairn_pool_close(p) == 0);
    CHECK(cairn_pool_close(p) == -1 && errno == EBADF &&
          strstr(cairn_errormsg(), "closed by cairn_pool_close"));
    CHECK(cairn_alloc(p, 16) == NULL && strstr(cairn_errormsg(), "cairn_alloc: "));
    CHECK(cairn_tx_begin(p) == -1 && strstr(cairn_errormsg(), "closed by cairn_pool_close"));
    CHECK(cairn_root(p, 8, 2) == NULL && strstr(cairn_errormsg(), "closed by cairn_pool_close"));
    CHECK(cairn_pool_grow(p, 16 << 20) == -1 && strstr(cairn_errormsg(), "closed by"));
    unlink(path);
}

static void bad_arguments(void)
{
    const char *path = t_path("args");
    CHECK(cairn_pool_create(path, "x", 1 << 20) == NULL && strstr(cairn_errormsg(), "8 MiB"));
    CHECK(cairn_pool_create(path, "x", (size_t)2 << 40) == NULL);
    CHECK(cairn_pool_open(path, "x") == NULL && errno == ENOENT && strstr(cairn_errormsg(), "cairn_pool_create"));
    cairn_pool *p = cairn_pool_create(path, "x", 8 << 20);
    REQUIRE(p);
    cairn_pool_close(p);
    CHECK(cairn_pool_create(path, "x", 8 << 20) == NULL && errno == EEXIST);
    CHECK(cairn_pool_open(path, "other") == NULL && strstr(cairn_errormsg(), "layout"));
    CHECK(cairn_pool_open("/tmp", "x") == NULL && strstr(cairn_errormsg(), "is a directory"));
    CHECK(cairn_pool_create("/tmp", "x", 8 << 20) == NULL &&
          strstr(cairn_errormsg(), "that is a directory: name a file in it"));
    CHECK(cairn_pool_create("/nonexistent-cairn-dir/p.pool", "x", 8 << 20) == NULL &&
          strstr(cairn_errormsg(), "its directory does not exist"));
    CHECK(cairn_pool_open("/nonexistent-cairn-dir/p.pool", "x") == NULL &&
          strstr(cairn_errormsg(), "its directory does not exist"));
    CHECK(cairn_pool_close(NULL) == -1);
    unlink(path);
}

static void root_type_mismatch(void)
{
    const char *path = t_path("roottype");
    cairn_pool *p = cairn_pool_create(path, "rt", 8 << 20);
    REQUIRE(p);
    REQUIRE(CAIRN_ROOT(p, struct rootA));
    cairn_pool_close(p);
    p = cairn_pool_open(path, "rt");
    REQUIRE(p);
    CHECK(CAIRN_ROOT(p, struct rootB) == NULL && strstr(cairn_errormsg(), "type"));
    CHECK(CAIRN_ROOT(p, struct rootA) != NULL);
    uint64_t id = CAIRN_TYPE_ID(struct rootA);
    CHECK(cairn_root(p, sizeof(struct rootA) + 64, id) == NULL &&
          strstr(cairn_errormsg(), "ask for at most"));
    cairn_pool_close(p);
    unlink(path);
}

static void out_of_space_then_grow(void)
{
    const char *path = t_path("grow");
    cairn_pool *p = cairn_pool_create(path, "grow", 8 << 20);
    REQUIRE(p);
    struct rootB *r = CAIRN_ROOT(p, struct rootB);
    REQUIRE(r);
    int n = 0;
    void *last = NULL;
    for (;;) {
        void *o = cairn_alloc(p, 64 << 10);
        if (!o) break;
        cairn_ptr_store(o, last);            /* a chain the root can reach */
        last = o;
        n++;
    }
    CHECK(n > 50);
    CHECK(errno == ENOMEM && strstr(cairn_errormsg(), "out of space") && strstr(cairn_errormsg(), "grow"));
    CAIRN_TX(p) { cairn_ptr_store(&r->a, last); }
    CHECK(cairn_pool_grow(p, 32 << 20) == 0);
    CHECK(cairn_alloc(p, 64 << 10) != NULL);
    CHECK(cairn_alloc(p, 8 << 20) != NULL);
    cairn_pool_close(p);
    struct stat st;
    stat(path, &st);
    CHECK(st.st_size == 32 << 20);
    p = cairn_pool_open(path, "grow");
    REQUIRE(p);
    r = CAIRN_ROOT(p, struct rootB);
    int m = 0;
    for (void *o = cairn_ptr_load(&r->a); o; o = cairn_ptr_load(o)) m++;
    CHECK(m == n);
    cairn_pool_close(p);
    unlink(path);
}

static void several_pools(void)
{
    const char *a = t_path("multiA"), *b = t_path("multiB");
    cairn_pool *pa = cairn_pool_create(a, "m", 8 << 20), *pb = cairn_pool_create(b, "m", 8 << 20);
    REQUIRE(pa && pb);
    struct rootB *ra = CAIRN_ROOT(pa, struct rootB), *rb = CAIRN_ROOT(pb, struct rootB);
    REQUIRE(ra && rb);
    CHECK(cairn_pool_of(ra) == pa && cairn_pool_of(rb) == pb);
    void *oa = cairn_alloc(pa, 100), *ob = cairn_alloc(pb, 100);
    CAIRN_TX(pa) cairn_ptr_store(&ra->a, oa);
    CAIRN_TX(pb) cairn_ptr_store(&rb->a, ob);
    CHECK(cairn_ptr_load(&ra->a) == oa && cairn_ptr_load(&rb->a) == ob);
    cairn_pool_close(pa);
    cairn_pool_close(pb);
    /* reopen in the other order: each maps wherever, pointers still hold */
    pb = cairn_pool_open(b, "m");
    pa = cairn_pool_open(a, "m");
    REQUIRE(pa && pb);
    ra = CAIRN_ROOT(pa, struct rootB);
    rb = CAIRN_ROOT(pb, struct rootB);
    CHECK(cairn_pool_of(cairn_ptr_load(&ra->a)) == pa);
    CHECK(cairn_pool_of(cairn_ptr_load(&rb->a)) == pb);
    cairn_pool_close(pa);
    cairn_pool_close(pb);
    unlink(a);
    unlink(b);
}

/* A pool opened by a fresh process (re-exec of this test) maps wherever that
 * process's region and a random slot in it put it: ASLR places the region,
 * getrandom (or a clock/pid mix) the slot.  A forked child would inherit the
 * parent's region, so each probe is a new program image.  The probe follows a
 * relative pointer stored in the pool and prints the root's address. */
struct addr_node { uint64_t magic; struct addr_node *self; };
struct addr_root { struct addr_node *head; };
#define ADDR_MAGIC 0x6361697226616464ull

static int addr_probe(const char *path)
{
    cairn_pool *p = cairn_pool_open(path, "addr");
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 3; }
    struct addr_root *r = CAIRN_ROOT(p, struct addr_root);
    struct addr_node *n = r ? cairn_ptr_load(&r->head) : NULL;
    if (!n || n->magic != ADDR_MAGIC || cairn_ptr_load(&n->self) != n || cairn_pool_of(n) != p)
        return 4;
    printf("%p\n", (void *)r);
    cairn_pool_close(p);
    return 0;
}

static void maps_at_new_addresses(void)
{
    const char *path = t_path("addr");
    cairn_pool *p = cairn_pool_create(path, "addr", 8 << 20);
    REQUIRE(p);
    struct addr_root *r = CAIRN_ROOT(p, struct addr_root);
    REQUIRE(r);
    CAIRN_TX(p) {
        struct addr_node *n = cairn_alloc(p, sizeof *n);
        n->magic = ADDR_MAGIC;
        cairn_ptr_store(&n->self, n);
        cairn_ptr_store(&r->head, n);
    }
    char here[32];
    snprintf(here, sizeof here, "%p", (void *)r);
    cairn_pool_close(p);
    /* with 64 slots a repeat is a 1-in-64 event even without ASLR: up to 8 probes */
    char cmd[1200];
    int distinct = 0;
    snprintf(cmd, sizeof cmd, "/proc/%d/exe --addr-probe %s", (int)getpid(), path);
    for (int i = 0; i < 8 && !distinct; i++) {
        FILE *f = popen(cmd, "r");
        REQUIRE(f);
        char got[32] = "";
        if (!fgets(got, sizeof got, f)) got[0] = 0;
        int st = pclose(f);
        CHECK(st == 0);
        if (st) break;
        got[strcspn(got, "\n")] = 0;
        CHECK(got[0] == '0' && got[1] == 'x');
        distinct = strcmp(got, here) != 0;
    }
    if (!distinct) fprintf(stderr, "every probe mapped the pool at %s, as its creator did\n", here);
    CHECK(distinct);
    unlink(path);
}

static void copy_of_open_pool_refused(void)
{
    const char *a = t_path("orig"), *b = t_path("copy");
    cairn_pool *p = cairn_pool_create(a, "c", 8 << 20);
    REQUIRE(p);
    cairn_pool_close(p);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp --sparse=always %s %s", a, b);
    REQUIRE(system(cmd) == 0);
    p = cairn_pool_open(a, "c");
    REQUIRE(p);
    CHECK(cairn_pool_open(b, "c") == NULL && strstr(cairn_errormsg(), "already open"));
    cairn_pool_close(p);
    unlink(a);
    unlink(b);
}

static void close_with_open_tx_refused(void)
{
    const char *path = t_path("busy");
    cairn_pool *p = cairn_pool_create(path, "b", 8 << 20);
    REQUIRE(p);
    REQUIRE(cairn_tx_begin(p) == 0);
    CHECK(cairn_pool_close(p) == -1 && errno == EBUSY);
    CHECK(cairn_tx_commit() == 0);
    CHECK(cairn_pool_close(p) == 0);
    unlink(path);
}

static void big_pool(void)
{
    /* 1 TiB, sparse: creating, using a corner of it and reopening is cheap */
    const char *path = t_path("huge");
    cairn_pool *p = cairn_pool_create(path, "huge", (size_t)1 << 40);
    if (!p && errno == EFBIG) { fprintf(stderr, "skip: file system refuses 1 TiB files\n"); return; }
    REQUIRE(p);
    struct rootB *r = CAIRN_ROOT(p, struct rootB);
    REQUIRE(r);
    void *o = cairn_alloc(p, (size_t)1 << 30);    /* one 1 GiB object */
    REQUIRE(o);
    CAIRN_TX(p) cairn_ptr_store(&r->a, o);
    ((char *)o)[((size_t)1 << 30) - 1] = 7;
    cairn_persist((char *)o + ((size_t)1 << 30) - 1, 1);
    cairn_pool_close(p);
    p = cairn_pool_open(path, "huge");
    REQUIRE(p);
    r = CAIRN_ROOT(p, struct rootB);
    char *q = cairn_ptr_load(&r->a);
    CHECK(q && q[((size_t)1 << 30) - 1] == 7);
    CHECK(cairn_usable_size(q) >= ((size_t)1 << 30));
    cairn_pool_close(p);
    unlink(path);
}

static cairn_pool *FP;
static struct rootA *FR;
static void child_reads(void *arg)
{
    (void)arg;
    if (FR->a != 5) _exit(3);                     /* reads work */
    if (cairn_tx_begin(FP) == 0) _exit(4);        /* writes are refused */
    if (!strstr(cairn_errormsg(), "fork child")) _exit(5);
    if (cairn_alloc(FP, 32) != NULL) _exit(6);    /* so is allocating (was SIGSEGV) */
    if (!strstr(cairn_errormsg(), "fork child cannot allocate")) _exit(7);
    exit(0);                                      /* atexit must leave the pool alone */
}

/* a transaction open at the fork belongs to the parent: the child's commit
 * and log calls are refused with a message (they wrote the read-only view:
 * SIGSEGV), the child can go on, and the parent still commits it */
static void child_inherits_tx(void *arg)
{
    (void)arg;
    cairn_tx_add(FR->name, 8);                    /* refused, drops the child's copy */
    if (!strstr(cairn_errormsg(), "begun before fork")) _exit(8);
    if (cairn_tx_active() != 0) _exit(9);
    if (cairn_tx_commit() != -1) _exit(10);       /* nothing left to commit */
    exit(0);
}

static void fork_child_reads_only(void)
{
    const char *path = t_path("fork");
    FP = cairn_pool_create(path, "fork", 8 << 20);
    REQUIRE(FP);
    FR = CAIRN_ROOT(FP, struct rootA);
    CAIRN_TX(FP) { cairn_tx_add(FR, 8); FR->a = 5; }
    CHECK(t_child(child_reads, NULL, NULL, 0) == 0);
    REQUIRE(cairn_tx_begin(FP) == 0);
    cairn_tx_add(FR, 8);
    FR->a = 7;
    CHECK(t_child(child_inherits_tx, NULL, NULL, 0) == 0);
    CHECK(cairn_tx_commit() == 0 && FR->a == 7);
    CAIRN_TX(FP) { cairn_tx_add(FR, 8); FR->a = 6; }   /* the parent goes on */
    CHECK(cairn_pool_close(FP) == 0);
    FP = cairn_pool_open(path, "fork");
    REQUIRE(FP);
    struct cairn_recovery rec;
    cairn_pool_recovery(FP, &rec);
    CHECK(rec.recovered == 0 && CAIRN_ROOT(FP, struct rootA)->a == 6);
    cairn_pool_close(FP);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--addr-probe")) return addr_probe(argv[2]);
    RUN(create_open_close);
    RUN(bad_arguments);
    RUN(closed_handle_is_reported);
    RUN(root_type_mismatch);
    RUN(out_of_space_then_grow);
    RUN(several_pools);
    RUN(maps_at_new_addresses);
    RUN(copy_of_open_pool_refused);
    RUN(close_with_open_tx_refused);
    RUN(big_pool);
    RUN(fork_child_reads_only);
    DONE();
}
