// stdcxx_nodes.cpp -- the non-template node functions of libstdc++'s
// std::map/set (red-black tree) and std::list, built by cairn-c++.
//
// libstdc++ keeps these few functions out of its headers: they are compiled
// once into libstdc++.so, and every std::map, std::set, std::multimap,
// std::multiset and std::list instantiated in a program calls them to link,
// unlink, rebalance and walk nodes. Compiled by a plain C++ compiler, they
// would read the links of nodes that live in a pool, which code compiled by
// cairn-c++ stores in relative form (bit 63 set), and fault; and their
// stores into such nodes would be neither logged nor converted. cairn-c++
// links this file (libcairn_cxx_rt.a) ahead of libstdc++, so the program's
// calls bind here, to code that went through cairn's pass like the
// program's own: loads convert, stores log and convert.
//
// The list of functions was found by building programs that use every
// standard container with cairn-c++ (tests/compiler/cxx) and listing the
// std:: symbols they still take from libstdc++.so (`nm -u`); the others are
// pure arithmetic (_Prime_rehash_policy), hashing of bytes (_Hash_bytes),
// exceptions and locale set-up, none of which follows a node link.
//
// These are cairn's own implementations of the textbook algorithms (CLRS,
// "Red-Black Trees"; a doubly linked ring) on libstdc++'s node layout and
// conventions, which are its ABI:
//   - _Rb_tree_node_base is {color, parent, left, right}; the tree's header
//     node has parent = root, left = leftmost, right = rightmost and is red,
//     and the root's parent is the header;
//   - an empty tree's header points to itself left and right, root NULL;
//   - _List_node_base is {next, prev}, a ring through the list's header.
#include <list>
#include <map>

