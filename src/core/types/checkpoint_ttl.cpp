// Checkpoint lifetime bounds (src/core/types/checkpoint_ttl.hpp).
#include "core/types/checkpoint_ttl.hpp"

#include <tinker/error.hpp>

#include <string>

namespace tinker::detail {

void check_checkpoint_ttl(std::string_view call, std::optional<std::int64_t> ttl_seconds) {
  if (!ttl_seconds || (*ttl_seconds >= min_checkpoint_ttl_seconds && *ttl_seconds <= max_checkpoint_ttl_seconds)) {
    return;
  }
  throw error(errc::invalid_argument, std::string(call) + ": ttl_seconds must be " +
                                          std::to_string(min_checkpoint_ttl_seconds) + ".." +
                                          std::to_string(max_checkpoint_ttl_seconds) +
                                          " (one hour to ten years), got " + std::to_string(*ttl_seconds));
}

}  // namespace tinker::detail
