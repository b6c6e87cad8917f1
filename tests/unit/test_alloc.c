/* test_alloc.c -- sizes from 16 B to 1 GiB, zeroed memory, reuse, classes. */
#include "harness.h"

static cairn_pool *P;

static void sizes_and_zeroing(void)
{
    size_t sizes[] = { 1, 16, 17, 64, 100, 1000, 1024, 4096, 5000, 65536, 65537, 1 << 20, 10 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *o = cairn_alloc(P, sizes[i]);
        REQUIRE(o);
        CHECK(((uintptr_t)o & 15) == 0);
        CHECK(cairn_usable_size(o) >= sizes[i]);
        size_t nz = 0;
        for (size_t k = 0; k < sizes[i]; k++) nz += o[k] != 0;
        CHECK(nz == 0);
        memset(o, 0xee, sizes[i]);
        cairn_free(o);
        char *o2 = cairn_alloc(P, sizes[i]);      /* likely the same memory: zeroed again */
        nz = 0;
        for (size_t k = 0; k < sizes[i]; k++) nz += o2[k] != 0;
        CHECK(nz == 0);
        cairn_free(o2);
    }
    CHECK(cairn_alloc(P, (size_t)8 << 30) == NULL && strstr(cairn_errormsg(), "largest"));
}

static void many_small(void)
{
    enum { N = 100000 };
    static void *objs[N];
    for (int i = 0; i < N; i++) { objs[i] = cairn_alloc(P, 16 + (i % 8) * 16); REQUIRE(objs[i]); }
    for (int i = 0; i < N; i += 2) cairn_free(objs[i]);
    for (int i = 0; i < N; i += 2) { objs[i] = cairn_alloc(P, 16 + (i % 8) * 16); REQUIRE(objs[i]); }
    /* no two live objects overlap */
    int overlaps = 0;
    for (int i = 1; i < N; i++)
        if (objs[i] == objs[i - 1]) overlaps++;
    CHECK(overlaps == 0);
    for (int i = 0; i < N; i++) cairn_free(objs[i]);
}

static void one_gib(void)
{
    const char *path = t_path("gib");
    cairn_pool *q = cairn_pool_create(path, "gib", (size_t)1200 << 20);
    REQUIRE(q);
    char *o = cairn_alloc(q, (size_t)1 << 30);
    REQUIRE(o);
    o[0] = 1;
    o[((size_t)1 << 30) - 1] = 2;
    cairn_free(o);
    o = cairn_alloc(q, (size_t)1 << 30);
    REQUIRE(o);
    CHECK(o[0] == 0 && o[((size_t)1 << 30) - 1] == 0);
    cairn_pool_close(q);
    unlink(path);
}

static void bad_free_is_reported(void)
{
    char *o = cairn_alloc(P, 64);
    cairn_free(o + 16);                     /* not an object start: reported, ignored */
    CHECK(cairn_usable_size(o) >= 64);
    cairn_free(o);
    int x;
    cairn_free(&x);                          /* not PM: reported, ignored */
}

/* the root cannot be freed: freed, its memory went to the next allocation
 * while cairn_root kept returning it (both pointers to the same bytes) */
static void root_free_is_refused(void)
{
    const char *path = t_path("rootfree");
    cairn_pool *q = cairn_pool_create(path, "rf", 8 << 20);
    REQUIRE(q);
    uint64_t *root = cairn_root(q, 96, 12);
    REQUIRE(root);
    root[0] = 42;
    cairn_free(root);
    CHECK(strstr(cairn_errormsg(), "root") != NULL);
    CHECK(cairn_usable_size(root) >= 96);
    CAIRN_TX(q) { cairn_free(root); }
    CHECK(cairn_usable_size(root) >= 96);
    char *o = cairn_alloc(q, 96);
    CHECK(o && (void *)o != (void *)root);
    CHECK(cairn_root(q, 96, 12) == root && root[0] == 42);
    cairn_pool_close(q);
    unlink(path);
}

int main(void)
{
    const char *path = t_path("alloc");
    P = cairn_pool_create(path, "alloc", 256 << 20);
    REQUIRE(P);
    RUN(sizes_and_zeroing);
    RUN(many_small);
    RUN(one_gib);
    RUN(bad_free_is_reported);
    RUN(root_free_is_refused);
    cairn_pool_close(P);
    unlink(path);
    DONE();
}
