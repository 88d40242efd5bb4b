// ServiceClient (doc/service.md): construction, shutdown, and the creation of training and sampling
// clients. Session bootstrap, heartbeat and the rest of the holder are in holder.cpp, bootstrap.cpp
// and loops.cpp.
#include "api/endpoints.hpp"
#include "api/response.hpp"
#include "client/async/complete.hpp"
#include "client/futures/driver.hpp"
#include "client/sampling/state.hpp"
#include "client/session/holder_impl.hpp"
#include "client/session/operation_launch.hpp"
#include "client/training/state.hpp"

#include <tinker/service_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>

namespace tinker::client::session {

using async::OperationResult;

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using TrainingOutcome = OperationResult<TrainingClient>;

// Polls a model-creating future (create_model, create-via-load) to its end and decodes T.
template <class T>
asio::awaitable<error_code> await_model_future(ClientHolder& holder, const UntypedAPIFuture& ticket,
                                               futures::FutureType type, std::string subject_id,
                                               std::chrono::steady_clock::time_point started, T& out,
                                               diagnostics& diag) {
  futures::PollRequest poll(ticket.request_id, type);
  poll.subject = futures::QueueSubject::model_creation;
  poll.subject_id = std::move(subject_id);
  poll.create_roundtrip =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  auto core = std::make_shared<FutureCore>(holder.executor(), ticket.request_id, started);
  attach(poll, holder, core);
  futures::PollOutcome outcome = co_await futures::poll_future(holder.http(), std::move(poll));
  if (outcome.error) {
    diag = std::move(outcome.diag);
    co_return outcome.error;
  }
  co_return api::decode_json_response(outcome.result, out, diag);
}

error_code check_lora_options(const LoraTrainingOptions& options, diagnostics& diag) {
  if (options.base_model.empty()) {
    diag.message = "base_model: must name a base model (see get_server_capabilities)";
    return make_error_code(errc::invalid_argument);
  }
  if (options.rank < 1) {
    diag.message = "rank: must be at least 1, got " + std::to_string(options.rank);
    return make_error_code(errc::invalid_argument);
  }
  if (!options.train_mlp && !options.train_attn && !options.train_unembed) {
    diag.message = "train_mlp, train_attn, train_unembed: at least one must be true";
    return make_error_code(errc::invalid_argument);
  }
  return {};
}

// An optimizer other than AdamW needs a server newer than the 0.25 protocol (one whose client/config
// names sample_use_retrieve_futures): an older one would ignore the field and train with AdamW
// (doc/training.md#optimizers). Valid after ensure_config.
error_code check_optimizer_supported(const ClientHolder& holder, const OptimizerConfig& optimizer, diagnostics& diag) {
  if (std::holds_alternative<AdamOptimizerConfig>(optimizer)) return {};
  if (holder.config().sample_use_retrieve_futures.has_value()) return {};
  diag.message = "optimizer: " + std::string(optimizer_type(optimizer)) +
                 " needs a server newer than the 0.25 protocol, which trains every model with adamw";
  return make_error_code(errc::invalid_argument);
}

asio::awaitable<TrainingOutcome> create_lora_op(HolderPtr holder, LoraTrainingOptions options, diagnostics& diag) {
  if (error_code ec = check_lora_options(options, diag)) co_return TrainingOutcome(ec, TrainingClient());
  if (error_code ec = co_await holder->ensure_session(diag)) co_return TrainingOutcome(ec, TrainingClient());
  if (error_code ec = check_optimizer_supported(*holder, options.optimizer, diag)) {
    co_return TrainingOutcome(ec, TrainingClient());
  }
  LoraConfig lora(options.rank, options.seed);
  lora.train_mlp = options.train_mlp;
  lora.train_attn = options.train_attn;
  lora.train_unembed = options.train_unembed;
  CreateModelRequest request(holder->session_id(), holder->next_model_seq_id(), options.base_model, lora);
  if (!options.user_metadata.empty()) request.user_metadata = json_object_of_strings(options.user_metadata);
  // AdamW, the default, is not sent: servers of the 0.25 protocol see the body they know.
  if (!std::holds_alternative<AdamOptimizerConfig>(options.optimizer)) request.optimizer_config = options.optimizer;
  const auto started = std::chrono::steady_clock::now();
  UntypedAPIFuture ticket;
  if (error_code ec = co_await api::create_model(holder->http(), request, ticket, diag)) {
    co_return TrainingOutcome(ec, TrainingClient());
  }
  CreateModelResponse created;
  const error_code ec = co_await await_model_future(*holder, ticket, futures::FutureType::create_model,
                                                    options.base_model, started, created, diag);
  if (ec) co_return TrainingOutcome(ec, TrainingClient());
  auto state = std::make_shared<TrainingState>(holder, created.model_id, options.base_model, options.optimizer);
  co_return TrainingOutcome(error_code(), TrainingClient(std::move(state)));
}

// create-via-load (server flag create_model_via_load_weights): one load_weights makes the model.
asio::awaitable<TrainingOutcome> create_via_load(HolderPtr holder, std::string path, bool with_optimizer,
                                                 FromStateOptions options, diagnostics& diag) {
  const std::int64_t model_seq_id = holder->next_model_seq_id();
  LoadWeightsRequest request;
  request.session_id = holder->session_id();
  request.model_seq_id = model_seq_id;
  request.base_model = options.base_model;
  if (!options.user_metadata.empty()) request.user_metadata = json_object_of_strings(options.user_metadata);
  request.path = path;
  request.optimizer = with_optimizer;
  request.weights_access_token = options.weights_access_token;
  // Sent only when chosen: without it a full-state resume keeps the checkpoint's optimizer.
  if (options.optimizer) {
    if (error_code ec = check_optimizer_supported(*holder, *options.optimizer, diag)) {
      co_return TrainingOutcome(ec, TrainingClient());
    }
    request.optimizer_config = options.optimizer;
  }
  const auto started = std::chrono::steady_clock::now();
  UntypedAPIFuture ticket;
  const api::CallRetrySettings call_retry = holder->retry_call();
  if (error_code ec = co_await api::load_weights(holder->http(), request, ticket, diag, call_retry)) {
    co_return TrainingOutcome(ec, TrainingClient());
  }
  const std::string model_id = holder->session_id() + ":train:" + std::to_string(model_seq_id);
  LoadWeightsResponse loaded;
  const error_code ec =
      co_await await_model_future(*holder, ticket, futures::FutureType::load_weights, model_id, started, loaded, diag);
  if (ec) co_return TrainingOutcome(ec, TrainingClient());
  // The server's word on the optimizer first (it may be the checkpoint's), then the caller's choice.
  OptimizerConfig optimizer = loaded.optimizer_config.value_or(options.optimizer.value_or(AdamOptimizerConfig()));
  auto state = std::make_shared<TrainingState>(holder, loaded.model_id.value_or(model_id),
                                               options.base_model.value_or(""), std::move(optimizer));
  co_return TrainingOutcome(error_code(), TrainingClient(std::move(state)));
}

// The holder that asks weights_info on behalf of a weights_access_token (doc/service.md#from-a-checkpoint): this
// client's options with the token as its API key, and no telemetry of its own. Throws tinker::error
// (invalid_argument) naming weights_access_token when the token cannot be an API key; never quotes it.
std::shared_ptr<ClientHolder> token_holder(const ClientHolder& holder, const std::string& token) {
  ServiceClientOptions options = holder.options();
  options.client.api_key = Secret(token);
  options.client.credential_command.reset();
  options.client.telemetry_enabled = false;
  try {
    return ClientHolder::create(holder.executor(), std::move(options));
  } catch (const error& e) {
    throw error(errc::invalid_argument, "weights_access_token: not usable as an API key (" + e.diag().message + ")");
  }
}

// POST weights_info, with the weights_access_token as the credential when there is one (the Python SDK asks through a
// client authenticated with the token: the checkpoint may belong to the token's account only).
asio::awaitable<error_code> checkpoint_weights_info(HolderPtr holder, std::string path,
                                                    std::optional<std::string> token, WeightsInfoResponse& info,
                                                    diagnostics& diag) {
  const WeightsInfoRequest request(std::move(path));
  if (!token) co_return co_await api::weights_info(holder->http(), request, info, diag, holder->retry_call());
  std::shared_ptr<ClientHolder> asker = token_holder(*holder, *token);
  error_code ec = co_await asker->ensure_config(diag);
  if (!ec) ec = co_await api::weights_info(asker->http(), request, info, diag, asker->retry_call());
  asker->shutdown();
  co_return ec;
}

// Legacy (doc/service.md): weights_info, create_model configured like the checkpoint, load_state.
// A weights_access_token authenticates weights_info and is passed to load_weights as given (as the
// Python SDK's async variant does).
asio::awaitable<TrainingOutcome> create_then_load(HolderPtr holder, std::string path, bool with_optimizer,
                                                  FromStateOptions options, diagnostics& diag) {
  WeightsInfoResponse info;
  if (error_code ec = co_await checkpoint_weights_info(holder, path, options.weights_access_token, info, diag)) {
    co_return TrainingOutcome(ec, TrainingClient());
  }
  LoraTrainingOptions lora(options.base_model.value_or(info.base_model), info.lora_rank.value_or(32));
  lora.train_mlp = info.train_mlp.value_or(true);
  lora.train_attn = info.train_attn.value_or(true);
  lora.train_unembed = info.train_unembed.value_or(true);
  lora.user_metadata = options.user_metadata;
  // A full-state resume keeps the checkpoint's optimizer unless the caller chose one.
  if (options.optimizer) {
    lora.optimizer = *options.optimizer;
  } else if (with_optimizer && info.optimizer_config) {
    lora.optimizer = *info.optimizer_config;
  }
  auto [ec, training] = co_await create_lora_op(holder, std::move(lora), diag);
  if (ec) co_return TrainingOutcome(ec, TrainingClient());
  auto as_tuple_token = asio::as_tuple(asio::use_awaitable);
  auto [submit_ec, loading] =
      co_await training.async_load_state(path, with_optimizer, options.weights_access_token, diag, as_tuple_token);
  if (submit_ec) co_return TrainingOutcome(submit_ec, TrainingClient());
  auto [load_ec, loaded] = co_await loading.async_get(diag, as_tuple_token);
  if (load_ec) co_return TrainingOutcome(load_ec, TrainingClient());
  co_return TrainingOutcome(error_code(), std::move(training));
}

asio::awaitable<TrainingOutcome> from_state_op(HolderPtr holder, std::string path, bool with_optimizer,
                                               FromStateOptions options, diagnostics& diag) {
  if (!path.starts_with("tinker://")) {
    diag.message = "path: expected a tinker:// checkpoint path, got '" + path + "'";
    co_return TrainingOutcome(make_error_code(errc::invalid_argument), TrainingClient());
  }
  if (error_code ec = co_await holder->ensure_session(diag)) co_return TrainingOutcome(ec, TrainingClient());
  if (holder->config().create_model_via_load_weights) {
    co_return co_await create_via_load(holder, std::move(path), with_optimizer, std::move(options), diag);
  }
  co_return co_await create_then_load(holder, std::move(path), with_optimizer, std::move(options), diag);
}

asio::awaitable<OperationResult<SamplingClient>> sampling_client_op(HolderPtr holder, SamplingSource source,
                                                                    SamplingClientOptions options, diagnostics& diag) {
  co_return co_await sampling::create_sampling_session_op(std::move(holder), std::move(source), std::move(options),
                                                          diag);
}

bool runs_in_this_thread(const asio::any_io_executor& executor) {
  const auto* io = executor.target<asio::io_context::executor_type>();
  return io == nullptr || io->context().stopped() || io->running_in_this_thread();
}

}  // namespace

}  // namespace tinker::client::session

