#include "programs/local/server/faults.hpp"

#include "core/wire/endpoint_paths.hpp"
#include "programs/local/server/router.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace tinker::local::front {
namespace {

// Blanks around the parts of a fault spec.
std::string_view trim_blanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <class Int>
std::optional<Int> parse_int(std::string_view text) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// Reproducible on every platform: 53 random bits of the standardised mt19937_64 output
// (std::uniform_real_distribution is implementation-defined).
double unit_draw(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

bool apply_option(FaultRule& rule, std::string_view key, std::string_view value, std::string& error) {
  if (key == "prob") {
    const auto p = parse_double(value);
    if (!p || *p < 0 || *p > 1)
      return error = "prob must be a number in [0, 1], got \"" + std::string(value) + "\"", false;
    rule.probability = *p;
  } else if (key == "calls") {
    for (std::string_view call : split(value, '+')) {
      const auto n = parse_int<std::int64_t>(trim_blanks(call));
      if (!n || *n < 1)
        return error = "calls must be positive integers joined by '+', got \"" + std::string(value) + "\"", false;
      rule.on_calls.push_back(*n);
    }
  } else if (key == "max") {
    const auto n = parse_int<std::int64_t>(value);
    if (!n) return error = "max must be an integer, got \"" + std::string(value) + "\"", false;
    rule.max_fires = *n;
  } else if (key == "retry_after") {
    const std::size_t colon = value.find(':');
    const std::string_view form_text = value.substr(0, colon);
    const auto form = retry_after_form_from_string(form_text == "ms" ? "milliseconds" : form_text);
    if (!form)
      return error = "retry_after form must be none, seconds, http_date or ms, got \"" + std::string(form_text) + "\"",
             false;
    rule.retry_after = *form;
    if (*form != RetryAfterForm::none) {
      const auto amount = colon == std::string_view::npos ? std::nullopt : parse_double(value.substr(colon + 1));
      const double ms = !amount ? -1.0 : *form == RetryAfterForm::milliseconds ? *amount : *amount * 1000.0;
      if (!(ms >= 0 && ms <= static_cast<double>(kLongestFaultDuration.count())))
        return error = "retry_after needs an amount from 0 to 24 hours after ':', e.g. seconds:2", false;
      rule.retry_after_value = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
    }
  } else if (key == "should_retry") {
    if (value != "true" && value != "false") return error = "should_retry must be true or false", false;
    rule.should_retry = value == "true";
  } else if (key == "state") {
    if (value != "paused_capacity" && value != "paused_rate_limit" && value != "active") {
      return error = "state must be paused_capacity or paused_rate_limit, got \"" + std::string(value) + "\"", false;
    }
    rule.queue_state = std::string(value);
  } else {
    return error = "unknown fault option \"" + std::string(key) + "\"", false;
  }
  return true;
}

}  // namespace

const char* to_string(FaultKind kind) noexcept {
  switch (kind) {
    case FaultKind::status: return "status";
    case FaultKind::reset_before: return "reset_before";
    case FaultKind::reset_mid_body: return "reset_mid_body";
    case FaultKind::delay: return "delay";
    case FaultKind::truncated_body: return "truncated_body";
    case FaultKind::malformed_json: return "malformed_json";
    case FaultKind::pause_queue: return "pause_queue";
  }
  return "unknown";
}

const char* to_string(RetryAfterForm form) noexcept {
  switch (form) {
    case RetryAfterForm::none: return "none";
    case RetryAfterForm::seconds: return "seconds";
    case RetryAfterForm::http_date: return "http_date";
    case RetryAfterForm::milliseconds: return "milliseconds";
  }
  return "none";
}

std::optional<FaultKind> fault_kind_from_string(std::string_view text) noexcept {
  for (FaultKind kind : {FaultKind::status, FaultKind::reset_before, FaultKind::reset_mid_body, FaultKind::delay,
                         FaultKind::truncated_body, FaultKind::malformed_json, FaultKind::pause_queue}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<RetryAfterForm> retry_after_form_from_string(std::string_view text) noexcept {
  for (RetryAfterForm form :
       {RetryAfterForm::none, RetryAfterForm::seconds, RetryAfterForm::http_date, RetryAfterForm::milliseconds}) {
    if (text == to_string(form)) return form;
  }
  return std::nullopt;
}

bool fault_matches(const FaultRule& rule, std::string_view path) {
  const bool api = path.substr(0, wire::paths::api_prefix.size()) == wire::paths::api_prefix;
  if (rule.endpoint == "*") return api;
  if (rule.endpoint == "_downloads") return path.substr(0, kDownloadsPrefix.size()) == kDownloadsPrefix;
  if (rule.endpoint == "_uploads") return path.substr(0, kUploadsPrefix.size()) == kUploadsPrefix;
  const bool hub = !api && is_hub_path(path);
  if (rule.endpoint == "_hub") return hub;
  if (!(api || hub) || rule.endpoint.empty()) return false;
  const std::string_view endpoint = rule.endpoint;
  if (path.size() < endpoint.size() || path.substr(path.size() - endpoint.size()) != endpoint) return false;
  return endpoint.front() == '/' || path[path.size() - endpoint.size() - 1] == '/';
}

std::string fault_name(const FaultRule& rule) {
  if (rule.kind == FaultKind::status) return "status_" + std::to_string(rule.status);
  return to_string(rule.kind);
}

FaultPlan::FaultPlan(std::uint64_t seed, std::vector<FaultRule> rules) : seed_(seed), generator_(seed) {
  replace(std::move(rules));
}

void FaultPlan::replace(std::vector<FaultRule> rules) {
  rules_ = std::move(rules);
  calls_.assign(rules_.size(), 0);
  fired_.assign(rules_.size(), 0);
  generator_.seed(seed_);
}

bool FaultPlan::fires(std::size_t index) {
  const FaultRule& rule = rules_[index];
  const std::int64_t call = ++calls_[index];
  if (rule.max_fires >= 0 && fired_[index] >= rule.max_fires) return false;
  bool fire = false;
  if (!rule.on_calls.empty()) {
    fire = std::find(rule.on_calls.begin(), rule.on_calls.end(), call) != rule.on_calls.end();
  } else if (rule.probability > 0) {
    fire = unit_draw(generator_) < rule.probability;
  }
  if (fire) ++fired_[index];
  return fire;
}

std::optional<FaultRule> FaultPlan::on_request(std::string_view path) {
  std::optional<FaultRule> chosen;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const FaultRule& rule = rules_[i];
    if (rule.kind == FaultKind::pause_queue || !fault_matches(rule, path)) continue;
    if (chosen) {
      ++calls_[i];  // the call still counts for this rule's schedule
      continue;
    }
    if (fires(i)) chosen = rule;
  }
  return chosen;
}

std::optional<QueuePause> FaultPlan::on_submit(std::string_view endpoint) {
  const std::string path = std::string(wire::paths::api_prefix) + std::string(endpoint);
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const FaultRule& rule = rules_[i];
    if (rule.kind != FaultKind::pause_queue || !fault_matches(rule, path)) continue;
    if (!fires(i)) continue;
    QueuePause pause;
    pause.queue_state = rule.queue_state;
    pause.duration = rule.delay;
    return pause;
  }
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  text = trim_blanks(text);
  double scale = 1.0;
  if (text.size() > 2 && text.substr(text.size() - 2) == "ms") {
    text.remove_suffix(2);
  } else if (text.size() > 1 && text.back() == 's') {
    text.remove_suffix(1);
    scale = 1000.0;
  }
  const auto amount = parse_double(text);
  if (!amount) return std::nullopt;
  const double ms = *amount * scale;
  if (!(ms >= 0 && ms <= static_cast<double>(kLongestFaultDuration.count()))) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

std::optional<FaultRule> parse_fault_spec(std::string_view spec, std::string& error) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    error = "expected <endpoint>:<kind>[,<key>=<value>...], got \"" + std::string(spec) + "\"";
    return std::nullopt;
  }
  FaultRule rule;
  rule.endpoint = std::string(trim_blanks(spec.substr(0, colon)));
  const std::vector<std::string_view> parts = split(spec.substr(colon + 1), ',');

