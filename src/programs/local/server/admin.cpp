#include "programs/local/server/admin.hpp"

#include "programs/local/server/faults.hpp"
#include "programs/local/server/frontend.hpp"
#include "programs/local/server/http_dates.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <stdexcept>

namespace tinker::local::front {
namespace {

namespace json = boost::json;

json::value optional_value(const std::optional<std::int64_t>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

json::value optional_value(const std::optional<std::string>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

json::object record_object(const RequestRecord& record) {
  json::object object;
  object["index"] = record.index;
  object["arrived"] = rfc3339_micros(record.arrived);
  object["method"] = record.method;
  object["path"] = record.path;
  object["status"] = record.status;
  object["seq_id"] = optional_value(record.seq_id);
  object["model_id"] = optional_value(record.model_id);
  object["request_id"] = optional_value(record.request_id);
  object["idempotency_key"] = record.idempotency_key;
  object["retry_count"] = record.retry_count;
  object["request_iteration"] = record.request_iteration;
  object["content_type"] = record.content_type;
  object["content_encoding"] = record.content_encoding;
  object["accept"] = record.accept;
  object["fault"] = record.fault;
  return object;
}

json::array records_array(const std::vector<RequestRecord>& requests) {
  json::array array;
  array.reserve(requests.size());
  for (const RequestRecord& record : requests) array.push_back(record_object(record));
  return array;
}

// Steady-clock nanoseconds: only differences mean anything (idle gaps, durations), which is all a
// benchmark needs, and the engine's adjustable clock (advance_clock) cannot bend them.
json::array timings_array(const std::vector<OperationTiming>& timings) {
  auto nanoseconds = [](std::chrono::steady_clock::time_point at) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  };
  json::array array;
  array.reserve(timings.size());
  for (const OperationTiming& timing : timings) {
    json::object entry;
    entry["seq_id"] = timing.seq_id;
    entry["operation"] = timing.operation;
    entry["started_ns"] = nanoseconds(timing.started);
    entry["finished_ns"] = nanoseconds(timing.finished);
    array.push_back(std::move(entry));
  }
  return array;
}

json::object model_object(const ModelAudit& model) {
  json::object object;
  object["model_id"] = model.model_id;
  json::array seq_ids;
  for (std::int64_t id : model.applied_seq_ids) seq_ids.push_back(id);
  object["applied_seq_ids"] = std::move(seq_ids);
  json::array operations;
  for (const std::string& op : model.operations) operations.push_back(json::value(op));
  object["operations"] = std::move(operations);
  object["timings"] = timings_array(model.timings);
  object["exactly_once_in_order"] = model.exactly_once_in_order;
  json::array problems;
  for (const std::string& problem : model.problems) problems.push_back(json::value(problem));
  object["problems"] = std::move(problems);
  return object;
}

[[noreturn]] void bad_rule(std::size_t index, std::string_view field, std::string_view what) {
  throw std::runtime_error("[" + std::to_string(index) + "]" + (field.empty() ? "" : ".") + std::string(field) + ": " +
                           std::string(what));
}

std::int64_t int_field(const json::object& object, std::size_t index, std::string_view name, std::int64_t fallback) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) return fallback;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value->get_uint64());
  }
  bad_rule(index, name, "expected an integer");
}

std::chrono::milliseconds duration_field(const json::object& object, std::size_t index, std::string_view name,
                                         std::int64_t fallback_ms) {
  const std::int64_t ms = int_field(object, index, name, fallback_ms);
  if (ms < 0 || ms > kLongestFaultDuration.count()) bad_rule(index, name, "expected 0 to 86400000 milliseconds");
  return std::chrono::milliseconds(ms);
}

std::string string_field(const json::object& object, std::size_t index, std::string_view name, bool required) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) {
    if (required) bad_rule(index, name, "missing required field");
    return {};
  }
  if (!value->is_string()) bad_rule(index, name, "expected a string");
  return std::string(value->get_string());
}

FaultRule rule_from_object(const json::object& object, std::size_t index) {
  FaultRule rule;
  rule.endpoint = string_field(object, index, "endpoint", true);
  const auto kind = fault_kind_from_string(string_field(object, index, "kind", true));
  if (!kind) bad_rule(index, "kind", "unknown fault kind");
  rule.kind = *kind;
  rule.status = static_cast<int>(int_field(object, index, "status", rule.status));
  if (rule.status < 100 || rule.status > 599) bad_rule(index, "status", "expected an HTTP status code");
  if (object.contains("retry_after")) {
    std::string form_text = string_field(object, index, "retry_after", false);
    if (form_text == "ms") form_text = "milliseconds";
    const auto form = retry_after_form_from_string(form_text);
    if (!form) bad_rule(index, "retry_after", "expected none, seconds, http_date or milliseconds");
    rule.retry_after = *form;
  }
  rule.retry_after_value = duration_field(object, index, "retry_after_ms", 1000);
  rule.delay = duration_field(object, index, "delay_ms", 0);
  if (object.contains("queue_state")) rule.queue_state = string_field(object, index, "queue_state", false);
  if (const json::value* p = object.if_contains("probability")) {
    if (!p->is_number()) bad_rule(index, "probability", "expected a number");
    rule.probability = p->to_number<double>();
    if (rule.probability < 0 || rule.probability > 1) bad_rule(index, "probability", "expected a number in [0, 1]");
  }
  if (const json::value* calls = object.if_contains("on_calls")) {
    if (!calls->is_array()) bad_rule(index, "on_calls", "expected an array of integers");
    for (const json::value& call : calls->get_array()) {
      if (!call.is_int64() || call.get_int64() < 1) bad_rule(index, "on_calls", "expected positive integers");
      rule.on_calls.push_back(call.get_int64());
    }
  }
  rule.max_fires = int_field(object, index, "max_fires", -1);
  if (const json::value* retry = object.if_contains("should_retry")) {
    if (!retry->is_bool()) bad_rule(index, "should_retry", "expected a boolean");
    rule.should_retry = retry->get_bool();
  }
  return rule;
}

