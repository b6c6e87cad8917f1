// Scalar stores: checked and logged when the target may be PM, skipped when
// proven volatile, logged without a region test when proven PM.
// RUN: -O2 | O2
// RUN: -O0 | O0
// RUN: -O2 -fno-cairn-skip-volatile | NOSKIP
// RUN: -O2 -fno-cairn-inline-log-gate | NOGATE
#include <cairn.h>
#include <stdlib.h>

int global_counter;

// The log call sits behind the thread's cairn__log_skip word
// (cairn-inline-log-gate): outside a transaction with reports off
// (persistent-heap mode) the store costs that load and a branch.
// O2: @cairn__log_skip = external thread_local(initialexec) global i8
// O2-LABEL: define {{.*}}@store_unknown(
// O2: load i64, ptr @cairn__region_lo
// O2: [[INPM:%.*]] = icmp ult
// O2: br i1 [[INPM]], label %[[REGION:.*]], label
// O2: [[REGION]]:
// O2-NEXT: [[SKIP:%.*]] = load i8, ptr @cairn__log_skip
// O2-NEXT: [[LOG:%.*]] = icmp eq i8 [[SKIP]], 0
// O2-NEXT: br i1 [[LOG]], label %[[CALL:.*]], label
// O2: [[CALL]]:
// O2-NEXT: call void @cairn__log_store(ptr %{{.*}}, i64 4,
// O2: store i32 7
// NOGATE-NOT: @cairn__log_skip
// NOGATE-LABEL: define {{.*}}@store_unknown(
// NOGATE: icmp ult
// NOGATE-NOT: @cairn__log_skip
// NOGATE: call void @cairn__log_store(ptr %{{.*}}, i64 4,
// O0-LABEL: define {{.*}}@store_unknown(
// O0: call void @cairn__log_store(ptr %{{.*}}, i64 4,
// O0: store i32 7
void store_unknown(int *p) { *p = 7; }

// O2-LABEL: define {{.*}}@store_global(
// O2-NOT: cairn__
// O2: ret void
// NOSKIP-LABEL: define {{.*}}@store_global(
// NOSKIP: call void @cairn__log_store
void store_global(void) { global_counter = 3; }

// O0-LABEL: define {{.*}}@store_local(
// O0-NOT: call void @cairn__log_store
// O0: ret i32
int store_local(int v) {
    int a[8];
    for (int i = 0; i < 8; i++) a[i] = v + i;
    return a[v & 7];
}

// O2-LABEL: define {{.*}}@store_malloc(
// O2-NOT: cairn__log_store
// O2: ret ptr
int *store_malloc(void) {
    int *p = malloc(16);
    if (p) p[1] = 5;
    return p;
}

// O2-LABEL: define {{.*}}@store_pm(
// O2: call {{.*}}@cairn_alloc
// O2-NOT: cairn__region_lo
// O2: call void @cairn__log_store(ptr {{.*}}, i64 8,
// O2: ret ptr
long *store_pm(cairn_pool *pool) {
    long *p = cairn_alloc(pool, 64);
    p[2] = 9;
    return p;
}
