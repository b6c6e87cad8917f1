/*
 * stride_walk.c -- how much of `cairn cc bench`'s list result is where the
 * nodes live, with no cairn code at all.
 *
 * The benchmark's list node is 128 bytes. malloc/calloc hands such objects
 * out 144 bytes apart (16-byte chunk header); cairn's pool hands them out
 * 128 bytes apart. This program builds the same 12,500-node list (the
 * benchmark's n/8) five ways, newest first as the benchmark does, and walks
 * them in turn (rotating order, 40 rounds of 200 searches each):
 *   calloc    nodes from calloc
 *   shm128    a MAP_SHARED /dev/shm file, 128-byte stride (the pool's layout)
 *   anon128   anonymous memory, 128-byte stride
 *   anon144   anonymous memory, 144-byte stride (malloc's layout)
 *   shm144    a MAP_SHARED /dev/shm file, 144-byte stride
 * and prints each one's time relative to calloc.
 *
 *   cc -O2 compiler/bench/stride_walk.c -o /tmp/stride_walk && taskset -c 1 /tmp/stride_walk
 *   (the build also makes it: taskset -c 1 build/bench/cairn-stride-walk)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct item { long key, val; struct item *next; char pad[104]; };   /* 128 bytes */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static struct item *build(char *base, size_t stride, int n)
{
    struct item *head = NULL;
    for (int i = 0; i < n; i++) {
        struct item *it = base ? (struct item *)(base + (size_t)i * stride) : calloc(1, sizeof *it);
        if (!it) { perror("calloc"); exit(1); }
        it->key = i;
        it->next = head;
        head = it;
    }
    return head;
}

static long walk(const struct item *h, long key)
{
    long c = 0;
    for (const struct item *it = h; it && it->key != key; it = it->next) c++;
    return c;
}

static char *shm_map(const char *name, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/%s-%d", name, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)len)) { perror(path); exit(1); }
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unlink(path);
    close(fd);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    return p;
}

static char *anon_map(size_t len)
{
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    return p;
}

int main(void)
{
    enum { K = 5, ROUNDS = 40, SEARCHES = 200 };
    const int n = 12500;
    const size_t len = (size_t)n * 256 + 4096;
    const char *name[K] = { "calloc", "shm128", "anon128", "anon144", "shm144" };
    struct item *h[K] = {
        build(NULL, 0, n), build(shm_map("stride128", len), 128, n), build(anon_map(len), 128, n),
        build(anon_map(len), 144, n), build(shm_map("stride144", len), 144, n),
    };
    double tot[K] = { 0 };
    long sink = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < K; k++) {
            int j = (k + r) % K;
            srand((unsigned)r);                 /* the same keys for every layout */
            double t = now();
            for (int q = 0; q < SEARCHES; q++) sink += walk(h[j], rand() % n);
            tot[j] += now() - t;
        }
    for (int k = 0; k < K; k++)
        printf("%-8s %6.2f ns per node visited  %.2fx calloc\n", name[k],
               tot[k] / ROUNDS / SEARCHES / (n / 2.0) * 1e9, tot[k] / tot[0]);
    return sink == 42;
}
