/* libc functions that grow, reallocate or measure a buffer the program
 * allocated. Under --persistent-heap that buffer lives in the heap pool,
 * where libc's own realloc would abort ("realloc(): invalid pointer") and
 * malloc_usable_size would say 0; cairn-cc wraps them (compiler/rt/
 * cairn_pheap.c). Prints the same as a clang build. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    FILE *f = tmpfile();
    if (!f) { perror("tmpfile"); return 2; }
    for (int i = 0; i < 40; i++) {          /* lines of 0 .. 390 characters */
        for (int k = 0; k < i * 10; k++) fputc('a' + (i + k) % 26, f);
        fputc('\n', f);
    }
    fputs("x,yy,,zzz", f);                  /* last line: no newline */
    rewind(f);

    char *line = malloc(4);                 /* the program's buffer, too small */
    size_t cap = 4;
    ssize_t n;
    long total = 0, lines = 0;
    unsigned sum = 0;
    while ((n = getline(&line, &cap, f)) != -1) {
        if ((size_t)n != strlen(line) || cap < (size_t)n + 1) { printf("bad line %ld\n", lines); return 1; }
        total += n;
        lines++;
        for (ssize_t k = 0; k < n; k++) sum = sum * 31 + (unsigned char)line[k];
    }
    printf("getline: %ld lines, %ld bytes, hash %u\n", lines, total, sum);

    rewind(f);
    for (int i = 0; i < 40; i++)            /* skip to the last line */
        if (getline(&line, &cap, f) == -1) return 1;
    while ((n = getdelim(&line, &cap, ',', f)) != -1)
        printf("getdelim: %zd [%s]\n", n, line);
    free(line);
    fclose(f);

    long *v = malloc(10 * sizeof *v);
    for (int i = 0; i < 10; i++) v[i] = i * i;
    v = reallocarray(v, 100000, sizeof *v);
    if (!v) { printf("reallocarray failed\n"); return 1; }
    long vs = 0;
    for (int i = 0; i < 10; i++) vs += v[i];
    printf("reallocarray kept %ld\n", vs);
    printf("reallocarray overflow: %s\n", reallocarray(v, (size_t)-1, 16) ? "allocated" : "refused");
    printf("usable size covers the request: %d\n", malloc_usable_size(v) >= 100000 * sizeof *v);
    free(v);

    char *s = malloc(8);
    strcpy(s, "heap");
    char *d = strdup(s);                    /* libc's allocation, freed by the program */
    d = realloc(d, 64);
    strcat(d, " + libc");
    printf("%s / %s\n", s, d);
    free(d);
    free(s);
    return 0;
}
