// Probes of what the client's io thread does, for tinker-bench-training-client --sft-shape:
//
//   heap     heap_probe.hpp: the allocations and bytes asked for on the threads that turned
//            counting on (the client's io thread), the blocks of at least `large_block` bytes
//            apart: a copy of a training batch or of an encoded body needs such a block, so their
//            number and size per step show whether the batch was copied
//            (doc/performance.md#training-path).
//   epoll    epoll_wait wrapped to sum the thread CPU spent in it (the kernel's side of waiting).
//   sends    send / sendmsg / write / writev wrapped (the executable's definitions win over
//            libc's; the SDK is linked statically) to record, for every call on a counting
//            thread, its file descriptor, the bytes it took and the steady-clock and thread-CPU
//            time when it returned: the last byte of a request is on the wire when the send
//            that took it returns.
//
// Include this header in one translation unit only: it defines the replacements.
#pragma once

#include "support/heap_probe.hpp"

#include <dlfcn.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace probes {

class SendRecord {
 public:
  int fd = -1;
  std::int64_t bytes = 0;
  std::int64_t wall_ns = 0;       ///< steady clock when the call returned
  std::int64_t cpu_ns = 0;        ///< the calling thread's CPU time when the call returned
  std::int64_t cpu_start_ns = 0;  ///< ... and when it was made
  std::int64_t epoll_ns = 0;      ///< epoll_cpu_ns when it returned
};

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
