// What every Hugging Face Hub API call of hub_upload.hpp shares: the transport made from the
// HubOptions, the URLs of the endpoint, one request with the token (retried when transient), the
// Hub's error answers turned into tinker::error, and running a coroutine to completion on a private
// io_context (the public functions are blocking, as download_tokenizer is).
#pragma once

#include "http/download.hpp"
#include "http/single_request.hpp"

#include <tinker/error.hpp>
#include <tinker/hub_upload.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace tinker::hub_detail {

/// How a request is sent: with the token or not, retried on transient answers or not.
class Send {
 public:
  Send() = default;
  bool with_token = true;
  bool retry = true;
};

class HubCall {
 public:
  HubCall(const HubOptions& options_, const EnvLookup& env);

  /// "{endpoint}/{path}" (path without the leading '/').
  std::string url(std::string_view path) const;
  /// Whether `url` is on the endpoint's origin (only then does the token go along).
  bool same_origin(std::string_view url) const;

  /// Sends `request` (the token added when `send.with_token` and the URL is on the endpoint),
  /// retrying dropped connections, 429 and 5xx when `send.retry`. Throws tinker::error for a
  /// transport failure; any status is returned.
  boost::asio::awaitable<http::SingleResponse> send(http::SingleRequest request, Send send);

  /// Throws the tinker::error of a non-2xx answer: "<what>: the Hugging Face Hub answered HTTP
  /// <status> (<X-Error-Code>): <X-Error-Message or the body's error>", with the status and the
  /// Hub's request id (X-Request-Id) in the diagnostics; 401 says whether HF_TOKEN is set.
  [[noreturn]] void fail(const http::SingleResponse& response, std::string_view what) const;
  /// The JSON body of a 2xx answer; throws protocol_error naming `what` when it is not JSON.
  boost::json::value json_of(const http::SingleResponse& response, std::string_view what) const;

  const HubOptions& options;
  http::DownloadTransport transport;
  std::string endpoint;  ///< options.endpoint without a trailing '/'
};

/// Throws invalid_configuration when HF_TOKEN is empty (every upload call needs one).
void require_token(const HubOptions& options);
/// Throws invalid_argument naming `repo_id` when hub_repo_id_problem finds something.
void check_repo_id(std::string_view repo_id);
/// `text` percent-encoded for a single path segment (huggingface_hub's quote(x, safe="")).
std::string quote_segment(std::string_view text);
/// Base64 (RFC 4648, padded).
std::string base64(std::string_view bytes);

/// Runs `task` to completion on a fresh io_context and returns its result (rethrowing).
template <class T>
T run_blocking(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::exception_ptr failure;
  T result{};
  boost::asio::co_spawn(io, std::move(task), [&failure, &result](std::exception_ptr e, T value) {
    failure = e;
    result = std::move(value);
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace tinker::hub_detail
