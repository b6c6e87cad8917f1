/*
 * cairn_pheap.c -- persistent-heap mode (cairn-cc --persistent-heap[=FILE]):
 * every malloc/calloc/realloc/free made by code linked by cairn-cc lives in
 * a pool, as libvmmalloc did for seed 002's soundness runs. The pointers the
 * program keeps in its heap are then stored in relative form and converted
 * back on load all over the program: a whole-program test of the
 * conversions on unmodified code.
 *
 * The driver links this with -Wl,--wrap=malloc,... so only calls from the
 * program's own objects come here; libc's internal allocations stay in DRAM.
 * The heap is volatile in meaning: it is created afresh at each start.
 * Pointers from the heap to DRAM (string literals, globals, stack) are
 * allowed here and stay virtual addresses; pointers into the heap are
 * relative. Size CAIRN_PERSISTENT_HEAP_SIZE (bytes, default 4 GiB, sparse).
 *
 * Where the pool lives, and whether it outlives the process:
 *
 *   default      /dev/shm/cairn-heap-PID.pool ($TMPDIR or /tmp without
 *                /dev/shm), unlinked as soon as it is mapped: nothing is
 *                left behind, even when the process is killed, aborts,
 *                calls _exit or execs (test suites do all of these).
 *   named        CAIRN_PERSISTENT_HEAP=FILE at run time, else the FILE
 *                given to the driver; "%p" in it becomes the process id, so
 *                parallel processes get one pool each. An old FILE is
 *                replaced at start; at exit the pool is closed cleanly and
 *                kept, for `cairn-pool info|check FILE`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cairn_cc_rt.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __real_free(void *p);

/* Set by the driver's generated object when --persistent-heap=FILE. */
__attribute__((weak)) extern const char cairn_cc__pheap_file[];

static cairn_pool *heap;
static char heap_path[4096];
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int inside;  /* the runtime's own allocations go to libc */

static void heap_close(void)
{
    if (heap) {
        cairn_pool *h = heap;
        heap = NULL;
        cairn_pool_close(h);   /* refused, harmlessly, in a fork child */
    }
}

extern int cairn_cc__untyped_words_stay;   /* cairn_cc_rt.c */

/* A value with bit 63 set and no open pool's id is bits the program keeps
 * in a pointer-typed slot (a negative double in a union with a pointer, as
 * jq's jv has): loads leave it as it is instead of stopping. From the start,
 * before the first malloc: a union can be built and returned before any. */
__attribute__((constructor)) static void heap_mode_on(void)
{
    cairn__unknown_pool_ids_are_values(1);
}

static cairn_pool *heap_get(void)
{
    if (__builtin_expect(heap != NULL, 1))
        return heap;
    pthread_mutex_lock(&heap_lock);
    if (!heap) {
        inside = 1;
        const char *p = getenv("CAIRN_PERSISTENT_HEAP");
        if ((!p || !*p) && cairn_cc__pheap_file && cairn_cc__pheap_file[0])
            p = cairn_cc__pheap_file;
        int named = p && *p;
        if (named) {
            if (cairn__expand_pid_path(p, heap_path, sizeof heap_path)) {
                fprintf(stderr, "cairn-cc: persistent heap file %s is longer than %zu bytes "
                        "once %%p is expanded; give a shorter name (--persistent-heap=FILE "
                        "or CAIRN_PERSISTENT_HEAP)\n", p, sizeof heap_path - 1);
                abort();
            }
        } else {
            const char *dir = "/dev/shm";
            if (access(dir, W_OK) != 0) {
                dir = getenv("TMPDIR");
                if (!dir || !*dir) dir = "/tmp";
            }
            snprintf(heap_path, sizeof heap_path, "%s/cairn-heap-%d.pool", dir,
                     (int)getpid());
        }
        const char *sz = getenv("CAIRN_PERSISTENT_HEAP_SIZE");
        size_t size = (size_t)4 << 30;
        if (sz && *sz) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(sz, &end, 0);
            if (errno || end == sz || *end || strchr(sz, '-')) {
                fprintf(stderr, "cairn-cc: CAIRN_PERSISTENT_HEAP_SIZE=%s is not a size in "
                        "bytes; give one, e.g. %zu (4 GiB, the default), or unset it\n",
                        sz, (size_t)4 << 30);
                abort();
            }
            size = (size_t)v;
        }
        /* the heap is written outside transactions by design */
        setenv("CAIRN_UNLOGGED", "off", 0);
        unlink(heap_path);
        heap = cairn_pool_create(heap_path, "cairn-persistent-heap", size);
        if (!heap) {
            fprintf(stderr, "cairn-cc: persistent heap %s: %s (the heap's file comes from "
                    "CAIRN_PERSISTENT_HEAP, --persistent-heap=FILE or /dev/shm; its size "
                    "from CAIRN_PERSISTENT_HEAP_SIZE)\n", heap_path, cairn_errormsg());
            abort();
        }
        if (!named)
            unlink(heap_path);     /* the mapping keeps it alive */
        /* integers that equal heap addresses stay integers (cairn_cc_rt.c) */
        __atomic_store_n(&cairn_cc__untyped_words_stay, 1, __ATOMIC_RELAXED);
        cairn__pool_copy_on_fork(heap);   /* fork: the child's heap is its own */
        atexit(heap_close);
        inside = 0;
    }
    pthread_mutex_unlock(&heap_lock);
    return heap;
}

