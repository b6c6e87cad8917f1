/* sametag: two files each define their own `struct rec`, with different
 * layouts. a.c's is the persistent record list; b.c's is a file header read
 * into a local. Test program for cairn analyze (test_analyze.py). */
#include <stdio.h>
#include <stdlib.h>

struct rec {                 /* persistent */
    char key[16];
    long value;
    struct rec *next;
};

static struct rec *head;

int check_header(FILE *f);

int store_load(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f || check_header(f) != 0) return -1;
    for (;;) {
        struct rec *r = malloc(sizeof *r);
        if (fread(r, sizeof *r, 1, f) != 1) { free(r); break; }
        r->next = head;
        head = r;
    }
    return fclose(f);
}

int store_save(const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    for (struct rec *r = head; r; r = r->next) fwrite(r, sizeof *r, 1, f);
    return fclose(f);
}
