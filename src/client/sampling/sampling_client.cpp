// SamplingClient (doc/sampling.md): sample and compute_logprobs, creation, the tokenizer. The behaviour
// under load (dispatch throttles, 429 pacing with the shared backoff, sample resubmission and its
// stuck detection) is in submit.cpp; the wait for a result in wait.cpp.
#include "api/endpoints.hpp"
#include "api/response.hpp"
#include "client/async/complete.hpp"
#include "client/async/off_io_thread.hpp"
#include "client/futures/driver.hpp"
#include "client/sampling/state.hpp"
#include "client/sampling/submit.hpp"
#include "client/sampling/wait.hpp"
#include "client/session/operation_launch.hpp"
#include "client/session/telemetry_report.hpp"

#include "http/clock.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <algorithm>
#include <functional>

namespace tinker::client::sampling {

using async::off_io_thread;
using async::OperationResult;
using futures::ResultDecoder;
using futures::TaskControl;

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

ResultDecoder sample_response_decoder(bool protobuf) {
  return [protobuf](const http::Response& answer, ErasedResult& value, diagnostics& diag) {
    auto result = std::make_shared<SampleResponse>();
    const error_code ec = protobuf ? api::decode_protobuf_response(answer, *result, diag)
                                   : api::decode_json_response(answer, *result, diag);
    if (!ec) value = std::move(result);
    return ec;
  };
}

ResultDecoder prompt_logprobs_decoder(bool protobuf) {
  return [inner = sample_response_decoder(protobuf)](const http::Response& answer, ErasedResult& value,
                                                     diagnostics& diag) {
    ErasedResult response;
    if (error_code ec = inner(answer, response, diag)) return ec;
    const auto& sampled = *static_cast<const SampleResponse*>(response.get());
    if (!sampled.prompt_logprobs) {
      diag.clear();
      diag.message = "the sample result carries no prompt_logprobs although they were asked for";
      return make_error_code(errc::protocol_error);
    }
    value = std::make_shared<PromptLogprobs>(*sampled.prompt_logprobs);
    return error_code();
  };
}

// Which kind of call a sample task serves (read on the io thread: the holder's config and
// options live there).
enum class SampleKind { sample, compute_logprobs };

// Completes the caller of sample()/compute_logprobs() from inside the task: the slot that
// forwarded the caller's cancellation is cleared first, the diagnostics copied out, and the
// handler posted to its executor (never run inside the task, which may not have suspended yet).
template <class T>
void complete_caller(Handler<Future<T>>& handler, const asio::any_io_executor& io, diagnostics* diag_out,
                     diagnostics& diag, error_code ec, Future<T> future) {
  asio::cancellation_slot slot = handler.get_cancellation_slot();
  if (slot.is_connected()) slot.clear();
  if (diag_out != nullptr) *diag_out = std::move(diag);
  // Like co_spawn's completion: dispatched to the handler's own executor, from the io thread.
  asio::post(io, [handler = std::move(handler), ec, future = std::move(future)]() mutable {
    asio::dispatch(asio::append(std::move(handler), ec, std::move(future)));
  });
}

// The resubmission's place, the submit, then (once the server accepted) the caller's completion with the
// future and the wait for the result, all in one background task that is its own outermost
// coroutine: no coroutine is spawned per stage, and only this frame and the poll's stay allocated
// while the result is pending. The caller's cancellation reaches the submit through the task's
// control until it completes.
template <class T>
asio::awaitable<void> sample_task(std::shared_ptr<const SamplingState> s, std::shared_ptr<FutureCore> core,
                                  std::shared_ptr<TaskControl> control, SampleOperation op, SampleKind kind,
                                  diagnostics* diag_out, Handler<Future<T>> handler) {
  futures::TaskScope scope(*s->holder, *core, *control);
  try {
    const asio::any_io_executor io = s->holder->executor();
    asio::cancellation_slot caller = handler.get_cancellation_slot();
    if (caller.is_connected()) {
      TaskControl* task = control.get();
      caller.assign([task](asio::cancellation_type type) { task->signal.emit(type); });
    }
    UntypedAPIFuture ticket;
    {
      diagnostics diag;
      error_code ec;
      try {
        const bool protobuf = !s->holder->options().json_bulk_paths;
        // doc/protocol.md#sample-resubmission: the server flag sample_no_retries makes sample() bypass sample
        // resubmission (doc/sampling.md#sampling: compute_logprobs never does).
        op.resubmit = kind == SampleKind::compute_logprobs || !s->holder->config().sample_no_retries;
        op.decode = kind == SampleKind::sample ? sample_response_decoder(protobuf) : prompt_logprobs_decoder(protobuf);
        op.cost = &core->cost;
        op.first_attempt_started = core->submitted();
        if (op.resubmit) {
          op.slot = s->retry->try_enter();  // enter()'s coroutine frames only when it must wait
          if (!op.slot.active()) {
            op.first_attempt_started.reset();  // the attempt starts after the wait
            op.slot = co_await s->retry->enter();
          }
        }
        ec = co_await submit_sample(*s, op, *control, ticket, diag);
      } catch (...) {
        diag.clear();  // nothing of an earlier attempt
        ec = detail::current_exception_error(diag);
      }
      if (ec) {
        session::report_failure(*s->holder, ec, diag, /*session_end=*/true);
        core->set_error(ec, diag);
        co_return complete_caller<T>(handler, io, diag_out, diag, ec, Future<T>());
      }
      core->set_request_id(ticket.request_id);
      core->cost.set_accepted(core->submitted(), op.ticket_arrived);
      complete_caller<T>(handler, io, diag_out, diag, error_code(), Future<T>(core));
    }
    co_await sample_until_done(*s, core, *control, op, ticket);
  } catch (const std::exception&) {
    scope.fail_with_current_exception();
  }
  scope.finish();
}

template <class T>
void spawn_sample(std::shared_ptr<const SamplingState> s, SampleOperation op, SampleKind kind, diagnostics* diag,
                  Handler<Future<T>> handler) {
  const asio::any_io_executor executor = s->holder->executor();
  auto core = std::make_shared<FutureCore>(executor, std::string(), std::chrono::steady_clock::now());
  core->mark_started();  // its poll starts as soon as the server accepted it
  auto control = std::make_shared<TaskControl>();
  TaskControl& task_control = *control;  // owned by the task's frame from here on
  futures::spawn_own_task(
      executor, task_control,
      sample_task<T>(std::move(s), std::move(core), std::move(control), std::move(op), kind, diag, std::move(handler)));
}

// The sampler's base model: known for one made from a base model, else GET /api/v1/samplers/{id}.
asio::awaitable<OperationResult<std::string>> sampler_base_model_op(std::shared_ptr<const SamplingState> s,
                                                                    diagnostics& diag) {
  using Outcome = OperationResult<std::string>;
  if (!s->base_model.empty()) co_return Outcome(error_code(), s->base_model);
  if (error_code ec = co_await s->holder->ensure_config(diag)) co_return Outcome(ec, std::string());
  GetSamplerResponse sampler;
  const api::CallRetrySettings call_retry = s->holder->retry_call();
  const error_code ec = co_await api::get_sampler(s->holder->http(), s->sampling_session_id, sampler, diag, call_retry);
  co_return Outcome(ec, std::move(sampler.base_model));
}

asio::awaitable<OperationResult<std::shared_ptr<const Tokenizer>>> sampler_tokenizer_op(
    std::shared_ptr<const SamplingState> s, diagnostics& diag) {
  using Outcome = OperationResult<std::shared_ptr<const Tokenizer>>;
  OperationResult<std::string> base = co_await sampler_base_model_op(s, diag);
  if (std::get<0>(base)) co_return Outcome(std::get<0>(base), nullptr);
  std::string base_model = std::move(std::get<1>(base));
  // Loading (and perhaps downloading) blocks: not on the io thread.
  const HubOptions hub = HubOptions::from_environment(process_environment(), s->holder->http().options());
  std::shared_ptr<const Tokenizer> tokenizer;
  std::function<void()> load = [&tokenizer, &base_model, &hub] {
    tokenizer = get_tokenizer_for(base_model, std::nullopt, process_environment(), hub);
  };
  co_await off_io_thread(std::move(load));
  co_return Outcome(error_code(), std::move(tokenizer));
}

}  // namespace

