/* Pointers that libc writes into PM (strtol's end, strtok_r's save): the
 * write-set marks them "pointer", so they go relative after the call; they
 * were left as virtual addresses and dangled after a reopen.
 *   libc_pointers POOL     (run twice: create, then reopen) */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct root { char text[32]; char *cursor; char *save; };

static int relative(const void *field)
{
    uint64_t w;
    memcpy(&w, field, 8);
    return (int)(w >> 63);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    cairn_pool *p = cairn_pool_open(argv[1], "libc_pointers");
    int fresh = !p;
    if (fresh) p = cairn_pool_create(argv[1], "libc_pointers", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    if (fresh) CAIRN_TX(p) {
        strcpy(r->text, "123 456 789");
        (void)strtol(r->text, &r->cursor, 10);       /* cursor -> " 456 789" */
        (void)strtok_r(r->text + 8, " ", &r->save);
    }
    int bad = !relative(&r->cursor) || !relative(&r->save) ||
              strtol(r->cursor, NULL, 10) != 456 || r->cursor != r->text + 3;
    printf("%s %s\n", fresh ? "created" : "reopened", bad ? "WRONG" : "ok");
    cairn_pool_close(p);
    return bad;
}
