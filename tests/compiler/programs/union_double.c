/* Numbers in a union with a pointer (jq's jv, Lua's TValue): clang passes
 * and copies such a union through its pointer member, so at -O1 and up a
 * double's bits reach `inttoptr` and pointer loads/stores. A negative
 * double has bit 63 set, like a relative pointer (-1.0 is
 * 0xbff0000000000000): it must come back as the same number, in DRAM and
 * in a pool, and a pointer in the same union must still work.
 *   union_double POOL      prints the numbers, then "ok" */
#include <cairn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct { int kind; union { void *ptr; double number; } u; } jv;

__attribute__((noinline)) static jv jv_number(double x)
{
    jv j = {1, {.number = x}};
    return j;
}
__attribute__((noinline)) static jv jv_ptr(void *p)
{
    jv j = {2, {.ptr = p}};
    return j;
}
__attribute__((noinline)) static jv copy(const jv *from) { return *from; }

static const double nums[] = {-1.0, -2.5, -0.0, -1e300, -INFINITY, 3.25, 0.0};
#define N (sizeof nums / sizeof nums[0])

struct root { jv vals[N + 1]; long target; };

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int bad = 0;
    jv dram[N];
    for (unsigned i = 0; i < N; i++) {
        dram[i] = jv_number(nums[i]);
        jv back = copy(&dram[i]);
        printf("%g ", back.u.number);
        bad |= memcmp(&back.u.number, &nums[i], sizeof(double)) != 0;
    }
    printf("\n");
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "union_double", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    CAIRN_TX(p) {
        for (unsigned i = 0; i < N; i++)
            r->vals[i] = jv_number(nums[i]);
        r->target = 42;
        r->vals[N] = jv_ptr(&r->target);
    }
    for (unsigned i = 0; i < N; i++) {
        jv back = copy(&r->vals[i]);
        printf("%g ", back.u.number);
        bad |= memcmp(&back.u.number, &nums[i], sizeof(double)) != 0;
    }
    jv pj = copy(&r->vals[N]);
    printf("\n%ld\n", *(long *)pj.u.ptr);
    bad |= *(long *)pj.u.ptr != 42;
    cairn_pool_close(p);
    puts(bad ? "BAD" : "ok");
    return bad;
}
