/* test_pptr.c -- relative pointers and the safety rules. */
#include "harness.h"

struct root { uint64_t p, q; uint64_t raw; };
static const char *PA, *PB;

static void store_load(void)
{
    cairn_pool *p = cairn_pool_open(PA, "pp");
    REQUIRE(p);
    struct root *r = CAIRN_ROOT(p, struct root);
    REQUIRE(r);
    void *o = cairn_alloc(p, 32);
    CAIRN_TX(p) cairn_ptr_store(&r->p, o);
    CHECK(r->p >> 63 == 1);                               /* relative form in PM */
    CHECK(((r->p >> 40) & 0x7fffff) != 0);
    CHECK(cairn_ptr_load(&r->p) == o);
    CHECK((void *)cairn__ra2va(r->p) == o);
    CAIRN_TX(p) cairn_ptr_store(&r->q, NULL);
    CHECK(r->q == 0 && cairn_ptr_load(&r->q) == NULL);
    /* a DRAM slot keeps a plain address */
    void *dram_slot = NULL;
    cairn_ptr_store(&dram_slot, o);
    CHECK(dram_slot == o);
    /* an interior pointer survives too */
    CAIRN_TX(p) cairn_ptr_store(&r->q, (char *)o + 8);
    CHECK(cairn_ptr_load(&r->q) == (char *)o + 8);
    cairn_pool_close(p);
    p = cairn_pool_open(PA, "pp");
    r = CAIRN_ROOT(p, struct root);
    CHECK(cairn_ptr_load(&r->q) == (char *)cairn_ptr_load(&r->p) + 8);
    CHECK(cairn_pool_of(cairn_ptr_load(&r->p)) == p);
    cairn_pool_close(p);
}

static void volatile_into_pm(void *arg)
{
    (void)arg;
    cairn_pool *p = cairn_pool_open(PA, "pp");
    struct root *r = CAIRN_ROOT(p, struct root);
    static int dram;
    cairn_ptr_store(&r->p, &dram);
}

static void other_pool_into_pm(void *arg)
{
    (void)arg;
    cairn_pool *a = cairn_pool_open(PA, "pp"), *b = cairn_pool_open(PB, "pp");
    struct root *ra = CAIRN_ROOT(a, struct root);
    void *ob = cairn_alloc(b, 16);
    cairn_ptr_store(&ra->p, ob);
}

/* pool A opened, with a new object o stored (relative) in its root's q */
static struct root *open_with_object(cairn_pool **a, void **o)
{
    *a = cairn_pool_open(PA, "pp");
    struct root *ra = CAIRN_ROOT(*a, struct root);
    *o = cairn_alloc(*a, 16);
    CAIRN_TX(*a) cairn_ptr_store(&ra->q, *o);
    return ra;
}

/* a pointer kept past its pool's close, then followed */
static void pool_not_open(void *arg)
{
    (void)arg;
    cairn_pool *a;
    void *o;
    struct root *ra = open_with_object(&a, &o);
    uint64_t slot = ra->q;
    cairn_pool_close(a);
    cairn_ptr_load(&slot);
}

/* A relative-looking value of an id no pool of this process ever had is
 * bits, not a pointer (a negative double in a union with a pointer): left
 * as it is, with or without heap mode. */
static void unseen_ids_are_values(void *arg)
{
    (void)arg;
    cairn_pool *a;
    void *o;
    struct root *ra = open_with_object(&a, &o);
    uint64_t other = ra->q ^ ((uint64_t)1 << 41), slot = other;
    double d = -1.0;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    CHECK(cairn_ptr_load(&slot) == (void *)(uintptr_t)other);
    CHECK(cairn__ra2va(bits) == (void *)(uintptr_t)bits);
    cairn_pool_close(a);
    exit(t_failures ? 1 : 0);
}

/* what precompiled code does with a pointer it read straight from PM */
__attribute__((noinline)) static int follow_raw(const uint64_t *slot)
{
    const volatile int *p = (const volatile int *)(uintptr_t)*(const volatile uint64_t *)slot;
    return *p;
}

