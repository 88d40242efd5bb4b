// The replacements behind heap_probe.hpp: the global operator new family and, with glibc,
// aligned_alloc (the program's definition wins over libc's). Counting costs a thread-local test
// when the thread does not count.
#include "support/heap_probe.hpp"

#include <cstdlib>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

void* allocate(std::size_t size) noexcept {
  probes::note_allocation(size);
  return std::malloc(size == 0 ? 1 : size);
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) noexcept {
  probes::note_allocation(size);
  const auto align = static_cast<std::size_t>(alignment);
#if defined(__GLIBC__)
  return ::memalign(align, size == 0 ? 1 : size);  // aligned_alloc itself is replaced below
#else
  return std::aligned_alloc(align, (size + align - 1) / align * align);
#endif
}

}  // namespace

#if defined(__GLIBC__)
// glibc lets a program replace aligned_alloc, and its free() takes memalign'd blocks.
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  probes::note_allocation(size);
  return ::memalign(alignment, size == 0 ? 1 : size);
}
#endif

void* operator new(std::size_t s) {
  if (void* p = allocate(s)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t s) {
  if (void* p = allocate(s)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t s, const std::nothrow_t&) noexcept {
  return allocate(s);
}
void* operator new[](std::size_t s, const std::nothrow_t&) noexcept {
  return allocate(s);
}
void* operator new(std::size_t s, std::align_val_t a) {
  if (void* p = allocate_aligned(s, a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t s, std::align_val_t a) {
  if (void* p = allocate_aligned(s, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t s, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_aligned(s, a);
}
void* operator new[](std::size_t s, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_aligned(s, a);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
