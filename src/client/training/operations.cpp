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
#include "core/types/checkpoint_ttl.hpp"
#include "core/types/exception_error.hpp"

#include <tinker/console.hpp>
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

// The optim_step body for this server (doc/training.md#optimizers): `optim_params` when its
// client/config names sample_use_retrieve_futures (a server newer than the 0.25 protocol), else the
// 0.25 `adam_params`. Throws tinker::error (invalid_argument) before anything is sent for
// parameters of another optimizer than the client's, invalid DimuonParams, or Dimuon on a 0.25
// server.
OptimStepRequest optim_step_request(const TrainingState& t, std::int64_t seq_id, const OptimParams& params) {
  if (!params_match(t.optimizer, params)) {
    throw error(errc::invalid_argument, "optim_step: " + std::string(optimizer_type(params)) +
                                            " parameters do not match this training client's optimizer " +
                                            std::string(optimizer_type(t.optimizer)) +
                                            " (the optimizer is fixed when the client is created)");
  }
  if (std::string problem = optim_params_problem(params); !problem.empty()) {
    throw error(errc::invalid_argument, "optim_step: " + problem);
  }
  if (t.holder->config().sample_use_retrieve_futures.has_value()) {
    return OptimStepRequest(t.model_id, seq_id, params);
  }
  if (const auto* adam = std::get_if<AdamParams>(&params)) return OptimStepRequest(t.model_id, seq_id, *adam);
  throw error(errc::invalid_argument, "optim_step: " + std::string(optimizer_type(params)) +
                                          " needs a server newer than the 0.25 protocol, which only takes adam_params");
}

class OptimStepOp {
 public:
  using Result = OptimStepResponse;
  static constexpr futures::FutureType type = futures::FutureType::optim_step;
  explicit OptimStepOp(OptimParams params) : params_(std::move(params)) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    const OptimStepRequest request = optim_step_request(t, seq_id, params_);
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::optim_step(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  OptimParams params_;
};

class SaveStateOp {
 public:
  using Result = SaveWeightsResponse;
  static constexpr futures::FutureType type = futures::FutureType::save_weights;
  SaveStateOp(std::string name, SaveStateOptions options) : name_(std::move(name)), options_(options) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    detail::check_checkpoint_ttl("save_state", options_.ttl_seconds);
    SaveWeightsRequest request(t.model_id, seq_id, name_, options_.ttl_seconds, options_.overwrite);
    request.user_metadata = options_.user_metadata;
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
  SaveForSamplerOp(std::optional<std::string> name, SaveWeightsForSamplerOptions options)
      : name_(std::move(name)), options_(std::move(options)) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    detail::check_checkpoint_ttl("save_weights_for_sampler", options_.ttl_seconds);
    SaveWeightsForSamplerRequest request(t.model_id, seq_id, name_, options_.ttl_seconds);
    request.user_metadata = options_.user_metadata;
    // Choice: the sampling counter value is taken once per operation, so a call re-send
    // carries the same sampling_session_seq_id as well as the same seq_id (the Python SDK takes
    // a new one per re-send; doc/training.md#operations says servers dedupe on model_id + seq_id either way).
    if (!name_) request.sampling_session_seq_id = t.holder->next_sampling_seq_id();
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::save_weights_for_sampler(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  std::optional<std::string> name_;
  SaveWeightsForSamplerOptions options_;
};

// Weights in an external (Hugging Face PEFT) format, doc/training.md#external-weights. The
// options are checked in the operation's turn: a refusal there sends nothing and frees the turn.
class SaveExternalOp {
 public:
  using Result = SaveWeightsExternalResponse;
  static constexpr futures::FutureType type = futures::FutureType::save_weights_external;
  SaveExternalOp(std::string name, SaveWeightsExternalOptions options)
      : name_(std::move(name)), options_(std::move(options)) {}

