// A std::map and a std::unordered_map (with std::string values) kept in a
// real pool through cairn::allocator, updated in CAIRN_TX blocks by
// unmodified standard-library code compiled by cairn-c++.
//
//   pool_map create POOL       make the pool and the two empty containers
//   pool_map run POOL [N]      apply operations from where the pool stands
//                              (forever, or N of them); prints "committed K"
//                              after each
//   pool_map verify POOL       reopen (recovery), then check both containers
//                              against a replay of exactly the K operations
//                              the pool says were committed; prints K
//
// Each operation i inserts or overwrites key f(i) in both containers, and
// every fifth erases another key; the counter of committed operations is
// updated in the same transaction, so after any crash the pool must hold
// exactly the replay of its counter's operations.
#include <cairn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

using Str = std::basic_string<char, std::char_traits<char>, cairn::allocator<char>>;
using Map = std::map<long, Str, std::less<long>, cairn::allocator<std::pair<const long, Str>>>;
using UMap = std::unordered_map<long, long, std::hash<long>, std::equal_to<long>,
                                cairn::allocator<std::pair<const long, long>>>;

struct Root {
  Map *map;
  UMap *umap;
  long committed;
};

static long keyOf(long i) { return (i * 7919) % 1009; }

static std::string valueOf(long i) {
  // short values live in the string object itself, long ones in the pool
  return std::string(i % 3 == 0 ? 40 : 5, (char)('a' + i % 26)) + std::to_string(i);
}

template <class M, class U, class S>
static void apply(M &m, U &u, long i, const S &alloc) {
  std::string v = valueOf(i);
  m.insert_or_assign(keyOf(i), typename M::mapped_type(v.c_str(), alloc));
  u[keyOf(i)] = i;
  if (i % 5 == 4) {
    m.erase(keyOf(i / 2));
    u.erase(keyOf(i / 3));
  }
}

static int verify(cairn_pool *pool) {
  Root *r = CAIRN_ROOT(pool, Root);
  std::map<long, std::string> m;
  std::unordered_map<long, long> u;
  for (long i = 0; i < r->committed; i++)
    apply(m, u, i, std::allocator<char>());
  bool ok = m.size() == r->map->size() && u.size() == r->umap->size();
  for (auto &p : *r->map) {
    auto it = m.find(p.first);
    ok = ok && it != m.end() && it->second == p.second.c_str();
  }
  for (auto &p : *r->umap) {
    auto it = u.find(p.first);
    ok = ok && it != u.end() && it->second == p.second;
  }
  if (!ok) {
    printf("MISMATCH after %ld committed operations (map %zu/%zu, unordered %zu/%zu)\n",
           r->committed, r->map->size(), m.size(), r->umap->size(), u.size());
    return 1;
  }
  printf("verified %ld\n", r->committed);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pool_map create|run|verify POOL [N]\n");
    return 2;
  }
  const char *cmd = argv[1], *path = argv[2];
  if (!strcmp(cmd, "create")) {
    cairn_pool *pool = cairn_pool_create(path, "pool_map", 64 << 20);
    if (!pool) {
      fprintf(stderr, "pool_map: %s\n", cairn_errormsg());
      return 1;
    }
    Root *r = CAIRN_ROOT(pool, Root);
    CAIRN_TX(pool) {
      r->map = cairn::make<Map>(pool, cairn::allocator<char>(pool));
      r->umap = cairn::make<UMap>(pool, 16, std::hash<long>(), std::equal_to<long>(),
                                  cairn::allocator<char>(pool));
    }
    return cairn_pool_close(pool) == 0 ? 0 : 1;
  }
  cairn_pool *pool = cairn_pool_open(path, "pool_map");
  if (!pool) {
    fprintf(stderr, "pool_map: %s\n", cairn_errormsg());
    return 1;
  }
  if (!strcmp(cmd, "verify")) {
    int rc = verify(pool);
    return cairn_pool_close(pool) == 0 ? rc : 1;
  }
  Root *r = CAIRN_ROOT(pool, Root);
  long n = argc > 3 ? atol(argv[3]) : -1;
  cairn::allocator<char> alloc(pool);
  for (long done = 0; n < 0 || done < n; done++) {
    CAIRN_TX(pool) {
      apply(*r->map, *r->umap, r->committed, alloc);
      r->committed++;
    }
    printf("committed %ld\n", r->committed);
    fflush(stdout);
  }
  return cairn_pool_close(pool) == 0 ? 0 : 1;
}
