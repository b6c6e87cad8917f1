/*
 * cairn_cc_libc.c -- wrappers for libc functions whose writes no write-set
 * can size (docs/compiler.md, "Write-set files"). cairn-cc's pass sends
 * calls of these functions here (compiler/pass/Writes.cpp, routeLibcCall);
 * each logs exactly the bytes it lets libc write into a pool, before they
 * are written, and converts the pointers it stores there.
 *
 *   the scanf family   every %-target that lies in the PM region is logged
 *                      (its size from the conversion, length modifier and
 *                      width); a %s or %[ target in PM without a width is
 *                      read into a buffer libc allocates (%ms), then logged
 *                      and copied; %n is computed here; %p and allocating
 *                      (%ms) targets are pointer slots, converted as typed
 *                      pointer stores are
 *   strsep             the byte it cuts (a NUL) and the cursor it moves
 *
 * Every call takes (file, line, flags) first, then the original arguments.
 * flags: bit 0 lenient pointer stores (persistent-heap mode: a pointer to
 * DRAM stays an address), bits 1-2 the scanf flavour (0 glibc's plain
 * symbol, 1 __isoc99_*, 2 __isoc23_*).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cairn_cc_rt.h"

#define FLAG_LENIENT 1
#define FLAVOUR(flags) (((flags) >> 1) & 3)

/* A pointer p stored by libc (or here) into the word at slot. */
static void store_pointer(void **slot, void *p, const char *file, int line, int flags)
{
    if (!cairn__in_region(slot)) {
        *slot = p;
        return;
    }
    *(uint64_t *)slot = cairn_cc__stored_pointer(slot, p, flags & FLAG_LENIENT, file, line);
}

static void log_if_pm(const void *p, size_t len, const char *file, int line)
{
    if (len && cairn__in_region(p))
        cairn__log_store(p, len, file, line);
}

/* ---- strsep ------------------------------------------------------------- */

char *cairn_cc__strsep(const char *file, int line, int flags, char **sp, const char *delim)
{
    /* *sp may be a PM slot holding a relative pointer: libc would follow it */
    char *s = cairn__ra2va(*(uint64_t *)sp);
    if (!s)
        return NULL;
    char *end = s + strcspn(s, delim), *next = NULL;
    if (*end) {
        log_if_pm(end, 1, file, line);
        *end = '\0';
        next = end + 1;
    }
    log_if_pm(sp, sizeof *sp, file, line);
    store_pointer((void **)sp, next, file, line, flags);
    return s;
}

/* ---- the scanf family --------------------------------------------------- */

/* glibc's symbols, by flavour: the plain ones (GNU %as), the C99 ones the
 * headers normally call, the C23 ones (glibc 2.38: %b, 0b prefixes) when
 * this libc has them. */
extern int plain_vsscanf(const char *, const char *, va_list) __asm__("vsscanf");
extern int plain_vfscanf(FILE *, const char *, va_list) __asm__("vfscanf");
extern int __isoc99_vsscanf(const char *, const char *, va_list);
extern int __isoc99_vfscanf(FILE *, const char *, va_list);
extern int __isoc23_vsscanf(const char *, const char *, va_list) __attribute__((weak));
extern int __isoc23_vfscanf(FILE *, const char *, va_list) __attribute__((weak));

struct scan {
    const char *file;
    int line, flags;
    FILE *f;            /* the stream, or NULL for a string */
    const char *s;      /* the string's unread rest */
};

static int vscan(struct scan *c, const char *fmt, va_list ap)
{
    switch (FLAVOUR(c->flags)) {
    case 0:
        return c->f ? plain_vfscanf(c->f, fmt, ap) : plain_vsscanf(c->s, fmt, ap);
    case 2:
        if (c->f ? &__isoc23_vfscanf != NULL : &__isoc23_vsscanf != NULL)
            return c->f ? __isoc23_vfscanf(c->f, fmt, ap) : __isoc23_vsscanf(c->s, fmt, ap);
        /* fall through */
    default:
        return c->f ? __isoc99_vfscanf(c->f, fmt, ap) : __isoc99_vsscanf(c->s, fmt, ap);
    }
}