SamplingClient make_sampling_client(std::shared_ptr<ClientHolder> holder, std::string sampling_session_id,
                                    std::string base_model, const SamplingClientOptions& options) {
  return SamplingClient(std::make_shared<const SamplingState>(std::move(holder), std::move(sampling_session_id),
                                                              std::move(base_model), options));
}

asio::awaitable<OperationResult<SamplingClient>> create_sampling_session_op(std::shared_ptr<ClientHolder> holder,
                                                                            SamplingSource source,
                                                                            SamplingClientOptions options,
                                                                            diagnostics& diag) {
  using Outcome = OperationResult<SamplingClient>;
  if (source.model_path.has_value() == source.base_model.has_value()) {
    diag.clear();
    diag.message = "create_sampling_client needs exactly one of model_path and base_model";
    co_return Outcome(make_error_code(errc::invalid_argument), SamplingClient());
  }
  options.retry
      .validate();  // throws invalid_argument naming the field; the operation's wrapper turns it into the error
  if (error_code ec = co_await holder->ensure_session(diag)) co_return Outcome(ec, SamplingClient());
  const CreateSamplingSessionRequest request(holder->session_id(), holder->next_sampling_seq_id(), source.base_model,
                                             source.model_path);
  CreateSamplingSessionResponse created;
  if (error_code ec = co_await api::create_sampling_session(holder->http(), request, created, diag)) {
    co_return Outcome(ec, SamplingClient());
  }
  std::string base_model = source.base_model.value_or("");
  co_return Outcome(error_code(),
                    make_sampling_client(holder, created.sampling_session_id, std::move(base_model), options));
}

