/*
 * readtrack.c -- which cache lines of a pool image a check reads, and
 * which bytes it writes before reading them (libcairn-readtrack.so, loaded
 * with LD_PRELOAD by cairn-crashcheck into the check it runs on images of
 * a crash point; docs/crashcheck.md, "Pruning" and "Dead lines").
 *
 * Inert unless CAIRN_READTRACK_FILE names the image. Then:
 *   - every mapping of that file (mmap) has the pages listed in
 *     CAIRN_READTRACK_PAGES (a file of 8-byte page offsets in the image)
 *     protected PROT_NONE. An access faults; the handler records it, gives
 *     the page its access back and single-steps the instruction (the x86
 *     trap flag); the trap after it takes the page away again. So every
 *     access to those pages is seen;
 *   - pread, pread64 and read of the file are reads of what they return;
 *     copy_file_range, sendfile and stdio on it cannot be seen: such a run
 *     is reported untracked (RT_UNTRACKED);
 *   - per byte of a watched page, the first access of this process through
 *     each view (a mapping; read and pread are a view never written) is
 *     classed as a read or a write. A fault is a read of the 64 bytes from
 *     its address (no access is wider; an access nearer the end reads
 *     less: conservative), unless the page-fault error code says write
 *     and the instruction is a plain store (mov, a vector or non-temporal
 *     store, setcc, stos, the destination of movs: decoded at RIP); a
 *     string instruction also reads what its rsi / rdi ran over. Bytes the
 *     step changed (the page compared before and after) are written;
 *     bytes rewritten with the value they held count as not written;
 *   - CAIRN_READTRACK_DIFF (optional) lists the lines in play: per line its
 *     number (RT_PINNED set: a line the caller enumerates anyway) and the
 *     mask of its bytes that differ between its versions. The first read
 *     of such a differing byte, of a line not pinned, not yet written
 *     through the same view, ends the "stable prefix": every access before
 *     it saw bytes equal on every state, so every state runs the same
 *     prefix. For each listed line the bytes written first within that
 *     prefix are reported (RT_PMASK), with the line whose read ended it
 *     (RT_CULPRIT) or RT_STABLE when nothing did;
 *   - CAIRN_READTRACK_OUT (appended to by every process that loads this)
 *     gets a start mark (RT_MARK | pid) when a process first touches the
 *     image, and at its exit the lines it saw as 8-byte line numbers, the
 *     records above, then a done mark (RT_MARK | RT_DONE | pid). A process
 *     that leaves by _exit or a signal writes no done mark: the caller then
 *     treats every line as read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <ucontext.h>
#include <unistd.h>

#define RT_PAGE     4096u
#define RT_LINE     64u
#define RT_TF       0x100ull             /* EFLAGS trap flag */
#define RT_DF       0x400ull             /* EFLAGS direction flag */
#define RT_PF_WRITE 0x2ull               /* page-fault error code: a write */
#define RT_MARK     0x8000000000000000ull
#define RT_DONE     0x4000000000000000ull
#define RT_PMASK    0x2000000000000000ull   /* | line, then the mask word */
#define RT_CULPRIT  0x1000000000000000ull   /* | line */
#define RT_STABLE   0x0800000000000000ull
#define RT_UNTRACKED 0x0400000000000000ull
#define RT_PINNED   0x4000000000000000ull   /* in CAIRN_READTRACK_DIFF's line word */
#define RT_MAXREG   8

/* first access of a byte: none yet, written through view k (1 + region),
 * or read before any write of that view */
#define ST_NONE 0
#define ST_READ 0xff

struct wpage {                           /* a watched page */
    uint64_t off;
    uint8_t st[RT_PAGE];                 /* first access per byte */
    uint64_t diff[RT_PAGE / RT_LINE];    /* bytes differing between the line's versions */
    bool listed[RT_PAGE / RT_LINE], pinned[RT_PAGE / RT_LINE];
    uint64_t pmask[RT_PAGE / RT_LINE];   /* written first within the stable prefix */
};

static struct {
    bool armed, started, prefix_over, untracked;
    pid_t pid;                           /* the process that wrote the start mark */
    dev_t dev;
    ino_t ino;
    uint64_t size;                       /* bytes of the image */
    struct wpage *w;                     /* sorted by offset */
    size_t npages;
    uint64_t culprit;                    /* line whose read ended the stable prefix */
    uint8_t *seen;                       /* a bit per line */
    const char *out;
    struct region { char *base; uint64_t off, len; int prot; bool live; } reg[RT_MAXREG];
    int nreg;
    struct step {                        /* a page given back for one instruction */
        char *page;
        int region;
        uint8_t before[RT_PAGE];
    } step[8];
    int nstep;
    int string_op;                       /* 0, or the string opcode being stepped */
    uint64_t rsi0, rdi0;
} T;

