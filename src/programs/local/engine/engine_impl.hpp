// Engine internals shared by the engine's translation units (sessions, models, futures,
// checkpoints, sampling, REST). Everything here lives on the io thread; only `compute` hands work
// to the worker pool, and the work it hands over touches nothing but what it captured.
#pragma once

#include "programs/local/engine/backend.hpp"
#include "programs/local/engine/checkpoint_store.hpp"
#include "programs/local/engine/engine.hpp"
#include "programs/local/engine/ids.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace tinker::local {

namespace engine_detail {

struct SessionRecord;

/// A failed operation: answered as {"error", "category"}.
struct Failure {
  std::string message;
  RequestErrorCategory category = RequestErrorCategory::user;
};

/// The message of a caught exception for a failed future: tinker::error's diagnostics message
/// when it has one (without the error-code prefix), else what().
std::string exception_message(const std::exception& e);
/// An operation result already encoded as JSON (every result type except the two bulk ones).
struct JsonResult {
  std::string text;
};
using OpResult = std::variant<Failure, JsonResult, ForwardBackwardOutput, SampleResponse>;

/// One future (doc/protocol.md#futures): its state, its result and the long polls waiting for it.
struct FutureRecord {
  enum class State : std::uint8_t { pending, complete, failed, evicted };

  std::string request_id;
  const char* endpoint = "";  ///< for the pause hook and logs
  std::string owner;
  SessionRecord* session = nullptr;
  State state = State::pending;
  std::optional<QueueState> paused_state;  ///< set by the pause hook
  std::chrono::steady_clock::time_point paused_until{};
  std::chrono::system_clock::time_point done_at{};  ///< engine clock
  std::variant<std::monostate, ForwardBackwardOutput, SampleResponse> typed;
  std::string json;   ///< the JSON answer (cached encoding)
  std::string proto;  ///< the protobuf answer (cached encoding)
  std::vector<boost::asio::steady_timer*> waiters;

  bool done() const noexcept { return state != State::pending; }
};
using FuturePtr = std::shared_ptr<FutureRecord>;

/// What a waiting poll needs after it wakes up, copied so that it never touches the engine again.
struct PollSettings {
  std::chrono::milliseconds hold{0};
  bool try_again_as_408 = false;
  std::size_t inline_payload_limit = 0;
  bool shutting_down = false;
};
/// The answer to a poll of `future` (which may still be pending). Throws HttpError 410/408.
RetrieveOutcome poll_answer(FutureRecord& future, bool allow_metadata_only, bool accept_protobuf,
                            const PollSettings& settings);

/// A sampling session's completions for retrieve_futures (completions.cpp), shared with the long
/// polls waiting on it so that they never touch the engine after their wait.
struct CompletionLog {
  struct Event {
    std::int64_t cursor = 0;
    std::string request_id;
    bool failed = false;
    std::chrono::system_clock::time_point done_at{};  ///< engine clock: events go with their results
  };
  std::int64_t last_cursor = 0;                        ///< cursors count up from 1 per sampler
  std::map<std::int64_t, std::deque<Event>> by_clone;  ///< cloned_sampler_id -> events, oldest first
  std::vector<boost::asio::steady_timer*> waiters;     ///< long polls woken by a new event
};

/// A sampled sequence's lengths, for provenance checks (completions.cpp).
struct SequenceLengths {
  std::int32_t prompt = 0;
  std::int32_t sampled = 0;
};

struct SessionRecord {
  std::string id;
  std::string owner;
  std::vector<std::string> tags;
  JsonObject user_metadata;
  std::string sdk_version;
  std::optional<std::string> project_id;
  std::optional<std::string> display_name;  ///< CreateSessionRequest::display_name
  Timestamp created{};
  std::chrono::system_clock::time_point last_seen{};
  bool expired = false;
  /// Set when the session ended on purpose: client_finished (finish_session) or cancelled (admin).
  /// Later requests naming it are refused (session_search.cpp).
  std::optional<SessionStatus> ended;
  std::map<std::int64_t, std::string> model_tickets;  ///< model_seq_id -> request id of its creation
  std::vector<std::string> model_ids;
  std::vector<std::string> sampler_ids;
  std::unordered_set<FuturePtr> incomplete;  ///< failed with "session expired" if the session expires
  int trace_polls = 0;
  std::optional<std::string> trace_token;
  /// Sampled sequences by number: SampledSequence::sequence_id is "<session id>:seq:<n>".
  std::vector<SequenceLengths> sequences;
};

/// A model-scoped operation that arrived and waits for its turn.
struct PendingOp {
  const char* name = "";
  FuturePtr future;
  std::function<void(std::int64_t seq_id)> run;  ///< starts it; it ends with finish_op
};

enum class ModelStatus { creating, ready, failed, unloaded, detached };

/// A model (= training run). Detached runs are known only from checkpoints on disk (after a
/// restart): they are listed, their checkpoints load into new models, but they take no ops.
struct ModelRecord {
  std::string id;
  SessionRecord* session = nullptr;
  std::string owner;
  std::string base_model;
  LoraConfig lora_config;
  std::optional<JsonObject> user_metadata;
  /// Holds a copy made by copy_weights (doc/local.md#copying-weights): it takes no operations.
  bool holds_copy = false;
  /// Fixed at creation (doc/local.md#dimuon): optim_step refuses the other optimizer's parameters.
  OptimizerConfig optimizer = AdamOptimizerConfig();
  ModelStatus status = ModelStatus::creating;
  /// Set by Engine::corrupt_model (status failed): why every later operation fails as the
  /// service's corrupted runs do (category server).
  std::optional<std::string> corruption;
  std::shared_ptr<ModelState> state;
  Timestamp created{};
  Timestamp last_request_time{};

