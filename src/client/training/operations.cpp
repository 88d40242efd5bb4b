// TrainingClient operations of one request each (doc/training.md#operations): optim_step, save_state,
// load_state(_with_optimizer), save_weights_for_sampler, the ephemeral sampler save, get_info and
// get_tokenizer. Each takes its ticket on the caller's thread (call order = submission order),
// submits in its turn and completes with a Future polled in the background.
#include "api/endpoints.hpp"
#include "client/async/off_io_thread.hpp"
#include "client/sampling/state.hpp"
#include "client/session/operation_launch.hpp"
#include "client/training/state.hpp"
#include "client/training/submit_cost.hpp"
#include "core/types/exception_error.hpp"

#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <functional>

namespace tinker::client::training {

using async::off_io_thread;
using async::OperationResult;

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// The turn, the submit, the poll: the shape of every single-request operation. `Op` provides
// Result, the FutureType, and `submit(state, seq_id, ticket, diag)`.
template <class Op>
asio::awaitable<OperationResult<Future<typename Op::Result>>> submit_single(TrainingPtr t, Ticket ticket, Op op,
                                                                            diagnostics& diag) {
  using Result = typename Op::Result;
  using Outcome = OperationResult<Future<Result>>;
  const SteadyTime started = std::chrono::steady_clock::now();
  if (error_code ec = co_await t->turnstile.wait_turn(ticket, diag)) co_return Outcome(ec, Future<Result>());
  if (error_code ec = co_await t->holder->ensure_config(diag)) {  // refreshes a JWT about to expire
    t->turnstile.finish_turn(ticket, TurnOutcome::not_sent());
    co_return Outcome(ec, Future<Result>());
  }
  const std::int64_t seq_id = t->turnstile.next_seq_ids(ticket, 1);
  UntypedAPIFuture accepted;
  error_code ec;
  api::OperationCost cost;
  try {
    const SubmitCostScope recording(*t, cost);
    ec = co_await op.submit(*t, seq_id, accepted, diag);
  } catch (const error&) {  // encoding failed: nothing was sent
    ec = detail::current_exception_error(diag);
  }
  if (ec) {
    t->turnstile.finish_turn(ticket, turn_outcome_of_failed_submit(ec, diag, seq_id));
    co_return Outcome(ec, Future<Result>());
  }
  t->turnstile.finish_turn(ticket, TurnOutcome::submitted());
  auto core = poll_training_ticket(t, accepted, Op::type, started, json_result_decoder<Result>());
  record_submit(*core, cost);
  co_return Outcome(error_code(), Future<Result>(std::move(core)));
}

class OptimStepOp {
 public:
  using Result = OptimStepResponse;
  static constexpr futures::FutureType type = futures::FutureType::optim_step;
  explicit OptimStepOp(AdamParams params) : params_(params) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    const OptimStepRequest request(t.model_id, seq_id, params_);
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::optim_step(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  AdamParams params_;
};

class SaveStateOp {
 public:
  using Result = SaveWeightsResponse;
  static constexpr futures::FutureType type = futures::FutureType::save_weights;
  SaveStateOp(std::string name, SaveStateOptions options) : name_(std::move(name)), options_(options) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    const SaveWeightsRequest request(t.model_id, seq_id, name_, options_.ttl_seconds, options_.overwrite);
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::save_weights(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  std::string name_;
  SaveStateOptions options_;
};

class LoadStateOp {
 public:
  using Result = LoadWeightsResponse;
  static constexpr futures::FutureType type = futures::FutureType::load_weights;
  LoadStateOp(std::string path, bool with_optimizer, std::optional<std::string> access_token)
      : path_(std::move(path)), with_optimizer_(with_optimizer), access_token_(std::move(access_token)) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    LoadWeightsRequest request(t.model_id, seq_id, path_, with_optimizer_);
    request.weights_access_token = access_token_;
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::load_weights(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  std::string path_;
  bool with_optimizer_;
  std::optional<std::string> access_token_;
};

// Named (persistent) or, without a name, ephemeral sampler weights (doc/training.md#operations).
class SaveForSamplerOp {
 public:
  using Result = SaveWeightsForSamplerResponse;
  static constexpr futures::FutureType type = futures::FutureType::save_weights_for_sampler;
  SaveForSamplerOp(std::optional<std::string> name, std::optional<std::int64_t> ttl_seconds)
      : name_(std::move(name)), ttl_seconds_(ttl_seconds) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    SaveWeightsForSamplerRequest request(t.model_id, seq_id, name_, ttl_seconds_);
    // Choice: the sampling counter value is taken once per operation, so a call re-send
    // carries the same sampling_session_seq_id as well as the same seq_id (the Python SDK takes
    // a new one per re-send; doc/training.md#operations says servers dedupe on model_id + seq_id either way).
    if (!name_) request.sampling_session_seq_id = t.holder->next_sampling_seq_id();
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::save_weights_for_sampler(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  std::optional<std::string> name_;
  std::optional<std::int64_t> ttl_seconds_;
};

asio::awaitable<OperationResult<SamplingClient>> save_and_get_sampler_op(TrainingPtr t, Ticket ticket,
                                                                         diagnostics& diag) {
  using Outcome = OperationResult<SamplingClient>;
  SaveForSamplerOp op(std::nullopt, std::nullopt);
  auto [ec, future] = co_await submit_single(t, ticket, std::move(op), diag);
  if (ec) co_return Outcome(ec, SamplingClient());
  auto as_tuple_token = asio::as_tuple(asio::use_awaitable);
  auto [wait_ec, saved] = co_await future.async_get(diag, as_tuple_token);
  if (wait_ec) co_return Outcome(wait_ec, SamplingClient());
  if (!saved.sampling_session_id) {
    diag.clear();
    diag.message = "save_weights_for_sampler without a name answered no sampling_session_id";
    co_return Outcome(make_error_code(errc::protocol_error), SamplingClient());
  }
  co_return Outcome(error_code(), sampling::make_sampling_client(t->holder, *saved.sampling_session_id, t->base_model));
}

asio::awaitable<OperationResult<GetInfoResponse>> get_info_op(TrainingPtr t, bool retry_call, diagnostics& diag) {
  const GetInfoRequest request(t->model_id);
  const api::CallRetrySettings call_retry = t->holder->retry_call();
  GetInfoResponse info;
  const error_code ec = co_await api::get_info(t->holder->http(), request, info, diag, call_retry, retry_call);
  co_return OperationResult<GetInfoResponse>(ec, std::move(info));
}

asio::awaitable<OperationResult<std::shared_ptr<const Tokenizer>>> get_tokenizer_op(TrainingPtr t, diagnostics& diag) {
  using Outcome = OperationResult<std::shared_ptr<const Tokenizer>>;
  auto [ec, info] = co_await get_info_op(t, /*retry_call=*/false, diag);
  if (ec) co_return Outcome(ec, nullptr);
  const std::optional<std::string>& name = info.model_data.model_name ? info.model_data.model_name : info.model_name;
  if (!name) {
    diag.clear();
    diag.message =
        "get_info answered no model_data.model_name, which the tokenizer is chosen by (doc/training.md#operations)";
    co_return Outcome(make_error_code(errc::protocol_error), nullptr);
  }
  std::optional<std::string_view> tokenizer_id;
  if (info.model_data.tokenizer_id) tokenizer_id = *info.model_data.tokenizer_id;
  // Loading (and perhaps downloading) blocks: not on the io thread. Throws tinker::error naming
  // every place looked at.
  const HubOptions hub = HubOptions::from_environment(process_environment(), t->holder->http().options());
  std::shared_ptr<const Tokenizer> tokenizer;
  std::function<void()> load = [&tokenizer, &name, &tokenizer_id, &hub] {
    tokenizer = get_tokenizer_for(*name, tokenizer_id, process_environment(), hub);
  };
  co_await off_io_thread(std::move(load));
  co_return Outcome(error_code(), std::move(tokenizer));
}

asio::awaitable<OperationResult<SamplingClient>> create_sampling_client_op(TrainingPtr t, std::string model_path,
                                                                           diagnostics& diag) {
  co_return co_await sampling::create_sampling_session_op(t->holder,
                                                          SamplingSource::from_model_path(std::move(model_path)), diag);
}

// Takes the ticket now, on the caller's thread (call order = submission order), then runs
// submit_single on the io thread.
template <class Op>
void start_single(TrainingPtr t, Op op, diagnostics* d, Handler<Future<typename Op::Result>> h) {
  const Ticket ticket = t->turnstile.take_ticket();
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<Future<typename Op::Result>>(std::move(holder), true, d, std::move(h),
                                                               &submit_single<Op>, std::move(t), ticket, std::move(op));
}

}  // namespace

}  // namespace tinker::client::training

namespace tinker::detail {

using namespace client::training;  // the operations above

void training_optim_step(TrainingPtr t, AdamParams params, diagnostics* d, Handler<Future<OptimStepResponse>> h) {
  start_single(std::move(t), OptimStepOp(params), d, std::move(h));
}

void training_save_state(TrainingPtr t, std::string name, SaveStateOptions options, diagnostics* d,
                         Handler<Future<SaveWeightsResponse>> h) {
  start_single(std::move(t), SaveStateOp(std::move(name), options), d, std::move(h));
}

void training_load_state(TrainingPtr t, std::string path, bool with_optimizer, std::optional<std::string> access_token,
                         diagnostics* d, Handler<Future<LoadWeightsResponse>> h) {
  start_single(std::move(t), LoadStateOp(std::move(path), with_optimizer, std::move(access_token)), d, std::move(h));
}

void training_save_weights_for_sampler(TrainingPtr t, std::string name, std::optional<std::int64_t> ttl_seconds,
                                       diagnostics* d, Handler<Future<SaveWeightsForSamplerResponse>> h) {
  start_single(std::move(t), SaveForSamplerOp(std::move(name), ttl_seconds), d, std::move(h));
}

void training_save_weights_and_get_sampling_client(TrainingPtr t, diagnostics* d, Handler<SamplingClient> h) {
  const Ticket ticket = t->turnstile.take_ticket();
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<SamplingClient>(std::move(holder), true, d, std::move(h), &save_and_get_sampler_op,
                                                  std::move(t), ticket);
}

void training_create_sampling_client(TrainingPtr t, std::string model_path, diagnostics* d, Handler<SamplingClient> h) {
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<SamplingClient>(std::move(holder), true, d, std::move(h), &create_sampling_client_op,
                                                  std::move(t), std::move(model_path));
}

void training_get_info(TrainingPtr t, diagnostics* d, Handler<GetInfoResponse> h) {
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<GetInfoResponse>(std::move(holder), true, d, std::move(h), &get_info_op, std::move(t),
                                                   true);
}

void training_get_tokenizer(TrainingPtr t, diagnostics* d, Handler<std::shared_ptr<const Tokenizer>> h) {
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<std::shared_ptr<const Tokenizer>>(std::move(holder), true, d, std::move(h),
                                                                    &get_tokenizer_op, std::move(t));
}

const std::string& training_model_id(const TrainingState& t) noexcept {
  return t.model_id;
}

boost::asio::any_io_executor training_executor(const TrainingState& state) noexcept {
  return state.holder->executor();
}

}  // namespace tinker::detail
