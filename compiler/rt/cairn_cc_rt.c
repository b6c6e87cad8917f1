/*
 * cairn_cc_rt.c -- run-time entry points that cairn-cc's pass calls beyond
 * cairn.h's ABI. Linked into every program cairn-cc links, before libcairn.
 *
 * They build only on cairn.h's ABI (cairn__in_region, cairn__va2ra_checked,
 * cairn__ra2va): everything here is a composition of those, kept out of line
 * so the generated code stays small.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cairn_cc_rt.h"

/* Is this untyped 8-byte value an address inside an open pool? The region
 * spans many TiB, so plain integers (counts, hashes) can fall inside it;
 * only the mapped bytes of an open pool count as a pointer. Typed pointer
 * stores do not come here: they are converted, and checked, always. */
/* Persistent-heap mode (cairn_pheap.c) sets this when it makes the heap:
 * that heap is made afresh at each start and never reopened, so an address
 * kept as an integer stays valid for the process's life and need not go
 * relative; and there integers that equal heap addresses are common (jq's
 * jv keeps a 32-bit array size in the high half of a word, small flags in
 * the low half: size 5462 equals the upper half of a pool at 0x155600000000,
 * and converting it grew the array by 2^31 or failed an assertion). */
int cairn_cc__untyped_words_stay;

static int is_pool_address(uint64_t v)
{
    return v != 0 && cairn__in_region((const void *)(uintptr_t)v) &&
           cairn_pool_of((const void *)(uintptr_t)v) != NULL;
}

/* After a byte copy or a wide (integer, vector, aggregate) store of len
 * bytes at dst inside PM: any aligned 8-byte word that holds an address
 * inside an open pool is a copied pointer; store it in relative form. The range
 * was logged before the copy, so rewriting it needs no new undo record.
 * Virtual addresses outside the region cannot be told from integers, so a
 * copied pointer to DRAM is not caught here (docs/compiler.md). */
static void fix_span(uintptr_t p, uintptr_t end, const char *file, int line)
{
    for (; p + 8 <= end; p += 8) {
        uint64_t v = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
        if (is_pool_address(v))
            *(uint64_t *)p = cairn__va2ra_checked((const void *)p,
                                                  (const void *)(uintptr_t)v,
                                                  file, line);
    }
}

#if defined(__x86_64__)
/* The eight-word blocks of [p, end) with AVX2, four words a compare:
 * v is in the region when (v - lo) < size unsigned, i.e. with both sides'
 * top bit flipped, signed. Returns where the blocks stop. */
__attribute__((target("avx2"))) static uintptr_t fix_blocks_avx2(uintptr_t p, uintptr_t end,
                                                                uint64_t lo, uint64_t size,
                                                                const char *file, int line)
{
    const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
    const __m256i vlo = _mm256_set1_epi64x((long long)lo);
    const __m256i vsize = _mm256_set1_epi64x((long long)(size ^ (uint64_t)INT64_MIN));
    for (; p + 64 <= end; p += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)p + 1);
        a = _mm256_xor_si256(_mm256_sub_epi64(a, vlo), flip);
        b = _mm256_xor_si256(_mm256_sub_epi64(b, vlo), flip);
        __m256i in = _mm256_or_si256(_mm256_cmpgt_epi64(vsize, a), _mm256_cmpgt_epi64(vsize, b));
        if (__builtin_expect(!_mm256_testz_si256(in, in), 0)) fix_span(p, p + 64, file, line);
    }
    return p;
}
#endif

/* The words are first tested eight at a time against the PM region's
 * bounds, read once, with no branch per word (four words a compare where
 * the CPU has AVX2): copied bytes that hold no address inside the region
 * (text, numbers: a 1 KiB value) cost a compare per word or less, and only
 * an eight-word block with a hit is looked at word by word
 * (is_pool_address: an open pool's mapped bytes). */
