// The batched long-poll of a SamplingClient's results (completions.hpp).
#include "client/sampling/completions.hpp"

#include "core/wire/completions_reader.hpp"
#include "core/wire/endpoint_paths.hpp"
#include "http/client.hpp"
#include "http/clock.hpp"

#include <tinker/codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>
#include <vector>

namespace tinker::client::sampling {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// The server holds a retrieve_futures poll this long at most when nothing is new (the protocol's
// ~30 s); the read timeout (ClientOptions::timeouts.retrieve_future, 45 s) covers it.
constexpr double long_poll_seconds = 30.0;
// After a failed poll (doc/protocol.md#batched-sampling-results).
constexpr std::chrono::seconds poll_error_pause{1};
// A report whose sample never came to wait for it (its attempt was abandoned) is dropped after this.
constexpr std::chrono::minutes unclaimed_lifetime{5};

http::Request completions_poll(const std::string& sampling_session_id, std::int64_t cursor,
                               const ClientOptions& options) {
  http::Request poll(http::Method::post, http::RequestPath::constant(wire::paths::retrieve_futures.full()),
                     http::PoolKind::futures);
  // cloned_sampler_id = seq_id / 1'000'000'000: this SDK's samplers number their requests from 0.
  const FuturesRetrieveRequest body(SamplingSessionFuturesTarget(sampling_session_id, 0), cursor, long_poll_seconds);
  poll.body = to_json(body);
  poll.content_type = "application/json";
  poll.max_retries = 0;  // the poller's own 1 s pause is its retry
  poll.timeout = options.timeouts.retrieve_future;
  return poll;
}

// 404 and 405: the server turned the flag on but does not serve the endpoint.
bool endpoint_missing(int status) noexcept {
  return status == 404 || status == 405;
}

}  // namespace

CompletionWatcher::CompletionWatcher(std::shared_ptr<detail::ClientHolder> holder, std::string sampling_session_id)
    : holder_(std::move(holder)), sampling_session_id_(std::move(sampling_session_id)) {}

bool CompletionWatcher::enabled() const {
  return !disabled_ && holder_->config().sample_use_retrieve_futures.value_or(false);
}

void CompletionWatcher::cancel_task() {
  stop_poller();
}

// Emitted only while the poller's frame (which owns the signal) lives.
void CompletionWatcher::stop_poller() {
  if (poller_running_ && poller_signal_ != nullptr) poller_signal_->emit(asio::cancellation_type::terminal);
}

CompletionWatcher::Wait::Wait(CompletionWatcher& watcher, std::string_view request_id)
    : watcher_(watcher.shared_from_this()), request_id_(request_id) {
  if (watcher.disabled_) return;
  if (const auto early = watcher.unclaimed_.find(request_id); early != watcher.unclaimed_.end()) {
    watcher.unclaimed_.erase(early);
    reported_ = true;
    return;
  }
  timer_.emplace(watcher.holder_->executor(), asio::steady_timer::time_point::max());
  watcher.waiters_.emplace(request_id_, this);
  registered_ = true;
  watcher.ensure_poller();
}

CompletionWatcher::Wait::~Wait() {
  if (!registered_) return;
  watcher_->waiters_.erase(request_id_);
  // Nobody left to report to: the poller's wait is pointless.
  if (watcher_->unreported() == 0) watcher_->stop_poller();
}

// The watcher takes the wait out of waiters_ itself: the destructor then has nothing to erase.
void CompletionWatcher::Wait::wake_unregistered() {
  timer_->cancel();
  registered_ = false;
}

CompletionWait CompletionWatcher::Wait::outcome() const noexcept {
  if (reported_) return CompletionWait::reported;
  return watcher_->disabled_ ? CompletionWait::fallback : CompletionWait::cancelled;
}

