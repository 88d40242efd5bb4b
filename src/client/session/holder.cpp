// ClientHolder: creation and option checks, log, counters, task registry, telemetry queueing
// and shutdown. Bootstrap is in bootstrap.cpp, the background loops in loops.cpp.
#include "client/session/holder.hpp"

#include "client/session/holder_impl.hpp"
#include "client/session/telemetry_report.hpp"
#include "http/headers.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <vector>

namespace tinker::client::session {

namespace asio = boost::asio;

asio::awaitable<boost::system::error_code> join_flight(std::shared_ptr<Flight> flight, diagnostics& diag) {
  while (!flight->done) {
    auto [ec] = co_await flight->done_timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!flight->done) {
      diag.clear();
      diag.message = "cancelled while waiting for the client's bootstrap";
      co_return make_error_code(errc::cancelled);
    }
    (void)ec;
  }
  diag = flight->diag;
  co_return flight->ec;
}

}  // namespace tinker::client::session

namespace tinker::detail {

namespace asio = boost::asio;

ClientHolder::Impl::Impl(asio::any_io_executor executor_, ServiceClientOptions options_)
    : executor(std::move(executor_)),
      options(std::move(options_)),
      observer(std::make_shared<http::Observer>(options.log ? options.log : stderr_log_sink(options.client.log_level),
                                                options.client.log_level, options.on_event)),
      http(std::make_unique<http::HttpClient>(executor, options.client)),
      auth_http(std::make_unique<http::HttpClient>(executor, options.client)),
      lifetime(std::make_shared<client::session::Lifetime>(executor)) {
  http->set_observer(observer);
  auth_http->set_observer(observer);
  if (options.client.telemetry_enabled) {
    telemetry = std::make_shared<client::session::TelemetryState>(executor);
    telemetry->sessionless_id = "sessionless-" + http::uuid4();
  }
}

std::string ClientHolder::Impl::current_session_id() const {
  std::lock_guard lock(session_mutex);
  return session_id;
}

namespace {

ServiceClientOptions checked(ServiceClientOptions options) {
  // doc/protocol.md#authentication: the credential command may come from the environment even when the options were
  // built in code.
  if (!options.client.credential_command || options.client.credential_command->empty()) {
    if (const char* command = std::getenv("TINKER_CREDENTIAL_CMD"); command != nullptr && *command != '\0') {
      options.client.credential_command = command;
    }
  }
  // The Python SDK reads TINKER_PROJECT_ID whenever no project is given (doc/service.md#sessions), not only when the
  // options come from the environment.
  if (!options.client.project_id) {
    if (const char* project = std::getenv("TINKER_PROJECT_ID"); project != nullptr && *project != '\0') {
      options.client.project_id = project;
    }
  }
  options.client.validate(/*require_credential=*/true);  // never quotes the key
  return options;
}

}  // namespace

std::shared_ptr<ClientHolder> ClientHolder::create(asio::any_io_executor executor, ServiceClientOptions options) {
  auto impl = std::make_unique<Impl>(executor, checked(std::move(options)));
  return std::shared_ptr<ClientHolder>(new ClientHolder(std::move(impl)));
}

ClientHolder::ClientHolder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ClientHolder::~ClientHolder() {
  shutdown();
}

asio::any_io_executor ClientHolder::executor() const noexcept {
  return impl_->executor;
}

asio::any_io_executor holder_executor(const ClientHolder& holder) noexcept {
  return holder.executor();
}

http::HttpClient& ClientHolder::http() noexcept {
  return *impl_->http;
}

const ServiceClientOptions& ClientHolder::options() const noexcept {
  return impl_->options;
}

bool ClientHolder::log_enabled(LogLevel level) const noexcept {
  return impl_->observer->logs(level);
}

void ClientHolder::log(LogLevel level, std::string_view message) const {
  impl_->observer->log(level, message);  // redacted; a failing sink is ignored
}

http::Observer& ClientHolder::observer() const noexcept {
  return *impl_->observer;
}

void ClientHolder::set_timing(Timing timing) {
  impl_->timing = timing;
}

const ClientHolder::Timing& ClientHolder::timing() const noexcept {
  return impl_->timing;
}

const ClientConfigResponse& ClientHolder::config() const noexcept {
  static const ClientConfigResponse defaults;
  return impl_->config ? *impl_->config : defaults;
}

std::string ClientHolder::session_id() const {
  return impl_->current_session_id();
}

std::int64_t ClientHolder::next_model_seq_id() noexcept {
  return impl_->model_seq.fetch_add(1);
}

std::int64_t ClientHolder::next_sampling_seq_id() noexcept {
  return impl_->sampling_seq.fetch_add(1);
}

api::CallRetrySettings ClientHolder::retry_call() noexcept {
  api::CallRetrySettings settings;
  settings.billing = &impl_->billing;
  settings.warn = [this](std::string_view line) { log(LogLevel::warning, line); };
  if (impl_->config) {
    settings.billing_max_pause = std::chrono::seconds(impl_->config->billing_exception_max_pause_duration_sec);
  }
  return settings;
}

api::BillingPause& ClientHolder::billing() noexcept {
  return impl_->billing;
}

client::async::ByteBudget& ClientHolder::fwdbwd_budget() {
  if (!impl_->fwdbwd_budget) {
    const ClientConfigResponse defaults;
    const auto& flags = impl_->config ? *impl_->config : defaults;
    impl_->fwdbwd_budget =
        std::make_unique<client::async::ByteBudget>(impl_->executor, flags.fwdbwd_dispatch_bytes_semaphore_size);
  }
  return *impl_->fwdbwd_budget;
}

client::async::ByteBudget& ClientHolder::response_budget() {
  if (!impl_->response_budget) {
    const ClientConfigResponse defaults;
    const auto& flags = impl_->config ? *impl_->config : defaults;
    impl_->response_budget =
        std::make_unique<client::async::ByteBudget>(impl_->executor, flags.inflight_response_bytes_semaphore_size);
  }
  return *impl_->response_budget;
}

client::sampling::SampleDispatch& ClientHolder::sample_dispatch() {
  if (!impl_->sample_dispatch) {
    const ClientConfigResponse defaults;
    const auto& flags = impl_->config ? *impl_->config : defaults;
    const client::sampling::SampleTuning& tuning = impl_->sample_tuning;
    const ClientOptions& client = impl_->options.client;
    // Keyed by the configured credential (not a JWT exchanged for it, which changes hourly).
    const std::string credential =
        client.api_key.empty() ? client.credential_command.value_or("") : client.api_key.reveal();
    impl_->sample_dispatch = std::make_unique<client::sampling::SampleDispatch>(
        impl_->executor, tuning, tuning.dispatch_bytes.value_or(flags.sample_dispatch_bytes_semaphore_size),
        client::sampling::shared_sample_backoff(client.base_url, credential));
  }
  return *impl_->sample_dispatch;
}

void ClientHolder::set_sample_tuning(client::sampling::SampleTuning tuning) {
  impl_->sample_tuning = tuning;
}

const client::sampling::SampleTuning& ClientHolder::sample_tuning() const noexcept {
  return impl_->sample_tuning;
}

void ClientHolder::register_task(RegisteredTask& task) {
  task.previous_ = impl_->last_task;
  task.next_ = nullptr;
  (impl_->last_task != nullptr ? impl_->last_task->next_ : impl_->first_task) = &task;
  impl_->last_task = &task;
  task.registered_ = true;
  if (impl_->shutting_down) {
    // Too late to run: cancelled, but never inside the caller's own call (the task has not
    // suspended yet, so nothing would hear it), and only if it has not ended by then.
    asio::post(impl_->executor, [weak = weak_from_this()] {
      if (std::shared_ptr<ClientHolder> self = weak.lock()) self->cancel_registered_tasks();
    });
  }
}

void ClientHolder::unregister_task(RegisteredTask& task) noexcept {
  if (!task.registered_) return;
  (task.previous_ != nullptr ? task.previous_->next_ : impl_->first_task) = task.next_;
  (task.next_ != nullptr ? task.next_->previous_ : impl_->last_task) = task.previous_;
  task.previous_ = task.next_ = nullptr;
  task.registered_ = false;
}

void ClientHolder::cancel_registered_tasks() noexcept {
  // Each task leaves the list before it is cancelled: a cancellation that ends other tasks at
  // once (they unregister themselves) never leaves the walk on a dangling link.
  while (RegisteredTask* task = impl_->first_task) {
    unregister_task(*task);
    try {
      task->cancel_task();
    } catch (...) {
      // One task failing to cancel must not keep the others running.
    }
  }
}

bool ClientHolder::shutting_down() const noexcept {
  return impl_->shutting_down;
}

void ClientHolder::telemetry(TelemetryEvent event) {
  const std::shared_ptr<client::session::TelemetryState>& state = impl_->telemetry;
  if (!state || impl_->shutting_down) return;
  if (event.event_id.empty()) event.event_id = http::uuid4();
  if (event.timestamp == Timestamp{}) {
    event.timestamp = std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  }
  event.event_session_index = state->next_index++;
  const bool urgent = event.severity >= Severity::error;  // doc/protocol.md#telemetry: flush at once on errors
  if (!state->queue.push(std::move(event))) {
    if (!state->overflow_warned) {
      state->overflow_warned = true;
      log(LogLevel::warning, "telemetry queue is full (10000 events): dropping events");
    }
    return;
  }
  state->overflow_warned = false;
  if (urgent) flush_telemetry();
}

void ClientHolder::flush_telemetry() {
  const std::shared_ptr<client::session::TelemetryState>& state = impl_->telemetry;
  if (!state) return;
  state->flush_requested = true;
  state->wake->cancel();
}

void ClientHolder::shutdown() {
  Impl& impl = *impl_;
  if (impl.shutting_down) return;
  // An orderly end of the session is reported as Python reports a fatal one (doc/protocol.md#telemetry).
  if (impl.config.has_value()) client::session::report_session_end(*this);
  // doc/service.md#finishing-a-session: a session not finished yet is finished now, once, with the
  // reason the ServiceClient left (success, or errored when an exception destroyed it), on servers
  // that know finish_session (they name sample_use_retrieve_futures in client/config).
  std::optional<FinishSessionRequest> finish;
  if (impl.config.has_value() && impl.config->sample_use_retrieve_futures.has_value()) {
    finish = client::session::begin_finish(*this, impl.shutdown_finish_reason, std::nullopt);
  }
  impl.shutting_down = true;
  impl.lifetime->stop();  // heartbeat, JWT refresh and telemetry loops end; their requests are cancelled
  if (impl.heartbeat_lifetime) impl.heartbeat_lifetime->stop();
  if (impl.config_flight) impl.config_flight->done_timer.cancel();
  if (impl.session_flight) impl.session_flight->done_timer.cancel();
  if (impl.refresh_flight) impl.refresh_flight->done_timer.cancel();

  cancel_registered_tasks();

  // What telemetry has queued (and a batch the loop still has in flight) is sent without
  // waiting for it, within the telemetry timeout; that coroutine then shuts the HTTP clients
  // down. Not from the destructor: nothing may keep a dying holder alive.
  const bool flush =
      impl.telemetry && (!impl.telemetry->queue.empty() || impl.telemetry->sending) && impl.config.has_value();
  std::shared_ptr<ClientHolder> self = weak_from_this().lock();
  if ((flush || finish) && self) {
    // Both run side by side, each within its own deadline; the last to end shuts the HTTP clients down.
    impl.final_tasks = (flush ? 1 : 0) + (finish ? 1 : 0);
    if (finish) {
      asio::co_spawn(impl.executor, client::session::finish_at_shutdown(self, std::move(*finish)), asio::detached);
    }
    if (flush) {
      asio::co_spawn(impl.executor, client::session::final_telemetry_flush(self, impl.telemetry), asio::detached);
    }
    return;
  }
  impl.http->shutdown();
  impl.auth_http->shutdown();
}

}  // namespace tinker::detail

namespace tinker::client::session {

void end_final_task(ClientHolder& holder) {
  ClientHolder::Impl& impl = holder.impl();
  if (--impl.final_tasks > 0) return;
  impl.http->shutdown();
  impl.auth_http->shutdown();
}

}  // namespace tinker::client::session