static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_cfr)(int, off_t *, int, off_t *, size_t, unsigned);
static ssize_t (*real_sendfile)(int, int, off_t *, size_t);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fdopen)(int, const char *);

/* appended with write(2): called from the fault handler too */
static void put_words(const uint64_t *w, size_t n)
{
    int fd = open(T.out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t r = write(fd, w, n * sizeof *w);
    (void)r;
    close(fd);
}

/* the first touch of the image by this process (a forked child too) */
static void start(void)
{
    pid_t me = getpid();
    if (T.started && T.pid == me) return;
    T.started = true;
    T.pid = me;
    uint64_t w = RT_MARK | (uint64_t)me;
    put_words(&w, 1);
}

static void see(uint64_t fo)
{
    if (fo < T.size) T.seen[fo / RT_LINE / 8] |= (uint8_t)(1u << (fo / RT_LINE % 8));
}

static struct wpage *wpage_of(uint64_t page)
{
    size_t lo = 0, hi = T.npages;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (T.w[mid].off == page) return &T.w[mid];
        if (T.w[mid].off < page) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* per listed line, the bytes written first so far */
static void fill_pmask(void)
{
    for (size_t p = 0; p < T.npages; p++)
        for (unsigned l = 0; l < RT_PAGE / RT_LINE; l++) {
            uint64_t m = 0;
            for (unsigned b = 0; b < RT_LINE; b++) {
                uint8_t s = T.w[p].st[l * RT_LINE + b];
                if (s != ST_NONE && s != ST_READ) m |= 1ull << b;
            }
            T.w[p].pmask[l] = m;
        }
}

/* the stable prefix ends at a read of `line` */
static void end_prefix(uint64_t line)
{
    T.prefix_over = true;
    T.culprit = line;
    fill_pmask();
}

/* bytes [fo, fo+len) of the image read through view `view` (-1: read/pread) */
static void read_bytes(uint64_t fo, uint64_t len, int view)
{
    for (uint64_t at = fo; at < fo + len && at < T.size; at++) {
        if (at == fo || at % RT_LINE == 0) see(at);
        struct wpage *w = wpage_of(at & ~(uint64_t)(RT_PAGE - 1));
        if (!w) {
            at |= RT_PAGE - 1;           /* the rest of this page is not watched */
            continue;
        }
        unsigned b = (unsigned)(at % RT_PAGE), l = b / RT_LINE;
        uint8_t *s = &w->st[b];
        if (*s == (uint8_t)(view + 1) && view >= 0) continue;   /* reads its own write */
        if (!T.prefix_over && w->listed[l] && !w->pinned[l] && (w->diff[l] >> (b % RT_LINE) & 1))
            end_prefix(at / RT_LINE);
        *s = ST_READ;
    }
}

/* a byte the step changed: written first if nothing touched it before */
static void wrote_byte(struct wpage *w, unsigned b, int view)
{
    if (w->st[b] == ST_NONE) w->st[b] = (uint8_t)(view + 1);
}

/* Is the instruction at pc a plain store (it writes its memory operand
 * and reads none of it)? Prefixes, then mov / setcc / stos / movs and
 * the SSE, AVX (VEX) and non-temporal stores. Anything else that faults
 * with a write counts as reading its operand too. Sets T.string_op for
 * movs and stos (their other operand is followed by register). */
static bool plain_store(const uint8_t *pc)
{
    unsigned pfx66 = 0, pfxf3 = 0, pfxf2 = 0;
    for (int n = 0; n < 14; n++, pc++) {
        uint8_t b = *pc;
        if (b == 0x66) pfx66 = 1;
        else if (b == 0xf3) pfxf3 = 1;
        else if (b == 0xf2) pfxf2 = 1;
        else if (b == 0xf0) return false;                    /* lock: read-modify-write */
        else if (b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65 ||
                 b == 0x67) continue;
        else break;
    }
    if ((*pc & 0xf0) == 0x40) pc++;                          /* REX */
    uint8_t op = pc[0];
    switch (op) {
    case 0x88: case 0x89: case 0xa2: case 0xa3: return true; /* mov r/m, r; mov moffs, a */
    case 0xc6: case 0xc7: return ((pc[1] >> 3) & 7) == 0;    /* mov r/m, imm */
    case 0xaa: case 0xab: case 0xa4: case 0xa5:              /* stos, movs */
        T.string_op = op;
        return true;
    case 0xc5: case 0xc4: {                                  /* VEX */
        unsigned map = op == 0xc5 ? 1 : (pc[1] & 0x1f);
        unsigned pp = (op == 0xc5 ? pc[1] : pc[2]) & 3;
        uint8_t vop = op == 0xc5 ? pc[2] : pc[3];
        if (map != 1) return false;
        switch (vop) {
        case 0x11: case 0x13: case 0x17: case 0x29: case 0x2b: case 0x7f: case 0xe7: return true;
        case 0xd6: case 0x7e: return pp == 1;                /* vmovq / vmovd to memory */
        default: return false;
        }
    }
    case 0x0f: {
        uint8_t o2 = pc[1];
        if (o2 >= 0x90 && o2 <= 0x9f) return true;           /* setcc */
        switch (o2) {
        case 0x11: case 0x13: case 0x17: case 0x29: case 0x2b: case 0xc3: case 0xe7: return true;
        case 0x7f: return !pfxf2;                            /* movq mm / movdqa / movdqu */
        case 0xd6: return pfx66;                             /* movq xmm to memory */
        case 0x7e: return !pfxf3;                            /* movd/movq to memory (F3: a load) */
        default: return false;
        }
    }
    default: return false;
    }
}

static bool is_image(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == T.dev && st.st_ino == T.ino;
}

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
    ucontext_t *uc = uc_;
    char *a = si->si_addr;
    for (int i = T.nreg - 1; i >= 0; i--) {
        struct region *r = &T.reg[i];
        if (!r->live || a < r->base || a >= r->base + r->len) continue;
        uint64_t fo = r->off + (uint64_t)(a - r->base);
        struct wpage *w = wpage_of(fo & ~(uint64_t)(RT_PAGE - 1));
        if (!w || T.nstep == 8) break;
        start();
        char *page = (char *)((uintptr_t)a & ~(uintptr_t)(RT_PAGE - 1));
        mprotect(page, RT_PAGE, r->prot);
        if (!T.nstep) {
            T.string_op = 0;
            T.rsi0 = (uint64_t)uc->uc_mcontext.gregs[REG_RSI];
            T.rdi0 = (uint64_t)uc->uc_mcontext.gregs[REG_RDI];
        }
        int saved_op = T.string_op;
        bool store = (uc->uc_mcontext.gregs[REG_ERR] & RT_PF_WRITE) &&
                     plain_store((const uint8_t *)uc->uc_mcontext.gregs[REG_RIP]);
        if (!store) {
            T.string_op = saved_op;
            /* a load of up to 64 bytes; a string load (lods, cmps, scas,
             * the source of movs) is followed by register at the trap */
            const uint8_t *pc = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
            for (int n = 0; n < 14 && (*pc == 0xf3 || *pc == 0xf2 || *pc == 0x66 || *pc == 0x67 ||
                                       (*pc & 0xf0) == 0x40); n++) pc++;
            if ((*pc >= 0xa4 && *pc <= 0xa7) || (*pc >= 0xac && *pc <= 0xaf)) T.string_op = *pc;
            read_bytes(fo, RT_LINE, i);
        }
        see(fo);
        if ((fo + RT_LINE - 1) / RT_LINE != fo / RT_LINE) see(fo + RT_LINE - 1);
        T.step[T.nstep].page = page;
        T.step[T.nstep].region = i;
        memcpy(T.step[T.nstep].before, page, RT_PAGE);
        T.nstep++;
        uc->uc_mcontext.gregs[REG_EFL] |= (greg_t)RT_TF;
        return;
    }
    signal(sig, SIG_DFL);                /* not ours: fault again, for real */
}

/* what a string instruction's index register ran over in the step */
static void string_reads(uint64_t from, uint64_t to, bool down)
{
    uint64_t lo = down ? to : from, hi = down ? from : to;
    if (down) { lo += 1; hi += 8; }      /* elements at from, from - size, ...: conservative */
    for (int i = T.nreg - 1; i >= 0; i--) {
        struct region *r = &T.reg[i];
        if (!r->live) continue;
        uint64_t b = (uint64_t)(uintptr_t)r->base;
        uint64_t s = lo > b ? lo : b, e = hi < b + r->len ? hi : b + r->len;
        if (s < e) read_bytes(r->off + (s - b), e - s, -1);   /* conservative: as a view never written */
    }
}

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
    (void)si;
    ucontext_t *uc = uc_;
    if (!T.nstep) {
        signal(sig, SIG_DFL);
        return;
    }
    if (T.string_op) {
        bool down = (uint64_t)uc->uc_mcontext.gregs[REG_EFL] & RT_DF;
        uint64_t rsi1 = (uint64_t)uc->uc_mcontext.gregs[REG_RSI];
        uint64_t rdi1 = (uint64_t)uc->uc_mcontext.gregs[REG_RDI];
        int op = T.string_op;
        if (op == 0xa4 || op == 0xa5 || op == 0xa6 || op == 0xa7 || op == 0xac || op == 0xad)
            string_reads(T.rsi0, rsi1, down);
        if (op == 0xa6 || op == 0xa7 || op == 0xae || op == 0xaf)
            string_reads(T.rdi0, rdi1, down);
    }
    for (int k = 0; k < T.nstep; k++) {
        struct step *s = &T.step[k];
        struct region *r = &T.reg[s->region];
        uint64_t fo = r->off + (uint64_t)(s->page - r->base);
        struct wpage *w = wpage_of(fo);
        if (w)
            for (unsigned b = 0; b < RT_PAGE; b++)
                if (s->page[b] != (char)s->before[b]) wrote_byte(w, b, s->region);
    }
    for (int k = 0; k < T.nstep; k++) mprotect(T.step[k].page, RT_PAGE, PROT_NONE);
    T.nstep = 0;
    T.string_op = 0;
    uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)RT_TF;
}

