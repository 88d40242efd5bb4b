// Command line of the tinker-local binary, parsed by a testable function.
#pragma once

#include <tinker/local/server.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::front {

/// A bad argument; the message names the flag.
class CommandLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CommandLine {
 public:
  ServerOptions options;
  bool help = false;
  bool version = false;
};

/// Parses the arguments after the program name. Flags take their value as the next argument or
/// after '=' (--port=0). Throws CommandLineError naming the flag.
CommandLine parse_command_line(const std::vector<std::string_view>& args);

/// The --help text.
std::string usage_text();

}  // namespace tinker::local::front
