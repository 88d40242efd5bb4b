// The CLI's Hub options (hub_access.hpp).
#include "programs/cli/hub_access.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>

namespace tinker::cli {
namespace {

namespace fs = std::filesystem;

// Where `hf auth login` stores the token, as huggingface_hub looks for it: $HF_TOKEN_PATH, else
// $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token.
std::optional<fs::path> token_file(const EnvLookup& lookup) {
  auto set = [&lookup](const char* name) -> std::optional<std::string> {
    auto value = lookup(name);
    if (value && value->empty()) value.reset();
    return value;
  };
  if (auto path = set("HF_TOKEN_PATH")) return fs::path(*path);
  if (auto home = set("HF_HOME")) return fs::path(*home) / "token";
  if (auto cache = set("XDG_CACHE_HOME")) return fs::path(*cache) / "huggingface" / "token";
  if (auto home = set("HOME")) return fs::path(*home) / ".cache" / "huggingface" / "token";
  return std::nullopt;
}

// The token of the file, without surrounding white space; empty when there is none.
std::string stored_token(const EnvLookup& lookup) {
  const auto file = token_file(lookup);
  if (!file) return "";
  std::ifstream in(*file, std::ios::binary);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())) != 0) token.pop_back();
  return token;
}

}  // namespace

EnvLookup lookup_of(const Context& context) {
  if (context.env.lookup) return context.env.lookup;
  return [](std::string_view) { return std::optional<std::string>(); };
}

HubOptions cli_hub_options(Context& context) {
  const EnvLookup lookup = lookup_of(context);
  HubOptions options = HubOptions::from_environment(lookup);
  if (options.token.empty()) options.token = Secret(stored_token(lookup));
  const HubOptions with_client = HubOptions::from_environment(lookup, context.client_options());
  options.tls = with_client.tls;
  options.connect_timeout = with_client.connect_timeout;
  options.read_timeout = with_client.read_timeout;
  return options;
}

}  // namespace tinker::cli