void *__wrap_malloc(size_t n)
{
    if (inside)
        return __real_malloc(n);
    cairn_pool *h = heap_get();
    inside = 1;
    void *p = cairn_alloc(h, n ? n : 1);
    inside = 0;
    if (!p)
        errno = ENOMEM;
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (inside)
        return __real_calloc(n, m);
    if (m && n > SIZE_MAX / m) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_malloc(n * m);   /* cairn_alloc zeroes */
}

void __wrap_free(void *p)
{
    if (!p)
        return;
    if (!cairn__in_region(p)) {
        __real_free(p);
        return;
    }
    inside = 1;
    cairn_free(p);
    inside = 0;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (!p)
        return __wrap_malloc(n);
    if (!cairn__in_region(p))
        return __real_realloc(p, n);
    if (n == 0) {
        __wrap_free(p);
        return NULL;
    }
    size_t old = cairn_usable_size(p);
    if (n <= old)
        return p;
    void *q = __wrap_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old);   /* relative words stay valid: same pool */
    __wrap_free(p);
    return q;
}

/* libc functions that grow or measure a buffer the program allocated: given
 * a heap pointer, libc's own realloc would abort ("invalid pointer") and
 * malloc_usable_size would return 0. The driver wraps these too. */
void *__wrap_reallocarray(void *p, size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_realloc(p, n * m);
}

size_t __real_malloc_usable_size(void *p);
size_t __wrap_malloc_usable_size(void *p)
{
    if (p && cairn__in_region(p))
        return cairn_usable_size(p);
    return __real_malloc_usable_size(p);
}

/* getline/getdelim into a buffer in the heap: read here, growing it with the
 * heap's realloc (a NULL or libc-allocated buffer stays libc's business). */
ssize_t __real_getdelim(char **line, size_t *cap, int delim, FILE *f);
ssize_t __wrap_getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    if (!line || !cap || !f) {
        errno = EINVAL;
        return -1;
    }
    if (!*line || !cairn__in_region(*line))
        return __real_getdelim(line, cap, delim, f);   /* libc's own buffer */
    size_t len = 0;
    flockfile(f);
    for (;;) {
        int c = getc_unlocked(f);
        if (c == EOF)
            break;
        if (len + 2 > *cap) {
            size_t want = *cap < 60 ? 120 : *cap * 2;
            char *q = __wrap_realloc(*line, want);
            if (!q) {
                funlockfile(f);
                errno = ENOMEM;
                return -1;
            }
            *line = q;
            *cap = want;
        }
        (*line)[len++] = (char)c;
        if (c == delim)
            break;
    }
    funlockfile(f);
    if (len == 0)
        return -1;      /* end of file or an error, nothing read */
    (*line)[len] = 0;
    return (ssize_t)len;
}

/* glibc's stdio.h inlines getline as __getdelim when optimizing */
ssize_t __wrap___getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    return __wrap_getdelim(line, cap, delim, f);
}

ssize_t __wrap_getline(char **line, size_t *cap, FILE *f)
{
    return __wrap_getdelim(line, cap, '\n', f);
}

/* libc functions that read pointers out of an array the program built:
 * argv and envp of exec and posix_spawn, the iovec arrays of readv/writev.
 * In the heap such an array holds the relative form of every pointer into
 * the heap (pcre2grep's callout scripts malloc both the argument strings
 * and argv, and execv failed with EFAULT). Given an array in the heap,
 * these pass libc a copy on the stack (or from libc's malloc when large)
 * with each pointer converted back; any other array goes through as it
 * is. They are defined here rather than wrapped: the program's calls bind
 * to them, and the real ones are found with dlsym(RTLD_NEXT). */
extern char **environ;

typedef int exec_fn(const char *, char *const[], char *const[]);
typedef int fexec_fn(int, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);
typedef ssize_t iov_fn(int, const struct iovec *, int, off_t);

/* libc's own, found once at start (not in a fork child, where dlsym could
 * wait on a loader lock another thread of the parent held at the fork) */
static struct {
    exec_fn *execve, *execvpe;
    fexec_fn *fexecve;
    spawn_fn *posix_spawn, *posix_spawnp;
    iov_fn *preadv, *pwritev;
} libc;

__attribute__((constructor)) static void find_libc(void)
{
    libc.execve = (exec_fn *)dlsym(RTLD_NEXT, "execve");
    libc.execvpe = (exec_fn *)dlsym(RTLD_NEXT, "execvpe");
    libc.fexecve = (fexec_fn *)dlsym(RTLD_NEXT, "fexecve");
    libc.posix_spawn = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawn");
    libc.posix_spawnp = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawnp");
    libc.preadv = (iov_fn *)dlsym(RTLD_NEXT, "preadv");
    libc.pwritev = (iov_fn *)dlsym(RTLD_NEXT, "pwritev");
}

