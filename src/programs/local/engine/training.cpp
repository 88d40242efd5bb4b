// Training operations (doc/training.md#operations, doc/local.md#the-model): forward/backward,
// optimizer steps, saving and loading weights. Each runs in its model's turn (models.cpp); the
// computation and the file I/O run on a worker, the bookkeeping on the io thread.
//
// Choices: checkpoint names are [A-Za-z0-9._-]{1,128} except "." and ".."; save_weights onto an
// existing name without `overwrite` fails the future (category user); named sampler saves replace
// an existing sampler checkpoint of the same name (the request has no overwrite flag, and sampler
// weights are exports of the current state); a replaced checkpoint starts private again.
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::Failure;
using engine_detail::FuturePtr;
using engine_detail::ModelRecord;
using engine_detail::ModelStatus;
using engine_detail::OpResult;
using engine_detail::SamplerRecord;
using engine_detail::SessionRecord;
using engine_detail::UsageKind;

namespace {
bool succeeded(const OpResult& result) {
  return !std::holds_alternative<engine_detail::Failure>(result);
}
}  // namespace

void Engine::Impl::run_forward_backward(ModelRecord& model, std::int64_t seq_id,
                                        std::shared_ptr<const ForwardBackwardInput> input, bool forward_only) {
  auto work = [backend = backend, state = model.state, input, forward_only]() -> OpResult {
    return backend->forward_backward(*state, *input, forward_only);
  };
  compute(std::move(work), [this, &model, seq_id, input](OpResult result) {
    if (succeeded(result) && model.session != nullptr) {
      std::int64_t tokens = 0;
      for (const Datum& datum : input->data) tokens += datum.model_input.length();
      add_usage(model.owner, model.session->id, model.base_model, UsageKind::training_tokens, tokens);
    }
    finish_after_training_delay(model, seq_id, std::move(result));
  });
}

// The simulated compute time is waited on the io thread with a timer, not on a worker, so that
// a slow "accelerator" does not also starve the other models' and the samplers' computations.
void Engine::Impl::finish_after_training_delay(ModelRecord& model, std::int64_t seq_id, OpResult result) {
  if (options.training_delay.count() <= 0) return finish_op(model, seq_id, std::move(result));
  auto held = std::make_shared<OpResult>(std::move(result));
  at_time(std::chrono::steady_clock::now() + options.training_delay,
          [this, &model, seq_id, held]() { finish_op(model, seq_id, std::move(*held)); });
}

void Engine::Impl::run_optim_step(ModelRecord& model, std::int64_t seq_id, OptimParams params) {
  auto work = [backend = backend, state = model.state, params]() -> OpResult {
    OptimStepResponse response =
        std::visit([&](const auto& step) { return backend->optim_step(*state, step); }, params);
    if (!response.metrics) response.metrics = Metrics{};
    // The SDK's result type carries the discriminator (observed: {"type":"optim_step","metrics":{}}).
    std::string json = to_json(response);
    json.insert(1, json.size() > 2 ? "\"type\":\"optim_step\"," : "\"type\":\"optim_step\"");
    return engine_detail::JsonResult{std::move(json)};
  };
  compute(std::move(work),
          [this, &model, seq_id](OpResult result) { finish_after_training_delay(model, seq_id, std::move(result)); });
}

