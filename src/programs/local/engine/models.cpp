// Models and the per-model ordering of operations (doc/training.md#ordering-and-pipelining,
// doc/local.md#ordering-and-futures).
//
// Every model-scoped submit carries a seq_id >= 1 (creation is seq 0). A seq_id seen before gets
// the ticket issued for it and never runs twice; a later one is accepted and held until every
// lower one has arrived and finished; ops run one at a time, strictly in order. Validation of an
// op's content fails its future (category "user") rather than the submit: a refused submit would
// leave a gap that holds every later op of the model forever.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/engine/seeds.hpp"

#include <tinker/model_name.hpp>

namespace tinker::local {

using engine_detail::Failure;
using engine_detail::FuturePtr;
using engine_detail::JsonResult;
using engine_detail::ModelRecord;
using engine_detail::ModelStatus;
using engine_detail::PendingOp;
using engine_detail::SessionRecord;

namespace {
/// LoRA ranks accepted by create_model (the tiny model's width is far below this).
constexpr std::int64_t max_lora_rank = 1024;  // the model's own limit

std::optional<std::string> lora_problem(const LoraConfig& config) {
  if (config.rank < 1 || config.rank > max_lora_rank) {
    return "lora_config.rank: must be between 1 and " + std::to_string(max_lora_rank) + ", got " +
           std::to_string(config.rank);
  }
  if (!config.train_mlp && !config.train_attn && !config.train_unembed) {
    return "lora_config: at least one of train_mlp, train_attn, train_unembed must be true";
  }
  return std::nullopt;
}
}  // namespace

// A suffixed name ("Qwen/Qwen3-8B:peft:131072") is the catalogued model under another name
// (doc/local.md#models): found by the part before its first ':', while the records keep the name
// as the client gave it.
const CatalogueEntry* Engine::Impl::find_base(std::string_view name) const {
  const std::string_view lookup = model_lookup_name(name);
  for (const auto& entry : options.catalogue) {
    if (entry.name == name || entry.name == lookup) return &entry;
  }
  return nullptr;
}

// The list saves a user the round trip to get_server_capabilities after a typo or a model this
// server does not serve.
std::string Engine::Impl::unknown_model_message(std::string_view name) const {
  std::string served;
  for (const auto& entry : options.catalogue) served += (served.empty() ? "" : ", ") + entry.name;
  return "base_model: unknown model " + std::string(name) + "; this server serves " + served +
         " (get_server_capabilities lists them)";
}

model::LoraSettings Engine::Impl::lora_settings(const LoraConfig& config, std::string_view model_id) const {
  model::LoraSettings settings;
  settings.rank = static_cast<int>(config.rank);
  // Without a seed the adapters are still deterministic: seeded by the model id (choice), so a
  // rerun of the same script against a fresh server does not reproduce them, but a restarted
  // computation of the same model does.
  settings.seed = config.seed ? static_cast<std::uint64_t>(*config.seed) : engine_detail::stable_hash(model_id);
  settings.train_mlp = config.train_mlp;
  settings.train_attn = config.train_attn;
  settings.train_unembed = config.train_unembed;
  return settings;
}

ModelRecord* Engine::Impl::find_model(std::string_view model_id) {
  auto it = models.find(std::string(model_id));
  return it == models.end() ? nullptr : it->second.get();
}

const ModelRecord* Engine::Impl::find_model(std::string_view model_id) const {
  auto it = models.find(std::string(model_id));
  return it == models.end() ? nullptr : it->second.get();
}

ModelRecord& Engine::Impl::add_model(std::string id, SessionRecord* session, const std::string& owner,
                                     std::string base_model, LoraConfig lora, std::optional<JsonObject> user_metadata) {
  auto model = std::make_unique<ModelRecord>();
  model->id = std::move(id);
  model->session = session;
  model->owner = owner;
  model->base_model = std::move(base_model);
  model->lora_config = lora;
  model->user_metadata = std::move(user_metadata);
  model->created = now_ts();
  model->last_request_time = model->created;
  if (session != nullptr) session->model_ids.push_back(model->id);
  ModelRecord& ref = *model;
  models[ref.id] = std::move(model);
  return ref;
}

ModelRecord& Engine::Impl::model_for_submit(std::string_view model_id, const Principal& who) {
  ModelRecord* model = find_model(model_id);
  if (model == nullptr || model->owner != who.user_id) {
    throw HttpError(404, "unknown model_id " + std::string(model_id));
  }
  if (model->holds_copy) {
    throw HttpError(400, "model " + model->id + " holds weights copied by copy_weights and cannot be trained on");
  }
  if (model->status == ModelStatus::detached) {
    throw HttpError(404, "model " + model->id + " is not loaded (its session ended); load one of its checkpoints");
  }
  if (model->status == ModelStatus::unloaded) throw HttpError(404, "model " + model->id + " was unloaded");
  if (model->session != nullptr) live_session(model->session->id, who);
  model->last_request_time = now_ts();
  return *model;
}

UntypedAPIFuture Engine::Impl::submit_ordered(ModelRecord& model, std::optional<std::int64_t> seq_id, const char* op,
                                              const std::string& owner, std::function<void(std::int64_t)> run) {
  if (!seq_id) throw HttpError(400, std::string(op) + ": seq_id is required");
  if (*seq_id <= 0) {
    throw HttpError(400, "seq_id: must be at least 1 (create_model is seq_id 0), got " + std::to_string(*seq_id));
  }
  if (auto it = model.tickets.find(*seq_id); it != model.tickets.end()) {
    return UntypedAPIFuture(it->second, model.id);
  }
  // The pause hook is asked with the endpoint: forward-only requests arrive on forward_backward
  // (SDK 0.25; the legacy /forward is reported the same way), the other ops are named after theirs.
  const char* endpoint = std::string_view(op) == "forward" ? "forward_backward" : op;
  FuturePtr future = new_future(endpoint, owner, model.session);
  model.tickets.emplace(*seq_id, future->request_id);
  PendingOp pending;
  pending.name = op;
  pending.future = future;
  pending.run = std::move(run);
  model.held.emplace(*seq_id, std::move(pending));
  pump(model);
  return UntypedAPIFuture(future->request_id, model.id);
}

void Engine::Impl::pump(ModelRecord& model) {
  if (model.pumping) return;  // finish_op inside start_op: the loop below continues instead
  model.pumping = true;
  while (!model.busy && !model.held.empty() && model.held.begin()->first == model.cursor + 1) {
    auto node = model.held.extract(model.held.begin());
    start_op(model, node.key(), std::move(node.mapped()));
  }
  model.pumping = false;
}

void Engine::Impl::start_op(ModelRecord& model, std::int64_t seq_id, PendingOp op) {
  model.busy = true;
  FuturePtr future = op.future;
  auto run = std::move(op.run);
  model.running = std::move(op);
  ModelRecord* target = &model;
  after_pause(future, [this, target, seq_id, run = std::move(run)]() {
    ModelRecord& m = *target;
    m.running_started = std::chrono::steady_clock::now();
    if (m.status == ModelStatus::unloaded) {
      finish_op(m, seq_id, Failure{"model " + m.id + " was unloaded", RequestErrorCategory::user});
    } else if (m.session != nullptr && m.session->expired) {
      finish_op(m, seq_id, Failure{"session expired", RequestErrorCategory::server});
    } else if (m.corruption) {
      finish_op(m, seq_id,
                Failure{"training run " + m.id + " is corrupted: " + *m.corruption, RequestErrorCategory::server});
    } else if (m.status == ModelStatus::failed) {
      finish_op(m, seq_id, Failure{"model " + m.id + " could not be created", RequestErrorCategory::user});
    } else {
      run(seq_id);
    }
  });
}

void Engine::Impl::finish_op(ModelRecord& model, std::int64_t seq_id, OpResult result) {
  if (seq_id > 0) {  // creation (seq 0) is not an applied operation of the audit
    model.applied_seq_ids.push_back(seq_id);
    model.applied_ops.emplace_back(model.running.name);
    model.applied_times.push_back(now_ts());
    OperationTiming timing;
    timing.seq_id = seq_id;
    timing.operation = model.running.name;
    timing.started = model.running_started;
    timing.finished = std::chrono::steady_clock::now();
    model.applied_timings.push_back(std::move(timing));
  }
  FuturePtr future = std::move(model.running.future);
  model.running = PendingOp();
  complete(future, std::move(result));
  model.busy = false;
  model.cursor = seq_id;
  if (model.status == ModelStatus::unloaded) model.state.reset();
  pump(model);
}

void Engine::Impl::fail_held(ModelRecord& model, const std::string& message, RequestErrorCategory category) {
  auto held = std::move(model.held);
  model.held.clear();
  for (auto& [seq, op] : held) complete(op.future, Failure{message, category});
}

UntypedAPIFuture Engine::create_model(const CreateModelRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  SessionRecord& session = impl.live_session(request.session_id, who);
  if (request.model_seq_id < 0) throw HttpError(400, "model_seq_id: must not be negative");
  std::string model_id = session.id + ":train:" + std::to_string(request.model_seq_id);
  if (auto it = session.model_tickets.find(request.model_seq_id); it != session.model_tickets.end()) {
    return UntypedAPIFuture(it->second, model_id);
  }
  FuturePtr future = impl.new_future("create_model", who.user_id, &session);
  session.model_tickets.emplace(request.model_seq_id, future->request_id);

  LoraConfig lora = request.lora_config.value_or(LoraConfig());
  const CatalogueEntry* entry = impl.find_base(request.base_model);
  std::optional<std::string> problem = lora_problem(lora);
  if (!problem && request.optimizer_config) {
    problem = engine_detail::optimizer_problem(*request.optimizer_config, "optimizer_config");
  }
  if (entry == nullptr) problem = impl.unknown_model_message(request.base_model);
  if (problem) {
    impl.after_pause(future, [&impl, future, message = *problem]() {
      impl.complete(future, Failure{message, RequestErrorCategory::user});
    });
    return UntypedAPIFuture(future->request_id, model_id);
  }

  ModelRecord& model = impl.add_model(model_id, &session, who.user_id, request.base_model, lora, request.user_metadata);
  model.optimizer = request.optimizer_config.value_or(AdamOptimizerConfig());
  model.tickets.emplace(0, future->request_id);
  impl.audit_event(who.user_id, "model.create", model_id, std::nullopt);
  PendingOp op;
  op.name = "create_model";
  op.future = future;
  ModelRecord* target = &model;
  model::LoraSettings settings = impl.lora_settings(lora, model_id);
  op.run = [&impl, target, entry, settings](std::int64_t seq_id) {
    auto slot = std::make_shared<std::unique_ptr<engine_detail::ModelState>>();
    auto backend = impl.backend;
    CatalogueEntry base = *entry;
    impl.compute(
        [backend, base, settings, slot]() -> engine_detail::OpResult {
          *slot = backend->create(base, settings);
          return JsonResult{};
        },
        [&impl, target, seq_id, slot](engine_detail::OpResult result) {
          if (std::holds_alternative<JsonResult>(result)) {
            if (target->status == ModelStatus::creating) {  // not unloaded meanwhile
              target->state = std::move(*slot);
              target->status = ModelStatus::ready;
            }
            result = JsonResult{to_json(CreateModelResponse(target->id))};
          } else if (target->status == ModelStatus::creating) {
            target->status = ModelStatus::failed;
          }
          impl.finish_op(*target, seq_id, std::move(result));
        });
  };
  model.held.emplace(0, std::move(op));
  impl.pump(model);
  return UntypedAPIFuture(future->request_id, model_id);
}

GetInfoResponse Engine::get_info(const GetInfoRequest& request, const Principal& who) {
  ModelRecord* model = impl_->find_model(request.model_id);
  if (model == nullptr || model->owner != who.user_id || model->status == ModelStatus::detached ||
      model->status == ModelStatus::unloaded) {
    throw HttpError(404, "unknown model_id " + request.model_id);
  }
  if (model->session != nullptr) impl_->live_session(model->session->id, who);
  // A model restored from a checkpoint of a base the catalogue no longer holds: the default tokenizer.
  const CatalogueEntry* base = impl_->find_base(model->base_model);
  const CatalogueEntry entry = base != nullptr ? *base : CatalogueEntry(model->base_model);
  GetInfoResponse response(model->id,
                           ModelData(model->base_model, impl_->backend->tokenizer_id(entry), impl_->backend->arch()));
  response.is_lora = true;
  response.lora_rank = model->lora_config.rank;
  response.model_name = model->base_model;
  return response;
}

UntypedAPIFuture Engine::unload_model(const UnloadModelRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  ModelRecord* model = impl.find_model(request.model_id);
  if (model == nullptr || model->owner != who.user_id || model->status == ModelStatus::detached) {
    throw HttpError(404, "unknown model_id " + request.model_id);
  }
  if (model->unload_ticket) return UntypedAPIFuture(*model->unload_ticket, model->id);
  if (model->session != nullptr) impl.live_session(model->session->id, who);
  // Ops still waiting for their turn will never run; the op running now finishes normally and
  // the weights are released after it.
  model->status = ModelStatus::unloaded;
  impl.fail_held(*model, "model " + model->id + " was unloaded", RequestErrorCategory::user);
  if (!model->busy) model->state.reset();
  FuturePtr future = impl.new_future("unload_model", who.user_id, model->session);
  model->unload_ticket = future->request_id;
  impl.audit_event(who.user_id, "model.unload", model->id, std::nullopt);
  impl.after_pause(future, [&impl, future, id = model->id]() {
    impl.complete(future, JsonResult{to_json(UnloadModelResponse(id))});
  });
  return UntypedAPIFuture(future->request_id, model->id);
}

void Engine::corrupt_model(std::string_view model_id, std::string detail) {
  ModelRecord* model = impl_->find_model(model_id);
  if (model == nullptr) throw HttpError(404, "unknown model_id " + std::string(model_id));
  // Failed, as the service marks a run it lost: the REST listings say `corrupted`, and start_op
  // fails each operation when its turn comes (the one running now finishes normally).
  model->status = ModelStatus::failed;
  model->corruption = std::move(detail);
}

}  // namespace tinker::local
