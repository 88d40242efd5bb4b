// Sampling sessions and asample (doc/sampling.md#backpressure-and-retries, doc/local.md#the-model).
//
// A sampler reads an immutable snapshot of weights (a checkpoint's, an ephemeral copy of a
// model's, or none for the base model), so samples run concurrently on the workers, never
// waiting for training ops. Choices: create_sampling_session with both model_path and base_model
// requires them to agree (400 otherwise); a training (weights/) path may be sampled too; the
// checkpoint is read once, when the session is created. asample by base_model / model_path
// without a session is accepted (no seq_id dedupe then). Backpressure: with the header, at most
// options.sample_queue_limit samples are pending; the next one gets 429. Without a seed, the seed
// is derived from (sampling session id, seq_id), so a resubmitted request samples the same.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/engine/seeds.hpp"

namespace tinker::local {

using engine_detail::Failure;
using engine_detail::FuturePtr;
using engine_detail::OpResult;
using engine_detail::SamplerRecord;
using engine_detail::SessionRecord;
using engine_detail::UsageKind;

const engine_detail::CheckpointMeta& Engine::Impl::readable_checkpoint(const std::string& model_path,
                                                                       const Principal& who) const {
  TinkerPath path;
  try {
    path = TinkerPath::parse(model_path);
  } catch (const std::exception& e) {
    throw HttpError(400, "model_path: " + engine_detail::exception_message(e));
  }
  const engine_detail::CheckpointRecord* record = find_checkpoint(path.to_string());
  if (record == nullptr || !can_read(record->meta, who.user_id)) {
    throw HttpError(404, "checkpoint " + model_path + " not found");
  }
  return record->meta;
}

CreateSamplingSessionResponse Engine::create_sampling_session(const CreateSamplingSessionRequest& request,
                                                              const Principal& who) {
  Impl& impl = *impl_;
  SessionRecord& session = impl.live_session(request.session_id, who);
  if (request.sampling_session_seq_id < 0) throw HttpError(400, "sampling_session_seq_id: must not be negative");
  if (!request.model_path && !request.base_model) throw HttpError(400, "model_path or base_model is required");
  std::string id = session.id + ":sample:" + std::to_string(request.sampling_session_seq_id);
  std::string origin = "create:" + request.base_model.value_or("") + "|" + request.model_path.value_or("");
  if (auto it = impl.samplers.find(id); it != impl.samplers.end()) {
    if (it->second->origin != origin) {
      throw HttpError(409, "sampling session " + id + " already exists with different parameters");
    }
    return CreateSamplingSessionResponse(id);
  }

  auto sampler = std::make_unique<SamplerRecord>();
  sampler->id = id;
  sampler->session = &session;
  sampler->owner = who.user_id;
  sampler->origin = origin;
  if (request.model_path) {
    const auto& meta = impl.readable_checkpoint(*request.model_path, who);
    if (request.base_model && *request.base_model != meta.base_model) {
      throw HttpError(400, "base_model: " + *request.base_model + " does not match " + *request.model_path +
                               " (trained on " + meta.base_model + ")");
    }
    sampler->base_model = meta.base_model;
    sampler->model_path = request.model_path;
    sampler->weights = impl.load_snapshot(meta);
  } else {
    if (impl.find_base(*request.base_model) == nullptr) {
      throw HttpError(404, impl.unknown_model_message(*request.base_model));
    }
    sampler->base_model = *request.base_model;
  }
  session.sampler_ids.push_back(id);
  impl.audit_event(who.user_id, "sampler.create", std::nullopt, request.model_path);
  impl.samplers.emplace(id, std::move(sampler));
  return CreateSamplingSessionResponse(id);
}

SamplerRecord& Engine::Impl::resolve_adhoc_sampler(const SampleRequest& request, const Principal& who) {
  std::string key = request.model_path ? "adhoc:path:" + *request.model_path : "adhoc:base:" + *request.base_model;
  if (auto it = samplers.find(key); it != samplers.end()) {
    // A path may have been deleted or unpublished since: check the access again.
    if (request.model_path) readable_checkpoint(*request.model_path, who);
    return *it->second;
  }
  auto sampler = std::make_unique<SamplerRecord>();
  sampler->id = key;
  sampler->origin = key;
  if (request.model_path) {
    const auto& meta = readable_checkpoint(*request.model_path, who);
    sampler->base_model = meta.base_model;
    sampler->model_path = request.model_path;
    sampler->weights = load_snapshot(meta);
  } else {
    if (find_base(*request.base_model) == nullptr) {
      throw HttpError(404, unknown_model_message(*request.base_model));
    }
    sampler->base_model = *request.base_model;
  }
  SamplerRecord& ref = *sampler;
  samplers.emplace(key, std::move(sampler));
  return ref;
}

UntypedAPIFuture Engine::sample(SampleRequest request, const Principal& who, bool backpressure) {
  Impl& impl = *impl_;
  SamplerRecord* sampler = nullptr;
  std::int64_t seq_id = 0;
  if (request.sampling_session_id) {
    auto it = impl.samplers.find(*request.sampling_session_id);
    if (it == impl.samplers.end() || it->second->session == nullptr || it->second->owner != who.user_id) {
      throw HttpError(404, "unknown sampling_session_id " + *request.sampling_session_id);
    }
    sampler = it->second.get();
    impl.live_session(sampler->session->id, who);
    if (!request.seq_id) throw HttpError(400, "seq_id: required with sampling_session_id");
    if (*request.seq_id < 0) throw HttpError(400, "seq_id: must not be negative");
    seq_id = *request.seq_id;
    if (auto ticket = sampler->tickets.find(seq_id); ticket != sampler->tickets.end()) {
      return UntypedAPIFuture(ticket->second);
    }
  } else if (request.model_path || request.base_model) {
    sampler = &impl.resolve_adhoc_sampler(request, who);
    seq_id = request.seq_id.value_or(0);
  } else {
    throw HttpError(400, "asample: sampling_session_id (or base_model / model_path) is required");
  }
  impl.check_image_chunks(request.prompt, "prompt", sampler->base_model);  // 400 before a ticket is issued
  if (backpressure && impl.pending_samples >= impl.options.sample_queue_limit) {
    throw HttpError(429, "too many pending samples (" + std::to_string(impl.pending_samples) + "); retry later");
  }
  FuturePtr future = impl.new_future("asample", who.user_id, sampler->session);
  if (request.sampling_session_id) sampler->tickets.emplace(seq_id, future->request_id);
  ++impl.pending_samples;
  impl.after_pause(future, [&impl, future, sampler, request = std::move(request), seq_id]() mutable {
    impl.start_sample(future, *sampler, std::move(request), seq_id);
  });
  return UntypedAPIFuture(future->request_id);
}

void Engine::Impl::start_sample(const FuturePtr& future, SamplerRecord& sampler, SampleRequest request,
                                std::int64_t seq_id) {
  const CatalogueEntry* entry = find_base(sampler.base_model);
  model::SampleSettings settings;
  settings.num_samples = request.num_samples;
  settings.params = request.sampling_params;
  settings.default_max_tokens = options.default_max_tokens;
  settings.fallback_seed =
      engine_detail::mix_seed(engine_detail::stable_hash(sampler.id), static_cast<std::uint64_t>(seq_id));
  settings.prompt_logprobs = request.prompt_logprobs.value_or(false);
  settings.topk_prompt_logprobs = request.topk_prompt_logprobs;
  if (entry != nullptr) settings.eos_token_id = entry->eos_token_id;
  std::string session_id = sampler.session != nullptr ? sampler.session->id : std::string();
  std::string owner = future->owner;
  std::string base_model = sampler.base_model;
  auto prompt = std::make_shared<const ModelInput>(std::move(request.prompt));

  auto work = [backend = backend, base = entry != nullptr ? *entry : CatalogueEntry(), known = entry != nullptr,
               weights = sampler.weights, prompt, settings]() -> OpResult {
    if (!known) throw UserError("the sampler's base model is no longer in the catalogue");
    if (settings.topk_prompt_logprobs < 0) throw UserError("topk_prompt_logprobs: must not be negative");
    return backend->sample(base, weights.get(), *prompt, settings);
  };
  // Only a sampling session's requests are reported by retrieve_futures (doc/local.md#sampling-results-in-batches).
  std::shared_ptr<engine_detail::CompletionLog> log = sampler.session != nullptr ? sampler.completions : nullptr;
  const bool stability = request.record_stability_info.value_or(false);
  std::string sampler_id = stability ? sampler.id : std::string();
  auto finish = [this, future, prompt, session_id, owner, base_model, log, seq_id, stability,
                 sampler_id = std::move(sampler_id)](OpResult result) {
    --pending_samples;
    if (auto* response = std::get_if<SampleResponse>(&result)) {
      std::int64_t generated = 0;
      for (const auto& sequence : response->sequences) generated += static_cast<std::int64_t>(sequence.tokens.size());
      std::int64_t prompt_tokens = 0;
      try {
        prompt_tokens = prompt->length();
      } catch (const std::exception&) {
      }
      add_usage(owner, session_id, base_model, UsageKind::sampling_prefill_tokens, prompt_tokens);
      add_usage(owner, session_id, base_model, UsageKind::sampled_tokens, generated);
      if (auto session = sessions.find(session_id); session != sessions.end()) {
        assign_sequence_ids(*session->second, prompt_tokens, *response);
      }
      if (stability) record_stability_info(owner, sampler_id, future->request_id, *response);
    }
    complete(future, std::move(result));
    if (log) record_completion(*log, *future, seq_id);
  };
  // ServerOptions::sampling_delay: the result waits on the io thread (no worker is held), so
  // concurrent samples overlap as they would in one accelerator batch.
  const auto ready_at = std::chrono::steady_clock::now() + options.sampling_delay;
  compute(std::move(work), [this, ready_at, finish = std::move(finish)](OpResult result) {
    if (options.sampling_delay.count() <= 0) return finish(std::move(result));
    auto held = std::make_shared<OpResult>(std::move(result));
    at_time(ready_at, [finish, held]() { finish(std::move(*held)); });
  });
}

GetSamplerResponse Engine::get_sampler(std::string_view sampler_id, const Principal& who) const {
  auto it = impl_->samplers.find(std::string(sampler_id));
  if (it == impl_->samplers.end() || it->second->session == nullptr || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown sampler " + std::string(sampler_id));
  }
  GetSamplerResponse response(it->second->id, it->second->base_model);
  response.model_path = it->second->model_path;
  return response;
}

}  // namespace tinker::local
