// Random inserts, erases, walks and splices over std::map, std::multiset and
// std::list, with the red-black invariants checked after every change.
// Its output must be the same whichever implementation of libstdc++'s node
// functions it is linked with (libstdc++.so's, or cairn's
// compiler/rt/cxx/stdcxx_nodes.cpp, with or without cairn-c++).
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <set>

using Node = std::_Rb_tree_node_base;

static int blackHeight(const Node *n, const Node *parent, long &count) {
  if (!n)
    return 1;
  if (n->_M_parent != parent) { printf("bad parent link\n"); exit(1); }
  if (n->_M_color == std::_S_red &&
      ((n->_M_left && n->_M_left->_M_color == std::_S_red) ||
       (n->_M_right && n->_M_right->_M_color == std::_S_red))) {
    printf("red node with a red child\n"); exit(1);
  }
  count++;
  int l = blackHeight(n->_M_left, n, count), r = blackHeight(n->_M_right, n, count);
  if (l != r) { printf("black heights differ\n"); exit(1); }
  return l + (n->_M_color == std::_S_black);
}

template <class C> static void verify(const C &c) {
  const Node *header = c.end()._M_node;
  const Node *root = header->_M_parent;
  long count = 0;
  if (root) {
    if (root->_M_color != std::_S_black) { printf("red root\n"); exit(1); }
    blackHeight(root, header, count);
    const Node *l = root, *r = root;
    while (l->_M_left) l = l->_M_left;
    while (r->_M_right) r = r->_M_right;
    if (header->_M_left != l || header->_M_right != r) { printf("leftmost/rightmost\n"); exit(1); }
  } else if (header->_M_left != header || header->_M_right != header) {
    printf("empty header\n"); exit(1);
  }
  if ((size_t)count != c.size()) { printf("size %ld vs %zu\n", count, c.size()); exit(1); }
  long fwd = 0, back = 0;
  for (auto it = c.begin(); it != c.end(); ++it) fwd++;
  for (auto it = c.end(); it != c.begin(); --it) back++;
  if (fwd != count || back != count) { printf("walks %ld %ld of %ld\n", fwd, back, count); exit(1); }
}

int main(int argc, char **argv) {
  unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  int rounds = argc > 2 ? atoi(argv[2]) : 20000;
  srand(seed);
  std::map<int, long> m;
  std::multiset<int> ms;
  std::list<int> a, b;
  unsigned long h = 1469598103934665603UL;
  for (int i = 0; i < rounds; i++) {
    int k = rand() % 500, op = rand() % 10;
    if (op < 4) { m[k] += i; ms.insert(k % 50); }
    else if (op < 7) { m.erase(k); auto it = ms.find(k % 50); if (it != ms.end()) ms.erase(it); }
    else if (op == 7) { auto it = m.lower_bound(k); if (it != m.begin()) { --it; h = h * 31 + it->first; } }
    else if (op == 8) { a.push_back(k); if (k % 3 == 0) b.push_front(k); if (k % 7 == 0 && !a.empty()) a.pop_front(); }
    else {
      switch (k % 5) {
      case 0: a.reverse(); break;
      case 1: a.splice(a.begin(), b); break;
      case 2: a.swap(b); break;
      case 3: if (!a.empty()) b.splice(b.end(), a, a.begin()); break;
      case 4: a.sort(); a.unique(); break;
      }
    }
    if (i % 97 == 0) { verify(m); verify(ms); }
  }
  verify(m); verify(ms);
  for (auto &p : m) h = h * 1099511628211UL ^ (unsigned long)(p.first * 7 + p.second);
  for (int x : ms) h = h * 31 + (unsigned long)x;
  for (auto it = m.rbegin(); it != m.rend(); ++it) h = h * 17 + (unsigned long)it->first;
  for (int x : a) h = h * 13 + (unsigned long)x;
  for (auto it = b.rbegin(); it != b.rend(); ++it) h = h * 11 + (unsigned long)*it;
  printf("map %zu multiset %zu lists %zu %zu hash %lx\n", m.size(), ms.size(), a.size(), b.size(), h);
  return 0;
}
