// SamplingClient (spec 12): sample and compute_logprobs, creation, the tokenizer. The behaviour
// under load (dispatch throttles, 429 pacing with the shared backoff, retry layer 3 and its
// stuck detection) is in sampling_submit.cpp.
#include "api/endpoints.hpp"
#include "api/response.hpp"
#include "client/future_driver.hpp"
#include "client/sampling_state.hpp"
#include "client/sampling_submit.hpp"

#include "http/clock.hpp"

#include <tinker/tokenizer.hpp>

namespace tinker::detail {
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

// Takes layer 3's place (when it applies), submits, and hands the accepted operation to a
// background task that awaits (and, on a lost result, re-runs) it.
template <class T>
asio::awaitable<OperationResult<Future<T>>> start_sample(std::shared_ptr<const SamplingState> s, SampleOperation op,
                                                         ResultDecoder decode, diagnostics& diag) {
  using Outcome = OperationResult<Future<T>>;
  const auto started = std::chrono::steady_clock::now();
  if (op.layer_three) op.slot = co_await s->retry->enter();
  UntypedAPIFuture ticket;
  if (error_code ec = co_await submit_sample(*s, op, ticket, diag)) co_return Outcome(ec, Future<T>());
  auto core = std::make_shared<FutureCore>(s->holder->executor(), ticket.request_id, started);
  auto holder = s->holder;
  auto control = std::make_shared<TaskControl>();
  auto work = sample_until_done(s, core, control, std::move(op), std::move(ticket), std::move(decode));
  spawn_task(std::move(holder), core, std::move(control), std::move(work));
  co_return Outcome(error_code(), Future<T>(std::move(core)));
}

asio::awaitable<OperationResult<Future<SampleResponse>>> sample_op(std::shared_ptr<const SamplingState> s,
                                                                   ModelInput prompt, std::int64_t num_samples,
                                                                   SamplingParams params, SampleOptions options,
                                                                   diagnostics& diag) {
  SampleRequest request(s->sampling_session_id, 0, std::move(prompt), std::move(params), num_samples);
  if (options.include_prompt_logprobs) request.prompt_logprobs = true;
  request.topk_prompt_logprobs = options.topk_prompt_logprobs;
  auto decode = sample_response_decoder(!s->holder->options().json_bulk_paths);
  // Spec 5.3: the server flag sample_no_retries makes sample() bypass layer 3.
  SampleOperation op(std::move(request), !s->holder->config().sample_no_retries);
  co_return co_await start_sample<SampleResponse>(std::move(s), std::move(op), std::move(decode), diag);
}

// compute_logprobs (spec 12.4): one sample of one token with the prompt's logprobs.
asio::awaitable<OperationResult<Future<PromptLogprobs>>> compute_logprobs_op(std::shared_ptr<const SamplingState> s,
                                                                             ModelInput prompt, diagnostics& diag) {
  SamplingParams params(1);
  SampleRequest request(s->sampling_session_id, 0, std::move(prompt), std::move(params), 1);
  request.prompt_logprobs = true;
  auto decode = prompt_logprobs_decoder(!s->holder->options().json_bulk_paths);
  SampleOperation op(std::move(request), true);  // spec 12.4: always through layer 3
  co_return co_await start_sample<PromptLogprobs>(std::move(s), std::move(op), std::move(decode), diag);
}

asio::awaitable<OperationResult<std::shared_ptr<const Tokenizer>>> sampler_tokenizer_op(
    std::shared_ptr<const SamplingState> s, diagnostics& diag) {
  using Outcome = OperationResult<std::shared_ptr<const Tokenizer>>;
  std::string base_model = s->base_model;
  if (base_model.empty()) {
    GetSamplerResponse sampler;
    const api::LayerTwoSettings l2 = s->holder->layer_two();
    if (error_code ec = co_await api::get_sampler(s->holder->http(), s->sampling_session_id, sampler, diag, l2)) {
      co_return Outcome(ec, nullptr);
    }
    base_model = sampler.base_model;
  }
  co_return Outcome(error_code(), get_tokenizer_for(base_model, std::nullopt));
}

}  // namespace

std::shared_ptr<client::SampleRetryHandler> SamplingState::make_retry_handler(ClientHolder& holder) {
  const ClientConfigResponse& flags = holder.config();
  const client::SampleTuning& tuning = holder.sample_tuning();
  std::optional<std::chrono::milliseconds> progress_timeout;
  if (flags.sample_enable_stuck_detection) progress_timeout = tuning.progress_timeout;
  return std::make_shared<client::SampleRetryHandler>(
      holder.executor(), tuning.max_concurrent_samples.value_or(flags.sample_max_concurrent_requests), progress_timeout,
      tuning.retry_delay_base, tuning.retry_delay_max, http::default_random_unit());
}

SamplingClient make_sampling_client(std::shared_ptr<ClientHolder> holder, std::string sampling_session_id,
                                    std::string base_model) {
  return SamplingClient(
      std::make_shared<const SamplingState>(std::move(holder), std::move(sampling_session_id), std::move(base_model)));
}

asio::awaitable<OperationResult<SamplingClient>> create_sampling_session_op(std::shared_ptr<ClientHolder> holder,
                                                                            SamplingSource source, diagnostics& diag) {
  using Outcome = OperationResult<SamplingClient>;
  if (source.model_path.has_value() == source.base_model.has_value()) {
    diag.clear();
    diag.message = "create_sampling_client needs exactly one of model_path and base_model";
    co_return Outcome(make_error_code(errc::invalid_argument), SamplingClient());
  }
  if (error_code ec = co_await holder->ensure_session(diag)) co_return Outcome(ec, SamplingClient());
  const CreateSamplingSessionRequest request(holder->session_id(), holder->next_sampling_seq_id(), source.base_model,
                                             source.model_path);
  CreateSamplingSessionResponse created;
  if (error_code ec = co_await api::create_sampling_session(holder->http(), request, created, diag)) {
    co_return Outcome(ec, SamplingClient());
  }
  std::string base_model = source.base_model.value_or("");
  co_return Outcome(error_code(), make_sampling_client(holder, created.sampling_session_id, std::move(base_model)));
}

void sampling_sample(std::shared_ptr<const SamplingState> state, ModelInput prompt, std::int64_t num_samples,
                     SamplingParams params, SampleOptions options, diagnostics* diag,
                     Handler<Future<SampleResponse>> handler) {
  auto executor = state->holder->executor();
  spawn_and_complete<Future<SampleResponse>>(executor, diag, std::move(handler), &sample_op, std::move(state),
                                             std::move(prompt), num_samples, std::move(params), options);
}

void sampling_compute_logprobs(std::shared_ptr<const SamplingState> state, ModelInput prompt, diagnostics* diag,
                               Handler<Future<PromptLogprobs>> handler) {
  auto executor = state->holder->executor();
  spawn_and_complete<Future<PromptLogprobs>>(executor, diag, std::move(handler), &compute_logprobs_op, std::move(state),
                                             std::move(prompt));
}

void sampling_get_tokenizer(std::shared_ptr<const SamplingState> state, diagnostics* diag,
                            Handler<std::shared_ptr<const Tokenizer>> handler) {
  auto executor = state->holder->executor();
  spawn_and_complete<std::shared_ptr<const Tokenizer>>(executor, diag, std::move(handler), &sampler_tokenizer_op,
                                                       std::move(state));
}

const std::string& sampling_session_id(const SamplingState& state) noexcept {
  return state.sampling_session_id;
}

}  // namespace tinker::detail
