// What `tinker chat` and `tinker sample` share before the first token: their options (what to
// sample from, the renderer, the sampling parameters), where they sample (the service, or a
// tinker-local started in-process), and the sampler with its tokenizer and renderer.
#pragma once

#include "programs/cli/context.hpp"

#include <tinker/local/server.hpp>
#include <tinker/renderers.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/types/sampling.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tinker::cli {

/// The options of `tinker chat` and `tinker sample` that say what to sample from and how.
class SamplerOptions {
 public:
  std::string model;       ///< --model: a base model
  std::string checkpoint;  ///< --checkpoint: tinker://<run-id>/sampler_weights/<name>
  std::string renderer;    ///< --renderer: overrides the model's recommended renderer
  bool local = false;      ///< --local: an in-process tinker-local even when a key is set
  std::int64_t max_tokens = 1024;
  double temperature = 1.0;
  double top_p = 1.0;
  std::int64_t top_k = -1;
  std::optional<std::uint64_t> seed;

  /// The sampling parameters of the flags, stopping at `stop` (the renderer's end of turn).
  SamplingParams sampling_params(std::optional<StopCondition> stop) const;
};

/// Binds --model, --checkpoint, --renderer, --local and the sampling flags (--max-tokens,
/// --temperature, --top-p, --top-k, --seed) of `command` to `options`.
void add_sampler_options(CLI::App& command, SamplerOptions& options);

/// Throws UsageError unless exactly one of --model and --checkpoint is given and the checkpoint is
/// a sampler checkpoint's tinker path.
void check_sampler_options(const SamplerOptions& options);

/// Where the commands sample. With TINKER_API_KEY or TINKER_CREDENTIAL_CMD set (and no --local):
/// the service the environment names, as for every other command. Otherwise a tinker-local
/// started in this process on a loopback port (as the samples do), announced on the error
/// stream; it stops when the command ends.
class SamplingBackend {
 public:
  SamplingBackend(Context& context, bool force_local);
  ~SamplingBackend();
  SamplingBackend(const SamplingBackend&) = delete;
  SamplingBackend& operator=(const SamplingBackend&) = delete;

  bool is_local() const noexcept { return local_server_ != nullptr; }
  const ServiceClient& service() const noexcept { return *service_; }

 private:
  std::unique_ptr<local::Server> local_server_;  // declared first: the client goes before the server
  std::unique_ptr<ServiceClient> service_;
};

/// A sampler ready to use: the client, what it samples from, its tokenizer and (unless raw) the
/// renderer for its base model.
class OpenedSampler {
 public:
  SamplingClient client;
  std::string base_model;  ///< the model itself, or the checkpoint's base model
  std::string source;      ///< what the user named: the model or the checkpoint path
  std::shared_ptr<const Tokenizer> tokenizer;
  std::unique_ptr<renderers::Renderer> renderer;  ///< null when opened raw
};

/// Creates the sampler `options` names on `backend`, loads its tokenizer and, when `with_renderer`,
/// the renderer (--renderer, else the base model's recommended one). A renderer that cannot be
/// made is a CliError naming the model and --renderer.
boost::asio::awaitable<OpenedSampler> open_sampler(const SamplingBackend& backend, const SamplerOptions& options,
                                                   bool with_renderer);

}  // namespace tinker::cli
