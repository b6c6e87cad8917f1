/* multi/store.c -- part of a program built from several files and a shared
 * library: the library code (this file) is compiled by cairn-cc too. */
#include <cairn.h>
struct cell { struct cell *next; long v; };
void cell_push(struct cell **head, struct cell *c, long v)
{
    c->v = v;
    c->next = *head;
    *head = c;
}
long cell_sum(const struct cell *c)
{
    long s = 0;
    for (; c; c = c->next) s += c->v;
    return s;
}
