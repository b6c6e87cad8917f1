/* test_recover.c -- recovery at open: torn transactions roll back, leaks
 * and unreachable cycles are collected, reachable objects stay, recovery
 * is idempotent and an interrupted recovery recovers. A "crash" is a child
 * that _exits in the middle: its stores are in the shared mapping (as after
 * a process kill), its volatile state is gone. */
#include "harness.h"
#include "internal.h"
#include "poolcheck.h"
#include <sys/mman.h>

struct node { uint64_t next; uint64_t val; };
struct root { uint64_t head; uint64_t count; uint64_t spare; };
static const char *PATH;

static void build_list(void *arg)
{
    int n = (int)(intptr_t)arg;
    cairn_pool *p = cairn_pool_open(PATH, "rec");
    struct root *r = CAIRN_ROOT(p, struct root);
    for (int i = 0; i < n; i++) {
        CAIRN_TX(p) {
            struct node *x = cairn_alloc(p, sizeof *x);
            x->val = (uint64_t)i;
            cairn_ptr_store(&x->next, cairn_ptr_load(&r->head));
            cairn_ptr_store(&r->head, x);
            cairn_tx_add(&r->count, 8);
            r->count++;
        }
    }
    cairn_pool_close(p);
}

/* begins a transaction that rewrites everything, and dies inside it */
static void crash_in_tx(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_open(PATH, "rec");
    struct root *r = CAIRN_ROOT(p, struct root);
    cairn_tx_begin(p);
    for (struct node *x = cairn_ptr_load(&r->head); x; x = cairn_ptr_load(&x->next)) {
        cairn_tx_add(&x->val, 8);
        x->val += 1000000;
    }
    struct node *extra = cairn_alloc(p, sizeof *extra);          /* dies with the tx */
    cairn_ptr_store(&extra->next, cairn_ptr_load(&r->head));
    cairn_ptr_store(&r->head, extra);
    cairn_tx_add(&r->count, 8);
    r->count++;
    /* a leak outside any transaction, and an unreachable cycle */
    struct node *l = cairn_alloc(p, sizeof *l);
    struct node *c1 = cairn_alloc(p, sizeof *c1), *c2 = cairn_alloc(p, sizeof *c2);
    (void)l;
    cairn_ptr_store(&c1->next, c2);
    cairn_ptr_store(&c2->next, c1);
    _exit(0);
}

static int verify_list(cairn_pool *p, int n)
{
    struct root *r = CAIRN_ROOT(p, struct root);
    int k = 0, bad = 0;
    for (struct node *x = cairn_ptr_load(&r->head); x; x = cairn_ptr_load(&x->next), k++)
        if (x->val != (uint64_t)(n - 1 - k)) bad++;
    return !bad && k == n && r->count == (uint64_t)n;
}

static void torn_tx_rolls_back(void)
{
    CHECK(t_child(build_list, (void *)(intptr_t)200, NULL, 0) == 0);
    CHECK(t_child(crash_in_tx, NULL, NULL, 0) == 0);
    cairn_pool *p = cairn_pool_open(PATH, "rec");
    REQUIRE(p);
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    CHECK(rec.recovered == 1 && rec.transactions_rolled_back == 1 && rec.records_rolled_back >= 200);
    CHECK(rec.objects_reachable == 201);                 /* root + 200 nodes */
    CHECK(verify_list(p, 200));
    cairn_pool_close(p);
    /* everything the crash leaked (the node outside the tx, the cycle) and
     * the torn tx's node are free again: after the clean close the
     * allocator holds exactly the 201 reachable objects */
    struct t_check chk;
    REQUIRE(t_check_pool(PATH, &chk) == 0);
    CHECK(chk.errors == 0 && chk.reachable == 201 && chk.leaked == 0);
    p = cairn_pool_open(PATH, "rec");
    cairn_pool_recovery(p, &rec);
    CHECK(rec.recovered == 0);
    CHECK(verify_list(p, 200));
    cairn_pool_close(p);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp --sparse=always %s %s", from, to);
    REQUIRE(system(cmd) == 0);
}

