/* A library built by cairn-cc that follows pointers in a pool it is given:
 * its own copy of compiler/rt (and so of the translation cache) when it is
 * dlopen'ed or linked with -Wl,--exclude-libs,ALL. */
#include "list.h"

long lib_sum(struct root *r)
{
    long s = 0;
    for (struct node *n = r->head; n; n = n->next)
        s += n->val;
    return s;
}
