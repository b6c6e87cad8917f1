/*
 * cairn.h -- the public C API of libcairn, the only header users include.
 *
 * Persistent pools over memory-mapped files, a typed root, an allocator,
 * undo-logged transactions and 8-byte position-independent pointers.
 * See docs/runtime.md for the user guide and ../DESIGN.md for the contract.
 *
 * Pointer format in PM (bit 63 = 1 marks the relative form):
 *
 *    63  62                    40 39                                  0
 *   +---+------------------------+-------------------------------------+
 *   | 1 |  pool id (23 bits)     |  byte offset in the pool (40 bits)  |
 *   +---+------------------------+-------------------------------------+
 *
 * NULL is 0. In registers, on the stack and in DRAM a pointer is a plain
 * virtual address.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cairn_pool cairn_pool;

/* ---- pools ------------------------------------------------------------ */
#define CAIRN_POOL_MIN_SIZE ((size_t)8 << 20)   /* 8 MiB */
#define CAIRN_POOL_MAX_SIZE ((size_t)1 << 40)   /* 1 TiB */

cairn_pool *cairn_pool_create(const char *path, const char *layout, size_t size);
cairn_pool *cairn_pool_open(const char *path, const char *layout); /* recovers */
int         cairn_pool_close(cairn_pool *pool);
/* Grow an open pool in place to new_size bytes (never moves it). */
int         cairn_pool_grow(cairn_pool *pool, size_t new_size);
/* What the last open of this pool had to do. */
struct cairn_recovery {
    int      recovered;            /* 1: the pool had not been closed cleanly */
    uint64_t records_rolled_back;  /* undo records applied */
    uint64_t transactions_rolled_back;
    uint64_t objects_reachable;    /* when the heap was rebuilt by marking */
    uint64_t bytes_freed;          /* unreachable objects' bytes that rebuild freed */
    double   seconds;              /* time the open spent recovering / loading the heap */
    double   background_seconds;   /* after a crash: the mark and sweep that ran in the
                                      background after the open returned (this call
                                      waits for them) */
};
void        cairn_pool_recovery(cairn_pool *pool, struct cairn_recovery *out);
/* The open pool that holds ptr, or NULL. */
cairn_pool *cairn_pool_of(const void *ptr);
/* A pool's id (the 23 bits its relative pointers carry) and the open pool
 * with an id (NULL if none): what C++'s cairn::allocator keeps instead of
 * the handle, which is volatile memory and may not be stored in a pool. */
uint32_t    cairn_pool_id(const cairn_pool *pool);
cairn_pool *cairn_pool_by_id(uint32_t id);

/* ---- typed root --------------------------------------------------------- */
void       *cairn_root(cairn_pool *pool, size_t size, uint64_t type_id);
#define CAIRN_ROOT(pool, T)  ((T *)cairn_root((pool), sizeof(T), CAIRN_TYPE_ID(T)))
/* Open the pool at path (recovering it, as cairn_pool_open) or, when no
 * file is there, create it with size bytes; then its root, as cairn_root.
 * Returns the root and sets *pool. On failure: NULL, *pool NULL, errno and
 * cairn_errormsg() set; a pool that exists but cannot be opened is never
 * replaced, and a pool this call opened is closed again. */
void       *cairn_pool_open_root(cairn_pool **pool, const char *path, const char *layout,
                                 size_t size, size_t root_size, uint64_t type_id);
#define CAIRN_OPEN_ROOT(pool, path, layout, size, T)                            \
    ((T *)cairn_pool_open_root(&(pool), (path), (layout), (size), sizeof(T),     \
                               CAIRN_TYPE_ID(T)))

/* CAIRN_TYPE_ID(T): a checksum of T's layout; the root records it and
 * cairn_root refuses a root of another id. Two ways to compute it
 * (docs/compiler.md, "Type ids"):
 *  - cairn-cc (which defines __CAIRN_CC__): its clang plugin (compiler/ast)
 *    replaces the 0 in the marker below with a checksum of T's full
 *    layout: field names, offsets, bit-fields, signedness, arrays, nested
 *    records, enums and, through pointers, the pointed-to types. The marker
 *    is a constant expression, so the id can initialize a static variable;
 *    the plugin refuses it where C needs the value while parsing (enum
 *    constants, case labels, _Static_assert, array sizes, alignments).
 *    These ids are even.
 *  - any other compiler: what C itself can see, the spelled type name, its
 *    size and alignment (cairn__type_id_basic). These ids are odd.
 * A pool made by one kind of program is refused by the other. The
 * attribute cairn_layout_id exists only where the plugin is loaded: without
 * it the marker would stay 0, so the build stops at the typedef instead. */