  // Ordering (doc/local.md#ordering-and-futures): ops run one at a time in seq_id order; creation
  // is seq 0.
  std::int64_t cursor = -1;  ///< the last seq_id that finished
  bool busy = false;
  bool pumping = false;
  PendingOp running;
  std::map<std::int64_t, PendingOp> held;
  std::unordered_map<std::int64_t, std::string> tickets;  ///< seq_id -> request id
  std::optional<std::string> unload_ticket;

  std::vector<std::int64_t> applied_seq_ids;
  std::vector<std::string> applied_ops;
  std::vector<Timestamp> applied_times;
  /// When each applied op ran (steady clock), for benchmarks of the model's idle time.
  std::vector<OperationTiming> applied_timings;
  std::chrono::steady_clock::time_point running_started{};  ///< when `running` started
};

struct SamplerRecord {
  std::string id;
  SessionRecord* session = nullptr;  ///< null for ad-hoc samplers (asample by base_model/model_path)
  std::string owner;
  std::string base_model;
  std::optional<std::string> model_path;
  std::string origin;                                     ///< what created it, for create_sampling_session idempotency
  std::shared_ptr<const ModelState> weights;              ///< null = the base model alone
  std::unordered_map<std::int64_t, std::string> tickets;  ///< seq_id -> request id
  std::shared_ptr<CompletionLog> completions = std::make_shared<CompletionLog>();  ///< for retrieve_futures
};

struct CheckpointRecord {
  CheckpointMeta meta;
  int archive_requests = 0;
  std::optional<std::string> archive_token;
};

/// adapter_config.json of a PEFT adapter exported from `meta`'s checkpoint (archive.cpp).
std::string peft_adapter_config(const CheckpointMeta& meta, const AdapterExport& adapter);

/// An external-weights upload between its start and its finish (external_uploads.cpp).
struct UploadRecord {
  std::string id;
  std::string owner;
  std::string secret;  ///< the value the PUTs must carry in X-Tinker-Upload-Token
  std::string base_model;
  LoraConfig lora;
  std::chrono::system_clock::time_point expires;
  std::map<std::string, std::string> received;  ///< file name -> bytes
  std::optional<std::string> finished_path;     ///< set by a successful finish (a repeated finish answers it)
};

/// What a usage counter counts; billing.cpp turns each kind into its billing event. The values
/// order the counters, and so the entries of a billing usage answer.
enum class UsageKind : std::uint8_t {
  training_tokens = 0,          ///< model input tokens of successful forward/backward ops
  sampling_prefill_tokens = 1,  ///< prompt tokens of successful samples (never cached)
  sampled_tokens = 2,           ///< tokens generated by successful samples
  checkpoints_saved = 3,        ///< checkpoints saved
};

/// Usage counters for billing, per hour bucket.
struct UsageKey {
  std::int64_t bucket_hour = 0;  ///< hours since the epoch
  std::string user_id;
  std::string session_id;
  std::string base_model;
  UsageKind kind = UsageKind::training_tokens;
  auto operator<=>(const UsageKey&) const = default;
};

// Optimizers (optimizers.cpp, doc/local.md#dimuon).
/// Why tinker-local cannot train with `config` (an unknown type, a Dimuon version other than 1),
/// naming the field `field`; empty when it can.
std::optional<std::string> optimizer_problem(const OptimizerConfig& config, std::string_view field);
/// The optimizer whose state a checkpoint of this type holds ("adamw" when unsaid).
OptimizerConfig checkpoint_optimizer(const CheckpointMeta& meta);
/// The step parameters of an optim_step body: `optim_params`, or the 0.25 form `adam_params`.
/// Throws HttpError 400 when there are neither or both, or when they are not for `model`'s
/// optimizer (nothing is applied, and the seq_id is not taken).
OptimParams optim_params_for(const OptimStepRequest& request, const ModelRecord& model);

}  // namespace engine_detail

