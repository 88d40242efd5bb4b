// Engine construction, shutdown and the public entry points (which forward to Engine::Impl).
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace tinker::local {

std::chrono::system_clock::time_point EngineClock::now() const {
  return std::chrono::system_clock::now() + offset_;
}

Timestamp EngineClock::now_timestamp() const {
  return std::chrono::floor<std::chrono::microseconds>(now());
}

namespace engine_detail {

std::string exception_message(const std::exception& e) {
  if (const auto* te = dynamic_cast<const tinker::error*>(&e); te != nullptr && !te->diag().message.empty()) {
    return te->diag().message;
  }
  return e.what();
}

}  // namespace engine_detail

Engine::Impl::Impl(boost::asio::any_io_executor io_, const ServerOptions& options_,
                   std::shared_ptr<engine_detail::Backend> backend_)
    : io(io_), options(options_), backend(std::move(backend_)), sweep_timer(io_) {
  if (!backend->inline_compute()) pool.emplace(static_cast<std::size_t>(std::max(1, options.worker_threads)));
  data_dir = options.data_dir;
  if (data_dir.empty()) {
    // The Server normally chooses the directory; an engine used on its own gets a private one.
    data_dir = std::filesystem::temp_directory_path() / ("tinker-local-engine-" + ids.token());
    owns_data_dir = true;
  }
  std::filesystem::create_directories(data_dir / "checkpoints");
  store = engine_detail::CheckpointStore(data_dir / "checkpoints");
  for (const CatalogueEntry& entry : options.catalogue) backend->preload(entry);
  import_adapters();  // before the scan, which then indexes them like any checkpoint
  rescan_checkpoints();
  schedule_sweep();
}

Engine::Impl::~Impl() {
  shutdown();
  alive.reset();
  if (owns_data_dir) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir, ec);
  }
}

void Engine::Impl::shutdown() {
  if (shutting_down) return;
  shutting_down = true;
  sweep_timer.cancel();
  for (auto* timer : pause_timers) timer->cancel();
  // Waiting polls wake up and answer try_again (PollSettings::shutting_down stops new waits).
  for (auto& [id, future] : futures) {
    for (auto* waiter : future->waiters) waiter->cancel();
  }
  for (auto& [id, sampler] : samplers) {
    for (auto* waiter : sampler->completions->waiters) waiter->cancel();
  }
  if (pool) {
    pool->stop();
    pool->join();
  }
}

namespace {
std::shared_ptr<engine_detail::Backend> backend_for(const ServerOptions& options, const LocalTokenizers& tokenizers) {
  if (options.null_model) return engine_detail::make_null_backend(options);
  if (tokenizers.empty()) {
    throw tinker::error(errc::invalid_configuration, "Engine: a tokenizer is required unless null_model");
  }
  return engine_detail::make_model_backend(tokenizers);
}
}  // namespace

Engine::Engine(boost::asio::any_io_executor io, const ServerOptions& options, const LocalTokenizers& tokenizers)
    : impl_(std::make_unique<Impl>(std::move(io), options, backend_for(options, tokenizers))) {}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<Engine> Engine::with_backend(boost::asio::any_io_executor io, const ServerOptions& options,
                                             std::shared_ptr<engine_detail::Backend> backend) {
  if (!backend) throw tinker::error(errc::invalid_configuration, "Engine::with_backend: backend is null");
  return std::unique_ptr<Engine>(new Engine(std::make_unique<Impl>(std::move(io), options, std::move(backend))));
}

Engine::~Engine() = default;

void Engine::shutdown() {
  impl_->shutdown();
}
EngineClock& Engine::clock() noexcept {
  return impl_->clock;
}
void Engine::set_queue_pause_hook(QueuePauseHook hook) {
  impl_->pause_hook = std::move(hook);
}

GetServerCapabilitiesResponse Engine::capabilities() const {
  GetServerCapabilitiesResponse response;
  for (const auto& entry : impl_->options.catalogue) {
    response.supported_models.emplace_back(entry.name, entry.max_context_length);
  }
  return response;
}

boost::asio::awaitable<RetrieveOutcome> Engine::retrieve(std::string request_id, bool allow_metadata_only,
                                                         bool accept_protobuf, Principal who) {
  engine_detail::FuturePtr future = impl_->future_for_poll(request_id, who);
  engine_detail::PollSettings settings = impl_->poll_settings();
  if (!future->done() && !settings.shutting_down && settings.hold.count() > 0) {
    // Long poll: the timer is cancelled when the future completes (or the engine shuts down).
    // After the wait only `future` and `settings` are used: the engine may be gone by then.
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::steady_timer timer(executor);
    timer.expires_after(settings.hold);
    future->waiters.push_back(&timer);
    auto token = boost::asio::as_tuple(boost::asio::use_awaitable);
    co_await timer.async_wait(token);
    std::erase(future->waiters, &timer);
  }
  co_return engine_detail::poll_answer(*future, allow_metadata_only, accept_protobuf, settings);
}

std::vector<ModelAudit> Engine::model_audit() const {
  std::vector<ModelAudit> audits;
  for (const auto& [id, model] : impl_->models) {
    if (model->status == engine_detail::ModelStatus::detached) continue;
    ModelAudit audit;
    audit.model_id = id;
    audit.applied_seq_ids = model->applied_seq_ids;
    audit.operations = model->applied_ops;
    audit.timings = model->applied_timings;
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < audit.applied_seq_ids.size(); ++i) {
      std::int64_t seq = audit.applied_seq_ids[i];
      auto expected = static_cast<std::int64_t>(i) + 1;
      if (!seen.insert(seq).second) {
        audit.problems.push_back("seq_id " + std::to_string(seq) + " applied more than once");
      } else if (seq != expected) {
        audit.problems.push_back("seq_id " + std::to_string(seq) + " applied at position " + std::to_string(expected) +
                                 " (expected seq_id " + std::to_string(expected) + ")");
      }
    }
    audit.exactly_once_in_order = audit.problems.empty();
    audits.push_back(std::move(audit));
  }
  return audits;
}

std::size_t Engine::telemetry_event_count() const noexcept {
  return impl_->telemetry_events;
}

}  // namespace tinker::local
