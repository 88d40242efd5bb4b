// The count behind every "start N operations, finish when all have" in the SDK: the chunked
// submits of a forward_backward and combined futures (through Join, client/async/join.hpp), and
// the reference logprobs of a batch in the losses library, whose completions arrive on any thread.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace tinker::client::async {

/// Counts the parts of a joined operation as they finish, in any order and on any thread, and
/// remembers the first that failed. Exactly one call of finish() reports `last`: its caller
/// completes the join, and sees everything that the parts stored before they finished.
class Countdown {
 public:
  /// What one finish() meant.
  struct Finished {
    bool first_failure = false;  ///< this part is the first that failed
    bool last = false;           ///< this part was the last one running
  };

  /// A count of `parts` parts, none finished.
  explicit Countdown(std::size_t parts) : finished_(parts, false), remaining_(parts) {}

  /// Marks `part` (0 <= part < parts, once each) finished, failed or not.
  Finished finish(std::size_t part, bool failed) {
    const std::lock_guard lock(mutex_);
    finished_[part] = true;
    Finished step;
    if (failed && !first_failure_) {
      first_failure_ = part;
      step.first_failure = true;
    }
    step.last = --remaining_ == 0;
    return step;
  }

  /// True once `part` has finished.
  bool finished(std::size_t part) const {
    const std::lock_guard lock(mutex_);
    return finished_[part];
  }

  /// How many parts are still running.
  std::size_t remaining() const {
    const std::lock_guard lock(mutex_);
    return remaining_;
  }

  /// The first part that finished failed, if any did.
  std::optional<std::size_t> first_failure() const {
    const std::lock_guard lock(mutex_);
    return first_failure_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<bool> finished_;
  std::size_t remaining_;
  std::optional<std::size_t> first_failure_;
};

}  // namespace tinker::client::async