#if defined(__CAIRN_CC__)
#  pragma clang diagnostic push
#  pragma clang diagnostic error "-Wunknown-attributes"
typedef uint64_t cairn__layout_id
    __attribute__((cairn_layout_id)); /* unknown: cairn-cc's plugin CairnTypeId.so is not loaded */
#  pragma clang diagnostic pop
#  ifdef __cplusplus  /* sizeof instantiates a class template's layout first */
#    define CAIRN__TYPE_ID_COMPLETE(T) (void)sizeof(T),
#  else
#    define CAIRN__TYPE_ID_COMPLETE(T)
#  endif
#  define CAIRN_TYPE_ID(T) (__extension__ (CAIRN__TYPE_ID_COMPLETE(T)        \
     _Pragma("clang diagnostic push")                                        \
     _Pragma("clang diagnostic ignored \"-Wpre-c11-compat\"")                \
     _Pragma("clang diagnostic ignored \"-Wc11-extensions\"")                \
     _Generic((__typeof__(T) *)0, default: (cairn__layout_id)0ULL)           \
     _Pragma("clang diagnostic pop")))
#endif
/* From here on a library's header: the user's -Weverything, -pedantic or
 * -std=c89 -Werror are for the user's code, not for this file. (Not above:
 * the marker's unknown attribute must stay an error. CAIRN_TX declares its
 * scope in a for statement, so code that uses it needs C99 or later.) */
#pragma GCC system_header
#ifndef CAIRN_TYPE_ID
#  define CAIRN_TYPE_ID(T) /* __alignof__: _Alignof's value on x86-64, any -std */ \
     cairn__type_id_basic(#T, sizeof(T), __alignof__(T))
#endif
static __inline__ uint64_t cairn__type_id_basic(const char *name, size_t size,
                                            size_t align)
{
    uint64_t h = 0xcbf29ce484222325ULL;          /* FNV-1a over the spelling */
    size_t i;
    for (i = 0; name[i]; i++) {
        if (name[i] == ' ') continue;             /* "struct  x" == "struct x" */
        h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
    }
    h ^= (uint64_t)size * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)align << 56;
    return h | 1;                                 /* never 0: 0 means "no root" */
}

/* ---- allocation --------------------------------------------------------- */
void       *cairn_alloc(cairn_pool *pool, size_t size);  /* zeroed; in a tx: undone on abort */
void        cairn_free(void *ptr);                       /* in a tx: takes effect at commit */
size_t      cairn_usable_size(const void *ptr);

/* ---- transactions ------------------------------------------------------- */
int         cairn_tx_begin(cairn_pool *pool);            /* nests (flat) */
int         cairn_tx_commit(void);
void        cairn_tx_abort(void);
int         cairn_tx_active(void);                       /* nesting depth, 0 if none */
void        cairn_tx_add(const void *ptr, size_t len);     /* explicit undo snapshot */
void        cairn_tx_clobber(const void *ptr, size_t len); /* durable at commit, no snapshot */

/* Block form: commits when control leaves the block (end, break, return,
 * goto); cairn_tx_abort() inside the block aborts instead. The body is
 * skipped when the transaction cannot begin (see cairn_errormsg()). */
struct cairn__tx_scope { int once; int began; int depth; };
struct cairn__tx_scope cairn__tx_scope_begin(cairn_pool *pool);
void cairn__tx_scope_end(struct cairn__tx_scope *scope);
#define CAIRN__CAT2(a, b) a##b
#define CAIRN__CAT(a, b) CAIRN__CAT2(a, b)
#ifndef __cplusplus
#define CAIRN_TX(pool)                                                        \
    for (struct cairn__tx_scope CAIRN__CAT(cairn__txs_, __LINE__)              \
             __attribute__((cleanup(cairn__tx_scope_end))) =                   \
             cairn__tx_scope_begin(pool);                                      \
         CAIRN__CAT(cairn__txs_, __LINE__).once;                               \
         CAIRN__CAT(cairn__txs_, __LINE__).once = 0)
#else /* C++: an exception that leaves the block aborts it (cairn::transaction) */
#define CAIRN_TX(pool)                                                        \
    for (::cairn::transaction CAIRN__CAT(cairn__txs_, __LINE__)(pool,          \
             ::cairn::transaction::block_form);                                 \
         CAIRN__CAT(cairn__txs_, __LINE__).once_();)
#endif

