/*
 * fuzz_pool.c -- libFuzzer target over the pool-file parser and recovery.
 *
 * Each input patches a valid pool (header, lanes, chunk table, first run)
 * and may mark it dirty so recovery runs: byte 0 picks the flags, then
 * records of [offset:3 bytes][len:1][bytes] overwrite the first 2 MiB.
 * The patched pool is checked read-only (cairn pool check), then opened
 * (recovery, mark from the root) and closed. Invariant 6: no input may
 * crash cairn or make it touch memory outside the pool.
 */
#include "internal.h"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define PREFIX ((size_t)2 << 20)
static char *tmpl;
static char path[256], tpath[256];

static void quiet(void *c, const char *s, const char *m) { (void)c; (void)s; (void)m; }

static void make_template(void)
{
    snprintf(tpath, sizeof tpath, "/dev/shm/cairn-fuzz-tmpl-%d.pool", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm/cairn-fuzz-%d.pool", (int)getpid());
    unlink(tpath);
    cairn_pool *p = cairn_pool_create(tpath, "fuzz", 8 << 20);
    if (!p) abort();
    uint64_t *root = cairn_root(p, 64, 99);
    for (int i = 0; i < 20; i++) {
        CAIRN_TX(p) {
            uint64_t *o = cairn_alloc(p, 16 + 16 * (size_t)(i % 4));
            cairn_ptr_store(o, cairn_ptr_load(root));
            cairn_ptr_store(root, o);
        }
    }
    /* leave one transaction's records in lane 0, as a crash would */
    cairn_tx_begin(p);
    cairn_tx_add(root, 64);
    root[1] = 5;
    tmpl = malloc(PREFIX);
    int fd = open(tpath, O_RDONLY);
    if (pread(fd, tmpl, PREFIX, 0) != (ssize_t)PREFIX) abort();
    close(fd);
    cairn_tx_abort();
    cairn_pool_close(p);
    unlink(tpath);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tmpl) make_template();
    if (size < 1) return 0;
    static char *buf;
    if (!buf) buf = malloc(PREFIX);
    memcpy(buf, tmpl, PREFIX);
    uint8_t flags = data[0];
    if (!(flags & 1)) *(uint64_t *)(buf + CAIRN_CLEAN_OFF) = 1;   /* else dirty: recovery */
    for (size_t i = 1; i + 4 <= size;) {
        size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % PREFIX;
        size_t len = data[i + 3];
        i += 4;
        if (len > size - i) len = size - i;
        if (len > PREFIX - off) len = PREFIX - off;
        memcpy(buf + off, data + i, len);
        i += len;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) abort();
    if (pwrite(fd, buf, PREFIX, 0) != (ssize_t)PREFIX) abort();
    size_t file_size = (flags & 2) ? PREFIX + 4096 : (size_t)8 << 20;   /* sometimes truncated */
    if (ftruncate(fd, (off_t)file_size)) abort();
    close(fd);
    struct cairn_check_report rep;
    cairn__check_file(path, true, quiet, NULL, &rep);
    cairn_pool *p = cairn_pool_open(path, "fuzz");
    if (p) {
        void *r = cairn_root(p, 64, 99);
        (void)r;
        cairn_pool_close(p);
    }
    unlink(path);
    return 0;
}
