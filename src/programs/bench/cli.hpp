// tinker-bench's command line (doc/bench.md#flags): CLI11 parsing into an Invocation, and the checks of flags that
// must go together, all before anything is started or sent.
#pragma once

#include "programs/bench/settings.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tinker::bench {

/// Fills `invocation` from `args`; returns the exit code when the run ends here (help, --version, a usage error
/// printed on `err`), nothing when the scenarios should run.
std::optional<int> parse_invocation(std::vector<std::string> args, Invocation& invocation, std::ostream& out,
                                    std::ostream& err);

}  // namespace tinker::bench
