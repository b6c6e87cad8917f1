/*
 * jansson_parse.c -- the jansson workload of bench/heap/programs.py: parse a
 * JSON file into jansson's tree, walk it, and dump it again (sorted keys,
 * indented), REPEAT times. Every node lives in the heap, so under
 * cairn-cc --persistent-heap every node and every string is in the pool.
 *
 *   jansson_parse FILE REPEAT
 *
 * Prints the node count, the dump's length and an FNV-1a hash of the dump,
 * the same for every build.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t count_nodes(const json_t *j)
{
    size_t n = 1, i;
    const char *key;
    json_t *v;

    if (json_is_array(j)) {
        json_array_foreach(j, i, v) n += count_nodes(v);
    } else if (json_is_object(j)) {
        json_object_foreach((json_t *)j, key, v) n += count_nodes(v);
    }
    return n;
}

int main(int argc, char **argv)
{
    json_error_t err;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t nodes = 0, len = 0;
    long repeat;
    char *end;

    if (argc != 3 || (repeat = strtol(argv[2], &end, 10)) < 1 || *end) {
        fprintf(stderr, "usage: jansson_parse FILE REPEAT (REPEAT >= 1)\n");
        return 2;
    }
    for (long r = 0; r < repeat; r++) {
        json_t *root = json_load_file(argv[1], 0, &err);
        char *dump;

        if (!root) {
            fprintf(stderr, "jansson_parse: %s:%d: %s; give a valid JSON file\n",
                    argv[1], err.line, err.text);
            return 1;
        }
        nodes = count_nodes(root);
        dump = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!dump) {
            fprintf(stderr, "jansson_parse: json_dumps failed (out of memory?)\n");
            return 1;
        }
        len = strlen(dump);
        h = 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)dump[i]) * 0x100000001b3ULL;
        free(dump);
        json_decref(root);
    }
    printf("nodes %zu bytes %zu fnv %016llx\n", nodes, len, (unsigned long long)h);
    return 0;
}
