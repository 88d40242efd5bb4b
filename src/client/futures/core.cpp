#include "client/futures/core.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::detail {
namespace {

namespace asio = boost::asio;

// Completes `handler` on its own executor after clearing its cancellation slot. Always called
// through a post, so a waiter never completes inside the call that started the wait.
void finish_waiter(Handler<ErasedResult> handler, boost::system::error_code code, ErasedResult result) {
  auto slot = handler.get_cancellation_slot();
  if (slot.is_connected()) slot.clear();
  asio::dispatch(asio::append(std::move(handler), code, std::move(result)));
}

}  // namespace

FutureCore::FutureCore(asio::any_io_executor executor, std::string request_id, Clock::time_point submitted)
    : executor_(std::move(executor)), request_id_(std::move(request_id)), submitted_(submitted) {
  if (const auto* io = executor_.target<asio::io_context::executor_type>()) io_context_ = &io->context();
}

void FutureCore::set_result(ErasedResult result) {
  settle({}, {}, std::move(result), Clock::now());
}

void FutureCore::set_result(ErasedResult result, Clock::time_point settled_at) {
  settle({}, {}, std::move(result), settled_at);
}

void FutureCore::set_error(boost::system::error_code code, diagnostics diag) {
  if (diag.request_id.empty()) {
    std::lock_guard lock(mutex_);
    diag.request_id = request_id_;
  }
  settle(code, std::move(diag), nullptr, Clock::now());
}

void FutureCore::set_request_id(std::string request_id) {
  std::lock_guard lock(mutex_);
  request_id_ = std::move(request_id);
}

void FutureCore::note_queue_state(QueueState state, std::optional<std::string> reason) {
  QueueStateCallback callback;
  QueueStateChange change;
  {
    std::lock_guard lock(mutex_);
    if (state == queue_state_ && reason == queue_state_reason_) return;
    queue_state_ = state;
    queue_state_reason_ = reason;
    callback = callback_;
    change = QueueStateChange(state, std::move(reason),
                              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - submitted_));
  }
  if (callback) callback(change);
}

void FutureCore::set_cancel_hook(std::function<void()> hook) {
  bool cancel_now = false;
  {
    std::lock_guard lock(mutex_);
    cancel_hook_ = std::move(hook);
    cancel_now = cancel_requested_ && !ready_;
  }
  if (cancel_now) cancel();
}

bool FutureCore::ready() const {
  std::lock_guard lock(mutex_);
  return ready_;
}

void FutureCore::settle(boost::system::error_code code, diagnostics diag, ErasedResult result,
                        Clock::time_point settled_at) {
  boost::container::small_vector<Waiter, 1> waiters;
  {
    std::lock_guard lock(mutex_);
    if (ready_) return;
    ready_ = true;
    code_ = code;
    diag_ = std::move(diag);
    result_ = std::move(result);
    settled_at_ = settled_at;
    cancel_hook_ = nullptr;
    waiters.swap(waiters_);
    for (auto& waiter : waiters) {
      if (code_ && waiter.diag != nullptr) *waiter.diag = diag_;
    }
  }
  settled_.notify_all();
  for (auto& waiter : waiters) {
    asio::post(executor_, [handler = std::move(waiter.handler), code, result = result_]() mutable {
      finish_waiter(std::move(handler), code, std::move(result));
    });
  }
}

void FutureCore::start() {
  {
    std::lock_guard lock(mutex_);
    if (start_requested_ || ready_) return;
    start_requested_ = true;
  }
  asio::post(executor_, [self = shared_from_this()] {
    if (self->start_timer_ != nullptr) self->start_timer_->cancel();
  });
}

asio::awaitable<void> FutureCore::wait_for_start(std::chrono::milliseconds fallback) {
  {
    std::lock_guard lock(mutex_);
    if (start_requested_) co_return;
  }
  asio::steady_timer timer(executor_, fallback);
  start_timer_ = &timer;
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  (void)ec;  // started, fell back, or cancelled: the poll that follows sees a cancellation itself
  start_timer_ = nullptr;
}

