#include "unit/programs/local/support/training_steps.hpp"

#include <stdexcept>

namespace tinker::local::test {

namespace json = boost::json;

json::value TrainingModel::forward_backward(const std::vector<Tokens>& batch) {
  json::array data;
  for (const Tokens& s : batch) data.emplace_back(cross_entropy_datum(s));
  return api_->call("/api/v1/forward_backward", forward_backward_body(model_id_, next_seq(), std::move(data)));
}

std::vector<std::vector<float>> TrainingModel::forward_logprobs(const std::vector<Tokens>& batch) {
  const auto request = proto_forward_backward(model_id_, static_cast<std::int32_t>(next_seq()), batch, true);
  const std::string request_id =
      api_->submit_raw("/api/v1/forward_backward", request.SerializeAsString(), protobuf_type);
  const RawResponse response = api_->await_response(request_id, protobuf_type);
  if (response.status != 200 ||
      response.header("Content-Type").value_or("").find("application/x-protobuf") == std::string::npos) {
    throw std::runtime_error("forward: expected a protobuf result\n" + response.describe());
  }
  tinker_public::ForwardBackwardOutput output;
  if (!output.ParseFromString(response.body) || output.loss_fn_outputs_size() != 1) {
    throw std::runtime_error("forward: not one ArrayRecord");
  }
  const tinker_public::ArrayRecord& record = output.loss_fn_outputs(0);
  return batched_floats(record.fields().at("logprobs"), record.num_datums());
}

json::value TrainingModel::optim_step(double learning_rate) {
  return api_->call("/api/v1/optim_step", optim_step_body(model_id_, next_seq(), learning_rate));
}

double TrainingModel::train_step(const std::vector<Tokens>& batch, double learning_rate) {
  json::array data;
  for (const Tokens& s : batch) data.emplace_back(cross_entropy_datum(s));
  // Pipelined like a client: both submitted before either result is awaited.
  const std::string fwd =
      api_->submit("/api/v1/forward_backward", forward_backward_body(model_id_, next_seq(), std::move(data)));
  const std::string optim = api_->submit("/api/v1/optim_step", optim_step_body(model_id_, next_seq(), learning_rate));
  const json::value result = api_->await_json(fwd);
  (void)api_->await_json(optim);
  return number(field(field(result, "metrics"), "loss:sum"));
}

RawResponse TrainingModel::save_weights(const std::string& name, std::optional<std::int64_t> ttl_seconds,
                                        bool overwrite) {
  json::object body;
  body["model_id"] = model_id_;
  body["path"] = name;
  body["seq_id"] = next_seq();
  if (ttl_seconds) body["ttl_seconds"] = *ttl_seconds;
  body["overwrite"] = overwrite;
  body["type"] = "save_weights";
  const RawResponse submitted = api_->post("/api/v1/save_weights", body);
  if (submitted.status != 200) return submitted;
  return api_->await_response(string_field(submitted.json(), "request_id"));
}

std::string TrainingModel::save(const std::string& name) {
  const RawResponse response = save_weights(name);
  const json::value result = response.json();
  if (response.status != 200 || result.as_object().contains("error")) {
    throw std::runtime_error("save_weights failed\n" + response.describe());
  }
  return string_field(result, "path");
}

std::string TrainingModel::save_for_sampler(const std::string& name) {
  json::object body;
  body["model_id"] = model_id_;
  body["path"] = name;
  body["seq_id"] = next_seq();
  body["type"] = "save_weights_for_sampler";
  return string_field(api_->call("/api/v1/save_weights_for_sampler", body), "path");
}

std::string TrainingModel::save_for_sampler_ephemeral(std::int64_t sampling_session_seq_id) {
  json::object body;
  body["model_id"] = model_id_;
  body["sampling_session_seq_id"] = sampling_session_seq_id;
  body["seq_id"] = next_seq();
  body["type"] = "save_weights_for_sampler";
  return string_field(api_->call("/api/v1/save_weights_for_sampler", body), "sampling_session_id");
}

json::object sample_body(const std::string& sampling_session_id, std::int64_t seq_id, const Tokens& prompt,
                         std::int64_t num_samples, std::int64_t max_tokens, double temperature,
                         std::optional<std::uint64_t> seed) {
  json::object params;
  params["max_tokens"] = max_tokens;
  if (seed) params["seed"] = *seed;
  params["temperature"] = temperature;
  params["top_k"] = -1;
  params["top_p"] = 1.0;
  json::object body;
  body["num_samples"] = num_samples;
  body["prompt"] = model_input(prompt);
  body["sampling_params"] = std::move(params);
  body["sampling_session_id"] = sampling_session_id;
  body["seq_id"] = seq_id;
  body["prompt_logprobs"] = false;
  body["topk_prompt_logprobs"] = 0;
  body["type"] = "sample";
  return body;
}

std::string create_sampling_session(LocalApi& api, const std::string& session, std::int64_t seq,
                                    std::optional<std::string> base_model, std::optional<std::string> model_path) {
  json::object body;
  body["session_id"] = session;
  body["sampling_session_seq_id"] = seq;
  if (base_model) body["base_model"] = *base_model;
  if (model_path) body["model_path"] = *model_path;
  body["type"] = "create_sampling_session";
  const RawResponse response = api.post("/api/v1/create_sampling_session", body);
  if (response.status != 200) throw std::runtime_error("create_sampling_session\n" + response.describe());
  return string_field(response.json(), "sampling_session_id");
}

}  // namespace tinker::local::test
