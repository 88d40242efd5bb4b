#include "faults/soak_support.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>
#include <utility>

namespace tinker::test {

namespace {

using std::chrono::milliseconds;

template <class Number>
Number from_environment(const char* name, Number fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return static_cast<Number>(std::strtod(text, nullptr));
}

local::FaultRule status_fault(int status, local::RetryAfterForm form = local::RetryAfterForm::none,
                              milliseconds hint = milliseconds(50)) {
  local::FaultRule rule("*", local::FaultKind::status);
  rule.status = status;
  rule.retry_after = form;
  rule.retry_after_value = hint;
  return rule;
}

local::FaultRule timed_fault(local::FaultKind kind, milliseconds delay) {
  local::FaultRule rule("*", kind);
  rule.delay = delay;
  return rule;
}

}  // namespace

SoakSize soak_size_from_environment() {
  SoakSize size;
  size.steps = from_environment("TINKER_SOAK_STEPS", size.steps);
  size.samples = from_environment("TINKER_SOAK_SAMPLES", size.samples);
  size.samples_in_flight = from_environment("TINKER_SOAK_IN_FLIGHT", size.samples_in_flight);
  size.fault_rate = from_environment("TINKER_SOAK_FAULT_RATE", size.fault_rate);
  size.seed = from_environment("TINKER_SOAK_SEED", size.seed);
  return size;
}

std::vector<local::FaultRule> fault_mix(double rate, Phase phase) {
  using local::FaultKind;
  using local::RetryAfterForm;
  std::vector<local::FaultRule> rules{
      status_fault(408),
      status_fault(429),
      status_fault(429, RetryAfterForm::seconds, milliseconds(1000)),
      status_fault(429, RetryAfterForm::http_date, milliseconds(1000)),
      status_fault(429, RetryAfterForm::milliseconds, milliseconds(40)),
      status_fault(500),
      status_fault(502),
      status_fault(503, RetryAfterForm::milliseconds, milliseconds(30)),
      status_fault(504),
      status_fault(400),  // the bare 400 a proxy sends: taken for a connection fault
      local::FaultRule("*", FaultKind::reset_before),
      local::FaultRule("*", FaultKind::reset_mid_body),  // after the request was applied
      local::FaultRule("*", FaultKind::truncated_body),
      local::FaultRule("*", FaultKind::malformed_json),
      timed_fault(FaultKind::delay, milliseconds(150)),
  };
  if (phase == Phase::sampling) {
    local::FaultRule expired("retrieve_future", FaultKind::status);
    expired.status = 410;
    rules.push_back(expired);
  }
  // The rules are tried in order and the first that fires wins, so rule i must fire with the
  // probability that makes each kind's share of all requests equal: p_i = share / (1 - i * share).
  const double share = rate / static_cast<double>(rules.size());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    rules[i].probability = share / (1.0 - static_cast<double>(i) * share);
  }
  // Paused queues come on top: they act at submission, not on the answer.
  local::FaultRule pause = timed_fault(FaultKind::pause_queue, milliseconds(100));
  pause.probability = share;
  rules.push_back(pause);
  return rules;
}

FaultCounts count_faults(const local::AuditReport& audit) {
  FaultCounts counts;
  for (const local::RequestRecord& record : audit.requests) {
    if (record.fault.empty()) continue;
    ++counts.total;
    ++counts.by_kind[record.fault];
  }
  return counts;
}

SoakProgress::SoakProgress(std::string phase, std::size_t total) : phase_(std::move(phase)), total_(total) {}

void SoakProgress::report(std::size_t done) {
  if (total_ < 10'000 || next_tenth_ > 10 || done * 10 < next_tenth_ * total_) return;
  while (next_tenth_ <= 10 && done * 10 >= next_tenth_ * total_) ++next_tenth_;
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_);
  const ResourceUse use = resource_use();
  std::cerr << "  " << phase_ << ": " << done << " of " << total_ << " after " << elapsed.count() << " s, descriptors "
            << use.descriptors << ", RSS " << use.rss_kib / 1024 << " MiB" << std::endl;
}

ResourceUse resource_use() {
  ResourceUse use;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++use.descriptors;
  }
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (std::string_view(line).starts_with("VmRSS:")) use.rss_kib = std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return use;
}

void print_report(std::ostream& out, const std::string& phase, const SoakSize& size, const FaultCounts& faults,
                  std::size_t requests_logged, const ResourceUse& start, const ResourceUse& end) {
  out << "fault soak, " << phase << ": " << size.steps << " steps, " << size.samples << " samples ("
      << size.samples_in_flight << " in flight), fault rate " << size.fault_rate << ", seed " << size.seed << "\n";
  out << "  requests logged by the server: " << requests_logged << ", faults injected: " << faults.total << "\n  ";
  for (const auto& [kind, count] : faults.by_kind) out << kind << "=" << count << " ";
  out << "\n  descriptors " << start.descriptors << " -> " << end.descriptors << ", RSS " << start.rss_kib / 1024
      << " -> " << end.rss_kib / 1024 << " MiB\n";
}

}  // namespace tinker::test
