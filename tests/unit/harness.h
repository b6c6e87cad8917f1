/* harness.h -- the smallest test harness that says what failed and where. */
#ifndef CAIRN_TEST_HARNESS_H
#define CAIRN_TEST_HARNESS_H
#define _GNU_SOURCE
#include <cairn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

static int t_failures;
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s (cairn says: %s)\n", \
    __FILE__, __LINE__, #cond, cairn_errormsg()); t_failures++; } } while (0)
#define REQUIRE(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: REQUIRE failed: %s (cairn says: %s)\n", \
    __FILE__, __LINE__, #cond, cairn_errormsg()); exit(1); } } while (0)
#define RUN(fn) do { int before = t_failures; fn(); fprintf(stderr, "%s %s\n", \
    t_failures == before ? "ok  " : "FAIL", #fn); } while (0)
#define DONE() do { if (t_failures) fprintf(stderr, "%d check(s) failed\n", t_failures); \
    return t_failures ? 1 : 0; } while (0)

/* a fresh pool path under /dev/shm (or $CAIRN_TEST_DIR) */
static inline const char *t_path(const char *name)
{
    static char buf[8][512];
    static int k;
    const char *dir = getenv("CAIRN_TEST_DIR");
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/cairn-test-%d-%s.pool", dir ? dir : "/dev/shm", (int)getpid(), name);
    unlink(p);
    return p;
}

/* Run fn in a child; return its exit status, or 128+signal; its stderr is
 * captured into err (if not NULL). */
static inline int t_child(void (*fn)(void *), void *arg, char *err, size_t errlen)
{
    int pfd[2];
    if (pipe(pfd)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        fn(arg);
        _exit(0);
    }
    close(pfd[1]);
    size_t got = 0;
    ssize_t n;
    char sink[256];
    while ((n = read(pfd[0], err && got + 1 < errlen ? err + got : sink,
                     err && got + 1 < errlen ? errlen - got - 1 : sizeof sink)) > 0)
        if (err && got + 1 < errlen) got += (size_t)n;
    if (err) err[got] = 0;
    close(pfd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#endif