namespace tinker::detail {

using namespace client::session;  // the operations above

// Each is a public call whose failure telemetry reports with SESSION_END, as the Python SDK's
// capture_exceptions(fatal=True) does (doc/protocol.md#telemetry).
void service_create_lora_training_client(HolderPtr h, LoraTrainingOptions o, diagnostics* d,
                                         Handler<TrainingClient> handler) {
  HolderPtr reporter = h;
  spawn_reported<TrainingClient>(std::move(reporter), true, d, std::move(handler), &create_lora_op, std::move(h),
                                 std::move(o));
}

void service_create_training_client_from_state(HolderPtr h, std::string path, bool with_optimizer, FromStateOptions o,
                                               diagnostics* d, Handler<TrainingClient> handler) {
  HolderPtr reporter = h;
  spawn_reported<TrainingClient>(std::move(reporter), true, d, std::move(handler), &from_state_op, std::move(h),
                                 std::move(path), with_optimizer, std::move(o));
}

void service_create_sampling_client(HolderPtr h, SamplingSource source, SamplingClientOptions options, diagnostics* d,
                                    Handler<SamplingClient> handler) {
  HolderPtr reporter = h;
  spawn_reported<SamplingClient>(std::move(reporter), true, d, std::move(handler), &sampling_client_op, std::move(h),
                                 std::move(source), std::move(options));
}

}  // namespace tinker::detail

