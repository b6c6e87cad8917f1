/* test_corrupt.c -- a corpus of hand-made corrupt pools: each is refused
 * with a message naming the problem, never crashes, and is left unchanged
 * by the refused open (invariant 6). */
#include "harness.h"
#include "internal.h"
#include <stddef.h>
#include <sys/mman.h>

static const char *GOOD;

static void make_good(void)
{
    cairn_pool *p = cairn_pool_create(GOOD, "cor", 8 << 20);
    REQUIRE(p);
    uint64_t *r = cairn_root(p, 64, 77);
    REQUIRE(r);
    CAIRN_TX(p) { void *o = cairn_alloc(p, 100); cairn_ptr_store(r, o); }
    cairn_pool_close(p);
}

static char *map_copy(const char *to, int *fd)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp --sparse=always %s %s", GOOD, to);
    REQUIRE(system(cmd) == 0);
    *fd = open(to, O_RDWR);
    char *m = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    REQUIRE(m != MAP_FAILED);
    return m;
}

static uint64_t file_hash(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    if (st.st_size == 0) { close(fd); return 0; }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    uint64_t h = cairn__hash(m, (size_t)st.st_size, 1) ^ (uint64_t)st.st_size;
    munmap(m, (size_t)st.st_size);
    close(fd);
    return h;
}

static void quiet(void *c, const char *s, const char *m) { (void)c; (void)s; (void)m; }

static void expect_refused(const char *path, const char *what, const char *needle)
{
    uint64_t before = file_hash(path);
    cairn_pool *p = cairn_pool_open(path, "cor");
    if (p) {
        fprintf(stderr, "  %s: opened, but should have been refused\n", what);
        t_failures++;
        cairn_pool_close(p);
        return;
    }
    if (!strstr(cairn_errormsg(), needle)) {
        fprintf(stderr, "  %s: message \"%s\" lacks \"%s\"\n", what, cairn_errormsg(), needle);
        t_failures++;
    }
    if (!strchr(cairn_errormsg(), '\n')) { /* one line */ } else t_failures++;
    CHECK(file_hash(path) == before);
    struct cairn_check_report rep;
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) != 0);
    fprintf(stderr, "  refused %-28s %s\n", what, cairn_errormsg());
}

static void state_fix(char *m, uint64_t off)
{
    struct pool_state *s = (void *)(m + off);
    s->checksum = cairn__hash(s, offsetof(struct pool_state, checksum), 0x5747);
}

static void corpus(void)
{
    const char *path = t_path("bad");
    int fd;
    char *m;

    int e = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644); close(e);
    expect_refused(path, "empty file", "too small");

    m = map_copy(path, &fd); memcpy(m, "NOTAPOOL", 8); close(fd);
    expect_refused(path, "bad magic", "bad magic");

    m = map_copy(path, &fd);
    ((struct pool_hdr *)m)->version = 99;
    ((struct pool_hdr *)m)->checksum = cairn__hash(m, offsetof(struct pool_hdr, checksum), 0x4844);
    close(fd);
    expect_refused(path, "future version", "version");

    /* a version 1 pool never has an exact run: the flag is version 2's */
    m = map_copy(path, &fd);
    ((struct pool_hdr *)m)->version = 1;
    ((struct pool_hdr *)m)->checksum = cairn__hash(m, offsetof(struct pool_hdr, checksum), 0x4844);
    close(fd);
    expect_refused(path, "exact run in a version 1 pool", "chunk table");

    m = map_copy(path, &fd); m[20] ^= 1; close(fd);
    expect_refused(path, "header bit flip", "checksum");

    m = map_copy(path, &fd); close(fd); REQUIRE(truncate(path, 1 << 20) == 0);
    expect_refused(path, "truncated file", "truncated");

    m = map_copy(path, &fd); m[CAIRN_STATE_A_OFF + 9] ^= 1; m[CAIRN_STATE_B_OFF + 9] ^= 1; close(fd);
    expect_refused(path, "both state copies torn", "state");

    m = map_copy(path, &fd);
    ((struct pool_state *)(m + CAIRN_STATE_A_OFF))->root_off = (uint64_t)1 << 38;
    state_fix(m, CAIRN_STATE_A_OFF);
    ((struct pool_state *)(m + CAIRN_STATE_B_OFF))->root_off = (uint64_t)1 << 38;
    state_fix(m, CAIRN_STATE_B_OFF);
    close(fd);
    expect_refused(path, "root outside the heap", "root");

    m = map_copy(path, &fd);
    {
        const struct pool_hdr *h = (void *)m;
        uint64_t *w = (uint64_t *)(m + h->heap_off) + 1;   /* chunk 1's table word */
        *w ^= (uint64_t)1 << 50;
    }
    close(fd);
    expect_refused(path, "chunk table word corrupt", "chunk table");

    m = map_copy(path, &fd);
    {
        const struct pool_hdr *h = (void *)m;
        *(uint64_t *)(m + CAIRN_CLEAN_OFF) = 0;            /* dirty: recovery runs */
        struct log_rec *r = (void *)(m + h->lanes_off + sizeof(struct lane_hdr));
        r->kind_off = (uint64_t)REC_JUMP | ((uint64_t)(7 << 20) << 8);
        r->len = (uint64_t)1 << 30;
        uint64_t gen = ((struct lane_hdr *)(m + h->lanes_off))->gen;
        r->checksum = cairn__hash(NULL, 0, gen * 0xd6e8feb86659fd93ULL ^ r->kind_off ^ (r->len << 1));
    }
    close(fd);
    expect_refused(path, "undo log jumps out of heap", "outside the heap");

    m = map_copy(path, &fd);
    for (size_t i = 0; i < (8 << 20); i += 8) *(uint64_t *)(m + i) = i * 0x9e3779b97f4a7c15ULL;
    close(fd);
    expect_refused(path, "random bytes", "bad magic");

    CHECK(cairn_pool_open("/dev/shm", "cor") == NULL && strstr(cairn_errormsg(), "directory"));
    unlink(path);
}