static void *need(void *fn, const char *name)
{
    if (!fn) {
        fprintf(stderr, "cairn-cc: persistent heap: libc's %s was not found\n", name);
        abort();
    }
    return fn;
}

/* the word at p as it is in memory: relative or not */
static uint64_t raw_word(const void *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* A NULL-terminated pointer array as libc may read it: the array itself,
 * or, when it is in the heap, a copy with its entries converted back (on
 * the stack up to VEC_STACK entries, else from libc's malloc). */
#define VEC_STACK 512
struct vec {
    char **v;
    char **heap;
    char *stack[VEC_STACK + 1];
};

static int vec_get(struct vec *c, char *const *v)
{
    c->v = (char **)v;
    c->heap = NULL;
    if (!cairn__in_region(v))   /* NULL is not in it */
        return 0;
    size_t n = 0;
    while (raw_word(&v[n]))     /* a relative pointer is never 0 */
        n++;
    char **out = c->stack;
    if (n > VEC_STACK && !(out = c->heap = __real_malloc((n + 1) * sizeof *out))) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = cairn__ra2va(raw_word(&v[i]));
    out[n] = NULL;
    c->v = out;
    return 0;
}

static void vec_put(struct vec *c)
{
    int err = errno;
    __real_free(c->heap);
    errno = err;
}

/* execve or execvpe (fn, with path) or fexecve (fn NULL, with fd), argv
 * and envp as libc may read them */
static int exec_call(exec_fn *fn, const char *name, int by_fd, const char *path, int fd,
                     char *const argv[], char *const envp[])
{
    struct vec a, e;
    if (vec_get(&a, argv))
        return -1;
    if (vec_get(&e, envp)) {
        vec_put(&a);
        return -1;
    }
    int r = by_fd ? ((fexec_fn *)need(libc.fexecve, name))(fd, a.v, e.v)
                  : ((exec_fn *)need(fn, name))(path, a.v, e.v);
    vec_put(&a);
    vec_put(&e);
    return r;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_call(libc.execve, "execve", 0, path, -1, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_call(libc.execvpe, "execvpe", 0, file, -1, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    return exec_call(NULL, "fexecve", 1, NULL, fd, argv, envp);
}

static int spawn(spawn_fn *fn, const char *name, pid_t *pid, const char *path,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[])
{
    struct vec a, e;
    if (vec_get(&a, argv))
        return ENOMEM;
    if (vec_get(&e, envp)) {
        vec_put(&a);
        return ENOMEM;
    }
    int r = ((spawn_fn *)need(fn, name))(pid, path, fa, attr, a.v, e.v);   /* an error number */
    vec_put(&a);
    vec_put(&e);
    return r;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(libc.posix_spawn, "posix_spawn", pid, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(libc.posix_spawnp, "posix_spawnp", pid, file, fa, attr, argv, envp);
}

/* iovec arrays: readv/writev (the system calls) and preadv/pwritev (libc's)
 * with the iov_base of each entry converted back when the array is in the
 * heap (iov_len is a size). */
#define IOV_STACK 64
static ssize_t iov_call(int op, iov_fn *fn, int fd, const struct iovec *iov, int cnt,
                        off_t off)
{
    struct iovec stack[IOV_STACK], *heap = NULL;
    if (cnt > 0 && cairn__in_region(iov)) {
        struct iovec *d = stack;
        if (cnt > IOV_STACK && !(d = heap = __real_malloc((size_t)cnt * sizeof *d))) {
            errno = ENOMEM;
            return -1;
        }
        for (int i = 0; i < cnt; i++) {
            d[i].iov_base = cairn__ra2va(raw_word(&iov[i].iov_base));
            d[i].iov_len = iov[i].iov_len;
        }
        iov = d;
    }
    ssize_t r = fn ? fn(fd, iov, cnt, off) : syscall(op, fd, iov, cnt);
    int err = errno;
    __real_free(heap);
    errno = err;
    return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    return iov_call(SYS_writev, NULL, fd, iov, cnt, 0);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    return iov_call(SYS_readv, NULL, fd, iov, cnt, 0);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return iov_call(0, need(libc.pwritev, "pwritev"), fd, iov, cnt, off);
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return iov_call(0, need(libc.preadv, "preadv"), fd, iov, cnt, off);
}

/* Pointer stores in persistent-heap mode: into the heap, a pointer into the
 * heap is relative; any other pointer stays a virtual address (the heap is
 * volatile in meaning, so NV-to-V pointers are fine here). */
uint64_t cairn_cc__va2ra_lenient(const void *slot, const void *target,
                                 const char *file, int line)
{
    return cairn_cc__stored_pointer(slot, target, 1, file, line);
}
