/*
 * replay.c -- runs a fuzz target's LLVMFuzzerTestOneInput over files, as
 * ctest's regression check of the committed corpora and of every input a
 * fuzzer ever crashed on (tests/fuzz/regress). Arguments are files or
 * directories (their files, in name order). A crash fails the test the
 * way it failed the fuzzer; exit 2 when no input was found, so an empty or
 * misnamed directory cannot pass.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(1);
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        exit(1);
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            runs += run_file(argv[i]);
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, NULL);
        if (n < 0) {
            fprintf(stderr, "replay: cannot list %s\n", argv[i]);
            return 1;
        }
        char **names = malloc(sizeof *names * (size_t)(n ? n : 1));
        int m = 0;
        for (int j = 0; j < n; j++) {
            if (ents[j]->d_name[0] != '.') names[m++] = strdup(ents[j]->d_name);
            free(ents[j]);
        }
        free(ents);
        qsort(names, (size_t)m, sizeof *names, cmp);
        for (int j = 0; j < m; j++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], names[j]);
            runs += run_file(p);
            free(names[j]);
        }
        free(names);
    }
    if (runs == 0) {
        fprintf(stderr, "replay: no input found in the arguments; give the corpus directories\n");
        return 2;
    }
    printf("replay: %d inputs, none crashed\n", runs);
    return 0;
}