  const std::string_view head = trim_blanks(parts.front());
  const std::size_t equals = head.find('=');
  const std::string_view kind_text = head.substr(0, equals);
  const std::string_view kind_value = equals == std::string_view::npos ? std::string_view() : head.substr(equals + 1);
  const auto kind = fault_kind_from_string(kind_text);
  if (!kind) {
    error = "unknown fault kind \"" + std::string(kind_text) +
            "\" (status, reset_before, reset_mid_body, delay, truncated_body, malformed_json, pause_queue)";
    return std::nullopt;
  }
  rule.kind = *kind;
  if (rule.kind == FaultKind::status) {
    const auto status = parse_int<int>(kind_value);
    if (!status || *status < 100 || *status > 599) {
      error = "status needs an HTTP status code, e.g. status=429, got \"" + std::string(kind_value) + "\"";
      return std::nullopt;
    }
    rule.status = *status;
  } else if (rule.kind == FaultKind::delay || rule.kind == FaultKind::pause_queue) {
    const auto duration = parse_duration(kind_value);
    if (!duration) {
      error = std::string(kind_text) + " needs a duration up to 24 h, e.g. " + std::string(kind_text) +
              "=250ms, got \"" + std::string(kind_value) + "\"";
      return std::nullopt;
    }
    rule.delay = *duration;
  } else if (!kind_value.empty()) {
    error = std::string(kind_text) + " takes no value";
    return std::nullopt;
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part = trim_blanks(parts[i]);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      error = "expected <key>=<value>, got \"" + std::string(part) + "\"";
      return std::nullopt;
    }
    if (!apply_option(rule, trim_blanks(part.substr(0, eq)), trim_blanks(part.substr(eq + 1)), error))
      return std::nullopt;
  }
  if (rule.on_calls.empty() && rule.probability == 0) rule.probability = 1.0;  // no trigger given: every call
  return rule;
}

}  // namespace tinker::local::front
