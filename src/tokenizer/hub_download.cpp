// Downloading a tokenizer from the Hugging Face Hub (tokenizer_hub.hpp) through the SDK's
// streaming download (http/download.hpp: the client's TLS settings, proxies from the
// environment, per-read timeouts, resumption), run on a private io_context in the calling
// thread: a load is a blocking call, and the clients make it off their io thread.
#include <tinker/error.hpp>
#include <tinker/tokenizer_hub.hpp>

#include "http/clock.hpp"
#include "http/download.hpp"
#include "http/proxy.hpp"
#include "http/url.hpp"
#include "text/hub_layout.hpp"
#include "tokenizer/locate.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <system_error>
#include <utility>

namespace tinker {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tokenizer_detail::HubRepoWriter;

// Read beside the tokenizer file when present; a 404 for them is no failure.
constexpr std::array<std::string_view, 3> companion_files{"tokenizer_config.json", "special_tokens_map.json",
                                                          "chat_template.jinja"};
constexpr int max_redirects = 5;

bool is_true(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "1" || value == "true" || value == "yes" || value == "on";
}

// huggingface_hub's normalisation: a weak validator's "W/" and the quotes go.
std::string normalized_etag(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

// A revision is one path segment of the URL: "refs/pr/1" is sent as "refs%2Fpr%2F1".
std::string url_revision(std::string_view revision) {
  std::string encoded;
  for (char c : revision) {
    if (c == '/') {
      encoded += "%2F";
    } else {
      encoded += c;
    }
  }
  return encoded;
}

// One file fetched: its blob is in place (or the answer said why not).
class Fetched {
 public:
  http::DownloadOutcome outcome;  ///< error empty: fetched
  std::string url;
  std::string commit;
  std::string etag;
};

// Everything one download needs, on the caller's stack while its io_context runs.
class HubFetch {
 public:
  HubFetch(const TokenizerRef& ref_, const HubOptions& options_, const EnvLookup& env)
      : ref(ref_), options(options_), writer(*options_.cache_dir, ref_.id) {
    transport.tls = options.tls;
    transport.connect_timeout = options.connect_timeout;
    transport.read_timeout = options.read_timeout;
    transport.proxy = std::make_shared<const http::ProxySettings>(http::ProxySettings::from_environment(env));
  }

  std::string url(std::string_view revision, std::string_view file) const {
    return options.endpoint + "/" + ref.id + "/resolve/" + url_revision(revision) + "/" + std::string(file);
  }

  [[noreturn]] void fail_auth(const Fetched& fetched) const {
    std::string message = "the Hugging Face Hub answered HTTP " + std::to_string(fetched.outcome.http_status) +
                          " for " + fetched.url + ": ";
    message += options.token.empty()
                   ? "HF_TOKEN is not set; a gated or private repo needs a token with access to it (set HF_TOKEN)"
                   : "the token in HF_TOKEN was refused or has no access to this repo";
    diagnostics diag = fetched.outcome.diag();
    diag.message = std::move(message);
    throw error(fetched.outcome.error, std::move(diag));
  }

  [[noreturn]] void fail_transfer(const Fetched& fetched) const {
    diagnostics diag = fetched.outcome.diag();
    diag.message = "downloading " + fetched.url + " failed: " + fetched.outcome.reason;
    throw error(fetched.outcome.error, std::move(diag));
  }

  const TokenizerRef& ref;
  const HubOptions& options;
  HubRepoWriter writer;
  http::DownloadTransport transport;
  std::shared_ptr<http::Clock> clock;
};

bool is_auth_failure(int status) {
  return status == 401 || status == 403;
}

// Where the answer names no commit or blob, or names one that cannot be a file name, the
// server is not a Hub (or not a well-behaved one): nothing is written under such names.
void check_hub_headers(Fetched& fetched) {
  const auto commit = fetched.outcome.header("x-repo-commit");
  auto etag = fetched.outcome.header("x-linked-etag");
  if (!etag) etag = fetched.outcome.header("etag");
  std::string problem;
  if (!commit) problem = "no X-Repo-Commit header";
  if (problem.empty() && !etag) problem = "no ETag or X-Linked-Etag header";
  if (problem.empty()) {
    fetched.commit = *commit;
    fetched.etag = normalized_etag(*etag);
    if (auto why = tokenizer_detail::path_component_problem(fetched.commit); !why.empty()) {
      problem = "an X-Repo-Commit that " + why;
    } else if (auto bad = tokenizer_detail::path_component_problem(fetched.etag); !bad.empty()) {
      problem = "an ETag that " + bad;
    }
  }
  if (problem.empty()) return;
  fetched.outcome.error = make_error_code(errc::protocol_error);
  fetched.outcome.reason = "the answer has " + problem + " (is HF_ENDPOINT a Hugging Face Hub?)";
}

// GETs one file into a temporary blob and renames it to its ETag; the temporary file is gone
// whatever happens.
asio::awaitable<Fetched> fetch_file(HubFetch* fetch, std::string revision, std::string file) {
  Fetched fetched;
  fetched.url = fetch->url(revision, file);
  const fs::path temporary = fetch->writer.new_temporary_blob();
  http::DownloadRequest request(fetched.url, temporary);
  if (!fetch->options.token.empty()) request.authorization = Secret("Bearer " + fetch->options.token.reveal());
  request.max_redirects = max_redirects;
  request.max_resumes = 2;
  request.keep_headers = {"x-repo-commit", "x-linked-etag", "etag", "x-error-code"};
  http::DownloadState state;
  try {
    fetched.outcome = co_await http::download_to_file(fetch->transport, *fetch->clock, request, state);
    if (!fetched.outcome.error) check_hub_headers(fetched);
    if (!fetched.outcome.error && state.total && *state.total != state.bytes_done) {
      fetched.outcome.error = make_error_code(errc::request_failed);
      fetched.outcome.reason = std::to_string(state.bytes_done) + " of " + std::to_string(*state.total) + " bytes";
    }
    if (!fetched.outcome.error) fetch->writer.commit_blob(temporary, fetched.etag);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
  std::error_code ignored;
  fs::remove(temporary, ignored);  // still there only when the download failed
  co_return fetched;
}

asio::awaitable<HubDownload> download_files(HubFetch* fetch) {
  const std::string revision = fetch->ref.revision.value_or("main");
  std::optional<Fetched> tokenizer;
  std::string tokenizer_name;
  TokenizerFormat format = TokenizerFormat::sentencepiece;
  std::vector<std::string> absent;
  for (const auto& candidate : tokenizer_detail::tokenizer_file_names) {
    Fetched fetched = co_await fetch_file(fetch, revision, std::string(candidate.name));
    if (!fetched.outcome.error) {
      tokenizer = std::move(fetched);
      tokenizer_name = candidate.name;
      format = candidate.format;
      break;
    }
    if (is_auth_failure(fetched.outcome.http_status)) fetch->fail_auth(fetched);
    if (fetched.outcome.http_status != 404) fetch->fail_transfer(fetched);
    std::string line = fetched.url + " (404";
    if (auto code = fetched.outcome.header("x-error-code")) line += " " + *code;
    absent.push_back(line + ")");
  }
  if (!tokenizer) {
    std::string message = "the Hugging Face Hub has no tokenizer for \"" + fetch->ref.id + "\" at revision " +
                          revision + " (or no such repo or revision); asked:";
    for (const auto& line : absent) message += "\n  " + line;
    throw error(errc::not_found, message);
  }
  HubDownload download;
  download.commit = tokenizer->commit;
  download.files.push_back(tokenizer_name);
  std::vector<std::pair<std::string, std::string>> companions;  // file, etag
  for (const std::string_view name : companion_files) {
    // At the commit just named, so every file is of one commit even if the branch moves meanwhile.
    Fetched fetched = co_await fetch_file(fetch, download.commit, std::string(name));
    if (fetched.outcome.error) {
      if (is_auth_failure(fetched.outcome.http_status)) fetch->fail_auth(fetched);
      if (fetched.outcome.http_status == 404) continue;
      fetch->fail_transfer(fetched);
    }
    companions.emplace_back(std::string(name), fetched.etag);
  }
  // The links after every blob, the tokenizer's last, the ref last of all: a search finds the
  // tokenizer only once its companions are beside it.
  for (const auto& [name, etag] : companions) {
    fetch->writer.link_snapshot_file(download.commit, name, etag);
    download.files.push_back(name);
  }
  download.file.path = fetch->writer.link_snapshot_file(download.commit, tokenizer_name, tokenizer->etag);
  download.file.format = format;
  if (revision != download.commit) fetch->writer.write_ref(revision, download.commit);
  co_return download;
}

std::string error_message(const error& e) {
  return e.diag().message.empty() ? std::string(e.what()) : e.diag().message;
}

}  // namespace

HubOptions HubOptions::from_environment(const EnvLookup& env) {
  using tokenizer_detail::env_value;
  HubOptions options;
  if (auto endpoint = env_value(env, "HF_ENDPOINT")) {
    options.endpoint = *endpoint;
    while (options.endpoint.ends_with('/')) options.endpoint.pop_back();
  }
  if (auto token = env_value(env, "HF_TOKEN")) options.token = Secret(std::move(*token));
  if (auto offline = env_value(env, "HF_HUB_OFFLINE")) options.offline = is_true(*offline);
  options.cache_dir = hf_hub_cache_dir(env);
  if (auto ca_file = env_value(env, "SSL_CERT_FILE")) options.tls.ca_file = *ca_file;
  return options;
}

HubOptions HubOptions::from_environment(const EnvLookup& env, const ClientOptions& client) {
  HubOptions options = from_environment(env);
  options.tls = client.tls;
  options.connect_timeout = client.timeouts.connect;
  options.read_timeout = client.timeouts.request;
  return options;
}

HubDownload download_tokenizer(const TokenizerRef& ref, const HubOptions& options, const EnvLookup& env) {
  if (options.offline) throw error(errc::invalid_configuration, "HF_HUB_OFFLINE is set: nothing is downloaded");
  if (!options.cache_dir) {
    throw error(errc::invalid_configuration,
                "no Hugging Face hub cache to download into: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME is "
                "set");
  }
  tokenizer_detail::search_tokenizer_file(ref, env);  // checks the id and revision before they become paths
  http::parse_absolute_url(options.endpoint + "/", "HF_ENDPOINT");
  HubFetch fetch(ref, options, env);
  asio::io_context io;
  fetch.clock = http::make_system_clock(io.get_executor());
  std::exception_ptr failure;
  HubDownload result;
  asio::co_spawn(io, download_files(&fetch), [&failure, &result](std::exception_ptr e, HubDownload download) {
    failure = e;
    result = std::move(download);
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return result;
}

std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerRef& ref, const EnvLookup& env, const HubOptions& hub) {
  tokenizer_detail::LocalSearch search = tokenizer_detail::search_tokenizer_file(ref, env);
  if (search.found) return load_tokenizer(*search.found, ref.id);
  if (hub.offline) {
    throw error(errc::invalid_configuration,
                tokenizer_detail::not_found_message(
                    ref, search, "HF_HUB_OFFLINE is set, so nothing was downloaded from " + hub.endpoint));
  }
  HubDownload download;
  try {
    download = download_tokenizer(ref, hub, env);
  } catch (const error& e) {
    diagnostics diag = e.diag();
    diag.message = tokenizer_detail::not_found_message(ref, search, "the download failed: " + error_message(e));
    throw error(e.code(), std::move(diag));
  }
  download.file.searched = std::move(search.searched);
  download.file.searched.push_back(download.file.path);
  return load_tokenizer(download.file, ref.id);
}

std::shared_ptr<const Tokenizer> get_tokenizer_for(std::string_view model_name,
                                                   std::optional<std::string_view> tokenizer_id, const EnvLookup& env,
                                                   const HubOptions& hub) {
  return TokenizerCache::global().get(resolve_tokenizer_id(model_name, tokenizer_id), env, hub);
}

}  // namespace tinker
