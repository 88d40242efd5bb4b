/// \file
/// tinker-local: a Tinker-compatible server on loopback, embeddable in-process (tinker::local,
/// `doc/local.md`).
#pragma once

#include <tinker/config.hpp>
#include <tinker/types/common.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// tinker-local: a Tinker-compatible server on loopback, embeddable in-process
/// (`doc/local.md`).
///
///     tinker::local::ServerOptions options;          // ephemeral port, fresh temporary data dir
///     tinker::local::Server server(std::move(options));
///     server.start();
///     std::string url = server.base_url();            // "http://127.0.0.1:<port>"
///
/// The server runs its HTTP front end and all state on one internal thread and the model
/// computations on a small worker pool; every public member function is safe to call from any
/// thread. It links only the SDK's types and codecs, never its client code.
namespace tinker::local {

/// The tokenizers tinker-local builds itself from its bundled corpus.
enum class TinyTokenizer {
  byte_level_bpe,  ///< a Hugging Face `tokenizer.json` shaped like Qwen3's, 1024 ids (ServerOptions::bpe_tokenizer_id)
  sentencepiece,   ///< a SentencePiece `tokenizer.model`, 1024 ids (ServerOptions::sp_tokenizer_id)
  /// byte_level_bpe plus the rest of Qwen's added tokens (thinking, vision, tool markup), 1047 ids,
  /// so Qwen3.5's chat format renders on it (ServerOptions::vl_tokenizer_id)
  byte_level_bpe_vl,
};

/// One base model of the catalogue. Every entry is the same tiny transformer architecture with
/// frozen weights seeded by `name`, over its tokenizer, whose id `get_info` reports.
class CatalogueEntry {
 public:
  /// An unnamed entry.
  CatalogueEntry() = default;
  /// The model `name_` over `tokenizer_`.
  explicit CatalogueEntry(std::string name_, std::int64_t max_context_length_ = 2048,
                          TinyTokenizer tokenizer_ = TinyTokenizer::byte_level_bpe)
      : name(std::move(name_)), max_context_length(max_context_length_), tokenizer(tokenizer_) {}

  std::string name;                                         ///< the base model's name, e.g. "Qwen/Qwen3-8B"
  std::int64_t max_context_length = 2048;                   ///< reported by get_server_capabilities, in tokens
  TinyTokenizer tokenizer = TinyTokenizer::byte_level_bpe;  ///< which of the tokenizers it uses
  int d_model = 32;                                         ///< width of the tiny transformer
  int d_mlp = 64;                                           ///< hidden width of its MLP
  /// Takes image chunks (counted by Qwen-VL's rule, `doc/local.md#images`); other models refuse them.
  bool vision = false;
  /// Empty: the frozen weights are seeded by `name`. Otherwise they are read from this Hugging
  /// Face directory (the layout `export_model` writes, `doc/local.md#model-directories`); build
  /// such an entry with `model_dir_entry`, which fills the other fields from its config.json.
  std::filesystem::path model_dir;
  /// The end-of-sequence token: sampling stops after it unless SamplingParams::stop is set (an empty
  /// stop list disables it). Empty (the default): the tiny models have no implicit stop.
  std::optional<TokenId> eos_token_id;
};

/// A PEFT LoRA adapter directory served as a sampler checkpoint (`doc/local.md#model-directories`).
class AdapterImport {
 public:
  /// An empty import.
  AdapterImport() = default;
  /// The adapter in `directory_` over `base_model_`, served as
  /// `tinker://local-imports/sampler_weights/<name_>`.
  AdapterImport(std::string name_, std::filesystem::path directory_, std::string base_model_)
      : name(std::move(name_)), directory(std::move(directory_)), base_model(std::move(base_model_)) {}

