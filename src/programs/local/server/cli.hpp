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

/// Parses the arguments after the program name (with CLI11). Options take their value as the next
/// argument or after '=' (--port=0), one value each (a repeated option: the last one wins; --api-key
/// and --fault collect theirs); flags take none. Throws CommandLineError naming the flag.
CommandLine parse_command_line(const std::vector<std::string_view>& args);

/// The --help text: every option with its default, then the --fault spec grammar.
std::string usage_text();

}  // namespace tinker::local::front
