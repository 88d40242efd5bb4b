// Command line of the tinker-local binary, parsed by a testable function.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/safetensors.hpp>

#include <filesystem>
#include <optional>
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

/// `tinker-local export-model MODEL -o DIR [--dtype f32|bf16|f16]`: write a base model as a Hugging
/// Face directory (tinker::local::export_model) instead of serving.
class ExportModelCommand {
 public:
  std::string model;
  std::filesystem::path output_dir;
  safetensors::Dtype dtype = safetensors::Dtype::f32;
};

class CommandLine {
 public:
  ServerOptions options;  ///< --model-dir entries appended to the catalogue, --adapter to adapters
  bool help = false;
  bool version = false;
  std::optional<ExportModelCommand> export_model;  ///< set by the export-model subcommand
};

/// Parses the arguments after the program name (with CLI11). Options take their value as the next
/// argument or after '=' (--port=0), one value each (a repeated option: the last one wins; --api-key,
/// --fault, --model-dir and --adapter collect theirs); flags take none. Each --model-dir's
/// config.json is read here (model_dir_entry). Throws CommandLineError naming the flag.
CommandLine parse_command_line(const std::vector<std::string_view>& args);

/// The --help text: every option with its default, then the --fault spec grammar.
std::string usage_text();

}  // namespace tinker::local::front
