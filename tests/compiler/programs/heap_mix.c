/* heap_mix.c -- an unmodified malloc program (lists, strings, qsort,
 * realloc, pointers to string literals in heap objects). Built with
 * cairn-cc --persistent-heap its heap lives in a pool; it must print what
 * the clang build prints. stderr tells whether heap pointers were stored
 * in relative form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; const char *kind; char *name; long v; };
/* not inlined, so the loads really read the heap */
__attribute__((noinline)) static void *slot_of(void **v, int i) { return v[i]; }
static int cmp(const void *a, const void *b) { const struct node *x = *(struct node * const *)a, *y = *(struct node * const *)b; return (x->v > y->v) - (x->v < y->v); }
int main(void) {
    struct node *head = NULL;
    struct node **arr = malloc(100 * sizeof *arr);
    for (long i = 0; i < 100; i++) {
        struct node *n = malloc(sizeof *n);
        n->v = (i * 37) % 101; n->kind = i % 2 ? "odd" : "even";
        n->name = malloc(16); snprintf(n->name, 16, "n%ld", i);
        n->next = head; head = n; arr[i] = n;
    }
    arr = realloc(arr, 200 * sizeof *arr);
    qsort(arr, 100, sizeof *arr, cmp);
    long s = 0; for (struct node *n = head; n; n = n->next) s += n->v * (n->kind[0] == 'o');
    unsigned long raw; memcpy(&raw, &head->next, 8);
    printf("min=%s max=%s s=%ld %s\n", arr[0]->name, arr[99]->name, s, arr[50]->kind);
    fprintf(stderr, "raw-relative=%d\n", (int)(raw >> 63));
    /* negative integers kept in pointers ((void *)-1, MAP_FAILED): expat's
     * test suite keeps (void *)(uintptr_t)-1 as user data. They are not
     * relative pointers and must come back unchanged. */
    void **sent = malloc(3 * sizeof *sent);
    volatile long minus = -1;
    sent[0] = (void *)minus; sent[1] = (void *)(minus - 4095); sent[2] = sent;
    printf("sentinels %d %d %d\n", slot_of(sent, 0) == (void *)-1,
           (long)slot_of(sent, 1) == -4096, slot_of(sent, 2) == (void *)sent);
    free(sent);
    while (head) { struct node *n = head->next; free(head->name); free(head); head = n; }
    free(arr);
    return 0;
}
