// A request body that is not all in one buffer: its own bytes (the "spine": tags, lengths, small
// fields) plus runs of bytes borrowed from the caller's memory, such as the token and tensor arrays
// of a training batch. Sending the runs from where they are, instead of copying them into the
// body first, saves a copy of the whole batch per step (doc/performance.md#training-path).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {
class ForwardBackwardRequest;
}

namespace tinker::wire {

/// `bytes` belong to the body just before the byte at offset `at` of the spine. The memory is the
/// caller's and must stay valid for as long as the body is used (the request's every attempt).
class BorrowedRun {
 public:
  BorrowedRun() = default;
  BorrowedRun(std::size_t at_, std::string_view bytes_) noexcept : at(at_), bytes(bytes_) {}

  std::size_t at = 0;
  std::string_view bytes;
};

/// Arrays shorter than this are copied into the spine: below it, the copy costs less than one
/// more buffer in the gathered write.
inline constexpr std::size_t min_borrowed_run = 4096;

/// Calls `piece(bytes)` for each piece of the body in order: the stretches of the spine between
/// runs (empty ones skipped) and the runs (in order of `at`). The one walk of a gathered body, for
/// flatten() and for the connection's list of buffers.
template <class Piece>
void for_each_piece(std::string_view spine, std::span<const BorrowedRun> runs, Piece&& piece) {
  std::size_t from = 0;
  for (const BorrowedRun& run : runs) {
    if (run.at > from) piece(spine.substr(from, run.at - from));
    piece(run.bytes);
    from = run.at;
  }
  if (spine.size() > from) piece(spine.substr(from));
}

/// The size of the whole body: the spine and every run.
std::size_t gathered_size(std::string_view spine, std::span<const BorrowedRun> runs) noexcept;

/// The whole body in one string (runs in order of `at`): for a TLS stream, a zstd frame, or a
/// caller that needs the bytes in one piece.
std::string flatten(std::string_view spine, std::span<const BorrowedRun> runs);

/// to_protobuf(request) as a spine and its borrowed runs: the arrays of at least min_borrowed_run
/// bytes are listed in `borrowed` (cleared first), pointing into `request`, which must outlive
/// every use of them. Flattened, it is exactly to_protobuf(request). Throws as to_protobuf does.
std::string to_protobuf_borrowing(const ForwardBackwardRequest& request, std::vector<BorrowedRun>& borrowed);

}  // namespace tinker::wire
