#include "core/wire/borrowed_runs.hpp"

namespace tinker::wire {

std::size_t gathered_size(std::string_view spine, std::span<const BorrowedRun> runs) noexcept {
  std::size_t size = spine.size();
  for (const BorrowedRun& run : runs) size += run.bytes.size();
  return size;
}

std::string flatten(std::string_view spine, std::span<const BorrowedRun> runs) {
  std::string out;
  out.reserve(gathered_size(spine, runs));
  for_each_piece(spine, runs, [&out](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace tinker::wire