class Engine::Impl {
 public:
  using FuturePtr = engine_detail::FuturePtr;
  using OpResult = engine_detail::OpResult;
  using Failure = engine_detail::Failure;
  using JsonResult = engine_detail::JsonResult;
  using SessionRecord = engine_detail::SessionRecord;
  using ModelRecord = engine_detail::ModelRecord;
  using SamplerRecord = engine_detail::SamplerRecord;
  using CheckpointRecord = engine_detail::CheckpointRecord;
  using CheckpointMeta = engine_detail::CheckpointMeta;
  using ModelState = engine_detail::ModelState;

  Impl(boost::asio::any_io_executor io, const ServerOptions& options, std::shared_ptr<engine_detail::Backend> backend);
  ~Impl();

  void shutdown();

  // --- futures (futures.cpp) ---
  FuturePtr new_future(const char* endpoint, const std::string& owner, SessionRecord* session);
  void complete(const FuturePtr& future, OpResult result);
  /// Runs `start` now, or after the future's scripted pause (QueuePauseHook).
  void after_pause(const FuturePtr& future, std::function<void()> start);
  /// Runs `then` once `ready_at` has passed (now if it has): the simulated compute time of
  /// ServerOptions::training_delay and sampling_delay. Dropped if the engine shuts down first.
  void at_time(std::chrono::steady_clock::time_point ready_at, std::function<void()> then);
  /// The future a poll asks for: 404 unknown (or another user's), 410 evicted.
  FuturePtr future_for_poll(const std::string& request_id, const Principal& who);
  engine_detail::PollSettings poll_settings() const;
  void evict_old_results();

  /// Runs `work` (returning OpResult) on a worker, or inline in null-model mode, then `done`
  /// on the io thread. Exceptions of `work` become failures: UserError and tinker::error (the
  /// caller's data) are category "user", anything else "server".
  template <class Work, class Done>
  void compute(Work work, Done done);

  // --- sessions (sessions.cpp) ---
  /// The caller's live session, refreshed (any request counts as a sign of life). 404 otherwise.
  SessionRecord& live_session(std::string_view session_id, const Principal& who);
  /// Expires the session if its heartbeat is overdue; true if it is expired.
  bool check_expiry(SessionRecord& session);
  void expire(SessionRecord& session);
  void sweep();
  void schedule_sweep();
  /// Where the session stands (session_search.cpp): its end if it ended, failed when one of its training runs
  /// failed, nullopt once expired (not known to be running), else active.
  std::optional<SessionStatus> session_status(const SessionRecord& session) const;

  // --- models and ordering (models.cpp) ---
  ModelRecord& model_for_submit(std::string_view model_id, const Principal& who);
  ModelRecord* find_model(std::string_view model_id);
  const ModelRecord* find_model(std::string_view model_id) const;
  UntypedAPIFuture submit_ordered(ModelRecord& model, std::optional<std::int64_t> seq_id, const char* op,
                                  const std::string& owner, std::function<void(std::int64_t)> run);
  void pump(ModelRecord& model);
  void start_op(ModelRecord& model, std::int64_t seq_id, engine_detail::PendingOp op);
  void finish_op(ModelRecord& model, std::int64_t seq_id, OpResult result);
  /// Fails (and drops) every op still waiting for its turn.
  void fail_held(ModelRecord& model, const std::string& message, RequestErrorCategory category);
  ModelRecord& add_model(std::string id, SessionRecord* session, const std::string& owner, std::string base_model,
                         LoraConfig lora, std::optional<JsonObject> user_metadata);
  const CatalogueEntry* find_base(std::string_view name) const;
  /// "base_model: unknown model NAME; this server serves A, B, ...".
  std::string unknown_model_message(std::string_view name) const;
  model::LoraSettings lora_settings(const LoraConfig& config, std::string_view model_id) const;
  /// Throws HttpError 400 naming the chunk ("<path>.chunks[j]: ...") for an image chunk that
  /// `base_model` does not take, or whose bytes or expected_tokens the model refuses
  /// (image_checks.cpp). Nothing for a base model the catalogue does not hold.
  void check_image_chunks(const ModelInput& input, const std::string& path, const std::string& base_model) const;
  /// The same for every datum ("data[i].model_input").
  void check_image_chunks(const ForwardBackwardInput& input, const std::string& base_model) const;