void cairn_cc__fix_words(void *dst, uint64_t len, const char *file, int line)
{
    if (__atomic_load_n(&cairn_cc__untyped_words_stay, __ATOMIC_RELAXED))
        return;                             /* heap mode: no word is converted */
    uintptr_t p = ((uintptr_t)dst + 7) & ~(uintptr_t)7;
    uintptr_t end = (uintptr_t)dst + len;
    uint64_t lo = cairn__region_lo, size = cairn__region_hi - lo;
#if defined(__x86_64__)
    if (p + 128 <= end && __builtin_cpu_supports("avx2"))
        p = fix_blocks_avx2(p, end, lo, size, file, line);
#endif
    for (; p + 64 <= end; p += 64) {
        const uint64_t *w = (const uint64_t *)p;
        unsigned hit = 0;
        for (int k = 0; k < 8; k++)
            hit |= __atomic_load_n(&w[k], __ATOMIC_RELAXED) - lo < size;
        if (__builtin_expect(hit, 0)) fix_span(p, p + 64, file, line);
    }
    fix_span(p, end, file, line);
}

/* cmpxchg of a pointer slot in PM: compare and store in relative form,
 * return the old value as a virtual address (the pass derives success by
 * comparing it with expected). */
void *cairn_cc__cmpxchg_ptr(void **slot, void *expected, void *desired,
                            const char *file, int line)
{
    uint64_t *word = (uint64_t *)slot;
    uint64_t exp;
    if (expected == NULL)
        exp = 0;
    else if (cairn__in_region(expected))
        exp = cairn__va2ra_checked(slot, expected, file, line);
    else /* a PM slot never holds a DRAM address: the compare fails */
        return cairn__ra2va(__atomic_load_n(word, __ATOMIC_SEQ_CST));
    uint64_t des = cairn__va2ra_checked(slot, desired, file, line);
    if (__atomic_compare_exchange_n(word, &exp, des, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
        return expected;
    return cairn__ra2va(exp);
}

/* Atomic exchange of a pointer slot in PM. */
void *cairn_cc__xchg_ptr(void **slot, void *desired, const char *file, int line)
{
    uint64_t des = cairn__va2ra_checked(slot, desired, file, line);
    return cairn__ra2va(__atomic_exchange_n((uint64_t *)slot, des,
                                            __ATOMIC_SEQ_CST));
}

/* An untyped 8-byte value stored into a PM slot (an i64 store, an operand
 * of an integer cmpxchg/exchange, which is how clang lowers them on
 * pointers): relative when it is an address inside an open pool, else
 * unchanged. */
uint64_t cairn_cc__pm_word(const void *slot, uint64_t v, const char *file, int line)
{
    if (!cairn__in_region(slot) ||
        __atomic_load_n(&cairn_cc__untyped_words_stay, __ATOMIC_RELAXED) ||   /* heap mode */
        !is_pool_address(v))
        return v;
    return cairn__va2ra_checked(slot, (const void *)(uintptr_t)v, file, line);
}

/* ---- relative -> virtual, inline fast path ------------------------------
 * The pass translates a relative value inline when its pool is the one in
 * this one-word cache (layout: cairn_cc_rt.h; a filled word's key has bit
 * 23 set, so 0 is empty), and calls cairn_cc__ra2va_miss otherwise.
 * One word, so a reader never sees a key with another pool's slot. The
 * word registers itself with the runtime when first filled, and closing a
 * pool empties every registered word: this copy of compiler/rt may be a
 * shared library's own (dlopen'ed, or linked with its symbols hidden), which
 * the program's cairn_pool_close does not otherwise reach. */
uint64_t cairn_cc__ra_cache;
static struct cairn__ra_cache_reg ra_cache_reg = { &cairn_cc__ra_cache, NULL };
static int ra_cache_registered;

__attribute__((destructor)) static void ra_cache_unregister(void)
{
    if (__atomic_load_n(&ra_cache_registered, __ATOMIC_ACQUIRE))
        cairn__ra_cache_unregister(&ra_cache_reg);   /* dlclose */
}

/* Remember that relative pointer rel is virtual address va (both checked
 * by the runtime already). Also called by inline pointer stores that
 * missed, so store-only code fills the cache too. */
void cairn_cc__ra_cache_note(uint64_t rel, const void *va)
{
    if ((int64_t)rel >= 0 || ((rel >> CAIRN_ID_SHIFT) & CAIRN_ID_MASK) == CAIRN_ID_NONE)
        return;                             /* not a pool's pointer: nothing to cache */
    uintptr_t d = (uintptr_t)va - (rel & CAIRN_OFF_MASK) - cairn__region_lo;
    if (!__atomic_load_n(&ra_cache_registered, __ATOMIC_ACQUIRE)) {
        cairn__ra_cache_register(&ra_cache_reg);
        __atomic_store_n(&ra_cache_registered, 1, __ATOMIC_RELEASE);
    }
    if ((d & CAIRN_OFF_MASK) == 0 && (d >> CAIRN_SLOT_SHIFT) < CAIRN_CC_CACHE_SLOT_MASK)
        __atomic_store_n(&cairn_cc__ra_cache,
                         ((rel >> CAIRN_ID_SHIFT) << CAIRN_CC_CACHE_KEY_SHIFT) |
                             (d >> CAIRN_SLOT_SHIFT),
                         __ATOMIC_RELAXED);
}

/* The miss, the C part. On x86-64 the pass calls it through the entry
 * below; elsewhere it is the entry. */
#if defined(__x86_64__)
__attribute__((visibility("hidden"))) void *cairn_cc__ra2va_miss_c(uint64_t rel);
void *cairn_cc__ra2va_miss_c(uint64_t rel)
#else
void *cairn_cc__ra2va_miss(uint64_t rel)
#endif
{
    void *va = cairn__ra2va_slow(rel);     /* stops if the pool is not open */
    cairn_cc__ra_cache_note(rel, va);
    return va;
}

#if defined(__x86_64__)
/* cairn_cc__ra2va_miss, as LLVM's preserve_most convention has it on x86-64:
 * the callee keeps every general register but r11 and rax (the result), so
 * the code around an inline translation -- the miss is its cold side --
 * keeps its values in registers instead of spilling them for a call it
 * almost never makes. The C ABI leaves rcx, rdx, rsi, rdi, r8-r10 to the
 * callee; this entry saves them around the C part (7 pushes over the
 * return address keep the stack 16-byte aligned at the inner call). Vector
 * registers are the caller's to save under both conventions. */
__asm__(".text\n"
        ".globl cairn_cc__ra2va_miss\n"
        ".type cairn_cc__ra2va_miss, @function\n"
        "cairn_cc__ra2va_miss:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "pushq %rcx\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rcx, 0\n"
        "pushq %rdx\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rdx, 0\n"
        "pushq %rsi\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rsi, 0\n"
        "pushq %rdi\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rdi, 0\n"
        "pushq %r8\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r8, 0\n"
        "pushq %r9\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r9, 0\n"
        "pushq %r10\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r10, 0\n"
        "call cairn_cc__ra2va_miss_c\n"
        "popq %r10\n .cfi_adjust_cfa_offset -8\n .cfi_restore %r10\n"
        "popq %r9\n .cfi_adjust_cfa_offset -8\n .cfi_restore %r9\n"
        "popq %r8\n .cfi_adjust_cfa_offset -8\n .cfi_restore %r8\n"
        "popq %rdi\n .cfi_adjust_cfa_offset -8\n .cfi_restore %rdi\n"
        "popq %rsi\n .cfi_adjust_cfa_offset -8\n .cfi_restore %rsi\n"
        "popq %rdx\n .cfi_adjust_cfa_offset -8\n .cfi_restore %rdx\n"
        "popq %rcx\n .cfi_adjust_cfa_offset -8\n .cfi_restore %rcx\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size cairn_cc__ra2va_miss, .-cairn_cc__ra2va_miss\n");
#endif

/* A vector of n pointers loaded from memory (the pass's translation of a
 * <N x ptr> load), in memory: its relative words become virtual addresses. */
void cairn_cc__ra2va_words(uint64_t *w, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++)
        if ((int64_t)w[k] < 0)
            w[k] = (uint64_t)(uintptr_t)cairn__ra2va(w[k]);
}

/* ---- masked stores and scatters (the vectorizers' conditional stores) ----
 * Lane k (bit k of mask set) writes es bytes at addrs[k]; the pass calls
 * these only when a written lane lies in the PM region. */
void cairn_cc__log_lanes(void *const *addrs, uint64_t mask, uint64_t n, uint64_t es,
                         const char *file, int line)
{
    for (uint64_t k = 0; k < n; k++)
        if ((mask >> k & 1) && cairn__in_region(addrs[k]))
            cairn__log_store(addrs[k], es, file, line);
}

/* ... and when the lanes are pointers, the words to store: as a typed
 * pointer store has them (cairn_cc__stored_pointer) where the lane's slot
 * is in PM. */
void cairn_cc__lanes_to_rel(void *const *addrs, uint64_t *vals, uint64_t mask, uint64_t n,
                            int lenient, const char *file, int line)
{
    for (uint64_t k = 0; k < n; k++)
        if ((mask >> k & 1) && cairn__in_region(addrs[k]))
            vals[k] = cairn_cc__stored_pointer(addrs[k], (const void *)(uintptr_t)vals[k],
                                               lenient, file, line);
}

/* ---- dynamic counts (cairn-cc --cairn-count) -----------------------------
 * Code built with -mllvm -cairn-count bumps these (plainly: the counts are
 * for single-threaded measurements); CAIRN_CC_COUNTS=FILE appends them as
 * one JSON line at exit. Seed 002's Table V reports the same quantities. */
uint64_t cairn_cc__counts[5];
static const char *const count_names[5] = {
    "region_tests", "log_calls", "pointer_load_checks", "relative_loads",
    "relative_stores"};

__attribute__((destructor)) static void cairn_cc__dump_counts(void)
{
    const char *path = getenv("CAIRN_CC_COUNTS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fputc('{', f);
    for (int i = 0; i < 5; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", count_names[i],
                (unsigned long long)cairn_cc__counts[i]);
    fputs("}\n", f);
    fclose(f);
}

/* ---- CAIRN_TX_FUNCTION (compiler/pass/PortLowering.cpp) ---- */

/* The entry of a function-level transaction: the depth it began at, or 0
 * when it could not begin (errno and cairn_errormsg() set; the function
 * then returns -1, NULL or nothing). must: the function returns a type with
 * no failure value, so the program stops here instead. */
int cairn_cc__tx_function_begin(cairn_pool *pool, const char *func, int must)
{
    struct cairn__tx_scope s = cairn__tx_scope_begin(pool);
    if (s.began)
        return s.depth;
    if (must) {
        fprintf(stderr, "cairn: %s: its transaction (CAIRN_TX_FUNCTION) cannot begin: %s; "
                "open the pool before calling it\n", func, cairn_errormsg());
        abort();
    }
    return 0;
}

/* Every return of the function: commits the level begun at depth. */
void cairn_cc__tx_function_end(int depth)
{
    struct cairn__tx_scope s = { .once = 0, .began = 1, .depth = depth };
    cairn__tx_scope_end(&s);
}

/* ---- CAIRN_HEAP_POOL: a file's malloc family in a pool ---- */

/* *pool_var is the pool the file named; NULL before the program opened it. */
static cairn_pool *heap_pool(cairn_pool *const *pool_var, const char *what)
{
    cairn_pool *pool = *pool_var;
    if (!pool) {
        static int told;
        if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "cairn: %s before the pool named by CAIRN_HEAP_POOL was opened; "
                    "it returns NULL: open the pool first\n", what);
        errno = EINVAL;
    }
    return pool;
}

void *cairn_cc__pool_malloc(cairn_pool *const *pool_var, size_t n)
{
    cairn_pool *pool = heap_pool(pool_var, "malloc");
    return pool ? cairn_alloc(pool, n ? n : 1) : NULL;
}

void *cairn_cc__pool_calloc(cairn_pool *const *pool_var, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return cairn_cc__pool_malloc(pool_var, n * size);   /* cairn_alloc zeroes */
}

/* Memory from elsewhere (strdup, a library, before CAIRN_HEAP_POOL's file
 * ran) is not in a pool: it stays with libc. */
void cairn_cc__pool_free(cairn_pool *const *pool_var, void *p)
{
    (void)pool_var;
    if (!p)
        return;
    if (cairn_pool_of(p))
        cairn_free(p);
    else
        free(p);
}

void *cairn_cc__pool_realloc(cairn_pool *const *pool_var, void *p, size_t n)
{
    if (!p)
        return cairn_cc__pool_malloc(pool_var, n);
    if (!cairn_pool_of(p))
        return realloc(p, n);
    if (!n) {
        cairn_free(p);
        return NULL;
    }
    size_t old = cairn_usable_size(p);
    if (n <= old)
        return p;
    void *q = cairn_cc__pool_malloc(pool_var, n);
    if (!q)
        return NULL;
    /* compiler/rt is not instrumented: the copy is logged as cairn-cc
     * logs the caller's own stores (a new object: made durable at commit) */
    cairn__log_store(q, old, __FILE__, __LINE__);
    memcpy(q, p, old);
    cairn_free(p);
    return q;
}

void *cairn_cc__pool_reallocarray(cairn_pool *const *pool_var, void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return cairn_cc__pool_realloc(pool_var, p, n * size);
}