asio::awaitable<OperationResult<SamplingClient>> create_sampling_session_op(std::shared_ptr<ClientHolder> holder,
                                                                            SamplingSource source, diagnostics& diag) {
  co_return co_await create_sampling_session_op(std::move(holder), std::move(source), SamplingClientOptions(), diag);
}

}  // namespace tinker::client::sampling

namespace tinker::detail {

using namespace client::sampling;  // the operations above

std::shared_ptr<client::sampling::SampleRetryHandler> SamplingState::make_retry_handler(
    ClientHolder& holder, const SamplingRetryConfig& config) {
  const ClientConfigResponse& flags = holder.config();
  const client::sampling::SampleTuning& tuning = holder.sample_tuning();
  std::optional<std::chrono::milliseconds> progress_timeout;
  if (flags.sample_enable_stuck_detection && config.enable_stuck_detection) {
    progress_timeout = tuning.progress_timeout.value_or(config.progress_timeout);
  }
  // doc/sampling.md#retry-settings: the caller may ask for fewer operations in flight than the server allows, never
  // more.
  std::int64_t limit = flags.sample_max_concurrent_requests;
  if (config.max_connections) limit = std::min(limit, *config.max_connections);
  client::sampling::SampleRetryHandler::Delays delays;
  delays.enabled = config.enable_retry_logic;
  delays.base = tuning.retry_delay_base.value_or(config.retry_delay_base);
  delays.max = tuning.retry_delay_max.value_or(config.retry_delay_max);
  delays.jitter_factor = config.jitter_factor;
  return std::make_shared<client::sampling::SampleRetryHandler>(holder.executor(),
                                                                tuning.max_concurrent_samples.value_or(limit),
                                                                progress_timeout, delays, http::default_random_unit());
}

void sampling_sample(std::shared_ptr<const SamplingState> state, ModelInput prompt, std::int64_t num_samples,
                     SamplingParams params, SampleOptions options, diagnostics* diag,
                     Handler<Future<SampleResponse>> handler) {
  SampleRequest request(state->sampling_session_id, 0, std::move(prompt), std::move(params), num_samples);
  if (options.include_prompt_logprobs) request.prompt_logprobs = true;
  request.topk_prompt_logprobs = options.topk_prompt_logprobs;
  if (state->record_stability_info) request.record_stability_info = true;  // else omitted, as Python's None
  SampleOperation op(std::move(request));
  spawn_sample<SampleResponse>(std::move(state), std::move(op), SampleKind::sample, diag, std::move(handler));
}

// compute_logprobs (doc/sampling.md#sampling): one sample of one token with the prompt's logprobs.
void sampling_compute_logprobs(std::shared_ptr<const SamplingState> state, ModelInput prompt, diagnostics* diag,
                               Handler<Future<PromptLogprobs>> handler) {
  SamplingParams params(1);
  SampleRequest request(state->sampling_session_id, 0, std::move(prompt), std::move(params), 1);
  request.prompt_logprobs = true;
  if (state->record_stability_info) request.record_stability_info = true;
  SampleOperation op(std::move(request));
  spawn_sample<PromptLogprobs>(std::move(state), std::move(op), SampleKind::compute_logprobs, diag, std::move(handler));
}

void sampling_get_tokenizer(std::shared_ptr<const SamplingState> state, diagnostics* diag,
                            Handler<std::shared_ptr<const Tokenizer>> handler) {
  auto holder = state->holder;
  client::session::spawn_reported<std::shared_ptr<const Tokenizer>>(std::move(holder), true, diag, std::move(handler),
                                                                    &sampler_tokenizer_op, std::move(state));
}

void sampling_get_base_model(std::shared_ptr<const SamplingState> state, diagnostics* diag,
                             Handler<std::string> handler) {
  auto holder = state->holder;
  client::session::spawn_reported<std::string>(std::move(holder), true, diag, std::move(handler),
                                               &sampler_base_model_op, std::move(state));
}

const std::string& sampling_session_id(const SamplingState& state) noexcept {
  return state.sampling_session_id;
}

TelemetryInfo sampling_telemetry(const SamplingState& state) {
  return holder_telemetry(*state.holder);
}

boost::asio::any_io_executor sampling_executor(const SamplingState& state) noexcept {
  return state.holder->executor();
}

}  // namespace tinker::detail