static void open_close(void *arg)
{
    cairn_pool *p = cairn_pool_open(arg, "rec");
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); _exit(2); }
    cairn_pool_close(p);
}

static int files_equal(const char *a, const char *b)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

static void interrupted_recovery_recovers(void)
{
    CHECK(t_child(crash_in_tx, NULL, NULL, 0) == 0);
    const char *a = t_path("recA"), *b = t_path("recB");
    copy_file(PATH, a);
    copy_file(PATH, b);
    /* A: recovered in one go */
    CHECK(t_child(open_close, (void *)a, NULL, 0) == 0);
    /* B: recovery dies half-way through the roll-back, then after it, then runs whole */
    char err[512];
    setenv("CAIRN_TEST_CRASH_RECOVERY", "mid", 1);
    CHECK(t_child(open_close, (void *)b, err, sizeof err) == 128 + SIGABRT);
    CHECK(strstr(err, "test crash") != NULL);
    setenv("CAIRN_TEST_CRASH_RECOVERY", "after", 1);
    CHECK(t_child(open_close, (void *)b, err, sizeof err) == 128 + SIGABRT);
    unsetenv("CAIRN_TEST_CRASH_RECOVERY");
    CHECK(t_child(open_close, (void *)b, NULL, 0) == 0);
    CHECK(files_equal(a, b));                 /* idempotent: byte for byte the same pool */
    cairn_pool *p = cairn_pool_open(b, "rec");
    REQUIRE(p);
    CHECK(verify_list(p, 200));
    cairn_pool_close(p);
    unlink(a);
    unlink(b);
}

static void gc_on_demand_keeps_reachable(void)
{
    cairn_pool *p = cairn_pool_open(PATH, "rec");
    REQUIRE(p);
    for (int i = 0; i < 50; i++) cairn_alloc(p, 48);      /* leaked on purpose */
    cairn_pool_close(p);
    setenv("CAIRN_GC", "always", 1);
    p = cairn_pool_open(PATH, "rec");
    unsetenv("CAIRN_GC");
    REQUIRE(p);
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    CHECK(rec.objects_reachable == 201);
    CHECK(verify_list(p, 200));
    cairn_pool_close(p);
}

/* Large objects through the mark after a crash, in both of its drivers
 * (the background thread and CAIRN_GC_SYNC=1): a reachable large object,
 * and the small one it points to, stay allocated with their data; an
 * unreachable large object is freed; new large objects never overlap the
 * kept one. */
struct lroot { uint64_t big; };
#define BIG ((size_t)1 << 20)
static const char *LPATH;

static void crash_with_large(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_create(LPATH, "large", 16 << 20);
    struct lroot *r = CAIRN_ROOT(p, struct lroot);
    CAIRN_TX(p) {
        unsigned char *big = cairn_alloc(p, BIG);
        struct node *small = cairn_alloc(p, sizeof *small);
        small->val = 42;
        for (size_t i = 8; i < BIG; i++) big[i] = (unsigned char)(i * 7);
        cairn_ptr_store(big, small);
        cairn_ptr_store(&r->big, big);
    }
    CAIRN_TX(p) {
        unsigned char *garbage = cairn_alloc(p, 2 * BIG);   /* never linked */
        garbage[0] = 1;
    }
    _exit(0);
}