  // --- training ops (training.cpp) ---
  void run_forward_backward(ModelRecord& model, std::int64_t seq_id, std::shared_ptr<const ForwardBackwardInput> input,
                            bool forward_only);
  void run_optim_step(ModelRecord& model, std::int64_t seq_id, OptimParams params);
  /// finish_op once ServerOptions::training_delay has passed after the real computation.
  void finish_after_training_delay(ModelRecord& model, std::int64_t seq_id, OpResult result);
  void run_save(ModelRecord& model, std::int64_t seq_id, CheckpointType type, std::optional<std::string> name,
                std::optional<std::int64_t> ttl_seconds, bool overwrite,
                std::optional<std::map<std::string, std::string>> user_metadata = std::nullopt);
  void run_ephemeral_sampler(ModelRecord& model, std::int64_t seq_id, std::int64_t sampling_session_seq_id);
  /// save_weights_external (external_weights.cpp): a PEFT directory beside the state.
  void run_save_external(ModelRecord& model, std::int64_t seq_id, std::string name,
                         std::optional<std::int64_t> ttl_seconds);
  void run_load(ModelRecord& model, std::int64_t seq_id, std::string path, bool optimizer,
                std::optional<std::string> access_token, bool creates_model);
  /// Checks a training checkpoint path for loading; a Failure (category user) says why not.
  std::variant<Failure, CheckpointMeta> resolve_loadable(const std::string& path, const std::string& user_id,
                                                         const std::optional<std::string>& access_token);

