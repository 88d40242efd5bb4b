// Joining coroutines on the io thread: start N parts, wait until every one has ended. The count
// itself is Countdown (countdown.hpp), shared with the joins whose parts finish on any thread (the
// losses library's reference logprobs); this adds the io-thread waiting and cancellation.
#pragma once

#include "client/async/countdown.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace tinker::client::async {

/// The state shared by a waiting coroutine and the completions of the parts it started (io thread
/// only). Part i may be bound to `slot(i)` so that the join can cancel it.
class Join {
 public:
  Join(const boost::asio::any_io_executor& executor, std::size_t parts);
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  /// Records that `part` ended; the last one wakes wait_all().
  Countdown::Finished finish(std::size_t part, bool failed);
  /// The cancellation slot of `part`, for bind_cancellation_slot.
  boost::asio::cancellation_slot slot(std::size_t part) { return signals_[part].slot(); }
  /// Cancels (terminal) every part that has not ended yet.
  void cancel_unfinished();
  /// The first part that ended failed.
  std::optional<std::size_t> first_failure() const { return countdown_.first_failure(); }

  /// Waits until every part has ended, even when the caller is cancelled: the parts use state
  /// the caller owns. With `pass_on_cancellation`, a cancellation of the caller cancels the parts
  /// that are still running (and the wait goes on until they have ended).
  boost::asio::awaitable<void> wait_all(bool pass_on_cancellation);

 private:
  Countdown countdown_;
  boost::asio::steady_timer all_done_;
  std::vector<boost::asio::cancellation_signal> signals_;  ///< one per part; never resized (signals cannot move)
};

/// Runs `tasks` at once on the current executor and waits for all of them (the chunks of one
/// forward_backward are submitted concurrently, doc/training.md#chunking). The tasks report their
/// own outcomes through state they share with the caller and must not throw; a cancellation of
/// the caller is not passed on to them.
boost::asio::awaitable<void> run_all(std::vector<boost::asio::awaitable<void>> tasks);

}  // namespace tinker::client::async
