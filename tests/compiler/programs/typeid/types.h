/* types.h -- types whose CAIRN_TYPE_IDs test_type_id.py compares between
 * files, optimization levels, debug info and -fno-cairn: self-referential
 * and mutually recursive pointers, nested and anonymous unions, bit-fields,
 * enums, arrays, a typedef'd anonymous struct. */
#include <stdint.h>

struct node { struct node *next, *prev; long val; };

struct tree;
struct branch { struct tree *owner; struct branch *kids[2]; };
struct tree { struct branch *top; unsigned depth : 5; signed char bias : 3; };

union value {
    long i;
    double d;
    struct { unsigned short lo, hi; } half;
    union { char c[8]; struct node *n; } raw;
};

enum colour { RED, GREEN = 4, BLUE = -1 };

struct root {
    struct node *head;
    struct tree *forest;
    union value v[3];
    enum colour c;
    _Bool flag;
    char name[12];
    uint32_t low : 7;
};

typedef struct { int x, y; } point_t;

#define TYPEID_TYPES(X) \
    X(struct node) X(struct branch) X(struct tree) X(union value) \
    X(enum colour) X(struct root) X(point_t)

void print_other_ids(void);