  std::string name;                 ///< the checkpoint name, [A-Za-z0-9._-]{1,128}
  std::filesystem::path directory;  ///< adapter_model.safetensors + adapter_config.json
  std::string base_model;           ///< a catalogue entry whose shapes the adapter fits
};

/// The default catalogue: "tinker-local/tiny-lm" plus stand-ins named like common real models
/// ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"), so scripts written for the real service run
/// unchanged, all over the byte-level BPE tokenizer; "tinker-local/tiny-lm-sp" over the
/// SentencePiece one; and the vision model "tinker-local/tiny-vl" over the byte-level BPE with
/// Qwen's markup. The stand-ins are the same tiny model, seeded by their own names.
std::vector<CatalogueEntry> default_catalogue();

/// The flags `client/config` returns (see tinker::ClientConfigResponse for their meaning); the
/// server behaves accordingly.
class ClientConfigFlags {
 public:
  /// The protocol's defaults.
  ClientConfigFlags() = default;

  bool pjwt_auth_enabled = false;                         ///< mint JWTs at auth/token and require them
  bool proto_compress_fwdbwd = false;                     ///< ask for zstd-compressed forward_backward bodies
  bool parallel_fwdbwd_chunks = true;                     ///< let clients submit chunks concurrently
  bool create_model_via_load_weights = false;             ///< create-from-checkpoint in one load_weights
  std::int64_t fwdbwd_max_chunk_len = 1024;               ///< most datums per forward_backward request
  std::int64_t fwdbwd_max_chunk_bytes_count = 5'000'000;  ///< most estimated bytes per forward_backward request
  std::int64_t sample_max_concurrent_requests = 2000;     ///< clients' end-to-end sample concurrency
  bool sample_no_retries =
      false;  ///< sample() without the client's sample resubmission (`doc/protocol.md#sample-resubmission`)
  bool sample_enable_stuck_detection = true;  ///< false: the client's progress timeout is off
  /// Announce `sample_use_retrieve_futures` (true by default): clients collect finished samples with
  /// the batched /api/v1/retrieve_futures. Empty: leave the flag out, as a 0.25-era server does.
  std::optional<bool> sample_use_retrieve_futures = true;
  bool dynamic_config_enabled = true;               ///< false: `client/dynamic_config` answers 404
  std::int64_t dynamic_refresh_interval_sec = 300;  ///< what `client/dynamic_config` answers
};

/// What a fault does when it fires.
enum class FaultKind {
  status,          ///< answer `status` (429, 408, 410, 500, 502, 503, 504, 400, 402, ...) with a JSON detail
  reset_before,    ///< close the connection without answering
  reset_mid_body,  ///< send the head and half the body, then close
  delay,           ///< hold the request for `delay`, then serve it normally
  truncated_body,  ///< declare the full Content-Length, send half the body, then close
  malformed_json,  ///< answer 200 with a body that is not valid JSON
  pause_queue,     ///< futures of this endpoint report `queue_state` for `delay` before running
};

/// How a 429/503 fault states its Retry-After (`doc/protocol.md#headers`).
enum class RetryAfterForm {
  none,          ///< no header
  seconds,       ///< `retry-after: <seconds>`
  http_date,     ///< `retry-after: <HTTP date>`
  milliseconds,  ///< `retry-after-ms: <milliseconds>`
};

/// One fault-injection rule. It applies to requests whose path ends with `endpoint` (for example
/// "retrieve_future", "forward_backward", "training_runs"; "*" matches all of /api/v1/;
/// "_downloads" matches the unauthenticated downloads at /_downloads/..., i.e. the signed URLs of
/// checkpoint archives and trace exports, so reset_mid_body / truncated_body cut an archive
/// download half-way, also a ranged 206 one; "_hub" matches the Hugging Face Hub file paths
/// /{org}/{name}/resolve/{revision}/{file}, which a file name such as "tokenizer.json" also
/// matches by suffix). It fires
/// on the calls listed in `on_calls` (1-based, counted per rule), else with `probability` drawn from
/// the server's seeded generator, at most `max_fires` times (negative = no limit).
///
/// `doc/local.md#fault-injection` shows the same rules as `tinker-local --fault` specs.
class FaultRule {
 public:
  /// An empty rule (a status-500 fault on no endpoint).
  FaultRule() = default;
  /// A fault of `kind_` on `endpoint_`; set the rest afterwards.
  FaultRule(std::string endpoint_, FaultKind kind_) : endpoint(std::move(endpoint_)), kind(kind_) {}

