// Probes of what the client's io thread does, for tinker-bench-training-client --sft-shape:
//
//   heap     a replacement of the global operator new counting the allocations and the bytes
//            asked for on the threads that turned counting on (the client's io thread), with
//            the allocations of at least `large_block` bytes counted apart: a copy of a
//            training batch or of an encoded body needs such a block, so their number and
//            size per step show whether the batch was copied (doc/performance.md#training-path).
//   epoll    epoll_wait wrapped to sum the thread CPU spent in it (the kernel's side of waiting).
//   sends    send / sendmsg / write / writev wrapped (the executable's definitions win over
//            libc's; the SDK is linked statically) to record, for every call on a counting
//            thread, its file descriptor, the bytes it took and the steady-clock and thread-CPU
//            time when it returned: the last byte of a request is on the wire when the send
//            that took it returns.
//
// Include this header in one translation unit only: it defines the replacements.
#pragma once

#include <dlfcn.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

class SendRecord {
 public:
  int fd = -1;
  std::int64_t bytes = 0;
  std::int64_t wall_ns = 0;       ///< steady clock when the call returned
  std::int64_t cpu_ns = 0;        ///< the calling thread's CPU time when the call returned
  std::int64_t cpu_start_ns = 0;  ///< ... and when it was made
  std::int64_t epoll_ns = 0;      ///< epoll_cpu_ns when it returned
};

inline thread_local bool counting = false;
inline HeapCounts heap;  // written by counting threads only (one in the benchmark)
inline constexpr std::size_t max_large = 64;
inline std::array<std::size_t, max_large>
    large_sizes{};  ///< sizes of the last large blocks, large_sizes[i % max_large]
inline constexpr std::size_t max_sends = 1 << 16;
inline std::array<SendRecord, max_sends> sends;
inline std::size_t send_count = 0;  ///< total recorded; sends[i % max_sends]

/// Thread CPU spent inside epoll_wait on counting threads: the io loop's waits for the socket, the
/// kernel side of every suspension.
inline std::int64_t epoll_cpu_ns = 0;

inline std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

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

inline std::int64_t send_start() noexcept {
  return counting ? now_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
}

inline void note_send(int fd, long result, std::int64_t cpu_start) noexcept {
  if (!counting || result <= 0) return;
  SendRecord& r = sends[send_count % max_sends];
  r.fd = fd;
  r.cpu_start_ns = cpu_start;
  r.epoll_ns = epoll_cpu_ns;
  r.bytes = result;
  r.wall_ns = now_ns(CLOCK_MONOTONIC);
  r.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
  ++send_count;
}

template <class F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
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

extern "C" ssize_t send(int fd, const void* data, std::size_t size, int flags) {
  using Send = ssize_t (*)(int, const void*, std::size_t, int);
  static const Send real = probes::next_symbol<Send>("send");
  const std::int64_t started = probes::send_start();
  const ssize_t n = real(fd, data, size, flags);
  probes::note_send(fd, n, started);
  return n;
}

extern "C" ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  using SendMsg = ssize_t (*)(int, const msghdr*, int);
  static const SendMsg real = probes::next_symbol<SendMsg>("sendmsg");
  const std::int64_t started = probes::send_start();
  const ssize_t n = real(fd, message, flags);
  probes::note_send(fd, n, started);
  return n;
}

extern "C" ssize_t write(int fd, const void* data, std::size_t size) {
  using Write = ssize_t (*)(int, const void*, std::size_t);
  static const Write real = probes::next_symbol<Write>("write");
  const std::int64_t started = probes::send_start();
  const ssize_t n = real(fd, data, size);
  probes::note_send(fd, n, started);
  return n;
}

extern "C" ssize_t writev(int fd, const iovec* iov, int count) {
  using WriteV = ssize_t (*)(int, const iovec*, int);
  static const WriteV real = probes::next_symbol<WriteV>("writev");
  const std::int64_t started = probes::send_start();
  const ssize_t n = real(fd, iov, count);
  probes::note_send(fd, n, started);
  return n;
}

extern "C" int epoll_wait(int epfd, epoll_event* events, int max_events, int timeout) {
  using EpollWait = int (*)(int, epoll_event*, int, int);
  static const EpollWait real = probes::next_symbol<EpollWait>("epoll_wait");
  const std::int64_t started = probes::send_start();
  const int n = real(epfd, events, max_events, timeout);
  if (probes::counting) probes::epoll_cpu_ns += probes::now_ns(CLOCK_THREAD_CPUTIME_ID) - started;
  return n;
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