void Engine::Impl::run_save(ModelRecord& model, std::int64_t seq_id, CheckpointType type,
                            std::optional<std::string> name, std::optional<std::int64_t> ttl_seconds, bool overwrite,
                            std::optional<std::map<std::string, std::string>> user_metadata) {
  auto fail = [&](std::string message) {
    finish_op(model, seq_id, Failure{std::move(message), RequestErrorCategory::user});
  };
  if (!name) return fail("path: the checkpoint name is required");
  if (!engine_detail::valid_checkpoint_name(*name)) {
    return fail("path: invalid checkpoint name '" + *name + "' (use 1-128 characters from A-Z a-z 0-9 . _ -)");
  }
  if (ttl_seconds && *ttl_seconds <= 0) return fail("ttl_seconds: must be positive");

  auto meta = std::make_shared<CheckpointMeta>();
  meta->run_id = model.id;
  meta->type = type;
  meta->name = *name;
  meta->owner = model.owner;
  meta->base_model = model.base_model;
  meta->lora = model.lora_config;
  meta->created = now_ts();
  if (ttl_seconds) meta->expires_at = meta->created + std::chrono::seconds(*ttl_seconds);
  meta->has_optimizer = type == CheckpointType::training;
  meta->optimizer_type = std::string(optimizer_type(model.optimizer));
  // A replacing save replaces the whole map: none given leaves the checkpoint without metadata.
  meta->user_metadata = std::move(user_metadata);
  std::string path = meta->tinker_path();
  if (find_checkpoint(path) != nullptr && !overwrite) {
    return fail("checkpoint " + path + " already exists (save with overwrite=true to replace it)");
  }

  auto work = [backend = backend, state = model.state, store = store, meta]() -> OpResult {
    std::string bytes = backend->serialize(*state, meta->has_optimizer);
    meta->size_bytes = static_cast<std::int64_t>(bytes.size());
    store.write(*meta, bytes);
    return engine_detail::JsonResult{};
  };
  compute(std::move(work), [this, &model, seq_id, meta, path](OpResult result) {
    if (succeeded(result)) {
      index_checkpoint(*meta);
      if (model.session != nullptr)
        add_usage(model.owner, model.session->id, model.base_model, UsageKind::checkpoints_saved, 1);
      audit_event(model.owner, "checkpoint.save", model.id, path);
      if (meta->type == CheckpointType::training) {
        result = engine_detail::JsonResult{to_json(SaveWeightsResponse(path))};
      } else {
        SaveWeightsForSamplerResponse response;
        response.path = path;
        result = engine_detail::JsonResult{to_json(response)};
      }
    }
    finish_op(model, seq_id, std::move(result));
  });
}

void Engine::Impl::run_ephemeral_sampler(ModelRecord& model, std::int64_t seq_id,
                                         std::int64_t sampling_session_seq_id) {
  if (sampling_session_seq_id < 0 || model.session == nullptr) {
    return finish_op(model, seq_id,
                     Failure{"sampling_session_seq_id: must not be negative", RequestErrorCategory::user});
  }
  std::string sampler_id = model.session->id + ":sample:" + std::to_string(sampling_session_seq_id);
  auto slot = std::make_shared<std::unique_ptr<ModelState>>();
  auto work = [backend = backend, state = model.state, slot]() -> OpResult {
    *slot = backend->copy(*state);
    return engine_detail::JsonResult{};
  };
  compute(std::move(work), [this, &model, seq_id, slot, sampler_id](OpResult result) {
    if (succeeded(result)) {
      if (samplers.count(sampler_id) != 0) {
        result = Failure{"sampling session " + sampler_id + " already exists (sampling_session_seq_id reused)",
                         RequestErrorCategory::user};
      } else {
        // The snapshot lives as long as the sampling session; no checkpoint is written.
        auto sampler = std::make_unique<SamplerRecord>();
        sampler->id = sampler_id;
        sampler->session = model.session;
        sampler->owner = model.owner;
        sampler->base_model = model.base_model;
        sampler->origin = "ephemeral:" + model.id;
        sampler->weights = std::shared_ptr<const ModelState>(std::move(*slot));
        model.session->sampler_ids.push_back(sampler_id);
        samplers.emplace(sampler_id, std::move(sampler));
        audit_event(model.owner, "sampler.create", model.id, std::nullopt);
        SaveWeightsForSamplerResponse response;
        response.sampling_session_id = sampler_id;
        result = engine_detail::JsonResult{to_json(response)};
      }
    }
    finish_op(model, seq_id, std::move(result));
  });
}

std::variant<engine_detail::Failure, CheckpointMeta> Engine::Impl::resolve_loadable(
    const std::string& path, const std::string& user_id, const std::optional<std::string>& access_token) {
  TinkerPath parsed;
  try {
    parsed = TinkerPath::parse(path);
  } catch (const std::exception& e) {
    return Failure{"path: " + engine_detail::exception_message(e), RequestErrorCategory::user};
  }
  if (parsed.type == CheckpointType::sampler) {
    return Failure{"path: " + path + " is a sampler checkpoint; load_weights needs a training checkpoint " +
                       "(tinker://<run>/weights/<name>)",
                   RequestErrorCategory::user};
  }
  const CheckpointRecord* record = find_checkpoint(parsed.to_string());
  bool readable = record != nullptr && can_read(record->meta, user_id);
  if (!readable && record != nullptr && access_token) {
    readable = record->meta.owner == engine_detail::user_id_for_key(*access_token);
  }
  if (!readable) return Failure{"checkpoint " + path + " not found", RequestErrorCategory::user};
  return record->meta;
}