static void torn_record_is_not_applied(void)
{
    /* a dirty pool whose lane holds a record with a bad checksum: recovery
     * must stop at it, not copy its bytes anywhere */
    const char *path = t_path("torn");
    int fd;
    char *m = map_copy(path, &fd);
    const struct pool_hdr *h = (void *)m;
    *(uint64_t *)(m + CAIRN_CLEAN_OFF) = 0;
    struct log_rec *r = (void *)(m + h->lanes_off + sizeof(struct lane_hdr));
    struct pool_state st;
    cairn__state_read(m, &st);
    r->kind_off = (uint64_t)REC_UNDO | (st.root_off << 8);
    r->len = 8;
    memset(r + 1, 0xff, 8);
    r->checksum = 12345;                       /* torn */
    close(fd);
    cairn_pool *p = cairn_pool_open(path, "cor");
    REQUIRE(p);
    uint64_t *root = cairn_root(p, 64, 77);
    CHECK(root && *root != ~(uint64_t)0 && cairn_ptr_load(root) != NULL);
    cairn_pool_close(p);
    unlink(path);
}

/* A version 1 pool (made before CAIRN_RUN_EXACT) opens, is written as
 * version 1 by a clean close (no run word marked exact, so the libcairn
 * that made it still reads it), and recovers from a crash. */
static uint64_t exact_words(const char *path, uint32_t *version)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    REQUIRE(fd >= 0 && fstat(fd, &st) == 0);
    const char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    const struct pool_hdr *h = (const void *)m;
    *version = h->version;
    uint64_t n = 0, chunks = cairn__heap_chunks(h, (uint64_t)st.st_size);
    for (uint64_t g = 1; g < chunks && g < CAIRN_ZONE_CHUNKS; g++) {
        uint64_t w = *cairn__chunk_table_slot(m, h, g);
        if ((w & 0xff) == CK_RUN && ((w >> 8) & CAIRN_RUN_EXACT)) n++;
    }
    munmap((void *)m, (size_t)st.st_size);
    close(fd);
    return n;
}

static void fill_and_close(const char *path, int crash)
{
    cairn_pool *p = cairn_pool_open(path, "v1");
    REQUIRE(p);
    uint64_t *r = cairn_root(p, 64, 78);
    REQUIRE(r);
    for (int i = 0; i < 50; i++)
        CAIRN_TX(p) {
            uint64_t *o = cairn_alloc(p, 48);
            o[0] = cairn_ptr_load(r) ? 1 : 0;
            cairn_ptr_store(&o[1], cairn_ptr_load(r));
            cairn_ptr_store(r, o);
        }
    if (crash) _exit(0);
    REQUIRE(cairn_pool_close(p) == 0);
}

static void crash_child(void *path) { fill_and_close(path, 1); }

static void version1_pool(void)
{
    const char *path = t_path("v1");
    unlink(path);
    cairn_pool *p = cairn_pool_create(path, "v1", 8 << 20);
    REQUIRE(p);
    REQUIRE(cairn_pool_close(p) == 0);
    uint32_t version;
    CHECK(exact_words(path, &version) == 0 && version == CAIRN_VERSION);
    int fd = open(path, O_RDWR);
    char *m = mmap(NULL, CAIRN_HEADER_END, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    ((struct pool_hdr *)m)->version = 1;
    ((struct pool_hdr *)m)->checksum = cairn__hash(m, offsetof(struct pool_hdr, checksum), 0x4844);
    munmap(m, CAIRN_HEADER_END);
    close(fd);

    fill_and_close(path, 0);
    CHECK(exact_words(path, &version) == 0 && version == 1);
    REQUIRE(t_child(crash_child, (void *)path, NULL, 0) == 0);
    fill_and_close(path, 0);                        /* recovers, then closes */
    CHECK(exact_words(path, &version) == 0 && version == 1);
    struct cairn_check_report rep;
    CHECK(cairn__check_file(path, true, quiet, NULL, &rep) == 0);

    /* the same life on a new pool marks its run exact */
    unlink(path);
    p = cairn_pool_create(path, "v1", 8 << 20);
    REQUIRE(p && cairn_pool_close(p) == 0);
    fill_and_close(path, 0);
    CHECK(exact_words(path, &version) > 0 && version == CAIRN_VERSION);
    unlink(path);
}

int main(void)
{
    GOOD = t_path("good");
    make_good();
    RUN(corpus);
    RUN(torn_record_is_not_applied);
    RUN(version1_pool);
    unlink(GOOD);
    DONE();
}
