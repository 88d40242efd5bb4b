// The batched long-poll of one SamplingClient's results (doc/sampling.md#batched-result-polling,
// doc/protocol.md#batched-sampling-results). When the server's client/config says
// sample_use_retrieve_futures, each accepted sample waits here until one background poller,
//   POST /api/v1/retrieve_futures {"target":{"type":"sampling_session",...},"prev_cursor":N,"timeout":30}
// reports its request finished or failed; only then does it fetch its result with one retrieve_future.
//
// Lifecycle (all on the client's io thread): the poller starts when a sample starts waiting and none
// is running, and ends when no waiting sample is left unreported (or at ServiceClient shutdown, which
// cancels it as a registered task). It holds the watcher and the holder, never the SamplingState, so
// dropping the client's last handle lets everything go once the samples in flight are done. After a
// failed poll it sleeps 1 s and polls again; a server that does not know the endpoint (404, 405)
// turns the batched mode off for the client and sends the waiting samples to per-request polling.
#pragma once

#include "client/session/holder.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tinker::client::sampling {

/// How a wait for a completion ended.
enum class CompletionWait {
  reported,   ///< the server reported the request finished or failed: fetch its result
  fallback,   ///< the batched mode is off for this client: poll the request itself
  cancelled,  ///< the awaiting coroutine was cancelled (by its stuck watch, or at shutdown)
};

/// One sampler's completions and their poller. Used on the io thread only.
class CompletionWatcher final : public std::enable_shared_from_this<CompletionWatcher>, public detail::RegisteredTask {
 public:
  CompletionWatcher(std::shared_ptr<detail::ClientHolder> holder, std::string sampling_session_id);
  CompletionWatcher(const CompletionWatcher&) = delete;
  CompletionWatcher& operator=(const CompletionWatcher&) = delete;

  /// True when samples should wait here: the server turned the batched mode on and it was not
  /// turned off for this client since.
  bool enabled() const;

  /// One sample's wait for its report (below).
  class Wait;

  /// Polls sent so far (for tests).
  std::int64_t polls_sent() const noexcept { return polls_sent_; }

  void cancel_task() override;

  /// The poller's coroutine (a named function: the coroutine rules of doc/architecture.md).
  /// `signal` is the one its co_spawn is bound to: the frame keeps it alive for as long as Asio may use it.
  static boost::asio::awaitable<void> run_poller(std::shared_ptr<CompletionWatcher> self,
                                                 std::shared_ptr<detail::ClientHolder> holder,
                                                 std::shared_ptr<boost::asio::cancellation_signal> signal);

 private:
  void ensure_poller();
  void stop_poller();
  void deliver(std::string_view request_id);
  void release_all();
  void forget_old_unclaimed(std::chrono::steady_clock::time_point now);
  std::size_t unreported() const noexcept { return waiters_.size(); }

  std::shared_ptr<detail::ClientHolder> holder_;
  const std::string sampling_session_id_;
  std::int64_t cursor_ = 0;
  bool poller_running_ = false;
  bool disabled_ = false;  ///< the server does not serve retrieve_futures after all
  std::int64_t polls_sent_ = 0;
  /// The running poller's signal (null when none runs); its frame owns it.
  boost::asio::cancellation_signal* poller_signal_ = nullptr;
  /// Looks strings up by view (no key made per lookup).
  class IdHash {
   public:
    using is_transparent = void;
    std::size_t operator()(std::string_view id) const noexcept { return std::hash<std::string_view>()(id); }
  };
  /// Samples waiting for their request id's report; the keys view the ids in the waiting frames.
  std::unordered_map<std::string_view, Wait*> waiters_;
  /// Reports that arrived before their sample started waiting (the result may be reported before
  /// the answer to asample is read); forgotten after a few minutes.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point, IdHash, std::equal_to<>> unclaimed_;
};

/// One sample's wait for its request's report, held in the waiting coroutine's own frame (no
/// coroutine of its own: a wait is one per sample, and each frame is an allocation):
///
///   CompletionWatcher::Wait wait(*watcher, request_id);
///   if (wait.pending()) co_await wait.timer().async_wait(asio::as_tuple(asio::deferred));
///   switch (wait.outcome()) { ... }
///
/// The poller's report, the batched mode turned off, and a cancellation of the awaiting coroutine
/// each wake it. Registered with the watcher from construction to destruction, so the watcher never
/// points at a dead frame (also when the frame is destroyed suspended, at io_context teardown).
/// `request_id` is borrowed: the caller's frame keeps it alive as long as the Wait.
class CompletionWatcher::Wait {
 public:
  Wait(CompletionWatcher& watcher, std::string_view request_id);
  Wait(const Wait&) = delete;
  Wait& operator=(const Wait&) = delete;
  ~Wait();

  /// False when the outcome was known at once (reported before, or the batched mode is off).
  bool pending() const noexcept { return timer_.has_value(); }
  /// What to await while pending(): cancelled to wake the wait.
  boost::asio::steady_timer& timer() noexcept { return *timer_; }
  /// How the wait ended (once the timer's wait completed, or when not pending()).
  CompletionWait outcome() const noexcept;

 private:
  friend class CompletionWatcher;

  /// Wakes the wait; the caller (the watcher) erases it from waiters_.
  void wake_unregistered();

  std::shared_ptr<CompletionWatcher> watcher_;
  std::string_view request_id_;
  std::optional<boost::asio::steady_timer> timer_;
  bool registered_ = false;  ///< in the watcher's waiters_
  bool reported_ = false;
};

}  // namespace tinker::client::sampling
