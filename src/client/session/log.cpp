#include <tinker/log.hpp>

#include <cstdio>
#include <string>

namespace tinker {

LogSink stderr_log_sink(LogLevel threshold) {
  return [threshold](LogLevel level, std::string_view message) {
    if (level == LogLevel::off || threshold == LogLevel::off || level > threshold) return;
    // One write per line, so lines from several threads do not interleave mid-line.
    std::string line = "tinker ";
    line += to_string(level);
    line += ": ";
    line += message;
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

}  // namespace tinker
