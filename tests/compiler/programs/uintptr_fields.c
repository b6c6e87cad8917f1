/* Pointers kept in PM as integers: a uintptr_t field, a tagged one (low bit
 * set), a pointer/integer union written through its integer. They carry the
 * type tag of unsigned long, which the pass took as proof of "not an
 * address": stored as virtual addresses, they dangled after a reopen at
 * another address (a fault). Now a pointer's bits are stored relative
 * whatever the field's type, and cast back they are addresses again.
 *   uintptr_fields POOL      (run twice: create, then reopen) */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct node { long key; };
union slot { struct node *p; uintptr_t i; };
struct root { uintptr_t plain; uintptr_t tagged; union slot u; struct node *typed; };

static int relative(const void *field)
{
    uint64_t w;
    memcpy(&w, field, 8);
    return (int)(w >> 63);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    cairn_pool *p = cairn_pool_open(argv[1], "uintptr_fields");
    int fresh = !p;
    if (fresh) p = cairn_pool_create(argv[1], "uintptr_fields", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    if (fresh) CAIRN_TX(p) {
        struct node *n = cairn_alloc(p, sizeof *n);
        n->key = 42;
        r->typed = n;
        r->plain = (uintptr_t)n;
        r->tagged = (uintptr_t)n | 1;
        r->u.i = (uintptr_t)n;
    }
    int bad = 0;
    if (!relative(&r->plain) || !relative(&r->tagged) || !relative(&r->u)) {
        printf("stored as virtual addresses\n");
        bad++;
    }
    if (((struct node *)r->plain)->key != 42) bad++;
    if (!(r->tagged & 1) || ((struct node *)(r->tagged & ~(uintptr_t)1))->key != 42) bad++;
    if (r->u.p->key != 42 || r->typed->key != 42) bad++;
    printf("%s %s\n", fresh ? "created" : "reopened", bad ? "WRONG" : "ok");
    cairn_pool_close(p);
    return bad != 0;
}
