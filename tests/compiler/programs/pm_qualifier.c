/* pm_qualifier.c -- the optional NVL-C style `cairn_pm` qualifier: pointers
 * to PM by declaration. cairn-cc logs stores through them without a region
 * test and clang refuses to mix them with plain pointers without a cast.
 *   pm_qualifier create|check POOL */
#include <cairn.h>
#include <stdio.h>
#include <string.h>

struct node { struct node cairn_pm *next; long v; };
struct root { struct node cairn_pm *head; long n; };

static void push(struct root cairn_pm *r, struct node cairn_pm *n, long v)
{
    n->v = v;
    n->next = r->head;
    r->head = n;
    r->n++;
}

int main(int argc, char **argv)
{
    int create = !strcmp(argv[1], "create");
    cairn_pool *p = create ? cairn_pool_create(argv[2], "pmq", 16 << 20)
                           : cairn_pool_open(argv[2], "pmq");
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root cairn_pm *r = (struct root cairn_pm *)cairn_root(p, sizeof(struct root), 9);
    if (create)
        for (long i = 1; i <= 10; i++)
            CAIRN_TX(p) {
                push(r, (struct node cairn_pm *)cairn_alloc(p, sizeof(struct node)), i);
            }
    long sum = 0, cnt = 0;
    for (struct node cairn_pm *n = r->head; n; n = n->next) { sum += n->v; cnt++; }
    printf("n=%ld walked=%ld sum=%ld\n", r->n, cnt, sum);
    cairn_pool_close(p);
    return 0;
}
