// Vectors of pointers stored into PM (the loop vectorizer's <2 x ptr> from
// `a[i] = x`): each lane converted inline before the store, the relative
// forms stored as <2 x i64>; with the option off, the virtual addresses are
// stored and a runtime call rewrites them after.
// RUN: -O2 | VEC
// RUN: -O2 -fno-cairn-vector-ptr-stores | SCAN
struct node;

// VEC-LABEL: define {{.*}}@fill(
// VEC: extractelement <2 x ptr> [[V:%.*]], i64 0
// VEC: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// VEC: call i64 @cairn__va2ra_checked(
// VEC: extractelement <2 x ptr> [[V]], i64 1
// VEC: call i64 @cairn__va2ra_checked(
// VEC: insertelement <2 x i64>
// VEC: store <2 x i64> {{%.*}}, ptr [[P:%.*]], align 8
// VEC: store <2 x ptr> [[V]], ptr [[P]], align 8
// VEC-NOT: cairn_cc__fix_words
// VEC: ret void
// SCAN-LABEL: define {{.*}}@fill(
// SCAN: store <2 x ptr> {{%.*}}, ptr [[P:%.*]], align 8
// SCAN: call void @cairn_cc__fix_words(ptr [[P]], i64 16,
void fill(struct node **a, struct node *x, long n)
{
    for (long i = 0; i < n; i++) a[i] = x;
}