/* Function form (cairn-cc, C): the whole body of the function is one
 * transaction on the pool held by the variable pool when it is called:
 *
 *     CAIRN_TX_FUNCTION(pool)
 *     int ds_insert(uint64_t key, const void *value) { ... }
 *
 * Every return commits (nested in the caller's transaction, if one is
 * open: flat); cairn_tx_abort() inside aborts. When the transaction cannot
 * begin the body does not run and the function returns -1 (any integer
 * type), NULL (pointers) or nothing (void), with errno and cairn_errormsg()
 * set; a function returning anything else stops the program with a one-line
 * message. pool is a cairn_pool * with static storage (file scope or
 * static), read at each call.
 *
 * File form (cairn-cc, C): every malloc, calloc, realloc, reallocarray and
 * free of this file allocates in and frees from the pool the variable holds
 * (a file-scope cairn_pool *): CAIRN_HEAP_POOL(pool); at file scope. free
 * and realloc of memory that is not in a pool (strdup, other libraries) go
 * to libc; before the pool is open, malloc returns NULL (errno EINVAL). One
 * per file. Both are lowered by cairn-cc's pass (docs/compiler.md, "Porting
 * conveniences"); without it (another compiler, -fno-cairn, C++) they stop
 * the build with a _Static_assert that says so. */
#if defined(__CAIRN_CC__) && !defined(__CAIRN_CC_NO_PASS__) && !defined(__cplusplus)
#define CAIRN_TX_FUNCTION(pool)                                                \
    __attribute__((annotate("cairn_tx_function",                              \
                            _Generic(&(pool), cairn_pool **: &(pool)))))
#define CAIRN_HEAP_POOL(pool)                                                  \
    static cairn_pool **const cairn__heap_pool __attribute__((used)) =        \
        _Generic(&(pool), cairn_pool **: &(pool))
#else
#define CAIRN_TX_FUNCTION(pool)                                                \
    _Static_assert(0, "CAIRN_TX_FUNCTION needs cairn-cc's pass (C, without -fno-cairn)");
#define CAIRN_HEAP_POOL(pool)                                                  \
    _Static_assert(0, "CAIRN_HEAP_POOL needs cairn-cc's pass (C, without -fno-cairn)")
#endif

/* ---- persistence primitives -------------------------------------------- */
void        cairn_persist(const void *ptr, size_t len);    /* flush + dfence */
void        cairn_flush(const void *ptr, size_t len);      /* flush only */
void        cairn_ofence(void);   /* ordering point (HOPS ofence) */
void        cairn_dfence(void);   /* durability point (HOPS dfence) */

/* ---- pointers ----------------------------------------------------------- */
int         cairn_is_pm(const void *ptr);
void        cairn_ptr_store(void *pm_slot, const void *target);
void       *cairn_ptr_load(const void *pm_slot);
/* file:line for the safety message when called from plain C */
void        cairn__ptr_store_at(void *pm_slot, const void *target,
                                const char *file, int line);
#define cairn_ptr_store(slot, target) \
    cairn__ptr_store_at((slot), (target), __FILE__, __LINE__)

const char *cairn_errormsg(void); /* why the last call failed, in words */

/* ---- statistics --------------------------------------------------------- */
struct cairn_stats {
    uint64_t flushes;      /* cache lines flushed (or msync'd) */
    uint64_t ofences;      /* ordering fences */
    uint64_t dfences;      /* durability fences */
    uint64_t log_entries;  /* undo records appended */
    uint64_t log_bytes;    /* undo bytes appended */
    uint64_t log_skipped;  /* tx_add calls satisfied by an earlier record */
    uint64_t tx_frees_now; /* frees in a transaction of an object it allocated,
                              taken at once instead of at commit */
};
/* Counters of the calling thread since it started (or since reset). */
void        cairn_stats_get(struct cairn_stats *out);
void        cairn_stats_reset(void);

/* ---- ABI for cairn-cc generated code ----------------------------------
 * The compiler pass calls these; they are stable names. The region holds
 * every pool: [cairn__region_lo, cairn__region_hi). Each pool owns one
 * 1 TiB slot of it, so address -> (pool, offset) is a shift. */
extern uintptr_t cairn__region_lo, cairn__region_hi;
#define CAIRN_SLOT_SHIFT 40
#define CAIRN_REL_BIT    ((uint64_t)1 << 63)
#define CAIRN_ID_SHIFT   40
#define CAIRN_ID_MASK    ((uint64_t)0x7fffff)
#define CAIRN_OFF_MASK   (((uint64_t)1 << 40) - 1)
/* Never a pool's id. A value whose id bits are all ones is a negative
 * integer kept in a pointer (MAP_FAILED, SIG_ERR, (void *)-1 sentinels:
 * -2^40 .. -1), not a relative pointer: conversions leave it unchanged. */