void Engine::Impl::run_load(ModelRecord& model, std::int64_t seq_id, std::string path, bool optimizer,
                            std::optional<std::string> access_token, bool creates_model) {
  auto fail = [&](std::string message) {
    if (creates_model && model.status == ModelStatus::creating) model.status = ModelStatus::failed;
    finish_op(model, seq_id, Failure{std::move(message), RequestErrorCategory::user});
  };
  auto resolved = resolve_loadable(path, model.owner, access_token);
  if (auto* failure = std::get_if<Failure>(&resolved)) return fail(std::move(failure->message));
  CheckpointMeta meta = std::get<CheckpointMeta>(std::move(resolved));
  if (!creates_model && meta.base_model != model.base_model) {
    return fail("checkpoint " + path + " was trained on " + meta.base_model + ", but model " + model.id + " uses " +
                model.base_model);
  }
  const CatalogueEntry* entry = find_base(model.base_model);
  if (entry == nullptr) return fail("base model " + model.base_model + " is not in this server's catalogue");
  // A full-state load keeps the optimizer's identity: its state only fits the same optimizer.
  const std::string_view saved_optimizer = meta.optimizer_type;
  if (optimizer && meta.has_optimizer && saved_optimizer != optimizer_type(model.optimizer)) {
    return fail("checkpoint " + path + " holds " + meta.optimizer_type + " optimizer state, but model " + model.id +
                " uses " + std::string(optimizer_type(model.optimizer)) +
                " (load it without the optimizer state, or into a model created with " + meta.optimizer_type + ")");
  }

  auto slot = std::make_shared<std::unique_ptr<ModelState>>();
  auto work = [backend = backend, store = store, meta, base = *entry, optimizer, slot]() -> OpResult {
    std::string bytes = store.read_state(meta);
    *slot = backend->deserialize(base, bytes, optimizer && meta.has_optimizer);
    return engine_detail::JsonResult{};
  };
  compute(std::move(work), [this, &model, seq_id, slot, meta, path, creates_model](OpResult result) {
    if (succeeded(result)) {
      if (model.status == ModelStatus::ready || model.status == ModelStatus::creating) {
        model.state = std::move(*slot);
        model.lora_config = meta.lora;
        model.status = ModelStatus::ready;
      }
      LoadWeightsResponse response;
      response.path = path;
      response.model_id = model.id;
      // Said only for another optimizer than AdamW, so 0.25-era bodies stay as they were.
      if (!std::holds_alternative<AdamOptimizerConfig>(model.optimizer)) response.optimizer_config = model.optimizer;
      result = engine_detail::JsonResult{to_json(response)};
    } else if (creates_model && model.status == ModelStatus::creating) {
      model.status = ModelStatus::failed;
    }
    finish_op(model, seq_id, std::move(result));
  });
}

UntypedAPIFuture Engine::forward_backward(ForwardBackwardRequest request, const Principal& who) {
  Impl& impl = *impl_;
  ModelRecord& model = impl.model_for_submit(request.model_id, who);
  impl.check_image_chunks(request.forward_backward_input, model.base_model);  // 400 before a seq_id is taken
  if (model.session != nullptr) impl.check_provenance(*model.session, request.forward_backward_input);
  const char* op = request.forward_only ? "forward" : "forward_backward";
  auto input = std::make_shared<const ForwardBackwardInput>(std::move(request.forward_backward_input));
  bool forward_only = request.forward_only;
  ModelRecord* target = &model;
  return impl.submit_ordered(model, request.seq_id, op, who.user_id, [&impl, target, input, forward_only](auto seq) {
    impl.run_forward_backward(*target, seq, input, forward_only);
  });
}

UntypedAPIFuture Engine::optim_step(const OptimStepRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  ModelRecord& model = impl.model_for_submit(request.model_id, who);
  ModelRecord* target = &model;
  OptimParams params = engine_detail::optim_params_for(request, model);  // 400 before a seq_id is taken
  return impl.submit_ordered(model, request.seq_id, "optim_step", who.user_id,
                             [&impl, target, params](auto seq) { impl.run_optim_step(*target, seq, params); });
}

UntypedAPIFuture Engine::save_weights(const SaveWeightsRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  ModelRecord& model = impl.model_for_submit(request.model_id, who);
  ModelRecord* target = &model;
  return impl.submit_ordered(model, request.seq_id, "save_weights", who.user_id, [&impl, target, request](auto seq) {
    impl.run_save(*target, seq, CheckpointType::training, request.path, request.ttl_seconds, request.overwrite,
                  request.user_metadata);
  });
}

