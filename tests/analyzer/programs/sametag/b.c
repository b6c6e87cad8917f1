#include <stdio.h>

struct rec {                 /* file header, only ever a local */
    unsigned magic;
    unsigned version;
};

int check_header(FILE *f) {
    struct rec h;
    if (fread(&h, sizeof h, 1, f) != 1) return -1;
    return h.magic == 0x52454331u && h.version == 1 ? 0 : -1;
}