  std::string endpoint;                               ///< path suffix it applies to (see above)
  FaultKind kind = FaultKind::status;                 ///< what it does
  int status = 500;                                   ///< for status faults: the status answered
  RetryAfterForm retry_after = RetryAfterForm::none;  ///< for status faults: the retry hint sent
  std::chrono::milliseconds retry_after_value{1000};  ///< the hint's value
  std::chrono::milliseconds delay{0};                 ///< for delay and pause_queue: how long
  std::string queue_state = "paused_capacity";        ///< for pause_queue: paused_capacity | paused_rate_limit
  double probability = 0.0;            ///< chance in [0, 1] of firing on a call, when `on_calls` is empty
  std::vector<std::int64_t> on_calls;  ///< the rule's calls it fires on, 1-based
  std::int64_t max_fires = -1;         ///< most times it fires; negative = no limit
  /// For status faults: also send `x-should-retry: true|false`; empty = no header.
  std::optional<bool> should_retry;
};

/// How a Server is set up; the defaults serve the default catalogue on an ephemeral loopback
/// port.
class ServerOptions {
 public:
  /// The defaults below.
  ServerOptions() = default;

  std::string host = "127.0.0.1";  ///< address to listen on
  std::uint16_t port = 0;          ///< 0 = ephemeral
  /// Serve under this path prefix (such as "/services/tinker"); base_url() includes it. Empty = at
  /// the root.
  std::string path_prefix;
  /// Sessions metadata and checkpoints live here. Empty = a fresh temporary directory, removed
  /// when the server is destroyed.
  std::filesystem::path data_dir;
  /// Where the tokenizer is installed in the Hugging Face cache layout. Empty = `$HF_HUB_CACHE`,
  /// else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
  std::filesystem::path hf_hub_cache;
  /// The repo ids the tokenizers are installed and served under, and that `get_info` reports
  /// for the catalogue entries using them ("org/name" of letters, digits, '.', '_', '-'). Tests
  /// give ids of their own to have repos no cache holds. Only the tokenizers the catalogue uses
  /// are installed and served.
  ///@{
  std::string bpe_tokenizer_id = "tinker-local/tiny-bpe-1k";
  std::string sp_tokenizer_id = "tinker-local/tiny-sp-1k";
  std::string vl_tokenizer_id = "tinker-local/tiny-bpe-vl";
  ///@}
  /// Accepted API keys. Empty = any key starting with "tml-".
  std::vector<std::string> api_keys;
  /// The Hugging Face Hub-compatible tokenizer files (/{org}/{name}/resolve/{revision}/{file})
  /// answer 401 unless the request has "Authorization: Bearer <an accepted API key>", as the
  /// Hub answers for a gated repo. Off: they are public, as the Hub's public repos.
  bool hub_requires_token = false;
  LogLevel log_level = LogLevel::warning;  ///< info logs one line per request
  /// Null-model mode: every operation completes at once with well-formed, correctly sized
  /// results and no model computation (for client benchmarks).
  bool null_model = false;
  int worker_threads = 2;  ///< threads for the model computations
  /// Simulated compute time (`doc/local.md#simulated-compute-time`): every forward_backward,
  /// forward and optim_step keeps its model busy this much longer than its real computation, so
  /// later operations of the same model wait, as on a slower accelerator. No worker is held
  /// meanwhile. 0 = none.
  std::chrono::milliseconds training_delay{0};
  /// Simulated sampling time: every sample request takes at least this long from its start to its
  /// result (samples still run concurrently). 0 = none.
  std::chrono::milliseconds sampling_delay{0};
  std::vector<CatalogueEntry> catalogue = default_catalogue();  ///< the base models served
  ClientConfigFlags client_config;                              ///< what `client/config` announces
  /// PEFT adapters loaded at start() as public sampler checkpoints of the run "local-imports"
  /// (`--adapter`); start() throws tinker::error naming the file and tensor for one that does not
  /// load or fit its base model.
  std::vector<AdapterImport> adapters;

