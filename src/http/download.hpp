// Streaming GET of an absolute http(s) URL into a file: constant memory whatever the size,
// per-read timeouts, resumption with `Range` after a dropped connection, retries of transient
// statuses. Used for signed URLs (checkpoint archives, trace exports), where the request carries
// no credentials of any kind, only Host, User-Agent, Accept and Range; and for Hugging Face Hub
// files, which may send an Authorization value, follow redirects and read response headers.
//
// Beast-free interface; download.cpp is the Beast side.
#pragma once

#include "http/clock.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace tinker::http {

class ProxySettings;

/// How downloads connect: TLS (peer and host-name verification unless turned off) and proxies
/// as the SDK's HttpClient, and the timeouts.
class DownloadTransport {
 public:
  DownloadTransport() = default;
  /// The TLS options and connect timeout of `options`, its request timeout as the per-read
  /// timeout, and the proxies of the environment (http_proxy, https_proxy, no_proxy).
  explicit DownloadTransport(const ClientOptions& options);

  TlsOptions tls;
  std::chrono::milliseconds connect_timeout{5'000};
  /// One read of the body (at most 64 KiB) or of the response head: longer is a dropped
  /// connection (resumed like one).
  std::chrono::milliseconds read_timeout{60'000};
  std::shared_ptr<const ProxySettings> proxy;  ///< null: no proxy
  std::string user_agent = "tinker-cpp";
  /// Made at the first https download when empty; shared by the downloads of one transport.
  std::shared_ptr<boost::asio::ssl::context> tls_context;
};

class ConnectSettings;

/// How `transport` connects to a host: its timeout, TLS verification and proxy, and for https its
/// TLS context (made at the first https connection and shared from then on).
ConnectSettings connect_settings_for(DownloadTransport& transport, bool https);

/// How far a download got. Kept by the caller across calls, so a download can continue on a
/// fresh URL (a signed URL that expired) where the previous one stopped.
class DownloadState {
 public:
  DownloadState() = default;

  std::uint64_t bytes_done = 0;        ///< bytes in the file
  std::optional<std::uint64_t> total;  ///< from Content-Length / Content-Range
  int resumes = 0;                     ///< GETs re-issued after a dropped connection
};

class DownloadRequest {
 public:
  DownloadRequest() = default;
  DownloadRequest(std::string url_, std::filesystem::path file_) : url(std::move(url_)), file(std::move(file_)) {}

  std::string url;  ///< absolute http:// or https:// URL, any origin
  /// Created (truncated) when the state has no bytes yet, else appended to.
  std::filesystem::path file;
  /// GETs re-issued after the connection dropped mid-body (or before the answer, or a read
  /// timed out), with `Range: bytes=<done>-` when bytes are on disk. Counted in the state, so
  /// the budget spans calls.
  int max_resumes = 5;
  /// Answers 408, 429 and 5xx are retried this many times per call, after `retry_delay`,
  /// doubling each time (Retry-After is not consulted: signed-URL stores rarely send it).
  int max_status_retries = 3;
  std::chrono::milliseconds retry_delay{250};
  /// Called whenever bytes arrived, at most once per 64 KiB or 100 ms (the caller reports the end).
  std::function<void(const DownloadState&)> on_progress;
  /// The whole Authorization header value ("Bearer ..."), empty: none. Sent only to the origin of
  /// `url`: a redirect to another origin (a CDN) drops it, as browsers and huggingface_hub do.
  Secret authorization;
  /// Redirects (301, 302, 303, 307, 308 with a Location, absolute or relative) followed per GET;
  /// 0: a redirect is a failure like any other status.
  int max_redirects = 0;
  /// Response headers to keep in DownloadOutcome::headers (names, any case).
  std::vector<std::string> keep_headers;
};

class DownloadOutcome {
 public:
  DownloadOutcome() = default;

  boost::system::error_code error;  ///< empty: the whole body is in the file
  std::string reason;               ///< readable, names the URL's host (never its query: it is signed)
  int http_status = 0;              ///< of the failing answer, 0 for transport failures
  std::string request_id;           ///< x-request-id of the failing answer, if any
  /// 403, 404 or 410 from the URL: a signed URL that expired (or was revoked); a fresh URL may work.
  bool url_rejected = false;
  /// The `keep_headers` seen, names as asked, in the order met; of each name the first value met
  /// along the redirect chain of the last GET (so the origin's answer wins over a CDN's).
  std::vector<std::pair<std::string, std::string>> headers;

  /// The kept header `name` (as asked), or nullopt.
  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }

  /// The failure as the SDK reports one: status, request id and reason, nothing else.
  diagnostics diag() const {
    diagnostics d;
    d.http_status = http_status;
    d.request_id = request_id;
    d.message = reason;
    return d;
  }
};

/// Downloads `request.url` into `request.file`, continuing from `state` (see DownloadRequest for
/// resumption and retries). A 206 is accepted only with a Content-Range that starts at
/// `state.bytes_done` and agrees with a known total; a 200 to a Range request restarts from byte
/// 0 (the file is truncated). When the resumptions run out with the total known, the error is
/// errc::request_failed naming the sizes ("... N of M bytes ..."). Cancellation (the
/// coroutine's slot) aborts with errc::cancelled. The file is left as it is on failure: the
/// caller decides whether to keep or remove it.
boost::asio::awaitable<DownloadOutcome> download_to_file(DownloadTransport& transport, Clock& clock,
                                                         const DownloadRequest& request, DownloadState& state);

/// "bytes <first>-<last>/<total>" (total may be "*"); nullopt when malformed.
class ContentRange {
 public:
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

}  // namespace tinker::http
