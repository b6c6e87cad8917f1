/* libc writes into PM that the write-sets could not size: the scanf
 * family's %-targets, the string strsep cuts, the wide-string copies. Each
 * case runs twice on the same data: into a DRAM copy of the root (plain
 * libc, the reference) and into the pool's root inside a transaction that
 * is then aborted. The PM run must give what the DRAM run gives (return
 * value and bytes), and after the abort the root must be as before: a write
 * that was not logged stays behind ("not restored").
 * Built also with -D_FORTIFY_SOURCE=2 (glibc's __*_chk variants).
 *   libc_undo POOL          all cases, one line each, "N cases, M wrong"
 *   libc_undo POOL m        sscanf("%ms") into a PM slot: libc's malloc
 *                           buffer is DRAM, so this stops (safety) */
#define _GNU_SOURCE
#include <cairn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

struct root {
    int i; long l; short h; signed char hh; unsigned u; long long ll;
    size_t z; double d; float f; long double ld;
    int n1; short n2; signed char n3; long n4;
    char c1; char c3[3]; char s1[16]; char s2[64]; char set[32];
    wchar_t ws[32]; wchar_t wc[4];
    char text[64];
    wchar_t w1[64]; wchar_t w2[64];
    /* pointer fields last: compared as pointers, not bytes */
    void *ptr; char *cursor; char *m;
};
#define BYTES offsetof(struct root, ptr)

static cairn_pool *pool;
static struct root *pm;
static char *pool_text;             /* pm->text, printed by %p */
static int cases, wrong;
static const char *stream_path;

static void fill(struct root *t)
{
    memset(t, 0x5a, sizeof *t);
    strcpy(t->text, "alpha,beta gamma");
    wcscpy(t->w1, L"abc");
    wcscpy(t->w2, L"0123456789");
    t->ptr = NULL;
    t->cursor = t->text;
    t->m = NULL;
}

/* the same input file for the DRAM and the PM run of a stream case */
static FILE *input(const char *text)
{
    FILE *f = fopen(stream_path, "w+");
    fputs(text, f);
    rewind(f);
    return f;
}

static void check(const char *name, long (*fn)(struct root *))
{
    static struct root dram, before;
    fill(&dram);
    long want = fn(&dram);
    CAIRN_TX(pool) fill(pm);
    memcpy(&before, pm, sizeof before);
    long got = 0;
    int same = 0;
    CAIRN_TX(pool) {
        got = fn(pm);
        uint64_t raw;
        memcpy(&raw, &pm->ptr, 8);
        same = got == want && memcmp(&dram, pm, BYTES) == 0 &&
               dram.ptr == pm->ptr && (!pm->ptr || raw >> 63) &&  /* relative in PM */
               (dram.cursor ? dram.cursor - dram.text : -1) ==
                   (pm->cursor ? pm->cursor - pm->text : -1);
        cairn_tx_abort();
    }
    int restored = memcmp(&before, pm, sizeof before) == 0;
    cases++;
    wrong += !same || !restored;
    printf("%-14s %s%s%s\n", name, same && restored ? "ok" : "WRONG",
           same ? "" : " (differs from libc)", restored ? "" : " (not restored)");
}

/* ---- the scanf family -------------------------------------------------- */
static long scan_numbers(struct root *t)
{
    return sscanf("42 -7 300 -3 4000000000 12345678901 99 2.5 0.25 1e300",
                  "%d %ld %hd %hhd %u %lld %zu %lf %f %Lf",
                  &t->i, &t->l, &t->h, &t->hh, &t->u, &t->ll, &t->z, &t->d, &t->f, &t->ld);
}
static long scan_strings(struct root *t)
{
    return sscanf("xyz longer-than-five rest_of_it abc]def tail",
                  "%c%2c %5s%*s %s %[]a-z]",
                  &t->c1, t->c3, t->s1, t->s2, t->set);
}
static long scan_counts(struct root *t)
{
    return sscanf("  17 ab  cd", " %d%n %*s%hn %hhn%s%ln",
                  &t->i, &t->n1, &t->n2, &t->n3, t->s2, &t->n4);
}
static long scan_fail(struct root *t)
{
    return sscanf("(3;4)", "(%d,%d)", &t->i, &t->n1) * 100 +
           sscanf("", "%d", &t->i) * 10 + sscanf("5", "%*d %d", &t->i);
}
static long scan_wide(struct root *t)
{
    return sscanf("wide!  w", "%ls %lc", t->ws, t->wc);
}
static long scan_pointer(struct root *t)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%p", (void *)pool_text);
    return sscanf(buf, "%p", &t->ptr);
}
static long scan_positional(struct root *t)
{
    return sscanf("eight 9", "%2$s %1$d", &t->i, t->s1);
}
static long scan_stream(struct root *t)
{
    FILE *f = input("first-word-is-long 12 [x y z]\nsecond");
    long r = fscanf(f, "%s %d [%[^]]] %c", t->s2, &t->i, t->set, &t->c1);
    r = r * 10 + fscanf(f, "%s", t->s1);
    r = r * 10 + fscanf(f, "%d", &t->i);          /* EOF */
    fclose(f);
    return r;
}
static int my_vsscanf(const char *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsscanf(s, fmt, ap);
    va_end(ap);
    return r;
}
static int my_vfscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}
static long scan_va(struct root *t)
{
    FILE *f = input("unbounded-string-from-a-stream 7");
    long r = my_vfscanf(f, "%s %hd", t->s2, &t->h);
    fclose(f);
    return r * 10 + my_vsscanf("hello 3", "%s %d%n", t->s1, &t->i, &t->n1);
}
static long scan_stdin(struct root *t)
{
    FILE *f = input("stdin-word 5");
    fclose(f);
    if (!freopen(stream_path, "r", stdin)) return -100;
    return scanf("%s %d", t->s2, &t->i);
}

