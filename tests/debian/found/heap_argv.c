/* pcre2grep's callout scripts (pcre2 10.42's RunGrepTest): the program
 * mallocs the argument strings and the argv array and calls execv. Under
 * --persistent-heap the array holds the relative form of each pointer
 * into the heap, which libc read as addresses: execv failed with EFAULT.
 * The same for envp, execvp(e), execve, fexecve, posix_spawn(p) and the
 * iovec arrays of readv/writev and preadv/pwritev. Prints the same as a
 * clang build. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char *heap_str(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    return strcpy(p, s);
}

/* argv (and envp) built in the heap, the way pcre2grep builds them */
static char **heap_argv(const char *first, const char *msg)
{
    char **v = malloc(5 * sizeof *v);
    v[0] = heap_str(first);
    v[1] = heap_str("-c");
    v[2] = heap_str("echo \"$0: $CAIRN_HEAP_ARGV\"");
    v[3] = heap_str(msg);
    v[4] = NULL;
    return v;
}

static char **heap_envp(const char *value)
{
    char **e = malloc(3 * sizeof *e);
    e[0] = malloc(64);
    snprintf(e[0], 64, "CAIRN_HEAP_ARGV=%s", value);
    e[1] = heap_str("PATH=/usr/bin:/bin");
    e[2] = NULL;
    return e;
}

static int wait_child(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run_exec(const char *how)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char **argv = heap_argv("/bin/sh", how);
        char **envp = heap_envp(how);
        if (!strcmp(how, "execv")) {
            setenv("CAIRN_HEAP_ARGV", "from environ", 1);
            execv(argv[0], argv);
        } else if (!strcmp(how, "execve")) {
            execve(argv[0], argv, envp);
        } else if (!strcmp(how, "execvp")) {
            setenv("CAIRN_HEAP_ARGV", "from environ, by PATH", 1);
            free(argv[0]);
            argv[0] = heap_str("sh");
            execvp(argv[0], argv);
        } else if (!strcmp(how, "execvpe")) {
            free(argv[0]);
            argv[0] = heap_str("sh");
            execvpe(argv[0], argv, envp);
        } else if (!strcmp(how, "fexecve")) {
            int fd = open("/bin/sh", O_RDONLY);
            fexecve(fd, argv, envp);
        }
        printf("%s failed: %m\n", how);
        fflush(stdout);
        _exit(1);
    }
    printf("%s: exit %d\n", how, wait_child(pid));
}

static void run_spawn(int by_path)
{
    char **argv = heap_argv(by_path ? "sh" : "/bin/sh", by_path ? "posix_spawnp" : "posix_spawn");
    char **envp = heap_envp(by_path ? "spawned by PATH" : "spawned");
    pid_t pid;
    fflush(stdout);
    int r = by_path ? posix_spawnp(&pid, argv[0], NULL, NULL, argv, envp)
                    : posix_spawn(&pid, argv[0], NULL, NULL, argv, envp);
    if (r != 0) {
        printf("%s failed: %s\n", argv[3], strerror(r));
        return;
    }
    printf("%s: exit %d\n", argv[3], wait_child(pid));
    for (int i = 0; argv[i]; i++) free(argv[i]);
    free(argv);
    for (int i = 0; envp[i]; i++) free(envp[i]);
    free(envp);
}

/* 600 arguments: more than the wrappers' copy on the stack holds */
static void run_many_args(void)
{
    char **argv = malloc(603 * sizeof *argv);
    argv[0] = heap_str("/bin/sh");
    argv[1] = heap_str("-c");
    argv[2] = heap_str("echo \"$# arguments, the last ${598}\"");
    argv[3] = heap_str("sh");
    for (int i = 4; i < 602; i++) {
        argv[i] = malloc(16);
        snprintf(argv[i], 16, "arg%d", i - 3);
    }
    argv[602] = NULL;   /* argv[4..601] are $1..$598 */
    pid_t pid;
    fflush(stdout);
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) {
        printf("many arguments: spawn failed\n");
        return;
    }
    printf("many arguments: exit %d\n", wait_child(pid));
}

static void run_iov(void)
{
    char path[] = "/tmp/cairn-heap-iov-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); exit(2); }
    unlink(path);
    struct iovec *iov = malloc(3 * sizeof *iov);   /* the array and the buffers in the heap */
    iov[0].iov_base = heap_str("writev ");
    iov[0].iov_len = 7;
    iov[1].iov_base = heap_str("from the ");
    iov[1].iov_len = 9;
    iov[2].iov_base = heap_str("heap\n");
    iov[2].iov_len = 5;
    printf("writev: %zd\n", writev(fd, iov, 3));
    printf("pwritev: %zd\n", pwritev(fd, iov + 2, 1, 21));
    char *a = calloc(1, 8), *b = calloc(1, 32);
    iov[0].iov_base = a;
    iov[0].iov_len = 7;
    iov[1].iov_base = b;
    iov[1].iov_len = 19;
    lseek(fd, 0, SEEK_SET);
    printf("readv: %zd [%s|%s]\n", readv(fd, iov, 2), a, b);
    memset(b, 0, 32);
    iov[1].iov_len = 4;
    printf("preadv: %zd [%s]\n", preadv(fd, iov + 1, 1, 16), b);
    close(fd);
}

int main(void)
{
    run_exec("execv");
    run_exec("execve");
    run_exec("execvp");
    run_exec("execvpe");
    run_exec("fexecve");
    run_spawn(0);
    run_spawn(1);
    run_many_args();
    run_iov();
    return 0;
}