  std::chrono::milliseconds long_poll_hold{5000};  ///< retrieve_future holds a pending future this long
  bool try_again_as_408 = false;                   ///< answer a pending poll with 408 instead of try_again
  std::chrono::seconds session_expiry{300};        ///< a session without heartbeat for this long expires
  std::chrono::seconds result_retention{3600};     ///< completed results are kept this long, then 410
  std::size_t inline_payload_limit = 1 << 20;      ///< larger results answer complete_metadata first
  std::size_t max_request_body = 256u << 20;       ///< larger request bodies get 413
  std::chrono::seconds jwt_lifetime{3600};         ///< JWTs minted at auth/token expire after this
  int archive_building_polls = 0;                  ///< the first K archive requests per checkpoint answer 503
  bool archive_json_form = false;                  ///< answer archive requests with 200 JSON instead of 302
  int trace_export_pending_polls = 1;              ///< trace_export answers "pending" this many times first
  std::size_t sample_queue_limit = 4096;           ///< with the backpressure header, more pending samples get 429
  std::int64_t default_max_tokens = 16;            ///< for sampling requests without max_tokens

  std::uint64_t fault_seed = 1;   ///< seed of the generator behind FaultRule::probability
  std::vector<FaultRule> faults;  ///< faults active from the start (Server::set_faults replaces them)

  /// The arrival log keeps the newest this many requests (0 = unlimited), so a long benchmark
  /// does not grow without bound; AuditReport::requests then starts at a later index.
  std::size_t request_log_limit = 200'000;
  /// A connection that sends nothing for this long is closed (idle keep-alive connections
  /// included); a request body must also arrive within it.
  std::chrono::seconds idle_timeout{120};
  /// Once a request's first byte has arrived, its whole head must arrive within this time, or the
  /// client gets 408 and the connection is closed (a slow-headers client cannot hold it open).
  std::chrono::milliseconds header_timeout{10000};
  /// Largest request head (request line and header fields); larger ones get 431.
  std::size_t max_header_bytes = 64u << 10;
  /// Most connections open at once; a client beyond them gets 503 with Retry-After and a closed
  /// connection. 0 = the process's open-file limit minus a reserve of 64 descriptors, so that
  /// file descriptors never run out.
  std::size_t max_connections = 0;
};

/// One request as it arrived, for tests and the audit.
class RequestRecord {
 public:
  std::int64_t index = 0;                         ///< arrival order, from 0
  std::chrono::system_clock::time_point arrived;  ///< when its head arrived
  std::string method;                             ///< e.g. "POST"
  std::string path;                               ///< target without the query
  int status = 0;                                 ///< status answered (0 = connection closed by a fault)
  std::optional<std::int64_t> seq_id;             ///< from the body, when it has one
  std::optional<std::string> model_id;            ///< from the body, when it has one
  std::optional<std::string> request_id;          ///< the future polled, or the ticket issued
  std::string idempotency_key;                    ///< X-Idempotency-Key as sent
  std::string retry_count;                        ///< x-stainless-retry-count as sent
  std::string request_iteration;                  ///< X-Tinker-Request-Iteration as sent
  std::string content_type;                       ///< Content-Type as sent
  std::string content_encoding;                   ///< Content-Encoding as sent
  std::string accept;                             ///< Accept as sent
  std::string range;                              ///< Range as sent (downloads resume with it)
  bool credentials = false;  ///< X-API-Key, Authorization or CF-Access-Client-Secret was sent (values never kept)
  std::string fault;         ///< name of the fault that fired, if any
};

/// When one applied operation of a model ran, by the server's steady clock: from the moment its
/// turn came and it started to the moment its result was ready (ServerOptions::training_delay
/// included). The gap between one operation's `finished` and the next one's `started` is time the
/// model sat idle (`doc/local.md#simulated-compute-time`).
class OperationTiming {
 public:
  std::int64_t seq_id = 0;                         ///< the operation's seq_id
  std::string operation;                           ///< "forward_backward", "optim_step", ...
  std::chrono::steady_clock::time_point started;   ///< it started computing
  std::chrono::steady_clock::time_point finished;  ///< its result was ready
};

/// Per model: the seq_ids applied, in the order they were applied.
class ModelAudit {
 public:
  std::string model_id;                       ///< the model
  std::vector<std::int64_t> applied_seq_ids;  ///< its operations' seq_ids in the order applied
  std::vector<std::string> operations;        ///< parallel to applied_seq_ids ("forward_backward", ...)
  std::vector<OperationTiming> timings;       ///< parallel to applied_seq_ids: when each one ran
  bool exactly_once_in_order = true;          ///< applied_seq_ids == 1, 2, ..., n
  std::vector<std::string> problems;          ///< human-readable violations, empty when ok
};

/// What Server::audit() reports: the order each model's operations were applied in, and the
/// requests as they arrived.
class AuditReport {
 public:
  std::vector<ModelAudit> models;       ///< one per model
  std::vector<RequestRecord> requests;  ///< the arrival log (the newest ServerOptions::request_log_limit)
  /// True when every model applied its operations exactly once, in order.
  bool ok() const noexcept;
};

/// A running tinker-local (`doc/local.md`): create, start(), point a client at base_url().
class Server {
 public:
  /// A server that is not started yet; no I/O, options are checked by start().
  explicit Server(ServerOptions options = {});
  ~Server();  ///< stops the server and joins its threads
  /// Not copyable.
  Server(const Server&) = delete;
  /// Not copyable.
  Server& operator=(const Server&) = delete;