bool loopback_only(Exchange& ex) {
  if (ex.from_loopback) return true;
  ex.reply.error(403, "admin paths answer loopback clients only");
  return false;
}

}  // namespace

std::string requests_json(const std::vector<RequestRecord>& requests) {
  json::object object;
  object["requests"] = records_array(requests);
  return json::serialize(object);
}

std::string audit_json(const AuditReport& report) {
  json::object object;
  object["ok"] = report.ok();
  json::array models;
  for (const ModelAudit& model : report.models) models.push_back(model_object(model));
  object["models"] = std::move(models);
  object["requests"] = records_array(report.requests);
  return json::serialize(object);
}

std::vector<FaultRule> parse_fault_rules_json(std::string_view text) {
  boost::system::error_code ec;
  const json::value document = json::parse(text, ec);
  if (ec) throw std::runtime_error("malformed JSON: " + ec.message());
  if (!document.is_array()) throw std::runtime_error("expected a JSON array of fault rules");
  std::vector<FaultRule> rules;
  const json::array& array = document.get_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (array[i].is_string()) {
      std::string error;
      auto rule = parse_fault_spec(array[i].get_string(), error);
      if (!rule) bad_rule(i, "", error);
      rules.push_back(std::move(*rule));
    } else if (array[i].is_object()) {
      rules.push_back(rule_from_object(array[i].get_object(), i));
    } else {
      bad_rule(i, "", "expected a rule object or a --fault string");
    }
  }
  return rules;
}

namespace {

// POST /_admin/sessions/cancel {"session_id": "...", "detail": "..."?}: a console cancel.
void reply_admin_cancel_session(Frontend& fe, Exchange& ex) {
  boost::system::error_code ec;
  const json::value document = json::parse(ex.body, ec);
  const json::object* body = (!ec && document.is_object()) ? &document.get_object() : nullptr;
  const json::value* session_id = body != nullptr ? body->if_contains("session_id") : nullptr;
  if (session_id == nullptr || !session_id->is_string()) return ex.reply.error(422, "session_id: expected a string");
  std::optional<std::string> detail;
  if (const json::value* text = body->if_contains("detail"); text != nullptr && !text->is_null()) {
    if (!text->is_string()) return ex.reply.error(422, "detail: expected a string");
    detail = std::string(text->get_string());
  }
  try {
    fe.engine.cancel_session(session_id->get_string(), std::move(detail));
  } catch (const HttpError& e) {
    return ex.reply.error(e.status(), e.what());
  }
  ex.reply.json_text("{}");
}

}  // namespace

void handle_admin(Frontend& fe, Exchange& ex) {
  if (!loopback_only(ex)) return;
  switch (ex.route.endpoint) {
    case Endpoint::admin_audit: return ex.reply.json_text(audit_json(fe.audit()));
    case Endpoint::admin_requests: return ex.reply.json_text(requests_json(fe.requests.snapshot()));
    case Endpoint::admin_set_faults: {
      std::vector<FaultRule> rules;
      try {
        rules = parse_fault_rules_json(ex.body);
      } catch (const std::exception& e) {
        return ex.reply.error(422, e.what());
      }
      const std::size_t count = rules.size();
      fe.faults.replace(std::move(rules));
      fe.logger.info("fault rules replaced: " + std::to_string(count) + " rule(s)");
      return ex.reply.json_text("{\"rules\":" + std::to_string(count) + "}");
    }
    case Endpoint::admin_clear_faults: fe.faults.replace({}); return ex.reply.json_text("{\"rules\":0}");
    case Endpoint::admin_advance_clock: {
      boost::system::error_code ec;
      const json::value document = json::parse(ex.body, ec);
      const json::value* seconds =
          (!ec && document.is_object()) ? document.get_object().if_contains("seconds") : nullptr;
      if (seconds == nullptr || !seconds->is_int64() || seconds->get_int64() < 0) {
        return ex.reply.error(422, "seconds: expected a non-negative integer");
      }
      fe.engine.clock().advance(std::chrono::seconds(seconds->get_int64()));
      return ex.reply.json_text("{\"now\":\"" + rfc3339_micros(fe.engine.clock().now()) + "\"}");
    }
    case Endpoint::admin_cancel_session: return reply_admin_cancel_session(fe, ex);
    default: return ex.reply.error(404, "Not Found");
  }
}

}  // namespace tinker::local::front
