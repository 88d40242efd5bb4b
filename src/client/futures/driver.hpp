// Drives a FutureCore from the server: spawns the retrieve_future poll (doc/protocol.md#futures) of one or
// several tickets on the client's io thread, decodes the final answer(s) and settles the core.
//
// Each poll is a background task of the holder (ServiceClient shutdown cancels it) and can be
// stopped through Future::cancel(). Queue-state changes reach the future's callback; the
// paused-queue warning (at most once a minute per future, doc/protocol.md#futures) goes to the holder's log.
#pragma once

#include "client/futures/core.hpp"
#include "client/futures/poll.hpp"
#include "client/handles.hpp"
#include "client/session/holder.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace tinker::client::futures {

/// Turns the final answer of a poll into the future's value.
using ResultDecoder = std::function<boost::system::error_code(const http::Response& answer, detail::ErasedResult& value,
                                                              diagnostics& diag)>;
/// Turns the final answers of several polls (in request order) into the future's value.
using ResultCombiner = std::function<boost::system::error_code(std::vector<http::Response>& answers,
                                                               detail::ErasedResult& value, diagnostics& diag)>;

/// Settles `core`: with `error` if set, else with what `decode(value, diag)` makes of the answer, a
/// result stamped `settled_at` (a producer that read the clock as the answer arrived passes that read).
template <class Decode>
void settle_with(detail::FutureCore& core, boost::system::error_code error, diagnostics diag, Decode&& decode,
                 detail::FutureCore::Clock::time_point settled_at = detail::FutureCore::Clock::now()) {
  if (error) {
    core.set_error(error, std::move(diag));
    return;
  }
  detail::ErasedResult value;
  diagnostics decode_diag;
  if (auto ec = decode(value, decode_diag)) {
    core.set_error(ec, std::move(decode_diag));
    return;
  }
  core.set_result(std::move(value), settled_at);
}

/// Fills in the parts of a PollRequest that come from the holder and the future: the
/// queue-state observer, the warning sink, the billing pause. `holder` and `core` must outlive
/// the poll (the task running it owns them).
void attach(PollRequest& request, detail::ClientHolder& holder, const std::shared_ptr<detail::FutureCore>& core);

/// When the first poll is sent: at once, or once FutureCore::start() was called (by a wait, or
/// by the training client when its next operation has submitted), at the latest after 1 s.
enum class PollStart { immediately, deferred };

/// Polls one ticket and settles `core` with `decode`'s value or the poll's error.
void spawn_poll(std::shared_ptr<detail::ClientHolder> holder, std::shared_ptr<detail::FutureCore> core,
                PollRequest request, ResultDecoder decode, PollStart when = PollStart::immediately);

/// Polls all tickets concurrently (doc/protocol.md#futures) and settles `core` with `combine`'s value or the
/// first error.
void spawn_poll_all(std::shared_ptr<detail::ClientHolder> holder, std::shared_ptr<detail::FutureCore> core,
                    std::vector<PollRequest> requests, ResultCombiner combine, PollStart when = PollStart::immediately);

/// The cancellation signal of one background task, shared by its hooks. Emitted only on the io
/// thread (Future::cancel posts its hook there; shutdown runs there).
class TaskControl final : public detail::RegisteredTask {
 public:
  TaskControl() = default;
  boost::asio::cancellation_signal signal;
  bool finished = false;
  void cancel() {
    if (!finished) signal.emit(boost::asio::cancellation_type::terminal);
  }
  void cancel_task() override { cancel(); }
};

/// Runs `work` as a background task of the holder whose cancellation (Future::cancel,
/// ServiceClient shutdown) reaches it through its cancellation slot. `work` must settle `core`.
void spawn_task(std::shared_ptr<detail::ClientHolder> holder, std::shared_ptr<detail::FutureCore> core,
                boost::asio::awaitable<void> work);
/// A background task that is its own outermost coroutine (the sampler's: no wrapper frame), with
/// a control made by the caller, which the task may also use to cancel itself (the sampling stuck
/// detector emits its signal). Callable from any thread. The task's first statement, on the io
/// thread, must be a TaskScope: it registers there with the holder (ServiceClient shutdown
/// cancels it) and installs the future's cancel hook. For a task that hands out its future
/// itself (a Future::cancel before that cannot happen).
void spawn_own_task(const boost::asio::any_io_executor& executor, TaskControl& control,
                    boost::asio::awaitable<void> task);

/// The registration of a background task, held in its frame (spawn_own_task's task makes it;
/// spawn_task's wrapper holds one for the work it runs). Its destructor takes
/// the hooks back, also when the frame is destroyed without finishing (an io_context shut down
/// with the task suspended): they point at the control, which goes with the frame.
class TaskScope {
 public:
  /// Says the task is registered already.
  class Registered {};

  /// Registers the task (io thread).
  TaskScope(detail::ClientHolder& holder, detail::FutureCore& core, TaskControl& control);
  /// Takes over the registration that spawn_task made before the task started.
  TaskScope(detail::ClientHolder& holder, detail::FutureCore& core, TaskControl& control, const Registered&);
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;
  ~TaskScope();

  /// In a catch block of the task: settles the core with what escaped (a co_await begun after a
  /// cancellation is a cancellation, any other system error a connection failure).
  void fail_with_current_exception();
  /// The task's last statement: a task that ended without settling its core fails it.
  void finish();

 private:
  detail::ClientHolder& holder_;
  detail::FutureCore& core_;
  TaskControl& control_;
};

}  // namespace tinker::client::futures
