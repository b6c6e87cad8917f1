/* volatile_mix.c -- an ordinary program with no pool at all: built by
 * cairn-cc it must print exactly what the clang build prints. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; char name[12]; long v; };
struct pair { struct node *a, *b; long sum; };

static int by_v(const void *x, const void *y)
{
    const struct node *a = *(struct node *const *)x, *b = *(struct node *const *)y;
    return (a->v > b->v) - (a->v < b->v);
}

static jmp_buf jb;
static void bail(int v) { longjmp(jb, v); }

int main(void)
{
    struct node *head = NULL, *arr[64];
    for (long i = 0; i < 64; i++) {
        struct node *n = calloc(1, sizeof *n);
        n->v = (i * 7919) % 101;
        snprintf(n->name, sizeof n->name, "n%ld", i);
        n->next = head;
        head = n;
        arr[i] = n;
    }
    qsort(arr, 64, sizeof arr[0], by_v);
    unsigned long acc = 0;          /* unsigned: the hash wraps, defined */
    for (int i = 0; i < 64; i++) acc = acc * 31 + (unsigned long)arr[i]->v;
    struct pair p = { arr[0], arr[63], 0 }, q;
    q = p;
    memcpy(&p, &q, sizeof p);
    p.sum = p.a->v + p.b->v;
    uintptr_t u = (uintptr_t)p.b;
    struct node *back = (struct node *)u;
    struct node *expect = arr[5];
    __atomic_compare_exchange_n(&arr[6], &expect, arr[7], 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    char buf[256] = "";
    for (struct node *n = head; n; n = n->next)
        if (n->v % 10 == 0) { strcat(buf, n->name); strcat(buf, ","); }
    int jumped = setjmp(jb);
    if (!jumped) bail(42);
    printf("acc=%lu min=%s max=%s sum=%ld back=%s eq=%d jumped=%d\n", acc,
           p.a->name, p.b->name, p.sum, back->name, arr[6] == arr[7], jumped);
    printf("tens=%s\n", buf);
    while (head) { struct node *n = head->next; free(head); head = n; }
    return 0;
}