namespace std {

namespace {

using Node = _Rb_tree_node_base;

inline Node *minimum(Node *x) {
  while (x->_M_left)
    x = x->_M_left;
  return x;
}

inline Node *maximum(Node *x) {
  while (x->_M_right)
    x = x->_M_right;
  return x;
}

inline bool isRed(const Node *x) { return x && x->_M_color == _S_red; }

// Rotations keep the header's parent (the root) up to date.
void rotateLeft(Node *x, Node *&root) {
  Node *y = x->_M_right;
  x->_M_right = y->_M_left;
  if (y->_M_left)
    y->_M_left->_M_parent = x;
  y->_M_parent = x->_M_parent;
  if (x == root)
    root = y;
  else if (x == x->_M_parent->_M_left)
    x->_M_parent->_M_left = y;
  else
    x->_M_parent->_M_right = y;
  y->_M_left = x;
  x->_M_parent = y;
}

void rotateRight(Node *x, Node *&root) {
  Node *y = x->_M_left;
  x->_M_left = y->_M_right;
  if (y->_M_right)
    y->_M_right->_M_parent = x;
  y->_M_parent = x->_M_parent;
  if (x == root)
    root = y;
  else if (x == x->_M_parent->_M_right)
    x->_M_parent->_M_right = y;
  else
    x->_M_parent->_M_left = y;
  y->_M_right = x;
  x->_M_parent = y;
}

Node *successor(Node *x) {
  if (x->_M_right)
    return minimum(x->_M_right);
  Node *y = x->_M_parent;
  while (x == y->_M_right) {
    x = y;
    y = y->_M_parent;
  }
  // From the rightmost node the walk climbs to the root and then to the
  // header; when the root is the rightmost node (header->right == root) it
  // stops at the root with y = header, whose "right" is the root itself.
  return x->_M_right != y ? y : x;
}

Node *predecessor(Node *x) {
  if (x->_M_color == _S_red && x->_M_parent->_M_parent == x)
    return x->_M_right;                  // the header: end() - 1 is the rightmost
  if (x->_M_left)
    return maximum(x->_M_left);
  Node *y = x->_M_parent;
  while (x == y->_M_left) {
    x = y;
    y = y->_M_parent;
  }
  return y;
}

} // namespace

_Rb_tree_node_base *_Rb_tree_increment(_Rb_tree_node_base *x) throw() {
  return successor(x);
}

const _Rb_tree_node_base *_Rb_tree_increment(const _Rb_tree_node_base *x) throw() {
  return successor(const_cast<Node *>(x));
}

_Rb_tree_node_base *_Rb_tree_decrement(_Rb_tree_node_base *x) throw() {
  return predecessor(x);
}

const _Rb_tree_node_base *_Rb_tree_decrement(const _Rb_tree_node_base *x) throw() {
  return predecessor(const_cast<Node *>(x));
}

void _Rb_tree_insert_and_rebalance(const bool insert_left, _Rb_tree_node_base *x,
                                   _Rb_tree_node_base *p,
                                   _Rb_tree_node_base &header) throw() {
  Node *&root = header._M_parent;
  x->_M_parent = p;
  x->_M_left = nullptr;
  x->_M_right = nullptr;
  x->_M_color = _S_red;
  if (insert_left) {
    p->_M_left = x;                      // for p == &header this sets leftmost
    if (p == &header) {
      header._M_parent = x;
      header._M_right = x;
    } else if (p == header._M_left) {
      header._M_left = x;
    }
  } else {
    p->_M_right = x;
    if (p == header._M_right)
      header._M_right = x;
  }
  // CLRS RB-INSERT-FIXUP: x is red; while its parent is red, recolor or
  // rotate. The root's parent is the header, which is red, so the loop
  // stops at the root by testing x != root.
  while (x != root && x->_M_parent->_M_color == _S_red) {
    Node *parent = x->_M_parent;
    Node *grand = parent->_M_parent;
    if (parent == grand->_M_left) {
      Node *uncle = grand->_M_right;
      if (isRed(uncle)) {
        parent->_M_color = _S_black;
        uncle->_M_color = _S_black;
        grand->_M_color = _S_red;
        x = grand;
      } else {
        if (x == parent->_M_right) {
          x = parent;
          rotateLeft(x, root);
          parent = x->_M_parent;
        }
        parent->_M_color = _S_black;
        grand->_M_color = _S_red;
        rotateRight(grand, root);
      }
    } else {
      Node *uncle = grand->_M_left;
      if (isRed(uncle)) {
        parent->_M_color = _S_black;
        uncle->_M_color = _S_black;
        grand->_M_color = _S_red;
        x = grand;
      } else {
        if (x == parent->_M_left) {
          x = parent;
          rotateRight(x, root);
          parent = x->_M_parent;
        }
        parent->_M_color = _S_black;
        grand->_M_color = _S_red;
        rotateLeft(grand, root);
      }
    }
  }
  root->_M_color = _S_black;
}

_Rb_tree_node_base *_Rb_tree_rebalance_for_erase(_Rb_tree_node_base *const z,
                                                 _Rb_tree_node_base &header) throw() {
  Node *&root = header._M_parent;
  Node *&leftmost = header._M_left;
  Node *&rightmost = header._M_right;
  // Unlink z (CLRS RB-DELETE, moving nodes rather than keys: iterators to
  // the other elements must stay valid). y is the node that leaves its
  // place: z itself if it has at most one child, else z's successor, which
  // then takes z's place and color. x is the child that moves up into y's
  // place (maybe NULL), xParent its new parent.
  Node *y = z;
  Node *x;
  Node *xParent;
  _Rb_tree_color removedColor;
  if (!z->_M_left || !z->_M_right) {
    x = z->_M_left ? z->_M_left : z->_M_right;
    xParent = z->_M_parent;
    if (x)
      x->_M_parent = xParent;
    if (z == root)
      root = x;
    else if (z == xParent->_M_left)
      xParent->_M_left = x;
    else
      xParent->_M_right = x;
    if (z == leftmost)
      leftmost = z->_M_right ? minimum(z->_M_right) : z->_M_parent;
    if (z == rightmost)
      rightmost = z->_M_left ? maximum(z->_M_left) : z->_M_parent;
    removedColor = z->_M_color;
  } else {
    y = minimum(z->_M_right);            // z's successor: it has no left child
    x = y->_M_right;
    removedColor = y->_M_color;
    if (y->_M_parent == z) {
      xParent = y;
    } else {
      xParent = y->_M_parent;
      if (x)
        x->_M_parent = xParent;
      xParent->_M_left = x;
      y->_M_right = z->_M_right;
      z->_M_right->_M_parent = y;
    }
    if (z == root)
      root = y;
    else if (z == z->_M_parent->_M_left)
      z->_M_parent->_M_left = y;
    else
      z->_M_parent->_M_right = y;
    y->_M_parent = z->_M_parent;
    y->_M_left = z->_M_left;
    z->_M_left->_M_parent = y;
    y->_M_color = z->_M_color;
    // z had two children, so it was neither the leftmost nor the rightmost
  }
  if (removedColor == _S_black) {
    // CLRS RB-DELETE-FIXUP with an explicit parent (x may be NULL).
    while (x != root && !isRed(x)) {
      if (x == xParent->_M_left) {
        Node *w = xParent->_M_right;
        if (isRed(w)) {
          w->_M_color = _S_black;
          xParent->_M_color = _S_red;
          rotateLeft(xParent, root);
          w = xParent->_M_right;
        }
        if (!isRed(w->_M_left) && !isRed(w->_M_right)) {
          w->_M_color = _S_red;
          x = xParent;
          xParent = xParent->_M_parent;
        } else {
          if (!isRed(w->_M_right)) {
            w->_M_left->_M_color = _S_black;
            w->_M_color = _S_red;
            rotateRight(w, root);
            w = xParent->_M_right;
          }
          w->_M_color = xParent->_M_color;
          xParent->_M_color = _S_black;
          if (w->_M_right)
            w->_M_right->_M_color = _S_black;
          rotateLeft(xParent, root);
          break;
        }
      } else {
        Node *w = xParent->_M_left;
        if (isRed(w)) {
          w->_M_color = _S_black;
          xParent->_M_color = _S_red;
          rotateRight(xParent, root);
          w = xParent->_M_left;
        }
        if (!isRed(w->_M_right) && !isRed(w->_M_left)) {
          w->_M_color = _S_red;
          x = xParent;
          xParent = xParent->_M_parent;
        } else {
          if (!isRed(w->_M_left)) {
            w->_M_right->_M_color = _S_black;
            w->_M_color = _S_red;
            rotateLeft(w, root);
            w = xParent->_M_left;
          }
          w->_M_color = xParent->_M_color;
          xParent->_M_color = _S_black;
          if (w->_M_left)
            w->_M_left->_M_color = _S_black;
          rotateRight(xParent, root);
          break;
        }
      }
    }
    if (x)
      x->_M_color = _S_black;
  }
  return z;
}

unsigned int _Rb_tree_black_count(const _Rb_tree_node_base *node,
                                  const _Rb_tree_node_base *root) throw() {
  unsigned int n = 0;
  for (; node; node = node->_M_parent) {
    if (node->_M_color == _S_black)
      n++;
    if (node == root)
      break;
  }
  return node ? n : 0;
}

namespace __detail {

void _List_node_base::swap(_List_node_base &x, _List_node_base &y) noexcept {
  // Each header is a ring of its own; an empty one points to itself.
  bool xEmpty = x._M_next == &x, yEmpty = y._M_next == &y;
  _List_node_base *xn = x._M_next, *xp = x._M_prev;
  _List_node_base *yn = y._M_next, *yp = y._M_prev;
  if (yEmpty) {
    x._M_next = x._M_prev = &x;
  } else {
    x._M_next = yn;
    x._M_prev = yp;
    yn->_M_prev = &x;
    yp->_M_next = &x;
  }
  if (xEmpty) {
    y._M_next = y._M_prev = &y;
  } else {
    y._M_next = xn;
    y._M_prev = xp;
    xn->_M_prev = &y;
    xp->_M_next = &y;
  }
}

void _List_node_base::_M_transfer(_List_node_base *const first,
                                  _List_node_base *const last) noexcept {
  // Move [first, last) to just before this.
  if (first == last || this == last)
    return;
  _List_node_base *const lastIn = last->_M_prev;
  _List_node_base *const before = first->_M_prev;
  _List_node_base *const thisPrev = this->_M_prev;
  // close the gap the range leaves
  before->_M_next = last;
  last->_M_prev = before;
  // splice the range in
  thisPrev->_M_next = first;
  first->_M_prev = thisPrev;
  lastIn->_M_next = this;
  this->_M_prev = lastIn;
}

void _List_node_base::_M_reverse() noexcept {
  _List_node_base *n = this;
  do {
    _List_node_base *next = n->_M_next;
    n->_M_next = n->_M_prev;
    n->_M_prev = next;
    n = next;
  } while (n != this);
}

void _List_node_base::_M_hook(_List_node_base *const position) noexcept {
  this->_M_next = position;
  this->_M_prev = position->_M_prev;
  position->_M_prev->_M_next = this;
  position->_M_prev = this;
}

void _List_node_base::_M_unhook() noexcept {
  _List_node_base *const next = this->_M_next;
  _List_node_base *const prev = this->_M_prev;
  prev->_M_next = next;
  next->_M_prev = prev;
}

} // namespace __detail
} // namespace std