static void write_out(void)
{
    if (!T.armed || !T.started || T.pid != getpid()) return;
    FILE *f = fopen(T.out, "a");
    if (!f) return;
    for (uint64_t l = 0; l < (T.size + RT_LINE - 1) / RT_LINE; l++)
        if (T.seen[l / 8] & (1u << (l % 8))) fwrite(&l, sizeof l, 1, f);
    if (!T.prefix_over) fill_pmask();
    for (size_t p = 0; p < T.npages; p++)
        for (unsigned l = 0; l < RT_PAGE / RT_LINE; l++)
            if (T.w[p].listed[l]) {
                uint64_t rec[2] = { RT_PMASK | (T.w[p].off / RT_LINE + l), T.w[p].pmask[l] };
                fwrite(rec, sizeof rec, 1, f);
            }
    uint64_t end = T.prefix_over ? RT_CULPRIT | T.culprit : RT_STABLE;
    fwrite(&end, sizeof end, 1, f);
    if (T.untracked) {
        uint64_t u = RT_UNTRACKED;
        fwrite(&u, sizeof u, 1, f);
    }
    uint64_t done = RT_MARK | RT_DONE | (uint64_t)getpid();
    fwrite(&done, sizeof done, 1, f);
    fclose(f);
}

static void resolve(void)
{
    real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    real_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
    real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    real_cfr = (ssize_t (*)(int, off_t *, int, off_t *, size_t, unsigned))dlsym(RTLD_NEXT, "copy_file_range");
    real_sendfile = (ssize_t (*)(int, int, off_t *, size_t))dlsym(RTLD_NEXT, "sendfile");
    real_fopen = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    real_fdopen = (FILE *(*)(int, const char *))dlsym(RTLD_NEXT, "fdopen");
}

