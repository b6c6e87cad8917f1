#include <cairn.h>
struct node { long val; struct node *next; };
struct root { long tag; struct node *head; };
long lib_sum(struct root *r);
