/* ids_other.c -- the same ids from another file, through a static table:
 * CAIRN_TYPE_ID in a static initializer (cairn-cc only; plain C cannot). */
#include <cairn.h>
#include <stdio.h>
#include "types.h"

#define ENTRY(T) { #T, CAIRN_TYPE_ID(T) },
static const struct { const char *name; uint64_t id; } table[] = { TYPEID_TYPES(ENTRY) };

static uint64_t node_id(void) {
    static const uint64_t id = CAIRN_TYPE_ID(struct node);   /* static local */
    return id;
}

void print_other_ids(void) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        printf("other %s %#llx\n", table[i].name, (unsigned long long)table[i].id);
    printf("other static struct node %#llx\n", (unsigned long long)node_id());
}