  asio::awaitable<error_code> submit(TrainingState& t, std::int64_t seq_id, UntypedAPIFuture& ticket,
                                     diagnostics& diag) {
    check_save_weights_external_options(name_, options_);
    SaveWeightsExternalRequest request(t.model_id, seq_id, name_, options_.ttl_seconds);
    request.age_encryption_recipients = options_.age_encryption_recipients;
    const api::CallRetrySettings call_retry = t.retry_call();
    co_return co_await api::save_weights_external(t.holder->http(), request, ticket, diag, call_retry);
  }

 private:
  std::string name_;
  SaveWeightsExternalOptions options_;
};

asio::awaitable<OperationResult<SamplingClient>> save_and_get_sampler_op(
    TrainingPtr t, Ticket ticket, std::optional<std::map<std::string, std::string>> user_metadata,
    SamplingClientOptions sampler_options, diagnostics& diag) {
  using Outcome = OperationResult<SamplingClient>;
  SaveForSamplerOp op(std::nullopt, SaveWeightsForSamplerOptions(std::nullopt, std::move(user_metadata)));
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
  // Checked once the turn is passed (a throw before the submit would leave a gap in the seq_ids): throws
  // invalid_argument naming the field, which the operation's wrapper turns into the error.
  sampler_options.retry.validate();
  co_return Outcome(error_code(), sampling::make_sampling_client(t->holder, *saved.sampling_session_id, t->base_model,
                                                                 sampler_options));
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
                                                                           SamplingClientOptions options,
                                                                           diagnostics& diag) {
  co_return co_await sampling::create_sampling_session_op(
      t->holder, SamplingSource::from_model_path(std::move(model_path)), std::move(options), diag);
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

void training_optim_step(TrainingPtr t, OptimParams params, diagnostics* d, Handler<Future<OptimStepResponse>> h) {
  start_single(std::move(t), OptimStepOp(std::move(params)), d, std::move(h));
}

void training_save_state(TrainingPtr t, std::string name, SaveStateOptions options, diagnostics* d,
                         Handler<Future<SaveWeightsResponse>> h) {
  start_single(std::move(t), SaveStateOp(std::move(name), options), d, std::move(h));
}

void training_load_state(TrainingPtr t, std::string path, bool with_optimizer, std::optional<std::string> access_token,
                         diagnostics* d, Handler<Future<LoadWeightsResponse>> h) {
  start_single(std::move(t), LoadStateOp(std::move(path), with_optimizer, std::move(access_token)), d, std::move(h));
}

void training_save_weights_for_sampler(TrainingPtr t, std::string name, SaveWeightsForSamplerOptions options,
                                       diagnostics* d, Handler<Future<SaveWeightsForSamplerResponse>> h) {
  start_single(std::move(t), SaveForSamplerOp(std::move(name), std::move(options)), d, std::move(h));
}

void training_save_weights_external(TrainingPtr t, std::string name, SaveWeightsExternalOptions options, diagnostics* d,
                                    Handler<Future<SaveWeightsExternalResponse>> h) {
  start_single(std::move(t), SaveExternalOp(std::move(name), std::move(options)), d, std::move(h));
}

void training_save_weights_and_get_sampling_client(TrainingPtr t,
                                                   std::optional<std::map<std::string, std::string>> user_metadata,
                                                   SamplingClientOptions o, diagnostics* d, Handler<SamplingClient> h) {
  const Ticket ticket = t->turnstile.take_ticket();
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<SamplingClient>(std::move(holder), true, d, std::move(h), &save_and_get_sampler_op,
                                                  std::move(t), ticket, std::move(user_metadata), std::move(o));
}

void training_create_sampling_client(TrainingPtr t, std::string model_path, SamplingClientOptions o, diagnostics* d,
                                     Handler<SamplingClient> h) {
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<SamplingClient>(std::move(holder), true, d, std::move(h), &create_sampling_client_op,
                                                  std::move(t), std::move(model_path), std::move(o));
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

std::string training_console_url(const TrainingState& t) {
  return console::training_run_url(t.model_id);
}

const OptimizerConfig& training_optimizer(const TrainingState& t) noexcept {
  return t.optimizer;
}

boost::asio::any_io_executor training_executor(const TrainingState& state) noexcept {
  return state.holder->executor();
}

}  // namespace tinker::detail
