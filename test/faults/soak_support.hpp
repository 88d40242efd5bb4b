// The fault soak's sizes, fault mix and report (test/faults/soak_test.cpp).
#pragma once

#include <tinker/local/server.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace tinker::test {

/// How long the soak runs; from the environment (TINKER_SOAK_*), CI-sized by default.
class SoakSize {
 public:
  int steps = 200;
  int checkpoint_every = 25;
  int samples = 2000;
  int samples_in_flight = 1000;
  double fault_rate = 0.10;
  std::uint64_t seed = 1;
};

SoakSize soak_size_from_environment();

/// 410 on retrieve_future is the sampling retry layer's to recover from (the request is sent
/// again); for a training operation it is fatal by protocol, so only the sampling phase gets it.
enum class Phase { training, sampling };

/// Every fault kind tinker-local injects, on every API path, together firing on about `rate` of
/// the requests: 408, 429 with each Retry-After form, 500/502/503/504, the bare 400, resets before
/// and after the request was applied, truncated and malformed bodies, slow answers and paused
/// queues (and 410 on polls when sampling).
std::vector<local::FaultRule> fault_mix(double rate, Phase phase);

class FaultCounts {
 public:
  std::size_t total = 0;
  std::map<std::string, std::size_t> by_kind;  ///< the audit's fault names, e.g. "status_429"
};

/// The faults the server's arrival log records.
FaultCounts count_faults(const local::AuditReport& audit);

/// For long runs (10 000 units or more): a line on stderr at every tenth of the way, with the
/// elapsed time, descriptors and RSS, so that a run that is slow or stuck shows where it is.
class SoakProgress {
 public:
  SoakProgress(std::string phase, std::size_t total);
  void report(std::size_t done);

 private:
  std::string phase_;
  std::size_t total_;
  std::size_t next_tenth_ = 1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// This process's open descriptors and resident memory.
class ResourceUse {
 public:
  std::size_t descriptors = 0;
  std::size_t rss_kib = 0;
};

ResourceUse resource_use();

void print_report(std::ostream& out, const std::string& phase, const SoakSize& size, const FaultCounts& faults,
                  std::size_t requests_logged, const ResourceUse& start, const ResourceUse& end);

}  // namespace tinker::test
