// The cost guard (doc/bench.md#cost-guard): against anything but a local server, tinker-bench says how many
// operations, HTTP requests and tokens it is about to spend, and starts only with --yes or a "y" typed on a terminal.
// It runs before any client exists, so a refused run has sent nothing at all.
#pragma once

#include "programs/bench/settings.hpp"
#include "programs/bench/target.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tinker::bench {

/// What one scenario will spend at most with its settings (bootstrap requests not included).
class Plan {
 public:
  Plan() = default;

  std::string scenario;
  std::int64_t operations = 0;     ///< calls that reach the server: samples, forward_backward, saves, ...
  std::int64_t http_requests = 0;  ///< at least this many: each operation with a ticket is a submit and a poll
  std::int64_t tokens = 0;         ///< tokens sent for training or scoring, and tokens generated
  std::string detail;              ///< the sizes behind the figures, for people
};

std::vector<Plan> plans_of(const Invocation& invocation);

/// How the user can be asked.
class Asking {
 public:
  Asking() = default;

  std::istream* input = nullptr;  ///< answers; null: none
  bool interactive = false;       ///< both the input and the error stream are terminals
};

enum class Consent { not_needed, given, refused };

/// Not needed for a local target; otherwise states the plans on `err` and asks (see the file comment).
Consent ask_consent(const Target& target, const std::vector<Plan>& plans, bool yes, const Asking& asking,
                    std::ostream& err);

}  // namespace tinker::bench