__attribute__((unused)) static void raw_deref(void *arg)
{
    (void)arg;
    cairn_pool *a;
    void *o;
    struct root *ra = open_with_object(&a, &o);
    follow_raw(&ra->q);
}

static void violations_stop_with_a_message(void)
{
    char err[2048];
    int st = t_child(volatile_into_pm, NULL, err, sizeof err);
    CHECK(st == 128 + SIGABRT);
    CHECK(strstr(err, "volatile memory") && strstr(err, "test_pptr.c:"));
    st = t_child(other_pool_into_pm, NULL, err, sizeof err);
    CHECK(st == 128 + SIGABRT);
    CHECK(strstr(err, "between pools") && strstr(err, "test_pptr.c:"));
    st = t_child(pool_not_open, NULL, err, sizeof err);
    CHECK(st == 128 + SIGABRT);
    CHECK(strstr(err, "not open") && strstr(err, "pool id"));
    st = t_child(unseen_ids_are_values, NULL, err, sizeof err);
    CHECK(st == 0);
    if (st != 0) fprintf(stderr, "%s", err);
#ifdef CAIRN_TEST_SANITIZED
    /* ASan and TSan check or intercept the access and report first */
#else
    st = t_child(raw_deref, NULL, err, sizeof err);
    CHECK(st == 128 + SIGSEGV);
    CHECK(strstr(err, "relative pointer") && strstr(err, "cairn_ptr_load"));
#endif
}

/* Persistent-heap mode: bits with no open pool's id in a pointer slot (a
 * negative double in a union with a pointer, as jq's jv keeps) are values,
 * left as they are; a pointer into an open pool still converts. */
static void unknown_ids_as_values(void *arg)
{
    (void)arg;
    cairn_pool *a;
    void *o;
    struct root *ra = open_with_object(&a, &o);
    double d = -1.0;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint64_t other = ra->q ^ ((uint64_t)1 << 41);   /* a relative form, no open pool's id */
    cairn__unknown_pool_ids_are_values(1);
    CHECK(cairn__ra2va(bits) == (void *)(uintptr_t)bits);
    CHECK(cairn__ra2va(other) == (void *)(uintptr_t)other);
    CHECK(cairn_ptr_load(&ra->q) == o);
    uint64_t slot = bits;
    CHECK(cairn_ptr_load(&slot) == (void *)(uintptr_t)bits);
    /* stored as a pointer into the pool, the bits stay as they are */
    CAIRN_TX(a) cairn_ptr_store(&ra->p, (void *)(uintptr_t)bits);
    CHECK(ra->p == bits);
    CHECK(cairn_ptr_load(&ra->p) == (void *)(uintptr_t)bits);
    cairn__unknown_pool_ids_are_values(0);
    cairn_pool_close(a);
    exit(t_failures ? 1 : 0);
}

static void unknown_ids_stop_again(void *arg)
{
    (void)arg;
    cairn__unknown_pool_ids_are_values(1);
    cairn__unknown_pool_ids_are_values(0);
    pool_not_open(NULL);
}

static void unknown_ids_in_heap_mode(void)
{
    char err[2048];
    int st = t_child(unknown_ids_as_values, NULL, err, sizeof err);
    CHECK(st == 0);
    if (st != 0) fprintf(stderr, "%s", err);
    st = t_child(unknown_ids_stop_again, NULL, err, sizeof err);   /* off: the stop is back */
    CHECK(st == 128 + SIGABRT);
    CHECK(strstr(err, "not open") && strstr(err, "pool id"));
}

int main(void)
{
    PA = t_path("ppa");
    PB = t_path("ppb");
    cairn_pool *a = cairn_pool_create(PA, "pp", 8 << 20), *b = cairn_pool_create(PB, "pp", 8 << 20);
    REQUIRE(a && b);
    cairn_pool_close(a);
    cairn_pool_close(b);
    RUN(store_load);
    RUN(violations_stop_with_a_message);
    RUN(unknown_ids_in_heap_mode);
    unlink(PA);
    unlink(PB);
    DONE();
}
