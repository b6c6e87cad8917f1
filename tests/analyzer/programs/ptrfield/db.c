/* ptrfield: a database whose records hang off a pointer field. The save
 * function writes the records (fwrite(D->r, ...)), not the struct db that
 * points to them. Test program for cairn analyze (test_analyze.py). */
#include <stdio.h>
#include <stdlib.h>

struct rec {                 /* persistent: its bytes are the file */
    long id;
    double score;
};

struct db {                  /* persistent: the root, never written itself */
    struct rec *r;
    size_t n;
};

int db_load(struct db *D, FILE *f) {
    size_t n;
    if (fread(&n, sizeof n, 1, f) != 1) return -1;
    D->r = malloc(n * sizeof *D->r);
    D->n = fread(D->r, sizeof *D->r, n, f);
    return 0;
}

int db_save(struct db *D, FILE *f) {
    return fwrite(D->r, sizeof *D->r, D->n, f) == D->n ? 0 : -1;
}
