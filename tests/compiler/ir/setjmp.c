// Each setjmp is watched: the transaction depth is saved in a volatile
// slot before it, and the runtime is told its return value and that depth
// after it (a longjmp out of a transaction, docs/compiler.md).
// RUN: -O0 | CHECK
// RUN: -O2 | CHECK
#include <setjmp.h>

static jmp_buf jb;
void work(void);
void recover(void);

// CHECK-LABEL: define {{.*}}@guarded(
// CHECK: %[[SLOT:.*]] = alloca i32
// CHECK: %[[D:.*]] = call i32 @cairn_tx_active()
// CHECK-NEXT: store volatile i32 %[[D]], ptr %[[SLOT]]
// CHECK-NEXT: %[[R:.*]] = call i32 @_setjmp(
// CHECK-NEXT: %[[D2:.*]] = load volatile i32, ptr %[[SLOT]]
// CHECK-NEXT: call void @cairn__tx_setjmp_returned(i32 %[[R]], i32 %[[D2]], ptr @{{.*}}, i32 {{[0-9]+}})
void guarded(void)
{
    if (setjmp(jb) == 0)
        work();
    else
        recover();
}

// CHECK-LABEL: define {{.*}}@no_setjmp(
// CHECK-NOT: cairn__tx_setjmp_returned
// CHECK: ret void
void no_setjmp(void)
{
    work();
}
