/// \file
/// Where the SDK's log lines go. The default sink writes to stderr; a user may route lines into
/// their own logging (ServiceClientOptions::log). Lines never contain the API key.
#pragma once

#include <tinker/config.hpp>

#include <functional>
#include <string_view>

namespace tinker {

/// Receives one log line. May be called from the client's io thread; must not block long.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// Writes "tinker <level>: <message>" to stderr for lines at or above `threshold`.
LogSink stderr_log_sink(LogLevel threshold);

}  // namespace tinker
