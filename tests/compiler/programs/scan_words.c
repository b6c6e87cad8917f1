/* Byte copies into PM convert words that are addresses inside an open
 * pool's mapped bytes (copied pointers) and nothing else: an integer or
 * string whose 8 bytes fall in the pool's 1 TiB slot but past its size was
 * rewritten as a relative pointer (strings like "key-X\0\0\0" did, in runs
 * where the pool's slot number matched a character). A real pointer copied
 * the same way must still go relative, wherever it sits in a long copy (the
 * scan tests eight words a block first, then looks word by word at a block
 * with a hit, and at the words after the last whole block).
 *   scan_words POOL */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct rec { char name[16]; long n; struct rec *link; };
struct root { struct rec r[4]; unsigned char bytes[16]; uint64_t big[140]; };

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
    /* a 1080-byte copy (16 blocks, 7 words after them): pointers in the
     * first, a middle and the last whole block and in the words after it;
     * the non-pointer words beside them */
    static const int at_ptr[] = { 0, 61, 127, 130, 133 }, at_word[] = { 1, 62, 129, 134 };
    uint64_t buf[140];
    memset(buf, 'x', sizeof buf);
    struct rec *target = &r->r[3];
    for (size_t k = 0; k < sizeof at_ptr / sizeof *at_ptr; k++)
        memcpy(&buf[at_ptr[k]], &target, 8);
    for (size_t k = 0; k < sizeof at_word / sizeof *at_word; k++)
        buf[at_word[k]] = words[k % 3];
    CAIRN_TX(p) { memcpy(r->big, buf, 1080); }
    for (size_t k = 0; k < sizeof at_ptr / sizeof *at_ptr; k++) {
        uint64_t raw;
        memcpy(&raw, &r->big[at_ptr[k]], 8);
        if (!(raw >> 63) || cairn__ra2va(raw) != (void *)target) {
            printf("long copy: pointer at word %d stored as %#llx: not relative\n", at_ptr[k],
                   (unsigned long long)raw);
            bad++;
        }
    }
    for (size_t k = 0; k < sizeof at_word / sizeof *at_word; k++)
        bad += check("long copy", words[k % 3], &r->big[at_word[k]]);
    printf("%s\n", bad ? "CORRUPTED" : "ok");
    cairn_pool_close(p);
    return bad != 0;
}
