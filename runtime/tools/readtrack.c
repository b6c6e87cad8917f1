/*
 * readtrack.c -- which cache lines of a pool image a check reads
 * (libcairn-readtrack.so, loaded with LD_PRELOAD by cairn-crashcheck into
 * the check it runs on a crash point's "everything written" and "only
 * what is durable" images; docs/crashcheck.md, "Pruning").
 *
 * Inert unless CAIRN_READTRACK_FILE names the image. Then:
 *   - every mapping of that file (mmap) has the pages listed in
 *     CAIRN_READTRACK_PAGES (a file of 8-byte page offsets in the image)
 *     protected PROT_NONE. An access faults; the handler records the line
 *     of the faulting address and the line 63 bytes on (an access of up to
 *     64 bytes may span two), gives the page its access back and single-
 *     steps the instruction (the x86 trap flag); the trap after it takes
 *     the page away again. So every access to those pages is seen, refined
 *     to lines; reads and writes alike (a write counts as a read: more
 *     lines kept, never fewer);
 *   - pread, pread64 and read of the file record the lines they return;
 *   - CAIRN_READTRACK_OUT (appended to by every process that loads this)
 *     gets a start mark (RT_MARK | pid) when a process first maps or reads
 *     the image, and at its exit the lines it saw as 8-byte line numbers,
 *     then a done mark (RT_MARK | RT_DONE | pid). A process that leaves by
 *     _exit or a signal writes no done mark: the caller then treats every
 *     line as read.
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

#define RT_PAGE 4096u
#define RT_LINE 64u
#define RT_TF   0x100ull                 /* EFLAGS trap flag */
#define RT_MARK 0x8000000000000000ull
#define RT_DONE 0x4000000000000000ull

static struct {
    bool armed, started;
    dev_t dev;
    ino_t ino;
    uint64_t size;                       /* bytes of the image */
    uint64_t *pages;                     /* sorted page offsets to watch */
    size_t npages;
    uint8_t *seen;                       /* a bit per line */
    const char *out;
    struct region { char *base; uint64_t off, len; int prot; } reg[8];
    int nreg;
    char *reprotect[8];                  /* pages given back for one instruction */
    int nre;
} T;

static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_read)(int, void *, size_t);

static void mark(uint64_t w)
{
    FILE *f = fopen(T.out, "a");
    if (!f) return;
    fwrite(&w, sizeof w, 1, f);
    fclose(f);
}

/* the first touch of the image by this process */
static void start(void)
{
    if (T.started) return;
    T.started = true;
    mark(RT_MARK | (uint64_t)getpid());
}

static void see(uint64_t fo)
{
    if (fo < T.size) T.seen[fo / RT_LINE / 8] |= (uint8_t)(1u << (fo / RT_LINE % 8));
}

static void see_range(uint64_t fo, uint64_t len)
{
    if (!len) return;
    for (uint64_t l = fo / RT_LINE; l <= (fo + len - 1) / RT_LINE; l++) see(l * RT_LINE);
}

static bool watched(uint64_t page)
{
    size_t lo = 0, hi = T.npages;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (T.pages[mid] == page) return true;
        if (T.pages[mid] < page) lo = mid + 1;
        else hi = mid;
    }
    return false;
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
    for (int i = 0; i < T.nreg; i++) {
        struct region *r = &T.reg[i];
        if (a < r->base || a >= r->base + r->len) continue;
        uint64_t fo = r->off + (uint64_t)(a - r->base);
        if (!watched(fo & ~(uint64_t)(RT_PAGE - 1)) || T.nre == 8) break;
        see(fo);
        if ((fo + RT_LINE - 1) / RT_LINE != fo / RT_LINE) see(fo + RT_LINE - 1);
        char *page = (char *)((uintptr_t)a & ~(uintptr_t)(RT_PAGE - 1));
        mprotect(page, RT_PAGE, r->prot);
        T.reprotect[T.nre++] = page;
        uc->uc_mcontext.gregs[REG_EFL] |= (greg_t)RT_TF;
        return;
    }
    signal(sig, SIG_DFL);                /* not ours: fault again, for real */
}

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
    (void)si;
    ucontext_t *uc = uc_;
    if (!T.nre) {
        signal(sig, SIG_DFL);
        return;
    }
    for (int i = 0; i < T.nre; i++) mprotect(T.reprotect[i], RT_PAGE, PROT_NONE);
    T.nre = 0;
    uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)RT_TF;
}

static void write_out(void)
{
    if (!T.armed || !T.started) return;
    FILE *f = fopen(T.out, "a");
    if (!f) return;
    for (uint64_t l = 0; l < (T.size + RT_LINE - 1) / RT_LINE; l++)
        if (T.seen[l / 8] & (1u << (l % 8))) fwrite(&l, sizeof l, 1, f);
    uint64_t done = RT_MARK | RT_DONE | (uint64_t)getpid();
    fwrite(&done, sizeof done, 1, f);
    fclose(f);
}

static void resolve(void)
{
    real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    real_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
    real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
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
    FILE *f = fopen(pages, "r");
    if (!T.seen || !f) {
        if (f) fclose(f);
        return;
    }
    size_t cap = 0;
    uint64_t p;
    while (fread(&p, sizeof p, 1, f) == 1) {
        if (T.npages == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *n = realloc(T.pages, cap * sizeof *n);
            if (!n) break;
            T.pages = n;
        }
        T.pages[T.npages++] = p;
    }
    fclose(f);
    for (size_t i = 1; i < T.npages; i++)   /* sort (insertion: the list comes sorted) */
        for (size_t j = i; j > 0 && T.pages[j - 1] > T.pages[j]; j--) {
            uint64_t x = T.pages[j];
            T.pages[j] = T.pages[j - 1];
            T.pages[j - 1] = x;
        }
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
    if (p == MAP_FAILED || !T.armed || !is_image(fd) || T.nreg == 8) return p;
    start();
    T.reg[T.nreg++] = (struct region){ p, (uint64_t)off, len, prot };
    for (size_t i = 0; i < T.npages; i++)
        if (T.pages[i] >= (uint64_t)off && T.pages[i] - (uint64_t)off < len)
            mprotect((char *)p + (T.pages[i] - (uint64_t)off), RT_PAGE, PROT_NONE);
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
        see_range((uint64_t)off, (uint64_t)got);
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
        see_range((uint64_t)at, (uint64_t)got);
    }
    return got;
}