/* ---- strsep: the string it cuts, the cursor it moves ------------------- */
static long sep_local(struct root *t)
{
    char *s = t->text;
    long n = 0;
    while (strsep(&s, ", ")) n++;
    return n;
}
static long sep_field(struct root *t)
{
    char *a = strsep(&t->cursor, ",");
    char *b = strsep(&t->cursor, " ");
    return (a - t->text) * 100 + (b - t->text);
}

/* ---- wide strings ------------------------------------------------------ */
static long wide_copies(struct root *t)
{
    wcscpy(t->w1, L"wide copy");
    wcscat(t->w1, L" cat");
    wcsncat(t->w1, L" ncat-cut-here", 5);
    wchar_t *e = wcpcpy(t->w2 + 20, L"pcpy");
    wcpncpy(e, L"np", 6);
    return wcslen(t->w1) * 100 + (e - t->w2);
}
static long wide_moves(struct root *t)
{
    wmemmove(t->w2 + 2, t->w2, 6);
    wmemcpy(t->w1, L"memcpy", 6);
    wmemset(t->w1 + 10, L'z', 4);
    wcsncpy(t->w1 + 20, L"ncpy", 8);
    wmempcpy(t->w1 + 30, L"pcpy", 4);
    return 0;
}

/* a source the compiler cannot see: under _FORTIFY_SOURCE these become
 * the __wcscpy_chk family */
static const wchar_t *volatile runtime_src = L"runtime";
static long wide_checked(struct root *t)
{
    const wchar_t *s = runtime_src;
    size_t n = wcslen(s);
    wcscpy(t->w1, s);
    wcscat(t->w1, s);
    wcsncat(t->w1, s, 3);
    wchar_t *e = wcpcpy(t->w2 + 30, s);
    wcpncpy(e, s, 4);
    wcsncpy(t->w2, s, 12);
    wmemmove(t->w2 + 40, s, n);
    wmempcpy(t->w2 + 50, s, n);
    wmemcpy(t->w1 + 40, s, n);
    wmemset(t->w1 + 50, L'q', n);
    return wcslen(t->w1) * 100 + (e - t->w2);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    remove(argv[1]);
    pool = cairn_pool_create(argv[1], "libc_undo", 8 << 20);
    if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    pm = CAIRN_ROOT(pool, struct root);
    pool_text = pm->text;
    static char path[4200];
    snprintf(path, sizeof path, "%s.in", argv[1]);
    stream_path = path;
    if (argc > 2 && argv[2][0] == 'm') {
        CAIRN_TX(pool) sscanf("allocated", "%ms", &pm->m);   /* LINE_SCAN_M */
        printf("not stopped\n");
        return 0;
    }
    check("scan_numbers", scan_numbers);
    check("scan_strings", scan_strings);
    check("scan_counts", scan_counts);
    check("scan_fail", scan_fail);
    check("scan_wide", scan_wide);
    check("scan_pointer", scan_pointer);
    check("scan_positional", scan_positional);
    check("scan_stream", scan_stream);
    check("scan_va", scan_va);
    check("scan_stdin", scan_stdin);
    check("sep_local", sep_local);
    check("sep_field", sep_field);
    check("wide_copies", wide_copies);
    check("wide_moves", wide_moves);
    check("wide_checked", wide_checked);
    printf("%d cases, %d wrong\n", cases, wrong);
    remove(path);
    cairn_pool_close(pool);
    return wrong != 0;
}