void FutureCore::async_wait(diagnostics* diag, Handler<ErasedResult> handler) {
  start();
  std::unique_lock lock(mutex_);
  if (ready_) {
    if (code_ && diag != nullptr) *diag = diag_;
    auto code = code_;
    auto result = result_;
    lock.unlock();
    asio::post(executor_, [handler = std::move(handler), code, result = std::move(result)]() mutable {
      finish_waiter(std::move(handler), code, std::move(result));
    });
    return;
  }
  const std::uint64_t id = next_waiter_id_++;
  auto slot = handler.get_cancellation_slot();
  if (slot.is_connected()) {
    slot.assign([weak = weak_from_this(), id](asio::cancellation_type) {
      if (auto self = weak.lock()) self->cancel_waiter(id);
    });
  }
  waiters_.emplace_back(id, diag, std::move(handler));
}

// The wait of one consumer was cancelled: it completes with errc::cancelled; the producer and
// the other waiters go on (see include/tinker/future.hpp).
void FutureCore::cancel_waiter(std::uint64_t id) {
  std::unique_lock lock(mutex_);
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->id != id) continue;
    Waiter waiter = std::move(*it);
    waiters_.erase(it);
    if (waiter.diag != nullptr) {
      waiter.diag->clear();
      waiter.diag->request_id = request_id_;
      waiter.diag->message = "the wait for the result was cancelled; the operation goes on";
    }
    lock.unlock();
    asio::post(executor_, [handler = std::move(waiter.handler)]() mutable {
      finish_waiter(std::move(handler), make_error_code(errc::cancelled), nullptr);
    });
    return;
  }
}

bool FutureCore::on_io_thread() const {
  return io_context_ != nullptr && io_context_->get_executor().running_in_this_thread();
}

ErasedResult FutureCore::wait_blocking(std::optional<std::chrono::milliseconds> timeout) {
  start();
  {
    // A settled future can be read anywhere, even after its client and io_context are gone.
    std::lock_guard lock(mutex_);
    if (ready_) {
      if (code_) throw error(code_, diag_);
      return result_;
    }
  }
  if (on_io_thread()) {
    throw error(errc::invalid_argument,
                "Future::get() was called on the client's io thread, where it would wait forever; "
                "co_await async_get() there instead");
  }
  std::unique_lock lock(mutex_);
  if (timeout) {
    if (!settled_.wait_for(lock, *timeout, [this] { return ready_; })) {
      diagnostics diag;
      diag.request_id = request_id_;
      diag.message = "no result after " + std::to_string(timeout->count()) +
                     " ms; the operation goes on and its result can still be awaited";
      throw error(make_error_code(errc::timeout), diag);
    }
  } else {
    settled_.wait(lock, [this] { return ready_; });
  }
  if (code_) throw error(code_, diag_);
  return result_;
}

FutureStatus FutureCore::status() const {
  std::lock_guard lock(mutex_);
  FutureStatus status;
  status.request_id = request_id_;
  status.queue_state = queue_state_;
  status.queue_state_reason = queue_state_reason_;
  status.ready = ready_;
  const auto end = ready_ ? settled_at_ : Clock::now();
  status.waited = std::chrono::duration_cast<std::chrono::milliseconds>(end - submitted_);
  status.encode_time = cost.encode_time();
  status.body_bytes = cost.body_bytes();
  status.submit_time = cost.submit_time();
  return status;
}

void FutureCore::on_queue_state(QueueStateCallback callback) {
  std::lock_guard lock(mutex_);
  callback_ = std::move(callback);
}

void FutureCore::cancel() {
  {
    std::lock_guard lock(mutex_);
    if (ready_) return;
    cancel_requested_ = true;
    if (!cancel_hook_) return;  // set_cancel_hook will call back
  }
  // The hook belongs to the producer on the io thread.
  asio::post(executor_, [self = shared_from_this()] {
    std::function<void()> hook;
    {
      std::lock_guard lock(self->mutex_);
      if (self->ready_) return;
      hook = std::move(self->cancel_hook_);
      self->cancel_hook_ = nullptr;
    }
    if (hook) hook();
  });
}

// The free functions behind tinker::Future<T>.

void future_async_wait(const std::shared_ptr<FutureCore>& core, diagnostics* diag, Handler<ErasedResult> handler) {
  core->async_wait(diag, std::move(handler));
}

ErasedResult future_wait_blocking(const std::shared_ptr<FutureCore>& core,
                                  std::optional<std::chrono::milliseconds> timeout) {
  return core->wait_blocking(timeout);
}

FutureStatus future_status(const FutureCore& core) {
  return core.status();
}

void future_on_queue_state(FutureCore& core, QueueStateCallback callback) {
  core.on_queue_state(std::move(callback));
}

void future_cancel(FutureCore& core) {
  core.cancel();
}

}  // namespace tinker::detail
