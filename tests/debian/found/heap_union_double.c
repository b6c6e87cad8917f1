/* jq 1.6's jv: a struct whose union holds either a pointer or a double.
 * Clang copies and returns it through the pointer member, so a negative
 * double (bit 63 set) is read back like a relative pointer, and the id in
 * its bits names no open pool: jq's own tests stopped at the first "-1"
 * with "relative pointer 0xbff0000000000000 refers to pool id 4190208,
 * which is not open". Under --persistent-heap such bits are values. The
 * array of values lives in the heap, and so do the strings some of them
 * point to. Prints the same as a clang build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { NUMBER, STRING };
typedef struct {
    unsigned char kind;
    int size;
    union {
        struct str *ptr;
        double number;
    } u;
} jv;
struct str { int refs; char text[24]; };

__attribute__((noinline)) static jv jv_number(double x)
{
    jv j = {NUMBER, 0, {.number = x}};
    return j;
}

__attribute__((noinline)) static jv jv_string(const char *s)
{
    struct str *p = malloc(sizeof *p);
    p->refs = 1;
    snprintf(p->text, sizeof p->text, "%s", s);
    jv j = {STRING, (int)strlen(s), {.ptr = p}};
    return j;
}

static int cmp(const void *a, const void *b)
{
    const jv *x = a, *y = b;
    if (x->kind != y->kind) return x->kind - y->kind;
    if (x->kind == STRING) return strcmp(x->u.ptr->text, y->u.ptr->text);
    return (x->u.number > y->u.number) - (x->u.number < y->u.number);
}

static void print(const char *what, const jv *v, int n)
{
    printf("%s:", what);
    for (int i = 0; i < n; i++) {
        if (v[i].kind == NUMBER) printf(" %g", v[i].u.number);
        else printf(" \"%s\"", v[i].u.ptr->text);
    }
    printf("\n");
}

int main(void)
{
    static const double nums[] = {-1.0, 2.5, -0.0, -1e300, 3.0, -2.75, -4096.0, 1e-300};
    int n = 0, cap = 2;
    jv *arr = malloc(cap * sizeof *arr);
    for (unsigned i = 0; i < sizeof nums / sizeof *nums; i++) {
        if (n == cap) arr = realloc(arr, (cap *= 2) * sizeof *arr);
        arr[n++] = jv_number(nums[i]);
        if (i % 3 == 0) {
            if (n == cap) arr = realloc(arr, (cap *= 2) * sizeof *arr);
            char name[16];
            snprintf(name, sizeof name, "s%u", 9 - i);
            arr[n++] = jv_string(name);
        }
    }
    print("built", arr, n);
    jv *copy = malloc(n * sizeof *copy);
    memcpy(copy, arr, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp);
    print("sorted", copy, n);
    jv tmp = copy[0];                  /* a struct copy through the union */
    copy[0] = copy[n - 1];
    copy[n - 1] = tmp;
    print("swapped", copy, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        if (arr[i].kind == NUMBER) sum += arr[i].u.number;
    printf("sum %g\n", sum);
    for (int i = 0; i < n; i++)
        if (arr[i].kind == STRING) free(arr[i].u.ptr);
    free(copy);
    free(arr);
    return 0;
}
