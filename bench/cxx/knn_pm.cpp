// knn.cpp with every matrix in a pool ($KNN_POOL, made afresh) and the two
// result matrices kept: reachable from the pool's root, written in one
// transaction. The changed lines are counted against knn.cpp by run.py.
//
// k-nearest neighbours over Armadillo matrices on the iris data set: seed
// 002's case study (section VII-E), volatile original. Every third sample is
// a query, the others the reference set; the program computes the k nearest
// references of each query (a neighbours matrix and a distances matrix, as
// mlpack's KNN does), classifies each query by majority and prints the
// accuracy and checksums of both matrices. knn_pm.cpp keeps the matrices in
// a pool (bench/cxx/README.md).
//
//   knn IRIS.CSV [K [REPEAT]]   IRIS.CSV: scikit-learn's iris.csv (header
//                               line, then four features and a class per
//                               line); REPEAT: compute it this many times
#include <cairn.h>
static cairn_pool *pool = cairn_pool_create(getenv("KNN_POOL"), "knn", 64 << 20);
#define ARMA_ALIEN_MEM_ALLOC_FUNCTION(n) cairn_alloc(pool, n)
#define ARMA_ALIEN_MEM_FREE_FUNCTION cairn_free
#include <armadillo>
#include <chrono>
#include <cstdio>

int main(int argc, char **argv) { CAIRN_TX(pool) {
  if (argc < 2) { fprintf(stderr, "usage: knn IRIS.CSV [K]\n"); return 2; }
  const arma::uword k = argc > 2 ? (arma::uword)atoi(argv[2]) : 5;
  const int repeat = argc > 3 ? atoi(argv[3]) : 1;
  FILE *f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  char line[256];
  if (!fgets(line, sizeof line, f)) return 2;                  // header
  arma::mat samples(4, 150);
  arma::Row<arma::uword> cls(150);
  arma::uword n = 0;
  double a, b, c, d;
  unsigned y;
  while (n < 150 && fscanf(f, "%lf,%lf,%lf,%lf,%u", &a, &b, &c, &d, &y) == 5) {
    samples.col(n) = arma::vec({a, b, c, d});
    cls(n++) = y;
  }
  fclose(f);
  arma::uvec qi = arma::regspace<arma::uvec>(0, 3, n - 1);
  arma::uvec ri(n - qi.n_elem);
  for (arma::uword i = 0, j = 0; i < n; i++) if (i % 3) ri(j++) = i;
  arma::mat queries = samples.cols(qi), refs = samples.cols(ri);
  auto *&neighbors = ((arma::Mat<arma::uword> **)cairn_root(pool, 16, 1))[0] = cairn::make<arma::Mat<arma::uword>>(pool, k, queries.n_cols);
  auto *&distances = ((arma::mat **)cairn_root(pool, 16, 1))[1] = cairn::make<arma::mat>(pool, k, queries.n_cols);
  arma::uword right = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < repeat; rep++, right = rep < repeat ? 0 : right)
  for (arma::uword q = 0; q < queries.n_cols; q++) {
    arma::rowvec dist = arma::sqrt(arma::sum(arma::square(refs.each_col() - queries.col(q)), 0));
    arma::uvec order = arma::sort_index(dist);
    arma::uvec votes(3, arma::fill::zeros);
    for (arma::uword j = 0; j < k; j++) {
      (*neighbors)(j, q) = ri(order(j));
      (*distances)(j, q) = dist(order(j));
      votes(cls(ri(order(j))))++;
    }
    right += votes.index_max() == cls(qi(q));
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("queries %llu k %llu accuracy %.4f neighbours %llu distances %.6f seconds %.6f\n",
         (unsigned long long)queries.n_cols, (unsigned long long)k,
         (double)right / queries.n_cols, (unsigned long long)arma::accu(*neighbors),
         arma::accu(*distances), s);
  return 0;
} }
