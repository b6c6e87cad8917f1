/* Byte copies into PM convert words that are addresses inside an open
 * pool's mapped bytes (copied pointers) and nothing else: an integer or
 * string whose 8 bytes fall in the pool's 1 TiB slot but past its size was
 * rewritten as a relative pointer (strings like "key-X\0\0\0" did, in runs
 * where the pool's slot number matched a character). A real pointer copied
 * the same way must still go relative.
 *   scan_words POOL */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct rec { char name[16]; long n; struct rec *link; };
struct root { struct rec r[4]; unsigned char bytes[16]; };

static int check(const char *what, uint64_t want, const void *at)
{
    uint64_t got;
    memcpy(&got, at, 8);
    if (got == want) return 0;
    printf("%s: wrote %#llx, PM holds %#llx: CHANGED\n", what, (unsigned long long)want,
           (unsigned long long)got);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "scan_words", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    uint64_t base = (uint64_t)(uintptr_t)r & ~(((uint64_t)1 << 40) - 1);
    uint64_t words[3] = {
        (uint64_t)(uintptr_t)r + ((uint64_t)1 << 32),   /* 4 GiB past the root */
        base + ((uint64_t)8 << 20),                     /* the pool's end */
        base + ((uint64_t)1 << 36),
    };
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        struct rec t;
        memset(&t, 0, sizeof t);
        memcpy(t.name, &words[k], 8);
        memcpy(t.name + 8, "abcdefg", 8);
        t.link = &r->r[3];                  /* a real pointer into the pool */
        CAIRN_TX(p) {
            r->r[k] = t;                    /* struct assignment */
            memcpy(r->bytes, &words[k], 8); /* plain byte copy */
        }
        bad += check("struct copy", words[k], r->r[k].name);
        bad += check("memcpy", words[k], r->bytes);
        uint64_t raw;
        memcpy(&raw, &r->r[k].link, 8);
        if (!(raw >> 63) || r->r[k].link != &r->r[3]) {
            printf("copied pointer stored as %#llx: not relative\n", (unsigned long long)raw);
            bad++;
        }
    }
    printf("%s\n", bad ? "CORRUPTED" : "ok");
    cairn_pool_close(p);
    return bad != 0;
}
