// Counts the heap allocations of the threads that turn `probes::counting` on (a benchmark's client
// io thread): a replacement of the global operator new and of aligned_alloc (which Asio uses for
// coroutine frames and handlers; the executable's definition wins over libc's), counting the calls
// and the bytes asked for, with the blocks of at least `large_block` bytes counted apart.
//
// Include this header in one translation unit only: it defines the replacements.
#pragma once

#include <malloc.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace probes {

inline constexpr std::size_t large_block = 64 * 1024;

class HeapCounts {
 public:
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;
  std::uint64_t large_allocations = 0;
  std::uint64_t large_bytes = 0;

  HeapCounts operator-(const HeapCounts& earlier) const {
    HeapCounts d;
    d.allocations = allocations - earlier.allocations;
    d.bytes = bytes - earlier.bytes;
    d.large_allocations = large_allocations - earlier.large_allocations;
    d.large_bytes = large_bytes - earlier.large_bytes;
    return d;
  }
};

inline thread_local bool counting = false;
inline HeapCounts heap;  // written by counting threads only (one in the benchmark)
inline constexpr std::size_t max_large = 64;
inline std::array<std::size_t, max_large>
    large_sizes{};  ///< sizes of the last large blocks, large_sizes[i % max_large]

inline void note_allocation(std::size_t size) noexcept {
  if (!counting) return;
  ++heap.allocations;
  heap.bytes += size;
  if (size >= large_block) {
    large_sizes[heap.large_allocations % max_large] = size;
    ++heap.large_allocations;
    heap.large_bytes += size;
  }
}

inline void* allocate(std::size_t size) noexcept {
  note_allocation(size);
  return std::malloc(size == 0 ? 1 : size);
}

inline void* allocate_aligned(std::size_t size, std::align_val_t alignment) noexcept {
  note_allocation(size);
  return ::memalign(static_cast<std::size_t>(alignment), size == 0 ? 1 : size);
}

}  // namespace probes

extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  probes::note_allocation(size);
  return ::memalign(alignment, size == 0 ? 1 : size);
}

void* operator new(std::size_t s) {
  if (void* p = probes::allocate(s)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t s) {
  if (void* p = probes::allocate(s)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t s, const std::nothrow_t&) noexcept {
  return probes::allocate(s);
}
void* operator new[](std::size_t s, const std::nothrow_t&) noexcept {
  return probes::allocate(s);
}
void* operator new(std::size_t s, std::align_val_t a) {
  if (void* p = probes::allocate_aligned(s, a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t s, std::align_val_t a) {
  if (void* p = probes::allocate_aligned(s, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t s, std::align_val_t a, const std::nothrow_t&) noexcept {
  return probes::allocate_aligned(s, a);
}
void* operator new[](std::size_t s, std::align_val_t a, const std::nothrow_t&) noexcept {
  return probes::allocate_aligned(s, a);
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