static int piece(struct scan *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vscan(c, fmt, ap);
    va_end(ap);
    return r;
}

/* One conversion specification, "%[n$][*][flags][width][m][length]conv". */
struct spec {
    const char *pct, *end;          /* its text: '%' .. one past its end */
    const char *flags, *length;     /* where these parts start in it */
    int pos;                        /* n$, or 0 */
    int suppress, alloc;            /* '*', 'm' (or GNU 'a') */
    long width;                     /* -1: none */
    char len[3];                    /* "", "hh", "h", "l", "ll", "L", "q", "j", "z", "t" */
    char conv;                      /* 0: not a valid specification */
};

/* Parse the specification at p ('%'); %% is literal text (conv '%'). */
static const char *parse_spec(const char *p, struct spec *sp, int flavour)
{
    memset(sp, 0, sizeof *sp);
    sp->pct = p++;
    sp->width = -1;
    if (*p == '%') {
        sp->conv = '%';
        sp->end = p + 1;
        return sp->end;
    }
    const char *d = p;
    long n = 0;
    while (*d >= '0' && *d <= '9')
        n = n * 10 + (*d++ - '0');
    if (d > p && *d == '$') {
        sp->pos = (int)n;
        p = d + 1;
    }
    if (*p == '*') {
        sp->suppress = 1;
        p++;
    }
    sp->flags = p;
    while (*p == '\'' || *p == 'I')
        p++;
    if (*p >= '0' && *p <= '9') {
        sp->width = 0;
        while (*p >= '0' && *p <= '9')
            sp->width = sp->width * 10 + (*p++ - '0');
    }
    if (*p == 'm' || (flavour == 0 && *p == 'a' && (p[1] == 's' || p[1] == 'S' || p[1] == '['))) {
        sp->alloc = 1;
        p++;
    }
    sp->length = p;
    if ((p[0] == 'h' && p[1] == 'h') || (p[0] == 'l' && p[1] == 'l')) {
        memcpy(sp->len, p, 2);
        p += 2;
    } else if (strchr("hlLqjzt", *p) && *p) {
        sp->len[0] = *p++;
    }
    char c = *p;
    if (!c || !strchr("diouxXbneEfFgGaAsScC[p", c))
        return NULL;
    p++;
    if (c == '[') {
        if (*p == '^')
            p++;
        if (*p == ']')
            p++;
        while (*p && *p != ']')
            p++;
        if (!*p)
            return NULL;
        p++;
    }
    sp->conv = c;
    sp->end = p;
    return p;
}

static int wide(const struct spec *sp)
{
    return sp->conv == 'S' || sp->conv == 'C' || (sp->len[0] == 'l' && !sp->len[1]);
}

/* Bytes a conversion stores at its target, or 0 when the width does not say
 * (%s, %[ without a width) or the target is a pointer slot (8). */
static size_t target_size(const struct spec *sp)
{
    const char *l = sp->len;
    switch (sp->conv) {
    case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': case 'b': case 'n':
        if (!strcmp(l, "hh")) return 1;
        if (!strcmp(l, "h")) return 2;
        return l[0] ? 8 : 4;                      /* l ll q L j z t */
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
        return l[0] == 'L' ? sizeof(long double) : l[0] == 'l' ? 8 : 4;
    case 'p':
        return 8;
    case 'c': case 'C':
        if (sp->alloc) return 8;
        return (size_t)(sp->width < 0 ? 1 : sp->width) * (wide(sp) ? sizeof(wchar_t) : 1);
    default:                                      /* s S [ */
        if (sp->alloc) return 8;
        return sp->width < 0 ? 0 : (size_t)(sp->width + 1) * (wide(sp) ? sizeof(wchar_t) : 1);
    }
}