static int by_off(const void *a, const void *b)
{
    uint64_t x = ((const struct wpage *)a)->off, y = ((const struct wpage *)b)->off;
    return x < y ? -1 : x > y;
}

/* CAIRN_READTRACK_DIFF: (line | RT_PINNED?, differing-bytes mask) pairs */
static void load_diff(const char *path)
{
    FILE *f = path ? real_fopen(path, "r") : NULL;
    if (!f) return;
    uint64_t rec[2];
    while (fread(rec, sizeof rec, 1, f) == 1) {
        uint64_t line = rec[0] & ~RT_PINNED;
        struct wpage *w = wpage_of(line * RT_LINE & ~(uint64_t)(RT_PAGE - 1));
        if (!w) continue;
        unsigned l = (unsigned)(line % (RT_PAGE / RT_LINE));
        w->listed[l] = true;
        w->pinned[l] = (rec[0] & RT_PINNED) != 0;
        w->diff[l] = rec[1];
    }
    fclose(f);
}

__attribute__((constructor)) static void rt_init(void)
{
    static bool done;
    if (done) return;
    done = true;
    if (!real_mmap) resolve();
    const char *file = getenv("CAIRN_READTRACK_FILE"), *pages = getenv("CAIRN_READTRACK_PAGES");
    T.out = getenv("CAIRN_READTRACK_OUT");
    struct stat st;
    if (!file || !pages || !T.out || stat(file, &st)) return;
    T.dev = st.st_dev;
    T.ino = st.st_ino;
    T.size = (uint64_t)st.st_size;
    T.seen = calloc(T.size / RT_LINE / 8 + 1, 1);
    FILE *f = real_fopen(pages, "r");
    if (!T.seen || !f) {
        if (f) fclose(f);
        return;
    }
    size_t cap = 0;
    uint64_t p;
    while (fread(&p, sizeof p, 1, f) == 1) {
        if (T.npages == cap) {
            cap = cap ? 2 * cap : 64;
            struct wpage *n = realloc(T.w, cap * sizeof *n);
            if (!n) break;
            T.w = n;
        }
        memset(&T.w[T.npages], 0, sizeof *T.w);
        T.w[T.npages++].off = p;
    }
    fclose(f);
    qsort(T.w, T.npages, sizeof *T.w, by_off);
    load_diff(getenv("CAIRN_READTRACK_DIFF"));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO;
    sa.sa_sigaction = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sa.sa_sigaction = on_trap;
    sigaction(SIGTRAP, &sa, NULL);
    T.armed = true;
    atexit(write_out);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!real_mmap) resolve();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED || !T.armed) return p;
    for (int i = 0; i < T.nreg; i++)     /* a mapping over an old one ends it */
        if ((char *)p < T.reg[i].base + T.reg[i].len && T.reg[i].base < (char *)p + len)
            T.reg[i].live = false;
    if (!is_image(fd)) return p;
    start();
    if (T.nreg == RT_MAXREG) {           /* more views than can be told apart */
        T.untracked = true;
        return p;
    }
    T.reg[T.nreg++] = (struct region){ p, (uint64_t)off, len, prot, true };
    for (size_t i = 0; i < T.npages; i++)
        if (T.w[i].off >= (uint64_t)off && T.w[i].off - (uint64_t)off < len)
            mprotect((char *)p + (T.w[i].off - (uint64_t)off), RT_PAGE, PROT_NONE);
    return p;
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!real_pread) resolve();
    ssize_t got = real_pread(fd, buf, n, off);
    if (got > 0 && T.armed && is_image(fd)) {
        start();
        read_bytes((uint64_t)off, (uint64_t)got, -1);
    }
    return got;
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));

