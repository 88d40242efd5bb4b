#include "client/futures/driver.hpp"

#include "core/types/exception_error.hpp"
#include "http/observer.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <optional>

namespace tinker::client::futures {

namespace {

namespace asio = boost::asio;

// Io thread: registers the task with the holder (ServiceClient shutdown cancels it) and makes
// Future::cancel cancel it too. The hook holds a plain
// pointer (small enough for std::function to store without an allocation): the task owns
// `control` until it unregisters, and the core drops its hook when it settles, which the task
// makes sure of before it ends.
void register_cancellable(ClientHolder& holder, FutureCore& core, TaskControl& control) {
  TaskControl* task = &control;
  holder.register_task(control);
  core.set_cancel_hook([task] { task->cancel(); });
}

// What escapes a background task: a co_await begun after a cancellation is a cancellation, any
// other system error a connection failure, anything else our own fault.
detail::ExceptionMapping task_exceptions() {
  detail::ExceptionMapping mapping;
  mapping.aborted = errc::cancelled;
  mapping.aborted_message = "waiting for the result was cancelled";
  mapping.system_error = errc::connection_failed;
  mapping.other_prefix = "internal error while waiting for the result: ";
  return mapping;
}

asio::awaitable<void> run_task(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core,
                               std::shared_ptr<TaskControl> control, asio::awaitable<void> work) {
  TaskScope scope(*holder, *core, *control, TaskScope::Registered());
  try {
    co_await std::move(work);
  } catch (const std::exception&) {
    scope.fail_with_current_exception();
  }
  scope.finish();
}

// Choice: a deferred first poll waits at most this long for its start signal, so a result
// nobody awaits is still fetched (doc/protocol.md#futures: the SDK polls even if nobody awaits).
constexpr std::chrono::milliseconds deferred_start_fallback{1000};

asio::awaitable<void> poll_one(ClientHolder& holder, std::shared_ptr<FutureCore> core, PollRequest request,
                               ResultDecoder decode, PollStart when) {
  if (when == PollStart::deferred) co_await core->wait_for_start(deferred_start_fallback);
  PollOutcome outcome = co_await poll_future(holder.http(), std::move(request));
  settle_with(*core, outcome.error, std::move(outcome.diag),
              [&](ErasedResult& value, diagnostics& diag) { return decode(outcome.result, value, diag); });
}

asio::awaitable<void> poll_many(ClientHolder& holder, std::shared_ptr<FutureCore> core,
                                std::vector<PollRequest> requests, ResultCombiner combine, PollStart when) {
  if (when == PollStart::deferred) co_await core->wait_for_start(deferred_start_fallback);
  CombinedOutcome outcome = co_await poll_all(holder.http(), std::move(requests));
  settle_with(*core, outcome.error, std::move(outcome.diag),
              [&](ErasedResult& value, diagnostics& diag) { return combine(outcome.results, value, diag); });
}

}  // namespace

// Plain pointers in the callbacks (no allocation for the std::functions): the task that runs
// the poll owns the holder and the core until the poll has ended.
void attach(PollRequest& request, ClientHolder& holder, const std::shared_ptr<FutureCore>& core) {
  FutureCore* observed = core.get();
  request.on_queue_state = [observed](const QueueStateReport& report) {
    observed->note_queue_state(report.state, report.reason);
  };
  ClientHolder* logger = &holder;
  request.warn = [logger](const std::string& line) { logger->log(LogLevel::warning, line); };
  request.billing = &holder.billing();
  if (holder.observer().watches_events()) request.observer = &holder.observer();
  request.response_budget = &holder.response_budget();
  request.billing_max_pause = std::chrono::seconds(holder.config().billing_exception_max_pause_duration_sec);
}

void spawn_task(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core, asio::awaitable<void> work) {
  auto control = std::make_shared<TaskControl>();
  register_cancellable(*holder, *core, *control);
  auto executor = holder->executor();
  asio::co_spawn(executor, run_task(std::move(holder), std::move(core), control, std::move(work)),
                 asio::bind_cancellation_slot(control->signal.slot(), asio::detached));
}

void spawn_own_task(const asio::any_io_executor& executor, TaskControl& control, asio::awaitable<void> task) {
  asio::co_spawn(executor, std::move(task), asio::bind_cancellation_slot(control.signal.slot(), asio::detached));
}

TaskScope::TaskScope(ClientHolder& holder, FutureCore& core, TaskControl& control)
    : holder_(holder), core_(core), control_(control) {
  register_cancellable(holder, core, control);
}

TaskScope::TaskScope(ClientHolder& holder, FutureCore& core, TaskControl& control, const Registered&)
    : holder_(holder), core_(core), control_(control) {}

// Takes the task's hooks back when its coroutine ends, also when the frame is destroyed without
// finishing (an io_context shut down with the task suspended): they point at the control, which
// goes with the frame.
TaskScope::~TaskScope() {
  control_.finished = true;
  core_.set_cancel_hook(nullptr);  // settle() dropped it already, unless the task never finished
  holder_.unregister_task(control_);
}

void TaskScope::fail_with_current_exception() {
  diagnostics diag;
  const boost::system::error_code ec = detail::current_exception_error(diag, task_exceptions());
  core_.set_error(ec, std::move(diag));
}

void TaskScope::finish() {
  if (core_.ready()) return;
  diagnostics diag;
  diag.message = "the operation's background task ended without a result";
  core_.set_error(make_error_code(errc::cancelled), diag);
}

void spawn_poll(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core, PollRequest request,
                ResultDecoder decode, PollStart when) {
  attach(request, *holder, core);
  auto work = poll_one(*holder, core, std::move(request), std::move(decode), when);
  spawn_task(std::move(holder), std::move(core), std::move(work));
}

void spawn_poll_all(std::shared_ptr<ClientHolder> holder, std::shared_ptr<FutureCore> core,
                    std::vector<PollRequest> requests, ResultCombiner combine, PollStart when) {
  for (auto& request : requests) attach(request, *holder, core);
  auto work = poll_many(*holder, core, std::move(requests), std::move(combine), when);
  spawn_task(std::move(holder), std::move(core), std::move(work));
}

}  // namespace tinker::client::futures
