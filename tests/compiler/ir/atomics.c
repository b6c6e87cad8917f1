// cmpxchg and atomicrmw are logged; on pointers they go through compiler/rt.
// RUN: -O2 | O2
// RUN: -O0 | O0
#include <stdatomic.h>

struct node { struct node *next; long val; };

// O2-LABEL: define {{.*}}@bump(
// O2: call void @cairn__log_store(ptr {{.*}}, i64 8,
// O2: atomicrmw add
long bump(struct node *n) { return __atomic_fetch_add(&n->val, 1, __ATOMIC_SEQ_CST); }

// O2-LABEL: define {{.*}}@cas_val(
// O2: call void @cairn__log_store(ptr {{.*}}, i64 8,
// O2: cmpxchg ptr
int cas_val(struct node *n, long e, long v) {
    return __atomic_compare_exchange_n(&n->val, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

// clang lowers this to an i64 cmpxchg of ptrtoint values: the expected one
// goes through cairn_cc__pm_word (relative form when the slot is PM), the
// new one, a pointer's bits, through the checked conversion (a pointer to
// the stack stops, as in a typed store).
// O2-LABEL: define {{.*}}@cas_ptr(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: [[E:%.*]] = call i64 @cairn_cc__pm_word(ptr %0, i64
// O2: [[N:%.*]] = call i64 @cairn__va2ra_checked(ptr %0, ptr %2,
// O2: cmpxchg ptr %0, i64 [[E]], i64 [[N]]
int cas_ptr(struct node *n, struct node *e, struct node *v) {
    return __atomic_compare_exchange_n(&n->next, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

// O2-LABEL: define {{.*}}@swap_ptr(
// O2: [[N:%.*]] = call i64 @cairn__va2ra_checked(ptr %0, ptr %1,
// O2: atomicrmw xchg ptr %0, i64 [[N]]
struct node *swap_ptr(struct node *n, struct node *v) {
    return __atomic_exchange_n(&n->next, v, __ATOMIC_SEQ_CST);
}

// At -O0 the generic form passes the pointer through a temporary: the i64
// loaded from that pointer slot is a pointer's bits, checked as one.
// O0-LABEL: define {{.*}}@store_generic(
// O0: [[V:%.*]] = load i64, ptr %4
// O0: [[P:%.*]] = inttoptr i64 [[V]] to ptr
// O0: call i64 @cairn__va2ra_checked(ptr {{.*}}, ptr [[P]],
// O0: store atomic i64
void store_generic(struct node *n, struct node *v) { __atomic_store(&n->next, &v, __ATOMIC_SEQ_CST); }
