#include "client/session/telemetry_queue.hpp"

#include "http/headers.hpp"

#include <algorithm>
#include <iterator>

namespace tinker::client::session {

bool TelemetryQueue::push(TelemetryEvent event) {
  if (events_.size() >= capacity_) {
    ++dropped_;
    return false;
  }
  events_.push_back(std::move(event));
  return true;
}

std::vector<TelemetryEvent> TelemetryQueue::take_batch() {
  const std::size_t n = std::min(events_.size(), max_batch);
  std::vector<TelemetryEvent> batch(std::make_move_iterator(events_.begin()),
                                    std::make_move_iterator(events_.begin() + static_cast<std::ptrdiff_t>(n)));
  events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(n));
  return batch;
}

void TelemetryQueue::put_back(std::vector<TelemetryEvent> batch) {
  events_.insert(events_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
}

const char* telemetry_platform() noexcept {
#if defined(__linux__)
  return "Linux";
#elif defined(__APPLE__)
  return "Darwin";
#elif defined(_WIN32)
  return "Windows";
#else
  return "Unknown";
#endif
}

const std::string& telemetry_process_uuid() {
  static const std::string uuid = http::uuid4();
  return uuid;
}

}  // namespace tinker::client::session