#define CAIRN_ID_NONE    CAIRN_ID_MASK

static __inline__ int cairn__in_region(const void *p)
{
    return (uintptr_t)p - cairn__region_lo < cairn__region_hi - cairn__region_lo;
}
/* Slow paths, out of line. */
void    *cairn__ra2va_slow(uint64_t rel);
/* Persistent-heap mode: a relative-looking value whose pool id is not open
 * is left as it is (a negative double or integer in a pointer slot)
 * instead of stopping the program. runtime/pptr.c. */
void     cairn__unknown_pool_ids_are_values(int on);
uint64_t cairn__va2ra_checked(const void *slot, const void *target,
                              const char *file, int line);
/* A relative value (bit 63 set) -> virtual address; anything else unchanged. */
static __inline__ void *cairn__ra2va(uint64_t v)
{
    if (__builtin_expect((int64_t)v < 0, 0))
        return cairn__ra2va_slow(v);
    return (void *)(uintptr_t)v;
}
/* compiler/rt's inline translation caches (one per copy of it: a program
 * and each shared library, dlopen'ed or linked with its symbols hidden, may
 * hold its own). Each registers its word on first fill; closing a pool
 * empties every registered word. The node is the caller's (static). */
struct cairn__ra_cache_reg { uint64_t *word; struct cairn__ra_cache_reg *next; };
void     cairn__ra_cache_register(struct cairn__ra_cache_reg *reg);
void     cairn__ra_cache_unregister(struct cairn__ra_cache_reg *reg);
/* cairn-cc --persistent-heap: a fork child gets a private copy of this
 * pool (its heap) instead of a read-only view. */
void     cairn__pool_copy_on_fork(cairn_pool *pool);
/* A file name pattern (CAIRN_TRACE, --persistent-heap=FILE) with each %p
 * replaced by the process id and %% by %, into out; -1 if it does not fit. */
int      cairn__expand_pid_path(const char *pattern, char *out, size_t len);
/* Undo-log hook: called before a store of len bytes at addr that may be PM.
 * Outside a transaction the store is reported (see CAIRN_UNLOGGED). */
void     cairn__log_store(const void *addr, size_t len, const char *file, int line);
/* 1 while this thread's stores need no cairn__log_store call: outside any
 * transaction with reports off (CAIRN_UNLOGGED=off, as persistent-heap mode
 * sets it). cairn-cc tests it inline before each call (initial-exec TLS);
 * the runtime sets it at a call that finds nothing to do and clears it when
 * a transaction begins. */
extern __thread unsigned char cairn__log_skip;
/* Called by cairn-cc after each setjmp returns (r: its value), with the
 * transaction depth when it was called: a longjmp that left levels of a
 * transaction open marks them, and a later begin stops (docs/compiler.md). */
void     cairn__tx_setjmp_returned(int r, int depth_at_setjmp, const char *file, int line);

/* Store tracing (cairn-cc --trace; docs/runtime.md "Traces"). After each
 * write that may reach PM the pass calls cairn__trace_store with the bytes
 * written: with CAIRN_TRACE set, a write inside a pool is recorded with the
 * bytes now there, one outside counts as a DRAM store. A site is one source
 * location; the runtime gives it an id (written into `id`) the first time. */
struct cairn__trace_site {
    uint32_t    id;               /* 0 until the runtime has named it */
    uint32_t    line;             /* 0 without debug info */
    const char *file;             /* "" without debug info */
    const char *func;
};
void     cairn__trace_store(const void *addr, uint64_t size, struct cairn__trace_site *site);
/* Stores the pass proves go to DRAM add 1 here inline (initial-exec TLS). */
extern __thread uint64_t cairn__trace_dram_stores;

#ifdef __cplusplus
} /* extern "C" */

/* ---- C++ (cairn-c++; docs/compiler.md "C++") ----------------------------- */
#include <cerrno>
#include <cstddef>
#include <exception>
#include <new>
#include <system_error>
#include <type_traits>