ssize_t read(int fd, void *buf, size_t n)
{
    if (!real_read) resolve();
    off_t at = T.armed && is_image(fd) ? lseek(fd, 0, SEEK_CUR) : -1;
    ssize_t got = real_read(fd, buf, n);
    if (got > 0 && at >= 0) {
        start();
        read_bytes((uint64_t)at, (uint64_t)got, -1);
    }
    return got;
}

/* reads of the image this tracker cannot follow: the run is untracked */
ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off, size_t n, unsigned flags)
{
    if (!real_cfr) resolve();
    if (T.armed && (is_image(in) || is_image(out))) {
        start();
        T.untracked = true;
    }
    return real_cfr(in, in_off, out, out_off, n, flags);
}

ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    if (!real_sendfile) resolve();
    if (T.armed && is_image(in)) {
        start();
        T.untracked = true;
    }
    return real_sendfile(out, in, off, n);
}
ssize_t sendfile64(int out, int in, off_t *off, size_t n) __attribute__((alias("sendfile")));

FILE *fdopen(int fd, const char *mode)
{
    if (!real_fdopen) resolve();
    if (T.armed && is_image(fd)) {
        start();
        T.untracked = true;
    }
    return real_fdopen(fd, mode);
}

FILE *fopen(const char *path, const char *mode)
{
    if (!real_fopen) resolve();
    FILE *f = real_fopen(path, mode);
    if (f && T.armed && is_image(fileno(f))) {
        start();
        T.untracked = true;
    }
    return f;
}
FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));
