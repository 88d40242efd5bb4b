// Counts the heap allocations made by the current thread while an AllocationCount is alive:
// every replaceable operator new and, with glibc, aligned_alloc (where Asio's recycling
// allocator goes when its per-thread cache misses). The replacements (allocation_counter.cpp)
// serve the whole unit test binary and count nothing while no AllocationCount exists.
#pragma once

#include <cstdint>

namespace tinker::test {

class AllocationCount {
 public:
  AllocationCount();
  ~AllocationCount();
  AllocationCount(const AllocationCount&) = delete;
  AllocationCount& operator=(const AllocationCount&) = delete;

  /// Allocations by this thread since construction.
  std::uint64_t allocations() const noexcept;

 private:
  std::uint64_t start_;
};

}  // namespace tinker::test