  // --- checkpoints (checkpoints.cpp, imports.cpp) ---
  /// Writes options.adapters as public sampler checkpoints of the run "local-imports" (imports.cpp).
  /// Throws tinker::error naming the file and tensor of an adapter that does not load or fit.
  void import_adapters();
  void rescan_checkpoints();
  CheckpointRecord* find_checkpoint(const std::string& tinker_path);
  const CheckpointRecord* find_checkpoint(const std::string& tinker_path) const;
  bool is_live(const CheckpointMeta& meta) const;
  bool can_read(const CheckpointMeta& meta, const std::string& user_id) const;
  /// The project of a checkpoint's run's session, "default" without one (checkpoint_search.cpp).
  std::string checkpoint_project(const CheckpointMeta& meta) const;
  void index_checkpoint(const CheckpointMeta& meta);
  void purge_expired_checkpoints();
  /// The caller's own live checkpoint at run_id/checkpoint_id (REST); 404 otherwise.
  CheckpointRecord& owned_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who);
  std::vector<const CheckpointMeta*> run_checkpoints(std::string_view run_id) const;
  /// The checkpoint at `model_path` if `who` may read it; HttpError 400 (bad path) / 404.
  const CheckpointMeta& readable_checkpoint(const std::string& model_path, const Principal& who) const;
  /// Loads a checkpoint's weights as an immutable sampler snapshot (io thread; files are small).
  std::shared_ptr<const ModelState> load_snapshot(const CheckpointMeta& meta);

  // --- sampling (sampling.cpp) ---
  SamplerRecord& resolve_adhoc_sampler(const SampleRequest& request, const Principal& who);
  void start_sample(const FuturePtr& future, SamplerRecord& sampler, SampleRequest request, std::int64_t seq_id);

  // --- sequence ids and completions (completions.cpp) ---
  /// Gives each sequence of `response` its session-scoped id and remembers its lengths.
  void assign_sequence_ids(SessionRecord& session, std::int64_t prompt_length, SampleResponse& response);
  /// Appends the completion of a sample `future` (finished or failed) to `log` and wakes its long polls.
  void record_completion(engine_detail::CompletionLog& log, const engine_detail::FutureRecord& future,
                         std::int64_t seq_id);
  /// With SampleRequest::record_stability_info: an audit entry "sample.stability_info" for request
  /// `request_id` of `sampler_id` whose purpose holds statistics of the sampled logprobs.
  void record_stability_info(const std::string& owner, const std::string& sampler_id, const std::string& request_id,
                             const SampleResponse& response);
  /// Throws UserError naming the datum and span for provenance that does not belong to `session`.
  void check_provenance(const SessionRecord& session, const ForwardBackwardInput& input) const;

  // --- REST (rest.cpp) ---
  /// As a listing shows it; `owner_view` false shows only the run's public checkpoints.
  TrainingRun training_run(const ModelRecord& model, bool owner_view) const;
  bool has_public_checkpoint(std::string_view run_id) const;
  std::string trace_bytes(const SessionRecord& session) const;

  // --- billing and audit (billing.cpp) ---
  void add_usage(const std::string& user_id, const std::string& session_id, const std::string& base_model,
                 engine_detail::UsageKind kind, std::int64_t amount);
  void audit_event(const std::string& owner, std::string event, std::optional<std::string> model_id,
                   std::optional<std::string> tinker_path);
  Timestamp now_ts() const { return clock.now_timestamp(); }

  // --- state ---
  boost::asio::any_io_executor io;
  ServerOptions options;
  std::shared_ptr<engine_detail::Backend> backend;
  std::filesystem::path data_dir;
  bool owns_data_dir = false;
  engine_detail::CheckpointStore store;
  EngineClock clock;
  QueuePauseHook pause_hook;
  engine_detail::UuidGenerator ids;
  std::shared_ptr<int> alive = std::make_shared<int>(0);  ///< handlers posted to io check it
  bool shutting_down = false;
  std::optional<boost::asio::thread_pool> pool;
  boost::asio::steady_timer sweep_timer;
  std::unordered_set<boost::asio::steady_timer*> pause_timers;

  std::unordered_map<std::string, FuturePtr> futures;
  std::deque<FuturePtr> completed_order;  ///< by completion time, for eviction
  /// Evicted records by eviction time: they answer 410 for one more retention period, then
  /// are forgotten (404), so a long-running server does not keep every id forever.
  std::deque<std::pair<std::chrono::system_clock::time_point, std::string>> evicted_order;
  std::unordered_map<std::string, std::unique_ptr<SessionRecord>> sessions;
  std::vector<SessionRecord*> session_order;  ///< creation order
  std::map<std::string, std::unique_ptr<ModelRecord>> models;
  std::unordered_map<std::string, std::unique_ptr<SamplerRecord>> samplers;
  std::map<std::string, CheckpointRecord> checkpoints;  ///< by tinker path
  std::size_t pending_samples = 0;

  std::map<engine_detail::UsageKey, std::int64_t> usage;
  std::vector<std::pair<std::string, AuditLogEntry>> audit_entries;  ///< (owner, entry)
  std::size_t telemetry_events = 0;
  std::deque<std::string> telemetry_batches;  ///< the newest request bodies as received, for tests (Server::telemetry)
  std::unordered_map<std::string, Download> downloads;
  std::map<std::string, engine_detail::UploadRecord> uploads;  ///< by upload id (external_uploads.cpp)
};

template <class Work, class Done>
void Engine::Impl::compute(Work work, Done done) {
  auto guarded = [](Work& w) -> OpResult {
    try {
      return w();
    } catch (const UserError& e) {
      return Failure{e.what(), RequestErrorCategory::user};
    } catch (const tinker::error& e) {
      return Failure{engine_detail::exception_message(e), RequestErrorCategory::user};
    } catch (const std::exception& e) {
      return Failure{e.what(), RequestErrorCategory::server};
    }
  };
  if (backend->inline_compute() || !pool) {
    done(guarded(work));
    return;
  }
  std::weak_ptr<int> token = alive;
  boost::asio::post(*pool, [guarded, work = std::move(work), done = std::move(done), io = io, token]() mutable {
    OpResult result = guarded(work);
    boost::asio::post(io, [result = std::move(result), done = std::move(done), token]() mutable {
      if (token.expired()) return;
      done(std::move(result));
    });
  });
}

}  // namespace tinker::local
