/* root.c -- opens (or creates) a pool and asks for its root. VARIANT picks
 * a struct root of the same name and size that differs in one way only:
 *   0 the original        1 a field renamed      2 two fields swapped
 *   3 a field's signedness 4 a field of the pointed-to struct node changed
 * Usage: root POOL create|open. Prints the id and the size; exit 3 and
 * cairn_errormsg() when the root is refused. */
#include <cairn.h>
#include <stdio.h>
#include <string.h>

#if VARIANT == 4
struct node { struct node *next; unsigned long val; };
#else
struct node { struct node *next; long val; };
#endif

#if VARIANT == 1
struct root { int32_t count; int32_t most; struct node *head; };
#elif VARIANT == 2
struct root { int32_t limit; int32_t count; struct node *head; };
#elif VARIANT == 3
struct root { uint32_t count; int32_t limit; struct node *head; };
#else
struct root { int32_t count; int32_t limit; struct node *head; };
#endif

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: root POOL create|open\n"); return 2; }
    cairn_pool *p = strcmp(argv[2], "create") == 0
        ? cairn_pool_create(argv[1], "typeid", CAIRN_POOL_MIN_SIZE)
        : cairn_pool_open(argv[1], "typeid");
    if (!p) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 1; }
    struct root *r = CAIRN_ROOT(p, struct root);
    if (!r) {
        fprintf(stderr, "root: %s\n", cairn_errormsg());
        cairn_pool_close(p);
        return 3;
    }
    printf("id=%#llx size=%zu\n", (unsigned long long)CAIRN_TYPE_ID(struct root),
           sizeof(struct root));
    cairn_pool_close(p);
    return 0;
}
