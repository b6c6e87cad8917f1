// pheap_new.cpp -- every form of operator new and delete, in the persistent
// heap (cairn-c++ --persistent-heap; libcairn_pheap_cxx.a).
//
// libstdc++'s own operator new is compiled into libstdc++.so and calls
// libc's malloc, which `--wrap=malloc` does not reach (the linker wraps only
// the references in the program's objects). A program that defines the
// replaceable global allocation functions replaces libstdc++'s for the whole
// process ([replacement.functions]); these call malloc and free, which the
// link wraps into the heap's __wrap_malloc and __wrap_free like the
// program's own calls. So `new`, every container's allocator and
// std::make_shared put their objects in the heap.
//
// Alignment: the heap's blocks are 16-byte aligned (runtime/alloc.c size
// classes); an over-aligned new takes size + alignment bytes and keeps the
// block's start in the word just below the aligned address. That word is in
// the heap, written and read only here.
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHeapAlign = 16;

void *allocate(std::size_t n) {
  for (;;) {
    if (void *p = std::malloc(n ? n : 1))
      return p;
    std::new_handler h = std::get_new_handler();
    if (!h)
      throw std::bad_alloc();
    h();
  }
}

void *allocateAligned(std::size_t n, std::align_val_t a) {
  std::size_t al = static_cast<std::size_t>(a);
  if (al <= kHeapAlign)
    return allocate(n);
  if (n > SIZE_MAX - al - sizeof(void *))
    throw std::bad_array_new_length();
  char *raw = static_cast<char *>(allocate(n + al + sizeof(void *)));
  std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(raw) + sizeof(void *) + al - 1) &
                      ~(static_cast<std::uintptr_t>(al) - 1);
  reinterpret_cast<void **>(at)[-1] = raw;
  return reinterpret_cast<void *>(at);
}

void releaseAligned(void *p, std::align_val_t a) noexcept {
  if (!p)
    return;
  if (static_cast<std::size_t>(a) <= kHeapAlign)
    std::free(p);
  else
    std::free(static_cast<void **>(p)[-1]);
}

} // namespace

void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
  try { return allocate(n); } catch (...) { return nullptr; }
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept {
  try { return allocate(n); } catch (...) { return nullptr; }
}
void *operator new(std::size_t n, std::align_val_t a) { return allocateAligned(n, a); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocateAligned(n, a); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  try { return allocateAligned(n, a); } catch (...) { return nullptr; }
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  try { return allocateAligned(n, a); } catch (...) { return nullptr; }
}

void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t a) noexcept { releaseAligned(p, a); }
void operator delete[](void *p, std::align_val_t a) noexcept { releaseAligned(p, a); }
void operator delete(void *p, std::size_t, std::align_val_t a) noexcept { releaseAligned(p, a); }
void operator delete[](void *p, std::size_t, std::align_val_t a) noexcept { releaseAligned(p, a); }
void operator delete(void *p, std::align_val_t a, const std::nothrow_t &) noexcept {
  releaseAligned(p, a);
}
void operator delete[](void *p, std::align_val_t a, const std::nothrow_t &) noexcept {
  releaseAligned(p, a);
}