void CompletionWatcher::ensure_poller() {
  if (poller_running_ || disabled_) return;
  poller_running_ = true;
  auto signal = std::make_shared<asio::cancellation_signal>();
  poller_signal_ = signal.get();
  const asio::cancellation_slot slot = signal->slot();
  asio::co_spawn(holder_->executor(), run_poller(shared_from_this(), holder_, std::move(signal)),
                 asio::bind_cancellation_slot(slot, asio::detached));
}

void CompletionWatcher::deliver(std::string_view request_id) {
  if (const auto it = waiters_.find(request_id); it != waiters_.end()) {
    it->second->reported_ = true;
    it->second->wake_unregistered();
    waiters_.erase(it);
    return;
  }
  unclaimed_.insert_or_assign(std::string(request_id), std::chrono::steady_clock::now());
}

void CompletionWatcher::release_all() {
  disabled_ = true;
  for (auto& [id, waiter] : waiters_) waiter->wake_unregistered();
  waiters_.clear();
  unclaimed_.clear();
}

void CompletionWatcher::forget_old_unclaimed(std::chrono::steady_clock::time_point now) {
  std::erase_if(unclaimed_, [now](const auto& entry) { return now - entry.second > unclaimed_lifetime; });
}

namespace {

// Registers the poller as a background task of the holder for as long as its frame lives (ServiceClient
// shutdown cancels it), and says it stopped however the frame ends.
class PollerScope {
 public:
  PollerScope(detail::ClientHolder& holder, detail::RegisteredTask& task, bool& running,
              asio::cancellation_signal*& signal)
      : holder_(holder), task_(task), running_(running), signal_(signal) {
    holder_.register_task(task_);
  }
  PollerScope(const PollerScope&) = delete;
  PollerScope& operator=(const PollerScope&) = delete;
  ~PollerScope() {
    running_ = false;
    signal_ = nullptr;
    holder_.unregister_task(task_);
  }

 private:
  detail::ClientHolder& holder_;
  detail::RegisteredTask& task_;
  bool& running_;
  asio::cancellation_signal*& signal_;
};

}  // namespace

asio::awaitable<void> CompletionWatcher::run_poller(std::shared_ptr<CompletionWatcher> self,
                                                    std::shared_ptr<detail::ClientHolder> holder,
                                                    std::shared_ptr<asio::cancellation_signal> signal) {
  const PollerScope scope(*holder, *self, self->poller_running_, self->poller_signal_);
  (void)signal;  // kept alive by this frame
  http::HttpClient& client = holder->http();
  std::vector<wire::PlainCompletion> completions;  // reused by every poll; views into its answer
  try {
    while (self->unreported() > 0 && !self->disabled_) {
      const http::Request poll = completions_poll(self->sampling_session_id_, self->cursor_, client.options());
      ++self->polls_sent_;
      diagnostics diag;
      auto [ec, answer] = co_await client.send(poll, &diag);
      if (ec == errc::cancelled) break;
      FuturesRetrieveResponse decoded;  // holds the strings when the schema decoder read the answer
      std::int64_t cursor = 0;
      if (!ec && wire::read_completions(answer.body, completions, cursor, decoded)) {
        self->cursor_ = cursor;
        // Finished and failed both mean "fetch it": retrieve_future returns the result or the error.
        // A state this SDK does not know is skipped; its request keeps waiting for a known one.
        for (const wire::PlainCompletion& completion : completions) {
          if (completion.state == "finished" || completion.state == "failed") self->deliver(completion.request_id);
        }
        self->forget_old_unclaimed(std::chrono::steady_clock::now());
        continue;
      }
      if (ec && endpoint_missing(answer.status)) {
        holder->log(LogLevel::warning, "the server announced sample_use_retrieve_futures but answered HTTP " +
                                           std::to_string(answer.status) +
                                           " to retrieve_futures: polling each sample's result instead");
        self->release_all();
        break;
      }
      client.tally().note_retry();
      if (co_await http::sleep_for(client.clock(), poll_error_pause)) break;  // cancelled
    }
  } catch (const std::exception&) {
    // A co_await begun after a cancellation throws: the poller stops, as asked.
  }
}

}  // namespace tinker::client::sampling