namespace tinker {

ServiceClient::ServiceClient(boost::asio::any_io_executor executor, ServiceClientOptions options)
    : holder_(detail::ClientHolder::create(std::move(executor), std::move(options))),
      uncaught_at_construction_(std::uncaught_exceptions()) {}

ServiceClient::ServiceClient(boost::asio::any_io_executor executor)
    : ServiceClient(std::move(executor), ServiceClientOptions(ClientOptions::from_environment())) {}

ServiceClient::~ServiceClient() {
  if (!holder_) return;
  // doc/service.md#finishing-a-session: destroyed while an exception unwinds through the scope
  // that made it, the program failed: the shutdown's finish says `errored`.
  const bool unwinding = std::uncaught_exceptions() > uncaught_at_construction_;
  // The holder lives on its io thread: shut it down there (at once when this is that thread or
  // the io_context has stopped).
  if (client::session::runs_in_this_thread(holder_->executor())) {
    if (unwinding) {
      holder_->impl().shutdown_finish_reason = ClientSessionFinishReason(ClientSessionFinishReason::Kind::errored);
    }
    holder_->shutdown();
  } else {
    boost::asio::post(holder_->executor(), [holder = holder_, unwinding] {
      if (unwinding) {
        holder->impl().shutdown_finish_reason = ClientSessionFinishReason(ClientSessionFinishReason::Kind::errored);
      }
      holder->shutdown();
    });
  }
}

ServiceClient::ServiceClient(ServiceClient&&) noexcept = default;
ServiceClient& ServiceClient::operator=(ServiceClient&& other) noexcept {
  if (this != &other) {
    ServiceClient discarded(std::move(*this));
    holder_ = std::move(other.holder_);
    uncaught_at_construction_ = other.uncaught_at_construction_;
  }
  return *this;
}

std::string ServiceClient::session_id() const {
  return holder_ ? holder_->session_id() : std::string();
}

}  // namespace tinker
