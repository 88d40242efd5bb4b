// How the CLI reaches the Hugging Face Hub (`checkpoint push-hf`, `checkpoint export --base ID`):
// the Hub options of the environment with the client's TLS settings and the token of HF_TOKEN or
// of `hf auth login`, and the Hub's failures in its own words.
#pragma once

#include "programs/cli/context.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <string>

namespace tinker::cli {

/// The command's environment lookup (one that finds nothing when the CLI was given none).
EnvLookup lookup_of(const Context& context);

/// HF_ENDPOINT, HF_TOKEN (else the token `hf auth login` saved, where huggingface_hub looks for
/// it), HF_HUB_OFFLINE, the hub cache, and the TLS options and timeouts of the Tinker client. The
/// token may be empty: public repos need none.
HubOptions cli_hub_options(Context& context);

/// Runs one Hub call; its failure becomes the command's in the Hub's words (the status and the
/// Hub's request id on the second line), not in the Tinker API's ("check TINKER_API_KEY").
template <class Call>
auto on_hub(Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const error& e) {
    if (e.code() == errc::cancelled) throw;  // Ctrl-C: run() says "Interrupted."
    const diagnostics& d = e.diag();
    std::string message = d.message.empty() ? std::string(e.what()) : d.message;
    if (d.http_status == 0 &&
        (e.code() == errc::connection_failed || e.code() == errc::timeout || e.code() == errc::tls_error)) {
      message = "cannot reach the Hugging Face Hub (HF_ENDPOINT): " + message;
    }
    throw CliError(message, d);
  }
}

}  // namespace tinker::cli
