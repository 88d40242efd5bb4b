#include "programs/cli/sampling_setup.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/types/checkpoint.hpp>

#include <CLI/CLI.hpp>

#include <ostream>
#include <utility>

namespace tinker::cli {

SamplingParams SamplerOptions::sampling_params(std::optional<StopCondition> stop) const {
  SamplingParams params(max_tokens, temperature);
  params.top_p = top_p;
  params.top_k = top_k;
  params.seed = seed;
  params.stop = std::move(stop);
  return params;
}

void add_sampler_options(CLI::App& command, SamplerOptions& options) {
  command.add_option("--model", options.model, "Base model to sample from, e.g. Qwen/Qwen3.5-4B");
  command.add_option("--checkpoint", options.checkpoint,
                     "Sampler checkpoint to sample from: tinker://<run-id>/sampler_weights/<name>");
  command.add_option("--renderer", options.renderer,
                     "Chat format (default: the model's recommended renderer; `tinker render --help` lists them)");
  command.add_flag("--local", options.local,
                   "Sample from a tinker-local started in this process, even when TINKER_API_KEY is set");
  command.add_option("--max-tokens", options.max_tokens, "Most tokens per reply")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command.add_option("--temperature", options.temperature, "Sampling temperature (0: greedy)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--top-p", options.top_p, "Nucleus sampling: keep the likeliest tokens holding this much mass")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command.add_option("--top-k", options.top_k, "Sample among the k likeliest tokens (-1: no limit)")
      ->capture_default_str();
  command.add_option("--seed", options.seed, "Random seed, for reproducible replies (default: random)");
}

void check_sampler_options(const SamplerOptions& options) {
  if (options.model.empty() == options.checkpoint.empty()) {
    throw UsageError("give exactly one of --model NAME and --checkpoint tinker://<run-id>/sampler_weights/<name>");
  }
  if (!options.checkpoint.empty()) {
    TinkerPath path;
    try {
      path = TinkerPath::parse(options.checkpoint);
    } catch (const error& e) {
      throw UsageError("--checkpoint: " + (e.diag().message.empty() ? std::string(e.what()) : e.diag().message));
    }
    if (path.type != CheckpointType::sampler) {
      throw UsageError("--checkpoint: " + options.checkpoint +
                       " holds training weights; sampling needs sampler weights "
                       "(tinker://<run-id>/sampler_weights/<name>, saved by save_weights_for_sampler)");
    }
  }
  if (options.top_p <= 0.0) throw UsageError("--top-p: must be above 0");
  if (options.top_k == 0 || options.top_k < -1) throw UsageError("--top-k: must be -1 (no limit) or at least 1");
}

namespace {

std::string local_model_names() {
  std::string names;
  for (const local::CatalogueEntry& entry : local::default_catalogue()) {
    names += (names.empty() ? "" : ", ") + entry.name;
  }
  return names;
}

std::unique_ptr<renderers::Renderer> sampler_renderer(const SamplerOptions& options, const std::string& base_model,
                                                      std::shared_ptr<const Tokenizer> tokenizer) {
  std::string name = options.renderer;
  if (name.empty()) {
    try {
      name = renderers::recommended_renderer(base_model);
    } catch (const error& e) {
      throw CliError("no chat format is known for " + base_model + " (" + e.diag().message +
                     "); name one with --renderer");
    }
  }
  try {
    return renderers::make_renderer(name, std::move(tokenizer));
  } catch (const error& e) {
    throw CliError("--renderer " + name + ": " + e.diag().message);
  }
}

}  // namespace

SamplingBackend::SamplingBackend(Context& context, bool force_local) {
  ClientOptions options = context.client_options();
  const bool has_credential = !options.api_key.empty() || options.credential_command.has_value();
  if (force_local || !has_credential) {
    local::ServerOptions server_options;
    server_options.log_level = LogLevel::error;  // its warnings would interleave with the chat
    local_server_ = std::make_unique<local::Server>(std::move(server_options));
    local_server_->start();
    options.base_url = local_server_->base_url();
    options.api_key = Secret("tml-tinker-cli-local");  // tinker-local takes any tml- key
    options.credential_command.reset();
    context.err << (force_local ? "" : "TINKER_API_KEY is not set: ")
                << "sampling from a tinker-local started in this process (models: " << local_model_names() << ")\n";
  }
  service_ = std::make_unique<ServiceClient>(context.executor, ServiceClientOptions(options));
}

SamplingBackend::~SamplingBackend() = default;

boost::asio::awaitable<OpenedSampler> open_sampler(const SamplingBackend& backend, const SamplerOptions& options,
                                                   bool with_renderer) {
  OpenedSampler opened;
  const bool from_checkpoint = !options.checkpoint.empty();
  opened.source = from_checkpoint ? options.checkpoint : options.model;
  const SamplingSource source = from_checkpoint ? SamplingSource::from_model_path(options.checkpoint)
                                                : SamplingSource::from_base_model(options.model);
  opened.client = co_await backend.service().async_create_sampling_client(source, use_awaitable);
  opened.base_model = co_await opened.client.async_get_base_model(use_awaitable);
  opened.tokenizer = co_await opened.client.async_get_tokenizer(use_awaitable);
  if (with_renderer) opened.renderer = sampler_renderer(options, opened.base_model, opened.tokenizer);
  co_return opened;
}

}  // namespace tinker::cli