  /// Prepares the tokenizer and data directory, binds, and starts serving. Throws
  /// `tinker::error` (invalid_configuration) naming the option on bad options or a busy port.
  void start();
  /// Stops accepting, closes connections, waits for in-flight work. Idempotent.
  void stop();
  /// Blocks until SIGINT/SIGTERM (binary use) or `stop()`.
  void wait_for_shutdown_signal();

  std::uint16_t port() const;                     ///< the port it listens on (the ephemeral one once started)
  std::string base_url() const;                   ///< "http://<host>:<port><path_prefix>"
  const std::filesystem::path& data_dir() const;  ///< where sessions and checkpoints are kept
  /// The tokenizer id `get_info` reports for `base_model`, and the file (`tokenizer.json` or
  /// `tokenizer.model`) it was installed as; without a name, those of the catalogue's first entry.
  /// Throws tinker::error (invalid_argument) for a name the catalogue does not hold.
  ///@{
  std::string tokenizer_id() const;
  std::string tokenizer_id(std::string_view base_model) const;
  std::filesystem::path tokenizer_file() const;
  std::filesystem::path tokenizer_file(std::string_view base_model) const;
  ///@}

  /// The audit of everything served so far (see AuditReport).
  AuditReport audit() const;
  /// The JSON bodies of the telemetry batches received (POST /api/v1/telemetry), oldest first: the
  /// newest 1000, exactly as sent, so tests can check every field of every event.
  std::vector<std::string> telemetry_batches() const;
  /// Replaces the fault rules; the new rules count their calls from 1 and the generator restarts
  /// from ServerOptions::fault_seed.
  void set_faults(std::vector<FaultRule> rules);
  /// Moves the server's clock (TTLs, session expiry, JWT expiry) forward.
  void advance_clock(std::chrono::seconds by);
  /// Cancels the session `session_id` as the console does (status cancelled with `detail`; also
  /// POST /_admin/sessions/cancel). Throws tinker::error (invalid_argument) for an unknown session
  /// or one that already ended.
  void cancel_session(const std::string& session_id, std::optional<std::string> detail);
  /// Test hook: from now on the archive of the checkpoint `tinker_path` is `tar` (any bytes,
  /// such as a crafted malicious archive), served through the real archive endpoint and signed-URL
  /// download (Range, faults). Throws tinker::error (invalid_argument) for an unknown checkpoint.
  void replace_checkpoint_archive(const std::string& tinker_path, std::string tar);
  /// Test hook: marks the training run `model_id` corrupted, as the service does a run it lost:
  /// the REST listings report it `corrupted`, and every operation of it that has not started
  /// yet fails (request_failed, category server, "training run <id> is corrupted: <detail>").
  /// Throws tinker::error (invalid_argument) for an unknown model.
  void corrupt_model(const std::string& model_id, std::string detail);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::local