static void large_objects_after_crash(void)
{
    for (int sync = 0; sync < 2; sync++) {
        unlink(LPATH);
        CHECK(t_child(crash_with_large, NULL, NULL, 0) == 0);
        if (sync) setenv("CAIRN_GC_SYNC", "1", 1);
        cairn_pool *p = cairn_pool_open(LPATH, "large");
        unsetenv("CAIRN_GC_SYNC");
        REQUIRE(p);
        struct cairn_recovery rec;
        cairn_pool_recovery(p, &rec);
        CHECK(rec.recovered == 1 && rec.objects_reachable == 3);   /* root, big, small */
        CHECK(rec.bytes_freed >= 2 * BIG);
        struct lroot *r = CAIRN_ROOT(p, struct lroot);
        unsigned char *big = cairn_ptr_load(&r->big);
        REQUIRE(big);
        CHECK(cairn_usable_size(big) >= BIG);
        size_t bad = 0;
        for (size_t i = 8; i < BIG; i++) bad += big[i] != (unsigned char)(i * 7);
        CHECK(bad == 0);
        struct node *small = cairn_ptr_load(big);
        CHECK(small && cairn_usable_size(small) >= sizeof *small && small->val == 42);
        for (int k = 0; k < 4; k++) {
            unsigned char *q = cairn_alloc(p, 2 * BIG);
            CHECK(q && (q + 2 * BIG <= big || q >= big + BIG));
        }
        CHECK(cairn_pool_close(p) == 0);
    }
    unlink(LPATH);
}

static char *slurp(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) return NULL;
    char *b = malloc((size_t)st.st_size);
    if (b && pread(fd, b, (size_t)st.st_size, 0) != st.st_size) { free(b); b = NULL; }
    close(fd);
    *size = (size_t)st.st_size;
    return b;
}

static uint64_t image_open_lanes(char *img, struct cairn_lane_cache *c, uint64_t base, uint64_t touched)
{
    struct cairn_check_report rep;
    struct t_check tc = { 0 };
    int rc = cairn__check_image("image", img, 16 << 20, true, c, base, touched, t_check_emit, &tc, &rep);
    return rc < 0 ? ~0ull : rep.open_lanes;
}

/* The crash checker's in-place check (cairn__check_image) reuses a lane's
 * scan only while that lane is untouched: a lane given as touched is
 * scanned again, and what its new contents held is not kept for later. */
static void check_image_reuses_only_untouched_lanes(void)
{
    CHECK(t_child(build_list, (void *)(intptr_t)3, NULL, 0) == 0);
    char a_path[4200];
    snprintf(a_path, sizeof a_path, "%s.clean", PATH);
    copy_file(PATH, a_path);
    CHECK(t_child(crash_in_tx, NULL, NULL, 0) == 0);
    size_t na = 0, nb = 0;
    char *a = slurp(a_path, &na), *b = slurp(PATH, &nb);
    REQUIRE(a && b && na == (16 << 20) && nb == na);
    const struct pool_hdr *h = (const void *)a;
    uint64_t touched = 0;
    for (unsigned l = 0; l < h->nlanes && l < 64; l++)
        if (memcmp(a + h->lanes_off + l * h->lane_size, b + h->lanes_off + l * h->lane_size, h->lane_size))
            touched |= 1ull << l;
    CHECK(touched != 0);
    char *img = mmap(NULL, na, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(img != MAP_FAILED);
    struct cairn_lane_cache *c = cairn__lane_cache_new();
    REQUIRE(c);
    memcpy(img, a, na);
    CHECK(image_open_lanes(img, c, 1, 0) == 0);
    /* the clean image with the crashed transaction's lanes */
    memcpy(img, a, na);
    memcpy(img + h->lanes_off, b + h->lanes_off, h->nlanes * h->lane_size);
    CHECK(image_open_lanes(img, c, 1, touched) == 1);
    memcpy(img, a, na);
    CHECK(image_open_lanes(img, c, 1, 0) == 0);
    cairn__lane_cache_free(c);
    munmap(img, na);
    free(a);
    free(b);
    unlink(a_path);
}

int main(void)
{
    PATH = t_path("recover");
    cairn_pool *p = cairn_pool_create(PATH, "rec", 16 << 20);
    REQUIRE(p && CAIRN_ROOT(p, struct root));
    cairn_pool_close(p);
    RUN(torn_tx_rolls_back);
    RUN(interrupted_recovery_recovers);
    RUN(gc_on_demand_keeps_reachable);
    RUN(check_image_reuses_only_untouched_lanes);
    LPATH = t_path("recover-large");
    RUN(large_objects_after_crash);
    unlink(PATH);
    DONE();
}
