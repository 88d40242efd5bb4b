#include "client/futures/poll_answer.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>

namespace tinker::client::futures {
namespace {

namespace json = boost::json;

QueueState parse_queue_state(std::string_view text) noexcept {
  if (text == "active") return QueueState::active;
  if (text == "paused_capacity") return QueueState::paused_capacity;
  if (text == "paused_rate_limit") return QueueState::paused_rate_limit;
  return QueueState::unknown;  // doc/protocol.md#futures: anything else is "unknown"
}

RequestErrorCategory parse_category(const json::value* value) noexcept {
  if (value == nullptr || !value->is_string()) return RequestErrorCategory::unknown;
  const json::string& text = value->get_string();
  if (text == "user") return RequestErrorCategory::user;
  if (text == "server") return RequestErrorCategory::server;
  return RequestErrorCategory::unknown;  // doc/protocol.md#errors: unrecognised or missing
}

bool string_equals(const json::value* value, std::string_view expected) noexcept {
  return value != nullptr && value->is_string() && value->get_string() == expected;
}

void read_queue_state(const json::object& body, PollAnswer& answer) {
  const json::value* state = body.if_contains("queue_state");
  answer.queue_state_given = state != nullptr && !state->is_null();
  answer.queue_state = QueueState::unknown;
  if (state != nullptr && state->is_string()) answer.queue_state = parse_queue_state(state->get_string());
  const json::value* reason = body.if_contains("queue_state_reason");
  if (reason != nullptr && reason->is_string()) answer.queue_state_reason = std::string(reason->get_string());
}

// The error text of a failed future: a string as is, anything else as compact JSON.
std::string error_text(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  return json::serialize(value);
}

// The body as a JSON object, or null with `problem` saying why not.
json::value parse_object(std::string_view body, std::string& problem) {
  boost::system::error_code ec;
  json::value parsed = json::parse(body, ec);
  if (ec) {
    problem = "the answer is not JSON (" + ec.message() + ")";
    return nullptr;
  }
  if (!parsed.is_object()) {
    problem = "the answer is JSON but not an object";
    return nullptr;
  }
  return parsed;
}

}  // namespace

const char* request_type_header(FutureType type) noexcept {
  switch (type) {
    case FutureType::create_model: return "CreateModel";
    case FutureType::forward_backward: return "ForwardBackward";
    case FutureType::forward: return "Forward";
    case FutureType::optim_step: return "OptimStep";
    case FutureType::save_weights: return "SaveWeights";
    case FutureType::load_weights: return "LoadWeights";
    case FutureType::save_weights_for_sampler: return "SaveWeightsForSampler";
    case FutureType::save_weights_external: return "SaveWeightsExternal";
    case FutureType::sample: return "Sample";
    case FutureType::unload_model: return "UnloadModel";
  }
  return "Unknown";
}

bool has_protobuf_result(FutureType type) noexcept {
  return type == FutureType::forward_backward || type == FutureType::forward || type == FutureType::sample;
}

std::string roundtrip_seconds_text(std::chrono::microseconds roundtrip) {
  const double seconds = roundtrip.count() > 0 ? static_cast<double>(roundtrip.count()) / 1e6 : 0.0;
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, seconds, std::chars_format::fixed, 6);
  return std::string(buffer, result.ptr);
}

PollAnswer classify_answer(const http::Response& response) {
  PollAnswer answer;
  if (response.is_protobuf()) return answer;  // a protobuf body is always the result
  const json::value parsed = parse_object(response.body, answer.problem);
  if (!parsed.is_object()) {
    answer.kind = AnswerKind::malformed;
    return answer;
  }
  const json::object* body = &parsed.get_object();
  if (string_equals(body->if_contains("type"), "try_again")) {
    answer.kind = AnswerKind::try_again;
    read_queue_state(*body, answer);
  } else if (string_equals(body->if_contains("status"), "complete_metadata")) {
    answer.kind = AnswerKind::complete_metadata;
    const json::value* size = body->if_contains("response_payload_size");
    if (size != nullptr && size->is_int64()) answer.payload_size = size->get_int64();
    if (size != nullptr && size->is_uint64()) answer.payload_size = static_cast<std::int64_t>(size->get_uint64());
  } else if (const json::value* error = body->if_contains("error")) {
    answer.kind = AnswerKind::failed;
    answer.error_message = error_text(*error);
    answer.category = parse_category(body->if_contains("category"));
  }
  return answer;
}

std::optional<PollAnswer> queue_state_of_408(const http::Response& response) {
  PollAnswer answer;
  const json::value parsed = parse_object(response.body, answer.problem);
  if (!parsed.is_object()) return std::nullopt;
  answer.kind = AnswerKind::try_again;
  read_queue_state(parsed.get_object(), answer);
  return answer;
}

std::string queue_state_warning(QueueSubject subject, std::string_view subject_id, QueueState state,
                                const std::optional<std::string>& reason) {
  std::string why;
  if (reason && !reason->empty()) {
    why = *reason;
  } else if (state == QueueState::paused_rate_limit) {
    why = subject == QueueSubject::sampling ? "concurrent sampler weights limit hit"
                                            : "concurrent training clients rate limit hit";
  } else if (state == QueueState::paused_capacity) {
    why = "Tinker backend is running short on capacity, please wait";
  } else {
    why = "unknown";
  }
  switch (subject) {
    case QueueSubject::sampling:
      return "Sampling is paused for sampler " + std::string(subject_id) + ". Reason: " + why;
    case QueueSubject::model_creation:
      return "Model creation for " + std::string(subject_id) + " is paused. Reason: " + why + ".";
    case QueueSubject::training: break;
  }
  return "Training for " + std::string(subject_id) + " is paused. Reason: " + why + ".";
}

}  // namespace tinker::client::futures