namespace tinker {

namespace {

[[noreturn]] void invalid_retry_field(const std::string& field, const std::string& rule, const std::string& value) {
  throw error(errc::invalid_argument, "SamplingRetryConfig::" + field + ": " + rule + ", got " + value);
}

std::string ms_text(std::chrono::milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

}  // namespace

void SamplingRetryConfig::validate() const {
  if (max_connections && *max_connections <= 0) {
    invalid_retry_field("max_connections", "must be positive", std::to_string(*max_connections));
  }
  if (progress_timeout <= std::chrono::milliseconds::zero()) {
    invalid_retry_field("progress_timeout", "must be positive", ms_text(progress_timeout));
  }
  if (retry_delay_base < std::chrono::milliseconds::zero()) {
    invalid_retry_field("retry_delay_base", "must not be negative", ms_text(retry_delay_base));
  }
  if (retry_delay_max < retry_delay_base) {
    invalid_retry_field("retry_delay_max", "must be at least retry_delay_base (" + ms_text(retry_delay_base) + ")",
                        ms_text(retry_delay_max));
  }
  if (!(jitter_factor >= 0.0 && jitter_factor <= 1.0)) {  // NaN fails too
    invalid_retry_field("jitter_factor", "must be in [0, 1]", std::to_string(jitter_factor));
  }
}

}  // namespace tinker