static void store_count(void *t, const struct spec *sp, long n, struct scan *c)
{
    size_t sz = target_size(sp);
    log_if_pm(t, sz, c->file, c->line);
    switch (sz) {
    case 1: *(signed char *)t = (signed char)n; break;
    case 2: *(short *)t = (short)n; break;
    case 4: *(int *)t = (int)n; break;
    default: *(long long *)t = n; break;
    }
}

/* How many wide characters libc stored for n bytes of input: each stored
 * character is one multibyte character read (L'\0' for a NUL byte). */
static size_t wide_count(const wchar_t *w, size_t n)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    char mb[MB_LEN_MAX];
    size_t k = 0;
    for (size_t used = 0; used < n; k++) {
        size_t l = w[k] ? wcrtomb(mb, w[k], &st) : 1;
        if (l == (size_t)-1)
            return wcslen(w);                   /* not this locale's: to the first L'\0' */
        used += l;
    }
    return k;
}

#define MAX_TARGETS 256

/* The targets in argument order (positional: by n$), and how many. */
static int collect_targets(const char *fmt, va_list ap, void **t, int flavour)
{
    struct spec sp;
    int n = 0, maxpos = 0;
    for (const char *p = fmt; (p = strchr(p, '%'));) {
        if (!(p = parse_spec(p, &sp, flavour)))
            break;
        if (sp.conv == '%' || sp.suppress)
            continue;
        if (sp.pos)
            maxpos = sp.pos > maxpos ? sp.pos : maxpos;
        else if (n < MAX_TARGETS)
            t[n++] = va_arg(ap, void *);
    }
    if (maxpos) {       /* C leaves mixing n$ and plain specifications undefined */
        if (maxpos > MAX_TARGETS)
            maxpos = MAX_TARGETS;
        for (n = 0; n < maxpos; n++)
            t[n] = va_arg(ap, void *);
    }
    return n;
}

/* The scan, one specification at a time, so that each target in PM is
 * logged before libc writes it (and an unbounded string is read into a
 * DRAM buffer first). Each piece is the literal text before a
 * specification, the specification (n$ dropped), and a %n of our own that
 * says how much input the piece consumed and whether it matched.
 * glibc's return value: assignments so far, EOF for an input failure
 * before the first assignment. */
