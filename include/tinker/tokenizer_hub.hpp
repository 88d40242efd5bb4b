/// \file
/// Downloading tokenizers from the Hugging Face Hub into the hub cache, as huggingface_hub does
/// (`doc/tokenizers.md`).
///
/// `get_tokenizer_for` / `load_tokenizer(ref, env)` look on disk first ($TINKER_TOKENIZER_PATH,
/// then the hub cache); when nothing is there they download the tokenizer from the Hub:
///
///     GET {HF_ENDPOINT}/{repo_id}/resolve/{revision}/{file}     (redirects followed)
///
/// for the first of tokenizer.model, tokenizer.json, tiktoken.model that exists (the order of
/// the search on disk), then tokenizer_config.json, special_tokens_map.json and
/// chat_template.jinja at the commit the first answer named (404 is fine for those). The
/// answer's X-Repo-Commit names the commit, X-Linked-Etag (else ETag) the blob. The files land
/// in the standard layout:
///
///     <hub>/models--<org>--<name>/blobs/<etag>
///     <hub>/models--<org>--<name>/snapshots/<commit>/<file>   -> ../../blobs/<etag>
///     <hub>/models--<org>--<name>/refs/<revision>             the commit
///
/// atomically: each blob is downloaded to a temporary file and renamed, the snapshot links are
/// made after every blob is in place (the tokenizer file's last), the ref last of all; a download
/// that fails part-way leaves nothing a later search would take for a tokenizer.
///
/// Environment (as huggingface_hub): HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (sent
/// as "Authorization: Bearer ...", never printed), HF_HUB_OFFLINE=1 (nothing is requested), the
/// hub cache of `hf_hub_cache_dir`, and the proxies of http_proxy / https_proxy / no_proxy.
#pragma once

#include <tinker/config.hpp>
#include <tinker/tokenizer.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// Where and how tokenizers are downloaded.
class HubOptions {
 public:
  /// The public Hub, no token, online, no cache directory (downloads need one).
  HubOptions() = default;

  /// The public Hugging Face Hub.
  static constexpr const char* default_endpoint = "https://huggingface.co";

  /// Reads HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE (1/true/yes/on, any case) and the hub cache
  /// directory (`hf_hub_cache_dir`); SSL_CERT_FILE as the CA bundle.
  static HubOptions from_environment(const EnvLookup& env);
  /// The same with the TLS options and timeouts of a client (its CA bundle, peer verification,
  /// connect and request timeouts), so downloads go out as the client's own requests do.
  static HubOptions from_environment(const EnvLookup& env, const ClientOptions& client);

  std::string endpoint = default_endpoint;            ///< scheme://host[:port][/prefix], no trailing '/'
  Secret token;                                       ///< HF_TOKEN; empty: no Authorization header
  bool offline = false;                               ///< HF_HUB_OFFLINE: never request anything
  std::optional<std::filesystem::path> cache_dir;     ///< the hub cache; nullopt: none known
  TlsOptions tls;                                     ///< certificate verification (SSL_CERT_FILE)
  std::chrono::milliseconds connect_timeout{10'000};  ///< TCP connect and TLS handshake
  std::chrono::milliseconds read_timeout{60'000};     ///< one read of a response
};

/// What one download wrote.
class HubDownload {
 public:
  /// Nothing written.
  HubDownload() = default;

  TokenizerFile file;              ///< `snapshots/<commit>/<tokenizer file>`
  std::string commit;              ///< the commit the files are from
  std::vector<std::string> files;  ///< every file name written into the snapshot, the tokenizer's first
};

/// Downloads the tokenizer of `ref` into `options.cache_dir` (layout and order above); proxies
/// come from `env`. Throws tinker::error: invalid_configuration when offline or no cache dir is
/// known; not_found (naming the endpoint, repo and revision) when the repo has no tokenizer
/// file at that revision; the error class of the status for 401/403, saying whether HF_TOKEN
/// is set (never its value); the transport's error otherwise.
HubDownload download_tokenizer(const TokenizerRef& ref, const HubOptions& options,
                               const EnvLookup& env = process_environment());

/// Looks on disk (`find_tokenizer_file`), downloads when nothing is there and `hub` is not
/// offline, then loads. A failure names every place looked at (and the URLs asked).
std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerRef& ref, const EnvLookup& env, const HubOptions& hub);

/// `get_tokenizer_for` downloading with `hub` (a client passes its TLS options this way).
std::shared_ptr<const Tokenizer> get_tokenizer_for(std::string_view model_name,
                                                   std::optional<std::string_view> tokenizer_id, const EnvLookup& env,
                                                   const HubOptions& hub);

}  // namespace tinker
