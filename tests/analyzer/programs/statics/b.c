#include "statics.h"
#include <stdlib.h>

static void reset(struct scratch *s) {
    s->used = 0;
    s->buf[0] = 0;
}

struct scratch *scratch_new(void) {
    struct scratch *s = malloc(sizeof *s);
    if (s) reset(s);
    return s;
}
