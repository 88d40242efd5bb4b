#include "programs/local/server/log.hpp"

#include "programs/local/server/http_dates.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace tinker::local::front {

void Logger::write(LogLevel level, std::string_view message) const {
  if (!enabled(level)) return;
  std::string line = rfc3339_micros(std::chrono::system_clock::now());
  line += " tinker-local ";
  line += to_string(level);
  line += ": ";
  line += message;
  line += '\n';
  // One fwrite per line, so lines of concurrent writers (tests, the engine's workers) do not mix.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace tinker::local::front
