/* list.c -- a legacy linked list made persistent by cairn-cc: no logging
 * calls. Modes: 0 create and insert 10, 1 reopen and print, 2 insert and
 * abort() in the middle of the sixth transaction. */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; long val; char name[16]; };
struct root { struct node *head; long count; };

static void push(struct root *r, struct node *n, long v) {
    n->val = v;
    snprintf(n->name, sizeof n->name, "n%ld", v);
    n->next = r->head;
    r->head = n;
    r->count++;
}

int main(int argc, char **argv) {
    const char *path = argv[1];
    int mode = atoi(argv[2]);
    cairn_pool *p = mode == 0 ? cairn_pool_create(path, "list", 16 << 20)
                              : cairn_pool_open(path, "list");
    if (!p) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 1; }
    struct root *r = CAIRN_ROOT(p, struct root);
    if (mode == 0 || mode == 2) {
        for (long i = 0; i < 10; i++) {
            CAIRN_TX(p) {
                struct node *n = cairn_alloc(p, sizeof *n);
                push(r, n, i);
                if (mode == 2 && i == 5) abort();   /* crash mid-transaction */
            }
        }
    }
    long sum = 0, cnt = 0;
    for (struct node *n = r->head; n; n = n->next) { sum += n->val; cnt++; }
    printf("count=%ld walked=%ld sum=%ld head=%s\n", r->count, cnt, sum,
           r->head ? r->head->name : "-");
    unsigned long raw; memcpy(&raw, &r->head, 8);
    printf("raw head relative=%d\n", (int)(raw >> 63));
    cairn_pool_close(p);
    return 0;
}
