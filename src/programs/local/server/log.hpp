// tinker-local's log: one line per message on stderr, filtered by level. Never given an API key.
#pragma once

#include <tinker/config.hpp>

#include <string_view>

namespace tinker::local::front {

class Logger {
 public:
  explicit Logger(LogLevel level) : level_(level) {}

  /// Whether messages of `level` are written (check before formatting costly messages).
  bool enabled(LogLevel level) const noexcept {
    return level != LogLevel::off && level_ != LogLevel::off && static_cast<int>(level) <= static_cast<int>(level_);
  }
  void write(LogLevel level, std::string_view message) const;

  void error(std::string_view message) const { write(LogLevel::error, message); }
  void warning(std::string_view message) const { write(LogLevel::warning, message); }
  void info(std::string_view message) const { write(LogLevel::info, message); }
  void debug(std::string_view message) const { write(LogLevel::debug, message); }

 private:
  LogLevel level_;
};

}  // namespace tinker::local::front