static int scan_pieces(struct scan *c, const char *fmt, void **t, int nt)
{
    int flavour = FLAVOUR(c->flags);
    size_t cap = strlen(fmt) + 12;
    char small[256], *buf = cap <= sizeof small ? small : malloc(cap);
    if (!buf)
        return EOF;
    long consumed = 0;
    int count = 0, next = 0, result = -2;
    const char *lit = fmt, *p = fmt;
    struct spec sp;
    for (;;) {
        p = strchr(p, '%');
        const char *stop = p;
        int valid = p && (p = parse_spec(p, &sp, flavour)) != NULL;
        if (valid && sp.conv == '%')
            continue;                           /* literal: stays in the piece */
        if (!valid) {                           /* end, or a bad specification */
            stop = stop ? stop : lit + strlen(lit);
            sp.conv = 0;
        }
        void *target = NULL;
        if (valid && !sp.suppress) {
            int k = sp.pos ? sp.pos - 1 : next++;
            target = k < nt ? t[k] : NULL;
        }
        /* the piece: literal text, the specification rewritten, "%n" */
        size_t ll = (size_t)(stop - lit);
        memcpy(buf, lit, ll);
        size_t b = ll;
        void *args[3] = {NULL, NULL, NULL};
        int na = 0, got = -1, start = -1;
        char *tmp = NULL;
        int in_pm = target && cairn__in_region(target);
        int redirect = 0, spec_in_piece = valid && sp.conv != 'n';
        if (spec_in_piece) {
            size_t sz = target_size(&sp);
            redirect = in_pm && sz == 0;        /* %s, %[ without a width */
            if (redirect) {
                /* where the string starts (%s skips white space first; a
                 * stream may hold NUL bytes, so its length is the count) */
                if (sp.conv != '[')
                    buf[b++] = ' ';
                memcpy(buf + b, "%n", 2);
                b += 2;
                args[na++] = &start;
            }
            buf[b++] = '%';
            if (sp.suppress)
                buf[b++] = '*';
            memcpy(buf + b, sp.flags, (size_t)(sp.length - sp.flags));
            b += (size_t)(sp.length - sp.flags);
            if (redirect)
                buf[b++] = 'm';
            else if (in_pm)
                log_if_pm(target, sz, c->file, c->line);
            if (sp.alloc && buf[b - 1] == 'a')
                buf[b - 1] = 'm';               /* GNU %as: the same flag */
            memcpy(buf + b, sp.length, (size_t)(sp.end - sp.length));
            b += (size_t)(sp.end - sp.length);
            if (!sp.suppress)
                args[na++] = redirect ? (void *)&tmp : target;
        }
        memcpy(buf + b, "%n", 3);
        args[na++] = &got;
        int r = piece(c, buf, args[0], args[1], args[2]);
        if (got < 0) {                          /* a failure in this piece */
            free(tmp);
            result = r == EOF && count == 0 ? EOF : count;
            break;
        }
        consumed += got;
        if (!c->f)
            c->s += got;
        if (valid && sp.conv == 'n' && target)
            store_count(target, &sp, consumed, c);
        if (spec_in_piece && !sp.suppress) {
            count++;
            if (redirect) {
                /* the characters read, exactly (a stream may hold NUL bytes) */
                size_t bytes = wide(&sp) ? (wide_count((wchar_t *)tmp, (size_t)(got - start)) + 1) *
                                               sizeof(wchar_t)
                                         : (size_t)(got - start) + 1;
                log_if_pm(target, bytes, c->file, c->line);
                memcpy(target, tmp, bytes);
                free(tmp);
            } else if (in_pm && (sp.alloc || sp.conv == 'p')) {
                /* libc stored a pointer there: relative form, checked */
                void *v = *(void **)target;
                store_pointer((void **)target, v, c->file, c->line, c->flags);
            }
        }
        if (!valid) {
            result = count;
            break;
        }
        lit = p;
    }
    if (buf != small)
        free(buf);
    return result;
}

static int scan_va(struct scan *c, const char *fmt, va_list ap)
{
    void *t[MAX_TARGETS];
    va_list aq;
    va_copy(aq, ap);
    int nt = collect_targets(fmt, aq, t, FLAVOUR(c->flags));
    va_end(aq);
    int pm = 0;
    for (int k = 0; k < nt; k++)
        pm |= t[k] && cairn__in_region(t[k]);
    if (!pm)                                    /* nothing in PM: libc as called */
        return vscan(c, fmt, ap);
    if (c->f)
        flockfile(c->f);                        /* the pieces as one call */
    int r = scan_pieces(c, fmt, t, nt);
    if (c->f)
        funlockfile(c->f);
    return r;
}

int cairn_cc__vsscanf(const char *file, int line, int flags, const char *s,
                      const char *fmt, va_list ap)
{
    struct scan c = {file, line, flags, NULL, s};
    return scan_va(&c, fmt, ap);
}

int cairn_cc__vfscanf(const char *file, int line, int flags, FILE *f,
                      const char *fmt, va_list ap)
{
    struct scan c = {file, line, flags, f, NULL};
    return scan_va(&c, fmt, ap);
}

int cairn_cc__vscanf(const char *file, int line, int flags, const char *fmt, va_list ap)
{
    return cairn_cc__vfscanf(file, line, flags, stdin, fmt, ap);
}

int cairn_cc__sscanf(const char *file, int line, int flags, const char *s,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cairn_cc__vsscanf(file, line, flags, s, fmt, ap);
    va_end(ap);
    return r;
}

int cairn_cc__fscanf(const char *file, int line, int flags, FILE *f,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cairn_cc__vfscanf(file, line, flags, f, fmt, ap);
    va_end(ap);
    return r;
}

int cairn_cc__scanf(const char *file, int line, int flags, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cairn_cc__vfscanf(file, line, flags, stdin, fmt, ap);
    va_end(ap);
    return r;
}