UntypedAPIFuture Engine::save_weights_for_sampler(const SaveWeightsForSamplerRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  ModelRecord& model = impl.model_for_submit(request.model_id, who);
  ModelRecord* target = &model;
  return impl.submit_ordered(model, request.seq_id, "save_weights_for_sampler", who.user_id,
                             [&impl, target, request](auto seq) {
                               if (request.path) {
                                 impl.run_save(*target, seq, CheckpointType::sampler, request.path, request.ttl_seconds,
                                               true, request.user_metadata);
                               } else if (request.sampling_session_seq_id) {
                                 impl.run_ephemeral_sampler(*target, seq, *request.sampling_session_seq_id);
                               } else {
                                 impl.finish_op(*target, seq,
                                                Failure{"save_weights_for_sampler: either path (a checkpoint name) or "
                                                        "sampling_session_seq_id is required",
                                                        RequestErrorCategory::user});
                               }
                             });
}

UntypedAPIFuture Engine::load_weights(const LoadWeightsRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  if (request.model_id) {
    if (request.session_id) throw HttpError(400, "load_weights: model_id and session_id are mutually exclusive");
    ModelRecord& model = impl.model_for_submit(*request.model_id, who);
    if (request.optimizer_config && optimizer_type(*request.optimizer_config) != optimizer_type(model.optimizer)) {
      throw HttpError(400, "load_weights: optimizer_config " + std::string(optimizer_type(*request.optimizer_config)) +
                               " does not match model " + model.id + "'s optimizer " +
                               std::string(optimizer_type(model.optimizer)) + " (fixed when it was created)");
    }
    ModelRecord* target = &model;
    return impl.submit_ordered(model, request.seq_id, "load_weights", who.user_id, [&impl, target, request](auto seq) {
      impl.run_load(*target, seq, request.path, request.optimizer, request.weights_access_token, false);
    });
  }
  if (!request.session_id || !request.model_seq_id) {
    throw HttpError(400, "load_weights: either model_id + seq_id or session_id + model_seq_id is required");
  }
  // Create-via-load (ServiceClient's training client from a checkpoint): the model is created with
  // the checkpoint's LoRA config, then loaded, as its seq_id 0.
  SessionRecord& session = impl.live_session(*request.session_id, who);
  if (*request.model_seq_id < 0) throw HttpError(400, "model_seq_id: must not be negative");
  std::string model_id = session.id + ":train:" + std::to_string(*request.model_seq_id);
  if (auto it = session.model_tickets.find(*request.model_seq_id); it != session.model_tickets.end()) {
    return UntypedAPIFuture(it->second, model_id);
  }
  FuturePtr future = impl.new_future("load_weights", who.user_id, &session);
  session.model_tickets.emplace(*request.model_seq_id, future->request_id);
  auto resolved = impl.resolve_loadable(request.path, who.user_id, request.weights_access_token);
  std::optional<Failure> failure;
  if (auto* f = std::get_if<Failure>(&resolved)) failure = *f;
  std::string base_model;
  if (!failure) {
    base_model = request.base_model.value_or(std::get<engine_detail::CheckpointMeta>(resolved).base_model);
    if (impl.find_base(base_model) == nullptr) {
      failure = Failure{impl.unknown_model_message(base_model), RequestErrorCategory::user};
    }
  }
  if (!failure && request.optimizer_config) {
    if (auto problem = engine_detail::optimizer_problem(*request.optimizer_config, "optimizer_config")) {
      failure = Failure{*problem, RequestErrorCategory::user};
    }
  }
  if (failure) {
    impl.after_pause(future, [&impl, future, failure = *failure]() { impl.complete(future, failure); });
    return UntypedAPIFuture(future->request_id, model_id);
  }
  const auto& meta = std::get<engine_detail::CheckpointMeta>(resolved);
  ModelRecord& model = impl.add_model(model_id, &session, who.user_id, base_model, meta.lora, request.user_metadata);
  // The caller's optimizer, else with the optimizer state the checkpoint's (run_load refuses a mismatch).
  if (request.optimizer_config) {
    model.optimizer = *request.optimizer_config;
  } else if (request.optimizer && meta.has_optimizer) {
    model.optimizer = engine_detail::checkpoint_optimizer(meta);
  }
  model.tickets.emplace(0, future->request_id);
  impl.audit_event(who.user_id, "model.create", model_id, request.path);
  engine_detail::PendingOp op;
  op.name = "load_weights";
  op.future = future;
  ModelRecord* target = &model;
  op.run = [&impl, target, request](std::int64_t seq) {
    impl.run_load(*target, seq, request.path, request.optimizer, request.weights_access_token, true);
  };
  model.held.emplace(0, std::move(op));
  impl.pump(model);
  return UntypedAPIFuture(future->request_id, model_id);
}

}  // namespace tinker::local
