#include "support/allocation_counter.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// Per thread, so that allocations of other threads (the io threads of other tests' clients) are
// never counted. `t_depth` > 0 while an AllocationCount lives on this thread.
thread_local std::uint64_t t_allocations = 0;
thread_local int t_depth = 0;

void note_allocation() noexcept {
  if (t_depth > 0) ++t_allocations;
}

void* plain_allocation(std::size_t size) noexcept {
  note_allocation();
  return std::malloc(size == 0 ? 1 : size);
}

void* aligned_allocation(std::size_t size, std::align_val_t alignment) noexcept {
  note_allocation();
  const auto align = static_cast<std::size_t>(alignment);
#if defined(__GLIBC__)
  return ::memalign(align, size == 0 ? 1 : size);  // aligned_alloc itself is replaced below
#else
  return std::aligned_alloc(align, (size + align - 1) / align * align);
#endif
}

void* or_throw(void* allocated) {
  if (allocated == nullptr) throw std::bad_alloc();
  return allocated;
}

}  // namespace

namespace tinker::test {

AllocationCount::AllocationCount() : start_(t_allocations) {
  ++t_depth;
}
AllocationCount::~AllocationCount() {
  --t_depth;
}
std::uint64_t AllocationCount::allocations() const noexcept {
  return t_allocations - start_;
}

}  // namespace tinker::test

#if defined(__GLIBC__)
// glibc lets a program replace aligned_alloc, and its free() takes memalign'd blocks.
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  note_allocation();
  return ::memalign(alignment, size);
}
#endif

void* operator new(std::size_t size) {
  return or_throw(plain_allocation(size));
}
void* operator new[](std::size_t size) {
  return or_throw(plain_allocation(size));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return plain_allocation(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return plain_allocation(size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return or_throw(aligned_allocation(size, alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return or_throw(aligned_allocation(size, alignment));
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return aligned_allocation(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return aligned_allocation(size, alignment);
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
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
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
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
