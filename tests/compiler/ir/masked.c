// Conditional loops the vectorizers turn into masked loads, gathers,
// masked stores and scatters (-O3 -mavx512f). Loaded pointer lanes are
// translated (only the lanes the mask reads); stores are logged lane by
// lane when a written lane is in the PM region, and pointer lanes are
// stored in converted (relative) form. Run: programs/vec_masked.c (-mavx2).
// RUN: -O3 -mavx512f | M
struct node { long key; };

// M-LABEL: define {{.*}}@count_if(
// M: [[V:%.*]] = {{.*}}call <8 x ptr> @llvm.masked.load.v8p0
// M: [[B:%.*]] = ptrtoint <8 x ptr> [[V]] to <8 x i64>
// M: select <8 x i1> {{.*}}, <8 x i64> [[B]], <8 x i64> zeroinitializer
// M: call void @cairn_cc__ra2va_words(
int count_if(struct node **a, int *sel, int n, struct node *t)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (sel[i]) c += a[i] == t;
    return c;
}

// M-LABEL: define {{.*}}@gather(
// M: [[V:%.*]] = {{.*}}call <8 x ptr> @llvm.masked.gather.v8p0
// M: ptrtoint <8 x ptr> [[V]] to <8 x i64>
// M: call void @cairn_cc__ra2va_words(
long gather(struct node **a, int *idx, int n, struct node *t)
{
    long c = 0;
    for (int i = 0; i < n; i++) c += a[idx[i]] == t;
    return c;
}

// M-LABEL: define {{.*}}@put_if(
// M: call void @cairn_cc__log_lanes(ptr {{.*}}, i64 {{.*}}, i64 8, i64 8,
// M: call void @cairn_cc__lanes_to_rel(
// M: call void @llvm.masked.store.v8i64.p0(<8 x i64>
// M: call void @llvm.masked.store.v8p0.p0(<8 x ptr>
void put_if(struct node **a, int *sel, int n, struct node *t)
{
    for (int i = 0; i < n; i++)
        if (sel[i]) a[i] = t;
}

// M-LABEL: define {{.*}}@scatter(
// M: call void @cairn_cc__log_lanes(ptr {{.*}}, i64 {{.*}}, i64 8, i64 8,
// M: call void @cairn_cc__lanes_to_rel(
// M: call void @llvm.masked.scatter.v8i64.v8p0(<8 x i64>
void scatter(struct node **a, int *idx, int n, struct node *t)
{
    for (int i = 0; i < n; i++) a[idx[i]] = t;
}

// M-LABEL: define {{.*}}@set_if(
// M: call void @cairn_cc__log_lanes(ptr {{.*}}, i64 {{.*}}, i64 16, i64 4,
// M: call void @llvm.masked.store.v16i32.p0(
void set_if(int *v, int *sel, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (sel[i]) v[i] = x;
}