namespace cairn {

/* A transaction as a scope. Begun by the constructor; commit() ends it (and
 * throws std::system_error if the commit fails); the destructor commits a
 * transaction still open at the end of the scope, and ABORTS it when the
 * scope is left by an exception, so a throw never makes half an update
 * durable. Nests like cairn_tx_begin (flat: an abort at any level aborts
 * the whole transaction, and the enclosing levels end as aborted). The C++
 * form of CAIRN_TX(pool) is this object. */
class transaction {
public:
    explicit transaction(cairn_pool *pool)
        : uncaught_(std::uncaught_exceptions()),
          scope_(cairn__tx_scope_begin(pool))
    {
        if (!scope_.began)
            throw std::system_error(errno, std::generic_category(), cairn_errormsg());
    }
    transaction(const transaction &) = delete;
    transaction &operator=(const transaction &) = delete;
    ~transaction()
    {
        if (scope_.began && std::uncaught_exceptions() > uncaught_) {
            if (cairn_tx_active() >= scope_.depth)
                cairn_tx_abort();        /* this level and those inside it */
            scope_.began = 0;
            return;
        }
        cairn__tx_scope_end(&scope_);
    }
    void commit()
    {
        if (!scope_.began)
            return;
        scope_.began = 0;
        if (cairn_tx_commit() != 0)
            throw std::system_error(errno, std::generic_category(), cairn_errormsg());
    }
    void abort() noexcept
    {
        if (scope_.began && cairn_tx_active() >= scope_.depth)
            cairn_tx_abort();
        scope_.began = 0;
    }

    /* CAIRN_TX's form: a failed begin skips the block, as in C */
    enum block_form_t { block_form };
    transaction(cairn_pool *pool, block_form_t)
        : uncaught_(std::uncaught_exceptions()), scope_(cairn__tx_scope_begin(pool)) {}
    bool once_() { bool first = scope_.once != 0; scope_.once = 0; return first; }

private:
    int uncaught_;
    struct cairn__tx_scope scope_;
};

/* An allocator that puts a container's nodes in a pool:
 *     using Map = std::map<long, long, std::less<long>,
 *                          cairn::allocator<std::pair<const long, long>>>;
 *     Map *m = cairn::make<Map>(pool, cairn::allocator<int>(pool));
 * It keeps the pool's id, not its handle (a handle is volatile memory and
 * may not be stored in a pool), so a container kept in a pool finds its
 * pool again after the pool is reopened anywhere. The container object
 * itself must be in the pool too (its header is linked from its nodes).
 * Objects with virtual functions are refused at compile time: their vtable
 * pointer is an address in the program image, which moves between runs. */
template <class T>
class allocator {
public:
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    explicit allocator(cairn_pool *pool) noexcept : id_(pool ? cairn_pool_id(pool) : 0) {}
    template <class U>
    allocator(const allocator<U> &o) noexcept : id_(o.pool_id()) {}

    T *allocate(std::size_t n)
    {
        static_assert(!std::is_polymorphic<T>::value,
                      "cairn::allocator<T>: T has virtual functions; its vtable pointer "
                      "is an address in the program image, which moves between runs, "
                      "so it cannot be kept in a pool (docs/compiler.md, C++)");
        cairn_pool *pool = cairn_pool_by_id(id_);
        if (!pool || n > (std::size_t)-1 / sizeof(T))
            throw std::bad_alloc();
        void *p = cairn_alloc(pool, n * sizeof(T));
        if (!p)
            throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, std::size_t) noexcept { cairn_free(p); }

    uint32_t pool_id() const noexcept { return id_; }
    cairn_pool *pool() const noexcept { return cairn_pool_by_id(id_); }
    template <class U>
    bool operator==(const allocator<U> &o) const noexcept { return id_ == o.pool_id(); }
    template <class U>
    bool operator!=(const allocator<U> &o) const noexcept { return id_ != o.pool_id(); }

private:
    uint32_t id_;
};

/* new T(args...) in a pool: cairn_alloc and the constructor in one
 * transaction (nested in the caller's, if one is open), so a crash or an
 * exception from the constructor leaves no half-built object. */
template <class T, class... Args>
T *make(cairn_pool *pool, Args &&...args)
{
    static_assert(!std::is_polymorphic<T>::value,
                  "cairn::make<T>: T has virtual functions; its vtable pointer is an "
                  "address in the program image, which moves between runs, so it "
                  "cannot be kept in a pool (docs/compiler.md, C++)");
    transaction tx(pool);
    void *p = cairn_alloc(pool, sizeof(T));
    if (!p)
        throw std::bad_alloc();
    T *obj = ::new (p) T(static_cast<Args &&>(args)...);
    tx.commit();
    return obj;
}

/* ~T() then cairn_free, in one transaction */
template <class T>
void destroy(T *p)
{
    if (p) {
        transaction tx(cairn_pool_of(p));
        p->~T();
        cairn_free(p);
        tx.commit();
    }
}

} /* namespace cairn */
#endif /* __cplusplus */
#endif /* CAIRN_H */
