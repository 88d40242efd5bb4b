// Counts the heap allocations of the threads that turn `probes::counting` on: every replaceable
// operator new and, with glibc, aligned_alloc (where Asio's recycling allocator goes for coroutine
// frames and handlers when its per-thread cache misses), with the calls, the bytes asked for, and
// the blocks of at least `large_block` bytes counted apart. The replacements are defined in
// heap_probe.cpp, which a program links once: the unit tests (AllocationCount) and the benchmarks
// that report allocations per operation use this one implementation.
//
// The totals are plain (not atomic) globals: one thread counts at a time (a test's own, or a
// benchmark's client io thread), and the others are read after it stops.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

inline thread_local bool counting = false;  ///< whether this thread's allocations are counted
inline HeapCounts heap;                     ///< written by counting threads only
inline constexpr std::size_t max_large = 64;
/// Sizes of the last large blocks, large_sizes[i % max_large].
inline std::array<std::size_t, max_large> large_sizes{};

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

}  // namespace probes

namespace tinker::test {

/// Counts the allocations of the current thread while alive (nested counts are fine).
class AllocationCount {
 public:
  AllocationCount() : start_(probes::heap.allocations), was_counting_(probes::counting) { probes::counting = true; }
  ~AllocationCount() { probes::counting = was_counting_; }
  AllocationCount(const AllocationCount&) = delete;
  AllocationCount& operator=(const AllocationCount&) = delete;

  /// Allocations by this thread since construction.
  std::uint64_t allocations() const noexcept { return probes::heap.allocations - start_; }

 private:
  std::uint64_t start_;
  bool was_counting_;
};

}  // namespace tinker::test
