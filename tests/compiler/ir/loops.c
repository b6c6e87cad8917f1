// cairn-hoist-loop-logs: one log before a call-free loop for the range its
// stores write (Breeze Fig. 8).
// RUN: -O2 -fno-vectorize -fno-unroll-loops | O2
// RUN: -O2 -fno-vectorize -fno-unroll-loops -fno-cairn-hoist-loop-logs | NOHOIST
#include <stdio.h>

// O2-LABEL: define {{.*}}@fill(
// O2: [[LEN:%.*]] = {{shl|mul}} {{.*}}i64
// O2: call void @cairn__log_store(ptr %0, i64 [[LEN]],
// O2-NOT: call void @cairn__log_store
// O2: store i64
// O2-NOT: call void @cairn__log_store
// O2: {{^}}}
// NOHOIST-LABEL: define {{.*}}@fill(
// NOHOIST: phi i64
// NOHOIST: call void @cairn__log_store(ptr {{.*}}, i64 8,
void fill(long *a, long n) { for (long i = 0; i < n; i++) a[i] = i; }

// A call in the loop may end the transaction: no hoisting.
// O2-LABEL: define {{.*}}@fill_and_print(
// O2: phi i64
// O2: call void @cairn__log_store(ptr {{.*}}, i64 8,
// O2: call void @report(
void report(long i);
void fill_and_print(long *a, long n) { for (long i = 0; i < n; i++) { a[i] = i; report(i); } }
