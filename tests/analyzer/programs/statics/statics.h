/* statics: two files, each with a static function named reset(). The load
 * path reaches a.c's reset(); b.c's reset() clears a scratch buffer the
 * load never touches. Test program for cairn analyze (test_analyze.py). */
#ifndef STATICS_H
#define STATICS_H
#include <stddef.h>

struct table {               /* persistent */
    size_t count;
    long items[64];
};

struct scratch {             /* not on the load path: must not be reported */
    size_t used;
    char buf[256];
};

int table_load(struct table *t, const char *path);
int table_save(struct table *t, const char *path);
struct scratch *scratch_new(void);
#endif
