// Seed 002's Boost harness, ported to a pool: boost_kv.cpp with its index and
// records in persistent memory and each insert a transaction (the changed
// lines are counted against boost_kv.cpp by bench/cxx/run.py). The pool is
// $KV_POOL (made afresh; the runner removes it).
//
// Seed 002's Boost harness (section VII, Table III), volatile original:
// a key-value store whose index is one of Boost.Intrusive's containers,
// driven by YCSB's workload D mix (10,000 8-byte text keys and values
// loaded, then 100,000 operations: 95% GET, 5% SET of a new key, keys
// drawn from the "latest" distribution), and the linked-list harness (LL:
// 10,000 nodes of two pointers and a 16-byte value, iterated 10 times).
//
//   kv STRUCTURE [RECORDS OPS]     STRUCTURE: ll hash rbtree avltree splay sg
//
// Prints the operations' checksum (it must be the same for every build of
// one structure) and the time of the timed phase. kv_pm.cpp is the same
// program with its index and records in a pool (bench/cxx/README.md).
#include <boost/intrusive/avl_set.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <boost/intrusive/sg_set.hpp>
#include <boost/intrusive/splay_set.hpp>
#include <boost/intrusive/unordered_set.hpp>

#include <cairn.h>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

namespace bi = boost::intrusive;
static cairn_pool *pool = cairn_pool_create(getenv("KV_POOL"), "kv", (size_t)256 << 20);

struct Rec : bi::set_base_hook<>, bi::avl_set_base_hook<>, bi::bs_set_base_hook<>,
             bi::unordered_set_base_hook<>, bi::list_base_hook<> {
  char key[8];
  char val[8];
  friend bool operator<(const Rec &a, const Rec &b) { return memcmp(a.key, b.key, 8) < 0; }
  friend bool operator==(const Rec &a, const Rec &b) { return memcmp(a.key, b.key, 8) == 0; }
  friend std::size_t hash_value(const Rec &r) {
    std::size_t h = 1469598103934665603u;
    for (char c : r.key) h = (h ^ (unsigned char)c) * 1099511628211u;
    return h;
  }
};

struct LLNode : bi::list_base_hook<> {
  uint64_t value[2];
};

using RB = bi::set<Rec, bi::base_hook<bi::set_base_hook<>>>;
using AVL = bi::avl_set<Rec, bi::base_hook<bi::avl_set_base_hook<>>>;
using Splay = bi::splay_set<Rec, bi::base_hook<bi::bs_set_base_hook<>>>;
using SG = bi::sg_set<Rec, bi::base_hook<bi::bs_set_base_hook<>>>;
using Hash = bi::unordered_set<Rec, bi::base_hook<bi::unordered_set_base_hook<>>,
                               bi::power_2_buckets<false>>;
using LL = bi::list<LLNode>;

// YCSB's zipfian generator (Gray et al.), constant 0.99, and "latest":
// item n-1-z, so the newest records are the most popular.
struct Zipf {
  double theta = 0.99, zetan, alpha, eta, zeta2;
  uint64_t n, seed;
  static double zeta(uint64_t n, double theta) {
    double s = 0;
    for (uint64_t i = 1; i <= n; i++) s += 1 / std::pow((double)i, theta);
    return s;
  }
  Zipf(uint64_t items, uint64_t s) : n(items), seed(s) {
    zetan = zeta(n, theta);
    zeta2 = zeta(2, theta);
    alpha = 1 / (1 - theta);
    eta = (1 - std::pow(2.0 / n, 1 - theta)) / (1 - zeta2 / zetan);
  }
  double uniform() {
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    return (seed >> 11) * (1.0 / 9007199254740992.0);
  }
  uint64_t next() {
    double u = uniform(), uz = u * zetan;
    if (uz < 1) return 0;
    if (uz < 1 + std::pow(0.5, theta)) return 1;
    return (uint64_t)(n * std::pow(eta * u - eta + 1, alpha));
  }
};

static void keyOf(uint64_t i, char *k) {
  char buf[16];
  snprintf(buf, sizeof buf, "%08llu", (unsigned long long)((i * 2654435761u) % 100000000));
  memcpy(k, buf, 8);
}

static double loadSeconds;   // the timed load phase, printed apart

template <class Index>
static uint64_t run(Index &index, uint64_t records, uint64_t ops) {
  auto t0 = std::chrono::steady_clock::now();
  Rec probe;
  for (uint64_t i = 0; i < records; i++) CAIRN_TX(pool) {
    Rec *r = new (cairn_alloc(pool, sizeof(Rec))) Rec;
    keyOf(i, r->key);
    memcpy(r->val, r->key, 8);
    index.insert(*r);
  }
  loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t sum = 0, inserted = records;
  Zipf z(records, 42);
  for (uint64_t op = 0; op < ops; op++) {
    if (z.uniform() < 0.95) {
      uint64_t back = z.next() % inserted;
      keyOf(inserted - 1 - back, probe.key);
      CAIRN_TX(pool) { auto it = index.find(probe);   // a splay tree's find writes
      if (it != index.end()) sum += (unsigned char)it->val[op % 8]; }
    } else CAIRN_TX(pool) {
      Rec *r = new (cairn_alloc(pool, sizeof(Rec))) Rec;
      keyOf(inserted++, r->key);
      memcpy(r->val, r->key, 8);
      index.insert(*r);
    }
  }
  return sum * 31 + index.size();
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: kv ll|hash|rbtree|avltree|splay|sg [RECORDS OPS]\n");
    return 2;
  }
  std::string what = argv[1];
  uint64_t records = argc > 2 ? strtoull(argv[2], 0, 10) : 10000;
  uint64_t ops = argc > 3 ? strtoull(argv[3], 0, 10) : 100000;
  auto t0 = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  if (what == "ll") {
    LL &list = *cairn::make<LL>(pool);
    for (uint64_t i = 0; i < records; i++) CAIRN_TX(pool) {
      LLNode *n = new (cairn_alloc(pool, sizeof(LLNode))) LLNode;
      n->value[0] = i * 2654435761u;
      n->value[1] = i;
      list.push_back(*n);
    }
    for (int pass = 0; pass < 10; pass++)
      for (LLNode &n : list) sum += n.value[0] ^ n.value[1];
  } else if (what == "hash") {
    auto *buckets = (Hash::bucket_type *)cairn_alloc(pool, records * sizeof(Hash::bucket_type));
    CAIRN_TX(pool) std::uninitialized_default_construct_n(buckets, records);
    Hash &h = *cairn::make<Hash>(pool, Hash::bucket_traits(buckets, records));
    sum = run(h, records, ops);
  } else if (what == "rbtree") {
    sum = run(*cairn::make<RB>(pool), records, ops);
  } else if (what == "avltree") {
    sum = run(*cairn::make<AVL>(pool), records, ops);
  } else if (what == "splay") {
    sum = run(*cairn::make<Splay>(pool), records, ops);
  } else if (what == "sg") {
    sum = run(*cairn::make<SG>(pool), records, ops);
  } else {
    fprintf(stderr, "kv: unknown structure %s\n", what.c_str());
    return 2;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%s checksum %llu seconds %.6f load %.6f\n", what.c_str(), (unsigned long long)sum, s,
         loadSeconds);
  return 0;
}
